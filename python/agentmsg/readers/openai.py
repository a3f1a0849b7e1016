"""One OpenAI Chat Completions message (a dict or an SDK object, a request message or a
completion's reply) read into a :class:`agentmsg.Message`; :func:`agentmsg.from_openai` reads a
whole history with it, :func:`agentmsg.as_messages` any mix of forms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Tuple

from .._checks import bounded, require, require_choice, require_dict, require_list, shown
from ..errors import ConversionError, MessageError, MessageTypeError
from ..model.arguments import load_arguments
from ..model.blocks import (
    AudioBlock, Base64Source, Block, DocumentBlock, ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock,
    URLSource,
)
from ..model.message import ASSISTANT_ROLE, SYSTEM_ROLE, TOOL_ROLE, USER_ROLE, Message
from ._fields import build, tagged_dict, text_block

__all__ = []


_AUDIO_MEDIA_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}


# Keys of an OpenAI message this module maps to Message fields; any other key is kept in
# metadata["openai"] so nothing is dropped.
_KNOWN_KEYS = frozenset(("role", "content", "name", "tool_calls", "tool_call_id", "reasoning_content"))


_ROLES = frozenset(("system", "user", "assistant", "tool"))


_TEXT_ROLES = {"system": SYSTEM_ROLE, "user": USER_ROLE, "assistant": ASSISTANT_ROLE}


_ROLE_OF = {**_TEXT_ROLES, "tool": TOOL_ROLE}


def is_completion(data: Any) -> bool:
    """Whether ``data`` is a whole response (``ChatCompletion``): it has choices, not a role."""
    return isinstance(data, Mapping) and "choices" in data and "role" not in data


def reply_of_completion(data: Any, where: str) -> Tuple[Any, Dict[str, Any]]:
    """A ``ChatCompletion`` as ``(choices[0].message, {"finish_reason": ...})``; else ``(data, {})``."""
    if not is_completion(data):
        return data, {}
    choices = require_list(data["choices"], f"{where}.choices")
    if not choices:
        raise ConversionError(f"{where}.choices: a completion with no choices has no message")
    choice = require_dict(choices[0], f"{where}.choices[0]")
    reason = choice.get("finish_reason")
    fields = {"finish_reason": reason} if isinstance(reason, str) else {}
    return require_dict(require(choice, "message", f"{where}.choices[0]"), f"{where}.choices[0].message"), fields


def message_from_openai(data: Any, where: str, call_names: Optional[Dict[str, str]] = None, **fields: Any) -> Message:
    """One OpenAI dict as a Message; ``fields`` are extra Message keyword arguments.

    ``call_names`` (call id -> tool name) names tool messages after their call, and learns the
    calls of assistant messages.
    """
    if data.__class__ is dict and not fields:
        # The common shapes, whose every check is done here: plain text, and a tool result
        # with its call's id (the general path below reads them the same way).
        content = data.get("content")
        if content.__class__ is str and len(data) == 2 and content:
            role = data.get("role")
            if role.__class__ is str and role in _TEXT_ROLES:
                return Message(_TEXT_ROLES[role], content)
        elif content.__class__ is str and len(data) == 3 and data.get("role") == "tool":
            tool_id = data.get("tool_call_id")
            if tool_id.__class__ is str and tool_id:
                return Message(TOOL_ROLE, content, tool_id=tool_id,
                               name=call_names.get(tool_id) if call_names else None)
    if type(data) is not dict:
        data = require_dict(data, where)
    role = require(data, "role", where)
    if type(role) is not str or role not in _ROLES:
        if role == "developer":
            role = "system"
        else:
            require_choice(role, ("system", "developer", "user", "assistant", "tool"), f"{where}.role", "role")
    metadata = fields.pop("metadata", None)
    if not _KNOWN_KEYS.issuperset(data) or role != data["role"]:
        metadata = dict(metadata or {})
        extras = {k: v for k, v in data.items() if k not in _KNOWN_KEYS}
        if role != data["role"]:
            extras["role"] = "developer"
        metadata["openai"] = extras
    content = data.get("content")
    blocks = _content_blocks(content, where, role)
    reasoning = data.get("reasoning_content")
    name = data.get("name")
    try:
        if role == "tool":
            tool_id = data.get("tool_call_id")
            if tool_id is None:
                raise ConversionError("missing field 'tool_call_id'")
            if name is None and call_names and isinstance(tool_id, str):
                name = call_names.get(tool_id)
            return Message(
                TOOL_ROLE, [ToolResultBlock(tool_id, blocks)], tool_id=tool_id, name=name,
                metadata=metadata, reasoning_content=reasoning, **fields,
            )
        calls = data.get("tool_calls")
        if calls:
            if role != "assistant":
                raise ConversionError(f"tool_calls: only assistant messages call tools, not {role}")
            calls = require_list(calls, f"{where}.tool_calls")
            for j, call in enumerate(calls):
                block = call_from_openai(call, f"{where}.tool_calls[{j}]")
                if call_names is not None:
                    call_names[block.id] = block.name
                blocks.append(block)
        elif role == "assistant" and not blocks:
            refusal = data.get("refusal")
            if isinstance(refusal, str) and refusal:
                blocks.append(TextBlock(refusal))  # kept in metadata["openai"] too, to go back as one
            elif isinstance(reasoning, str):
                blocks, reasoning = [ThinkingBlock(reasoning)], None
        return Message(_ROLE_OF[role], blocks, name=name, metadata=metadata, reasoning_content=reasoning, **fields)
    except MessageTypeError as error:
        raise MessageTypeError(_prefixed(where, error)) from None
    except (MessageError, ConversionError) as error:
        raise ConversionError(_prefixed(where, error)) from None
    except (ValueError, OverflowError) as error:  # e.g. an int too long to convert, in a timestamp
        raise ConversionError(f"{where}: {type(error).__name__}: {bounded(error)}") from None


def _prefixed(where: str, error: Exception) -> str:
    text = bounded(error)
    if text.startswith(where):
        return text
    return f"{where}.{text}" if text.startswith("tool_calls") else f"{where}: {text}"


def call_from_openai(data: Any, where: str) -> ToolUseBlock:
    data = require_dict(data, where)
    require_choice(data.get("type", "function"), ("function",), f"{where}.type", "tool call type")
    function = require_dict(require(data, "function", where), f"{where}.function")
    call_id = require(data, "id", where)
    name = require(function, "name", f"{where}.function")
    arguments, metadata = load_arguments(function.get("arguments"), f"{where}.function.arguments")
    return build(where, lambda: ToolUseBlock(call_id, name, arguments, metadata=metadata))


def _content_blocks(content: Any, where: str, role: str) -> List[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextBlock(content)] if content or role != "assistant" else []
    if not isinstance(content, (list, tuple)):
        raise MessageTypeError(
            f"{where}.content must be a str, a list of parts or null, not {type(content).__name__}"
        )
    return [_part_from_openai(p, f"{where}.content[{j}]") for j, p in enumerate(content)]


def _part_from_openai(part: Any, where: str) -> Any:
    part, kind = tagged_dict(part, where)
    if kind == "text":
        return text_block(part, where)
    if kind == "image_url":
        image = require_dict(require(part, "image_url", where), f"{where}.image_url")
        url = require(image, "url", f"{where}.image_url")
        return build(where, lambda: ImageBlock(source_from_url(url, f"{where}.image_url.url")))
    if kind == "input_audio":
        audio = require_dict(require(part, "input_audio", where), f"{where}.input_audio")
        fmt = require_choice(require(audio, "format", f"{where}.input_audio"), tuple(_AUDIO_MEDIA_TYPES),
                             f"{where}.input_audio.format", "format")
        data = require(audio, "data", f"{where}.input_audio")
        return build(where, lambda: AudioBlock(Base64Source(_AUDIO_MEDIA_TYPES[fmt], data)))
    if kind == "refusal":
        refusal = require(part, "refusal", where)
        return build(where, lambda: TextBlock(refusal))
    if kind == "file":
        return document_from_openai(require_dict(require(part, "file", where), f"{where}.file"), f"{where}.file")
    raise ConversionError(
        f"{where}.type: unknown content part type {shown(kind)}; valid: text, image_url, input_audio, refusal, file"
    )


def document_from_openai(file: Mapping[str, Any], where: str) -> DocumentBlock:
    """A file part's document (Chat Completions' ``file``, the Responses API's ``input_file``):
    its ``file_data`` data URL as base64 data, or its ``file_url``; ``filename`` its name. A file
    sent only by ``file_id`` names a file in OpenAI's store, which no other format reaches:
    refused, named."""
    name = file.get("filename")
    if name is not None and not isinstance(name, str):
        raise MessageTypeError(f"{where}.filename must be a str, not {type(name).__name__}")
    if "file_data" in file:
        source = source_from_url(file["file_data"], f"{where}.file_data")
        if type(source) is not Base64Source:
            raise ConversionError(f"{where}.file_data must be a data URL (data:<media type>;base64,<data>)")
    elif "file_url" in file:
        source = source_from_url(file["file_url"], f"{where}.file_url")
    elif "file_id" in file:
        raise ConversionError(f"{where}: a file sent only by file_id is not read (it names a file in OpenAI's "
                              "store); send its file_data")
    else:
        raise ConversionError(f"{where}: missing field 'file_data'")
    return build(where, lambda: DocumentBlock(source, name))


def source_from_url(url: Any, where: str) -> Any:
    """A ``data:<type>;base64,<data>`` URL as a Base64Source, any other URL as a URLSource."""
    if not isinstance(url, str):
        raise MessageTypeError(f"{where} must be a str, not {type(url).__name__}")
    if url.startswith("data:"):
        header, sep, payload = url[5:].partition(",")
        if not sep or not header.endswith(";base64"):
            raise ConversionError(f"{where}: a data URL must look like data:<media type>;base64,<data>")
        return build(where, lambda: Base64Source(header[: -len(";base64")], payload))
    return build(where, lambda: URLSource(url))
