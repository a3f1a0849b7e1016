"""agentmsg: the message work of LLM agents, with a Rust core.

The whole public API is importable from here::

    >>> import agentmsg
    >>> agentmsg.user("Hi").text
    'Hi'

``import agentmsg`` loads nothing but this file: a public name is imported from its module the
first time it is used (PEP 562), so the import costs no more than ``import tiktoken`` and a
program pays only for the parts it uses (``tests/test_import_time.py``).
"""

# Not ``typing.TYPE_CHECKING``: importing typing would load a dozen modules (re, enum, functools,
# ...) into a program that never uses them. Type checkers read any name TYPE_CHECKING as true.
TYPE_CHECKING = False

__version__ = "0.1.0"

# The modules whose public names (their ``__all__``) make the API, the cheap and common ones
# first: a name is looked up in them in this order, importing each only as far as needed.
_MODULES = (
    "errors",
    "model.blocks",
    "model.message",
    "model.results",
    "readers",
    "parsing",
    "parsing.models",
    "options",
    "counting.tokens",
    "counting.encoding",
    "counting.counter",
    "counting.tokenizer",
    "counting.request",
    "counting.chat_template",
    "counting.chat_tokens",
    "history.conversation",
    "history.toolpairs",
    "history.check",
    "history.trim",
    "history.memory",
    "history.compaction",
    "convert",
    "convert.deltas",
    "convert.streams",
    "convert.responses_stream",
    "convert.responses_events",
    "pool",
    "workbench",
)
# Of these modules only some names are exported here (the rest is reached as agentmsg.<module>).
_EXPORTED = {
    "errors": ("AgentMsgError", "MessageError", "MessageTypeError", "ToolCallError", "EncodingError",
               "ToolPairError", "ConversionError", "MissingDependencyError", "DisallowedSpecialTokenError",
               "TokenIdError", "UnknownModelError", "TranscriptError", "TokenizerError",
               "TemplateError", "DialectTemplateError"),  # ConversionWarning: with convert
    "options": ("Dialect", "Tools"),
    "model.results": ("Parsed", "ParseIssue", "TextDelta", "ThinkingDelta", "ThinkingEnd", "ToolCallStart",
                      "ToolCallDelta", "ToolCallEnd", "ToolCallHeader"),
    "counting.counter": ("MessageCounter", "token_counter"),
}
# The public names, in the order of _MODULES: a literal list, so type checkers read it without
# running the module (tests/test_typing.py and tests/test_import_time.py hold it to the modules).
__all__ = [
    # agentmsg.errors
    "AgentMsgError", "MessageError", "MessageTypeError", "ToolCallError", "EncodingError",
    "ToolPairError", "ConversionError", "MissingDependencyError", "DisallowedSpecialTokenError",
    "TokenIdError", "UnknownModelError", "TranscriptError", "TokenizerError",
    "TemplateError", "DialectTemplateError",
    # agentmsg.model.blocks
    "URLSource", "Base64Source", "Source", "TextBlock", "ImageBlock", "AudioBlock", "VideoBlock",
    "ThinkingBlock", "ToolUseBlock", "ToolResultBlock", "Block", "block_to_dict", "block_from_dict",
    "ServerToolUseBlock", "ServerToolResultBlock", "DocumentBlock",
    # agentmsg.model.message
    "Role", "Message", "system", "user", "assistant", "tool", "ROLE_CODES",
    # agentmsg.model.results
    "Parsed", "ParseIssue", "TextDelta", "ThinkingDelta", "ThinkingEnd", "ToolCallStart",
    "ToolCallDelta", "ToolCallEnd", "ToolCallHeader",
    # agentmsg.readers
    "as_messages",
    # agentmsg.parsing
    "DIALECTS", "parse", "parse_many", "parse_tool_calls", "StreamParser", "StreamBatch", "validate_tool_call",
    "format_tool_call", "ToolResultText", "format_tool_result", "parse_tool_result",
    "parse_ids",
    # agentmsg.parsing.models
    "dialect_for_model", "MODEL_DIALECTS", "ModelDialect",
    # agentmsg.options
    "Dialect", "Tools",
    # agentmsg.counting.tokens
    "ENCODINGS", "count_tokens", "count_tokens_batch", "count_tokens_up_to", "fits",
    "message_token_counts", "count_message_tokens", "acount_tokens", "acount_message_tokens",
    "measured_text", "estimate_tokens", "estimate_tokens_many",
    # agentmsg.counting.encoding
    "Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model", "resolve_encoding",
    "truncate_tokens", "TOKEN_ENCODINGS",
    # agentmsg.counting.counter
    "MessageCounter", "token_counter",
    # agentmsg.counting.tokenizer
    "Tokenizer",
    # agentmsg.counting.request
    "RequestCount", "count_request_tokens", "REQUEST_PROVIDERS", "ESTIMATE_CALIBRATION",
    # agentmsg.counting.chat_template
    "ChatTemplate", "render_chat", "template_messages",
    # agentmsg.counting.chat_tokens
    "count_chat_tokens", "ChatCounter",
    "ChatTokenCounter",
    # agentmsg.history.conversation
    "filter_by_role", "count_by_role", "ConversationStats", "conversation_stats",
    # agentmsg.history.toolpairs
    "ToolPairing", "pair_tool_results", "check_tool_pairs", "repair_tool_pairs",
    # agentmsg.history.check
    "CHECKED_PROVIDERS", "HistoryProblem", "Repair", "Repaired", "check", "repair",
    # agentmsg.history.trim
    "TrimResult", "trim",
    # agentmsg.history.memory
    "ConversationMemory",
    # agentmsg.history.compaction
    "prune_tool_outputs", "compress", "expand", "summarize", "asummarize", "Compactor",
    # agentmsg.convert
    "ConversionWarning", "to_openai", "from_openai", "to_anthropic", "from_anthropic",
    "openai_to_anthropic", "to_bedrock", "from_bedrock", "to_dashscope", "from_dashscope",
    "to_forge", "from_forge", "from_db_rows", "to_db_rows", "NON_LLM_ROW_TYPES",
    "format_conversation_for_cache", "is_cached_block", "filter_for_bedrock", "format_multi_agent",
    "to_agentscope", "from_agentscope", "to_arcaelas", "from_arcaelas", "WoloTextPart",
    "WoloToolPart", "WoloMessage", "from_wolo", "to_wolo", "to_llm_messages", "WOLO_SYSTEM_PROMPT",
    "WOLO_SENT_STATUSES", "to_langchain", "from_langchain",
    "to_responses", "from_responses", "to_gemini", "from_gemini", "from_gemini_stream", "afrom_gemini_stream",
    "from_mcp_result",
    # agentmsg.convert.deltas
    "openai_deltas",
    # agentmsg.convert.streams
    "from_openai_stream", "afrom_openai_stream", "from_anthropic_stream", "afrom_anthropic_stream",
    # agentmsg.convert.responses_stream
    "from_responses_stream", "afrom_responses_stream",
    # agentmsg.convert.responses_events
    "responses_events",
    # agentmsg.pool
    "num_threads", "set_num_threads",
    # agentmsg.workbench
    "DEFAULT_STRATEGIES", "DEFAULT_BUDGETS", "Strategy", "first_sentence_summary",
    "builtin_strategies", "ReplayMetrics", "WorkbenchReport", "PROVIDERS", "ordering_problem",
    "replay", "run_workbench", "Transcript", "load_transcript", "iter_transcripts",
    "TRANSCRIPT_FORMATS",
    "SentPrompt", "PROMPT_STATUSES", "Prices", "PRICES", "PRICES_DATE", "write_html", "HTML_TEXT_CHARS",
]

