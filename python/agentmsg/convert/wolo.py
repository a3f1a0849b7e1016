"""Wolo's part-based messages: ``from_wolo``, ``to_wolo`` and ``to_llm_messages``.

A Wolo message holds ``TextPart`` and ``ToolPart`` parts; a tool part carries its call *and*
its outcome (``output``, ``status``, timings). In agentmsg a call and its result are separate
messages, so :func:`from_wolo` splits each finished tool part into a tool message after its
assistant message, and :func:`to_wolo` folds them back. Part ids, statuses and timings are kept
in ``metadata["wolo"]`` so a Wolo history survives the round trip.

The classes below mirror Wolo's dataclasses; the functions also accept plain dicts with the
same keys (and Wolo's own objects, read by attribute).

    >>> import agentmsg
    >>> from agentmsg import WoloMessage, WoloTextPart, WoloToolPart
    >>> wolo = [WoloMessage("msg_002", "assistant", [
    ...     WoloTextPart("text_002", "I'll create hello.py."),
    ...     WoloToolPart("tool_001", "write", {"path": "hello.py"}, output="File written successfully",
    ...                  status="completed")], timestamp=1704067200.0, finished=True, finish_reason="stop")]
    >>> [(m.role.value, m.text) for m in agentmsg.from_wolo(wolo)]
    [('assistant', "I'll create hello.py."), ('tool', 'File written successfully')]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Union, cast

from .._checks import check_calls, optional_dict, require_choice, require_list
from ..errors import ConversionError, Losses, MessageTypeError
from ..model.arguments import dump_arguments, json_output_copy
from ..model.blocks import Block, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from ..model.message import Message, Role
from ..readers import check_messages
from ..readers._fields import build, check_dicts, own_namespace
from ._order import results_first

__all__ = [
    "WoloTextPart",
    "WoloToolPart",
    "WoloMessage",
    "from_wolo",
    "to_wolo",
    "to_llm_messages",
    "WOLO_SYSTEM_PROMPT",
    "WOLO_SENT_STATUSES",
]

WOLO_SYSTEM_PROMPT = "You are Wolo, an AI coding agent that helps users with software engineering tasks."
"""The system prompt :func:`to_llm_messages` injects when a history has none (Wolo).

>>> WOLO_SYSTEM_PROMPT.startswith("You are Wolo")
True
"""

WOLO_SENT_STATUSES = frozenset(("pending", "running", "completed", "failed"))
"""Tool part statuses :func:`to_llm_messages` sends; a part in any other state is left out.

