"""``agentmsg.toolpairs`` is now :mod:`agentmsg.history.toolpairs`; this path re-exports it for
one release.

    >>> from agentmsg.toolpairs import check_tool_pairs
    >>> check_tool_pairs([agentmsg.user("hi")])
"""

from .history.toolpairs import *  # noqa: F401,F403
from .history.toolpairs import INTERRUPTED, __all__  # noqa: F401
