"""Pure-Python baselines of how inference servers stream tool calls today, from their public
description (vLLM's and SGLang's tool and reasoning parsers).

On every delta each one appends to the text accumulated so far, re-runs its regular expressions
over all of it, and for a JSON call decodes the open call's partial JSON with
``partial-json-parser`` (the PyPI package the servers use), serializes the arguments and sends
the part of the longest stable prefix not sent yet. That re-scan makes the cost per token grow
with the reply: quadratic in total. They produce the same OpenAI-style deltas as
``agentmsg.dialects.StreamParser`` + ``openai_deltas`` on well-formed replies; they are honest
baselines (compiled patterns, no needless copies), not strawmen.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Dict, List, Optional

import partial_json_parser

THINK_END = "</think>"
HERMES_CALL_RE = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", re.DOTALL)
QWEN_FUNCTION_RE = re.compile(r"<function=(.*?)>(.*?)(?:</function>|$)", re.DOTALL)
# A parameter is sent once its value is complete (as vLLM's qwen3_coder parser does).
QWEN_PARAMETER_RE = re.compile(r"<parameter=(.*?)>(.*?)</parameter>", re.DOTALL)
HARMONY_MESSAGE_RE = re.compile(
    r"<\|channel\|>(\w+)(?: to=([^\s<]+))?[^<]*(?:<\|constrain\|>\w+)?<\|message\|>(.*?)"
    r"(<\|end\|>|<\|call\|>|<\|return\|>|$)",
    re.DOTALL,
)


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


class _Server:
    """What every server parser keeps between deltas: the text so far and what was sent."""

    def __init__(self) -> None:
        self.text = ""
        self.sent_reasoning = 0
        self.sent_content = 0
        self.current = -1
        self.name_sent = False
        self.sent_arguments = ""
        self.previous_arguments = ""

    def _stream_arguments(self, index: int, name: Optional[str], arguments: Optional[str], closed: bool,
                          out: List[Dict[str, Any]]) -> None:
        """The header once, then the new part of the arguments' stable prefix."""
        if index != self.current:
            self.current, self.name_sent = index, False
            self.sent_arguments = self.previous_arguments = ""
        if name and not self.name_sent:
            self.name_sent = True
            out.append({"tool_calls": [{"index": index, "id": f"call_{index}", "type": "function",
                                        "function": {"name": name, "arguments": ""}}]})
        if not self.name_sent or arguments is None:
            return
        # An open call's serialization ends with closers the partial decoder added: only the
        # part stable across two deltas is sent.
        if not closed:
            arguments = arguments.rstrip('}]"')
        stable = arguments if closed else _common_prefix(arguments, self.previous_arguments)
        self.previous_arguments = arguments
        if len(stable) > len(self.sent_arguments):
            out.append({"tool_calls": [{"index": index, "function": {"arguments": stable[len(self.sent_arguments):]}}]})
            self.sent_arguments = stable

    def _reasoning(self, delta: str, out: List[Dict[str, Any]]) -> Optional[str]:
        """The DeepSeek-R1 style reasoning parser: everything up to ``</think>`` is reasoning;
        returns the text after it, or None while still reasoning."""
        end = self.text.find(THINK_END)
        if end < 0:
            reasoning = self.text
            if reasoning.startswith("<think>"):
                reasoning = reasoning[len("<think>"):]
            elif "<think>".startswith(reasoning):
                reasoning = ""
            if "<" in reasoning[-len(THINK_END):]:
                reasoning = reasoning[: reasoning.rindex("<")]
            if len(reasoning) > self.sent_reasoning:
                out.append({"reasoning_content": reasoning[self.sent_reasoning:]})
                self.sent_reasoning = len(reasoning)
            return None
        return self.text[end + len(THINK_END):]

    def _content(self, body: str, marker: str, out: List[Dict[str, Any]]) -> None:
        at = body.find(marker)
        # A possible marker start at the end is held back until the next delta decides it.
        content = body if at < 0 else body[:at]
        if at < 0:
            for k in range(max(0, len(content) - len(marker) + 1), len(content)):
                if marker.startswith(content[k:]):
                    content = content[:k]
                    break
        if len(content) > self.sent_content:
            out.append({"content": content[self.sent_content:]})
            self.sent_content = len(content)


