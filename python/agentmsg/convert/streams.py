"""Streamed replies to messages: the final :class:`Message` of an OpenAI or Anthropic stream.

:func:`from_openai_stream` reads the ``openai`` SDK's ``ChatCompletionChunk`` objects (or their
dicts); :func:`from_anthropic_stream` the ``anthropic`` SDK's stream events. Both take what the
SDK's stream gives (``client.chat.completions.create(..., stream=True)``,
``client.messages.create(..., stream=True)`` or the events of ``client.messages.stream(...)``);
their ``a``-prefixed twins :func:`afrom_openai_stream` and :func:`afrom_anthropic_stream` are
awaited over the async clients' streams (``async for``), and take sync iterables too. The
result is what :func:`agentmsg.from_openai` or :func:`agentmsg.from_anthropic` reads from the
whole reply, so a streamed and a whole reply give the same message.

With ``dialect=`` (a name of ``agentmsg.DIALECTS``, or ``"forge"``) the reply's text also runs
through :class:`agentmsg.StreamParser`, so tool calls the model wrote in its text and the
provider's native tool calls both end as tool calls: each text block is replaced by the blocks
its text parses into (thinking, text, calls, in order), followed by the native calls. A call the
parser could not read is kept with its raw text in ``metadata["parse_issues"]`` (``kind``,
``message``, ``span``, ``raw``), never dropped.

    >>> import agentmsg
    >>> chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "It is "}}]},
    ...           {"choices": [{"index": 0, "delta": {"content": "42."}, "finish_reason": "stop"}]}]
    >>> m = agentmsg.from_openai_stream(chunks)
    >>> m.text, m.finish_reason
    ('It is 42.', 'stop')
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterable,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from .._checks import check_calls, describe, require_int, type_name
from ..errors import ConversionError, MessageTypeError
from ..model.blocks import TextBlock
from ..model.message import Message
from ..parsing import StreamParser
from ..readers._fields import build, plain_data
from ..readers.anthropic import messages_from_anthropic
from ..readers.openai import message_from_openai
from .deltas import ISSUE_KEY
from .stream_items import async_items as _async_items, item_field as _field, stream_object as _object, \
    sync_items as _sync_items

if TYPE_CHECKING:
    from ..options import Dialect, DialectName

    DialectOption = Union[DialectName, Dialect]

__all__ = ["from_openai_stream", "afrom_openai_stream", "from_anthropic_stream", "afrom_anthropic_stream"]

Tools = Optional[Sequence[Mapping[str, Any]]]


def from_openai_stream(chunks: Iterable[Any], dialect: Optional[DialectOption] = None, *, tools: Tools = None,
                       choice: int = 0) -> Message:
    """The message an OpenAI Chat Completions stream gives: the text, ``reasoning_content``
    (or ``reasoning``), refusal and ``delta.tool_calls`` of its chunks joined, calls accumulated
    by ``index`` (the first id, name and argument fragments joined as the ``openai`` SDK joins
    them), with the choice's ``finish_reason``.

    ``chunks`` are ``ChatCompletionChunk`` objects or their dicts. ``choice`` picks the choice
    of a request with ``n > 1``. Chunks without choices (the usage chunk) carry no message.
    ``dialect`` and ``tools`` parse the text (see the module). A delta holding
    ``agentmsg_issues`` (what :func:`agentmsg.openai_deltas` sends for a tool call that failed)
    drops the call of each entry's ``tool_call_index`` and keeps the issue in
    ``metadata["parse_issues"]``, as parsing the text keeps one.

    >>> chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [
    ...               {"index": 0, "id": "c1", "type": "function", "function": {"name": "calc", "arguments": '{"a":'}}]}}]},
    ...           {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": " 1}"}}]},
    ...                         "finish_reason": "tool_calls"}]}]
    >>> from_openai_stream(chunks).tool_calls[0].input
    {'a': 1}
    """
    reply = _OpenAIReply(dialect, tools, choice)
    for index, chunk in enumerate(_sync_items(chunks, "chunks", "afrom_openai_stream")):
        reply.add(chunk, index)
    return reply.message()


async def afrom_openai_stream(chunks: Union[AsyncIterable[Any], Iterable[Any]], dialect: Optional[DialectOption] = None, *,
                              tools: Tools = None, choice: int = 0) -> Message:
    """:func:`from_openai_stream` over an async iterable (``AsyncOpenAI``'s stream), or a sync one.

    >>> import asyncio
    >>> async def stream():
    ...     yield {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}
    >>> asyncio.run(afrom_openai_stream(stream())).text
    'Hi'
    """
    reply = _OpenAIReply(dialect, tools, choice)
    index = 0
    async for chunk in _async_items(chunks, "chunks"):
        reply.add(chunk, index)
        index += 1
    return reply.message()


def from_anthropic_stream(events: Iterable[Any], dialect: Optional[DialectOption] = None, *, tools: Tools = None) -> Message:
    """The message an Anthropic Messages stream gives: ``message_start``, then each content
    block from its ``content_block_start`` with its deltas (``text_delta``, ``thinking_delta``
    and ``signature_delta``, ``input_json_delta`` joined and read as the call's input),
    ``message_delta``'s stop reason and usage; read as :func:`agentmsg.from_anthropic` reads
    the whole response (its id, model, stop reason and usage in ``metadata["anthropic"]``).

    ``events`` are the SDK's stream event objects or their dicts; the extra events of
    ``client.messages.stream(...)`` (``text``, ``thinking``, ``input_json``...) repeat the deltas
    and are skipped, as are ``ping`` events; an ``error`` event is a ConversionError.

    >>> events = [{"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant",
    ...                                                 "content": [], "model": "claude"}},
    ...           {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ...           {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
    ...           {"type": "content_block_stop", "index": 0}, {"type": "message_stop"}]
    >>> from_anthropic_stream(events).text
    'Hello'
    """
    reply = _AnthropicReply(dialect, tools)
    for index, event in enumerate(_sync_items(events, "events", "afrom_anthropic_stream")):
        reply.add(event, index)
    return reply.message()


async def afrom_anthropic_stream(events: Union[AsyncIterable[Any], Iterable[Any]], dialect: Optional[DialectOption] = None, *,
                                 tools: Tools = None) -> Message:
    """:func:`from_anthropic_stream` over an async iterable (``AsyncAnthropic``'s stream), or a sync one.

    >>> import asyncio
    >>> async def stream():
    ...     yield {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "Hi"}}
    >>> asyncio.run(afrom_anthropic_stream(stream())).text
    'Hi'
    """
    reply = _AnthropicReply(dialect, tools)
    index = 0
    async for event in _async_items(events, "events"):
        reply.add(event, index)
        index += 1
    return reply.message()


# -- reading the items ---------------------------------------------------------------------------


def _undeclared(item: Any, name: str) -> Any:
    """A field the SDK's class does not declare (``reasoning_content``): pydantic keeps it aside."""
    if type(item) is not dict:
        extra = getattr(item, "__pydantic_extra__", None)
        if extra is not None:
            return extra.get(name)
    return _field(item, name)


def _optional_str(value: Any, where: str) -> Optional[str]:
    if value is None or value.__class__ is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    raise MessageTypeError(f"{where} must be a str or None, not {type_name(value)}")


def _text_field(item: Any, name: str, where: str) -> Optional[str]:
    """The str or None at field ``name`` of ``item``; anything else is an error naming
    ``where.name`` (built only then: a stream reads several fields per chunk)."""
    value = _field(item, name)
    if value is None or type(value) is str:
        return value
    return _optional_str(value, f"{where}.{name}")


def _text_parser(dialect: DialectOption, tools: Tools) -> Any:
    """A :class:`agentmsg.StreamParser` of ``dialect``; a bad dialect or tools fail here, before
    the stream is read."""

    return StreamParser(dialect=dialect, tools=tools)


def _parsed(parser: Any) -> Any:
    parser.finish()
    return parser.result()


def _check_tools(dialect: Optional[DialectOption], tools: Tools) -> None:
    if dialect is None and tools is not None:
        raise MessageTypeError("tools: an option of dialect parsing; give dialect= too")


def _with_parsed_text(message: Message, parsed: List[Any], where: str) -> Message:
    """``message`` with its k-th text block replaced by the blocks of ``parsed[k]`` (the parse
    of that block's text), and the parse issues in ``metadata["parse_issues"]``."""
    results = iter(parsed)
    blocks: List[Any] = []
    issues: List[Dict[str, Any]] = []
    for block in message.content:
        if type(block) is TextBlock:
            result = next(results)
            blocks.extend(result.blocks)
            issues.extend({"kind": issue.kind, "message": issue.message, "span": list(issue.span),
                           "raw": issue.raw} for issue in result.errors)
        else:
            blocks.append(block)
    if not issues and (blocks == list(message.content) or not blocks):
        return message  # nothing parsed out (a reply of only blank text stays as written)
    metadata = {**message.metadata, "parse_issues": issues} if issues else message.metadata
    if not blocks:
        raise ConversionError(f"{where}: the reply holds nothing but text the {issues[0]['kind']} parse "
                              f"issue covers: {issues[0]['message']}")
    return build(where, lambda: message.replace(content=blocks, metadata=metadata))


# -- OpenAI ------------------------------------------------------------------------------------


class _OpenAIReply:
    """The parts of one choice of a Chat Completions stream, joined as they arrive."""

    def __init__(self, dialect: Optional[DialectOption], tools: Tools, choice: int) -> None:
        _check_tools(dialect, tools)
        self.parser = None if dialect is None else _text_parser(dialect, tools)
        self.choice = require_int(choice, "choice")
        self.role: Optional[str] = None
        self.content: List[str] = []
        self.reasoning: List[str] = []
        self.refusal: List[str] = []
        self.calls: Dict[int, Dict[str, Any]] = {}  # index -> {"id", "type", "name": [...], "arguments": [...]}
        self.function_call: Dict[str, List[str]] = {}
        self.finish_reason: Optional[str] = None
        self.seen = False
        self.issues: List[Dict[str, Any]] = []  # agentmsg_issues entries: calls that failed
        self.failed: Set[int] = set()  # the tool_calls indices the issues name

    def add(self, chunk: Any, index: int) -> None:
        where = f"chunks[{index}]"
        choices = _field(_object(chunk, where), "choices")
        if choices is None:
            return
        if not isinstance(choices, (list, tuple)):
            raise MessageTypeError(f"{where}.choices must be a list, not {type_name(choices)}")
        for j, choice in enumerate(choices):
            cwhere = f"{where}.choices[{j}]"
            position = _field(_object(choice, cwhere), "index")
            if (j if position is None else require_int(position, f"{cwhere}.index")) != self.choice:
                continue
            self.seen = True
            reason = _text_field(choice, "finish_reason", cwhere)
            if reason is not None:
                self.finish_reason = reason
            delta = _field(choice, "delta")
            if delta is not None:
                self._add_delta(_object(delta, f"{cwhere}.delta"), f"{cwhere}.delta")

    def _add_delta(self, delta: Any, where: str) -> None:
        role = _text_field(delta, "role", where)
        if role is not None and self.role is None:
            self.role = role
        text = _text_field(delta, "content", where)
        if text:
            self.content.append(text)
            if self.parser is not None:
                self.parser.feed(text)
        for key in ("reasoning_content", "reasoning"):
            reasoning = _undeclared(delta, key)
            if reasoning is not None and type(reasoning) is not str:
                reasoning = _optional_str(reasoning, f"{where}.{key}")
            if reasoning:
                self.reasoning.append(reasoning)
        refusal = _text_field(delta, "refusal", where)
        if refusal:
            self.refusal.append(refusal)
        calls = _field(delta, "tool_calls")
        if calls is not None:
            if not isinstance(calls, (list, tuple)):
                raise MessageTypeError(f"{where}.tool_calls must be a list, not {type_name(calls)}")
            for k, call in enumerate(calls):
                self._add_call(_object(call, f"{where}.tool_calls[{k}]"), k, f"{where}.tool_calls[{k}]")
        issues = _undeclared(delta, ISSUE_KEY)
        if issues is not None:
            if not isinstance(issues, (list, tuple)):
                raise MessageTypeError(f"{where}.{ISSUE_KEY} must be a list, not {type_name(issues)}")
            for k, issue in enumerate(issues):
                self._add_issue(_object(issue, f"{where}.{ISSUE_KEY}[{k}]"), f"{where}.{ISSUE_KEY}[{k}]")
        legacy = _field(delta, "function_call")
        if legacy is not None:
            self._add_function(_object(legacy, f"{where}.function_call"), self.function_call, f"{where}.function_call")

    def _add_call(self, call: Any, position: int, where: str) -> None:
        index = _field(call, "index")
        index = position if index is None else require_int(index, f"{where}.index")
        entry = self.calls.setdefault(index, {"id": None, "type": None, "name": [], "arguments": []})
        call_id = _text_field(call, "id", where)
        if call_id and entry["id"] is None:
            entry["id"] = call_id  # ids come whole; some servers repeat them in every fragment
        kind = _text_field(call, "type", where)
        if kind is not None:
            entry["type"] = kind
        function = _field(call, "function")
        if function is not None:
            self._add_function(_object(function, f"{where}.function"), entry, f"{where}.function")

    def _add_issue(self, issue: Any, where: str) -> None:
        """A call that failed (an entry of ``openai_deltas``' ``agentmsg_issues``): the call of
        its ``tool_call_index`` (if it sent an entry) is dropped, the issue kept as the text parse
        keeps one."""
        tool_call_index = _field(issue, "tool_call_index")
        if tool_call_index is not None:
            self.failed.add(require_int(tool_call_index, f"{where}.tool_call_index"))
        span = _field(issue, "span")
        if not isinstance(span, (list, tuple)) or len(span) != 2:
            raise MessageTypeError(f"{where}.span must be a list of two ints, not {type_name(span)}")
        self.issues.append({"kind": _text_field(issue, "kind", where),
                            "message": _text_field(issue, "message", where),
                            "span": [require_int(span[0], f"{where}.span[0]"), require_int(span[1], f"{where}.span[1]")],
                            "raw": _text_field(issue, "raw", where)})

    @staticmethod
    def _add_function(function: Any, entry: Dict[str, Any], where: str) -> None:
        for key in ("name", "arguments"):
            fragment = _text_field(function, key, where)
            if fragment:
                entry.setdefault(key, []).append(fragment)

    def message(self) -> Message:

        if not self.seen:
            raise ConversionError(f"chunks: the stream held no chunk of choice {describe(self.choice)}")
        text = "".join(self.content)
        data: Dict[str, Any] = {"role": self.role or "assistant", "content": text or None}
        if self.reasoning:
            data["reasoning_content"] = "".join(self.reasoning)
        if self.refusal:
            data["refusal"] = "".join(self.refusal)
        calls = [entry for index, entry in sorted(self.calls.items()) if index not in self.failed]
        if calls:
            data["tool_calls"] = [
                {"id": entry["id"], "type": entry["type"] or "function",
                 "function": {"name": "".join(entry["name"]), "arguments": "".join(entry["arguments"])}}
                for entry in calls
            ]
        if self.function_call:
            data["function_call"] = {key: "".join(parts) for key, parts in self.function_call.items()}
        fields: Dict[str, Any] = {"finish_reason": self.finish_reason} if self.finish_reason is not None else {}
        if self.issues and not (text or calls or self.reasoning or self.refusal or self.function_call):
            issue = self.issues[0]
            raise ConversionError(f"chunks: the reply holds nothing but the tool call the {issue['kind']} "
                                  f"issue covers: {issue['message']}")
        message = message_from_openai(data, "chunks", **fields)
        if self.parser is not None and text:
            message = _with_parsed_text(message, [_parsed(self.parser)], "chunks")
        if not self.issues:
            return message
        metadata = {**message.metadata, "parse_issues": [*message.metadata.get("parse_issues", ()), *self.issues]}
        return build("chunks", lambda: message.replace(metadata=metadata))


# -- Anthropic -----------------------------------------------------------------------------------

# Events of the SDK's MessageStream that repeat what the raw events carry.
_DERIVED_EVENTS = frozenset(("text", "thinking", "signature", "input_json", "citation", "ping", "message_stop"))
# delta type -> (the block types it extends, its field, the block field it extends)
_DELTA_FIELDS = {
    "text_delta": (("text",), "text", "text"),
    "thinking_delta": (("thinking",), "thinking", "thinking"),
    "signature_delta": (("thinking",), "signature", "signature"),
    "input_json_delta": (("tool_use", "server_tool_use", "mcp_tool_use"), "partial_json", "input"),
}


class _AnthropicReply:
    """The response of an Anthropic stream, built block by block as the events arrive."""

    def __init__(self, dialect: Optional[DialectOption], tools: Tools) -> None:
        _check_tools(dialect, tools)
        if dialect is not None:
            _text_parser(dialect, tools)  # checks the options before the stream is read
        self.dialect, self.tools = dialect, tools
        self.response: Dict[str, Any] = {}
        self.blocks: Dict[int, Dict[str, Any]] = {}
        # The deltas' fragments, by (block, field), joined at the end (joining as they come would
        # copy the text so far on every delta: quadratic in a long reply).
        self.fragments: Dict[Tuple[int, str], List[str]] = {}
        self.parsers: Dict[int, Any] = {}  # a parser per text block, with a dialect

    def add(self, event: Any, index: int) -> None:
        if _field(event, "type") == "content_block_delta":  # most events: read with the fewest steps
            position = _field(event, "index")
            if type(position) is not int or position not in self.blocks:
                position = self._index(event, f"events[{index}]")  # (raises the error that fits)
            delta = _field(event, "delta")
            if type(delta) is not dict and not hasattr(delta, "model_dump"):
                delta = _object(delta, f"events[{index}].delta")
            self._add_delta(position, delta, index)
            return
        where = f"events[{index}]"
        kind = _optional_str(_field(_object(event, where), "type"), f"{where}.type")
        if kind in _DERIVED_EVENTS:
            return
        if kind == "message_start":
            message = plain_data(_field(event, "message"))
            if not isinstance(message, Mapping):
                raise MessageTypeError(f"{where}.message must be a Message or its dict, not {type_name(message)}")
            self.response = {key: value for key, value in message.items() if key != "content"}
        elif kind == "content_block_start":
            position = self._index(event, where)
            block = plain_data(_field(event, "content_block"))
            if not isinstance(block, Mapping):
                raise MessageTypeError(f"{where}.content_block must be a content block, not {type_name(block)}")
            self.blocks[position] = dict(block)
            if block.get("type") == "text" and self.dialect is not None:
                self.parsers[position] = _text_parser(self.dialect, self.tools)
                if block.get("text"):
                    self.parsers[position].feed(block["text"])
        elif kind == "content_block_stop":
            self._index(event, where)
        elif kind == "message_delta":
            delta = plain_data(_field(event, "delta")) or {}
            if not isinstance(delta, Mapping):
                raise MessageTypeError(f"{where}.delta must be a message delta or its dict, not {type_name(delta)}")
            for key in ("stop_reason", "stop_sequence"):
                if delta.get(key) is not None:
                    self.response[key] = delta[key]
            usage = plain_data(_field(event, "usage"))
            if isinstance(usage, Mapping):
                known = self.response.get("usage")
                self.response["usage"] = {**(known if isinstance(known, Mapping) else {}), **usage}
        elif kind == "error":
            error = plain_data(_field(event, "error")) or {}
            detail = error.get("message") if isinstance(error, Mapping) else None
            raise ConversionError(f"{where}: the stream reported an error: {describe(detail)}")
        else:
            raise ConversionError(f"{where}.type: unknown stream event {describe(kind)}; valid: message_start, "
                                  "content_block_start, content_block_delta, content_block_stop, message_delta, "
                                  "message_stop, ping, error")

    def _index(self, event: Any, where: str) -> int:
        position = require_int(_field(event, "index"), f"{where}.index")
        if _field(event, "type") != "content_block_start" and position not in self.blocks:
            raise ConversionError(f"{where}: content block {position} was never started (no content_block_start)")
        return position

    def _add_delta(self, position: int, delta: Any, index: int) -> None:
        block = self.blocks[position]
        kind = _field(delta, "type")
        spec = _DELTA_FIELDS.get(kind) if type(kind) is str else None
        if spec is None or block.get("type") not in spec[0]:
            self._other_delta(block, delta, f"events[{index}]")
            return
        _, field, key = spec
        fragment = _field(delta, field)
        if type(fragment) is not str:
            fragment = _optional_str(fragment, f"events[{index}].delta.{field}") or ""
        parts = self.fragments.get((position, key))
        if parts is None:
            parts = self.fragments[position, key] = []
        parts.append(fragment)
        if fragment and key == "text" and position in self.parsers:
            self.parsers[position].feed(fragment)

    @staticmethod
    def _other_delta(block: Dict[str, Any], delta: Any, where: str) -> None:
        """A citation, or the typed error for a delta that is unknown or of another block type."""
        kind = _optional_str(_field(delta, "type"), f"{where}.delta.type")
        if kind == "citations_delta":
            block.setdefault("citations", []).append(plain_data(_field(delta, "citation")))
            return
        if kind not in _DELTA_FIELDS:
            raise ConversionError(f"{where}.delta.type: unknown delta {describe(kind)}; valid: text_delta, "
                                  "thinking_delta, signature_delta, input_json_delta, citations_delta")
        raise ConversionError(f"{where}: a delta of type {describe(kind)} for a {describe(block.get('type'))} block")

    def message(self) -> Message:
        if not self.blocks and not self.response:
            raise ConversionError("events: the stream held no message")
        for (position, key), parts in self.fragments.items():
            block = self.blocks[position]
            if key != "input":
                block[key] = (block.get(key) or "") + "".join(parts)
                continue
            raw = "".join(parts)
            try:
                block["input"] = json.loads(raw) if raw.strip() else {}
            except (ValueError, RecursionError) as error:
                raise ConversionError(
                    f"events: content block {position} ({describe(block.get('name'))}): its input_json_delta "
                    f"fragments are not JSON (was the stream cut off?): {error}") from None
        self.fragments = {}
        content = [block for _, block in sorted(self.blocks.items())]
        turn = {**self.response, "role": self.response.get("role", "assistant"), "content": content}
        messages = messages_from_anthropic(turn, "events", {})
        if not messages:
            raise ConversionError("events: the streamed message has no content blocks")
        message = messages[0]
        if not self.parsers:
            return message
        parsed = [_parsed(self.parsers[p]) for p, block in sorted(self.blocks.items()) if block.get("type") == "text"]
        return _with_parsed_text(message, parsed, "events")


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
