"""to_openai / from_openai: exact shapes, SDK validation, round trips, errors, orphans."""

import warnings

import pytest
from hypothesis import given, settings

import agentmsg
from agentmsg import _core
from agentmsg import (
    AudioBlock,
    Base64Source,
    ConversionError,
    ConversionWarning,
    ImageBlock,
    Message,
    MessageTypeError,
    TextBlock,
    ThinkingBlock,
    ToolPairError,
    ToolUseBlock,
    URLSource,
    VideoBlock,
    from_openai,
    to_openai,
)
from convert_checks import check_openai
from convert_strategies import histories

CALL = ToolUseBlock("tooluse_FLTrjOjmSQmzWZCwoun-IA", "web_search", {"query": "Larry Ellison biography", "num_results": 10})


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConversionWarning)
        return fn(*args, **kwargs)


def test_seed_002_assistant_with_tool_calls_and_tool_result():
    messages = [
        Message.assistant("I'll conduct a comprehensive research on Larry Ellison for you.", tool_calls=[CALL]),
        Message.tool('{"query": "Larry Ellison biography"}', tool_id=CALL.id, name="web_search"),
    ]
    assert to_openai(messages) == [
        {
            "role": "assistant",
            "content": "I'll conduct a comprehensive research on Larry Ellison for you.",
            "tool_calls": [{
                "id": "tooluse_FLTrjOjmSQmzWZCwoun-IA",
                "type": "function",
                "function": {"name": "web_search",
                             "arguments": '{"query": "Larry Ellison biography", "num_results": 10}'},
            }],
        },
        # no name: ChatCompletionToolMessageParam has no such field
        {"role": "tool", "tool_call_id": "tooluse_FLTrjOjmSQmzWZCwoun-IA",
         "content": '{"query": "Larry Ellison biography"}'},
    ]


def test_arguments_are_always_a_json_string():
    out = to_openai([Message.assistant(tool_calls=[CALL])])
    assert out[0]["content"] is None
    assert isinstance(out[0]["tool_calls"][0]["function"]["arguments"], str)


def test_seed_003_reasoning_content_passes_through_both_ways():
    message = Message.assistant("The configuration looks correct.", reasoning_content="Let me analyze...")
    out = to_openai([message])
    assert out == [{"role": "assistant", "content": "The configuration looks correct.",
                    "reasoning_content": "Let me analyze..."}]
    assert from_openai(out)[0].reasoning_content == "Let me analyze..."


def test_multimodal_user_parts():
    message = Message.user([
        TextBlock("What's in this image?"),
        ImageBlock(URLSource("https://example.com/photo.jpg")),
        ImageBlock(Base64Source("image/png", "iVBORw0KGgo=")),
        AudioBlock(Base64Source("audio/wav", "UklGRg==")),
    ])
    out = to_openai([message])
    assert out[0]["content"] == [
        {"type": "text", "text": "What's in this image?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/photo.jpg"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]
    check_openai(out)
    assert from_openai(out)[0].content == message.content


def test_losses_warn_and_name_the_messages():
    messages = [
        Message.user([TextBlock("clip"), VideoBlock(URLSource("https://example.com/v.mp4"))]),
        Message.assistant("hi", thinking="private"),
        Message.tool("boom", tool_id="c1", is_error=True),
    ]
    with pytest.warns(ConversionWarning) as caught:
        out = to_openai(messages)
    assert [str(w.message) for w in caught] == [
        "to_openai cannot carry video (message 0); they were left out",
        "to_openai cannot carry thinking blocks (message 1); they were left out",
        "to_openai cannot carry the is_error flag of tool results (message 2); they were left out",
    ]
    assert out[0]["content"] == "clip"


def test_no_warning_when_nothing_is_lost(recwarn):
    to_openai([Message.system("s"), Message.user("u"), Message.assistant("a", tool_calls=[CALL]),
               Message.tool("r", tool_id=CALL.id)])
    assert not recwarn.list


def test_from_openai_reads_sdk_objects():
    from openai.types.chat import ChatCompletionMessage

    sdk = ChatCompletionMessage.model_validate({
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "config.json"}'}}],
    })
    [message] = from_openai([sdk], on_orphan="keep")
    assert message.tool_calls == (ToolUseBlock("call_1", "read", {"path": "config.json"}),)


