"""Google Gemini ``contents`` (the ``google-genai`` SDK's ``Content`` and ``Part``), both ways.

A history is ``(system_instruction, contents)``: system text goes in ``systemInstruction``
(``{"parts": [{"text": ...}]}``), every other message in a ``user`` or ``model`` turn of
``parts``: ``text``, ``inlineData`` (base64 media with its ``mimeType``), ``fileData`` (media by
URI), ``functionCall`` (``name``, ``args``, an ``id`` when the call has one),
``functionResponse`` (the result as ``{"output": text}``, or ``{"error": text}`` for an error)
and thought parts (``"thought": true``) with their ``thoughtSignature``. Consecutive turns of a
role are merged and function responses go in the user turn after their calls, as the API wants.
Calls without ids (Gemini's own, before ids) pair with their responses by name.

Output is the REST shape (camelCase keys, base64 strings), which the SDK also takes; reading
accepts it, the SDK's snake_case dicts and the SDK's objects, and a whole
``GenerateContentResponse`` (its first candidate's content, with its finish reason).
A ``thoughtSignature`` on a part that is not a thought (Gemini signs function calls and text
too) is kept in the message's ``metadata["gemini"]["signatures"]`` and written back on that part;
a function response that is not ``{"output"}`` / ``{"error"}`` text is kept in
``metadata["gemini"]["response"]`` and written back while the result's text is its JSON.

What the format cannot carry, left out with a :class:`ConversionWarning`: ``reasoning_content``,
``name`` on messages, thinking signatures that are not base64 (Gemini's are bytes), media given by a URL with no recognizable media type, media in tool
results, and a tool call's ``server_name`` / ``metadata``.

    >>> import agentmsg
    >>> agentmsg.to_gemini([agentmsg.system("Be brief"), agentmsg.user("Hi")])
    ({'parts': [{'text': 'Be brief'}]}, [{'role': 'user', 'parts': [{'text': 'Hi'}]}])
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, AsyncIterable, Callable, Dict, Iterable, List, Optional, Tuple, Union, cast

from .._checks import check_calls, describe, require, require_dict, type_name
from ..errors import ConversionError, Losses, MessageTypeError
from ..model.arguments import call_extras_lost, call_place, json_object, json_output_copy, json_text
from ..model.blocks import (
    SERVER_BLOCKS, AudioBlock, Base64Source, Block, DocumentBlock, ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock,
    ToolUseBlock, URLSource, VideoBlock,
)
from ..model.message import ASSISTANT_ROLE, TOOL_ROLE, Message, metadata_view
from ..readers import check_messages
from ..readers._fields import build, check_dicts, own_namespace
from ._order import settle_tool_pairs, split_system_and_merge_turns
from .stream_items import async_items, stream_object, sync_items

if TYPE_CHECKING:
    from ..options import OrphanPolicy

__all__ = ["to_gemini", "from_gemini", "from_gemini_stream", "afrom_gemini_stream"]

_MEDIA: Dict[str, Callable[[Any], Block]] = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}
# the SDK's snake_case field names -> the REST names this module reads
_CAMEL = {"inline_data": "inlineData", "file_data": "fileData", "function_call": "functionCall",
          "function_response": "functionResponse", "thought_signature": "thoughtSignature",
          "mime_type": "mimeType", "file_uri": "fileUri", "system_instruction": "systemInstruction",
          "finish_reason": "finishReason", "usage_metadata": "usageMetadata", "model_version": "modelVersion",
          "response_id": "responseId"}
_PART_KINDS = ("text", "inlineData", "fileData", "functionCall", "functionResponse")


# -- writing --------------------------------------------------------------------------------------


def to_gemini(messages: Iterable[Message], *, function_call_ids: bool = True,
              ) -> Tuple[Optional[Dict[str, Any]], List[Dict[str, Any]]]:
    """Converts messages to ``(system_instruction, contents)`` for ``client.models.generate_content``
    (``contents=``, and ``config={"system_instruction": ...}``; None when there is no system text).

    ``function_call_ids``: write each call's ``id`` on its ``functionCall`` and ``functionResponse``
    (the default: the Gemini API takes them, and they pair parallel calls of one function). Give
    False for endpoints that refuse the field (some Vertex AI and OpenAI-compatible Gemini
    gateways answer 400 "Unknown name \"id\""): calls and responses then pair by name and order,
    as Gemini's own did before ids.

    >>> call = ToolUseBlock("c1", "calc", {"a": 1})
    >>> _, contents = to_gemini([Message.user("Add"), Message.assistant(tool_calls=[call]),
    ...                          Message.tool("2", tool_id="c1", name="calc")])
    >>> contents[1:]
    [{'role': 'model', 'parts': [{'functionCall': {'id': 'c1', 'name': 'calc', 'args': {'a': 1}}}]}, {'role': 'user', 'parts': [{'functionResponse': {'id': 'c1', 'name': 'calc', 'response': {'output': '2'}}}]}]
    """
    if function_call_ids is not True and function_call_ids is not False:
        raise MessageTypeError(f"function_call_ids must be a bool, not {type_name(function_call_ids)}")
    items = check_messages(messages)
    losses = Losses("to_gemini")
    call_names: Dict[str, str] = {}
    system, turns, _ = split_system_and_merge_turns(
        items, "to_gemini", losses, lambda text: {"text": text},
        lambda message, index: _parts(message, index, losses, call_names, function_call_ids),
    )
    if losses.found:
        losses.warn()
    contents = [{"role": turn["role"], "parts": turn["content"]} for turn in turns]
    return ({"parts": system} if system else None), contents


def _parts(message: Message, index: int, losses: Losses, call_names: Dict[str, str], ids: bool,
           ) -> Tuple[str, List[Dict[str, Any]]]:
    if message.reasoning_content is not None:
        losses.add("reasoning_content", index)
    kept = own_namespace(metadata_view(message), "gemini")
    if message.role is TOOL_ROLE:
        return "user", [_response_part(message, index, losses, call_names, kept, ids)]
    if message.name is not None:
        losses.add("name on messages", index)
    signatures = _signatures(kept, index)
    parts: List[Dict[str, Any]] = []
    block: Any
    for position, block in enumerate(message.content):
        kind = type(block)
        if kind is TextBlock:
            if not block.text:
                continue
            part: Optional[Dict[str, Any]] = {"text": block.text}
        elif kind is ThinkingBlock:
            part = {"text": block.thinking, "thought": True}
            if block.signature is not None and _is_base64(block.signature):
                part["thoughtSignature"] = block.signature
            elif block.signature is not None:
                losses.add("thinking signatures that are not base64 (Gemini's are bytes)", index)
        elif kind is ToolUseBlock:
            if call_extras_lost(block):
                losses.add("a tool call's server_name or metadata", index)
            call_names[block.id] = block.name
            call: Dict[str, Any] = {"id": block.id} if block.id and ids else {}
            call.update(name=block.name, args=json_output_copy(block.input, call_place(index, block, "input")))
            part = {"functionCall": call}
        elif kind in SERVER_BLOCKS:
            losses.add(f"{block.type} blocks (tools another provider ran)", index)
            part = None
        else:
            part = _media_part(block, index, losses)
        if part is None:
            continue
        if position in signatures:
            part["thoughtSignature"] = signatures[position]
        parts.append(part)
    return ("model" if message.role is ASSISTANT_ROLE else "user"), parts


def _is_base64(text: str) -> bool:
    """Base64 in either alphabet, as protobuf's JSON reads bytes (Google's placeholder
    signature for calls Gemini did not sign, ``skip_thought_signature_validator``, is URL-safe)."""
    for altchars in (None, b"-_"):
        try:
            base64.b64decode(text, altchars, validate=True)
        except (binascii.Error, ValueError):
            continue
        return True
    return False


def _signatures(kept: Mapping[str, Any], index: int) -> Dict[int, str]:
    """The kept signatures of parts that are not thoughts, by block position."""
    found = kept.get("signatures")
    if found is None:
        return {}
    where = f"messages[{index}].metadata['gemini']['signatures']"
    if not isinstance(found, list):
        raise MessageTypeError(f"{where} must be a list, not {type_name(found)}")
    out = {}
    for j, entry in enumerate(found):
        if not (isinstance(entry, dict) and type(entry.get("block")) is int and isinstance(entry.get("signature"), str)
                and _is_base64(entry["signature"])):
            raise MessageTypeError(f"{where}[{j}] must be a {{'block': int, 'signature': base64 str}} dict")
        out[entry["block"]] = entry["signature"]
    return out


def _media_part(block: Any, index: int, losses: Losses) -> Optional[Dict[str, Any]]:
    source = block.source
    if type(block) is DocumentBlock and (block.name is not None or block.metadata):
        losses.add("a document's name or metadata", index)
    if type(source) is Base64Source:
        return {"inlineData": {"mimeType": source.media_type, "data": source.data}}
    media_type = mimetypes.guess_type(source.url)[0]
    kind = media_type.partition("/")[0] if media_type else None
    if kind is None or (kind != block.type if kind in _MEDIA else type(block) is not DocumentBlock):
        losses.add(f"{block.type} given by a URL with no recognizable media type", index)
        return None
    return {"fileData": {"mimeType": media_type, "fileUri": source.url}}


def _response_part(message: Message, index: int, losses: Losses, call_names: Dict[str, str],
                   kept: Mapping[str, Any], ids: bool) -> Dict[str, Any]:
    result = cast(ToolResultBlock, message.content[0])
    name = message.name or call_names.get(message.tool_id or "")
    if not name:
        raise ConversionError(f"messages[{index}].name: Gemini needs the name of the function a tool message "
                              "answers (give the message a name, or its call's id)")
    if any(type(block) is not TextBlock for block in result.output):
        losses.add("media in tool results", index)
    text = result.text
    response = kept.get("response")
    if not (isinstance(response, dict) and json_object(text) is not None
            and json_text(response, f"messages[{index}].metadata['gemini']['response']") == text):
        response = {"error" if result.is_error else "output": text}
    answer: Dict[str, Any] = {"id": message.tool_id} if message.tool_id and ids else {}
    answer.update(name=name, response=json_output_copy(response, f"messages[{index}] response"))
    return {"functionResponse": answer}


# -- reading --------------------------------------------------------------------------------------


def from_gemini(contents: Any, system_instruction: Any = None, *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """Reads Gemini ``contents`` (and the ``system_instruction``: a str, a ``Content`` or its
    dict) back into messages; turns may be dicts (REST camelCase or the SDK's snake_case) or the
    SDK's ``Content`` objects. A whole ``GenerateContentResponse`` stands for its first
    candidate's content. ``on_orphan``: ``"raise"``, ``"repair"`` or ``"keep"``.

    >>> [m.text for m in from_gemini([{"role": "user", "parts": [{"text": "Hi"}]}], "Be brief")]
    ['Be brief', 'Hi']
    """
    out: List[Message] = []
    if system_instruction is not None:
        out.append(_system(system_instruction))
    data = gemini_data(contents)
    fields: Dict[str, Any] = {}
    if isinstance(data, Mapping) and "candidates" in data:
        data, fields = _reply(data)
        contents = [data]
    for index, turn in enumerate(check_dicts(contents, "contents")):
        out += _turn(gemini_data(turn), f"contents[{index}]", fields)
    return settle_tool_pairs(out, on_orphan, "from_gemini")


def gemini_data(value: Any) -> Any:
    """An SDK object as its REST dict (camelCase, base64 strings); a dict's keys in camelCase."""
    dump = getattr(value, "model_dump", None)
    if dump is not None and not isinstance(value, Mapping):
        return dump(exclude_none=True, mode="json", by_alias=True)
    if type(value) is dict and any(key in _CAMEL for key in value):
        return {_CAMEL.get(key, key): item for key, item in value.items()}
    return value


def _reply(data: Mapping[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    candidates = data.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        raise ConversionError("contents.candidates: a response with no candidates has no message")
    candidate = gemini_data(require_dict(gemini_data(candidates[0]), "contents.candidates[0]"))
    content = require(candidate, "content", "contents.candidates[0]")
    reason = candidate.get("finishReason")
    extra = {key: data[key] for key in ("usageMetadata", "modelVersion", "responseId") if key in data}
    fields: Dict[str, Any] = {"finish_reason": reason} if isinstance(reason, str) else {}
    if extra:
        fields["metadata"] = {"gemini": extra}
    return content, fields


def _system(system: Any) -> Message:
    if isinstance(system, str):
        return build("system_instruction", lambda: Message.system(system))
    data = require_dict(gemini_data(system), "system_instruction")
    blocks = []
    for j, part in enumerate(check_dicts(require(data, "parts", "system_instruction"), "system_instruction.parts")):
        where = f"system_instruction.parts[{j}]"
        text = require(require_dict(gemini_data(part), where), "text", where)
        blocks.append(build(where, lambda: TextBlock(text)))
    return build("system_instruction", lambda: Message.system(blocks))


def _turn(turn: Any, where: str, fields: Dict[str, Any]) -> List[Message]:
    turn = require_dict(turn, where)
    role = turn.get("role", "user")
    if role not in ("user", "model", "function"):
        raise ConversionError(f"{where}.role: unknown role {describe(role)}; valid: user, model, function")
    out: List[Message] = []
    blocks: List[Block] = []
    signatures: List[Dict[str, Any]] = []

    def flush() -> None:
        if not blocks:
            return
        metadata = dict(fields.get("metadata") or {})
        if signatures:
            metadata["gemini"] = {**metadata.get("gemini", {}), "signatures": list(signatures)}
        extra = {key: value for key, value in fields.items() if key != "metadata"}
        taken = list(blocks)
        out.append(build(where, lambda: Message("assistant" if role == "model" else "user", taken,
                                                metadata=metadata, **extra)))
        blocks.clear()
        signatures.clear()

    for j, part in enumerate(check_dicts(require(turn, "parts", where), f"{where}.parts")):
        pwhere = f"{where}.parts[{j}]"
        part = require_dict(gemini_data(part), pwhere)
        signature = part.get("thoughtSignature")
        if signature is not None and not isinstance(signature, str):
            raise MessageTypeError(f"{pwhere}.thoughtSignature must be a str, not {type_name(signature)}")
        if "functionResponse" in part:
            flush()
            out.append(_response(part["functionResponse"], f"{pwhere}.functionResponse"))
            continue
        block = _block(part, pwhere)
        if signature is not None and type(block) is not ThinkingBlock:
            signatures.append({"block": len(blocks), "signature": signature})
        blocks.append(block)
    flush()
    return out


def _block(part: Mapping[str, Any], where: str) -> Block:
    kind = next((key for key in _PART_KINDS if key in part), None)
    if kind is None:
        raise ConversionError(f"{where}: unknown part {describe(sorted(map(str, part))[:6])}; valid: "
                              f"{', '.join(_PART_KINDS)}")
    if kind == "text":
        text = part["text"]
        if part.get("thought") is True:
            signature = part.get("thoughtSignature")
            return build(where, lambda: ThinkingBlock(text, signature))
        return build(where, lambda: TextBlock(text))
    if kind == "functionCall":
        call = require_dict(gemini_data(part["functionCall"]), f"{where}.functionCall")
        name = require(call, "name", f"{where}.functionCall")
        arguments = call.get("args") or {}
        arguments = json_output_copy(require_dict(arguments, f"{where}.functionCall.args"), f"{where}.functionCall.args")
        call_id = call.get("id") or ""
        return build(where, lambda: ToolUseBlock(call_id, name, arguments))
    media = require_dict(gemini_data(part[kind]), f"{where}.{kind}")
    media_type = require(media, "mimeType", f"{where}.{kind}")
    if not isinstance(media_type, str):
        raise MessageTypeError(f"{where}.{kind}.mimeType must be a str, not {type_name(media_type)}")
    block_class = _MEDIA.get(media_type.partition("/")[0], DocumentBlock)  # a PDF, a text file...
    if kind == "inlineData":
        data = require(media, "data", f"{where}.{kind}")
        return build(where, lambda: block_class(Base64Source(media_type, data)))
    uri = require(media, "fileUri", f"{where}.{kind}")
    return build(where, lambda: block_class(URLSource(uri)))


def _response(data: Any, where: str) -> Message:
    answer = require_dict(gemini_data(data), where)
    name = require(answer, "name", where)
    call_id = answer.get("id")
    response = require_dict(answer.get("response") or {}, f"{where}.response")
    is_error = False
    metadata: Dict[str, Any] = {}
    if list(response) == ["output"] and isinstance(response["output"], str):
        text = response["output"]
    elif list(response) == ["error"] and isinstance(response["error"], str):
        text, is_error = response["error"], True
    else:
        text = json_text(response, f"{where}.response")
        metadata = {"gemini": {"response": dict(response)}}
    return build(where, lambda: Message.tool(text, tool_id=call_id or None, name=name, is_error=is_error,
                                             metadata=metadata))


# -- streams ----------------------------------------------------------------------------------------


def from_gemini_stream(chunks: Iterable[Any], *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """The messages a Gemini stream (``client.models.generate_content_stream``) gives: the
    first candidate's parts of every chunk joined (consecutive text of the same kind, thought or
    not, into one part; a ``thoughtSignature`` on the part it came with), with the last finish
    reason and usage; read as :func:`from_gemini` reads the whole response. ``chunks`` are
    ``GenerateContentResponse`` objects or their dicts.

    >>> chunks = [{"candidates": [{"content": {"role": "model", "parts": [{"text": "It is "}]}}]},
    ...           {"candidates": [{"content": {"role": "model", "parts": [{"text": "42."}]}, "finishReason": "STOP"}]}]
    >>> [(m.text, m.finish_reason) for m in from_gemini_stream(chunks)]
    [('It is 42.', 'STOP')]
    """
    reply = _GeminiReply()
    for index, chunk in enumerate(sync_items(chunks, "chunks", "afrom_gemini_stream")):
        reply.add(chunk, index)
    return reply.messages(on_orphan)


async def afrom_gemini_stream(chunks: Union[AsyncIterable[Any], Iterable[Any]], *,
                              on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """:func:`from_gemini_stream` over an async iterable (``client.aio``'s stream), or a sync one.

    >>> import asyncio
    >>> async def stream():
    ...     yield {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}}]}
    >>> [m.text for m in asyncio.run(afrom_gemini_stream(stream()))]
    ['Hi']
    """
    reply = _GeminiReply()
    index = 0
    async for chunk in async_items(chunks, "chunks"):
        reply.add(chunk, index)
        index += 1
    return reply.messages(on_orphan)


class _GeminiReply:
    """The parts of the first candidate of a stream, joined as they arrive."""

    def __init__(self) -> None:
        self.parts: List[Dict[str, Any]] = []
        self.texts: List[List[str]] = []  # the text fragments of each part (joined at the end)
        self.response: Dict[str, Any] = {}
        self.candidate: Dict[str, Any] = {}
        self.seen = False

    def add(self, chunk: Any, index: int) -> None:
        where = f"chunks[{index}]"
        data = require_dict(gemini_data(stream_object(chunk, where)), where)
        self.seen = True
        for key in ("usageMetadata", "modelVersion", "responseId"):
            if key in data:
                self.response[key] = data[key]
        candidates = data.get("candidates")
        if not candidates:
            return
        if not isinstance(candidates, list):
            raise MessageTypeError(f"{where}.candidates must be a list, not {type_name(candidates)}")
        candidate = require_dict(gemini_data(candidates[0]), f"{where}.candidates[0]")
        if candidate.get("finishReason") is not None:
            self.candidate["finishReason"] = candidate["finishReason"]
        content = candidate.get("content")
        if content is None:
            return
        content = require_dict(gemini_data(content), f"{where}.candidates[0].content")
        for j, part in enumerate(check_dicts(content.get("parts") or [], f"{where}.candidates[0].content.parts")):
            self._add_part(dict(require_dict(gemini_data(part), f"{where}.candidates[0].content.parts[{j}]")),
                           f"{where}.candidates[0].content.parts[{j}]")

    def _add_part(self, part: Dict[str, Any], where: str) -> None:
        text = part.get("text")
        if text is not None and not isinstance(text, str):
            raise MessageTypeError(f"{where}.text must be a str, not {type_name(text)}")
        last = self.parts[-1] if self.parts else None
        if (text is not None and last is not None and "text" in last and "thoughtSignature" not in last
                and bool(last.get("thought")) == bool(part.get("thought")) and set(part) <= {"text", "thought",
                                                                                          "thoughtSignature"}):
            self.texts[-1].append(text)
            if "thoughtSignature" in part:
                last["thoughtSignature"] = part["thoughtSignature"]
            return
        self.parts.append(part)
        self.texts.append([text] if text is not None else [])

    def messages(self, on_orphan: OrphanPolicy) -> List[Message]:
        if not self.seen:
            raise ConversionError("chunks: the stream held no chunk")
        parts = []
        for part, fragments in zip(self.parts, self.texts):
            if fragments:
                part = {**part, "text": "".join(fragments)}
            parts.append(part)
        if not parts:
            raise ConversionError("chunks: the streamed reply has no parts")
        candidate = {**self.candidate, "content": {"role": "model", "parts": parts}}
        return from_gemini({**self.response, "candidates": [candidate]}, on_orphan=on_orphan)


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
