"""Scaling out: Python threads, Arrow columns, Ray workers; each beside its one-process baseline.

Run on a release build:
    PYTHONPATH=$PWD/python python -m pytest benches/bench_scale.py --benchmark-only \\
        --benchmark-columns=median,ops --benchmark-group-by=group
Quote ratios of the medians within a group. Every benchmark checks its result first.

On a loaded machine, `PYTHONPATH=$PWD/python:tests:benches python benches/bench_scale.py [rounds]`
runs the thread and Arrow cases interleaved (each case once per round, then the medians), so load
drift hits every case alike, and reports CPU time beside wall time (CPU time hardly depends on
what other processes run).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

import agentmsg
import agentmsg.ray
import tiktoken_oracle
import transcripts
from agentmsg.arrow import count_tokens_arrow, parse_arrow
from scale_jobs import blocks, conversation_rows, unique_conversations

pa = pytest.importorskip("pyarrow")

ENCODING = "o200k_base"


@pytest.fixture(scope="module")
def ten_thousand_messages():
    return [m.text for m in transcripts.build_transcript(10_000)]


def count_in_threads(count, texts, workers):
    """``count`` of every text from ``workers`` threads, each taking interleaved slices."""
    slices = [texts[i::workers * 8] for i in range(workers * 8)]
    with ThreadPoolExecutor(workers) as pool:
        return sum(sum(counts) for counts in pool.map(lambda part: list(map(count, part)), slices))


@pytest.mark.parametrize("workers", [1, 2])
def test_threads_agentmsg(benchmark, ten_thousand_messages, workers):
    benchmark.group = "count_tokens over 10,000 messages: 1 vs 2 threads"
    expected = sum(agentmsg.count_tokens_batch(ten_thousand_messages))
    count = lambda text: agentmsg.count_tokens(text, ENCODING)  # noqa: E731
    assert benchmark(count_in_threads, count, ten_thousand_messages, workers) == expected


@pytest.mark.parametrize("workers", [1, 2])
def test_threads_tiktoken(benchmark, ten_thousand_messages, workers):
    benchmark.group = "count_tokens over 10,000 messages: 1 vs 2 threads"
    encoding = tiktoken_oracle.encoding(ENCODING)
    count = lambda text: len(encoding.encode_ordinary(text))  # noqa: E731
    expected = sum(agentmsg.count_tokens_batch(ten_thousand_messages))
    assert benchmark.pedantic(count_in_threads, (count, ten_thousand_messages, workers), rounds=3) == expected


@pytest.mark.parametrize("workers", [1, 2])
def test_threads_len_loop(benchmark, ten_thousand_messages, workers):
    """The floor: the same loop calling ``len``, all Python, so all under the GIL."""
    benchmark.group = "count_tokens over 10,000 messages: 1 vs 2 threads"
    total = sum(map(len, ten_thousand_messages))
    assert benchmark(count_in_threads, len, ten_thousand_messages, workers) == total


@pytest.mark.parametrize("threads", [1, 2])
def test_threads_native_ceiling(benchmark, ten_thousand_messages, threads):
    """The ceiling: the same counts on 1 or 2 native threads (the internal pool), no GIL at all."""
    benchmark.group = "count_tokens over 10,000 messages: 1 vs 2 threads"
    expected = agentmsg.count_tokens_batch(ten_thousand_messages)
    before = agentmsg.num_threads()
    agentmsg.set_num_threads(threads)
    try:
        assert benchmark(agentmsg.count_tokens_batch, ten_thousand_messages) == expected
    finally:
        agentmsg.set_num_threads(before)


@pytest.fixture(scope="module")
def million_strings():
    """1,000,000 strings: the transcripts' lines, repeated (short, as in a column of titles,
    tool names or chat turns, where the per-string cost shows)."""
    lines = [line for m in transcripts.all_messages() for line in m.text.splitlines() if line]
    return [lines[i % len(lines)] for i in range(1_000_000)]


def test_million_strings_python_list(benchmark, million_strings):
    benchmark.group = "1,000,000 strings: Arrow column vs Python list"
    expected = agentmsg.count_tokens_batch(million_strings)
    assert benchmark.pedantic(agentmsg.count_tokens_batch, (million_strings,), rounds=5) == expected


def test_million_strings_arrow(benchmark, million_strings):
    benchmark.group = "1,000,000 strings: Arrow column vs Python list"
    column = pa.array(million_strings, type=pa.string())
    expected = agentmsg.count_tokens_batch(million_strings)
    result = benchmark.pedantic(count_tokens_arrow, (column,), rounds=5)
    assert result.to_pylist() == expected


@pytest.fixture(scope="module")
def hundred_thousand_replies():
    replies = [m.text for m in transcripts.all_messages() if m.role == agentmsg.Role.ASSISTANT]
    return [replies[i % len(replies)] for i in range(100_000)]


def parse_to_arrow_in_python(texts):
    """The baseline: ``parse_many``, then the struct array built from the ``Parsed`` objects."""
    parsed = agentmsg.parse_many(texts)
    return pa.array(
        [{"text": p.text, "thinking": list(p.thinking),
          "tool_calls": [{"name": c.name, "arguments": json.dumps(c.input, separators=(",", ":"), ensure_ascii=False)}
                         for c in p.tool_calls],
          "errors": len(p.errors)} for p in parsed],
        type=PARSED_TYPE,
    )


PARSED_TYPE = pa.struct([
    ("text", pa.string()),
    ("thinking", pa.list_(pa.string())),
    ("tool_calls", pa.list_(pa.struct([("name", pa.string()), ("arguments", pa.string())]))),
    ("errors", pa.uint32()),
])


@pytest.mark.parametrize("how", ["parse_arrow", "parse_many then pyarrow"])
def test_parse_replies_to_arrow(benchmark, hundred_thousand_replies, how):
    benchmark.group = "100,000 replies parsed to an Arrow struct array: Rust vs parse_many + pyarrow"
    column = pa.array(hundred_thousand_replies, type=pa.string())
    run = (lambda: parse_arrow(column)) if how == "parse_arrow" else (lambda: parse_to_arrow_in_python(hundred_thousand_replies))  # noqa: E731
    expected = parse_arrow(column).to_pylist()
    assert [row["text"] for row in benchmark.pedantic(run, rounds=3).to_pylist()] == [row["text"] for row in expected]


CONVERSATIONS = 100_000


@pytest.fixture(scope="module")
def conversation_table():
    return pa.table({"row": pa.array(range(CONVERSATIONS)), "messages": conversation_rows(CONVERSATIONS)})


@pytest.fixture(scope="module")
def expected_prompt_tokens():
    unique = [agentmsg.count_message_tokens(c) for c in unique_conversations()]
    return [unique[i % len(unique)] for i in range(CONVERSATIONS)]


def test_prompt_tokens_one_process(benchmark, conversation_table, expected_prompt_tokens):
    benchmark.group = "prompt tokens of 100,000 conversations: 2 Ray workers vs one process"
    job = agentmsg.ray.CountPromptTokens()
    batches = [conversation_table.slice(i, 5_000) for i in range(0, CONVERSATIONS, 5_000)]
    run = lambda: pa.concat_tables([job(batch) for batch in batches])  # noqa: E731
    assert benchmark.pedantic(run, rounds=3)["prompt_tokens"].to_pylist() == expected_prompt_tokens


def test_prompt_tokens_ray_two_workers(benchmark, conversation_table, expected_prompt_tokens):
    ray = pytest.importorskip("ray")
    benchmark.group = "prompt tokens of 100,000 conversations: 2 Ray workers vs one process"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        source = ray.data.from_arrow(blocks(conversation_table, 20)).materialize()

        def run():
            dataset = source.map_batches(
                agentmsg.ray.CountPromptTokens, batch_format="pyarrow", batch_size=5_000, compute=ray.data.ActorPoolStrategy(size=2)
            )
            return pa.concat_tables(ray.get(dataset.to_arrow_refs())).sort_by("row")

        run()  # the actors' first start is not the job's cost
        assert benchmark.pedantic(run, rounds=2)["prompt_tokens"].to_pylist() == expected_prompt_tokens
    finally:
        ray.shutdown()


def interleaved(rounds: int) -> None:
    """Medians of the thread and Arrow cases, run one after another in each round."""
    import statistics
    import time

    texts = [m.text for m in transcripts.build_transcript(10_000)]
    lines = [line for m in transcripts.all_messages() for line in m.text.splitlines() if line]
    million = [lines[i % len(lines)] for i in range(1_000_000)]
    column = pa.array(million, type=pa.string())
    pool_size = agentmsg.num_threads()

    def native(threads):
        agentmsg.set_num_threads(threads)
        agentmsg.count_tokens_batch(texts)

    count = lambda text: agentmsg.count_tokens(text, ENCODING)  # noqa: E731
    cases = {
        "count_tokens, 1 thread": lambda: count_in_threads(count, texts, 1),
        "count_tokens, 2 threads": lambda: count_in_threads(count, texts, 2),
        "native ceiling, 1 thread": lambda: native(1),
        "native ceiling, 2 threads": lambda: native(2),
        "short texts only (GIL held), 1 thread": lambda: count_in_threads(count, [t for t in texts if len(t) < 256], 1),
        "1M strings, list": lambda: agentmsg.count_tokens_batch(million),
        "1M strings, Arrow": lambda: count_tokens_arrow(column),
        "1M strings, list, estimate (extraction)": lambda: agentmsg.count_tokens_batch(million, "estimate"),
    }
    times = {name: [] for name in cases}
    cpu_times = {name: [] for name in cases}
    try:
        for _ in range(rounds):
            for name, run in cases.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                run()
                times[name].append(time.perf_counter() - start)
                cpu_times[name].append(time.process_time() - start_cpu)
    finally:
        agentmsg.set_num_threads(pool_size)
    median = {name: statistics.median(values) for name, values in times.items()}
    cpu = {name: statistics.median(values) for name, values in cpu_times.items()}
    for name in cases:
        print(f"{name:42s} {median[name] * 1e3:9.1f} ms wall {cpu[name] * 1e3:9.1f} ms CPU")
    ratio = lambda a, b: median[a] / median[b]  # noqa: E731
    # An upper bound of the time the GIL is held: the loop's CPU time beyond the native count's
    # (Python's work, and cache effects the native count does not have) plus the texts counted
    # without releasing it.
    held = (cpu["count_tokens, 1 thread"] - cpu["native ceiling, 1 thread"] + cpu["short texts only (GIL held), 1 thread"])
    held_share = held / cpu["count_tokens, 1 thread"]
    print(f"2-thread scaling {ratio('count_tokens, 1 thread', 'count_tokens, 2 threads'):.2f}x, "
          f"native ceiling {ratio('native ceiling, 1 thread', 'native ceiling, 2 threads'):.2f}x, "
          f"GIL held for at most {held_share:.1%} of one thread's CPU time (Amdahl bound on 2 free cores "
          f"{1 / (held_share + (1 - held_share) / 2):.2f}x), "
          f"Arrow vs list {ratio('1M strings, list', '1M strings, Arrow'):.2f}x")


if __name__ == "__main__":
    import sys

    interleaved(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
