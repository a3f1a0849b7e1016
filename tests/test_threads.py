"""Native code called from threads: the first call of a process from a worker thread, threads
that exit, pools made and shut down, ``asyncio.to_thread``, a fork from a worker thread, and a
gunicorn ``gthread`` worker serving requests.

Each case runs in a fresh interpreter (``tests/thread_jobs.py``), because the faults this guards
against happen once per process: a call made first from the main thread hides them. A crash in
the child fails the test with its exit status; a hang fails it at the deadline.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agentmsg
import thread_jobs
from local_server import free_port, get_json, stop

JOBS_SCRIPT = Path(thread_jobs.__file__)
PACKAGE_ROOT = Path(agentmsg.__file__).resolve().parent.parent
DEADLINE_SECONDS = 120


def run_child(job: str, mode: str, **env: str) -> str:
    """The digest the child prints for ``job`` in ``mode``; fails on a crash, an error or a hang."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), str(JOBS_SCRIPT.parent)]), **env}
    try:
        done = subprocess.run([sys.executable, str(JOBS_SCRIPT), job, mode], env=environment,
                              capture_output=True, text=True, timeout=DEADLINE_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{job} ({mode}) hung for {DEADLINE_SECONDS} s")
    if done.returncode < 0:
        pytest.fail(f"{job} ({mode}) crashed: {signal.Signals(-done.returncode).name} (exit status "
                    f"{128 - done.returncode}); stderr: {done.stderr[-2000:]}")
    assert done.returncode == 0, f"{job} ({mode}) exited with {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout.strip()


@pytest.fixture(scope="module")
def expected() -> dict:
    """Each job's result digest from a process that makes every call on its main thread, filled
    as the tests ask (``main_thread_digest``)."""
    return {}


def main_thread_digest(expected: dict, job: str) -> str:
    if job not in expected:
        expected[job] = run_child(job, "main")
    return expected[job]


@pytest.mark.parametrize("job", sorted(thread_jobs.JOBS))
def test_first_call_from_a_worker_thread_then_short_lived_threads_and_pools(job, expected):
    if job == "arrow":
        pytest.importorskip("pyarrow")
    assert run_child(job, "threads") == main_thread_digest(expected, job)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
@pytest.mark.parametrize("job", ["count_tokens_batch", "encode_batch", "parse_many", "parse_many_dialect",
                                 "stream_parser_dialect", "trim", "count_tokens_long"])
def test_fork_from_a_worker_thread(job, expected):
    assert run_child(job, "fork") == main_thread_digest(expected, job)


@pytest.mark.parametrize("seed", ["0", "4242"])
def test_every_process_gives_the_same_results(seed, expected):
    """Results do not depend on the process: another hash seed, another digest would show it."""
    for job in ("parse_many", "stream_parser_dialect", "trim", "pair_tool_results"):
        assert run_child(job, "main", PYTHONHASHSEED=seed) == main_thread_digest(expected, job)


# -- a threaded server: gunicorn's gthread worker ------------------------------------------------

SERVED = ("count_tokens", "count_tokens_batch", "parse", "parse_many_dialect", "stream_parser", "trim")
APP = f'''
import json
import thread_jobs

SERVED = {SERVED!r}


def app(environ, start_response):
    # No call at import: the first native call of the worker is made by one of its threads.
    job = environ["PATH_INFO"].strip("/")
    body = json.dumps(thread_jobs.digest(thread_jobs.JOBS[job]())) if job in SERVED else "null"
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body.encode()]
'''


def test_gunicorn_gthread_worker_serves_requests_from_its_threads(tmp_path: Path, expected):
    pytest.importorskip("gunicorn")
    from concurrent.futures import ThreadPoolExecutor

    (tmp_path / "threadapp.py").write_text(APP)
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(PACKAGE_ROOT), str(JOBS_SCRIPT.parent)]))
    log = tmp_path / "gunicorn.log"
    command = [sys.executable, "-m", "gunicorn", "-k", "gthread", "--threads", "4", "-w", "2",
               "--timeout", "60", "--log-level", "info", "-b", f"127.0.0.1:{port}", "threadapp:app"]
    jobs = [SERVED[i % len(SERVED)] for i in range(36)]
    with open(log, "wb") as log_file:
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log_file)
    try:
        deadline = time.monotonic() + DEADLINE_SECONDS
        get_json(f"http://127.0.0.1:{port}/warmup", deadline)  # the server is up (no native call yet)
        for wave in ("first workers", "after a reload"):
            with ThreadPoolExecutor(max_workers=8) as clients:
                answers = list(clients.map(lambda job: get_json(f"http://127.0.0.1:{port}/{job}", deadline), jobs))
            assert answers == [main_thread_digest(expected, job) for job in jobs], wave
            if wave == "first workers":  # new workers, whose first calls come from threads too
                server.send_signal(signal.SIGHUP)
                while log.read_text(errors="replace").count("Worker exiting") < 2:  # the old ones left
                    assert time.monotonic() < deadline, "gunicorn did not reload its workers"
                    time.sleep(0.1)
    finally:
        stop(server)
    # gunicorn replaces a worker that died ("was sent SIGSEGV!"): a crash the answers could hide.
    # (Stopping the server may log "was sent SIGTERM!", which is not one.)
    text = log.read_text(errors="replace")
    crashes = re.findall(r"was sent (SIG(?:SEGV|BUS|ABRT|ILL|FPE|KILL))|exited with code (\d+)", text)
    assert not crashes, text[-2000:]
