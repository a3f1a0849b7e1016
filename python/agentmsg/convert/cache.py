"""Suna's cached blocks and the Bedrock filter that must leave them alone.

A cached block is one user message whose single text block holds a whole stretch of
conversation (``User: ...\\n\\nAssistant: ...\\n\\nTool: ...``) marked with ``cache_control``.
Because that text contains ``Tool: {`` patterns, a filter that drops embedded tool results
without a matching call must recognize cached blocks first (:func:`is_cached_block`).

    >>> import agentmsg
    >>> block = agentmsg.format_conversation_for_cache([agentmsg.user("Hello"), agentmsg.assistant("Hi!")])
    >>> block["content"][0]["text"], agentmsg.is_cached_block(block)
    ('User: Hello\\n\\nAssistant: Hi!', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Literal, Sequence, Union

from .._checks import check_calls, require_dict, shown
from ..errors import ConversionError, MessageTypeError, warn_caller
from ..model.arguments import json_text
from ..model.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from ..model.message import Message, Role
from ..readers import check_messages
from ..readers._fields import check_dicts

__all__ = ["format_conversation_for_cache", "is_cached_block", "filter_for_bedrock"]

_LABELS = {Role.SYSTEM: "System", Role.USER: "User", Role.ASSISTANT: "Assistant", Role.TOOL: "Tool"}
EMBEDDED_RESULT_PREFIX = "Tool: "


def _entry(message: Message, index: int) -> str:
    parts = []
    for block in message.content:
        if type(block) is TextBlock:
            if block.text:
                parts.append(block.text)
        elif type(block) is ToolResultBlock:
            parts.append(block.text)
        elif type(block) is ToolUseBlock:
            parts.append(f"[tool call {block.name} {json_text(block.input, f'messages[{index}] tool call input')}]")
        elif block.type in ("image", "audio", "video", "document"):
            parts.append(f"[{block.type}]")
        # thinking is the model's private reasoning and is not replayed in a cache summary
    return f"{_LABELS[message.role]}: " + "\n".join(parts)


def format_conversation_for_cache(messages: Iterable[Message]) -> Dict[str, Any]:
    """Folds messages into one cached user message (Suna's ``format_conversation_for_cache``).

    Each message becomes ``Label: text`` (labels ``System``, ``User``, ``Assistant``, ``Tool``),
    separated by blank lines. Tool calls appear as ``[tool call name {arguments}]`` and media
    as ``[image]`` / ``[audio]`` / ``[video]`` / ``[document]`` placeholders; thinking is left out.

    >>> format_conversation_for_cache([Message.tool('{"answer": 42}', tool_id="t1")])
    {'role': 'user', 'content': [{'type': 'text', 'text': 'Tool: {"answer": 42}', 'cache_control': {'type': 'ephemeral'}}]}
    """
    text = "\n\n".join(_entry(m, i) for i, m in enumerate(check_messages(messages)))
    return {
        "role": "user",
        "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],
    }


def is_cached_block(message: Mapping[str, Any]) -> bool:
    """Whether a provider message dict is a cached block: list content with a ``cache_control`` block.

    >>> is_cached_block({"role": "user", "content": "Tool: {...}"})
    False
    """
    content = message.get("content", "") if isinstance(message, Mapping) else None
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and block.get("cache_control"):
                return True
    return False


def _text(content: Any) -> str:
    """The text of a message's content; parts that are not text are not text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (b.get("text") for b in content if isinstance(b, Mapping))
        return "\n".join(t for t in texts if isinstance(t, str))
    return ""


def filter_for_bedrock(messages: Iterable[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """Drops tool results that no earlier tool call asked for, keeping cached blocks (Suna).

    Works on OpenAI-style dicts. Dropped: a ``tool`` message whose ``tool_call_id`` matches no
    earlier assistant ``tool_calls`` id, and a user message that is an embedded tool result
    (its text starts with ``Tool: ``) and is not a cached block. Each drop is reported with a
    :class:`ConversionWarning` naming the indices.

    >>> cached = {"role": "user", "content": [{"type": "text", "text": "Tool: {...}", "cache_control": {"type": "ephemeral"}}]}
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     kept = filter_for_bedrock([cached, {"role": "user", "content": "Tool: {...}"}])
    >>> kept == [cached]
    True
    """
    items = check_dicts(messages, "messages")
    call_ids = set()
    kept: List[Mapping[str, Any]] = []
    dropped: List[int] = []
    for index, message in enumerate(items):
        message = require_dict(message, f"messages[{index}]")
        role = message.get("role")
        if role == "assistant":
            calls = message.get("tool_calls")
            for call in calls if isinstance(calls, (list, tuple)) else ():
                if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                    call_ids.add(call["id"])
        elif role == "tool":
            tool_id = message.get("tool_call_id")
            if not isinstance(tool_id, str) or tool_id not in call_ids:
                dropped.append(index)
                continue
        elif role == "user" and not is_cached_block(message):
            if _text(message.get("content")).startswith(EMBEDDED_RESULT_PREFIX):
                dropped.append(index)
                continue
        kept.append(message)
    if dropped:
        warn_caller(f"filter_for_bedrock dropped tool results with no matching call (messages "
                    f"{', '.join(map(str, dropped))})")
    return kept


CachePlace = Union[Literal["system", "last"], int]


MAX_CACHE_POINTS = 4  # Anthropic and Bedrock allow at most four cache breakpoints per request


def check_cache_places(cache: Sequence[CachePlace], count: int) -> List[CachePlace]:
    """Validates a ``cache=`` argument: 'system', 'last' or message indices, at most four."""
    if isinstance(cache, (str, int)):
        cache = [cache]  # type: ignore[list-item]  # each place is checked below
    if not isinstance(cache, (list, tuple)):
        raise MessageTypeError(f"cache must be a list of places, not {type(cache).__name__}")
    places = list(cache)
    if len(places) > MAX_CACHE_POINTS:
        raise ConversionError(f"cache: at most {MAX_CACHE_POINTS} cache points, got {len(places)}")
    for place in places:
        if isinstance(place, bool) or not isinstance(place, (str, int)):
            raise MessageTypeError(f"cache entries must be 'system', 'last' or an int, not {type(place).__name__}")
        if isinstance(place, str) and place not in ("system", "last"):
            raise ConversionError(f"cache: unknown place {shown(place)}; valid: 'system', 'last', an index")
        if isinstance(place, int) and not -count <= place < count:
            raise ConversionError(f"cache: message index {shown(place)} is out of range for {count} messages")
    return places


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
