"""Conformance of the model dialects (hermes, qwen3_coder, gpt_oss), whole and streamed.

Every case is parsed whole and then streamed with every 1-, 2- and 3-character chunking (each
starting offset) and with random chunkings (hypothesis); each stream must give exactly the whole
result, its text and thinking deltas must join to the result's text and thinking, and each call's
argument fragments must join to compact JSON text that reads back to the call's input.
"""

from __future__ import annotations

import json
import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import dialects
from agentmsg.dialects import StreamParser, openai_deltas
from agentmsg.parsing import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

ID = re.compile(r"call_[0-9a-f]{16}")


def case(name, text, *, out="", thinking=(), calls=(), errors=(), incomplete=False, meta=None, **options):
    """A conformance case: ``calls`` are (name, input) pairs, ``errors`` issue kinds."""
    expected = dict(text=out, thinking=list(thinking), calls=list(calls), errors=list(errors),
                    incomplete=incomplete, meta=meta)
    return pytest.param(text, expected, options, id=name)


def chunkings(text):
    """Every split into pieces of 1, 2 and 3 characters, from each starting offset."""
    yield [text]
    for size in (1, 2, 3):
        for first in range(size):
            cuts = [0, *range(first or size, len(text), size), len(text)]
            yield [text[a:b] for a, b in zip(cuts, cuts[1:])]


def stream(text, dialect, options, pieces=None):
    parser = StreamParser(dialect=dialect, **options)
    events = []
    for piece in pieces if pieces is not None else [text]:
        events += parser.feed(piece)
    events += parser.finish()
    return events, parser.result()


def check_events(events, parsed):
    """The stream's deltas agree with its result."""
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == parsed.text
    thinking = {}
    for e in events:
        if isinstance(e, ThinkingDelta):
            thinking[e.index] = thinking.get(e.index, "") + e.text
    assert [t for t in thinking.values() if t] == [t for t in parsed.thinking if t]
    headers = {e.index: e for e in events if isinstance(e, ToolCallStart)}
    fragments = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            assert e.index in headers, "arguments before the call's header"
            fragments[e.index] = fragments.get(e.index, "") + e.fragment
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [e.call for e in ends if e.call is not None] == parsed.tool_calls
    assert [e.error for e in ends if e.error is not None] == parsed.errors
    for end in ends:
        if end.call is None:
            continue
        header = headers[end.index]
        assert (header.id, header.name) == (end.call.id, end.call.name)
        arguments = fragments[end.index]
        assert json.loads(arguments) == end.call.input
        assert arguments == json.dumps(json.loads(arguments), ensure_ascii=False, separators=(",", ":")) or \
            not re.search(r'[\s]', re.sub(r'"(\\.|[^"\\])*"', "", arguments))


def run_case(dialect, text, expected, options, ids=ID):
    parsed = dialects.parse(text, dialect=dialect, **options)
    assert parsed.text == expected["text"]
    assert parsed.thinking == expected["thinking"]
    assert [(c.name, c.input) for c in parsed.tool_calls] == expected["calls"]
    assert [e.kind for e in parsed.errors] == expected["errors"]
    assert parsed.incomplete_thinking == expected["incomplete"]
    for call in parsed.tool_calls:
        assert ids.fullmatch(call.id)
    for issue in parsed.errors:
        assert text[issue.span[0]:issue.span[1]] == issue.raw
    if expected["meta"] is not None:
        assert [c.metadata for c in parsed.tool_calls] == expected["meta"]
    stream_options = dict(options)
    if stream_options.get("start_in_thinking") is None and parsed.thinking and "</think>" in text \
            and "<think>" not in text.split("</think>")[0]:
        stream_options["start_in_thinking"] = True
    for pieces in chunkings(text):
        events, result = stream(text, dialect, stream_options, pieces)
        assert result == parsed, pieces
        check_events(events, result)
    assert dialects.parse_many([text, text], dialect=dialect, **options) == [parsed, parsed]


# -- hermes ---------------------------------------------------------------------------------

H = '<tool_call>\n{{"name": "{}", "arguments": {}}}\n</tool_call>'

