"""Conformance of the mistral, llama3_json and pythonic dialects, whole and streamed.

Same harness as tests/test_dialects.py: every case is parsed whole, then streamed with every 1-,
2- and 3-character chunking and with random chunkings (hypothesis); each stream must give the
whole result, and each call's argument fragments must join to compact JSON of its input. The
pythonic literal reader is also checked against ``ast.literal_eval`` on random values.
"""

from __future__ import annotations

import ast
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmsg import dialects
from agentmsg.dialects import StreamParser
from agentmsg.parsing import ToolCallDelta
from test_dialects import TOOLS, case, check_events, chunkings_test, marker_soup_test, run_case, split, stream

# -- mistral --------------------------------------------------------------------------------

TC = "[TOOL_CALLS]"


def item(name, arguments, **extra):
    return json.dumps({"name": name, "arguments": arguments, **extra}, ensure_ascii=False)


def mlist(*items):
    return TC + " [" + ", ".join(items) + "]"


MISTRAL = [
    case("list-single", mlist(item("get_weather", {"city": "Paris"})), calls=[("get_weather", {"city": "Paris"})]),
    case("list-parallel", mlist(item("a", {"x": 1}), item("b", {"y": [True, None]})),
         calls=[("a", {"x": 1}), ("b", {"y": [True, None]})]),
    case("list-ids-in-metadata", mlist(item("a", {}, id="abc123def")), calls=[("a", {})], meta=[{"id": "abc123def"}]),
    case("list-text-before", "Let me check.\n" + mlist(item("f", {})), out="Let me check.", calls=[("f", {})]),
    case("list-text-after", mlist(item("f", {})) + " Done.", out="Done.", calls=[("f", {})]),
    case("list-no-space", TC + "[" + item("f", {"a": 1}) + "]", calls=[("f", {"a": 1})]),
    case("list-missing-arguments", mlist('{"name": "now"}'), calls=[("now", {})]),
    case("list-arguments-as-string", mlist('{"name": "f", "arguments": "{\\"a\\": 1}"}'), calls=[("f", {"a": 1})]),
    case("list-unicode-name", mlist(item("überprüfen", {"ort": "Zürich 東京 🎉"})),
         calls=[("überprüfen", {"ort": "Zürich 東京 🎉"})]),
    case("list-trailing-comma", TC + "[" + item("a", {}) + ",]", calls=[("a", {})]),
    case("list-missing-name", mlist('{"arguments": {}}'), errors=["missing_field"]),
    case("list-bad-then-good", mlist('{"name": 1}', item("g", {})), calls=[("g", {})], errors=["invalid_field"]),
    case("list-broken-after-item", TC + " [" + item("a", {}) + " junk", out="junk", calls=[("a", {})]),
    case("list-empty-is-text", TC + " []", out=TC + " []"),
    case("list-cut-off", "Sure " + TC + ' [{"name": "f", "argu', out="Sure", errors=["unclosed_tool"]),
    case("named-single", TC + 'get_weather[ARGS]{"city": "Paris"}', calls=[("get_weather", {"city": "Paris"})]),
    case("named-parallel", TC + "a[ARGS]{}" + TC + 'b[ARGS]{"x": [1, 2]}', calls=[("a", {}), ("b", {"x": [1, 2]})]),
    case("named-without-args-token", TC + 'f{"a": 1}' + TC + "g{}", calls=[("f", {"a": 1}), ("g", {})]),
    case("named-call-id", TC + 'f[CALL_ID]abc123def[ARGS]{"a": 1}', calls=[("f", {"a": 1})],
         meta=[{"id": "abc123def"}]),
    case("named-text-around", "Checking. " + TC + 'f[ARGS]{"a": 1} and done', out="Checking.\nand done",
         calls=[("f", {"a": 1})]),
    case("named-nested", TC + 'f[ARGS]{"a": {"b": [1, {"c": null}]}, "d": -1.5e3}',
         calls=[("f", {"a": {"b": [1, {"c": None}]}, "d": -1500.0})]),
    case("named-unicode-and-escapes", TC + r'f[ARGS]{"s": "Zürich \"q\" \\ \u00e9\n🎉"}',
         calls=[("f", {"s": 'Zürich "q" \\ é\n🎉'})]),
    case("markers-in-strings", TC + 'f[ARGS]{"s": "[TOOL_CALLS]x[ARGS]{} [/THINK] [THINK]"}',
         calls=[("f", {"s": "[TOOL_CALLS]x[ARGS]{} [/THINK] [THINK]"})]),
    case("named-big-integer", TC + 'f[ARGS]{"n": 123456789012345678901234567890}',
         calls=[("f", {"n": 123456789012345678901234567890})]),
    case("named-cut-off", "Sure " + TC + 'f[ARGS]{"a": ', out="Sure", errors=["unclosed_tool"]),
    case("named-cut-off-in-call-id", TC + "f[CALL_ID]ab", errors=["unclosed_tool"]),
    case("named-invalid-json", TC + 'f[ARGS]{"a": 1] next', out="next", errors=["invalid_json"]),
    case("named-arguments-not-object", TC + "f[ARGS]oops", out="oops", errors=["invalid_json"]),
    case("named-bad-call-id", TC + "f[CALL_ID]ab-c[ARGS]{}", out="-c[ARGS]{}", errors=["invalid_json"]),
    case("reasoning-then-call", "[THINK]I should call f.[/THINK]" + TC + "f[ARGS]{}", thinking=["I should call f."],
         calls=[("f", {})]),
    case("starts-inside-reasoning", "plan[/THINK]ok", out="ok", thinking=["plan"], start_in_thinking=True),
    case("starts-inside-reasoning-detected", "plan[/THINK]" + TC + "f[ARGS]{}", thinking=["plan"], calls=[("f", {})],
         start_in_thinking=None),
    case("reasoning-cut-off", "[THINK]hmm", thinking=["hmm"], incomplete=True),
    case("call-inside-reasoning-is-reasoning", "[THINK]maybe " + TC + "f[ARGS]{}[/THINK]ok", out="ok",
         thinking=["maybe " + TC + "f[ARGS]{}"]),
    case("marker-in-prose", "Mistral writes [TOOL_CALLS] before its calls.",
         out="Mistral writes [TOOL_CALLS] before its calls."),
    case("name-then-prose", TC + "f then text", out=TC + "f then text"),
    case("stray-think-close", "It ends with [/THINK].", out="It ends with [/THINK].", start_in_thinking=False),
    case("partial-markers-in-text", "a [TOOL_CALL b [THIN c [/THI [", out="a [TOOL_CALL b [THIN c [/THI ["),
    case("unknown-tool-flagged", TC + "other[ARGS]{}", calls=[("other", {})], meta=[{"unknown_tool": True}], tools=TOOLS),
]