if TYPE_CHECKING:  # what type checkers see: the same names, imported eagerly
    from .errors import *  # noqa: F401,F403
    from .model.blocks import *  # noqa: F401,F403
    from .model.message import *  # noqa: F401,F403
    from .model.results import (  # noqa: F401
        Parsed, ParseIssue, TextDelta, ThinkingDelta, ThinkingEnd, ToolCallDelta, ToolCallEnd, ToolCallHeader,
        ToolCallStart,
    )
    from .readers import *  # noqa: F401,F403
    from .parsing import *  # noqa: F401,F403
    from .parsing.models import *  # noqa: F401,F403
    from .options import Dialect, Tools  # noqa: F401
    from .counting.tokens import *  # noqa: F401,F403
    from .counting.encoding import *  # noqa: F401,F403
    from .counting.counter import MessageCounter, token_counter  # noqa: F401
    from .counting.tokenizer import *  # noqa: F401,F403
    from .counting.request import *  # noqa: F401,F403
    from .counting.chat_template import ChatTemplate, render_chat, template_messages  # noqa: F401
    from .counting.chat_tokens import ChatCounter, count_chat_tokens  # noqa: F401
    from .counting.chat_tokens import ChatTokenCounter  # noqa: F401
    from .history.conversation import *  # noqa: F401,F403
    from .history.toolpairs import *  # noqa: F401,F403
    from .history.check import *  # noqa: F401,F403
    from .history.trim import *  # noqa: F401,F403
    from .history.memory import *  # noqa: F401,F403
    from .history.compaction import *  # noqa: F401,F403
    from .convert import *  # noqa: F401,F403
    from .convert.deltas import *  # noqa: F401,F403
    from .convert.streams import *  # noqa: F401,F403
    from .convert.responses_stream import *  # noqa: F401,F403
    from .convert.responses_events import *  # noqa: F401,F403
    from .pool import *  # noqa: F401,F403
    from .workbench import *  # noqa: F401,F403
else:
    import sys as _sys

    _loaded: "list[str]" = []

    def _load(name: str) -> "list[str]":
        """Imports ``agentmsg.<name>`` and binds its public names here; returns them."""
        full_name = f"{__name__}.{name}"
        __import__(full_name)  # not importlib.import_module: importlib loads warnings and more
        module = _sys.modules[full_name]
        names = list(_EXPORTED.get(name, module.__all__))
        globals().update({public: getattr(module, public) for public in names})
        _loaded.append(name)
        return names

    def __getattr__(name: str) -> object:
        if name.startswith("_"):  # dunder probes, and private submodules the import system finds
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        for module in _MODULES:
            if module not in _loaded and name in _load(module):
                return globals()[name]
        try:  # a submodule the imports bound (agentmsg.convert, agentmsg.parsing, ...)
            return globals()[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None

    def __dir__() -> "list[str]":
        return sorted(set(globals()) | set(__all__))
