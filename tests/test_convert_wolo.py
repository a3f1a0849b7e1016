"""Wolo parts both ways and to_llm_messages' rules."""

import warnings

import pytest
from hypothesis import given, settings

from agentmsg import (
    ConversionError,
    ConversionWarning,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    WoloMessage,
    WoloTextPart,
    WoloToolPart,
    from_wolo,
    to_llm_messages,
    to_wolo,
)
from convert_checks import check_openai
from convert_strategies import assistant_messages, system_messages, text_blocks, user_messages

from hypothesis import strategies as st


def seed_history():
    return [
        WoloMessage("msg_001", "user", [WoloTextPart("text_001", "Create a Python file with a hello world function")],
                    timestamp=1704067200.0, finished=True),
        WoloMessage("msg_002", "assistant", [
            WoloTextPart("text_002", "I'll create a Python file with a hello world function for you."),
            WoloToolPart("tool_001", "write", {"path": "hello.py", "contents": "def hello_world():\n    print('Hello, World!')"},
                         output="File written successfully", status="completed", start_time=1704067201.0,
                         end_time=1704067202.0),
        ], timestamp=1704067201.0, finished=True, finish_reason="stop"),
    ]


def test_from_wolo_splits_finished_tool_parts_into_tool_messages():
    messages = from_wolo(seed_history())
    assert [(m.role.value, m.text, m.tool_id) for m in messages] == [
        ("user", "Create a Python file with a hello world function", None),
        ("assistant", "I'll create a Python file with a hello world function for you.", None),
        ("tool", "File written successfully", "tool_001"),
    ]
    assert messages[1].tool_calls[0].name == "write"
    assert (messages[1].finished, messages[1].finish_reason) == (True, "stop")
    assert messages[1].metadata["wolo"]["tools"] == {
        "tool_001": {"status": "completed", "start_time": 1704067201.0, "end_time": 1704067202.0}}
    assert messages[2].timestamp.timestamp() == 1704067202.0


def test_wolo_round_trip_is_exact():
    history = seed_history()
    assert to_wolo(from_wolo(history)) == history


def test_to_llm_messages_seed_example():
    assert to_llm_messages(seed_history()) == [
        {"role": "system", "content": "You are Wolo, an AI coding agent that helps users with software engineering tasks."},
        {"role": "user", "content": "Create a Python file with a hello world function"},
        {"role": "assistant", "content": "I'll create a Python file with a hello world function for you.",
         "tool_calls": [{"id": "tool_001", "type": "function", "function": {
             "name": "write",
             "arguments": '{"path": "hello.py", "contents": "def hello_world():\\n    print(\'Hello, World!\')"}'}}]},
        {"role": "tool", "tool_call_id": "tool_001", "content": "File written successfully"},
    ]


def test_to_llm_messages_status_rules_and_failed_tools():
    parts = [
        WoloToolPart("p", "read", {"path": "a"}, status="pending"),
        WoloToolPart("r", "read", {"path": "b"}, status="running"),
        WoloToolPart("f", "shell", {"command": "x"}, output="Error: command not found", status="failed"),
        WoloToolPart("c", "shell", {"command": "y"}, status="cancelled"),
    ]
    out = to_llm_messages([WoloMessage("m", "system", [WoloTextPart("s", "sys")]),
                           WoloMessage("a", "assistant", parts, reasoning_content="think")])
    assert [c["id"] for c in out[1]["tool_calls"]] == ["p", "r", "f"]
    assert out[1]["content"] is None and out[1]["reasoning_content"] == "think"
    assert out[2:] == [{"role": "tool", "tool_call_id": "f", "content": "Error: command not found"}]
    assert out[0] == {"role": "system", "content": "sys"}  # no injection when a system message exists


