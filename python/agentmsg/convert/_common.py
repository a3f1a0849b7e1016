"""Helpers every converter shares: input checks, error wording, loss warnings, tool-pair checks."""

from __future__ import annotations

import json
import sys
import warnings
from operator import attrgetter
from types import FrameType, SimpleNamespace
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterable, Iterator, List, Literal, NamedTuple, Optional, Sequence, Tuple, TypeVar, Union

from ..blocks import TextBlock, ThinkingBlock, ToolUseBlock
from ..errors import ConversionError, MessageError, MessageTypeError, ToolPairError
from ..message import Message, _as_list, _ASSISTANT, _SYSTEM, _TOOL
from ..normalize import read_messages
from ..toolpairs import _indices_of, _pair, pair_tool_results, repair_tool_pairs

__all__ = ["ConversionWarning"]

T = TypeVar("T")
CachePlace = Union[Literal["system", "last"], int]
MAX_CACHE_POINTS = 4  # Anthropic and Bedrock allow at most four cache breakpoints per request


class ConversionWarning(UserWarning):
    """A converter dropped something its target format cannot carry, or kept malformed input aside.

    Filter it like any warning, e.g. ``warnings.simplefilter("error", ConversionWarning)`` to
    make every loss an exception.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = agentmsg.to_openai([agentmsg.assistant("42", thinking="add")])
    >>> print(caught[0].message)
    to_openai cannot carry thinking blocks (message 0); they were left out
    """


def warn_caller(message: str) -> None:
    """Warns a :class:`ConversionWarning` at the caller's line: the first frame outside agentmsg,
    however many of the library's frames (helpers, the call checks of every public function)
    lie between it and this one."""
    frame: Optional[FrameType] = sys._getframe()
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "agentmsg":
        frame = frame.f_back
        level += 1
    warnings.warn(message, ConversionWarning, stacklevel=level)


def check_messages(messages: Iterable[Message], what: str = "messages") -> List[Message]:
    """The messages as a list of Message, read by :func:`agentmsg.as_messages` (dicts and SDK
    objects too); an item it cannot read is an error naming its index."""
    return read_messages(messages, what)


def check_dicts(items: Any, what: str) -> List[Any]:
    """A list of provider dicts; a str, dict or other non-list is a MessageTypeError."""
    return _as_list(items, what, "a list of dicts")


def plain_data(data: Any) -> Any:
    """An SDK object (pydantic, anything with ``model_dump()``) as plain data; else ``data``."""
    dump = getattr(data, "model_dump", None)
    if dump is not None and not isinstance(data, Mapping):
        return dump(exclude_none=True)
    return data


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


def own_namespace(metadata: Mapping[str, Any], key: str) -> Dict[str, Any]:
    """``metadata[key]`` when it is a dict (a namespace a converter wrote), else ``{}``.

    A caller's own non-dict value under the same key is left alone, never taken for ours.
    """
    value = metadata.get(key)
    return value if isinstance(value, dict) else {}


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


def require_str(data: Mapping[str, Any], key: str, where: str) -> str:
    value = require(data, key, where)
    if not isinstance(value, str):
        raise MessageTypeError(f"{where}.{key} must be a str, not {type(value).__name__}")
    return value


def require_choice(value: Any, valid: Iterable[str], where: str, what: str) -> str:
    """``value`` when it is one of the ``valid`` strings; else a typed error listing them."""
    if not isinstance(value, str):
        raise MessageTypeError(f"{where} must be a str, not {type(value).__name__}")
    if value not in valid:
        raise ConversionError(f"{where}: unknown {what} {shown(value)}; valid: {', '.join(valid)}")
    return value


def block_kind(block: Mapping[str, Any], where: str) -> Optional[str]:
    """A block's ``type`` tag: a str, or None when absent; any other value is a MessageTypeError."""
    kind = block.get("type")
    if kind is not None and not isinstance(kind, str):
        raise MessageTypeError(f"{where}.type must be a str, not {type(kind).__name__}")
    return kind


