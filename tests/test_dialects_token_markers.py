"""Conformance of the dialects deepseek_v3, deepseek_v31, kimi_k2 and glm45, whole and streamed.

The cases run through ``run_case`` of ``test_dialects``: parsed whole, then streamed with every
1-, 2- and 3-character chunking from each starting offset, each stream equal to the whole result,
with deltas that join to the text, the thinking and each call's compact JSON arguments.
"""

from __future__ import annotations

import re

import pytest

import agentmsg
from agentmsg import dialects
from agentmsg.dialects import StreamParser, openai_deltas
from test_dialects import ID, TOOLS, case, chunkings_test, marker_soup_test, run_case

# -- deepseek_v3 and deepseek_v31 ----------------------------------------------------------------

SECTION, SECTION_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"


def v3(name, arguments):
    return f"{CALL}function{SEP}{name}\n```json\n{arguments}\n```{CALL_END}"


def v31(name, arguments):
    return f"{CALL}{name}{SEP}{arguments}{CALL_END}"


def deepseek_cases(call, not_an_object="not_an_object"):
    """The cases both DeepSeek forms share; ``call(name, arguments)`` writes one call. A payload
    that is not an object is ``not_an_object``, or ``invalid_json`` when it sits in a fence (the
    fence is recognised only around an object)."""

    def section(*calls, between="\n"):
        return SECTION + between.join(calls) + SECTION_END

    return [
        case("single", section(call("get_weather", '{"city": "Paris"}')), calls=[("get_weather", {"city": "Paris"})]),
        case("text-around", "Let me check.\n" + section(call("f", '{"a": 1}')) + "\nDone.",
             out="Let me check.\nDone.", calls=[("f", {"a": 1})]),
        case("parallel", section(call("a", "{}"), call("b", '{"x": [1, 2]}')), calls=[("a", {}), ("b", {"x": [1, 2]})]),
        case("parallel-no-blank-between", section(call("a", "{}"), call("b", "{}"), between=""),
             calls=[("a", {}), ("b", {})]),
        case("empty-arguments", section(call("now", "{}")), calls=[("now", {})]),
        case("nested", section(call("f", '{"a": {"b": [1, {"c": null}]}, "d": true, "e": -1.5e3}')),
             calls=[("f", {"a": {"b": [1, {"c": None}]}, "d": True, "e": -1500.0})]),
        case("unicode", section(call("überprüfen", '{"ort": "Zürich 東京 🎉"}')),
             calls=[("überprüfen", {"ort": "Zürich 東京 🎉"})]),
        case("escapes", section(call("f", r'{"s": "line\nnext \"q\" \\ \u00e9"}')),
             calls=[("f", {"s": 'line\nnext "q" \\ é'})]),
        case("call-end-token-in-string", section(call("f", '{"s": "' + CALL_END + '"}')) + " after",
             out="after", calls=[("f", {"s": CALL_END})]),
        case("section-tokens-in-string", section(call("f", '{"s": "' + SECTION_END + SECTION + '"}')),
             calls=[("f", {"s": SECTION_END + SECTION})]),
        case("reasoning-then-call", "<think>I need f.</think>\n" + section(call("f", "{}")),
             thinking=["I need f."], calls=[("f", {})]),
        case("starts-inside-reasoning", "I need f.</think>Answer " + section(call("f", "{}")),
             out="Answer", thinking=["I need f."], calls=[("f", {})]),
        case("start-in-thinking-explicit", "plan</think>ok", out="ok", thinking=["plan"], start_in_thinking=True),
        case("reasoning-cut-off", "<think>hmm", thinking=["hmm"], incomplete=True),
        case("section-inside-reasoning-is-reasoning-when-strict", "<think>" + section(call("f", "{}")) + "</think>ok",
             out="ok", thinking=[section(call("f", "{}"))], strict=True),
        case("section-inside-reasoning-ends-it", "<think>" + section(call("f", "{}")) + "</think>ok",
             out="ok", thinking=[""], calls=[("f", {})]),
        case("stray-tokens-in-prose", f"a {SECTION_END} b {CALL_END} c {SEP}", out=f"a {SECTION_END} b {CALL_END} c {SEP}"),
        case("call-token-outside-section-is-text", "x " + call("f", "{}"), out="x " + call("f", "{}")),
        case("partial-token-at-end", "a <｜tool▁cal", out="a <｜tool▁cal"),
        case("cut-off-in-arguments", "Sure " + SECTION + call("f", '{"a": 1}')[:-20], out="Sure",
             errors=["unclosed_tool"]),
        case("cut-off-in-header", SECTION + CALL + "get_wea", errors=["unclosed_tool"]),
        case("invalid-json", section(call("f", '{"a": }')) + " next", out="next", errors=["invalid_json"]),
        case("not-an-object", section(call("f", "[1]")), errors=[not_an_object]),
        case("no-separator", SECTION + CALL + "f {}" + CALL_END + SECTION_END, errors=["wrong_format"]),
        case("empty-name", section(call("", "{}")), errors=["missing_field"]),
        case("section-end-stripped", SECTION + call("f", '{"a": 1}'), calls=[("f", {"a": 1})]),
        case("bad-then-good", section(call("f", "[1]"), call("g", "{}")), calls=[("g", {})], errors=[not_an_object]),
        case("text-inside-section-kept", SECTION + "note " + call("f", "{}") + SECTION_END, out="note",
             calls=[("f", {})]),
        case("empty-section", "a" + SECTION + SECTION_END + "b", out="a\nb"),
        case("big-integer", section(call("f", '{"n": 123456789012345678901234567890}')),
             calls=[("f", {"n": 123456789012345678901234567890})]),
        case("whitespace-in-arguments", section(call("f", '{ "a" : [ 1 , 2 ] }')), calls=[("f", {"a": [1, 2]})]),
        case("unknown-tool-flagged", section(call("other", "{}")), calls=[("other", {})],
             meta=[{"unknown_tool": True}], tools=TOOLS),
        case("two-sections", section(call("a", "{}")) + " mid " + section(call("b", "{}")), out="mid",
             calls=[("a", {}), ("b", {})]),
    ]


