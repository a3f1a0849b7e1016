"""The calls models really write outside their template, read by default (issue 22, section 1),
and the strict reading behind ``strict=True``; Harmony replies that continue the prompt's header
or have a header with no ``<|message|>``; schema typing of JSON Schema shapes (``anyOf``,
``oneOf``, ``$ref``/``$defs``, ``enum``, ``const``, nullable, nested).

Every case runs through ``run_case`` of ``test_dialects``: parsed whole, then streamed with every
1-, 2- and 3-character chunking, each stream equal to the whole result.
"""

from __future__ import annotations

import re

import pytest

import agentmsg
from agentmsg import dialects
from test_dialects import ID, case, chunkings_test, marker_soup_test, run_case

H = '<tool_call>{{"name": "{}", "arguments": {}}}</tool_call>'

# -- calls inside unclosed reasoning ---------------------------------------------------------

KIMI_CALL = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}"
             "<|tool_call_end|><|tool_calls_section_end|>")
DS_CALL = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
GLM_CALL = "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>"
QWEN_CALL = "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"

IN_REASONING = [
    ("hermes", case("call-ends-unclosed-reasoning", "<think>I will call f " + H.format("f", "{}"),
                    thinking=["I will call f"], calls=[("f", {})])),
    ("hermes", case("call-in-reasoning-then-its-closer", "<think>maybe " + H.format("x", "{}") + "</think>ok",
                    out="ok", thinking=["maybe"], calls=[("x", {})])),
    ("hermes", case("call-in-reasoning-strict", "<think>maybe " + H.format("x", "{}") + "</think>ok",
                    out="ok", thinking=["maybe " + H.format("x", "{}")], strict=True)),
    ("hermes", case("unclosed-reasoning-strict", "<think>plan " + H.format("f", "{}"),
                    thinking=["plan " + H.format("f", "{}")], incomplete=True, strict=True)),
    ("hermes", case("started-inside-reasoning", "plan " + H.format("f", '{"a": 1}') + " done",
                    out="done", thinking=["plan"], calls=[("f", {"a": 1})], start_in_thinking=True)),
    ("hermes", case("marker-in-reasoning-not-a-call", "<think>use <tool_call> tags</think>ok",
                    out="ok", thinking=["use <tool_call> tags"])),
    ("hermes", case("marker-cut-off-in-reasoning", "<think>x <tool_call>", thinking=["x <tool_call>"],
                    incomplete=True)),
    ("hermes", case("second-closer-is-text", "<think>a " + H.format("f", "{}") + "</think></think>",
                    out="</think>", thinking=["a"], calls=[("f", {})])),
    ("hermes", case("two-calls-after-reasoning", "<think>a " + H.format("f", "{}") + H.format("g", "{}"),
                    thinking=["a"], calls=[("f", {}), ("g", {})])),
    ("qwen3_coder", case("call-ends-unclosed-reasoning", "<think>plan\n" + QWEN_CALL,
                         thinking=["plan"], calls=[("f", {"a": "1"})])),
    ("glm45", case("call-ends-unclosed-reasoning", "<think>plan" + GLM_CALL, thinking=["plan"],
                   calls=[("f", {"a": "1"})])),
    ("glm45", case("call-in-reasoning-strict", "<think>plan" + GLM_CALL, thinking=["plan" + GLM_CALL],
                   incomplete=True, strict=True)),
    ("kimi_k2", case("section-ends-unclosed-reasoning", "<think>plan" + KIMI_CALL, thinking=["plan"],
                     calls=[("f", {})])),
    ("kimi_k2", case("section-ends-kimi-reasoning", "◁think▷plan" + KIMI_CALL + "◁/think▷ok", out="ok",
                     thinking=["plan"], calls=[("f", {})])),
    ("kimi_k2", case("section-in-reasoning-strict", "<think>plan" + KIMI_CALL, thinking=["plan" + KIMI_CALL],
                     incomplete=True, strict=True)),
    ("deepseek_v31", case("section-ends-unclosed-reasoning", "<think>plan" + DS_CALL, thinking=["plan"],
                          calls=[("f", {})])),
]

# -- qwen3_coder without <tool_call> ----------------------------------------------------------

BARE = "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>"