HERMES = [
    case("single", H.format("get_weather", '{"city": "Paris"}'), calls=[("get_weather", {"city": "Paris"})]),
    case("text-around", "Let me check.\n" + H.format("f", '{"a": 1}') + "\nDone.",
         out="Let me check.\nDone.", calls=[("f", {"a": 1})]),
    case("parallel", H.format("a", "{}") + "\n" + H.format("b", '{"x": [1, 2]}'),
         calls=[("a", {}), ("b", {"x": [1, 2]})]),
    case("parallel-text-between", "one " + H.format("a", "{}") + " two " + H.format("b", "{}") + " three",
         out="one\ntwo\nthree", calls=[("a", {}), ("b", {})]),
    case("empty-arguments", H.format("now", "{}"), calls=[("now", {})]),
    case("missing-arguments", '<tool_call>{"name": "now"}</tool_call>', calls=[("now", {})]),
    case("nested", H.format("f", '{"a": {"b": [1, {"c": null}]}, "d": true, "e": -1.5e3}'),
         calls=[("f", {"a": {"b": [1, {"c": None}]}, "d": True, "e": -1500.0})]),
    case("unicode", H.format("überprüfen", '{"city": "Zürich 東京 🎉"}'),
         calls=[("überprüfen", {"city": "Zürich 東京 🎉"})]),
    case("escapes", H.format("f", r'{"s": "line\nnext \"q\" \\ \u00e9 \/"}'),
         calls=[("f", {"s": 'line\nnext "q" \\ é /'})]),
    case("end-marker-in-string", H.format("run", '{"code": "print(\'</tool_call>\')"}') + " after",
         out="after", calls=[("run", {"code": "print('</tool_call>')"})]),
    case("open-marker-in-string", H.format("f", '{"s": "<tool_call>{}"}'), calls=[("f", {"s": "<tool_call>{}"})]),
    case("think-in-string", H.format("f", '{"s": "<think>x</think>"}'), calls=[("f", {"s": "<think>x</think>"})]),
    case("reasoning-then-call", "<think>I should call f.</think>\n" + H.format("f", "{}"),
         thinking=["I should call f."], calls=[("f", {})]),
    case("starts-inside-reasoning", "I should call f.</think>Answer " + H.format("f", "{}"),
         out="Answer", thinking=["I should call f."], calls=[("f", {})]),
    case("start-in-thinking-explicit", "plan</think>ok", out="ok", thinking=["plan"], start_in_thinking=True),
    case("reasoning-cut-off", "<think>hmm", thinking=["hmm"], incomplete=True),
    case("call-inside-reasoning-is-reasoning-when-strict", "<think>maybe " + H.format("x", "{}") + "</think>ok",
         out="ok", thinking=["maybe " + H.format("x", "{}")], strict=True),
    case("call-inside-reasoning-ends-it", "<think>maybe " + H.format("x", "{}") + "</think>ok",
         out="ok", thinking=["maybe"], calls=[("x", {})]),
    case("marker-in-prose", "Use the <tool_call> tag to call tools.", out="Use the <tool_call> tag to call tools."),
    case("close-marker-in-prose", "It ends with </tool_call> and </think>.",
         out="It ends with </tool_call> and </think>.", start_in_thinking=False),
    case("cut-off", 'Sure <tool_call>{"name": "f", "argu', out="Sure", errors=["unclosed_tool"]),
    case("invalid-json", '<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call> next', out="next",
         errors=["invalid_json"]),
    case("missing-name", '<tool_call>{"arguments": {}}</tool_call>', errors=["missing_field"]),
    case("arguments-as-string", '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>',
         calls=[("f", {"a": 1})]),
    case("arguments-not-object", '<tool_call>{"name": "f", "arguments": [1]}</tool_call>', errors=["invalid_field"]),
    case("name-after-arguments", '<tool_call>{"arguments": {"a": 1}, "name": "f"}</tool_call>',
         calls=[("f", {"a": 1})]),
    case("arguments-twice", '<tool_call>{"name": "f", "arguments": {}, "arguments": {"a": 1}}</tool_call>',
         errors=["invalid_field"]),
    case("bad-then-good", '<tool_call>{"name": 1}</tool_call>' + H.format("g", "{}"),
         calls=[("g", {})], errors=["invalid_field"]),
    case("extra-keys-in-metadata", '<tool_call>{"name": "f", "arguments": {}, "id": "x"}</tool_call>',
         calls=[("f", {})], meta=[{"id": "x"}]),
    case("partial-markers-in-text", "a < b <tool b> <tool_cal", out="a < b <tool b> <tool_cal"),
    case("marker-then-not-json", "<tool_call>   hello", out="<tool_call>   hello"),
    case("big-integer", H.format("f", '{"n": 123456789012345678901234567890}'),
         calls=[("f", {"n": 123456789012345678901234567890})]),
    case("unterminated-string-swallows-to-end", H.format("f", '{"s": "oops}') + " tail", errors=["unclosed_tool"]),
]


