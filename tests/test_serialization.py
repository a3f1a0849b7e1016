"""to_dict / from_dict / to_json / from_json, in AgentScope's shape and arcaelas' flat shape."""

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings

from agentmsg import (
    Base64Source,
    ImageBlock,
    Message,
    MessageError,
    MessageTypeError,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    URLSource,
    block_from_dict,
    block_to_dict,
)

from strategies import messages

STAMP = "2024-01-15T10:30:00Z"


def test_to_dict_matches_seed_004_example():
    message = Message.user(
        [TextBlock("What is this image?"), ImageBlock(URLSource("https://example.com/photo.jpg"))],
        name="user",
        id="msg_001",
        timestamp=STAMP,
    )
    assert message.to_dict() == {
        "name": "user",
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this image?"},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/photo.jpg"}},
        ],
        "metadata": {},
        "id": "msg_001",
        "timestamp": "2024-01-15T10:30:00.000000Z",
    }


def test_seed_004_json_reads_back_with_upper_case_role():
    text = """{"name": "user", "role": "USER", "content": [{"type": "text", "text": "What is this image?"},
      {"type": "image", "source": {"type": "url", "url": "https://example.com/photo.jpg"}}],
      "metadata": {}, "id": "msg_001", "timestamp": "2024-01-15T10:30:00Z"}"""
    message = Message.from_json(text)
    assert message.role == "user"
    assert message.id == "msg_001"
    assert message.timestamp == datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)
    assert message.content[1] == ImageBlock(URLSource("https://example.com/photo.jpg"))


def test_every_block_type_serializes_with_its_tag():
    blocks = {
        "text": TextBlock("t"),
        "image": ImageBlock(Base64Source("image/png", "AAAA")),
        "thinking": ThinkingBlock("hmm", signature="sig"),
        "tool_use": ToolUseBlock("c1", "calc", {"a": 1}, metadata={"extra": True}),
    }
    for tag, block in blocks.items():
        data = block_to_dict(block)
        assert data["type"] == tag
        assert block_from_dict(data) == block
    assert block_to_dict(blocks["image"])["source"] == {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    assert block_to_dict(blocks["thinking"]) == {"type": "thinking", "thinking": "hmm", "signature": "sig"}


def test_tool_message_dict():
    message = Message.tool("Data", tool_id="calc_123", name="calc", id="m", timestamp=STAMP)
    assert message.to_dict() == {
        "name": "calc",
        "role": "tool",
        "content": [
            {"type": "tool_result", "tool_use_id": "calc_123",
             "output": [{"type": "text", "text": "Data"}], "is_error": False}
        ],
        "metadata": {},
        "id": "m",
        "timestamp": "2024-01-15T10:30:00.000000Z",
        "tool_id": "calc_123",
    }


def test_seed_001_flat_shape():
    message = Message.from_dict(
        {"role": "tool", "content": "Data", "tool_id": "calc_123", "timestamp": "2025-10-12T10:30:45.123Z"}
    )
    assert message.text == "Data"
    assert message.tool_id == "calc_123"
    assert message.timestamp == datetime(2025, 10, 12, 10, 30, 45, 123000, tzinfo=timezone.utc)
    assert Message.from_json('{"role": "assistant", "content": "Hello there!"}').text == "Hello there!"


def test_optional_fields_round_trip():
    message = Message.assistant("ok", finished=True, finish_reason="stop", reasoning_content="r")
    data = message.to_dict()
    assert (data["finished"], data["finish_reason"], data["reasoning_content"]) == (True, "stop", "r")
    assert Message.from_dict(data) == message


@pytest.mark.parametrize(
    "data, error, match",
    [
        ({"content": "hi"}, MessageError, "missing field 'role'"),
        ({"role": "user"}, MessageError, "missing field 'content'"),
        ({"role": "user", "content": 5}, MessageTypeError, "content must be a str or a list"),
        ({"role": "user", "content": [{"type": "sticker"}]}, MessageError, r"content\[0\]: unknown block type 'sticker'"),
        ({"role": "user", "content": [{"type": "text"}]}, MessageError, r"content\[0\]: missing field 'text'"),
        ({"role": "user", "content": [{"type": "image", "source": {"type": "ftp"}}]}, MessageError,
         r"content\[0\].source: unknown source type"),
        ({"role": "user", "content": ["hi"]}, MessageTypeError, r"content\[0\] must be an object"),
        ([1], MessageTypeError, "message must be a dict"),
    ],
)
def test_from_dict_errors_name_the_field(data, error, match):
    with pytest.raises(error, match=match):
        Message.from_dict(data)


def test_from_json_reports_line_and_column():
    with pytest.raises(MessageError, match="line 2 column 1"):
        Message.from_json('{"role": "user",\n}')


@settings(max_examples=300, deadline=None)
@given(messages)
def test_dict_round_trip_is_lossless(message):
    assert Message.from_dict(message.to_dict()) == message


@settings(max_examples=300, deadline=None)
@given(messages)
def test_json_round_trip_is_lossless(message):
    text = message.to_json()
    assert Message.from_json(text) == message
    # Always valid UTF-8 (lone surrogates are escaped), so it can be written to any file or socket.
    assert Message.from_json(text.encode("utf-8")) == message
