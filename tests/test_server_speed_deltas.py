"""OpenAI deltas straight from the core (``StreamParser.feed_openai`` / ``finish_openai``) equal
``openai_deltas`` of the same events for every chunking, in every dialect and Forge's; Forge's
calls go out whole, failed calls as ``agentmsg_issues`` deltas, and ``from_openai_stream`` of the
deltas agrees with the parse of the text (issue 25; issue 22's two ``openai_deltas`` defects)."""

from __future__ import annotations

import json
import warnings
from typing import Any, Dict, List, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

import agentmsg
from agentmsg import StreamParser, Tools, from_openai_stream, openai_deltas
from test_dialects import FRAGMENTS as FRAGMENTS_A, split
from test_dialects_json_and_pythonic import FRAGMENTS as FRAGMENTS_B
from test_dialects_token_markers import FRAGMENTS as FRAGMENTS_C

FORGE_FRAGMENTS = ["<tool>", "</tool>", '{"tool_name": "f", "arguments": ', '{"tool_name": "g", "arguments": {"x": 1.5}}',
                   "{", "}", '"', '"a": ', "1e16", "0.00001", "[1, 2]", ",", "<think>", "</think>", "[plan]", "\n",
                   "```", "x", " ", "é", "<", "<a>1</a>", "<tool_name>h</tool_name>"]
FRAGMENTS: Dict[str, List[str]] = {"forge": FORGE_FRAGMENTS, **FRAGMENTS_A, **FRAGMENTS_B, **FRAGMENTS_C}
TOOLS = Tools([{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}])


def both_ways(text: str, pieces: Sequence[str], **options: Any) -> List[Dict[str, Any]]:
    """The deltas of ``feed_openai`` over ``pieces``, checked equal to ``openai_deltas`` of
    ``feed``'s events over the same pieces, and both parsers' results to the whole parse."""
    events_parser = StreamParser(**options)
    deltas_parser = StreamParser(**options)
    events: List[Any] = []
    deltas: List[Dict[str, Any]] = []
    for piece in pieces:
        events += events_parser.feed(piece)
        deltas += deltas_parser.feed_openai(piece)
    events += events_parser.finish()
    deltas += deltas_parser.finish_openai()
    assert deltas == openai_deltas(events)
    whole = agentmsg.parse(text, start_in_thinking=False, **options)
    assert deltas_parser.result() == events_parser.result() == whole
    return deltas


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(list(FRAGMENTS)), st.data())
def test_core_deltas_equal_openai_deltas_for_every_chunking(dialect: Any, data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS[dialect]), max_size=40)))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=20))
    options: Dict[str, Any] = {"dialect": dialect}
    if data.draw(st.booleans()):
        options["tools"] = TOOLS
    deltas = both_ways(text, split(text, cuts), **options)
    both_ways(text, list(text), **options)  # one character at a time too
    check_client_agrees(text, deltas, options)


def chunks_of(deltas: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{"choices": [{"index": 0, "delta": delta}]} for delta in deltas]


def check_client_agrees(text: str, deltas: Sequence[Dict[str, Any]], options: Dict[str, Any]) -> None:
    """What a client builds from the deltas (``from_openai_stream``) holds the parse's calls and
    issues: a failed call is dropped, its issue kept."""
    parsed = agentmsg.parse(text, start_in_thinking=False, **options)
    if not deltas:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            message = from_openai_stream(chunks_of(deltas))
        except agentmsg.AgentMsgError:
            return  # a reply of nothing but blank text, or a call the message model refuses
    calls = [(b.id, b.name, b.input) for b in message.content if isinstance(b, agentmsg.ToolUseBlock)]
    assert calls == [(c.id, c.name, c.input) for c in parsed.tool_calls]
    issues = [{"kind": e.kind, "message": e.message, "span": list(e.span), "raw": e.raw} for e in parsed.errors]
    assert message.metadata.get("parse_issues", []) == issues
    sdk_calls, sdk_issues = sdk_accumulated(deltas)
    assert [(i, n, json.loads(a)) for i, n, a in sdk_calls] == [(c.id, c.name, c.input) for c in parsed.tool_calls]
    assert sdk_issues == issues


