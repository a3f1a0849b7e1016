"""``agentmsg.message`` is now :mod:`agentmsg.model.message`; this path re-exports it for one
release, with the function that pickles of messages made by earlier releases name.

    >>> from agentmsg.message import Message
    >>> Message.user("hi").text
    'hi'
"""

from .model.message import *  # noqa: F401,F403
from .model.message import __all__  # noqa: F401
from .model.message import _unpickle  # noqa: F401  (named by earlier releases' pickles)
