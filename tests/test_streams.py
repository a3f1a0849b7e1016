"""Streams to messages: OpenAI chunks and Anthropic events, built offline with the SDKs' own
classes, give the message the whole reply gives, for every split of the reply into chunks."""

import asyncio
import json

import pytest
from anthropic.types import (
    InputJSONDelta,
    Message as AnthropicMessage,
    MessageDeltaUsage,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    SignatureDelta,
    TextBlock as AnthropicTextBlock,
    TextDelta,
    ThinkingBlock as AnthropicThinkingBlock,
    ThinkingDelta,
    ToolUseBlock as AnthropicToolUseBlock,
    Usage,
)
from anthropic.types.raw_message_delta_event import Delta as AnthropicDelta
from hypothesis import HealthCheck, given, settings, strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import (
    Choice,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
)

import agentmsg
from agentmsg import (
    ConversionError,
    MessageTypeError,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    afrom_anthropic_stream,
    afrom_openai_stream,
    from_anthropic,
    from_anthropic_stream,
    from_openai,
    from_openai_stream,
)


def same(message):
    """What two reads of one reply share (ids and timestamps are made per message)."""
    return (message.role, message.content, message.name, message.tool_id, message.metadata,
            message.finish_reason, message.reasoning_content)


# -- OpenAI ---------------------------------------------------------------------------------------


def chunk(delta=None, finish_reason=None, index=0):
    return ChatCompletionChunk(
        id="chatcmpl-1", object="chat.completion.chunk", created=0, model="gpt-4o",
        choices=[Choice(index=index, delta=delta or ChoiceDelta(), finish_reason=finish_reason)],
    )


def call_fragment(index, arguments, call_id=None, name=None):
    return ChoiceDelta(tool_calls=[ChoiceDeltaToolCall(
        index=index, id=call_id, type="function" if call_id else None,
        function=ChoiceDeltaToolCallFunction(name=name, arguments=arguments),
    )])


def completion(message, finish_reason):
    return ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    })


