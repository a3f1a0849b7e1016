"""as_messages and every function that takes messages: our Messages, OpenAI dicts, Anthropic
turns and the SDKs' own objects (built offline with their classes), with typed errors naming the
index; and check_tool_pairs(strict=True)."""

import asyncio
import warnings

import pytest
from anthropic.types import Message as AnthropicMessage, TextBlock as AnthropicTextBlock
from anthropic.types import ToolUseBlock as AnthropicToolUseBlock, Usage
from hypothesis import given, settings
from openai.types.chat import ChatCompletion, ChatCompletionMessage
from pydantic import BaseModel

import agentmsg
from agentmsg import (
    ConversationMemory,
    ConversionError,
    Message,
    MessageTypeError,
    Role,
    TextBlock,
    ToolPairError,
    ToolUseBlock,
    as_messages,
    check_tool_pairs,
)
from agentmsg.convert._order import results_first
from conversations import conversations


def same(messages):
    """What two reads of one history share (ids and timestamps are made per message)."""
    return [(m.role, m.content, m.name, m.tool_id, m.metadata, m.finish_reason, m.reasoning_content)
            for m in messages]


OPENAI_COMPLETION = ChatCompletion.model_validate({
    "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a":1}'}}]}}],
})
ANTHROPIC_RESPONSE = AnthropicMessage(
    id="msg_1", type="message", role="assistant", model="claude-sonnet-4-5", stop_reason="tool_use",
    stop_sequence=None, usage=Usage(input_tokens=3, output_tokens=4),
    content=[AnthropicTextBlock(type="text", text="Adding."),
             AnthropicToolUseBlock(type="tool_use", id="toolu_1", name="add", input={"a": 1})],
)


def openai_loop():
    """OpenAI's documented tool loop: the reply object appended as it is, then the result."""
    return [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "1+1?"},
            OPENAI_COMPLETION.choices[0].message,
            {"role": "tool", "tool_call_id": "call_1", "content": "2"}]


def anthropic_loop():
    """Anthropic's documented tool loop: ``{"role": "assistant", "content": response.content}``."""
    return [{"role": "user", "content": "1+1?"},
            {"role": "assistant", "content": ANTHROPIC_RESPONSE.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "2"},
                                         {"type": "text", "text": "and hurry"}]}]


# -- as_messages ----------------------------------------------------------------------------------


def test_a_list_of_messages_comes_back_as_a_new_list_of_the_same_objects():
    chat = [Message.user("a"), Message.assistant("b")]
    read = as_messages(chat)
    assert read == chat and read is not chat and all(x is y for x, y in zip(read, chat))
    assert as_messages(m for m in chat) == chat
    assert as_messages(()) == []


def test_openai_dicts_and_sdk_objects_read_as_from_openai_reads_them():
    read = as_messages(openai_loop())
    assert same(read) == same(agentmsg.from_openai([*openai_loop()[:2], OPENAI_COMPLETION.choices[0].message,
                                                    openai_loop()[3]]))
    assert [m.role for m in read] == [Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL]
    assert read[3].name == "add"  # named after its call, as from_openai names it
    assert read[2].tool_calls[0].metadata == {"raw_arguments": '{"a":1}'}


def test_a_chat_completion_stands_for_its_first_choice_alone_or_in_a_list():
    [alone] = as_messages(OPENAI_COMPLETION)
    [listed] = as_messages([OPENAI_COMPLETION])
    assert alone.finish_reason == listed.finish_reason == "tool_calls"
    assert same([alone]) == same([listed]) == same(agentmsg.from_openai(OPENAI_COMPLETION, on_orphan="keep"))
    assert same(as_messages([OPENAI_COMPLETION.model_dump(exclude_none=True)])) == same([alone])


def test_openai_dicts_holding_sdk_tool_call_objects():
    reply = OPENAI_COMPLETION.choices[0].message
    [message] = as_messages([{"role": "assistant", "content": None, "tool_calls": reply.tool_calls}])
    assert message.tool_calls[0].input == {"a": 1}


