"""agentmsg.StreamBatch: many streams advanced by one call per step, equal stream by stream to
separate ``StreamParser``s (issue 25)."""

from __future__ import annotations

import pickle
import threading
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import MessageError, MessageTypeError, StreamBatch, StreamParser
from test_server_speed_deltas import FRAGMENTS, TOOLS, split


def separately(pieces: List[str], responses: bool = False, start: int = 0, **options: Any) -> List[Dict[str, Any]]:
    parser = StreamParser(**options)
    if responses:  # output="responses": the events of feed_responses, numbered from start
        events = [e for i, piece in enumerate(pieces) for e in parser.feed_responses(piece, sequence_number=start if i == 0 else None)]
        return events + parser.finish_responses(sequence_number=None if pieces else start)
    deltas = [d for piece in pieces for d in parser.feed_openai(piece)]
    return deltas + parser.finish_openai()


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(FRAGMENTS)), st.data())
def test_a_batch_equals_separate_parsers_stream_by_stream(dialect: Any, data: st.DataObject) -> None:
    options: Dict[str, Any] = {"dialect": dialect}
    if data.draw(st.booleans()):
        options["tools"] = TOOLS
    count = data.draw(st.integers(1, 5))
    streams: List[List[str]] = []
    for _ in range(count):
        text = "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS[dialect]), max_size=25)))
        streams.append(split(text, data.draw(st.lists(st.integers(0, len(text)), max_size=12))))
    responses = data.draw(st.booleans())
    starts = [data.draw(st.integers(0, 3)) if responses else 0 for _ in streams]
    batch = StreamBatch(output="responses" if responses else "openai", **options)
    schedule = data.draw(st.randoms(use_true_random=False))
    got: Dict[int, List[Dict[str, Any]]] = {}
    ids: Dict[int, int] = {}  # stream number -> batch id, for the streams open now
    left = {n: list(pieces) for n, pieces in enumerate(streams)}  # the streams not finished
    while left:
        # Streams open between steps (at least one is open), and finish when their pieces are read.
        for n in left:
            if n not in ids and (not ids or schedule.random() < 0.5):
                ids[n] = batch.add(sequence_number=starts[n]) if responses else batch.add()
                got[n] = []
        pairs: List[Tuple[int, str]] = []
        owners: List[int] = []
        for n in ids:
            for _ in range(schedule.choice((0, 1, 1, 2))):  # a stream may come twice in a step
                if left[n]:
                    pairs.append((ids[n], left[n].pop(0)))
                    owners.append(n)
        waiting = [n for n in ids if left[n]]
        if not pairs and waiting:  # every step moves some stream
            pairs.append((ids[waiting[0]], left[waiting[0]].pop(0)))
            owners.append(waiting[0])
        for n, deltas in zip(owners, batch.step(pairs)):
            got[n] += deltas
        for n in [n for n in ids if not left[n] and schedule.random() < 0.7]:
            got[n] += batch.finish(ids.pop(n))
            del left[n]
    assert len(batch) == 0
    for n, pieces in enumerate(streams):
        assert got[n] == separately(pieces, responses, starts[n], **options)


def test_a_responses_batch_checks_its_output_and_numbers() -> None:
    batch = StreamBatch(dialect="hermes", output="responses")
    a = batch.add(sequence_number=5)
    [events] = batch.step([(a, "Hi")])
    assert [(e["type"], e["sequence_number"]) for e in events] == [
        ("response.output_item.added", 5), ("response.content_part.added", 6), ("response.output_text.delta", 7)]
    assert [e["type"] for e in batch.finish(a)][-1] == "response.output_item.done"
    with pytest.raises(MessageError, match="output must be 'openai' or 'responses'"):
        StreamBatch(output="chat")
    with pytest.raises(MessageTypeError, match="output must be"):
        StreamBatch(output=1)
    with pytest.raises(MessageError, match="output=.responses."):
        StreamBatch().add(sequence_number=1)
    with pytest.raises(MessageError, match="negative"):
        batch.add(sequence_number=-1)


