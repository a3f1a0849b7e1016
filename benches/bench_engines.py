"""Against the engines (issue 25): our delta path vs vLLM 0.33's and SGLang 0.5.23's current
streaming parsers, side by side in one process, per dialect both engines have.

Replies of about 500, 8,000 and 32,000 o200k tokens (agentmsg's own o200k encoder cuts them, a
token that ends inside a character waiting for the next, as a server's detokenizer does), with
small arguments (a short reasoning and a line of prose, then calls of the 20 tools with a few
short arguments each) or large arguments (the same head, then calls whose one argument is a
transcript turn's text, hundreds of tokens). Each run is one request: the parser built with the
20 tools, every delta parsed, the stream finished.

- ours: ``StreamParser(dialect=..., tools=Tools(...))`` (the tools compiled once per server),
  ``feed_openai`` per delta, ``finish_openai``; "ours, list" passes the request's list of 20
  tool dicts instead (compiled through the cache);
- vLLM and SGLang: ``benches/engines/engines.py`` (their code, imported, only the tokenizer
  object stood in);
- floors: the same loop calling ``len(chunk)``, and building ``[{"content": chunk}]``.

Also StreamBatch (256 streams, one token per step) against its floor, and ``parse_many`` against
a loop of ``parse`` and a regex + ``json.loads`` extraction.

Runs in the engines' venv (``bash benches/engines/setup.sh``), with the agentmsg wheel installed::

    .venv-engines/bin/python benches/bench_engines.py --table      # the tables
    .venv-engines/bin/python -m pytest benches/bench_engines.py    # pytest-benchmark groups

CPU time of this thread (``time.thread_time``) and interleaved rounds: the machine is shared.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "engines"))
sys.path.insert(0, str(HERE.parent / "tests"))

import pytest  # noqa: E402

import agentmsg  # noqa: E402
from agentmsg import StreamParser, parse, parse_many  # noqa: E402
from server_jobs import (  # noqa: E402
    COMPILED, STREAMS_PER_BATCH, TOOLS, run_batch, run_batch_floor, run_batch_objects_floor, run_floor,
    run_objects_floor, shifted_steps,
)
from timing import cpu_rounds  # noqa: E402

# Only in the engines' venv: importing them puts stand-ins for torch and CUDA into this process.
if importlib.util.find_spec("vllm") and importlib.util.find_spec("sglang"):
    import engines
else:
    engines = None
    ENGINES_MISSING = "vllm and sglang are not installed here"

# The dialects where both engines' parsers run here and stream the replies' calls (the check
# below); docs/parsing.md says why the others are left out.
DIALECTS = ("hermes", "qwen3_coder", "glm45", "llama3_json", "kimi_k2")
LEFT_OUT = {
    "gpt_oss": "vLLM's Harmony parser downloads its vocabulary file when built",
    "mistral": "neither engine streams a call of the reply with a tokenizer other than Mistral's",
    "deepseek_v3": "neither engine streams a call of the reply without the markers' token ids",
    "deepseek_v31": "neither engine streams a call of the reply without the markers' token ids",
    "pythonic": "a 500-token reply did not finish within 200 s",
}
# Sides that stream none of the calls of a dialect's replies (timed, but not the same work).
MISSES = {("kimi_k2", "SGLang 0.5.23")}
LENGTHS = (500, 8000, 32000)
SHAPES = ("small", "large")


O200K = agentmsg.get_encoding("o200k_base")
CITIES = ("Paris", "Zürich", "São Paulo", "New York", "Kraków", "Tokyo", "Cape Town")


# -- replies in each dialect -------------------------------------------------------------------


def _python_literal(value: Any) -> str:
    return repr(value)


def _write_calls(dialect: str, calls: List[Tuple[str, Dict[str, Any]]]) -> str:
    """The calls as the dialect's model writes them, in one section where the dialect has one."""
    dump = lambda a: json.dumps(a, ensure_ascii=False)  # noqa: E731
    if dialect == "hermes":
        return "".join(f'<tool_call>\n{dump({"name": n, "arguments": a})}\n</tool_call>\n' for n, a in calls)
    if dialect == "qwen3_coder":
        return "".join(
            f"<tool_call>\n<function={n}>\n"
            + "".join(f"<parameter={k}>\n{v if isinstance(v, str) else dump(v)}\n</parameter>\n" for k, v in a.items())
            + "</function>\n</tool_call>\n" for n, a in calls)
    if dialect == "glm45":
        return "".join(
            f"<tool_call>{n}\n"
            + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v if isinstance(v, str) else dump(v)}</arg_value>\n"
                      for k, v in a.items())
            + "</tool_call>\n" for n, a in calls)
    if dialect == "mistral":
        return "[TOOL_CALLS]" + dump([{"name": n, "arguments": a} for n, a in calls])
    if dialect == "llama3_json":
        return "; ".join(dump({"name": n, "parameters": a}) for n, a in calls)
    if dialect == "pythonic":
        return "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={_python_literal(v)}" for k, v in a.items()) + ")"
                               for n, a in calls) + "]"
    if dialect == "deepseek_v3":
        return ("<｜tool▁calls▁begin｜>" + "\n".join(
            f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{dump(a)}\n```<｜tool▁call▁end｜>"
            for n, a in calls) + "<｜tool▁calls▁end｜>")
    if dialect == "deepseek_v31":
        return ("<｜tool▁calls▁begin｜>" + "".join(
            f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{dump(a)}<｜tool▁call▁end｜>" for n, a in calls)
            + "<｜tool▁calls▁end｜>")
    if dialect == "kimi_k2":
        return ("<|tool_calls_section_begin|>" + "".join(
            f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{dump(a)}<|tool_call_end|>"
            for i, (n, a) in enumerate(calls)) + "<|tool_calls_section_end|>")
    if dialect == "gpt_oss":
        return "".join(f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>"
                       f"{dump(a)}<|call|>" for n, a in calls)
    raise ValueError(dialect)


THINKING = ("The user wants the weather in several cities. I will call the tools one by one, each with "
            "the city and how many days ahead, and then sum up what they said.")


def _head(dialect: str) -> str:
    """Reasoning and a line of prose, where the dialect has them before its calls (the JSON and
    pythonic dialects' calls start the reply)."""
    if dialect in ("llama3_json", "pythonic"):
        return ""
    if dialect == "gpt_oss":
        return f"<|channel|>analysis<|message|>{THINKING}<|end|>"
    if dialect == "mistral":
        return f"[THINK]{THINKING}[/THINK]I will look the cities up.\n\n"
    return f"<think>\n{THINKING}\n</think>\n\nI will look the cities up.\n\n"


@lru_cache(maxsize=None)
def _long_texts() -> Tuple[str, ...]:
    """The SWE-agent transcripts' assistant texts of 300+ characters: large string arguments
    with newlines, quotes and code."""
    from transcripts import all_messages

    texts = [m.text for m in all_messages() if m.role.value == "assistant" and len(m.text or "") >= 300]
    return tuple(texts)


def _call(i: int, shape: str) -> Tuple[str, Dict[str, Any]]:
    if shape == "small":
        arguments: Dict[str, Any] = {"city": CITIES[i % len(CITIES)], "days": i % 7 + 1}
        if i % 3 == 0:
            arguments["units"] = "celsius"
        return f"tool_{i % 20}", arguments
    texts = _long_texts()
    return f"tool_{i % 20}", {"city": texts[i % len(texts)], "days": i % 7 + 1}


@lru_cache(maxsize=None)
def reply(dialect: str, tokens: int, shape: str) -> str:
    """A reply of at least ``tokens`` o200k tokens: the head, then calls until it is long enough
    (a gpt_oss reply ends with a final message)."""
    head = _head(dialect)
    tail = "<|start|>assistant<|channel|>final<|message|>Done.<|return|>" if dialect == "gpt_oss" else ""
    calls: List[Tuple[str, Dict[str, Any]]] = [_call(0, shape)]
    while True:
        text = head + _write_calls(dialect, calls) + tail
        count = len(O200K.encode_ordinary(text))
        if count >= tokens:
            return text
        # Add nine tenths of the calls still missing at the mean size so far, at least one.
        missing = (tokens - count) * len(calls) // count
        calls += [_call(len(calls) + k, shape) for k in range(max(1, missing * 9 // 10))]


@lru_cache(maxsize=None)
def deltas(dialect: str, tokens: int, shape: str) -> Tuple[str, ...]:
    """The reply cut at o200k token boundaries, as a server's detokenizer hands it out."""
    pieces, pending = [], b""
    for token in O200K.encode_ordinary(reply(dialect, tokens, shape)):
        pending += O200K.decode_single_token_bytes(token)
        try:
            pieces.append(pending.decode("utf-8"))
            pending = b""
        except UnicodeDecodeError:
            continue
    assert "".join(pieces) == reply(dialect, tokens, shape)
    return tuple(pieces)


def expected_calls(dialect: str, tokens: int, shape: str) -> List[Tuple[str, Any]]:
    result = parse(reply(dialect, tokens, shape), dialect=dialect, tools=COMPILED)
    return [(c.name, c.input) for c in result.tool_calls]


# -- the runs ----------------------------------------------------------------------------------


def run_ours(dialect: str, chunks: Sequence[str], out: Any = None) -> None:
    parser = StreamParser(dialect=dialect, tools=COMPILED)
    feed = parser.feed_openai
    if out is None:
        for chunk in chunks:
            feed(chunk)
        parser.finish_openai()
        return
    for chunk in chunks:
        out += feed(chunk)
    out += parser.finish_openai()


def run_ours_list(dialect: str, chunks: Sequence[str]) -> None:
    parser = StreamParser(dialect=dialect, tools=TOOLS)
    feed = parser.feed_openai
    for chunk in chunks:
        feed(chunk)
    parser.finish_openai()


def run_vllm(dialect: str, chunks: Sequence[str]) -> None:
    engines.run_vllm(dialect, VLLM_REQUEST(), chunks)


def run_sglang(dialect: str, chunks: Sequence[str]) -> None:
    engines.run_sglang(dialect, SGLANG_TOOLS(), chunks)


@lru_cache(maxsize=None)
def VLLM_REQUEST() -> Any:  # noqa: N802 - built once, as the server's request object is
    return engines.vllm_request(TOOLS)


@lru_cache(maxsize=None)
def SGLANG_TOOLS() -> Any:  # noqa: N802
    return engines.sglang_tools(TOOLS)


IMPLS: Dict[str, Callable[[str, Sequence[str]], None]] = {
    "ours": run_ours,
    "ours, list": run_ours_list,
    "vLLM 0.33": run_vllm,
    "SGLang 0.5.23": run_sglang,
    "floor len": run_floor,
    "floor objects": run_objects_floor,
}


def summary_ours(out: List[Dict[str, Any]]) -> List[Tuple[str, Any]]:
    calls: Dict[int, List[str]] = {}
    for d in out:
        for call in d.get("tool_calls", []):
            entry = calls.setdefault(call["index"], ["", ""])
            entry[0] += call["function"].get("name") or ""
            entry[1] += call["function"].get("arguments") or ""
    return [(n, json.loads(a)) for n, a in (calls[i] for i in sorted(calls))]


def engine_calls(dialect: str, chunks: Sequence[str]) -> Dict[str, List[Tuple[str, Any]]]:
    """The calls each side streams out for one reply, assembled as a client does."""
    ours: List[Dict[str, Any]] = []
    run_ours(dialect, chunks, ours)
    found = {"ours": summary_ours(ours)}
    vllm_out: List[Any] = []
    engines.run_vllm(dialect, VLLM_REQUEST(), chunks, vllm_out)
    found["vLLM 0.33"] = engines.vllm_summary(vllm_out)[2]
    sglang_out: List[Any] = []
    engines.run_sglang(dialect, SGLANG_TOOLS(), chunks, sglang_out)
    found["SGLang 0.5.23"] = engines.sglang_summary(sglang_out)[2]
    return found


# -- batches -------------------------------------------------------------------------------------

def batch_steps(dialect: str) -> List[List[str]]:
    """256 streams of the 500-token small-arguments reply, one token each per step."""
    return shifted_steps(deltas(dialect, 500, "small"))


BATCHES = {"StreamBatch.step": run_batch, "floor len": run_batch_floor, "floor objects": run_batch_objects_floor}


# -- whole replies in batches --------------------------------------------------------------------


@lru_cache(maxsize=None)
def batch_inputs() -> Dict[str, List[str]]:
    """2,000 agent turns of 1.4 KB (benches/allocator_jobs.py) and the 258 turns of 0.9 KB of
    benches/bench_parsing.py."""
    import allocator_jobs
    import bench_parsing

    return {"2,000 turns of 1.4 KB": list(allocator_jobs.TURNS), "258 turns of 0.9 KB": list(bench_parsing.TURNS)}


def regex_json(texts: Sequence[str]) -> None:
    from baseline_parsing import parse_whole

    for text in texts:
        parse_whole(text)


WHOLE = {
    "parse_many": lambda texts: parse_many(texts),
    "loop of parse": lambda texts: [parse(t) for t in texts],
    "regex + json.loads": regex_json,
}


# -- pytest-benchmark ----------------------------------------------------------------------------

needs_engines = pytest.mark.skipif(engines is None, reason="run in the engines' venv: bash benches/engines/setup.sh")


@needs_engines
@pytest.mark.parametrize("dialect", DIALECTS)
def test_engines_find_our_calls(dialect: str) -> None:
    """On the 500-token replies every side streams the calls the reply holds: the comparison is
    of the same work done right."""
    for shape in SHAPES:
        expected = expected_calls(dialect, 500, shape)
        for side, calls in engine_calls(dialect, deltas(dialect, 500, shape)).items():
            assert calls == ([] if (dialect, side) in MISSES else expected), (side, shape)


@needs_engines
@pytest.mark.parametrize("tokens", LENGTHS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("impl", list(IMPLS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_delta_path(benchmark: Any, dialect: str, impl: str, shape: str, tokens: int) -> None:
    chunks = deltas(dialect, tokens, shape)
    benchmark.group = f"{dialect}, {shape} arguments: {len(chunks)} o200k-token deltas"
    benchmark.pedantic(IMPLS[impl], args=(dialect, chunks), rounds=3 if tokens > 8000 else 7, iterations=1)


@pytest.mark.parametrize("impl", list(BATCHES))
def test_batch(benchmark: Any, impl: str) -> None:
    steps = batch_steps("hermes")
    benchmark.group = f"256 hermes streams, one token per step, {len(steps)} steps"
    benchmark.pedantic(BATCHES[impl], args=("hermes", steps), rounds=5, iterations=1)


@pytest.mark.parametrize("impl", list(WHOLE))
@pytest.mark.parametrize("inputs", ["2,000 turns of 1.4 KB", "258 turns of 0.9 KB"])
def test_whole_batches(benchmark: Any, inputs: str, impl: str) -> None:
    texts = batch_inputs()[inputs]
    benchmark.group = f"whole replies: {inputs}"
    benchmark(WHOLE[impl], texts)


# -- the tables ------------------------------------------------------------------------------------


ROUNDS = {500: 21, 8000: 7, 32000: 3}


def _rounds(tokens: int) -> int:
    return ROUNDS.get(tokens, 3)


def table(dialects: Sequence[str], lengths: Sequence[int], shapes: Sequence[str]) -> None:
    print(f"Machine load at start: {os.getloadavg()[0]:.1f} (1-minute average), {os.cpu_count()} cores")
    print()
    print("Calls found on the 500-token replies (ours / vLLM / SGLang, of the reply's):")
    for dialect in dialects:
        cells = []
        for shape in shapes:
            expected = expected_calls(dialect, 500, shape)
            found = engine_calls(dialect, deltas(dialect, 500, shape))
            cells.append(f"{shape}: " + " / ".join(
                f"{sum(1 for c in calls if c in expected)}{'' if calls == expected else '*'}"
                for calls in found.values()) + f" of {len(expected)}")
        print(f"- {dialect}: " + "; ".join(cells), flush=True)
    print("(* where the side's calls are not exactly the reply's)")
    print()
    print("Per request, CPU time, medians of interleaved rounds; ratios are medians over ours "
          "(Tools compiled once; 'list' = the request's list of 20 tool dicts):")
    print()
    print("| dialect | arguments | tokens | ours µs/token | ours, list | vLLM 0.33 µs/token | SGLang 0.5.23 µs/token "
          "| vs vLLM | vs SGLang | ours / len floor | ours / objects floor |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for shape in shapes:
        for tokens in lengths:
            for dialect in dialects:
                chunks = deltas(dialect, tokens, shape)
                n = len(chunks)
                jobs = {name: (lambda run=run: run(dialect, chunks)) for name, run in IMPLS.items()}
                times = cpu_rounds(jobs, _rounds(tokens))
                m = {name: statistics.median(t) / n * 1e6 for name, t in times.items()}
                print(f"| {dialect} | {shape} | {n} | {m['ours']:.3f} | {m['ours, list']:.3f} | {m['vLLM 0.33']:.2f} "
                      f"| {m['SGLang 0.5.23']:.2f} | {m['vLLM 0.33'] / m['ours']:.0f}x "
                      f"| {m['SGLang 0.5.23'] / m['ours']:.0f}x | {m['ours'] / m['floor len']:.1f}x "
                      f"| {m['ours'] / m['floor objects']:.1f}x |", flush=True)
    print()
    print(f"Machine load: {os.getloadavg()[0]:.1f}")


def batch_table(dialects: Sequence[str]) -> None:
    print("| 256 streams, one token per step | steps | StreamBatch µs/token | floor len | floor objects "
          "| / len floor | / objects floor |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for dialect in dialects:
        steps = batch_steps(dialect)
        tokens = len(steps) * STREAMS_PER_BATCH
        times = cpu_rounds({name: (lambda run=run: run(dialect, steps)) for name, run in BATCHES.items()}, 5)
        m = {name: statistics.median(t) / tokens * 1e6 for name, t in times.items()}
        print(f"| {dialect} | {len(steps)} | {m['StreamBatch.step']:.3f} | {m['floor len']:.3f} "
              f"| {m['floor objects']:.3f} | {m['StreamBatch.step'] / m['floor len']:.1f}x "
              f"| {m['StreamBatch.step'] / m['floor objects']:.1f}x |", flush=True)


def whole_table() -> None:
    print("| whole replies | parse_many ms | loop of parse ms | regex + json.loads ms | parse_many vs loop "
          "| parse_many vs regex |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, texts in batch_inputs().items():
        times = cpu_rounds({impl: (lambda run=run: run(texts)) for impl, run in WHOLE.items()}, 15)
        m = {impl: statistics.median(t) * 1e3 for impl, t in times.items()}
        print(f"| {name} | {m['parse_many']:.2f} | {m['loop of parse']:.2f} | {m['regex + json.loads']:.2f} "
              f"| {m['loop of parse'] / m['parse_many']:.2f}x | {m['regex + json.loads'] / m['parse_many']:.1f}x |",
              flush=True)


def run_empty_calls(dialect: str, chunks: Sequence[str]) -> None:
    """The binding's call alone: ``feed_openai("")`` once per delta (argument checks, the
    parser's lock, an empty list back), no text parsed."""
    parser = StreamParser(dialect=dialect, tools=COMPILED)
    feed = parser.feed_openai
    for _ in chunks:
        feed("")


def run_events(dialect: str, chunks: Sequence[str]) -> None:
    """The machines' events instead of deltas (``feed``): the same parse, other objects."""
    parser = StreamParser(dialect=dialect, tools=COMPILED)
    feed = parser.feed
    for chunk in chunks:
        feed(chunk)
    parser.finish()


SPLIT = {"floor len": run_floor, "floor objects": run_objects_floor, "feed_openai('')": run_empty_calls,
         "feed (events)": run_events, "feed_openai": run_ours}


def split_table(dialects: Sequence[str]) -> None:
    """Where a token's time goes on our delta path: the Python loop (len floor), the binding's
    call (feed_openai of an empty chunk), and the parse with its delta objects (the rest)."""
    print("| per token, µs (8,000 tokens, small arguments) | " + " | ".join(SPLIT) + " | deltas per token |")
    print("|---|" + "---:|" * (len(SPLIT) + 1))
    for dialect in dialects:
        chunks = deltas(dialect, 8000, "small")
        out: List[Dict[str, Any]] = []
        run_ours(dialect, chunks, out)
        times = cpu_rounds({name: (lambda run=run: run(dialect, chunks)) for name, run in SPLIT.items()}, 15)
        m = {name: statistics.median(t) / len(chunks) * 1e6 for name, t in times.items()}
        print(f"| {dialect} | " + " | ".join(f"{m[name]:.3f}" for name in SPLIT) + f" | {len(out) / len(chunks):.2f} |",
              flush=True)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--table", action="store_true", help="print the tables")
    cli.add_argument("--dialects", default=",".join(DIALECTS))
    cli.add_argument("--tokens", default=",".join(map(str, LENGTHS)))
    cli.add_argument("--shapes", default=",".join(SHAPES))
    cli.add_argument("--only", default="engines,split,batch,whole",
                     help="which tables: engines, split, batch, whole")
    cli.add_argument("--rounds", type=int, help="rounds per size (default 21 at 500 tokens, 7 at 8,000, 3 above)")
    args = cli.parse_args()
    if args.rounds:
        ROUNDS.update({int(t): args.rounds for t in args.tokens.split(",")})
    if not args.table:
        cli.print_help()
        return
    only = args.only.split(",")
    if "engines" in only:
        if engines is None:
            sys.exit(f"the engines are not importable here ({ENGINES_MISSING}): bash benches/engines/setup.sh")
        table(args.dialects.split(","), [int(t) for t in args.tokens.split(",")], args.shapes.split(","))
        print()
    if "split" in only:
        split_table(("hermes", "qwen3_coder", "glm45", "llama3_json", "gpt_oss"))
        print()
    if "batch" in only:
        batch_table(("hermes", "qwen3_coder", "gpt_oss"))
        print()
    if "whole" in only:
        whole_table()


if __name__ == "__main__":
    main()
