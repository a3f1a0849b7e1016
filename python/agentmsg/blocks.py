"""``agentmsg.blocks`` is now :mod:`agentmsg.model.blocks`; this path re-exports it for one
release (and so keeps pickles of blocks loading).

    >>> from agentmsg.blocks import TextBlock
    >>> TextBlock("hi")
    TextBlock(text='hi')
"""

from .model.blocks import *  # noqa: F401,F403
from .model.blocks import __all__  # noqa: F401
