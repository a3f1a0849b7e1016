"""The dialects of issue 22, section 2 (step3, command_r, seed_oss, minimax_m2, magistral, granite, lfm2, phi4_mini,
xlam, hunyuan, apertus, jamba, internlm2, longcat, hy3): conformance cases written from each model's
chat template (tests/data/chat_templates) and the behaviour documented for it.

Every case runs through ``run_case`` of ``test_dialects``: parsed whole, then streamed with every
1-, 2- and 3-character chunking, each stream equal to the whole result. Random chunkings and
marker soups (hypothesis), ``max_calls``, ``feed_openai`` and linear time are checked per dialect.
"""

from __future__ import annotations

import json

import pytest

import agentmsg
from agentmsg import dialects
from test_dialects import case, chunkings_test, marker_soup_test, run_case
from test_parsing_linear import MAX_RATIO, MODES, scaling_ratio

WEATHER = ("get_weather", {"city": "Paris"})
NESTED = ("f", {"a": {"b": [1, None]}, "t": True, "n": -1.5})
UNICODE = ("lookup", {"city": "Zürich 東京 🎉", "emoji": "🎉"})


def js(value):
    return json.dumps(value, ensure_ascii=False)


def py(value):
    """A Python literal as LFM2's template writes one (``repr`` of strings, ``True``, ``None``)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py(k)}: {py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(map(py, value)) + "]"
    return repr(value)


def text(value):
    """A value as the element templates write it: strings as they are, others as JSON."""
    return value if isinstance(value, str) else js(value)


def name_arguments(calls, key="arguments"):
    return "[" + ", ".join(js({"name": n, key: a}) for n, a in calls) + "]"


# How each dialect writes a reply's calls, as its chat template writes them back into history.
def command_r_call(name, arguments):
    """One call as the Command R+ template writes it (``tojson(indent=4)|indent(8)``)."""
    parameters = json.dumps(arguments, ensure_ascii=False, indent=4).replace("\n", "\n        ") if arguments else "{}"
    return '    {\n        "tool_name": "' + name + '",\n        "parameters": ' + parameters + "\n    }"


WRITERS = {
    # The Command R+ template's `Action:` block (after the message's text, trimmed).
    "command_r": lambda calls: "\nAction:\n```json\n[\n" + ",\n".join(command_r_call(n, a) for n, a in calls) + "\n]```\n",
    # As Step 3's chat template tells the model to write them (its system prompt's example).
    "step3": lambda calls: "<｜tool_calls_begin｜>\n" + "".join(
        "<｜tool_call_begin｜>\nfunction<｜tool_sep｜>" + f'<steptml:invoke name="{n}">' + "".join(
            f'<steptml:parameter name="{k}">{text(v)}</steptml:parameter>' for k, v in a.items())
        + "</steptml:invoke><｜tool_call_end｜>\n" for n, a in calls) + "<｜tool_calls_end｜>",
    "seed_oss": lambda calls: "".join(
        f"\n<seed:tool_call>\n<function={n}>\n"
        + "".join(f"<parameter={k}>{text(v)}</parameter>\n" for k, v in a.items()) + "</function>\n</seed:tool_call>"
        for n, a in calls),
    "minimax_m2": lambda calls: "\n<minimax:tool_call>\n" + "".join(
        f'<invoke name="{n}">\n' + "".join(f'<parameter name="{k}">{text(v)}</parameter>\n' for k, v in a.items())
        + "</invoke>\n" for n, a in calls) + "</minimax:tool_call>",
    "magistral": lambda calls: "".join(f"[TOOL_CALLS]{n}[ARGS]{js(a)}" for n, a in calls),
    "granite": lambda calls: "<|tool_call|>" + name_arguments(calls),
    "lfm2": lambda calls: "<|tool_call_start|>[" + ", ".join(
        f"{n}(" + ", ".join(f"{k}={py(v)}" for k, v in a.items()) + ")" for n, a in calls) + "]<|tool_call_end|>",
    "phi4_mini": lambda calls: "<|tool_call|>" + name_arguments(calls) + "<|/tool_call|>",
    "xlam": lambda calls: "```json\n" + name_arguments(calls) + "\n```",
    "hunyuan": lambda calls: "<tool_calls>" + name_arguments(calls) + "</tool_calls>",
    "apertus": lambda calls: "<|tools_prefix|>[" + ", ".join(
        '{"' + n + '": ' + js(a) + "}" for n, a in calls) + "]<|tools_suffix|>",
    "jamba": lambda calls: "<tool_calls>" + name_arguments(calls) + "</tool_calls>",
    "internlm2": lambda calls: "".join(
        "<|action_start|><|plugin|>\n" + js({"name": n, "parameters": a}) + "<|action_end|>" for n, a in calls),
    "hy3": lambda calls: "<tool_calls:opensource>\n" + "".join(
        f"<tool_call:opensource>{n}<tool_sep:opensource>\n" + "".join(
            f"<arg_key:opensource>{k}</arg_key:opensource>\n<arg_value:opensource>{text(v)}</arg_value:opensource>\n"
            for k, v in a.items()) + "</tool_call:opensource>\n" for n, a in calls) + "</tool_calls:opensource>",
    "longcat": lambda calls: "".join(
        "<longcat_tool_call>\n" + js({"name": n, "arguments": a}) + "\n</longcat_tool_call>" for n, a in calls),
}

# Reasoning markers (None: the family writes no reasoning).
THINK = {
    "command_r": None,
    "step3": ("<think>", "</think>"),
    "seed_oss": ("<seed:think>", "</seed:think>"),
    "minimax_m2": ("<think>", "</think>"),
    "magistral": ("[THINK]", "[/THINK]"),
    "granite": ("<think>", "</think>"),
    "lfm2": ("<think>", "</think>"),
    "phi4_mini": None,
    "xlam": ("<think>", "</think>"),
    "hunyuan": ("<think>", "</think>"),
    "apertus": ("<|inner_prefix|>", "<|inner_suffix|>"),
    "jamba": None,
    "internlm2": None,
    "longcat": ("<longcat_think>", "</longcat_think>"),
    "hy3": ("<think:opensource>", "</think:opensource>"),
}

# Families whose values are text, typed by the tool schema.
TEXT_VALUES = {"step3", "seed_oss", "minimax_m2", "hy3"}


def as_text(calls):
    """The calls as a text-valued dialect reads them without tools: every value is its text."""
    return [(n, {k: v if isinstance(v, str) else js(v) for k, v in a.items()}) for n, a in calls]


def common_cases(dialect):
    """The cases every family has, written in its notation."""
    write = WRITERS[dialect]
    typed = as_text if dialect in TEXT_VALUES else (lambda calls: calls)
    text_values = dialect in TEXT_VALUES
    cases = [
        case("plain-text", "The weather in Paris is mild.", out="The weather in Paris is mild."),
        case("one-call", write([WEATHER]), calls=[WEATHER]),
        case("two-calls", write([WEATHER, ("get_time", {"zone": "CET"})]),
             calls=[WEATHER, ("get_time", {"zone": "CET"})]),
        case("text-before-and-after", "Let me check.\n" + write([WEATHER]) + "\nDone.", out="Let me check.\nDone.",
             calls=[WEATHER]),
        case("text-between-calls", "one " + write([("a", {})]) + " two " + write([("b", {})]) + " three",
             out="one\ntwo\nthree", calls=[("a", {}), ("b", {})]),
        case("empty-arguments", write([("now", {})]), calls=[("now", {})]),
        case("unicode", write([UNICODE]), calls=[UNICODE]),
        case("escapes-and-quotes", write([("f", {"s": 'say "hi"\\ now'})]), calls=[("f", {"s": 'say "hi"\\ now'})]),
        case("multiline-value", write([("write", {"body": "line 1\nline 2"})]),
             calls=[("write", {"body": "line 1\nline 2"})]),
        case("partial-marker-in-text", "a < b " + write([WEATHER])[:5], out=("a < b " + write([WEATHER])[:5]).strip()),
        case("max-calls", write([("a", {})]) + write([("b", {})]), calls=[("a", {})], errors=["too_many_calls"],
             max_calls=1),
        case("unknown-tool-flagged", write([WEATHER]), calls=[WEATHER], meta=[{"unknown_tool": True}],
             tools=[{"name": "other", "parameters": {"type": "object", "properties": {}}}]),
    ]
    if not text_values:
        cases += [
            case("nested-arguments", write([NESTED]), calls=[NESTED]),
            case("big-integer", write([("f", {"n": 123456789012345678901234567890})]),
                 calls=[("f", {"n": 123456789012345678901234567890})]),
        ]
    else:
        cases += [case("values-are-text", write([NESTED]), calls=typed([NESTED]))]
    think = THINK[dialect]
    if think:
        open_, close = think
        cases += [
            case("reasoning-then-call", open_ + "The user wants the weather." + close + "\n" + write([WEATHER]),
                 thinking=["The user wants the weather."], calls=[WEATHER]),
            case("reasoning-then-text", open_ + "plan" + close + "Hello.", out="Hello.", thinking=["plan"]),
            case("reasoning-cut-off", open_ + "hmm", thinking=["hmm"], incomplete=True),
            case("starts-inside-reasoning", "plan" + close + "ok", out="ok", thinking=["plan"], start_in_thinking=True),
            case("stray-closer-is-text", "a " + close + " b", out="a " + close + " b", start_in_thinking=False),
            case("call-markers-in-reasoning-prose", open_ + "I could write " + write([WEATHER])[:3] + close + "ok",
                 out="ok", thinking=[("I could write " + write([WEATHER])[:3]).strip()]),
        ]
    else:
        cases += [
            case("think-tags-are-text", "<think>x</think>ok", out="<think>x</think>ok"),
            case("bad-then-good", write([("", {})]) + write([("g", {"a": 1})]), calls=[("g", {"a": 1})],
                 errors=["invalid_field"]),
            case("three-calls", write([("a", {}), ("b", {}), ("c", {})]), calls=[("a", {}), ("b", {}), ("c", {})]),
        ]
    return cases


STEP3_CALL = "<｜tool_call_begin｜>function<｜tool_sep｜>"

COMMAND_R_ACTION = "\nAction:\n```json\n["

SPECIFIC = {
    "command_r": [
        case("template-render", 'I will look.\nAction:\n```json\n[\n    {\n        "tool_name": "get_weather",\n'
             '        "parameters": {\n            "city": "Paris"\n        }\n    }\n]```\n', out="I will look.",
             calls=[WEATHER]),
        case("reply-start-unfenced", 'Action: [{"tool_name": "f", "parameters": {"a": 1}}]', calls=[("f", {"a": 1})]),
        case("same-line-fence", 'Action: ```json [{"tool_name": "f", "parameters": {}}] ```', calls=[("f", {})]),
        case("plain-fence", 'Action:\n```\n[{"tool_name": "f", "parameters": {}}]\n```', calls=[("f", {})]),
        case("mid-line-is-text", 'The Action: [{"tool_name": "f", "parameters": {}}]',
             out='The Action: [{"tool_name": "f", "parameters": {}}]'),
        case("prose-after-action-is-text", "Action: I will search the web.", out="Action: I will search the web."),
        case("other-fence-is-text", "Action:\n```python\nprint(1)\n```", out="Action:\n```python\nprint(1)\n```"),
        case("empty-list-is-text", "Action: []", out="Action: []"),
        case("two-unfenced-actions", 'Action: [{"tool_name": "a", "parameters": {}}]\nAction: [{"tool_name": "b", '
             '"parameters": {}}]\nok', out="ok", calls=[("a", {}), ("b", {})]),
        case("directly-answer-is-a-call", COMMAND_R_ACTION + '{"tool_name": "directly-answer", "parameters": {}}]```',
             calls=[("directly-answer", {})]),
        case("plan-is-text", 'Plan: First I will search.\nAction: ```json\n[{"tool_name": "f", "parameters": {}}]\n```',
             out="Plan: First I will search.", calls=[("f", {})]),
        case("grounded-answer-is-text", "Grounded answer: It is <co: 0>sunny</co: 0>.",
             out="Grounded answer: It is <co: 0>sunny</co: 0>."),
        case("cut-off", "Sure." + COMMAND_R_ACTION + '{"tool_name": "f", "parameters": {"a": ', out="Sure.",
             errors=["unclosed_tool"]),
        case("malformed-item", COMMAND_R_ACTION + '{"tool_name": "f", "parameters": {"a": 1,}}, {"tool_name": "g", '
             '"parameters": {}}]```', calls=[("g", {})], errors=["invalid_json"]),
        case("missing-tool-name", COMMAND_R_ACTION + '{"parameters": {}}]```', errors=["missing_field"]),
        case("fence-in-string", COMMAND_R_ACTION + '{"tool_name": "f", "parameters": {"s": "```"}}]```',
             calls=[("f", {"s": "```"})]),
        case("cohere-markers-are-text", '<|START_ACTION|>[{"tool_name": "f", "parameters": {}}]<|END_ACTION|>',
             out='<|START_ACTION|>[{"tool_name": "f", "parameters": {}}]<|END_ACTION|>'),
    ],
    "step3": [
        case("engines-form", 'Let me help.\n<｜tool_calls_begin｜>\n' + STEP3_CALL + '<steptml:invoke name="search">\n'
             '<steptml:parameter name="query">rust programming</steptml:parameter>\n'
             '<steptml:parameter name="limit">10</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n'
             "<｜tool_calls_end｜>\nHere are the results.", out="Let me help.\nHere are the results.",
             calls=[("search", {"query": "rust programming", "limit": "10"})]),
        case("typed-by-schema", "<｜tool_calls_begin｜>" + STEP3_CALL + '<steptml:invoke name="add">'
             '<steptml:parameter name="a"> 2 </steptml:parameter><steptml:parameter name="ok">true</steptml:parameter>'
             '<steptml:parameter name="l">[1, "x"]</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
             calls=[("add", {"a": 2, "ok": True, "l": [1, "x"]})],
             tools=[{"name": "add", "parameters": {"properties": {"a": {"type": "integer"}, "ok": {"type": "boolean"},
                                                                   "l": {"type": "array"}}}}]),
        case("values-stripped", "<｜tool_calls_begin｜>" + STEP3_CALL + '<steptml:invoke name="f"><steptml:parameter '
             'name="s">\n  a b \n</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
             calls=[("f", {"s": "a b"})]),
        case("invoke-without-type", '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="f">'
             "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>", calls=[("f", {})]),
        case("other-type-is-an-issue", "<｜tool_calls_begin｜><｜tool_call_begin｜>thought<｜tool_sep｜>hmm<｜tool_call_end｜>"
             + STEP3_CALL + '<steptml:invoke name="g"></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>ok',
             out="ok", calls=[("g", {})], errors=["invalid_xml"]),
        case("markers-in-value", "<｜tool_calls_begin｜>" + STEP3_CALL + '<steptml:invoke name="f"><steptml:parameter '
             'name="s">a</steptml:invoke><｜tool_call_end｜>b</steptml:parameter></steptml:invoke><｜tool_call_end｜>'
             "<｜tool_calls_end｜>", calls=[("f", {"s": "a</steptml:invoke><｜tool_call_end｜>b"})]),
        case("invoke-close-missing", "<｜tool_calls_begin｜>" + STEP3_CALL + '<steptml:invoke name="f"><steptml:parameter '
             'name="a">1</steptml:parameter><｜tool_call_end｜><｜tool_calls_end｜>', calls=[("f", {"a": "1"})]),
        case("cut-off", "Sure <｜tool_calls_begin｜>" + STEP3_CALL + '<steptml:invoke name="f"><steptml:parameter name="a">1',
             out="Sure", errors=["unclosed_tool"]),
        case("malformed-is-an-issue", "<｜tool_calls_begin｜>" + STEP3_CALL + '<steptml:invoke name="f">junk'
             "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>after", out="after", errors=["invalid_xml"]),
        case("separator-between-calls-is-text", "<｜tool_calls_begin｜>" + STEP3_CALL + '<steptml:invoke name="a">'
             "</steptml:invoke><｜tool_call_end｜><｜tool_sep｜>" + STEP3_CALL + '<steptml:invoke name="b"></steptml:invoke>'
             "<｜tool_call_end｜><｜tool_calls_end｜>", out="<｜tool_sep｜>", calls=[("a", {}), ("b", {})]),
        case("section-ends-unclosed-reasoning", "<think>plan<｜tool_calls_begin｜>" + STEP3_CALL
             + '<steptml:invoke name="f"></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>', thinking=["plan"],
             calls=[("f", {})]),
        case("deepseek-markers-are-text", "<｜tool▁calls▁begin｜>x", out="<｜tool▁calls▁begin｜>x"),
    ],
    "seed_oss": [
        case("template-example", "<seed:tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>"
             "value_1</parameter>\n<parameter=example_parameter_2>This is the value for the second parameter\nthat can "
             "span\nmultiple lines</parameter>\n</function>\n</seed:tool_call>",
             calls=[("example_function_name", {"example_parameter_1": "value_1", "example_parameter_2":
                     "This is the value for the second parameter\nthat can span\nmultiple lines"})]),
        case("budget-reflection-is-reasoning", "<seed:think>step<seed:cot_budget_reflect>I have used 129 tokens"
             "</seed:cot_budget_reflect>done</seed:think>ok", out="ok",
             thinking=["step<seed:cot_budget_reflect>I have used 129 tokens</seed:cot_budget_reflect>done"]),
        case("typed-by-schema", "<seed:tool_call><function=add><parameter=a>2</parameter><parameter=b>three"
             "</parameter></function></seed:tool_call>", calls=[("add", {"a": 2, "b": "three"})],
             meta=[{"schema_errors": ["parameter 'b' is not an integer; kept as text"]}],
             tools=[{"name": "add", "parameters": {"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}]),
        case("cut-off", "Sure <seed:tool_call><function=f><parameter=a>1", out="Sure", errors=["unclosed_tool"]),
        case("malformed-is-an-issue", "<seed:tool_call><function=f>junk</function></seed:tool_call> after",
             out="after", errors=["invalid_xml"]),
        case("marker-in-prose", "Use <seed:tool_call> to call.", out="Use <seed:tool_call> to call."),
        case("end-marker-in-value", "<seed:tool_call><function=f><parameter=s>a</seed:tool_call>b</parameter>"
             "</function></seed:tool_call>", calls=[("f", {"s": "a</seed:tool_call>b"})]),
        case("call-ends-unclosed-reasoning", "<seed:think>plan<seed:tool_call><function=f></function>"
             "</seed:tool_call>", thinking=["plan"], calls=[("f", {})]),
        case("call-in-reasoning-strict", "<seed:think>plan<seed:tool_call><function=f></function></seed:tool_call>",
             thinking=["plan<seed:tool_call><function=f></function></seed:tool_call>"], incomplete=True, strict=True),
    ],
    "minimax_m2": [
        case("typed-by-schema", '<minimax:tool_call><invoke name="add"><parameter name="a">2</parameter>'
             '<parameter name="o">{"x": [1]}</parameter></invoke></minimax:tool_call>',
             calls=[("add", {"a": 2, "o": {"x": [1]}})],
             tools=[{"name": "add", "parameters": {"properties": {"a": {"type": "integer"}, "o": {"type": "object"}}}}]),
        case("typed-anyof", '<minimax:tool_call><invoke name="f"><parameter name="n">5</parameter></invoke>'
             "</minimax:tool_call>", calls=[("f", {"n": 5})],
             tools=[{"name": "f", "parameters": {"properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}}]),
        case("cut-off", '<minimax:tool_call><invoke name="f"><parameter name="a">1', errors=["unclosed_tool"]),
        case("malformed-is-an-issue", '<minimax:tool_call><invoke name="f">junk</invoke></minimax:tool_call>after',
             out="after", errors=["invalid_xml"]),
        case("section-without-end", '<minimax:tool_call>\n<invoke name="f">\n</invoke>\n', calls=[("f", {})]),
        case("text-in-section-kept", '<minimax:tool_call>note<invoke name="f"></invoke></minimax:tool_call>',
             out="note", calls=[("f", {})]),
        case("end-marker-in-value", '<minimax:tool_call><invoke name="f"><parameter name="s">a</invoke>b'
             "</parameter></invoke></minimax:tool_call>", calls=[("f", {"s": "a</invoke>b"})]),
        case("section-ends-unclosed-reasoning", '<think>plan<minimax:tool_call><invoke name="f"></invoke>'
             "</minimax:tool_call>", thinking=["plan"], calls=[("f", {})]),
        case("unquoted-name", "<minimax:tool_call><invoke name=f><parameter name=a>1</parameter></invoke>"
             "</minimax:tool_call>", calls=[("f", {"a": "1"})]),
    ],
    "magistral": [
        case("plain-think-then-call", '<think>Need the weather.</think>Checking.[TOOL_CALLS]get_weather[ARGS]'
             '{"city": "Paris"}', out="Checking.", thinking=["Need the weather."], calls=[WEATHER]),
        case("plain-think-closes-only-its-own", "<think>a [/THINK] b</think>ok", out="ok", thinking=["a [/THINK] b"]),
        case("plain-think-cut-off", "<think>hmm", thinking=["hmm"], incomplete=True),
        case("plain-stray-closer-is-text", "x </think> y", out="x </think> y", start_in_thinking=False),
        case("started-inside-plain-reasoning", "plan</think>ok", out="ok", thinking=["plan"], start_in_thinking=True),
        case("json-list-form", '[TOOL_CALLS][{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]',
             calls=[("a", {}), ("b", {"x": 1})]),
        case("cut-off", '[TOOL_CALLS]f[ARGS]{"a": ', errors=["unclosed_tool"]),
        case("malformed-is-an-issue", "[TOOL_CALLS]f[ARGS][1] after", out="[1] after", errors=["invalid_json"]),
        case("marker-then-prose", "[TOOL_CALLS] is a token", out="[TOOL_CALLS] is a token"),
    ],
    "granite": [
        case("granite4-tool-call", 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
             "</tool_call>", out="Checking.", calls=[WEATHER]),
        case("granite4-two-calls", '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>'
             '{"name": "b", "arguments": {}}</tool_call>', calls=[("a", {}), ("b", {})]),
        case("granite3-single-object", '<|tool_call|>{"name": "f", "arguments": {"a": 1}}', calls=[("f", {"a": 1})]),
        case("response-tags-dropped", "<think>plan</think><response>The answer.</response>", out="The answer.",
             thinking=["plan"]),
        case("cut-off", '<|tool_call|>[{"name": "f", "arguments": {"a": ', errors=["unclosed_tool"]),
        case("malformed-in-closed-call", '<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call> next',
             out="next", errors=["invalid_json"]),
        case("list-item-malformed", '<|tool_call|>[{"name": "f", "arguments": {"a": 1,}}, {"name": "g", "arguments": {}}]',
             calls=[("g", {})], errors=["invalid_json"]),
        case("marker-then-prose", "Write <|tool_call|> then a list.", out="Write <|tool_call|> then a list."),
        case("empty-list-is-text", "<|tool_call|>[]", out="<|tool_call|>[]"),
        case("missing-name", '<|tool_call|>[{"arguments": {}}]', errors=["missing_field"]),
        case("parameters-key", '<|tool_call|>[{"name": "f", "parameters": {"a": 1}}]', calls=[("f", {"a": 1})]),
    ],
    "lfm2": [
        case("template-form", 'Sure.<|tool_call_start|>[get_weather(city="Paris"), now()]<|tool_call_end|>Done.',
             out="Sure.\nDone.", calls=[WEATHER, ("now", {})]),
        case("bare-list-is-text", "[get_weather(city='Paris')]", out="[get_weather(city='Paris')]"),
        case("cut-off", "<|tool_call_start|>[f(a=1", errors=["unclosed_tool"]),
        case("malformed-is-an-issue-and-text", "<|tool_call_start|>[f(x)]<|tool_call_end|>",
             out="<|tool_call_start|>[f(x)]<|tool_call_end|>", errors=["invalid_json"]),
        case("marker-then-prose", "<|tool_call_start|> nothing", out="<|tool_call_start|> nothing"),
        case("end-marker-missing", "<|tool_call_start|>[f()] then", out="then", calls=[("f", {})]),
        case("python-literals", "<|tool_call_start|>[f(a=(1, 2), b=None, c=True, d={'k': 'v'})]<|tool_call_end|>",
             calls=[("f", {"a": [1, 2], "b": None, "c": True, "d": {"k": "v"}})]),
    ],
    "phi4_mini": [
        case("functools-form", 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]', calls=[WEATHER]),
        case("functools-after-text", 'Sure. functools[{"name": "f", "arguments": {}}] done', out="Sure.\ndone",
             calls=[("f", {})]),
        case("functools-in-prose", "the functools module", out="the functools module"),
        case("cut-off", '<|tool_call|>[{"name": "f", "arguments": {"a": 1', errors=["unclosed_tool"]),
        case("malformed-ended-by-closer", '<|tool_call|>[{"name": "f" "arguments": {}}]<|/tool_call|> after',
             out="after", errors=["invalid_json"]),
        case("closer-missing", '<|tool_call|>[{"name": "f", "arguments": {}}] after', out="after", calls=[("f", {})]),
        case("parameters-key", '<|tool_call|>[{"name": "f", "parameters": {"a": 1}}]<|/tool_call|>',
             calls=[("f", {"a": 1})]),
        case("marker-then-prose", "<|tool_call|> hello", out="<|tool_call|> hello"),
    ],
    "xlam": [
        case("bare-list", '[{"name": "get_weather", "arguments": {"city": "Paris"}}]', calls=[WEATHER]),
        case("bare-list-after-blanks", '\n  [{"name": "f", "arguments": {}}]\nok', out="ok", calls=[("f", {})]),
        case("list-after-reasoning", '<think>plan</think>\n[{"name": "f", "arguments": {}}]', thinking=["plan"],
             calls=[("f", {})]),
        case("list-in-prose-is-text", 'Here: [{"name": "f", "arguments": {}}]',
             out='Here: [{"name": "f", "arguments": {}}]'),
        case("plain-fence", '```\n[{"name": "f", "arguments": {}}]\n```', calls=[("f", {})]),
        case("other-fence-is-text", "```python\nprint(1)\n```", out="```python\nprint(1)\n```"),
        case("tool-calls-token", '[TOOL_CALLS][{"name": "f", "arguments": {}}]', calls=[("f", {})]),
        case("tool-call-tags", '<tool_call>[{"name": "f", "arguments": {}}]</tool_call>', calls=[("f", {})]),
        case("number-list-is-text", "[1, 2, 3]", out="[1, 2, 3]"),
        case("cut-off", '[{"name": "f", "arguments": {"a": 1', errors=["unclosed_tool"]),
        case("malformed-ended-by-fence", '```json\n[{"name": "f", "arguments": {"a": 1}\n``` after', out="after",
             errors=["invalid_json"]),
    ],
    "hunyuan": [
        case("answer-tags-dropped", "<think>\nplan\n</think>\n<answer>\nHello.\n</answer>", out="Hello.",
             thinking=["plan"]),
        case("calls-in-answer", '<answer>Checking.<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls></answer>',
             out="Checking.", calls=[("f", {})]),
        case("cut-off", '<tool_calls>[{"name": "f", "argu', errors=["unclosed_tool"]),
        case("malformed-ended-by-closer", '<tool_calls>[{"name": "f", "arguments": {"a": }}]</tool_calls> after',
             out="after", errors=["invalid_json"]),
        case("marker-then-prose", "<tool_calls> are listed", out="<tool_calls> are listed"),
        case("calls-end-unclosed-reasoning", '<think>plan<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>',
             thinking=["plan"], calls=[("f", {})]),
        case("calls-in-reasoning-strict", '<think>plan<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>',
             thinking=['plan<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>'], incomplete=True, strict=True),
    ],
    "apertus": [
        case("template-form", '<|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"now": {}}]<|tools_suffix|>',
             calls=[WEATHER, ("now", {})]),
        case("calls-inside-reasoning", '<|inner_prefix|>I need the weather.<|tools_prefix|>[{"get_weather": '
             '{"city": "Paris"}}]<|tools_suffix|>', thinking=["I need the weather."], calls=[WEATHER]),
        case("reasoning-closer-after-calls-dropped", '<|inner_prefix|>plan<|tools_prefix|>[{"f": {}}]<|tools_suffix|>'
             "<|inner_suffix|>Done.", out="Done.", thinking=["plan"], calls=[("f", {})]),
        case("two-names-is-an-issue", '<|tools_prefix|>[{"f": {}, "g": {}}]<|tools_suffix|>', errors=["invalid_field"]),
        case("arguments-not-object", '<|tools_prefix|>[{"f": [1]}]<|tools_suffix|>', errors=["invalid_field"]),
        case("empty-object", "<|tools_prefix|>[{}]<|tools_suffix|>", errors=["missing_field"]),
        case("cut-off", '<|tools_prefix|>[{"f": {"a": ', errors=["unclosed_tool"]),
        case("malformed-ended-by-closer", '<|tools_prefix|>[{"f": {"a" 1}}]<|tools_suffix|> after', out="after",
             errors=["invalid_json"]),
        case("marker-then-prose", "<|tools_prefix|> x", out="<|tools_prefix|> x"),
    ],
    "jamba": [
        case("vllm-style", '<tool_calls>[\n  {"name": "get_weather", "arguments": {"city": "Paris"}}\n]</tool_calls>',
             calls=[WEATHER]),
        case("cut-off", '<tool_calls>[{"name": "f", "arguments": {"a": "x', errors=["unclosed_tool"]),
        case("malformed-ended-by-closer", '<tool_calls>[{"name": "f", "arguments": {"a": 1,}}, {"name": "g", '
             '"arguments": {}}]</tool_calls> after', out="after", calls=[("g", {})], errors=["invalid_json"]),
        case("junk-after-item-ends-list", '<tool_calls>[{"name": "f", "arguments": {}} x]</tool_calls>',
             out="x]</tool_calls>", calls=[("f", {})]),
        case("marker-then-prose", "Emit <tool_calls> tags.", out="Emit <tool_calls> tags."),
        case("think-is-text", "<think>x</think>", out="<think>x</think>"),
        case("closer-in-string", '<tool_calls>[{"name": "f", "arguments": {"s": "</tool_calls>"}}]</tool_calls>',
             calls=[("f", {"s": "</tool_calls>"})]),
        case("missing-name", '<tool_calls>[{"arguments": {}}]</tool_calls>', errors=["missing_field"]),
    ],
    "internlm2": [
        case("template-form", 'Let me search.<|action_start|><|plugin|>\n{"name": "search", "parameters": '
             '{"q": "x"}}<|action_end|>\n', out="Let me search.", calls=[("search", {"q": "x"})]),
        case("arguments-key", '<|action_start|><|plugin|>{"name": "f", "arguments": {"a": 1}}<|action_end|>',
             calls=[("f", {"a": 1})]),
        case("interpreter-is-text", "<|action_start|><|interpreter|>\nprint(1)<|action_end|>",
             out="<|action_start|><|interpreter|>\nprint(1)<|action_end|>"),
        case("cut-off", '<|action_start|><|plugin|>{"name": "f", "para', errors=["unclosed_tool"]),
        case("malformed-ended-by-closer", '<|action_start|><|plugin|>{"name": "f", "parameters": {"a": }<|action_end|>'
             " after", out="after", errors=["invalid_json"]),
        case("closer-missing", '<|action_start|><|plugin|>{"name": "f", "parameters": {}} after', out="after",
             calls=[("f", {})]),
        case("closer-in-string", '<|action_start|><|plugin|>{"name": "f", "parameters": {"s": "<|action_end|>"}}'
             "<|action_end|>", calls=[("f", {"s": "<|action_end|>"})]),
        case("marker-then-prose", "<|action_start|><|plugin|> none", out="<|action_start|><|plugin|> none"),
    ],
    "hy3": [
        case("template-form", "Checking.<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
             "<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Paris</arg_value:opensource>\n"
             "</tool_call:opensource>\n</tool_calls:opensource>", out="Checking.", calls=[WEATHER]),
        case("typed-by-schema", "<tool_calls:opensource><tool_call:opensource>add<tool_sep:opensource><arg_key:opensource>a"
             "</arg_key:opensource><arg_value:opensource> 2 </arg_value:opensource></tool_call:opensource>"
             "</tool_calls:opensource>", calls=[("add", {"a": 2})],
             tools=[{"name": "add", "parameters": {"properties": {"a": {"type": "integer"}}}}]),
        case("cut-off", "<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource><arg_key:opensource>a",
             errors=["unclosed_tool"]),
        case("no-separator-is-an-issue", "<tool_calls:opensource><tool_call:opensource>f</tool_call:opensource>"
             "</tool_calls:opensource> after", out="after", errors=["invalid_xml"]),
        case("malformed-is-an-issue", "<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource>junk"
             "</tool_call:opensource></tool_calls:opensource>after", out="after", errors=["invalid_xml"]),
        case("section-ends-unclosed-reasoning", "<think:opensource>plan<tool_calls:opensource><tool_call:opensource>f"
             "<tool_sep:opensource></tool_call:opensource></tool_calls:opensource>", thinking=["plan"], calls=[("f", {})]),
        case("plain-markers-are-text", "<tool_calls>[x]</tool_calls> <think>y</think>",
             out="<tool_calls>[x]</tool_calls> <think>y</think>"),
        case("section-without-end", "<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource>"
             "</tool_call:opensource>", calls=[("f", {})]),
    ],
    "longcat": [
        case("cut-off", 'Sure <longcat_tool_call>{"name": "f", "argu', out="Sure", errors=["unclosed_tool"]),
        case("malformed-is-an-issue", '<longcat_tool_call>{"name": "f", "arguments": {"a": 1}</longcat_tool_call> next',
             out="next", errors=["invalid_json"]),
        case("marker-in-prose", "Use <longcat_tool_call> tags.", out="Use <longcat_tool_call> tags."),
        case("end-marker-in-string", '<longcat_tool_call>{"name": "f", "arguments": {"s": "</longcat_tool_call>"}}'
             "</longcat_tool_call>", calls=[("f", {"s": "</longcat_tool_call>"})]),
        case("missing-name", '<longcat_tool_call>{"arguments": {}}</longcat_tool_call>', errors=["missing_field"]),
        case("call-ends-unclosed-reasoning", '<longcat_think>plan<longcat_tool_call>{"name": "f", "arguments": {}}'
             "</longcat_tool_call>", thinking=["plan"], calls=[("f", {})]),
        case("plain-think-is-text", "<think>x</think>", out="<think>x</think>"),
    ],
}

CASES = {dialect: common_cases(dialect) + SPECIFIC[dialect] for dialect in WRITERS}
ALL_CASES = [(dialect, c) for dialect, cases in CASES.items() for c in cases]


def test_every_family_is_a_dialect_with_25_cases_or_more():
    assert set(CASES) <= set(agentmsg.DIALECTS)
    assert {dialect: len(cases) for dialect, cases in CASES.items() if len(cases) < 25} == {}


@pytest.mark.parametrize("dialect, text, expected, options",
                         [pytest.param(d, *c.values, id=f"{d}-{c.id}") for d, c in ALL_CASES])
def test_conformance(dialect, text, expected, options):
    run_case(dialect, text, expected, options)


@pytest.mark.parametrize("dialect, text, expected, options",
                         [pytest.param(d, *c.values, id=f"{d}-{c.id}") for d, c in ALL_CASES])
def test_feed_openai_equals_openai_deltas_of_the_events(dialect, text, expected, options):
    options = {k: v for k, v in options.items() if k != "start_in_thinking"}
    pieces = [text[i:i + 3] for i in range(0, len(text), 3)]
    by_events = dialects.StreamParser(dialect=dialect, start_in_thinking=False, **options)
    by_deltas = dialects.StreamParser(dialect=dialect, start_in_thinking=False, **options)
    events, deltas = [], []
    for piece in pieces:
        events += by_events.feed(piece)
        deltas += by_deltas.feed_openai(piece)
    events += by_events.finish()
    deltas += by_deltas.finish_openai()
    assert deltas == dialects.openai_deltas(events)


@pytest.mark.parametrize("dialect", sorted(WRITERS))
def test_strict_is_accepted_and_max_calls_bounds_every_family(dialect):
    write = WRITERS[dialect]
    text = write([("a", {})]) + " x " + write([("b", {})]) + " y " + write([("c", {})])
    parsed = dialects.parse(text, dialect=dialect, max_calls=2, strict=True)
    assert [c.name for c in parsed.tool_calls] == ["a", "b"]
    [issue] = parsed.errors
    assert issue.kind == "too_many_calls" and text[issue.span[0]:issue.span[1]] == issue.raw
    # The rest from the third call's own opener on (minimax_m2: its <invoke>, inside the section).
    assert text.endswith(issue.raw) and write([("c", {})]).endswith(issue.raw) and "c" in issue.raw


def _grouped(cases):
    grouped = {}
    for dialect, c in cases:
        grouped.setdefault(dialect, []).append(c)
    return list(grouped.items())


test_random_chunkings_of_every_case = chunkings_test(_grouped(ALL_CASES), 300)

SOUPS = {
    "command_r": ["\nAction:", "Action:", "```json", "```", "\n", "[", "]", "{", "}", '{"tool_name": "f", "parameters": ',
                  "{}", ",", '"', "Plan:", "x", " "],
    "step3": ["<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>", "<｜tool_call_end｜>",
              "<｜tool_sep｜>", "function", '<steptml:invoke name="f">', "</steptml:invoke>",
              '<steptml:parameter name="a">', "</steptml:parameter>", "<think>", "</think>", "x", " ", "\n", "<"],
    "hy3": ["<tool_calls:opensource>", "</tool_calls:opensource>", "<tool_call:opensource>", "</tool_call:opensource>",
            "<tool_sep:opensource>", "<arg_key:opensource>", "</arg_key:opensource>", "<arg_value:opensource>",
            "</arg_value:opensource>", "<think:opensource>", "</think:opensource>", "f", "x", " ", "\n", "<"],
    "seed_oss": ["<seed:tool_call>", "</seed:tool_call>", "<function=f>", "</function>", "<parameter=a>",
                 "</parameter>", "<function=", "<seed:think>", "</seed:think>", "x", " ", "\n", "<", ">"],
    "minimax_m2": ["<minimax:tool_call>", "</minimax:tool_call>", '<invoke name="f">', "</invoke>",
                   '<parameter name="a">', "</parameter>", "<think>", "</think>", "x", " ", "\n", "<", '"'],
    "magistral": ["[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]", "<think>", "</think>", "f", "{}", "[", "]",
                  '{"name": "a", "arguments": {}}', ",", "x", " "],
    "granite": ["<|tool_call|>", "<tool_call>", "</tool_call>", "[", "]", "{", "}", '{"name": "f", "arguments": ',
                "{}", ",", '"', "<think>", "</think>", "<response>", "</response>", "x", " "],
    "lfm2": ["<|tool_call_start|>", "<|tool_call_end|>", "[", "]", "f(", ")", "a=", "'s'", "1", ",", "(",
             "<think>", "</think>", "x", " ", "\n"],
    "phi4_mini": ["<|tool_call|>", "<|/tool_call|>", "functools", "[", "]", "{", "}", '{"name": "f", "arguments": ',
                  "{}", ",", '"', "x", " "],
    "xlam": ["```", "json", "\n", "[TOOL_CALLS]", "<tool_call>", "</tool_call>", "[", "]", "{", "}",
             '{"name": "f", "arguments": ', "{}", ",", '"', "<think>", "</think>", "x", " "],
    "hunyuan": ["<tool_calls>", "</tool_calls>", "[", "]", "{", "}", '{"name": "f", "arguments": ', "{}", ",", '"',
                "<think>", "</think>", "<answer>", "</answer>", "x", " "],
    "apertus": ["<|tools_prefix|>", "<|tools_suffix|>", "<|inner_prefix|>", "<|inner_suffix|>", "[", "]", "{", "}",
                '{"f": ', "{}", ",", '"', "x", " "],
    "jamba": ["<tool_calls>", "</tool_calls>", "[", "]", "{", "}", '{"name": "f", "arguments": ', "{}", ",", '"',
              "\\", "x", " "],
    "internlm2": ["<|action_start|><|plugin|>", "<|action_start|>", "<|plugin|>", "<|action_end|>", "{", "}",
                  '{"name": "f", "parameters": ', "{}", '"', "x", " "],
    "longcat": ["<longcat_tool_call>", "</longcat_tool_call>", '{"name": "f", "arguments": ', "{}", "{", "}", '"',
                "<longcat_think>", "</longcat_think>", "x", " "],
}

test_marker_soups_stream_as_whole = marker_soup_test(SOUPS, any_start=True)


def adversarial(dialect):
    """A family of texts that would make a re-scanning parser quadratic: many possible openers,
    then one long open call full of marker prefixes."""
    write = WRITERS[dialect]
    opener = write([("f", {"s": "X"})]).split("X")[0]
    return lambda n: (opener[:-3] + " ") * n + opener + (opener[:-2] + "\\\" ") * n


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("dialect", sorted(WRITERS))
def test_time_is_linear(dialect, mode):
    ratio = scaling_ratio(adversarial(dialect), MODES[mode], {"dialect": dialect})
    assert ratio < MAX_RATIO, f"{dialect} {mode}: 8x the text took {ratio:.1f}x the time"


def test_command_r_reads_back_what_its_template_writes():
    """The Command R+ template's render of an assistant turn with text and two calls, read back
    whole and one character at a time."""
    from pathlib import Path

    template = (Path(__file__).parent / "data" / "chat_templates" / "CohereForAI-c4ai-command-r-plus-tool_use.jinja")
    calls = [WEATHER, NESTED, ("now", {})]
    tool_calls = [{"id": f"call{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                  for i, (n, a) in enumerate(calls)]
    messages = [{"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": "I will look it up.", "tool_calls": tool_calls}]
    rendered = agentmsg.render_chat(messages, template.read_text(encoding="utf-8"), add_generation_prompt=False,
                                    tools=[{"type": "function", "function": {"name": "get_weather", "description": "d",
                                            "parameters": {"type": "object", "properties": {}, "required": []}}}])
    turn = rendered.split("<|CHATBOT_TOKEN|>")[1].split("<|START_OF_TURN_TOKEN|>")[0]
    assert turn.startswith("I will look it up.\nAction:\n```json\n[")
    parsed = dialects.parse(turn, dialect="command_r")
    assert (parsed.text, [(c.name, c.input) for c in parsed.tool_calls], parsed.errors) == (
        "I will look it up.", calls, [])
    stream = dialects.StreamParser(dialect="command_r")
    for ch in turn:
        stream.feed(ch)
    stream.finish()
    assert stream.result() == parsed
