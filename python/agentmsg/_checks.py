"""Argument checks shared by the public API: typed errors that name where, and stay short.

Two rules hold for every error text built here: a value is *described* (a bounded excerpt of a
str, a small number, else its type), never ``repr``-ed whole, so a 10 MB string or a
100,000-deep list cannot blow up or recurse in an error message; and the place is a path
(``metadata['k'][2]``) built only when there is an error.
"""

from __future__ import annotations

import enum
import functools
import json
from types import FunctionType
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    MutableMapping,
    NoReturn,
    Optional,
    Sequence,
    Tuple,
)

from .errors import AgentMsgError, ConversionError, MessageError, MessageTypeError

_CO_VARKEYWORDS = 0x08  # inspect.CO_VARKEYWORDS and CO_COROUTINE, without importing inspect
_CO_COROUTINE = 0x80

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


def utf8_json(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)`` with non-ASCII characters as they are, unless the text
    holds a lone surrogate (read from a ``\\ud800`` escape), which UTF-8 cannot carry: then all
    of it is escaped, so nothing is lost and it reads back the same.

    >>> utf8_json(["é"]), utf8_json(["é\\ud800"])
    ('["é"]', '["\\\\u00e9\\\\ud800"]')
    """
    text = json.dumps(value, ensure_ascii=False, **options)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(value, ensure_ascii=True, **options)
    return text


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


# -- calls ----------------------------------------------------------------------------------------

# Keywords of another library's spelling, and the parameter here that takes what they give.
_OTHER_SPELLINGS = {"model": ("encoding", "counter")}


def unexpected_keyword(function: str, keyword: str, accepted: Sequence[str]) -> MessageTypeError:
    """The error for a keyword argument ``function`` does not take: it names the keyword (cut
    short), the one meant when it is a near miss, and the ones ``function`` takes.

    >>> print(unexpected_keyword("count_tokens", "encodng", ["text", "encoding"]))
    count_tokens() got an unexpected keyword argument 'encodng' (did you mean 'encoding'?); it takes: text, encoding
    >>> print(unexpected_keyword("count_tokens", "model", ["text", "encoding"]))
    count_tokens() got an unexpected keyword argument 'model' (encoding= takes a model name too); it takes: text, encoding
    """
    keyword = str.__str__(keyword)
    hint = ""
    meant = [name for name in _OTHER_SPELLINGS.get(keyword, ()) if name in accepted]
    if meant:
        hint = f" ({meant[0]}= takes a {keyword} name too)"
    elif len(keyword) <= 100:  # a near miss is a typo, not a 10 MB string
        import difflib  # here: only an error needs it

        close = difflib.get_close_matches(keyword, accepted, n=1)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
    return MessageTypeError(f"{function}() got an unexpected keyword argument {describe(keyword)}{hint}; "
                            f"it takes: {', '.join(accepted) or 'no arguments'}")


def _call_error(function: Callable[..., Any], label: str, args: Sequence[Any],
                kwargs: Mapping[str, Any]) -> Optional[MessageTypeError]:
    """The typed error for a call ``function``'s signature does not take, or None when it does."""
    import inspect  # here: `import agentmsg` and the common calls do without it

    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())
    takes_any_keyword = any(p.kind is p.VAR_KEYWORD for p in parameters)
    named = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    shown = [p.name for p in parameters if p.kind is not p.VAR_KEYWORD and p.kind is not p.VAR_POSITIONAL]
    try:
        signature.bind(*args, **kwargs)
    except TypeError as error:
        if not takes_any_keyword:
            for keyword in kwargs:
                if keyword not in named:
                    return unexpected_keyword(label, keyword, _without_self(shown))
        return MessageTypeError(f"{label}(): {error}; it takes: {', '.join(_without_self(shown)) or 'no arguments'}")
    return None


