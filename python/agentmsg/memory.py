"""A history kept within a token budget: :func:`trim` for a whole transcript,
:class:`ConversationMemory` for one that grows a message at a time.

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

import heapq
import threading
from collections import deque
from dataclasses import dataclass, field
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

from . import _core, _selection
from ._checks import check_calls, describe
from .blocks import TextBlock, ToolUseBlock
from .encoding import Encoding, get_encoding, resolve_encoding
from .counting import CountCache, Counter, TokenCounter
from .errors import MessageError, MessageTypeError
from .estimate import ROLE_CODES
from .message import Message, Role, _as_list, _to_role
from .normalize import MessageLike, read_message, read_messages
from .toolpairs import _pair, _role_of, _unencodable

if TYPE_CHECKING:
    from .options import TrimStrategy

__all__ = ["token_counter", "TrimResult", "trim", "ConversationMemory"]

_SYSTEM = Role.SYSTEM
_TOOL = Role.TOOL
_ASSISTANT = Role.ASSISTANT
_TOOL_CODE = ROLE_CODES[Role.TOOL]
_ASSISTANT_CODE = ROLE_CODES[Role.ASSISTANT]


def token_counter(counter: Counter) -> Callable[[Sequence[Message]], List[int]]:
    """The batch form of ``counter``: a function from messages to their token counts (see
    :class:`agentmsg.counting.TokenCounter`, which this returns the ``count_many`` of).

    ``"estimate"`` is the fast heuristic (:func:`agentmsg.estimate_tokens_many`); an encoding
    name (``"o200k_base"``, ``"cl100k_base"``) gives exact per-message chat counts
    (:func:`agentmsg.message_token_counts`); a callable is called once per message and must
    return an int >= 0.

    >>> token_counter("estimate")([Message.user("Hello")])
    [5]
    >>> token_counter(lambda m: len(m.text))([Message.user("Hello")])
    [5]
    """
    return TokenCounter(counter).count_many


def _check_budget(max_tokens: object) -> int:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise MessageTypeError(f"max_tokens must be an int, not {type(max_tokens).__name__}")
    if not 0 <= max_tokens < 2**64:
        raise MessageError(f"max_tokens must be >= 0 (and < 2**64), got {describe(max_tokens)}")
    return max_tokens


# -- trim ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrimResult:
    """What :func:`trim` kept, with the state the rules may force.

    ``messages`` are the kept messages in order, ``kept`` their indices in the input,
    ``total_tokens`` their count; ``removed`` the rest, so nothing is lost silently. With
    ``allow_partial``, ``partial`` is the index of the one message of which only a part is kept
    (``messages`` holds the cut copy), else None.

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
    partial: Optional[int] = None

    @property
    def removed(self) -> List[Message]:
        """The input messages that were not kept, in order (a message cut by ``allow_partial``
        counts as kept).

        >>> trim([Message.user("a" * 40), Message.user("b")], 5).removed[0].length
        40
        """
        kept = set(self.kept)
        return [m for i, m in enumerate(self.source) if i not in kept]


#: The role rules' arguments: one role, or several (any of them).
RoleRule = Union[Role, str, Sequence[Union[Role, str]], None]


def _role_codes(value: RoleRule, what: str) -> Optional[List[int]]:
    """A role rule as core role codes (None for no rule)."""
    if value is None:
        return None
    if isinstance(value, (str, Role)):
        return [ROLE_CODES[_to_role(value)]]
    roles = _as_list(value, what, "a role or a sequence of roles")
    if not roles:
        raise MessageError(f"{what} must name at least one role")
    return [ROLE_CODES[_to_role(role)] for role in roles]


def trim(
    messages: Iterable[MessageLike],
    max_tokens: int,
    *,
    counter: Counter = "estimate",
    keep_system: bool = True,
    start_on: RoleRule = None,
    end_on: RoleRule = None,
    strategy: TrimStrategy = "last",
    allow_partial: bool = False,
) -> TrimResult:
    """Keeps the newest messages that fit in ``max_tokens``, by the four rules of this module.

    ``start_on="user"`` makes the kept run begin at a user message (the shortest such run is
    kept, over budget, when none fits; the option is ignored when no user message can start
    one). ``end_on`` makes it end at a message of that role after which no tool group goes on
    (the messages after it are removed; when no message can end the run, only the system
    messages are kept). Both take one role or a list of roles.

    ``strategy="first"`` keeps the oldest messages instead: the run begins at the oldest
    non-system message and ends at the newest clean end that fits (the oldest group is kept,
    over budget, when it alone does not fit); ``start_on`` is then an error, as in LangChain.

    ``allow_partial=True`` keeps part of one more message instead of dropping it whole: the
    message just past the longest run the budget allows (before it; after it for ``"first"``)
    when its role may begin (end) the run, or the newest message when it alone is over budget,
    cut at a token boundary (of the counter's encoding; ``o200k_base`` for other counters) to
    its newest part (oldest, for ``"first"``) that fits. Only a message of one text block with
    no tool call is cut, never one of a tool group; ``partial`` says which.

    Only the messages that can be kept are counted: the run is found from its end and counting
    stops once the budget is spent, so the cost follows the kept size, not the history's (the
    system messages are always counted).

    >>> calc = ToolUseBlock("c1", "calc", {"a": 1})
    >>> chat = [Message.system("Be brief"), Message.user("Compute"),
    ...         Message.assistant(tool_calls=[calc]), Message.tool("Result: 1", tool_id="c1"),
    ...         Message.assistant("It is 1")]
    >>> [m.role.value for m in trim(chat, 40).messages]
    ['system', 'assistant']
    >>> [m.role.value for m in trim(chat, 40, strategy="first").messages]
    ['system', 'user']
    >>> r = trim([Message.user("one two three four five six")], 8, allow_partial=True)
    >>> r.messages[0].text, r.partial
    (' four five six', 0)
    """
    budget = _check_budget(max_tokens)
    count = TokenCounter(counter)
    if not isinstance(keep_system, bool):
        raise MessageTypeError(f"keep_system must be a bool, not {type(keep_system).__name__}")
    if not isinstance(allow_partial, bool):
        raise MessageTypeError(f"allow_partial must be a bool, not {type(allow_partial).__name__}")
    if strategy not in ("last", "first"):
        raise MessageError(f"strategy must be 'last' or 'first', not {describe(strategy)}")
    if strategy == "first" and start_on is not None:
        raise MessageError("start_on is only valid with strategy='last'")
    start_codes = _role_codes(start_on, "start_on")
    end_codes = _role_codes(end_on, "end_on")
    items = messages if isinstance(messages, (list, tuple)) else read_messages(messages)
    # The one read of the whole history: where the system messages are (and a type check).
    try:
        systems = _core.positions_of_role(items, _SYSTEM, Message)
    except MessageTypeError:  # dicts or SDK objects: read them (a list of Messages costs nothing more)
        items = read_messages(items)
        systems = _core.positions_of_role(items, _SYSTEM, Message)
    selection = _selection.select(
        _MessageSource(items, count), budget, keep_system=keep_system,
        systems=systems if keep_system else [], start_on=start_codes, end_on=end_codes,
        first=strategy == "first", allow_partial=allow_partial,
    )
    kept_messages = [items[i] for i in selection.kept]
    partial = None
    if selection.partial is not None:
        partial, cut = selection.partial
        kept_messages[selection.kept.index(partial)] = cut
    return TrimResult(kept_messages, selection.kept, selection.total, selection.over_budget,
                      selection.system_over_budget, items, partial)


