"""Parsing benchmarks: agentmsg (Rust core) against the pure-Python baselines, side by side.

Run on a release build:
    PYTHONPATH=$PWD/python python -m pytest benches/bench_parsing.py --benchmark-only \
        --benchmark-columns=median,ops --benchmark-sort=name

Inputs: assistant turns from the SWE-agent transcripts in tests/data (text plus their calls rendered in
Forge's ``<tool>`` form) and synthetic assistant turns with bracket or tag thinking and 1-3
calls; 10 MB of prose without tags for throughput.
"""

from __future__ import annotations

import random

import pytest

import transcripts
from baseline_parsing import StreamParserPy, parse_whole

import agentmsg
from agentmsg import StreamParser, ToolUseBlock, format_tool_call, parse, parse_many

def _real_turns() -> list:
    turns = []
    for message in transcripts.all_messages():
        if message.role.value != "assistant":
            continue
        parts = [message.text] + [format_tool_call(call) for call in message.tool_calls]
        turns.append("\n\n".join(p for p in parts if p))
    return turns


def _synthetic_turns(n: int, seed: int = 7) -> list:
    rng = random.Random(seed)
    words = "the file function test value error path config module result check update".split()

    def sentence(k: int) -> str:
        return " ".join(rng.choice(words) for _ in range(k)).capitalize() + "."

    turns = []
    for i in range(n):
        parts = []
        if i % 2:
            parts.append("<think>\n" + " ".join(sentence(12) for _ in range(4)) + "\n</think>")
        else:
            parts.extend(f"[{sentence(10)}]" for _ in range(rng.randint(1, 2)))
        parts.append(" ".join(sentence(14) for _ in range(rng.randint(1, 4))))
        for c in range(rng.randint(1, 3)):
            arguments = {
                "path": f"src/{rng.choice(words)}_{c}.py",
                "code": "def f(x):\n    return x + 1  # \"quoted\" <b>markup</b> in a string\n" * rng.randint(1, 4),
                "line": rng.randint(1, 500),
            }
            parts.append(format_tool_call(ToolUseBlock(f"c{c}", rng.choice(words), arguments)))
        if rng.random() < 0.5:
            parts.append(sentence(8))
        turns.append("\n\n".join(parts))
    return turns


REAL = _real_turns()
SYNTHETIC = _synthetic_turns(200)
TURNS = REAL + SYNTHETIC


def test_inputs_agree_on_well_formed_turns():
    """Both sides find the same calls and thinking on these inputs, so they do the same job.

    (The inputs avoid what the regex baseline gets wrong, e.g. a `</tool>` inside a JSON string,
    so the comparison is of speed on work both do right.)"""
    for text in TURNS:
        ours, theirs = parse(text), parse_whole(text)
        assert [(c.name, c.input) for c in ours.tool_calls] == [
            (c["name"], c["input"]) for c in theirs["tool_calls"]
        ]
        assert sorted(ours.thinking) == sorted(theirs["thinking"])


# -- whole text -------------------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["agentmsg.parse", "python regex+json"])
def test_whole_text_per_call(benchmark, impl):
    benchmark.group = f"whole text: {len(TURNS)} turns, one call each"
    fn = parse if impl == "agentmsg.parse" else parse_whole
    benchmark(lambda: [fn(t) for t in TURNS])


@pytest.mark.parametrize("impl", ["agentmsg.parse_many", "python regex+json"])
def test_whole_text_batch(benchmark, impl):
    benchmark.group = f"whole text: {len(TURNS)} turns as a batch"
    if impl == "agentmsg.parse_many":
        benchmark(lambda: parse_many(TURNS))
    else:
        benchmark(lambda: [parse_whole(t) for t in TURNS])


# -- streaming --------------------------------------------------------------------------------

STREAM_TURNS = TURNS[::4]


def _chunks(size: int) -> list:
    return [[t[i : i + size] for i in range(0, len(t), size)] for t in STREAM_TURNS]


def _stream_ours(chunked):
    for chunks in chunked:
        parser = StreamParser()
        for chunk in chunks:
            parser.feed(chunk)
        parser.finish()


def _stream_python(chunked):
    for chunks in chunked:
        parser = StreamParserPy()
        for chunk in chunks:
            parser.feed(chunk)
        parser.finish()


def _stream_floor(chunked):
    """The least any per-chunk call can cost: the same loop calling ``len(chunk)`` (a C builtin
    that does nothing and makes nothing). The baseline's time over this one bounds the ratio
    that any parser with a ``feed(chunk)`` call per chunk can reach."""
    for chunks in chunked:
        for chunk in chunks:
            len(chunk)


STREAMERS = {
    "agentmsg.StreamParser": _stream_ours,
    "python char state machine": _stream_python,
    "floor: len(chunk) per chunk": _stream_floor,
}


@pytest.mark.parametrize("size", [1, 4, 16])
@pytest.mark.parametrize("impl", list(STREAMERS))
def test_streaming(benchmark, impl, size):
    benchmark.group = f"streaming: {len(STREAM_TURNS)} turns in {size}-char chunks"
    benchmark(STREAMERS[impl], _chunks(size))


# -- throughput -------------------------------------------------------------------------------

def _prose(size: int) -> str:
    """Lines of words (no tags, brackets or fences), ``size`` characters."""
    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "omega", "model", "reply", "token"]
    lines = "".join(" ".join(rng.choice(words) for _ in range(rng.randint(8, 16))) + "\n" for _ in range(500))
    return (lines * (size // len(lines) + 1))[:size]


TEN_MB = _prose(10_000_000)


@pytest.mark.parametrize("impl", ["agentmsg.parse", "python regex+json"])
def test_ten_megabytes_without_tags(benchmark, impl):
    benchmark.group = "10 MB of text without tags"
    fn = parse if impl == "agentmsg.parse" else parse_whole
    benchmark.pedantic(fn, args=(TEN_MB,), rounds=10 if impl == "agentmsg.parse" else 3, iterations=1)
    benchmark.extra_info["GB/s"] = round(len(TEN_MB) / benchmark.stats.stats.median / 1e9, 2)


def test_ten_megabytes_result():
    assert parse(TEN_MB).text == TEN_MB.strip() == parse_whole(TEN_MB)["text"]
    assert agentmsg.parse(TEN_MB).thinking == []
