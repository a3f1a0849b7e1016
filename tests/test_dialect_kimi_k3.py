"""kimi_k3: Kimi K3's XTML (``<|open|>TAG attr="v"<|sep|>`` … ``<|close|>TAG<|sep|>``), written from
its chat template (tests/data/chat_templates/Kimi-K3.jinja) and read back from the template's own
renders.

Every case runs through ``run_case`` of ``test_dialects``: parsed whole, then streamed with every
1-, 2- and 3-character chunking, each stream equal to the whole result. Random chunkings and
marker soups (hypothesis), ``max_calls``, ``strict``, ``feed_openai`` and linear time are checked
as for the other families.
"""

from __future__ import annotations

import json

import pytest

import agentmsg
from agentmsg import dialects
from test_dialects import case, chunkings_test, marker_soup_test, run_case
from test_parsing_linear import MAX_RATIO, MODES, scaling_ratio

TEMPLATE = "tests/data/chat_templates/Kimi-K3.jinja"
WEATHER = ("get_weather", {"city": "Paris"})
NESTED = ("f", {"a": {"b": [1, None]}, "t": True, "n": -1.5})
UNICODE = ("lookup", {"city": "Zürich 東京 🎉", "emoji": "🎉"})
TOOLS_OPEN, TOOLS_CLOSE = "<|open|>tools<|sep|>", "<|close|>tools<|sep|>"


def attr(value):
    return str(value).replace("&", "&amp;").replace('"', "&quot;")


def xtml_type(value):
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array"


def call(name, arguments, index=1):
    """One call as the template writes it: strings raw, other values as JSON."""
    return f'<|open|>call tool="{attr(name)}" index="{index}"<|sep|>' + "".join(
        f'<|open|>argument key="{attr(k)}" type="{xtml_type(v)}"<|sep|>'
        + (v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) + "<|close|>argument<|sep|>"
        for k, v in arguments.items()) + "<|close|>call<|sep|>"


def write(calls):
    """A reply's tools element."""
    return TOOLS_OPEN + "".join(call(n, a, i) for i, (n, a) in enumerate(calls, 1)) + TOOLS_CLOSE


def response(text):
    return f"<|open|>response<|sep|>{text}<|close|>response<|sep|>"


def json_call(name, body):
    return f'<|open|>call tool="{name}" index="1"<|sep|><|open|>json type="object"<|sep|>{body}<|close|>json<|sep|><|close|>call<|sep|>'


