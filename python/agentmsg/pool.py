"""The thread pool of the parallel batch functions, and how to size it.

``parse_many``, ``count_tokens_batch``, ``message_token_counts``, exact-encoding ``trim`` and the
Arrow batch functions spread their work over one pool of threads per process (a child made by
``fork`` builds its own on first use). The pool has one thread per core unless the environment
variable ``AGENTMSG_NUM_THREADS`` or :func:`set_num_threads` says otherwise.

    >>> import agentmsg
    >>> agentmsg.num_threads() >= 1
    True
"""

from __future__ import annotations

from . import _core
from .errors import MessageTypeError

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
    """
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise MessageTypeError(f"threads must be an int, not {type(threads).__name__}")
    # Values past what fits in a machine word are refused by the core with the same message as 0.
    _core.set_num_threads(threads if 0 < threads < 2**32 else 0)
