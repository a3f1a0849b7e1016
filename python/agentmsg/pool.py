"""The thread pool of the parallel batch functions, and how to size it.

``parse_many``, ``count_tokens_batch``, ``message_token_counts``, exact-encoding ``trim`` and the
Arrow batch functions spread their work over one pool of threads per process (a child made by
``fork`` builds its own on first use). The pool has one thread per core unless the environment
variable ``AGENTMSG_NUM_THREADS`` or :func:`set_num_threads` says otherwise. Either takes a
whole number from 1 to 256 (to the number of cores on a machine with more): the work is
CPU-bound, so more threads than cores only take turns, and each costs a start-up.

    >>> import agentmsg
    >>> agentmsg.num_threads() >= 1
    True
"""

from __future__ import annotations

from . import _core
from ._checks import check_calls

__all__ = ["num_threads", "set_num_threads"]


def num_threads() -> int:
    """The number of threads the parallel batch functions use in this process.

    >>> num_threads() >= 1
    True
    """
    return _core.num_threads()


def set_num_threads(threads: int) -> None:
    """Sizes the pool of the parallel batch functions (it overrides ``AGENTMSG_NUM_THREADS``).

    Calls already running finish on the old pool; the next call builds the new one. A server
    that runs its own worker threads may want fewer pool threads than cores.

    >>> before = num_threads()
    >>> set_num_threads(1); num_threads()
    1
    >>> set_num_threads(before)
    >>> set_num_threads(5000)
    Traceback (most recent call last):
    ...
    agentmsg.errors.MessageError: threads must be at most ... not 5000
    """
    _core.set_num_threads(threads)


check_calls(globals())
