"""Parse results are built without ``__init__`` (rust/agentmsg-py/src/results.rs): the binding
fills the slots of ``TextBlock``, ``ThinkingBlock``, ``ToolUseBlock``, ``ParseIssue`` and ``Parsed``
directly. These tests keep that from drifting from the Python classes: the binding's field table
must be the dataclasses' fields, and every result must equal the same values passed through the
class's constructor (so its ``__post_init__`` checks would have passed: they are unnecessary, not
skipped)."""

from __future__ import annotations

import dataclasses
import importlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import _core, dialects

TABLE = _core.result_classes()


def _class(module: str, name: str) -> type:
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("module, name, fields", TABLE, ids=[name for _, name, _ in TABLE])
def test_the_binding_fills_every_field_of_the_dataclass_in_order(module, name, fields):
    cls = _class(module, name)
    assert dataclasses.is_dataclass(cls)
    assert [f.name for f in dataclasses.fields(cls)] == fields
    # Frozen and slotted: the binding writes the slots the dataclass declares, nothing else.
    assert cls.__dataclass_params__.frozen
    assert tuple(cls.__slots__) == tuple(fields)


def test_the_table_is_every_class_a_parse_result_or_stream_event_is_made_of():
    parsed = agentmsg.parse(
        '<think>plan</think>Hi <tool>{"tool_name": "t", "arguments": {}}</tool> <tool>{"x": 1}</tool>'
    )
    stream = agentmsg.StreamParser()
    events = stream.feed('<think>plan</think>Hi <tool>{"tool_name": "t", "arguments": {}}</tool> <tool>{') + stream.finish()
    events += dialects.StreamParser(dialect="hermes").feed('<tool_call>{"name": "f", "arguments": {}}</tool_call>')
    made_of = {type(obj) for obj in [parsed, *parsed.blocks, *parsed.errors, *events]}
    assert {(cls.__module__, cls.__name__) for cls in made_of} == {(m, n) for m, n, _ in TABLE}


def _rebuilt(obj):
    cls = type(obj)
    return cls(**{f.name: getattr(obj, f.name) for f in dataclasses.fields(cls)})


def assert_as_constructed(parsed) -> None:
    """Each object of a result equals its fields passed through its class's constructor."""
    objects = [parsed, *parsed.blocks, *parsed.errors, *parsed.tool_calls]
    for obj in objects:
        again = _rebuilt(obj)
        assert type(again) is type(obj)
        assert again == obj


# -- texts with every kind of block and bad call --------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)

# Number tokens as models write them, some past what a float or an int can hold.
raw_numbers = st.sampled_from(["1e400", "-1e400", "1e-400", "2e308", "1.7976931348623157e308", "-0", "1" * 40, "9" * 4301])

names = st.sampled_from(["get_weather", "", "t", "名前"])


@st.composite
def json_calls(draw) -> str:
    payload = {"tool_name": draw(st.one_of(names, json_values)), "arguments": draw(st.dictionaries(st.text(max_size=4), json_values, max_size=3))}
    if draw(st.booleans()):
        payload["server_name"] = draw(st.one_of(st.just("remote"), json_values))
    if draw(st.booleans()):
        payload["extra"] = draw(json_values)
    text = json.dumps(payload, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        # A raw number token in the arguments, spliced in as the model wrote it.
        text = text.replace('"arguments": {', '"arguments": {"n": %s, ' % draw(raw_numbers), 1).replace(", }", "}")
    if draw(st.booleans()):
        text = json.dumps({"tool_name": "t", "arguments": text})  # arguments as a JSON string
    return f"<tool>{text}</tool>"


xml_calls = st.builds(
    lambda name, key, value: f"<tool><tool_name>{name}</tool_name><arguments><{key}>{value}</{key}></arguments></tool>",
    names,
    st.sampled_from(["path", "n", "a"]),
    st.sampled_from(["a.go", "1 &lt; 2", '{"x": 1e400}', "<![CDATA[<b>]]>", ""]),
)

pieces = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["\n", "<think>", "</think>", "[plan]\n", "```\n", "<tool>", "</tool>", "<to", "\ud800"]),
    st.builds(lambda t: f"<think>{t}</think>", st.text(max_size=10)),
    json_calls(),
    xml_calls,
)

texts = st.lists(pieces, max_size=6).map("".join)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_whole_text_results_are_what_the_constructors_make(text):
    assert_as_constructed(agentmsg.parse(text))


@settings(max_examples=60, deadline=None)
@given(texts, st.integers(1, 7))
def test_stream_results_and_call_events_are_what_the_constructors_make(text, size):
    parser = agentmsg.StreamParser()
    events = []
    for start in range(0, len(text), size):
        events += parser.feed(text[start : start + size])
    events += parser.finish()
    assert_as_constructed(parser.result())
    for event in events:
        if isinstance(event, agentmsg.ToolCallEnd):
            for obj in (event.call, event.error):
                if obj is not None:
                    assert _rebuilt(obj) == obj


