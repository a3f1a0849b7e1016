"""A streamed OpenAI Responses API reply read into messages, as :func:`agentmsg.from_responses`
reads the whole response.

:func:`from_responses_stream` reads the ``openai`` SDK's stream events
(``client.responses.create(..., stream=True)`` or the events of ``client.responses.stream(...)``),
or their dicts; :func:`afrom_responses_stream` is awaited over ``AsyncOpenAI``'s stream. The
final ``response.completed`` (or ``response.incomplete`` / ``response.failed``) event carries the
whole response, which is read when it has output. A stream cut off before it is built from its
items: each ``response.output_item.added`` / ``.done`` item, the parts its
``response.content_part.*`` and ``response.reasoning_summary_part.*`` events add, and the text its
``*.delta`` events carry (output text, refusals, reasoning summaries and text, function, custom
tool and MCP call arguments). A ``response.output_item.done`` with an ``agentmsg_issue`` (what
:func:`agentmsg.responses_events` sends for a call the parser could not read) drops its item and
keeps the issue in ``metadata["parse_issues"]``, as parsing the text keeps one. Progress events
(``response.web_search_call.searching``, ...) repeat what the items carry and are skipped; an
``error`` event is a ConversionError.

    >>> import agentmsg
    >>> events = [
    ...     {"type": "response.output_item.added", "output_index": 0, "item": {
    ...         "type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}},
    ...     {"type": "response.content_part.added", "output_index": 0, "content_index": 0,
    ...      "part": {"type": "output_text", "text": "", "annotations": []}},
    ...     {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "It is "},
    ...     {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "42."}]
    >>> [m.text for m in agentmsg.from_responses_stream(events)]
    ['It is 42.']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, AsyncIterable, Dict, Iterable, List, Optional, Set, Tuple, Union

from .._checks import check_calls, describe, require_int, type_name
from ..errors import ConversionError, MessageTypeError
from ..model.message import Message
from ..readers._fields import plain_data
from .responses import from_responses
from .responses_events import ISSUE_FIELD
from .stream_items import async_items, stream_object, sync_items

if TYPE_CHECKING:
    from ..options import OrphanPolicy

__all__ = ["from_responses_stream", "afrom_responses_stream"]


def from_responses_stream(events: Iterable[Any], *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """The messages a Responses API stream gives: what :func:`agentmsg.from_responses` reads
    from the whole response (see the module for the events read). ``on_orphan`` as there; a
    call of the reply with no output yet is pending, not an orphan.

    >>> events = [{"type": "response.output_item.done", "output_index": 0, "item": {
    ...     "type": "function_call", "call_id": "c1", "name": "calc", "arguments": '{"a": 1}'}}]
    >>> from_responses_stream(events)[0].tool_calls[0].input
    {'a': 1}
    """
    reply = _ResponseReply()
    for index, event in enumerate(sync_items(events, "events", "afrom_responses_stream")):
        reply.add(event, index)
    return reply.messages(on_orphan)


async def afrom_responses_stream(events: Union[AsyncIterable[Any], Iterable[Any]], *,
                                 on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """:func:`from_responses_stream` over an async iterable (``AsyncOpenAI``'s stream), or a sync one.

    >>> import asyncio
    >>> async def stream():
    ...     yield {"type": "response.output_item.done", "output_index": 0, "item": {
    ...         "role": "assistant", "content": "Hi"}}
    >>> [m.text for m in asyncio.run(afrom_responses_stream(stream()))]
    ['Hi']
    """
    reply = _ResponseReply()
    index = 0
    async for event in async_items(events, "events"):
        reply.add(event, index)
        index += 1
    return reply.messages(on_orphan)


# The events whose ``response`` is the whole response so far (the last one read wins).
_RESPONSE_EVENTS = frozenset((
    "response.created", "response.in_progress", "response.queued", "response.completed", "response.incomplete",
    "response.failed",
))
# delta event -> (the field of the part or item it extends, the list the part is in, that part's type)
_DELTAS: Dict[str, Tuple[str, Optional[str], Optional[str]]] = {
    "response.output_text.delta": ("text", "content", "output_text"),
    "response.refusal.delta": ("refusal", "content", "refusal"),
    "response.reasoning_summary_text.delta": ("text", "summary", "summary_text"),
    "response.reasoning_text.delta": ("text", "content", "reasoning_text"),
    "response.function_call_arguments.delta": ("arguments", None, None),
    "response.mcp_call_arguments.delta": ("arguments", None, None),
    "response.custom_tool_call_input.delta": ("input", None, None),
}
# done event -> its whole value's key in the event
_DONES = {
    "response.output_text.done": "text", "response.refusal.done": "refusal",
    "response.reasoning_summary_text.done": "text", "response.reasoning_text.done": "text",
    "response.function_call_arguments.done": "arguments", "response.mcp_call_arguments.done": "arguments",
    "response.custom_tool_call_input.done": "input",
}
# part events -> the list of the item the part goes in, and the key of its position
_PARTS = {
    "response.content_part.added": ("content", "content_index"),
    "response.content_part.done": ("content", "content_index"),
    "response.reasoning_summary_part.added": ("summary", "summary_index"),
    "response.reasoning_summary_part.done": ("summary", "summary_index"),
}


_Place = Tuple[int, Optional[str], int, str, Optional[str]]


class _ResponseReply:
    """The output items of one streamed response, built as the events arrive."""

    def __init__(self) -> None:
        self.response: Optional[Dict[str, Any]] = None
        self.items: Dict[int, Dict[str, Any]] = {}
        # (output index, list, position or -1, field, part type) -> the fragments of text, joined at
        # the end (joining as they come would copy the text so far on every delta)
        self.fragments: Dict[_Place, List[str]] = {}
        self.seen = False
        self.issues: List[Dict[str, Any]] = []  # agentmsg_issue fields: calls that failed
        self.failed: Set[Any] = set()  # their items' ids

    def add(self, event: Any, index: int) -> None:
        where = f"events[{index}]"
        data = plain_data(stream_object(event, where))
        kind = data.get("type")
        if not isinstance(kind, str):
            raise MessageTypeError(f"{where}.type must be a str, not {type_name(kind)}")
        self.seen = True
        if kind in _DELTAS:
            delta = data.get("delta")
            if not isinstance(delta, str):
                raise MessageTypeError(f"{where}.delta must be a str, not {type_name(delta)}")
            self.fragments.setdefault(self._place(data, where, kind), []).append(delta)
        elif kind in _DONES:
            value = data.get(_DONES[kind])
            if not isinstance(value, str):
                raise MessageTypeError(f"{where}.{_DONES[kind]} must be a str, not {type_name(value)}")
            self.fragments[self._place(data, where, kind.replace(".done", ".delta"))] = [value]
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = data.get("item")
            if not isinstance(item, Mapping):
                raise MessageTypeError(f"{where}.item must be an output item, not {type_name(item)}")
            position = require_int(data.get("output_index"), f"{where}.output_index")
            self.items[position] = dict(item)
            if kind.endswith(".done") and data.get(ISSUE_FIELD) is not None:
                self._add_issue(data[ISSUE_FIELD], f"{where}.{ISSUE_FIELD}")
                self.failed.add(item.get("id"))
                del self.items[position]
            if kind.endswith(".done"):  # the whole item: its fragments are in it
                self.fragments = {key: parts for key, parts in self.fragments.items() if key[0] != position}
        elif kind in _PARTS:
            container, key = _PARTS[kind]
            part = data.get("part")
            if not isinstance(part, Mapping):
                raise MessageTypeError(f"{where}.part must be a content part, not {type_name(part)}")
            position = require_int(data.get(key), f"{where}.{key}")
            parts = self._list(data, where, container, position)
            parts[position] = dict(part)
        elif kind == "response.output_text.annotation.added":
            position = require_int(data.get("content_index"), f"{where}.content_index")
            part = self._list(data, where, "content", position)[position]
            part.setdefault("annotations", []).append(data.get("annotation"))
        elif kind in _RESPONSE_EVENTS:
            response = data.get("response")
            if not isinstance(response, Mapping):
                raise MessageTypeError(f"{where}.response must be a Response, not {type_name(response)}")
            self.response = dict(response)
        elif kind == "error":
            raise ConversionError(f"{where}: the stream reported an error: {describe(data.get('message'))}")
        elif not kind.startswith("response."):
            raise ConversionError(f"{where}.type: unknown stream event {describe(kind)}; valid: response.* events "
                                  "and error")

    def _add_issue(self, issue: Any, where: str) -> None:
        if not isinstance(issue, Mapping):
            raise MessageTypeError(f"{where} must be a dict, not {type_name(issue)}")
        span = issue.get("span")
        if not isinstance(span, (list, tuple)) or len(span) != 2:
            raise MessageTypeError(f"{where}.span must be a list of two ints, not {type_name(span)}")
        entry: Dict[str, Any] = {"span": [require_int(span[0], f"{where}.span[0]"), require_int(span[1], f"{where}.span[1]")]}
        for key in ("kind", "message", "raw"):
            if not isinstance(issue.get(key), str):
                raise MessageTypeError(f"{where}.{key} must be a str, not {type_name(issue.get(key))}")
            entry[key] = issue[key]
        self.issues.append({key: entry[key] for key in ("kind", "message", "span", "raw")})

    def _item(self, data: Mapping[str, Any], where: str) -> Tuple[int, Dict[str, Any]]:
        position = require_int(data.get("output_index"), f"{where}.output_index")
        item = self.items.get(position)
        if item is None:
            raise ConversionError(f"{where}: output item {describe(position)} was never added (no response.output_item.added)")
        return position, item

    def _list(self, data: Mapping[str, Any], where: str, container: str, position: int) -> List[Any]:
        """The item's ``container`` list, long enough to hold ``position``."""
        _, item = self._item(data, where)
        parts = item.get(container)
        if not isinstance(parts, list):
            parts = item[container] = list(parts) if isinstance(parts, (list, tuple)) else []
        if position > len(parts):  # parts come in order: a gap is not a stream the API sends
            raise ConversionError(f"{where}: {container} part {describe(position)} of output item "
                                  f"{describe(data.get('output_index'))} comes before part {len(parts)}")
        if position == len(parts):
            parts.append({})
        return parts

    def _place(self, data: Mapping[str, Any], where: str, delta: str) -> _Place:
        """Where the text of a ``delta`` event goes."""
        field, container, part_type = _DELTAS[delta]
        output, _ = self._item(data, where)
        if container is None:
            return output, None, -1, field, None
        key = "summary_index" if container == "summary" else "content_index"
        return output, container, require_int(data.get(key), f"{where}.{key}"), field, part_type

    def messages(self, on_orphan: OrphanPolicy) -> List[Message]:
        if not self.seen:
            raise ConversionError("events: the stream held no event")
        response = self.response or {}
        output = response.get("output")
        if not output:
            for (position, container, part, field, part_type), fragments in self.fragments.items():
                item = self.items[position]
                text = "".join(fragments)
                if container is None:
                    item[field] = text
                    continue
                target = item[container][part] if part < len(item.get(container) or ()) else None
                if not isinstance(target, dict):
                    continue  # a delta for a part that never came: its item holds what there is
                target.setdefault("type", part_type)
                if target["type"] == "output_text":
                    target.setdefault("annotations", [])
                target[field] = text
            output = [item for _, item in sorted(self.items.items())]
        elif not isinstance(output, (list, tuple)):
            raise MessageTypeError(f"events: the response's output must be a list of output items, not "
                                   f"{type_name(output)}")
        else:  # the caller's whole response may still hold the items of failed calls
            output = [item for item in output if not (isinstance(item, Mapping) and item.get("id") in self.failed)]
        if not output:
            if self.issues:
                issue = self.issues[0]
                raise ConversionError(f"events: the reply holds nothing but the tool call the {issue['kind']} "
                                      f"issue covers: {issue['message']}")
            raise ConversionError("events: the streamed response has no output items")
        messages = from_responses({**response, "output": output} if response else output, on_orphan=on_orphan)
        if self.issues and messages:
            last = messages[-1]
            metadata = {**last.metadata, "parse_issues": [*last.metadata.get("parse_issues", ()), *self.issues]}
            messages[-1] = last.replace(metadata=metadata)
        return messages


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