def test_anthropic_tool_loop_and_response_objects():
    read = as_messages(anthropic_loop())
    assert same(read) == same(agentmsg.from_anthropic(None, anthropic_loop()))
    assert [(m.role.value, m.text) for m in read] == [
        ("user", "1+1?"), ("assistant", "Adding."), ("tool", "2"), ("user", "and hurry")]
    assert read[2].name == "add"
    [response] = as_messages(ANTHROPIC_RESPONSE)
    assert response.tool_calls[0].input == {"a": 1}
    assert response.metadata["anthropic"]["stop_reason"] == "tool_use"
    # a tool result whose call came as one of our Messages is named after it too
    mixed = as_messages([Message.assistant(tool_calls=[ToolUseBlock("toolu_1", "add", {})]), anthropic_loop()[2]])
    assert mixed[1].name == "add"


def test_any_pydantic_model_is_read_through_model_dump():
    class Turn(BaseModel):
        role: str
        content: str

    assert [m.text for m in as_messages([Turn(role="user", content="Hi")])] == ["Hi"]


def test_langchain_messages_read_as_from_langchain_reads_them():
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    history = [HumanMessage("1+1?"), AIMessage("", tool_calls=[{"id": "c1", "name": "add", "args": {"a": 1}}]),
               ToolMessage("2", tool_call_id="c1")]
    assert same(as_messages(history)) == same(agentmsg.from_langchain(history))
    assert agentmsg.to_openai(history) == agentmsg.to_openai(agentmsg.from_langchain(history))
    with pytest.raises(MessageTypeError, match=r"^messages\[1\]"):
        as_messages([Message.user("a"), HumanMessage(content=[{"type": "text", "text": 5}])])


def test_a_mixed_history_keeps_its_order():
    read = as_messages([Message.system("s"), {"role": "user", "content": "u"}, ANTHROPIC_RESPONSE,
                        {"role": "tool", "tool_call_id": "toolu_1", "content": "r"}])
    assert [(m.role.value, m.text) for m in read] == [("system", "s"), ("user", "u"), ("assistant", "Adding."),
                                                       ("tool", "r")]
    assert read[3].name == "add"


@pytest.mark.parametrize("value, error, text", [
    ([Message.user("a"), 3], MessageTypeError,
     r"^messages\[1\] must be a Message, an OpenAI or Anthropic message dict, or an SDK message object, not int$"),
    ([Message.user("a"), Message.user("b"), {"role": "robot", "content": "x"}], ConversionError, r"^messages\[2\]"),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": [
        {"type": "text", "text": "x"}, {"type": "tool_use", "id": "t", "name": "f", "input": 5}]}],
     MessageTypeError, r"^messages\[1\].content\[1\].input must be"),
    (Message.user("a"), MessageTypeError, "not a single Message"),
    ({"role": "user", "content": "a"}, MessageTypeError, "not a single dict"),
    (OPENAI_COMPLETION.choices[0].message, MessageTypeError, "not a single ChatCompletionMessage"),
    (5, MessageTypeError, "messages must be a sequence of messages"),
])
def test_errors_name_the_index(value, error, text):
    with pytest.raises(error, match=text):
        as_messages(value)


# -- every function that takes messages -----------------------------------------------------------


def sdk_histories():
    return [openai_loop(), anthropic_loop()]


@pytest.mark.parametrize("history", sdk_histories(), ids=["openai", "anthropic"])
def test_functions_that_take_messages_take_every_form(history):
    messages = as_messages(history)
    assert same(agentmsg.trim(history, 30).messages) == same(agentmsg.trim(messages, 30).messages)
    assert agentmsg.estimate_tokens_many(history) == agentmsg.estimate_tokens_many(messages)
    assert agentmsg.conversation_stats(history).tokens_by_role == agentmsg.conversation_stats(messages).tokens_by_role
    assert agentmsg.count_by_role(history) == agentmsg.count_by_role(messages)
    assert same(agentmsg.filter_by_role(history, "tool")) == same(agentmsg.filter_by_role(messages, "tool"))
    assert agentmsg.pair_tool_results(history) == agentmsg.pair_tool_results(messages)
    assert check_tool_pairs(history) is None
    assert same(agentmsg.repair_tool_pairs(history)) == same(messages)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both reads warn alike (the interjected user text moves)
        for name in ("to_openai", "to_anthropic", "to_bedrock", "to_dashscope", "to_forge"):
            convert = getattr(agentmsg, name)
            assert convert(history) == convert(messages), name
        for name in ("to_wolo", "to_arcaelas", "to_agentscope", "to_db_rows"):  # these carry message ids
            convert = getattr(agentmsg, name)
            assert len(convert(history)) == len(convert(messages)), name
    memory, expected = ConversationMemory(1000), ConversationMemory(1000)
    memory.extend(history[:1])
    for item in history[1:]:
        memory.add(item)
    expected.extend(messages)

    def linked(messages):  # a tool dict added alone links by tool_id; it cannot learn its call's name
        return [(m.role, m.content, m.tool_id) for m in messages]

    assert linked(memory.messages) == linked(expected.messages)
    async_memory = ConversationMemory(1000)
    asyncio.run(async_memory.aextend(history[:2]))
    for item in history[2:]:
        asyncio.run(async_memory.aadd(item))
    assert linked(async_memory.messages) == linked(expected.messages)


