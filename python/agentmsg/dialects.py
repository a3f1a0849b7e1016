"""Model dialects: the tool-call and reasoning notations of the model families in :data:`DIALECTS`.

    >>> from agentmsg import dialects
    >>> p = dialects.parse('<think>plan</think>On it.<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
    ...                    dialect="hermes")
    >>> (p.thinking, p.text, p.tool_calls[0].name, p.tool_calls[0].input)
    (['plan'], 'On it.', 'f', {'a': 1})

The dialects: hermes, qwen3_coder, gpt_oss, mistral, llama3_json, pythonic, deepseek_v3,
deepseek_v31, kimi_k2 and glm45, and any :class:`Dialect` built from parts (Forge's own is
:mod:`agentmsg.parsing`). Each dialect runs on a streaming machine in the Rust core; parsing a whole text is feeding it in
one chunk and finishing, so streamed and whole results always agree. Results are the same
:class:`~agentmsg.parsing.Parsed` as Forge's parser gives. ``docs/dialects.md`` states the rules
of every dialect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _core
from . import parsing
from ._checks import as_list, check_calls
from .model.blocks import ToolUseBlock
from .model.results import Parsed, ToolCallHeader
from .options import Dialect as Dialect  # re-exported: agentmsg.dialects.Dialect
from .parsing import TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart, tools_json_text

if TYPE_CHECKING:
    from .options import DialectName

__all__ = ["DIALECTS",
    "parse",
    "parse_many",
    "parse_tool_calls",
    "StreamParser",
    "ToolCallHeader",
    "openai_deltas"]

#: Every dialect name with the models that write it (``forge`` is :mod:`agentmsg.parsing`'s own).
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

assert list(DIALECTS)[1:] == list(_core.dialect_names()), "DIALECTS must list the core's dialects"


def parse(
    text: str,
    *,
    dialect: Union[DialectName, Dialect],
    start_in_thinking: Optional[bool] = None,
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
) -> Parsed:
    """Parses a model reply written in ``dialect`` (a name in :data:`DIALECTS` or a :class:`Dialect`).

    Tool calls become ``tool_calls`` (ids are ``call_`` + 16 hex digits, from the call's place
    and name); bad or cut-off calls become ``errors`` with their raw text; reasoning becomes
    ``thinking``; the rest is ``text`` (each run stripped, runs joined with ``"\\n"``).
    ``start_in_thinking``: the reply starts inside ``<think>`` (the prompt wrote the tag);
    ``None`` detects it (the first thinking tag is ``</think>``). ``tools``: OpenAI tool
    definitions; the text values of qwen3_coder, glm45 and custom element-payload dialects are
    converted to their schema type (a value that does not convert stays a string and is named in
    the call's ``metadata["schema_errors"]``), and a call to a tool not listed is kept with
    ``metadata["unknown_tool"] = True``.

    >>> from agentmsg import dialects
    >>> p = dialects.parse("<tool_call>\\n<function=add>\\n<parameter=a>\\n2\\n</parameter>\\n</function>\\n</tool_call>",
    ...           dialect="qwen3_coder", tools=[{"type": "function", "function": {"name": "add",
    ...           "parameters": {"properties": {"a": {"type": "integer"}}}}}])
    >>> p.tool_calls[0].input
    {'a': 2}
    >>> dialects.parse("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hi!",
    ...       dialect="gpt_oss").text
    'Hi!'
    """
    return parsing.parse(text, dialect=dialect, start_in_thinking=start_in_thinking, tools=tools)


def parse_many(
    texts: Iterable[str],
    *,
    dialect: Union[DialectName, Dialect],
    start_in_thinking: Optional[bool] = None,
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
) -> List[Parsed]:
    """Parses many replies in one call, in parallel with the GIL released; rules of :func:`parse`.

    >>> from agentmsg import dialects
    >>> [p.text for p in dialects.parse_many(["a<think>b</think>", "c"], dialect="hermes")]
    ['a', 'c']
    """
    return parsing.parse_many(texts, dialect=dialect, start_in_thinking=start_in_thinking, tools=tools)


def parse_tool_calls(text: str, **options: Any) -> List[ToolUseBlock]:
    """The good tool calls of ``text`` (``parse(text, **options).tool_calls``).

    >>> from agentmsg import dialects
    >>> dialects.parse_tool_calls('<tool_call>{"name": "f", "arguments": {}}</tool_call>', dialect="hermes")[0].name
    'f'
    """
    return parse(text, **options).tool_calls


class StreamParser(_core.DialectStreamParser):
    """Incremental parser of a streamed reply in one dialect; same rules as :func:`parse`, except
    ``start_in_thinking`` is explicit (default False: a stream cannot look ahead).

    ``feed(chunk)`` returns the events the chunk completes: ``TextDelta``, ``ThinkingDelta``,
    ``ThinkingEnd``, :class:`~agentmsg.parsing.ToolCallStart` with the call's ``id`` and ``name``
    (as soon as the name is complete),
    ``ToolCallDelta`` (argument text; a call's fragments joined are its arguments as compact
    JSON) and ``ToolCallEnd``. ``finish()`` flushes what was held back and reports a cut-off
    call or reasoning block; ``result()`` is the :class:`~agentmsg.parsing.Parsed` of the stream.

    >>> from agentmsg.dialects import StreamParser
    >>> p = StreamParser(dialect="hermes")
    >>> events = p.feed('<tool_call>{"name": "f", "argu') + p.feed('ments": {"a": [1, 2]}}</tool_call>')
    >>> [type(e).__name__ for e in events]
    ['ToolCallStart', 'ToolCallDelta', 'ToolCallEnd']
    >>> events[0].name, events[1].fragment
    ('f', '{"a":[1,2]}')
    >>> p.finish(), p.result().tool_calls[0].input
    ([], {'a': [1, 2]})
    """

    def __new__(
        cls,
        *,
        dialect: Union[DialectName, Dialect],
        start_in_thinking: Optional[bool] = None,
        tools: Optional[Sequence[Mapping[str, Any]]] = None,
    ) -> "StreamParser":
        return super().__new__(
            cls, dialect=dialect, start_in_thinking=start_in_thinking, tools_json=tools_json_text(tools)
        )


def openai_deltas(events: Iterable[object]) -> List[Dict[str, Any]]:
    """The ``delta`` dicts of OpenAI Chat Completions chunks for parser events, in order.

    Text becomes ``content``, thinking ``reasoning_content``, a ``ToolCallStart`` with a name the
    first ``tool_calls`` entry of its call (``index``, ``id``, ``type``, ``function.name``, empty
    ``function.arguments``; Forge's nameless start adds nothing) and each ``ToolCallDelta`` an entry with the next ``arguments``
    fragment. ``ThinkingEnd`` and ``ToolCallEnd`` add nothing. ``index`` is the parser's call
    index (it counts bad calls too, so a bad call leaves a gap).

    >>> from agentmsg.dialects import openai_deltas
    >>> openai_deltas([ToolCallStart(0, "call_1", "f"), ToolCallDelta(0, '{"a":1}')])[1]
    {'tool_calls': [{'index': 0, 'function': {'arguments': '{"a":1}'}}]}
    """
    deltas: List[Dict[str, Any]] = []
    for event in as_list(events, "events", "a sequence of parser events"):
        if isinstance(event, TextDelta):
            deltas.append({"content": event.text})
        elif isinstance(event, ThinkingDelta):
            deltas.append({"reasoning_content": event.text})
        elif isinstance(event, ToolCallStart) and event.name is not None:
            call = {"index": event.index, "id": event.id, "type": "function",
                    "function": {"name": event.name, "arguments": ""}}
            deltas.append({"tool_calls": [call]})
        elif isinstance(event, ToolCallDelta):
            deltas.append({"tool_calls": [{"index": event.index, "function": {"arguments": event.fragment}}]})
    return deltas


check_calls(globals())