def test_openai_text_reasoning_and_tool_calls_accumulate_by_index():
    chunks = [
        chunk(ChoiceDelta(role="assistant", reasoning_content="Add ")),
        chunk(ChoiceDelta(reasoning_content="them.")),
        chunk(ChoiceDelta(content="Let me ")),
        chunk(ChoiceDelta(content="compute.")),
        chunk(call_fragment(0, "", "call_a", "add")),
        chunk(call_fragment(1, '{"x"', "call_b", "neg")),
        chunk(call_fragment(0, '{"a": 1, ')),
        chunk(call_fragment(0, '"b":2}')),
        chunk(call_fragment(1, ": 3}")),
        chunk(finish_reason="tool_calls"),
    ]
    message = from_openai_stream(chunks)
    assert message.text == "Let me compute."
    assert message.reasoning_content == "Add them."
    assert message.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.input) for c in message.tool_calls] == [
        ("call_a", "add", {"a": 1, "b": 2}), ("call_b", "neg", {"x": 3})]
    # the model's own argument text is kept, so writing it back sends the same tokens
    assert agentmsg.to_openai([message])[0]["tool_calls"][0]["function"]["arguments"] == '{"a": 1, "b":2}'
    whole = completion({"role": "assistant", "content": "Let me compute.", "reasoning_content": "Add them.",
                        "tool_calls": [
                            {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b":2}'}},
                            {"id": "call_b", "type": "function", "function": {"name": "neg", "arguments": '{"x": 3}'}}]},
                       "tool_calls")
    assert same(message) == same(from_openai(whole)[0])


def test_openai_dict_chunks_usage_chunk_and_other_choices():
    chunks = [
        {"choices": [{"index": 1, "delta": {"content": "other choice"}}]},
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
    ]
    assert same(from_openai_stream(chunks)) == same(agentmsg.Message.assistant("Hi").replace(finish_reason="stop"))
    assert from_openai_stream(chunks, choice=1).text == "other choice"


def test_openai_refusal_and_reasoning_only():
    refused = from_openai_stream([chunk(ChoiceDelta(refusal="I can't ")), chunk(ChoiceDelta(refusal="help."))])
    assert refused.text == "I can't help."
    assert refused.metadata == {"openai": {"refusal": "I can't help."}}
    thought = from_openai_stream([{"choices": [{"index": 0, "delta": {"reasoning": "hmm"}}]}])
    assert thought.content == (ThinkingBlock("hmm"),)


def test_openai_dialect_turns_text_calls_into_tool_calls_next_to_native_ones():
    text = 'Checking.<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call>'
    chunks = [chunk(ChoiceDelta(content=text[i:i + 7])) for i in range(0, len(text), 7)]
    chunks.append(chunk(call_fragment(0, '{"city": "Oslo"}', "call_w", "weather")))
    message = from_openai_stream(chunks, dialect="hermes")
    parsed = agentmsg.parse(text, dialect="hermes")
    assert message.content == (*parsed.blocks, message.tool_calls[1])
    assert [c.name for c in message.tool_calls] == ["search", "weather"]
    assert message.text == "Checking."
    assert "parse_issues" not in message.metadata
    # without a dialect the text is kept as written
    assert from_openai_stream(chunks).text == text


def test_openai_dialect_keeps_calls_it_cannot_read():
    text = "Sure. <tool_call>{not json</tool_call>"
    message = from_openai_stream([chunk(ChoiceDelta(content=text))], dialect="hermes")
    assert message.text == "Sure."
    [issue] = message.metadata["parse_issues"]
    assert issue["raw"] == "<tool_call>{not json</tool_call>"
    assert issue["span"] == [6, len(text)]


def test_openai_async_stream():
    async def stream():
        yield chunk(ChoiceDelta(content="Hel"))
        yield chunk(ChoiceDelta(content="lo"), finish_reason="stop")

    assert asyncio.run(afrom_openai_stream(stream())).text == "Hello"
    assert asyncio.run(afrom_openai_stream([chunk(ChoiceDelta(content="x"))])).text == "x"
    with pytest.raises(MessageTypeError, match="await afrom_openai_stream"):
        from_openai_stream(stream())


@pytest.mark.parametrize("chunks, error, text", [
    ([], ConversionError, "chunks: the stream held no chunk of choice 0"),
    ([3], MessageTypeError, r"chunks\[0\] must be a stream object of the SDK or its dict, not int"),
    ([{"choices": [{"index": 0, "delta": {"content": 5}}]}], MessageTypeError,
     r"chunks\[0\].choices\[0\].delta.content must be a str or None, not int"),
    ([{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "0"}]}}]}], MessageTypeError,
     r"chunks\[0\].choices\[0\].delta.tool_calls\[0\].index must be an int, not str"),
    ("text", MessageTypeError, "chunks must be an iterable of stream items, not a single str"),
])
def test_openai_bad_streams_are_typed_errors_naming_the_place(chunks, error, text):
    with pytest.raises(error, match=text):
        from_openai_stream(chunks)


def test_openai_arguments_that_are_not_json_are_kept_raw_as_from_openai_keeps_them():
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "c", "function": {"name": "f", "arguments": "{bad"}}]}}]}]
    with pytest.warns(agentmsg.ConversionWarning, match=r"chunks.tool_calls\[0\].function.arguments is not a JSON"):
        message = from_openai_stream(chunks)
    assert message.tool_calls[0].metadata == {"raw_arguments": "{bad"}


def test_openai_bad_dialect_fails_before_reading():
    def never():
        raise AssertionError("read")
        yield

    with pytest.raises(agentmsg.AgentMsgError):
        from_openai_stream(never(), dialect="klingon")
    with pytest.raises(MessageTypeError, match="give dialect= too"):
        from_openai_stream([], tools=[])


def splits(text, cuts):
    """``text`` cut at the given positions (any of them, in any order, repeated or not)."""
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:])] or [""]


