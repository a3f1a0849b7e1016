"""A server the tests start on loopback (gunicorn, in test_fork and test_threads): a free port,
and a JSON GET that waits for the server to start."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get_json(url: str, deadline: float) -> Any:
    """The JSON answer at ``url``; while the server is not up yet (the connection is refused or
    reset), tries again until ``deadline`` (a ``time.monotonic()`` value)."""
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return json.loads(response.read())
        except (ConnectionError, urllib.error.URLError) as error:
            reason = getattr(error, "reason", error)
            if not isinstance(reason, ConnectionError) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def stop(server: subprocess.Popen, seconds: float = 30) -> None:
    """Stops ``server`` (SIGTERM, then SIGKILL after ``seconds``) and reaps it."""
    server.terminate()
    try:
        server.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
