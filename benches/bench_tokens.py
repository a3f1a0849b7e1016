"""Exact token counting: agentmsg (Rust) vs tiktoken vs pure Python, side by side.

Run on a release build:
    PYTHONPATH=$PWD/python python -m pytest benches/bench_tokens.py --benchmark-only \\
        --benchmark-columns=median,ops --benchmark-group-by=group
Every benchmark first checks that the counts agree, so a fast wrong answer cannot win.
The peak-RSS comparison runs each counter in a fresh subprocess (see ``peak_rss``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agentmsg
import tiktoken_oracle
import transcripts
from baseline_tokens import PurePythonCounter
from mixed_text import mixed_text

ENCODING = "o200k_base"
BENCHES = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def tiktoken_encoding():
    return tiktoken_oracle.encoding(ENCODING)


@pytest.fixture(scope="module")
def pure_python():
    return PurePythonCounter(ENCODING)


@pytest.fixture(scope="module")
def transcript_text():
    """All shared transcripts as one text (about 160 KB)."""
    return "\n".join(m.text for m in transcripts.all_messages())


@pytest.fixture(scope="module")
def mixed():
    """4 MB of multi-script text."""
    return mixed_text(4_000_000)


@pytest.fixture(scope="module")
def ten_thousand_messages():
    return [m.text for m in transcripts.build_transcript(10_000)]


def run(benchmark, group, count, expected):
    benchmark.group = group
    assert benchmark(count) == expected


# -- one text ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["agentmsg", "tiktoken", "pure-python"])
def test_single_transcript_text(benchmark, who, transcript_text, tiktoken_encoding, pure_python):
    expected = len(tiktoken_encoding.encode_ordinary(transcript_text))
    count = {
        "agentmsg": lambda: agentmsg.count_tokens(transcript_text, ENCODING),
        "tiktoken": lambda: len(tiktoken_encoding.encode_ordinary(transcript_text)),
        "pure-python": lambda: pure_python.count(transcript_text),
    }[who]
    run(benchmark, "single text: shared transcripts, 160 KB", count, expected)


@pytest.mark.parametrize("who", ["agentmsg", "agentmsg-1-thread", "tiktoken"])
def test_single_mixed_text(benchmark, who, mixed, tiktoken_encoding):
    expected = len(tiktoken_encoding.encode_ordinary(mixed))
    # One core: the same text in 30 KB slices, each under the size where counting goes parallel.
    slices = [mixed[i : i + 30_000] for i in range(0, len(mixed), 30_000)]
    count = {
        "agentmsg": lambda: agentmsg.count_tokens(mixed, ENCODING),
        "agentmsg-1-thread": lambda: sum(agentmsg.count_tokens(s, ENCODING) for s in slices),
        "tiktoken": lambda: len(tiktoken_encoding.encode_ordinary(mixed)),
    }[who]
    if who == "agentmsg-1-thread":
        expected = sum(len(tiktoken_encoding.encode_ordinary(s)) for s in slices)
    run(benchmark, "single text: mixed scripts, 4 MB", count, expected)


# -- many messages -----------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["agentmsg-batch", "tiktoken-batch", "agentmsg-loop", "tiktoken-loop"])
def test_batch_of_10000_messages(benchmark, who, ten_thousand_messages, tiktoken_encoding):
    texts = ten_thousand_messages
    expected = [len(tokens) for tokens in tiktoken_encoding.encode_ordinary_batch(texts)]
    count = {
        "agentmsg-batch": lambda: agentmsg.count_tokens_batch(texts, ENCODING),
        # tiktoken's batch runs encode_ordinary on a pool of 8 threads, releasing the GIL.
        "tiktoken-batch": lambda: [len(t) for t in tiktoken_encoding.encode_ordinary_batch(texts)],
        "agentmsg-loop": lambda: [agentmsg.count_tokens(t, ENCODING) for t in texts],
        "tiktoken-loop": lambda: [len(tiktoken_encoding.encode_ordinary(t)) for t in texts],
    }[who]
    run(benchmark, "batch: 10,000 transcript messages", count, expected)


def test_message_token_counts_10000(benchmark):
    messages = transcripts.build_transcript(10_000)
    benchmark.group = "chat format: message_token_counts of 10,000 messages"
    counts = benchmark(agentmsg.message_token_counts, messages, ENCODING)
    assert sum(counts) + 3 == agentmsg.count_message_tokens(messages, ENCODING)


# -- pathological runs -------------------------------------------------------------------------------

# tiktoken overflows its stack on a million spaces with o200k_base, so that run is 500,000 here.
RUNS = {
    "a*1M o200k": ("a" * 1_000_000, "o200k_base"),
    "space*1M cl100k": (" " * 1_000_000, "cl100k_base"),
    "space*500k o200k": (" " * 500_000, "o200k_base"),
}


@pytest.mark.parametrize("run_name", list(RUNS))
@pytest.mark.parametrize("who", ["agentmsg", "tiktoken"])
def test_pathological_runs(benchmark, who, run_name):
    text, name = RUNS[run_name]
    encoding = tiktoken_oracle.encoding(name)
    expected = len(encoding.encode_ordinary(text))
    if who == "agentmsg":
        count = lambda: agentmsg.count_tokens(text, name)  # noqa: E731
        benchmark.group = f"pathological: {run_name}"
        assert benchmark(count) == expected
    else:
        benchmark.group = f"pathological: {run_name}"
        assert benchmark.pedantic(lambda: len(encoding.encode_ordinary(text)), rounds=3) == expected


@pytest.mark.parametrize("who", ["agentmsg", "tiktoken", "pure-python"])
def test_pathological_small_run(benchmark, who, tiktoken_encoding, pure_python):
    # Small enough for the quadratic pure-Python merge to finish.
    text = "a" * 2_000
    count = {
        "agentmsg": lambda: agentmsg.count_tokens(text, ENCODING),
        "tiktoken": lambda: len(tiktoken_encoding.encode_ordinary(text)),
        "pure-python": lambda: pure_python.count(text),
    }[who]
    run(benchmark, "pathological: a*2000 (pure Python can finish)", count, 250)


# -- memory ------------------------------------------------------------------------------------------

PEAK_RSS_SCRIPT = r"""
import json, resource, sys
import psutil
import transcripts
who, name, size = sys.argv[1], sys.argv[2], int(sys.argv[3])

