"""to_anthropic / from_anthropic: exact shapes, cache placement, SDK validation, round trips."""

import warnings

import pytest
from hypothesis import given, settings

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
    from_anthropic,
    to_anthropic,
)
from convert_checks import add_turn, check_anthropic, full_stream
from convert_strategies import histories

CALL = ToolUseBlock("toolu_1", "get_weather", {"city": "Beijing"})
CHAT = [
    Message.system("You are a weather assistant."),
    Message.user("Weather in Beijing?"),
    Message.assistant("Let me check.", tool_calls=[CALL]),
    Message.tool("Beijing: Sunny, 25°C", tool_id="toolu_1", name="get_weather"),
    Message.user("Thanks!"),
]


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConversionWarning)
        return fn(*args, **kwargs)


def test_exact_shape_with_tool_results_merged_into_the_next_user_turn():
    system, messages = to_anthropic(CHAT)
    assert system == [{"type": "text", "text": "You are a weather assistant."}]
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Beijing?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Beijing"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1",
             "content": [{"type": "text", "text": "Beijing: Sunny, 25°C"}]},
            {"type": "text", "text": "Thanks!"},
        ]},
    ]
    check_anthropic(system, messages)
    back = from_anthropic(system, messages)
    assert [(m.role.value, m.text, m.tool_id, m.name) for m in back] == [
        ("system", "You are a weather assistant.", None, None),
        ("user", "Weather in Beijing?", None, None),
        ("assistant", "Let me check.", None, None),
        ("tool", "Beijing: Sunny, 25°C", "toolu_1", "get_weather"),
        ("user", "Thanks!", None, None),
    ]


def test_cache_control_where_asked():
    system, messages = to_anthropic(CHAT, cache=["system", "last", 2])
    assert system[-1]["cache_control"] == {"type": "ephemeral"}
    assert messages[1]["content"][1]["cache_control"] == {"type": "ephemeral"}
    assert messages[-1]["content"][-1] == {"type": "text", "text": "Thanks!", "cache_control": {"type": "ephemeral"}}
    assert "cache_control" not in messages[0]["content"][0]
    check_anthropic(system, messages)


@pytest.mark.parametrize("cache, error, text", [
    (["system", "last", 1, 2, 3], ConversionError, "cache: at most 4 cache points, got 5"),
    (["middle"], ConversionError, "cache: unknown place 'middle'"),
    ([9], ConversionError, "cache: message index 9 is out of range for 5 messages"),
    ([1.5], MessageTypeError, "cache entries must be"),
])
def test_bad_cache_places(cache, error, text):
    with pytest.raises(error, match=text):
        to_anthropic(CHAT, cache=cache)


def test_thinking_keeps_its_signature_and_unsigned_thinking_warns():
    signed = Message.assistant("42", thinking=None).replace(
        content=[ThinkingBlock("add them", "sig-abc"), TextBlock("42")])
    system, messages = to_anthropic([Message.user("5+37?"), signed])
    assert messages[1]["content"][0] == {"type": "thinking", "thinking": "add them", "signature": "sig-abc"}
    check_anthropic(system, messages)
    assert from_anthropic(system, messages)[1].content == signed.content
    with pytest.warns(ConversionWarning, match="thinking without a signature"):
        to_anthropic([Message.user("q"), Message.assistant("a", thinking="unsigned")])


def test_images_audio_and_names():
    message = Message.user([
        TextBlock("look"),
        ImageBlock(Base64Source("image/png", "iVBORw0KGgo=")),
        ImageBlock(URLSource("https://example.com/a.jpg")),
        AudioBlock(Base64Source("audio/wav", "UklGRg==")),
    ], name="alice")
    with pytest.warns(ConversionWarning) as caught:
        _, messages = to_anthropic([message])
    assert sorted(str(w.message) for w in caught) == [
        "to_anthropic cannot carry audio blocks (message 0); they were left out",
        "to_anthropic cannot carry name on non-tool messages (message 0); they were left out",
    ]
    assert messages[0]["content"][1:] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
    ]


def test_mid_conversation_system_message_moves_with_a_warning():
    with pytest.warns(ConversionWarning, match="moved system messages 1"):
        system, _ = to_anthropic([Message.user("a"), Message.system("late rule")])
    assert system == [{"type": "text", "text": "late rule"}]


