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

from typing import TYPE_CHECKING, Any, Literal, Mapping, Optional, Sequence, TypedDict, Union

if TYPE_CHECKING:
    from .dialects import Dialect

__all__ = ["ThinkingMode", "ToolFormat", "DialectName", "OrphanPolicy", "TrimStrategy", "ParseOptions"]

ThinkingMode = Literal["auto", "tags", "brackets", "none"]
"""How Forge's parser finds reasoning (``parse(thinking=...)``)."""

ToolFormat = Literal["auto", "json", "xml"]
"""How Forge's parser reads the payload of a ``<tool>`` tag (``parse(tool_format=...)``)."""

DialectName = Literal[
    "forge", "hermes", "qwen3_coder", "gpt_oss", "mistral", "llama3_json", "pythonic", "deepseek_v3",
    "deepseek_v31", "kimi_k2", "glm45",
]
"""The model dialects ``parse``, ``StreamParser`` and ``agentmsg.dialects`` read (``DIALECTS``)."""

OrphanPolicy = Literal["raise", "repair", "keep"]
"""What a ``from_*`` converter does with a tool call or result that lacks its pair."""

TrimStrategy = Literal["last", "first"]
"""Which end of the history ``trim`` keeps: the newest messages or the oldest."""


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
    that type the values a model writes as text. Forge's dialect only: ``thinking`` (default
    ``"auto"``), ``tool_format`` (``"auto"``), ``code_fences`` (True), ``max_calls`` (``None``:
    no limit). :func:`agentmsg.parse` gives the rules of each.
    """

    dialect: Union[DialectName, Dialect]
    start_in_thinking: Optional[bool]
    tools: Optional[Sequence[Mapping[str, Any]]]
    thinking: ThinkingMode
    tool_format: ToolFormat
    code_fences: bool
    max_calls: Optional[int]


#: The names of :class:`ParseOptions`, sorted: what every parser's ``**options`` may hold.
PARSE_OPTION_NAMES = tuple(sorted(ParseOptions.__optional_keys__))
