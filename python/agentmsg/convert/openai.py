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
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, cast

from .._checks import check_calls
from ..errors import ConversionError, Losses
from ..model.arguments import call_extras_lost, call_place, dump_arguments
from ..model.blocks import (
    AudioBlock,
    Base64Source,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    URLSource,
    VideoBlock,
    document_name,
)
from ..model.message import (
    ASSISTANT_ROLE,
    ROLE_NAMES,
    SYSTEM_ROLE,
    TOOL_ROLE,
    USER_ROLE,
    Message,
    metadata_view,
)
from ..readers import check_messages
from ..readers._fields import check_dicts, own_namespace, plain_data
from ..readers.openai import is_completion, message_from_openai, reply_of_completion
from ._order import settle_tool_pairs, write_in_order

if TYPE_CHECKING:
    from .._sdk_types import OpenAIMessageParam
    from ..options import OrphanPolicy

__all__ = ["to_openai", "from_openai"]

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}


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
        if role is TOOL_ROLE:
            if message.name is not None and call_names.get(message.tool_id or "") != message.name:
                losses.add("a tool result name that differs from its call's", index)
        elif (len(content) == 1 and content[0].__class__ is TextBlock and message.name is None
              and message.reasoning_content is None and "openai" not in metadata_view(message)):
            # the common message, as message_to_openai writes it, without the call
            return {"role": ROLE_NAMES[role], "content": content[0].text}
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
    if role is TOOL_ROLE:
        return _tool_to_openai(message, index, losses, tool_name)
    # What from_openai kept of the original (a developer role, a refusal), if anything.
    kept = own_namespace(metadata_view(message), "openai")
    written = "developer" if role is SYSTEM_ROLE and kept.get("role") == "developer" else ROLE_NAMES[role]
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
    if kept and role is ASSISTANT_ROLE:
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
            calls.append(call_to_openai(block, index, losses))
            if call_names is not None:
                call_names[block.id] = block.name
        elif kind is ThinkingBlock:
            losses.add("thinking blocks", index)
        elif kind is ImageBlock and role is USER_ROLE:
            source = block.source
            url = source.url if type(source) is URLSource else data_url(source)
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif kind is AudioBlock and role is USER_ROLE and _audio_format(block) is not None:
            parts.append({
                "type": "input_audio",
                "input_audio": {"data": block.source.data, "format": _audio_format(block)},
            })
        elif kind is VideoBlock:
            losses.add("video", index)
        elif kind is DocumentBlock:
            if role is USER_ROLE and (part := _file_part(block, index, losses)) is not None:
                parts.append(part)
            else:
                losses.add("documents other than base64 PDFs in user messages", index)
        else:
            losses.add(f"{kind.type} blocks in {role.value} messages", index)
    data: Dict[str, Any] = {"role": written}
    if len(parts) == 1 and parts[0]["type"] == "text":
        data["content"] = parts[0]["text"]
    elif parts:
        data["content"] = parts
    elif calls or (role is ASSISTANT_ROLE and message.reasoning_content is not None):
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


def _file_part(block: DocumentBlock, index: int, losses: Losses) -> Optional[Dict[str, Any]]:
    """A base64 PDF as a ``file`` part (the only documents Chat Completions reads); None (a loss
    named by the caller) for a URL or another media type."""
    source = block.source
    if type(source) is not Base64Source or source.media_type != "application/pdf":
        return None
    if block.metadata:
        losses.add("a document's metadata", index)
    return {"type": "file", "file": {"filename": document_name(block), "file_data": data_url(source)}}


def _audio_format(block: AudioBlock) -> Optional[str]:
    source = block.source
    if type(source) is not Base64Source:
        return None
    return _AUDIO_FORMATS.get(source.media_type)


def call_to_openai(call: ToolUseBlock, index: int, losses: Losses) -> Dict[str, Any]:
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
    if is_completion(plain_data(messages)):
        messages = [messages]
    items = check_dicts(messages, "messages")
    call_names: Dict[str, str] = {}
    out = []
    for index, data in enumerate(items):
        where = f"messages[{index}]"
        if type(data) is not dict or "choices" in data:
            data, fields = reply_of_completion(plain_data(data), where)
            out.append(message_from_openai(data, where, call_names=call_names, **fields))
        else:
            out.append(message_from_openai(data, where, call_names=call_names))
    return settle_tool_pairs(out, on_orphan, "from_openai")


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