@pytest.mark.parametrize("text, expected, options", HERMES)
def test_hermes(text, expected, options):
    run_case("hermes", text, expected, options)


# -- qwen3_coder ----------------------------------------------------------------------------


def q(name, *params, close=True):
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    return f"<tool_call>\n<function={name}>\n{body}" + ("</function>\n</tool_call>" if close else "")


TOOLS = [
    {"type": "function", "function": {"name": "typed", "parameters": {"type": "object", "properties": {
        "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"}, "o": {"type": "object"},
        "a": {"type": "array"}, "s": {"type": "string"}, "z": {"type": ["integer", "null"]}}}}},
]

QWEN = [
    case("single", q("get_weather", ("city", "Paris")), calls=[("get_weather", {"city": "Paris"})]),
    case("several-parameters", q("f", ("a", "1"), ("b", "two")), calls=[("f", {"a": "1", "b": "two"})]),
    case("no-parameters", "<tool_call><function=now></function></tool_call>", calls=[("now", {})]),
    case("parallel", q("a", ("x", "1")) + "\n" + q("b", ("y", "2")), calls=[("a", {"x": "1"}), ("b", {"y": "2"})]),
    case("text-around", "Let me look.\n" + q("f", ("p", "v")) + "\nDone.", out="Let me look.\nDone.",
         calls=[("f", {"p": "v"})]),
    case("multiline-value", q("write", ("code", "def f():\n    return 1\n")),
         calls=[("write", {"code": "def f():\n    return 1\n"})]),
    case("markers-in-value", q("w", ("s", "a </tool_call> b </function> c <tool_call> d")),
         calls=[("w", {"s": "a </tool_call> b </function> c <tool_call> d"})]),
    case("parameter-marker-in-value", q("w", ("s", "<parameter=x>y")), calls=[("w", {"s": "<parameter=x>y"})]),
    case("unicode", q("überprüfen", ("ort", "Zürich 東京 🎉")), calls=[("überprüfen", {"ort": "Zürich 東京 🎉"})]),
    case("json-special-characters", q("f", ("s", 'say "hi"\\ \t end')), calls=[("f", {"s": 'say "hi"\\ \t end'})]),
    case("inline-value", "<tool_call><function=f><parameter=a>x</parameter></function></tool_call>",
         calls=[("f", {"a": "x"})]),
    case("spaces-kept", "<tool_call><function=f><parameter=a>  x  </parameter></function></tool_call>",
         calls=[("f", {"a": "  x  "})]),
    case("empty-value", "<tool_call><function=f><parameter=a></parameter></function></tool_call>",
         calls=[("f", {"a": ""})]),
    case("typed-by-schema", q("typed", ("i", "42"), ("n", "2.5"), ("b", "True"), ("o", '{"k": [1]}'),
                              ("a", "[1, 2]"), ("s", "7"), ("z", "null")),
         calls=[("typed", {"i": 42, "n": 2.5, "b": True, "o": {"k": [1]}, "a": [1, 2], "s": "7", "z": None})],
         meta=[{}], tools=TOOLS),
    case("value-that-does-not-convert", q("typed", ("i", "many")), calls=[("typed", {"i": "many"})],
         meta=[{"schema_errors": ["parameter 'i' is not an integer; kept as text"]}], tools=TOOLS),
    # Past the largest float: kept as text, and the call keeps its other arguments.
    case("number-past-the-largest-float", q("typed", ("n", "1e400"), ("o", '{"k": [-1e400]}'), ("i", "7")),
         calls=[("typed", {"n": "1e400", "o": '{"k": [-1e400]}', "i": 7})],
         meta=[{"schema_errors": ["parameter 'n' is not a number; kept as text",
                                  "parameter 'o' is not an object; kept as text"]}], tools=TOOLS),
    case("unknown-tool-flagged", q("other", ("i", "1")), calls=[("other", {"i": "1"})],
         meta=[{"unknown_tool": True}], tools=TOOLS),
    case("untyped-without-tools", q("typed", ("i", "5")), calls=[("typed", {"i": "5"})]),
    case("reasoning-then-call", "<think>use f</think>" + q("f"), thinking=["use f"], calls=[("f", {})]),
    case("starts-inside-reasoning", "use f</think>\n" + q("f"), thinking=["use f"], calls=[("f", {})]),
    case("marker-in-prose", "Write <tool_call> then the function.", out="Write <tool_call> then the function."),
    case("cut-off-in-value", "Sure " + q("f", ("a", "long"), close=False)[:-14], out="Sure",
         errors=["unclosed_tool"]),
    case("cut-off-after-name", "<tool_call>\n<function=f>", errors=["unclosed_tool"]),
    case("junk-between-parameters", "<tool_call><function=f>junk<parameter=a>x</parameter></function></tool_call>ok",
         out="ok", errors=["invalid_xml"]),
    case("missing-function-close", "<tool_call><function=f><parameter=a>x</parameter></tool_call>",
         calls=[("f", {"a": "x"})]),
    case("empty-function-name", "<tool_call><function=><parameter=a>x</parameter></function></tool_call>",
         errors=["invalid_xml"]),
    case("repeated-parameter-last-wins", q("f", ("a", "1"), ("a", "2")), calls=[("f", {"a": "2"})]),
    case("end-marker-cut", q("f", close=False) + "</function>\n</tool_ca", errors=["unclosed_tool"]),
    case("call-inside-reasoning-when-strict", "<think>" + q("f") + "</think>", thinking=[q("f")], strict=True),
    case("call-inside-reasoning-ends-it", "<think>" + q("f") + "</think>", thinking=[""], calls=[("f", {})]),
    case("newline-only-value", "<tool_call><function=f><parameter=a>\n</parameter></function></tool_call>",
         calls=[("f", {"a": ""})]),
]


