"""Conformance of the dialects added for issue 22, section 2 (second group): DeepSeek's DSML
(``deepseek_v32``, ``deepseek_v4``), Gemma 4 (``gemma4``), FunctionGemma (``functiongemma``)
and Step 3.5 (``step3p5``, qwen3_coder's form).

Every case runs through ``run_case`` of ``test_dialects``: parsed whole, then streamed with every
1-, 2- and 3-character chunking, each stream equal to the whole result; hypothesis adds random
chunkings of every case and random marker soups. The markers and what a call looks like come
from the models' chat templates in ``tests/data/chat_templates`` (what the template writes back
into the history is what the model writes).
"""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmsg import dialects
from agentmsg.dialects import StreamParser, openai_deltas
from test_dialects import QWEN, case, chunkings_test, marker_soup_test, run_case, split

INT_TOOLS = [{"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}]

# -- DeepSeek V3.2 and V4: DSML ------------------------------------------------------------------

DS = "｜DSML｜"


def invoke(name, *params, attrs=None):
    """An invoke as the templates write it: each parameter ``(key, value, string)``."""
    head = f'<{DS}invoke name="{name}">\n' if attrs is None else f"<{DS}invoke{attrs}>\n"
    body = "".join(f'<{DS}parameter name="{k}" string="{s}">{v}</{DS}parameter>\n' for k, v, s in params)
    return head + body + f"</{DS}invoke>\n"


def calls(*invokes):
    return f"\n\n<{DS}function_calls>\n" + "".join(invokes) + f"</{DS}function_calls>"


OPEN = f"<{DS}function_calls>"
WEATHER = invoke("get_weather", ("city", "Paris", "true"))

DSML = [
    case("plain-text", "Hello there.", out="Hello there."),
    case("one-call", calls(WEATHER), calls=[("get_weather", {"city": "Paris"})]),
    case("json-values", calls(invoke("f", ("n", "5", "false"), ("ok", "true", "false"), ("items", '[1, "a"]', "false"),
                                      ("obj", '{"a": null}', "false"), ("x", "-1.5e3", "false"))),
         calls=[("f", {"n": 5, "ok": True, "items": [1, "a"], "obj": {"a": None}, "x": -1500.0})]),
    case("two-calls", calls(WEATHER, invoke("get_time", ("zone", "CET", "true"))),
         calls=[("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET"})]),
    case("text-before", "Let me check." + calls(WEATHER), out="Let me check.", calls=[("get_weather", {"city": "Paris"})]),
    case("text-after", calls(WEATHER) + "\nDone.", out="Done.", calls=[("get_weather", {"city": "Paris"})]),
    case("thinking-then-call", "<think>Need the weather.</think>" + calls(WEATHER), thinking=["Need the weather."],
         calls=[("get_weather", {"city": "Paris"})]),
    case("starts-inside-thinking", "Need it.</think>Checking." + calls(WEATHER), out="Checking.",
         thinking=["Need it."], calls=[("get_weather", {"city": "Paris"})]),
    case("section-ends-unclosed-thinking", "<think>plan" + calls(WEATHER), thinking=["plan"],
         calls=[("get_weather", {"city": "Paris"})]),
    case("section-in-thinking-strict", "<think>plan" + calls(WEATHER), thinking=["plan" + calls(WEATHER)],
         incomplete=True, strict=True),
    case("unclosed-call", OPEN + f'\n<{DS}invoke name="f">\n<{DS}parameter name="a" string="true">x',
         errors=["unclosed_tool"]),
    case("unclosed-name", OPEN + f'<{DS}invoke name="f', errors=["unclosed_tool"]),
    case("section-end-missing", OPEN + "\n" + WEATHER, calls=[("get_weather", {"city": "Paris"})]),
    case("bad-json-value-kept-as-text", calls(invoke("f", ("n", "five", "false"))), calls=[("f", {"n": "five"})],
         meta=[{"schema_errors": ["parameter 'n' is not a number or a boolean or an object or an array; kept as text"]}]),
    case("invoke-without-name", calls(invoke("f", attrs=' id="1"')), errors=["invalid_xml"]),
    case("junk-between-elements-then-good", calls(invoke("f").replace("\n</", "junk</"), WEATHER),
         calls=[("get_weather", {"city": "Paris"})], errors=["invalid_xml"]),
    case("parameter-without-name", calls(f'<{DS}invoke name="f">\n<{DS}parameter string="true">1</{DS}parameter>\n'
                                         f"</{DS}invoke>\n"), errors=["invalid_xml"]),
    case("markers-in-a-value", calls(invoke("run", ("code", f"<think>x</think> </{DS}invoke> <{DS}invoke", "true"))),
         calls=[("run", {"code": f"<think>x</think> </{DS}invoke> <{DS}invoke"})]),
    case("value-kept-as-written", calls(invoke("w", ("text", "\n  two\nlines  \n", "true"))),
         calls=[("w", {"text": "\n  two\nlines  \n"})]),
    case("unicode", "Voilà 🎉" + calls(invoke("überprüfen", ("stadt", "Zürich 東京 🎉", "true"))), out="Voilà 🎉",
         calls=[("überprüfen", {"stadt": "Zürich 東京 🎉"})]),
    case("empty-arguments", calls(f'<{DS}invoke name="now">\n\n</{DS}invoke>\n'), calls=[("now", {})]),
    case("string-attribute-missing", calls(f'<{DS}invoke name="f">\n<{DS}parameter name="a">1</{DS}parameter>\n'
                                           f"</{DS}invoke>\n"), calls=[("f", {"a": "1"})]),
    case("schema-types-text", calls(invoke("f", ("n", "5", "true"))), calls=[("f", {"n": 5})], tools=INT_TOOLS),
    case("schema-keeps-what-does-not-convert", calls(invoke("f", ("n", "five", "true"))), calls=[("f", {"n": "five"})],
         meta=[{"schema_errors": ["parameter 'n' is not an integer; kept as text"]}], tools=INT_TOOLS),
    case("unknown-tool-flagged", calls(WEATHER), calls=[("get_weather", {"city": "Paris"})],
         meta=[{"unknown_tool": True}], tools=INT_TOOLS),
    case("invoke-outside-a-section-is-text", f'Write <{DS}invoke name="x"> to call.',
         out=f'Write <{DS}invoke name="x"> to call.'),
    case("text-inside-the-section", OPEN + "hello" + WEATHER + f"</{DS}function_calls> bye", out="hello\nbye",
         calls=[("get_weather", {"city": "Paris"})]),
    case("two-sections", calls(WEATHER) + " and " + calls(invoke("g")), out="and",
         calls=[("get_weather", {"city": "Paris"}), ("g", {})]),
    case("stray-closer-is-text", "It ends with </think>.", out="It ends with </think>.", start_in_thinking=False),
    case("thinking-cut-off", "<think>hmm", thinking=["hmm"], incomplete=True),
]


def as_v4(param):
    text, expected, options = param.values
    swap = lambda s: s.replace(f"{DS}function_calls", f"{DS}tool_calls")  # noqa: E731
    expected = dict(expected, text=swap(expected["text"]), thinking=[swap(t) for t in expected["thinking"]])
    return pytest.param(swap(text), expected, options, id=param.id)


DSML_V4 = [as_v4(p) for p in DSML] + [
    # V3.2's section marker is not V4's: text.
    case("v32-section-is-text", calls(WEATHER).strip(), out=calls(WEATHER).strip()),
]

# -- Gemma 4 and FunctionGemma ---------------------------------------------------------------------


def gemma_cases(call_open, call_close, q, stop, thinking):
    """The conformance cases of a Gemma call form: markers, string delimiter ``q``, the stop token
    after calls, and (Gemma 4) the reasoning markers."""
    def call(name, body=""):
        return f"{call_open}call:{name}{{{body}}}{call_close}"

    weather = call("get_weather", f"city:{q}Paris{q}")
    cases = [
        case("plain-text", "Hello there.", out="Hello there."),
        case("one-call", weather, calls=[("get_weather", {"city": "Paris"})]),
        case("scalars", call("f", "n:5,x:-1.5e3,ok:true,no:false,z:null,big:123456789012345678901234567890"),
             calls=[("f", {"n": 5, "x": -1500.0, "ok": True, "no": False, "z": None,
                           "big": 123456789012345678901234567890})]),
        case("python-literals", call("f", "a:None,b:True,c:False"), calls=[("f", {"a": None, "b": True, "c": False})]),
        case("nested", call("f", f"loc:{{city:{q}Paris{q},zip:75001}},tags:[{q}a{q},{q}b{q}],m:[[1,2],[]],e:{{}}"),
             calls=[("f", {"loc": {"city": "Paris", "zip": 75001}, "tags": ["a", "b"], "m": [[1, 2], []], "e": {}})]),
        case("delimited-keys", call("f", f"{q}my key{q}:1,o:{{{q}k{q}:{q}v{q}}}"),
             calls=[("f", {"my key": 1, "o": {"k": "v"}})]),
        case("two-calls-and-stop-token", weather + call("get_time", f"zone:{q}CET{q}") + stop,
             calls=[("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET"})]),
        case("text-before-and-after", "Let me check. " + weather + " Done.", out="Let me check.\nDone.",
             calls=[("get_weather", {"city": "Paris"})]),
        case("unclosed-call", f"{call_open}call:f{{a:1", errors=["unclosed_tool"]),
        case("unclosed-string-swallows-the-rest", f"{call_open}call:f{{a:{q}oops}}{call_close} tail",
             errors=["unclosed_tool"]),
        case("missing-colon-then-text", f"{call_open}call:f{{a 1}}{call_close} after", out="after",
             errors=["invalid_json"]),
        case("end-before-arguments-close", f"{call_open}call:f{{a:[1,2{call_close}ok", out="ok", errors=["invalid_json"]),
        case("text-after-the-arguments", f"{call_open}call:f{{a:1}}x{call_close}", errors=["invalid_json"]),
        case("bracket-mismatch-then-good", f"{call_open}call:f{{a:[1}}}}{call_close}" + weather,
             calls=[("get_weather", {"city": "Paris"})], errors=["invalid_json"]),
        case("empty-name", f"{call_open}call:{{}}{call_close}", errors=["invalid_json"]),
        case("marker-without-call-is-text", f"Use {call_open} to call.", out=f"Use {call_open} to call."),
        case("blanks-before-call", f"{call_open} call:f{{}}{call_close}", calls=[("f", {})]),
        case("empty-arguments", call("now"), calls=[("now", {})]),
        case("unicode", "Voilà " + call("überprüfen", f"stadt:{q}Zürich 東京 🎉{q}"), out="Voilà",
             calls=[("überprüfen", {"stadt": "Zürich 東京 🎉"})]),
        case("markers-in-a-string", call("run", f"code:{q}{call_close} {{a:1}}, [x] {call_open}{q}"),
             calls=[("run", {"code": f"{call_close} {{a:1}}, [x] {call_open}"})]),
        case("escapes-in-a-string", call("w", f'text:{q}line\n"q" \\ tab\t{q}'),
             calls=[("w", {"text": 'line\n"q" \\ tab\t'})]),
        case("blanks-between-items", call("f", "\n  a: 1 ,\n  b: [ 1 , 2 ]\n"), calls=[("f", {"a": 1, "b": [1, 2]})]),
        case("bare-word-is-a-string", call("f", "city:Paris, mode: fast lane"),
             calls=[("f", {"city": "Paris", "mode": "fast lane"})]),
        case("trailing-commas", call("f", "a:[1,2,],b:1,"), calls=[("f", {"a": [1, 2], "b": 1})]),
        case("schema-types-a-string", call("f", f"n:{q}5{q}"), calls=[("f", {"n": 5})], tools=INT_TOOLS),
        case("schema-keeps-what-does-not-convert", call("f", f"n:{q}five{q}"), calls=[("f", {"n": "five"})],
             meta=[{"schema_errors": ["parameter 'n' is not an integer; kept as text"]}], tools=INT_TOOLS),
        case("stop-token-in-text-is-dropped", "one " + stop + " two", out="one\ntwo"),
        case("deep-nesting-is-malformed", call("f", "a:" + "[" * 70 + "]" * 70), errors=["invalid_json"]),
    ]
    if thinking:
        think_open, think_close = thinking
        cases += [
            case("thinking-then-call", f"{think_open}\nNeed the weather.\n{think_close}" + weather,
                 thinking=["Need the weather."], calls=[("get_weather", {"city": "Paris"})]),
            case("call-ends-unclosed-thinking", f"{think_open}\nplan " + weather, thinking=["plan"],
                 calls=[("get_weather", {"city": "Paris"})]),
            case("call-in-thinking-strict", f"{think_open}\nplan " + weather, thinking=["plan " + weather],
                 incomplete=True, strict=True),
            case("empty-thinking-of-the-prompt", f"{think_open}\n{think_close}Hi", out="Hi", thinking=[""]),
            case("starts-inside-thinking", f"plan{think_close}" + weather, thinking=["plan"],
                 calls=[("get_weather", {"city": "Paris"})], start_in_thinking=True),
        ]
    return cases


