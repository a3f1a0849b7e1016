"""Pure-Python baselines for parsing model text, written the way agent frameworks do it today.

Whole text: regular expressions plus ``json.loads`` (Forge's Go code, LangChain-style output
parsers). Streaming: a character-at-a-time state machine that buffers a possible tag and the
payload of an open call (the way Go and Python agent frameworks stream). Both do the same job as
``agentmsg.parse`` / ``agentmsg.StreamParser`` for well-formed input: visible text, thinking
(``[bracket]`` lines, ``<think>`` and ``<thinking>``) and ``<tool>`` JSON calls. They are honest
baselines, not strawmen: compiled patterns, no needless copies, ``"".join`` for buffers.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Tuple

TOOL_RE = re.compile(r"<tool>(.*?)</tool>", re.DOTALL)
THINK_RE = re.compile(r"<(think|thinking)>(.*?)</\1>", re.DOTALL)
BRACKET_LINE_RE = re.compile(r"^[ \t]*\[([^\n]*)\][ \t]*$", re.MULTILINE)
BLANK_LINES_RE = re.compile(r"\n{3,}")


def _tool_call(payload: str, errors: List[str]) -> Dict[str, Any] | None:
    try:
        data = json.loads(payload)
    except json.JSONDecodeError as error:
        errors.append(f"invalid JSON: {error}")
        return None
    if not isinstance(data, dict) or "tool_name" not in data or "arguments" not in data:
        errors.append("missing tool_name or arguments")
        return None
    arguments = data["arguments"]
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    return {
        "name": data["tool_name"],
        "input": arguments,
        "server_name": data.get("server_name", "local"),
    }


def parse_whole(text: str) -> Dict[str, Any]:
    """Parses one model reply: ``{"text", "thinking", "tool_calls", "errors"}``."""
    errors: List[str] = []
    tool_calls = []
    for match in TOOL_RE.finditer(text):
        call = _tool_call(match.group(1), errors)
        if call is not None:
            tool_calls.append(call)
    text = TOOL_RE.sub("", text)
    thinking = [match.group(2).strip() for match in THINK_RE.finditer(text)]
    text = THINK_RE.sub("", text)
    for match in BRACKET_LINE_RE.finditer(text):
        inner = match.group(1)
        # Markdown task boxes and citations are not thoughts.
        if inner.strip() not in ("", "x", "X") and not inner.isdigit():
            thinking.append(inner.strip())
    text = BRACKET_LINE_RE.sub(
        lambda m: m.group(0) if m.group(1).strip() in ("", "x", "X") or m.group(1).isdigit() else "",
        text,
    )
    text = BLANK_LINES_RE.sub("\n\n", text).strip()
    return {"text": text, "thinking": thinking, "tool_calls": tool_calls, "errors": errors}


_TAGS = ("<tool>", "<think>", "<thinking>")
_CLOSERS = {"<tool>": "</tool>", "<think>": "</think>", "<thinking>": "</thinking>"}


class StreamParserPy:
    """Character-at-a-time streaming parser; events are ``(kind, value)`` tuples.

    Kinds: ``"text"``, ``"thinking"``, ``"tool_start"``, ``"tool_end"`` (value: the call dict or
    an error string). A possible tag prefix is held back until it is decided.
    """

    def __init__(self) -> None:
        # "text", "tag" (reading a possible tag), "line" (a line that may be a [thought]),
        # "tool", "think"
        self.state = "text"
        self.line_start = True
        self.line: List[str] = []
        self.pending: List[str] = []  # a possible tag being read
        self.body: List[str] = []  # payload of the open tool call or thinking tag
        self.closer = ""
        self.tool_index = 0
        self.events: List[Tuple[str, Any]] = []
        self.text: List[str] = []

    def _flush_text(self) -> None:
        if self.text:
            self.events.append(("text", "".join(self.text)))
            self.text = []

    def feed(self, chunk: str) -> List[Tuple[str, Any]]:
        for char in chunk:
            state = self.state
            if state == "text":
                if char == "<":
                    self.state = "tag"
                    self.pending = [char]
                elif char == "[" and self.line_start:
                    self.state = "line"
                    self.line = [char]
                else:
                    self.text.append(char)
                self.line_start = char == "\n"
            elif state == "line":
                if char == "\n":
                    self._end_line()
                    self.text.append(char)
                    self.line_start = True
                else:
                    self.line.append(char)
            elif state == "tag":
                self.pending.append(char)
                candidate = "".join(self.pending)
                if candidate in _TAGS:
                    self._flush_text()
                    self.closer = _CLOSERS[candidate]
                    self.body = []
                    if candidate == "<tool>":
                        self.state = "tool"
                        self.events.append(("tool_start", self.tool_index))
                    else:
                        self.state = "think"
                elif not any(tag.startswith(candidate) for tag in _TAGS):
                    self.text.append(candidate)
                    self.state = "text"
            else:
                self.body.append(char)
                # The obvious check: does the buffered body now end with the closing tag?
                if char == ">" and "".join(self.body[-len(self.closer):]) == self.closer:
                    body = "".join(self.body[: -len(self.closer)])
                    if state == "tool":
                        errors: List[str] = []
                        call = _tool_call(body, errors)
                        self.events.append(("tool_end", call if call is not None else errors[0]))
                        self.tool_index += 1
                    else:
                        self.events.append(("thinking", body.strip()))
                    self.state = "text"
        self._flush_text()
        events, self.events = self.events, []
        return events

    def _end_line(self) -> None:
        line = "".join(self.line)
        match = BRACKET_LINE_RE.fullmatch(line)
        inner = match.group(1).strip() if match else ""
        if match and inner not in ("", "x", "X") and not inner.isdigit():
            self._flush_text()
            self.events.append(("thinking", inner))
        else:
            self.text.append(line)
        self.state = "text"

    def finish(self) -> List[Tuple[str, Any]]:
        if self.state == "line":
            self._end_line()
        elif self.state == "tag":
            self.text.extend(self.pending)
        elif self.state == "tool":
            self.events.append(("tool_end", "unclosed <tool>"))
        elif self.state == "think":
            self.events.append(("thinking", "".join(self.body).strip()))
        self.state = "text"
        self._flush_text()
        events, self.events = self.events, []
        return events