@pytest.mark.parametrize("text, expected, options", QWEN)
def test_qwen3_coder(text, expected, options):
    run_case("qwen3_coder", text, expected, options)


# -- gpt_oss --------------------------------------------------------------------------------


def g_call(name, arguments, end="<|call|>", preamble="<|start|>assistant"):
    return f"{preamble}<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{arguments}{end}"


ANALYSIS = "<|channel|>analysis<|message|>Need the weather.<|end|>"
FINAL = "<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>"

GPT_OSS = [
    case("analysis-and-final", ANALYSIS + FINAL, out="It is sunny.", thinking=["Need the weather."]),
    case("final-only", "<|channel|>final<|message|>Hi there!", out="Hi there!"),
    case("tool-call", ANALYSIS + g_call("get_weather", '{"location":"SF"}'), thinking=["Need the weather."],
         calls=[("get_weather", {"location": "SF"})]),
    case("call-stop-token-stripped", ANALYSIS + g_call("f", '{"a": 1}', end=""), thinking=["Need the weather."],
         calls=[("f", {"a": 1})]),
    case("recipient-before-channel", '<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{}<|call|>',
         calls=[("f", {})]),
    case("preamble-then-call", "<|channel|>commentary<|message|>Checking now.<|end|>" + g_call("f", "{}"),
         out="Checking now.", calls=[("f", {})]),
    case("parallel", g_call("a", '{"x": 1}', preamble="") + g_call("b", '{"y": [true]}'),
         calls=[("a", {"x": 1}), ("b", {"y": [True]})]),
    case("empty-arguments", g_call("now", "{}", preamble=""), calls=[("now", {})]),
    case("nested", g_call("f", '{"a": {"b": [1, {"c": null}]}}', preamble=""),
         calls=[("f", {"a": {"b": [1, {"c": None}]}})]),
    case("unicode", g_call("suche", '{"q": "Zürich 東京 🎉"}', preamble=""), calls=[("suche", {"q": "Zürich 東京 🎉"})]),
    case("markers-in-string", g_call("f", '{"q": "<|call|> and <|end|> and <|start|>"}', preamble=""),
         calls=[("f", {"q": "<|call|> and <|end|> and <|start|>"})]),
    case("plain-text", "Just an answer.", out="Just an answer."),
    case("analysis-cut-off", "<|channel|>analysis<|message|>Thinking", thinking=["Thinking"], incomplete=True),
    case("call-cut-off", ANALYSIS + g_call("f", '{"a": ', end=""), thinking=["Need the weather."],
         errors=["unclosed_tool"]),
    case("invalid-json", g_call("f", '{"a": }', preamble="") + FINAL, out="It is sunny.", errors=["invalid_json"]),
    case("not-an-object", g_call("f", "[1]", preamble=""), errors=["not_an_object"]),
    case("builtin-recipient", "<|channel|>analysis to=browser.search<|message|>{\"query\": \"x\"}<|call|>",
         calls=[("browser.search", {"query": "x"})]),
    case("text-before-header", "Hello<|channel|>final<|message|>World", out="Hello\nWorld"),
    case("header-cut-off", ANALYSIS + "<|start|>assistant<|channel|>fin", thinking=["Need the weather."],
         out="<|start|>assistant<|channel|>fin"),
    case("two-analysis-messages", ANALYSIS + "<|start|>assistant<|channel|>analysis<|message|>More.<|end|>",
         thinking=["Need the weather.", "More."]),
    case("final-with-end", "<|channel|>final<|message|>Done.<|end|>", out="Done."),
    case("stray-end-between-texts", "one<|end|>two", out="one\ntwo"),
    case("escapes", g_call("f", r'{"s": "a\"b\\c\nd\u00e9"}', preamble=""), calls=[("f", {"s": 'a"b\\c\ndé'})]),
    case("big-integer", g_call("f", '{"n": 123456789012345678901234567890}', preamble=""),
         calls=[("f", {"n": 123456789012345678901234567890})]),
    case("call-then-header-without-end", g_call("f", '{"a": 1}', end="", preamble="") + FINAL,
         out="It is sunny.", calls=[("f", {"a": 1})]),
    case("unknown-tool-flagged", g_call("other", "{}", preamble=""), calls=[("other", {})],
         meta=[{"unknown_tool": True}], tools=TOOLS),
    case("whitespace-in-arguments", g_call("f", '{ "a" : [ 1 , 2 ] }', preamble=""), calls=[("f", {"a": [1, 2]})]),
]


