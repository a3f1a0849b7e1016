"""The batch functions work in a child made by fork after the parent used them.

rayon's pool does not survive fork (the child has its state but not its threads), so every test
here runs the child under a deadline: a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agentmsg
from local_server import free_port, get_json, stop
from transcripts import build_transcript

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")

DEADLINE_SECONDS = 30
# Long enough that counting it is cut into chunks counted in parallel.
LONG_TEXT = "The quick brown fox jumps over the lazy dog. " * 4000
# Built once in the parent: the forked children share its message ids.
HISTORY = build_transcript(300)
TEXTS = ["<think>plan</think>Calling <tool>{\"name\": \"ls\", \"arguments\": {}}</tool>", LONG_TEXT] * 50


def batch_results() -> dict:
    """What each batch function returns on fixed inputs, in a picklable form."""
    history = HISTORY
    return {
        "parse_many": [(p.text, [c.name for c in p.tool_calls]) for p in agentmsg.parse_many(TEXTS)],
        "count_tokens_batch": agentmsg.count_tokens_batch(TEXTS),
        "count_tokens_long": agentmsg.count_tokens(LONG_TEXT),
        "message_token_counts": agentmsg.message_token_counts(history),
        "trim": [m.id for m in agentmsg.trim(history, 20_000, counter="o200k_base").messages],
        "parse_many_hermes": [p.text for p in agentmsg.parse_many(TEXTS, dialect="hermes")],
        "encode_batch": [len(ids) for ids in agentmsg.get_encoding("o200k_base").encode_batch(TEXTS)],
        "encode_long": len(agentmsg.get_encoding("o200k_base").encode_ordinary(LONG_TEXT)),
    }


@pytest.fixture(scope="module")
def parent_results() -> dict:
    # The parent uses every batch function (and so starts its pool) before any fork.
    return batch_results()


def run_in_fork(work) -> object:
    """``work()`` in a child made by ``os.fork``; its pickled result, or a failure at the deadline."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 0
        try:
            os.close(read_end)
            payload = pickle.dumps(work())
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    chunks = []
    deadline = time.monotonic() + DEADLINE_SECONDS
    with os.fdopen(read_end, "rb") as source:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([source], [], [], max(left, 0))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail(f"the forked child hung for {DEADLINE_SECONDS} s")
            chunk = os.read(source.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    assert status == 0, f"the forked child failed with status {status}"
    return pickle.loads(b"".join(chunks))


def test_os_fork_child_runs_every_batch_function(parent_results):
    assert run_in_fork(batch_results) == parent_results


def test_fork_of_a_fork_and_the_parent_still_works(parent_results):
    assert run_in_fork(lambda: run_in_fork(batch_results)) == parent_results
    assert batch_results() == parent_results


def test_child_pool_has_the_configured_size():
    before = agentmsg.num_threads()
    agentmsg.set_num_threads(3)
    try:
        assert run_in_fork(lambda: (agentmsg.num_threads(), agentmsg.count_tokens_batch(["a b"] * 9))) == (3, [2] * 9)
    finally:
        agentmsg.set_num_threads(before)


def _count_in_worker(texts):
    return agentmsg.count_tokens_batch(texts), [p.text for p in agentmsg.parse_many(texts)]


def test_multiprocessing_fork_pool(parent_results):
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        results = pool.map_async(_count_in_worker, [TEXTS[:10], TEXTS[10:20], TEXTS[:4]])
        counts = results.get(timeout=DEADLINE_SECONDS)
    expected_counts = parent_results["count_tokens_batch"]
    assert [c for c, _ in counts] == [expected_counts[:10], expected_counts[10:20], expected_counts[:4]]
    assert [t for _, t in counts][2] == [text for text, _ in parent_results["parse_many"][:4]]


def test_bad_thread_counts_are_refused():
    with pytest.raises(agentmsg.MessageError, match="at least 1"):
        agentmsg.set_num_threads(0)
    with pytest.raises(agentmsg.MessageTypeError, match="must be an int, not bool"):
        agentmsg.set_num_threads(True)
    with pytest.raises(TypeError):
        agentmsg.set_num_threads("2")


def test_bad_environment_size_is_named():
    code = "import agentmsg; agentmsg.count_tokens_batch(['a'])"
    env = dict(os.environ, AGENTMSG_NUM_THREADS="many", PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "MessageError: AGENTMSG_NUM_THREADS must be a whole number from 1 to " in done.stderr
    assert done.stderr.endswith(", not 'many'\n")
    # A text too short to be counted in parallel neither needs nor builds the pool.
    code = "import agentmsg; print(agentmsg.count_tokens('a ' * 4000))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout == "4001\n"
    env["AGENTMSG_NUM_THREADS"] = "1"
    code = "import agentmsg; print(agentmsg.num_threads(), agentmsg.count_tokens_batch(['a b']))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout == "1 [2]\n"


# -- a pre-fork server: gunicorn --preload ------------------------------------------------------

APP = '''
import json
import agentmsg

TEXTS = {texts!r}
# --preload imports this module in the master: its pool is started before the workers fork.
AT_IMPORT = agentmsg.count_tokens_batch(TEXTS), [p.text for p in agentmsg.parse_many(TEXTS)]


def app(environ, start_response):
    body = json.dumps([agentmsg.count_tokens_batch(TEXTS), [p.text for p in agentmsg.parse_many(TEXTS)]])
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body.encode()]
'''


def test_gunicorn_preload_workers_answer(tmp_path: Path, parent_results):
    pytest.importorskip("gunicorn")
    texts = TEXTS[:6]
    (tmp_path / "forkapp.py").write_text(APP.format(texts=texts))
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    command = [sys.executable, "-m", "gunicorn", "--preload", "-w", "2", "--timeout", "20",
               "-b", f"127.0.0.1:{port}", "forkapp:app"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        expected = [parent_results["count_tokens_batch"][:6], [t for t, _ in parent_results["parse_many"][:6]]]
        deadline = time.monotonic() + DEADLINE_SECONDS
        answers = [get_json(f"http://127.0.0.1:{port}/", deadline) for _ in range(8)]
        assert answers == [expected] * 8
    finally:
        stop(server, DEADLINE_SECONDS)