GEMMA4 = gemma_cases("<|tool_call>", "<tool_call|>", '<|"|>', "<|tool_response>", ("<|channel>thought", "<channel|>"))
FUNCTIONGEMMA = gemma_cases("<start_function_call>", "<end_function_call>", "<escape>", "<start_function_response>", None)

# -- Step 3.5: qwen3_coder's form ----------------------------------------------------------------

STEP3P5 = QWEN + [
    # The template writes "<think>\n" in the prompt: the reply starts inside reasoning.
    case("starts-inside-thinking", "Plan it.\n</think>\n<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n"
         "</function>\n</tool_call>", thinking=["Plan it."], calls=[("f", {"a": "1"})]),
]

# -- Cohere Command R7B / Command A -------------------------------------------------------------


def action(*items):
    """An action as the templates write it: ``(id, name, parameters)`` items."""
    body = ",\n".join(
        "    " + json.dumps({"tool_call_id": i, "tool_name": n, "parameters": p}, ensure_ascii=False) for i, n, p in items)
    return "<|START_ACTION|>[\n" + body + "\n]<|END_ACTION|>"


ID0 = {"tool_call_id": "0"}
CO_WEATHER = ("0", "get_weather", {"city": "Paris"})

COHERE = [
    case("plain-text", "Hello there.", out="Hello there."),
    case("response-markers-dropped", "<|START_RESPONSE|>Hello there.<|END_RESPONSE|>", out="Hello there."),
    # Command A (Cohere2MoE.jinja) writes its answer between the text markers.
    case("text-markers-dropped", "<|START_THINKING|>Plan.<|END_THINKING|><|START_TEXT|>Hello there.<|END_TEXT|>",
         out="Hello there.", thinking=["Plan."]),
    case("text-markers-around-an-action", "<|START_TEXT|>Checking.<|END_TEXT|>" + action(CO_WEATHER),
         out="Checking.", calls=[("get_weather", {"city": "Paris"})]),
    case("one-call", action(CO_WEATHER), calls=[("get_weather", {"city": "Paris"})], meta=[ID0]),
    case("two-calls", action(CO_WEATHER, ("1", "get_time", {"zone": "CET"})),
         calls=[("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET"})],
         meta=[ID0, {"tool_call_id": "1"}]),
    case("thinking-then-call", "<|START_THINKING|>Need the weather.<|END_THINKING|>" + action(CO_WEATHER),
         thinking=["Need the weather."], calls=[("get_weather", {"city": "Paris"})]),
    case("starts-inside-thinking", "Need it.<|END_THINKING|>" + action(CO_WEATHER), thinking=["Need it."],
         calls=[("get_weather", {"city": "Paris"})], start_in_thinking=True),
    case("empty-thinking-then-response", "<|START_THINKING|><|END_THINKING|><|START_RESPONSE|>Hi<|END_RESPONSE|>",
         out="Hi", thinking=[""]),
    case("text-before-the-action", "Let me check. " + action(CO_WEATHER), out="Let me check.",
         calls=[("get_weather", {"city": "Paris"})]),
    case("text-after-the-action", action(CO_WEATHER) + " Done.", out="Done.", calls=[("get_weather", {"city": "Paris"})]),
    case("unclosed-call", '<|START_ACTION|>[{"tool_name": "f", "parameters": {"a": 1', errors=["unclosed_tool"]),
    case("invalid-json-then-text", '<|START_ACTION|>[{"tool_name": "f", "parameters": {"a": 1,}}]<|END_ACTION|> ok',
         out="ok", errors=["invalid_json"]),
    case("missing-tool-name", '<|START_ACTION|>[{"parameters": {}}]<|END_ACTION|>', errors=["missing_field"]),
    case("parameters-not-an-object", '<|START_ACTION|>[{"tool_name": "f", "parameters": [1]}]<|END_ACTION|>',
         errors=["invalid_field"]),
    case("marker-without-a-list-is-text", "Use <|START_ACTION|> to act.", out="Use <|START_ACTION|> to act."),
    case("empty-list-is-text", "<|START_ACTION|>[]<|END_ACTION|>", out="<|START_ACTION|>[]"),
    case("markers-in-a-string", action(("0", "run", {"s": "<|END_ACTION|>] <|START_THINKING|>"})),
         calls=[("run", {"s": "<|END_ACTION|>] <|START_THINKING|>"})]),
    case("unicode", "Voilà " + action(("0", "überprüfen", {"stadt": "Zürich 東京 🎉"})), out="Voilà",
         calls=[("überprüfen", {"stadt": "Zürich 東京 🎉"})]),
    case("empty-parameters", action(("0", "now", {})), calls=[("now", {})]),
    case("nested-parameters", action(("0", "f", {"a": {"b": [1, None, True]}, "n": -1.5, "big": 12345678901234567890123})),
         calls=[("f", {"a": {"b": [1, None, True]}, "n": -1.5, "big": 12345678901234567890123})]),
    case("list-ends-early-rest-is-text", '<|START_ACTION|>[{"tool_name": "f", "parameters": {}} and more',
         out="and more", calls=[("f", {})]),
    case("trailing-comma-forgiven", '<|START_ACTION|>[{"tool_name": "f", "parameters": {}},]<|END_ACTION|>',
         calls=[("f", {})]),
    case("thinking-cut-off", "<|START_THINKING|>hmm", thinking=["hmm"], incomplete=True),
    case("stray-thinking-closer-is-text", "It ends with <|END_THINKING|>.", out="It ends with <|END_THINKING|>.",
         start_in_thinking=False),
    case("unknown-tool-flagged", action(CO_WEATHER), calls=[("get_weather", {"city": "Paris"})],
         meta=[{"tool_call_id": "0", "unknown_tool": True}], tools=INT_TOOLS),
    case("action-in-thinking-is-thinking", "<|START_THINKING|>maybe " + action(CO_WEATHER) + "<|END_THINKING|>ok",
         out="ok", thinking=["maybe " + action(CO_WEATHER)]),
    case("without-call-id", '<|START_ACTION|>[{"tool_name": "f", "parameters": {"a": 1}}]<|END_ACTION|>',
         calls=[("f", {"a": 1})], meta=[{}]),
]

