"""``agentmsg.memory`` is now :mod:`agentmsg.history.trim` and :mod:`agentmsg.history.memory`;
this path re-exports them for one release, with the function that pickles of a memory made by
earlier releases name.

    >>> from agentmsg.memory import ConversationMemory, trim
    >>> len(ConversationMemory(100))
    0
"""

from .counting.counter import token_counter  # noqa: F401
from .history.memory import ConversationMemory, _restore_memory  # noqa: F401  (earlier pickles)
from .history.trim import TrimResult, trim  # noqa: F401

__all__ = ["token_counter", "TrimResult", "trim", "ConversationMemory"]
