"""Parsing model text into thinking, visible text and tool calls, whole or streamed (Rust core).

    >>> p = agentmsg.parse('[Let me add]\\n<tool>{"tool_name": "calc", "arguments": {"a": 1}}</tool>\\nDone.')
    >>> (p.thinking, p.tool_calls[0].name, p.text)
    (['Let me add'], 'calc', 'Done.')

One state machine in the core serves :func:`parse` and :class:`StreamParser`: parsing a whole
text is feeding it in one chunk and finishing, so the two always agree (given the same explicit
options). The full rules are in the docstring of :func:`parse`; ``docs/parsing.md`` has more.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence

from .. import _core
from .._checks import MAX_JSON_DEPTH, check_calls, json_copy, type_name, unexpected_keyword
from ..errors import MessageTypeError
from ..model.blocks import ToolUseBlock
from ..model.results import (
    Parsed as Parsed, ParseIssue as ParseIssue, TextDelta as TextDelta, ThinkingDelta as ThinkingDelta,
    ThinkingEnd as ThinkingEnd, ToolCallDelta as ToolCallDelta, ToolCallEnd as ToolCallEnd,
    ToolCallStart as ToolCallStart,
)
from ..options import PARSE_OPTION_NAMES, ParseOptions
from ..options import Dialect

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "parse",
    "parse_many",
    "parse_tool_calls",
    "StreamParser",
]


def parse(text: str, **options: Unpack[ParseOptions]) -> Parsed:
    """Parses model text into thinking, visible text and tool calls.

    **Dialect.** ``dialect`` names how the model writes calls and reasoning (``agentmsg.DIALECTS``
    lists them; see :mod:`agentmsg.dialects` and docs/dialects.md). The rules below are those of
    ``"forge"``, the default; another dialect takes ``start_in_thinking`` and ``tools`` and no
    other option.

    **Tools.** ``tools`` (OpenAI tool definitions) types the values a model writes as text: in
    Forge's XML payloads each text value of ``arguments`` is converted to its parameter's schema
    type (integer, number, boolean, object, array; ``null`` for any of them), as qwen3_coder's
    are. A value that does not convert stays text and is named in the call's
    ``metadata["schema_errors"]``; a call to a tool not in ``tools`` is kept with
    ``metadata["unknown_tool"] = True``. ``None`` (default): values stay as written.

    **Tool calls.** ``<tool>`` opens a call anywhere outside a code fence, a thinking block or
    another call. The payload ends at the first ``</tool>`` that is not inside a JSON string
    (JSON payload) or a CDATA section (XML payload); a payload whose first non-blank character is
    ``<`` is XML elements, otherwise JSON. ``tool_format="json"`` or ``"xml"`` accepts only that
    one (the other becomes an error). A valid payload has ``tool_name`` (non-empty string),
    ``arguments`` (an object; a JSON string holding an object is decoded) and optionally
    ``server_name`` (default ``"local"``); other keys go to the block's ``metadata``. In XML,
    an element holding text is a string (entities and CDATA decoded), one holding elements is an
    object, a repeated name is a list; attributes are an error. A call that is unclosed,
    invalid or lacks a field becomes a :class:`ParseIssue` in ``errors`` with its raw text; the
    rest of the text still parses. Recovery: if a JSON call never closes because one of its
    strings never ends (so it swallowed the ``</tool>``), the call ends at the first ``</tool>``
    inside its strings instead and the text after it is parsed normally (calls in that text
    end at their first ``</tool>``). A stream learns this only at ``finish()``.

    **Ids** are ``call_`` + 16 hex digits of a word-wise FNV-1a-64 hash (``h = (h ^ w) *
    0x100000001b3 mod 2**64`` from ``h = 0xcbf29ce484222325``) over 64-bit words: the call's index
    among all ``<tool>`` tags of the text, then the payload's UTF-8 bytes as little-endian 8-byte
    words (the last zero-padded). The same text always gives the same ids.

    **Thinking.** ``thinking="auto"`` recognizes tags and bracket lines, ``"tags"`` and
    ``"brackets"`` only those, ``"none"`` neither.

    - Tags: ``<think>…</think>`` and ``<thinking>…</thinking>`` (exact lowercase); the content
      is not parsed further and is stripped of surrounding whitespace; an empty pair gives an
      empty thinking block. An unclosed tag is thinking to the end of the text and sets
      ``incomplete_thinking``. A closing tag with nothing open is text.
    - ``start_in_thinking=True``: the text starts inside thinking (the prompt wrote the opening
      tag) up to the first ``</think>`` or ``</thinking>``. ``None`` (default) detects it: when
      the first thinking tag of the text is a closing tag, the text is parsed again with
      ``True``.
    - Bracket lines: a line whose first non-blank character (space, tab) is ``[`` and whose
      bracket closes (nesting counted) at its last non-blank character is one thought: the
      inside, stripped. Not thoughts: ``[x](y)``, ``[x]: url``, ``[a] and [b]`` (the bracket
      closes early), ``[ ]``, ``[x]``, ``[]``, citations (only digits, commas, hyphens,
      spaces: ``[1]``, ``[2, 3]``), JSON arrays (``["a", 1]``), and lines in code fences,
      thinking tags or tool payloads. The newline ending a thought belongs to it.

    **Call limit.** ``max_calls=n`` parses at most ``n`` calls (good or bad; calls in thinking
    or fences do not count): the ``<tool>`` of call ``n + 1`` and everything after it become one
    :class:`ParseIssue` of kind ``too_many_calls`` whose ``raw`` is that rest, unparsed. A server
    bounds what one reply costs this way; nothing is lost. ``None`` (default): no limit.

    **Code fences.** A line starting (after blanks) with three or more backticks or tildes opens
    a fence; a line with at least as many of the same character and nothing else closes it.
    Inside, nothing is parsed. ``code_fences=False`` turns this off.

    **Text.** Each run of text between two elements (thinking, call, bad call) is stripped of
    ASCII whitespace at both ends; empty runs are dropped; ``text`` joins the runs with
    ``"\\n"``. A leading byte order mark is dropped. Lone surrogates are kept as they are.

    >>> p = parse("[Let me check]\\nIt is 42.")
    >>> (p.thinking, p.text)
    (['Let me check'], 'It is 42.')
    >>> parse("Plan done.</think>The answer is 4.").thinking
    ['Plan done.']
    >>> parse("See [the docs](https://x.y)\\n```\\n<tool>not a call</tool>\\n```").tool_calls
    []
    >>> [e.kind for e in parse("<tool></tool>" * 1000, max_calls=2).errors]
    ['invalid_json', 'invalid_json', 'too_many_calls']
    """
    if not isinstance(text, str):
        raise MessageTypeError(f"text must be a str, not {type_name(text)}")
    if not options:
        return _core.parse(text)
    parsed: Parsed = _core.parse(text, **core_arguments(options, "parse"))
    return parsed


def parse_many(texts: Iterable[str], **options: Unpack[ParseOptions]) -> List[Parsed]:
    """Parses many texts in one call, in parallel, with the GIL released; same rules as :func:`parse`
    (``max_calls`` applies to each text).

    >>> [p.text for p in parse_many(["[hm]\\na", "b"])]
    ['a', 'b']
    >>> [p.tool_calls[0].name for p in parse_many(['<tool_call>{"name": "f", "arguments": {}}</tool_call>'], dialect="hermes")]
    ['f']
    """
    if isinstance(texts, str):
        raise MessageTypeError("texts must be a sequence of str, not a single str")
    if not options:
        return _core.parse(texts)
    return _core.parse(texts, **core_arguments(options, "parse_many"))


def tools_json_text(tools: Optional[Sequence[Mapping[str, Any]]]) -> Optional[str]:
    """The JSON text of OpenAI tool definitions for the core, or None."""
    if tools is None:
        return None
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise MessageTypeError(f"tools must be a list of tool definitions, not {type(tools).__name__}")
    # Read by iterating: list() would trust the sequence's __len__ to reserve room.
    definitions = [tool for tool in tools]
    try:
        text: Optional[str] = json.dumps(definitions)
    except (TypeError, ValueError, RecursionError):
        text = None
    # Nesting reaches MAX_JSON_DEPTH (the depth the core's JSON reader reads) only with as many
    # brackets. Then, or when json.dumps failed, the one JSON checker names what is wrong by its
    # path (a value that is not JSON, nesting too deep), recursing no deeper than that limit.
    if text is None or text.count("{") + text.count("[") >= MAX_JSON_DEPTH:
        copy = json_copy(definitions, "tools")
        text = text if text is not None else json.dumps(copy)
    return text


_FORGE_DEFAULTS = {"thinking": "auto", "tool_format": "auto", "code_fences": True, "max_calls": None}


def core_arguments(options: Mapping[str, Any], caller: str) -> Dict[str, Any]:
    """The keyword arguments of the core parser that ``options`` (a
    :class:`~agentmsg.options.ParseOptions`) name, ``dialect`` among them unless it is Forge's.
    The core reads them all in one place (each option's type and value, the dialect's name,
    Forge's options refused by another dialect), so every parser names a bad one alike."""
    unknown = options.keys() - PARSE_OPTION_NAMES
    if unknown:
        raise unexpected_keyword(caller, min(unknown), PARSE_OPTION_NAMES)
    arguments = dict(options)
    dialect = arguments.pop("dialect", None)
    tools = arguments.pop("tools", None)
    if tools is not None:
        arguments["tools_json"] = tools_json_text(tools)
    # None is the default, as for every option.
    if dialect is None or (isinstance(dialect, str) and str.__eq__(dialect, "forge")):
        return arguments

    if not isinstance(dialect, (str, Dialect)):
        raise MessageTypeError(f"dialect must be a str or an agentmsg.Dialect, not {type_name(dialect)}")
    # A Forge option given at its default is not 'given' to another dialect (the core refuses the
    # others, naming them). Compared only with a value of the default's own type: a hostile
    # object's == is never called.
    for name, default in _FORGE_DEFAULTS.items():
        value = arguments.get(name)
        if value is None or (type(value) is type(default) and value == default):
            arguments.pop(name, None)
    arguments["dialect"] = dialect
    return arguments


class StreamParser(_core.StreamParser):
    """Incremental parser of streamed model text: :func:`parse`'s rules, chunk by chunk.

    ``StreamParser(**options)`` reads Forge's dialect with :func:`parse`'s options (except that
    ``start_in_thinking`` defaults to False: a stream cannot look ahead);
    ``StreamParser(dialect=..., tools=...)`` gives the parser of another dialect
    (:class:`agentmsg.dialects.StreamParser`). ``feed(chunk)`` returns the events the chunk
    completes (``None`` is an empty chunk), ``finish()`` the last ones; the events joined give
    what :func:`parse` gives for the whole text, and ``result()`` is that :class:`Parsed`
    (of the stream so far before ``finish()``). After ``finish()`` the next ``feed`` starts a
    new stream.

    >>> p = StreamParser()
    >>> p.feed("Hi <thi") + p.feed("nk>hmm</think>")
    [TextDelta(text='Hi'), ThinkingDelta(index=0, text='hmm'), ThinkingEnd(index=0, complete=True)]
    >>> p.finish(), p.result().thinking
    ([], ['hmm'])
    >>> h = StreamParser(dialect="hermes")
    >>> [type(e).__name__ for e in h.feed('<tool_call>{"name": "f", "arguments": {}}</tool_call>')]
    ['ToolCallStart', 'ToolCallDelta', 'ToolCallEnd']
    """

    def __new__(cls, **options: Unpack[ParseOptions]) -> Any:
        if not options:
            return super().__new__(cls)
        arguments = core_arguments(options, "StreamParser")
        if "dialect" not in arguments:
            return super().__new__(cls, **arguments)
        from ..dialects import StreamParser as DialectStreamParser

        return _core.DialectStreamParser.__new__(DialectStreamParser, **arguments)


def parse_tool_calls(text: str, **options: Unpack[ParseOptions]) -> List[ToolUseBlock]:
    """The good tool calls of ``text`` (``parse(text, **options).tool_calls``).

    >>> parse_tool_calls('<tool>{"tool_name": "search", "arguments": {"q": "x"}}</tool>')[0].input
    {'q': 'x'}
    """
    return parse(text, **options).tool_calls


check_calls(globals())
