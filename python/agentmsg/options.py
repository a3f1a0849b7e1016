"""The values each string option accepts, as ``Literal`` types for type checkers.

Functions still check their options at run time (a bad value is a typed ``AgentMsgError``);
these types let a type checker catch the mistake before the run, and let code that passes an
option through a variable say which values it holds::

    >>> from agentmsg import from_openai
    >>> from agentmsg.options import OrphanPolicy
    >>> policy: OrphanPolicy = "repair"
    >>> from_openai([{"role": "user", "content": "Hi"}], on_orphan=policy)[0].text
    'Hi'

``encoding`` options stay ``str``: they take any model name tiktoken maps (``"gpt-4o-2024-08-06"``
and every other dated or fine-tuned name), which no finite list holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, TypedDict, Union

from . import _core
from ._checks import MAX_JSON_DEPTH, check_calls, json_copy
from .dialect_templates import DerivedDialect, chat_template_dialect, response_template_dialect
from .errors import MessageTypeError

__all__ = ["ThinkingMode", "ToolFormat", "DialectName", "OrphanPolicy", "TrimStrategy", "ParseOptions", "Dialect", "Tools"]

ThinkingMode = Literal["auto", "tags", "brackets", "none"]
"""How Forge's parser finds reasoning (``parse(thinking=...)``)."""

ToolFormat = Literal["auto", "json", "xml"]
"""How Forge's parser reads the payload of a ``<tool>`` tag (``parse(tool_format=...)``)."""

DialectName = Literal[
    "forge", "hermes", "qwen3_coder", "gpt_oss", "mistral", "llama3_json", "pythonic", "deepseek_v3",
    "deepseek_v31", "kimi_k2", "glm45",
    "deepseek_v32", "deepseek_v4", "gemma4", "functiongemma", "step3p5", "cohere", "seed_oss", "minimax_m2",
    "magistral", "granite", "lfm2", "phi4_mini", "xlam", "hunyuan", "apertus", "jamba", "internlm2", "longcat",
    "hy3",
    "kimi_k3",
    "step3",
    "command_r",
]
"""The model dialects ``parse``, ``StreamParser`` and ``agentmsg.dialects`` read (``DIALECTS``)."""

OrphanPolicy = Literal["raise", "repair", "keep"]
"""What a ``from_*`` converter does with a tool call or result that lacks its pair."""

TrimStrategy = Literal["last", "first"]
"""Which end of the history ``trim`` keeps: the newest messages or the oldest."""


#: The render budget of each probe of ``Dialect.from_chat_template`` (MiniJinja fuel, output bytes).
_PROBE_FUEL, _PROBE_OUTPUT_BYTES = 50_000_000, 4 << 20

#: Tool definitions compiled once, accepted wherever ``tools=`` is (the class is the core's;
#: its docstring has the rules of equality and of the cache of plain lists).
Tools = _core.Tools


class ParseOptions(TypedDict, total=False):
    """The keyword options of ``parse``, ``parse_many``, ``parse_tool_calls``, ``StreamParser``
    and ``agentmsg.arrow.parse_arrow``, each optional, for code that passes them along::

        >>> from agentmsg import parse
        >>> from agentmsg.options import ParseOptions
        >>> options: ParseOptions = {"dialect": "hermes"}
        >>> parse('<tool_call>{"name": "f", "arguments": {}}</tool_call>', **options).tool_calls[0].name
        'f'

    ``dialect`` (default ``"forge"``): a name in ``agentmsg.DIALECTS`` or an
    ``agentmsg.Dialect``. ``start_in_thinking`` (default ``None``: detected; False for a stream):
    the text starts inside the reasoning. ``tools`` (default ``None``): OpenAI tool definitions
    that type the values a model writes as text, or the same compiled once as :class:`Tools`.
    ``strict`` (default False): read only calls written as the chat template writes them
    (docs/dialects.md, "Strict reading"). ``max_calls`` (``None``: no limit): at most this many
    calls are read, in every dialect. Forge's dialect only: ``thinking`` (default ``"auto"``),
    ``tool_format`` (``"auto"``), ``code_fences`` (True). :func:`agentmsg.parse` gives the rules
    of each.
    """

    dialect: Union[DialectName, Dialect]
    start_in_thinking: Optional[bool]
    tools: Optional[Union[Tools, Sequence[Mapping[str, Any]]]]
    strict: bool
    thinking: ThinkingMode
    tool_format: ToolFormat
    code_fences: bool
    max_calls: Optional[int]


