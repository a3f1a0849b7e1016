"""Parsing model text into thinking, visible text and tool calls, whole or streamed (Rust core).

    >>> p = agentmsg.parse('[Let me add]\\n<tool>{"tool_name": "calc", "arguments": {"a": 1}}</tool>\\nDone.')
    >>> (p.thinking, p.tool_calls[0].name, p.text)
    (['Let me add'], 'calc', 'Done.')

One parser for every dialect (:data:`DIALECTS`; Forge's is the default): one state machine per
dialect in the core serves :func:`parse` and :class:`StreamParser`, and parsing a whole text is
feeding it in one chunk and finishing, so the two always agree (given the same explicit
options). The core reads and checks every option. The full rules of Forge's dialect are in the
docstring of :func:`parse`; ``docs/parsing.md`` and ``docs/dialects.md`` have more.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, Iterable, List, NamedTuple, Tuple, TYPE_CHECKING

from . import _core
from .events import TextDelta, ThinkingDelta, ThinkingEnd, ToolCallDelta, ToolCallEnd, ToolCallStart
from .blocks import Block, ToolUseBlock
from ._checks import check_calls, describe, require_bool, require_str, type_name
from .errors import MessageTypeError, ToolCallError
from .options import ParseOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "parse",
    "Parsed",
    "ParseIssue",
    "parse_many",
    "parse_tool_calls",
    "validate_tool_call",
    "format_tool_call",
    "format_tool_result",
    "parse_tool_result",
    "ToolResultText",
    "StreamParser",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingEnd",
    "ToolCallStart",
    "ToolCallDelta",
    "ToolCallEnd",
]


#: Every dialect name with the models that write it (exported as ``agentmsg.DIALECTS``).
DIALECTS: Dict[str, str] = {
    "forge": "Forge's <tool>{\"tool_name\", \"arguments\"}</tool> with <think> tags and bracket lines",
    "hermes": "<tool_call>{\"name\", \"arguments\"}</tool_call> and <think>: Hermes 2 Pro, Qwen 2.5, Qwen 3 and their fine-tunes",
    "qwen3_coder": "<tool_call><function=NAME><parameter=KEY>value</parameter></function></tool_call> and <think>: Qwen3-Coder, Qwen 3.5",
    "gpt_oss": "OpenAI Harmony channels (analysis, commentary to=functions.NAME, final): gpt-oss",
    "mistral": "[TOOL_CALLS] with a JSON list or NAME[ARGS]{...}, and [THINK]: Mistral, Mixtral, Devstral, Magistral",
    "llama3_json": "{\"name\", \"parameters\"} JSON at the reply start or after <|python_tag|>, ';' between: Llama 3.1-3.3",
    "pythonic": "[name(key=literal, ...), ...] Python call lists: Llama 3.2, Llama 4 and other pythonic models",
    "deepseek_v3": "<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME and a ```json block, <think>: DeepSeek V3, R1",
    "deepseek_v31": "<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>, <think>: DeepSeek V3.1, V3.2",
    "kimi_k2": "<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}, ◁think▷ or <think>: Kimi K2",
    "glm45": "<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>, <think>: GLM 4.5, 4.6, 4.7",
}

assert list(DIALECTS) == list(_core.dialect_names()), "DIALECTS must list the core's dialects"


@dataclass(frozen=True, slots=True)
class ParseIssue:
    """A tool call that could not be used, with its raw text (nothing is dropped).

    ``kind`` is one of ``unclosed_tool``, ``invalid_json``, ``invalid_xml``, ``not_an_object``,
    ``missing_field``, ``invalid_field``, ``wrong_format``, ``too_many_calls`` (the rest of the
    text past ``max_calls``). ``span`` holds the character offsets of the whole call, tags
    included, so ``text[span[0]:span[1]] == raw``.

    >>> issue = agentmsg.parse('Hi <tool>{"tool_name": "t"}</tool>').errors[0]
    >>> (issue.kind, issue.message, issue.span, issue.raw)
    ('missing_field', 'missing arguments', (3, 34), '<tool>{"tool_name": "t"}</tool>')
    """

    kind: str
    message: str
    span: Tuple[int, int]
    raw: str


@dataclass(frozen=True, slots=True)
class Parsed:
    """The result of :func:`parse`.

    ``text``: the visible text (text runs joined with ``"\\n"``); ``thinking``: the thinking
    blocks' text; ``tool_calls``: the good calls; ``errors``: a :class:`ParseIssue` per bad call;
    ``blocks``: thinking, text and tool-use blocks in document order (what
    ``Message.from_text`` uses); ``incomplete_thinking``: the text ended inside an unclosed
    thinking tag.

    >>> agentmsg.parse("<think>plan</think>Answer").blocks
    [ThinkingBlock(thinking='plan', signature=None), TextBlock(text='Answer')]
    """

    text: str
    thinking: List[str]
    tool_calls: List[ToolUseBlock]
    errors: List[ParseIssue]
    blocks: List[Block]
    incomplete_thinking: bool = False


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
    parsed: Parsed = _core.parse(text, **options)
    return parsed


def parse_many(texts: Iterable[str], **options: Unpack[ParseOptions]) -> List[Parsed]:
    """Parses many texts in one call, in parallel, with the GIL released; same rules as :func:`parse`
    (``max_calls`` applies to each text).

    >>> [p.text for p in parse_many(["[hm]\\na", "b"])]
    ['a', 'b']
    >>> [p.tool_calls[0].name for p in parse_many(['<tool_call>{"name": "f", "arguments": {}}</tool_call>'], dialect="hermes")]
    ['f']
    """
    parsed: List[Parsed] = _core.parse_many(texts, **options)
    return parsed


#: Incremental parser of streamed model text in any dialect: :func:`parse`'s rules and options,
#: chunk by chunk (the class is the core's; its docstring has the rest).
StreamParser = _core.StreamParser


def parse_tool_calls(text: str, **options: Unpack[ParseOptions]) -> List[ToolUseBlock]:
    """The good tool calls of ``text`` (``parse(text, **options).tool_calls``).

    >>> parse_tool_calls('<tool>{"tool_name": "search", "arguments": {"q": "x"}}</tool>')[0].input
    {'q': 'x'}
    """
    return parse(text, **options).tool_calls


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
    parsed = parse(text)
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


check_calls(globals())