class HermesServer(_Server):
    """vLLM's Hermes tool parser with the R1 reasoning parser, as they work on each delta."""

    def feed(self, delta: str) -> List[Dict[str, Any]]:
        self.text += delta
        out: List[Dict[str, Any]] = []
        body = self._reasoning(delta, out)
        if body is None:
            return out
        self._content(body, "<tool_call>", out)
        matches = HERMES_CALL_RE.findall(body)
        # Calls that closed since the last delta are finished before the open one.
        for index in range(max(self.current, 0), len(matches)):
            closed, open_payload = matches[index]
            try:
                call = partial_json_parser.loads(closed or open_payload)
            except Exception:
                continue
            if not isinstance(call, dict):
                continue
            arguments = call.get("arguments")
            text = json.dumps(arguments, ensure_ascii=False) if arguments is not None else None
            self._stream_arguments(index, call.get("name"), text, bool(closed), out)
        return out


class Qwen3CoderServer(_Server):
    """vLLM's qwen3_coder parser: the regular expressions over all the text on every delta."""

    def feed(self, delta: str) -> List[Dict[str, Any]]:
        self.text += delta
        out: List[Dict[str, Any]] = []
        body = self._reasoning(delta, out)
        if body is None:
            return out
        self._content(body, "<tool_call>", out)
        matches = HERMES_CALL_RE.findall(body)
        for index in range(max(self.current, 0), len(matches)):
            closed, open_payload = matches[index]
            function = QWEN_FUNCTION_RE.search(closed or open_payload)
            if function is None:
                continue
            arguments = {}
            for key, value in QWEN_PARAMETER_RE.findall(function.group(2)):
                if value.startswith("\n"):
                    value = value[1:]
                if value.endswith("\n"):
                    value = value[:-1]
                arguments[key] = value
            text = json.dumps(arguments, ensure_ascii=False)
            self._stream_arguments(index, function.group(1), text, bool(closed), out)
        return out