def test_exact_counters_count_openai_objects_as_their_dicts():
    reply = OPENAI_COMPLETION.choices[0].message
    as_dict = reply.model_dump(exclude_none=True)
    for encoding in ("o200k_base", "estimate"):
        assert agentmsg.count_message_tokens([reply], encoding) == agentmsg.count_message_tokens([as_dict], encoding)
    assert agentmsg.message_token_counts(anthropic_loop()) == agentmsg.message_token_counts(as_messages(anthropic_loop()))
    assert agentmsg.count_message_tokens(OPENAI_COMPLETION) == agentmsg.count_message_tokens([as_dict])


def test_trim_of_dicts_reports_positions_of_the_read_history():
    result = agentmsg.trim(anthropic_loop(), 1000)
    assert result.kept == (0, 1, 2, 3)  # the last turn gave two messages: a tool result and the user text
    assert [m.role.value for m in result.messages] == ["user", "assistant", "tool", "user"]


# -- check_tool_pairs(strict=True) ----------------------------------------------------------------

CALC = ToolUseBlock("c1", "calc", {})
SEARCH = ToolUseBlock("c2", "search", {})


@pytest.mark.parametrize("history, problem", [
    ([Message.assistant(tool_calls=[CALC]), Message.user("hurry"), Message.tool("2", tool_id="c1")],
     "messages[1]: a user message between tool call 'c1' (messages[0]) and its result (messages[2]); "
     "results must directly follow their call"),
    ([Message.assistant(tool_calls=[CALC, SEARCH]), Message.tool("2", tool_id="c1"), Message.system("note"),
      Message.tool("found", tool_id="c2")],
     "messages[2]: a system message between tool call 'c2' (messages[0]) and its result (messages[3])"),
    ([Message.assistant(tool_calls=[CALC]), Message.user("hurry"), Message.tool("2", name="calc")],
     "messages[1]: a user message between tool call 'calc' (messages[0]) and its result (messages[2])"),
])
def test_strict_reports_a_message_between_a_call_and_its_result(history, problem):
    assert check_tool_pairs(history) is None  # the default is unchanged
    with pytest.raises(ToolPairError) as caught:
        check_tool_pairs(history, strict=True)
    assert str(caught.value).startswith(problem)


def test_strict_accepts_results_in_any_order_right_after_their_call():
    history = [Message.user("go"), Message.assistant(tool_calls=[CALC, SEARCH]), Message.tool("x", tool_id="c2"),
               Message.tool("2", tool_id="c1"), Message.user("thanks")]
    assert check_tool_pairs(history, strict=True) is None
    with pytest.raises(MessageTypeError, match="strict must be a bool"):
        check_tool_pairs(history, strict="yes")


def test_strict_names_the_earliest_problem():
    history = [Message.assistant(tool_calls=[CALC]), Message.user("a"), Message.tool("2", tool_id="c1"),
               Message.tool("?", tool_id="zz")]
    with pytest.raises(ToolPairError, match=r"^messages\[1\]: a user message"):
        check_tool_pairs(history, strict=True)
    with pytest.raises(ToolPairError, match=r"^messages\[3\]: tool result for call id 'zz'"):
        check_tool_pairs(history)


@settings(max_examples=150, deadline=None)
@given(conversations(interleave=True))
def test_strict_fails_exactly_when_the_converters_would_move_a_message(history):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results_first(history, "to_openai")
    moved = any("moved messages" in str(w.message) for w in caught)
    try:
        check_tool_pairs(history, strict=True)
        strict_ok = True
    except ToolPairError:
        strict_ok = False
    assert strict_ok == (not moved)
    check_tool_pairs(history)  # the generated histories are otherwise valid
