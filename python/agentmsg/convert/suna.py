"""Suna's ``messages`` table rows, both ways.

A row has ``message_id``, ``thread_id``, ``type``, ``content`` (a JSON string of an OpenAI-style
message, a plain string, or an object), ``is_llm_message``, ``metadata``, ``created_at``...
:func:`from_db_rows` keeps only LLM messages, reads compressed rows from
``metadata.compressed_content`` (when the row has one) and takes a tool result's ``tool_call_id`` from the metadata
when the content lacks it. :func:`to_db_rows` writes rows back with JSON-string content.

The message keeps the row's ``metadata`` as its metadata; the row's other columns go to
``metadata["suna_row"]`` (and back into the row), so a row survives the round trip. What the
OpenAI-style content cannot carry is listed in :mod:`agentmsg.convert.openai`.

    >>> import agentmsg
    >>> rows = [{"message_id": "m1", "type": "user", "is_llm_message": True,
    ...          "content": '{"role": "user", "content": "Hello"}', "created_at": "2025-01-01T00:00:00Z"},
    ...         {"message_id": "m2", "type": "status", "is_llm_message": False,
    ...          "content": {"status_type": "thread_run_start"}}]
    >>> [(m.id, m.text) for m in agentmsg.from_db_rows(rows)]
    [('m1', 'Hello')]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

from .._checks import check_calls, optional_dict, require, require_dict, shown
from ..errors import ConversionError, Losses, MessageTypeError
from ..model.arguments import json_output_copy, json_text
from ..model.message import Message, Role, format_timestamp
from ..readers import check_messages
from ..readers._fields import check_dicts, own_namespace
from ..readers.openai import message_from_openai
from ._order import settle_tool_pairs
from .openai import message_to_openai

if TYPE_CHECKING:
    from ..options import OrphanPolicy

__all__ = ["from_db_rows", "to_db_rows", "NON_LLM_ROW_TYPES"]

NON_LLM_ROW_TYPES = frozenset(("status", "llm_response_end"))
"""Row types that are bookkeeping, never sent to the model (Suna).

