"""The tiktoken-compatible encoder: agentmsg (Rust) vs tiktoken, side by side in one run.

Run on a release build:
    PYTHONPATH=$PWD/python python -m pytest benches/bench_encoding.py --benchmark-only \\
        --benchmark-columns=median,ops --benchmark-group-by=group
Every benchmark first checks that both give the same ids (or counts), so a fast wrong answer
cannot win. tiktoken is loaded offline from the same rank files (tests/tiktoken_oracle.py).
"""

from __future__ import annotations

import random

import pytest

import agentmsg
import tiktoken_oracle
import transcripts
from mixed_text import mixed_text

ENCODING = "o200k_base"
MB = 1_000_000


@pytest.fixture(scope="module")
def ours():
    return agentmsg.get_encoding(ENCODING)


@pytest.fixture(scope="module")
def theirs():
    return tiktoken_oracle.encoding(ENCODING)


def transcript_megabyte() -> str:
    """1 MB of the shared transcripts (English prose, code, tool output), repeated."""
    chunk = "\n".join(m.text for m in transcripts.all_messages())
    return (chunk * (MB // len(chunk) + 1))[:MB]


def random_unicode(size: int, seed: int = 0) -> str:
    """``size`` code points drawn uniformly from all of Unicode but surrogates: mostly CJK,
    Hangul and unassigned planes, each character 3 or 4 UTF-8 bytes and rarely a token."""
    rng = random.Random(seed)
    points = []
    while len(points) < size:
        point = rng.randrange(0x110000)
        if not 0xD800 <= point <= 0xDFFF:
            points.append(point)
    return "".join(map(chr, points))


TEXTS = {
    "transcripts 1 MB": transcript_megabyte,
    "mixed scripts 1 MB": lambda: mixed_text(MB),
    "random Unicode 250k chars": lambda: random_unicode(250_000),
}


@pytest.mark.parametrize("text_name", list(TEXTS))
@pytest.mark.parametrize("who", ["agentmsg", "agentmsg-1-thread", "tiktoken"])
def test_encode_one_text(benchmark, who, text_name, ours, theirs):
    text = TEXTS[text_name]()
    # One core: 30 KB slices, each under the size where encoding goes parallel.
    slices = [text[i : i + 30_000] for i in range(0, len(text), 30_000)]
    encode = {
        "agentmsg": lambda: ours.encode(text),
        "agentmsg-1-thread": lambda: [ours.encode(s) for s in slices],
        "tiktoken": lambda: theirs.encode(text),
    }[who]
    expected = [theirs.encode(s) for s in slices] if who == "agentmsg-1-thread" else theirs.encode(text)
    benchmark.group = f"encode: {text_name}"
    assert benchmark(encode) == expected


@pytest.mark.parametrize("text_name", list(TEXTS))
@pytest.mark.parametrize("who", ["agentmsg", "agentmsg-1-thread", "tiktoken"])
def test_count_one_text(benchmark, who, text_name, theirs):
    text = TEXTS[text_name]()
    slices = [text[i : i + 30_000] for i in range(0, len(text), 30_000)]
    count = {
        "agentmsg": lambda: agentmsg.count_tokens(text, ENCODING),
        "agentmsg-1-thread": lambda: sum(agentmsg.count_tokens(s, ENCODING) for s in slices),
        "tiktoken": lambda: len(theirs.encode_ordinary(text)),
    }[who]
    if who == "agentmsg-1-thread":
        expected = sum(len(theirs.encode_ordinary(s)) for s in slices)
    else:
        expected = len(theirs.encode_ordinary(text))
    benchmark.group = f"count: {text_name}"
    assert benchmark(count) == expected


@pytest.fixture(scope="module")
def ten_thousand_messages():
    return [m.text for m in transcripts.build_transcript(10_000)]


@pytest.mark.parametrize("who", ["agentmsg-batch", "tiktoken-batch", "agentmsg-loop", "tiktoken-loop"])
def test_encode_10000_messages(benchmark, who, ten_thousand_messages, ours, theirs):
    texts = ten_thousand_messages
    encode = {
        "agentmsg-batch": lambda: ours.encode_batch(texts),
        # tiktoken's batch runs encode on a pool of 8 threads, releasing the GIL.
        "tiktoken-batch": lambda: theirs.encode_batch(texts),
        "agentmsg-loop": lambda: [ours.encode(t) for t in texts],
        "tiktoken-loop": lambda: [theirs.encode(t) for t in texts],
    }[who]
    benchmark.group = "encode: batch of 10,000 transcript messages"
    assert benchmark(encode) == theirs.encode_batch(texts)


def test_decode_1mb(benchmark, ours, theirs):
    ids = theirs.encode(transcript_megabyte())
    benchmark.group = "decode: 1 MB of ids"
    assert benchmark(ours.decode, ids) == theirs.decode(ids)


def test_decode_1mb_tiktoken(benchmark, theirs):
    ids = theirs.encode(transcript_megabyte())
    benchmark.group = "decode: 1 MB of ids"
    benchmark(theirs.decode, ids)


# -- pathological runs: n vs 8n ----------------------------------------------------------------------


@pytest.mark.parametrize("size", [125_000, 1_000_000, 8_000_000])
@pytest.mark.parametrize("char", ["a", " "])
def test_pathological_run_scaling(benchmark, char, size, ours):
    text = char * size
    benchmark.group = f"pathological: {char!r} * n, agentmsg (n vs 8n vs 64n)"
    ids = benchmark(ours.encode, text)
    assert ours.decode(ids) == text


# tiktoken overflows its stack on a million spaces with o200k_base (see bench_tokens.py), so its
# runs are the first size only, once.
@pytest.mark.parametrize("char", ["a", " "])
@pytest.mark.parametrize("who", ["agentmsg", "tiktoken"])
def test_pathological_run_125k(benchmark, who, char, ours, theirs):
    text = char * 125_000
    benchmark.group = f"pathological: {char!r} * 125,000 side by side"
    expected = theirs.encode(text)
    if who == "agentmsg":
        assert benchmark(ours.encode, text) == expected
    else:
        assert benchmark.pedantic(theirs.encode, (text,), rounds=3) == expected
