"""``StreamParser.result()`` mid-stream is built incrementally (issue 25): after any prefix of
chunks it equals the result a new parser gives for the same chunks (the ``Parsed`` of the events
so far, as documented), whatever was asked before; while nothing changed it is the same object."""

from __future__ import annotations

from typing import Any, List

from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import StreamParser
from test_server_speed_deltas import FRAGMENTS, split


def fresh_result(dialect: Any, pieces: List[str], finished: bool) -> Any:
    parser = StreamParser(dialect=dialect)
    for piece in pieces:
        parser.feed(piece)
    if finished:
        parser.finish()
    return parser.result()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(FRAGMENTS)), st.data())
def test_result_after_every_chunk_equals_a_fresh_build(dialect: Any, data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS[dialect]), max_size=30)))
    pieces = split(text, data.draw(st.lists(st.integers(0, len(text)), max_size=15)))
    parser = StreamParser(dialect=dialect)
    asked = data.draw(st.lists(st.booleans(), min_size=len(pieces), max_size=len(pieces)))
    for n, (piece, ask) in enumerate(zip(pieces, asked)):
        (parser.feed_openai if n % 2 else parser.feed)(piece)
        if ask:
            assert parser.result() == fresh_result(dialect, pieces[: n + 1], finished=False)
    parser.finish()
    assert parser.result() == fresh_result(dialect, pieces, finished=True)
    assert parser.result() == agentmsg.parse(text, dialect=dialect, start_in_thinking=False)
    # A new stream after finish starts from nothing.
    parser.feed("next")
    assert parser.result() == fresh_result(dialect, ["next"], finished=False)


def test_an_unchanged_result_is_the_same_object_and_an_earlier_one_stays_as_it_was() -> None:
    parser = StreamParser(dialect="hermes")
    parser.feed("<think>a")
    first = parser.result()
    assert parser.result() is first
    parser.feed("b</think>Hi")
    second = parser.result()
    assert (first.thinking, first.incomplete_thinking) == (["a"], False)
    assert (second.thinking, second.text) == (["ab"], "Hi")
    parser.feed(' there<tool_call>{"name": "f", "arguments": {}}</tool_call>')
    third = parser.result()
    assert second.text == "Hi" and third.text == "Hi there"
    assert third.blocks[0] is second.blocks[0]  # the closed thinking block is kept, not rebuilt
    parser.finish()
    assert parser.result().incomplete_thinking is False
