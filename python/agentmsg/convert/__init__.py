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
from .forge import *  # noqa: F401,F403
from .suna import *  # noqa: F401,F403
from .cache import *  # noqa: F401,F403
from .multi_agent import *  # noqa: F401,F403
from .agentscope import *  # noqa: F401,F403
from .arcaelas import *  # noqa: F401,F403
from .wolo import *  # noqa: F401,F403
from .langchain import *  # noqa: F401,F403
from . import _common, agentscope, anthropic, arcaelas, bedrock, cache, dashscope, forge, langchain, multi_agent, openai, suna, wolo

__all__ = [name for module in (_common, openai, anthropic, bedrock, dashscope, forge, suna, cache, multi_agent, agentscope, arcaelas, wolo, langchain,) for name in module.__all__]
