"""OpenAI Responses API stream events straight from the core (``StreamParser.feed_responses`` /
``finish_responses``) equal ``responses_events`` of the same events for every chunking, in every
dialect and Forge's; every event validates as the ``openai`` SDK's ``ResponseStreamEvent``, the
SDK's own stream accumulator builds the same items, and ``from_responses_stream`` of the events
gives the parse of the text (issue 25)."""

from __future__ import annotations

import threading
import warnings
from typing import Any, Dict, List, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai import omit
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

import agentmsg
from agentmsg import StreamParser, from_responses_stream, responses_events
from test_dialects import split
from test_server_speed_deltas import FRAGMENTS, TOOLS

EVENT = TypeAdapter(ResponseStreamEvent)
RESPONSE = {"id": "resp_1", "object": "response", "created_at": 0, "model": "m", "output": [],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "status": "in_progress"}


def both_ways(text: str, pieces: Sequence[str], start: int = 0, **options: Any) -> List[Dict[str, Any]]:
    """The events of ``feed_responses`` over ``pieces`` (numbered from ``start``), checked equal to
    ``responses_events`` of ``feed``'s events over the same pieces, and both parsers' results to
    the whole parse."""
    events_parser = StreamParser(**options)
    responses_parser = StreamParser(**options)
    events: List[Any] = []
    out: List[Dict[str, Any]] = []
    for i, piece in enumerate(pieces):
        events += events_parser.feed(piece)
        out += responses_parser.feed_responses(piece, sequence_number=start if i == 0 else None)
    events += events_parser.finish()
    out += responses_parser.finish_responses(sequence_number=None if pieces else start)
    assert out == responses_events(events, sequence_number=start)
    whole = agentmsg.parse(text, start_in_thinking=False, **options)
    assert responses_parser.result() == events_parser.result() == whole
    assert [event["sequence_number"] for event in out] == list(range(start, start + len(out)))
    for event in out:
        EVENT.validate_python(event)
    return out


