"""Argument checks shared by the public API: typed errors that name where, and stay short.

Two rules hold for every error text built here: a value is *described* (a bounded excerpt of a
str, a small number, else its type), never ``repr``-ed whole, so a 10 MB string or a
100,000-deep list cannot blow up or recurse in an error message; and the place is a path
(``metadata['k'][2]``) built only when there is an error.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from .errors import MessageError, MessageTypeError

# JSON values (tool-call input and metadata, message metadata) nest at most this deep: what the
# parser's JSON reader (jiter) accepts, and far below the depth where json.dumps would recurse out.
MAX_JSON_DEPTH = 200
# JSON numbers that are ints have at most this many digits: Python's int/str conversion limit,
# so json.dumps can write them and json.loads read them back.
MAX_INT_DIGITS = 4300
_INT_BOUND = 10**MAX_INT_DIGITS
_NEG_INT_BOUND = -_INT_BOUND

_EXCERPT = 40
_MAX_WHERE = 120
_MAX_PATH_STEPS = 6


def type_name(value: object) -> str:
    """The name of ``value``'s type, for error texts."""
    return type(value).__name__


def describe(value: object) -> str:
    """A short description of ``value`` for an error text: never long, never recursive.

    >>> describe("x" * 100)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (100 characters)"
    >>> describe([[[]]])
    'a list'
    """
    if value is None or value is True or value is False:
        return repr(value)
    if isinstance(value, str):
        text = str.__str__(value)
        if len(text) > _EXCERPT:
            return f"{text[:_EXCERPT]!r}... ({len(text)} characters)"
        return repr(text)
    if isinstance(value, int):
        number = int.__int__(value)
        if -(10**20) < number < 10**20:
            return int.__repr__(number)
        return f"an int of {number.bit_length()} bits"
    if isinstance(value, float):
        return float.__repr__(value)
    return f"a {type_name(value)}"


def utf8_text(text: str) -> str:
    """``text`` with each character UTF-8 cannot carry (a lone surrogate) written as its
    ``\\u`` escape, for plain-text output such as a file name in a table.

    >>> utf8_text("a\\ud800b")
    'a\\\\ud800b'
    """
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def where_label(where: object) -> str:
    """A caller-given place name (``where=`` arguments): a str, cut to a bounded length."""
    if not isinstance(where, str):
        raise MessageTypeError(f"where must be a str, not {type_name(where)}")
    where = str.__str__(where)
    return where if len(where) <= _MAX_WHERE else where[:_MAX_WHERE] + "..."


def require_str(value: object, where: str) -> str:
    """``value`` as a plain str; a MessageTypeError naming ``where`` if it is not a str."""
    if value.__class__ is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)  # a subclass's overridden methods must not run later
    raise MessageTypeError(f"{where} must be a str, not {type_name(value)}")


def optional_str(value: object, where: str) -> Optional[str]:
    """Like :func:`require_str`, and None is allowed."""
    if value is None:
        return None
    if isinstance(value, str):
        return require_str(value, where)
    raise MessageTypeError(f"{where} must be a str or None, not {type_name(value)}")


def require_bool(value: object, where: str) -> bool:
    if value is True or value is False:
        return value
    raise MessageTypeError(f"{where} must be a bool, not {type_name(value)}")


