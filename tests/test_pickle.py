"""Everything a worker process receives pickles to an equal object (Ray and datasets.map ship
functions and objects by pickle); a stream parser refuses with a typed error."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings

import agentmsg
from agentmsg import (
    AudioBlock, Base64Source, ImageBlock, Message, TextBlock, ThinkingBlock, ToolResultBlock,
    ToolUseBlock, URLSource, VideoBlock,
)
from strategies import messages
from transcripts import build_transcript

PARSED_TEXT = '<think>plan</think>Hi <tool>{"tool_name": "ls", "arguments": {"path": "/"}}</tool> <tool>oops</tool>'

VALUES = {
    "Message": Message.user("Hi", name="ann", metadata={"k": [1, 2]}),
    "assistant with calls": Message.assistant("ok", tool_calls=[ToolUseBlock("c1", "calc", {"a": 1.5})]),
    "tool result": Message.tool("4", tool_id="c1", name="calc"),
    "TextBlock": TextBlock("x"),
    "ThinkingBlock": ThinkingBlock("hmm"),
    "ToolUseBlock": ToolUseBlock("c1", "calc", {"nested": {"a": [None, True]}}),
    "ToolResultBlock": ToolResultBlock("c1", "out", is_error=True),
    "ImageBlock url": ImageBlock(URLSource("https://example.com/a.png")),
    "ImageBlock base64": ImageBlock(Base64Source("image/png", "aGk=")),
    "AudioBlock": AudioBlock(Base64Source("audio/wav", "aGk=")),
    "VideoBlock": VideoBlock(URLSource("https://example.com/a.mp4")),
    "DocumentBlock": agentmsg.DocumentBlock(Base64Source("application/pdf", "aGk="), "a.pdf", {"context": "c"}),
    "Parsed": agentmsg.parse(PARSED_TEXT),
    "ParseIssue": agentmsg.parse(PARSED_TEXT).errors[0],
    "TrimResult": agentmsg.trim(build_transcript(40), 2000, counter="o200k_base"),
    "TextDelta": agentmsg.TextDelta("Hi"),
    "ThinkingDelta": agentmsg.ThinkingDelta(0, "hmm"),
    "ThinkingEnd": agentmsg.ThinkingEnd(0, True),
    "ToolCallStart": agentmsg.ToolCallStart(1),
    "ToolCallDelta": agentmsg.ToolCallDelta(1, '{"tool_name"'),
    "ToolCallEnd": agentmsg.ToolCallEnd(0, ToolUseBlock("c1", "ls", {}), None),
}


@pytest.mark.parametrize("name", VALUES)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_round_trip_is_equal(name, protocol):
    value = VALUES[name]
    copy = pickle.loads(pickle.dumps(value, protocol=protocol))
    assert type(copy) is type(value)
    assert copy == value


def test_stream_events_round_trip_from_a_real_stream():
    parser = agentmsg.StreamParser()
    events = parser.feed(PARSED_TEXT[:30]) + parser.feed(PARSED_TEXT[30:]) + parser.finish()
    assert pickle.loads(pickle.dumps(events)) == events


@settings(max_examples=50, deadline=None)
@given(messages)
def test_any_message_round_trips(message):
    assert pickle.loads(pickle.dumps(message)) == message


def test_transcripts_round_trip():
    history = build_transcript(500)
    assert pickle.loads(pickle.dumps(history)) == history


def test_stream_parser_refuses_with_a_typed_error():
    parser = agentmsg.StreamParser()
    parser.feed("Hi <thi")
    with pytest.raises(agentmsg.MessageTypeError, match="a StreamParser cannot be pickled"):
        pickle.dumps(parser)
    with pytest.raises(TypeError):
        pickle.dumps(parser)


@pytest.mark.parametrize("counter", ["estimate", "o200k_base"])
def test_conversation_memory_round_trips(counter):
    memory = agentmsg.ConversationMemory(max_tokens=3000, counter=counter, keep_system=False)
    for message in build_transcript(60):
        memory.add(message)
    copy = pickle.loads(pickle.dumps(memory))
    assert copy.messages == memory.messages
    assert copy.max_tokens == memory.max_tokens
    assert (copy.total_tokens, copy.pruned) == (memory.total_tokens, memory.pruned)
    one_more = Message.user("one more " * 400)
    copy.add(one_more)
    memory.add(one_more)
    assert copy.messages == memory.messages and copy.pruned == memory.pruned


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_encodings_pickle_to_the_same_encoder(name):
    encoding = agentmsg.get_encoding(name)
    copy = pickle.loads(pickle.dumps(encoding))
    assert copy.name == name and copy.encode("hello <|endoftext|>", allowed_special="all") == encoding.encode(
        "hello <|endoftext|>", allowed_special="all"
    )
