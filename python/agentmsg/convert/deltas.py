"""Parser events as the ``delta`` dicts of OpenAI Chat Completions chunks: what a server streams
to its clients while :class:`agentmsg.StreamParser` reads the model.

    >>> import agentmsg
    >>> parser = agentmsg.StreamParser(dialect="hermes")
    >>> events = parser.feed('Hi <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>')
    >>> [list(delta) for delta in openai_deltas(events + parser.finish())]
    [['content'], ['tool_calls'], ['tool_calls']]
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List

from .._checks import as_list, check_calls
from ..model.results import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart

__all__ = ["openai_deltas"]


def openai_deltas(events: Iterable[object]) -> List[Dict[str, Any]]:
    """The ``delta`` dicts of OpenAI Chat Completions chunks for parser events, in order.

    Text becomes ``content``, thinking ``reasoning_content``, a ``ToolCallStart`` with a name the
    first ``tool_calls`` entry of its call (``index``, ``id``, ``type``, ``function.name``, empty
    ``function.arguments``; Forge's nameless start adds nothing) and each ``ToolCallDelta`` an entry with the next ``arguments``
    fragment. ``ThinkingEnd`` and ``ToolCallEnd`` add nothing. ``index`` is the parser's call
    index (it counts bad calls too, so a bad call leaves a gap).

    >>> from agentmsg import ToolCallDelta, ToolCallStart
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


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