def require_int(value: object, where: str, minimum: int = 0) -> int:
    """``value`` as a plain int of at least ``minimum`` (a bool is not an int here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageTypeError(f"{where} must be an int, not {type_name(value)}")
    number = int.__int__(value)
    if number < minimum:
        raise MessageError(f"{where} must be at least {minimum}, not {describe(number)}")
    return number


# -- JSON values ---------------------------------------------------------------------------------


class _NotJSON(Exception):
    """Internal: a value that is not JSON, with the path to it gathered while unwinding."""

    def __init__(self, error: type, message: str) -> None:
        self.error = error
        self.message = message
        self.path: List[str] = []


def json_copy(value: object, where: str) -> Any:
    """A deep copy of a JSON value (dict with str keys, list, str, int, finite float, bool,
    None), checked on the way: anything else is an error naming the path below ``where``.

    Tuples become lists (JSON has one array type); str, int and float subclasses become the plain
    type. Nesting deeper than :data:`MAX_JSON_DEPTH` (which includes a value that contains
    itself) and ints of more than :data:`MAX_INT_DIGITS` digits are refused.

    >>> json_copy({"a": (1, 2.5, None)}, "input")
    {'a': [1, 2.5, None]}
    >>> json_copy({"a": [1, {2}]}, "input")
    Traceback (most recent call last):
    ...
    agentmsg.errors.MessageTypeError: input['a'][1] must be a JSON value (dict, list, str, int, float, bool or None), not set
    """
    try:
        return _copy(value, 0)
    except _NotJSON as error:
        steps = error.path[::-1]
        if len(steps) > _MAX_PATH_STEPS:  # deep nesting: the start of the path says where
            steps = steps[:_MAX_PATH_STEPS] + [f"...({len(steps) - _MAX_PATH_STEPS} more levels)"]
        path = "".join(steps)
        raise error.error(f"{where}{path}{error.message}") from None


def json_copy_dict(value: object, where: str) -> Dict[str, Any]:
    """:func:`json_copy` of a value that must be a dict (any Mapping is copied to a dict)."""
    if value.__class__ is not dict:
        if not isinstance(value, Mapping):
            raise MessageTypeError(f"{where} must be a dict, not {type_name(value)}")
    elif not value:
        return {}
    copy: Dict[str, Any] = json_copy(value, where)
    return copy


def _copy(value: Any, depth: int) -> Any:
    cls = value.__class__
    if cls is str or cls is bool or value is None:
        return value
    if cls is int:
        if _NEG_INT_BOUND < value < _INT_BOUND:
            return value
        raise _NotJSON(MessageError, f" is an int of {value.bit_length()} bits; JSON ints here "
                                     f"have at most {MAX_INT_DIGITS} digits")
    if cls is float:
        if value - value == 0.0:  # finite: inf - inf and nan - nan are nan
            return value
        raise _NotJSON(MessageError, f" is {value!r}, which JSON cannot carry")
    if cls is dict:
        return _copy_pairs(value.items(), depth)
    if cls is list or cls is tuple:
        return _copy_items(value, depth)
    # Subclasses and other mappings: rarer, so checked after the exact types.
    if isinstance(value, Mapping):
        return _copy_pairs(value.items(), depth)
    if isinstance(value, (list, tuple)):
        return _copy_items(value, depth)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool subclasses cannot exist, so this is an int subclass
        return _copy(int.__int__(value), depth)
    if isinstance(value, float):
        return _copy(float.__float__(value), depth)
    raise _NotJSON(MessageTypeError, " must be a JSON value (dict, list, str, int, float, bool or "
                                     f"None), not {type_name(value)}")


def _copy_pairs(pairs: Any, depth: int) -> Dict[str, Any]:
    if depth >= MAX_JSON_DEPTH:
        raise _NotJSON(MessageError, f" nests deeper than {MAX_JSON_DEPTH} levels (or contains itself)")
    copied = {}
    for key, item in pairs:
        if key.__class__ is not str:
            if not isinstance(key, str):
                raise _NotJSON(MessageTypeError, f": key {describe(key)} must be a str "
                                                 f"(JSON object keys are), not {type_name(key)}")
            key = str.__str__(key)
        cls = item.__class__
        if (cls is str or cls is bool or item is None  # the common leaves, without a call
                or (cls is int and _NEG_INT_BOUND < item < _INT_BOUND)):
            copied[key] = item
            continue
        try:
            copied[key] = _copy(item, depth + 1)
        except _NotJSON as error:
            error.path.append(f"[{describe(key)}]")
            raise
    return copied


def _copy_items(items: Any, depth: int) -> List[Any]:
    if depth >= MAX_JSON_DEPTH:
        raise _NotJSON(MessageError, f" nests deeper than {MAX_JSON_DEPTH} levels (or contains itself)")
    copied = []
    for index, item in enumerate(items):
        cls = item.__class__
        if (cls is str or cls is bool or item is None
                or (cls is int and _NEG_INT_BOUND < item < _INT_BOUND)):
            copied.append(item)
            continue
        try:
            copied.append(_copy(item, depth + 1))
        except _NotJSON as error:
            error.path.append(f"[{index}]")
            raise
    return copied