ALL = [("deepseek_v32", DSML), ("deepseek_v4", DSML_V4), ("gemma4", GEMMA4), ("functiongemma", FUNCTIONGEMMA),
       ("step3p5", STEP3P5), ("cohere", COHERE)]


@pytest.mark.parametrize("dialect, text, expected, options",
                         [pytest.param(d, *c.values, id=f"{d}-{c.id}") for d, cases in ALL for c in cases])
def test_conformance(dialect, text, expected, options):
    run_case(dialect, text, expected, options)


def test_every_dialect_has_at_least_25_cases():
    assert {d: len(cases) >= 25 for d, cases in ALL} == {d: True for d, _ in ALL}


test_random_chunkings_of_every_case = chunkings_test(ALL, 300)
test_marker_soups_stream_as_whole = marker_soup_test({
    "deepseek_v32": [OPEN, f"</{DS}function_calls>", f"<{DS}invoke", ' name="f">', f"</{DS}invoke>",
                     f'<{DS}parameter name="a" string="true">', f'<{DS}parameter name="b" string="false">',
                     f"</{DS}parameter>", "<think>", "</think>", "1", "x", " ", "\n", "<", ">", '"'],
    "deepseek_v4": [f"<{DS}tool_calls>", f"</{DS}tool_calls>", f"<{DS}invoke", ' name="f">', f"</{DS}invoke>",
                    f'<{DS}parameter name="a" string="false">', f"</{DS}parameter>", "<think>", "</think>",
                    "[1]", "x", " ", "\n"],
    "gemma4": ["<|tool_call>", "<tool_call|>", "call:", "f", "{", "}", "[", "]", ":", ",", '<|"|>', "a", "1",
               "<|channel>thought", "<channel|>", "<|tool_response>", "<", "|", " ", "\n"],
    "functiongemma": ["<start_function_call>", "<end_function_call>", "call:", "f", "{", "}", "[", "]", ":", ",",
                      "<escape>", "a", "1", "<start_function_response>", "<", " ", "true"],
    "cohere": ["<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>", "<|START_RESPONSE|>",
               "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>", "[", "]", ",", '{"tool_name": "f", "parameters": ', "{}", "}", '"', "x", " ", "<|"],
    "step3p5": ["<tool_call>", "</tool_call>", "<function=f>", "</function>", "<parameter=a>", "</parameter>",
                "<think>", "</think>", "x", " ", "\n", "<"],
}, any_start=True)


