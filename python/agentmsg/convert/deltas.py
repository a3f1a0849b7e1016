"""Parser events as the ``delta`` dicts of OpenAI Chat Completions chunks: what a server streams
to its clients while :class:`agentmsg.StreamParser` reads the model.

    >>> import agentmsg
    >>> parser = agentmsg.StreamParser(dialect="hermes")
    >>> events = parser.feed('Hi <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>')
    >>> [list(delta) for delta in openai_deltas(events + parser.finish())]
    [['content'], ['tool_calls'], ['tool_calls']]

``StreamParser.feed_openai(chunk)`` and ``finish_openai()`` give the same deltas built in the
core, without the events.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Set

from .._checks import as_list, check_calls
from ..model.results import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

__all__ = ["openai_deltas"]

#: The key of the delta that tells a client a tool call failed (not an OpenAI field: clients
#: that do not know it ignore it, and ``from_openai_stream`` reads it). Its value is a list of
#: entries with an ``index``, so the ``openai`` SDK's stream accumulator keeps issues apart.
ISSUE_KEY = "agentmsg_issues"


def openai_deltas(events: Iterable[object]) -> List[Dict[str, Any]]:
    """The ``delta`` dicts of OpenAI Chat Completions chunks for parser events, in order.

    - ``TextDelta`` becomes ``content``, ``ThinkingDelta`` ``reasoning_content``.
    - A dialect's call (its ``ToolCallStart`` has a name): the start is the call's first
      ``tool_calls`` entry (``index``, ``id``, ``type``, ``function.name``, empty
      ``function.arguments``) and each ``ToolCallDelta`` an entry with the next ``arguments``
      fragment.
    - A Forge call (its ``ToolCallStart`` comes before the name: ``name`` None): nothing until
      its ``ToolCallEnd``, then one entry with ``id``, ``type``, ``name`` and the whole
      ``arguments`` (``json.dumps(input, ensure_ascii=False, separators=(",", ":"))``); its
      ``ToolCallDelta`` fragments (the raw payload) are not sent. This needs the call's start
      among the events given: give all of a stream's events, or use
      ``StreamParser.feed_openai``, which keeps that state between chunks.
    - ``index`` in ``tool_calls`` is the client's: calls are numbered 0, 1, 2... in the order
      their first entry goes out. The parser's index counts failed calls too, and a gap in the
      indices breaks clients (the ``openai`` SDK's stream accumulator raises ``IndexError``).
    - A call that fails (``ToolCallEnd`` with ``error``): a delta ``{"agentmsg_issues":
      [{"index", "tool_call_index", "kind", "message", "span", "raw"}]}`` (:data:`ISSUE_KEY`).
      ``index`` numbers the stream's issues 0, 1, 2... apart from the calls, so a client that
      merges list entries by ``index`` (the ``openai`` SDK) keeps each issue whole and apart.
      ``tool_call_index`` is the ``tool_calls`` index of the call if it sent an entry (a
      dialect's call may have sent its name and some arguments before it failed), else None; a
      client drops that call (``from_openai_stream`` does, and keeps the issue in
      ``metadata["parse_issues"]``). A client that does not know the key ignores it.
    - ``ThinkingEnd`` and a good call's ``ToolCallEnd`` add nothing.

    >>> from agentmsg import ToolCallDelta, ToolCallStart
    >>> openai_deltas([ToolCallStart(0, "call_1", "f"), ToolCallDelta(0, '{"a":1}')])[1]
    {'tool_calls': [{'index': 0, 'function': {'arguments': '{"a":1}'}}]}
    >>> import agentmsg
    >>> forge = agentmsg.StreamParser()
    >>> events = forge.feed('<tool>{"tool_name": "f", "arguments": {"a": 1.5}}</tool>') + forge.finish()
    >>> openai_deltas(events)[0]["tool_calls"][0]["function"]
    {'name': 'f', 'arguments': '{"a":1.5}'}
    """
    deltas: List[Dict[str, Any]] = []
    nameless: Set[int] = set()
    sent: Dict[int, int] = {}  # parser index -> client index, for the open calls that sent an entry
    calls_sent = issues_sent = 0

    def client_index(index: int) -> int:
        nonlocal calls_sent
        if index not in sent:
            sent[index] = calls_sent
            calls_sent += 1
        return sent[index]

    for event in as_list(events, "events", "a sequence of parser events"):
        if isinstance(event, TextDelta):
            deltas.append({"content": event.text})
        elif isinstance(event, ThinkingDelta):
            deltas.append({"reasoning_content": event.text})
        elif isinstance(event, ToolCallStart):
            if event.name is None:
                nameless.add(event.index)
            else:
                call = {"index": client_index(event.index), "id": event.id, "type": "function",
                        "function": {"name": event.name, "arguments": ""}}
                deltas.append({"tool_calls": [call]})
        elif isinstance(event, ToolCallDelta):
            if event.index not in nameless:
                fragment = {"index": client_index(event.index), "function": {"arguments": event.fragment}}
                deltas.append({"tool_calls": [fragment]})
        elif isinstance(event, ToolCallEnd):
            was_nameless = event.index in nameless
            nameless.discard(event.index)
            tool_call_index = sent.pop(event.index, None)
            if event.error is not None:
                issue = event.error
                deltas.append({ISSUE_KEY: [{"index": issues_sent, "tool_call_index": tool_call_index,
                                            "kind": issue.kind, "message": issue.message,
                                            "span": list(issue.span), "raw": issue.raw}]})
                issues_sent += 1
            elif event.call is not None and was_nameless:
                arguments = json.dumps(event.call.input, ensure_ascii=False, separators=(",", ":"))
                call = {"index": calls_sent, "id": event.call.id, "type": "function",
                        "function": {"name": event.call.name, "arguments": arguments}}
                calls_sent += 1
                deltas.append({"tool_calls": [call]})
    return deltas


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