DEEPSEEK_V3 = deepseek_cases(v3, not_an_object="invalid_json") + [
    case("no-fence", SECTION + f"{CALL}function{SEP}f\n{{\"a\": 1}}{CALL_END}" + SECTION_END, calls=[("f", {"a": 1})]),
    case("fence-without-language", SECTION + f"{CALL}function{SEP}f\n```\n{{}}\n```{CALL_END}" + SECTION_END,
         calls=[("f", {})]),
    case("junk-after-fence", SECTION + f"{CALL}function{SEP}f\n```json\n{{}}\n``` junk{CALL_END}", errors=["invalid_json"]),
]

DEEPSEEK_V31 = deepseek_cases(v31) + [
    case("blanks-around-name", SECTION + f"{CALL} f \n{SEP} {{\"a\": 1}} {CALL_END}", calls=[("f", {"a": 1})]),
]


@pytest.mark.parametrize("text, expected, options", DEEPSEEK_V3)
def test_deepseek_v3(text, expected, options):
    run_case("deepseek_v3", text, expected, options)


@pytest.mark.parametrize("text, expected, options", DEEPSEEK_V31)
def test_deepseek_v31(text, expected, options):
    run_case("deepseek_v31", text, expected, options)


# -- kimi_k2 ------------------------------------------------------------------------------------

K_SECTION, K_SECTION_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
K_CALL, K_ARGS, K_CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
KIMI_ID = re.compile(r"(functions\.)?[^:]+:\d+|" + ID.pattern)


def k(name, arguments, index=0):
    return f"{K_CALL}functions.{name}:{index}{K_ARGS}{arguments}{K_CALL_END}"


def ks(*calls):
    return K_SECTION + "\n".join(calls) + K_SECTION_END


