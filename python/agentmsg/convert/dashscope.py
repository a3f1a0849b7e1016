"""DashScope (Qwen) messages, both ways, with AgentScope's role mapping.

Roles map one to one (SYSTEM -> system, USER -> user, ASSISTANT -> assistant, TOOL -> tool).
Text-only content is a string; anything with media is DashScope's multimodal item list
(``{"text": ...}``, ``{"image": url}``, ``{"audio": url}``, ``{"video": url}``), base64 media
as ``data:`` URLs. Tool calls are OpenAI-style with ``arguments`` as a JSON string; thinking
goes in ``reasoning_content``.

What the format cannot carry, left out with a :class:`ConversionWarning`: thinking signatures,
thinking blocks when ``reasoning_content`` is also set, a tool result's ``is_error`` flag and
media, and a tool call's ``server_name`` / ``metadata``. Several thinking blocks come back as
one ``reasoning_content``, and a tool result's text blocks come back as one (both joined with
newlines). Ids, timestamps and metadata are not sent.

    >>> import agentmsg
    >>> agentmsg.to_dashscope([agentmsg.assistant("42", thinking="add them")])
    [{'role': 'assistant', 'content': '42', 'reasoning_content': 'add them'}]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, cast

from .._checks import check_calls, objects_in, require, require_choice, require_dict, require_list, shown_keys
from ..errors import ConversionError, Losses, MessageTypeError
from ..model.blocks import (
    SERVER_BLOCKS, AudioBlock, Block, DocumentBlock, ImageBlock, Source, TextBlock, ThinkingBlock, ToolResultBlock,
    ToolUseBlock, URLSource, VideoBlock,
)
from ..model.message import TOOL_ROLE, Message
from ..readers import check_messages
from ..readers._fields import build, check_dicts
from ..readers.openai import call_from_openai, source_from_url
from ._order import settle_tool_pairs, write_in_order
from .openai import call_to_openai, data_url

if TYPE_CHECKING:
    from ..options import OrphanPolicy

__all__ = ["to_dashscope", "from_dashscope"]

_MEDIA_KEYS: Dict[str, Callable[[Source], Block]] = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}
_KNOWN_KEYS = frozenset(("role", "content", "name", "tool_calls", "tool_call_id", "reasoning_content"))


def to_dashscope(messages: Iterable[Message]) -> List[Dict[str, Any]]:
    """Converts messages to DashScope message dicts (Generation and MultiModalConversation).

    >>> to_dashscope([Message.user([TextBlock("What is this?"), ImageBlock(URLSource("https://e.com/a.jpg"))])])
    [{'role': 'user', 'content': [{'text': 'What is this?'}, {'image': 'https://e.com/a.jpg'}]}]
    """
    losses = Losses("to_dashscope")
    return write_in_order(check_messages(messages), losses, lambda message, index: _to_dashscope(message, index, losses))


def _url(source: Any) -> str:
    return source.url if type(source) is URLSource else data_url(source)


def _to_dashscope(message: Message, index: int, losses: Losses) -> Optional[Dict[str, Any]]:
    role = message.role
    if role is TOOL_ROLE:
        if not message.tool_id:
            raise ConversionError(
                f"messages[{index}].tool_id: DashScope needs the id of the call a tool message answers"
            )
        result = cast(ToolResultBlock, message.content[0])  # a tool message holds one result
        if result.is_error:
            losses.add("the is_error flag of tool results", index)
        texts = [b.text for b in result.output if type(b) is TextBlock]
        if len(texts) != len(result.output):
            losses.add("media in tool results", index)
        data: Dict[str, Any] = {"role": "tool", "content": "\n".join(texts), "tool_call_id": message.tool_id}
        if message.name is not None:
            data["name"] = message.name
        return data
    items: List[Dict[str, Any]] = []
    calls: List[Dict[str, Any]] = []
    thinking: List[str] = []
    block: Any  # dispatched on type(block), which mypy cannot follow through `kind`
    for block in message.content:
        kind = type(block)
        if kind is TextBlock:
            items.append({"text": block.text})
        elif kind is ToolUseBlock:
            calls.append(call_to_openai(block, index, losses))
        elif kind is ThinkingBlock:
            thinking.append(block.thinking)
            if block.signature is not None:
                losses.add("thinking signatures", index)
        elif kind in SERVER_BLOCKS:
            losses.add(f"{block.type} blocks (tools another provider ran)", index)
        elif kind is DocumentBlock:  # DashScope's content items are text, image, audio and video
            losses.add("documents", index)
        else:
            items.append({block.type: _url(block.source)})
    data = {"role": role.value}
    if len(items) == 1 and "text" in items[0]:
        data["content"] = items[0]["text"]
    elif items:
        data["content"] = items
    elif calls:
        data["content"] = ""
    elif not thinking and message.reasoning_content is None:
        losses.add("messages with nothing else it can carry", index)
        return None
    else:
        data["content"] = ""
    if calls:
        data["tool_calls"] = calls
    if message.name is not None:
        data["name"] = message.name
    if message.reasoning_content is not None:
        data["reasoning_content"] = message.reasoning_content
        if thinking:
            losses.add("thinking blocks besides reasoning_content", index)
    elif thinking:
        data["reasoning_content"] = "\n".join(thinking)
    return data


def from_dashscope(messages: Iterable[Any], *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """Reads DashScope messages (text or multimodal). ``on_orphan``: raise, repair or keep.

    >>> m = from_dashscope([{"role": "assistant", "content": "42", "reasoning_content": "add"}])[0]
    >>> (m.text, m.thinking)
    ('42', 'add')
    """
    out = []
    for index, data in enumerate(check_dicts(messages, "messages")):
        where = f"messages[{index}]"
        data = require_dict(data, where)
        role = require_choice(require(data, "role", where), ("system", "user", "assistant", "tool"),
                              f"{where}.role", "role")
        extra = {k: v for k, v in data.items() if k not in _KNOWN_KEYS}
        metadata = {"dashscope": extra} if extra else {}
        blocks = _content(data.get("content"), where, role)
        name, reasoning = data.get("name"), data.get("reasoning_content")
        if role == "tool":
            tool_id = require(data, "tool_call_id", where)
            out.append(build(where, lambda: Message.tool(blocks, tool_id=tool_id, name=name, metadata=metadata)))
            continue
        calls = data.get("tool_calls")
        calls = [] if calls is None else require_list(calls, f"{where}.tool_calls")
        blocks.extend(call_from_openai(c, f"{where}.tool_calls[{j}]") for j, c in enumerate(calls))
        if not blocks and reasoning is not None:
            blocks = [ThinkingBlock(reasoning)]
            reasoning = None
        out.append(build(where, lambda: Message(role, blocks, name=name, metadata=metadata,
                                                reasoning_content=reasoning)))
    return settle_tool_pairs(out, on_orphan, "from_dashscope")


def _content(content: Any, where: str, role: str) -> List[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextBlock(content)] if content or role == "tool" else []
    if not isinstance(content, (list, tuple)):
        raise MessageTypeError(f"{where}.content must be a str or a list of items, not {type(content).__name__}")
    blocks: List[Block] = []
    for iwhere, item in objects_in(content, f"{where}.content"):
        if "text" in item:
            text = item["text"]
            blocks.append(build(iwhere, lambda: TextBlock(text)))
            continue
        kind = next((k for k in _MEDIA_KEYS if k in item), None)
        if kind is None:
            raise ConversionError(f"{iwhere}: unknown item {shown_keys(item)}; valid: text, image, audio, video")
        if isinstance(item[kind], list):
            raise ConversionError(f"{iwhere}.{kind}: a list of frames is not supported; give one URL")
        source = source_from_url(item[kind], f"{iwhere}.{kind}")
        blocks.append(build(iwhere, lambda: _MEDIA_KEYS[kind](source)))
    return blocks


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
