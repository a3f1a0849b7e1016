"""The pruning workbench: replay scales linearly (n vs 10n), and the full run on the real transcripts.

Run on a release build:
    PYTHONPATH=$PWD/python python -m pytest benches/bench_workbench.py --benchmark-only \
        --benchmark-columns=median,rounds --benchmark-group-by=group

* replay-<strategy>: one replay of a synthetic transcript of n and 10n messages (the SWE-agent
  trajectories repeated, tool pairs intact; about one model call per two messages) at 8,000
  tokens, every metric measured. Tokens are counted once before timing (a shared
  MessageCounter), so the time is the replay: the strategy and the per-turn metrics. Linear
  means the 10n median is about 10x the n median.
* replay-from-scratch: the same loop calling trim() on the whole history at every turn (what a
  plain function strategy does) against the incremental built-in, at n and 10n.
* replay-memory-compactor: ConversationMemory with a Compactor, at n and 10n (reported: its
  compaction is being reworked elsewhere).
* workbench-5x6x4: run_workbench on the 5 shared transcripts x the 6 default strategies x 4
  budgets, counting tokens included.
* html-100x8x4: write_html for the 5 shared transcripts repeated to 100 x the 8 built-in
  strategies x 4 budgets, every prompt kept (its size in extra_info["bytes"]).
"""

from __future__ import annotations

import dataclasses

import pytest

from agentmsg import (
    MessageCounter, Strategy, builtin_strategies, iter_transcripts, replay, run_workbench, trim, write_html,
)
from transcripts import TRAJECTORY_DIR, build_transcript

BUDGET = 8_000


@pytest.fixture(scope="module")
def synthetic():
    histories = {n: build_transcript(n) for n in (1_000, 10_000, 100_000)}
    counter = MessageCounter("o200k_base")
    for history in histories.values():
        counter.total(history)  # count once, outside the timings
    return histories, counter


def _replay(benchmark, synthetic, strategy, n, rounds):
    histories, counter = synthetic
    history = histories[n]
    result = benchmark.pedantic(replay, args=(history, strategy, BUDGET), kwargs={"counter": counter},
                                rounds=rounds, iterations=1)
    assert result.turns == sum(1 for m in history if m.role == "assistant")
    assert result.over_budget == 0 or not isinstance(strategy, str)


@pytest.mark.parametrize("n", [10_000, 100_000])
@pytest.mark.parametrize("strategy", ["trim", "memory", "mask-tool-outputs"])
def test_replay_scaling(benchmark, synthetic, strategy, n):
    benchmark.group = f"replay-{strategy}"
    _replay(benchmark, synthetic, strategy, n, rounds=3 if n == 10_000 else 1)


def _trim_whole_history(history, budget, counter=None):
    return trim(history, budget, counter=counter).messages


@pytest.mark.parametrize("n", [1_000, 10_000])
@pytest.mark.parametrize("how", ["incremental", "whole-history"])
def test_replay_from_scratch(benchmark, synthetic, how, n):
    benchmark.group = "replay-from-scratch"
    _, counter = synthetic
    strategy = "trim" if how == "incremental" else Strategy.from_function(
        lambda history, budget: _trim_whole_history(history, budget, counter), name="trim-whole-history")
    _replay(benchmark, synthetic, strategy, n, rounds=3 if n == 1_000 else 1)


@pytest.mark.parametrize("n", [1_000, 10_000])
def test_replay_memory_compactor(benchmark, synthetic, n):
    benchmark.group = "replay-memory-compactor"
    _replay(benchmark, synthetic, "memory-compactor", n, rounds=3 if n == 1_000 else 1)


def test_workbench_5x6x4(benchmark):
    benchmark.group = "workbench-5x6x4"
    report = benchmark.pedantic(lambda: run_workbench(iter_transcripts(TRAJECTORY_DIR)), rounds=3, iterations=1)
    assert len(report.rows) == 5 * 6 * 4


@pytest.fixture(scope="module")
def hundred_transcripts_report():
    """The 5 shared transcripts repeated to 100, x the 8 built-in strategies x 4 budgets, every
    prompt kept: the size the HTML report is quoted at."""
    shared = list(iter_transcripts(TRAJECTORY_DIR))
    many = [dataclasses.replace(t, name=f"{t.name}-{k}") for k in range(20) for t in shared]
    names = ["trim", "trim-user", "memory", "memory-compactor", "mask-tool-outputs", "compress", "summarize"]
    if "langchain" in builtin_strategies():
        names.append("langchain")
    return run_workbench(many, names, [2000, 4000, 8000, 16000], keep_prompts=True)


def test_write_html_100x8x4(benchmark, hundred_transcripts_report, tmp_path):
    benchmark.group = "html-100x8x4"
    path = tmp_path / "report.html"
    benchmark.pedantic(write_html, args=(hundred_transcripts_report, path), rounds=3, iterations=1)
    benchmark.extra_info["bytes"] = path.stat().st_size
    assert len(hundred_transcripts_report.rows) == 100 * 8 * 4