KIMI = [
    case("single", ks(k("get_weather", '{"city": "Beijing"}')), calls=[("get_weather", {"city": "Beijing"})]),
    case("text-around", "Let me check.\n" + ks(k("f", '{"a": 1}')) + "\nDone.", out="Let me check.\nDone.",
         calls=[("f", {"a": 1})]),
    case("parallel", ks(k("a", "{}", 0), k("b", '{"x": [1, 2]}', 1)), calls=[("a", {}), ("b", {"x": [1, 2]})]),
    case("empty-arguments", ks(k("now", "{}")), calls=[("now", {})]),
    case("nested", ks(k("f", '{"a": {"b": [1, {"c": null}]}}')), calls=[("f", {"a": {"b": [1, {"c": None}]}})]),
    case("unicode", ks(k("suche", '{"q": "Zürich 東京 🎉"}')), calls=[("suche", {"q": "Zürich 東京 🎉"})]),
    case("escapes", ks(k("f", r'{"s": "a\"b\\c\nd\u00e9"}')), calls=[("f", {"s": 'a"b\\c\ndé'})]),
    case("tokens-in-string", ks(k("f", '{"s": "' + K_CALL_END + K_SECTION_END + '"}')),
         calls=[("f", {"s": K_CALL_END + K_SECTION_END})]),
    case("kimi-reasoning", "◁think▷Plan it.◁/think▷Sure.", out="Sure.", thinking=["Plan it."]),
    case("think-tag-reasoning", "<think>Plan it.</think>" + ks(k("f", "{}")), thinking=["Plan it."],
         calls=[("f", {})]),
    case("starts-inside-reasoning", "Plan it.◁/think▷ok", out="ok", thinking=["Plan it."], start_in_thinking=True),
    case("starts-inside-think-tag-reasoning", "Plan it.</think>ok", out="ok", thinking=["Plan it."]),
    case("closer-of-the-other-pair-is-reasoning", "◁think▷a</think>b◁/think▷c", out="c", thinking=["a</think>b"],
         start_in_thinking=False),
    case("reasoning-cut-off", "◁think▷hmm", thinking=["hmm"], incomplete=True),
    case("section-inside-reasoning-when-strict", "◁think▷" + ks(k("f", "{}")) + "◁/think▷", thinking=[ks(k("f", "{}"))],
         strict=True),
    case("stray-tokens-in-prose", f"a {K_SECTION_END} b {K_CALL_END} ◁/think▷", out=f"a {K_SECTION_END} b {K_CALL_END} ◁/think▷",
         start_in_thinking=False),
    case("call-token-outside-section-is-text", "x " + k("f", "{}"), out="x " + k("f", "{}")),
    case("name-without-prefix", ks(f"{K_CALL}get_weather:3{K_ARGS}{{}}{K_CALL_END}"), calls=[("get_weather", {})]),
    case("name-with-dots", ks(k("mcp.files.read", "{}", 7)), calls=[("mcp.files.read", {})]),
    case("blanks-around-header", ks(f"{K_CALL}\n functions.f:0 \n{K_ARGS}\n{{}}\n{K_CALL_END}"), calls=[("f", {})]),
    case("cut-off-in-arguments", "Sure " + K_SECTION + k("f", '{"a": 1}')[:-20], out="Sure", errors=["unclosed_tool"]),
    case("cut-off-in-header", K_SECTION + K_CALL + "functions.f", errors=["unclosed_tool"]),
    case("invalid-json", ks(k("f", '{"a": }')) + " next", out="next", errors=["invalid_json"]),
    case("not-an-object", ks(k("f", '"x"')), errors=["not_an_object"]),
    case("no-argument-token", ks(f"{K_CALL}functions.f:0 {{}}{K_CALL_END}"), errors=["wrong_format"]),
    case("empty-name", ks(f"{K_CALL}{K_ARGS}{{}}{K_CALL_END}"), errors=["missing_field"]),
    case("section-end-stripped", K_SECTION + k("f", '{"a": 1}'), calls=[("f", {"a": 1})]),
    case("bad-then-good", ks(k("f", "[1]"), k("g", "{}", 1)), calls=[("g", {})], errors=["not_an_object"]),
    case("unknown-tool-flagged", ks(k("other", "{}")), calls=[("other", {})], meta=[{"unknown_tool": True}],
         tools=TOOLS),
    case("big-integer", ks(k("f", '{"n": 123456789012345678901234567890}')),
         calls=[("f", {"n": 123456789012345678901234567890})]),
]


