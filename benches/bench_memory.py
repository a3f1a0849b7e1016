"""trim() and ConversationMemory against LangChain and plain pure-Python memory, side by side.

Run on a release build:
    PYTHONPATH=$PWD/python python -m pytest benches/bench_memory.py --benchmark-only \
        --benchmark-columns=median,ops --benchmark-group-by=group

* trim-<n>: trim a transcript of n real messages (SWE-agent trajectories repeated, tool pairs
  intact) to 8,000 tokens: agentmsg.trim vs LangChain trim_messages(strategy="last",
  token_counter=count_tokens_approximately, include_system=True) on the same messages converted
  to LangChain messages before timing, vs the pure-Python list_trim.
* memory-<budget>-<n>: n adds into a memory of `budget` tokens, pruning on every add:
  ConversationMemory vs the pure-Python ListMemory (counts cached) and ReestimatingMemory (the
  naive way, re-estimating the history). The per-add cost is the median divided by n.
* compactor-<budget>-<n>: the same adds into a ConversationMemory with a Compactor (tool output
  pruning, then a summary), to show the per-add cost stays flat with compaction.
* held-<n>: n adds into a memory whose budget holds about half of them (up to 500k messages
  held at once), with the compactor: the per-add cost must not grow with what is held.
"""

from __future__ import annotations

import itertools
from functools import partial

import pytest

from agentmsg import Compactor, ConversationMemory, Role, estimate_tokens_many, prune_tool_outputs, summarize, trim
from baseline_memory import ListMemory, ReestimatingMemory, list_trim
from transcripts import build_transcript

TRIM_BUDGET = 8_000
TRIM_SIZES = [1_000, 10_000, 100_000]


@pytest.fixture(scope="module")
def transcript_100k():
    return build_transcript(100_000)


def to_langchain(messages):
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out = []
    for m in messages:
        if m.role is Role.SYSTEM:
            out.append(SystemMessage(m.text))
        elif m.role is Role.USER:
            out.append(HumanMessage(m.text))
        elif m.role is Role.ASSISTANT:
            calls = [{"id": c.id, "name": c.name, "args": c.input} for c in m.tool_calls]
            out.append(AIMessage(m.text, tool_calls=calls))
        else:
            out.append(ToolMessage(m.text, tool_call_id=m.tool_id or "", name=m.name))
    return out


@pytest.mark.parametrize("n", TRIM_SIZES)
def test_trim_agentmsg(benchmark, transcript_100k, n):
    benchmark.group = f"trim-{n}"
    messages = transcript_100k[:n]
    result = benchmark(trim, messages, TRIM_BUDGET)
    assert result.total_tokens <= TRIM_BUDGET


@pytest.mark.parametrize("n", TRIM_SIZES)
def test_trim_langchain(benchmark, transcript_100k, n):
    from langchain_core.messages import trim_messages
    from langchain_core.messages.utils import count_tokens_approximately

    benchmark.group = f"trim-{n}"
    messages = to_langchain(transcript_100k[:n])
    rounds = 3 if n >= 100_000 else 10
    benchmark.pedantic(
        trim_messages,
        args=(messages,),
        kwargs=dict(max_tokens=TRIM_BUDGET, strategy="last",
                    token_counter=count_tokens_approximately, include_system=True),
        rounds=rounds,
        iterations=1,
    )


@pytest.mark.parametrize("n", TRIM_SIZES)
def test_trim_pure_python(benchmark, transcript_100k, n):
    benchmark.group = f"trim-{n}"
    messages = transcript_100k[:n]
    rounds = 3 if n >= 100_000 else 10
    benchmark.pedantic(list_trim, args=(messages, TRIM_BUDGET), rounds=rounds, iterations=1)


def add_all(memory, messages, n):
    """n adds: the transcript's system prompt once, then its other messages over and over."""
    add = memory.add
    add(messages[0])
    for message in itertools.islice(itertools.cycle(messages[1:]), n - 1):
        add(message)
    return memory


# (budget, adds): ours runs to a million adds; the baselines at sizes that finish (per-add cost
# is what is compared: median / adds).
OURS = [(8_000, 10_000), (8_000, 100_000), (8_000, 1_000_000), (128_000, 2_000), (128_000, 100_000)]
CACHED = OURS
REESTIMATING = [(8_000, 10_000), (128_000, 2_000)]
COMPACTOR = [(8_000, 10_000), (8_000, 100_000), (8_000, 1_000_000), (128_000, 2_000), (128_000, 100_000)]
HELD = [10_000, 100_000, 1_000_000]


def compacting_memory(budget, summary=True):
    policies = [partial(prune_tool_outputs, keep_recent=2)]
    if summary:
        policies.append(partial(summarize, summarizer=lambda old: f"[summary of {len(old)} messages]", keep_recent=8))
    return ConversationMemory(budget, compactor=Compactor(policies, trigger=0.8))


def run_memory(benchmark, make, messages, budget, n, group="memory"):
    benchmark.group = f"{group}-{budget}-{n}"
    small = n < 100_000
    memory = benchmark.pedantic(
        lambda: add_all(make(budget), messages, n), rounds=5 if small else 1, iterations=1,
        warmup_rounds=1 if small else 0,
    )
    total = memory.total_tokens
    assert (total() if callable(total) else total) <= budget or getattr(memory, "over_budget", True)


@pytest.mark.parametrize("budget,n", OURS)
def test_memory_agentmsg(benchmark, transcript_100k, budget, n):
    run_memory(benchmark, ConversationMemory, transcript_100k, budget, n)


@pytest.mark.parametrize("budget,n", CACHED)
def test_memory_list_cached_counts(benchmark, transcript_100k, budget, n):
    run_memory(benchmark, ListMemory, transcript_100k, budget, n)


@pytest.mark.parametrize("budget,n", REESTIMATING)
def test_memory_reestimating(benchmark, transcript_100k, budget, n):
    run_memory(benchmark, ReestimatingMemory, transcript_100k, budget, n)


@pytest.mark.parametrize("budget,n", COMPACTOR)
def test_memory_agentmsg_compactor(benchmark, transcript_100k, budget, n):
    run_memory(benchmark, compacting_memory, transcript_100k, budget, n, group="compactor")


@pytest.mark.parametrize("n", HELD)
def test_memory_held(benchmark, transcript_100k, n):
    """A budget of about half the tokens of n adds, and a compactor that only prunes tool
    outputs: the memory ends holding about n/2 messages (or more, once outputs are pruned)."""
    per_cycle = sum(estimate_tokens_many(transcript_100k[1:]))
    budget = per_cycle * n // (2 * (len(transcript_100k) - 1))
    benchmark.group = f"held-{n}"
    memory = benchmark.pedantic(lambda: add_all(compacting_memory(budget, summary=False), transcript_100k, n),
                                rounds=1, iterations=1)
    assert memory.total_tokens <= budget
