"""Exact token counts, offline, with OpenAI's BPE data embedded in the Rust core.

``count_tokens(text, encoding)`` equals ``len(tiktoken.get_encoding(encoding).encode_ordinary(text))``
for ``o200k_base``, ``cl100k_base`` and ``o200k_harmony``; ``encoding="estimate"`` switches any
counter to Forge's heuristic instead. Counting is linear on every input and releases the GIL.

    >>> import agentmsg
    >>> agentmsg.count_tokens("Hello, world!")
    4
    >>> agentmsg.count_message_tokens([agentmsg.user("Hello, world!")])
    11
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union, cast

from .. import _core
from .._checks import as_list, check_calls, describe, json_copy, require_int, require_str, type_name
from ..errors import AgentMsgError, EncodingError, MessageError, MessageTypeError
from ..model.arguments import dump_arguments
from ..model.blocks import (
    AudioBlock, DocumentBlock, ImageBlock, ServerToolResultBlock, ServerToolUseBlock, TextBlock, ThinkingBlock,
    ToolResultBlock, ToolUseBlock, URLSource, VideoBlock, document_text,
)
from ..model.message import ROLE_CODES, Message, Role, to_role
from ..readers import MessageLike, messages_or_openai_dicts, read_messages
from .encoding import resolve_encoding

__all__ = ["ENCODINGS",
    "count_tokens",
    "count_tokens_batch",
    "count_tokens_up_to",
    "fits",
    "message_token_counts",
    "count_message_tokens",
    "acount_tokens",
    "acount_message_tokens", "measured_text", "estimate_tokens", "estimate_tokens_many"]

#: The encodings every counter accepts: OpenAI's two current BPE encodings, and Forge's estimate.
ENCODINGS: Tuple[str, ...] = tuple(_core.ENCODING_NAMES)

ChatMessage = Union[Message, Mapping[str, Any]]  # what the counters read, once normalized

# The OpenAI cookbook's chat rules ("How to count tokens with tiktoken", section 6): each
# message costs 3 tokens of framing, a name 1 more, and the reply is primed with 3
# (<|start|>assistant<|message|>).
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3

# The same cookbook's tool-definition constants (section 7, measured against the API): gpt-4o
# and gpt-4o-mini (o200k_base) start each function at 7, gpt-4 and gpt-3.5-turbo (cl100k_base)
# at 10; the rest are shared.
# o200k_harmony (gpt-oss) shares o200k_base's tokens; OpenAI's API publishes no figure for it.
_FUNCTION_START = {"o200k_base": 7, "cl100k_base": 10, "o200k_harmony": 7}
_PROPERTIES_START = 3
_PROPERTY_KEY = 3
_ENUM_START = -3
_ENUM_ITEM = 3
_FUNCTIONS_END = 12

# Texts shorter than this are counted on the event loop by the async counters: a hop to a
# worker thread costs more than counting them.
_INLINE_CHARS = 2048

# The tokens of each role name, per encoding, computed once.
_role_tokens: Dict[Tuple[str, str], int] = {}


_ROLE_CACHE_SIZE = 64


def _role_cost(role: str, encoding: str) -> int:
    key = (role, encoding)
    cost = _role_tokens.get(key)
    if cost is None:
        cost = _core.count_tokens(role, encoding)
        if len(_role_tokens) < _ROLE_CACHE_SIZE:  # dict input may hold any role: keep it bounded
            _role_tokens[key] = cost
    return cost


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """The number of tokens in ``text``: ``len(enc.encode_ordinary(text))`` for tiktoken's encoding.

    Special-token strings such as ``<|endoftext|>`` count as plain text. With
    ``encoding="estimate"`` it is Forge's text formula, ``utf8_bytes // 4`` plus 10 if the text
    contains ``<tool>`` (the per-message role overhead belongs to message counts).

    ``encoding`` is an encoding name or a model name, mapped as tiktoken maps it (every counter
    here takes either).

    >>> count_tokens("tiktoken is great!", "cl100k_base")
    6
    >>> count_tokens("tiktoken is great!", "gpt-4")  # gpt-4 uses cl100k_base
    6
    >>> count_tokens("Hello, world!", encoding="estimate")
    3
    """
    try:
        return _core.count_tokens(text, encoding)
    except (AgentMsgError, UnicodeEncodeError) as error:
        return _core.count_tokens(text, _encoding_after(error, encoding))


def count_tokens_batch(texts: Sequence[str], encoding: str = "o200k_base") -> List[int]:
    """The count of each text, in one call that releases the GIL and uses every core.

    >>> count_tokens_batch(["Hello", "Hello, world!"])
    [1, 4]
    """
    try:
        return _core.count_tokens_batch(texts, encoding)
    except (AgentMsgError, UnicodeEncodeError) as error:
        return _core.count_tokens_batch(texts, _encoding_after(error, encoding))


def count_tokens_up_to(text: str, limit: int, encoding: str = "o200k_base") -> int:
    """``min(count_tokens(text), limit + 1)``, counting no further than needed to know it.

    Counting stops at the first pre-tokenized piece (roughly a word) past the limit, so a check
    against a small budget costs little even on a huge text.

    >>> count_tokens_up_to("one two three four", 10)
    4
    >>> count_tokens_up_to("one two three four", 2)
    3
    """
    # No count exceeds 2**64 - 1, so a larger limit means the same as that one.
    limit = min(require_int(limit, "limit"), 2**64 - 1)
    try:
        return _core.count_tokens(text, encoding, limit)
    except (AgentMsgError, UnicodeEncodeError) as error:
        return _core.count_tokens(text, _encoding_after(error, encoding), limit)


def _encoding_after(error: Exception, encoding: object) -> str:
    """The encoding to retry a count the core refused with: the model's encoding when
    ``encoding`` is a model name; else ``error`` again (or a clearer one for a bad name).

    The counters try the name as given first, so checking costs nothing on success."""
    resolved = check_encoding(encoding)
    if resolved == encoding:
        raise error
    return resolved


def check_encoding(encoding: object) -> str:
    """The encoding ``encoding`` names: itself for a known encoding, the model's encoding for a
    model name (``"gpt-4o"`` -> ``"o200k_base"``, as tiktoken maps them), else an error that
    names it briefly.

    The counters call it only after the core refused a call, so checking costs nothing on
    success (``arrow.count_tokens_arrow`` calls it first, to accept model names as the counters
    do); its message describes a bad name as every error here does."""
    encoding = require_str(encoding, "encoding")
    if encoding in ENCODINGS:
        return encoding
    try:
        return resolve_encoding(encoding)
    except EncodingError:
        pass
    # The core's wording for a plain name; an excerpt with escapes for anything else.
    shown = f'"{encoding}"' if len(encoding) <= 40 and encoding.isprintable() else describe(encoding)
    raise EncodingError(f"unknown encoding {shown}; known encodings: {', '.join(ENCODINGS)}")


def fits(text: str, limit: int, encoding: str = "o200k_base") -> bool:
    """Whether ``text`` has at most ``limit`` tokens; stops counting once past the limit.

    >>> fits("one two three four", 4), fits("one two three four", 3)
    (True, False)
    """
    return count_tokens_up_to(text, limit, encoding) <= limit


# -- chat messages ---------------------------------------------------------------------------------


def _arguments_json(call: ToolUseBlock, where: str) -> str:
    """The arguments string an OpenAI request carries for the call, exactly as ``to_openai``
    writes it (the model's own text kept in ``metadata["raw_arguments"]``, else the input)."""
    return dump_arguments(call, f"{where}: arguments of tool call {describe(call.name)}")


def _json_text(value: object, where: str) -> str:
    """``value`` as JSON text, checked first (:func:`agentmsg._checks.json_copy`), so a value
    JSON cannot carry is an error naming ``where`` and never a bare one from ``json.dumps``."""
    return json.dumps(json_copy(value, where), ensure_ascii=False)


def _dict_content_texts(content: object, where: str) -> List[str]:
    """The text an OpenAI ``content`` holds: the string, or the text of its text parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, (list, tuple)):
        texts = []
        for index, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
                continue
            if not isinstance(part, Mapping):
                raise MessageTypeError(f"{where}[{index}] must be a dict or str, not {type_name(part)}")
            for key in ("text", "refusal"):
                if part.get("type") == key:
                    texts.append(require_str(part.get(key), f"{where}[{index}].{key}"))
        return texts
    raise MessageTypeError(f"{where} must be a str, list or None, not {type_name(content)}")


def _dict_tool_calls(message: Mapping[str, Any], where: str) -> List[Tuple[str, str]]:
    """(name, arguments) of each call in ``tool_calls`` (and the legacy ``function_call``)."""
    calls = []
    tool_calls = message.get("tool_calls") or ()
    if not isinstance(tool_calls, (list, tuple)):
        raise MessageTypeError(f"{where}.tool_calls must be a list, not {type_name(tool_calls)}")
    functions = []
    for index, call in enumerate(tool_calls):
        if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
            raise MessageError(f"{where}.tool_calls[{index}] must be a dict with a 'function' dict")
        functions.append((call["function"], f"{where}.tool_calls[{index}].function"))
    legacy = message.get("function_call")
    if legacy is not None:
        if not isinstance(legacy, Mapping):
            raise MessageError(f"{where}.function_call must be a dict")
        functions.append((legacy, f"{where}.function_call"))
    for function, function_where in functions:
        name = require_str(function.get("name", ""), f"{function_where}.name")
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = _json_text(arguments, f"{function_where}.arguments")
        calls.append((name, arguments))
    return calls


def _chat_parts(message: ChatMessage, index: int) -> Tuple[str, List[str], Optional[str]]:
    """The role, the counted texts (content, tool call names and arguments) and the name."""
    where = f"messages[{index}]"
    if isinstance(message, Message):
        texts = [message.text]
        for call in message.tool_calls:
            texts.append(call.name)
            texts.append(_arguments_json(call, where))
        # to_openai writes no name on tool messages (the API has no such field)
        return message.role.value, texts, None if message.role is Role.TOOL else message.name
    # An OpenAI dict (as_messages read every other form): counted as it will be sent.
    if "role" not in message:
        raise MessageError(f"{where} has no 'role'")
    role = require_str(message["role"], f"{where}.role")
    texts = _dict_content_texts(message.get("content"), f"{where}.content")
    for call_name, arguments in _dict_tool_calls(message, where):
        texts.append(call_name)
        texts.append(arguments)
    name = message.get("name")
    if name is not None:
        require_str(name, f"{where}.name")
    return role, texts, name


def _estimate_parts(message: ChatMessage, index: int) -> Tuple[str, int]:
    """The measured text and role code Forge's estimate uses for a message or a dict."""
    if isinstance(message, Message):
        return measured_text(message), ROLE_CODES[message.role]
    role, texts, _ = _chat_parts(message, index)
    content_count = len(texts) - 2 * len(_dict_tool_calls(message, f"messages[{index}]"))
    parts = texts[:content_count]
    calls = texts[content_count:]
    for name, arguments in zip(calls[0::2], calls[1::2]):
        try:
            payload: Any = json.loads(arguments) if arguments else {}
        except (ValueError, RecursionError):  # not JSON Python reads: measured as the text
            payload = arguments
        call = {"server_name": "local", "tool_name": name, "arguments": payload}
        parts.append("<tool>" + json.dumps(call, ensure_ascii=False) + "</tool>")
    code = ROLE_CODES[Role.TOOL] if role in ("tool", "function") else ROLE_CODES[Role.USER]
    return "\n".join(parts), code


def message_token_counts(
    messages: Iterable[MessageLike], encoding: str = "o200k_base"
) -> List[int]:
    """Each message's share of :func:`count_message_tokens`, in one native call for all texts.

    For an exact encoding: 3 tokens of framing, the tokens of the role, the content text, and
    each tool call's name and arguments, plus the name's tokens and 1 if the message has a name.
    The 3 tokens that prime the reply belong to the request, not to a message, so
    ``sum(message_token_counts(ms, e)) + 3 == count_message_tokens(ms, encoding=e)``.
    For ``"estimate"`` it is :func:`agentmsg.estimate_tokens` of each message.

    >>> message_token_counts([Message.system("Be brief."), Message.user("Hi", name="ann")])
    [7, 7]
    >>> message_token_counts([Message.user("Hello")], encoding="estimate")
    [5]
    """
    messages = messages_or_openai_dicts(messages)
    encoding = check_encoding(encoding)
    if encoding == "estimate":
        if all(message.__class__ is Message for message in messages):
            return _core.estimate_messages(cast(List[Message], messages))
        texts = []
        roles = []
        for index, message in enumerate(messages):
            text, code = _estimate_parts(message, index)
            texts.append(text)
            roles.append(code)
        return _core.estimate_tokens_many(texts, roles)
    all_texts: List[str] = []
    sizes: List[int] = []
    base: List[int] = []
    for index, message in enumerate(messages):
        role, texts, name = _chat_parts(message, index)
        fixed = TOKENS_PER_MESSAGE + _role_cost(role, encoding)
        if name is not None:
            texts.append(name)
            fixed += TOKENS_PER_NAME
        all_texts.extend(texts)
        sizes.append(len(texts))
        base.append(fixed)
    return _core.count_tokens_grouped(all_texts, sizes, base, encoding)


def _tool_function(tool: object, index: int) -> Mapping[str, Any]:
    """The function definition of an OpenAI tool (``{"type": "function", "function": {...}}``),
    or a bare one (``{"name", "description", "parameters"}``, or Anthropic's ``input_schema``)."""
    where = f"tools[{index}]"
    if not isinstance(tool, Mapping):
        raise MessageTypeError(f"{where} must be a dict, not {type_name(tool)}")
    function = tool.get("function", tool)
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise MessageError(f"{where} must define a function with a str 'name'")
    return function


def tool_definition_tokens(tools: Sequence[Mapping[str, Any]], encoding: str) -> int:
    """The cookbook's count of tool definitions (section 7 of "How to count tokens with tiktoken");
    shared with :mod:`agentmsg.counting.request`, which counts whole requests.

    >>> tool_definition_tokens([{"name": "now", "description": "The time."}], "o200k_base")
    22
    """
    # Checked JSON first: every text below is then a bounded str of plain JSON values.
    tools = json_copy(as_list(tools, "tools", "a list of tool dicts"), "tools")
    if not tools:
        return 0
    if encoding == "estimate":
        return _core.count_tokens(json.dumps(tools, ensure_ascii=False), encoding)
    # json_copy made every object a plain dict, so `isinstance(..., dict)` is the cheap exact check
    # below (typing.Mapping's costs a call into the ABC machinery each time).
    fixed = 0
    texts: List[str] = []
    for index, tool in enumerate(tools):
        function = _tool_function(tool, index)
        fixed += _FUNCTION_START[encoding]
        description = str(function.get("description") or "")
        texts.append(function["name"] + ":" + _strip_period(description))
        parameters = function.get("parameters", function.get("input_schema")) or {}
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        if properties is not None and not isinstance(properties, dict):
            raise MessageError(f"tools[{index}]: parameters.properties must be a dict")
        if properties:
            fixed += _PROPERTIES_START
            for key, schema in properties.items():
                fixed += _PROPERTY_KEY
                schema = schema if isinstance(schema, dict) else {}
                if "enum" in schema:
                    fixed += _ENUM_START
                    for item in schema["enum"] or ():
                        fixed += _ENUM_ITEM
                        texts.append(str(item))
                p_type = schema.get("type", "")
                p_description = _strip_period(str(schema.get("description") or ""))
                texts.append(f"{key}:{p_type}:{p_description}")
    fixed += _FUNCTIONS_END
    return fixed + sum(_core.count_tokens_batch(texts, encoding))


def _strip_period(text: str) -> str:
    return text[:-1] if text.endswith(".") else text


def count_message_tokens(
    messages: Iterable[MessageLike],
    encoding: str = "o200k_base",
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
) -> int:
    """The prompt tokens of a chat request, by the OpenAI cookbook's rules (see docs/tokens.md).

    ``messages`` are anything :func:`agentmsg.as_messages` reads (OpenAI dicts are counted as
    they are, so the count is that of the request they make); ``tools`` are OpenAI tool
    definitions. With ``encoding="estimate"`` it is the sum of Forge's per-message estimates
    (plus a quarter of the tools' JSON bytes).

    >>> count_message_tokens([{"role": "user", "content": "Hello, world!"}])
    11
    >>> count_message_tokens([Message.user("Hello")], encoding="estimate")
    5
    """
    encoding = check_encoding(encoding)
    counts = message_token_counts(messages, encoding)
    total = sum(counts) + tool_definition_tokens(tools or (), encoding)
    if encoding != "estimate":
        total += REPLY_PRIMING_TOKENS
    return total


# -- async -----------------------------------------------------------------------------------------


async def acount_tokens(text: str, encoding: str = "o200k_base") -> int:
    """:func:`count_tokens` in a worker thread, so the event loop keeps running.

    The count releases the GIL, so several counts really run in parallel. Short texts (under
    2,048 characters) are counted in place: that takes less time than the hop to a thread.

    >>> import asyncio
    >>> asyncio.run(acount_tokens("Hello, world!"))
    4
    """
    if isinstance(text, str) and len(text) < _INLINE_CHARS:
        return count_tokens(text, encoding)
    import asyncio  # here, not at the top: it would double the time `import agentmsg` takes

    return await asyncio.to_thread(count_tokens, text, encoding)


async def acount_message_tokens(
    messages: Iterable[MessageLike],
    encoding: str = "o200k_base",
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
) -> int:
    """:func:`count_message_tokens` in a worker thread, so the event loop keeps running.

    >>> import asyncio
    >>> asyncio.run(acount_message_tokens([Message.user("Hello, world!")]))
    11
    """
    import asyncio  # see acount_tokens

    return await asyncio.to_thread(count_message_tokens, messages, encoding, tools)


def _tool_call_json(block: Union[ToolUseBlock, ServerToolUseBlock]) -> str:
    payload = {"server_name": block.server_name, "tool_name": block.name, "arguments": block.input}
    return json.dumps(payload, ensure_ascii=False)


def measured_text(message: Message) -> str:
    """The text the estimate measures for a message: its blocks joined with newlines.

    Text and thinking count as written; a tool call counts as Forge's payload JSON wrapped in
    ``<tool>...</tool>`` (so the XML overhead applies, as it does to the same call written in
    text); a tool result counts its output's text; media count only their URL (base64 data is
    not text a model reads as tokens). A tool the provider ran counts as a tool call does, and its
    result as its content's JSON (what the provider puts before the model). A ``text/*``
    document counts its decoded text (the model reads it); any other document (a PDF) counts
    like media, by its URL only: :func:`agentmsg.count_request_tokens` estimates a PDF's pages.

    >>> from agentmsg import ToolUseBlock
    >>> measured_text(Message.assistant(tool_calls=[ToolUseBlock("c1", "calc", {"a": 1})]))
    '<tool>{"server_name": "local", "tool_name": "calc", "arguments": {"a": 1}}</tool>'
    """
    if not isinstance(message, Message):
        raise MessageTypeError(f"message must be a Message, not {type_name(message)}")
    parts: List[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            parts.append(block.thinking)
        elif isinstance(block, ToolUseBlock):
            parts.append("<tool>" + _tool_call_json(block) + "</tool>")
        elif isinstance(block, ToolResultBlock):
            parts.append(block.text)
        elif isinstance(block, ServerToolUseBlock):
            parts.append("<tool>" + _tool_call_json(block) + "</tool>")
        elif isinstance(block, ServerToolResultBlock):
            parts.append(json.dumps(block.content, ensure_ascii=False))
        elif isinstance(block, DocumentBlock) and (text := document_text(block)) is not None:
            parts.append(text)
        elif isinstance(block, (ImageBlock, AudioBlock, VideoBlock, DocumentBlock)):
            if isinstance(block.source, URLSource):
                parts.append(block.source.url)
    return "\n".join(parts)


def estimate_tokens(message_or_text: Union[Message, str], role: Union[Role, str] = Role.USER) -> int:
    """Estimates the tokens of a message, or of a text written by ``role``.

    >>> estimate_tokens("Hello", role="user")
    5
    >>> estimate_tokens(Message.tool("Result: 8", name="calculator"))
    12
    """
    if isinstance(message_or_text, Message):
        return _core.estimate_messages((message_or_text,))[0]
    if isinstance(message_or_text, str):
        return _core.estimate_tokens(message_or_text, to_role(role).value)
    raise MessageTypeError(f"estimate_tokens takes a Message or a str, not {type_name(message_or_text)}")


def estimate_tokens_many(messages: Iterable[MessageLike]) -> List[int]:
    """Estimates every message of a conversation in one call into the core.

    >>> estimate_tokens_many([Message.user("Hello"), Message.system("Hi")])
    [5, 4]
    """
    items = messages if isinstance(messages, (list, tuple)) else read_messages(messages)
    try:
        # The measured text of each message is measured in the core from its slots, not built.
        return _core.estimate_messages(items)
    except MessageTypeError:
        if all(isinstance(item, Message) for item in items):
            raise
        return _core.estimate_messages(read_messages(items))  # dicts or SDK objects, read first


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
