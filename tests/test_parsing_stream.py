"""StreamParser: events, held-back partial tags, and the streaming invariant (hypothesis)."""

from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg

from agentmsg import (
    StreamParser,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolUseBlock,
    parse,
)

CALL = '<tool>{"tool_name": "calc", "arguments": {"s": "a </tool> b"}}</tool>'


def run(text, chunks, **options):
    parser = StreamParser(**options)
    events = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.finish())
    return events


def fold(events):
    """What the events say: text, thinking, calls, errors, incomplete, payload per call."""
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    thinking = defaultdict(str)
    order = []
    incomplete = False
    payloads = defaultdict(str)
    calls, errors, starts, ends = [], [], [], []
    for e in events:
        if isinstance(e, ThinkingDelta):
            if e.index not in thinking:
                order.append(e.index)
            thinking[e.index] += e.text
        elif isinstance(e, ThinkingEnd):
            if e.index not in thinking:
                order.append(e.index)
                thinking[e.index] = ""
            incomplete = incomplete or not e.complete
        elif isinstance(e, ToolCallStart):
            starts.append(e.index)
        elif isinstance(e, ToolCallDelta):
            payloads[e.index] += e.fragment
        elif isinstance(e, ToolCallEnd):
            ends.append(e.index)
            if e.call is not None:
                calls.append(e.call)
            else:
                errors.append(e.error)
    assert starts == ends == list(range(len(starts)))
    return text, [thinking[i] for i in order], calls, errors, incomplete, payloads


def test_events_of_a_streamed_call():
    events = run("", ["Hi <to", 'ol>{"tool_name": "t"', ', "arguments": {}}</to', "ol> bye"])
    call = events[4].call
    assert isinstance(call, ToolUseBlock) and call.name == "t"
    assert events == [
        TextDelta("Hi"),
        ToolCallStart(0),
        ToolCallDelta(0, '{"tool_name": "t"'),
        ToolCallDelta(0, ', "arguments": {}}'),
        ToolCallEnd(0, call, None),
        TextDelta("\nbye"),
    ]


def test_partial_tag_is_held_back_and_flushed_as_text_at_finish():
    parser = StreamParser()
    assert parser.feed("a <thin") == [TextDelta("a")]
    assert parser.feed("k") == []
    assert parser.finish() == [TextDelta(" <think")]


def test_bracket_line_waits_for_its_end():
    parser = StreamParser()
    assert parser.feed("[Let me") == []
    assert parser.feed(" check]") == []
    assert parser.feed("\nIt") == [ThinkingDelta(0, "Let me check"), ThinkingEnd(0, True), TextDelta("It")]
    assert parser.feed("[x](y)") == [TextDelta("[x](y)")]


def test_finish_reports_unclosed_call_and_thinking():
    events = run("", ["<tool>{", '"a": 1'])
    end = events[-1]
    assert (end.index, end.call, end.error.kind, end.error.raw, end.error.span) == (
        0, None, "unclosed_tool", '<tool>{"a": 1', (0, 13))
    assert run("", ["<think>abc"]) == [ThinkingDelta(0, "abc"), ThinkingEnd(0, False)]


def test_trailing_whitespace_is_held_until_more_text():
    parser = StreamParser()
    assert parser.feed("a  ") == [TextDelta("a")]
    assert parser.feed(" b") == [TextDelta("   b")]
    assert parser.feed("\n\n") == []
    assert parser.finish() == []


def test_start_in_thinking_is_explicit_in_streams():
    assert fold(run("", ["plan</think>answer"]))[0] == "plan</think>answer"
    assert fold(run("", ["plan</think>answer"], start_in_thinking=True))[:2] == ("answer", ["plan"])


def test_finish_resets_for_a_new_stream():
    parser = StreamParser()
    parser.feed("<tool>{")
    parser.finish()
    assert parser.feed("x") == [TextDelta("x")]


def test_span_offsets_are_characters_across_chunks():
    text = "日本語 " + "<tool>{ü}</tool>"
    events = run(text, [text[:2], text[2:9], text[9:]])
    issue = events[-1].error
    assert text[issue.span[0] : issue.span[1]] == issue.raw == "<tool>{ü}</tool>"


# -- the invariant -----------------------------------------------------------------------------

PIECES = [
    "<tool>", "</tool>", "<think>", "</think>", "<thinking>", "</thinking>", "<![CDATA[", "]]>",
    "```", "~~~", "\n", "\r\n", "[", "]", '"', "\\", " ", "<", "<t", "</", "[x]", "[1]", "(y)",
    '{"tool_name": "t", "arguments": {"k": "v"}}', "<tool_name>t</tool_name><arguments/>",
    "\ufeff", "\x00", "é", "日本", "\ud800", "🎉",
]
texts = st.lists(
    st.sampled_from(PIECES) | st.text(st.characters(codec=None), max_size=5), max_size=30
).map("".join)
option_sets = st.fixed_dictionaries(
    {
        "thinking": st.sampled_from(["auto", "tags", "brackets", "none"]),
        "tool_format": st.sampled_from(["auto", "json", "xml"]),
        "code_fences": st.booleans(),
        "start_in_thinking": st.booleans(),
    }
)