# -- max_calls, strict, OpenAI deltas ------------------------------------------------------------

MAX_CALLS = {
    "deepseek_v32": ("a" + calls(invoke("f"), invoke("g")) + " c", f'<{DS}invoke name="g">'),
    "deepseek_v4": ("a" + calls(invoke("f"), invoke("g")).replace("function_calls", "tool_calls") + " c",
                    f'<{DS}invoke name="g">'),
    "gemma4": ("a <|tool_call>call:f{}<tool_call|> b <|tool_call>call:g{}<tool_call|> c", "<|tool_call>call:g"),
    "functiongemma": ("a <start_function_call>call:f{}<end_function_call> b <start_function_call>call:g{}"
                      "<end_function_call> c", "<start_function_call>call:g"),
    "cohere": ('a <|START_ACTION|>[{"tool_name": "f", "parameters": {}}, {"tool_name": "g", "parameters": {}}]'
               "<|END_ACTION|> c", '{"tool_name": "g"'),
    "step3p5": ("a <tool_call>\n<function=f>\n</function>\n</tool_call> b <tool_call>\n<function=g>\n</function>\n"
                "</tool_call> c", "<tool_call>\n<function=g>"),
}


@pytest.mark.parametrize("dialect", list(MAX_CALLS))
def test_calls_past_max_calls_are_one_issue_with_the_raw_rest(dialect):
    text, second = MAX_CALLS[dialect]
    assert [c.name for c in dialects.parse(text, dialect=dialect).tool_calls] == ["f", "g"]
    one = dialects.parse(text, dialect=dialect, max_calls=1)
    assert [c.name for c in one.tool_calls] == ["f"]
    assert [(e.kind, e.raw, e.span) for e in one.errors] == [("too_many_calls", text[text.index(second):],
                                                              (text.index(second), len(text)))]
    for pieces in ([text], list(text), [text[i:i + 3] for i in range(0, len(text), 3)]):
        parser = StreamParser(dialect=dialect, max_calls=1)
        for piece in pieces:
            parser.feed(piece)
        parser.finish()
        assert parser.result() == one


