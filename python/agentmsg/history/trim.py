"""A whole history trimmed to a token budget: :func:`trim`, by four rules (which
:class:`agentmsg.ConversationMemory` keeps too), with the selection done in the Rust core:

1. system messages are kept (unless ``keep_system=False``); if they alone exceed the budget, the
   oldest of them go first (the newest always stays) and ``system_over_budget`` says so;
2. a tool call and its results are kept or removed together (see :mod:`agentmsg.history.toolpairs`);
3. the kept non-system messages are a contiguous run ending at the newest one;
4. the newest message (with its tool group) is always kept; if it alone is over the budget,
   ``over_budget`` says so instead of returning nothing.

    >>> import agentmsg
    >>> chat = [agentmsg.system("Be brief"), agentmsg.user("What is 2+2? " * 3), agentmsg.user("And 3+3?")]
    >>> [m.text for m in agentmsg.trim(chat, 20).messages]
    ['Be brief', 'And 3+3?']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, List, Optional, Sequence, Tuple, Union

from .. import _core
from .._checks import as_list, check_calls, describe
from ..counting.counter import Counter, TokenCounter
from ..counting.encoding import Encoding, get_encoding, resolve_encoding
from ..errors import MessageError, MessageTypeError
from ..model.blocks import TextBlock
from ..model.message import ROLE_CODES, Message, Role, to_role
from ..options import TrimStrategy
from ..readers import MessageLike, read_messages
from .check import USER_FIRST_PROVIDERS, CheckedProvider, Repair, check, repair

__all__ = ["TrimResult", "trim"]

_SYSTEM = Role.SYSTEM
_TOOL = Role.TOOL


def check_budget(max_tokens: object) -> int:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise MessageTypeError(f"max_tokens must be an int, not {type(max_tokens).__name__}")
    if not 0 <= max_tokens < 2**64:
        raise MessageError(f"max_tokens must be >= 0 (and < 2**64), got {describe(max_tokens)}")
    return max_tokens


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

    With ``provider=``, ``repairs`` lists what :func:`agentmsg.repair` changed so that the
    provider accepts the result (``source`` is then the repaired history, which ``kept`` indexes).
    """

    messages: List[Message]
    kept: Tuple[int, ...]
    total_tokens: int
    over_budget: bool
    system_over_budget: bool
    source: Sequence[Message] = field(repr=False)
    partial: Optional[int] = None
    repairs: Tuple[Repair, ...] = ()

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
        return [ROLE_CODES[to_role(value)]]
    roles = as_list(value, what, "a role or a sequence of roles")
    if not roles:
        raise MessageError(f"{what} must name at least one role")
    return [ROLE_CODES[to_role(role)] for role in roles]


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
    provider: Optional[CheckedProvider] = None,
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

    ``provider=`` (one of :data:`agentmsg.CHECKED_PROVIDERS`) guarantees that the provider
    accepts the result (``agentmsg.check(result.messages, provider) == []``): the history is
    repaired first (:func:`agentmsg.repair`: orphaned results dropped, unanswered calls given an
    error result, interjected messages moved), the run begins at a user message for Anthropic and
    Bedrock, and what the cut leaves before the first user message goes too; ``repairs`` lists
    every change.

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
    budget = check_budget(max_tokens)
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
    repairs: List[Repair] = []
    if provider is not None:
        items, repairs = repair(items, provider)
        if provider in USER_FIRST_PROVIDERS and start_on is None and strategy == "last":
            start_codes = _role_codes("user", "start_on")
    first = strategy == "first"
    # Forge's estimate is counted in the core from the messages' slots; other counters are asked
    # for the positions the selection needs, in batches.
    counts: Union[str, Callable[[List[int]], List[int]]] = "estimate" if count.spec == "estimate" else (
        lambda positions: count.count_many([items[i] for i in positions], positions))

    def select(items: Sequence[Message]) -> _core._Chosen:
        return _core.select_messages(items, budget, counts, keep_system=keep_system, start_on=start_codes,
                                     end_on=end_codes, first=first, allow_partial=allow_partial)

    try:
        chosen = select(items)
    except MessageTypeError:
        if all(isinstance(item, Message) for item in items):
            raise  # the counter's own error
        items = read_messages(items)  # dicts or SDK objects: read them, then the same selection
        chosen = select(items)
    kept, total, over_budget, system_over_budget, to_cut = chosen
    kept_messages = [items[i] for i in kept]
    partial = None
    if to_cut is not None:
        index, allowance, keep_end, joined, others = to_cut
        cut = _cut(items[index], allowance, keep_end, count)
        if cut is not None:  # else the selection stands as it is
            partial, kept = index, joined
            kept_messages = [cut[0] if i == index else items[i] for i in kept]
            total = others + cut[1]
            over_budget = total > budget
    if provider is not None and check(kept_messages, provider):
        # only the cut's own leftovers can remain (a run that could not begin at a user message)
        fixed, more = repair(kept_messages, provider)
        survivors = {id(message) for message in fixed}
        kept = [i for i, message in zip(kept, kept_messages) if id(message) in survivors]
        total -= sum(count.count(m) for m in kept_messages if id(m) not in survivors)
        kept_messages = fixed
        repairs += more
    return TrimResult(kept_messages, tuple(kept), total, over_budget, system_over_budget, items, partial,
                      tuple(repairs))


def _cut(message: Message, tokens: int, keep_end: bool, counter: TokenCounter) -> Optional[Tuple[Message, int]]:
    """A copy of ``message`` cut to at most ``tokens`` (its newest part when ``keep_end``, else
    its oldest) at a token boundary, and its count; None when it cannot be cut (a tool message,
    or content other than one text block) or nothing fits."""
    if message.role is _TOOL or len(message.content) != 1 or not isinstance(message.content[0], TextBlock):
        return None
    spec = counter.spec
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
        counted = counter.count(candidate)
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


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
