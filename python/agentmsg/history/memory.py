"""A history that grows a message at a time, kept within a token budget after every add:
:class:`ConversationMemory`, by the same four rules as :func:`agentmsg.trim`
(:mod:`agentmsg.history.trim`), with the counts and pairing in the Rust core.

    >>> import agentmsg
    >>> memory = agentmsg.ConversationMemory(20)
    >>> for text in ["Be brief", "What is 2+2? " * 3, "4", "And 3+3?"]:
    ...     memory.add(agentmsg.Message("system" if text == "Be brief" else "user", text))
    >>> [m.text for m in memory]
    ['Be brief', '4', 'And 3+3?']
"""

from __future__ import annotations

import heapq
import threading
from collections import deque
from typing import (
    TYPE_CHECKING,
    Any,
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

from .. import _core
from .._checks import check_calls
from ..counting.counter import CountCache, Counter, TokenCounter
from ..errors import MessageError, MessageTypeError
from ..model.blocks import ToolUseBlock
from ..model.message import ROLE_CODES, Message, Role, to_role
from ..readers import MessageLike, read_message, read_messages
from .check import CheckedProvider, Repair, repair
from .trim import check_budget

if TYPE_CHECKING:
    pass

__all__ = ["ConversationMemory"]

_SYSTEM = Role.SYSTEM
_TOOL = Role.TOOL
_ASSISTANT = Role.ASSISTANT
_TOOL_CODE = ROLE_CODES[Role.TOOL]
_ASSISTANT_CODE = ROLE_CODES[Role.ASSISTANT]


# -- trim ---------------------------------------------------------------------------------------


# -- ConversationMemory --------------------------------------------------------------------------


class ConversationMemory:
    """A conversation history under a token budget, pruned after every add.

    Each message is counted once, when added; its count, its tool group and the pairing of
    results with calls live in the Rust core (``RollingHistory``), the messages here. Pruning
    removes whole tool groups from the front of the non-system run, so ``add`` costs amortized
    O(1) however long the history grows. Removed messages are listed in :attr:`pruned` (those
    of the latest add) and passed to ``on_prune`` if given.

    With a ``compactor`` (see :class:`agentmsg.Compactor`), the history is compacted when it
    passes the compactor's trigger, before anything is dropped; compaction reuses the counts the
    memory holds, so only messages a policy creates are counted. A compaction looks at the whole
    history, so after one the next waits until a quarter of the history is new (it still runs at
    once, before anything is dropped, when the previous one got the history under the trigger):
    ``add`` stays amortized O(1) with a compactor too.

    ``add`` and ``extend`` are all or nothing: if ``on_prune`` or the compactor raises, the
    memory is exactly as before the call (so a retry does not add twice). Safe to share between
    threads; ``on_prune`` and compaction run under the memory's lock, and may read the memory
    but not add to it.

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
        compactor: Optional[Any] = None,
        on_prune: Optional[Callable[[List[Message]], object]] = None,
        provider: Optional[CheckedProvider] = None,
    ) -> None:
        self._max_tokens = check_budget(max_tokens)
        if provider is not None:
            repair([], provider)  # checks the name now, not on first read
        self._provider = provider
        self._counter_given = counter  # kept for pickling: the TokenCounter wraps it in closures
        self._counter = TokenCounter(counter)
        if not isinstance(keep_system, bool):
            raise MessageTypeError(f"keep_system must be a bool, not {type(keep_system).__name__}")
        self._keep_system = keep_system
        if compactor is not None and not (callable(getattr(compactor, "compact", None))
                                          and isinstance(getattr(compactor, "trigger", None), float)):
            raise MessageTypeError(f"compactor must be a Compactor, not {type(compactor).__name__}")
        if on_prune is not None and not callable(on_prune):
            raise MessageTypeError(f"on_prune must be callable, not {type(on_prune).__name__}")
        self._compactor: Any = compactor  # a Compactor (checked above) or None
        self._on_prune = on_prune
        self._lock = threading.RLock()
        self._changing = False  # a change is under way (on_prune or a policy is running)
        self._version = 0  # bumped by every change, so an async compaction can tell it is stale
        self._pruned: List[Message] = []
        self._reset()

    def _reset(self) -> None:
        self._state = _core.RollingHistory(self._max_tokens, self._keep_system)
        # (order, message): `order` interleaves the two deques back into one history; the
        # counts are the state's, in the same order.
        self._systems: Deque[Tuple[int, Message]] = deque()
        self._entries: Deque[Tuple[int, Message]] = deque()
        self._order = 0
        self._version += 1
        self._adds_since_compaction = 0
        self._compaction_spacing = 0  # adds before the next compaction may run
        self._compaction_fell_short = False  # the last compaction left the history over the trigger

    # -- adding --------------------------------------------------------------------------------

    def add(self, message: MessageLike) -> None:
        """Adds one message and prunes, all or nothing; see :attr:`pruned` for what left.

        >>> memory = ConversationMemory(100)
        >>> memory.add(Message.user("Hello"))
        >>> memory.total_tokens
        5
        """
        if message.__class__ is not Message:  # a dict or SDK object; an Anthropic turn may hold several
            return self.extend(read_message(message))
        count = self._counter.count(message)
        self._change(self._add_counted, ((message, count),))

    def extend(self, messages: Iterable[MessageLike]) -> None:
        """Adds messages in order (counted in one batch), pruning as each arrives; all or nothing.

        >>> memory = ConversationMemory(100)
        >>> memory.extend([Message.user("a"), Message.assistant("b")])
        >>> len(memory)
        2
        """
        items = read_messages(messages)
        counted = list(zip(items, self._counter.count_many(items)))
        self._change(self._add_counted, counted)

    def _change(self, step: Callable[[Any, Optional[List[Any]], List[Message]], None], argument: Any) -> None:
        """Runs ``step(argument, undo, removed)`` and ``on_prune`` as one transaction: on any
        exception the core state, the message deques and the counters go back to what they
        were. One message with no callback to fail after it needs no journal (``undo`` None):
        nothing can raise once its push has begun."""
        with self._lock:
            if self._changing:
                raise MessageError("on_prune and compaction policies cannot add to the memory they serve")
            if self._on_prune is None and self._compactor is None and len(argument) == 1:
                removed: List[Message] = []
                step(argument, None, removed)
                self._pruned = removed
                return
            self._changing = True
            saved = (self._order, self._version, self._pruned, self._adds_since_compaction,
                     self._compaction_spacing, self._compaction_fell_short)
            undo: List[Any] = []
            removed = []
            self._state.begin()
            try:
                step(argument, undo, removed)
                self._pruned = removed
                if removed and self._on_prune is not None:
                    self._on_prune(list(removed))
            except BaseException:
                self._state.rollback()
                for action, *args in reversed(undo):
                    action(*args)
                (self._order, self._version, self._pruned, self._adds_since_compaction,
                 self._compaction_spacing, self._compaction_fell_short) = saved
                raise
            else:
                self._state.commit()
            finally:
                self._changing = False

    def _add_counted(self, counted: Sequence[Tuple[Message, int]], undo: Optional[List[Any]],
                     removed: List[Message]) -> None:
        compactor = self._compactor
        for message, count in counted:
            self._push(message, count, undo, removed, prune=compactor is None)
            if compactor is not None:
                # Compaction comes before dropping: push, compact if due, prune.
                self._adds_since_compaction += 1
                if self._compaction_due(0):
                    history, counts = self._snapshot()
                    cache = CountCache(self._counter, zip(history, counts))
                    compacted = compactor.compact(history, self._max_tokens, counter=cache)
                    # undo is a journal (not None) whenever there is a compactor
                    self._replace(history, compacted, cache, undo, removed)  # type: ignore[arg-type]
                self._apply_prune(self._state.prune(), undo, removed)

    def _compaction_due(self, extra: int) -> bool:
        """Whether the history (plus ``extra`` tokens about to come) passed the trigger and the
        spacing since the last compaction allows one."""
        total = self._state.total + extra
        if total <= self._compactor.trigger * self._max_tokens:
            return False
        if self._adds_since_compaction >= self._compaction_spacing:
            return True
        return total > self._max_tokens and not self._compaction_fell_short

    def _push(self, message: Message, count: int, undo: Optional[List[Any]], removed: List[Message],
              prune: bool = True) -> None:
        role = message.role
        # The core refuses an id or name with a lone surrogate (MessageError), adding nothing.
        if role is _TOOL:
            dropped = self._state.push(count, _TOOL_CODE, None, message.tool_id, message.name, prune)
        elif role is _ASSISTANT:
            calls = [(b.id, b.name) for b in message.content if isinstance(b, ToolUseBlock)]
            dropped = self._state.push(count, _ASSISTANT_CODE, calls or None, None, None, prune)
        else:
            dropped = self._state.push(count, ROLE_CODES[role], None, None, None, prune)
        if dropped is None:
            removed.append(message)  # its call was already pruned: keeping it would orphan it
            return
        entry = (self._order, message)
        self._order += 1
        self._version += 1
        entries = self._systems if role is _SYSTEM and self._keep_system else self._entries
        entries.append(entry)
        if undo is not None:
            undo.append((entries.pop,))
        if dropped[0] or dropped[1]:
            self._apply_prune(dropped, undo, removed)

    def _apply_prune(self, dropped: Tuple[int, int], undo: Optional[List[Any]], removed: List[Message]) -> None:
        for entries, how_many in zip((self._systems, self._entries), dropped):
            for _ in range(how_many):
                entry = entries.popleft()
                if undo is not None:
                    undo.append((entries.appendleft, entry))
                removed.append(entry[1])

    def _snapshot(self) -> Tuple[List[Message], List[int]]:
        """The history and the counts the state holds for it."""
        systems = list(zip(self._systems, self._state.system_counts()))
        entries = list(zip(self._entries, self._state.counts()))
        merged = list(heapq.merge(systems, entries, key=lambda item: item[0][0])) if systems else entries
        return [m for (_, m), _ in merged], [c for _, c in merged]

    def _replace(self, current: List[Message], compacted: Sequence[Message], cache: CountCache,
                 undo: List[Any], removed: List[Message]) -> None:
        """Rebuilds the state from ``compacted``, reusing the counts of unchanged messages."""
        compacted = list(compacted)
        kept_ids = {id(m) for m in compacted}
        removed.extend(m for m in current if id(m) not in kept_ids)
        counts = cache.counts(compacted)
        undo.append((self._restore_deques, self._systems, self._entries))
        self._systems, self._entries = deque(), deque()
        self._state.clear()
        for message, count in zip(compacted, counts):
            self._push(message, count, undo, removed, prune=False)
        self._adds_since_compaction = 0
        self._compaction_spacing = max(1, len(compacted) // 4)
        self._compaction_fell_short = self._state.total > self._compactor.trigger * self._max_tokens

    def _restore_deques(self, systems: Deque[Tuple[int, Message]], entries: Deque[Tuple[int, Message]]) -> None:
        self._systems, self._entries = systems, entries

    async def aadd(self, message: MessageLike) -> None:
        """:meth:`add` for a memory whose compactor has async policies (an LLM summarizer):
        the compaction is awaited outside the lock, before anything changes. If another add
        changed the history while it ran, its result is discarded and the next add compacts
        again. All or nothing, like :meth:`add`.

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
        await self.aextend(read_message(message))

    async def aextend(self, messages: Iterable[MessageLike]) -> None:
        """:meth:`extend` with async compaction (see :meth:`aadd`): when the new messages take
        the history past the trigger, the history with them is compacted once, then they are
        added and the memory pruned, all or nothing.

        >>> import asyncio
        >>> memory = ConversationMemory(100)
        >>> asyncio.run(memory.aextend([Message.user("a"), Message.user("b")]))
        >>> len(memory)
        2
        """
        items = read_messages(messages)
        counts = self._counter.count_many(items)
        compactor = self._compactor
        compacted: Optional[List[Message]] = None
        with self._lock:
            due = compactor is not None and self._compaction_due_after(len(items), sum(counts))
            if due:
                history, history_counts = self._snapshot()
                snapshot = history + items
                cache = CountCache(self._counter, zip(snapshot, history_counts + counts))
                version = self._version
        if due:
            compacted = await compactor.acompact(snapshot, self._max_tokens, counter=cache)

        def step(items: List[Message], undo: Optional[List[Any]], removed: List[Message]) -> None:
            self._adds_since_compaction += len(items)
            if compacted is not None and self._version == version:
                # undo is a journal (not None) whenever there is a compactor
                self._replace(snapshot, compacted, cache, undo, removed)  # type: ignore[arg-type]
            else:
                for message, count in zip(items, counts):
                    self._push(message, count, undo, removed, prune=compactor is None)
            if compactor is not None:
                self._apply_prune(self._state.prune(), undo, removed)

        self._change(step, items)

    def _compaction_due_after(self, adds: int, tokens: int) -> bool:
        self._adds_since_compaction += adds
        try:
            return self._compaction_due(tokens)
        finally:
            self._adds_since_compaction -= adds

    # -- reading -------------------------------------------------------------------------------

    def _history(self) -> List[Message]:
        if not self._systems:
            return [m for _, m in self._entries]
        return [m for _, m in heapq.merge(self._systems, self._entries, key=lambda entry: entry[0])]

    @property
    def messages(self) -> List[Message]:
        """A copy of the kept messages, in the order they were added.

        With ``provider=``, the kept messages as :func:`agentmsg.repair` makes them acceptable to
        that provider (pruning may leave an assistant turn first, a call's results may not have
        been added yet); :attr:`repairs` lists what that changed.

        >>> memory = ConversationMemory(100); memory.add(Message.user("Hi"))
        >>> [m.text for m in memory.messages]
        ['Hi']
        """
        with self._lock:
            if self._provider is None:
                return self._history()
            return repair(self._history(), self._provider).messages

    @property
    def repairs(self) -> List[Repair]:
        """What :attr:`messages` changed so that the memory's ``provider`` accepts them (indices
        into the kept history); empty without a provider.

        >>> memory = ConversationMemory(100, provider="anthropic"); memory.add(Message.assistant("Hi"))
        >>> memory.messages, [str(r) for r in memory.repairs]
        ([], ['messages[0]: first_not_user: dropped an assistant message before the first user message'])
        """
        with self._lock:
            if self._provider is None:
                return []
            return repair(self._history(), self._provider).repairs

    @property
    def total_tokens(self) -> int:
        """The sum of the kept messages' counts.

        >>> ConversationMemory(10).total_tokens
        0
        """
        return self._state.total

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
        return self._state.over_budget

    @property
    def system_over_budget(self) -> bool:
        """Whether the system messages alone exceed the budget, so the oldest of them were removed.

        >>> memory = ConversationMemory(5); memory.extend([Message.system("a" * 8), Message.system("b")])
        >>> memory.system_over_budget, [m.text for m in memory]
        (True, ['b'])
        """
        return self._state.system_over_budget

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
        wanted = to_role(role)
        with self._lock:
            return [m for m in self._history() if m.role is wanted]

    def clear(self) -> None:
        """Removes every message (they are not reported as pruned).

        >>> memory = ConversationMemory(100); memory.add(Message.user("a")); memory.clear()
        >>> len(memory), memory.total_tokens
        (0, 0)
        """
        with self._lock:
            if self._changing:
                raise MessageError("on_prune and compaction policies cannot clear the memory they serve")
            self._reset()
            self._pruned = []

    def __len__(self) -> int:
        with self._lock:
            return len(self._systems) + len(self._entries)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickles as its settings and messages (so that process pools and Ray can ship it); the
        counter, compactor and ``on_prune`` must pickle too (a lambda does not).

        >>> import pickle
        >>> memory = ConversationMemory(100); memory.add(Message.user("hi"))
        >>> [m.text for m in pickle.loads(pickle.dumps(memory))]
        ['hi']
        """
        with self._lock:
            settings = {"counter": self._counter_given, "keep_system": self._keep_system,
                        "compactor": self._compactor, "on_prune": self._on_prune, "provider": self._provider}
            return (_restore_memory, (self._max_tokens, settings, self._history(), list(self._pruned)))

    def __repr__(self) -> str:
        return (
            f"ConversationMemory({len(self)} messages, {self.total_tokens}/{self._max_tokens} tokens)"
        )


def _restore_memory(max_tokens: int, settings: Dict[str, Any], messages: List[Message],
                    pruned: List[Message]) -> ConversationMemory:
    """Rebuilds a pickled memory: the messages it held fit its budget (or are its newest, kept
    over budget), so adding them again, with no compactor or callback yet, keeps them all."""
    memory = ConversationMemory(max_tokens, counter=settings["counter"], keep_system=settings["keep_system"])
    memory.extend(messages)
    memory._compactor, memory._on_prune, memory._pruned = settings["compactor"], settings["on_prune"], pruned
    memory._provider = settings.get("provider")
    return memory


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
