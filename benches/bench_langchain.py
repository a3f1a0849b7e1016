"""agentmsg.langchain.trim_messages against langchain_core.messages.trim_messages, side by side.

Run on a release build:
    PYTHONPATH=$PWD/python python -m pytest benches/bench_langchain.py --benchmark-only \
        --benchmark-columns=median,ops --benchmark-group-by=group

The history is the shared transcript (SWE-agent trajectories repeated, tool pairs intact), 10,000
or 100,000 messages, converted to LangChain messages once with ``to_langchain`` before timing.
Both sides get the same arguments and the same token counter:

* ``approximate``: ``token_counter="approximate"`` (LangChain's count_tokens_approximately;
  ours computes the same rule per message, equal counts, tested);
* ``function``: ``token_counter=count_tokens_approximately``, LangChain's own function, which
  LangChain calls on prefixes of the history and ours on one message at a time;

and one of these option sets (``max_tokens`` 8,000 unless said otherwise):

* ``docs``: LangChain's documented chat-history setup: strategy="last", include_system=True,
  start_on="human", end_on=("human", "tool");
* ``last``: strategy="last" alone;
* ``first``: strategy="first";
* ``half``: strategy="last" with a budget that keeps about half of the history.
"""

from __future__ import annotations

import pytest

from agentmsg import to_langchain
from agentmsg.langchain import trim_messages
from transcripts import build_transcript

SIZES = [10_000, 100_000]
OPTIONS = {
    "docs": dict(max_tokens=8_000, strategy="last", include_system=True, start_on="human", end_on=("human", "tool")),
    "last": dict(max_tokens=8_000, strategy="last"),
    "first": dict(max_tokens=8_000, strategy="first"),
    "half": dict(strategy="last", include_system=True),
}


@pytest.fixture(scope="module")
def histories():
    messages = to_langchain(build_transcript(100_000))
    return {n: messages[:n] for n in SIZES}


def _options(name, history):
    options = dict(OPTIONS[name])
    if name == "half":
        from langchain_core.messages.utils import count_tokens_approximately

        options["max_tokens"] = count_tokens_approximately(history) // 2
    return options


def _counter(kind):
    if kind == "approximate":
        return "approximate"
    from langchain_core.messages.utils import count_tokens_approximately

    return count_tokens_approximately


CASES = [(n, name, kind) for n in SIZES for name in OPTIONS for kind in ("approximate", "function")
         if kind == "approximate" or name == "docs"]


@pytest.mark.parametrize("n,name,kind", CASES)
def test_trim_messages_agentmsg(benchmark, histories, n, name, kind):
    benchmark.group = f"trim_messages-{name}-{kind}-{n}"
    history = histories[n]
    kept = benchmark(trim_messages, history, token_counter=_counter(kind), **_options(name, history))
    assert kept


@pytest.mark.parametrize("n,name,kind", CASES)
def test_trim_messages_langchain(benchmark, histories, n, name, kind):
    from langchain_core.messages import trim_messages as langchain_trim_messages

    benchmark.group = f"trim_messages-{name}-{kind}-{n}"
    history = histories[n]
    rounds = 1 if n >= 100_000 else 3
    kept = benchmark.pedantic(langchain_trim_messages, args=(history,),
                              kwargs=dict(token_counter=_counter(kind), **_options(name, history)),
                              rounds=rounds, iterations=1)
    assert kept