#: The names of :class:`ParseOptions`, sorted: what every parser's ``**options`` may hold.
PARSE_OPTION_NAMES = tuple(sorted(ParseOptions.__optional_keys__))


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    """A dialect from parts, for models that are not listed; accepted wherever ``dialect=`` is.

    A call is ``call_start`` + payload + ``call_end``. ``payload``: ``"json"`` (an object with
    the name under ``name_key`` and the arguments under ``arguments_key``, as hermes),
    ``"qwen3_coder"`` or ``"glm45"`` (those dialects' element forms, typed by ``tools=``).
    ``think_start``/``think_end``: the reasoning markers (both or neither). The rules are
    hermes' (docs/dialects.md): a call opens only where its payload starts, a call ends at the
    first ``call_end`` outside a JSON string or value, a cut-off call is reported. Bad parts
    raise :class:`~agentmsg.MessageError` (empty or equal markers, an unknown payload, keys
    given for an element payload) or :class:`~agentmsg.MessageTypeError` (not a str).

    >>> from agentmsg import dialects
    >>> mine = dialects.Dialect(name="mine", call_start="[CALL]", call_end="[/CALL]", name_key="tool",
    ...                         arguments_key="args", think_start="[THINK]", think_end="[/THINK]")
    >>> p = dialects.parse('[THINK]plan[/THINK]Ok.[CALL]{"tool": "f", "args": {"a": 1}}[/CALL]', dialect=mine)
    >>> (p.thinking, p.text, p.tool_calls[0].name, p.tool_calls[0].input)
    (['plan'], 'Ok.', 'f', {'a': 1})
    >>> dialects.Dialect(name="bad", call_start="<c>", call_end="<c>")
    Traceback (most recent call last):
    ...
    agentmsg.errors.MessageError: dialect 'bad': call_start and call_end must differ (both are '<c>')
    """

    name: str
    call_start: str
    call_end: str
    payload: str = "json"
    name_key: str = "name"
    arguments_key: str = "arguments"
    think_start: Optional[str] = None
    think_end: Optional[str] = None

    def __post_init__(self) -> None:
        _core.check_dialect(self)

    @classmethod
    def from_response_template(cls, spec: Mapping[str, Any]) -> ParseOptions:
        """The parse options of a model's ``response_template`` (the spec transformers >= 5.13
        runs in ``tokenizer.parse_response``; a ``tokenizer_config.json`` dict holding one is
        accepted too): ``{"dialect": ...}``, a named dialect when the markers are exactly its
        own, else a :class:`Dialect`. The spec's ``thinking`` field becomes the reasoning
        markers, its ``tool_calls`` field (literal ``open``/``close``, a JSON object payload) the
        call markers and keys, its implicit ``content`` field the text. Anything else (regex
        markers, other fields, relaxed JSON) raises :class:`~agentmsg.DialectTemplateError`
        saying which field and why (docs/dialects.md, "Dialects from a model's template").

        >>> spec = {"start_anchor": "<|assistant|>", "fields": {
        ...     "thinking": {"open": "[THINK]", "close": "[/THINK]"},
        ...     "tool_calls": {"open": "<call>", "close": "</call>", "repeats": True, "content": "json",
        ...                    "transform": {"type": "function", "function": "{content}"}},
        ...     "content": {}}}
        >>> options = Dialect.from_response_template(spec)
        >>> options["dialect"].call_start
        '<call>'
        >>> from agentmsg import parse
        >>> parse('[THINK]plan[/THINK]<call>{"name": "f", "arguments": {}}</call>', **options).tool_calls[0].name
        'f'
        """
        return _options_of(response_template_dialect(spec))

    @classmethod
    def from_chat_template(cls, template: Any) -> ParseOptions:
        """The parse options of the dialect a Jinja chat ``template`` writes (its source, or an
        ``agentmsg.ChatTemplate``, whose special tokens it renders with): ``{"dialect": ...}``,
        with ``"start_in_thinking": True`` when the generation prompt opens the reasoning. The
        template is rendered in the core (``render_chat``) with probe messages (text, one call,
        two calls, text and a call, reasoning), and the result is the first named dialect that
        reads every reply back as what its message held, else a :class:`Dialect` of the markers
        found around the probes that does (docs/dialects.md, "From a Jinja chat template"). A
        template no dialect reads raises :class:`~agentmsg.DialectTemplateError` showing what it
        wrote for a call; one that does not compile, :class:`~agentmsg.errors.TemplateError`.

        >>> from pathlib import Path
        >>> source = Path("tests/data/chat_templates/Qwen3-Coder.jinja").read_text()
        >>> Dialect.from_chat_template(source)
        {'dialect': 'qwen3_coder'}
        """
        render_dicts = getattr(template, "render_dicts", None)
        if render_dicts is None:
            if not isinstance(template, str):
                raise MessageTypeError(f"template must be a str or a ChatTemplate, not {type(template).__name__}")
            # The probes are a few short messages: a small budget bounds a hostile template.
            native = _core.ChatTemplate(template, _PROBE_FUEL, _PROBE_OUTPUT_BYTES)

            def render(messages: List[Dict[str, Any]], tools: List[Dict[str, Any]], prompt: bool) -> str:
                # Templates add bos_token and eos_token to strings; their text does not matter here.
                return str(native.render(messages, tools, prompt, {"bos_token": "", "eos_token": ""}, 0))
        else:
            def render(messages: List[Dict[str, Any]], tools: List[Dict[str, Any]], prompt: bool) -> str:
                return str(render_dicts(messages, tools, prompt))
        names = [name for name in _core.dialect_names() if name != "forge"]
        return _options_of(chat_template_dialect(render, read_with, names))


def read_with(text: str, dialect: Union[str, Mapping[str, str]], start_in_thinking: bool) -> Any:
    """``text`` parsed by a dialect name or the parts of a :class:`Dialect` (how derived dialects
    are checked against the replies a template writes).

    >>> read_with('<c>{"name": "f"}</c>', {"name": "x", "call_start": "<c>", "call_end": "</c>"}, False).tool_calls[0].name
    'f'
    """
    chosen = dialect if isinstance(dialect, str) else Dialect(**dialect)
    return _core.parse(text, dialect=chosen, start_in_thinking=start_in_thinking)


def _options_of(derived: DerivedDialect) -> ParseOptions:
    """The parse options of a derived dialect."""
    dialect: Union[str, Dialect] = derived.name if derived.name is not None else Dialect(**derived.parts)
    options: ParseOptions = {"dialect": dialect}  # type: ignore[typeddict-item]
    if derived.start_in_thinking:
        options["start_in_thinking"] = True
    return options


def tools_json(tools: Sequence[Mapping[str, Any]]) -> str:
    """The JSON text of OpenAI tool definitions (the ``tools=`` option), which the core reads.

    >>> tools_json([{"name": "f"}])
    '[{"name": "f"}]'
    """
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


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