def sdk_accumulated(deltas: Sequence[Dict[str, Any]]) -> Any:
    """The final message the ``openai`` SDK's stream accumulator (what
    ``client.chat.completions.stream`` uses) builds from the deltas: its calls ``(id, name,
    arguments)`` without those an issue names, and its issues without their indices."""
    state = ChatCompletionStreamState()
    for delta in [*deltas, {}]:
        state.handle_chunk(ChatCompletionChunk.model_validate({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None if delta else "stop"}]}))
    message = state.get_final_completion().choices[0].message
    issues = (message.model_extra or {}).get("agentmsg_issues", [])
    assert [issue["index"] for issue in issues] == list(range(len(issues)))
    failed = {issue["tool_call_index"] for issue in issues}
    calls = [(call.id, call.function.name, call.function.arguments)
             for call in message.tool_calls or [] if call.index not in failed]
    assert [call.index for call in message.tool_calls or []] == list(range(len(message.tool_calls or [])))
    return calls, [{key: issue[key] for key in ("kind", "message", "span", "raw")} for issue in issues]


def test_forge_calls_go_out_whole_as_the_dialects_calls_read() -> None:
    text = 'Hi <tool>{"tool_name": "calc", "arguments": {"a": 1e16, "b": 0.00001, "c": "é\\n"}}</tool> ok'
    deltas = both_ways(text, [text[:12], text[12:40], text[40:]])
    call = agentmsg.parse(text).tool_calls[0]
    assert deltas == [
        {"content": "Hi"},
        {"tool_calls": [{"index": 0, "id": call.id, "type": "function",
                         "function": {"name": "calc", "arguments": '{"a":1e+16,"b":1e-05,"c":"é\\n"}'}}]},
        {"content": "\nok"},
    ]
    message = from_openai_stream(chunks_of(deltas))
    assert message.tool_calls[0].id == call.id and message.tool_calls[0].input == {"a": 1e16, "b": 1e-05, "c": "é\n"}
    assert json.loads(deltas[1]["tool_calls"][0]["function"]["arguments"]) == call.input


def test_a_call_that_fails_after_its_name_is_named_and_dropped_by_the_client() -> None:
    text = 'Hi <tool_call>{"name": "calc", "arguments": {"a": 1, "b": [1, 2]} zzz</tool_call> ok'
    deltas = both_ways(text, [text[:50], text[50:]], dialect="hermes")
    issue = agentmsg.parse(text, dialect="hermes").errors[0]
    assert deltas[1]["tool_calls"][0]["function"]["name"] == "calc"  # sent before the failure was known
    assert deltas[-2] == {"agentmsg_issues": [{"index": 0, "tool_call_index": 0, "kind": issue.kind,
                                               "message": issue.message, "span": list(issue.span), "raw": issue.raw}]}
    message = from_openai_stream(chunks_of(deltas))
    assert message.tool_calls == () and message.text == "Hi\nok"
    assert message.metadata["parse_issues"] == [{"kind": issue.kind, "message": issue.message,
                                                  "span": list(issue.span), "raw": issue.raw}]


def test_a_bad_forge_call_sends_only_its_issue() -> None:
    deltas = both_ways("<tool>{bad</tool>", ["<tool>{b", "ad</tool>"])
    assert [list(delta) for delta in deltas] == [["agentmsg_issues"]]
    assert deltas[0]["agentmsg_issues"][0]["raw"] == "<tool>{bad</tool>"
    assert deltas[0]["agentmsg_issues"][0]["tool_call_index"] is None


def test_openai_deltas_needs_the_start_of_a_forge_call() -> None:
    parser = StreamParser()
    first = parser.feed('<tool>{"tool_name": "f", "arguments": {}}')
    rest = parser.feed("</tool>") + parser.finish()
    assert openai_deltas(first + rest)[0]["tool_calls"][0]["function"] == {"name": "f", "arguments": "{}"}


def test_feed_and_feed_openai_share_one_stream() -> None:
    parser = StreamParser()
    assert parser.feed("Hi <tool>") == [agentmsg.TextDelta("Hi"), agentmsg.ToolCallStart(0)]
    deltas = parser.feed_openai('{"tool_name": "f", "arguments": {}}</tool> ok') + parser.finish_openai()
    assert [list(d) for d in deltas] == [["tool_calls"], ["content"]]
    assert deltas[1] == {"content": "\nok"}
    assert parser.feed_openai("again") == [{"content": "again"}]  # a new stream after finish
    assert parser.feed_openai(None) == []


