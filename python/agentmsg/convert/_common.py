"""Helpers every converter shares: input checks, error wording, loss warnings, tool-pair checks."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, TypeVar, Union

from ..blocks import TextBlock, ToolUseBlock
from ..errors import ConversionError, MessageError, MessageTypeError, ToolPairError
from ..message import Message, Role, _as_list, _check_messages
from ..toolpairs import pair_tool_results, repair_tool_pairs

__all__ = ["ConversionWarning"]

T = TypeVar("T")
CachePlace = Union[str, int]
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


def check_messages(messages: Iterable[Message], what: str = "messages") -> List[Message]:
    """The messages as a list; a non-Message item is a MessageTypeError naming its index."""
    return _check_messages(messages, what)


def check_dicts(items: Any, what: str) -> List[Any]:
    """A list of provider dicts; a str, dict or other non-list is a MessageTypeError."""
    return _as_list(items, what, "a list of dicts")


def plain_data(data: Any) -> Any:
    """An SDK object (pydantic, anything with ``model_dump()``) as plain data; else ``data``."""
    dump = getattr(data, "model_dump", None)
    if dump is not None and not isinstance(data, Mapping):
        return dump(exclude_none=True)
    return data


def own_namespace(metadata: Mapping[str, Any], key: str) -> Dict[str, Any]:
    """``metadata[key]`` when it is a dict (a namespace a converter wrote), else ``{}``.

    A caller's own non-dict value under the same key is left alone, never taken for ours.
    """
    value = metadata.get(key)
    return value if isinstance(value, dict) else {}


def require_dict(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MessageTypeError(f"{where} must be an object (dict), not {type(value).__name__}")
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


def build(where: str, factory: Callable[[], T]) -> T:
    """Runs ``factory`` and prefixes ``where`` to any model error, keeping its class."""
    try:
        return factory()
    except MessageTypeError as error:
        raise MessageTypeError(f"{where}: {error}") from None
    except (MessageError, ConversionError) as error:
        raise ConversionError(f"{where}: {error}") from None


def dump_arguments(call: ToolUseBlock) -> str:
    """A call's input as the JSON string OpenAI-style APIs want (never a dict, seed 002)."""
    raw = call.metadata.get("raw_arguments")
    if isinstance(raw, str) and not call.input:
        return raw  # malformed arguments read earlier go back unchanged
    return json.dumps(call.input, ensure_ascii=False)


def load_arguments(raw: Any, where: str) -> tuple:
    """``(input, metadata)`` from an ``arguments`` JSON string.

    Text that is not a JSON object is kept verbatim in ``metadata["raw_arguments"]`` (and
    written back by the ``to_*`` converters) with a :class:`ConversionWarning`, never dropped.
    """
    if raw is None or raw == "":
        return {}, {}
    if not isinstance(raw, str):
        raise MessageTypeError(
            f"{where} must be a JSON string, not {type(raw).__name__} (seed 002: never a dict)"
        )
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value, {}
    warnings.warn(
        f"{where} is not a JSON object; kept as metadata['raw_arguments']",
        ConversionWarning,
        stacklevel=4,
    )
    return {}, {"raw_arguments": raw}


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

    def warn(self, stacklevel: int = 3) -> None:
        for what, where in self.found.items():
            shown = ", ".join(map(str, where[:10])) + (", ..." if len(where) > 10 else "")
            noun = "message" if len(where) == 1 else "messages"
            warnings.warn(
                f"{self.converter} cannot carry {what} ({noun} {shown}); {self.consequences[what]}",
                ConversionWarning,
                stacklevel=stacklevel,
            )


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
    for index, message in enumerate(items):
        if message.role is Role.SYSTEM:
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
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
        ends[index] = (len(turns) - 1, len(turns[-1]["content"]))
    if moved:
        warnings.warn(
            f"{converter} moved system messages {', '.join(map(str, moved))} from the middle of "
            "the conversation to the system prompt",
            ConversionWarning,
            stacklevel=3,
        )
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
    while last >= 0 and messages[last].role is Role.TOOL:
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
        warnings.warn(
            f"{converter}: dropped tool results with no matching call (messages "
            f"{', '.join(map(str, pairing.orphans))})",
            ConversionWarning,
            stacklevel=3,
        )
    if unanswered:
        warnings.warn(
            f"{converter}: added {len(unanswered)} error result(s) for tool calls that were never answered",
            ConversionWarning,
            stacklevel=3,
        )
    return repaired


def _result_link(message: Message) -> str:
    if message.tool_id:
        return f"{message.tool_id!r}"
    return f"for tool name {message.name!r}"


def optional_str(data: Mapping[str, Any], key: str, where: str) -> Optional[str]:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise MessageTypeError(f"{where}.{key} must be a str, not {type(value).__name__}")
    return value


def check_cache_places(cache: Sequence[CachePlace], count: int) -> list:
    """Validates a ``cache=`` argument: 'system', 'last' or message indices, at most four."""
    if isinstance(cache, (str, int)):
        cache = [cache]
    places = list(cache)
    if len(places) > MAX_CACHE_POINTS:
        raise ConversionError(f"cache: at most {MAX_CACHE_POINTS} cache points, got {len(places)}")
    for place in places:
        if isinstance(place, bool) or not isinstance(place, (str, int)):
            raise MessageTypeError(f"cache entries must be 'system', 'last' or an int, not {place!r}")
        if isinstance(place, str) and place not in ("system", "last"):
            raise ConversionError(f"cache: unknown place {place!r}; valid: 'system', 'last', an index")
        if isinstance(place, int) and not -count <= place < count:
            raise ConversionError(f"cache: message index {place} is out of range for {count} messages")
    return places