def tagged_dict(value: Any, where: str) -> Tuple[Mapping[str, Any], Optional[str]]:
    """A block that must be a dict, and its ``type`` tag (:func:`block_kind`)."""
    block = require_dict(value, where)
    return block, block_kind(block, where)


def thinking_dict(block: ThinkingBlock, kind: str, extras_key: str, signature_key: str) -> Dict[str, Any]:
    """A thinking block as ``{"type": kind, kind: thinking}``, its signature (if any) kept as
    ``{extras_key: {signature_key: signature}}``: AgentScope's and LangChain's reasoning blocks."""
    data: Dict[str, Any] = {"type": kind, kind: block.thinking}
    if block.signature is not None:
        data[extras_key] = {signature_key: block.signature}
    return data


ERROR_CHARACTERS = 400


def build(where: str, factory: Callable[[], T]) -> T:
    """Runs ``factory`` and prefixes ``where`` to any model error, keeping its class.

    The model's own message is cut to a bounded length (it may quote the value at fault).
    """
    try:
        return factory()
    except MessageTypeError as error:
        raise MessageTypeError(f"{where}: {bounded(error)}") from None
    except (MessageError, ConversionError) as error:
        raise ConversionError(f"{where}: {bounded(error)}") from None
    except (ValueError, OverflowError) as error:  # e.g. an int too long to convert, in a timestamp
        raise ConversionError(f"{where}: {type(error).__name__}: {bounded(error)}") from None


def text_block(data: Mapping[str, Any], where: str) -> TextBlock:
    """The :class:`TextBlock` of a ``{"type": "text", "text": ...}`` part (OpenAI, Anthropic, AgentScope)."""
    text = require(data, "text", where)
    return build(where, lambda: TextBlock(text))

def bounded(error: Exception) -> str:
    """An error's message, cut to a bounded length (it may quote a huge value)."""
    text = str(error)
    return text if len(text) <= ERROR_CHARACTERS else text[:ERROR_CHARACTERS] + "..."


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


def call_place(index: int, call: ToolUseBlock, field: str) -> Callable[[], str]:
    """Where a call's field is, for an error message: ``messages[3] tool call 'c1'.input``."""
    return lambda: f"messages[{index}] tool call {shown(call.id)}.{field}"


class _NotJSON(Exception):
    pass


def _not_json(value: Any) -> Any:
    raise _NotJSON(type(value).__name__)


# json.dumps with these options would build this encoder on every call.
_WRITER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_not_json)


def json_copy(value: Any, where: Where) -> Any:
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


def dump_arguments(call: ToolUseBlock, where: Where) -> str:
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


class Losses:
    """Collects what a conversion could not carry, then warns once per kind of loss."""

    __slots__ = ("converter", "found", "consequences")

    def __init__(self, converter: str) -> None:
        self.converter = converter
        self.found: Dict[str, List[int]] = {}
        self.consequences: Dict[str, str] = {}

    def add(self, what: str, index: int, consequence: str = "they were left out") -> None:
        where = self.found.setdefault(what, [])
        self.consequences[what] = consequence
        if not where or where[-1] != index:
            where.append(index)

    def warn(self) -> None:
        for what, where in self.found.items():
            shown = ", ".join(map(str, where[:10])) + (", ..." if len(where) > 10 else "")
            noun = "message" if len(where) == 1 else "messages"
            warn_caller(f"{self.converter} cannot carry {what} ({noun} {shown}); {self.consequences[what]}")


