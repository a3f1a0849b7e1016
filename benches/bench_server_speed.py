"""Server speed (issue 25): parser setup with 20 realistic tools, and the delta path a server
uses (``feed`` + ``openai_deltas`` in Python vs ``feed_openai`` built in the core) per o200k
token at about 500 and 8,000 tokens, against the floor (the same loop calling ``len(chunk)``);
the same for the OpenAI Responses API's events (``feed`` + ``responses_events`` vs
``feed_responses``).

    PYTHONPATH=python python benches/bench_server_speed.py            # the tables (medians, ratios)
    PYTHONPATH=python python -m pytest benches/bench_server_speed.py  # pytest-benchmark groups
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentmsg import StreamParser, openai_deltas, responses_events  # noqa: E402
from bench_dialects import deltas  # noqa: E402
from server_jobs import (  # noqa: E402
    COMPILED, STREAMS_PER_BATCH, TOOLS, run_batch, run_batch_floor, run_floor, run_objects_floor, shifted_steps,
)
from timing import cpu_rounds  # noqa: E402

DIALECTS = ("hermes", "qwen3_coder", "gpt_oss")
LENGTHS = (500, 8000)


class Definitions(list):  # type: ignore[type-arg]
    """A list the cache does not key (a subclass): each parser compiles it, as every parser did
    before ``Tools``."""


UNCACHED = Definitions(TOOLS)

SETUPS: Dict[str, Callable[[], object]] = {
    "no tools": lambda: StreamParser(dialect="hermes"),
    "Tools(20 tools)": lambda: StreamParser(dialect="hermes", tools=COMPILED),
    "list of 20 tools, cached": lambda: StreamParser(dialect="hermes", tools=TOOLS),
    "list of 20 tools, compiled (the old path)": lambda: StreamParser(dialect="hermes", tools=UNCACHED),
}


def run_events_and_python_deltas(dialect: str, chunks: Sequence[str]) -> None:
    parser = StreamParser(dialect=dialect, tools=COMPILED)
    for chunk in chunks:
        openai_deltas(parser.feed(chunk))
    openai_deltas(parser.finish())


def run_core_deltas(dialect: str, chunks: Sequence[str]) -> None:
    parser = StreamParser(dialect=dialect, tools=COMPILED)
    feed = parser.feed_openai
    for chunk in chunks:
        feed(chunk)
    parser.finish_openai()


STREAMS: Dict[str, Callable[[str, Sequence[str]], None]] = {
    "feed + openai_deltas": run_events_and_python_deltas,
    "feed_openai (core deltas)": run_core_deltas,
    "floor: len(chunk)": run_floor,
    "floor: [{'content': chunk}]": run_objects_floor,
}


def run_events_and_python_responses(dialect: str, chunks: Sequence[str]) -> None:
    # responses_events keeps its state within one call: the stream's events go in at its end
    # (the same work per event as a stateful writer in Python called per chunk).
    parser = StreamParser(dialect=dialect, tools=COMPILED)
    feed, events = parser.feed, []
    for chunk in chunks:
        events += feed(chunk)
    responses_events(events + parser.finish())


def run_core_responses(dialect: str, chunks: Sequence[str]) -> None:
    parser = StreamParser(dialect=dialect, tools=COMPILED)
    feed = parser.feed_responses
    for chunk in chunks:
        feed(chunk)
    parser.finish_responses()


RESPONSES: Dict[str, Callable[[str, Sequence[str]], None]] = {
    "feed + responses_events": run_events_and_python_responses,
    "feed_responses (core events)": run_core_responses,
    "floor: len(chunk)": run_floor,
}


def batch_steps(dialect: str) -> List[List[str]]:
    """256 streams of the ~500-token reply, one token each per step."""
    return shifted_steps(deltas(dialect, 500))


def run_parsers(dialect: str, steps: Sequence[Sequence[str]]) -> None:
    parsers = [StreamParser(dialect=dialect, tools=COMPILED) for _ in range(STREAMS_PER_BATCH)]
    feeds = [parser.feed_openai for parser in parsers]
    for texts in steps:
        for feed, text in zip(feeds, texts):
            feed(text)
    for parser in parsers:
        parser.finish_openai()


BATCHES: Dict[str, Callable[[str, Sequence[Sequence[str]]], None]] = {
    "StreamBatch.step": run_batch,
    "256 StreamParser.feed_openai": run_parsers,
    "floor: len(chunk)": run_batch_floor,
}


@pytest.mark.parametrize("impl", list(BATCHES))
def test_batch(benchmark: Any, impl: str) -> None:
    steps = batch_steps("hermes")
    benchmark.group = f"256 hermes streams, one token per step, {len(steps)} steps"
    benchmark.pedantic(BATCHES[impl], args=("hermes", steps), rounds=5, iterations=1)


def test_core_deltas_are_the_python_deltas() -> None:
    for dialect in DIALECTS:
        chunks = deltas(dialect, 500)
        events_parser, deltas_parser = StreamParser(dialect=dialect), StreamParser(dialect=dialect)
        events = [e for chunk in chunks for e in events_parser.feed(chunk)] + events_parser.finish()
        ours = [d for chunk in chunks for d in deltas_parser.feed_openai(chunk)] + deltas_parser.finish_openai()
        assert ours == openai_deltas(events)


def test_core_responses_are_the_python_responses() -> None:
    for dialect in DIALECTS:
        chunks = deltas(dialect, 500)
        events_parser, responses_parser = StreamParser(dialect=dialect), StreamParser(dialect=dialect)
        events = [e for chunk in chunks for e in events_parser.feed(chunk)] + events_parser.finish()
        ours = [d for chunk in chunks for d in responses_parser.feed_responses(chunk)] + responses_parser.finish_responses()
        assert ours == responses_events(events)


@pytest.mark.parametrize("tokens", LENGTHS)
@pytest.mark.parametrize("impl", list(RESPONSES))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_responses_path(benchmark: Any, dialect: str, impl: str, tokens: int) -> None:
    chunks = deltas(dialect, tokens)
    benchmark.group = f"Responses events, {dialect}: {len(chunks)} o200k-token deltas"
    benchmark.pedantic(RESPONSES[impl], args=(dialect, chunks), rounds=15, iterations=1)


@pytest.mark.parametrize("setup", list(SETUPS))
def test_setup(benchmark: Any, setup: str) -> None:
    benchmark.group = "StreamParser setup, hermes"
    benchmark(SETUPS[setup])


@pytest.mark.parametrize("tokens", LENGTHS)
@pytest.mark.parametrize("impl", list(STREAMS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_delta_path(benchmark: Any, dialect: str, impl: str, tokens: int) -> None:
    chunks = deltas(dialect, tokens)
    benchmark.group = f"delta path, {dialect}: {len(chunks)} o200k-token deltas"
    benchmark.pedantic(STREAMS[impl], args=(dialect, chunks), rounds=15, iterations=1)


def _median_us(job: Callable[[], object], number: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.thread_time()
        for _ in range(number):
            job()
        times.append((time.thread_time() - start) / number * 1e6)
    return statistics.median(times)


def per_token_table(jobs: Dict[str, Callable[[str, Sequence[str]], None]], core: str) -> None:
    """Prints µs per token, median (min) of interleaved rounds, of each job (the Python path,
    the core path ``core``, then floors) for every dialect and length; the ratios use the first
    three."""
    print("| dialect | deltas | " + " | ".join(jobs) + f" | {core} / len floor (mins) | speed-up (medians) |")
    print("|---|---:|" + "---:|" * (len(jobs) + 2))
    for dialect in DIALECTS:
        for tokens in LENGTHS:
            chunks = deltas(dialect, tokens)
            n = len(chunks)
            rounds = {name: [t / n * 1e6 for t in times] for name, times in cpu_rounds(
                {name: (lambda run=run: run(dialect, chunks)) for name, run in jobs.items()}, 15).items()}
            m = {name: statistics.median(times) for name, times in rounds.items()}
            low = {name: min(times) for name, times in rounds.items()}
            cells = " | ".join(f"{m[name]:.3f} ({low[name]:.3f})" for name in jobs)
            python, core_name, floor = list(jobs)[:3]
            print(f"| {dialect} | {n} | {cells} | {low[core_name] / low[floor]:.1f}x | "
                  f"{m[python] / m[core_name]:.1f}x |", flush=True)


def main() -> None:
    print("| setup (hermes) | us, median |")
    print("|---|---:|")
    for name, job in SETUPS.items():
        print(f"| {name} | {_median_us(job, 200 if 'old' in name else 2000, 15):.2f} |", flush=True)
    print()
    print("Per token, median (min) of interleaved rounds, in CPU time of this process (time.thread_time):")
    print("on a loaded 2-core machine a run of 8,000 tokens is often descheduled, and wall time would count")
    print("the wait.")
    print()
    per_token_table(STREAMS, "feed_openai")
    print()
    per_token_table(RESPONSES, "feed_responses")

    print()
    print("| 256 streams, one token per step | " + " | ".join(BATCHES) + " | batch / len floor |")
    print("|---|" + "---:|" * (len(BATCHES) + 1))
    for dialect in DIALECTS:
        steps = batch_steps(dialect)
        tokens = len(steps) * STREAMS_PER_BATCH
        batch_rounds = cpu_rounds({name: (lambda run=run: run(dialect, steps)) for name, run in BATCHES.items()}, 5)
        med = {name: statistics.median(times) / tokens * 1e6 for name, times in batch_rounds.items()}
        first, _, floor = list(BATCHES)
        print(f"| {dialect} ({len(steps)} steps) | " + " | ".join(f"{med[name]:.3f} us/token" for name in BATCHES)
              + f" | {med[first] / med[floor]:.1f}x |", flush=True)

    print()
    print("| hermes, result() after every delta | deltas | feed_openai us/token | + result() each delta | ratio "
          "| one result() at the end, us |")
    print("|---|---:|---:|---:|---:|---:|")
    for tokens in (500, 2000, 8000):
        chunks = deltas("hermes", tokens)
        plain, every, last = result_cost(chunks)
        n = len(chunks)
        print(f"| | {n} | {plain / n * 1e6:.3f} | {every / n * 1e6:.3f} | {every / plain:.0f}x | {last * 1e6:.1f} |",
              flush=True)


def result_cost(chunks: Sequence[str]) -> tuple:
    """CPU seconds of a stream read with ``feed_openai``, of the same with ``result()`` after
    every delta, and of one ``result()`` at the end (medians)."""
    def run(every: bool) -> float:
        parser = StreamParser(dialect="hermes")
        feed, result = parser.feed_openai, parser.result
        start = time.thread_time()
        for chunk in chunks:
            feed(chunk)
            if every:
                result()
        return time.thread_time() - start

    def last() -> float:
        parser = StreamParser(dialect="hermes")
        for chunk in chunks:
            parser.feed_openai(chunk)
        start = time.thread_time()
        parser.result()
        return time.thread_time() - start

    return (statistics.median(run(False) for _ in range(5)), statistics.median(run(True) for _ in range(3)),
            statistics.median(last() for _ in range(5)))


if __name__ == "__main__":
    main()
