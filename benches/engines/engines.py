"""vLLM's and SGLang's current streaming parsers, driven as their servers drive them.

Runs only in the engines' own venv (``benches/engines/setup.sh``), where ``shims.install()``
stands in for torch and CUDA. Each stream is what a server holds for one request:

- vLLM 0.33: the ``Parser`` class ``ParserManager.get_parser`` composes for the
  ``--tool-call-parser`` / ``--reasoning-parser`` pair, built per request with the request's
  tools, and ``parse_delta(delta_text, delta_token_ids, request, finished=...)`` per delta
  (what ``ChatStreamProcessor.step`` calls);
- SGLang 0.5.23: ``ReasoningParser(model_type).parse_stream_chunk`` and then, on the normal
  text, ``FunctionCallParser(tools, tool_call_parser).parse_stream_chunk`` (the detector's
  ``parse_streaming_increment``), ``parse_stream_end`` at the end (as its chat serving does).

The tokenizer is a stand-in: its vocabulary holds the dialect's marker strings (the parsers
look their ids up when built); the deltas' text is the real o200k tokenization and their ids
are fake ids that are none of the markers', so markers are found in the text, as ours are.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import shims  # noqa: E402

shims.install(("IPython",))

import logging  # noqa: E402

logging.disable(logging.WARNING)

# dialect -> (vLLM tool parser, vLLM reasoning parser, harmony)
VLLM = {
    "hermes": ("hermes", "qwen3", False),
    "qwen3_coder": ("qwen3_coder", "qwen3", False),
    "mistral": ("mistral", "mistral", False),
    "llama3_json": ("llama3_json", None, False),
    "pythonic": ("pythonic", None, False),
    "deepseek_v3": ("deepseek_v3", "deepseek_r1", False),
    "deepseek_v31": ("deepseek_v31", "deepseek_v3", False),
    "gpt_oss": ("openai", "openai_gptoss", True),
    "kimi_k2": ("kimi_k2", "kimi_k2", False),
    "glm45": ("glm45", "glm45", False),
}
# dialect -> (SGLang tool_call_parser, SGLang reasoning parser)
SGLANG = {
    "hermes": ("hermes", "qwen3"),
    "qwen3_coder": ("qwen3_coder", "qwen3"),
    "mistral": ("mistral", "mistral"),
    "llama3_json": ("llama3", None),
    "pythonic": ("pythonic", None),
    "deepseek_v3": ("deepseekv3", "deepseek-r1"),
    "deepseek_v31": ("deepseekv31", "deepseek-v3"),
    "gpt_oss": ("gpt-oss", "gpt-oss"),
    "kimi_k2": ("kimi_k2", "kimi_k2"),
    "glm45": ("glm45", "glm45"),
}

MARKERS = [
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>",
    "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]", "<|python_tag|>", "<|eom_id|>", "<|eot_id|>",
    "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>",
    "<｜end▁of▁sentence｜>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
    "<|tool_call_end|>", "<|tool_call_argument_begin|>", "◁think▷", "◁/think▷", "<arg_key>", "</arg_key>",
    "<arg_value>", "</arg_value>", "<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>",
    "<|constrain|>", "<|endoftext|>", "<|im_end|>", "<|user|>", "<|observation|>",
]
FAKE_ID = 1_000_000  # delta ids start here: no marker has one


class StandInTokenizer:
    """What the parsers ask of a tokenizer when they are built: a vocabulary with the markers."""

    def __init__(self, markers: Sequence[str] = MARKERS) -> None:
        self.vocab = {text: i + 1 for i, text in enumerate(markers)}
        self.all_special_tokens = list(markers)
        self.all_special_ids = [self.vocab[t] for t in markers]
        self.name_or_path = "stand-in"
        self.eos_token_id = 0

    def get_vocab(self) -> Dict[str, int]:
        return dict(self.vocab)

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self.vocab.get(tokens)
        return [self.vocab.get(t) for t in tokens]

    def encode(self, text: str, add_special_tokens: bool = False) -> List[int]:
        if text in self.vocab:
            return [self.vocab[text]]
        return [FAKE_ID]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        inverse = {v: k for k, v in self.vocab.items()}
        return "".join(inverse.get(i, "") for i in ids)

    def __len__(self) -> int:
        return len(self.vocab)

    def __bool__(self) -> bool:
        return True


# Markers in no vocabulary: the engine-based parsers then find them in the text (a marker
# with an id in the vocabulary is matched only by that id). Parsers that refuse to be built
# without their markers' ids get the vocabulary with them.
TOKENIZER = StandInTokenizer(())
TOKENIZER_WITH_MARKERS = StandInTokenizer()


def vllm_parser_class(dialect: str) -> Any:
    from vllm.parser.parser_manager import ParserManager

    tool, reasoning, harmony = VLLM[dialect]
    return ParserManager.get_parser(tool_parser_name=tool, reasoning_parser_name=reasoning,
                                    enable_auto_tools=True, model_name="stand-in", is_harmony=harmony)


def vllm_request(tools: List[Dict[str, Any]]) -> Any:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(messages=[{"role": "user", "content": "Go."}], model="stand-in",
                                 tools=tools, tool_choice="auto", stream=True)


class VllmStream:
    """One request's parser in vLLM's serving path: built per request, ``parse_delta`` per delta."""

    def __init__(self, parser_class: Any, request: Any) -> None:
        self.request = request
        try:
            self.parser = parser_class(TOKENIZER, request.tools)
        except (ValueError, RuntimeError, KeyError, TypeError):
            self.parser = parser_class(TOKENIZER_WITH_MARKERS, request.tools)
        self.ids = [FAKE_ID]
        # The server passes the rendered prompt's ids with every delta; ours ends in no reasoning
        # marker, so the reply starts as content or opens its own reasoning.
        self.prompt = [FAKE_ID]

    def feed(self, text: str, finished: bool = False) -> Any:
        return self.parser.parse_delta(delta_text=text, delta_token_ids=self.ids, request=self.request,
                                       prompt_token_ids=self.prompt, finished=finished)


def sglang_tools(tools: List[Dict[str, Any]]) -> Any:
    from sglang.srt.entrypoints.openai.protocol import Tool

    return [Tool.model_validate(t) for t in tools]


class SglangStream:
    """One request in SGLang's chat serving: the reasoning parser, then the function-call
    parser on the normal text; ``finish`` flushes the detector."""

    def __init__(self, dialect: str, tools: Any) -> None:
        from sglang.srt.function_call.function_call_parser import FunctionCallParser
        from sglang.srt.parser.reasoning_parser import ReasoningParser

        tool, reasoning = SGLANG[dialect]
        self.reasoning = ReasoningParser(reasoning, stream_reasoning=True, tool_call_parser_active=True) \
            if reasoning else None
        self.calls = FunctionCallParser(tools, tool)

    def feed(self, text: str) -> Tuple[str, str, list]:
        thinking = ""
        if self.reasoning is not None:
            thinking, text = self.reasoning.parse_stream_chunk(text)
            thinking = thinking or ""
        if not text:
            return thinking, "", []
        normal, calls = self.calls.parse_stream_chunk(text)
        return thinking, normal, calls

    def finish(self) -> Tuple[str, list]:
        return self.calls.parse_stream_end()


def vllm_summary(deltas: List[Any]) -> Tuple[str, str, List[Tuple[str, Any]]]:
    """(content, reasoning, [(name, arguments)]) as a client assembles them."""
    content, reasoning, calls = "", "", {}
    for d in deltas:
        if d is None:
            continue
        content += d.content or ""
        reasoning += d.reasoning or ""
        for call in d.tool_calls or []:
            entry = calls.setdefault(call.index, ["", ""])
            if call.function is not None:
                entry[0] += call.function.name or ""
                entry[1] += call.function.arguments or ""
    return content, reasoning, [(n, _loads(a)) for n, a in (calls[i] for i in sorted(calls))]


def sglang_summary(results: List[Tuple[str, str, list]]) -> Tuple[str, str, List[Tuple[str, Any]]]:
    content, reasoning, calls = "", "", {}
    for thinking, normal, items in results:
        reasoning += thinking
        content += normal
        for item in items:
            entry = calls.setdefault(item.tool_index, ["", ""])
            entry[0] += item.name or ""
            entry[1] += item.parameters or ""
    return content, reasoning, [(n, _loads(a)) for n, a in (calls[i] for i in sorted(calls))]


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def run_vllm(dialect: str, request: Any, chunks: Sequence[str], out: Optional[list] = None) -> None:
    """One request streamed: the parser built (with the request's tools), every delta parsed,
    the last marked finished. ``request`` comes from ``vllm_request`` (the server has it)."""
    stream = VllmStream(vllm_parser_class(dialect), request)
    feed = stream.feed
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        delta = feed(chunk, i == last)
        if out is not None:
            out.append(delta)


def run_sglang(dialect: str, tools: Any, chunks: Sequence[str], out: Optional[list] = None) -> None:
    stream = SglangStream(dialect, sglang_tools(tools))
    feed = stream.feed
    for chunk in chunks:
        result = feed(chunk)
        if out is not None:
            out.append(result)
    normal, calls = stream.finish()
    if out is not None:
        out.append(("", normal, calls))