@pytest.mark.parametrize("text, expected, options", MISTRAL)
def test_mistral(text, expected, options):
    if options.get("start_in_thinking", False) is None:
        # Detected whole; a stream is told.
        options = {k: v for k, v in options.items() if k != "start_in_thinking"}
        assert dialects.parse(text, dialect="mistral", **options).thinking == expected["thinking"]
        options["start_in_thinking"] = True
    run_case("mistral", text, expected, options)


# -- llama3_json ----------------------------------------------------------------------------


def ll(name, parameters, key="parameters", **extra):
    return json.dumps({"name": name, key: parameters, **extra}, ensure_ascii=False)


PT = "<|python_tag|>"

LLAMA = [
    case("single", ll("get_weather", {"city": "Paris"}), calls=[("get_weather", {"city": "Paris"})]),
    case("python-tag", PT + ll("f", {"a": 1}), calls=[("f", {"a": 1})]),
    case("leading-blanks", "\n  " + ll("f", {}), calls=[("f", {})]),
    case("parallel-semicolon", ll("a", {"x": 1}) + "; " + ll("b", {"y": 2}), calls=[("a", {"x": 1}), ("b", {"y": 2})]),
    case("parallel-after-python-tag", PT + ll("a", {}) + ";" + ll("b", {}), calls=[("a", {}), ("b", {})]),
    case("arguments-key-accepted", ll("f", {"a": 1}, key="arguments"), calls=[("f", {"a": 1})]),
    case("empty-parameters", ll("now", {}), calls=[("now", {})]),
    case("missing-parameters", '{"name": "now"}', calls=[("now", {})]),
    case("nested", ll("f", {"a": {"b": [1, {"c": None}]}, "d": True}), calls=[("f", {"a": {"b": [1, {"c": None}]}, "d": True})]),
    case("unicode", ll("überprüfen", {"ort": "Zürich 東京 🎉"}), calls=[("überprüfen", {"ort": "Zürich 東京 🎉"})]),
    case("escapes", '{"name": "f", "parameters": {"s": "a\\"b\\\\c\\nd\\u00e9"}}', calls=[("f", {"s": 'a"b\\c\ndé'})]),
    case("markers-in-strings", ll("f", {"s": '} ; {"name": "x"} <|python_tag|>'}),
         calls=[("f", {"s": '} ; {"name": "x"} <|python_tag|>'})]),
    case("text-after", ll("f", {}) + " Done.", out="Done.", calls=[("f", {})]),
    case("python-tag-after-text", "Let me look it up. " + PT + ll("f", {}), out="Let me look it up.", calls=[("f", {})]),
    case("json-in-prose-is-text", 'The call is {"name": "f", "parameters": {}} as shown.',
         out='The call is {"name": "f", "parameters": {}} as shown.'),
    case("braces-in-prose-at-start", "{braces} are fun", out="{braces} are fun"),
    case("json-answer-without-name", '{"answer": 42}', out='{"answer": 42}'),
    case("name-not-a-string-is-text", '{"name": 1, "parameters": {}}', out='{"name": 1, "parameters": {}}'),
    case("name-after-parameters", '{"parameters": {"a": 1}, "name": "f"}', calls=[("f", {"a": 1})]),
    case("python-tag-not-json", PT + 'brave_search.call(query="x")', out=PT + 'brave_search.call(query="x")'),
    case("cut-off", '{"name": "f", "parameters": {"a": ', errors=["unclosed_tool"]),
    case("cut-off-before-name", '{"param', out='{"param'),
    case("invalid-json", '{"name": "f", "parameters": {"a": 1]} rest', out="rest", errors=["invalid_json"]),
    case("parameters-not-object", '{"name": "f", "parameters": [1]}', errors=["invalid_field"]),
    case("parameters-and-arguments", '{"name": "f", "parameters": {}, "arguments": {}}', errors=["invalid_field"]),
    case("extra-keys-in-metadata", ll("f", {}, type="function"), calls=[("f", {})], meta=[{"type": "function"}]),
    case("separator-then-prose", ll("f", {}) + "; done", out="; done", calls=[("f", {})]),
    case("big-integer", '{"name": "f", "parameters": {"n": 123456789012345678901234567890}}',
         calls=[("f", {"n": 123456789012345678901234567890})]),
    case("less-than-outside-string", '{"name": "f", "parameters": {"a": 1 < 2}}', errors=["invalid_json"]),
    case("unknown-tool-flagged", ll("other", {}), calls=[("other", {})], meta=[{"unknown_tool": True}], tools=TOOLS),
]


