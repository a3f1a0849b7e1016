"""OpenAI Chat Completions messages, both ways (Suna's and Wolo's wire format).

Tool calls carry ``id``, ``type: "function"`` and ``arguments`` as a JSON *string*; tool results
are ``role: "tool"`` messages with ``tool_call_id``. Content is a string, or a list of parts
when a message has several text blocks, images or audio. The model's own argument text is kept
(``metadata["raw_arguments"]``) and written back unchanged, so a history read and written back
keeps its exact text and token count. ``developer`` messages come back as ``developer``, and a
refusal (``"refusal": "..."``, content null) is read as the message's text and written back as
a refusal.

What the format cannot carry, and so is left out with a :class:`ConversionWarning`: thinking
blocks (``reasoning_content`` *is* passed through, as Wolo sends it), video, images and audio
outside user messages, audio that is not base64 WAV or MP3, a tool result's ``is_error`` flag
and its media, a tool result name that differs from its call's (tool messages carry no name),
and a tool call's ``server_name`` / ``metadata``. A message between a tool call and its results
is moved after them, with a warning (OpenAI wants the results right after the call). Arguments
that are not JSON (NaN, bytes, nesting deeper than Python's recursion limit) are a
ConversionError or MessageTypeError, never written as invalid JSON. Message ids, timestamps,
metadata, ``finished`` and ``finish_reason`` are local bookkeeping and are not sent.

    >>> import agentmsg
    >>> call = agentmsg.ToolUseBlock("call_1", "calculator", {"a": 5})
    >>> agentmsg.to_openai([agentmsg.assistant(tool_calls=[call])])[0]["tool_calls"]
    [{'id': 'call_1', 'type': 'function', 'function': {'name': 'calculator', 'arguments': '{"a": 5}'}}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Optional, Tuple, cast, TYPE_CHECKING

from .._checks import check_calls
from ..blocks import (
    Block, AudioBlock, Base64Source, ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock,
    URLSource, VideoBlock,
)
from ..errors import ConversionError, MessageError, MessageTypeError
from ..message import Message, metadata_view, _ROLE_NAMES, _ASSISTANT, _SYSTEM, _TOOL, _USER
from ._common import (
    Losses, build, call_extras_lost, call_place, check_dicts, check_messages, dump_arguments,
    load_arguments, own_namespace, plain_data, require, require_choice, require_dict, require_list,
    write_in_order, bounded, settle_tool_pairs, shown, tagged_dict, text_block,
)

if TYPE_CHECKING:
    from .._sdk_types import OpenAIMessageParam
    from ..options import OrphanPolicy

__all__ = ["to_openai", "from_openai"]

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}
_AUDIO_MEDIA_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}
# Keys of an OpenAI message this module maps to Message fields; any other key is kept in
# metadata["openai"] so nothing is dropped.
_KNOWN_KEYS = frozenset(("role", "content", "name", "tool_calls", "tool_call_id", "reasoning_content"))
_ROLES = frozenset(("system", "user", "assistant", "tool"))
_TEXT_ROLES = {"system": _SYSTEM, "user": _USER, "assistant": _ASSISTANT}
_ROLE_OF = {**_TEXT_ROLES, "tool": _TOOL}


def to_openai(messages: Iterable[Message]) -> List[OpenAIMessageParam]:
    """Converts messages to OpenAI Chat Completions message dicts.

    >>> to_openai([Message.system("Be brief"), Message.user("Hi", name="alice")])
    [{'role': 'system', 'content': 'Be brief'}, {'role': 'user', 'content': 'Hi', 'name': 'alice'}]
    """
    items = check_messages(messages)
    losses = Losses("to_openai")
    call_names: Dict[str, str] = {}

    def write(message: Message, index: int) -> Optional[Dict[str, Any]]:
        role = message.role
        content = message.content
        if role is _TOOL:
            if message.name is not None and call_names.get(message.tool_id or "") != message.name:
                losses.add("a tool result name that differs from its call's", index)
        elif (len(content) == 1 and content[0].__class__ is TextBlock and message.name is None
              and message.reasoning_content is None and "openai" not in metadata_view(message)):
            # the common message, as message_to_openai writes it, without the call
            return {"role": _ROLE_NAMES[role], "content": content[0].text}
        return message_to_openai(message, index, losses, call_names=call_names)

    return cast("List[OpenAIMessageParam]", write_in_order(items, losses, write))  # the SDK's TypedDicts


def data_url(source: Base64Source) -> str:
    return f"data:{source.media_type};base64,{source.data}"


def message_to_openai(
    message: Message, index: int, losses: Losses, *, tool_name: bool = False,
    call_names: Optional[Dict[str, str]] = None,
) -> Optional[Dict[str, Any]]:
    """One message as one OpenAI dict (OpenAI has a message per tool result, so it is 1:1).

    None when nothing of the message can be carried (e.g. a user message made only of video);
    ``losses`` then says what was left out. ``tool_name`` writes a tool message's ``name``
    (Suna's rows keep it; the Chat Completions API has no such field). ``call_names`` learns
    the name of each call written (call id -> tool name).
    """
    role = message.role
    if role is _TOOL:
        return _tool_to_openai(message, index, losses, tool_name)
    # What from_openai kept of the original (a developer role, a refusal), if anything.
    kept = own_namespace(metadata_view(message), "openai")
    written = "developer" if role is _SYSTEM and kept.get("role") == "developer" else _ROLE_NAMES[role]
    content = message.content
    if len(content) == 1 and content[0].__class__ is TextBlock:
        data: Dict[str, Any] = {"role": written, "content": content[0].text}  # the common case
    else:
        converted = _content_to_openai(message, written, index, losses, call_names)
        if converted is None:
            return None
        data = converted
    if message.name is not None:
        data["name"] = message.name
    if message.reasoning_content is not None:
        data["reasoning_content"] = message.reasoning_content
    if kept and role is _ASSISTANT:
        _write_refusal(kept, data)
    return data


def _content_to_openai(
    message: Message, written: str, index: int, losses: Losses, call_names: Optional[Dict[str, str]],
) -> Optional[Dict[str, Any]]:
    """The role, content and tool calls of a message of several blocks (None: nothing to carry)."""
    role = message.role
    parts: List[Dict[str, Any]] = []
    calls: List[Dict[str, Any]] = []
    block: Any  # dispatched on type(block), which mypy cannot follow through `kind`
    for block in message.content:
        kind = type(block)
        if kind is TextBlock:
            if block.text:  # an empty part carries nothing (and "" alone reads back as no content)
                parts.append({"type": "text", "text": block.text})
        elif kind is ToolUseBlock:
            calls.append(_call_to_openai(block, index, losses))
            if call_names is not None:
                call_names[block.id] = block.name
        elif kind is ThinkingBlock:
            losses.add("thinking blocks", index)
        elif kind is ImageBlock and role is _USER:
            source = block.source
            url = source.url if type(source) is URLSource else data_url(source)
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif kind is AudioBlock and role is _USER and _audio_format(block) is not None:
            parts.append({
                "type": "input_audio",
                "input_audio": {"data": block.source.data, "format": _audio_format(block)},
            })
        elif kind is VideoBlock:
            losses.add("video", index)
        else:
            losses.add(f"{kind.type} blocks in {role.value} messages", index)
    data: Dict[str, Any] = {"role": written}
    if len(parts) == 1 and parts[0]["type"] == "text":
        data["content"] = parts[0]["text"]
    elif parts:
        data["content"] = parts
    elif calls or (role is _ASSISTANT and message.reasoning_content is not None):
        data["content"] = None
    else:
        losses.add("messages with nothing else it can carry", index)
        return None
    if calls:
        data["tool_calls"] = calls
    return data


def _write_refusal(kept: Mapping[str, Any], data: Dict[str, Any]) -> None:
    """A refusal read by from_openai goes back as one: ``content`` null when it was the text."""
    refusal = kept.get("refusal")
    if isinstance(refusal, str):
        data["refusal"] = refusal
        if data.get("content") == refusal:
            data["content"] = None


def _audio_format(block: AudioBlock) -> Optional[str]:
    source = block.source
    if type(source) is not Base64Source:
        return None
    return _AUDIO_FORMATS.get(source.media_type)


def _call_to_openai(call: ToolUseBlock, index: int, losses: Losses) -> Dict[str, Any]:
    if call_extras_lost(call):
        losses.add("a tool call's server_name or metadata", index)
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": dump_arguments(call, call_place(index, call, "input"))},
    }


def _tool_to_openai(message: Message, index: int, losses: Losses, tool_name: bool) -> Dict[str, Any]:
    if not message.tool_id:
        raise ConversionError(
            f"messages[{index}].tool_id: OpenAI needs the id of the call a tool message answers "
            "(read Forge histories with from_forge, which gives calls ids)"
        )
    result = cast(ToolResultBlock, message.content[0])  # a tool message holds one result
    if result.is_error:
        losses.add("the is_error flag of tool results", index)
    output = result.output
    if len(output) == 1 and type(output[0]) is TextBlock:
        texts = [output[0].text]
    else:
        texts = [b.text for b in output if type(b) is TextBlock]
    if len(texts) != len(output):
        losses.add("media in tool results", index)
    content: Any = texts[0] if len(texts) == 1 else (
        [{"type": "text", "text": t} for t in texts] if texts else ""
    )
    data: Dict[str, Any] = {"role": "tool", "tool_call_id": message.tool_id, "content": content}
    if tool_name and message.name is not None:
        data["name"] = message.name
    if message.reasoning_content is not None:
        data["reasoning_content"] = message.reasoning_content
    return data


def from_openai(messages: Iterable[Any], *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """Reads OpenAI Chat Completions messages: dicts, or the ``openai`` SDK's objects.

    A whole response (a ``ChatCompletion``, or its dict), alone or in the list, stands for its
    first choice's message (``choices[0].message``), with the choice's ``finish_reason``; read
    other choices by passing ``choice.message``.

    ``developer`` messages become system messages with ``metadata["openai"]["role"] ==
    "developer"`` (and :func:`to_openai` writes them back as ``developer``); keys this model has
    no field for are kept in ``metadata["openai"]``. A refusal with no content becomes the
    message's text (and goes back as a refusal); an assistant message with only
    ``reasoning_content`` becomes a thinking block. A tool message without ``name`` is named
    after its call. ``on_orphan`` decides what a tool result without its call (or a call never
    answered) does: ``"raise"`` a ToolPairError, ``"repair"`` the history, or ``"keep"`` it as is.

    >>> [m.text for m in from_openai([{"role": "user", "content": "Hi"}])]
    ['Hi']
    """
    if _is_completion(plain_data(messages)):
        messages = [messages]
    items = check_dicts(messages, "messages")
    call_names: Dict[str, str] = {}
    out = []
    for index, data in enumerate(items):
        where = f"messages[{index}]"
        if type(data) is not dict or "choices" in data:
            data, fields = _reply_of_completion(plain_data(data), where)
            out.append(message_from_openai(data, where, call_names=call_names, **fields))
        else:
            out.append(message_from_openai(data, where, call_names=call_names))
    return settle_tool_pairs(out, on_orphan, "from_openai")


def _is_completion(data: Any) -> bool:
    """Whether ``data`` is a whole response (``ChatCompletion``): it has choices, not a role."""
    return isinstance(data, Mapping) and "choices" in data and "role" not in data


def _reply_of_completion(data: Any, where: str) -> Tuple[Any, Dict[str, Any]]:
    """A ``ChatCompletion`` as ``(choices[0].message, {"finish_reason": ...})``; else ``(data, {})``."""
    if not _is_completion(data):
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
                return Message(_TOOL, content, tool_id=tool_id,
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
                _TOOL, [ToolResultBlock(tool_id, blocks)], tool_id=tool_id, name=name,
                metadata=metadata, reasoning_content=reasoning, **fields,
            )
        calls = data.get("tool_calls")
        if calls:
            if role != "assistant":
                raise ConversionError(f"tool_calls: only assistant messages call tools, not {role}")
            calls = require_list(calls, f"{where}.tool_calls")
            for j, call in enumerate(calls):
                block = _call_from_openai(call, f"{where}.tool_calls[{j}]")
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


def _call_from_openai(data: Any, where: str) -> ToolUseBlock:
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
    raise ConversionError(
        f"{where}.type: unknown content part type {shown(kind)}; valid: text, image_url, input_audio, refusal"
    )


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


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