def test_error_results_and_string_system():
    back = from_anthropic("Be brief", [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "calc", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "division by zero",
                                      "is_error": True}]},
    ])
    assert back[0].text == "Be brief"
    assert (back[2].text, back[2].is_error, back[2].name) == ("division by zero", True, "calc")


@pytest.mark.parametrize("messages, error, text", [
    ([{"content": "hi"}], ConversionError, "messages[0]: missing field 'role'"),
    ([{"role": "system", "content": "hi"}], ConversionError, "messages[0].role: unknown role 'system'"),
    ([{"role": "user", "content": [{"type": "container_upload"}]}], ConversionError,
     "messages[0].content[0].type: unknown block type 'container_upload'"),
    ([{"role": "user", "content": 3}], MessageTypeError, "messages[0].content must be a str or a list"),
    ([{"role": "user", "content": [{"type": "tool_result"}]}], ConversionError,
     "messages[0].content[0]: missing field 'tool_use_id'"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "f"}]}], ConversionError,
     "messages[0].content[0]: missing field 'input'"),
])
def test_bad_input_names_index_and_field(messages, error, text):
    with pytest.raises(error) as caught:
        from_anthropic(None, messages)
    assert str(caught.value).startswith(text)


def test_orphan_result_raises_or_repairs():
    turns = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "ghost", "content": "x"},
                                          {"type": "text", "text": "hi"}]}]
    with pytest.raises(ToolPairError, match="ghost"):
        from_anthropic(None, turns)
    with pytest.warns(ConversionWarning):
        assert [m.text for m in from_anthropic(None, turns, on_orphan="repair")] == ["hi"]


def _carried_image(block):
    return isinstance(block, ImageBlock) and (
        isinstance(block.source, URLSource) or block.source.media_type in ("image/jpeg", "image/png", "image/gif", "image/webp"))


def carried(messages):
    """What Anthropic carries: the system texts and the role-merged stream of blocks."""
    system, turns = [], []
    for message in messages:
        role = message.role.value
        if role == "system":
            system.extend(b.text for b in message.content if isinstance(b, TextBlock) and b.text)
            continue
        if role == "tool":
            result = message.content[0]
            output = tuple(b for b in result.output if (isinstance(b, TextBlock) and b.text) or _carried_image(b))
            items = [("tool_result", message.tool_id, result.is_error, output)]
            role = "user"
        else:
            items = []
            for b in message.content:
                if isinstance(b, TextBlock) and b.text or _carried_image(b):
                    items.append(b)
                elif isinstance(b, ThinkingBlock) and b.signature is not None:
                    items.append(b)
                elif isinstance(b, ToolUseBlock):
                    items.append((b.id, b.name, b.input))
        add_turn(turns, role, items)
    return system, turns


@settings(max_examples=150, deadline=None)
@given(histories)
def test_round_trip_keeps_what_anthropic_carries(messages):
    system, turns = quiet(to_anthropic, messages)
    check_anthropic(system, turns)
    back = quiet(from_anthropic, system, turns, on_orphan="keep")
    assert carried(back) == carried(messages)


def test_from_anthropic_reads_sdk_response_objects():
    from anthropic.types import Message as AnthropicMessage

    response = AnthropicMessage.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "stop_reason": "tool_use",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 2},
        "content": [{"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
    })
    [message] = from_anthropic(None, [response])
    assert message.content == (TextBlock("Checking."), ToolUseBlock("toolu_1", "get_weather", {"city": "Paris"}))
    assert message.metadata["anthropic"]["stop_reason"] == "tool_use"


def test_redacted_thinking_is_kept_and_written_back():
    turns = [{"role": "user", "content": [{"type": "text", "text": "q"}]},
             {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "EncRypt3d"},
                                               {"type": "text", "text": "a"}]}]
    back = from_anthropic(None, turns)
    assert back[1].metadata == {"anthropic": {"redacted_thinking": ["EncRypt3d"]}}
    assert to_anthropic(back) == ([], turns)
    only = [turns[0], {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}]}]
    assert to_anthropic(from_anthropic(None, only)) == ([], only)
    check_anthropic(*to_anthropic(back))


@settings(max_examples=150, deadline=None)
@given(histories)
def test_nothing_is_dropped_without_a_warning(messages):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        system, turns = to_anthropic(messages)
    if not caught:
        assert full_stream(from_anthropic(system, turns, on_orphan="keep")) == full_stream(messages)
