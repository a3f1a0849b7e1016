"""``agentmsg.events`` is now :mod:`agentmsg.model.results`; this path re-exports the stream
events for one release (and so keeps pickles of them loading).

    >>> from agentmsg.events import TextDelta
    >>> TextDelta("hi")
    TextDelta(text='hi')
"""

from .model.results import (  # noqa: F401
    Event, TextDelta, ThinkingDelta, ThinkingEnd, ToolCallDelta, ToolCallEnd, ToolCallHeader, ToolCallStart,
)

__all__ = [
    "TextDelta", "ThinkingDelta", "ThinkingEnd", "ToolCallStart", "ToolCallDelta", "ToolCallEnd", "Event",
]
