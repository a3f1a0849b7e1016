"""What the parsers return: :class:`Parsed` and :class:`ParseIssue` for a whole text, and the
events of the stream parsers (:class:`agentmsg.StreamParser` and the dialects').

Frozen slotted dataclasses: the binding fills their slots directly
(``rust/agentmsg-py/src/results.rs``), and their constructors check what a caller passes.

    >>> from agentmsg import StreamParser
    >>> StreamParser().feed("Hi <think>hm</think>")
    [TextDelta(text='Hi'), ThinkingDelta(index=0, text='hm'), ThinkingEnd(index=0, complete=True)]
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, fields
from typing import Callable, Dict, List, Optional, Tuple, Union

from .._checks import check_calls, type_name
from ..errors import MessageError, MessageTypeError
from .blocks import Block, ToolUseBlock

__all__ = ["TextDelta", "ThinkingDelta", "ThinkingEnd", "ToolCallStart", "ToolCallDelta", "ToolCallEnd", "Event", "ParseIssue", "Parsed"]

_INDEX_END = 2**64


def _wrong(event: object, field: str, wants: str, value: object) -> MessageTypeError:
    return MessageTypeError(f"{type(event).__name__}.{field} must be {wants}, not a {type_name(value)}")


def _check_index(event: object, field: str, index: object) -> object:
    """An int from 0 below 2**64, as a plain int (anything with ``__index__``, such as a NumPy
    integer, is read as one; a bool is no index); the value is not shown."""
    if index.__class__ is int and 0 <= index < _INDEX_END:
        return index
    wants = "a non-negative int below 2**64"
    if isinstance(index, bool):
        raise _wrong(event, field, wants, index)
    try:
        number = operator.index(index)  # type: ignore[arg-type]
    except TypeError:
        raise _wrong(event, field, wants, index) from None
    if not 0 <= number < _INDEX_END:
        raise MessageError(f"{type(event).__name__}.{field} must be {wants}, not out of range")
    return int(number)


def _check_text(event: object, field: str, value: object) -> object:
    if not isinstance(value, str):
        raise _wrong(event, field, "a str", value)
    return value


def _check_optional_text(event: object, field: str, value: object) -> object:
    return value if value is None else _check_text(event, field, value)


def _check_bool(event: object, field: str, value: object) -> object:
    if not isinstance(value, bool):
        raise _wrong(event, field, "a bool", value)
    return value


#: The check of a field by its annotation (each returns the value to keep); a field not listed
#: holds any object. ``tests/test_result_classes.py`` holds every other field to a check.
_CHECKS: Dict[str, Callable[[object, str, object], object]] = {
    "int": _check_index, "str": _check_text, "Optional[str]": _check_optional_text, "bool": _check_bool,
}
_UNCHECKED = frozenset({"call", "error"})


class _Event:
    """What every event shares: a caller's values are checked against the fields' annotations
    (the binding fills the slots itself, with values valid by construction)."""

    __slots__ = ()

    def __post_init__(self) -> None:
        for field in fields(self):  # type: ignore[arg-type]
            check = _CHECKS.get(field.type)  # type: ignore[arg-type]
            if check is not None:
                value = getattr(self, field.name)
                kept = check(self, field.name, value)
                if kept is not value:
                    object.__setattr__(self, field.name, kept)


@dataclass(frozen=True, slots=True)
class TextDelta(_Event):
    """Visible text as it arrives. Joined, the ``text`` of all ``TextDelta`` events equals
    ``parse(whole).text`` (a new text run after an element starts with ``"\\n"``).

    >>> TextDelta("Hi").text
    'Hi'
    """

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta(_Event):
    """Thinking text as it arrives; ``index`` numbers the thinking blocks from 0.

    >>> ThinkingDelta(0, "hmm")
    ThinkingDelta(index=0, text='hmm')
    """

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingEnd(_Event):
    """A thinking block ended; ``complete`` is False when the text ended before its closing tag.

    >>> ThinkingEnd(0, True).complete
    True
    """

    index: int
    complete: bool


@dataclass(frozen=True, slots=True)
class ToolCallStart(_Event):
    """Call number ``index`` started (bad calls are numbered too). Forge's stream sends it when a
    ``<tool>`` tag opens, before the name is known (``id`` and ``name`` None); a dialect's
    stream sends it as soon as the call's name is complete, with the call's ``id`` and
    ``name``. ``ToolCallHeader`` is a deprecated alias of this class.

    >>> ToolCallStart(0)
    ToolCallStart(index=0)
    >>> ToolCallStart(0, "call_1", "get_weather").name
    'get_weather'
    """

    index: int
    id: Optional[str] = None
    name: Optional[str] = None

    def __repr__(self) -> str:
        # Forge's start carries no id or name: they are left out rather than shown as None.
        shown = [f"index={self.index!r}"] + [f"{field}={value!r}" for field, value in
                                            (("id", self.id), ("name", self.name)) if value is not None]
        return f"ToolCallStart({', '.join(shown)})"


@dataclass(frozen=True, slots=True)
class ToolCallDelta(_Event):
    """Raw payload text of call ``index`` as it arrives (tags excluded).

    >>> ToolCallDelta(0, '{"tool_name"').fragment
    '{"tool_name"'
    """

    index: int
    fragment: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd(_Event):
    """Call ``index`` ended: ``call`` is its ``ToolUseBlock``, or ``error`` its ``ParseIssue``.

    >>> ToolCallEnd(0, None, None).call is None
    True
    """

    index: int
    call: Optional[ToolUseBlock]
    error: Optional[ParseIssue]


#: Any event of a stream parser.
Event = Union[TextDelta, ThinkingDelta, ThinkingEnd, ToolCallStart, ToolCallDelta, ToolCallEnd]

#: Deprecated name of :class:`ToolCallStart` (a dialect's start event before it carried the name).
ToolCallHeader = ToolCallStart


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


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