def done_items(out: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [event["item"] for event in out if event["type"] == "response.output_item.done"]


def whatever_the_chunking(items: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The items, a failed call's without the arguments that went out of it before it failed
    (how much did depends on the chunking)."""
    return [{k: v for k, v in item.items() if not (k == "arguments" and item["status"] == "incomplete")}
            for item in items]


def wrapped(out: Sequence[Dict[str, Any]], start: int, output: Any) -> List[Dict[str, Any]]:
    """The events inside the envelope a server sends: created before, completed after."""
    created = {"type": "response.created", "sequence_number": start - 1, "response": RESPONSE}
    completed = {"type": "response.completed", "sequence_number": start + len(out),
                 "response": {**RESPONSE, "status": "completed", "output": output}}
    return [created, *out, completed]


def check_clients_agree(text: str, out: Sequence[Dict[str, Any]], options: Dict[str, Any]) -> None:
    """The SDK's accumulator builds the items the done events carry; ``from_responses_stream``
    (from the deltas, and from the caller's whole response) holds the parse's text, thinking,
    calls and issues: a failed call is dropped, its issue kept."""
    parsed = agentmsg.parse(text, start_in_thinking=False, **options)
    done = done_items(out)
    state: Any = ResponseStreamState(input_tools=[], text_format=omit)
    for event in wrapped(out, 1, [])[:-1]:
        state.handle_event(EVENT.validate_python(event))
    # the SDK's snapshot of the response so far, as a response.in_progress event returns it
    in_progress = {"type": "response.in_progress", "sequence_number": len(out) + 1, "response": RESPONSE}
    built = state.accumulate_event(EVENT.validate_python(in_progress)).output
    assert [item.type for item in built] == [item["type"] for item in done]
    for item, whole in zip(built, done):
        if item.type == "message":
            assert [part.text for part in item.content] == [part["text"] for part in whole["content"]]
        elif item.type == "function_call":
            assert (item.call_id, item.name, item.arguments) == (whole["call_id"], whole["name"], whole["arguments"])
    if not out:
        return
    good = [item for item in done if item.get("status") != "incomplete" or item["type"] != "function_call"]
    for output in ([], done):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                messages = from_responses_stream(wrapped(out, 1, output))
            except agentmsg.AgentMsgError:
                assert not [item for item in good if item["type"] != "message" or item["content"][0]["text"].strip()]
                return  # a reply of nothing but blank text, or a call the message model refuses
        blocks = [block for message in messages for block in message.content]
        calls = [(b.id, b.name, b.input) for b in blocks if isinstance(b, agentmsg.ToolUseBlock)]
        assert calls == [(c.id, c.name, c.input) for c in parsed.tool_calls]
        thinking = [b.thinking for b in blocks if isinstance(b, agentmsg.ThinkingBlock)]
        assert thinking == [t for t in parsed.thinking]
        texts = [b.text for b in blocks if isinstance(b, agentmsg.TextBlock)]
        assert "\n".join(texts) == parsed.text
        issues = [{"kind": e.kind, "message": e.message, "span": list(e.span), "raw": e.raw} for e in parsed.errors]
        assert messages[-1].metadata.get("parse_issues", []) == issues


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(FRAGMENTS)), st.data())
def test_core_events_equal_responses_events_for_every_chunking(dialect: Any, data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS[dialect]), max_size=40)))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=20))
    start = data.draw(st.integers(1, 5))
    options: Dict[str, Any] = {"dialect": dialect}
    if data.draw(st.booleans()):
        options["tools"] = TOOLS
    out = both_ways(text, split(text, cuts), start, **options)
    by_character = both_ways(text, list(text), start, **options)
    assert whatever_the_chunking(done_items(by_character)) == whatever_the_chunking(done_items(out))
    check_clients_agree(text, out, options)


@pytest.mark.parametrize("dialect", ["forge", "hermes", "qwen3_coder", "gpt_oss"])
def test_the_named_dialects_are_among_the_property_tests(dialect: str) -> None:
    assert dialect in FRAGMENTS


def test_a_reply_as_a_server_streams_it() -> None:
    parser = StreamParser(dialect="hermes")
    out = parser.feed_responses('<think>plan</think>Hi <tool_call>{"name": "f", "argu', sequence_number=2)
    out += parser.feed_responses('ments": {"a": 1}}</tool_call>')
    out += parser.finish_responses()
    call_id = parser.result().tool_calls[0].id
    assert [(e["type"], e["sequence_number"], e["output_index"]) for e in out] == [
        ("response.output_item.added", 2, 0), ("response.content_part.added", 3, 0),
        ("response.reasoning_text.delta", 4, 0), ("response.reasoning_text.done", 5, 0),
        ("response.content_part.done", 6, 0), ("response.output_item.done", 7, 0),
        ("response.output_item.added", 8, 1), ("response.content_part.added", 9, 1),
        ("response.output_text.delta", 10, 1), ("response.output_text.done", 11, 1),
        ("response.content_part.done", 12, 1), ("response.output_item.done", 13, 1),
        ("response.output_item.added", 14, 2), ("response.function_call_arguments.delta", 15, 2),
        ("response.function_call_arguments.done", 16, 2), ("response.output_item.done", 17, 2),
    ]
    assert out[0]["item"] == {"id": "rs_0", "type": "reasoning", "summary": [], "content": [], "status": "in_progress"}
    assert out[11]["item"]["content"] == [{"type": "output_text", "text": "Hi", "annotations": []}]
    assert out[12]["item"] == {"id": "fc_2", "type": "function_call", "call_id": call_id, "name": "f",
                               "arguments": "", "status": "in_progress"}
    assert out[-1]["item"]["arguments"] == '{"a":1}' and out[-1]["item"]["status"] == "completed"
    # the next stream numbers from 0 again, its items too
    assert [(e["sequence_number"], e["item"]["id"]) for e in parser.feed_responses("x")[:1]] == [(0, "msg_0")]


def test_a_failed_call_ends_incomplete_with_its_issue_and_the_client_drops_it() -> None:
    for dialect, text, sent in [("hermes", '<tool_call>{"name": "f", "arguments": {}} x</tool_call> ok', True),
                                ("forge", "ok <tool>{bad</tool>", False)]:
        parser = StreamParser(dialect=dialect)
        out = parser.feed_responses(text) + parser.finish_responses()
        [failed] = [e for e in out if "agentmsg_issue" in e]
        [issue] = parser.result().errors
        assert failed["type"] == "response.output_item.done" and failed["item"]["status"] == "incomplete"
        assert failed["agentmsg_issue"] == {"kind": issue.kind, "message": issue.message, "span": list(issue.span),
                                            "raw": issue.raw}
        assert bool(failed["item"]["name"]) is sent
        assert "response.function_call_arguments.done" not in [e["type"] for e in out]
        for events in (out, [EVENT.validate_python(event) for event in out]):  # dicts, and the SDK's objects
            [message] = from_responses_stream(events)
            assert message.tool_calls == () and message.text == "ok"
            assert message.metadata["parse_issues"] == [failed["agentmsg_issue"]]


def test_parsers_in_threads_give_what_they_give_alone() -> None:
    texts = [f'<think>t{i}</think>a{i} <tool_call>{{"name": "f", "arguments": {{"a": {i}}}}}</tool_call> b'
             for i in range(8)]

    def run(text: str) -> List[Dict[str, Any]]:
        parser = StreamParser(dialect="hermes")
        out = [e for k in range(0, len(text), 3) for e in parser.feed_responses(text[k:k + 3])]
        return out + parser.finish_responses()

    alone = [run(text) for text in texts]
    results: Dict[int, List[Dict[str, Any]]] = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, run(texts[i]))) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[i] for i in range(len(texts))] == alone


def test_feed_responses_checks_its_arguments() -> None:
    parser = StreamParser()
    with pytest.raises(agentmsg.MessageTypeError, match="sequence_number must be an int"):
        parser.feed_responses("x", sequence_number="1")
    with pytest.raises(agentmsg.MessageTypeError, match="sequence_number must be an int"):
        parser.finish_responses(sequence_number=True)
    with pytest.raises(agentmsg.MessageError, match="negative"):
        parser.feed_responses("x", sequence_number=-1)
    with pytest.raises(agentmsg.MessageTypeError, match="unexpected keyword argument"):
        parser.feed_responses("x", start=1)
    with pytest.raises(agentmsg.MessageError, match="at least 0"):
        responses_events([], sequence_number=-1)
    with pytest.raises(agentmsg.MessageTypeError):
        responses_events([object()])
    assert parser.feed_responses(None) == [] and responses_events([]) == []


def test_a_refused_call_changes_no_numbering_and_names_what_it_takes() -> None:
    parser = StreamParser(dialect="hermes")
    with pytest.raises(agentmsg.MessageTypeError, match="chunk must be a str"):
        parser.feed_responses(5, sequence_number=7)  # type: ignore[arg-type]
    with pytest.raises(agentmsg.MessageTypeError, match=r"feed_responses\(\) got an unexpected keyword argument "
                                                        r"'seq'; it takes: chunk, sequence_number"):
        parser.feed_responses("Hi", seq=3)
    with pytest.raises(agentmsg.MessageTypeError, match=r"it takes: sequence_number"):
        parser.finish_responses(seq=3)
    assert parser.feed_responses("Hi")[0]["sequence_number"] == 0