def test_developer_role_and_unknown_keys_are_kept_in_metadata():
    [message] = from_openai([{"role": "developer", "content": "rules", "message_id": "m-1"}])
    assert message.role.value == "system"
    assert message.metadata == {"openai": {"message_id": "m-1", "role": "developer"}}


def test_malformed_arguments_are_kept_and_written_back():
    raw = '{"path": "a.py"'  # truncated by the model
    data = [{"role": "assistant", "content": None,
             "tool_calls": [{"id": "c", "type": "function", "function": {"name": "read", "arguments": raw}}]}]
    with pytest.warns(ConversionWarning, match=r"messages\[0\].tool_calls\[0\].function.arguments"):
        [message] = from_openai(data, on_orphan="keep")
    assert message.tool_calls[0].metadata == {"raw_arguments": raw}
    assert to_openai([message])[0]["tool_calls"][0]["function"]["arguments"] == raw


@pytest.mark.parametrize("data, error, text", [
    ([{"content": "hi"}], ConversionError, "messages[0]: missing field 'role'"),
    ([{"role": "robot", "content": "hi"}], ConversionError, "messages[0].role: unknown role 'robot'"),
    ([{"role": "user", "content": 5}], MessageTypeError, "messages[0].content must be a str"),
    ([{"role": "user", "content": [{"type": "video_url"}]}], ConversionError,
     "messages[0].content[0].type: unknown content part type 'video_url'"),
    ([{"role": "tool", "content": "x"}], ConversionError, "messages[0]: missing field 'tool_call_id'"),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}],
     MessageTypeError, "messages[1].tool_calls[0].function.arguments must be a JSON string, not dict"),
    ([{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {}}]}],
     ConversionError, "messages[0].tool_calls[0].function: missing field 'name'"),
    ([{"role": "user", "content": ""}], ConversionError, "messages[0]: content is empty"),
    ("hello", MessageTypeError, "messages must be a list of dicts, not a single str"),
    ([["role", "user"]], MessageTypeError, "messages[0] must be an object (dict), not list"),
])
def test_bad_input_names_index_and_field(data, error, text):
    with pytest.raises(error) as caught:
        from_openai(data)
    assert str(caught.value).startswith(text)


def test_to_openai_rejects_non_messages_and_unlinked_tool_results():
    with pytest.raises(MessageTypeError, match=r"messages\[1\] must be a Message, .*, not int"):
        to_openai([Message.user("a"), 3])
    with pytest.raises(ConversionError, match=r"messages\[0\].tool_id"):
        to_openai([Message.tool("8", name="calculator")])


ORPHAN = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "ghost", "content": "x"}]
UNANSWERED = [
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "user", "content": "moving on"},
]


def test_orphans_raise_by_default():
    with pytest.raises(ToolPairError, match=r"messages\[1\]: tool result 'ghost' has no earlier call"):
        from_openai(ORPHAN)
    with pytest.raises(ToolPairError, match=r"messages\[0\]: tool call 'c1' is never answered"):
        from_openai(UNANSWERED)


def test_orphans_repair_or_keep():
    with pytest.warns(ConversionWarning, match="dropped tool results"):
        assert [m.text for m in from_openai(ORPHAN, on_orphan="repair")] == ["hi"]
    assert len(from_openai(ORPHAN, on_orphan="keep")) == 2
    with pytest.warns(ConversionWarning, match="added 1 error result"):
        repaired = from_openai(UNANSWERED, on_orphan="repair")
    assert [(m.role.value, m.tool_id, m.is_error) for m in repaired] == [
        ("assistant", None, False), ("tool", "c1", True), ("user", None, False)]
    # a call at the very end is pending, not an orphan
    assert len(from_openai(UNANSWERED[:1])) == 1
    with pytest.raises(ConversionError, match="on_orphan must be one of"):
        from_openai(ORPHAN, on_orphan="ignore")


