"""One LangChain message read into a :class:`agentmsg.Message` (``langchain_core`` is imported on
first use, and its absence is a :class:`agentmsg.MissingDependencyError` saying what to install);
:func:`agentmsg.from_langchain` reads a whole history with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import AbstractSet, Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .._checks import json_copy, optional_dict, require_dict, require_list, shown
from ..errors import AgentMsgError, ConversionError, Losses, MessageTypeError, MissingDependencyError
from ..model.blocks import (
    AudioBlock, Base64Source, DocumentBlock, ImageBlock, ServerToolResultBlock, ServerToolUseBlock, TextBlock, ThinkingBlock,
    ToolResultBlock, ToolUseBlock, URLSource, VideoBlock,
)
from ..model.message import Message
from ._fields import block_kind, build, thinking_dict
from .openai import source_from_url

__all__ = []


NAMESPACE = "langchain"  # metadata key for what only LangChain has


OURS = "agentmsg"  # additional_kwargs key for what only agentmsg has


#: LangChain fields kept in ``metadata["langchain"]`` when set.
_KEPT_FIELDS = ("additional_kwargs", "response_metadata", "usage_metadata", "invalid_tool_calls", "artifact")


_MEDIA = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}


_MEDIA_TYPE = {ImageBlock: "image", AudioBlock: "audio", VideoBlock: "video", DocumentBlock: "file"}


_CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
               "system": "system", "developer": "system"}


def langchain_messages() -> Any:
    """``langchain_core.messages``, or a typed error saying how to get it."""
    try:
        from langchain_core import messages
    except ImportError:

        raise MissingDependencyError(
            "the LangChain converters need langchain-core: pip install 'langchain-core>=1,<2'"
        ) from None
    return messages


def message_from_langchain(lc: Any, message: Any, index: int, losses: Losses) -> Message:
    where = f"messages[{index}]"
    if not isinstance(message, lc.BaseMessage):
        raise MessageTypeError(f"{where} must be a LangChain message, not {type(message).__name__}")
    kept: Dict[str, Any] = {}
    additional = optional_dict(message.additional_kwargs, f"{where}.additional_kwargs")
    for field in _KEPT_FIELDS:
        value = getattr(message, field, None)
        if field == "additional_kwargs":
            value = {k: v for k, v in additional.items() if k not in (OURS, "reasoning_content")}
        if value or (value is not None and field in ("artifact", "usage_metadata")):
            try:
                kept[field] = json_copy(value, f"{where}.{field}")
            except AgentMsgError:
                losses.add(f"{field} that is not JSON", index)
    if message.id is None:
        kept["id"] = None
    ours = optional_dict(additional.get(OURS), f"{where}.additional_kwargs[{OURS!r}]")
    metadata = optional_dict(ours.get("metadata"), f"{where}.additional_kwargs[{OURS!r}].metadata")
    extras = {key: ours[key] for key in ("timestamp", "finished", "finish_reason") if key in ours}
    reasoning = additional.get("reasoning_content")
    if reasoning is not None:
        extras["reasoning_content"] = reasoning

    role, link = _role_of(lc, message, where, kept)
    if role == "tool":
        output = _blocks(message.content, where, index, losses)
        is_error = getattr(message, "status", "success") == "error" or bool(ours.get("is_error"))
        result = build(where, lambda: ToolResultBlock(link or "", tuple(output), is_error))
        content: List[Any] = [result]
        extras["tool_id"] = link
    else:
        calls = _tool_calls(message, where, ours.get("calls")) if role == "assistant" else []
        content = _blocks(message.content, where, index, losses, [call.id for call in calls])
        content += calls
    if isinstance(message.content, list) and not isinstance(langchain_content(message_blocks(content)), list):
        kept["list_content"] = True  # content LangChain held as a list that we write as a string
    if kept:
        metadata[NAMESPACE] = kept
    return build(where, lambda: Message(role, content, name=message.name, id=message.id,
                                        metadata=metadata, **extras))


def _role_of(lc: Any, message: Any, where: str, kept: Dict[str, Any]) -> Tuple[str, Optional[str]]:
    """Our role for a LangChain message, and a tool result's ``tool_id``."""
    if isinstance(message, lc.HumanMessage):
        return "user", None
    if isinstance(message, lc.AIMessage):
        return "assistant", None
    if isinstance(message, lc.SystemMessage):
        return "system", None
    if isinstance(message, lc.ToolMessage):
        return "tool", message.tool_call_id
    if isinstance(message, lc.FunctionMessage):
        return "tool", None
    if isinstance(message, lc.ChatMessage):
        role = _CHAT_ROLES.get(message.role) if isinstance(message.role, str) else None
        if role is None:
            raise ConversionError(
                f"{where}: a ChatMessage with role {shown(message.role)} has no agentmsg role; "
                f"valid: {', '.join(_CHAT_ROLES)}"
            )
        kept["chat_role"] = message.role
        return role, None
    raise ConversionError(f"{where}: unknown LangChain message type {type(message).__name__}")