QWEN_BARE = [
    case("no-opener-with-closer", BARE + "\n</tool_call>", calls=[("f", {"a": "1"})]),
    case("no-opener-no-closer", BARE, calls=[("f", {"a": "1"})]),
    case("no-opener-then-text", "Calling.\n" + BARE + " done", out="Calling.\ndone", calls=[("f", {"a": "1"})]),
    case("no-opener-empty", "<function=now></function>", calls=[("now", {})]),
    case("no-opener-two-calls", BARE + "\n" + BARE.replace("=f>", "=g>"), calls=[("f", {"a": "1"}), ("g", {"a": "1"})]),
    case("no-opener-cut-off", "<function=f>\n<parameter=a>\n1", errors=["unclosed_tool"]),
    case("no-opener-held-closer-prefix-is-text", BARE + "\n</tool", out="</tool", calls=[("f", {"a": "1"})]),
    case("no-opener-in-prose", "Write <function=name> to call.", out="Write <function=name> to call."),
    case("no-opener-name-broken", "<function=a<b>\n</function>", out="<function=a<b>\n</function>"),
    case("no-opener-name-unended", "x <function=f", out="x <function=f"),
    case("no-opener-strict", BARE, out=BARE, strict=True),
    case("no-opener-typed", BARE, calls=[("f", {"a": 1})],
         tools=[{"name": "f", "parameters": {"properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}}]),
]

# -- mistral's repeated [TOOL_CALLS] ----------------------------------------------------------

MISTRAL = [
    case("repeated-opener-list", '[TOOL_CALLS] [TOOL_CALLS] [{"name": "a", "arguments": {}}]', calls=[("a", {})]),
    case("repeated-opener-named", "[TOOL_CALLS][TOOL_CALLS]get_weather[ARGS]{}", calls=[("get_weather", {})]),
    case("three-openers", '[TOOL_CALLS] [TOOL_CALLS] [TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}]',
         calls=[("a", {"x": 1})]),
    case("repeated-opener-then-text", "[TOOL_CALLS] [TOOL_CALLS] hello", out="[TOOL_CALLS] [TOOL_CALLS] hello"),
    case("repeated-opener-strict", '[TOOL_CALLS] [TOOL_CALLS] [{"name": "a", "arguments": {}}]',
         out='[TOOL_CALLS] [TOOL_CALLS] [{"name": "a", "arguments": {}}]', strict=True),
]

# -- gpt_oss: replies inside a header ---------------------------------------------------------

GPT_OSS = [
    case("continues-the-role-header", ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>',
         calls=[("get_weather", {"city": "Paris"})]),
    case("continues-header-on-analysis", ' to=functions.get_weather<|channel|>analysis<|message|>{"city": "Paris"}<|call|>',
         calls=[("get_weather", {"city": "Paris"})]),
    case("continues-header-without-channel", 'to=functions.f <|constrain|>json<|message|>{"a": 1}',
         calls=[("f", {"a": 1})]),
    case("continues-header-then-final", ' to=functions.f<|channel|>commentary<|message|>{}<|call|>'
         "<|start|>assistant<|channel|>final<|message|>Done.", out="Done.", calls=[("f", {})]),
    case("continued-header-cut-off", " to=functions.f<|channel|>comm", out="to=functions.f<|channel|>comm"),
    case("blanks-then-text", "  Hello", out="Hello"),
    case("to-later-is-text", "Hello to=x", out="Hello to=x"),
    case("header-without-message", "<|channel|>analysis I must refuse<|end|><|start|>assistant<|channel|>final<|message|>ok",
         out="ok", thinking=["I must refuse"]),
    case("final-header-without-message", "<|channel|>final Just text<|return|>", out="Just text"),
    case("header-without-message-before-start", "<|channel|>analysis thinking<|start|>assistant<|channel|>final<|message|>ok",
         out="ok", thinking=["thinking"]),
    case("call-header-without-message", '<|start|>assistant<|channel|>commentary to=functions.f json{"a": 1}<|call|>',
         calls=[("f", {"a": 1})]),
    case("call-header-without-arguments", "<|channel|>commentary to=functions.f<|call|>", errors=["invalid_json"]),
]

# -- schema typing ------------------------------------------------------------------------------

SCHEMA_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object",
    "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}},
              "Mode": {"enum": [1, 2, "auto"]},
              "Loop": {"anyOf": [{"$ref": "#/$defs/Loop"}, {"type": "null"}]}},
    "properties": {
        "opt": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "one": {"oneOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "integer"}}]},
        "text": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "point": {"$ref": "#/$defs/Point"},
        "mode": {"$ref": "#/$defs/Mode"},
        "flag": {"const": False},
        "nullable": {"type": "number", "nullable": True},
        "list": {"type": "array", "items": {"type": "object"}},
        "loop": {"$ref": "#/$defs/Loop"},
        "missing": {"$ref": "#/definitions/Nope"},
    }}}}]


def qparams(*pairs):
    return "<tool_call>\n<function=f>\n" + "".join(
        f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in pairs) + "</function>\n</tool_call>"


def gparams(*pairs):
    return "<tool_call>f" + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in pairs) + "</tool_call>"


TYPED_PAIRS = [("opt", "5"), ("one", "[1, 2]"), ("text", "null"), ("point", '{"x": 1.5}'), ("mode", "2"),
               ("flag", "false"), ("nullable", "null"), ("list", '[{"a": 1}]')]
TYPED = {"opt": 5, "one": [1, 2], "text": "null", "point": {"x": 1.5}, "mode": 2, "flag": False, "nullable": None,
         "list": [{"a": 1}]}