@pytest.mark.parametrize("text, expected, options", KIMI)
def test_kimi_k2(text, expected, options):
    run_case("kimi_k2", text, expected, options, ids=KIMI_ID)


def test_kimi_k2_call_ids_are_the_ids_the_model_wrote():
    parsed = dialects.parse(ks(k("a", "{}", 0), k("a", "{}", 1)), dialect="kimi_k2")
    assert [c.id for c in parsed.tool_calls] == ["functions.a:0", "functions.a:1"]
    parser = StreamParser(dialect="kimi_k2")
    events = parser.feed(K_SECTION + K_CALL + "functions.get_weather:0" + K_ARGS + '{"city": "Par') + parser.feed(
        'is"}' + K_CALL_END + K_SECTION_END) + parser.finish()
    assert openai_deltas(events) == [
        {"tool_calls": [{"index": 0, "id": "functions.get_weather:0", "type": "function",
                         "function": {"name": "get_weather", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Par'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": 'is"}'}}]},
    ]


# -- glm45 --------------------------------------------------------------------------------------


def glm(name, *pairs, newlines=True):
    nl = "\n" if newlines else ""
    body = "".join(f"<arg_key>{key}</arg_key>{nl}<arg_value>{value}</arg_value>{nl}" for key, value in pairs)
    return f"<tool_call>{name}{nl}{body}</tool_call>"


GLM = [
    case("single", glm("get_weather", ("city", "Beijing")), calls=[("get_weather", {"city": "Beijing"})]),
    case("compact", glm("f", ("a", "1"), ("b", "two"), newlines=False), calls=[("f", {"a": "1", "b": "two"})]),
    case("no-arguments", "<tool_call>now</tool_call>", calls=[("now", {})]),
    case("parallel", glm("a", ("x", "1")) + "\n" + glm("b", ("y", "2")), calls=[("a", {"x": "1"}), ("b", {"y": "2"})]),
    case("text-around", "Let me look.\n" + glm("f", ("p", "v")) + "\nDone.", out="Let me look.\nDone.",
         calls=[("f", {"p": "v"})]),
    case("multiline-value", glm("write", ("code", "\ndef f():\n    return 1\n")),
         calls=[("write", {"code": "def f():\n    return 1"})]),
    case("value-stripped", glm("f", ("a", "  x y \t")), calls=[("f", {"a": "x y"})]),
    case("empty-value", glm("f", ("a", "")), calls=[("f", {"a": ""})]),
    case("blank-value", glm("f", ("a", " \n ")), calls=[("f", {"a": ""})]),
    case("markers-in-value", glm("w", ("s", "a </tool_call> b <arg_key> c <tool_call> d </arg_key>")),
         calls=[("w", {"s": "a </tool_call> b <arg_key> c <tool_call> d </arg_key>"})]),
    case("unicode", glm("überprüfen", ("ort", "Zürich 東京 🎉")), calls=[("überprüfen", {"ort": "Zürich 東京 🎉"})]),
    case("json-special-characters", glm("f", ("s", 'say "hi"\\ \t end')), calls=[("f", {"s": 'say "hi"\\ \t end'})]),
    case("typed-by-schema", glm("typed", ("i", "42"), ("n", "2.5"), ("b", "true"), ("o", '{"k": [1]}'),
                                ("a", "[1, 2]"), ("s", "7"), ("z", "null")),
         calls=[("typed", {"i": 42, "n": 2.5, "b": True, "o": {"k": [1]}, "a": [1, 2], "s": "7", "z": None})],
         meta=[{}], tools=TOOLS),
    case("value-that-does-not-convert", glm("typed", ("i", "many")), calls=[("typed", {"i": "many"})],
         meta=[{"schema_errors": ["parameter 'i' is not an integer; kept as text"]}], tools=TOOLS),
    # Past the largest float: kept as text, and the call keeps its other arguments.
    case("number-past-the-largest-float", glm("typed", ("n", "1e400"), ("o", '{"k": [-1e400]}'), ("i", "7")),
         calls=[("typed", {"n": "1e400", "o": '{"k": [-1e400]}', "i": 7})],
         meta=[{"schema_errors": ["parameter 'n' is not a number; kept as text",
                                  "parameter 'o' is not an object; kept as text"]}], tools=TOOLS),
    case("unknown-tool-flagged", glm("other", ("i", "1")), calls=[("other", {"i": "1"})],
         meta=[{"unknown_tool": True}], tools=TOOLS),
    case("untyped-without-tools", glm("typed", ("i", "5")), calls=[("typed", {"i": "5"})]),
    case("reasoning-then-call", "<think>use f</think>" + glm("f"), thinking=["use f"], calls=[("f", {})]),
    case("starts-inside-reasoning", "use f</think>\n" + glm("f"), thinking=["use f"], calls=[("f", {})]),
    case("call-inside-reasoning-when-strict", "<think>" + glm("f") + "</think>", thinking=[glm("f")], strict=True),
    case("call-inside-reasoning-ends-it", "<think>" + glm("f") + "</think>", thinking=[""], calls=[("f", {})]),
    case("marker-in-prose", "Wrap calls in <tool_call> tags.", out="Wrap calls in <tool_call> tags."),
    case("marker-then-prose-line", "<tool_call>name\nthen prose", out="<tool_call>name\nthen prose"),
    case("close-marker-in-prose", "It ends with </tool_call>.", out="It ends with </tool_call>."),
    case("name-only-at-end-is-text", "<tool_call>f", out="<tool_call>f"),
    case("cut-off-in-value", "Sure " + glm("f", ("a", "long"))[:-25], out="Sure", errors=["unclosed_tool"]),
    case("cut-off-after-key", "<tool_call>f\n<arg_key>a</arg_key>", errors=["unclosed_tool"]),
    case("missing-value-tag", "<tool_call>f<arg_key>a</arg_key>x</tool_call>ok", out="ok", errors=["invalid_xml"]),
    case("empty-key", "<tool_call>f<arg_key> </arg_key><arg_value>x</arg_value></tool_call>", errors=["invalid_xml"]),
    case("junk-between-pairs", glm("f", ("a", "1"))[:-12] + "junk</tool_call>", errors=["invalid_xml"]),
    case("repeated-key-last-wins", glm("f", ("a", "1"), ("a", "2")), calls=[("f", {"a": "2"})]),
    case("name-with-dots-and-dashes", glm("mcp.files-read", ("p", "x")), calls=[("mcp.files-read", {"p": "x"})]),
    case("blank-lines-between-pairs", "<tool_call>f\n\n<arg_key>a</arg_key>\n\n<arg_value>1</arg_value>\n\n</tool_call>",
         calls=[("f", {"a": "1"})]),
    case("bad-then-good", "<tool_call>f<arg_key>a</arg_key>x</tool_call>" + glm("g"), calls=[("g", {})],
         errors=["invalid_xml"]),
]


@pytest.mark.parametrize("text, expected, options", GLM)
def test_glm45(text, expected, options):
    run_case("glm45", text, expected, options)


def test_glm45_streams_arguments_as_values_arrive():
    parser = StreamParser(dialect="glm45")
    first = parser.feed("<tool_call>write\n<arg_key>path</arg_key>\n<arg_value>a.py</arg_value>\n"
                        "<arg_key>body</arg_key><arg_value>x = ")
    assert [type(e).__name__ for e in first] == ["ToolCallStart", "ToolCallDelta"]
    assert first[1].fragment == '{"path":"a.py","body":"x ='
    rest = parser.feed("1 </arg_value></tool_call>") + parser.finish()
    assert "".join(e.fragment for e in rest if hasattr(e, "fragment")) == ' 1"}'


# -- custom dialects ----------------------------------------------------------------------------

MINE = dialects.Dialect(name="mine", call_start="[CALL]", call_end="[/CALL]", name_key="tool",
                        arguments_key="args", think_start="[THINK]", think_end="[/THINK]")
MINE_XML = dialects.Dialect(name="mine_xml", call_start="<invoke>", call_end="</invoke>", payload="qwen3_coder")
MINE_GLM = dialects.Dialect(name="mine_glm", call_start="⟨call⟩", call_end="⟨/call⟩", payload="glm45",
                            think_start="<reasoning>", think_end="</reasoning>")


def c(name, arguments):
    return f'[CALL]{{"tool": "{name}", "args": {arguments}}}[/CALL]'


CUSTOM = [
    case("single", c("get_weather", '{"city": "Paris"}'), calls=[("get_weather", {"city": "Paris"})]),
    case("text-around", "Let me check.\n" + c("f", '{"a": 1}') + "\nDone.", out="Let me check.\nDone.",
         calls=[("f", {"a": 1})]),
    case("parallel", c("a", "{}") + c("b", '{"x": [1, 2]}'), calls=[("a", {}), ("b", {"x": [1, 2]})]),
    case("empty-arguments", c("now", "{}"), calls=[("now", {})]),
    case("missing-arguments", '[CALL]{"tool": "now"}[/CALL]', calls=[("now", {})]),
    case("nested", c("f", '{"a": {"b": [1, {"c": null}]}}'), calls=[("f", {"a": {"b": [1, {"c": None}]}})]),
    case("unicode", c("suche", '{"q": "Zürich 東京 🎉"}'), calls=[("suche", {"q": "Zürich 東京 🎉"})]),
    case("escapes", c("f", r'{"s": "a\"b\\c\nd"}'), calls=[("f", {"s": 'a"b\\c\nd'})]),
    case("end-marker-in-string", c("f", '{"s": "[/CALL]"}') + " after", out="after", calls=[("f", {"s": "[/CALL]"})]),
    case("brackets-in-arguments", c("f", '{"a": [[1], [2]]}'), calls=[("f", {"a": [[1], [2]]})]),
    case("reasoning-then-call", "[THINK]plan[/THINK]" + c("f", "{}"), thinking=["plan"], calls=[("f", {})]),
    case("starts-inside-reasoning", "plan[/THINK]ok", out="ok", thinking=["plan"], start_in_thinking=True),
    case("reasoning-cut-off", "[THINK]hmm", thinking=["hmm"], incomplete=True),
    case("call-inside-reasoning-when-strict", "[THINK]" + c("f", "{}") + "[/THINK]", thinking=[c("f", "{}")],
         strict=True),
    case("call-inside-reasoning-ends-it", "[THINK]" + c("f", "{}") + "[/THINK]", thinking=[""], calls=[("f", {})]),
    case("marker-in-prose", "Write [CALL] then JSON.", out="Write [CALL] then JSON."),
    case("close-marker-in-prose", "It ends with [/CALL] and [/THINK].", out="It ends with [/CALL] and [/THINK].",
         start_in_thinking=False),
    case("hermes-keys-are-metadata", '[CALL]{"tool": "f", "args": {}, "name": "g"}[/CALL]', calls=[("f", {})],
         meta=[{"name": "g"}]),
    case("cut-off", "Sure " + c("f", '{"a": 1}')[:-10], out="Sure", errors=["unclosed_tool"]),
    case("invalid-json", c("f", '{"a": }') + " next", out="next", errors=["invalid_json"]),
    case("missing-name", '[CALL]{"args": {}}[/CALL]', errors=["missing_field"]),
    case("arguments-not-object", c("f", "[1]"), errors=["invalid_field"]),
    case("partial-marker-at-end", "a [CAL", out="a [CAL"),
    case("unknown-tool-flagged", c("other", "{}"), calls=[("other", {})], meta=[{"unknown_tool": True}], tools=TOOLS),
]

CUSTOM_ELEMENTS = [
    case("qwen3-coder-form", "<invoke><function=f><parameter=a>\n1\n</parameter></function></invoke>",
         calls=[("f", {"a": "1"})]),
    case("qwen3-coder-form-typed", "x<invoke><function=typed><parameter=i>7</parameter></function></invoke>",
         out="x", calls=[("typed", {"i": 7})], tools=TOOLS),
    case("qwen3-coder-form-marker-in-prose", "Use <invoke> here.", out="Use <invoke> here."),
    case("qwen3-coder-form-cut-off", "<invoke><function=f><parameter=a>1", errors=["unclosed_tool"]),
]

CUSTOM_GLM = [
    case("glm45-form", "<reasoning>r</reasoning>⟨call⟩f\n<arg_key>a</arg_key><arg_value> 1 </arg_value>⟨/call⟩ ok",
         out="ok", thinking=["r"], calls=[("f", {"a": "1"})]),
    case("glm45-form-typed", "⟨call⟩typed<arg_key>b</arg_key><arg_value>false</arg_value>⟨/call⟩",
         calls=[("typed", {"b": False})], tools=TOOLS),
    case("glm45-form-marker-in-prose", "A ⟨call⟩ tag and ⟨/call⟩.", out="A ⟨call⟩ tag and ⟨/call⟩.",
         start_in_thinking=False),
    case("glm45-form-name-then-end-is-a-call", "A ⟨call⟩ now ⟨/call⟩.", out="A\n.", calls=[("now", {})]),
    case("glm45-form-cut-off", "⟨call⟩f<arg_key>a</arg_key><arg_value>1", errors=["unclosed_tool"]),
]


@pytest.mark.parametrize("text, expected, options", CUSTOM)
def test_custom_json(text, expected, options):
    run_case(MINE, text, expected, options)


@pytest.mark.parametrize("text, expected, options", CUSTOM_ELEMENTS)
def test_custom_qwen3_coder_payload(text, expected, options):
    run_case(MINE_XML, text, expected, options)


@pytest.mark.parametrize("text, expected, options", CUSTOM_GLM)
def test_custom_glm45_payload(text, expected, options):
    run_case(MINE_GLM, text, expected, options)


def test_a_custom_dialect_is_accepted_wherever_dialect_is():
    text = "[THINK]p[/THINK]" + c("f", '{"a": 1}')
    expected = dialects.parse(text, dialect=MINE)
    assert agentmsg.parse(text, dialect=MINE) == expected
    assert agentmsg.parse_many([text], dialect=MINE) == [expected]
    assert agentmsg.parse_tool_calls(text, dialect=MINE) == expected.tool_calls
    parser = agentmsg.StreamParser(dialect=MINE)
    parser.feed(text)
    parser.finish()
    assert parser.result() == expected
    assert agentmsg.Dialect is dialects.Dialect


@pytest.mark.parametrize("parts, kind, message", [
    (dict(call_start="", call_end="b"), "MessageError", "dialect 'x': call_start must not be empty"),
    (dict(call_start="<c>", call_end="<c>"), "MessageError", "dialect 'x': call_start and call_end must differ (both are '<c>')"),
    (dict(call_start="a", call_end="b", think_start="a", think_end="t"), "MessageError",
     "dialect 'x': call_start and think_start must differ (both are 'a')"),
    (dict(call_start="a", call_end="b", think_start="t"), "MessageError", "dialect 'x': think_start and think_end go together"),
    (dict(call_start="a", call_end="b", payload="xml"), "MessageError",
     "dialect 'x': unknown payload 'xml'; valid: json, qwen3_coder, glm45"),
    (dict(call_start="a", call_end="b", payload="glm45", name_key="n"), "MessageError",
     "dialect 'x': name_key and arguments_key apply to payload 'json' only, not 'glm45'"),
    (dict(call_start="a", call_end="b", name_key="k", arguments_key="k"), "MessageError",
     "dialect 'x': name_key and arguments_key must differ (both are 'k')"),
    (dict(call_start="a", call_end="b", name_key=""), "MessageError",
     "dialect 'x': name_key and arguments_key must not be empty"),
    (dict(call_start="<tc>", call_end="</tc>", think_start="<t", think_end="</t>"), "MessageError",
     "dialect 'x': think_start '<t' is a prefix of call_start '<tc>': no marker may begin another"),
    (dict(call_start="<c>x", call_end="</c>", think_start="<t>", think_end="<c>"), "MessageError",
     "dialect 'x': think_end '<c>' is a prefix of call_start '<c>x': no marker may begin another"),
    (dict(call_start="a" * 65, call_end="b"), "MessageError", "dialect 'x': call_start must be at most 64 bytes long"),
    (dict(call_start=1, call_end="b"), "MessageTypeError", "Dialect.call_start must be a str, not int"),
    (dict(call_start="a", call_end="b", think_start="t", think_end=b"u"), "MessageTypeError",
     "Dialect.think_end must be a str, not bytes"),
])
def test_bad_custom_dialects_name_the_part(parts, kind, message):
    with pytest.raises(getattr(agentmsg, kind)) as raised:
        dialects.Dialect(name="x", **parts)
    assert str(raised.value) == message
    assert isinstance(raised.value, (ValueError, TypeError))


def test_something_else_as_dialect_is_a_type_error():
    with pytest.raises(agentmsg.MessageTypeError, match="dialect must be a str or an agentmsg.Dialect, not int"):
        dialects.parse("x", dialect=5)


# -- properties ---------------------------------------------------------------------------------

ALL = [("deepseek_v3", DEEPSEEK_V3), ("deepseek_v31", DEEPSEEK_V31), ("kimi_k2", KIMI), ("glm45", GLM),
       (MINE, CUSTOM), (MINE_XML, CUSTOM_ELEMENTS), (MINE_GLM, CUSTOM_GLM)]

FRAGMENTS = {
    "deepseek_v3": [SECTION, SECTION_END, CALL, CALL_END, SEP, "function", "f", "\n```json\n", "```", "<think>",
                    "</think>", '{"a": ', "}", '"', "\\", "x", " ", "\n", "é", "<", "<｜", "{}", '{"a": 1}'],
    # Whole objects too: a closed payload, a stray quote and a cut end token once streamed
    # differently (issue 22), and were too rare to draw from pieces alone.
    "deepseek_v31": [SECTION, SECTION_END, CALL, CALL_END, SEP, "f", "<think>", "</think>", '{"a": ', "}", '"',
                     "\\", "x", " ", "é", "<", "<｜", "{}", '{"a": 1}'],
    "kimi_k2": [K_SECTION, K_SECTION_END, K_CALL, K_CALL_END, K_ARGS, "functions.f:0", "◁think▷", "◁/think▷",
                "<think>", "</think>", '{"a": ', "}", '"', "x", " ", "é", "<|", "◁", "{}", '{"a": 1}'],
    "glm45": ["<tool_call>", "</tool_call>", "f", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
              "<think>", "</think>", "x", " ", "\n", "é", "<", ">", '"'],
    MINE: ["[CALL]", "[/CALL]", "[THINK]", "[/THINK]", '{"tool": "f", "args": ', "{", "}", "[", "]", '"', "\\", "x",
           " ", "é", "[CA"],
    MINE_GLM: ["⟨call⟩", "⟨/call⟩", "<reasoning>", "</reasoning>", "f", "<arg_key>", "</arg_key>", "<arg_value>",
               "</arg_value>", "x", " ", "\n", "⟨", "<"],
}


test_random_chunkings_of_every_case = chunkings_test(ALL, 120)
test_arbitrary_marker_soup_streams_as_whole = marker_soup_test(FRAGMENTS, any_start=True)
