"""Anthropic Messages API: ``(system, messages)`` both ways, with cache-control placement.

System text goes in the separate ``system`` argument; tool results become ``tool_result`` blocks
in a user turn; consecutive turns of the same role are merged (the API wants them alternating);
thinking blocks keep their signature; images go as base64 or URL sources.

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

from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, cast, TYPE_CHECKING

from ..blocks import (
    Block, Base64Source, ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, URLSource,
)
from .. import _core
from .._checks import check_calls, json_copy_dict
from ..errors import AgentMsgError, ConversionError, MessageTypeError
from ..message import Message, metadata_view, _ROLE_NAMES, _TOOL
from .openai import from_openai
from ._common import (
    ORPHAN_POLICIES, json_object, CachePlace, Losses, block_kind, build, call_extras_lost, call_place,
    check_dicts, check_cache_places, check_messages, json_copy, own_namespace, plain_data, require,
    require_choice, require_dict, require_str, settle_tool_pairs, shown,
    split_system_and_merge_turns, text_block,
)

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


def _blocks_to_anthropic(
    message: Message, index: int, losses: Losses, call_names: Dict[str, str]
) -> Tuple[str, List[Dict[str, Any]]]:
    role = message.role
    block: Any  # dispatched on type(block), which mypy cannot follow through `kind`
    if role is _TOOL:
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
        return _ROLE_NAMES[role], [{"type": "text", "text": text}] if text else []
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
            arguments = json_copy(block.input, call_place(index, block, "input"))
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
        else:
            losses.add(f"{block.type} blocks" if kind is not ImageBlock else "images of that media type", index)
    return _ROLE_NAMES[role], blocks


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
        out.append(_system_from_anthropic(system))
    call_names: Dict[str, str] = {}
    for index, turn in enumerate(check_dicts(messages, "messages")):
        where = f"messages[{index}]"
        turn = require_dict(plain_data(turn), where)
        role = require_choice(require(turn, "role", where), ("user", "assistant"), f"{where}.role", "role")
        extra = {k: v for k, v in turn.items() if k not in ("role", "content")}
        metadata = {"anthropic": extra} if extra else {}
        content = require(turn, "content", where)
        if isinstance(content, str):
            out.append(build(where, lambda: Message(role, content, metadata=metadata)))
            continue
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
                data = require_str(block, "data", bwhere)
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
                out.append(_tool_result(block, bwhere, call_names))
            else:
                parsed = _block_from_anthropic(block, bwhere)
                if type(parsed) is ToolUseBlock:
                    call_names[parsed.id] = parsed.name
                pending.append(parsed)
        if pending:
            out.append(build(where, lambda: Message(role, pending, metadata=metadata)))
    return settle_tool_pairs(out, on_orphan, "from_anthropic")


def _system_from_anthropic(system: Any) -> Message:
    if isinstance(system, str):
        return Message.system(system)
    blocks = []
    for j, block in enumerate(check_dicts(system, "system")):
        block = require_dict(block, f"system[{j}]")
        require_choice(block_kind(block, f"system[{j}]"), ("text",), f"system[{j}].type", "system block type")
        text = require_str(block, "text", f"system[{j}]")
        blocks.append(TextBlock(text))
    return build("system", lambda: Message.system(blocks))


def _tool_result(block: Mapping[str, Any], where: str, call_names: Dict[str, str]) -> Message:
    tool_id = require_str(block, "tool_use_id", where)
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
            require_choice(block_kind(item, f"{where}.content[{j}]"), ("text", "image"),
                           f"{where}.content[{j}].type", "tool result block")
            output.append(_block_from_anthropic(item, f"{where}.content[{j}]"))
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


def _block_from_anthropic(block: Mapping[str, Any], where: str) -> Any:
    kind = block_kind(block, where)
    if kind == "text":
        return text_block(block, where)
    if kind == "thinking":
        thinking = require(block, "thinking", where)
        signature = block.get("signature")
        return build(where, lambda: ThinkingBlock(thinking, signature))
    if kind == "tool_use":
        call_id, name, arguments = (require(block, k, where) for k in ("id", "name", "input"))
        arguments = json_copy(require_dict(arguments, f"{where}.input"), f"{where}.input")
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
    raise ConversionError(
        f"{where}.type: unknown block type {shown(kind)}; valid: text, image, thinking, tool_use, "
        "tool_result, redacted_thinking"
    )


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
        try:
            _, orphans, unanswered = _core.pair_tool_results(
                roles, result_ids, [None] * len(roles), call_messages, call_ids, call_names)
        except UnicodeEncodeError:
            return None
        last = len(roles) - 1
        while last >= 0 and roles[last] == 3:
            last -= 1
        # calls of the last turn are pending, not orphans (settle_tool_pairs' rule)
        if orphans or any(call_messages[k] != last for k in unanswered):
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
