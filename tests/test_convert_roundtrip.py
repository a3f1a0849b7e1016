"""Round trips that changed data without a word, and the converter bugs a new user hits.

Each named case failed before its fix; the property tests at the end round-trip random
conversations through every ``to_*`` / ``from_*`` pair.
"""

import json
import math
import warnings

import pytest
from hypothesis import HealthCheck, given, settings

import agentmsg
from agentmsg import (
    AgentMsgError,
    ConversionError,
    ConversionWarning,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from convert_checks import check_anthropic, check_bedrock, check_openai
from convert_strategies import histories


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConversionWarning)
        return function(*args, **kwargs)


def recorded(function, *args, **kwargs):
    """``(result, [warning texts])``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, ConversionWarning)]


CALL = ToolUseBlock("c1", "search", {"q": "x"})
INTERRUPTED = [
    Message.user("Find x"),
    Message.assistant("Searching.", tool_calls=[CALL]),
    Message.user("Also, hurry up"),
    Message.tool("found x", tool_id="c1", name="search"),
    Message.assistant("Here is x."),
]


# -- Forge ----------------------------------------------------------------------------------------

def test_forge_warns_that_a_successful_result_starting_with_error_reads_back_as_an_error():
    chat = [Message.assistant(tool_calls=[CALL]), Message.tool("Error: none", tool_id="c1", name="search")]
    written, said = recorded(agentmsg.to_forge, chat)
    assert said == ["to_forge cannot carry successful results whose text starts with 'Error: ' (message 1); "
                    "they read back as errors"]
    assert agentmsg.from_forge(written)[1].is_error  # what the format says, now announced
    # an error result is written and read back exactly
    chat[1] = Message.tool("none", tool_id="c1", name="search", is_error=True)
    written, said = recorded(agentmsg.to_forge, chat)
    back = agentmsg.from_forge(written)[1]
    assert (said, back.is_error, back.text) == ([], True, "none")


def test_forge_warns_when_thinking_and_reasoning_content_would_read_back_as_one():
    message = Message("assistant", [ThinkingBlock("plan"), TextBlock("done")], reasoning_content="plan")
    written, said = recorded(agentmsg.to_forge, [message])
    assert said == ["to_forge cannot carry reasoning_content besides thinking blocks (or empty) (message 0); "
                    "they were left out"]
    assert agentmsg.from_forge(written)[0].content == (ThinkingBlock("plan"), TextBlock("done"))
    # reasoning_content alone is written as the thinking
    written, said = recorded(agentmsg.to_forge, [Message.assistant("done", reasoning_content="plan")])
    assert said == [] and agentmsg.from_forge(written)[0].thinking == "plan"


# -- Wolo -----------------------------------------------------------------------------------------

def test_wolo_keeps_a_calls_server_name_and_metadata():
    call = ToolUseBlock("c1", "search", {"q": "x"}, server_name="mcp", metadata={"k": 1})
    chat = [Message.assistant("Searching.", tool_calls=[call]), Message.tool("found", tool_id="c1", name="search")]
    wolo, said = recorded(agentmsg.to_wolo, chat)
    assert said == []
    back = agentmsg.from_wolo(wolo)
    assert back[0].tool_calls == (call,)
    assert "agentmsg_calls" not in back[0].metadata
    # the part itself stays plain Wolo
    assert (wolo[0].parts[1].tool, wolo[0].parts[1].input) == ("search", {"q": "x"})


def test_wolo_warns_when_a_message_between_a_call_and_its_result_moves():
    wolo, said = recorded(agentmsg.to_wolo, INTERRUPTED)
    assert said == ["to_wolo moved messages 2 after the tool results they interrupted "
                    "(tool results must directly follow their call)"]
    assert [m.text for m in agentmsg.from_wolo(wolo)] == ["Find x", "Searching.", "found x", "Also, hurry up",
                                                          "Here is x."]


# -- OpenAI ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_arguments_that_are_not_json_never_reach_a_request(value):
    """NaN and infinities are not JSON: a tool call holding one is refused when it is built, so
    `to_openai` can never write `{"x": NaN}` into `arguments` (providers reject it)."""
    with pytest.raises(agentmsg.MessageError, match=r"^ToolUseBlock\.input\['x'\] is -?(nan|inf), which JSON cannot carry"):
        ToolUseBlock("c1", "f", {"x": value})


def test_arguments_written_are_always_valid_json():
    nested = {"a": [1, 2.5, None, True, {"b": "\u00e9"}]}
    arguments = agentmsg.to_openai([Message.assistant(tool_calls=[ToolUseBlock("c1", "f", nested)])])[0]
    assert json.loads(arguments["tool_calls"][0]["function"]["arguments"]) == nested


def test_nan_in_arguments_read_is_kept_as_raw_text_and_written_back_unchanged():
    data = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": NaN}'}}]}]
    with pytest.warns(ConversionWarning, match="is not a JSON object; kept as metadata"):
        back = agentmsg.from_openai(data)
    assert back[0].tool_calls[0].input == {}
    assert agentmsg.to_openai(back) == data


def test_tool_call_arguments_keep_the_models_own_text():
    data = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1,"b":[1,2]}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    back = agentmsg.from_openai(data)
    assert back[0].tool_calls[0].input == {"a": 1, "b": [1, 2]}
    assert agentmsg.to_openai(back) == data
    assert agentmsg.count_message_tokens(agentmsg.to_openai(back)) == agentmsg.count_message_tokens(data)
    # changed arguments are written from the input
    call = back[0].tool_calls[0]
    changed = ToolUseBlock(call.id, call.name, {"a": 2}, metadata=dict(call.metadata))
    out = agentmsg.to_openai([Message.assistant(tool_calls=[changed])])
    assert out[0]["tool_calls"][0]["function"]["arguments"] == '{"a": 2}'
    # and text that already reads as written keeps no copy of itself
    plain = agentmsg.from_openai([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}])
    assert plain[0].tool_calls[0].metadata == {}


def test_raw_argument_text_is_not_a_loss_for_other_formats():
    back = agentmsg.from_openai([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]}])
    for convert in (agentmsg.to_anthropic, agentmsg.to_bedrock, agentmsg.to_dashscope, agentmsg.to_forge):
        _, said = recorded(convert, back)
        assert said == [], convert.__name__
    forge = agentmsg.to_forge(back)[0]["content"]
    assert "raw_arguments" not in forge


def test_developer_role_round_trips():
    data = [{"role": "developer", "content": "rules"}, {"role": "user", "content": "hi"}]
    back = agentmsg.from_openai(data)
    assert (back[0].role.value, back[0].metadata) == ("system", {"openai": {"role": "developer"}})
    assert agentmsg.to_openai(back) == data
    check_openai(agentmsg.to_openai(back))


def test_refusal_is_read_and_written_back():
    refusal = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    back = agentmsg.from_openai([{"role": "user", "content": "bad"}, refusal])
    assert (back[1].text, back[1].metadata) == ("I can't help with that.", {"openai": {"refusal": "I can't help with that."}})
    out = agentmsg.to_openai(back)
    assert out[1] == refusal
    check_openai(out)


def test_tool_messages_carry_no_name():
    chat = [Message.assistant(tool_calls=[CALL]), Message.tool("found", tool_id="c1", name="search")]
    out, said = recorded(agentmsg.to_openai, chat)
    assert (out[1], said) == ({"role": "tool", "tool_call_id": "c1", "content": "found"}, [])
    assert agentmsg.from_openai(out)[1].name == "search"  # named after its call again
    # a name that is not the call's is a loss, and says so
    chat[1] = Message.tool("found", tool_id="c1", name="other")
    _, said = recorded(agentmsg.to_openai, chat)
    assert said == ["to_openai cannot carry a tool result name that differs from its call's (message 1); "
                    "they were left out"]


# -- a user message between a call and its result -------------------------------------------------

MOVED = ("moved messages 2 after the tool results they interrupted (tool results must directly follow "
         "their call)")


def test_to_openai_moves_an_interjection_after_the_results():
    out, said = recorded(agentmsg.to_openai, INTERRUPTED)
    assert said == [f"to_openai {MOVED}"]
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user", "assistant"]
    check_openai(out)


def test_to_dashscope_moves_an_interjection_after_the_results():
    out, said = recorded(agentmsg.to_dashscope, INTERRUPTED)
    assert said == [f"to_dashscope {MOVED}"]
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user", "assistant"]


def test_to_anthropic_puts_tool_results_first_in_the_merged_turn():
    (system, turns), said = recorded(agentmsg.to_anthropic, INTERRUPTED, cache=[2])
    assert said == [f"to_anthropic {MOVED}"]
    assert turns[2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "found x"}]},
        {"type": "text", "text": "Also, hurry up", "cache_control": {"type": "ephemeral"}},
    ]}
    check_anthropic(system, turns)


def test_to_bedrock_puts_tool_results_first_in_the_merged_turn():
    (system, turns), said = recorded(agentmsg.to_bedrock, INTERRUPTED)
    assert said == [f"to_bedrock {MOVED}"]
    assert turns[2] == {"role": "user", "content": [
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "found x"}], "status": "success"}},
        {"text": "Also, hurry up"},
    ]}
    check_bedrock(system, turns)


def test_several_results_and_interjections_keep_their_own_order():
    calls = [ToolUseBlock("a", "f", {}), ToolUseBlock("b", "f", {})]
    chat = [Message.assistant(tool_calls=calls), Message.user("one"), Message.tool("A", tool_id="a"),
            Message.user("two"), Message.tool("B", tool_id="b"), Message.user("three")]
    out = quiet(agentmsg.to_openai, chat)
    assert [m.get("tool_call_id") or m["content"] for m in out[1:]] == ["a", "b", "one", "two", "three"]
    # nothing moves when the results already follow their call
    _, said = recorded(agentmsg.to_openai, [chat[0], chat[2], chat[4], chat[5]])
    assert said == []


# -- messages of only thinking --------------------------------------------------------------------

THINKING_ONLY = [
    Message("assistant", [ThinkingBlock("hmm")]),
    Message.assistant("", thinking="hmm"),
    Message("assistant", [ThinkingBlock("")]),
    Message("assistant", [ThinkingBlock("hmm")], reasoning_content="why"),
]
PAIRS = {
    "openai": (agentmsg.to_openai, lambda out: agentmsg.from_openai(out)),
    "db_rows": (agentmsg.to_db_rows, lambda out: agentmsg.from_db_rows(out)),
    "arcaelas": (agentmsg.to_arcaelas, lambda out: agentmsg.from_arcaelas(out)),
    "wolo": (agentmsg.to_wolo, lambda out: agentmsg.from_wolo(out)),
    "dashscope": (agentmsg.to_dashscope, lambda out: agentmsg.from_dashscope(out)),
    "forge": (agentmsg.to_forge, lambda out: agentmsg.from_forge(out)),
    "agentscope": (agentmsg.to_agentscope, lambda out: agentmsg.from_agentscope(out)),
    "anthropic": (agentmsg.to_anthropic, lambda out: agentmsg.from_anthropic(*out)),
    "bedrock": (agentmsg.to_bedrock, lambda out: agentmsg.from_bedrock(*out)),
}


@pytest.mark.parametrize("message", THINKING_ONLY, ids=range(len(THINKING_ONLY)))
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_a_writer_writes_only_what_its_reader_reads(pair, message):
    write, read = PAIRS[pair]
    out, said = recorded(write, [Message.user("q"), message])
    back = read(out)
    if len(back) == 1:
        assert said, "a message was left out without a warning"


# -- aliasing -------------------------------------------------------------------------------------

def test_converter_output_shares_no_dict_with_the_message():
    call = ToolUseBlock("c1", "f", {"nested": {"a": [1]}}, metadata={"k": {"v": 1}})
    message = Message.assistant("x", tool_calls=[call], metadata={"deep": {"x": [1]}})
    before = message.to_json()

    def scribble(value):
        if isinstance(value, dict):
            for item in list(value.values()):
                scribble(item)
            value["scribbled"] = True
        elif isinstance(value, list):
            for item in value:
                scribble(item)
            value.append("scribbled")
        elif hasattr(value, "__dataclass_fields__"):
            for name in value.__dataclass_fields__:
                scribble(getattr(value, name))

    for write in (agentmsg.to_openai, agentmsg.to_anthropic, agentmsg.to_bedrock, agentmsg.to_dashscope,
                  agentmsg.to_db_rows, agentmsg.to_agentscope, agentmsg.to_wolo, agentmsg.to_forge,
                  agentmsg.to_arcaelas, agentmsg.format_conversation_for_cache):
        scribble(quiet(write, [message]))
        assert message.to_json() == before, write.__name__
    assert call.input == {"nested": {"a": [1]}}


def test_reader_output_shares_no_dict_with_the_input():
    data = [{"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {"a": [1]}}]}]
    message = agentmsg.from_anthropic(None, data, on_orphan="keep")[0]
    data[0]["content"][0]["input"]["a"].append(2)
    assert message.tool_calls[0].input == {"a": [1]}


# -- every pair, random conversations -------------------------------------------------------------

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories)
def test_every_reader_reads_what_its_writer_wrote_and_silent_writes_round_trip(messages):
    """For every format: what a writer writes, its reader reads; and when the writer said
    nothing was lost, writing what was read gives the same output again."""
    for name, (write, _) in PAIRS.items():
        try:
            first, said = recorded(write, messages)
        except AgentMsgError:
            continue  # a history the format cannot hold (e.g. a Wolo result without its call)
        back = quiet(read_keeping_orphans(name), first)
        if not said:
            assert quiet(write, back) == first, name


def read_keeping_orphans(name):
    reader = {
        "openai": lambda out: agentmsg.from_openai(out, on_orphan="keep"),
        "db_rows": lambda out: agentmsg.from_db_rows(out, on_orphan="keep"),
        "dashscope": lambda out: agentmsg.from_dashscope(out, on_orphan="keep"),
        "forge": lambda out: agentmsg.from_forge(out, on_orphan="keep"),
        "agentscope": lambda out: agentmsg.from_agentscope(out, on_orphan="keep"),
        "anthropic": lambda out: agentmsg.from_anthropic(*out, on_orphan="keep"),
        "bedrock": lambda out: agentmsg.from_bedrock(*out, on_orphan="keep"),
    }
    return reader.get(name, PAIRS[name][1])