>>> "status" in NON_LLM_ROW_TYPES
True
"""
_ROLES = ("system", "user", "assistant", "tool")
# Columns mapped to Message fields; every other column goes to metadata["suna_row"].
_MAPPED = frozenset(("message_id", "type", "content", "is_llm_message", "metadata", "created_at"))


def from_db_rows(rows: Iterable[Mapping[str, Any]], *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """Reads Suna ``messages`` rows into messages, skipping rows that are not LLM messages.

    A row is skipped when ``is_llm_message`` is false or its ``type`` is ``status`` or
    ``llm_response_end``. Another unknown ``type`` is a ConversionError. ``on_orphan``: raise,
    repair or keep (Suna: a result must match an earlier call's id).

    >>> row = {"type": "tool", "content": {"role": "tool", "content": "42", "name": "calc"},
    ...        "metadata": {"tool_call_id": "t1"}, "is_llm_message": True}
    >>> m = from_db_rows([row], on_orphan="keep")[0]
    >>> (m.tool_id, m.name, m.text)
    ('t1', 'calc', '42')
    """
    out: List[Message] = []
    for index, row in enumerate(check_dicts(rows, "rows")):
        where = f"rows[{index}]"
        row = require_dict(row, where)
        kind = require(row, "type", where)
        if not isinstance(kind, str):
            raise MessageTypeError(f"{where}.type must be a str, not {type(kind).__name__}")
        if row.get("is_llm_message") is False or kind in NON_LLM_ROW_TYPES:
            continue
        if kind not in _ROLES:
            raise ConversionError(
                f"{where}.type: unknown message type {shown(kind)}; valid: {', '.join(_ROLES)}, "
                "or mark the row is_llm_message=false"
            )
        out.append(_row_to_message(row, kind, where))
    return settle_tool_pairs(out, on_orphan, "from_db_rows")


def _load_metadata(value: Any, where: str) -> Dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise ConversionError(f"{where}.metadata: not valid JSON") from None
    return optional_dict(value, f"{where}.metadata")


def _row_to_message(row: Mapping[str, Any], kind: str, where: str) -> Message:
    metadata = _load_metadata(row.get("metadata"), where)
    extras = {k: v for k, v in row.items() if k not in _MAPPED}
    content = require(row, "content", where)
    compressed = metadata.get("compressed_content") if metadata.get("compressed") else None
    if compressed is not None:
        if not isinstance(compressed, str):
            raise ConversionError(f"{where}.metadata.compressed_content must be a str, not {type(compressed).__name__}")
        extras["content"] = content  # the stored content is kept, not dropped
        data: Dict[str, Any] = {"role": kind, "content": compressed}
    else:
        data = _content_dict(content, kind, where)
    if kind == "tool" and "tool_call_id" not in data and "tool_call_id" in metadata:
        data = {**data, "tool_call_id": metadata["tool_call_id"]}
    if kind == "tool" and metadata.get("tool_call_id") == data.get("tool_call_id"):
        metadata.pop("tool_call_id", None)  # written back by to_db_rows
    if extras:
        metadata["suna_row"] = extras
    fields: Dict[str, Any] = {"metadata": metadata}
    if row.get("message_id") is not None:
        fields["id"] = row["message_id"]
    if row.get("created_at") is not None:
        fields["timestamp"] = row["created_at"]
    return message_from_openai(data, f"{where}.content", **fields)


def _content_dict(content: Any, kind: str, where: str) -> Dict[str, Any]:
    if isinstance(content, str):
        try:
            parsed = json.loads(content)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and ("content" in parsed or "tool_calls" in parsed):
            content = parsed
        else:
            return {"role": kind, "content": content}  # a plain string (Suna)
    if isinstance(content, list):
        return {"role": kind, "content": content}
    if not isinstance(content, Mapping):
        raise MessageTypeError(
            f"{where}.content must be a JSON string, a string, an object or a list, not {type(content).__name__}"
        )
    data = dict(content)
    data.setdefault("role", kind)
    if data["role"] != kind:
        raise ConversionError(
            f"{where}.content.role: {shown(data['role'])} disagrees with the row type {shown(kind)}"
        )
    return data


def to_db_rows(messages: Iterable[Message], *, thread_id: Optional[str] = None) -> List[Dict[str, Any]]:
    """Writes messages as Suna rows: ``content`` a JSON string of the OpenAI-style message.

    ``thread_id`` (if given) overrides the one kept from :func:`from_db_rows`.

    >>> row = to_db_rows([Message.user("Hello", id="m1", timestamp="2025-01-01T00:00:00Z")], thread_id="t")[0]
    >>> (row["type"], row["content"], row["thread_id"], row["created_at"])
    ('user', '{"role": "user", "content": "Hello"}', 't', '2025-01-01T00:00:00.000000Z')
    """
    items = check_messages(messages)
    if thread_id is not None and not isinstance(thread_id, str):
        raise MessageTypeError(f"thread_id must be a str or None, not {type(thread_id).__name__}")
    losses = Losses("to_db_rows")
    rows = []
    for index, message in enumerate(items):
        data = message_to_openai(message, index, losses, tool_name=True)
        if data is None:
            continue
        # a row is stored as JSON, and must not share a dict with the message
        metadata = json_output_copy(message.metadata, f"messages[{index}].metadata")
        extras = dict(own_namespace(metadata, "suna_row"))
        extra_keys = own_namespace(metadata, "openai")
        for key in ("suna_row", "openai"):
            if isinstance(metadata.get(key), dict):
                del metadata[key]
        data = {**{k: v for k, v in extra_keys.items() if k != "role"}, **data}
        if message.role is Role.TOOL and "tool_call_id" not in metadata:
            metadata["tool_call_id"] = message.tool_id
        stored = extras.pop("content", None)
        if metadata.get("compressed") and metadata.get("compressed_content") is not None and stored is not None:
            content = stored
        else:
            content = json_text(data, f"messages[{index}]")
        row: Dict[str, Any] = {
            "message_id": message.id,
            "thread_id": thread_id if thread_id is not None else extras.pop("thread_id", None),
            "type": message.role.value,
            "content": content,
            "is_llm_message": True,
            "metadata": metadata,
            "created_at": format_timestamp(message.timestamp),
        }
        extras.pop("thread_id", None)
        row.update(extras)
        rows.append(row)
    if losses.found:
        losses.warn()
    return rows


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