replies = st.fixed_dictionaries({
    "content": st.text(max_size=30),
    "reasoning": st.text(max_size=20),
    "calls": st.lists(st.tuples(st.from_regex(r"[a-z]{1,8}", fullmatch=True),
                                st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3)),
                      max_size=3),
    "cuts": st.lists(st.integers(0, 200), max_size=8),
})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies)
def test_openai_any_split_gives_the_whole_reply(reply):
    content, reasoning, cuts = reply["content"], reply["reasoning"], reply["cuts"]
    calls = [(f"call_{i}", name, json.dumps(args)) for i, (name, args) in enumerate(reply["calls"])]
    if not (content or reasoning or calls):
        content = "x"
    chunks = [chunk(ChoiceDelta(role="assistant"))]
    chunks += [chunk(ChoiceDelta(reasoning_content=part)) for part in splits(reasoning, cuts) if part]
    chunks += [chunk(ChoiceDelta(content=part)) for part in splits(content, cuts[::-1])]
    for index, (call_id, name, arguments) in enumerate(calls):
        parts = splits(arguments, cuts)
        chunks.append(chunk(call_fragment(index, parts[0], call_id, name)))
        chunks += [chunk(call_fragment(index, part)) for part in parts[1:]]
    chunks.append(chunk(finish_reason="stop"))
    message = {"role": "assistant", "content": content or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, n, a in calls]
    assert same(from_openai_stream(chunks)) == same(from_openai(completion(message, "stop"))[0])


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=20), st.text(max_size=20), st.lists(st.integers(0, 200), max_size=10))
def test_openai_dialect_any_split_gives_parse_of_the_whole_text(before, after, cuts):
    text = before + '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>' + after
    chunks = [chunk(ChoiceDelta(content=part)) for part in splits(text, cuts)]
    message = from_openai_stream(chunks, dialect="hermes")
    parsed = agentmsg.parse(text, dialect="hermes")
    assert list(message.content) == parsed.blocks
    assert message.metadata.get("parse_issues", []) == [
        {"kind": i.kind, "message": i.message, "span": list(i.span), "raw": i.raw} for i in parsed.errors]


# -- Anthropic ------------------------------------------------------------------------------------


def start_event(usage_in=5):
    return RawMessageStartEvent(type="message_start", message=AnthropicMessage(
        id="msg_1", type="message", role="assistant", content=[], model="claude-sonnet-4-5",
        stop_reason=None, stop_sequence=None, usage=Usage(input_tokens=usage_in, output_tokens=1)))


def block_events(index, block, deltas):
    events = [RawContentBlockStartEvent(type="content_block_start", index=index, content_block=block)]
    events += [RawContentBlockDeltaEvent(type="content_block_delta", index=index, delta=d) for d in deltas]
    events.append(RawContentBlockStopEvent(type="content_block_stop", index=index))
    return events


def end_events(stop_reason, output_tokens):
    return [RawMessageDeltaEvent(type="message_delta", delta=AnthropicDelta(stop_reason=stop_reason, stop_sequence=None),
                                 usage=MessageDeltaUsage(output_tokens=output_tokens)),
            RawMessageStopEvent(type="message_stop")]


def response(content, stop_reason, output_tokens):
    return AnthropicMessage(id="msg_1", type="message", role="assistant", content=content, model="claude-sonnet-4-5",
                            stop_reason=stop_reason, stop_sequence=None,
                            usage=Usage(input_tokens=5, output_tokens=output_tokens))


def anthropic_stream(thinking, signature, text, calls, cuts):
    events = [start_event()]
    index = 0
    if thinking:
        deltas = [ThinkingDelta(type="thinking_delta", thinking=p) for p in splits(thinking, cuts)]
        deltas.append(SignatureDelta(type="signature_delta", signature=signature))
        events += block_events(index, AnthropicThinkingBlock(type="thinking", thinking="", signature=""), deltas)
        index += 1
    if text:
        events += block_events(index, AnthropicTextBlock(type="text", text=""),
                               [TextDelta(type="text_delta", text=p) for p in splits(text, cuts[::-1])])
        index += 1
    for call_id, name, arguments in calls:
        events += block_events(index, AnthropicToolUseBlock(type="tool_use", id=call_id, name=name, input={}),
                               [InputJSONDelta(type="input_json_delta", partial_json=p) for p in splits(arguments, cuts)])
        index += 1
    return events + end_events("tool_use" if calls else "end_turn", 9)


