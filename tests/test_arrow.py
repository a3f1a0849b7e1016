"""Arrow string columns in, Arrow results out: equal to the list functions, nulls kept."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg.arrow import ArrowArray, count_tokens_arrow, estimate_tokens_arrow, parse_arrow
from agentmsg.dialects import DIALECTS
from transcripts import all_messages

pa = pytest.importorskip("pyarrow")

TEXTS = [m.text for m in all_messages()]
STRING_TYPES = ["string", "large_string", "string_view"]
TEXT_CHARS = st.characters(exclude_categories=["Cs"])


def column(texts, string_type="string"):
    return pa.array(texts, type=getattr(pa, string_type)())


@pytest.mark.parametrize("encoding", agentmsg.ENCODINGS)
@pytest.mark.parametrize("string_type", STRING_TYPES)
def test_transcript_counts_equal_the_list_counts(encoding, string_type):
    counts = count_tokens_arrow(column(TEXTS, string_type), encoding)
    assert counts.type == pa.uint64()
    assert counts.to_pylist() == agentmsg.count_tokens_batch(TEXTS, encoding)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.none() | st.text(TEXT_CHARS, max_size=40), max_size=30),
    start=st.integers(0, 10),
    string_type=st.sampled_from(STRING_TYPES),
)
def test_nulls_and_slices_follow_the_input(texts, start, string_type):
    texts_column = column(texts, string_type).slice(start)
    expected = [None if t is None else agentmsg.count_tokens(t) for t in texts[start:]]
    assert count_tokens_arrow(texts_column).to_pylist() == expected


def test_chunked_array_gives_chunked_results():
    texts = pa.chunked_array([["Hello, world!", None], [], ["a b"]])
    counts = count_tokens_arrow(texts)
    assert isinstance(counts, pa.ChunkedArray)
    assert counts.to_pylist() == [4, None, 2]
    assert count_tokens_arrow(pa.chunked_array([], type=pa.string())).type == pa.uint64()
    parsed = parse_arrow(pa.chunked_array([["a"], ["<think>b</think>c"]]))
    assert [row["text"] for row in parsed.to_pylist()] == ["a", "c"]


def test_result_without_pyarrow_is_importable_again_and_again():
    # What callers get when pyarrow is not installed: an object any Arrow library imports.
    counts = agentmsg._core.count_tokens_arrow(pa.array(["Hello, world!", None, ""]))
    assert isinstance(counts, ArrowArray) and len(counts) == 3
    assert pa.array(counts).to_pylist() == pa.array(counts).to_pylist() == [4, None, 0]
    assert repr(counts) == "ArrowArray(UInt64, length 3)"


def test_unimported_capsules_are_freed():
    for _ in range(1000):
        agentmsg._core.count_tokens_arrow(pa.array(["x" * 100])).__arrow_c_array__()


def test_other_capsule_producers_are_read():
    class Producer:  # an Arrow library other than pyarrow, seen only through the protocol
        def __arrow_c_array__(self, requested_schema=None):
            return pa.array(["one two", None]).__arrow_c_array__()

    assert pa.array(agentmsg._core.count_tokens_arrow(Producer())).to_pylist() == [2, None]


def test_the_input_stays_usable():
    texts = pa.array(["one two", None, "three"])
    count_tokens_arrow(texts)
    parse_arrow(texts)
    assert texts.to_pylist() == ["one two", None, "three"]


def test_bad_inputs_are_named():
    with pytest.raises(agentmsg.MessageTypeError, match="string, large_string or string_view array, not Int64"):
        count_tokens_arrow(pa.array([1, 2]))
    with pytest.raises(agentmsg.MessageTypeError, match="not list"):
        count_tokens_arrow(["a", "b"])
    with pytest.raises(agentmsg.EncodingError, match="unknown encoding 'gpt2'|unknown encoding \"gpt2\""):
        count_tokens_arrow(pa.array(["a"]), "gpt2")
    bad_utf8 = pa.Array.from_buffers(
        pa.string(), 2, [None, pa.py_buffer(bytes([0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0])), pa.py_buffer(b"a\xff\xfe")]
    )
    for function in (count_tokens_arrow, estimate_tokens_arrow, parse_arrow):
        with pytest.raises(agentmsg.MessageError, match=r"texts\[1\]: invalid UTF-8"):
            function(bad_utf8)
    out_of_range = pa.Array.from_buffers(
        pa.string(), 2, [None, pa.py_buffer(bytes([0, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0])), pa.py_buffer(b"abcdefghi")]
    )
    with pytest.raises(agentmsg.MessageError, match=r"texts\[0\]: offsets 0\.\.9 outside the data \(bytes 0\.\.1\)"):
        count_tokens_arrow(out_of_range)

    class Reused:  # hands out the same capsules twice: the second import finds them released
        capsules = pa.array(["a"]).__arrow_c_array__()

        def __arrow_c_array__(self, requested_schema=None):
            return self.capsules

    count_tokens_arrow(Reused())
    with pytest.raises(agentmsg.MessageError, match="texts: the Arrow array was already imported"):
        count_tokens_arrow(Reused())


@pytest.mark.parametrize("role", ["system", "user", "assistant", "tool", agentmsg.Role.TOOL])
@pytest.mark.parametrize("string_type", STRING_TYPES)
def test_estimates_equal_estimate_tokens(role, string_type):
    texts = TEXTS + ["<tool>x</tool>", "", "é" * 9]
    estimates = estimate_tokens_arrow(column(texts + [None], string_type), role)
    assert estimates.to_pylist() == [agentmsg.estimate_tokens(t, role) for t in texts] + [None]


def test_estimate_role_is_checked():
    with pytest.raises(agentmsg.MessageError, match="unknown role 'robot'"):
        estimate_tokens_arrow(pa.array(["a"]), "robot")


def rows_of(parsed_list):
    """The struct rows ``parse_arrow`` gives for a list of ``Parsed``."""
    return [
        None if p is None else {
            "text": p.text,
            "thinking": list(p.thinking),
            "tool_calls": [(c.name, c.input) for c in p.tool_calls],
            "errors": len(p.errors),
        }
        for p in parsed_list
    ]


def arrow_rows(parsed):
    return [
        None if row is None else {**row, "tool_calls": [(c["name"], json.loads(c["arguments"])) for c in row["tool_calls"]]}
        for row in parsed.to_pylist()
    ]


REPLIES = [m.text for m in all_messages() if m.role == agentmsg.Role.ASSISTANT] + [
    '<think>plan</think>Sure. <tool>{"tool_name": "calc", "arguments": {"a": 1.5, "b": [1e300, -0.0, 12345678901234567890123]}}</tool>',
    "[thinking]\nanswer <tool>not json</tool> and <tool>",
    '<tool><tool_name>read</tool_name><arguments>{"path": "a\\"b\\u00e9"}</arguments></tool>',
    '<tool_call>{"name": "f", "arguments": {"x": "y"}}</tool_call>',
    "<think>a</think>b<|channel|>final<|message|>c",
    "",
]


@pytest.mark.parametrize("string_type", STRING_TYPES)
def test_parse_results_equal_parse_many(string_type):
    parsed = parse_arrow(column(REPLIES + [None], string_type))
    assert parsed.type == pa.struct([
        ("text", pa.string()),
        ("thinking", pa.list_(pa.string())),
        ("tool_calls", pa.list_(pa.struct([("name", pa.string()), ("arguments", pa.string())]))),
        ("errors", pa.uint32()),
    ])
    assert arrow_rows(parsed) == rows_of(agentmsg.parse_many(REPLIES) + [None])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_dialect_results_equal_parse_many(dialect):
    expected = agentmsg.parse_many(REPLIES, dialect=dialect)
    assert arrow_rows(parse_arrow(pa.array(REPLIES), dialect=dialect)) == rows_of(expected)


def test_options_reach_the_parser():
    options = dict(thinking="none", tool_format="xml", code_fences=False, start_in_thinking=True, max_calls=1)
    assert arrow_rows(parse_arrow(pa.array(REPLIES), **options)) == rows_of(agentmsg.parse_many(REPLIES, **options))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}}]
    text = ["<tool_call>\n<function=f>\n<parameter=x>\n5\n</parameter>\n</function>\n</tool_call>"]
    expected = agentmsg.parse_many(text, dialect="qwen3_coder", tools=tools)
    assert arrow_rows(parse_arrow(pa.array(text), dialect="qwen3_coder", tools=tools)) == rows_of(expected)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.none() | st.lists(st.sampled_from(
    ["<think>", "</think>", "<tool>", "</tool>", '{"tool_name": "t", "arguments": {"k": "v"}}', "[", "]\n", "\n",
     "```", "text ", "é"]), max_size=12).map("".join), max_size=8), st.sampled_from(["forge", "hermes"]))
def test_parse_matches_parse_many_on_tag_soup(texts, dialect):
    present = [t for t in texts if t is not None]
    by_text = iter(rows_of(agentmsg.parse_many(present, dialect=dialect)))
    expected = [None if t is None else next(by_text) for t in texts]
    assert arrow_rows(parse_arrow(pa.array(texts, type=pa.string()), dialect=dialect)) == expected


def test_parse_options_are_checked_like_parse():
    with pytest.raises(agentmsg.MessageError, match="thinking"):
        parse_arrow(pa.array(["a"]), thinking="loud")
    with pytest.raises(agentmsg.MessageError, match="unknown dialect"):
        parse_arrow(pa.array(["a"]), dialect="klingon")
    with pytest.raises(agentmsg.MessageTypeError, match="max_calls must be an int or None, not str"):
        parse_arrow(pa.array(["a"]), max_calls="2")
    with pytest.raises(agentmsg.MessageTypeError, match="not list"):
        parse_arrow(["a"])
