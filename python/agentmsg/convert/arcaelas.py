"""arcaelas' message JSON (``@arcaelas/agent``), both ways.

``{"role", "content": str, "tool_id"?, "timestamp"}``: text only, a tool message links to its
call by ``tool_id``. What it cannot carry, left out with a :class:`ConversionWarning`: tool
calls, thinking, media, a tool result's error flag, names. Ids and metadata are not part of
the format.

    >>> import agentmsg
    >>> agentmsg.to_arcaelas([agentmsg.tool("Data", tool_id="calc_123", timestamp="2025-10-12T10:30:45.123Z")])
    [{'role': 'tool', 'content': 'Data', 'tool_id': 'calc_123', 'timestamp': '2025-10-12T10:30:45.123Z'}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Dict, Iterable, List

from .._checks import check_calls, require_dict
from ..errors import ConversionError, Losses
from ..model.blocks import TextBlock, ToolResultBlock
from ..model.message import Message, Role
from ..readers import check_messages
from ..readers._fields import build, check_dicts, require_str_key
from ._order import settle_tool_pairs

if TYPE_CHECKING:
    from ..options import OrphanPolicy

__all__ = ["to_arcaelas", "from_arcaelas"]


def _timestamp(message: Message) -> str:
    # arcaelas shows JavaScript's toISOString(): milliseconds and a Z
    return message.timestamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_arcaelas(messages: Iterable[Message]) -> List[Dict[str, Any]]:
    """Converts messages to arcaelas' JSON objects (``Message.toJSON()``).

    >>> to_arcaelas([Message.user("Hello", timestamp="2025-10-12T10:30:45.123Z")])
    [{'role': 'user', 'content': 'Hello', 'timestamp': '2025-10-12T10:30:45.123Z'}]
    """
    losses = Losses("to_arcaelas")
    out = []
    block: Any  # dispatched on type(block), which mypy cannot follow through `kind`
    for index, message in enumerate(check_messages(messages)):
        for block in message.content:
            kind = type(block)
            if kind is ToolResultBlock:
                if block.is_error:
                    losses.add("the is_error flag of tool results", index)
                if any(type(b) is not TextBlock for b in block.output):
                    losses.add("media in tool results", index)
            elif kind is not TextBlock:
                losses.add(f"{block.type} blocks", index)
        if message.name is not None and message.role is not Role.TOOL:
            losses.add("names", index)
        if message.reasoning_content is not None:
            losses.add("reasoning_content", index)
        if not message.text and message.role is not Role.TOOL:
            # the format requires content: a message of only thinking or media cannot be written
            losses.add("messages with no text", index, "they were left out")
            continue
        data: Dict[str, Any] = {"role": message.role.value, "content": message.text}
        if message.role is Role.TOOL:
            if not message.tool_id:
                raise ConversionError(f"messages[{index}].tool_id: arcaelas tool messages require tool_id")
            data["tool_id"] = message.tool_id
        data["timestamp"] = _timestamp(message)
        out.append(data)
    if losses.found:
        losses.warn()
    return out


def from_arcaelas(messages: Iterable[Mapping[str, Any]], *, on_orphan: OrphanPolicy = "keep") -> List[Message]:
    """Reads arcaelas' JSON objects, with its validation: role required, content a non-empty
    string (a tool result may be empty, as :func:`to_arcaelas` writes a result with no output),
    ``tool_id`` required for tool messages.

    arcaelas histories carry no tool calls, so every tool result has no call to pair with:
    ``on_orphan`` defaults to ``"keep"`` here.

    >>> [m.tool_id for m in from_arcaelas([{"role": "tool", "content": "Data", "tool_id": "calc_123"}])]
    ['calc_123']
    """
    out = []
    for index, data in enumerate(check_dicts(messages, "messages")):
        where = f"messages[{index}]"
        data = require_dict(data, where)
        role = require_str_key(data, "role", where)
        content = require_str_key(data, "content", where)
        if not content and role != "tool":
            raise ConversionError(f"{where}.content: the content is required (empty)")
        if role == "tool" and not data.get("tool_id"):
            raise ConversionError(f"{where}: missing field 'tool_id' (tool messages require it)")
        fields = {"timestamp": data["timestamp"]} if data.get("timestamp") is not None else {}
        tool_id = data.get("tool_id")
        out.append(build(where, lambda: Message(role, content, tool_id=tool_id, **fields)))
    return settle_tool_pairs(out, on_orphan, "from_arcaelas")


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
