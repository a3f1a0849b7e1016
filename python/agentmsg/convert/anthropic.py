"""Anthropic Messages API: ``(system, messages)`` both ways, with cache-control placement.

System text goes in the separate ``system`` argument; tool results become ``tool_result`` blocks
in a user turn; consecutive turns of the same role are merged (the API wants them alternating);
thinking blocks keep their signature; images go as base64 or URL sources. The tools Anthropic
runs itself are server blocks both ways: ``server_tool_use`` (web search, web fetch, code
execution...) and the MCP connector's ``mcp_tool_use`` (``server_name`` kept) are
:class:`ServerToolUseBlock`; every ``*_tool_result`` block of theirs (``web_search_tool_result``,
``code_execution_tool_result``, ``mcp_tool_result``...) a :class:`ServerToolResultBlock`, its
``content`` as sent and its ``type`` in ``metadata``. The beta ``mcp_tool_listing`` block (the tools
the connector fetched from an MCP server) reads as the Responses API's ``mcp_list_tools`` item
does, an ``mcp_list_tools`` call on that server and its ``{"tools": [...]}`` result, and is
written back as one block. Server blocks another provider ran are left out, with a warning
(their ids and results mean nothing to Anthropic).

What the format cannot carry, left out with a :class:`ConversionWarning`: thinking without a
signature and ``reasoning_content`` (the API rejects unsigned thinking), audio and video, images
of a media type other than JPEG, PNG, GIF or WebP, ``name`` on non-tool messages (use
:func:`format_multi_agent`), a tool result name that differs from its call's, and a tool call's
``server_name`` / ``metadata``. Redacted thinking read by :func:`from_anthropic` is kept in
``metadata["anthropic"]["redacted_thinking"]`` and written back first in its turn. A system
message in the middle of the conversation moves to the
system prompt (with a warning). Ids, timestamps, metadata and finish state are not sent.

    >>> import agentmsg
    >>> system, messages = agentmsg.to_anthropic([agentmsg.system("Be brief"), agentmsg.user("Hi")])
    >>> system, messages
    ([{'type': 'text', 'text': 'Be brief'}], [{'role': 'user', 'content': [{'type': 'text', 'text': 'Hi'}]}])
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple, cast

from .. import _core
from .._checks import check_calls, json_copy, json_copy_dict
from ..errors import AgentMsgError, ConversionError, Losses, MessageTypeError
from ..model.arguments import call_extras_lost, call_place, json_object, json_output_copy
from ..model.blocks import (
    DocumentBlock, ImageBlock, ServerToolResultBlock, ServerToolUseBlock, TextBlock, ThinkingBlock, ToolResultBlock,
    ToolUseBlock, URLSource,
)
from ..model.message import ASSISTANT_ROLE, ROLE_NAMES, TOOL_ROLE, Message, metadata_view
from ..readers import check_messages
from ..readers._fields import check_dicts, own_namespace
from ..readers.anthropic import messages_from_anthropic, system_from_anthropic
from ._order import ORPHAN_POLICIES, settle_tool_pairs, split_system_and_merge_turns
from .cache import CachePlace, check_cache_places
from .openai import from_openai

if TYPE_CHECKING:
    from .._sdk_types import AnthropicSystemAndMessages
    from ..options import OrphanPolicy

__all__ = ["to_anthropic", "from_anthropic", "openai_to_anthropic"]

IMAGE_MEDIA_TYPES = frozenset(("image/jpeg", "image/png", "image/gif", "image/webp"))
EPHEMERAL = {"type": "ephemeral"}


def to_anthropic(
    messages: Iterable[Message], *, cache: Sequence[CachePlace] = ()
) -> AnthropicSystemAndMessages:
    """Converts messages to ``(system, messages)`` for ``client.messages.create``.

    ``cache`` lists where to put ``cache_control: {"type": "ephemeral"}``: ``"system"`` (the last
    system block), ``"last"`` (the last block of the last turn), or an index into ``messages``
    (the last block made from that message; negative counts from the end). At most four.
    ``system`` is an empty list when there is no system message: omit the argument then.

    >>> s, m = to_anthropic([Message.system("Be brief"), Message.user("Hi")], cache=["system", "last"])
    >>> s[-1]["cache_control"], m[-1]["content"][-1]["cache_control"]
    ({'type': 'ephemeral'}, {'type': 'ephemeral'})
    """
    items = check_messages(messages)
    places = check_cache_places(cache, len(items))
    losses = Losses("to_anthropic")
    call_names: Dict[str, str] = {}
    system, turns, ends = split_system_and_merge_turns(
        items, "to_anthropic", losses, lambda text: {"type": "text", "text": text},
        lambda message, index: _blocks_to_anthropic(message, index, losses, call_names),
    )
    if losses.found:
        losses.warn()
    _place_cache(places, system, turns, ends, len(items))
    return cast("AnthropicSystemAndMessages", (system, turns))  # the SDK's TypedDicts


def _place_cache(
    places: List[CachePlace], system: List[Dict[str, Any]], turns: List[Dict[str, Any]],
    ends: Dict[int, Tuple[int, int]], count: int,
) -> None:
    for place in places:
        if place == "system":
            target = system[-1] if system else None
        elif place == "last":
            target = turns[-1]["content"][-1] if turns else None
        else:
            spot = ends.get(place % count)
            if spot is None:
                target = None
            else:
                turn, blocks = spot
                target = (system if turn == -1 else turns[turn]["content"])[blocks - 1]
        if target is None:
            raise ConversionError(f"cache: {place!r} names no block (nothing was converted there)")
        target["cache_control"] = dict(EPHEMERAL)


def _image(block: ImageBlock) -> Optional[Dict[str, Any]]:
    source = block.source
    if type(source) is URLSource:
        return {"type": "image", "source": {"type": "url", "url": source.url}}
    if source.media_type not in IMAGE_MEDIA_TYPES:
        return None
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": source.media_type, "data": source.data},
    }


_LOST = {ImageBlock: "images of that media type", DocumentBlock: "documents other than PDFs and plain text, "
         "or in assistant turns"}


#: A document block's own fields: its metadata cannot stand in for them.
_DOCUMENT_OWN = ("type", "source", "title")


def _document(block: DocumentBlock, index: int, losses: Losses) -> Optional[Dict[str, Any]]:
    """A PDF (base64 or URL) or a plain-text document as a ``document`` block, its metadata
    (``context``, ``citations``) beside its own fields; None for another media type, or text
    that is not UTF-8."""
    source = block.source
    data: Dict[str, Any]
    if type(source) is URLSource:
        data = {"type": "document", "source": {"type": "url", "url": source.url}}
    elif source.media_type == "application/pdf":
        data = {"type": "document", "source": {"type": "base64", "media_type": source.media_type,
                                               "data": source.data}}
    elif source.media_type == "text/plain":
        try:
            text = base64.b64decode(source.data, validate=True).decode("utf-8")
        except ValueError:
            return None
        data = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    else:
        return None
    if block.name is not None:
        data["title"] = block.name
    extra = json_copy_dict(block.metadata, "DocumentBlock.metadata")
    if any(key in extra for key in _DOCUMENT_OWN):
        losses.add("document metadata named type, source or title", index)
    return {**{k: v for k, v in extra.items() if k not in _DOCUMENT_OWN}, **data}


def _blocks_to_anthropic(
    message: Message, index: int, losses: Losses, call_names: Dict[str, str]
) -> Tuple[str, List[Dict[str, Any]]]:
    role = message.role
    block: Any  # dispatched on type(block), which mypy cannot follow through `kind`
    if role is TOOL_ROLE:
        result = cast(ToolResultBlock, message.content[0])  # a tool message holds one result
        if not message.tool_id:
            raise ConversionError(
                f"messages[{index}].tool_id: Anthropic needs the id of the call a tool message answers"
            )
        if message.name is not None and call_names.get(message.tool_id) != message.name:
            losses.add("a tool result name that differs from its call's", index)
        output: List[Dict[str, Any]] = []
        for block in result.output:
            if type(block) is TextBlock:
                if block.text:
                    output.append({"type": "text", "text": block.text})
            elif type(block) is ImageBlock and (image := _image(block)) is not None:
                output.append(image)
            elif type(block) is DocumentBlock and (document := _document(block, index, losses)) is not None:
                output.append(document)
            else:
                losses.add(f"{block.type} blocks in tool results", index)
        data: Dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_id, "content": output}
        if result.is_error:
            data["is_error"] = True
        if message.reasoning_content is not None:
            losses.add("reasoning_content", index)
        return "user", [data]
    if message.name is not None:
        losses.add("name on non-tool messages", index)
    if message.reasoning_content is not None:
        losses.add("reasoning_content", index)
    content = message.content
    redacted = own_namespace(metadata_view(message), "anthropic").get("redacted_thinking")
    if not isinstance(redacted, list):
        redacted = None
    if not redacted and len(content) == 1 and type(content[0]) is TextBlock:  # the common case
        text = content[0].text
        return ROLE_NAMES[role], [{"type": "text", "text": text}] if text else []
    blocks: List[Dict[str, Any]] = []
    for data in redacted or ():
        if not isinstance(data, str):
            raise MessageTypeError(
                f"messages[{index}].metadata['anthropic']['redacted_thinking'] must hold str data, "
                f"not {type(data).__name__}"
            )
        blocks.append({"type": "redacted_thinking", "data": data})
    for block in content:
        kind = type(block)
        if kind is TextBlock:
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        elif kind is ToolUseBlock:
            if call_extras_lost(block):
                losses.add("a tool call's server_name or metadata", index)
            call_names[block.id] = block.name
            arguments = json_output_copy(block.input, call_place(index, block, "input"))
            blocks.append({"type": "tool_use", "id": block.id, "name": block.name, "input": arguments})
        elif kind is ThinkingBlock:
            if block.signature is None and not block.thinking and redacted:
                continue  # from_anthropic's stand-in for a turn of only redacted thinking
            if block.signature is None:
                losses.add("thinking without a signature", index)
            else:
                blocks.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
        elif kind is ImageBlock and (image := _image(block)) is not None:
            blocks.append(image)
        elif kind is DocumentBlock and role is not ASSISTANT_ROLE \
                and (document := _document(block, index, losses)) is not None:
            blocks.append(document)
        elif kind is ServerToolUseBlock or kind is ServerToolResultBlock:
            written = _server_block(block, message, index, losses)
            if written is not None:
                blocks.append(written)
        else:
            losses.add(_LOST.get(kind, f"{block.type} blocks"), index)
    return ROLE_NAMES[role], blocks


def _server_block(block: Any, message: Message, index: int, losses: Losses) -> Optional[Dict[str, Any]]:
    """A server tool call or result Anthropic ran, as its block; None (a loss) for another
    provider's, or for a result whose block type is unknown (none kept, no call in its turn)."""
    if block.provider not in ("", "anthropic"):
        losses.add(f"server tool blocks run by {block.provider}", index)
        return None
    data: Dict[str, Any] = json_copy_dict(block.metadata, f"messages[{index}].{block.type}.metadata")
    if data.get("type") == "mcp_tool_listing":
        return _listing(block, data, message, index, losses)
    if type(block) is ServerToolUseBlock:
        data.update(type="server_tool_use" if block.server_name is None else "mcp_tool_use", id=block.id,
                    name=block.name, input=json_output_copy(block.input, f"messages[{index}].{block.type}.input"))
        if block.server_name is not None:
            data["server_name"] = block.server_name
        return data
    kind = data.get("type")
    if not isinstance(kind, str) or not kind.endswith("_tool_result") or kind == "tool_result":
        # Anthropic answers a server call in the call's own turn: its name gives the result's type
        call = next((b for b in message.content if type(b) is ServerToolUseBlock and b.id == block.tool_use_id), None)
        if call is None:
            losses.add("server tool results of unknown type without their call", index)
            return None
        kind = "mcp_tool_result" if call.server_name is not None else call.name + "_tool_result"
    data.update(type=kind, tool_use_id=block.tool_use_id)
    if block.content is not None:
        data["content"] = json_copy(block.content, f"messages[{index}].{block.type}.content")
    if block.is_error or kind == "mcp_tool_result":
        data["is_error"] = block.is_error
    return data


