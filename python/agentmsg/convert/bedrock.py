"""Amazon Bedrock Converse API: ``(system, messages)`` both ways.

Blocks: ``text``, ``image`` / ``video`` / ``audio`` (raw ``bytes``, as boto3 wants them),
``toolUse``, ``toolResult`` (with ``status``), ``reasoningContent`` (text and signature) and
``cachePoint`` markers placed where the caller asks. Tool results go in user turns and
consecutive same-role turns are merged, as the API requires.

What the format cannot carry, left out with a :class:`ConversionWarning`: media given by URL
(Converse takes bytes or S3 locations), media types Converse has no format for,
``reasoning_content``, ``name`` on non-tool messages, and a tool call's ``server_name`` /
``metadata``. A mid-conversation system message moves to the system prompt (with a warning).
Reading back, ``json`` tool-result items become text and redacted reasoning is kept in
``metadata["bedrock"]`` (and written back by :func:`to_bedrock`).

    >>> import agentmsg
    >>> agentmsg.to_bedrock([agentmsg.system("Be brief"), agentmsg.user("Hi")])
    ([{'text': 'Be brief'}], [{'role': 'user', 'content': [{'text': 'Hi'}]}])
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple, cast

from .._checks import check_calls, objects_in, require, require_choice, require_dict, shown_keys
from ..errors import ConversionError, Losses, MessageTypeError
from ..model.arguments import call_extras_lost, call_place, json_output_copy, json_text
from ..model.blocks import (
    SERVER_BLOCKS, AudioBlock, Base64Source, Block, DocumentBlock, ImageBlock, TextBlock,
    ThinkingBlock, ToolResultBlock, ToolUseBlock, VideoBlock,
)
from ..model.message import TOOL_ROLE, Message, metadata_view
from ..readers import check_messages
from ..readers._fields import build, check_dicts, own_namespace, require_str_key
from ._order import settle_tool_pairs, split_system_and_merge_turns
from .cache import CachePlace, check_cache_places

if TYPE_CHECKING:
    from ..options import OrphanPolicy

__all__ = ["to_bedrock", "from_bedrock"]

# media type <-> Converse format, one canonical media type per format so round trips are exact
_FORMATS = {
    "image": {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"},
    "video": {"video/mp4": "mp4", "video/webm": "webm", "video/quicktime": "mov",
              "video/x-matroska": "mkv", "video/x-flv": "flv", "video/mpeg": "mpeg",
              "video/x-ms-wmv": "wmv", "video/3gpp": "three_gp"},
    "audio": {"audio/mpeg": "mp3", "audio/wav": "wav", "audio/ogg": "ogg", "audio/flac": "flac",
              "audio/aac": "aac", "audio/opus": "opus", "audio/webm": "webm", "audio/mp4": "m4a"},
    # Converse's nine document formats (its own list, whatever other formats name files).
    "document": {"application/pdf": "pdf", "text/csv": "csv", "application/msword": "doc",
                 "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
                 "application/vnd.ms-excel": "xls",
                 "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
                 "text/html": "html", "text/plain": "txt", "text/markdown": "md"},
}
_MEDIA_TYPES = {kind: {fmt: mt for mt, fmt in table.items()} for kind, table in _FORMATS.items()}
_MEDIA_CLASSES = {"image": ImageBlock, "video": VideoBlock, "audio": AudioBlock, "document": DocumentBlock}
# Converse's rule for a document's name: letters, digits, single spaces, hyphens, parentheses, brackets.
_NAME_REFUSED = re.compile(r"[^A-Za-z0-9 \-()\[\]]|(?<= ) ")
CACHE_POINT = {"cachePoint": {"type": "default"}}


def to_bedrock(
    messages: Iterable[Message], *, cache: Sequence[CachePlace] = ()
) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """Converts messages to ``(system, messages)`` for ``bedrock_runtime.converse``.

    ``cache`` places ``{"cachePoint": {"type": "default"}}`` markers: ``"system"`` (after the
    system blocks), ``"last"`` (after the last block), or a message index (after the blocks made
    from that message). ``system`` is an empty list when there is no system message.

    >>> s, m = to_bedrock([Message.system("Be brief"), Message.user("Hi")], cache=["system"])
    >>> s
    [{'text': 'Be brief'}, {'cachePoint': {'type': 'default'}}]
    """
    items = check_messages(messages)
    places = check_cache_places(cache, len(items))
    losses = Losses("to_bedrock")
    system, turns, ends = split_system_and_merge_turns(
        items, "to_bedrock", losses, lambda text: {"text": text},
        lambda message, index: _blocks_to_bedrock(message, index, losses),
    )
    if losses.found:
        losses.warn()
    _place_cache_points(places, system, turns, ends, len(items))
    return system, turns


def _place_cache_points(
    places: List[CachePlace], system: List[Dict[str, Any]], turns: List[Dict[str, Any]],
    ends: Dict[int, Tuple[int, int]], count: int,
) -> None:
    spots = set()
    for place in places:
        if place == "system":
            spot = (-1, len(system)) if system else None
        elif place == "last":
            spot = (len(turns) - 1, len(turns[-1]["content"])) if turns else None
        else:
            spot = ends.get(place % count)
        if spot is None:
            raise ConversionError(f"cache: {place!r} names no block (nothing was converted there)")
        spots.add(spot)
    # insert from the back so earlier positions stay valid
    for turn, position in sorted(spots, reverse=True):
        target = system if turn == -1 else turns[turn]["content"]
        target.insert(position, dict(CACHE_POINT, cachePoint=dict(CACHE_POINT["cachePoint"])))


def _media(block: Any, index: int, losses: Losses) -> Optional[Dict[str, Any]]:
    kind = block.type
    source = block.source
    if type(source) is not Base64Source:
        losses.add(f"{kind} given by URL", index)
        return None
    fmt = _FORMATS[kind].get(source.media_type)
    if fmt is None:
        losses.add(f"{kind} of media types Converse has no format for", index)
        return None
    try:
        data = base64.b64decode(source.data, validate=True)
    except (binascii.Error, ValueError):
        raise ConversionError(f"messages[{index}]: {kind} data is not valid base64") from None
    if kind != "document":
        return {kind: {"format": fmt, "source": {"bytes": data}}}
    if block.metadata:
        losses.add("a document's metadata", index)
    # The format says the extension: a name without it (made up as "document" if there is none)
    # is the name; other characters Converse refuses become hyphens, which is said.
    given = block.name if block.name is not None else "document"
    stem = given[: -len(fmt) - 1] if given.lower().endswith("." + fmt) and len(given) > len(fmt) + 1 else given
    name = _NAME_REFUSED.sub("-", stem.replace("\t", " ").replace("\n", " ")).strip(" ") or "document"
    if name != stem:
        losses.add("the exact document names (characters Converse refuses became hyphens)", index)
    return {kind: {"format": fmt, "name": name, "source": {"bytes": data}}}


def _blocks_to_bedrock(message: Message, index: int, losses: Losses) -> Tuple[str, List[Dict[str, Any]]]:
    role = message.role
    block: Any  # dispatched on type(block), which mypy cannot follow through `kind`
    if message.reasoning_content is not None:
        losses.add("reasoning_content", index)
    if role is TOOL_ROLE:
        result = cast(ToolResultBlock, message.content[0])  # a tool message holds one result
        if not message.tool_id:
            raise ConversionError(
                f"messages[{index}].tool_id: Bedrock needs the id of the call a tool message answers"
            )
        output = []
        for block in result.output:
            if type(block) is TextBlock:
                output.append({"text": block.text})
            elif type(block) in (ImageBlock, VideoBlock, DocumentBlock):
                media = _media(block, index, losses)
                if media is not None:
                    output.append(media)
            else:
                losses.add(f"{block.type} blocks in tool results", index)
        return "user", [{"toolResult": {
            "toolUseId": message.tool_id,
            "content": output,
            "status": "error" if result.is_error else "success",
        }}]
    if message.name is not None:
        losses.add("name on non-tool messages", index)
    blocks: List[Dict[str, Any]] = []
    redacted = own_namespace(metadata_view(message), "bedrock").get("redacted_reasoning")
    if not isinstance(redacted, list):
        redacted = ()
    for data in redacted:  # kept by from_bedrock; goes back first, where reasoning belongs
        blocks.append({"reasoningContent": {"redactedContent": _redacted_bytes(data, index)}})
    for block in message.content:
        kind = type(block)
        if kind is TextBlock:
            if block.text:
                blocks.append({"text": block.text})
        elif kind is ThinkingBlock and not block.thinking and block.signature is None:
            continue  # empty: nothing to carry (from_bedrock's stand-in for redacted-only turns)
        elif kind is ToolUseBlock:
            if call_extras_lost(block):
                losses.add("a tool call's server_name or metadata", index)
            arguments = json_output_copy(block.input, call_place(index, block, "input"))
            blocks.append({"toolUse": {"toolUseId": block.id, "name": block.name, "input": arguments}})
        elif kind is ThinkingBlock:
            reasoning: Dict[str, Any] = {"text": block.thinking}
            if block.signature is not None:
                reasoning["signature"] = block.signature
            blocks.append({"reasoningContent": {"reasoningText": reasoning}})
        elif kind in SERVER_BLOCKS:
            losses.add(f"{block.type} blocks (tools another provider ran)", index)
        else:
            media = _media(block, index, losses)
            if media is not None:
                blocks.append(media)
    return role.value, blocks


def _redacted_bytes(data: Any, index: int) -> bytes:
    where = f"messages[{index}].metadata['bedrock']['redacted_reasoning']"
    if not isinstance(data, str):
        raise MessageTypeError(f"{where} must hold base64 str data, not {type(data).__name__}")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ConversionError(f"{where}: data is not valid base64") from None


def from_bedrock(system: Any, messages: Iterable[Any], *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """Reads Converse ``(system, messages)`` (e.g. a request, or history plus ``output.message``).

    ``cachePoint`` markers are request decoration and are skipped. ``on_orphan``: ``"raise"``,
    ``"repair"`` or ``"keep"``.

    >>> [m.text for m in from_bedrock([{"text": "Be brief"}], [{"role": "user", "content": [{"text": "Hi"}]}])]
    ['Be brief', 'Hi']
    """
    out: List[Message] = []
    texts = []
    for j, block in enumerate(check_dicts(system or [], "system")):
        block = require_dict(block, f"system[{j}]")
        if "text" in block:
            texts.append(TextBlock(require_str_key(block, "text", f"system[{j}]")))
        elif "cachePoint" not in block:
            raise ConversionError(f"system[{j}]: unknown system block {shown_keys(block)}; valid: text, cachePoint")
    if texts:
        out.append(Message.system(texts))
    call_names: Dict[str, str] = {}
    for index, turn in enumerate(check_dicts(messages, "messages")):
        where = f"messages[{index}]"
        turn = require_dict(turn, where)
        role = require_choice(require(turn, "role", where), ("user", "assistant"), f"{where}.role", "role")
        content = require(turn, "content", where)
        if not isinstance(content, (list, tuple)):
            raise MessageTypeError(f"{where}.content must be a list of blocks, not {type(content).__name__}")
        pending: List[Block] = []
        redacted: List[str] = []
        for j, block in enumerate(content):
            bwhere = f"{where}.content[{j}]"
            block = require_dict(block, bwhere)
            if "toolResult" in block:
                if pending:
                    out.append(_turn_message(role, pending, redacted, where))
                    pending, redacted = [], []
                out.append(_tool_result(block["toolResult"], f"{bwhere}.toolResult", call_names))
            elif "cachePoint" in block:
                continue
            elif "reasoningContent" in block and isinstance(block["reasoningContent"], Mapping) \
                    and "redactedContent" in block["reasoningContent"]:
                data = block["reasoningContent"]["redactedContent"]
                if isinstance(data, (bytes, bytearray)):
                    data = base64.b64encode(data).decode("ascii")
                elif not isinstance(data, str):  # a str is taken to be base64 already, as in JSON dumps
                    raise MessageTypeError(
                        f"{bwhere}.reasoningContent.redactedContent must be bytes, not {type(data).__name__}"
                    )
                redacted.append(data)
            else:
                parsed = _block_from_bedrock(block, bwhere)
                if type(parsed) is ToolUseBlock:
                    call_names[parsed.id] = parsed.name
                pending.append(parsed)
        if pending or redacted:
            out.append(_turn_message(role, pending, redacted, where))
    return settle_tool_pairs(out, on_orphan, "from_bedrock")


def _turn_message(role: str, blocks: List[Block], redacted: List[str], where: str) -> Message:
    metadata = {"bedrock": {"redacted_reasoning": redacted}} if redacted else {}
    if not blocks:
        blocks = [ThinkingBlock("")]  # a turn of only redacted reasoning still happened
    return build(where, lambda: Message(role, blocks, metadata=metadata))


def _tool_result(data: Any, where: str, call_names: Dict[str, str]) -> Message:
    data = require_dict(data, where)
    tool_id = require_str_key(data, "toolUseId", where)
    content = data.get("content", [])
    if not isinstance(content, (list, tuple)):
        raise MessageTypeError(f"{where}.content must be a list, not {type(content).__name__}")
    output = []
    for iwhere, item in objects_in(content, f"{where}.content"):
        if "json" in item:
            output.append(TextBlock(json_text(item["json"], f"{iwhere}.json")))
        else:
            output.append(_block_from_bedrock(item, iwhere, allowed=("text", "image", "video", "document")))
    status = require_choice(data.get("status", "success"), ("success", "error"), f"{where}.status", "status")
    return build(where, lambda: Message.tool(
        output, tool_id=tool_id, name=call_names.get(tool_id), is_error=status == "error"
    ))


_BLOCK_KINDS = ("text", "image", "video", "audio", "document", "toolUse", "reasoningContent")


def _block_from_bedrock(block: Mapping[str, Any], where: str, allowed: Tuple[str, ...] = _BLOCK_KINDS) -> Any:
    kind = next((k for k in allowed if k in block), None)
    if kind is None:
        valid = ", ".join(allowed + (("toolResult", "cachePoint") if allowed is _BLOCK_KINDS else ("json",)))
        raise ConversionError(f"{where}: unknown block {shown_keys(block)}; valid: {valid}")
    if kind == "text":
        text = block["text"]
        return build(where, lambda: TextBlock(text))
    if kind == "toolUse":
        use = require_dict(block["toolUse"], f"{where}.toolUse")
        call_id, name, arguments = (require(use, k, f"{where}.toolUse") for k in ("toolUseId", "name", "input"))
        arguments = json_output_copy(require_dict(arguments, f"{where}.toolUse.input"), f"{where}.toolUse.input")
        return build(where, lambda: ToolUseBlock(call_id, name, arguments))
    if kind == "reasoningContent":
        reasoning = require_dict(block["reasoningContent"], f"{where}.reasoningContent")
        text_part = require_dict(require(reasoning, "reasoningText", f"{where}.reasoningContent"),
                                 f"{where}.reasoningContent.reasoningText")
        text = require(text_part, "text", f"{where}.reasoningContent.reasoningText")
        signature = text_part.get("signature")
        return build(where, lambda: ThinkingBlock(text, signature))
    media = require_dict(block[kind], f"{where}.{kind}")
    fmt = require_choice(require(media, "format", f"{where}.{kind}"), tuple(_MEDIA_TYPES[kind]),
                         f"{where}.{kind}.format", "format")
    media_type = _MEDIA_TYPES[kind][fmt]
    source = require_dict(require(media, "source", f"{where}.{kind}"), f"{where}.{kind}.source")
    if "bytes" not in source:
        raise ConversionError(f"{where}.{kind}.source: only 'bytes' sources can be read (not S3 locations)")
    data = source["bytes"]
    if isinstance(data, (bytes, bytearray)):
        data = base64.b64encode(data).decode("ascii")
    elif not isinstance(data, str):  # a str is taken to be base64 already, as in JSON dumps
        raise MessageTypeError(f"{where}.{kind}.source.bytes must be bytes, not {type(data).__name__}")
    if kind == "document":
        name = require(media, "name", f"{where}.document")
        return build(where, lambda: DocumentBlock(Base64Source(media_type, data), name))
    return build(where, lambda: _MEDIA_CLASSES[kind](Base64Source(media_type, data)))


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
