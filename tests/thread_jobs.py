"""Every public entry point that reaches native code, as a job a thread can run; and the child
process that runs one job from threads (``python thread_jobs.py JOB MODE``).

Each job builds its input afresh and returns a plain value (lists, strs, ints) whose ``repr`` is
the same in every process, so two processes can compare results by a digest.

Modes:
- ``main``: the job once, on the main thread (what a single-threaded program sees).
- ``threads``: the first native call of the process from a new thread; then 200 short-lived
  threads; then ``ThreadPoolExecutor`` pools of 1, 2, 4 and 8 workers created and shut down in
  turn; then ``asyncio.to_thread``. Every result must equal the first.
- ``fork``: the job once on a worker thread, then that thread forks; the child runs the job
  (its first native call after the fork, on its main thread and on a new thread) and the parent
  runs it again.

The child prints one line, the sha256 of the result's repr, and exits 0; any difference between
results exits 3 naming it. A crash is the child's exit status (-11 for SIGSEGV).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List

import agentmsg

SHORT_LIVED_THREADS = 200
POOL_SIZES = (1, 2, 4, 8)
CALLS_PER_POOL = 16

CALL = '<tool>{"server_name": "local", "tool_name": "ls", "arguments": {"path": "."}}</tool>'
HERMES_CALL = '<tool_call>{"name": "ls", "arguments": {"path": "."}}</tool_call>'
# Texts long enough that counting, encoding and parsing them in a batch runs on the pool.
LONG_TEXT = "The quick brown fox jumps over the lazy dog. " * 4000
TEXTS = [f"<think>step {i}</think>Reading the file. {CALL}" for i in range(300)] + [LONG_TEXT] * 4


def _history() -> List[agentmsg.Message]:
    messages = [agentmsg.system("You are a coding agent.")]
    for i in range(60):
        messages.append(agentmsg.user(f"Please look at file {i}. " * 20))
        call = agentmsg.ToolUseBlock(f"call_{i}", "read_file", {"path": f"f{i}.py"})
        messages.append(agentmsg.Message.assistant(f"Reading file {i}.", tool_calls=[call]))
        messages.append(agentmsg.tool(f"contents of file {i} " * 30, tool_id=f"call_{i}"))
    return messages


def _texts(messages: List[agentmsg.Message]) -> List[str]:
    return [message.text for message in messages]


def _parsed(parsed: Any) -> list:
    return [parsed.text, list(parsed.thinking), [(c.name, c.input) for c in parsed.tool_calls],
            [(e.kind, e.span) for e in parsed.errors]]


def _stream(dialect: str, text: str) -> list:
    parser = agentmsg.StreamParser(dialect=dialect) if dialect != "forge" else agentmsg.StreamParser()
    events = [type(event).__name__ for chunk in (text[i:i + 7] for i in range(0, len(text), 7))
              for event in parser.feed(chunk)]
    events += [type(event).__name__ for event in parser.finish()]
    return [events, _parsed(parser.result())]


def _memory() -> list:
    memory = agentmsg.ConversationMemory(max_tokens=2_000, counter="o200k_base")
    for message in _history():
        memory.add(message)
    return _texts(memory.messages)


def _arrow() -> list:
    import pyarrow as pa
    from agentmsg.arrow import parse_arrow

    texts = pa.array(TEXTS[:50])
    counts = pa.array(agentmsg.arrow.count_tokens_arrow(texts)).to_pylist()
    parsed = pa.array(parse_arrow(texts)).to_pylist()
    return [counts, [row["text"] for row in parsed]]


def _errors() -> list:
    """The exceptions the binding raises (its classes are looked up once, on first use)."""
    raised = []
    for bad in (lambda: agentmsg.count_tokens("x", encoding="no_such_encoding"),
                lambda: agentmsg.parse("x", dialect="no_such_dialect"),
                lambda: agentmsg.get_encoding("o200k_base").decode([2**31])):
        try:
            bad()
        except agentmsg.AgentMsgError as error:
            raised.append((type(error).__name__, str(error)[:200]))
    return raised


JOBS: Dict[str, Callable[[], Any]] = {
    "errors": _errors,
    "count_tokens": lambda: agentmsg.count_tokens("hello world"),
    "count_tokens_long": lambda: agentmsg.count_tokens(LONG_TEXT),
    "count_tokens_cl100k": lambda: agentmsg.count_tokens("hello world", encoding="cl100k_base"),
    "count_tokens_batch": lambda: agentmsg.count_tokens_batch(TEXTS),
    "encode": lambda: agentmsg.get_encoding("o200k_base").encode("hello <|endoftext|>", allowed_special="all"),
    "encode_batch": lambda: [len(ids) for ids in agentmsg.get_encoding("o200k_base").encode_batch(TEXTS)],
    "decode": lambda: agentmsg.get_encoding("cl100k_base").decode([9906, 1917, 0]),
    "truncate_tokens": lambda: agentmsg.truncate_tokens(LONG_TEXT, 10),
    "estimate_tokens": lambda: [agentmsg.estimate_tokens(LONG_TEXT), agentmsg.estimate_tokens_many(_history())],
    "parse": lambda: _parsed(agentmsg.parse(TEXTS[0])),
    "parse_dialect": lambda: _parsed(agentmsg.parse(HERMES_CALL, dialect="hermes")),
    "parse_many": lambda: [_parsed(p) for p in agentmsg.parse_many(TEXTS)],
    "parse_many_dialect": lambda: [_parsed(p) for p in agentmsg.parse_many([HERMES_CALL] * 300, dialect="hermes")],
    "parse_tool_calls": lambda: [(c.name, c.input) for c in agentmsg.parse_tool_calls(CALL)],
    "stream_parser": lambda: _stream("forge", TEXTS[0]),
    "stream_parser_dialect": lambda: _stream("hermes", "Let me look. " + HERMES_CALL),
    "message_token_counts": lambda: agentmsg.message_token_counts(_history()),
    "count_message_tokens": lambda: agentmsg.count_message_tokens(_history()),
    "trim": lambda: _texts(agentmsg.trim(_history(), 3_000, counter="o200k_base").messages),
    "trim_estimate_partial": lambda: [(r.kept, r.total_tokens, r.partial) for r in (
        agentmsg.trim(_history(), 3_000, allow_partial=True, start_on="user"),
        agentmsg.trim(_history(), 3_000, strategy="first", counter=lambda m: len(m.text) // 3))],
    "conversation_memory": _memory,
    "pair_tool_results": lambda: repr(agentmsg.pair_tool_results(_history()[:-1] + [agentmsg.tool("x", tool_id="zz")])),
    "num_threads": lambda: agentmsg.num_threads() >= 1,
    "arrow": _arrow,
    # Pure Python: the control, which never crashed.
    "message": lambda: agentmsg.user("hi").text,
}


def digest(value: Any) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()


def on_new_thread(job: Callable[[], Any]) -> Any:
    """``job()`` on a thread started for it, which exits when it returns."""
    box: list = []
    thread = threading.Thread(target=lambda: box.append(job()))
    thread.start()
    thread.join()
    if not box:
        raise SystemExit("the job raised on its thread")
    return box[0]


def check(expected: Any, got: Any, where: str) -> None:
    if got != expected:
        print(f"{where}: {got!r:.300} != {expected!r:.300}", file=sys.stderr)
        raise SystemExit(3)


def run_threads(job: Callable[[], Any]) -> Any:
    first = on_new_thread(job)
    for i in range(SHORT_LIVED_THREADS):
        check(first, on_new_thread(job), f"short-lived thread {i}")
    for size in POOL_SIZES:
        with ThreadPoolExecutor(max_workers=size) as pool:
            for got in pool.map(lambda _: job(), range(CALLS_PER_POOL)):
                check(first, got, f"pool of {size}")

    async def in_threads() -> list:
        return await asyncio.gather(*(asyncio.to_thread(job) for _ in range(8)))

    for got in asyncio.run(in_threads()):
        check(first, got, "asyncio.to_thread")
    return first


def run_fork(job: Callable[[], Any]) -> Any:
    """Forks from a worker thread that has used the job; the child's results must match."""
    box: list = []

    def worker() -> None:
        box.append(job())
        pid = os.fork()
        if pid == 0:  # the child: its only thread is this one's copy
            try:
                check(box[0], job(), "child after fork, forking thread")
                check(box[0], on_new_thread(job), "child after fork, new thread")
                status = 0
            except SystemExit as error:
                status = error.code if isinstance(error.code, int) else 3
            except BaseException:
                status = 4
            os._exit(status)
        _, status = os.waitpid(pid, 0)
        box.append(os.waitstatus_to_exitcode(status))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    if box[1] != 0:
        print(f"the child forked from a thread exited with {box[1]}", file=sys.stderr)
        raise SystemExit(5)
    check(box[0], job(), "parent after fork")
    return box[0]


MODES = {"main": lambda job: job(), "threads": run_threads, "fork": run_fork}

if __name__ == "__main__":
    name, mode = sys.argv[1], sys.argv[2]
    print(digest(MODES[mode](JOBS[name])))