def test_step_returns_each_pairs_deltas_in_order() -> None:
    batch = StreamBatch(dialect="hermes")
    a, b = batch.add(), batch.add()
    assert (a, b) == (0, 1) and len(batch) == 2
    out = batch.step([(a, "Hi"), (b, "<think>x</think>"), (a, " there")])
    assert out == [[{"content": "Hi"}], [{"reasoning_content": "x"}], [{"content": " there"}]]
    assert batch.step([]) == []
    # Two streams' text in one step stays each stream's (the machines merge pieces of their own text).
    assert batch.step([(a, " and"), (b, "Ok"), (a, " more")]) == [[{"content": " and"}], [{"content": "Ok"}],
                                                                  [{"content": " more"}]]
    assert batch.finish(a) == [] and len(batch) == 1
    c = batch.add()
    assert batch.step([(c, "new"), (b, " then")]) == [[{"content": "new"}], [{"content": " then"}]]
    assert batch.finish(b) == [] and batch.finish(c) == [] and len(batch) == 0


def test_bad_pairs_move_no_stream() -> None:
    batch = StreamBatch()
    a = batch.add()
    with pytest.raises(MessageError, match=r"^pairs\[1\]: no open stream 7 in this batch$"):
        batch.step([(a, "Hi "), (7, "x")])
    with pytest.raises(MessageTypeError, match=r"^pairs\[1\]: the text must be a str$"):
        batch.step([(a, "Hi "), (a, 5)])
    with pytest.raises(MessageTypeError, match=r"^pairs\[0\] must be a \(stream, text\) tuple, not list$"):
        batch.step([[a, "x"]])
    with pytest.raises(MessageTypeError, match="^pairs must be a list"):
        batch.step((a, "x"))  # type: ignore[arg-type]
    assert batch.step([(a, "ok")]) == [[{"content": "ok"}]]  # "Hi " was never read
    batch.finish(a)
    with pytest.raises(MessageError, match="^finish: no open stream 0 in this batch$"):
        batch.finish(a)
    with pytest.raises(MessageTypeError):
        pickle.dumps(batch)
    with pytest.raises(MessageError, match="thinking: an option of the forge dialect only"):
        StreamBatch(dialect="hermes", thinking="tags")


def test_batches_in_threads_give_what_they_give_alone() -> None:
    texts = [f'Step {i}. <tool>{{"tool_name": "f", "arguments": {{"i": {i}}}}}</tool> done' for i in range(40)]
    chunks = [[text[j:j + 3] for j in range(0, len(text), 3)] for text in texts]

    def run() -> List[List[Dict[str, Any]]]:
        batch = StreamBatch()
        ids = [batch.add() for _ in texts]
        out: List[List[Dict[str, Any]]] = [[] for _ in texts]
        for step in range(max(map(len, chunks))):
            pairs = [(ids[n], pieces[step]) for n, pieces in enumerate(chunks) if step < len(pieces)]
            for (stream, _), deltas in zip(pairs, batch.step(pairs)):
                out[ids.index(stream)] += deltas
        for n, stream in enumerate(ids):
            out[n] += batch.finish(stream)
        return out

    alone = run()
    assert alone == [separately(pieces) for pieces in chunks]
    results: List[Any] = []
    threads = [threading.Thread(target=lambda: results.append(run())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [alone] * 4
    assert agentmsg.parse(texts[0]).tool_calls[0].input == {"i": 0}


def test_one_batch_used_from_two_threads_at_once_is_a_message_error() -> None:
    # While one thread's step parses (the GIL released), another thread's call on the same
    # batch is refused with agentmsg's MessageError, not PyO3's bare RuntimeError.
    batch = StreamBatch(dialect="hermes")
    stream = batch.add()
    long_text = "word " * 2_000_000
    refused: List[BaseException] = []
    failed: List[BaseException] = []

    def step() -> None:
        try:
            batch.step([(stream, long_text)])
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            failed.append(error)

    for _ in range(20):
        thread = threading.Thread(target=step)
        thread.start()
        while thread.is_alive() and not refused:
            try:
                len(batch)
                batch.add()
            except MessageError as error:
                refused.append(error)
        thread.join()
        if refused:
            break
    assert failed == []
    assert [type(error) for error in refused] == [MessageError]
    assert str(refused[0]) == "this StreamBatch is in use by another call: a parser is used by one thread at a time"
    assert isinstance(refused[0], ValueError)