UNRESOLVED = [("loop", "1"), ("missing", "2"), ("mode", "3"), ("opt", "five")]
UNRESOLVED_META = [{"schema_errors": [
    "parameter 'loop' has a $ref '#/$defs/Loop' that refers to itself; kept as text",
    "parameter 'missing' has a $ref '#/definitions/Nope' that cannot be resolved; kept as text",
    "parameter 'mode' is not one of the schema's values; kept as text",
    "parameter 'opt' is not an integer; kept as text"]}]

SCHEMA = [
    ("qwen3_coder", case("typed-shapes", qparams(*TYPED_PAIRS), calls=[("f", TYPED)], tools=SCHEMA_TOOLS)),
    ("glm45", case("typed-shapes", gparams(*TYPED_PAIRS), calls=[("f", TYPED)], tools=SCHEMA_TOOLS)),
    ("qwen3_coder", case("unresolvable-kept-as-text", qparams(*UNRESOLVED),
                         calls=[("f", {"loop": "1", "missing": "2", "mode": "3", "opt": "five"})],
                         meta=UNRESOLVED_META, tools=SCHEMA_TOOLS)),
    ("glm45", case("unresolvable-kept-as-text", gparams(*UNRESOLVED),
                   calls=[("f", {"loop": "1", "missing": "2", "mode": "3", "opt": "five"})],
                   meta=UNRESOLVED_META, tools=SCHEMA_TOOLS)),
    ("qwen3_coder", case("choice-string-member", qparams(("mode", "auto")), calls=[("f", {"mode": "auto"})],
                         tools=SCHEMA_TOOLS)),
]

ALL_CASES = (IN_REASONING + [("qwen3_coder", c) for c in QWEN_BARE] + [("mistral", c) for c in MISTRAL]
             + [("gpt_oss", c) for c in GPT_OSS] + SCHEMA)


@pytest.mark.parametrize("dialect, text, expected, options",
                         [pytest.param(d, *c.values, id=f"{d}-{c.id}") for d, c in ALL_CASES])
def test_calls_read_by_default(dialect, text, expected, options):
    ids = re.compile(r"functions\.[\w.]+:\d+") if dialect == "kimi_k2" else ID
    run_case(dialect, text, expected, options, ids=ids)


def test_forge_xml_payloads_are_typed_by_the_same_schemas():
    text = "<tool><tool_name>f</tool_name><arguments><opt>5</opt><mode>auto</mode><loop>1</loop></arguments></tool>"
    call = agentmsg.parse(text, tools=SCHEMA_TOOLS).tool_calls[0]
    assert call.input == {"opt": 5, "mode": "auto", "loop": "1"}
    assert call.metadata == {"schema_errors": ["parameter 'loop' has a $ref '#/$defs/Loop' that refers to itself; kept as text"]}


def test_strict_must_be_a_bool():
    with pytest.raises(agentmsg.MessageTypeError, match="strict must be a bool, not str"):
        dialects.parse("x", dialect="hermes", strict="yes")
    with pytest.raises(TypeError, match="stric"):
        dialects.parse("x", dialect="hermes", stric=True)


def _by_dialect(cases):
    grouped = {}
    for dialect, c in cases:
        grouped.setdefault(dialect, []).append(c)
    return list(grouped.items())


test_random_chunkings_of_every_case = chunkings_test(_by_dialect(ALL_CASES), 200)
test_marker_soup_reads_calls_in_reasoning = marker_soup_test({
    "hermes": ["<tool_call>", "</tool_call>", "<think>", "</think>", '{"name": "f", "arguments": ', "{", "}", '"',
               "x", " "],
    "qwen3_coder": ["<tool_call>", "</tool_call>", "<function=f>", "</function>", "<parameter=a>", "</parameter>",
                    "<function=", "<think>", "</think>", "x", " ", "\n", "<", ">"],
    "glm45": ["<tool_call>", "</tool_call>", "f", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
              "<think>", "</think>", "x", " "],
    "kimi_k2": ["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                "functions.f:0", "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<think>", "</think>",
                "◁think▷", "◁/think▷", "{}", "x"],
    "mistral": ["[TOOL_CALLS]", " ", "[", "]", '{"name": "a", "arguments": {}}', "f", "[ARGS]", "{}", ",", "x"],
    "gpt_oss": [" to=functions.f", "to=", "<|constrain|>", "json", "<|channel|>", "analysis", "final", " x",
                "<|message|>", "<|end|>", "<|call|>", "<|start|>", "assistant", '{"a": 1}', "{", "}"],
}, any_start=True)


def test_a_pythonic_hex_literal_past_the_decimal_limit_is_malformed_and_kept_as_text():
    text = "[f(n=0x" + "f" * 3600 + ")] after"
    parsed = dialects.parse(text, dialect="pythonic")
    assert parsed.tool_calls == []
    assert [e.kind for e in parsed.errors] == ["invalid_json"]
    assert "an int of more than 4300 decimal digits" in parsed.errors[0].message
    assert parsed.text == text
    small = dialects.parse("[f(n=0x" + "f" * 3000 + ")]", dialect="pythonic")
    assert small.tool_calls[0].input == {"n": int("f" * 3000, 16)}
