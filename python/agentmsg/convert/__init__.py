"""Converters between :class:`agentmsg.Message` and every provider and framework format.

One small module per format; every public converter is re-exported here and from ``agentmsg``:

    >>> import agentmsg
    >>> agentmsg.to_openai([agentmsg.user("Hi")])
    [{'role': 'user', 'content': 'Hi'}]
"""

from ..errors import ConversionWarning  # noqa: F401  (re-exported: warnings of the converters)
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
from .responses import *  # noqa: F401,F403
from .gemini import *  # noqa: F401,F403
from .mcp import *  # noqa: F401,F403
# A literal list, so type checkers see every name (mypy cannot follow a list built at run time);
# tests/test_typing.py checks it equals the modules' own __all__.
__all__ = [
    "ConversionWarning",
    "to_openai",
    "from_openai",
    "to_anthropic",
    "from_anthropic",
    "openai_to_anthropic",
    "to_bedrock",
    "from_bedrock",
    "to_dashscope",
    "from_dashscope",
    "to_forge",
    "from_forge",
    "from_db_rows",
    "to_db_rows",
    "NON_LLM_ROW_TYPES",
    "format_conversation_for_cache",
    "is_cached_block",
    "filter_for_bedrock",
    "format_multi_agent",
    "to_agentscope",
    "from_agentscope",
    "to_arcaelas",
    "from_arcaelas",
    "WoloTextPart",
    "WoloToolPart",
    "WoloMessage",
    "from_wolo",
    "to_wolo",
    "to_llm_messages",
    "WOLO_SYSTEM_PROMPT",
    "WOLO_SENT_STATUSES",
    "to_langchain",
    "from_langchain",
    "to_responses",
    "from_responses",
    "to_gemini",
    "from_gemini",
    "from_gemini_stream",
    "afrom_gemini_stream",
    "from_mcp_result",
]
