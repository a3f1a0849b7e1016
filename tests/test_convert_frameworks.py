"""AgentScope's multi-agent formatter and AgentScope Msg JSON; arcaelas' message JSON."""

import warnings

import pytest
from hypothesis import given, settings

from agentmsg import (
    ConversionError,
    ConversionWarning,
    ImageBlock,
    Message,
    MessageTypeError,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    URLSource,
    format_multi_agent,
    from_agentscope,
    from_arcaelas,
    to_agentscope,
    to_arcaelas,
    to_openai,
)
from convert_strategies import histories


# -- multi-agent ---------------------------------------------------------------------------------

def test_seed_004_other_agents_become_user_turns():
    chat = [Message.assistant("View A", name="AgentA"), Message.assistant("View B", name="AgentB")]
    out = format_multi_agent(chat)
    assert to_openai(out) == [{"role": "user", "content": "[AgentA]: View A"},
                              {"role": "user", "content": "[AgentB]: View B"}]
    assert out[0].id == chat[0].id and out[0].metadata == {"multi_agent_role": "assistant"}


def test_own_turns_stay_and_foreign_tool_calls_become_text():
    call = ToolUseBlock("c1", "search", {"q": "x"})
    chat = [
        Message.system("debate"),
        Message.assistant("I'll look it up", name="B", tool_calls=[call], thinking="private"),
        Message.tool("found", tool_id="c1"),
        Message.assistant("My view", name="A"),
        Message.user("unnamed"),
    ]
    out = format_multi_agent(chat, self_name="A")
    assert [(m.role.value, m.text) for m in out] == [
        ("system", "debate"),
        ("user", '[B]: I\'ll look it up\n[B] called search {"q": "x"}'),
        ("user", "[B] tool result: found"),
        ("assistant", "My view"),
        ("user", "unnamed"),
    ]
    assert out[3] is chat[3]


# -- AgentScope Msg --------------------------------------------------------------------------------

def test_agentscope_seed_example_reads_and_writes_back():
    msg = {
        "name": "user", "role": "USER",
        "content": [{"type": "text", "text": "What is this image?"},
                    {"type": "image", "source": {"type": "url", "url": "https://example.com/photo.jpg"}}],
        "metadata": {}, "id": "msg_001", "timestamp": "2024-01-15T10:30:00Z",
    }
    [message] = from_agentscope([msg])
    assert message.content == (TextBlock("What is this image?"), ImageBlock(URLSource("https://example.com/photo.jpg")))
    out = to_agentscope([message])[0]
    assert out == {**msg, "timestamp": "2024-01-15T10:30:00.000000Z"}


def test_agentscope_tool_blocks_errors_signatures_and_server_name():
    call = ToolUseBlock("call_001", "get_weather", {"city": "Beijing"}, server_name="mcp-weather")
    messages = [
        Message("assistant", [ThinkingBlock("check", "sig"), TextBlock("Let me check the weather"), call],
                finish_reason="tool_calls"),
        Message.tool("API call failed", tool_id="call_001", name="get_weather", is_error=True),
    ]
    out = to_agentscope(messages)
    assert out[0]["content"][0] == {"type": "thinking", "thinking": "check", "metadata": {"thoughtSignature": "sig"}}
    assert out[0]["content"][2] == {"type": "tool_use", "id": "call_001", "name": "get_weather",
                                    "input": {"city": "Beijing"}, "metadata": {"agentmsg_server_name": "mcp-weather"}}
    assert out[0]["metadata"] == {"agentmsg": {"finish_reason": "tool_calls"}}
    assert out[1]["content"] == [{"type": "tool_result", "id": "call_001", "name": "get_weather",
                                  "output": [{"type": "text", "text": "API call failed"}], "state": "ERROR"}]
    assert [m.to_dict() for m in from_agentscope(out)] == [m.to_dict() for m in messages]


def test_agentscope_reads_tool_use_id_spelling_of_the_seed():
    msgs = [{"role": "ASSISTANT", "content": [{"type": "tool_use", "id": "c", "name": "f", "input": {}}]},
            {"role": "TOOL", "content": [{"type": "tool_result", "toolUseId": "c", "name": "f",
                                          "output": [{"type": "text", "text": "ok"}]}]}]
    assert [(m.tool_id, m.name) for m in from_agentscope(msgs)][1] == ("c", "f")


@pytest.mark.parametrize("msgs, error, text", [
    ([{"role": "ROBOT", "content": []}], ConversionError, "messages[0].role: unknown role 'ROBOT'"),
    ([{"role": "USER", "content": [{"type": "file"}]}], ConversionError, "messages[0].content[0].type: unknown block type 'file'"),
    ([{"role": "USER", "content": [{"type": "image", "source": {"type": "base64", "data": "x"}}]}],
     ConversionError, "messages[0].content[0].source: missing field 'media_type'"),
    ([{"role": "USER", "content": 3}], MessageTypeError, "messages[0].content must be a list"),
    ([{"role": "USER"}], ConversionError, "messages[0]: missing field 'content'"),
])
def test_agentscope_bad_input(msgs, error, text):
    with pytest.raises(error) as caught:
        from_agentscope(msgs)
    assert str(caught.value).startswith(text)


@settings(max_examples=150, deadline=None)
@given(histories)
def test_agentscope_round_trip_is_lossless(messages):
    assert [m.to_dict() for m in from_agentscope(to_agentscope(messages), on_orphan="keep")] == [
        m.to_dict() for m in messages]


# -- arcaelas JSON -------------------------------------------------------------------------------

def test_arcaelas_shape_and_validation():
    data = [{"role": "user", "content": "Hi", "timestamp": "2025-10-12T10:30:45.123Z"},
            {"role": "tool", "content": "Data", "tool_id": "calc_123", "timestamp": "2025-10-12T10:30:46.000Z"}]
    messages = from_arcaelas(data)
    assert to_arcaelas(messages) == data
    with pytest.raises(ConversionError, match=r"messages\[0\]: missing field 'tool_id'"):
        from_arcaelas([{"role": "tool", "content": "Data"}])
    with pytest.raises(ConversionError, match=r"messages\[0\].content: the content is required"):
        from_arcaelas([{"role": "user", "content": ""}])
    with pytest.raises(ConversionError, match=r"messages\[0\]: missing field 'role'"):
        from_arcaelas([{"content": "Hello"}])
    with pytest.warns(ConversionWarning, match="tool_use blocks"):
        to_arcaelas([Message.assistant("ok", tool_calls=[ToolUseBlock("c", "f", {})])])


@settings(max_examples=120, deadline=None)
@given(histories)
def test_arcaelas_round_trip_keeps_role_text_tool_id_and_millisecond_time(messages):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConversionWarning)
        data = to_arcaelas(messages)
    # a message with no text has nothing the format can carry (left out with a warning), except
    # a tool result, which may be empty; from_arcaelas reads everything to_arcaelas writes
    kept = [m for m in messages if m.text or m.role.value == "tool"]
    back = from_arcaelas(data)
    assert [(m.role, m.text, m.tool_id) for m in back] == [(m.role, m.text, m.tool_id) for m in kept]
    assert [m.timestamp.replace(microsecond=m.timestamp.microsecond // 1000 * 1000) for m in kept] == [
        m.timestamp for m in back]


def test_agentscope_keeps_a_callers_own_agentmsg_metadata_key():
    message = Message.user("x", metadata={"agentmsg": None, "k": 1}, finished=True)
    assert from_agentscope(to_agentscope([message]))[0].to_dict() == message.to_dict()