def _listing(block: Any, data: Dict[str, Any], message: Message, index: int, losses: Losses
             ) -> Optional[Dict[str, Any]]:
    """The ``mcp_tool_listing`` block :func:`from_anthropic` read into a call and its result,
    written once, where its result (the tools) stands; None for the call, and for half a pair."""
    if type(block) is ServerToolUseBlock:
        if not any(type(b) is ServerToolResultBlock and b.tool_use_id == block.id for b in message.content):
            losses.add("an MCP tool listing without its tools", index)
        return None
    call = next((b for b in message.content if type(b) is ServerToolUseBlock and b.id == block.tool_use_id), None)
    if call is None or call.server_name is None:
        losses.add("an MCP tool listing without its server", index)
        return None
    if type(block.content) is not dict or not isinstance(block.content.get("tools"), list):
        losses.add("an MCP tool listing without its tools", index)
        return None
    extra = {k: v for k, v in {**call.metadata, **data}.items() if k not in ("type", "mcp_server_name", "tools")}
    return {"type": "mcp_tool_listing", "mcp_server_name": call.server_name,
            "tools": json_copy(block.content["tools"], f"messages[{index}].{block.type}.content['tools']"), **extra}


def from_anthropic(
    system: Any, messages: Iterable[Any], *, on_orphan: OrphanPolicy = "raise"
) -> List[Message]:
    """Reads ``(system, messages)`` in Anthropic's shape back into messages.

    ``system`` is a string, a list of text blocks, or None; turns may be dicts or the
    ``anthropic`` SDK's objects (e.g. a response ``Message``). A user turn's ``tool_result`` blocks
    become tool messages (named after their call), its other blocks a user message. Keys the
    model has no field for are kept in ``metadata["anthropic"]``; ``cache_control`` is request
    decoration and is not kept. ``on_orphan``: ``"raise"``, ``"repair"`` or ``"keep"``.

    >>> [m.role.value for m in from_anthropic("Be brief", [{"role": "user", "content": "Hi"}])]
    ['system', 'user']
    """
    out: List[Message] = []
    if system is not None and system != [] and system != "":
        out.append(system_from_anthropic(system))
    call_names: Dict[str, str] = {}
    for index, turn in enumerate(check_dicts(messages, "messages")):
        out += messages_from_anthropic(turn, f"messages[{index}]", call_names)
    return settle_tool_pairs(out, on_orphan, "from_anthropic")


