"""Linear time on every text, whole and streamed, and bounded cost per reply (``max_calls``).

The time tests compare ``n`` with ``8n`` of the same shape: a linear parser takes about 8 times
as long, a quadratic one 64 times. Time is the CPU time of this thread (another process taking
the core does not count) and the best of a few repeats; a ratio over the bound is measured again
before it fails, so a stray slow run on a busy machine does not fail the suite.
"""

from __future__ import annotations

import gc
import random
import time
from typing import Callable, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversarial import FAMILIES, ISSUE_FAMILIES
from test_parsing_stream import check_invariant, chunked, fold, option_sets, run

import agentmsg
from agentmsg import AgentMsgError, StreamParser, ToolCallEnd, ToolCallStart, parse

MAX_RATIO = 12
# Bytes of the smaller text of each pair: big enough that a pass over it costs well above the
# clock's resolution and the fixed cost of a call, small enough for a test of milliseconds.
SMALL_TEXT = 32_000
OPTION_SETS = {
    "default": {},
    "tags_json_no_fences": {"thinking": "tags", "tool_format": "json", "code_fences": False},
    "brackets_xml": {"thinking": "brackets", "tool_format": "xml", "start_in_thinking": False},
    "no_thinking": {"thinking": "none", "start_in_thinking": True},
}


def parse_whole(text: str, chunks: List[str], options: dict) -> None:
    parse(text, **options)


def parse_streamed(text: str, chunks: List[str], options: dict) -> None:
    parser = StreamParser(**{**options, "start_in_thinking": options.get("start_in_thinking") or False})
    for chunk in chunks:
        parser.feed(chunk)
    parser.finish()


def best_time(parse_fn: Callable, text: str, options: dict, repeats: int = 3) -> float:
    chunks = [text[i : i + 64] for i in range(0, len(text), 64)]
    best = float("inf")
    for _ in range(repeats):
        # The parser's time, not the collector's: a full collection over whatever heap earlier
        # tests left would land in one run or the other and skew the ratio.
        gc.collect()
        gc.disable()
        try:
            start = time.thread_time()
            parse_fn(text, chunks, options)
            best = min(best, time.thread_time() - start)
        finally:
            gc.enable()
    return best


def scaling_ratio(family: Callable[[int], str], parse_fn: Callable, options: dict) -> float:
    """Time of ``8n`` over time of ``n``; measured up to three times while over the bound."""
    n = max(1, SMALL_TEXT // len(family(1)))
    small, large = family(n), family(8 * n)
    ratio = float("inf")
    for _ in range(3):
        ratio = best_time(parse_fn, large, options) / max(best_time(parse_fn, small, options), 1e-6)
        if ratio < MAX_RATIO:
            break
    return ratio


MODES = {"whole": parse_whole, "stream": parse_streamed}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ISSUE_FAMILIES)
def test_shapes_that_were_quadratic_now_scale_linearly(name, mode):
    assert scaling_ratio(FAMILIES[name], MODES[mode], {}) < MAX_RATIO


# A fixed sample of the other families, each under one option set (the option sets change which
# scanners run: no fences, no bracket lines, XML only); the benchmarks time every family.
SAMPLED = random.Random(13).sample(
    sorted((name, options) for name in FAMILIES if name not in ISSUE_FAMILIES for options in OPTION_SETS), 24
)


@pytest.mark.parametrize("name,options", sorted(SAMPLED))
def test_every_adversarial_family_scales_linearly(name, options):
    for mode, parse_fn in MODES.items():
        ratio = scaling_ratio(FAMILIES[name], parse_fn, OPTION_SETS[options])
        assert ratio < MAX_RATIO, (mode, ratio)


# -- whole == streamed on the adversarial shapes ------------------------------------------------

adversarial_texts = st.builds(
    lambda parts: "".join(FAMILIES[name](k) for name, k in parts),
    st.lists(st.tuples(st.sampled_from(sorted(FAMILIES)), st.integers(1, 4)), min_size=1, max_size=4),
)