def _without_self(names: List[str]) -> List[str]:
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _reads_its_own_keywords(function: Callable[..., Any]) -> bool:
    """Whether ``function`` takes ``**keywords``: it checks their names itself (``parse``'s options
    are read by the binding), so no keyword can fail to bind and it is left unwrapped, at no cost
    per call (the hot entry points, ``parse`` and ``StreamParser``, are of this kind)."""
    return bool(function.__code__.co_flags & _CO_VARKEYWORDS)


def _checked(function: Callable[..., Any], label: str) -> Callable[..., Any]:
    """``function``, with a call its signature does not take raising :class:`MessageTypeError`."""

    def reraise(error: TypeError, args: Sequence[Any], kwargs: Mapping[str, Any]) -> NoReturn:
        # Binding the arguments fails before ``function``'s frame starts, so such an error's
        # traceback holds the wrapper's frame only; any other TypeError is the function's own.
        traceback = error.__traceback__
        if isinstance(error, AgentMsgError) or traceback is None or traceback.tb_next is not None:
            raise error
        raise (_call_error(function, label, args, kwargs) or error) from None

    checked: Callable[..., Any]
    if function.__code__.co_flags & _CO_COROUTINE:
        # An async wrapper, so that inspect.iscoroutinefunction (which frameworks ask to choose
        # between calling and awaiting) still says True.
        async def checked_coroutine(*args: Any, **kwargs: Any) -> Any:
            try:
                coroutine = function(*args, **kwargs)
            except TypeError as error:
                reraise(error, args, kwargs)
            return await coroutine

        checked = checked_coroutine
    else:
        def checked_call(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except TypeError as error:
                reraise(error, args, kwargs)

        checked = checked_call
    functools.update_wrapper(checked, function)
    setattr(checked, "__agentmsg_checked__", True)  # a function attribute type checkers do not know
    return checked


def _checked_attribute(value: Any, label: str) -> Any:
    """A function, or a class attribute, with its calls checked (kept a staticmethod or
    classmethod); None for what is not wrapped: what is not a Python function (its errors cannot
    be told apart), a function checked already, or one that reads its own keywords."""
    inner = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    if (not isinstance(inner, FunctionType) or getattr(inner, "__agentmsg_checked__", False)
            or _reads_its_own_keywords(inner)):
        return None
    checked = _checked(inner, label)
    return checked if inner is value else type(value)(checked)


def check_calls(namespace: MutableMapping[str, Any]) -> None:
    """Makes each public callable of a module (``namespace`` is its ``globals()``: the names in
    its ``__all__`` that it defines) raise :class:`MessageTypeError` for a call its signature
    does not take (an unknown or misspelled keyword, a missing or extra argument), naming what
    was wrong and what it takes, where Python raises a bare ``TypeError``: its functions, the
    constructor of its classes and their public methods. Exceptions and enums keep theirs.

    Called once at the end of each module, so a new public function is covered without a word.
    """
    module = namespace["__name__"]
    for name in namespace.get("__all__", ()):
        value = namespace.get(name)
        if getattr(value, "__module__", None) != module:
            continue
        if isinstance(value, FunctionType):
            namespace[name] = _checked_attribute(value, name) or value
        elif isinstance(value, type) and not issubclass(value, (BaseException, enum.Enum)):
            _check_class(value)


def _check_class(cls: type) -> None:
    for attribute, value in list(vars(cls).items()):
        if attribute in ("__init__", "__new__"):
            label = cls.__name__
        elif attribute == "__call__" or not attribute.startswith("_"):
            label = f"{cls.__name__}.{attribute}"
        else:
            continue
        checked = _checked_attribute(value, label)
        if checked is not None:
            setattr(cls, attribute, checked)


def _is_message(value: object) -> bool:
    """Whether ``value`` is an ``agentmsg.Message`` (told by its class's name and module: the
    model sits above this module)."""
    return any(kind.__name__ == "Message" and kind.__module__ == "agentmsg.model.message" for kind in type(value).__mro__)


def as_list(value: object, what: str, expected: str) -> List[Any]:
    """``value`` as a new list; a non-iterable, or a str/dict/Message given for a sequence, is a
    MessageTypeError naming ``what``."""
    if value.__class__ is list or value.__class__ is tuple:
        return list(value)
    if isinstance(value, (str, bytes, Mapping)) or _is_message(value):
        raise MessageTypeError(f"{what} must be {expected}, not a single {type_name(value)}")
    try:
        iterator = iter(value)  # type: ignore[call-overload]
    except TypeError:
        raise MessageTypeError(f"{what} must be {expected}, not {type_name(value)}") from None
    try:
        return list(iterator)
    except AgentMsgError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure of the caller's iterator is theirs
        raise MessageTypeError(
            f"{what}: iterating it raised {type_name(error)}"
        ) from error


SHOWN_CHARACTERS = 60


def shown(value: Any) -> str:
    """``value`` as error messages show it: short strings, numbers and None as ``repr`` does,
    anything else by its type, so that an error never copies a 10 MB string, never walks a
    100,000-deep value and never calls a hostile ``__repr__``."""
    kind = type(value)
    if value is None or kind is bool or kind is float:
        return repr(value)
    if kind is int:
        return repr(value) if value.bit_length() <= 64 else f"an int of {value.bit_length()} bits"
    if isinstance(value, str):
        text = str.__str__(value)
        cut = text[:SHOWN_CHARACTERS]
        return repr(cut) + ("..." if len(text) > SHOWN_CHARACTERS else "")
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return f"{kind.__name__} of {len(value)} items"
    return f"a {kind.__name__}"


def shown_keys(data: Mapping[Any, Any]) -> str:
    """The first keys of an object, as :func:`shown` shows values: ``['a', 'b']``."""
    keys = [shown(key) for _, key in zip(range(5), data)]
    return "[" + ", ".join(keys) + (", ...]" if len(data) > 5 else "]")


def require_dict(value: Any, where: str) -> Mapping[str, Any]:
    if value.__class__ is not dict and not isinstance(value, Mapping):  # an ABC check is slow
        raise MessageTypeError(f"{where} must be an object (dict), not {type(value).__name__}")
    return value


def optional_dict(value: Any, where: str) -> Dict[str, Any]:
    """A field that holds an object or nothing (``metadata``), as a new dict; None is ``{}``."""
    if value is None:
        return {}
    return dict(require_dict(value, where))


def objects_in(items: Iterable[Any], where: str) -> Iterator[Tuple[str, Mapping[str, Any]]]:
    """Each item of a list field as ``(its place, the object)``; an item that is not an object
    is a MessageTypeError naming its place (``where[j]``)."""
    for index, item in enumerate(items):
        place = f"{where}[{index}]"
        yield place, require_dict(item, place)


def require_list(value: Any, where: str) -> Sequence[Any]:
    if value.__class__ is not list and not isinstance(value, (list, tuple)):
        raise MessageTypeError(f"{where} must be a list, not {type(value).__name__}")
    return value


def require(data: Mapping[str, Any], key: str, where: str) -> Any:
    """``data[key]``; a missing key is a ConversionError naming ``where`` and the field."""
    try:
        return data[key]
    except KeyError:
        raise ConversionError(f"{where}: missing field {key!r}") from None


def require_choice(value: Any, valid: Iterable[str], where: str, what: str) -> str:
    """``value`` when it is one of the ``valid`` strings; else a typed error listing them."""
    if not isinstance(value, str):
        raise MessageTypeError(f"{where} must be a str, not {type(value).__name__}")
    if value not in valid:
        raise ConversionError(f"{where}: unknown {what} {shown(value)}; valid: {', '.join(valid)}")
    return value


ERROR_CHARACTERS = 400


def bounded(error: Exception) -> str:
    """An error's message, cut to a bounded length (it may quote a huge value)."""
    text = str(error)
    return text if len(text) <= ERROR_CHARACTERS else text[:ERROR_CHARACTERS] + "..."