def _blocks(content: Any, where: str, index: int, losses: Losses, call_ids: Iterable[Any] = ()) -> List[Any]:
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    if not isinstance(content, list):
        raise MessageTypeError(f"{where}.content must be a str or a list, not {type(content).__name__}")
    out = []
    for position, block in enumerate(content):
        place = f"{where}.content[{position}]"
        if isinstance(block, str):
            out.append(TextBlock(block))
            continue
        block = require_dict(block, place)
        converted = _block(block, place, index, losses, call_ids)
        if converted is not None:
            out.append(converted)
    return out


#: Keys each block type carries that we keep or that mean nothing outside a stream.
_ACCOUNTED = {"type", "index", "id"}


def _block(block: Mapping[str, Any], where: str, index: int, losses: Losses, call_ids: Iterable[Any]) -> Any:
    kind = block_kind(block, where)
    if kind == "text":
        _note_extras(block, {"text"}, index, losses)
        return build(where, lambda: TextBlock(_text(block, "text", where)))
    if kind in ("reasoning", "thinking"):
        text = block.get(kind, "")
        extras = optional_dict(block.get("extras") if kind == "reasoning" else None, f"{where}.extras")
        signature = block.get("signature") if kind == "thinking" else extras.get("signature")
        _note_extras(block, {kind, "signature", "extras"}, index, losses)
        return build(where, lambda: ThinkingBlock(text, signature))
    if kind in ("tool_use", "tool_call"):
        # Anthropic's content copy of a call: tool_calls is LangChain's own record of it.
        if block.get("id") not in call_ids:
            losses.add("tool calls found only in content, not in tool_calls", index)
        return None
    if kind == "server_tool_call":
        _note_extras(block, {"name", "args", "extras"}, index, losses)
        extras = optional_dict(block.get("extras"), f"{where}.extras")
        return build(where, lambda: ServerToolUseBlock(
            block.get("id") or "", block.get("name"), block.get("args") or {},  # type: ignore[arg-type]  # checked there
            extras.get("server_name"), extras.get("provider", ""), extras.get("metadata") or {}))
    if kind == "server_tool_result":
        _note_extras(block, {"tool_call_id", "status", "output", "extras"}, index, losses)
        extras = optional_dict(block.get("extras"), f"{where}.extras")
        return build(where, lambda: ServerToolResultBlock(
            block.get("tool_call_id"), block.get("output"), block.get("status") == "error",  # type: ignore[arg-type]
            extras.get("provider", ""), extras.get("metadata") or {}))
    if kind == "image_url":
        url = block.get("image_url")
        url = url.get("url") if isinstance(url, Mapping) else url
        return build(where, lambda: ImageBlock(source_from_url(url, f"{where}.image_url")))
    if kind in _MEDIA:
        return build(where, lambda: _MEDIA[kind](_source(block, where)))
    if kind == "file":  # a PDF, a Word document...: v1 keeps its name (and ours) in extras, v0 beside it
        extras = optional_dict(block.get("extras"), f"{where}.extras")
        v0 = optional_dict(block.get("metadata"), f"{where}.metadata")
        name = next((n for n in (extras.get("filename"), block.get("filename"), v0.get("filename")) if n is not None),
                    None)
        return build(where, lambda: DocumentBlock(_source(block, where), name, extras.get("metadata") or {}))
    raise ConversionError(
        f"{where}.type: unknown content block type {shown(kind)}; valid: text, reasoning, thinking, "
        "image, audio, video, file, image_url, tool_use, server_tool_call, server_tool_result"
    )