def test_to_llm_messages_skips_empty_assistants_and_replaces_the_display_name():
    out = to_llm_messages([
        {"id": "u", "role": "user", "parts": [{"id": "t", "type": "text", "text": "hi"}]},
        {"id": "a", "role": "assistant", "parts": [{"id": "c", "type": "tool", "tool": "x", "input": {}, "status": "cancelled"}]},
    ], system_prompt="You are Wolo. Wolo helps. Wolof is a language.", agent_display_name="CodeHelper")
    assert out == [{"role": "system", "content": "You are CodeHelper. CodeHelper helps. Wolof is a language."},
                   {"role": "user", "content": "hi"}]


def test_to_llm_messages_accepts_agentmsg_messages():
    call = ToolUseBlock("c1", "read", {"path": "a.py"})
    out = to_llm_messages([Message.user("read a.py"), Message.assistant("", tool_calls=[call]),
                           Message.tool("print(1)", tool_id="c1")])
    check_openai(out)
    assert out[-1] == {"role": "tool", "tool_call_id": "c1", "content": "print(1)"}


def test_to_wolo_errors_and_losses():
    with pytest.raises(ConversionError, match=r"messages\[0\].tool_id: Wolo keeps a tool result inside"):
        to_wolo([Message.tool("x", tool_id="ghost")])
    with pytest.raises(ConversionError, match=r"messages\[0\].parts\[0\]: tool parts belong in assistant"):
        from_wolo([WoloMessage("m", "user", [WoloToolPart("t", "x")])])
    with pytest.raises(ConversionError, match=r"messages\[0\].parts\[0\].type: unknown part type 'image'"):
        from_wolo([{"id": "m", "role": "user", "parts": [{"id": "p", "type": "image"}]}])
    with pytest.warns(ConversionWarning, match="thinking signatures"):
        [w] = to_wolo([Message("assistant", [ThinkingBlock("t", "sig"), TextBlock("a")])])
    assert w.reasoning_content == "t"


tool_results = st.tuples(st.booleans(), st.text(max_size=10))


@st.composite
def wolo_friendly_histories(draw):
    """Histories Wolo can hold: tool results right after their call, no media, no names."""
    out = []
    for _ in range(draw(st.integers(0, 4))):
        message = draw(st.one_of(system_messages, user_messages, assistant_messages))
        content = [b for b in message.content if isinstance(b, (TextBlock, ToolUseBlock))
                   or (isinstance(b, ThinkingBlock) and b.signature is None)]
        if message.role.value == "assistant":
            thinking = [b for b in content if isinstance(b, ThinkingBlock)]
            content = [b for b in content if not isinstance(b, ThinkingBlock)]
            reasoning = "\n".join(b.thinking for b in thinking) if thinking else message.reasoning_content
        else:
            content = [b for b in content if isinstance(b, TextBlock)]
            reasoning = None
        calls = {b.id: b for b in content if isinstance(b, ToolUseBlock)}
        content = [b for b in content if not isinstance(b, ToolUseBlock)] + list(calls.values())
        if not content:
            content = draw(st.lists(text_blocks, min_size=1, max_size=1))
        out.append(Message(message.role, content, id=message.id, timestamp=message.timestamp.replace(microsecond=0),
                           metadata=message.metadata, finished=message.finished,
                           finish_reason=message.finish_reason or None,
                           reasoning_content=reasoning or None))
        for call_id in calls:
            if draw(st.booleans()):
                is_error, text = draw(tool_results)
                out.append(Message.tool(text, tool_id=call_id, name=calls[call_id].name, is_error=is_error))
    return out


@settings(max_examples=120, deadline=None)
@given(wolo_friendly_histories())
def test_round_trip_through_wolo(messages):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConversionWarning)
        back = from_wolo(to_wolo(messages))

    def view(m):
        content = m.content if m.role.value != "tool" else (m.text, m.is_error)
        return (m.role, content, m.tool_id, m.thinking or None, m.finish_reason, bool(m.finished))
    assert [view(m) for m in back] == [view(m) for m in messages]
    for original, read in zip(messages, back):
        if original.role.value != "tool":
            assert (read.id, read.timestamp) == (original.id, original.timestamp)
            assert {k: v for k, v in read.metadata.items() if k != "wolo"} == original.metadata
