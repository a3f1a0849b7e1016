"""Tool-call arguments as JSON text: the one rule for writing a call's ``input`` as a provider's
``arguments`` string and reading it back. Text that is not a JSON object is kept aside in the
call's metadata (``raw_arguments``) and reported, never lost.

    >>> from agentmsg import ToolUseBlock
    >>> dump_arguments(ToolUseBlock("c1", "calc", {"a": 1}), "call")
    '{"a": 1}'
    >>> load_arguments('{"a": 1}', "call")
    ({'a': 1}, {})
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional, Tuple, Union

from .._checks import bounded, shown
from ..errors import ConversionError, MessageTypeError, warn_caller
from .blocks import ServerToolUseBlock, ToolUseBlock

__all__ = []


Where = Union[str, Callable[[], str]]


def json_text(value: Any, where: Where) -> str:
    """``value`` as JSON text that any JSON reader accepts.

    NaN and infinities (not JSON), values JSON has no type for (bytes, sets, objects), keys that
    are not strings, circular values and nesting deeper than Python's recursion limit are
    refused with a typed error naming ``where`` (a str, or a function that makes it, called only
    for an error), never written as invalid JSON.
    """
    try:
        return _WRITER.encode(value)
    except _NotJSON as error:
        raise MessageTypeError(f"{_place(where)} must hold only JSON values, not {error.args[0]}") from None
    except TypeError as error:  # a key json cannot write
        raise MessageTypeError(f"{_place(where)} must hold only JSON values: {bounded(error)}") from None
    except RecursionError:
        raise ConversionError(f"{_place(where)} is nested too deeply to write as JSON") from None
    except ValueError as error:  # NaN, infinity, a circular value, an int too long for text
        raise ConversionError(f"{_place(where)} is not valid JSON: {bounded(error)}") from None


def _place(where: Where) -> str:
    return where if isinstance(where, str) else where()


def call_place(index: int, call: Union[ToolUseBlock, ServerToolUseBlock], field: str) -> Callable[[], str]:
    """Where a call's field is, for an error message: ``messages[3] tool call 'c1'.input``."""
    return lambda: f"messages[{index}] tool call {shown(call.id)}.{field}"


class _NotJSON(Exception):
    pass


def _not_json(value: Any) -> Any:
    raise _NotJSON(type(value).__name__)


# json.dumps with these options would build this encoder on every call.
_WRITER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_not_json)


def json_output_copy(value: Any, where: Where) -> Any:
    """A fresh copy of a JSON value, checked as :func:`json_text` checks it: converter output
    never shares a dict with a message, so changing the output cannot change the message."""
    if type(value) is dict:
        for key, item in value.items():
            kind = type(item)
            if type(key) is not str or not (kind is str or item is None or kind is bool or (
                    kind is int and -_SMALL_INT < item < _SMALL_INT) or (kind is float and item - item == 0)):
                break
        else:
            return dict(value)  # flat, and every value a JSON scalar: a shallow copy is a copy
    return json.loads(json_text(value, where))


_SMALL_INT = 2**63  # ints beyond this take the checked path (json refuses ints too long to print)


def call_extras_lost(call: ToolUseBlock) -> bool:
    """Whether a call carries what only agentmsg's own formats keep: a server name other than
    ``local`` or metadata besides ``raw_arguments`` (the model's own text of the input)."""
    return call.server_name != "local" or any(key != RAW_ARGUMENTS for key in call.metadata)


RAW_ARGUMENTS = "raw_arguments"


def dump_arguments(call: Union[ToolUseBlock, ServerToolUseBlock], where: Where) -> str:
    """A call's input as the JSON string OpenAI-style APIs want (never a dict).

    The model's own text, kept by :func:`load_arguments` in ``metadata["raw_arguments"]``, goes
    back unchanged while it still reads as the call's input (so a history read and written back
    keeps its exact text and token count); text that was not a JSON object goes back unchanged
    while the input is empty.
    """
    raw = call.metadata.get(RAW_ARGUMENTS) if call.metadata else None
    if not isinstance(raw, str):
        return json_text(call.input, where)
    kept = json_object(raw)
    if kept is None:
        return raw if not call.input else json_text(call.input, where)
    written = json_text(call.input, where)
    return raw if _WRITER.encode(kept) == written else written


def json_object(text: str) -> Optional[Dict[str, Any]]:
    """The JSON object ``text`` holds (NaN and infinities are not JSON), else None."""
    try:
        value = _READER.decode(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# json.loads with an option would build this decoder on every call.
_READER = json.JSONDecoder(parse_constant=_reject_constant)


def load_arguments(raw: Any, where: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``(input, metadata)`` from an ``arguments`` JSON string.

    The text is kept in ``metadata["raw_arguments"]`` when writing the input back would give
    other text (``{"a":1}`` is written ``{"a": 1}``), so :func:`dump_arguments` can restore it.
    Text that is not a JSON object (NaN included) is kept there verbatim, with a
    :class:`ConversionWarning`, never dropped.
    """
    if raw is None or raw == "":
        return {}, {}
    if not isinstance(raw, str):
        raise MessageTypeError(
            f"{where} must be a JSON string, not {type(raw).__name__} (OpenAI sends a string, never an object)"
        )
    value = json_object(raw)
    if value is not None:
        return value, {} if _WRITER.encode(value) == raw else {RAW_ARGUMENTS: raw}
    warn_caller(f"{where} is not a JSON object; kept as metadata['raw_arguments']")
    return {}, {RAW_ARGUMENTS: raw}
