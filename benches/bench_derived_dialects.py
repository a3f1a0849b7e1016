"""A derived dialect against its hand-written one, streamed token by token (issue 22: within 1.5x).

A dialect derived from a model's template (``Dialect.from_chat_template``,
``Dialect.from_response_template``) is a name of ``DIALECTS`` when its markers are exactly that
dialect's, and then it *is* the hand-written machine. Otherwise it is an ``agentmsg.Dialect``, read
by the same tagged machine from its parts: that is what this measures, on the replies of
benches/bench_dialects.py (SWE-agent turns cut at o200k token boundaries), with the hand-written
dialect's own markers given as parts (as a template with no reasoning field, or other marker
names, derives them). Rounds are interleaved and timed in CPU time (the machine is shared).

    PYTHONPATH=python python benches/bench_derived_dialects.py      # the table of ratios
    PYTHONPATH=python python -m pytest benches/bench_derived_dialects.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List, Union

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentmsg import Dialect, StreamParser  # noqa: E402
from bench_dialects import deltas, run_ours_events  # noqa: E402

#: Hand-written dialect -> the same markers as a dialect from parts.
DERIVED: Dict[str, Dialect] = {
    "hermes": Dialect(name="derived", call_start="<tool_call>", call_end="</tool_call>",
                      think_start="<think>", think_end="</think>"),
    "qwen3_coder": Dialect(name="derived", call_start="<tool_call>", call_end="</tool_call>", payload="qwen3_coder",
                           think_start="<think>", think_end="</think>"),
}
LENGTHS = (2000, 8000)


@pytest.mark.parametrize("tokens", LENGTHS)
@pytest.mark.parametrize("which", ["hand-written", "derived"])
@pytest.mark.parametrize("dialect", list(DERIVED))
def test_stream(benchmark, dialect, which, tokens):
    chunks = deltas(dialect, tokens)
    chosen: Union[str, Dialect] = dialect if which == "hand-written" else DERIVED[dialect]
    benchmark.group = f"{dialect} and its derived twin: {len(chunks)} o200k-token deltas"
    benchmark.pedantic(run_ours_events, args=(chosen, chunks), rounds=20, iterations=1)


def test_the_twins_agree():
    for dialect, twin in DERIVED.items():
        chunks = deltas(dialect, 2000)
        results = []
        for chosen in (dialect, twin):
            parser = StreamParser(dialect=chosen)
            for chunk in chunks:
                parser.feed(chunk)
            parser.finish()
            results.append(parser.result())
        assert results[0] == results[1]


def ratios(rounds: int = 15) -> Dict[str, List[float]]:
    """Per dialect and length: the median CPU time of the derived twin over the hand-written one."""
    out: Dict[str, List[float]] = {}
    for dialect, twin in DERIVED.items():
        for tokens in LENGTHS:
            chunks = deltas(dialect, tokens)
            times: Dict[str, List[float]] = {"hand": [], "derived": []}
            for _ in range(rounds):
                for name, chosen in (("hand", dialect), ("derived", twin)):
                    start = time.process_time()
                    run_ours_events(chosen, chunks)
                    times[name].append(time.process_time() - start)
            hand, derived = statistics.median(times["hand"]), statistics.median(times["derived"])
            out[f"{dialect} {tokens}"] = [len(chunks), hand * 1e3, derived * 1e3, derived / hand]
    return out


if __name__ == "__main__":
    print("| dialect, tokens | deltas | hand-written ms | derived ms | derived / hand-written |")
    print("|---|---:|---:|---:|---:|")
    for key, (n, hand, derived, ratio) in ratios().items():
        print(f"| {key} | {n} | {hand:.2f} | {derived:.2f} | {ratio:.2f}x |")