ADD = [{"name": "add", "parameters": {"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}]

CASES = [
    case("plain-text", "The weather in Paris is mild.", out="The weather in Paris is mild."),
    case("response-unwrapped", response("Hello."), out="Hello."),
    case("one-call", write([WEATHER]), calls=[WEATHER]),
    case("two-calls", write([WEATHER, ("get_time", {"zone": "CET"})]), calls=[WEATHER, ("get_time", {"zone": "CET"})]),
    case("response-then-call", response("Let me check.") + write([WEATHER]), out="Let me check.", calls=[WEATHER]),
    case("completion-after-the-generation-prompt",
         "plan<|close|>think<|sep|>" + response("ok") + write([WEATHER]) + "<|close|>message<|sep|><|end_of_msg|>",
         out="ok", thinking=["plan"], calls=[WEATHER], start_in_thinking=True),
    case("reasoning-then-call", "<|open|>think<|sep|>The user wants the weather.<|close|>think<|sep|>" + write([WEATHER]),
         thinking=["The user wants the weather."], calls=[WEATHER]),
    case("reasoning-then-text", "<|open|>think<|sep|>plan<|close|>think<|sep|>Hello.", out="Hello.", thinking=["plan"]),
    case("reasoning-cut-off", "<|open|>think<|sep|>hmm", thinking=["hmm"], incomplete=True),
    case("stray-closer-is-text", "a <|close|>think<|sep|> b", out="a <|close|>think<|sep|> b", start_in_thinking=False),
    case("text-between-calls", "one " + write([("a", {})]) + " two " + write([("b", {})]) + " three",
         out="one\ntwo\nthree", calls=[("a", {}), ("b", {})]),
    case("empty-arguments", write([("now", {})]), calls=[("now", {})]),
    case("unicode", write([UNICODE]), calls=[UNICODE]),
    case("raw-string-with-quotes", write([("f", {"s": 'say "hi"\\ now'})]), calls=[("f", {"s": 'say "hi"\\ now'})]),
    case("multiline-value", write([("write", {"body": "line 1\nline 2\n"})]), calls=[("write", {"body": "line 1\nline 2\n"})]),
    case("typed-values", write([NESTED]), calls=[NESTED]),
    case("big-integer", write([("f", {"n": 123456789012345678901234567890})]),
         calls=[("f", {"n": 123456789012345678901234567890})]),
    case("escaped-attributes", write([('a&"b', {'k&"': "v"})]), calls=[('a&"b', {'k&"': "v"})]),
    case("json-element", TOOLS_OPEN + json_call("f", ' {"a": [1, 2], "s": "<|close|>call<|sep|>"} ') + TOOLS_CLOSE,
         calls=[("f", {"a": [1, 2], "s": "<|close|>call<|sep|>"})]),
    case("json-element-not-an-object", TOOLS_OPEN + json_call("f", "[1]") + TOOLS_CLOSE + " after", out="after",
         errors=["invalid_xml"]),
    case("typed-by-schema", write([("add", {"a": "2", "b": 3})]), calls=[("add", {"a": 2, "b": 3})], tools=ADD,
         meta=[{}]),
    case("schema-error-kept-as-text", write([("add", {"a": "two"})]), calls=[("add", {"a": "two"})], tools=ADD,
         meta=[{"schema_errors": ["parameter 'a' is not an integer; kept as text"]}]),
    case("bad-json-kept-as-text", TOOLS_OPEN + '<|open|>call tool="f"<|sep|><|open|>argument key="o" type="object"<|sep|>'
         "{oops<|close|>argument<|sep|><|close|>call<|sep|>" + TOOLS_CLOSE, calls=[("f", {"o": "{oops"})],
         meta=[{"schema_errors": ["parameter 'o' is not a number or a boolean or an object or an array; kept as text"]}]),
    case("unknown-tool-flagged", write([WEATHER]), calls=[WEATHER], meta=[{"unknown_tool": True}],
         tools=[{"name": "other", "parameters": {"type": "object", "properties": {}}}]),
    case("max-calls", write([("a", {}), ("b", {})]), calls=[("a", {})], errors=["too_many_calls"], max_calls=1),
    case("cut-off", "Sure " + TOOLS_OPEN + '<|open|>call tool="f"<|sep|><|open|>argument key="a" type="string"<|sep|>1',
         out="Sure", errors=["unclosed_tool"]),
    case("malformed-is-an-issue", TOOLS_OPEN + '<|open|>call tool="f"<|sep|>junk<|close|>call<|sep|>' + TOOLS_CLOSE
         + " after", out="after", errors=["invalid_xml"]),
    case("missing-tool-name", TOOLS_OPEN + '<|open|>call index="1"<|sep|><|close|>call<|sep|>' + write([("g", {"a": 1})]),
         calls=[("g", {"a": 1})], errors=["missing_field"]),
    case("closing-tags-in-a-string-value", write([("f", {"s": "a<|close|>call<|sep|><|close|>tools<|sep|>b"})]),
         calls=[("f", {"s": "a<|close|>call<|sep|><|close|>tools<|sep|>b"})]),
    case("tools-end-unclosed-reasoning", "<|open|>think<|sep|>plan" + write([WEATHER]), thinking=["plan"],
         calls=[WEATHER]),
    case("tools-in-reasoning-strict", "<|open|>think<|sep|>plan" + write([("f", {})]),
         thinking=["plan" + write([("f", {})])], incomplete=True, strict=True),
    case("call-without-tools-tag", "ok " + call("f", {"a": 1}), out="ok", calls=[("f", {"a": 1})]),
    case("call-without-tools-tag-strict", "ok " + call("f", {}), out="ok " + call("f", {}), strict=True),
    case("unknown-tag-is-text", "<|open|>foo<|sep|>x<|close|>foo<|sep|>", out="<|open|>foo<|sep|>x<|close|>foo<|sep|>"),
    case("partial-markers-are-text", "a <| b <|open", out="a <| b <|open"),
    case("blanks-inside-tags", '<|open|> tools <|sep|><|open|>call  tool="f" <|sep|><|close|> call <|sep|>',
         calls=[("f", {})]),
    case("end-of-message-dropped", response("ok") + "<|close|>message<|sep|><|end_of_msg|>", out="ok"),
]


def test_at_least_25_cases():
    assert "kimi_k3" in agentmsg.DIALECTS
    assert len(CASES) >= 25


@pytest.mark.parametrize("text, expected, options", CASES)
def test_conformance(text, expected, options):
    run_case("kimi_k3", text, expected, options)


@pytest.mark.parametrize("text, expected, options", CASES)
def test_feed_openai_equals_openai_deltas_of_the_events(text, expected, options):
    options = {k: v for k, v in options.items() if k != "start_in_thinking"}
    pieces = [text[i:i + 3] for i in range(0, len(text), 3)]
    by_events = dialects.StreamParser(dialect="kimi_k3", start_in_thinking=False, **options)
    by_deltas = dialects.StreamParser(dialect="kimi_k3", start_in_thinking=False, **options)
    events, deltas = [], []
    for piece in pieces:
        events += by_events.feed(piece)
        deltas += by_deltas.feed_openai(piece)
    events += by_events.finish()
    deltas += by_deltas.finish_openai()
    assert deltas == dialects.openai_deltas(events)


def test_strict_is_accepted_and_max_calls_bounds_the_calls():
    text = write([("a", {})]) + " x " + write([("b", {})]) + " y " + write([("c", {})])
    parsed = dialects.parse(text, dialect="kimi_k3", max_calls=2, strict=True)
    assert [c.name for c in parsed.tool_calls] == ["a", "b"]
    [issue] = parsed.errors
    assert issue.kind == "too_many_calls" and text[issue.span[0]:issue.span[1]] == issue.raw
    assert issue.raw == call("c", {}) + TOOLS_CLOSE


def test_whole_text_finds_a_reply_that_starts_in_reasoning():
    parsed = dialects.parse("plan<|close|>think<|sep|>" + response("ok"), dialect="kimi_k3")
    assert (parsed.thinking, parsed.text) == (["plan"], "ok")


MESSAGES = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": "Let me check.", "reasoning_content": "The user wants the weather.",
     "tool_calls": [
         {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps(
             {"city": 'Pa"r&is <|close|>', "days": 3, "units": {"temp": ["C", None]}, "hourly": True, "z": None})}},
         {"id": "c2", "type": "function", "function": {"name": 'odd&"name', "arguments": "{}"}},
         {"id": "c3", "type": "function", "function": {"name": "big", "arguments": '{"n": 123456789012345678901234567890, "x": -1.5e-7}'}},
     ]},
]