@pytest.mark.parametrize("text, expected, options", GPT_OSS)
def test_gpt_oss(text, expected, options):
    run_case("gpt_oss", text, expected, options)


# -- properties -----------------------------------------------------------------------------

ALL = [("hermes", HERMES), ("qwen3_coder", QWEN), ("gpt_oss", GPT_OSS)]

FRAGMENTS = {
    "hermes": ["<tool_call>", "</tool_call>", "<think>", "</think>", '{"name": "f", "arguments": ', "{", "}",
               '"', "\\", "x", " ", "\n", "é", "<", "[1, 2]", '"a": ', ","],
    "qwen3_coder": ["<tool_call>", "</tool_call>", "<function=f>", "</function>", "<parameter=a>", "</parameter>",
                    "<think>", "</think>", "x", " ", "\n", "é", "<", ">", '"'],
    "gpt_oss": ["<|start|>", "assistant", "<|channel|>", "analysis", "final", "commentary", " to=functions.f",
                "<|message|>", "<|end|>", "<|call|>", "<|return|>", '{"a": ', "}", '"', "x", " ", "é", "<", "1"],
}


def split(text, cuts):
    points = sorted({min(c, len(text)) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]


def chunking_agrees(dialect, text, options, cuts):
    """Streamed in the pieces ``cuts`` makes (not starting in reasoning), ``text`` gives what it
    gives whole, with consistent events; returns the whole result."""
    options = {k: v for k, v in options.items() if k != "start_in_thinking"}
    whole = dialects.parse(text, dialect=dialect, start_in_thinking=False, **options)
    events, result = stream(text, dialect, dict(options, start_in_thinking=False), split(text, cuts))
    assert result == whole
    check_events(events, result)
    return whole


def marker_soup(fragments, data):
    """A text of random fragments, and random cuts of it."""
    text = "".join(data.draw(st.lists(st.sampled_from(fragments), max_size=40)))
    return text, data.draw(st.lists(st.integers(0, len(text)), max_size=20))


def check_marker_soup(dialect, fragments, data, start_in_thinking=False):
    """A text drawn from ``fragments``, cut at drawn places, streams as it parses whole; no
    character is counted twice in the text, thinking and issues; each issue's span holds its
    raw text."""
    text, cuts = marker_soup(fragments, data)
    whole = dialects.parse(text, dialect=dialect, start_in_thinking=start_in_thinking)
    events, result = stream(text, dialect, {"start_in_thinking": start_in_thinking}, split(text, cuts))
    assert result == whole
    check_events(events, result)
    kept = sum(len(b.text) for b in whole.blocks if isinstance(b, agentmsg.TextBlock))
    # A bad pythonic list also stays text (docs/dialects.md): its characters count once.
    reported = sum(len(e.raw) for e in whole.errors if e.raw not in whole.text)
    assert kept + sum(map(len, whole.thinking)) + reported <= len(text)
    for issue in whole.errors:
        assert text[issue.span[0]:issue.span[1]] == issue.raw


def chunkings_test(dialect_cases, max_examples):
    """The property test of a file of conformance cases (``(dialect, cases)`` pairs): every case,
    cut at random places, streams as it parses whole."""
    picks = [(dialect, p.values[0], p.values[2]) for dialect, cases in dialect_cases for p in cases]

    @settings(max_examples=max_examples, deadline=None)
    @given(st.sampled_from(picks), st.lists(st.integers(0, 400), max_size=30))
    def test(picked, cuts):
        chunking_agrees(*picked, cuts)

    return test


def marker_soup_test(fragments, any_start=False):
    """The property test of random texts of each dialect's ``fragments`` (see
    :func:`check_marker_soup`); ``any_start``: the stream may also start inside reasoning."""
    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from(list(fragments)), st.data())
    def test(dialect, data):
        start_in_thinking = data.draw(st.booleans()) if any_start else False
        check_marker_soup(dialect, fragments[dialect], data, start_in_thinking)

    return test


