"""A history kept within a token budget: :func:`trim` for a whole transcript,
:class:`ConversationMemory` for one that grows a message at a time (seed 000).

Both keep the same four rules, with the selection done in the Rust core:

1. system messages are kept (unless ``keep_system=False``); if they alone exceed the budget, the
   oldest of them go first (the newest always stays) and ``system_over_budget`` says so;
2. a tool call and its results are kept or removed together (see :mod:`agentmsg.toolpairs`);
3. the kept non-system messages are a contiguous run ending at the newest one;
4. the newest message (with its tool group) is always kept; if it alone is over the budget,
   ``over_budget`` says so instead of returning nothing.

    >>> import agentmsg
    >>> memory = agentmsg.ConversationMemory(20)
    >>> for text in ["Be brief", "What is 2+2? " * 3, "4", "And 3+3?"]:
    ...     memory.add(agentmsg.Message("system" if text == "Be brief" else "user", text))
    >>> [m.text for m in memory]
    ['Be brief', '4', 'And 3+3?']
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import (
    Callable,
    Deque,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import _core
from .errors import EncodingError, MessageError, MessageTypeError
from .blocks import ToolUseBlock
from .estimate import ROLE_CODES, estimate_tokens_many, measured_text
from .message import Message, Role, _as_list, _to_role
from .toolpairs import pair_tool_results

__all__ = ["token_counter", "TrimResult", "trim", "ConversationMemory"]

#: What counts a message's tokens: ``"estimate"``, an encoding name, or ``Message -> int``.
Counter = Union[str, Callable[[Message], int]]

_SYSTEM = Role.SYSTEM
_TOOL = Role.TOOL
_ASSISTANT = Role.ASSISTANT


def token_counter(counter: Counter) -> Callable[[Sequence[Message]], List[int]]:
    """The batch form of ``counter``: a function from messages to their token counts.

    ``"estimate"`` is seed 000's heuristic (:func:`agentmsg.estimate_tokens_many`); an encoding
    name (``"o200k_base"``, ``"cl100k_base"``) gives exact per-message chat counts
    (:func:`agentmsg.message_token_counts`); a callable is called once per message and must
    return an int >= 0.

    >>> token_counter("estimate")([Message.user("Hello")])
    [5]
    >>> token_counter(lambda m: len(m.text))([Message.user("Hello")])
    [5]
    """
    if isinstance(counter, str):
        if counter == "estimate":
            return estimate_tokens_many
        from . import tokens

        counts = getattr(tokens, "message_token_counts", None)
        if counts is None:
            raise EncodingError(f"unknown counter {counter!r}: exact encodings are not available")
        counts([], counter)  # an unknown encoding raises EncodingError here, not on first use
        return lambda messages: counts(messages, counter)
    if callable(counter):
        return lambda messages: [_checked_count(counter(m), i) for i, m in enumerate(messages)]
    raise MessageTypeError(
        f"counter must be 'estimate', an encoding name or a callable, not {type(counter).__name__}"
    )


def _single_counter(counter: Counter, batch: Callable[[Sequence[Message]], List[int]]) -> Callable[[Message], int]:
    """The one-message form of a counter, without the batch call's list round trip."""
    if counter == "estimate":
        estimate = _core.estimate_tokens
        return lambda message: estimate(measured_text(message), message.role.value)
    if callable(counter) and not isinstance(counter, str):
        return lambda message: _checked_count(counter(message), 0)
    return lambda message: batch((message,))[0]


