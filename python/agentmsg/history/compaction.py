"""Compaction: make a history smaller without dropping it.

Each policy takes a list of messages and returns a new one; none splits a tool call from its
results. :class:`Compactor` runs policies in order until the history fits (tool output pruning,
then a summary), and :class:`agentmsg.ConversationMemory` can use one instead of
plainly dropping old messages.

    >>> import agentmsg
    >>> chat = [agentmsg.user("x" * 500), agentmsg.assistant("ok")]
    >>> short = agentmsg.compress(chat, max_chars=10)
    >>> short[0].text.splitlines()[0]
    'xxxxxxxxxx... (truncated)'
    >>> agentmsg.expand(short, short[0].id).text == "x" * 500
    True
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, Generator, Iterable, List, Optional, Sequence, TypeVar, Union, cast

from .. import _core
from .._checks import as_list, check_calls, describe, require_int
from ..counting.counter import CountCache, Counter, TokenCounter
from ..errors import MessageError, MessageTypeError, warn_caller
from ..model.blocks import TextBlock, ToolResultBlock
from ..model.message import Message, Role
from ..readers import MessageLike, read_messages
from .check import CheckedProvider, repair

T = TypeVar("T")

__all__ = [
    "prune_tool_outputs",
    "compress",
    "expand",
    "summarize",
    "asummarize",
    "Compactor",
]

#: The default placeholder of :func:`prune_tool_outputs`; ``{chars}`` is the removed length.
TOOL_OUTPUT_PLACEHOLDER = "[tool output pruned: {chars} characters removed]"

Policy = Callable[[List[Message]], Union[List[Message], Awaitable[List[Message]]]]
Summarizer = Callable[[List[Message]], Union[str, Message, Awaitable[Union[str, Message]]]]


def _count_arg(value: object, what: str) -> int:
    return require_int(value, what)


# -- tool output pruning ----------------------------------------------------------------------


def prune_tool_outputs(
    messages: Iterable[MessageLike],
    keep_recent: int = 2,
    placeholder: str = TOOL_OUTPUT_PLACEHOLDER,
) -> List[Message]:
    """Replaces the output of all but the newest ``keep_recent`` tool results with a short
    placeholder saying how much was removed (``{chars}`` in it becomes the character count).

    The results keep their ids, names and error flags, so every call still has its result;
    ``metadata["pruned_chars"]`` records the removed length. Outputs no longer than the
    placeholder are left alone.

    >>> chat = [Message.tool("a" * 300, tool_id="c1"), Message.tool("fresh", tool_id="c2")]
    >>> [m.text for m in prune_tool_outputs(chat, keep_recent=1)]
    ['[tool output pruned: 300 characters removed]', 'fresh']
    """
    items = read_messages(messages)
    keep = _count_arg(keep_recent, "keep_recent")
    if not isinstance(placeholder, str):
        raise MessageTypeError(f"placeholder must be a str, not {type(placeholder).__name__}")
    tools = [i for i, m in enumerate(items) if m.role is Role.TOOL]
    older = tools[: max(0, len(tools) - keep)]
    for index in older:
        message = items[index]
        if "pruned_chars" in message.metadata:
            continue
        result = cast(ToolResultBlock, message.content[0])  # a tool message holds one result
        chars = len(result.text)
        text = placeholder.replace("{chars}", str(chars))
        if chars <= len(text):
            continue
        pruned = ToolResultBlock(result.tool_use_id, text, result.is_error)
        items[index] = message.replace(content=[pruned], metadata={**message.metadata, "pruned_chars": chars})
    return items


# -- compression with expand ----------------------------------------------------------------------


def _hint(message_id: str) -> str:
    # Suna's wording, so a model that knows the expand-message tool recognizes it.
    return f'... (truncated)\n\nmessage_id "{message_id}"\nUse expand-message tool to see full content'


def _truncated(text: str, max_chars: int, message_id: str) -> TextBlock:
    return TextBlock(text[:max_chars] + _hint(message_id))


def compress(messages: Iterable[MessageLike], max_chars: int = 2000, keep_recent: int = 0) -> List[Message]:
    """Truncates the text of messages longer than ``max_chars`` the way Suna does: the
    first ``max_chars`` characters, then ``... (truncated)`` and the expand-message hint with the
    message id. The original stays retrievable: ``metadata["original"]`` holds it (as
    :meth:`Message.to_dict`), and :func:`expand` returns it.

    System messages and the newest ``keep_recent`` messages are left alone; tool calls, images
    and thinking stay in place, so every tool pair stays valid.

    >>> m = compress([Message.user("research about larry ellison", id="m1")], max_chars=8)[0]
    >>> print(m.text)
    research... (truncated)
    <BLANKLINE>
    message_id "m1"
    Use expand-message tool to see full content
    """
    items = read_messages(messages)
    limit = _count_arg(max_chars, "max_chars")
    keep = _count_arg(keep_recent, "keep_recent")
    for index in range(max(0, len(items) - keep)):
        message = items[index]
        if message.role is Role.SYSTEM or message.metadata.get("compressed") or len(message.text) <= limit:
            continue
        if message.role is Role.TOOL:
            result = cast(ToolResultBlock, message.content[0])  # a tool message holds one result
            others = tuple(b for b in result.output if not isinstance(b, TextBlock))
            output = (_truncated(result.text, limit, message.id),) + others
            content: Any = [ToolResultBlock(result.tool_use_id, output, result.is_error)]
        else:
            text_at = next(i for i, b in enumerate(message.content) if isinstance(b, TextBlock))
            content = [b for b in message.content if not isinstance(b, TextBlock)]
            content.insert(text_at, _truncated(message.text, limit, message.id))
        metadata = {**message.metadata, "compressed": True, "original": message.to_dict()}
        items[index] = message.replace(content=content, metadata=metadata)
    return items


def expand(messages: Iterable[MessageLike], message_id: str) -> Message:
    """The original of the message ``message_id`` (what the expand-message tool returns):
    the message itself if it was never compressed.

    >>> chat = compress([Message.user("a long question", id="q1")], max_chars=3)
    >>> expand(chat, "q1").text
    'a long question'
    """
    if not isinstance(message_id, str):
        raise MessageTypeError(f"message_id must be a str, not {type(message_id).__name__}")
    for message in read_messages(messages):
        if message.id == message_id:
            original = message.metadata.get("original")
            return Message.from_dict(original) if original is not None else message
    raise MessageError(f"no message with id {describe(message_id)}")


# -- summary ---------------------------------------------------------------------------------------


def _summary_span(items: List[Message], keep_recent: int) -> List[int]:
    """Indices of the non-system messages to summarize: all but the newest ``keep_recent``,
    moved earlier so the kept part never starts inside a tool group (the core's cut check)."""
    others = [i for i, m in enumerate(items) if m.role is not Role.SYSTEM]
    cut = max(0, len(others) - keep_recent)
    if 0 < cut < len(others):
        valid = _core.valid_cuts(items)
        while 0 < cut and not valid[others[cut]]:
            cut -= 1
    return others[:cut]


def _summary_message(summary: object, span: List[Message]) -> Message:
    metadata = {"summary_of": [m.id for m in span]}
    if isinstance(summary, Message):
        return summary.replace(metadata={**summary.metadata, **metadata})
    if isinstance(summary, str):
        return Message.user(summary, metadata=metadata)
    raise MessageTypeError(f"the summarizer must return a str or Message, not {type(summary).__name__}")


def _with_summary(items: List[Message], span_at: List[int], summary: Message) -> List[Message]:
    gone = set(span_at)
    out = [m for i, m in enumerate(items) if i not in gone and i < span_at[-1]]  # systems before
    out.append(summary)
    out.extend(m for i, m in enumerate(items) if i > span_at[-1])
    return out


def summarize(messages: Iterable[MessageLike], summarizer: Summarizer, keep_recent: int = 4) -> List[Message]:
    """Replaces the old part of a history with one summary message made by ``summarizer``.

    All non-system messages but the newest ``keep_recent`` go to ``summarizer(old_messages)``,
    which returns the summary text (it becomes a user message) or a Message; the old span never
    ends inside a tool group, so no pair is split. The summary's ``metadata["summary_of"]``
    lists the ids it replaces. For an async summarizer use :func:`asummarize`.

    >>> chat = [Message.system("Be brief"), Message.user("a"), Message.assistant("b"), Message.user("c")]
    >>> out = summarize(chat, lambda old: f"{len(old)} earlier messages", keep_recent=1)
    >>> [(m.role.value, m.text) for m in out]
    [('system', 'Be brief'), ('user', '2 earlier messages'), ('user', 'c')]
    """
    return _run(_summary_steps(messages, summarizer, keep_recent),
                "the summarizer is async: use `await asummarize(...)`")


async def asummarize(
    messages: Iterable[MessageLike], summarizer: Summarizer, keep_recent: int = 4
) -> List[Message]:
    """:func:`summarize` for a summarizer that may be async (a sync one works too).

    >>> import asyncio
    >>> async def model(old): return "earlier: " + ", ".join(m.text for m in old)
    >>> chat = [Message.user("a"), Message.assistant("b"), Message.user("c")]
    >>> [m.text for m in asyncio.run(asummarize(chat, model, keep_recent=1))]
    ['earlier: a, b', 'c']
    """
    return await _arun(_summary_steps(messages, summarizer, keep_recent))


def _summary_steps(messages: Iterable[MessageLike], summarizer: Summarizer,
                   keep_recent: int) -> Generator[Any, Any, List[Message]]:
    """The one summarizing job, for :func:`summarize` and :func:`asummarize` (see :func:`_run`)."""
    items = read_messages(messages)
    if not callable(summarizer):
        raise MessageTypeError(f"summarizer must be callable, not {type(summarizer).__name__}")
    span_at = _summary_span(items, _count_arg(keep_recent, "keep_recent"))
    if not span_at:
        return items
    span = [items[i] for i in span_at]
    summary = yield summarizer(span)
    return _with_summary(items, span_at, _summary_message(summary, span))


def _run(steps: Generator[Any, Any, T], refusal: str) -> T:
    """Runs a job written as a generator that yields what a caller's function returned and is
    sent it back: here that must not be awaitable (``refusal`` says to use the async form)."""
    try:
        result = next(steps)
        while True:
            if inspect.isawaitable(result):
                if hasattr(result, "close"):
                    result.close()
                raise MessageTypeError(refusal)
            result = steps.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def _arun(steps: Generator[Any, Any, T]) -> T:
    """:func:`_run` that awaits what is awaitable."""
    try:
        result = next(steps)
        while True:
            if inspect.isawaitable(result):
                result = await result
            result = steps.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


# -- the compactor -----------------------------------------------------------------------------------


class Compactor:
    """Runs compaction policies in order until a history fits (tool output pruning, then a summary).

    A policy is any callable from a list of messages to a new list (or an awaitable of one, for
    :meth:`acompact`), e.g. ``functools.partial(prune_tool_outputs, keep_recent=2)``. Compaction
    starts when the history passes ``trigger * max_tokens`` and stops as soon as it is back
    under that mark.

    >>> from functools import partial
    >>> compactor = Compactor([partial(compress, max_chars=20)], trigger=0.5)
    >>> out = compactor.compact([Message.user("y" * 400), Message.user("hi")], max_tokens=100)
    >>> out[0].text.splitlines()[0], out[1].text
    ('yyyyyyyyyyyyyyyyyyyy... (truncated)', 'hi')
    """

    def __init__(self, policies: Sequence[Policy], trigger: float = 0.8, *,
                 provider: Optional[CheckedProvider] = None) -> None:
        self.policies = as_list(policies, "policies", "a list of callables")
        for index, policy in enumerate(self.policies):
            if not callable(policy):
                raise MessageTypeError(f"policies[{index}] must be callable, not {type(policy).__name__}")
        if isinstance(trigger, bool) or not isinstance(trigger, (int, float)):
            raise MessageTypeError(f"trigger must be a number, not {type(trigger).__name__}")
        if not 0 < trigger <= 1:  # NaN fails this too
            raise MessageError(f"trigger must be a fraction in (0, 1], got {describe(trigger)}")
        self.trigger = float(trigger)
        if provider is not None:
            repair([], provider)  # checks the name now
        self.provider = provider

    def _target(self, max_tokens: int) -> float:
        # A float holds any budget up to 2**1023; a larger one leaves nothing to compact.
        return self.trigger * min(_count_arg(max_tokens, "max_tokens"), 2**1000)

    def compact(self, messages: Iterable[MessageLike], max_tokens: int,
                counter: Union[Counter, TokenCounter, CountCache] = "estimate") -> List[Message]:
        """The history after as many policies as needed to fit under the trigger.

        ``counter`` may be a :class:`agentmsg.counting.CountCache` that already knows counts
        (a memory passes its own), so only messages a policy creates are counted.

        >>> Compactor([]).compact([Message.user("hi")], max_tokens=100)[0].text
        'hi'
        """
        return _run(self._steps(messages, max_tokens, counter),
                    "a policy is async: use `await compactor.acompact(...)`")

    async def acompact(
        self, messages: Iterable[MessageLike], max_tokens: int,
        counter: Union[Counter, TokenCounter, CountCache] = "estimate",
    ) -> List[Message]:
        """:meth:`compact` that awaits async policies (such as :func:`asummarize`).

        >>> import asyncio
        >>> asyncio.run(Compactor([]).acompact([Message.user("hi")], 100))[0].text
        'hi'
        """
        return await _arun(self._steps(messages, max_tokens, counter))

    def _steps(
        self, messages: Iterable[MessageLike], max_tokens: int,
        counter: Union[Counter, TokenCounter, CountCache],
    ) -> Generator[Any, Any, List[Message]]:
        """The one compaction loop, for :meth:`compact` and :meth:`acompact`: yields what each
        policy returns and is sent it back (see :func:`_run`)."""
        count = _cache(counter)
        items = read_messages(messages)
        target = self._target(max_tokens)
        for policy in self.policies:
            if count.total(items) <= target:
                break
            items = read_messages((yield policy(items)))
        if self.provider is not None:
            items, repairs = repair(items, self.provider)
            if repairs:
                warn_caller(f"Compactor repaired the history for {self.provider}: "
                            + "; ".join(map(str, repairs)))
        return items

    def __repr__(self) -> str:
        return f"Compactor({self.policies!r}, trigger={self.trigger})"


def _cache(counter: Union[Counter, TokenCounter, CountCache]) -> CountCache:
    return counter if isinstance(counter, CountCache) else CountCache(counter)


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
