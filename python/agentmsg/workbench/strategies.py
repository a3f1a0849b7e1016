"""The pruning strategies the workbench replays: :class:`Strategy`, the built-in ones
(:func:`builtin_strategies`: ``trim``, ``trim-user``, ``memory``, ``mask-tool-outputs``,
``compress``, ``summarize`` and ``langchain``, LangChain's ``trim_messages``), and the
first-sentence summarizer that stands in for a model.

    >>> sorted(builtin_strategies())[:3]
    ['compress', 'langchain', 'mask-tool-outputs']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from .._checks import check_calls, describe, optional_str, require_bool, require_int, require_str, type_name
from ..counting.counter import MessageCounter
from ..errors import AgentMsgError, MessageError, MessageTypeError
from ..history.compaction import Compactor, compress, prune_tool_outputs, summarize
from ..history.memory import ConversationMemory
from ..history.trim import trim
from ..model.blocks import ToolUseBlock
from ..model.message import ASSISTANT_ROLE, SYSTEM_ROLE, TOOL_ROLE, Message
from ..readers import MessageLike, read_messages

__all__ = ["DEFAULT_STRATEGIES", "DEFAULT_BUDGETS", "Strategy", "first_sentence_summary", "builtin_strategies"]


#: The strategies :func:`run_workbench` replays when none are named.
DEFAULT_STRATEGIES = ("trim", "trim-user", "memory", "mask-tool-outputs", "compress", "summarize")


#: The token budgets :func:`run_workbench` tries when none are given.
DEFAULT_BUDGETS = (2000, 4000, 8000, 16000)


# A step takes the messages added since the last model call and returns the next prompt.
Step = Callable[[Sequence[Message]], List[Message]]


# What Strategy.from_function takes: function(history, budget) -> messages.
StrategyFunction = Callable[[List[Message], int], Sequence[Message]]


@dataclass(frozen=True)
class Strategy:
    """A named pruning strategy: ``start(budget, counter)`` begins a replay and returns its step,
    a function from the messages added since the last model call to the next prompt.

    :meth:`from_reducer` builds one from ``reduce(messages, budget, counter) -> prompt``;
    :meth:`from_function` from any ``f(history, budget) -> messages``.

    >>> keep_last = Strategy.from_function(lambda history, budget: history[-2:], name="last-2")
    >>> step = keep_last.start(100, MessageCounter("estimate"))
    >>> [m.text for m in step([Message.user("a"), Message.assistant("b"), Message.user("c")])]
    ['b', 'c']
    """

    name: str
    start: Callable[[int, MessageCounter], Step]

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", require_str(self.name, "Strategy.name"))
        _require_callable(self.start, "Strategy.start")

    @classmethod
    def from_reducer(
        cls, name: str, reduce: Callable[[List[Message], int, MessageCounter], List[Message]],
        *, incremental: bool = True,
    ) -> "Strategy":
        """A strategy that applies ``reduce`` at each model call: to the previous prompt plus
        the new messages when ``incremental`` (valid when reducing a longer history would keep
        nothing older than the previous prompt did), else to the whole history.

        >>> s = Strategy.from_reducer("trim", lambda ms, budget, count: trim(ms, budget, counter=count).messages)
        >>> s.name
        'trim'
        """
        name = require_str(name, "name")
        _require_callable(reduce, "reduce")
        incremental = require_bool(incremental, "incremental")

        def start(budget: int, counter: MessageCounter) -> Step:
            context: List[Message] = []

            def step(new: Sequence[Message]) -> List[Message]:
                nonlocal context
                context.extend(new)
                prompt = list(reduce(list(context), budget, counter))
                if incremental:
                    context = list(prompt)
                return prompt

            return step

        return cls(name, start)

    def clearing(self, percent: int) -> "Strategy":
        """This strategy, pruning only when the prompt would exceed the budget, and then to
        ``100 - percent`` percent of it (at least ``percent`` percent of the budget cleared, as
        Anthropic's context editing ``clear_at_least``): the prompts between two prunings grow
        on a stable prefix, which a provider's cache serves, at the price of fewer tokens kept
        on average. Named ``"<name>+clear<percent>"`` (``trim+clear25``; the same name works
        wherever a built-in strategy name does).

        >>> lazy = builtin_strategies()["trim"].clearing(50)
        >>> step = lazy.start(4, MessageCounter(lambda message: 1))  # a token per message
        >>> lazy.name, [len(step([Message.user(str(i))])) for i in range(7)]
        ('trim+clear50', [1, 2, 3, 4, 2, 3, 4])
        """
        percent = require_int(percent, "percent")
        if not 0 < percent < 100:
            raise MessageError(f"percent must be from 1 to 99, not {describe(percent)}")
        inner = self

        def start(budget: int, counter: MessageCounter) -> Step:
            step = inner.start(budget * (100 - percent) // 100, counter)
            sent: List[Message] = []
            pending: List[Message] = []

            def lazy_step(new: Sequence[Message]) -> List[Message]:
                nonlocal sent
                pending.extend(new)
                grown = sent + pending
                if counter.total(grown) <= budget:
                    return grown  # the inner strategy sees these messages at its next pruning
                sent = list(step(pending))
                pending.clear()
                return list(sent)

            return lazy_step

        return Strategy(f"{self.name}+clear{percent}", start)

    @classmethod
    def from_function(cls, function: Callable[[List[Message], int], Sequence[Message]], name: Optional[str] = None) -> "Strategy":
        """A strategy from any ``function(history, budget) -> messages``, given the whole history
        at every model call.

        >>> Strategy.from_function(lambda history, budget: history).name
        '<lambda>'
        """
        _require_callable(function, "a strategy", "a name, a Strategy or a callable")
        name = optional_str(name, "name")
        if not name:
            name = getattr(function, "__name__", None)
            name = name if isinstance(name, str) else type_name(function)
        what = f"strategy {describe(name)}"

        def reduce(messages: List[Message], budget: int, counter: MessageCounter) -> List[Message]:
            return read_messages(_called(what, function, messages, budget), f"the result of {what}")

        return cls.from_reducer(name, reduce, incremental=False)


def _called(what: str, function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` for a caller's function: its failure is a MessageError naming ``what``
    (the original error chained), so a replay says which strategy or counter broke."""
    try:
        return function(*args)
    except AgentMsgError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure of the caller's function is theirs
        raise MessageError(f"{what} raised {type_name(error)}") from error


def budget_value(value: object, where: str) -> int:
    """A token budget: an int in [0, 2**64), the range :func:`agentmsg.trim` takes."""
    budget = require_int(value, where)
    if budget >= 2**64:
        raise MessageError(f"{where} must be less than 2**64, not {describe(budget)}")
    return budget


def _require_callable(value: object, where: str, expected: str = "a callable") -> None:
    if not callable(value):
        raise MessageTypeError(f"{where} must be {expected}, not {type_name(value)}")


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def first_sentence_summary(messages: Iterable[MessageLike], max_chars: int = 200) -> str:
    """A deterministic stand-in for a model's summary: the first sentence of each message (at
    most ``max_chars`` characters), one line per message, prefixed with its role.

    >>> print(first_sentence_summary([Message.user("Fix the bug. It is in parse.py."), Message.assistant("On it!")]))
    Summary of earlier messages:
    user: Fix the bug.
    assistant: On it!
    """
    max_chars = require_int(max_chars, "max_chars", minimum=3)  # room for the "..." of a cut sentence
    lines = ["Summary of earlier messages:"]
    for message in read_messages(messages):
        text = " ".join(message.text[: max_chars * 4].split())
        end = _SENTENCE_END.search(text)
        sentence = text[: end.end()] if end else text
        if len(sentence) > max_chars:
            sentence = sentence[: max_chars - 3] + "..."
        if sentence:
            lines.append(f"{message.role.value}: {sentence}")
    return "\n".join(lines)


def _trimmed(messages: List[Message], budget: int, counter: MessageCounter, start_on: Optional[str] = None) -> List[Message]:
    return trim(messages, budget, counter=counter, start_on=start_on).messages


def _memory_strategy(name: str, compactor: Optional[Compactor]) -> Strategy:
    def start(budget: int, counter: MessageCounter) -> Step:
        memory = ConversationMemory(budget, counter=counter, compactor=compactor)

        def step(new: Sequence[Message]) -> List[Message]:
            memory.extend(new)
            return memory.messages

        return step

    return Strategy(name, start)


def _summarized(messages: List[Message], budget: int, counter: MessageCounter, summarizer: Callable[[List[Message]], Any], keep_recent: int) -> List[Message]:
    if counter.total(messages) > budget:
        messages = summarize(messages, summarizer, keep_recent=keep_recent)
    return _trimmed(messages, budget, counter)


def _langchain_strategy() -> Strategy:
    """LangChain's ``trim_messages`` (strategy "last", starting on a human message, system kept),
    counting with the same counter, as the peer."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, trim_messages

    def to_langchain(message: Message) -> Any:
        if message.role is ASSISTANT_ROLE:
            calls = [{"name": c.name, "args": c.input, "id": c.id, "type": "tool_call"} for c in message.tool_calls]
            return AIMessage(content=message.text, tool_calls=calls)
        if message.role is TOOL_ROLE:
            return ToolMessage(content=message.text, tool_call_id=message.tool_id or message.name or "")
        return (SystemMessage if message.role is SYSTEM_ROLE else HumanMessage)(content=message.text)

    # Build LangChain's message models once here, so the first replay does not time that.
    warm = [to_langchain(m) for m in (Message.user("warm"), Message.assistant(tool_calls=[
        ToolUseBlock("w", "warm", {})]), Message.tool("warm", tool_id="w"))]
    trim_messages(warm, max_tokens=10, token_counter=len, strategy="last", start_on="human", include_system=True)

    def start(budget: int, counter: MessageCounter) -> Step:
        ours: Dict[int, Message] = {}  # id of a LangChain message -> our message
        theirs: Dict[int, Any] = {}  # id of our message -> its LangChain message
        context: List[Message] = []

        def count(items: List[Any]) -> int:
            return sum(counter(ours[id(m)]) for m in items)

        def step(new: Sequence[Message]) -> List[Message]:
            nonlocal context
            for message in new:
                converted = to_langchain(message)
                theirs[id(message)] = converted
                ours[id(converted)] = message
            context.extend(new)
            kept = trim_messages([theirs[id(m)] for m in context], max_tokens=budget, token_counter=count,
                                 strategy="last", start_on="human", include_system=True)
            context = [ours[id(m)] for m in kept]
            return list(context)

        return step

    return Strategy("langchain", start)


def builtin_strategies(
    *, keep_tool_outputs: int = 2, compress_chars: int = 500, keep_recent: int = 4,
    summarizer: Callable[[List[Message]], Any] = first_sentence_summary,
) -> Dict[str, Strategy]:
    """The built-in strategies by name (``langchain`` only when langchain-core is installed).

    - ``trim``: :func:`agentmsg.trim` (the newest messages that fit);
    - ``trim-user``: the same, the kept run starting on a user message;
    - ``memory``: :class:`agentmsg.ConversationMemory`, one ``add`` per message;
    - ``memory-compactor``: the same with a :class:`agentmsg.Compactor` that masks old tool
      outputs, then summarizes;
    - ``mask-tool-outputs``: :func:`agentmsg.prune_tool_outputs` (all but the newest
      ``keep_tool_outputs`` results), then ``trim``;
    - ``compress``: :func:`agentmsg.compress` (``compress_chars`` per message, the newest
      ``keep_recent`` untouched), then ``trim``;
    - ``summarize``: when over the budget, :func:`agentmsg.summarize` with ``summarizer`` (the
      deterministic :func:`first_sentence_summary` by default) keeping ``keep_recent``, then ``trim``;
    - ``langchain``: LangChain's ``trim_messages`` (last, ``start_on="human"``, system kept).

    >>> sorted(builtin_strategies())[:3]
    ['compress', 'langchain', 'mask-tool-outputs']
    """
    keep_tool_outputs = require_int(keep_tool_outputs, "keep_tool_outputs")
    compress_chars = require_int(compress_chars, "compress_chars")
    keep_recent = require_int(keep_recent, "keep_recent")
    _require_callable(summarizer, "summarizer")
    strategies = {
        "trim": Strategy.from_reducer("trim", _trimmed),
        "trim-user": Strategy.from_reducer("trim-user", partial(_trimmed, start_on="user")),
        "memory": _memory_strategy("memory", None),
        "memory-compactor": _memory_strategy("memory-compactor", Compactor([
            partial(prune_tool_outputs, keep_recent=keep_tool_outputs),
            partial(summarize, summarizer=summarizer, keep_recent=keep_recent),
        ])),
        "mask-tool-outputs": Strategy.from_reducer("mask-tool-outputs", lambda ms, budget, counter: _trimmed(
            prune_tool_outputs(ms, keep_recent=keep_tool_outputs), budget, counter)),
        "compress": Strategy.from_reducer("compress", lambda ms, budget, counter: _trimmed(
            compress(ms, max_chars=compress_chars, keep_recent=keep_recent), budget, counter)),
        "summarize": Strategy.from_reducer("summarize", partial(
            _summarized, summarizer=summarizer, keep_recent=keep_recent)),
    }
    try:
        strategies["langchain"] = _langchain_strategy()
    except ImportError:
        pass
    return strategies


# A built-in strategy that prunes only past its budget: "trim+clear25".
_CLEARING = re.compile(r"(.+)\+clear([1-9][0-9]?)")


def strategy_of(spec: Union[str, Strategy, StrategyFunction], known: Dict[str, Strategy]) -> Strategy:
    if isinstance(spec, Strategy):
        return spec
    if isinstance(spec, str):
        spec = require_str(spec, "strategy")
        lazy = _CLEARING.fullmatch(spec)
        if lazy and lazy.group(1) in known:
            return known[lazy.group(1)].clearing(int(lazy.group(2)))
        if spec not in known:
            hint = " (langchain needs langchain-core installed)" if spec == "langchain" else ""
            raise MessageError(f"unknown strategy {describe(spec)}{hint}; known: {', '.join(sorted(known))}, "
                             f"each also as NAME+clearN (prune only past the budget, to N% below it)")
        return known[spec]
    return Strategy.from_function(spec)


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