def peak_rss_bytes():
    # VmHWM is this process's own high-water mark. ru_maxrss is not: on Linux it also keeps the
    # RSS of the parent copy that fork made before exec (the whole pytest process).
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

# ASCII text, so the str holds one byte per character and its UTF-8 form is the str itself.
chunk = "\n".join(m.text for m in transcripts.all_messages()).encode("ascii", "ignore").decode()
if who == "agentmsg":
    import agentmsg
    count = lambda text: agentmsg.count_tokens(text, name)
else:
    import tiktoken_oracle
    encoding = tiktoken_oracle.encoding(name)
    count = lambda text: len(encoding.encode_ordinary(text))
count("warm up: load the encoding")
before_text = psutil.Process().memory_info().rss
text = chunk * (size // len(chunk))
del chunk
after_text = psutil.Process().memory_info().rss
tokens = count(text)
peak = peak_rss_bytes()
print(json.dumps({"input": len(text), "before_text": before_text, "after_text": after_text,
                  "peak": peak, "tokens": tokens}))
"""


def peak_rss(who: str, name: str = ENCODING, size: int = 100_000_000) -> dict:
    """Counts ``size`` bytes of ASCII text in a fresh interpreter; returns its RSS figures."""
    tests = BENCHES.parent / "tests"
    path = [str(tests), str(BENCHES.parent / "python"), *sys.path]
    result = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path[:0] = {path!r}\n" + PEAK_RSS_SCRIPT, who, name, str(size)],
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    figures["peak_over_input"] = figures["peak"] / figures["input"]
    figures["added_by_counting"] = figures["peak"] - figures["after_text"]
    return figures


@pytest.mark.parametrize("who", ["agentmsg", "tiktoken"])
def test_peak_rss_counting_100_mb(benchmark, who):
    benchmark.group = "memory: count 100 MB of text (time of one run; RSS in extra_info)"
    figures = benchmark.pedantic(peak_rss, args=(who,), rounds=1, iterations=1)
    benchmark.extra_info.update(figures)
    mb = 1e6
    print(
        f"\n{who}: input {figures['input'] / mb:.0f} MB, process RSS with the encoding loaded "
        f"{figures['before_text'] / mb:.0f} MB, peak {figures['peak'] / mb:.0f} MB "
        f"({figures['peak_over_input']:.2f}x input), counting added "
        f"{figures['added_by_counting'] / mb:.0f} MB"
    )
