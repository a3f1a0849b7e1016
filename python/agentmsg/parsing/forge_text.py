"""Forge's text forms of one tool call and one tool result: check a call, write it as Forge's
``<tool>`` payload, write a result as the text a Forge agent reads, and read such a text back.

    >>> import agentmsg
    >>> call = agentmsg.ToolUseBlock("c1", "calc", {"a": 1})
    >>> print(agentmsg.format_tool_call(call))
    <tool>
    {
      "server_name": "local",
      "tool_name": "calc",
      "arguments": {
        "a": 1
      }
    }
    </tool>
"""

from __future__ import annotations

import json
from typing import NamedTuple

from .. import _core
from .._checks import check_calls, describe, require_bool, require_str, type_name
from ..errors import MessageTypeError, ToolCallError
from ..model.blocks import ToolUseBlock
from ..model.results import Parsed

__all__ = ["validate_tool_call", "format_tool_call", "ToolResultText", "format_tool_result", "parse_tool_result"]


def validate_tool_call(text: str) -> ToolUseBlock:
    """Checks the tool calls in ``text`` like Forge's ``ValidateToolCall``; returns the first.

    Raises :class:`~agentmsg.ToolCallError` (a ``ValueError``) for: no ``<tool>`` tag, no
    ``</tool>`` tag, invalid JSON (with line and column in the payload), missing ``tool_name``,
    missing ``arguments`` — and for any other reason a call would be a :class:`ParseIssue`.

    >>> validate_tool_call('<tool>{"tool_name": "calc", "arguments": {}}</tool>').name
    'calc'
    >>> validate_tool_call('<tool>{"tool_name": "calc"}</tool>')
    Traceback (most recent call last):
    ...
    agentmsg.errors.ToolCallError: missing arguments (tool call at characters 0-34)
    """
    if not isinstance(text, str):
        raise MessageTypeError(f"text must be a str, not {type_name(text)}")
    if "<tool>" not in text:
        raise ToolCallError("missing <tool> tag")
    parsed: Parsed = _core.parse(text)
    if parsed.errors:
        issue = parsed.errors[0]
        start, end = issue.span
        if issue.kind == "unclosed_tool":
            raise ToolCallError(f"missing </tool> tag (the <tool> at character {start} is not closed)")
        raise ToolCallError(f"{issue.message} (tool call at characters {start}-{end})")
    if not parsed.tool_calls:
        raise ToolCallError("missing <tool> tag outside code fences and thinking")
    return parsed.tool_calls[0]


_RESERVED = ("server_name", "tool_name", "arguments")


def format_tool_call(block: ToolUseBlock) -> str:
    """Renders a tool call in Forge's text form; :func:`parse` reads it back.

    Metadata keys other than ``server_name``, ``tool_name`` and ``arguments`` are written after
    ``arguments``.

    >>> print(format_tool_call(ToolUseBlock("c1", "calculator", {"a": 5})))
    <tool>
    {
      "server_name": "local",
      "tool_name": "calculator",
      "arguments": {
        "a": 5
      }
    }
    </tool>
    """
    if not isinstance(block, ToolUseBlock):
        raise MessageTypeError(f"block must be a ToolUseBlock, not {type_name(block)}")
    payload = {"server_name": block.server_name, "tool_name": block.name, "arguments": block.input}
    for key, value in block.metadata.items():
        if key not in _RESERVED:
            payload[key] = value
    return "<tool>\n" + json.dumps(payload, indent=2, ensure_ascii=False) + "\n</tool>"


class ToolResultText(NamedTuple):
    """A tool result read from Forge's text form by :func:`parse_tool_result`.

    >>> ToolResultText("calc", "8", False).name
    'calc'
    """

    name: str
    result: str
    is_error: bool


_ERROR_PREFIX = "Error: "


def format_tool_result(name: str, result: str, is_error: bool = False) -> str:
    """Renders a tool result as Forge does: ``Tool: name\\nresult`` or ``Tool: name\\nError: result``.

    >>> format_tool_result("calculator", "Result: 8")
    'Tool: calculator\\nResult: 8'
    >>> format_tool_result("calculator", "division by zero", is_error=True)
    'Tool: calculator\\nError: division by zero'
    """
    name = require_str(name, "name")
    result = require_str(result, "result")
    require_bool(is_error, "is_error")
    if not name or "\n" in name:
        raise ToolCallError(f"tool name must be non-empty and on one line: {describe(name)}")
    return f"Tool: {name}\n{_ERROR_PREFIX if is_error else ''}{result}"


def parse_tool_result(text: str) -> ToolResultText:
    """Reads ``Tool: name\\nresult`` back; a result starting with ``Error: `` is an error.

    >>> parse_tool_result("Tool: calculator\\nError: division by zero")
    ToolResultText(name='calculator', result='division by zero', is_error=True)
    """
    if not isinstance(text, str):
        raise MessageTypeError(f"text must be a str, not {type_name(text)}")
    if not text.startswith("Tool: "):
        raise ToolCallError(f"a tool result starts with 'Tool: <name>'; got {text[:30]!r}")
    head, newline, result = text[6:].partition("\n")
    name = head.rstrip("\r")
    if not name:
        raise ToolCallError("tool result has an empty tool name")
    if result.startswith(_ERROR_PREFIX):
        return ToolResultText(name, result[len(_ERROR_PREFIX):], True)
    return ToolResultText(name, result, False)


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
