"""Streaming model dialects token by token: agentmsg vs the servers' re-scanning parsers.

Replies of about 500, 2,000, 8,000 and 32,000 o200k tokens are built from the SWE-agent
transcripts in tests/data (each assistant turn: its text as reasoning or prose, its tool calls,
or its shell command as a call), written in each dialect and cut at o200k token boundaries (the
deltas a server sees). Each run streams one reply; ours is ``StreamParser(dialect=...)`` with
``openai_deltas`` (what a server would send), the baseline is benches/baseline_dialects.py, the
floor is the same loop calling ``len(chunk)``.

    PYTHONPATH=python python benches/bench_dialects.py      # the table of medians and ratios
    PYTHONPATH=python python -m pytest benches/bench_dialects.py   # pytest-benchmark groups
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, List

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from agentmsg import TextBlock, ToolUseBlock  # noqa: E402
from agentmsg.dialects import StreamParser, openai_deltas  # noqa: E402
from baseline_dialects import FAMILY_SERVERS, SERVERS  # noqa: E402
from baseline_dialects_b import SERVERS_B  # noqa: E402
from test_dialect_kimi_k3 import write as write_kimi_k3  # noqa: E402
from test_dialects_families import THINK, WRITERS  # noqa: E402
from tiktoken_oracle import encoding  # noqa: E402
from transcripts import all_messages  # noqa: E402

LENGTHS = (500, 2000, 8000, 32000)
DIALECTS = ("hermes", "qwen3_coder", "gpt_oss")
DIALECTS += tuple(SERVERS_B)
SERVERS = {**SERVERS, **SERVERS_B}
# The families of issue 22, section 2: each against its re-scanning server, at 2,000 and 8,000
# tokens (flat per token is the claim; `python benches/bench_dialects.py families`).
FAMILIES = tuple(FAMILY_SERVERS)
FAMILY_LENGTHS = (2000, 8000)
FENCE = re.compile(r"```\w*\n(.*?)```", re.DOTALL)


def _turns() -> list:
    """(text, [(name, arguments)]) per assistant turn of the transcripts."""
    turns = []
    for message in all_messages():
        if message.role != "assistant":
            continue
        text = "\n".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()
        calls = [(b.name, b.input) for b in message.content if isinstance(b, ToolUseBlock)]
        if not calls:
            commands = FENCE.findall(text)
            if commands:
                calls = [("bash", {"command": commands[-1].strip()})]
                text = FENCE.sub("", text).strip()
        turns.append((text, calls))
    return turns


def _calls(dialect: str, calls: list) -> str:
    if dialect in WRITERS:
        return WRITERS[dialect](calls)
    if dialect == "hermes":
        return "".join(
            f'<tool_call>\n{json.dumps({"name": n, "arguments": a}, ensure_ascii=False)}\n</tool_call>\n'
            for n, a in calls
        )
    if dialect in WRITERS_B:
        return WRITERS_B[dialect](calls)
    if dialect in ("qwen3_coder", "step3p5"):
        body = ""
        for name, arguments in calls:
            params = "".join(
                f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
                for k, v in arguments.items()
            )
            body += f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>\n"
        return body
    return "".join(
        f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
        f"{json.dumps(arguments, ensure_ascii=False)}<|call|>"
        for name, arguments in calls
    )


def _gemma_value(value, q: str) -> str:
    if isinstance(value, str):
        return q + value + q
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_gemma_value(v, q)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_gemma_value(v, q) for v in value) + "]"
    return json.dumps(value)


def _dsml(section: str, calls: list) -> str:
    ds = "｜DSML｜"
    body = "".join(
        f'<{ds}invoke name="{name}">\n' + "".join(
            f'<{ds}parameter name="{k}" string="{str(isinstance(v, str)).lower()}">'
            f'{v if isinstance(v, str) else json.dumps(v)}</{ds}parameter>\n' for k, v in arguments.items())
        + f"</{ds}invoke>\n" for name, arguments in calls)
    return f"\n\n<{ds}{section}>\n{body}</{ds}{section}>"


GEMMA_QUOTE = '<|"|>'
WRITERS_B: Dict[str, Callable] = {
    "deepseek_v32": lambda calls: _dsml("function_calls", calls),
    "deepseek_v4": lambda calls: _dsml("tool_calls", calls),
    "gemma4": lambda calls: "".join(f"<|tool_call>call:{n}{_gemma_value(a, GEMMA_QUOTE)}<tool_call|>" for n, a in calls),
    "functiongemma": lambda calls: "".join(
        f"<start_function_call>call:{n}{_gemma_value(a, '<escape>')}<end_function_call>" for n, a in calls),
}
WRITERS_B["cohere"] = lambda calls: "<|START_ACTION|>[\n" + ",\n".join(
    "    " + json.dumps({"tool_call_id": str(i), "tool_name": n, "parameters": a}, ensure_ascii=False)
    for i, (n, a) in enumerate(calls)) + "\n]<|END_ACTION|>"
WRITERS_B["kimi_k3"] = write_kimi_k3
HEADS_B = {"kimi_k3": "<|open|>think<|sep|>\n{thinking}\n<|close|>think<|sep|>I will look at the files first.\n\n", "cohere": "<|START_THINKING|>{thinking}<|END_THINKING|>I will look at the files first.\n\n", "gemma4": "<|channel>thought\n{thinking}\n<channel|>I will look at the files first.\n\n",
           "functiongemma": "I will look at the files first.\n\n"}


@lru_cache(maxsize=None)
def reply(dialect: str, tokens: int) -> str:
    """A reply of at least ``tokens`` o200k tokens: the first turn's text as reasoning, a line of
    prose, then each turn's calls (its text written to a notes file, then its commands),
    repeated; a gpt_oss reply ends with a final message."""
    turns = _turns()
    enc = encoding("o200k_base")
    thinking = turns[0][0]
    if dialect == "gpt_oss":
        head = f"<|channel|>analysis<|message|>{thinking}<|end|>"
    elif dialect in HEADS_B:
        head = HEADS_B[dialect].format(thinking=thinking)
    elif dialect in THINK and THINK[dialect] is None:
        head = f"{thinking}\n\nI will look at the files first.\n\n"
    elif dialect in THINK:
        opener, closer = THINK[dialect]
        head = f"{opener}\n{thinking}\n{closer}\n\nI will look at the files first.\n\n"
    else:
        head = f"<think>\n{thinking}\n</think>\n\nI will look at the files first.\n\n"
    parts = [head]
    count, i = len(enc.encode_ordinary(head)), 0
    while count < tokens:
        text, calls = turns[i % len(turns)]
        calls = [("write_file", {"path": f"notes/{i}.md", "content": text})] + (calls or [("bash", {"command": "ls"})])
        i += 1
        piece = _calls(dialect, calls)
        parts.append(piece)
        count += len(enc.encode_ordinary(piece))
    if dialect == "gpt_oss":
        parts.append("<|start|>assistant<|channel|>final<|message|>Done.<|return|>")
    return "".join(parts)


@lru_cache(maxsize=None)
def deltas(dialect: str, tokens: int) -> tuple:
    """The reply cut at o200k token boundaries (a token that ends inside a character waits for
    the next, as a server's detokenizer does)."""
    enc = encoding("o200k_base")
    pieces, pending = [], b""
    for token in enc.encode_ordinary(reply(dialect, tokens)):
        pending += enc.decode_single_token_bytes(token)
        try:
            pieces.append(pending.decode("utf-8"))
            pending = b""
        except UnicodeDecodeError:
            continue
    assert "".join(pieces) == reply(dialect, tokens)
    return tuple(pieces)


def run_ours(dialect: str, chunks, out=None) -> None:
    """Deltas go to ``out`` when given; a server sends them on and keeps none."""
    # feed_openai, not openai_deltas per chunk: the parser numbers a stream's calls densely.
    parser = StreamParser(dialect=dialect)
    for chunk in chunks:
        deltas = parser.feed_openai(chunk)
        if out is not None:
            out += deltas
    deltas = parser.finish_openai()
    if out is not None:
        out += deltas


def run_ours_events(dialect: str, chunks) -> None:
    parser = StreamParser(dialect=dialect)
    feed = parser.feed
    for chunk in chunks:
        feed(chunk)
    parser.finish()


def run_baseline(dialect: str, chunks, out=None) -> None:
    server = SERVERS[dialect]()
    for chunk in chunks:
        deltas = server.feed(chunk)
        if out is not None:
            out += deltas


def run_floor(dialect: str, chunks) -> None:
    for chunk in chunks:
        len(chunk)


IMPLS: Dict[str, Callable] = {
    "agentmsg events": run_ours_events,
    "agentmsg + openai_deltas": run_ours,
    "server baseline (re-scan + partial JSON)": run_baseline,
    "floor: len(chunk) per chunk": run_floor,
}


def summary(out: list) -> tuple:
    """Joined content, reasoning, and arguments per call: what a client assembles."""
    content = "".join(d.get("content", "") for d in out)
    reasoning = "".join(d.get("reasoning_content", "") for d in out)
    arguments: Dict[int, str] = {}
    for d in out:
        for call in d.get("tool_calls", []):
            arguments[call["index"]] = arguments.get(call["index"], "") + call["function"]["arguments"]
    return content, reasoning, [json.loads(a) for _, a in sorted(arguments.items())]


@pytest.mark.parametrize("dialect", DIALECTS + FAMILIES)
def test_baseline_and_ours_agree(dialect):
    chunks = deltas(dialect, 500)
    ours, theirs = [], []
    run_ours(dialect, chunks, ours)
    run_baseline(dialect, chunks, theirs)
    ours, theirs = summary(ours), summary(theirs)
    assert ours[2] == theirs[2]
    assert ours[0].strip() == theirs[0].strip()
    assert ours[1].replace("\n", "") == theirs[1].replace("\n", "").strip()


@pytest.mark.parametrize("tokens", LENGTHS)
@pytest.mark.parametrize("impl", list(IMPLS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_stream(benchmark, dialect, impl, tokens):
    chunks = deltas(dialect, tokens)
    benchmark.group = f"{dialect}: {len(chunks)} o200k-token deltas"
    slow = impl.startswith("server") and tokens >= 8000
    benchmark.pedantic(IMPLS[impl], args=(dialect, chunks), rounds=3 if slow else 20, iterations=1)


def _times(fn, dialect, chunks, rounds) -> List[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(dialect, chunks)
        times.append(time.perf_counter() - start)
    return times


def main(families: bool = False) -> None:
    """Medians, and minimums (on a shared machine other processes inflate medians at random)."""
    print("| dialect | deltas | ours us/token median (min) | +openai_deltas | baseline us/token median (min) "
          "| floor | ratio of medians (of mins) | ours/floor (mins) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for dialect in FAMILIES if families else DIALECTS:
        for tokens in FAMILY_LENGTHS if families else LENGTHS:
            chunks = deltas(dialect, tokens)
            n = len(chunks)
            per = lambda fn, rounds: [t / n * 1e6 for t in _times(fn, dialect, chunks, rounds)]  # noqa: E731
            ours = per(run_ours_events, 21)
            full = per(run_ours, 11)
            base = per(run_baseline, 3 if tokens >= 8000 else 7)
            floor = per(run_floor, 21)
            m = statistics.median
            print(f"| {dialect} | {n} | {m(ours):.2f} ({min(ours):.2f}) | {m(full):.2f} ({min(full):.2f}) | "
                  f"{m(base):.0f} ({min(base):.0f}) | {min(floor):.3f} | {m(base) / m(ours):.0f}x "
                  f"({min(base) / min(ours):.0f}x) | {min(ours) / min(floor):.0f}x |", flush=True)


if __name__ == "__main__":
    main(families=sys.argv[1:] == ["families"])