@pytest.mark.parametrize("dialect, text", [
    ("deepseek_v32", "<think>plan" + calls(WEATHER)),
    ("deepseek_v4", "<think>plan" + calls(WEATHER).replace("function_calls", "tool_calls")),
    ("gemma4", "<|channel>thought\nplan <|tool_call>call:f{}<tool_call|>"),
    ("step3p5", "<think>plan <tool_call>\n<function=f>\n</function>\n</tool_call>"),
])
def test_strict_keeps_a_call_in_reasoning_as_reasoning(dialect, text):
    assert len(dialects.parse(text, dialect=dialect).tool_calls) == 1
    strict = dialects.parse(text, dialect=dialect, strict=True)
    assert (strict.tool_calls, strict.incomplete_thinking) == ([], True)


def feed_openai_agrees(dialect, text, pieces, **options):
    events_parser = StreamParser(dialect=dialect, **options)
    deltas_parser = StreamParser(dialect=dialect, **options)
    events, deltas = [], []
    for piece in pieces:
        events += events_parser.feed(piece)
        deltas += deltas_parser.feed_openai(piece)
    events += events_parser.finish()
    deltas += deltas_parser.finish_openai()
    assert deltas == openai_deltas(events)
    assert deltas_parser.result() == events_parser.result()


@pytest.mark.parametrize("dialect, text, options", [
    pytest.param(d, c.values[0], c.values[2], id=f"{d}-{c.id}") for d, cases in ALL for c in cases])
