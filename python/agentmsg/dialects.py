"""The dialect names of earlier releases, kept for one release: every dialect is read by
:func:`agentmsg.parse`, :func:`agentmsg.parse_many` and :class:`agentmsg.StreamParser` with
``dialect=`` (one parser; the names here are those same objects), :data:`DIALECTS` lists the
dialects, :class:`~agentmsg.options.Dialect` builds one from parts, and
:func:`agentmsg.openai_deltas` (now in :mod:`agentmsg.convert.deltas`) maps events to OpenAI deltas.

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

from .convert.deltas import openai_deltas
from .model.results import ToolCallHeader
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