@pytest.mark.parametrize("text, expected, options", LLAMA)
def test_llama3_json(text, expected, options):
    run_case("llama3_json", text, expected, options)


# -- pythonic -------------------------------------------------------------------------------

PYTHONIC = [
    case("single", "[get_weather(city='Paris')]", calls=[("get_weather", {"city": "Paris"})]),
    case("parallel", '[get_weather(city=\'Paris\'), search(q="x", n=3)]',
         calls=[("get_weather", {"city": "Paris"}), ("search", {"q": "x", "n": 3})]),
    case("no-arguments", "[now()]", calls=[("now", {})]),
    case("text-before-on-its-own-line", "Let me check.\n[f(a=1)]", out="Let me check.", calls=[("f", {"a": 1})]),
    case("text-after", "[f(a=1)]\nDone.", out="Done.", calls=[("f", {"a": 1})]),
    case("python-start-and-end", "<|python_start|>[f(a=1)]<|python_end|>", calls=[("f", {"a": 1})]),
    case("nested-literals", "[f(a=[1, (2, 3), {'k': None}], b=True, c=False, d={'x': [()]})]",
         calls=[("f", {"a": [1, [2, 3], {"k": None}], "b": True, "c": False, "d": {"x": [[]]}})]),
    case("string-escapes", r"""[f(a='it\'s\n', b="\x41\u00e9\U0001F389\101", c=r'\d+', d='\q', e='tab\tend')]""",
         calls=[("f", {"a": "it's\n", "b": "Aé🎉A", "c": "\\d+", "d": "\\q", "e": "tab\tend"})]),
    case("triple-quoted", "[f(a='''line 1\nline \"2\"''', b=\"\"\"x\"\"\")]", calls=[("f", {"a": 'line 1\nline "2"', "b": "x"})]),
    case("unicode", "[überprüfen(ort='Zürich 東京 🎉')]", calls=[("überprüfen", {"ort": "Zürich 東京 🎉"})]),
    case("numbers", "[f(a=0x_ff, b=1_000, c=-2.5e-3, d=.5, e=123456789012345678901234567890, g=-0o17)]",
         calls=[("f", {"a": 255, "b": 1000, "c": -0.0025, "d": 0.5, "e": 123456789012345678901234567890, "g": -15})]),
    case("markers-in-strings", "[f(s='[g(x=1)] <|python_end|> ]\\n[h(')]", calls=[("f", {"s": "[g(x=1)] <|python_end|> ]\n[h("})]),
    case("json-special-characters", "[f(s='say \"hi\" \\\\ / \\x00')]", calls=[("f", {"s": 'say "hi" \\ / \x00'})]),
    case("mid-line-bracket-is-text", "See [f(a=1)] here", out="See [f(a=1)] here"),
    case("markdown-link-is-text", "[docs](http://x) here", out="[docs](http://x) here"),
    case("reference-is-text", "[1] First point", out="[1] First point"),
    case("malformed-stays-text", "[foo(bar)] is a call", out="[foo(bar)] is a call", errors=["invalid_json"]),
    case("positional-argument", "[f(1)]", out="[f(1)]", errors=["invalid_json"]),
    case("name-is-not-a-literal", "[f(a=os.system)]", out="[f(a=os.system)]", errors=["invalid_json"]),
    case("no-eval-of-calls", "[f(a=__import__('os'))]", out="[f(a=__import__('os'))]", errors=["invalid_json"]),
    case("duplicate-keyword", "[f(a=1, a=2)]", out="[f(a=1, a=2)]", errors=["invalid_json"]),
    case("bytes-literal", "[f(a=b'x')]", out="[f(a=b'x')]", errors=["invalid_json"]),
    case("malformed-second-call", "[f(a=1), g(b=oops)] end", out=", g(b=oops)] end", calls=[("f", {"a": 1})],
         errors=["invalid_json"]),
    case("cut-off", "Sure\n[f(a='x", out="Sure", errors=["unclosed_tool"]),
    case("cut-off-between-calls", "[f(a=1), ", out=",", calls=[("f", {"a": 1})]),
    case("list-ends-without-bracket", "[f(a=1) junk", out="junk", calls=[("f", {"a": 1})]),
    case("trailing-commas", "[f(a=1,), g(),]", calls=[("f", {"a": 1}), ("g", {})]),
    case("empty-list-is-text", "[]", out="[]"),
    case("multiline", "[\n  f(\n    a=1,\n    b=[1,\n 2],\n  )\n]", calls=[("f", {"a": 1, "b": [1, 2]})]),
    case("dict-keys-as-json-writes-them", "[f(d={1: 'a', 2.5: 'b', True: 'c', None: 'd'})]",
         calls=[("f", {"d": {"1": "a", "2.5": "b", "true": "c", "null": "d"}})]),
    case("tuple-or-grouping", "[f(a=(1), b=(1,), c=(), d=((2)))]", calls=[("f", {"a": 1, "b": [1], "c": [], "d": 2})]),
    case("two-lists", "[f(a=1)]\n[g(b=2)]", calls=[("f", {"a": 1}), ("g", {"b": 2})]),
    case("unknown-tool-flagged", "[other()]", calls=[("other", {})], meta=[{"unknown_tool": True}], tools=TOOLS),
]


