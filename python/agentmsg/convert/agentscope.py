"""AgentScope ``Msg`` JSON, both ways.

``{"name", "role": "USER"|"ASSISTANT"|"SYSTEM"|"TOOL", "content": [blocks], "metadata", "id",
"timestamp"}`` with AgentScope's block shapes: ``text``, ``image`` / ``audio`` / ``video``
(``source`` of type ``url`` or ``base64`` with ``media_type``), ``thinking`` (a signature lives
in its ``metadata.thoughtSignature``), ``tool_use`` (``id``, ``name``, ``input``, ``metadata``)
and ``tool_result`` (``id``, ``name``, ``output``; ``state: "ERROR"`` for errors).

Lossless: fields ``Msg`` has no slot for (``finished``, ``finish_reason``,
``reasoning_content``, a tool call's ``server_name``) travel in ``metadata["agentmsg"]`` /
the tool call's ``metadata["agentmsg_server_name"]`` and come back.

    >>> import agentmsg
    >>> msg = agentmsg.to_agentscope([agentmsg.user("Hi", name="user", id="msg_001", timestamp="2024-01-15T10:30:00Z")])[0]
    >>> msg["role"], msg["content"]
    ('USER', [{'type': 'text', 'text': 'Hi'}])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Dict, Iterable, List

from .._checks import check_calls, optional_dict, require, require_dict, require_list, shown
from ..errors import ConversionError, MessageTypeError
from ..model.arguments import json_output_copy
from ..model.blocks import (
    SERVER_BLOCKS, AudioBlock, Base64Source, DocumentBlock, ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock,
    ToolUseBlock, URLSource, VideoBlock, block_from_dict, block_to_dict,
)
from ..model.message import Message, format_timestamp
from ..readers import check_messages
from ..readers._fields import (
    block_kind, build, check_dicts, require_str_key, tagged_dict, text_block, thinking_dict,
)
from ._order import settle_tool_pairs

if TYPE_CHECKING:
    from ..options import OrphanPolicy

__all__ = ["to_agentscope", "from_agentscope"]

_EXTRA_FIELDS = ("finished", "finish_reason", "reasoning_content")
_SIGNATURE_KEY = "thoughtSignature"
_SERVER_KEY = "agentmsg_server_name"
_MEDIA = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}


def to_agentscope(messages: Iterable[Message]) -> List[Dict[str, Any]]:
    """Converts messages to AgentScope ``Msg`` JSON objects.

    >>> to_agentscope([Message.tool("Beijing: Sunny", tool_id="call_001", name="get_weather")])[0]["content"]
    [{'type': 'tool_result', 'id': 'call_001', 'name': 'get_weather', 'output': [{'type': 'text', 'text': 'Beijing: Sunny'}]}]
    """
    out = []
    for index, message in enumerate(check_messages(messages)):
        # Msg JSON is stored as JSON, and must not share a dict with the message
        metadata = json_output_copy(message.metadata, f"messages[{index}].metadata")
        extra = {k: getattr(message, k) for k in _EXTRA_FIELDS if getattr(message, k) is not None}
        if "agentmsg" in metadata:  # the caller's own key of that name travels inside ours
            extra["metadata"] = metadata["agentmsg"]
        if extra:
            metadata["agentmsg"] = extra
        out.append({
            "name": message.name,
            "role": message.role.value.upper(),
            "content": [_block_to_agentscope(b, message, index) for b in message.content],
            "metadata": metadata,
            "id": message.id,
            "timestamp": format_timestamp(message.timestamp),
        })
    return out


def _source(source: Any) -> Dict[str, Any]:
    if type(source) is URLSource:
        return {"type": "url", "url": source.url}
    return {"type": "base64", "media_type": source.media_type, "data": source.data}


def _block_to_agentscope(block: Any, message: Message, index: int) -> Dict[str, Any]:
    kind = type(block)
    if kind is TextBlock:
        return {"type": "text", "text": block.text}
    if kind is ThinkingBlock:
        return thinking_dict(block, "thinking", "metadata", _SIGNATURE_KEY)
    if kind is ToolUseBlock:
        where = f"messages[{index}] tool call {shown(block.id)}"
        data: Dict[str, Any] = {"type": "tool_use", "id": block.id, "name": block.name,
                "input": json_output_copy(block.input, f"{where}.input")}
        metadata = json_output_copy(block.metadata, f"{where}.metadata")
        if block.server_name != "local":
            metadata[_SERVER_KEY] = block.server_name
        if metadata:
            data["metadata"] = metadata
        return data
    if kind is ToolResultBlock:
        data = {
            "type": "tool_result",
            "id": block.tool_use_id,
            "name": message.name,
            "output": [_block_to_agentscope(b, message, index) for b in block.output],
        }
        if block.is_error:
            data["state"] = "ERROR"
        return data
    if kind in SERVER_BLOCKS or kind is DocumentBlock:  # AgentScope has no such block: agentmsg's own form
        return block_to_dict(block)
    return {"type": block.type, "source": _source(block.source)}


def from_agentscope(messages: Iterable[Mapping[str, Any]], *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """Reads AgentScope ``Msg`` JSON objects (role in any case). ``on_orphan``: raise, repair or keep.

    >>> m = from_agentscope([{"name": "AgentA", "role": "ASSISTANT", "content": [{"type": "text", "text": "View A"}]}])[0]
    >>> (m.role.value, m.name, m.text)
    ('assistant', 'AgentA', 'View A')
    """
    out = []
    for index, data in enumerate(check_dicts(messages, "messages")):
        where = f"messages[{index}]"
        data = require_dict(data, where)
        role = require_str_key(data, "role", where)
        if role.lower() not in ("system", "user", "assistant", "tool"):
            raise ConversionError(f"{where}.role: unknown role {shown(role)}; valid: SYSTEM, USER, ASSISTANT, TOOL")
        role = role.lower()
        content = require(data, "content", where)
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, (list, tuple)):
            raise MessageTypeError(f"{where}.content must be a list of blocks, not {type(content).__name__}")
        blocks = [_block_from_agentscope(b, f"{where}.content[{j}]") for j, b in enumerate(content)]
        metadata = optional_dict(data.get("metadata"), f"{where}.metadata")
        extra = metadata.pop("agentmsg", None)
        if not isinstance(extra, dict):
            if extra is not None:
                metadata["agentmsg"] = extra  # not ours: someone else's data, kept as is
            extra = {}
        fields = {k: extra[k] for k in _EXTRA_FIELDS if k in extra}
        for key in ("finish_reason", "reasoning_content"):
            if key in fields and fields[key] is not None and not isinstance(fields[key], str):
                raise MessageTypeError(
                    f"{where}.metadata['agentmsg'].{key} must be a str, not {type(fields[key]).__name__}"
                )
        if "metadata" in extra:
            metadata["agentmsg"] = extra["metadata"]
        for key in ("id", "timestamp"):
            if data.get(key) is not None:
                fields[key] = data[key]
        name = data.get("name")
        if role == "tool" and name is None:
            name = next((b[1] for b in blocks if isinstance(b, tuple)), None)
        blocks = [b[0] if isinstance(b, tuple) else b for b in blocks]
        out.append(build(where, lambda: Message(role, blocks, name=name, metadata=metadata, **fields)))
    return settle_tool_pairs(out, on_orphan, "from_agentscope")


def _block_from_agentscope(data: Any, where: str) -> Any:
    data, kind = tagged_dict(data, where)
    if kind == "text":
        return text_block(data, where)
    if kind == "thinking":
        thinking = data.get("thinking") or ""
        signature = optional_dict(data.get("metadata"), f"{where}.metadata").get(_SIGNATURE_KEY)
        return build(where, lambda: ThinkingBlock(thinking, signature))
    if kind == "tool_use":
        metadata = json_output_copy(optional_dict(data.get("metadata"), f"{where}.metadata"), f"{where}.metadata")
        server = metadata.pop(_SERVER_KEY, "local")
        call_id, name = require(data, "id", where), require(data, "name", where)
        arguments = json_output_copy(optional_dict(data.get("input"), f"{where}.input"), f"{where}.input")
        return build(where, lambda: ToolUseBlock(call_id, name, arguments, server, metadata))
    if kind == "tool_result":
        tool_id = data.get("id", data.get("toolUseId", data.get("tool_use_id")))
        if tool_id is None:
            raise ConversionError(f"{where}: missing field 'id'")
        output = data.get("output")
        if output is None:
            output = []
        elif isinstance(output, str):
            output = [{"type": "text", "text": output}]
        output = require_list(output, f"{where}.output")
        blocks = [_block_from_agentscope(b, f"{where}.output[{j}]") for j, b in enumerate(output)]
        is_error = data.get("state") == "ERROR"
        block = build(where, lambda: ToolResultBlock(tool_id, blocks, is_error))
        return (block, data.get("name"))  # the tool's name, for the message when Msg.name is unset
    if kind in ("server_tool_use", "server_tool_result", "document"):
        return build(where, lambda: block_from_dict(data, where))
    if kind in _MEDIA:
        source = require_dict(require(data, "source", where), f"{where}.source")
        stype = block_kind(source, f"{where}.source")
        if stype == "url":
            url = require(source, "url", f"{where}.source")
            return build(where, lambda: _MEDIA[kind](URLSource(url)))
        if stype == "base64":
            media_type = source.get("media_type", source.get("mediaType"))
            if media_type is None:
                raise ConversionError(f"{where}.source: missing field 'media_type'")
            payload = require(source, "data", f"{where}.source")
            return build(where, lambda: _MEDIA[kind](Base64Source(media_type, payload)))
        raise ConversionError(f"{where}.source.type: unknown source type {shown(stype)}; valid: url, base64")
    raise ConversionError(
        f"{where}.type: unknown block type {shown(kind)}; valid: text, image, audio, video, thinking, tool_use, "
        "tool_result, server_tool_use, server_tool_result, document"
    )


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
