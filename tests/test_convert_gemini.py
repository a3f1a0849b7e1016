"""Gemini contents both ways, checked against the ``google-genai`` SDK's own types."""

import asyncio
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import (
    Base64Source,
    ConversionError,
    ConversionWarning,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    URLSource,
    from_gemini,
    to_gemini,
)
from convert_strategies import histories, nonempty_text, tool_names
from strategies import json_objects

types = pytest.importorskip("google.genai.types")


def check_gemini(system, contents):
    """The output validates as the SDK's ``Content`` (system instruction included)."""
    if system is not None:
        types.Content.model_validate(system)
    for content in contents:
        types.Content.model_validate(content)


def recorded(function, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, ConversionWarning)]


# What a Gemini 3 conversation looks like on the wire: a signed thought, a signed function call
# without an id, its response by name, inline and file media.
SYSTEM = {"parts": [{"text": "Be brief."}]}
CONTENTS = [
    {"role": "user", "parts": [{"text": "What is in this picture, and what is 15 + 27?"},
                               {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                               {"fileData": {"mimeType": "video/mp4", "fileUri": "https://e.com/clip.mp4"}}]},
    {"role": "model", "parts": [{"text": "Add them.", "thought": True, "thoughtSignature": "c2lnMQ=="},
                                {"functionCall": {"name": "add", "args": {"a": 15, "b": 27}},
                                 "thoughtSignature": "c2lnMg=="}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "add", "response": {"output": "42"}}}]},
    {"role": "model", "parts": [{"text": "A cat, and 42."}]},
    {"role": "user", "parts": [{"functionResponse": {"id": "c9", "name": "lookup", "response": {"temp": 20}}}]},
]


def test_the_example_is_valid_and_reads_into_messages():
    check_gemini(SYSTEM, CONTENTS[:4])
    messages = from_gemini(CONTENTS[:4], SYSTEM)
    assert [m.role.value for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[1].content[1:] == (ImageBlock(Base64Source("image/png", "iVBORw0KGgo=")),
                                       agentmsg.VideoBlock(URLSource("https://e.com/clip.mp4")))
    assert messages[2].content == (ThinkingBlock("Add them.", "c2lnMQ=="), ToolUseBlock("", "add", {"a": 15, "b": 27}))
    assert messages[2].metadata["gemini"] == {"signatures": [{"block": 1, "signature": "c2lnMg=="}]}
    assert (messages[3].name, messages[3].tool_id, messages[3].text) == ("add", None, "42")
    assert to_gemini(messages) == (SYSTEM, CONTENTS[:4])


def test_sdk_objects_and_a_whole_response_read_as_their_dicts():
    objects = [types.Content.model_validate(content) for content in CONTENTS[:4]]
    assert [m.content for m in from_gemini(objects)] == [m.content for m in from_gemini(CONTENTS[:4])]
    response = types.GenerateContentResponse.model_validate({
        "candidates": [{"content": CONTENTS[3], "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 4, "totalTokenCount": 14}})
    [reply] = from_gemini(response)
    assert (reply.text, reply.finish_reason) == ("A cat, and 42.", "STOP")
    assert reply.metadata["gemini"]["usageMetadata"] == {
        "promptTokenCount": 10, "candidatesTokenCount": 4, "totalTokenCount": 14}


def test_a_structured_function_response_is_kept_and_written_back():
    call = {"role": "model", "parts": [{"functionCall": {"id": "c9", "name": "lookup", "args": {}}}]}
    messages = from_gemini([call, CONTENTS[4]])
    assert messages[1].text == '{"temp": 20}'
    assert to_gemini(messages)[1] == [call, CONTENTS[4]]
    edited = messages[1].replace(content="cold")
    assert to_gemini([messages[0], edited])[1][1]["parts"][0]["functionResponse"]["response"] == {"output": "cold"}


def test_errors_and_losses():
    call = ToolUseBlock("c1", "f", {}, server_name="mcp")
    _, said = recorded(to_gemini, [Message.user("q", name="ann"), Message.assistant(tool_calls=[call]),
                                   Message.tool("boom", tool_id="c1", is_error=True),
                                   Message.user([ImageBlock(URLSource("https://e.com/noext"))])])
    assert said == [
        "to_gemini cannot carry name on messages (message 0); they were left out",
        "to_gemini cannot carry a tool call's server_name or metadata (message 1); they were left out",
        "to_gemini cannot carry image given by a URL with no recognizable media type (message 3); they were left out",
        "to_gemini cannot carry messages with nothing else it can carry (message 3); they were left out",
    ]
    out = to_gemini([Message.assistant(tool_calls=[ToolUseBlock("c1", "f", {})]),
                     Message.tool("boom", tool_id="c1", is_error=True)])[1]
    assert out[1]["parts"][0]["functionResponse"]["response"] == {"error": "boom"}
    assert from_gemini(out)[1].is_error
    with pytest.raises(ConversionError, match=r"contents\[0\]\.role: unknown role 'bot'"):
        from_gemini([{"role": "bot", "parts": []}])
    with pytest.raises(ConversionError, match=r"contents\[0\]\.parts\[0\]: unknown part"):
        from_gemini([{"role": "user", "parts": [{"executableCode": {}}]}])
    with pytest.raises(ConversionError, match="Gemini needs the name of the function"):
        to_gemini([Message.tool("x", tool_id="zz")])


def test_reasoning_stays_reasoning():
    messages = from_gemini(CONTENTS[:2])
    out, said = recorded(agentmsg.to_anthropic, messages)
    assert out[1][1]["content"][0] == {"type": "thinking", "thinking": "Add them.", "signature": "c2lnMQ=="}
    # to Gemini, Anthropic's signed thinking goes as a thought part with its signature
    assert to_gemini([Message.user("q"), Message.assistant("a", thinking="t")])[1][1]["parts"][0] == {
        "text": "t", "thought": True}


def carried(message):
    role = message.role.value
    if role == "tool":
        return (role, message.tool_id, message.content[0].text, message.is_error)
    blocks = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                blocks.append(block)
        elif isinstance(block, ToolUseBlock):
            blocks.append((block.id, block.name, block.input))
        elif isinstance(block, ThinkingBlock):
            blocks.append(block)
        elif isinstance(block.source, Base64Source):
            blocks.append(block)
    return (role, tuple(blocks)) if blocks else None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories)
def test_round_trip_keeps_what_gemini_carries(messages):
    try:
        system, contents = recorded(to_gemini, messages)[0]
    except agentmsg.ConversionError:
        return  # a tool message with no name and no call to name it after
    check_gemini(system, contents)
    back = from_gemini(contents, system, on_orphan="keep")
    expected = []
    systems = [m for m in messages if m.role.value == "system"]
    views = [carried(m) for m in messages if m.role.value != "system"]
    if any(b.text for m in systems for b in m.content):
        expected.append(("system",))
    for view in views:  # turns of one role are merged; a merged turn reads back as one message
        if view is None:
            continue
        if expected and view[0] != "tool" and expected[-1][0] == view[0]:
            expected[-1] = (view[0], expected[-1][1] + view[1])
        else:
            expected.append(view)
    got = [("system",) if m.role.value == "system" else carried(m) for m in back]
    assert [g[0] for g in got] == [e[0] for e in expected]


ids = tool_names


@st.composite
def tool_turns(draw):
    history = []
    for _ in range(draw(st.integers(1, 3))):
        history.append(Message.user(draw(nonempty_text)))
        calls = draw(st.lists(st.builds(ToolUseBlock, st.just("") | ids, tool_names, json_objects), min_size=1,
                              max_size=3, unique_by=lambda c: (c.id or None, c.name)))
        history.append(Message.assistant(tool_calls=calls))
        for call in calls:
            history.append(Message.tool(draw(nonempty_text), tool_id=call.id or None, name=call.name,
                                        is_error=draw(st.booleans())))
    return history


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_turns())
def test_tool_turns_round_trip_exactly(messages):
    out, said = recorded(to_gemini, messages)
    assert said == []
    check_gemini(*out)
    back = from_gemini(out[1], out[0])
    assert [(m.role, m.content, m.tool_id, m.name) for m in back] == [
        (m.role, m.content, m.tool_id, m.name) for m in messages]
    assert to_gemini(back) == out


# -- streams ---------------------------------------------------------------------------------------

def chunks():
    return [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Add ", "thought": True}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "them.", "thought": True,
                                                                  "thoughtSignature": "c2lnMQ=="}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "It is "}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "42."}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "add", "args": {"a": 1}}, "thoughtSignature": "c2lnMg=="}]},
            "finishReason": "STOP"}],
         "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 9}},
    ]