test_random_chunkings_of_every_case = chunkings_test(ALL, 150)
test_arbitrary_marker_soup_streams_as_whole = marker_soup_test(FRAGMENTS)


# -- API ------------------------------------------------------------------------------------


def test_openai_deltas_of_a_stream():
    parser = StreamParser(dialect="hermes")
    events = parser.feed("<think>plan</think>Sure.") + parser.feed(H.format("f", '{"a": 1}')) + parser.finish()
    call_id = parser.result().tool_calls[0].id
    assert openai_deltas(events) == [
        {"reasoning_content": "plan"},
        {"content": "Sure."},
        {"tool_calls": [{"index": 0, "id": call_id, "type": "function", "function": {"name": "f", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"a":1}'}}]},
    ]


def test_a_call_starts_with_its_id_and_name_and_forge_starts_nameless():
    parser = StreamParser(dialect="hermes")
    events = parser.feed(H.format("f", '{"a": 1}')) + parser.finish()
    call = parser.result().tool_calls[0]
    assert events[0] == ToolCallStart(0, call.id, "f")
    assert repr(events[0]) == f"ToolCallStart(index=0, id={call.id!r}, name='f')"
    forge = agentmsg.StreamParser()
    forge_events = forge.feed('<tool>{"tool_name": "f", "arguments": {}}</tool>') + forge.finish()
    assert forge_events[0] == ToolCallStart(0) == ToolCallStart(0, None, None)
    assert (forge_events[0].id, forge_events[0].name, repr(forge_events[0])) == (None, None, "ToolCallStart(index=0)")
    # A nameless start says nothing to OpenAI: the call goes out whole at its end (issue 25).
    call = forge.result().tool_calls[0]
    assert openai_deltas(forge_events) == [{"tool_calls": [{"index": 0, "id": call.id, "type": "function",
                                                            "function": {"name": "f", "arguments": "{}"}}]}]


def test_tool_call_start_compares_pickles_and_keeps_its_old_name():
    named = ToolCallStart(1, "call_1", "f")
    assert ToolCallStart(1, id="call_1", name="f") == named != ToolCallStart(1)
    assert ToolCallStart(1, name="f") != named
    assert ToolCallStart.__match_args__ == ("index", "id", "name")
    for event in (named, ToolCallStart(0), ToolCallStart(2, name="g")):
        assert pickle.loads(pickle.dumps(event)) == event
    assert dialects.ToolCallHeader is agentmsg.ToolCallHeader is ToolCallStart
    assert dialects.ToolCallHeader(1, "call_1", "f") == named


def test_qwen3_coder_streams_arguments_as_values_arrive():
    parser = StreamParser(dialect="qwen3_coder")
    first = parser.feed("<tool_call>\n<function=write>\n<parameter=path>\na.py\n</parameter>\n<parameter=body>\nx = ")
    assert [type(e).__name__ for e in first] == ["ToolCallStart", "ToolCallDelta"]
    assert first[1].fragment == '{"path":"a.py","body":"x = '
    rest = parser.feed("1\n</parameter>\n</function>\n</tool_call>") + parser.finish()
    assert "".join(e.fragment for e in rest if isinstance(e, ToolCallDelta)) == '1"}'


def test_ids_are_deterministic_and_differ_by_place():
    text = H.format("f", "{}") + H.format("f", "{}")
    a, b = dialects.parse(text, dialect="hermes").tool_calls
    assert a.id != b.id
    assert [c.id for c in dialects.parse(text, dialect="hermes").tool_calls] == [a.id, b.id]


def test_dialects_are_listed():
    assert list(dialects.DIALECTS)[:4] == ["forge", "hermes", "qwen3_coder", "gpt_oss"]


@pytest.mark.parametrize("call, error", [
    (lambda: dialects.parse("x", dialect="llama"), "unknown dialect 'llama'; valid: " + ", ".join(dialects.DIALECTS)),
    (lambda: dialects.parse(1, dialect="hermes"), "text must be a str, not int"),
    (lambda: dialects.parse("x", dialect="hermes", tools="f"), "tools must be a list of tool definitions, not str"),
    (lambda: dialects.parse("x", dialect="hermes", tools=[{}]), "invalid tools: tools[0] has no function name"),
    (lambda: StreamParser(dialect="hermes").feed(b"x"), "chunk must be a str, not bytes"),
    (lambda: dialects.parse("x", dialect="hermes", start_in_thinking="yes"),
     "start_in_thinking must be a bool or None, not str"),
])
def test_bad_input_names_the_problem(call, error):
    with pytest.raises(agentmsg.AgentMsgError) as raised:
        call()
    assert str(raised.value) == error
    assert isinstance(raised.value, (ValueError, TypeError))


def test_a_parser_is_reusable_after_finish():
    parser = StreamParser(dialect="gpt_oss")
    parser.feed("<|channel|>final<|message|>one")
    parser.finish()
    parser.feed("<|channel|>final<|message|>two")
    parser.finish()
    assert parser.result().text == "two"
