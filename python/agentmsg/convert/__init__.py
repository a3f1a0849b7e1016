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
# A literal list, so type checkers see every name (mypy cannot follow a list built at run time);
# tests/test_typing.py checks it equals the modules' own __all__.
__all__ = [
    # agentmsg.convert._common
    "ConversionWarning",
    # agentmsg.convert.openai
    "to_openai", "from_openai",
    # agentmsg.convert.anthropic
    "to_anthropic", "from_anthropic", "openai_to_anthropic",
    # agentmsg.convert.bedrock
    "to_bedrock", "from_bedrock",
    # agentmsg.convert.dashscope
    "to_dashscope", "from_dashscope",
    # agentmsg.convert.forge
    "to_forge", "from_forge",
    # agentmsg.convert.suna
    "from_db_rows", "to_db_rows", "NON_LLM_ROW_TYPES",
    # agentmsg.convert.cache
    "format_conversation_for_cache", "is_cached_block", "filter_for_bedrock",
    # agentmsg.convert.multi_agent
    "format_multi_agent",
    # agentmsg.convert.agentscope
    "to_agentscope", "from_agentscope",
    # agentmsg.convert.arcaelas
    "to_arcaelas", "from_arcaelas",
    # agentmsg.convert.wolo
    "WoloTextPart", "WoloToolPart", "WoloMessage", "from_wolo", "to_wolo", "to_llm_messages",
    "WOLO_SYSTEM_PROMPT", "WOLO_SENT_STATUSES",
    # agentmsg.convert.langchain
    "to_langchain", "from_langchain",
]