def chunked(text, cuts):
    points = sorted({min(c, len(text)) for c in cuts})
    edges = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(edges, edges[1:])]


def check_invariant(text, chunks, options):
    whole = parse(text, **options)
    streamed_text, thinking, calls, errors, incomplete, payloads = fold(run(text, chunks, **options))
    assert streamed_text == whole.text
    assert thinking == whole.thinking
    assert calls == whole.tool_calls
    assert errors == whole.errors
    assert incomplete == whole.incomplete_thinking
    for error in whole.errors:
        assert text[error.span[0] : error.span[1]] == error.raw


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.integers(0, 200), max_size=8), option_sets)
def test_streaming_invariant_random_chunks(text, cuts, options):
    check_invariant(text, chunked(text, cuts), options)


@settings(max_examples=150, deadline=None)
@given(texts, option_sets)
def test_streaming_invariant_one_char_chunks(text, options):
    check_invariant(text, list(text), options)


@settings(max_examples=100, deadline=None)
@given(texts, st.sampled_from([2, 3, 4, 7, 16]))
def test_streaming_invariant_fixed_size_chunks(text, size):
    options = {"start_in_thinking": False}
    check_invariant(text, [text[i : i + size] for i in range(0, len(text), size)], options)


@settings(max_examples=150, deadline=None)
@given(texts, st.lists(st.integers(0, 200), max_size=5))
def test_call_payload_deltas_cover_the_raw_payload(text, cuts):
    """Deltas carry what was read as payload; a call cut short by recovery (an unterminated
    string) has a raw text that is a prefix of it."""
    text = '<tool>{"tool_name": "no_arguments"}</tool>\n' + text  # at least one bad call to check
    events = run(text, chunked(text, cuts))
    _, _, _, errors, _, payloads = fold(events)
    assert errors
    for error in errors:
        payload = payloads[next(e.index for e in events if isinstance(e, ToolCallEnd) and e.error is error)]
        assert ("<tool>" + payload + "</tool>").startswith(error.raw)


def test_unterminated_string_recovery_arrives_at_finish():
    parser = StreamParser()
    first = parser.feed('<tool>{"tool_name": "t", "arguments": {"s": "oops}</tool> after')
    assert first == [ToolCallStart(0), ToolCallDelta(0, '{"tool_name": "t", "arguments": {"s": "oops}</tool> after')]
    last = parser.finish()
    assert [type(e).__name__ for e in last] == ["ToolCallEnd", "TextDelta"]
    assert last[0].error.raw == '<tool>{"tool_name": "t", "arguments": {"s": "oops}</tool>'
    assert last[1] == TextDelta("after")


@pytest.mark.parametrize(
    "build, error, message",
    [
        (lambda: agentmsg.TextDelta(None), agentmsg.MessageTypeError, "TextDelta.text must be a str, not a NoneType"),
        (lambda: agentmsg.ThinkingDelta(-1, "x"), agentmsg.MessageError,
         "ThinkingDelta.index must be a non-negative int below 2**64, not out of range"),
        (lambda: agentmsg.ThinkingEnd(0, 1), agentmsg.MessageTypeError, "ThinkingEnd.complete must be a bool, not a int"),
        (lambda: agentmsg.ToolCallStart(True), agentmsg.MessageTypeError,
         "ToolCallStart.index must be a non-negative int below 2**64, not a bool"),
        (lambda: agentmsg.ToolCallDelta(2**64, "x"), agentmsg.MessageError,
         "ToolCallDelta.index must be a non-negative int below 2**64, not out of range"),
        (lambda: agentmsg.ToolCallStart(0, "c1", b"f"), agentmsg.MessageTypeError,
         "ToolCallStart.name must be a str, not a bytes"),
        (lambda: agentmsg.ToolCallStart(0, id=1), agentmsg.MessageTypeError,
         "ToolCallStart.id must be a str, not a int"),
    ],
)
def test_event_constructors_raise_typed_errors_naming_the_field(build, error, message):
    with pytest.raises(error) as caught:
        build()
    assert str(caught.value) == message
    assert isinstance(caught.value, (ValueError, TypeError))


@settings(max_examples=200, deadline=None)
@given(texts, st.lists(st.integers(0, 200), max_size=8), option_sets)
def test_result_of_a_stream_is_the_parse_of_its_text(text, cuts, options):
    """`StreamParser.result()` after `finish()` is `parse` of everything fed, with the same
    options; `None` chunks (empty SDK deltas) change nothing."""
    parser = StreamParser(**options)
    for chunk in chunked(text, cuts):
        parser.feed(chunk)
        parser.feed(None)
    parser.finish()
    assert parser.result() == parse(text, **options)


def test_result_is_the_stream_so_far_and_a_finished_parser_starts_anew():
    parser = StreamParser()
    parser.feed("Hello <think>plan")
    assert (parser.result().text, parser.result().thinking) == ("Hello", ["plan"])
    parser.finish()
    assert parser.result().incomplete_thinking
    parser.feed("second")
    parser.finish()
    assert parser.result() == parse("second", start_in_thinking=False)