class _MessageSource:
    """A list of :class:`Message` as :func:`agentmsg._selection.select` reads it."""

    __slots__ = ("items", "counter")

    def __init__(self, items: Sequence[Message], counter: TokenCounter) -> None:
        self.items = items
        self.counter = counter

    def __len__(self) -> int:
        return len(self.items)

    def role_codes(self, start: int, stop: int) -> List[int]:
        return list(map(ROLE_CODES.__getitem__, map(_role_of, self.items[start:stop])))

    def counts(self, positions: Sequence[int]) -> List[int]:
        return self.counter.count_many([self.items[i] for i in positions], positions)

    def groups(self, start: int, stop: int, codes: List[int]) -> Tuple[List[int], bool]:
        call_of, orphans, _, _ = _pair(self.items[start:stop])
        return [c if c >= 0 else j for j, c in enumerate(call_of)], bool(orphans)

    def cut(self, index: int, tokens: int, keep_end: bool) -> Optional[Tuple[Message, int]]:
        message = self.items[index]
        if message.role is _TOOL or len(message.content) != 1 or not isinstance(message.content[0], TextBlock):
            return None
        spec = self.counter.spec
        encoding = get_encoding(resolve_encoding(spec) if isinstance(spec, str) and spec != "estimate" else "o200k_base")
        pieces = _TokenPieces(message.content[0].text, encoding, keep_end)
        best: Optional[Tuple[Message, int]] = None
        low, high = 1, pieces.size  # the most tokens whose cut message fits
        while low <= high:
            middle = (low + high) // 2
            text = pieces.text(middle)
            if not text:  # the tokens end inside one character: take more
                low = middle + 1
                continue
            candidate = message.replace(content=text)
            counted = self.counter.count(candidate)
            if counted <= tokens:
                best, low = (candidate, counted), middle + 1
            else:
                high = middle - 1
        return best


class _TokenPieces:
    """The first or last ``k`` tokens of a text, as text: a prefix or suffix cut at a token
    boundary, moved to the nearest whole character when the boundary splits one."""

    def __init__(self, text: str, encoding: Encoding, keep_end: bool) -> None:
        self.tokens = encoding.encode_ordinary(text)
        self.size = len(self.tokens)
        self.data = text.encode("utf-8", "surrogatepass")  # the bytes the tokens cover
        self.encoding = encoding
        self.keep_end = keep_end

    def text(self, k: int) -> str:
        data = self.data
        if self.keep_end:
            at = len(data) - len(self.encoding.decode_bytes(self.tokens[self.size - k:]))
            while at < len(data) and data[at] & 0xC0 == 0x80:  # inside a character: skip its tail
                at += 1
            return data[at:].decode("utf-8", "surrogatepass")
        at = len(self.encoding.decode_bytes(self.tokens[:k]))
        while 0 < at < len(data) and data[at] & 0xC0 == 0x80:  # inside a character: leave it out
            at -= 1
        return data[:at].decode("utf-8", "surrogatepass")


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
    ) -> None:
        self._max_tokens = _check_budget(max_tokens)
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
        try:
            if role is _TOOL:
                dropped = self._state.push(count, _TOOL_CODE, None, message.tool_id, message.name, prune)
            elif role is _ASSISTANT:
                calls = [(b.id, b.name) for b in message.content if isinstance(b, ToolUseBlock)]
                dropped = self._state.push(count, _ASSISTANT_CODE, calls or None, None, None, prune)
            else:
                dropped = self._state.push(count, ROLE_CODES[role], None, None, None, prune)
        except UnicodeEncodeError:
            raise _unencodable([message]) from None
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
                        "compactor": self._compactor, "on_prune": self._on_prune}
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
    return memory


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