def results_first(items: List[Message], converter: str) -> List[int]:
    """The order to write ``items`` in (their indices) so that the results of each assistant
    turn's tool calls directly follow it, as OpenAI, Anthropic and Bedrock require.

    A message between a call and its result (a user interjecting while a tool runs) moves after
    the last result of that turn, with a :class:`ConversionWarning` naming it; nothing else moves.
    Which call a result answers is the core pairing rule (:mod:`agentmsg.toolpairs`); a result
    after the next assistant message is not that turn's.
    """
    roles = list(map(_role_of, items))
    order = list(range(len(items)))
    # A message can only sit between a call and its result when some tool result directly
    # follows a user or system message: the common history has none, and needs no pairing.
    if not any(roles[index - 1] is not _TOOL and roles[index - 1] is not _ASSISTANT
               for index in _indices_of(roles, _TOOL) if index):
        return order
    try:
        call_of = _pair(items, roles)[0]
    except MessageError:  # a lone surrogate in an id or name: the core reads only UTF-8
        call_of = _pair([_pairing_stand_in(message) for message in items], roles)[0]  # type: ignore[misc]
    order = []
    moved: List[int] = []
    count = len(items)
    index = 0
    while index < count:
        order.append(index)
        start = index + 1
        last = -1
        if roles[index] is _ASSISTANT:
            scan = start
            while scan < count and roles[scan] is not _ASSISTANT:
                if call_of[scan] == index:
                    last = scan
                scan += 1
        others = [i for i in range(start, last + 1) if roles[i] is not _TOOL]
        if others:
            order.extend(i for i in range(start, last + 1) if roles[i] is _TOOL)
            order.extend(others)
            moved.extend(others)
            start = last + 1
        index = start
    if moved:
        warn_caller(f"{converter} moved messages {', '.join(map(str, moved))} after the tool results they "
                    "interrupted (tool results must directly follow their call)")
    return order


_role_of = attrgetter("role")


def _pairing_stand_in(message: Message) -> SimpleNamespace:
    """What pairing reads of a message, with every id and name as text the core can read: its
    UTF-8 bytes (lone surrogates passed through) read as Latin-1, one text for one id."""
    def readable(text: Optional[str]) -> Optional[str]:
        return None if text is None else text.encode("utf-8", "surrogatepass").decode("latin-1")

    calls = tuple(ToolUseBlock(readable(b.id), readable(b.name), {})  # type: ignore[arg-type]
                  for b in message.content if type(b) is ToolUseBlock)
    return SimpleNamespace(role=message.role, tool_id=readable(message.tool_id),
                           name=readable(message.name), content=calls)


def write_in_order(
    items: List[Message], losses: "Losses", write: Callable[[Message, int], Optional[Dict[str, Any]]],
) -> List[Dict[str, Any]]:
    """``write(message, index)`` for each message in :func:`results_first` order, leaving out
    what gives None; then the losses' warnings (for converters with one output per message)."""
    out = []
    for index in results_first(items, losses.converter):
        data = write(items[index], index)
        if data is not None:
            out.append(data)
    if losses.found:
        losses.warn()
    return out


class SystemAndTurns(NamedTuple):
    """A history laid out the way Anthropic and Bedrock take it: system text apart, turns merged."""

    system: List[Dict[str, Any]]
    turns: List[Dict[str, Any]]
    # message index -> (turn, blocks in it so far) after that message; turn -1 is the system list
    ends: Dict[int, Tuple[int, int]]


def split_system_and_merge_turns(
    items: List[Message],
    converter: str,
    losses: Losses,
    system_text: Callable[[str], Dict[str, Any]],
    turn_blocks: Callable[[Message, int], Tuple[str, List[Dict[str, Any]]]],
) -> SystemAndTurns:
    """Collects system text into one list (warning when a system message comes after the
    conversation started), converts every other message with ``turn_blocks(message, index)`` and
    merges consecutive turns of the same role, as both providers require."""
    system: List[Dict[str, Any]] = []
    turns: List[Dict[str, Any]] = []
    ends: Dict[int, Tuple[int, int]] = {}
    moved: List[int] = []
    for index in results_first(items, converter):
        message = items[index]
        if message.role is _SYSTEM:
            if turns:
                moved.append(index)
            for block in message.content:
                if type(block) is TextBlock:
                    if block.text:
                        system.append(system_text(block.text))
                else:
                    losses.add(f"{block.type} blocks in system messages", index)
            if message.name is not None:
                losses.add("name on non-tool messages", index)
            if system:
                ends[index] = (-1, len(system))
            continue
        role, blocks = turn_blocks(message, index)
        if not blocks:
            losses.add("messages with nothing else it can carry", index)
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
        ends[index] = (len(turns) - 1, len(turns[-1]["content"]))
    if moved:
        warn_caller(f"{converter} moved system messages {', '.join(map(str, moved))} from the middle of "
                    "the conversation to the system prompt")
    return SystemAndTurns(system, turns, ends)


