"""agentmsg: the message work of LLM agents, with a Rust core.

The whole public API is importable from here::

    >>> import agentmsg
    >>> agentmsg.user("Hi").text
    'Hi'
"""

from .errors import *  # noqa: F401,F403
from .blocks import *  # noqa: F401,F403
from .message import *  # noqa: F401,F403
from .estimate import *  # noqa: F401,F403
from .conversation import *  # noqa: F401,F403
from .parsing import *  # noqa: F401,F403
from .tokens import *  # noqa: F401,F403
from .encoding import *  # noqa: F401,F403
from .memory import *  # noqa: F401,F403
from .toolpairs import *  # noqa: F401,F403
from .compaction import *  # noqa: F401,F403
from .convert import *  # noqa: F401,F403
from .transcripts import *  # noqa: F401,F403
from .workbench import *  # noqa: F401,F403
from .dialects import DIALECTS, ToolCallHeader, openai_deltas  # noqa: F401
from .pool import *  # noqa: F401,F403

__version__ = "0.1.0"

# A literal list, so type checkers see every name (mypy cannot follow a list built at run time);
# tests/test_typing.py checks it equals the modules' own __all__.
__all__ = [
    # agentmsg.errors
    "AgentMsgError", "MessageError", "MessageTypeError", "ToolCallError", "EncodingError",
    "ToolPairError", "ConversionError",
    # agentmsg.blocks
    "URLSource", "Base64Source", "Source", "TextBlock", "ImageBlock", "AudioBlock",
    "VideoBlock", "ThinkingBlock", "ToolUseBlock", "ToolResultBlock", "Block", "block_to_dict",
    "block_from_dict",
    # agentmsg.message
    "Role", "Message", "system", "user", "assistant", "tool",
    # agentmsg.estimate
    "estimate_tokens", "estimate_tokens_many", "measured_text", "ROLE_CODES",
    # agentmsg.conversation
    "filter_by_role", "count_by_role", "ConversationStats", "conversation_stats",
    # agentmsg.parsing
    "parse", "Parsed", "ParseIssue", "parse_many", "parse_tool_calls", "validate_tool_call",
    "format_tool_call", "format_tool_result", "parse_tool_result", "ToolResultText",
    "StreamParser", "TextDelta", "ThinkingDelta", "ThinkingEnd", "ToolCallStart",
    "ToolCallDelta", "ToolCallEnd",
    # agentmsg.tokens
    "ENCODINGS", "count_tokens", "count_tokens_batch", "count_tokens_up_to", "fits",
    "message_token_counts", "count_message_tokens", "acount_tokens", "acount_message_tokens",
    # agentmsg.encoding
    "Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model",
    "resolve_encoding", "truncate_tokens", "TOKEN_ENCODINGS", "DisallowedSpecialTokenError",
    "TokenIdError", "UnknownModelError",
    # agentmsg.memory
    "token_counter", "TrimResult", "trim", "ConversationMemory",
    # agentmsg.toolpairs
    "ToolPairing", "pair_tool_results", "check_tool_pairs", "repair_tool_pairs",
    # agentmsg.compaction
    "prune_tool_outputs", "compress", "expand", "summarize", "asummarize", "Compactor",
    # agentmsg.convert
    "ConversionWarning", "to_openai", "from_openai", "to_anthropic", "from_anthropic",
    "to_bedrock", "from_bedrock", "to_dashscope", "from_dashscope", "to_forge", "from_forge",
    "from_db_rows", "to_db_rows", "NON_LLM_ROW_TYPES", "format_conversation_for_cache",
    "is_cached_block", "filter_for_bedrock", "format_multi_agent", "to_agentscope",
    "from_agentscope", "to_arcaelas", "from_arcaelas", "WoloTextPart", "WoloToolPart",
    "WoloMessage", "from_wolo", "to_wolo", "to_llm_messages", "WOLO_SYSTEM_PROMPT",
    "WOLO_SENT_STATUSES", "to_langchain", "from_langchain",
    # agentmsg.pool
    "num_threads", "set_num_threads",
    # agentmsg.transcripts
    "TranscriptError", "Transcript", "load_transcript", "iter_transcripts",
    "TRANSCRIPT_FORMATS",
    # agentmsg.workbench
    "MessageCounter", "Strategy", "first_sentence_summary", "builtin_strategies",
    "DEFAULT_STRATEGIES", "DEFAULT_BUDGETS", "PROVIDERS", "ordering_problem", "ReplayMetrics",
    "WorkbenchReport", "replay", "run_workbench", "MissingDependencyError",
    # agentmsg.dialects
    "DIALECTS", "ToolCallHeader", "openai_deltas",
]
