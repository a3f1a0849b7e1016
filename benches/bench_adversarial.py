"""Adversarial texts: time for n and 8n repeats of each family (tests/adversarial.py), whole and
streamed in 64-character chunks, agentmsg beside the pure-Python regex baseline (whole text).

A linear parser takes about 8 times as long for 8n; the ratio of medians is stored in each 8n
result's ``extra_info`` and printed in a table at the end (run with ``-s`` to see it):

    PYTHONPATH=$PWD/python python -m pytest benches/bench_adversarial.py --benchmark-only -s \\
        --benchmark-columns=median --benchmark-sort=name --benchmark-timer=time.process_time

CPU time (``time.process_time``) rather than wall time: on a busy machine a run of 20 ms loses
time slices that a run of 2 ms does not, and wall-time ratios then say nothing about scaling.

Each family is sized so that n repeats are about 32 KB (8n about 256 KB): big enough to see
any rescanning, small enough that all of them run in a minute.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Tuple

import pytest

from adversarial import FAMILIES, ISSUE_FAMILIES
from baseline_parsing import parse_whole

import agentmsg
from agentmsg import StreamParser

SMALL_TEXT = 32_000


def _stream(chunks: List[str]) -> None:
    parser = StreamParser()
    for chunk in chunks:
        parser.feed(chunk)
    parser.finish()


# What each implementation is handed: the text, or its 64-character chunks.
IMPLS: Dict[str, Tuple[Callable, bool]] = {
    "agentmsg.parse": (agentmsg.parse, False),
    "agentmsg.StreamParser (64 chars)": (_stream, True),
    "python regex baseline": (parse_whole, False),
}
MEDIANS: Dict[Tuple[str, str, int], float] = {}
# The regex baseline is itself quadratic on these (each `<tool>` or `<think>` without its closing
# tag makes a lazy `.*?` run to the end): over 5 s already at n, so it is left out.
BASELINE_QUADRATIC = {"unclosed_calls", "thinking_tags_in_brackets", "unclosed_fence_lines"}


def _text(family: str, scale: int) -> str:
    make = FAMILIES[family]
    return make(scale * max(1, SMALL_TEXT // len(make(1))))


@pytest.mark.parametrize("scale", [1, 8], ids=["n", "8n"])
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("family", list(FAMILIES))
def test_adversarial_family(benchmark, family, impl, scale):
    if impl == "python regex baseline" and family in BASELINE_QUADRATIC:
        pytest.skip("the regex baseline is quadratic on this shape (over 5 s at n)")
    fn, chunked = IMPLS[impl]
    text = _text(family, scale)
    arg = [text[i : i + 64] for i in range(0, len(text), 64)] if chunked else text
    benchmark.group = f"{family}: {impl}"
    benchmark.pedantic(fn, args=(arg,), rounds=5, iterations=1, warmup_rounds=1)
    median = benchmark.stats.stats.median
    MEDIANS[(family, impl, scale)] = median
    small = MEDIANS.get((family, impl, 1))
    if scale == 8 and small:
        benchmark.extra_info["ratio_8n_over_n"] = round(median / small, 1)


@pytest.fixture(scope="module", autouse=True)
def ratio_table():
    """Prints the 8n/n ratio of medians per family and implementation after the module."""
    yield
    rows = sorted({(family, impl) for family, impl, _ in MEDIANS})
    if not rows:
        return
    print("\n\n8n / n (ratio of medians; ~8 is linear, ~64 quadratic); * = shapes that were quadratic")
    impls = [impl for impl in IMPLS if any(r[1] == impl for r in rows)]
    print(f"{'family':30s}" + "".join(f"{impl:>36s}" for impl in impls))
    for family in dict.fromkeys(family for family, _ in rows):
        cells = []
        for impl in impls:
            small, large = MEDIANS.get((family, impl, 1)), MEDIANS.get((family, impl, 8))
            cells.append(f"{large / small:36.1f}" if small and large else f"{'-':>36s}")
        mark = "*" if family in ISSUE_FAMILIES else " "
        print(f"{family + mark:30s}" + "".join(cells))