def test_reading_methods_refuse_unknown_keywords() -> None:
    parser = StreamParser()
    with pytest.raises(agentmsg.MessageTypeError, match="feed_openai"):
        parser.feed_openai("x", bad=1)  # type: ignore[call-arg]
    with pytest.raises(agentmsg.MessageTypeError, match="finish_openai"):
        parser.finish_openai(bad=1)  # type: ignore[call-arg]
    with pytest.raises(agentmsg.MessageTypeError, match="chunk must be a str"):
        parser.feed_openai(5)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**70), 2**70), st.text(max_size=8))
def test_forge_arguments_are_written_as_json_dumps_writes_them(number: Any, key: str) -> None:
    arguments = json.dumps({key: number, "list": [number, {"n": number}]}, ensure_ascii=False)
    text = f'<tool>{{"tool_name": "f", "arguments": {arguments}}}</tool>'
    deltas = both_ways(text, [text])
    written = deltas[0]["tool_calls"][0]["function"]["arguments"]
    assert written == json.dumps(agentmsg.parse(text).tool_calls[0].input, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize(("dialect", "text"), [
    ("forge", '<tool>garbage</tool> <tool>{"tool_name": "h", "arguments": {"x": "y"}}</tool>'),
    ("hermes", '<tool_call>{"nome": 1}</tool_call><tool_call>{"name": "h", "arguments": {"x": "y"}}</tool_call>'),
    ("hermes", '<tool_call>{"name": "f", "arguments": {"a": 1}} zz</tool_call><tool_call>{"name": "h", "arguments": {"x": "y"}}</tool_call>'),
])
@pytest.mark.parametrize("step", [1, 4, 1000])
def test_the_openai_sdk_accumulates_a_good_call_after_a_failed_one(dialect: str, text: str, step: int) -> None:
    deltas = both_ways(text, [text[i:i + step] for i in range(0, len(text), step)], dialect=dialect)
    [issue] = agentmsg.parse(text, dialect=dialect).errors
    calls, issues = sdk_accumulated(deltas)
    call_id = agentmsg.parse(text, dialect=dialect).tool_calls[0].id
    assert calls == [(call_id, "h", '{"x":"y"}')]
    assert issues == [{"kind": issue.kind, "message": issue.message, "span": list(issue.span), "raw": issue.raw}]
    sent = [entry["index"] for delta in deltas for entry in delta.get("tool_calls", [])]
    assert sorted(set(sent)) == list(range(len(set(sent))))  # no gap: the good call follows the sent ones


@pytest.mark.parametrize(("dialect", "text", "tool_call_indices"), [
    ("forge", '<tool>bad</tool>Hi<tool>{"tool_name": "h", "arguments": {}}</tool><tool>{x</tool>', [None, None]),
    ("hermes", '<tool_call>{"nome": 1}</tool_call><tool_call>{"name": "f", "arguments": {}} zz</tool_call>'
               + '<tool_call>{"name": "h", "arguments": {}}</tool_call>', [None, 0]),
])
def test_the_openai_sdk_keeps_two_issues_apart(dialect: str, text: str, tool_call_indices: List[Any]) -> None:
    deltas = both_ways(text, [text[i:i + 3] for i in range(0, len(text), 3)], dialect=dialect)
    parsed = agentmsg.parse(text, dialect=dialect)
    sent = [entry[0] for delta in deltas if "agentmsg_issues" in delta for entry in [delta["agentmsg_issues"]]]
    assert [(issue["index"], issue["tool_call_index"]) for issue in sent] == list(enumerate(tool_call_indices))
    calls, issues = sdk_accumulated(deltas)
    assert calls == [(parsed.tool_calls[0].id, "h", "{}")]
    assert issues == [{"kind": e.kind, "message": e.message, "span": list(e.span), "raw": e.raw} for e in parsed.errors]
    assert len(issues) == 2 and issues[0] != issues[1]
    message = from_openai_stream(chunks_of(deltas))
    assert [(c.id, c.name, c.input) for c in message.tool_calls] == [(parsed.tool_calls[0].id, "h", {})]
    assert message.metadata["parse_issues"] == issues