def openai_to_anthropic(
    messages: Iterable[Any], *, on_orphan: OrphanPolicy = "raise"
) -> AnthropicSystemAndMessages:
    """OpenAI Chat Completions messages straight to Anthropic's ``(system, messages)``.

    The result, checks, errors and warnings of ``to_anthropic(from_openai(messages,
    on_orphan=on_orphan))``, without building a :class:`Message` for the common shapes (text,
    tool calls with JSON arguments, tool results answering them, in order). A history with
    anything else (names, content parts, a refusal, an orphan, a message between a call and
    its result, a late system message...) takes that two-step path, so nothing differs.

    >>> system, turns = openai_to_anthropic([{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Hi"}])
    >>> system, turns
    ([{'type': 'text', 'text': 'Be brief'}], [{'role': 'user', 'content': [{'type': 'text', 'text': 'Hi'}]}])
    """
    direct = _common_openai_to_anthropic(messages, on_orphan)
    if direct is not None:
        return cast("AnthropicSystemAndMessages", direct)
    return to_anthropic(from_openai(messages, on_orphan=on_orphan))


_CALL_KEYS = frozenset(("role", "content", "tool_calls"))


def _common_openai_to_anthropic(
    messages: Any, on_orphan: str
) -> Optional[Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]]:
    """The direct conversion of a history made only of the common shapes; None for any other
    history (the caller then takes the two-step path, which checks and warns)."""
    if messages.__class__ is not list or on_orphan not in ORPHAN_POLICIES:
        return None
    system: List[Dict[str, Any]] = []
    turns: List[Dict[str, Any]] = []
    current: Optional[List[Dict[str, Any]]] = None  # the content of the last turn
    current_role = ""
    # The pairing arrays of the core rule (settle_tool_pairs' check, without messages).
    roles: List[int] = []
    result_ids: List[Optional[str]] = []
    call_messages: List[int] = []
    call_ids: List[str] = []
    call_names: List[str] = []
    previous = ""
    for index, data in enumerate(messages):
        if data.__class__ is not dict:
            return None
        role = data.get("role")
        content = data.get("content")
        if role.__class__ is not str:
            return None
        if len(data) == 2 and content.__class__ is str and content and role != "tool":
            if role == "system":
                if turns:
                    return None  # moved to the system prompt, with a warning
                system.append({"type": "text", "text": content})
                roles.append(0)
                result_ids.append(None)
                previous = role
                continue
            if role != "user" and role != "assistant":
                return None
            blocks: List[Dict[str, Any]] = [{"type": "text", "text": content}]
            roles.append(1 if role == "user" else 2)
            result_ids.append(None)
        elif role == "tool":
            tool_id = data.get("tool_call_id")
            if (len(data) != 3 or content.__class__ is not str or tool_id.__class__ is not str
                    or not tool_id or previous == "user" or previous == "system"):
                return None  # a result after a user or system message may move
            blocks = [{"type": "tool_result", "tool_use_id": tool_id,
                       "content": [{"type": "text", "text": content}] if content else []}]
            role = "user"
            roles.append(3)
            result_ids.append(tool_id)
        elif role == "assistant" and _CALL_KEYS.issuperset(data):
            calls = data.get("tool_calls")
            if calls.__class__ is not list or not calls or not (content is None or content.__class__ is str):
                return None
            blocks = [{"type": "text", "text": content}] if content else []
            for call in calls:
                use = _common_call(call)
                if use is None:
                    return None
                blocks.append(use)
                call_messages.append(index)
                call_ids.append(use["id"])
                call_names.append(use["name"])
            roles.append(2)
            result_ids.append(None)
        else:
            return None
        previous = data["role"]
        if role == current_role:
            current.extend(blocks)  # type: ignore[union-attr]
        else:
            current, current_role = blocks, role
            turns.append({"role": role, "content": blocks})
    if on_orphan != "keep" and (call_ids or 3 in roles):
        _, orphans, unanswered = _core.pair_tool_results(
            roles, result_ids, [None] * len(roles), call_messages, call_ids, call_names)
        # calls of the last turn are pending, not orphans (settle_tool_pairs' rule)
        if orphans or _core.pending_calls(roles, call_messages, unanswered)[1]:
            return None
    return system, turns


def _common_call(call: Any) -> Optional[Dict[str, Any]]:
    """A tool call of the common shape as an Anthropic ``tool_use`` block, else None."""
    if call.__class__ is not dict or call.get("type", "function") != "function":
        return None
    function = call.get("function")
    call_id = call.get("id")
    if function.__class__ is not dict or call_id.__class__ is not str or not call_id:
        return None
    name = function.get("name")
    raw = function.get("arguments")
    if name.__class__ is not str or not name:
        return None
    if raw is None or raw == "":
        arguments: Any = {}
    elif raw.__class__ is str:
        arguments = json_object(raw)
        if arguments is None:
            return None  # kept aside with a warning by the two-step path
        try:
            arguments = json_copy_dict(arguments, "input")  # the message model's checks
        except AgentMsgError:
            return None
    else:
        return None
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