class GptOssServer(_Server):
    """A Harmony parser that re-reads the messages of all the text on every delta."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: Dict[int, int] = {}

    def feed(self, delta: str) -> List[Dict[str, Any]]:
        self.text += delta
        out: List[Dict[str, Any]] = []
        messages = HARMONY_MESSAGE_RE.findall(self.text)
        calls = 0
        for i, (channel, recipient, content, end) in enumerate(messages):
            if recipient:
                if i == len(messages) - 1 or i not in self.sent:
                    try:
                        arguments = partial_json_parser.loads(content) if content.strip() else None
                    except Exception:
                        arguments = None
                    text = json.dumps(arguments, ensure_ascii=False) if arguments is not None else None
                    self._stream_arguments(calls, recipient.removeprefix("functions."), text, bool(end), out)
                    if end:
                        self.sent[i] = len(content)
                calls += 1
                continue
            sent = self.sent.get(i, 0)
            if not end and "<" in content[-10:]:
                content = content[: content.rindex("<")]
            if len(content) > sent:
                key = "reasoning_content" if channel == "analysis" else "content"
                out.append({key: content[sent:]})
                self.sent[i] = len(content)
        return out


SERVERS = {"hermes": HermesServer, "qwen3_coder": Qwen3CoderServer, "gpt_oss": GptOssServer}


def _blocks(body: str, opener: str, closer: Optional[str]) -> List[tuple]:
    """Each call block after ``opener``: its payload and whether its closer (or the next
    opener) was read, re-split from the whole text as a server does on every delta."""
    pieces = body.split(opener)[1:]
    blocks = []
    for k, piece in enumerate(pieces):
        end = piece.find(closer) if closer else -1
        closed = end >= 0 or k < len(pieces) - 1
        blocks.append((piece[:end] if end >= 0 else piece, closed))
    return blocks


def _partial(payload: str) -> Any:
    try:
        return partial_json_parser.loads(payload) if payload.strip() else None
    except Exception:
        return None


def json_calls(opener: str, closer: Optional[str], name_keyed: bool = False, name_key: str = "name"):
    """The calls of JSON blocks (a list of objects, or one object) after ``opener``; a call's
    name is under ``name_key``."""
    def calls(body: str) -> List[tuple]:
        found = []
        for payload, closed in _blocks(body, opener, closer):
            if payload.lstrip().startswith("json"):
                payload = payload.lstrip()[4:]
            value = _partial(payload)
            items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
            if not closed and closer is None:
                # No closing marker: the block is complete once its JSON is.
                try:
                    json.loads(payload)
                    closed = True
                except ValueError:
                    pass
            for k, item in enumerate(items):
                if not isinstance(item, dict) or not item:
                    continue
                if name_keyed:
                    name, arguments = next(iter(item.items()))
                else:
                    name, arguments = item.get(name_key), item.get("arguments", item.get("parameters"))
                text = json.dumps(arguments, ensure_ascii=False) if arguments is not None else None
                found.append((name, text, closed or k < len(items) - 1))
        return found
    return calls


def element_calls(opener: str, closer: str, function: "re.Pattern[str]", parameter: "re.Pattern[str]",
                  strip: bool = False):
    """The calls of XML-element blocks: each parameter sent once its value is complete (and
    stripped of blanks, as the engines read step3's values, with ``strip``)."""
    def calls(body: str) -> List[tuple]:
        found = []
        for payload, closed in _blocks(body, opener, closer):
            for k, match in enumerate(function.finditer(payload)):
                arguments = {}
                for key, value in parameter.findall(match.group(2)):
                    arguments[key] = value.strip() if strip else value
                done = closed or match.group(0).endswith(("</invoke>", "</function>", "</tool_call:opensource>",
                                                          "<|close|>call<|sep|>", "</steptml:invoke>"))
                found.append((match.group(1), json.dumps(arguments, ensure_ascii=False), done))
        return found
    return calls


MAGISTRAL_CALL_RE = re.compile(r"([\w.-]+)\[ARGS\](.*)", re.DOTALL)


def magistral_calls(body: str) -> List[tuple]:
    found = []
    for payload, closed in _blocks(body, "[TOOL_CALLS]", None):
        match = MAGISTRAL_CALL_RE.match(payload)
        if match:
            arguments = _partial(match.group(2))
            text = json.dumps(arguments, ensure_ascii=False) if arguments is not None else None
            if not closed:
                try:
                    json.loads(match.group(2))
                    closed = True
                except ValueError:
                    pass
            found.append((match.group(1), text, closed))
    return found


def lfm2_calls(body: str) -> List[tuple]:
    """vLLM's pythonic way: the whole list read by ``ast`` once it parses (complete calls only)."""
    found = []
    for payload, closed in _blocks(body, "<|tool_call_start|>", "<|tool_call_end|>"):
        try:
            tree = ast.parse(payload.strip(), mode="eval").body
        except SyntaxError:
            continue
        for call in tree.elts if isinstance(tree, ast.List) else []:
            arguments = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
            found.append((call.func.id, json.dumps(arguments, ensure_ascii=False), True))
    return found


class RescanServer(_Server):
    """A server parser for one family of issue 22, as vLLM's and SGLang's work on each delta:
    reasoning up to its closer, content up to the first call marker, then every call found by
    re-reading all the text (the open one decoded with partial-json-parser)."""

    def __init__(self, think: Optional[tuple], marker: str, calls) -> None:
        super().__init__()
        self.think, self.marker, self.calls = think, marker, calls

    def feed(self, delta: str) -> List[Dict[str, Any]]:
        self.text += delta
        out: List[Dict[str, Any]] = []
        body: Optional[str] = self.text
        if self.think:
            opener, closer = self.think
            end = self.text.find(closer)
            reasoning = (self.text if end < 0 else self.text[:end]).removeprefix(opener)
            if end < 0 and opener.startswith(reasoning):
                reasoning = ""
            if end < 0:
                # A possible closer at the end (its longest prefix) is held back until the next
                # delta decides it.
                tail = reasoning[-len(closer):]
                held = next((k for k in range(len(tail)) if closer.startswith(tail[k:])), len(tail))
                reasoning = reasoning[: len(reasoning) - len(tail) + held]
            if len(reasoning) > self.sent_reasoning:
                out.append({"reasoning_content": reasoning[self.sent_reasoning:]})
                self.sent_reasoning = len(reasoning)
            if end < 0:
                return out
            body = self.text[end + len(closer):]
        self._content(body, self.marker, out)
        for index, (name, arguments, closed) in enumerate(self.calls(body)):
            if index >= max(self.current, 0):
                self._stream_arguments(index, name, arguments, closed, out)
        return out


FAMILY_SERVERS = {
    # Command R+: the text up to the line's "Action:", then the fenced list re-read on every delta.
    "command_r": lambda: RescanServer(None, "\nAction:", json_calls("```json", "```", name_key="tool_name")),
    "step3": lambda: RescanServer(("<think>", "</think>"), "<｜tool_calls_begin｜>", element_calls(
        "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>",
        re.compile(r'<steptml:invoke name="(.*?)">(.*?)(?:</steptml:invoke>|$)', re.DOTALL),
        re.compile(r'<steptml:parameter name="(.*?)">(.*?)</steptml:parameter>', re.DOTALL), strip=True)),
    "seed_oss": lambda: RescanServer(("<seed:think>", "</seed:think>"), "<seed:tool_call>", element_calls(
        "<seed:tool_call>", "</seed:tool_call>", QWEN_FUNCTION_RE, QWEN_PARAMETER_RE)),
    "minimax_m2": lambda: RescanServer(("<think>", "</think>"), "<minimax:tool_call>", element_calls(
        "<minimax:tool_call>", "</minimax:tool_call>", re.compile(r'<invoke name="(.*?)">(.*?)(?:</invoke>|$)', re.DOTALL),
        re.compile(r'<parameter name="(.*?)">(.*?)</parameter>', re.DOTALL))),
    "magistral": lambda: RescanServer(("[THINK]", "[/THINK]"), "[TOOL_CALLS]", magistral_calls),
    "granite": lambda: RescanServer(("<think>", "</think>"), "<|tool_call|>", json_calls("<|tool_call|>", None)),
    "lfm2": lambda: RescanServer(("<think>", "</think>"), "<|tool_call_start|>", lfm2_calls),
    "phi4_mini": lambda: RescanServer(None, "<|tool_call|>", json_calls("<|tool_call|>", "<|/tool_call|>")),
    "xlam": lambda: RescanServer(("<think>", "</think>"), "```", json_calls("```", "```")),
    "hunyuan": lambda: RescanServer(("<think>", "</think>"), "<tool_calls>", json_calls("<tool_calls>", "</tool_calls>")),
    "apertus": lambda: RescanServer(("<|inner_prefix|>", "<|inner_suffix|>"), "<|tools_prefix|>",
                                    json_calls("<|tools_prefix|>", "<|tools_suffix|>", name_keyed=True)),
    "jamba": lambda: RescanServer(None, "<tool_calls>", json_calls("<tool_calls>", "</tool_calls>")),
    "internlm2": lambda: RescanServer(None, "<|action_start|><|plugin|>", json_calls("<|action_start|><|plugin|>",
                                                                                      "<|action_end|>")),
    "longcat": lambda: RescanServer(("<longcat_think>", "</longcat_think>"), "<longcat_tool_call>",
                                    json_calls("<longcat_tool_call>", "</longcat_tool_call>")),
    "hy3": lambda: RescanServer(("<think:opensource>", "</think:opensource>"), "<tool_calls:opensource>", element_calls(
        "<tool_calls:opensource>", "</tool_calls:opensource>",
        re.compile(r"<tool_call:opensource>(.*?)<tool_sep:opensource>(.*?)(?:</tool_call:opensource>|$)", re.DOTALL),
        re.compile(r"<arg_key:opensource>(.*?)</arg_key:opensource>\s*<arg_value:opensource>(.*?)"
                   r"</arg_value:opensource>", re.DOTALL))),
    "kimi_k3": lambda: RescanServer(("<|open|>think<|sep|>", "<|close|>think<|sep|>"), "<|open|>tools<|sep|>", element_calls(
        "<|open|>tools<|sep|>", "<|close|>tools<|sep|>",
        re.compile(r'<\|open\|>call tool="(.*?)"[^<]*<\|sep\|>(.*?)(?:<\|close\|>call<\|sep\|>|$)', re.DOTALL),
        re.compile(r'<\|open\|>argument key="(.*?)"[^<]*<\|sep\|>(.*?)<\|close\|>argument<\|sep\|>', re.DOTALL))),
}
SERVERS.update(FAMILY_SERVERS)
