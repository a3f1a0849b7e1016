"""The selection behind :func:`agentmsg.trim`, for any kind of message.

A history is read through a *source* (:class:`Source`): role codes and token counts for a range,
the tool groups of a window, and a way to cut one message. The selection itself is the Rust
core's (``PruneRules.select_kept``); this module decides how much of the history the core must see, so
only the messages that can be kept are counted, and applies ``allow_partial``. ``trim`` reads
:class:`agentmsg.Message` lists through one source, ``agentmsg.langchain.trim_messages``
LangChain messages through another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple

from .. import _core

#: The count the core sees for a message not counted yet: no run holding it fits any budget.
_UNCOUNTED = 2**64 - 1
_SYSTEM_CODE = 0


class Source(Protocol):
    """A history as the selection reads it."""

    def __len__(self) -> int: ...

    def role_codes(self, start: int, stop: int) -> List[int]:
        """The role codes (``agentmsg.estimate.ROLE_CODES``) of messages ``start:stop``."""

    def counts(self, positions: Sequence[int]) -> List[int]:
        """The token counts of the messages at ``positions``."""

    def groups(self, start: int, stop: int, codes: List[int]) -> Tuple[List[int], bool]:
        """The tool groups of messages ``start:stop``, whose role codes are ``codes`` (indices
        relative to ``start``: each
        message's group is the index of its call's message, else its own) and whether some
        result there answers no call in the window."""

    def cut(self, index: int, tokens: int, keep_end: bool) -> Optional[Tuple[Any, int]]:
        """A copy of message ``index`` cut to at most ``tokens`` (its newest part when
        ``keep_end``, else its oldest) and its count; None when it cannot be cut or nothing fits."""


@dataclass(frozen=True)
class Selection:
    """What :func:`select` keeps: indices, their total, the rule states, and the message cut
    by ``allow_partial`` as ``(index, cut copy)``."""

    kept: Tuple[int, ...]
    total: int
    over_budget: bool
    system_over_budget: bool
    partial: Optional[Tuple[int, Any]]


def select(
    source: Source,
    budget: int,
    *,
    keep_system: bool,
    systems: Sequence[int],
    start_on: Optional[List[int]] = None,
    end_on: Optional[List[int]] = None,
    first: bool = False,
    allow_partial: bool = False,
) -> Selection:
    """The messages of ``source`` kept within ``budget`` by the pruning rules (see
    :mod:`agentmsg.memory`); ``systems`` are the positions of the system messages when
    ``keep_system`` (they are always counted)."""
    n = len(source)
    system_counts = dict(zip(systems, source.counts(systems)))
    _, system_used = _core.system_share(list(system_counts.values()), budget)
    remaining = budget - system_used
    counts: Sequence[Optional[int]]
    if first:
        start, codes = 0, source.role_codes(0, n)
        counts = _count_forward(source, codes, keep_system, remaining)
        groups, _ = source.groups(0, n, codes)
    else:
        start, codes, counts, groups = _newest_window(source, keep_system, remaining, start_on, end_on)

    # Arrays for the core: the system messages before the window, then the window.
    positions = [i for i in systems if i < start] + list(range(start, n))
    offset = len(positions) - (n - start)
    count_of: Dict[int, Optional[int]] = dict(zip(range(start, n), counts))
    count_of.update(system_counts)  # the window holds 0 for them
    known_counts: List[int] = [_UNCOUNTED if (c := count_of[i]) is None else c for i in positions]
    arrays = (
        known_counts,
        [_SYSTEM_CODE] * offset + codes,
        list(range(offset)) + [g + offset for g in groups],
    )

    def run_core(start_rule: Optional[List[int]], end_rule: Optional[List[int]]) -> Tuple[List[int], int, bool, bool]:
        rules = _core.PruneRules(keep_system, start_rule, end_rule, first)
        kept_positions, total, over, system_over = rules.select_kept(arrays, budget)
        kept = [positions[p] for p in kept_positions]
        uncounted = [i for i in kept if count_of[i] is None]
        if uncounted:  # the oldest group alone over budget (strategy first) reached past the counted
            count_of.update(zip(uncounted, source.counts(uncounted)))
            total = sum(count_of[i] for i in kept)  # type: ignore[misc]
            over = total > budget
        return kept, total, over, system_over

    kept, total, over, system_over = run_core(start_on, end_on)
    partial = None
    if allow_partial:
        # The cut message goes just past the longest run the budget allows, whatever its role;
        # it must have a role the run may begin (strategy last) or end (first) with. So the run
        # is chosen again without that role rule.
        rule = end_on if first else start_on
        base = run_core(None, None if first else end_on) if rule else (kept, total, over, system_over)
        is_candidate = [not (keep_system and code == _SYSTEM_CODE) for code in codes]
        run = [i for i in base[0] if i >= start and is_candidate[i - start]]
        target, others = _partial_target(run, base[2], first, start, is_candidate, codes, groups, rule,
                                         count_of, base[1])
        if target is not None and budget - others > 0:
            cut = source.cut(target, budget - others, not first)
            if cut is not None:
                partial = (target, cut[0])
                kept = sorted(set(base[0]) | {target})
                total = others + cut[1]
                over = total > budget
    return Selection(tuple(kept), total, over, system_over, partial)


def _newest_window(
    source: Source, keep_system: bool, remaining: int, start_on: Optional[List[int]],
    end_on: Optional[List[int]],
) -> Tuple[int, List[int], List[int], List[int]]:
    """The shortest window of the newest messages that decides the selection, grown by
    doubling: (its start, and its role codes, counts and groups)."""
    n = len(source)
    rules = _core.PruneRules(keep_system, start_on, end_on)
    codes: List[int] = []
    counts: List[int] = []
    counted = 0  # sum of the window's non-system counts
    start = n
    step = 32
    while start > 0:
        new_start = max(0, start - step)
        step *= 2
        chunk = source.role_codes(new_start, start)
        fresh = [i for i, code in enumerate(chunk, new_start) if not (keep_system and code == _SYSTEM_CODE)]
        fresh_counts = dict(zip(fresh, source.counts(fresh)))
        counted += sum(fresh_counts.values())
        codes[:0] = chunk
        counts[:0] = [fresh_counts.get(i, 0) for i in range(new_start, start)]
        start = new_start
        if counted > remaining:
            groups, orphans = source.groups(start, n, codes)
            if not orphans and rules.window_decides((counts, codes, groups), max(remaining, 0)):
                return start, codes, counts, groups
    return start, codes, counts, source.groups(start, n, codes)[0]


def _count_forward(source: Source, codes: List[int], keep_system: bool, remaining: int) -> List[Optional[int]]:
    """Counts of the oldest non-system messages, grown by doubling until they exceed
    ``remaining`` (no longer run fits); None for the rest, and 0 for system messages."""
    n = len(codes)
    counts: List[Optional[int]] = [None] * n
    counted = 0
    stop = 0
    step = 32
    while stop < n and counted <= remaining:
        new_stop = min(n, stop + step)
        step *= 2
        fresh = [i for i in range(stop, new_stop) if not (keep_system and codes[i] == _SYSTEM_CODE)]
        for i in range(stop, new_stop):
            counts[i] = 0
        for i, count in zip(fresh, source.counts(fresh)):
            counts[i] = count
            counted += count
        stop = new_stop
    return counts


def _partial_target(
    run: List[int], over: bool, first: bool, start: int, is_candidate: List[bool], codes: List[int],
    groups: List[int], role_rule: Optional[List[int]], count_of: Dict[int, Optional[int]], total: int,
) -> Tuple[Optional[int], int]:
    """The message ``allow_partial`` may cut and the tokens of the other kept messages: the
    newest group when it alone is over budget and is one message, else the message just past
    the kept run (before it for strategy last, after it for first) when it is a message of its
    own (never part of a tool group) of a role the run may begin (end) with."""
    if not run:
        return None, total
    if over:
        if len(run) != 1:
            return None, total
        j, others = run[0] - start, total - count_of[run[0]]  # type: ignore[operator]
    else:
        step = 1 if first else -1
        j, others = (run[-1] if first else run[0]) - start + step, total
        while 0 <= j < len(codes) and not is_candidate[j]:
            j += step
        if not 0 <= j < len(codes):
            return None, total
    if not _alone(j, groups) or (role_rule is not None and codes[j] not in role_rule):
        return None, total
    return j + start, others


def _alone(j: int, groups: List[int]) -> bool:
    """Whether window message ``j`` is a group of its own (no tool call answered, no result)."""
    return groups[j] == j and groups.count(j) == 1
