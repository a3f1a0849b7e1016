"""Chat-format counts follow the OpenAI cookbook's rules, checked by hand and against the oracle."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tiktoken_oracle as oracle
import transcripts
from agentmsg import (
    Message,
    MessageError,
    MessageTypeError,
    ToolUseBlock,
    acount_message_tokens,
    acount_tokens,
    count_message_tokens,
    count_tokens,
    estimate_tokens,
    message_token_counts,
)
from strategies import messages as any_message

EXACT = oracle.NAMES

# The cookbook's examples ("How to count tokens with tiktoken", sections 6 and 7) with the
# prompt_tokens the OpenAI API reported for them, as published there.
COOKBOOK_MESSAGES = [
    {"role": "system", "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
    {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
    {"role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue."},
    {"role": "system", "name": "example_user", "content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
    {"role": "system", "name": "example_assistant", "content": "Let's talk later when we're less busy about how to do better."},
    {"role": "user", "content": "This late pivot means we don't have time to boil the ocean for the client deliverable."},
]
COOKBOOK_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                    "unit": {
                        "type": "string",
                        "description": "The unit of temperature to return",
                        "enum": ["celsius", "fahrenheit"],
                    },
                },
                "required": ["location"],
            },
        },
    }
]
COOKBOOK_TOOL_MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant that can answer to questions about the weather."},
    {"role": "user", "content": "What's the weather like in San Francisco?"},
]


def test_cookbook_messages_match_the_api_figures():
    assert count_message_tokens(COOKBOOK_MESSAGES, encoding="cl100k_base") == 129  # gpt-4, gpt-3.5
    assert count_message_tokens(COOKBOOK_MESSAGES, encoding="o200k_base") == 124  # gpt-4o


def test_cookbook_tools_match_the_api_figures():
    assert count_message_tokens(COOKBOOK_TOOL_MESSAGES, "cl100k_base", tools=COOKBOOK_TOOLS) == 105
    assert count_message_tokens(COOKBOOK_TOOL_MESSAGES, "o200k_base", tools=COOKBOOK_TOOLS) == 101


def test_bare_and_anthropic_style_tool_definitions_count_the_same():
    function = COOKBOOK_TOOLS[0]["function"]
    anthropic = {"name": function["name"], "description": function["description"], "input_schema": function["parameters"]}
    for tools in ([function], [anthropic]):
        assert count_message_tokens(COOKBOOK_TOOL_MESSAGES, "o200k_base", tools=tools) == 101


def test_hand_computed_cases():
    # o200k_base: "Hello" 1, "user" 1, "assistant" 1, "ann" 1, "Hi there" 2.
    assert count_message_tokens([Message.user("Hello")]) == 3 + 1 + 1 + 3
    assert count_message_tokens([Message.user("Hello", name="ann")]) == 3 + 1 + 1 + (1 + 1) + 3
    assert count_message_tokens([]) == 3
    # A tool call counts its name and its arguments as JSON: "calc" 1, '{"a": 1}' 6.
    call = ToolUseBlock("call_1", "calc", {"a": 1})
    assert count_tokens("calc") == 1 and count_tokens('{"a": 1}') == 6
    turn = Message.assistant("Hi there", tool_calls=[call])
    assert message_token_counts([turn]) == [3 + 1 + 2 + 1 + 6]
    # The same turn as an OpenAI dict; the call id is not counted.
    as_dict = {
        "role": "assistant",
        "content": "Hi there",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "calc", "arguments": '{"a": 1}'}}],
    }
    assert message_token_counts([as_dict]) == [3 + 1 + 2 + 1 + 6]
    # A tool result counts its text; tool_call_id is not counted.
    assert message_token_counts([Message.tool("42", tool_id="call_1")]) == [3 + 1 + 1]
    assert message_token_counts([{"role": "tool", "tool_call_id": "call_1", "content": "42"}]) == [5]


def test_dict_content_parts_and_legacy_function_call():
    parts = [
        {"type": "text", "text": "Hello"},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
        {"type": "text", "text": "world"},
    ]
    # Text parts are counted one by one; images have no text (their tiles are not modelled).
    assert message_token_counts([{"role": "user", "content": parts}]) == [3 + 1 + 1 + 1]
    assert message_token_counts([{"role": "assistant", "content": None}]) == [3 + 1]
    legacy = {"role": "assistant", "content": None, "function_call": {"name": "calc", "arguments": '{"a": 1}'}}
    assert message_token_counts([legacy]) == [3 + 1 + 1 + 6]


def reference_count(message: Message, name: str) -> int:
    """The documented rules, written out with the oracle."""
    total = 3 + oracle.count(message.role.value, name) + oracle.count(message.text, name)
    if message.name is not None and message.role.value != "tool":  # to_openai writes no tool name
        total += oracle.count(message.name, name) + 1
    for call in message.tool_calls:
        total += oracle.count(call.name, name) + oracle.count(json.dumps(call.input, ensure_ascii=False), name)
    return total


@pytest.mark.parametrize("name", EXACT)
def test_transcripts_per_message_and_whole(name):
    messages = transcripts.all_messages()
    counts = message_token_counts(messages, name)
    assert counts == [reference_count(m, name) for m in messages]
    assert sum(counts) + 3 == count_message_tokens(messages, encoding=name)


@pytest.mark.parametrize("name", EXACT)
def test_messages_count_as_their_openai_dicts(name):
    import warnings

    from agentmsg.convert import to_openai

    messages = transcripts.all_messages()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dicts = to_openai(messages)
    assert message_token_counts(messages, name) == message_token_counts(dicts, name)
    kept = Message.assistant(tool_calls=[ToolUseBlock("c1", "f", {}, metadata={"raw_arguments": "{oops"})])
    assert message_token_counts([kept], name) == message_token_counts(
        [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}]}], name
    )


@settings(max_examples=80, deadline=None)
@given(st.lists(any_message, max_size=5))
def test_generated_messages_invariants(messages):
    for name in EXACT:
        counts = message_token_counts(messages, name)
        assert counts == [reference_count(m, name) for m in messages]
        assert sum(counts) + 3 == count_message_tokens(messages, encoding=name)
    # "estimate" is Forge's per-message estimate, as agentmsg.estimate computes it.
    estimates = message_token_counts(messages, "estimate")
    assert estimates == [estimate_tokens(m) for m in messages]
    assert count_message_tokens(messages, encoding="estimate") == sum(estimates)


def test_estimate_of_a_dict_matches_the_same_message():
    call = ToolUseBlock("call_1", "calc", {"a": 1})
    message = Message.assistant("Hi there", tool_calls=[call])
    as_dict = {
        "role": "assistant",
        "content": "Hi there",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "calc", "arguments": '{"a": 1}'}}],
    }
    assert message_token_counts([as_dict], "estimate") == [estimate_tokens(message)]
    result = {"role": "tool", "tool_call_id": "call_1", "content": "42"}
    assert message_token_counts([result], "estimate") == [estimate_tokens(Message.tool("42", tool_id="c"))]


def test_bad_messages_name_the_index_and_field():
    with pytest.raises(MessageError, match=r"messages\[1\] has no 'role'"):
        message_token_counts([{"role": "user", "content": "x"}, {"content": "y"}])
    with pytest.raises(MessageTypeError, match=r"messages\[0\].content must be a str, list or None, not int"):
        message_token_counts([{"role": "user", "content": 3}])
    with pytest.raises(MessageTypeError, match=r"messages\[0\] must be a Message, .*, not str"):
        message_token_counts(["hello"])
    with pytest.raises(MessageTypeError, match="not a single Message"):
        message_token_counts(Message.user("x"))
    with pytest.raises(MessageError, match=r"messages\[0\].tool_calls\[0\] must be a dict"):
        message_token_counts([{"role": "assistant", "tool_calls": [{"id": "x"}]}])
    with pytest.raises(MessageError, match=r"tools\[0\] must define a function"):
        count_message_tokens([], tools=[{"type": "function"}])
    with pytest.raises(MessageError, match=r"tools\[0\]: parameters.properties must be a dict"):
        count_message_tokens([], tools=[{"name": "f", "parameters": {"properties": ["x"]}}])
    with pytest.raises(MessageTypeError, match="tools must be a list"):
        count_message_tokens([], tools={"name": "f"})


def test_async_counters_give_the_sync_results():
    long_text = "The quick brown fox. " * 5000

    async def main():
        return await asyncio.gather(
            acount_tokens("Hello, world!"),
            acount_tokens(long_text, "cl100k_base"),
            acount_tokens(long_text),
            acount_message_tokens(COOKBOOK_MESSAGES, "cl100k_base"),
            acount_message_tokens(COOKBOOK_TOOL_MESSAGES, "o200k_base", tools=COOKBOOK_TOOLS),
        )

    assert asyncio.run(main()) == [
        4,
        count_tokens(long_text, "cl100k_base"),
        count_tokens(long_text),
        129,
        101,
    ]



def test_async_counters_count_long_texts_in_a_worker_thread(monkeypatch):
    import threading

    import agentmsg.counting.tokens as tokens_module

    threads = []

    def recording(function):
        def wrapper(*args):
            threads.append(threading.get_ident())
            return function(*args)

        return wrapper

    monkeypatch.setattr(tokens_module, "count_tokens", recording(tokens_module.count_tokens))
    monkeypatch.setattr(tokens_module, "count_message_tokens", recording(tokens_module.count_message_tokens))

    async def main():
        loop_thread = threading.get_ident()
        await acount_tokens("short")
        await acount_tokens("long text " * 1000)
        await acount_message_tokens([Message.user("hi")])
        return loop_thread

    loop_thread = asyncio.run(main())
    assert threads[0] == loop_thread  # a short text is counted in place
    assert threads[1] != loop_thread and threads[2] != loop_thread