def _text(block: Mapping[str, Any], key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise MessageTypeError(f"{where}.{key} must be a str, not {type(value).__name__}")
    return value


def _note_extras(block: Mapping[str, Any], known: AbstractSet[str], index: int, losses: Losses) -> None:
    extra = [key for key in block if key not in known and key not in _ACCOUNTED]
    if extra:
        losses.add(f"content block fields ({', '.join(sorted(map(shown, extra)))})", index)


def _source(block: Mapping[str, Any], where: str) -> Any:
    """The source of a media block in any of LangChain's shapes."""
    source = block.get("source")
    if isinstance(source, Mapping):  # Anthropic's own shape
        if source.get("type") == "url":
            return URLSource(_text(source, "url", f"{where}.source"))
        return Base64Source(_text(source, "media_type", f"{where}.source"), _text(source, "data", f"{where}.source"))
    data = block.get("base64", block.get("data") if block.get("source_type") == "base64" else None)
    if data is not None:
        media_type = block.get("mime_type")
        if not isinstance(media_type, str):
            raise ConversionError(f"{where}: base64 media needs a mime_type")
        return Base64Source(media_type, data)
    if "url" in block:
        return source_from_url(block["url"], f"{where}.url")
    raise ConversionError(f"{where}: media with neither url nor base64 data (a file_id cannot be read)")


def _tool_calls(message: Any, where: str, call_extras: Any) -> List[ToolUseBlock]:
    """An AIMessage's tool calls, with what agentmsg wrote of them in ``additional_kwargs``."""
    extras = require_list(call_extras or [], f"{where}.additional_kwargs[{OURS!r}].calls")
    out = []
    for position, call in enumerate(require_list(getattr(message, "tool_calls", None) or [], f"{where}.tool_calls")):
        place = f"{where}.tool_calls[{position}]"
        call = require_dict(call, place)
        extra = optional_dict(extras[position] if position < len(extras) else None, f"{place} extras")
        out.append(build(place, lambda: ToolUseBlock(
            call.get("id") or "", call.get("name"), call.get("args") or {},  # type: ignore[arg-type]  # checked there
            extra.get("server_name", "local"), extra.get("metadata") or {},
        )))
    return out


def langchain_content(blocks: Iterable[Any], as_list: bool = False) -> Any:
    """LangChain content: a string for one text block (or none), else v1 content blocks."""
    blocks = list(blocks)
    if as_list:
        return [_block_out(block) for block in blocks]
    if not blocks:
        return ""
    if len(blocks) == 1 and type(blocks[0]) is TextBlock:
        return blocks[0].text
    return [_block_out(block) for block in blocks]


def message_blocks(content: Sequence[Any]) -> List[Any]:
    """The blocks LangChain holds as content (a tool result's output, an assistant's content
    without its calls)."""
    if len(content) == 1 and type(content[0]) is ToolResultBlock:
        return list(content[0].output)
    return [b for b in content if type(b) is not ToolUseBlock]


def _block_out(block: Any) -> Dict[str, Any]:
    kind = type(block)
    if kind is TextBlock:
        return {"type": "text", "text": block.text}
    if kind is ThinkingBlock:
        return thinking_dict(block, "reasoning", "extras", "signature")
    if kind is ServerToolUseBlock or kind is ServerToolResultBlock:
        return _server_block_out(block)
    source = block.source
    data: Dict[str, Any] = {"type": _MEDIA_TYPE[kind]}
    if type(source) is URLSource:
        data["url"] = source.url
    else:
        data.update(base64=source.data, mime_type=source.media_type)
    if kind is DocumentBlock and (block.name is not None or block.metadata):
        extras = data["extras"] = {}
        if block.name is not None:
            extras["filename"] = block.name
        if block.metadata:
            extras["metadata"] = json_copy(block.metadata, "DocumentBlock.metadata")
    return data


def _server_block_out(block: Any) -> Dict[str, Any]:
    """A server tool call or result as LangChain v1's ``server_tool_call`` / ``server_tool_result``
    block, what LangChain has no field for in its ``extras``."""
    extras: Dict[str, Any] = {}
    if block.provider:
        extras["provider"] = block.provider
    if block.metadata:
        extras["metadata"] = json_copy(block.metadata, f"{block.type}.metadata")
    if type(block) is ServerToolUseBlock:
        if block.server_name is not None:
            extras["server_name"] = block.server_name
        data = {"type": "server_tool_call", "id": block.id, "name": block.name,
                "args": json_copy(block.input, "server_tool_call.args")}
    else:
        data = {"type": "server_tool_result", "tool_call_id": block.tool_use_id,
                "status": "error" if block.is_error else "success",
                "output": json_copy(block.content, "server_tool_result.output")}
    if extras:
        data["extras"] = extras
    return data
