"""What the server benchmarks share (``bench_server_speed.py``, ``bench_engines.py``): a
request's 20 realistic tools, the per-delta floors, and the 256-stream batch."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from agentmsg import StreamBatch, Tools


def tool_definitions(count: int = 20) -> List[Dict[str, Any]]:
    """``count`` tools shaped as real ones are: a description, typed and described parameters,
    an enum, required names."""
    return [{"type": "function", "function": {
        "name": f"tool_{i}", "description": f"Does thing number {i} with care and precision, and says what it did.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city, as its inhabitants write it"},
            "days": {"type": "integer", "description": "How many days ahead"},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "verbose": {"type": "boolean"}}, "required": ["city"]}}} for i in range(count)]


TOOLS = tool_definitions()
COMPILED = Tools(TOOLS)  # compiled once per server, as a server does


def run_floor(dialect: str, chunks: Sequence[str]) -> None:
    """The loop alone: what reading the deltas costs before any parsing."""
    for chunk in chunks:
        len(chunk)


def run_objects_floor(dialect: str, chunks: Sequence[str]) -> None:
    """What any per-delta API that returns new objects must at least do: a new list holding a
    new dict."""
    for chunk in chunks:
        [{"content": chunk}]


STREAMS_PER_BATCH = 256


def shifted_steps(chunks: Sequence[str]) -> List[List[str]]:
    """An engine's steps for 256 streams of one reply's deltas, one delta each per step, the
    streams shifted so that they are at different places of the reply."""
    return [[chunks[(step + n) % len(chunks)] for n in range(STREAMS_PER_BATCH)] for step in range(len(chunks))]


def run_batch(dialect: str, steps: Sequence[Sequence[str]]) -> None:
    batch = StreamBatch(dialect=dialect, tools=COMPILED)
    ids = [batch.add() for _ in range(STREAMS_PER_BATCH)]
    step = batch.step
    for texts in steps:
        step(list(zip(ids, texts)))
    for stream in ids:
        batch.finish(stream)


def run_batch_floor(dialect: str, steps: Sequence[Sequence[str]]) -> None:
    """The batch's loop alone: the (stream, delta) pairs walked, nothing parsed."""
    ids = list(range(STREAMS_PER_BATCH))
    for texts in steps:
        for _, text in zip(ids, texts):
            len(text)


def run_batch_objects_floor(dialect: str, steps: Sequence[Sequence[str]]) -> None:
    """The pairs built and a list of per-stream delta lists returned, as ``step`` must."""
    ids = list(range(STREAMS_PER_BATCH))
    for texts in steps:
        [[{"content": text}] for _, text in list(zip(ids, texts))]