ORPHAN_POLICIES = ("raise", "repair", "keep")


def settle_tool_pairs(messages: List[Message], on_orphan: str, converter: str) -> List[Message]:
    """Applies the caller's orphan policy to a freshly read history, with :mod:`agentmsg.toolpairs`.

    A result is an orphan when no earlier call answers to it; a call is an orphan when the
    conversation moves on (a non-tool message follows) before it is answered. Calls of the last
    turn are pending (the model just asked for them), not orphans.
    """
    if on_orphan not in ORPHAN_POLICIES:
        raise ConversionError(f"on_orphan must be one of {', '.join(ORPHAN_POLICIES)}, not {on_orphan!r}")
    if on_orphan == "keep":
        return messages
    pairing = pair_tool_results(messages)
    last = len(messages) - 1
    while last >= 0 and messages[last].role is _TOOL:
        last -= 1
    pending = {call.id for index, call in pairing.unanswered if index == last}
    unanswered = [(index, call) for index, call in pairing.unanswered if index != last]
    if not pairing.orphans and not unanswered:
        return messages
    if on_orphan == "raise":
        problems = [(i, f"tool result {_result_link(messages[i])} has no earlier call") for i in pairing.orphans]
        problems += [(i, f"tool call {call.id!r} is never answered") for i, call in unanswered]
        index, text = min(problems)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ToolPairError(
            f"{converter}: messages[{index}]: {text}{more}; pass on_orphan='repair' to fix or "
            "'keep' to accept"
        )
    repaired = repair_tool_pairs(messages)
    while pending and repaired and repaired[-1].metadata.get("repaired") == "interrupted" \
            and repaired[-1].tool_id in pending:
        repaired.pop()  # pending calls of the last turn keep waiting for their results
    if pairing.orphans:
        warn_dropped_results(converter, pairing.orphans)
    if unanswered:
        warn_caller(f"{converter}: added {len(unanswered)} error result(s) for tool calls that were never answered")
    return repaired


def warn_dropped_results(converter: str, indices: Sequence[int]) -> None:
    """The warning for tool results dropped because no call answers to them (on_orphan='repair')."""
    warn_caller(f"{converter}: dropped tool results with no matching call (messages {', '.join(map(str, indices))})")


def _result_link(message: Message) -> str:
    if message.tool_id:
        return f"{message.tool_id!r}"
    return f"for tool name {message.name!r}"


def check_cache_places(cache: Sequence[CachePlace], count: int) -> List[CachePlace]:
    """Validates a ``cache=`` argument: 'system', 'last' or message indices, at most four."""
    if isinstance(cache, (str, int)):
        cache = [cache]  # type: ignore[list-item]  # each place is checked below
    if not isinstance(cache, (list, tuple)):
        raise MessageTypeError(f"cache must be a list of places, not {type(cache).__name__}")
    places = list(cache)
    if len(places) > MAX_CACHE_POINTS:
        raise ConversionError(f"cache: at most {MAX_CACHE_POINTS} cache points, got {len(places)}")
    for place in places:
        if isinstance(place, bool) or not isinstance(place, (str, int)):
            raise MessageTypeError(f"cache entries must be 'system', 'last' or an int, not {type(place).__name__}")
        if isinstance(place, str) and place not in ("system", "last"):
            raise ConversionError(f"cache: unknown place {shown(place)}; valid: 'system', 'last', an index")
        if isinstance(place, int) and not -count <= place < count:
            raise ConversionError(f"cache: message index {shown(place)} is out of range for {count} messages")
    return places