def test_feed_openai_equals_openai_deltas_of_the_events(dialect, text, options):
    for pieces in ([text], [text[i:i + 2] for i in range(0, len(text), 2)]):
        feed_openai_agrees(dialect, text, pieces, **options)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([(d, c.values[0], c.values[2]) for d, cases in ALL for c in cases]),
       st.lists(st.integers(0, 400), max_size=20))
def test_feed_openai_equals_openai_deltas_under_random_chunkings(picked, cuts):
    dialect, text, options = picked
    feed_openai_agrees(dialect, text, split(text, cuts), **options)


def test_gemma4_deltas_stream_a_string_as_it_arrives():
    parser = StreamParser(dialect="gemma4")
    deltas = []
    for piece in ['<|tool_call>call:get_weather{city:<|"|>Pa', 'ris<|"|>,days:', "3}<tool_call|>"]:
        deltas += parser.feed_openai(piece)
    deltas += parser.finish_openai()
    call_id = parser.result().tool_calls[0].id
    assert deltas == [
        {"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                         "function": {"name": "get_weather", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Pa'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": 'ris","days":'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": "3}"}}]},
    ]


# -- linear time -----------------------------------------------------------------------------------

LINEAR = {
    "deepseek_v32": lambda n: calls(*[invoke("f", ("a", "x" * 20, "true"), ("b", "[1, 2]", "false"))] * n)
    + "<" * n + OPEN + f'<{DS}invoke name="g">' + "<｜" * n,
    "deepseek_v4": lambda n: (calls(*[invoke("f", ("a", "x" * 20, "true"))] * n) + "<｜DSML｜" * n).replace(
        "function_calls", "tool_calls"),
    "gemma4": lambda n: '<|tool_call>call:f{a:[1,{b:<|"|>x<|"|>}],c:2}<tool_call|>' * n + "<|" * n
    + "<|tool_call>call:f{a:" + "[" * 60 + '<|"|>' + "<|" * n,
    "functiongemma": lambda n: "<start_function_call>call:f{a:<escape>x<escape>}<end_function_call>" * n
    + "<start_function_call>call:f{a:<escape>" + "<esc" * n,
    "cohere": lambda n: action(*[("0", "f", {"a": "x" * 20})] * n) + "<|START_ACT" * n + "<|START_ACTION|>[" + "{" * n,
    "step3p5": lambda n: "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n</function>\n</tool_call>" * n
    + "<tool_call" * n,
}


def _cpu(dialect, text):
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        parser = StreamParser(dialect=dialect)
        for i in range(0, len(text), 64):
            parser.feed(text[i:i + 64])
        parser.finish()
        dialects.parse(text, dialect=dialect)
        best = min(best, time.thread_time() - start)
    return best


@pytest.mark.parametrize("dialect", list(LINEAR))
def test_linear_time(dialect):
    """8x the text takes about 8x the time (a quadratic parser: 64x); measured again while over
    the bound so a busy machine does not fail it."""
    family = LINEAR[dialect]
    n = max(1, 32_000 // len(family(1)))
    small, large = family(n), family(8 * n)
    ratio = float("inf")
    for _ in range(3):
        ratio = _cpu(dialect, large) / max(_cpu(dialect, small), 1e-6)
        if ratio < 12:
            break
    assert ratio < 12