def test_a_stream_gives_what_the_whole_response_gives():
    whole = from_gemini({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Add them.", "thought": True, "thoughtSignature": "c2lnMQ=="}, {"text": "It is 42."},
        {"functionCall": {"name": "add", "args": {"a": 1}}, "thoughtSignature": "c2lnMg=="}]},
        "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 9}})
    objects = [types.GenerateContentResponse.model_validate(chunk) for chunk in chunks()]
    for given_chunks in (chunks(), objects):
        [streamed] = agentmsg.from_gemini_stream(given_chunks)
        assert (streamed.content, streamed.finish_reason, streamed.metadata) == (
            whole[0].content, whole[0].finish_reason, whole[0].metadata)

    async def stream():
        for chunk in chunks():
            yield chunk

    assert asyncio.run(agentmsg.afrom_gemini_stream(stream()))[0].content == whole[0].content
    with pytest.raises(ConversionError, match="the stream held no chunk"):
        agentmsg.from_gemini_stream([])


def test_function_call_ids_can_be_left_out_for_endpoints_that_refuse_them():
    calls = [ToolUseBlock("c1", "calc", {"a": 1}), ToolUseBlock("c2", "search", {"q": "x"})]
    chat = [Message.user("q"), Message.assistant(tool_calls=calls),
            Message.tool("2", tool_id="c1", name="calc"), Message.tool("found", tool_id="c2", name="search")]
    system, contents = to_gemini(chat, function_call_ids=False)
    check_gemini(system, contents)
    assert contents[1:] == [
        {"role": "model", "parts": [{"functionCall": {"name": "calc", "args": {"a": 1}}},
                                    {"functionCall": {"name": "search", "args": {"q": "x"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "calc", "response": {"output": "2"}}},
                                   {"functionResponse": {"name": "search", "response": {"output": "found"}}}]}]
    back = from_gemini(contents)  # read back, the calls pair with their responses by name
    assert [(m.role.value, m.text) for m in back[2:]] == [("tool", "2"), ("tool", "found")]
    assert [(c.id, c.name) for c in back[1].tool_calls] == [("", "calc"), ("", "search")]
    assert [(m.tool_id, m.name) for m in back[2:]] == [(None, "calc"), (None, "search")]
    assert to_gemini(chat)[1][1]["parts"][0]["functionCall"]["id"] == "c1"  # the default writes them
    with pytest.raises(agentmsg.MessageTypeError, match="function_call_ids must be a bool, not str"):
        to_gemini(chat, function_call_ids="no")