@settings(max_examples=60, deadline=None)
@given(adversarial_texts, option_sets)
def test_adversarial_shapes_stream_one_character_at_a_time(text, options):
    check_invariant(text, list(text), options)


# -- max_calls ----------------------------------------------------------------------------------

CALL = '<tool>{"tool_name": "t", "arguments": {"k": 1}}</tool>'


def test_calls_past_the_limit_are_one_issue_with_the_raw_rest():
    text = f"a {CALL} b <tool></tool> c\n[thought]\n{CALL}<think>x</think> d"
    result = parse(text, max_calls=2)
    assert [c.input for c in result.tool_calls] == [{"k": 1}]
    assert [e.kind for e in result.errors] == ["invalid_json", "too_many_calls"]
    rest = result.errors[1]
    start = text.index(CALL, len("a " + CALL))
    assert rest.raw == text[start:] and rest.span == (start, len(text))
    assert rest.message == (
        "more than 2 tool calls (max_calls): this <tool> and the rest of the text are not parsed"
    )
    assert result.text == "a\nb\nc"
    assert result.thinking == ["thought"]


def test_max_calls_counts_good_and_bad_calls_and_none_is_no_limit():
    text = "<tool></tool>" * 5
    assert len(parse(text).errors) == 5
    assert len(parse(text, max_calls=None).errors) == 5
    assert len(parse(text, max_calls=5).errors) == 5
    limited = parse(text, max_calls=3)
    assert [e.kind for e in limited.errors] == ["invalid_json"] * 3 + ["too_many_calls"]
    assert limited.errors[-1].raw == "<tool></tool>" * 2
    zero = parse("x <tool>", max_calls=0)
    assert (zero.text, zero.errors[0].kind, zero.errors[0].raw) == ("x", "too_many_calls", "<tool>")


def test_calls_in_thinking_and_fences_do_not_count():
    text = f"<think>{CALL}</think>\n```\n{CALL}\n```\n{CALL}"
    result = parse(text, max_calls=1)
    assert len(result.tool_calls) == 1 and result.errors == []


def test_max_calls_in_every_entry_point():
    text = CALL * 3
    assert len(agentmsg.parse_tool_calls(text, max_calls=2)) == 2
    assert [len(p.errors) for p in agentmsg.parse_many([text, CALL], max_calls=1)] == [1, 0]
    events = run(text, chunked(text, [5, 70, 71, 130]), max_calls=1)
    _, _, calls, errors, _, _ = fold(events)
    assert len(calls) == 1 and [e.raw for e in errors] == [CALL * 2]
    # The cut call starts at once; its end (with the raw rest) comes at finish.
    assert isinstance(events[-1], ToolCallEnd) and events[-1].index == 1
    assert sum(isinstance(e, ToolCallStart) for e in events) == 2


@pytest.mark.parametrize("bad", [-1, 10**30, 1.5, "3", True, [1]])
def test_max_calls_must_be_a_count(bad):
    for call in (
        lambda: parse("x", max_calls=bad),
        lambda: agentmsg.parse_many(["x"], max_calls=bad),
        lambda: StreamParser(max_calls=bad),
    ):
        with pytest.raises(AgentMsgError, match="max_calls must be") as info:
            call()
        assert isinstance(info.value, ValueError if bad in (-1, 10**30) else TypeError)
        assert len(str(info.value)) < 80


@settings(max_examples=150, deadline=None)
@given(
    adversarial_texts,
    st.lists(st.integers(0, 400), max_size=8),
    option_sets,
    st.none() | st.integers(0, 3),
)
def test_adversarial_shapes_stream_as_they_parse_whole(text, cuts, options, max_calls):
    check_invariant(text, chunked(text, cuts), {**options, "max_calls": max_calls})
    if max_calls is not None:
        limited = parse(text, **options, max_calls=max_calls)
        assert len(limited.tool_calls) + len(limited.errors) <= max_calls + 1