>>> "cancelled" in WOLO_SENT_STATUSES
False
"""


@dataclass
class WoloTextPart:
    """Wolo's ``TextPart``.

    >>> WoloTextPart("text_001", "Hello").type
    'text'
    """

    id: str
    text: str = ""
    type: str = "text"


@dataclass
class WoloToolPart:
    """Wolo's ``ToolPart``: a call with its output, status and timings.

    >>> WoloToolPart("tool_001", "read", {"path": "a.py"}).status
    'pending'
    """

    id: str
    tool: str
    input: Dict[str, Any] = field(default_factory=dict)
    output: str = ""
    status: str = "pending"
    start_time: float = 0.0
    end_time: float = 0.0
    type: str = "tool"


WoloPart = Union[WoloTextPart, WoloToolPart]


@dataclass
class WoloMessage:
    """Wolo's internal ``Message``.

    >>> WoloMessage("msg_001", "user", [WoloTextPart("t1", "Hi")], timestamp=1704067200.0).finished
    False
    """

    id: str
    role: str
    parts: List[WoloPart]
    timestamp: float = 0.0
    finished: bool = False
    finish_reason: str = ""
    reasoning_content: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _required(obj: Any, key: str, where: str) -> Any:
    value = _get(obj, key, _MISSING)
    if value is _MISSING:
        raise ConversionError(f"{where}: missing field {key!r}")
    return value


_MISSING = object()


def _part_kind(part: Any, where: str) -> str:
    kind = _get(part, "type")
    if kind is None:
        kind = "tool" if _get(part, "tool") is not None else "text"
    return require_choice(kind, ("text", "tool"), f"{where}.type", "part type")


def _text(part: Any, where: str) -> str:
    text = _get(part, "text", "")
    if not isinstance(text, str):
        raise MessageTypeError(f"{where}.text must be a str, not {type(text).__name__}")
    return text


def _status(part: Any, where: str) -> Any:
    status = _get(part, "status", "pending")
    if not isinstance(status, str):
        raise MessageTypeError(f"{where}.status must be a str, not {type(status).__name__}")
    return status


def _output(part: Any, where: str) -> str:
    output = _get(part, "output", "")
    if output is None:
        return ""
    if not isinstance(output, str):
        raise MessageTypeError(f"{where}.output must be a str, not {type(output).__name__}")
    return output


# Where to_wolo keeps what a Wolo tool part has no field for (a call's server_name and
# metadata), in the Wolo message's metadata, for from_wolo to restore.
_CALL_EXTRAS = "agentmsg_calls"


def from_wolo(messages: Iterable[Any]) -> List[Message]:
    """Reads Wolo messages into agentmsg messages.

    Each tool part becomes a ToolUseBlock (id = part id); a ``completed`` or ``failed`` part
    also becomes a tool message (``is_error`` when failed) right after its assistant message.
    Part ids, statuses and timings go to ``metadata["wolo"]``. Pending and running calls have
    no result yet, which is their state, not an orphan. An assistant message with no parts
    but ``reasoning_content`` becomes one thinking block.

    >>> msgs = from_wolo([{"id": "m1", "role": "user", "parts": [{"id": "t1", "type": "text", "text": "Hi"}],
    ...                    "timestamp": 1704067200.0}])
    >>> (msgs[0].id, msgs[0].text, msgs[0].metadata)
    ('m1', 'Hi', {'wolo': {'text_part_ids': ['t1']}})
    """
    out: List[Message] = []
    for index, wolo in enumerate(check_dicts(messages, "messages")):
        where = f"messages[{index}]"
        role = _required(wolo, "role", where)
        if not isinstance(role, str):
            raise MessageTypeError(f"{where}.role must be a str, not {type(role).__name__}")
        parts = require_list(_required(wolo, "parts", where), f"{where}.parts")
        metadata = optional_dict(_get(wolo, "metadata"), f"{where}.metadata")
        call_extras = metadata.pop(_CALL_EXTRAS, None)
        if not isinstance(call_extras, dict):
            if call_extras is not None:
                metadata[_CALL_EXTRAS] = call_extras  # not ours: someone else's data, kept as is
            call_extras = {}
        blocks: List[Block] = []
        text_ids: List[str] = []
        tools: Dict[str, Dict[str, Any]] = {}
        results: List[Message] = []
        for j, part in enumerate(parts):
            pwhere = f"{where}.parts[{j}]"
            part_id = _required(part, "id", pwhere)
            if _part_kind(part, pwhere) == "text":
                text = _text(part, pwhere)
                blocks.append(build(pwhere, lambda: TextBlock(text)))
                text_ids.append(part_id)
                continue
            if role != "assistant":
                raise ConversionError(f"{pwhere}: tool parts belong in assistant messages, not {role[:20]!r}")
            name = _required(part, "tool", pwhere)
            arguments = json_output_copy(optional_dict(_get(part, "input"), f"{pwhere}.input"), f"{pwhere}.input")
            extras = call_extras.get(part_id) if isinstance(part_id, str) else None
            server_name, call_metadata = "local", {}
            if isinstance(extras, dict):
                server_name = extras.get("server_name", "local")
                call_metadata = optional_dict(extras.get("metadata"), f"{where}.metadata[{_CALL_EXTRAS!r}]")
            blocks.append(build(pwhere, lambda: ToolUseBlock(part_id, name, arguments, server_name, call_metadata)))
            status = _status(part, pwhere)
            tools[part_id] = {"status": status, "start_time": _get(part, "start_time", 0.0),
                              "end_time": _get(part, "end_time", 0.0)}
            if status in ("completed", "failed"):
                output = _output(part, pwhere)
                results.append(build(pwhere, lambda: Message.tool(
                    output, tool_id=part_id, name=name, is_error=status == "failed",
                    timestamp=_get(part, "end_time") or _get(wolo, "timestamp"),
                )))
        wolo_meta: Dict[str, Any] = {"text_part_ids": text_ids}
        if tools:
            wolo_meta["tools"] = tools
        metadata["wolo"] = wolo_meta
        reasoning = _get(wolo, "reasoning_content")
        if isinstance(reasoning, str) and all(type(b) is TextBlock and not b.text for b in blocks):
            # nothing but the reasoning: it is the message (to_wolo writes thinking there)
            blocks, reasoning = [ThinkingBlock(reasoning)] + blocks, None
        elif reasoning == "":
            reasoning = None  # Wolo's default: no reasoning
        out.append(build(where, lambda: Message(
            role, blocks, id=_get(wolo, "id"), timestamp=_get(wolo, "timestamp"),
            finished=_get(wolo, "finished"), finish_reason=_get(wolo, "finish_reason") or None,
            reasoning_content=reasoning, metadata=metadata,
        )))
        out.extend(results)
    return out


def to_wolo(messages: Iterable[Message]) -> List[WoloMessage]:
    """Folds agentmsg messages into Wolo messages: tool results go back into their call's part.

    A call answered by a later tool message becomes a ``completed`` part (``failed`` when the
    result is an error) with the result text as ``output``; an unanswered call keeps the status
    stored by :func:`from_wolo`, else ``pending``. Thinking goes to ``reasoning_content``; a
    call's ``server_name`` and ``metadata`` (no field of a tool part) travel in the Wolo
    message's ``metadata["agentmsg_calls"]`` and come back with :func:`from_wolo`. A message
    between a call and its result comes after the call's message (the result lives in the
    part), with a :class:`ConversionWarning`. Wolo has no media and no standalone tool results:
    media is left out with a :class:`ConversionWarning`, and a tool result whose call is not in
    the history is a ConversionError.

    >>> call = ToolUseBlock("call_1", "read", {"path": "a.py"})
    >>> [w] = to_wolo([Message.assistant("Reading.", tool_calls=[call]), Message.tool("print(1)", tool_id="call_1")])
    >>> (w.parts[1].status, w.parts[1].output)
    ('completed', 'print(1)')
    """
    items = check_messages(messages)
    results_first(items, "to_wolo")  # warns when a result's move changes the order
    losses = Losses("to_wolo")
    out: List[WoloMessage] = []
    part_of_call: Dict[str, WoloToolPart] = {}
    for index, message in enumerate(items):
        if message.role is Role.TOOL:
            part = part_of_call.get(message.tool_id or "")
            if part is None:
                raise ConversionError(
                    f"messages[{index}].tool_id: Wolo keeps a tool result inside its call's part, "
                    f"but no earlier call has id {(message.tool_id or '')[:60]!r}"
                )
            part.output = message.text
            part.status = "failed" if message.is_error else "completed"
            output = cast(ToolResultBlock, message.content[0]).output  # a tool message holds one result
            if len(output) != sum(1 for b in output if type(b) is TextBlock):
                losses.add("media in tool results", index)
            continue
        metadata = json_output_copy(message.metadata, f"messages[{index}].metadata")
        wolo_meta = own_namespace(metadata, "wolo")
        if wolo_meta:
            del metadata["wolo"]
        text_ids = wolo_meta.get("text_part_ids")
        text_ids = text_ids if isinstance(text_ids, list) else []
        tools = wolo_meta.get("tools")
        tools = tools if isinstance(tools, dict) else {}
        parts: List[WoloPart] = []
        thinking: List[str] = []
        call_extras: Dict[str, Any] = {}
        texts = 0
        block: Any  # dispatched on type(block), which mypy cannot follow through `kind`
        for block in message.content:
            kind = type(block)
            if kind is TextBlock:
                part_id = text_ids[texts] if texts < len(text_ids) else f"{message.id}_text_{texts}"
                parts.append(WoloTextPart(part_id, block.text))
                texts += 1
            elif kind is ToolUseBlock:
                stored = tools.get(block.id)
                stored = stored if isinstance(stored, dict) else {}
                part = WoloToolPart(
                    block.id, block.name, json_output_copy(block.input, f"messages[{index}] tool call input"),
                    status=stored.get("status", "pending"),
                    start_time=stored.get("start_time", 0.0), end_time=stored.get("end_time", 0.0),
                )
                if block.server_name != "local" or block.metadata:
                    extras: Dict[str, Any] = {}
                    if block.server_name != "local":
                        extras["server_name"] = block.server_name
                    if block.metadata:
                        extras["metadata"] = json_output_copy(block.metadata, f"messages[{index}] tool call metadata")
                    call_extras[block.id] = extras
                part_of_call[block.id] = part
                parts.append(part)
            elif kind is ThinkingBlock:
                thinking.append(block.thinking)
                if block.signature is not None:
                    losses.add("thinking signatures", index)
            else:
                losses.add(f"{block.type} blocks", index)
        if call_extras:
            metadata[_CALL_EXTRAS] = call_extras
        if message.name is not None:
            losses.add("names", index)
        reasoning = message.reasoning_content
        if reasoning is None:
            reasoning = "\n".join(thinking)
        elif thinking:
            losses.add("thinking blocks besides reasoning_content", index)
        if not parts and not (message.role is Role.ASSISTANT and (thinking or message.reasoning_content is not None)):
            losses.add("messages with nothing else it can carry", index)
            continue
        out.append(WoloMessage(
            id=message.id, role=message.role.value, parts=parts,
            timestamp=message.timestamp.timestamp(), finished=bool(message.finished),
            finish_reason=message.finish_reason or "", reasoning_content=reasoning, metadata=metadata,
        ))
    if losses.found:
        losses.warn()
    return out


def _replace_name(prompt: str, display_name: Optional[str]) -> str:
    if not display_name:
        return prompt
    return re.sub(r"\bWolo\b", lambda _: display_name, prompt)


def to_llm_messages(
    messages: Iterable[Any],
    *,
    system_prompt: str = WOLO_SYSTEM_PROMPT,
    agent_display_name: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """Wolo's ``to_llm_messages``: Wolo messages to OpenAI-style dicts, by its rules.

    1. system and user messages send their text (text parts joined with newlines);
    2. an assistant message sends its text, ``reasoning_content`` when set, and a call for each
       tool part whose status is pending, running, completed or failed (others are left out);
    3. it is sent only if it has text or calls;
    4. each completed part becomes a ``tool`` message with its output, and a failed part one
       with its error (its output) as the result;
    5. ``system_prompt`` is injected first when there is no system message, with
       ``agent_display_name`` (if given) replacing the name ``Wolo`` in it.

    ``messages`` may also be agentmsg messages; they go through :func:`to_wolo` first.

    >>> llm = to_llm_messages([Message.user("Hi")], agent_display_name="CodeHelper")
    >>> llm[0]["content"], llm[1]
    ('You are CodeHelper, an AI coding agent that helps users with software engineering tasks.', {'role': 'user', 'content': 'Hi'})
    """
    items = check_dicts(messages, "messages")
    if items and all(isinstance(m, Message) for m in items):
        items = to_wolo(items)
    out: List[Dict[str, Any]] = []
    for index, wolo in enumerate(items):
        where = f"messages[{index}]"
        role = require_choice(_required(wolo, "role", where), ("system", "user", "assistant"), f"{where}.role", "role")
        parts = require_list(_required(wolo, "parts", where), f"{where}.parts")
        texts = []
        calls = []
        results = []
        for j, part in enumerate(parts):
            pwhere = f"{where}.parts[{j}]"
            if _part_kind(part, pwhere) == "text":
                text = _text(part, pwhere)
                if text:
                    texts.append(text)
                continue
            status = _status(part, pwhere)
            if status not in WOLO_SENT_STATUSES:
                continue
            part_id, name = _required(part, "id", pwhere), _required(part, "tool", pwhere)
            arguments = optional_dict(_get(part, "input"), f"{pwhere}.input")
            call = build(pwhere, lambda: ToolUseBlock(part_id, name, arguments))
            calls.append({"id": part_id, "type": "function",
                          "function": {"name": name, "arguments": dump_arguments(call, f"{pwhere}.input")}})
            if status == "completed":
                results.append({"role": "tool", "tool_call_id": part_id, "content": _output(part, pwhere)})
            elif status == "failed":
                error = _output(part, pwhere) or "Error: the tool failed"
                results.append({"role": "tool", "tool_call_id": part_id, "content": error})
        text = "\n".join(texts)
        if role != "assistant":
            out.append({"role": role, "content": text})
            continue
        if not text and not calls:
            continue
        data: Dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            data["tool_calls"] = calls
        reasoning = _get(wolo, "reasoning_content")
        if reasoning:
            if not isinstance(reasoning, str):
                raise MessageTypeError(f"{where}.reasoning_content must be a str, not {type(reasoning).__name__}")
            data["reasoning_content"] = reasoning
        out.append(data)
        out.extend(results)
    if not any(m["role"] == "system" for m in out):
        out.insert(0, {"role": "system", "content": _replace_name(system_prompt, agent_display_name)})
    return out


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