@pytest.mark.parametrize("text, expected, options", PYTHONIC)
def test_pythonic(text, expected, options):
    run_case("pythonic", text, expected, options)


def test_pythonic_streams_arguments_as_values_arrive():
    parser = StreamParser(dialect="pythonic")
    first = parser.feed("[write(path='a.py', body='x = ")
    assert [type(e).__name__ for e in first] == ["ToolCallStart", "ToolCallDelta"]
    assert first[1].fragment == '{"path":"a.py","body":"x = '
    # A parenthesis is held until a comma or its end says whether it is a tuple.
    assert parser.feed("1', t=(1") == [ToolCallDelta(0, '1","t":')]
    rest = parser.feed(", 2))]") + parser.finish()
    assert "".join(e.fragment for e in rest if isinstance(e, ToolCallDelta)) == "[1,2]}"


# -- properties -----------------------------------------------------------------------------

ALL = [("mistral", MISTRAL), ("llama3_json", LLAMA), ("pythonic", PYTHONIC)]

FRAGMENTS = {
    "mistral": [TC, "[ARGS]", "[CALL_ID]", "abc", "[THINK]", "[/THINK]", "f", "[", "]", "{", "}", '"', "\\", "x",
                " ", "\n", "é", ",", '{"name": "f", "arguments": ', '"a": 1'],
    "llama3_json": [PT, "{", "}", '"name": "f"', '"parameters": ', ";", '"', "\\", "x", " ", "\n", "é", ",", ":",
                    "<", "[1]"],
    "pythonic": ["[", "]", "f(", "g(", ")", "a=", "b=", "'", '"', "\\", ",", " ", "\n", "é", "1", "(", "{", "}",
                 ":", "None", "<|python_start|>", "<|python_end|>", "r'", "0x"],
}


