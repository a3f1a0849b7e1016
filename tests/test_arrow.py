"""Arrow string columns in, Arrow counts out: equal to the list functions, nulls kept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg.arrow import ArrowArray, count_tokens_arrow
from transcripts import all_messages

pa = pytest.importorskip("pyarrow")

TEXTS = [m.text for m in all_messages()]


@pytest.mark.parametrize("encoding", agentmsg.ENCODINGS)
@pytest.mark.parametrize("string_type", ["string", "large_string"])
def test_transcript_counts_equal_the_list_counts(encoding, string_type):
    column = pa.array(TEXTS, type=getattr(pa, string_type)())
    counts = count_tokens_arrow(column, encoding)
    assert counts.type == pa.uint64()
    assert counts.to_pylist() == agentmsg.count_tokens_batch(TEXTS, encoding)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.none() | st.text(st.characters(exclude_categories=["Cs"]), max_size=40), max_size=30),
    start=st.integers(0, 10),
    large=st.booleans(),
)
def test_nulls_and_slices_follow_the_input(texts, start, large):
    column = pa.array(texts, type=pa.large_string() if large else pa.string()).slice(start)
    expected = [None if t is None else agentmsg.count_tokens(t) for t in texts[start:]]
    assert count_tokens_arrow(column).to_pylist() == expected


def test_chunked_array_gives_chunked_counts():
    column = pa.chunked_array([["Hello, world!", None], [], ["a b"]])
    counts = count_tokens_arrow(column)
    assert isinstance(counts, pa.ChunkedArray)
    assert counts.to_pylist() == [4, None, 2]


def test_capsule_result_without_pyarrow_is_importable():
    # What callers get when pyarrow is not installed: capsules any Arrow library imports.
    counts = ArrowArray(agentmsg._core.count_tokens_arrow(pa.array(["Hello, world!", None, ""])))
    assert pa.array(counts).to_pylist() == [4, None, 0]


def test_unreleased_capsules_are_freed_without_import():
    for _ in range(1000):
        agentmsg._core.count_tokens_arrow(pa.array(["x" * 100]))


def test_other_capsule_producers_are_read():
    class Producer:  # an Arrow library other than pyarrow, seen only through the protocol
        def __arrow_c_array__(self, requested_schema=None):
            return pa.array(["one two", None]).__arrow_c_array__()

    assert pa.array(ArrowArray(agentmsg._core.count_tokens_arrow(Producer()))).to_pylist() == [2, None]


def test_bad_inputs_are_named():
    with pytest.raises(agentmsg.MessageTypeError, match='string or large_string array, not format "l"'):
        count_tokens_arrow(pa.array([1, 2]))
    with pytest.raises(agentmsg.MessageTypeError, match="not list"):
        count_tokens_arrow(["a", "b"])
    with pytest.raises(agentmsg.EncodingError, match="unknown encoding 'gpt2'|unknown encoding \"gpt2\""):
        count_tokens_arrow(pa.array(["a"]), "gpt2")
    bad_utf8 = pa.Array.from_buffers(
        pa.string(), 2, [None, pa.py_buffer(bytes([0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0])), pa.py_buffer(b"a\xff\xfe")]
    )
    with pytest.raises(agentmsg.MessageError, match=r"texts\[1\]: invalid UTF-8"):
        count_tokens_arrow(bad_utf8)
