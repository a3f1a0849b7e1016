"""An MCP tool's result (a ``tools/call`` ``CallToolResult``) as a tool message, which every
converter then writes in its provider's shape.

The result's content blocks become the tool result's output: ``text`` a :class:`TextBlock`,
``image`` and ``audio`` (base64 ``data`` with its ``mimeType``) an :class:`ImageBlock` /
:class:`AudioBlock`; an embedded ``resource`` its text, or its ``blob`` as an image, audio or
video block when its ``mimeType`` says so, any other typed blob (a PDF...) a
:class:`DocumentBlock` named by its URI (a blob of no type, a text line naming it); a
``resource_link`` a text line naming the link (``[resource: name](uri)``, with its description). ``structuredContent`` is written as its JSON
text after the content unless a text block already holds that JSON (the spec asks servers to
send both); ``isError`` is the result's ``is_error``. The whole result is also kept, as read, in
the message's ``metadata["mcp"]["result"]``, so what has no block (a resource link, a blob of
no media type, annotations, ``_meta``) is never lost.

    >>> import agentmsg
    >>> message = agentmsg.from_mcp_result({"content": [{"type": "text", "text": "Sunny"}],
    ...                                     "structuredContent": {"sky": "clear"}}, tool_id="call_1", name="weather")
    >>> message.text
    'Sunny\\n{"sky": "clear"}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Callable, Dict, List, Optional

from .._checks import check_calls, json_copy_dict, require, require_dict, shown
from ..errors import ConversionError, MessageTypeError
from ..model.arguments import json_text
from ..model.blocks import AudioBlock, Base64Source, Block, DocumentBlock, ImageBlock, Source, TextBlock, VideoBlock
from ..model.message import Message
from ..readers._fields import block_kind, build, check_dicts, plain_data, require_str_key

__all__ = ["from_mcp_result"]

NAMESPACE = "mcp"
_CONTENT_TYPES = ("text", "image", "audio", "resource", "resource_link")
_MEDIA: Dict[str, Callable[[Source], Block]] = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}


def from_mcp_result(result: Any, *, tool_id: Optional[str] = None, name: Optional[str] = None) -> Message:
    """The tool message of an MCP ``CallToolResult`` (a dict in the spec's camelCase, or the
    ``mcp`` SDK's object), answering the call ``tool_id`` of tool ``name`` (see the module).

    >>> from_mcp_result({"content": [], "isError": True}, tool_id="c1").is_error
    True
    """
    dump = getattr(result, "model_dump", None)
    if dump is not None and not isinstance(result, Mapping):  # the mcp SDK's object, in the spec's names
        result = dump(by_alias=True, exclude_none=True, mode="json")
    data = require_dict(result, "result")
    content = check_dicts(require(data, "content", "result"), "result.content")
    output: List[Block] = []
    texts = set()
    for index, part in enumerate(content):
        where = f"result.content[{index}]"
        block = _content_block(require_dict(plain_data(part), where), where)
        if block is not None:
            output.append(block)
            if type(block) is TextBlock:
                texts.add(block.text)
    structured = data.get("structuredContent")
    if structured is not None:
        structured = require_dict(structured, "result.structuredContent")
        text = json_text(structured, "result.structuredContent")
        if text not in texts and not any(_same_json(t, structured) for t in texts):
            output.append(TextBlock(text))
    is_error = data.get("isError", False)
    if is_error is None:
        is_error = False
    if not isinstance(is_error, bool):
        raise MessageTypeError(f"result.isError must be a bool, not {type(is_error).__name__}")
    kept = json_copy_dict(data, "result")
    return build("result", lambda: Message.tool(output, tool_id=tool_id, name=name, is_error=is_error,
                                                metadata={NAMESPACE: {"result": kept}}))


def _same_json(text: str, value: Any) -> bool:
    """Whether ``text`` is the JSON of ``value``, however it was spaced."""
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _content_block(part: Mapping[str, Any], where: str) -> Optional[Block]:
    kind = block_kind(part, where)
    if kind == "text":
        text = require_str_key(part, "text", where)
        return TextBlock(text)
    if kind in ("image", "audio"):
        data, media_type = require_str_key(part, "data", where), require_str_key(part, "mimeType", where)
        media = _MEDIA[kind]
        return build(where, lambda: media(Base64Source(media_type, data)))
    if kind == "resource":
        resource = require_dict(plain_data(require(part, "resource", where)), f"{where}.resource")
        if "text" in resource:
            return TextBlock(require_str_key(resource, "text", f"{where}.resource"))
        blob = require_str_key(resource, "blob", f"{where}.resource")
        blob_type = resource.get("mimeType")
        if not isinstance(blob_type, str):
            blob_type = None  # the spec's field is optional text; anything else names nothing
        family = blob_type.split("/", 1)[0] if blob_type else ""
        blob_media = _MEDIA.get(family)
        uri = resource.get("uri")
        if blob_media is not None:
            return build(where, lambda: blob_media(Base64Source(str(blob_type), blob)))
        if blob_type:  # a PDF, a spreadsheet...: a document named by its URI
            name = uri if isinstance(uri, str) else None
            return build(where, lambda: DocumentBlock(Base64Source(str(blob_type), blob), name))
        # a blob of no stated type: named for the model, kept whole in the metadata
        return TextBlock(f"[resource: {uri if isinstance(uri, str) else '?'}] ({blob_type or 'binary'}, not shown)")
    if kind == "resource_link":
        uri = require_str_key(part, "uri", where)
        label = next((value for value in (part.get("title"), part.get("name")) if isinstance(value, str) and value), uri)
        line = f"[resource: {label}]({uri})"
        description = part.get("description")
        if isinstance(description, str) and description:
            line += f" {description}"
        return TextBlock(line)
    raise ConversionError(f"{where}.type: unknown MCP content type {shown(kind)}; valid: {', '.join(_CONTENT_TYPES)}")


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