def carried(message: Message, read_back: bool = False):
    """What OpenAI carries of a message, in the shape from_openai gives back (tool messages
    carry no name; an assistant message of only ``reasoning_content`` reads back as thinking)."""
    role = message.role.value
    if role == "tool":
        texts = [b.text for b in message.content[0].output if isinstance(b, TextBlock)] or [""]
        return (role, message.tool_id, message.reasoning_content, tuple(texts))
    if read_back and role == "assistant" and [type(b) for b in message.content] == [ThinkingBlock]:
        return (role, message.name, message.content[0].thinking, (), ())
    blocks, calls = [], []
    for block in message.content:
        if isinstance(block, TextBlock):
            blocks.append(block)
        elif isinstance(block, ToolUseBlock):
            calls.append((block.id, block.name, block.input))
        elif role == "user" and isinstance(block, ImageBlock):
            blocks.append(block)
        elif (role == "user" and isinstance(block, AudioBlock) and isinstance(block.source, Base64Source)
              and block.source.media_type in ("audio/wav", "audio/mpeg")):
            blocks.append(block)
    if not blocks and not calls and (role != "assistant" or message.reasoning_content is None):
        return None
    return (role, message.name, message.reasoning_content, tuple(blocks), tuple(calls))


@settings(max_examples=150, deadline=None)
@given(histories)
def test_round_trip_keeps_what_openai_carries(messages):
    out = quiet(to_openai, messages)
    check_openai(out)
    back = quiet(from_openai, out, on_orphan="keep")
    # A message between a call and its result is written after the result (results_first's
    # documented move), so what comes back is in that order.
    order, _ = _core.results_first(messages)
    expected = [c for c in (carried(messages[i]) for i in order) if c is not None]
    assert [carried(m, read_back=True) for m in back] == expected


def test_top_level_exports():
    assert agentmsg.to_openai is to_openai and "from_openai" in agentmsg.__all__


def full_view(message: Message):
    """Everything a message says (not its envelope), with the orderings OpenAI documents."""
    if message.role.value == "tool":
        output = message.content[0].output or (TextBlock(""),)
        return ("tool", message.tool_id, message.name, message.reasoning_content, output, message.is_error)
    blocks = [b for b in message.content if not isinstance(b, ToolUseBlock)]
    calls = [(b.id, b.name, b.input, b.server_name, b.metadata) for b in message.content if isinstance(b, ToolUseBlock)]
    return (message.role.value, message.name, message.reasoning_content, tuple(blocks), tuple(calls))


@settings(max_examples=150, deadline=None)
@given(histories)
def test_nothing_is_dropped_without_a_warning(messages):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = to_openai(messages)
    if not caught:
        back = from_openai(out, on_orphan="keep")
        assert [full_view(m) for m in back] == [full_view(m) for m in messages]


def test_a_conversion_warning_points_at_the_callers_line():
    # However deep the converter's helpers go, and through the call checks every public
    # function has, the warning names the line that called the library.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agentmsg.to_openai([agentmsg.assistant("42", thinking="add")])
        agentmsg.from_openai([{"role": "tool", "tool_call_id": "x", "content": "r"}], on_orphan="repair")
        agentmsg.as_messages([{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "nope"}}]}])
        agentmsg.from_forge([{"role": "assistant", "content": 'Hi <tool>{"tool_name": "t"}</tool>'}])
    assert len(caught) == 4
    assert {(w.category, w.filename) for w in caught} == {(agentmsg.ConversionWarning, __file__)}
