"""Converters between :class:`agentmsg.Message` and every provider and framework format.

One small module per format; every public converter is re-exported here and from ``agentmsg``:

    >>> import agentmsg
    >>> agentmsg.to_openai([agentmsg.user("Hi")])
    [{'role': 'user', 'content': 'Hi'}]
"""

from ._common import *  # noqa: F401,F403
from .openai import *  # noqa: F401,F403
from .anthropic import *  # noqa: F401,F403
from .bedrock import *  # noqa: F401,F403
from .dashscope import *  # noqa: F401,F403
from . import _common, anthropic, bedrock, dashscope, openai

__all__ = [name for module in (_common, openai, anthropic, bedrock, dashscope,) for name in module.__all__]