test_random_chunkings_of_every_case = chunkings_test(ALL, 150)
test_arbitrary_marker_soup_streams_as_whole = marker_soup_test(FRAGMENTS)


def as_json_data(value):
    """What a Python literal is as JSON data: tuples are lists, dict keys are strings."""
    if isinstance(value, (list, tuple)):
        return [as_json_data(v) for v in value]
    if isinstance(value, dict):
        return {json.dumps(k) if not isinstance(k, str) else k: as_json_data(v) for k, v in value.items()}
    return value


FLOATS = st.floats(allow_nan=False, allow_infinity=False)
SCALARS = st.none() | st.booleans() | st.integers() | FLOATS | st.text()
LITERALS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.tuples() | st.tuples(inner) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5) | st.integers() | FLOATS | st.booleans() | st.none(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True), LITERALS, max_size=4),
       st.lists(st.integers(0, 300), max_size=10))
def test_pythonic_arguments_read_as_literal_eval_reads_them(arguments, cuts):
    source = "[f(" + ", ".join(f"{k}={v!r}" for k, v in arguments.items()) + ")]"
    expected = {k: as_json_data(ast.literal_eval(repr(v))) for k, v in arguments.items()}
    whole = dialects.parse(source, dialect="pythonic")
    assert [(c.name, c.input) for c in whole.tool_calls] == [("f", expected)], whole.errors
    events, result = stream(source, "pythonic", {}, split(source, cuts))
    assert result == whole
    check_events(events, result)


def test_the_new_dialects_are_listed():
    assert list(dialects.DIALECTS)[4:7] == ["mistral", "llama3_json", "pythonic"]
