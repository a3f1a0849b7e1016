"""Parser events as OpenAI Responses API stream events: what a server streams to its clients (the
output items of ``client.responses.create(..., stream=True)``) while
:class:`agentmsg.StreamParser` reads the model.

    >>> import agentmsg
    >>> parser = agentmsg.StreamParser(dialect="hermes")
    >>> events = parser.feed('Hi <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>')
    >>> [event["type"] for event in responses_events(events + parser.finish())][:4]
    ['response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done']

``StreamParser.feed_responses(chunk)`` and ``finish_responses()`` give the same events built in
the core, without the parser events.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Set

from .._checks import as_list, check_calls, require_int, type_name
from ..errors import MessageTypeError
from ..model.results import TextDelta, ThinkingDelta, ThinkingEnd, ToolCallDelta, ToolCallEnd, ToolCallStart

__all__ = ["responses_events"]

#: The field of a failed call's ``response.output_item.done`` event that names the parse issue
#: (not an OpenAI field: the ``openai`` SDK keeps unknown fields and clients ignore them;
#: ``from_responses_stream`` reads it).
ISSUE_FIELD = "agentmsg_issue"


def responses_events(events: Any, *, sequence_number: int = 0) -> List[Dict[str, Any]]:
    """The OpenAI Responses API stream events of a reply's output items for parser events, in
    order: every one a dict that validates as the ``openai`` SDK's ``ResponseStreamEvent``.

    The envelope is the caller's: it sends ``response.created`` (and ``response.in_progress``)
    before, and ``response.completed`` with the whole response after. ``sequence_number`` is the
    number of the first event given here (the next after the caller's own); the events are
    numbered on from it, so the caller's ``response.completed`` takes the last one's + 1.

    - Items go out in the order the model wrote them, numbered by ``output_index`` from 0, with
      ids ``msg_<output_index>``, ``rs_<output_index>``, ``fc_<output_index>`` (unique within
      the response, and the same for every chunking).
    - Text (``TextDelta``) goes in a ``message`` item: ``response.output_item.added``,
      ``response.content_part.added`` (an ``output_text`` part, ``content_index`` 0), one
      ``response.output_text.delta`` per ``TextDelta``. The item stays open until another item
      opens or the events end: then ``response.output_text.done``,
      ``response.content_part.done`` and ``response.output_item.done`` carry the whole text. A
      text run after another item opens a new ``message`` item, without the ``"\\n"`` that joins
      runs in the parser's events (the items' texts are joined with it when read).
    - Thinking (``ThinkingDelta``) goes in a ``reasoning`` item in the same way, with a
      ``reasoning_text`` content part and ``response.reasoning_text.delta`` / ``.done`` events
      (not the ``summary`` form: an open model's thinking is its raw reasoning, which is what
      ``reasoning_text`` holds and what open-model servers such as vLLM's Responses endpoint
      send for gpt-oss; a summary is a different, shorter text). ``ThinkingEnd`` closes the
      item, ``status`` ``"incomplete"`` if the block was not closed (an empty block is an empty
      item, as the parse keeps an empty thinking block).
    - A dialect's call (its ``ToolCallStart`` has a name): a ``function_call`` item added at its
      start with ``call_id`` and ``name`` and empty ``arguments``, a
      ``response.function_call_arguments.delta`` per ``ToolCallDelta``, and at its
      ``ToolCallEnd`` ``response.function_call_arguments.done`` and
      ``response.output_item.done`` with the arguments sent.
    - A Forge call (its ``ToolCallStart`` comes before the name: ``name`` None): nothing until
      its ``ToolCallEnd``, then the whole item: added, one arguments delta with the whole
      ``arguments`` (``json.dumps(input, ensure_ascii=False, separators=(",", ":"))``), done.
    - A call that fails (``ToolCallEnd`` with ``error``): its ``function_call`` item ends with
      ``response.output_item.done`` at ``status`` ``"incomplete"`` (no arguments ``.done``), and
      that event has the extra field ``"agentmsg_issue": {"kind", "message", "span", "raw"}``
      (:data:`ISSUE_FIELD`); its item holds the arguments that went out, as a client
      accumulated them (how much did depends on the chunking; the call is void either way).
      If the call had not sent its item (a Forge call, or a call that failed before its name),
      the item is added first with empty ``name`` and ``arguments``, and its item's id as its
      ``call_id`` (every item of a response has its own). A client should run only ``completed`` calls; ``from_responses_stream``
      drops the incomplete item (also from the caller's ``response.completed``, by its id) and
      keeps the issue in ``metadata["parse_issues"]``, as parsing the text does. Not an
      ``error`` event: clients take that one as the whole response failing.
    - Give all of a stream's events: the open item is closed at their end, and a Forge call
      needs its start among them. ``StreamParser.feed_responses`` keeps that state between
      chunks.

    >>> from agentmsg import TextDelta
    >>> [(e["type"], e["sequence_number"]) for e in responses_events([TextDelta("Hi")], sequence_number=2)][2:4]
    [('response.output_text.delta', 4), ('response.output_text.done', 5)]
    """
    writer = _ResponsesWriter(require_int(sequence_number, "sequence_number"))
    for event in as_list(events, "events", "a sequence of parser events"):
        writer.add(event)
    writer.close_current()
    return writer.out


class _ResponsesWriter:
    """The state between events: the open text or reasoning item, the open calls, the numbers."""

    def __init__(self, sequence_number: int) -> None:
        self.out: List[Dict[str, Any]] = []
        self.sequence_number = sequence_number
        self.next_output = 0
        self.text_seen = False
        # the open message or reasoning item: (kind, output index, thinking block or None, fragments)
        self.current: Optional[List[Any]] = None
        self.nameless: Set[int] = set()
        # parser index -> [output index, call id, name, argument fragments], the calls whose item is out
        self.calls: Dict[int, List[Any]] = {}

    def emit(self, event: Dict[str, Any]) -> None:
        event["sequence_number"] = self.sequence_number
        self.sequence_number += 1
        self.out.append(event)

    def open_item(self, item: Dict[str, Any]) -> int:
        self.close_current()
        index = self.next_output
        self.next_output += 1
        prefix = {"message": "msg", "reasoning": "rs", "function_call": "fc"}[item["type"]]
        self.emit({"type": "response.output_item.added", "output_index": index,
                   "item": {"id": f"{prefix}_{index}", **item}})
        return index

    def add(self, event: object) -> None:
        if isinstance(event, TextDelta):
            text = event.text
            if self.current is None or self.current[0] != "message":
                if self.text_seen and text.startswith("\n"):
                    text = text[1:]  # the parser's join of two runs: here they are two items
                index = self.open_item({"type": "message", "role": "assistant", "status": "in_progress", "content": []})
                self.emit({"type": "response.content_part.added", "item_id": f"msg_{index}", "output_index": index,
                           "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})
                self.current = ["message", index, None, []]
            self.text_seen = True
            self.current[3].append(text)
            self.emit({"type": "response.output_text.delta", "item_id": f"msg_{self.current[1]}",
                       "output_index": self.current[1], "content_index": 0, "delta": text, "logprobs": []})
        elif isinstance(event, ThinkingDelta):
            current = self.reasoning(event.index)
            current[3].append(event.text)
            self.emit({"type": "response.reasoning_text.delta", "item_id": f"rs_{current[1]}",
                       "output_index": current[1], "content_index": 0, "delta": event.text})
        elif isinstance(event, ThinkingEnd):
            self.reasoning(event.index)  # an empty block is an empty item, as the parse keeps it
            self.close_current("completed" if event.complete else "incomplete")
        elif isinstance(event, ToolCallStart):
            if event.name is None:
                self.nameless.add(event.index)
            else:
                self.calls[event.index] = self.open_call(event.id or "", event.name, "")
        elif isinstance(event, ToolCallDelta):
            call = self.calls.get(event.index)
            if call is not None:
                call[3].append(event.fragment)
                self.emit({"type": "response.function_call_arguments.delta", "item_id": f"fc_{call[0]}",
                           "output_index": call[0], "delta": event.fragment})
        elif isinstance(event, ToolCallEnd):
            was_nameless = event.index in self.nameless
            self.nameless.discard(event.index)
            call = self.calls.pop(event.index, None)
            if event.error is not None:
                if call is None:  # failed before its item went out: its call_id is its item's id
                    call = self.open_call(f"fc_{self.next_output}", "", "")
                issue = event.error
                self.close_call(call, "incomplete", {"kind": issue.kind, "message": issue.message,
                                                     "span": list(issue.span), "raw": issue.raw})
            elif event.call is not None and was_nameless:
                arguments = json.dumps(event.call.input, ensure_ascii=False, separators=(",", ":"))
                call = self.open_call(event.call.id, event.call.name, arguments)
                self.close_call(call, "completed", None)
            elif call is not None:
                self.close_call(call, "completed", None)
        else:
            raise MessageTypeError(f"events must hold parser events, not {type_name(event)}")

    def reasoning(self, block: int) -> List[Any]:
        """The open reasoning item of thinking block ``block``, opened if it is not."""
        if self.current is None or self.current[0] != "reasoning" or self.current[2] != block:
            index = self.open_item({"type": "reasoning", "summary": [], "content": [], "status": "in_progress"})
            self.emit({"type": "response.content_part.added", "item_id": f"rs_{index}", "output_index": index,
                       "content_index": 0, "part": {"type": "reasoning_text", "text": ""}})
            self.current = ["reasoning", index, block, []]
        return self.current

    def open_call(self, call_id: str, name: str, arguments: str) -> List[Any]:
        index = self.open_item({"type": "function_call", "call_id": call_id, "name": name, "arguments": "",
                                "status": "in_progress"})
        call: List[Any] = [index, call_id, name, []]
        if arguments:
            call[3].append(arguments)
            self.emit({"type": "response.function_call_arguments.delta", "item_id": f"fc_{index}",
                       "output_index": index, "delta": arguments})
        return call

    def close_call(self, call: List[Any], status: str, issue: Optional[Dict[str, Any]]) -> None:
        index, arguments = call[0], "".join(call[3])
        if issue is None:
            self.emit({"type": "response.function_call_arguments.done", "item_id": f"fc_{index}",
                       "output_index": index, "arguments": arguments})
        done: Dict[str, Any] = {"type": "response.output_item.done", "output_index": index, "item": {
            "id": f"fc_{index}", "type": "function_call", "call_id": call[1], "name": call[2],
            "arguments": arguments, "status": status}}
        self.emit(done)
        if issue is not None:
            done[ISSUE_FIELD] = issue

    def close_current(self, status: str = "completed") -> None:
        if self.current is None:
            return
        kind, index, _, fragments = self.current
        self.current = None
        text = "".join(fragments)
        if kind == "message":
            item_id = f"msg_{index}"
            part: Dict[str, Any] = {"type": "output_text", "text": text, "annotations": []}
            self.emit({"type": "response.output_text.done", "item_id": item_id, "output_index": index,
                       "content_index": 0, "text": text, "logprobs": []})
            item: Dict[str, Any] = {"id": item_id, "type": "message", "role": "assistant", "status": status,
                                    "content": [part]}
        else:
            item_id = f"rs_{index}"
            part = {"type": "reasoning_text", "text": text}
            self.emit({"type": "response.reasoning_text.done", "item_id": item_id, "output_index": index,
                       "content_index": 0, "text": text})
            item = {"id": item_id, "type": "reasoning", "summary": [], "content": [part], "status": status}
        self.emit({"type": "response.content_part.done", "item_id": item_id, "output_index": index,
                   "content_index": 0, "part": dict(part)})
        self.emit({"type": "response.output_item.done", "output_index": index, "item": item})


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
