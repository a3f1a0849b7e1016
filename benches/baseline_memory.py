"""Pure-Python baselines for the memory benches, written the plain way.

* ``ReestimatingMemory``: the naive ConversationMemory: a list; after each add,
  while the history's total (every message re-estimated) is over the limit, the oldest
  non-system message goes, with the tool results right after it (so no result outlives its call).
* ``ListMemory``: the same with each message estimated once, when added (counts kept in a
  parallel list and re-summed): what a careful Python developer writes.
* ``list_trim``: count every message, walk back from the newest while the budget lasts, never
  starting the kept part at a tool result.

Both count with the same estimate as agentmsg (``len(utf8) // 4`` + role overhead +
10 for ``<tool>``), computed here in Python.
"""

from __future__ import annotations

from typing import List

from agentmsg import Message
from agentmsg.counting.tokens import measured_text


def estimate(message: Message) -> int:
    text = measured_text(message)
    role = message.role.value
    tokens = len(text.encode("utf-8", "surrogatepass")) // 4 + (10 if role == "tool" else 4)
    if "<tool>" in text:
        tokens += 10
    return tokens


class ListMemory:
    """A list with cached counts, re-summed and pruned after every add."""

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.messages: List[Message] = []
        self.counts: List[int] = []  # each message is estimated once, when added

    def total_tokens(self) -> int:
        return sum(self.counts)

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self.counts.append(estimate(message))
        while self.total_tokens() > self.max_tokens:
            oldest = next((i for i, m in enumerate(self.messages) if m.role.value != "system"), None)
            if oldest is None or oldest == len(self.messages) - 1:
                break  # only systems, or the newest message alone: keep it
            self._remove(oldest)
            while oldest < len(self.messages) - 1 and self.messages[oldest].role.value == "tool":
                self._remove(oldest)

    def _remove(self, index: int) -> None:
        del self.messages[index]
        del self.counts[index]


def list_trim(messages: List[Message], max_tokens: int) -> List[Message]:
    """The newest messages that fit, after the system messages; never starts at a tool result."""
    counts = [estimate(m) for m in messages]
    systems = [i for i, m in enumerate(messages) if m.role.value == "system"]
    budget = max_tokens - sum(counts[i] for i in systems)
    start = len(messages)
    used = 0
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role.value == "system":
            continue
        if used + counts[i] > budget:
            break
        used += counts[i]
        start = i
    while start < len(messages) and messages[start].role.value == "tool":
        start += 1
    kept = set(systems) | set(range(start, len(messages)))
    return [m for i, m in enumerate(messages) if i in kept]


class ReestimatingMemory(ListMemory):
    """The naive way: the total re-estimates every message of the history each time."""

    def total_tokens(self) -> int:
        return sum(estimate(m) for m in self.messages)
