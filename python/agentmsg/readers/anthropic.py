"""One Anthropic turn (a dict or an SDK object) read into messages: its text, thinking and tool
calls as one message, its ``tool_result`` blocks as tool messages; :func:`agentmsg.from_anthropic`
reads a whole history with it, :func:`agentmsg.as_messages` any mix of forms."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any, Dict, List, Tuple

from .._checks import json_copy, require, require_choice, require_dict, shown
from ..errors import ConversionError, MessageTypeError
from ..model.arguments import json_output_copy
from ..model.blocks import (
    Base64Source, Block, DocumentBlock, ImageBlock, ServerToolResultBlock, ServerToolUseBlock, TextBlock, ThinkingBlock,
    ToolResultBlock, ToolUseBlock, URLSource,
)
from ..model.message import Message
from ._fields import block_kind, build, check_dicts, plain_data, require_str_key, text_block

__all__ = []


def system_from_anthropic(system: Any) -> Message:
    if isinstance(system, str):
        return Message.system(system)
    blocks = []
    for j, block in enumerate(check_dicts(system, "system")):
        block = require_dict(block, f"system[{j}]")
        require_choice(block_kind(block, f"system[{j}]"), ("text",), f"system[{j}].type", "system block type")
        text = require_str_key(block, "text", f"system[{j}]")
        blocks.append(TextBlock(text))
    return build("system", lambda: Message.system(blocks))


def tool_result_from_anthropic(block: Mapping[str, Any], where: str, call_names: Dict[str, str]) -> Message:
    tool_id = require_str_key(block, "tool_use_id", where)
    content = block.get("content", [])
    if isinstance(content, str):
        output: List[Block] = [TextBlock(content)] if content else []
    elif isinstance(content, (list, tuple)):
        output = []
        for j, item in enumerate(content):
            if type(item) is dict and item.get("type") == "text" and type(item.get("text")) is str:
                output.append(TextBlock(item["text"]))
                continue
            item = require_dict(plain_data(item), f"{where}.content[{j}]")
            require_choice(block_kind(item, f"{where}.content[{j}]"), ("text", "image", "document"),
                           f"{where}.content[{j}].type", "tool result block")
            output.append(block_from_anthropic(item, f"{where}.content[{j}]"))
    else:
        raise MessageTypeError(f"{where}.content must be a str or a list, not {type(content).__name__}")
    is_error = block.get("is_error", False)
    if is_error is None:
        is_error = False
    if not isinstance(is_error, bool):
        raise MessageTypeError(f"{where}.is_error must be a bool, not {type(is_error).__name__}")
    return build(where, lambda: Message(
        "tool", [ToolResultBlock(tool_id, output, is_error)], tool_id=tool_id, name=call_names.get(tool_id)
    ))


def block_from_anthropic(block: Mapping[str, Any], where: str) -> Any:
    kind = block_kind(block, where)
    if kind == "text":
        return text_block(block, where)
    if kind == "thinking":
        thinking = require(block, "thinking", where)
        signature = block.get("signature")
        return build(where, lambda: ThinkingBlock(thinking, signature))
    if kind == "tool_use":
        call_id, name, arguments = (require(block, k, where) for k in ("id", "name", "input"))
        arguments = json_output_copy(require_dict(arguments, f"{where}.input"), f"{where}.input")
        return build(where, lambda: ToolUseBlock(call_id, name, arguments))
    if kind == "image":
        source = require_dict(require(block, "source", where), f"{where}.source")
        stype = require_choice(block_kind(source, f"{where}.source"), ("base64", "url"),
                               f"{where}.source.type", "image source")
        if stype == "base64":
            media_type, data = require(source, "media_type", f"{where}.source"), require(source, "data", f"{where}.source")
            return build(where, lambda: ImageBlock(Base64Source(media_type, data)))
        url = require(source, "url", f"{where}.source")
        return build(where, lambda: ImageBlock(URLSource(url)))
    if kind == "document":
        return document_from_anthropic(block, where)
    if kind in ("server_tool_use", "mcp_tool_use"):
        return server_call_from_anthropic(block, kind, where)
    if kind is not None and kind.endswith("_tool_result"):
        return server_result_from_anthropic(block, where)
    raise ConversionError(
        f"{where}.type: unknown block type {shown(kind)}; valid: text, image, document, thinking, tool_use, "
        "tool_result, redacted_thinking, server_tool_use, mcp_tool_use, *_tool_result, mcp_tool_listing"
    )


#: The name of the server call an MCP tool listing reads into, as the Responses API's
#: ``mcp_list_tools`` item does: one representation of "the provider listed an MCP server's tools".
MCP_LISTING_NAME = "mcp_list_tools"
_LISTING_FIELDS = frozenset(("type", "mcp_server_name", "tools", "cache_control"))


def listing_from_anthropic(block: Mapping[str, Any], position: int, where: str
                           ) -> Tuple[ServerToolUseBlock, ServerToolResultBlock]:
    """An ``mcp_tool_listing`` block (the tools the MCP connector fetched from a server) as the
    pair the Responses API's ``mcp_list_tools`` item reads into: a ``mcp_list_tools`` call on
    that server and its result, ``{"tools": [...]}``. The block has no id: the pair is linked by
    one made of the block's ``position`` in its turn and its content, and
    :func:`agentmsg.to_anthropic` writes the block back whole, without it."""
    server = require_str_key(block, "mcp_server_name", where)
    tools = require(block, "tools", where)
    if not isinstance(tools, (list, tuple)):
        raise MessageTypeError(f"{where}.tools must be a list of tools, not {type(tools).__name__}")
    extra = {k: v for k, v in block.items() if k not in _LISTING_FIELDS}
    metadata = {"type": "mcp_tool_listing"}
    # Made of its place and its content: the same read whole or streamed, and two listings of a
    # history share one only when they are the same listing at the same place of their turns.
    listed = build(where, lambda: json_copy(list(tools), f"{where}.tools"))  # JSON values, or a typed error
    digest = hashlib.sha256(json.dumps([server, listed], sort_keys=True).encode()).hexdigest()
    listing_id = f"mcp_tool_listing_{position}_{digest[:12]}"
    call = build(where, lambda: ServerToolUseBlock(listing_id, MCP_LISTING_NAME, {}, server, "anthropic",
                                                   {**extra, **metadata}))
    result = build(where, lambda: ServerToolResultBlock(listing_id, {"tools": listed}, False, "anthropic", metadata))
    return call, result


_DOCUMENT_FIELDS = frozenset(("type", "source", "title", "cache_control"))


def document_from_anthropic(block: Mapping[str, Any], where: str) -> DocumentBlock:
    """A ``document`` block: a base64 PDF, a URL, or plain text (kept as base64 ``text/plain``
    data, so that every document has one shape); ``title`` its name, ``context`` and
    ``citations`` in its metadata. A document by ``file_id`` (Anthropic's file store) or made of
    content blocks is refused, named."""
    source = require_dict(require(block, "source", where), f"{where}.source")
    kind = require_choice(block_kind(source, f"{where}.source"), ("base64", "text", "url", "content", "file"),
                          f"{where}.source.type", "document source")
    if kind in ("content", "file"):
        raise ConversionError(f"{where}.source: a document of source type {kind!r} is not read (only base64, text "
                              "and url documents carry their content to other formats)")
    title = block.get("title")
    extra = {k: v for k, v in block.items() if k not in _DOCUMENT_FIELDS}
    if kind == "url":
        url = require(source, "url", f"{where}.source")
        return build(where, lambda: DocumentBlock(URLSource(url), title, extra))
    media_type, data = require(source, "media_type", f"{where}.source"), require(source, "data", f"{where}.source")
    if kind == "text":
        if not isinstance(data, str):
            raise MessageTypeError(f"{where}.source.data must be a str, not {type(data).__name__}")
        if media_type != "text/plain":
            raise ConversionError(f"{where}.source.media_type: a text document is 'text/plain', not {shown(media_type)}")
        try:
            data = base64.b64encode(data.encode("utf-8")).decode("ascii")
        except UnicodeEncodeError as error:
            raise ConversionError(f"{where}.source.data: {error.reason} at {error.start} (text must be "
                                  "valid Unicode)") from None
    return build(where, lambda: DocumentBlock(Base64Source(media_type, data), title, extra))


#: What a server block's metadata never keeps: its typed fields, and request decoration.
_SERVER_CALL_FIELDS = frozenset(("type", "id", "name", "input", "server_name", "cache_control"))
_SERVER_RESULT_FIELDS = frozenset(("tool_use_id", "content", "is_error", "cache_control"))


def server_call_from_anthropic(block: Mapping[str, Any], kind: str, where: str) -> ServerToolUseBlock:
    """A ``server_tool_use`` (a built-in tool Anthropic runs) or ``mcp_tool_use`` (a tool of an
    MCP server its connector calls, ``server_name`` kept) block."""
    call_id, name, arguments = (require(block, k, where) for k in ("id", "name", "input"))
    arguments = dict(require_dict(arguments, f"{where}.input"))
    server = require_str_key(block, "server_name", where) if kind == "mcp_tool_use" else None
    extra = {k: v for k, v in block.items() if k not in _SERVER_CALL_FIELDS}
    return build(where, lambda: ServerToolUseBlock(call_id, name, arguments, server, "anthropic", extra))


def server_result_from_anthropic(block: Mapping[str, Any], where: str) -> ServerToolResultBlock:
    """A ``*_tool_result`` block of a server tool (web search, web fetch, code execution,
    ``mcp_tool_result``...): its ``content`` kept in Anthropic's shape, its ``type`` in metadata."""
    tool_id = require_str_key(block, "tool_use_id", where)
    is_error = block.get("is_error", False)
    if is_error is None:
        is_error = False
    if not isinstance(is_error, bool):
        raise MessageTypeError(f"{where}.is_error must be a bool, not {type(is_error).__name__}")
    content = block.get("content")
    extra = {k: v for k, v in block.items() if k not in _SERVER_RESULT_FIELDS}
    return build(where, lambda: ServerToolResultBlock(tool_id, content, is_error, "anthropic", extra))


def messages_from_anthropic(turn: Any, where: str, call_names: Dict[str, str]) -> List[Message]:
    """The messages of one Anthropic turn (a dict or an SDK object) at ``where``: a user turn's
    ``tool_result`` blocks become tool messages, named after their call in ``call_names`` (the
    calls read so far, which this extends), its other blocks a user message."""
    out: List[Message] = []
    turn = require_dict(plain_data(turn), where)
    role = require_choice(require(turn, "role", where), ("user", "assistant"), f"{where}.role", "role")
    extra = {k: v for k, v in turn.items() if k not in ("role", "content")}
    metadata = {"anthropic": extra} if extra else {}
    content = require(turn, "content", where)
    if isinstance(content, str):
        return [build(where, lambda: Message(role, content, metadata=metadata))]
    if not isinstance(content, (list, tuple)):
        raise MessageTypeError(f"{where}.content must be a str or a list of blocks, not {type(content).__name__}")
    pending: List[Block] = []
    for j, block in enumerate(content):
        if type(block) is dict and block.get("type") == "text" and type(block.get("text")) is str:
            pending.append(TextBlock(block["text"]))  # the common case, without the checks below
            continue
        bwhere = f"{where}.content[{j}]"
        block = require_dict(plain_data(block), bwhere)
        kind = block_kind(block, bwhere)
        if kind == "redacted_thinking":
            # no block of ours holds encrypted thinking: keep it aside, to_anthropic restores it
            data = require_str_key(block, "data", bwhere)
            metadata = {**metadata, "anthropic": {**metadata.get("anthropic", {}), "redacted_thinking":
                        metadata.get("anthropic", {}).get("redacted_thinking", []) + [data]}}
            if not pending:
                pending.append(ThinkingBlock(""))  # a turn of only redacted thinking still happened
            continue
        if kind == "tool_result":
            if role != "user":
                raise ConversionError(f"{bwhere}: tool_result blocks belong in user turns")
            if pending:
                out.append(build(where, lambda: Message(role, pending, metadata=metadata)))
                pending = []
            out.append(tool_result_from_anthropic(block, bwhere, call_names))
        elif kind == "mcp_tool_listing":
            pending.extend(listing_from_anthropic(block, j, bwhere))
        else:
            parsed = block_from_anthropic(block, bwhere)
            if type(parsed) is ToolUseBlock:
                call_names[parsed.id] = parsed.name
            pending.append(parsed)
    if pending:
        out.append(build(where, lambda: Message(role, pending, metadata=metadata)))
    return out