@settings(max_examples=40, deadline=None)
@given(st.lists(texts, max_size=4))
def test_batch_results_are_what_the_constructors_make(batch):
    for parsed in agentmsg.parse_many(batch):
        assert_as_constructed(parsed)


@st.composite
def hermes_texts(draw) -> str:
    call = {"name": draw(names), "arguments": draw(st.dictionaries(st.text(max_size=4), json_values, max_size=3))}
    return draw(st.text(max_size=8)) + f"<tool_call>{json.dumps(call)}</tool_call>" + draw(st.text(max_size=8))


@settings(max_examples=60, deadline=None)
@given(hermes_texts())
def test_dialect_results_are_what_the_constructors_make(text):
    assert_as_constructed(dialects.parse(text, dialect="hermes"))


OUT_OF_RANGE = [("invalid_json", "invalid JSON: number out of range (past the largest float)")]

# One call per dialect whose JSON arguments hold a number past the largest float (an XML
# parameter typed by a schema keeps such a value as text: test_xml_parameter_past_the_largest...).
ARRAY_TOOL = [{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "array"}}}}]
PAST_THE_LARGEST = [
    ("hermes", '<tool_call>{"name": "f", "arguments": {"a": 1e400}}</tool_call>'),
    ("gpt_oss", '<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{"a": -1e400}<|call|>'),
    ("mistral", '[TOOL_CALLS][{"name": "f", "arguments": {"a": {"b": 1e999}}}]'),
    ("llama3_json", '<|python_tag|>{"name": "f", "parameters": {"a": 1e400}}'),
    ("pythonic", "[f(a=1e400)]"),
    ("deepseek_v31", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1e400}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'),
    ("kimi_k2", '<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1e400}<|tool_call_end|><|tool_calls_section_end|>'),
]


@pytest.mark.parametrize("dialect, text, value", [
    ("qwen3_coder", "<tool_call><function=f><parameter=a>[1, 1e400]</parameter></function></tool_call>", "[1, 1e400]"),
    ("glm45", "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>[1e400]</arg_value>\n</tool_call>", "[1e400]"),
])
def test_xml_parameter_past_the_largest_float_stays_text(dialect, text, value):
    parsed = dialects.parse(text, dialect=dialect, tools=ARRAY_TOOL)
    assert [(c.name, c.input, c.metadata) for c in parsed.tool_calls] == [
        ("f", {"a": value}, {"schema_errors": ["parameter 'a' is not an array; kept as text"]})]
    assert parsed.errors == []


@pytest.mark.parametrize("dialect, text", PAST_THE_LARGEST, ids=[d for d, _ in PAST_THE_LARGEST])
def test_a_dialect_call_with_a_float_past_the_largest_is_no_call(dialect, text):
    parsed = dialects.parse(text, dialect=dialect)
    assert parsed.tool_calls == []
    # pythonic reads its literals itself and names the literal.
    expected = [("invalid_json", "malformed Python call: '1e400' is too large for JSON")] if dialect == "pythonic" \
        else OUT_OF_RANGE
    assert [(e.kind, e.message) for e in parsed.errors] == expected
    assert_as_constructed(parsed)
    parser = dialects.StreamParser(dialect=dialect)
    for char in text:
        parser.feed(char)
    parser.finish()
    assert parser.result() == parsed


def test_a_float_past_the_largest_makes_a_forge_call_invalid_json():
    parsed = agentmsg.parse('<tool>{"tool_name": "t", "arguments": {"a": [1, 1e400]}}</tool>')
    assert parsed.tool_calls == []
    assert [(e.kind, e.message) for e in parsed.errors] == OUT_OF_RANGE


def test_every_event_field_is_checked_by_its_constructor():
    """An event's constructor checks its fields by their annotations: each field has a check
    (or holds any object on purpose), and an ``__index__`` integer is kept as a plain int."""
    from agentmsg.model import results as events

    for cls in (events.TextDelta, events.ThinkingDelta, events.ThinkingEnd, events.ToolCallStart,
                events.ToolCallDelta, events.ToolCallEnd):
        for field in dataclasses.fields(cls):
            assert field.type in events._CHECKS or field.name in events._UNCHECKED, (cls, field.name)

    class Index:
        def __index__(self):
            return 3

    delta = events.ThinkingDelta(Index(), "x")
    assert delta.index == 3 and type(delta.index) is int
    assert delta == events.ThinkingDelta(3, "x")
    with pytest.raises(agentmsg.MessageTypeError, match=r"^ThinkingDelta.index must be a non-negative int below 2\*\*64, not a bool$"):
        events.ThinkingDelta(True, "x")
    with pytest.raises(agentmsg.MessageError, match=r"^ToolCallEnd.index must be .*, not out of range$"):
        events.ToolCallEnd(-1, None, None)
