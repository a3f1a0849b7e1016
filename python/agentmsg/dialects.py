"""The dialect names of earlier releases, kept for one release: every dialect is read by
:func:`agentmsg.parse`, :func:`agentmsg.parse_many` and :class:`agentmsg.StreamParser` with
``dialect=`` (one parser; the names here are those same objects), :data:`DIALECTS` lists the
dialects and :class:`~agentmsg.options.Dialect` builds one from parts.

    >>> from agentmsg import dialects
    >>> p = dialects.parse('<think>plan</think>On it.<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
    ...                    dialect="hermes")
    >>> (p.thinking, p.text, p.tool_calls[0].name, p.tool_calls[0].input)
    (['plan'], 'On it.', 'f', {'a': 1})
    >>> dialects.StreamParser is agentmsg.StreamParser
    True

``docs/dialects.md`` states the rules of every dialect.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List

from ._checks import as_list, check_calls
from .model.results import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallHeader, ToolCallStart
from .options import Dialect as Dialect  # re-exported: agentmsg.dialects.Dialect
from .parsing import DIALECTS, StreamParser, parse, parse_many, parse_tool_calls

__all__ = [
    "DIALECTS",
    "Dialect",
    "parse",
    "parse_many",
    "parse_tool_calls",
    "StreamParser",
    "ToolCallHeader",
    "openai_deltas",
]


def openai_deltas(events: Iterable[object]) -> List[Dict[str, Any]]:
    """The ``delta`` dicts of OpenAI Chat Completions chunks for parser events, in order.

    Text becomes ``content``, thinking ``reasoning_content``, a ``ToolCallStart`` with a name the
    first ``tool_calls`` entry of its call (``index``, ``id``, ``type``, ``function.name``, empty
    ``function.arguments``; Forge's nameless start adds nothing) and each ``ToolCallDelta`` an entry with the next ``arguments``
    fragment. ``ThinkingEnd`` and ``ToolCallEnd`` add nothing. ``index`` is the parser's call
    index (it counts bad calls too, so a bad call leaves a gap).

    >>> from agentmsg.dialects import openai_deltas
    >>> openai_deltas([ToolCallStart(0, "call_1", "f"), ToolCallDelta(0, '{"a":1}')])[1]
    {'tool_calls': [{'index': 0, 'function': {'arguments': '{"a":1}'}}]}
    """
    deltas: List[Dict[str, Any]] = []
    for event in as_list(events, "events", "a sequence of parser events"):
        if isinstance(event, TextDelta):
            deltas.append({"content": event.text})
        elif isinstance(event, ThinkingDelta):
            deltas.append({"reasoning_content": event.text})
        elif isinstance(event, ToolCallStart) and event.name is not None:
            call = {"index": event.index, "id": event.id, "type": "function",
                    "function": {"name": event.name, "arguments": ""}}
            deltas.append({"tool_calls": [call]})
        elif isinstance(event, ToolCallDelta):
            deltas.append({"tool_calls": [{"index": event.index, "function": {"arguments": event.fragment}}]})
    return deltas


check_calls(globals())
