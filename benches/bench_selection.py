"""The selection in the core against the Python loops it replaced, side by side.

Run on a release build:
    PYTHONPATH=$PWD/python python -m pytest benches/bench_selection.py --benchmark-only \
        --benchmark-columns=median,ops --benchmark-group-by=group

The history is the architecture review's trim profile (appendix B): one system message and
50,000 user/assistant pairs, every fifth a tool call with its result (110,001 messages).

* estimate: Forge's estimate of every message, read from the slots in Rust
  (``estimate_tokens_many``), vs the Python loop it replaced (``measured_text`` per message, then
  ``_core.estimate_tokens_many`` over the texts).
* pairing: the pairing of every message read from the slots (``_core.pair_messages``) vs the six
  Python lists the converters and ``toolpairs`` built before (then ``_core.pair_tool_results``).
* trim: ``trim`` with a budget that keeps everything and with 4,000 tokens (one core call each);
  the Python-driven selection it replaced is compared by ``scripts/compare-commits`` (the
  ``trim 110k`` jobs of ``benches/api_jobs.py``), since its module is gone.
"""

from __future__ import annotations

from operator import attrgetter

import pytest

from agentmsg import ToolUseBlock, _core, estimate_tokens_many, measured_text, trim
from agentmsg.model.message import ROLE_CODES, Role
from timing import appendix_b_history


HISTORY = appendix_b_history()


def python_estimate(messages: list) -> list:
    """The loop ``estimate_tokens_many`` ran before: the measured text built in Python."""
    return _core.estimate_tokens_many([measured_text(m) for m in messages], [ROLE_CODES[m.role] for m in messages])


def python_pairing(messages: list) -> tuple:
    """The six lists ``toolpairs`` built before pairing in the core."""
    roles = list(map(attrgetter("role"), messages))
    calls = [(i, b) for i, role in enumerate(roles) if role is Role.ASSISTANT for b in messages[i].content
             if isinstance(b, ToolUseBlock)]
    return _core.pair_tool_results(
        [ROLE_CODES[role] for role in roles], list(map(attrgetter("tool_id"), messages)),
        list(map(attrgetter("name"), messages)), [i for i, _ in calls], [b.id for _, b in calls],
        [b.name for _, b in calls])


def test_paths_agree():
    assert estimate_tokens_many(HISTORY) == python_estimate(HISTORY)
    call_of, orphans, _, _ = _core.pair_messages(HISTORY)
    assert (call_of, orphans) == python_pairing(HISTORY)[:2]


@pytest.mark.benchmark(group="estimate-110k")
@pytest.mark.parametrize("path", ["rust", "python"])
def test_estimate(benchmark, path):
    benchmark(estimate_tokens_many if path == "rust" else python_estimate, HISTORY)


@pytest.mark.benchmark(group="pairing-110k")
@pytest.mark.parametrize("path", ["rust", "python"])
def test_pairing(benchmark, path):
    benchmark(_core.pair_messages if path == "rust" else python_pairing, HISTORY)


@pytest.mark.benchmark(group="trim-110k")
@pytest.mark.parametrize("budget", [4_000, 10**9])
def test_trim(benchmark, budget):
    result = benchmark(trim, HISTORY, budget)
    assert result.kept[0] == 0 and result.kept[-1] == len(HISTORY) - 1