def _checked_count(value: object, index: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageTypeError(
            f"counter returned {type(value).__name__} for message {index}; it must return an int"
        )
    if not 0 <= value < 2**64:
        raise MessageError(f"counter returned {value} for message {index}; counts must be in [0, 2**64)")
    return value


def _check_budget(max_tokens: object) -> int:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise MessageTypeError(f"max_tokens must be an int, not {type(max_tokens).__name__}")
    if not 0 <= max_tokens < 2**64:
        raise MessageError(f"max_tokens must be >= 0 (and < 2**64), got {max_tokens}")
    return max_tokens


_role_of = attrgetter("role")


def _roles(messages: Sequence[Message]) -> List[Role]:
    try:
        return list(map(_role_of, messages))
    except AttributeError:
        for index, message in enumerate(messages):
            if not isinstance(message, Message):
                raise MessageTypeError(
                    f"messages[{index}] must be a Message, not {type(message).__name__}"
                ) from None
        raise


# -- trim ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrimResult:
    """What :func:`trim` kept, with the state the rules may force.

    ``messages`` are the kept messages in order, ``kept`` their indices in the input,
    ``total_tokens`` their count; ``removed`` the rest, so nothing is lost silently.

    >>> r = trim([Message.user("Hello"), Message.user("World")], 5)
    >>> ([m.text for m in r.messages], [m.text for m in r.removed], r.total_tokens, r.over_budget)
    (['World'], ['Hello'], 5, False)
    """

    messages: List[Message]
    kept: Tuple[int, ...]
    total_tokens: int
    over_budget: bool
    system_over_budget: bool
    source: Sequence[Message] = field(repr=False)

    @property
    def removed(self) -> List[Message]:
        """The input messages that were not kept, in order.

        >>> trim([Message.user("a" * 40), Message.user("b")], 5).removed[0].length
        40
        """
        kept = set(self.kept)
        return [m for i, m in enumerate(self.source) if i not in kept]


def trim(
    messages: Sequence[Message],
    max_tokens: int,
    *,
    counter: Counter = "estimate",
    keep_system: bool = True,
    start_on: Union[Role, str, None] = None,
) -> TrimResult:
    """Keeps the newest messages that fit in ``max_tokens``, by the four rules of this module.

    ``start_on="user"`` makes the kept run begin at a user message (the shortest such run is
    kept, over budget, when none fits; the option is ignored when no user message can start
    one). Only the messages that can be kept are counted: the run is found from the newest end
    and counting stops once the budget is spent, so the cost follows the kept size, not the
    history's (the system messages are always counted).

    >>> calc = ToolUseBlock("c1", "calc", {"a": 1})
    >>> chat = [Message.system("Be brief"), Message.user("Compute"),
    ...         Message.assistant(tool_calls=[calc]), Message.tool("Result: 1", tool_id="c1"),
    ...         Message.assistant("It is 1")]
    >>> [m.role.value for m in trim(chat, 40).messages]
    ['system', 'assistant']
    """
    budget = _check_budget(max_tokens)
    count = token_counter(counter)
    start_role = None if start_on is None else _to_role(start_on)
    items = messages if isinstance(messages, (list, tuple)) else _as_list(messages, "messages", "a sequence of Message")
    roles = _roles(items)
    n = len(items)
    systems = _indices_of(roles, _SYSTEM) if keep_system else []
    system_counts = dict(zip(systems, count([items[i] for i in systems])))
    remaining = budget - _system_share(systems, system_counts, budget)
    is_system = set(systems)

    counts: Dict[int, int] = {}
    counted = 0  # sum of the non-system counts from `start` to the end
    start = n
    step = 32
    while start > 0:
        # Grow the window toward older messages, doubling, until no run reaching further
        # back could be chosen (see _window_is_enough).
        new_start = max(0, start - step)
        step *= 2
        fresh = [i for i in range(new_start, start) if i not in is_system]
        for i, c in zip(fresh, count([items[i] for i in fresh])):
            counts[i] = c
            counted += c
        start = new_start
        if counted > remaining and _window_is_enough(items, start, roles, start_role, is_system):
            break

    # Arrays for the core: the system messages before the window, then the window.
    positions = [i for i in systems if i < start] + list(range(start, n))
    pairing = pair_tool_results(items[start:])
    offset = len(positions) - (n - start)
    groups = [i for i in range(offset)] + [g + offset for g in pairing.groups]
    kept_positions, total, over, system_over = _core.select_kept(
        [system_counts[i] if i in system_counts else counts[i] for i in positions],
        [ROLE_CODES[roles[i]] for i in positions],
        groups,
        budget,
        keep_system,
        None if start_role is None else ROLE_CODES[start_role],
    )
    kept = tuple(positions[p] for p in kept_positions)
    return TrimResult([items[i] for i in kept], kept, total, over, system_over, items)


def _indices_of(roles: List[Role], role: Role) -> List[int]:
    """Where ``role`` occurs, found by ``list.index`` (a C loop: the scan of a long history)."""
    found: List[int] = []
    index = -1
    try:
        while True:
            index = roles.index(role, index + 1)
            found.append(index)
    except ValueError:
        return found


def _system_share(systems: List[int], counts: Dict[int, int], budget: int) -> int:
    """Tokens the kept system messages take (rule 1: newest first, at least the newest); may
    exceed the budget, and then no run of other messages fits."""
    total = sum(counts.values())
    if total <= budget:
        return total
    used = counts[systems[-1]]
    for i in reversed(systems[:-1]):
        if used + counts[i] > budget:
            break
        used += counts[i]
    return used


def _window_is_enough(
    items: Sequence[Message],
    start: int,
    roles: List[Role],
    start_role: Optional[Role],
    is_system: set,
) -> bool:
    """Whether ``items[start:]`` decides the selection, given that its non-system messages
    already exceed the budget: every tool result in it pairs with a call in it (so no group
    reaches further back), and with ``start_on`` some message of that role can start a run."""
    window = items[start:]
    pairing = pair_tool_results(window)
    if pairing.orphans:
        return False
    if start_role is None:
        return True
    groups = pairing.groups
    smallest = len(window)
    for j in range(len(window) - 1, -1, -1):
        if start + j in is_system:
            continue
        smallest = min(smallest, groups[j])
        if smallest >= j and roles[start + j] is start_role:
            return True
    return False


# -- ConversationMemory --------------------------------------------------------------------------


class _Call:
    __slots__ = ("group", "name", "id", "answered")

    def __init__(self, group: int, name: str, id: str) -> None:
        self.group = group
        self.name = name
        self.id = id
        self.answered = False


class ConversationMemory:
    """A conversation history under a token budget, pruned after every add (seed 000).

    Each message is counted once, when added; pruning removes whole tool groups from the front
    of the non-system run, so ``add`` costs amortized O(1) however long the history grows.
    Removed messages are listed in :attr:`pruned` (those of the latest add) and passed to
    ``on_prune`` if given. With a ``compactor`` (see :class:`agentmsg.Compactor`), the history
    is compacted when it passes the compactor's trigger, before anything is dropped. Safe to
    share between threads.

    >>> memory = ConversationMemory(30)
    >>> memory.extend([Message.system("You are helpful"), Message.user("Hi " * 30), Message.user("Hello")])
    >>> ([m.text for m in memory], memory.total_tokens, len(memory.pruned))
    (['You are helpful', 'Hello'], 12, 1)
    """

    def __init__(
        self,
        max_tokens: int,
        *,
        counter: Counter = "estimate",
        keep_system: bool = True,
        compactor: Optional["object"] = None,
        on_prune: Optional[Callable[[List[Message]], object]] = None,
    ) -> None:
        self._max_tokens = _check_budget(max_tokens)
        self._counter = counter
        self._count = token_counter(counter)
        self._count_one = _single_counter(counter, self._count)
        self._keep_system = bool(keep_system)
        self._compactor = compactor
        self._on_prune = on_prune
        self._lock = threading.RLock()
        self._version = 0  # bumped by every change, so an async compaction can tell it is stale
        self._reset()
        self._pruned: List[Message] = []

    def _reset(self) -> None:
        self._budget = _core.RollingBudget(self._max_tokens, self._keep_system)
        # (order, message, count): `order` interleaves the two deques back into one history.
        self._systems: Deque[Tuple[int, Message, int]] = deque()
        self._entries: Deque[Tuple[int, Message, int]] = deque()
        self._order = 0
        self._version += 1
        self._calls_by_id: Dict[str, List[_Call]] = {}
        self._open_turn: List[_Call] = []

    # -- adding --------------------------------------------------------------------------------

    def add(self, message: Message) -> None:
        """Adds one message and prunes; see :attr:`pruned` for what left.

        >>> memory = ConversationMemory(100)
        >>> memory.add(Message.user("Hello"))
        >>> memory.total_tokens
        5
        """
        if not isinstance(message, Message):
            raise MessageTypeError(f"add() takes a Message, not {type(message).__name__}")
        self._add_counted((message,), (self._count_one(message),))

    def extend(self, messages: Iterable[Message]) -> None:
        """Adds messages in order (counted in one batch), pruning as each arrives.

        >>> memory = ConversationMemory(100)
        >>> memory.extend([Message.user("a"), Message.assistant("b")])
        >>> len(memory)
        2
        """
        items = _as_list(messages, "messages", "a sequence of Message")
        _roles(items)  # type-checks every item before anything is added
        self._add_counted(items, self._count(items))

    def _add_counted(self, messages: Sequence[Message], counts: Sequence[int]) -> None:
        with self._lock:
            removed: List[Message] = []
            for message, count in zip(messages, counts):
                if self._compactor is None:
                    self._push(message, count, removed)
                else:
                    # Compaction comes before dropping: push, compact if past the trigger, prune.
                    self._push(message, count, removed, prune=False)
                    try:
                        self._maybe_compact(removed)
                    finally:  # a failing policy must not leave the memory over budget
                        self._apply_prune(self._budget.prune(), removed)
            self._pruned = removed
        if removed and self._on_prune is not None:
            self._on_prune(list(removed))

    def _push(self, message: Message, count: int, removed: List[Message], prune: bool = True) -> None:
        budget = self._budget
        role = message.role
        group: Optional[int] = None
        turn: List[_Call] = []
        if role is _TOOL:
            call = self._answered_call(message)
            if call is not None:
                if call.group < budget.front_seq:
                    # Its call was already pruned: keeping the result would orphan it.
                    removed.append(message)
                    return
                group = call.group
        elif role is _ASSISTANT:
            seq = budget.next_seq
            turn = [_Call(seq, b.name, b.id) for b in message.content if type(b) is ToolUseBlock]
        if turn:
            self._open_turn = turn
            for call in turn:
                self._calls_by_id.setdefault(call.id, []).append(call)
        dropped = budget.push(count, ROLE_CODES[role], group, prune)
        entry = (self._order, message, count)
        self._order += 1
        self._version += 1
        if role is _SYSTEM and self._keep_system:
            self._systems.append(entry)
        else:
            self._entries.append(entry)
        self._apply_prune(dropped, removed)

    def _apply_prune(self, dropped: Tuple[int, int], removed: List[Message]) -> None:
        drop_systems, drop_messages = dropped
        for _ in range(drop_systems):
            removed.append(self._systems.popleft()[1])
        for _ in range(drop_messages):
            removed.append(self._entries.popleft()[1])

    def _answered_call(self, message: Message) -> Optional[_Call]:
        """The call a tool result answers (marked answered), by id or else by name."""
        by_id = self._calls_by_id
        if message.tool_id:
            pending = by_id.get(message.tool_id)
            if not pending:
                return None
            call = pending.pop()
            if not pending:
                del by_id[message.tool_id]
        else:
            call = next((c for c in self._open_turn if not c.answered and c.name == message.name), None)
            if call is None:
                return None
            pending = by_id.get(call.id)
            if pending and call in pending:
                pending.remove(call)
                if not pending:
                    del by_id[call.id]
        call.answered = True
        return call

    async def aadd(self, message: Message) -> None:
        """:meth:`add` for a memory whose compactor has async policies (an LLM summarizer):
        the compaction is awaited outside the lock. If another add changed the history while it
        ran, its result is discarded and the next add compacts again.

        >>> import asyncio
        >>> from functools import partial
        >>> async def summarizer(old): return "summary of %d" % len(old)
        >>> compactor = Compactor([partial(asummarize, summarizer=summarizer, keep_recent=1)])
        >>> memory = ConversationMemory(20, compactor=compactor)
        >>> for text in ["a" * 40, "b" * 40, "c"]:
        ...     asyncio.run(memory.aadd(Message.user(text)))
        >>> [m.text for m in memory]
        ['summary of 1', 'c']
        """
        await self.aextend((message,))

    async def aextend(self, messages: Iterable[Message]) -> None:
        """:meth:`extend` with async compaction (see :meth:`aadd`).

        >>> import asyncio
        >>> memory = ConversationMemory(100)
        >>> asyncio.run(memory.aextend([Message.user("a"), Message.user("b")]))
        >>> len(memory)
        2
        """
        items = _as_list(messages, "messages", "a sequence of Message")
        _roles(items)
        counts = self._count(items)
        compactor = self._compactor
        removed: List[Message] = []
        for message, count in zip(items, counts):
            with self._lock:
                self._push(message, count, removed, prune=compactor is None)
                due = compactor is not None and self._budget.total > compactor.trigger * self._max_tokens
                snapshot = self._history() if due else []
                version = self._version
            try:
                if due:
                    compacted = await compactor.acompact(snapshot, self._max_tokens, counter=self._counter)
                    with self._lock:
                        if self._version == version:
                            self._replace(snapshot, compacted, removed)
            finally:  # a failing policy must not leave the memory over budget
                if compactor is not None:
                    with self._lock:
                        self._apply_prune(self._budget.prune(), removed)
        with self._lock:
            self._pruned = removed
        if removed and self._on_prune is not None:
            self._on_prune(list(removed))

    def _maybe_compact(self, removed: List[Message]) -> None:
        compactor = self._compactor
        trigger = getattr(compactor, "trigger", 1.0)
        if self._budget.total <= trigger * self._max_tokens:
            return
        current = self._history()
        compacted = compactor.compact(current, self._max_tokens, counter=self._counter)
        self._replace(current, compacted, removed)

    def _replace(self, current: List[Message], compacted: List[Message], removed: List[Message]) -> None:
        """Rebuilds the state from ``compacted``, reusing the counts of unchanged messages."""
        known = {id(m): c for _, m, c in chain(self._systems, self._entries)}
        kept_ids = {id(m) for m in compacted}
        removed.extend(m for m in current if id(m) not in kept_ids)
        fresh = [m for m in compacted if id(m) not in known]
        fresh_counts = dict(zip(map(id, fresh), self._count(fresh)))
        self._reset()
        for message in compacted:
            count = known.get(id(message), fresh_counts.get(id(message), 0))
            self._push(message, count, removed, prune=False)

    # -- reading -------------------------------------------------------------------------------

    def _history(self) -> List[Message]:
        if not self._systems:
            return [m for _, m, _ in self._entries]
        merged = sorted(chain(self._systems, self._entries), key=lambda entry: entry[0])
        return [m for _, m, _ in merged]

    @property
    def messages(self) -> List[Message]:
        """A copy of the kept messages, in the order they were added.

        >>> memory = ConversationMemory(100); memory.add(Message.user("Hi"))
        >>> [m.text for m in memory.messages]
        ['Hi']
        """
        with self._lock:
            return self._history()

    @property
    def total_tokens(self) -> int:
        """The sum of the kept messages' counts.

        >>> ConversationMemory(10).total_tokens
        0
        """
        return self._budget.total

    @property
    def max_tokens(self) -> int:
        """The budget.

        >>> ConversationMemory(10).max_tokens
        10
        """
        return self._max_tokens

    @property
    def over_budget(self) -> bool:
        """Whether the kept messages exceed the budget (the newest group alone does, rule 4).

        >>> memory = ConversationMemory(3); memory.add(Message.user("Hello there"))
        >>> memory.over_budget, len(memory)
        (True, 1)
        """
        return self._budget.over_budget

    @property
    def system_over_budget(self) -> bool:
        """Whether the system messages alone exceed the budget, so the oldest of them were removed.

        >>> memory = ConversationMemory(5); memory.extend([Message.system("a" * 8), Message.system("b")])
        >>> memory.system_over_budget, [m.text for m in memory]
        (True, ['b'])
        """
        return self._budget.system_over_budget

    @property
    def pruned(self) -> List[Message]:
        """The messages removed by the latest :meth:`add` or :meth:`extend`, oldest first.

        >>> memory = ConversationMemory(5); memory.extend([Message.user("a"), Message.user("b")])
        >>> [m.text for m in memory.pruned]
        ['a']
        """
        with self._lock:
            return list(self._pruned)

    def recent(self, n: int) -> List[Message]:
        """The newest ``n`` kept messages, in order.

        >>> memory = ConversationMemory(100); memory.extend([Message.user("a"), Message.user("b")])
        >>> [m.text for m in memory.recent(1)]
        ['b']
        """
        if isinstance(n, bool) or not isinstance(n, int):
            raise MessageTypeError(f"n must be an int, not {type(n).__name__}")
        if n <= 0:
            return []
        with self._lock:
            return self._history()[-n:]

    def by_role(self, role: Union[Role, str]) -> List[Message]:
        """The kept messages written by ``role``, in order.

        >>> memory = ConversationMemory(100); memory.extend([Message.user("a"), Message.assistant("b")])
        >>> [m.text for m in memory.by_role("assistant")]
        ['b']
        """
        wanted = _to_role(role)
        with self._lock:
            return [m for m in self._history() if m.role is wanted]

    def clear(self) -> None:
        """Removes every message (they are not reported as pruned).

        >>> memory = ConversationMemory(100); memory.add(Message.user("a")); memory.clear()
        >>> len(memory), memory.total_tokens
        (0, 0)
        """
        with self._lock:
            self._reset()
            self._pruned = []

    def __len__(self) -> int:
        with self._lock:
            return len(self._systems) + len(self._entries)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __repr__(self) -> str:
        return (
            f"ConversationMemory({len(self)} messages, {self.total_tokens}/{self._max_tokens} tokens)"
        )