def test_anthropic_thinking_signature_text_and_tool_use():
    events = anthropic_stream("Plan it.", "sig==", "Let me add.", [("toolu_1", "add", '{"a": 1, "b": 2}')], [3, 7])
    message = from_anthropic_stream(events)
    assert message.content == (ThinkingBlock("Plan it.", "sig=="), TextBlock("Let me add."),
                               ToolUseBlock("toolu_1", "add", {"a": 1, "b": 2}))
    assert message.metadata["anthropic"]["stop_reason"] == "tool_use"
    assert message.metadata["anthropic"]["usage"] == {"input_tokens": 5, "output_tokens": 9}
    whole = response([AnthropicThinkingBlock(type="thinking", thinking="Plan it.", signature="sig=="),
                      AnthropicTextBlock(type="text", text="Let me add."),
                      AnthropicToolUseBlock(type="tool_use", id="toolu_1", name="add", input={"a": 1, "b": 2})],
                     "tool_use", 9)
    assert same(message) == same(from_anthropic(None, [whole])[0])
    # the tool loop goes on with the message as usual
    _, turns = agentmsg.to_anthropic([agentmsg.user("1+2?"), message, agentmsg.tool("3", tool_id="toolu_1")])
    assert turns[1]["content"][0] == {"type": "thinking", "thinking": "Plan it.", "signature": "sig=="}


def test_anthropic_message_stream_helper_events_are_skipped():
    """``client.messages.stream(...)`` adds ``text``/``input_json`` events that repeat the deltas."""
    events = [start_event(),
              RawContentBlockStartEvent(type="content_block_start", index=0,
                                        content_block=AnthropicTextBlock(type="text", text="")),
              RawContentBlockDeltaEvent(type="content_block_delta", index=0,
                                        delta=TextDelta(type="text_delta", text="Hi")),
              {"type": "text", "text": "Hi", "snapshot": "Hi"},
              {"type": "ping"},
              {"type": "content_block_stop", "index": 0, "content_block": {"type": "text", "text": "Hi"}},
              *end_events("end_turn", 2)]
    assert from_anthropic_stream(events).text == "Hi"


def test_anthropic_dialect_and_async():
    text = 'I will look.<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call>'
    events = anthropic_stream("", "", text, [("toolu_9", "weather", "{}")], [5, 11, 30])

    async def stream():
        for event in events:
            yield event

    message = asyncio.run(afrom_anthropic_stream(stream(), dialect="hermes"))
    assert [c.name for c in message.tool_calls] == ["search", "weather"]
    assert message.text == "I will look."
    assert from_anthropic_stream(events).text == text


@pytest.mark.parametrize("events, error, text", [
    ([], ConversionError, "events: the stream held no message"),
    ([{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}], ConversionError,
     r"events\[0\]: content block 0 was never started"),
    ([{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
      {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{"}}],
     ConversionError, r"events\[1\]: a delta of type 'input_json_delta' for a 'text' block"),
    ([{"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}},
      {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"a": '}}],
     ConversionError, r"content block 0 \('f'\): its input_json_delta fragments are not JSON"),
    ([{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}], ConversionError,
     r"events\[0\]: the stream reported an error: 'Overloaded'"),
    ([{"type": "surprise"}], ConversionError, r"events\[0\].type: unknown stream event 'surprise'"),
    ([object()], MessageTypeError, r"events\[0\] must be a stream object of the SDK or its dict, not object"),
])
def test_anthropic_bad_streams_are_typed_errors(events, error, text):
    with pytest.raises(error, match=text):
        from_anthropic_stream(events)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=20), st.text(max_size=20), st.lists(st.tuples(
    st.from_regex(r"[a-z]{1,6}", fullmatch=True),
    st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4), max_size=3)), max_size=2),
    st.lists(st.integers(0, 100), max_size=8))
def test_anthropic_any_split_gives_the_whole_response(thinking, text, calls, cuts):
    if not (thinking or text or calls):
        text = "x"
    calls = [(f"toolu_{i}", name, json.dumps(args)) for i, (name, args) in enumerate(calls)]
    events = anthropic_stream(thinking, "sig", text, calls, cuts)
    content = []
    if thinking:
        content.append(AnthropicThinkingBlock(type="thinking", thinking=thinking, signature="sig"))
    if text:
        content.append(AnthropicTextBlock(type="text", text=text))
    content += [AnthropicToolUseBlock(type="tool_use", id=i, name=n, input=json.loads(a)) for i, n, a in calls]
    whole = response(content, "tool_use" if calls else "end_turn", 9)
    assert same(from_anthropic_stream(events)) == same(from_anthropic(None, [whole])[0])
