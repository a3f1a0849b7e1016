"""Server-style baselines (see baseline_dialects.py) for DeepSeek's DSML and Gemma's calls:
on every delta, append, re-run the regular expressions over all the text, convert the open
call to JSON and decode it with ``partial-json-parser``, send the new stable part.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional

import partial_json_parser

from baseline_dialects import Qwen3CoderServer, _Server

DS = "｜DSML｜"
DSML_INVOKE_RE = re.compile(rf'<{DS}invoke name="(.*?)">(.*?)(</{DS}invoke>|$)', re.DOTALL)
# A parameter is sent once its value is complete (as the qwen3_coder baseline does).
DSML_PARAMETER_RE = re.compile(rf'<{DS}parameter name="(.*?)" string="(true|false)">(.*?)</{DS}parameter>', re.DOTALL)
BARE_KEY_RE = re.compile(r'([{,]\s*)([^\s{}\[\],:"]+)\s*:')


class DsmlServer(_Server):
    """A DSML parser (DeepSeek V3.2 / V4) that re-reads all the text on every delta."""

    section = f"<{DS}function_calls>"

    def feed(self, delta: str) -> List[Dict[str, Any]]:
        self.text += delta
        out: List[Dict[str, Any]] = []
        body = self._reasoning(delta, out)
        if body is None:
            return out
        self._content(body, self.section, out)
        at = body.find(self.section)
        if at < 0:
            return out
        matches = DSML_INVOKE_RE.findall(body[at:])
        for index in range(max(self.current, 0), len(matches)):
            name, params, closer = matches[index]
            closed = bool(closer)
            arguments = {k: (v if s == "true" else json.loads(v)) for k, s, v in DSML_PARAMETER_RE.findall(params)}
            self._stream_arguments(index, name, json.dumps(arguments, ensure_ascii=False), closed, out)
        return out


class DsmlV4Server(DsmlServer):
    section = f"<{DS}tool_calls>"


def gemma_json(body: str, quote: str) -> str:
    """Gemma's ``{key:<|"|>text<|"|>,n:5}`` notation as JSON text (an open string left open)."""
    parts = body.split(quote)
    out = []
    for k, part in enumerate(parts):
        if k % 2 == 0:
            out.append(BARE_KEY_RE.sub(r'\1"\2":', part))
        elif k == len(parts) - 1:
            # An open string's end may be the start of its closing quote: held back.
            held = next((n for n in range(min(len(quote) - 1, len(part)), 0, -1) if quote.startswith(part[-n:])), 0)
            out.append(json.dumps(part[:len(part) - held], ensure_ascii=False)[:-1])
        else:
            out.append(json.dumps(part, ensure_ascii=False))
    return "".join(out)


class GemmaServer(_Server):
    """A Gemma 4 call parser that re-reads all the text on every delta."""

    open, close, quote = "<|tool_call>", "<tool_call|>", '<|"|>'
    think_open: Optional[str] = "<|channel>thought"
    think_close = "<channel|>"

    def __init__(self) -> None:
        super().__init__()
        o, c = re.escape(self.open), re.escape(self.close)
        self.call_re = re.compile(rf"{o}call:([^{{]*)(\{{.*?\}}){c}|{o}call:([^{{]*)(\{{.*)", re.DOTALL)

    def _gemma_reasoning(self, out: List[Dict[str, Any]]) -> Optional[str]:
        if self.think_open is None:
            return self.text
        if self.think_open.startswith(self.text):
            return None  # the opener may still be arriving
        if not self.text.startswith(self.think_open):
            return self.text
        end = self.text.find(self.think_close)
        reasoning = self.text[len(self.think_open):] if end < 0 else self.text[len(self.think_open):end]
        if end < 0 and "<" in reasoning[-len(self.think_close):]:
            reasoning = reasoning[: reasoning.rindex("<")]
        if len(reasoning) > self.sent_reasoning:
            out.append({"reasoning_content": reasoning[self.sent_reasoning:]})
            self.sent_reasoning = len(reasoning)
        return None if end < 0 else self.text[end + len(self.think_close):]

    def feed(self, delta: str) -> List[Dict[str, Any]]:
        self.text += delta
        out: List[Dict[str, Any]] = []
        body = self._gemma_reasoning(out)
        if body is None:
            return out
        self._content(body, self.open, out)
        matches = self.call_re.findall(body)
        for index in range(max(self.current, 0), len(matches)):
            closed_name, closed_args, open_name, open_args = matches[index]
            try:
                arguments = partial_json_parser.loads(gemma_json(closed_args or open_args, self.quote))
            except Exception:
                continue
            text = json.dumps(arguments, ensure_ascii=False)
            self._stream_arguments(index, (closed_name or open_name).strip(), text, bool(closed_args), out)
        return out


class FunctionGemmaServer(GemmaServer):
    open, close, quote = "<start_function_call>", "<end_function_call>", "<escape>"
    think_open = None


class CohereServer(_Server):
    """A Command R7B / A action parser that re-reads all the text on every delta."""

    action = "<|START_ACTION|>"

    def feed(self, delta: str) -> List[Dict[str, Any]]:
        self.text += delta
        out: List[Dict[str, Any]] = []
        end = self.text.find("<|END_THINKING|>")
        if "<|START_THINKING|>".startswith(self.text):
            return out  # the opener may still be arriving
        if self.text.startswith("<|START_THINKING|>"):
            reasoning = self.text[len("<|START_THINKING|>"):] if end < 0 else self.text[len("<|START_THINKING|>"):end]
            if end < 0 and "<" in reasoning[-16:]:
                reasoning = reasoning[: reasoning.rindex("<")]
            if len(reasoning) > self.sent_reasoning:
                out.append({"reasoning_content": reasoning[self.sent_reasoning:]})
                self.sent_reasoning = len(reasoning)
            if end < 0:
                return out
        body = self.text[end + len("<|END_THINKING|>"):] if end >= 0 else self.text
        self._content(body, self.action, out)
        # Every action list of the reply, its calls numbered on from the last list's.
        calls = []
        for segment in body.split(self.action)[1:]:
            payload, closed = segment.split("<|END_ACTION|>")[0], "<|END_ACTION|>" in segment
            try:
                items = partial_json_parser.loads(payload)
            except Exception:
                continue
            if isinstance(items, list):
                calls += [(item, closed or k + 1 < len(items)) for k, item in enumerate(items) if isinstance(item, dict)]
        for index in range(max(self.current, 0), len(calls)):
            item, closed = calls[index]
            arguments = item.get("parameters")
            text = json.dumps(arguments, ensure_ascii=False) if arguments is not None else None
            self._stream_arguments(index, item.get("tool_name"), text, closed, out)
        return out


SERVERS_B = {"deepseek_v32": DsmlServer, "deepseek_v4": DsmlV4Server, "gemma4": GemmaServer,
             "functiongemma": FunctionGemmaServer, "step3p5": Qwen3CoderServer,
             "cohere": CohereServer}