@pytest.mark.parametrize("thinking", [True, False])
def test_the_templates_own_render_reads_back(thinking):
    """The assistant message the template renders, cut after its generation prompt, reads back as
    the message: its reasoning, its text and its calls."""
    template = agentmsg.ChatTemplate.from_file(TEMPLATE)
    prompt = agentmsg.render_chat(MESSAGES[:1], template, thinking=thinking)
    full = agentmsg.render_chat(MESSAGES, template, add_generation_prompt=False, thinking=thinking)
    assert full.startswith(prompt)
    completion = full[len(prompt):]
    parsed = dialects.parse(completion, dialect="kimi_k3", start_in_thinking=thinking)
    assert parsed.thinking == (["The user wants the weather."] if thinking else [])
    assert parsed.text == "Let me check."
    expected = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in MESSAGES[1]["tool_calls"]]
    assert [(c.name, c.input) for c in parsed.tool_calls] == expected
    assert parsed.errors == []
    for size in (1, 2, 7):
        parser = dialects.StreamParser(dialect="kimi_k3", start_in_thinking=thinking)
        for i in range(0, len(completion), size):
            parser.feed(completion[i:i + size])
        parser.finish()
        assert parser.result() == parsed


def test_dialect_for_model():
    assert agentmsg.dialect_for_model("moonshotai/Kimi-K3") == {"dialect": "kimi_k3", "start_in_thinking": True}
    assert agentmsg.dialect_for_model("kimi-k3-instruct")["dialect"] == "kimi_k3"
    assert agentmsg.dialect_for_model("kimi_k3")["dialect"] == "kimi_k3"
    assert agentmsg.dialect_for_model("moonshotai/Kimi-K2-Instruct") == {"dialect": "kimi_k2"}


test_random_chunkings_of_every_case = chunkings_test([("kimi_k3", CASES)], 300)

SOUPS = {"kimi_k3": [
    "<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>", "think", "response", "tools", "call", " tool=\"f\"",
    "argument", ' key="a"', ' type="number"', ' type="string"', "json", "<|open|>think<|sep|>", "<|close|>think<|sep|>",
    TOOLS_OPEN, TOOLS_CLOSE, '<|open|>call tool="f"<|sep|>', "<|close|>call<|sep|>",
    '<|open|>argument key="a" type="number"<|sep|>', "<|close|>argument<|sep|>", '<|open|>json type="object"<|sep|>',
    "<|close|>json<|sep|>", '{"a": 1}', "1", "&quot;", "<|", "x", " ", "\n", '"',
]}

test_marker_soups_stream_as_whole = marker_soup_test(SOUPS, any_start=True)


def adversarial(n):
    """Many possible tags, then one long open string value full of closing-tag prefixes."""
    opener = TOOLS_OPEN + '<|open|>call tool="f"<|sep|><|open|>argument key="s" type="string"<|sep|>'
    return "<|open|>thin <|clo <|open|>tool " * n + opener + "<|close|>argumen <|" * n


@pytest.mark.parametrize("mode", sorted(MODES))
def test_time_is_linear(mode):
    ratio = scaling_ratio(adversarial, MODES[mode], {"dialect": "kimi_k3"})
    assert ratio < MAX_RATIO, f"kimi_k3 {mode}: 8x the text took {ratio:.1f}x the time"
