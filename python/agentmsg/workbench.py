"""The pruning workbench: replay transcripts as an agent loop and measure what each pruning
strategy keeps, loses and breaks.

At each model call (each assistant message of a transcript) the prompt is the history so far,
reduced by a strategy to a token budget. For each strategy x budget, per transcript and overall,
:func:`run_workbench` measures the prompt tokens (mean, p95, max, how many prompts were over the
budget), the messages kept, the share of prompts valid under the OpenAI, Anthropic and Bedrock
ordering rules (:func:`ordering_problem`), the prefix stability (the share of each prompt's
tokens equal to the previous prompt's prefix: what a provider's prompt cache can reuse), what
was lost (tool outputs and user turns no longer intact in the last prompt; the recall of file
paths and identifiers the agent uses that appeared earlier in the history) and the time per turn.

The built-in strategies act on the live context, as an agent loop does: the next prompt is the
previous prompt plus the new messages, reduced again, so replaying a transcript is linear in its
length. For ``trim`` and ``trim-user`` this equals trimming the whole history at every turn (the
kept run only moves forward; tested on real and generated transcripts) as long as the system
messages alone fit the budget; for the
compacting strategies (``mask-tool-outputs``, ``compress``, ``summarize``) what was dropped stays
dropped, as in an agent that compacts its context. A plain function ``f(history, budget) -> messages`` gets the whole
history at every turn.

    >>> import agentmsg
    >>> chat = [agentmsg.system("Be brief"), agentmsg.user("Hi " * 50), agentmsg.assistant("Hello"),
    ...         agentmsg.user("And now?"), agentmsg.assistant("Done")]
    >>> report = agentmsg.run_workbench([chat], strategies=["trim"], budgets=[40])
    >>> row = report.overall[0]
    >>> (row.strategy, row.budget, row.turns, row.tokens_max, row.over_budget, row.valid["openai"])
    ('trim', 40, 2, 61, 1, 1.0)
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import re
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache, partial
from typing import IO, Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Sized, Tuple, Union

from ._checks import check_calls, describe, optional_str, require_bool, require_int, require_str, type_name, utf8_text
from .compaction import Compactor, compress, prune_tool_outputs, summarize
from .errors import AgentMsgError, MessageError, MessageTypeError
from .estimate import measured_text
from .memory import ConversationMemory, token_counter, trim
from .blocks import ToolUseBlock
from .normalize import MessageLike, read_messages
from .message import Message, Role, _as_list
from .transcripts import Transcript

__all__ = [
    "MessageCounter",
    "Strategy",
    "first_sentence_summary",
    "builtin_strategies",
    "DEFAULT_STRATEGIES",
    "DEFAULT_BUDGETS",
    "PROVIDERS",
    "ordering_problem",
    "ReplayMetrics",
    "WorkbenchReport",
    "replay",
    "run_workbench",
    "MissingDependencyError",
]

#: The strategies :func:`run_workbench` replays when none are named.
DEFAULT_STRATEGIES = ("trim", "trim-user", "memory", "mask-tool-outputs", "compress", "summarize")
#: The token budgets :func:`run_workbench` tries when none are given.
DEFAULT_BUDGETS = (2000, 4000, 8000, 16000)
#: The providers whose ordering rules :func:`ordering_problem` knows.
PROVIDERS = ("openai", "anthropic", "bedrock")

_SYSTEM, _USER, _ASSISTANT, _TOOL = Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL


class MissingDependencyError(AgentMsgError, ImportError):
    """An optional dependency a feature needs is not installed; the message says what to install.

    >>> issubclass(MissingDependencyError, ImportError)
    True
    """


class MessageCounter:
    """Counts a message's tokens once (an encoding name or ``"estimate"``) and remembers it, by
    identity, for as long as the counter lives: a replay counts each message once, not once per
    prompt it appears in.

    >>> count = MessageCounter("o200k_base")
    >>> m = Message.user("Hello, world!")
    >>> (count(m), count.total([m, m]))
    (8, 16)
    """

    def __init__(self, encoding: str = "o200k_base") -> None:
        self.encoding = encoding
        self._batch = token_counter(encoding)
        self._counts: Dict[int, Tuple[Message, int]] = {}  # the message is kept so its id stays unique

    def __call__(self, message: Message) -> int:
        known = self._counts.get(id(message))
        if known is not None:
            return known[1]
        if not isinstance(message, Message):
            raise MessageTypeError(f"message must be a Message, not {type_name(message)}")
        count: int = _called("the counter", self._batch, [message])[0]
        self._counts[id(message)] = (message, count)
        return count

    def total(self, messages: Iterable[MessageLike]) -> int:
        """The sum of the messages' counts.

        >>> MessageCounter("estimate").total([Message.user("Hello")])
        5
        """
        return sum(map(self, read_messages(messages)))


# A step takes the messages added since the last model call and returns the next prompt.
Step = Callable[[Sequence[Message]], List[Message]]
# What Strategy.from_function takes: function(history, budget) -> messages.
_StrategyFunction = Callable[[List[Message], int], Sequence[Message]]


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


def _budget(value: object, where: str) -> int:
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
        if message.role is _ASSISTANT:
            calls = [{"name": c.name, "args": c.input, "id": c.id, "type": "tool_call"} for c in message.tool_calls]
            return AIMessage(content=message.text, tool_calls=calls)
        if message.role is _TOOL:
            return ToolMessage(content=message.text, tool_call_id=message.tool_id or message.name or "")
        return (SystemMessage if message.role is _SYSTEM else HumanMessage)(content=message.text)

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


def _strategy(spec: Union[str, Strategy, _StrategyFunction], known: Dict[str, Strategy]) -> Strategy:
    if isinstance(spec, Strategy):
        return spec
    if isinstance(spec, str):
        spec = require_str(spec, "strategy")
        if spec not in known:
            hint = " (langchain needs langchain-core installed)" if spec == "langchain" else ""
            raise MessageError(f"unknown strategy {describe(spec)}{hint}; known: {', '.join(sorted(known))}")
        return known[spec]
    return Strategy.from_function(spec)


# -- ordering rules ---------------------------------------------------------------------------------


def ordering_problem(messages: Iterable[MessageLike], provider: str) -> Optional[str]:
    """The first way ``messages`` break ``provider``'s ordering rules, or None when valid.

    All three: each tool call is answered by tool results right after its assistant message,
    and each result answers a call of that message. ``anthropic`` adds: system messages only
    at the start and the first other message from the user (consecutive turns of one speaker
    are merged by the API). ``bedrock`` adds strict alternation: Converse rejects two turns of
    one speaker in a row (tool results and the user text right after them make one user turn).

    >>> chat = [Message.system("s"), Message.assistant("Hi"), Message.user("a")]
    >>> (ordering_problem(chat, "openai"), ordering_problem(chat, "anthropic"))
    (None, 'messages[1]: the first turn is assistant, not user')
    """
    provider = require_str(provider, "provider")
    if provider not in PROVIDERS:
        raise MessageError(f"unknown provider {describe(provider)}; known: {', '.join(PROVIDERS)}")
    messages = read_messages(messages)
    pending: List[Tuple[Optional[str], Optional[str]]] = []  # (id, name) of calls awaiting results
    caller = -1
    for index, message in enumerate(messages):
        role = message.role
        if role is _TOOL:
            key = next((k for k, (cid, name) in enumerate(pending)
                        if (message.tool_id is not None and cid == message.tool_id)
                        or (message.tool_id is None and name == message.name)), None)
            if key is None:
                return f"messages[{index}]: tool result {message.tool_id or message.name!r} answers no call of the message before it"
            del pending[key]
            continue
        if pending:
            call = pending[0][0] or pending[0][1]
            return f"messages[{index}]: call {call!r} of messages[{caller}] is not answered before this {role.value} message"
        if role is _ASSISTANT and message.tool_calls:
            pending = [(c.id, c.name) for c in message.tool_calls]
            caller = index
    if pending:
        return f"messages[{caller}]: call {pending[0][0] or pending[0][1]!r} is never answered"
    if provider == "openai":
        return None
    speaker: Optional[Role] = None
    for index, message in enumerate(messages):
        role = message.role
        if role is _SYSTEM:
            if speaker is not None:
                return f"messages[{index}]: a system message after the conversation started"
            continue
        turn = _USER if role is _TOOL else role
        if speaker is None and turn is not _USER:
            return f"messages[{index}]: the first turn is {role.value}, not user"
        if provider == "bedrock" and turn is speaker and not (role is _USER and messages[index - 1].role is _TOOL) \
                and not (role is _TOOL and messages[index - 1].role is _TOOL):
            return f"messages[{index}]: two {turn.value} turns in a row"
        speaker = turn
    if speaker is None:
        return "no user turn"
    return None


# -- identifiers the agent uses -------------------------------------------------------------------

_TERM = re.compile(
    r"(?<![\w./-])[\w.-]*/[\w./-]*\w"  # paths with a slash (matched from the start of a run only)
    r"|\b\w+\.(?:py|pyi|js|ts|tsx|java|c|h|cc|cpp|hpp|rs|go|rb|md|rst|txt|json|ya?ml|toml|cfg|ini|sh|html|css|sql)\b"
    r"|\b[A-Za-z_][A-Za-z0-9]*_\w+"  # snake_case
    r"|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z0-9]+[A-Z]\w*"  # camelCase, CamelCase
)


@lru_cache(maxsize=4096)  # replays of one transcript (and repeated texts) scan each text once
def _terms(text: str) -> FrozenSet[str]:
    """The file paths and identifiers (4 characters or more) in ``text``."""
    return frozenset(t for t in _TERM.findall(text) if len(t) >= 4 and not t.startswith(("http:", "https:")))


# -- metrics ---------------------------------------------------------------------------------------


@dataclass
class ReplayMetrics:
    """The measures of one strategy at one budget, on one transcript (or ``"(all)"`` pooled).

    Shares are fractions in [0, 1]; ``valid`` maps each provider to the share of prompts valid
    under its ordering rules; ``prefix_stability`` is the mean, over prompts after the first, of
    the share of the prompt's tokens in its longest common prefix with the previous prompt;
    ``tool_outputs_lost`` / ``user_turns_lost`` count the tool results and user messages of the
    history that are not intact in the last prompt (dropped, masked, compressed or summarized),
    of ``tool_outputs`` / ``user_turns``; ``recall`` is the share of the file paths and
    identifiers the agent's messages use, having appeared earlier in the history, that are in
    the prompt it saw (None when none were used); ``seconds_per_turn`` is the median time the
    strategy took per model call and ``seconds`` its total (tokens are counted before, so both
    are the strategy's own work).

    >>> m = replay([Message.user("Read src/app.py"), Message.assistant("Reading src/app.py")], "trim", 100)
    >>> (m.turns, m.kept_mean, m.recall, m.tool_outputs_lost)
    (1, 1.0, 1.0, 0)
    """

    transcript: str
    strategy: str
    budget: int
    turns: int
    tokens_mean: float
    tokens_p95: int
    tokens_max: int
    over_budget: int
    kept_mean: float
    valid: Dict[str, float]
    prefix_stability: Optional[float]
    tool_outputs_lost: int
    tool_outputs: int
    user_turns_lost: int
    user_turns: int
    recall: Optional[float]
    seconds_per_turn: float
    seconds: float
    _turns: Dict[str, List[Any]] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> Dict[str, Any]:
        """The measures as plain JSON data.

        >>> replay([Message.user("Hi"), Message.assistant("Hello")], "trim", 100).to_dict()["turns"]
        1
        """
        data = asdict(self)
        del data["_turns"]
        return data


def _p95(values: Sequence[int]) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else 0


def _metrics(transcript: str, strategy: str, budget: int, turns: Dict[str, List[Any]],
             lost: Tuple[int, int, int, int]) -> ReplayMetrics:
    tokens, stability, used, found = turns["tokens"], turns["stability"], turns["used"], turns["found"]
    n = len(tokens)
    return ReplayMetrics(
        transcript=transcript, strategy=strategy, budget=budget, turns=n,
        tokens_mean=sum(tokens) / n if n else 0.0, tokens_p95=_p95(tokens), tokens_max=max(tokens, default=0),
        over_budget=sum(1 for t in tokens if t > budget),
        kept_mean=sum(turns["kept"]) / n if n else 0.0,
        valid={p: (sum(turns[p]) / n if n else 1.0) for p in PROVIDERS},
        prefix_stability=sum(stability) / len(stability) if stability else None,
        tool_outputs_lost=lost[0], tool_outputs=lost[1], user_turns_lost=lost[2], user_turns=lost[3],
        recall=sum(found) / sum(used) if sum(used) else None,
        seconds_per_turn=statistics.median(turns["seconds"]) if n else 0.0,
        seconds=sum(turns["seconds"]),
        _turns=turns,
    )


def _common_prefix_tokens(prompt: List[Message], previous: List[Message], counter: MessageCounter) -> int:
    total = 0
    for mine, theirs in zip(prompt, previous):
        if mine is not theirs and mine != theirs:
            break
        total += counter(mine)
    return total


def replay(
    messages: Iterable[MessageLike], strategy: Union[str, Strategy, _StrategyFunction], budget: int, *,
    counter: Union[str, MessageCounter] = "o200k_base", name: str = "transcript",
) -> ReplayMetrics:
    """Replays one transcript with one strategy at one budget (see the module) and measures it.

    ``counter`` is an encoding name, ``"estimate"``, or a :class:`MessageCounter` to share
    between replays of the same messages.

    >>> m = replay([Message.user("x " * 200), Message.assistant("a"), Message.user("go"), Message.assistant("b")],
    ...            "trim", 50, counter="estimate")
    >>> (m.turns, m.tokens_max, m.over_budget, m.user_turns_lost)
    (2, 104, 1, 1)
    """
    budget = _budget(budget, "budget")
    name = require_str(name, "name")
    history = read_messages(messages)
    count = counter if isinstance(counter, MessageCounter) else MessageCounter(counter)
    chosen = _strategy(strategy, builtin_strategies())
    count.total(history)  # count every message now, so no strategy's time includes counting
    step = chosen.start(budget, count)
    turns: Dict[str, List[Any]] = {key: [] for key in ("tokens", "kept", "stability", "used", "found", "seconds", *PROVIDERS)}
    originals: Dict[int, Message] = {}
    terms: Dict[int, FrozenSet[str]] = {}
    seen_terms: Set[str] = set()
    tool_count = user_count = 0
    prompt: List[Message] = []
    previous: Optional[List[Message]] = None
    last = 0

    def terms_of(message: Message) -> FrozenSet[str]:
        known = terms.get(id(message))
        if known is None:
            known = terms[id(message)] = _terms(measured_text(message))
        return known

    for index, message in enumerate(history):
        if message.role is not _ASSISTANT:
            continue
        new = history[last:index]
        for item in new:
            originals[id(item)] = item
            tool_count += item.role is _TOOL
            user_count += item.role is _USER
        began = time.perf_counter()
        prompt = step(new)
        turns["seconds"].append(time.perf_counter() - began)
        for item in new:
            seen_terms |= terms_of(item)
        last = index
        tokens = count.total(prompt)
        turns["tokens"].append(tokens)
        turns["kept"].append(len(prompt))
        for provider in PROVIDERS:
            turns[provider].append(ordering_problem(prompt, provider) is None)
        if previous is not None:
            turns["stability"].append(_common_prefix_tokens(prompt, previous, count) / tokens if tokens else 1.0)
        previous = prompt
        needed = terms_of(message) & seen_terms
        turns["used"].append(len(needed))
        turns["found"].append(sum(1 for term in needed if any(term in terms_of(m) for m in reversed(prompt))))
    intact = [m for m in prompt if originals.get(id(m)) is m]
    lost = (
        tool_count - sum(1 for m in intact if m.role is _TOOL), tool_count,
        user_count - sum(1 for m in intact if m.role is _USER), user_count,
    )
    return _metrics(name, chosen.name, budget, turns, lost)


def _pooled(rows: List[ReplayMetrics]) -> ReplayMetrics:
    turns: Dict[str, List[Any]] = {key: [] for key in rows[0]._turns}
    for row in rows:
        for key, values in row._turns.items():
            turns[key].extend(values)
    lost = tuple(sum(getattr(r, f) for r in rows) for f in ("tool_outputs_lost", "tool_outputs", "user_turns_lost", "user_turns"))
    return _metrics("(all)", rows[0].strategy, rows[0].budget, turns, lost)


# -- the report ------------------------------------------------------------------------------------

_CSV_FIELDS = (
    "transcript", "strategy", "budget", "turns", "tokens_mean", "tokens_p95", "tokens_max", "over_budget",
    "kept_mean", "valid_openai", "valid_anthropic", "valid_bedrock", "prefix_stability", "tool_outputs_lost",
    "tool_outputs", "user_turns_lost", "user_turns", "recall", "seconds_per_turn", "seconds",
)
# The measures of time: the only ones that differ between two runs on the same input.
_TIMING_FIELDS = ("seconds_per_turn", "seconds")


def _percent(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


@dataclass
class WorkbenchReport:
    """What :func:`run_workbench` measured: ``rows`` per transcript x strategy x budget,
    ``overall`` per strategy x budget with every transcript's turns pooled.

    >>> report = run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [100])
    >>> print(report.table().splitlines()[0].split()[:3])
    ['strategy', 'budget', 'tokens']
    """

    rows: List[ReplayMetrics]
    overall: List[ReplayMetrics]
    encoding: str

    def table(self, rows: Optional[List[ReplayMetrics]] = None, *, timings: bool = True) -> str:
        """A text table of ``rows`` (the overall rows by default), one line per strategy x budget;
        ``timings=False`` leaves out the time column (see :meth:`to_dict`).

        >>> run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [100]).table().count("\\n")
        1
        """
        timings = require_bool(timings, "timings")
        header = (f"{'strategy':<18} {'budget':>6} {'tokens':>7} {'p95':>6} {'max':>6} {'over':>4} {'kept':>5} "
                  f"{'openai':>6} {'anthr.':>6} {'bedrock':>7} {'prefix':>6} {'tools lost':>10} {'users lost':>10} "
                  f"{'recall':>6}")
        lines = [header + (f" {'us/turn':>8}" if timings else "")]
        for r in self.overall if rows is None else rows:
            lines.append(
                f"{utf8_text(r.strategy):<18} {r.budget:>6} {r.tokens_mean:>7.0f} {r.tokens_p95:>6} {r.tokens_max:>6} "
                f"{r.over_budget:>4} {r.kept_mean:>5.1f} {_percent(r.valid['openai']):>6} "
                f"{_percent(r.valid['anthropic']):>6} {_percent(r.valid['bedrock']):>7} "
                f"{_percent(r.prefix_stability):>6} {f'{r.tool_outputs_lost}/{r.tool_outputs}':>10} "
                f"{f'{r.user_turns_lost}/{r.user_turns}':>10} {_percent(r.recall):>6}"
                + (f" {1e6 * r.seconds_per_turn:>8.0f}" if timings else "")
            )
        return "\n".join(lines)

    def to_dict(self, *, timings: bool = True) -> Dict[str, Any]:
        """Every row as plain JSON data: ``{"encoding", "overall", "transcripts"}``.

        ``timings=False`` leaves out ``seconds_per_turn`` and ``seconds``, the only measures
        that differ between two runs on the same input: what is left is the same, byte for
        byte, in every run.

        >>> sorted(run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [9]).to_dict())
        ['encoding', 'overall', 'transcripts']
        """
        timings = require_bool(timings, "timings")
        return {"encoding": self.encoding, "overall": [_row_dict(r, timings) for r in self.overall],
                "transcripts": [_row_dict(r, timings) for r in self.rows]}

    def write_json(self, path: Union[str, "os.PathLike[str]", IO[str]], *, timings: bool = True) -> None:
        """Writes :meth:`to_dict` as JSON to ``path``: a file path, ``"-"`` (stdout) or a text
        file open for writing (left open).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "wb.json")
        >>> run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [9]).write_json(path)
        """
        data = self.to_dict(timings=timings)
        with _opened(path, "path") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")

    def write_csv(self, path: Union[str, "os.PathLike[str]", IO[str]], *, timings: bool = True) -> None:
        """Writes one CSV row per transcript x strategy x budget, then the ``(all)`` rows, to
        ``path`` (as for :meth:`write_json`); ``timings=False`` leaves out the time columns.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "wb.csv")
        >>> run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [9]).write_csv(path)
        >>> open(path).readline().split(",")[:3]
        ['transcript', 'strategy', 'budget']
        """
        fields = [f for f in _CSV_FIELDS if require_bool(timings, "timings") or f not in _TIMING_FIELDS]
        with _opened(path, "path", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(fields)
            for r in [*self.rows, *self.overall]:
                data = r.to_dict()
                for provider in PROVIDERS:
                    data[f"valid_{provider}"] = data["valid"][provider]
                # A name holding a lone surrogate (read from a JSON escape) is written escaped:
                # UTF-8 cannot carry it.
                writer.writerow(["" if data[f] is None else utf8_text(data[f]) if isinstance(data[f], str)
                                 else data[f] for f in fields])

    def plot(self, path: Union[str, "os.PathLike[str]", IO[bytes]]) -> None:
        """A PNG of the overall rows: mean prompt tokens against prefix stability (one line per
        strategy, a point per budget), and the share of valid prompts per strategy and provider,
        written to ``path``: a file path or a binary file open for writing (left open).
        Needs matplotlib (``pip install 'agentmsg[plot]'``); without it raises
        :class:`MissingDependencyError`.

        >>> report = run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [9])
        >>> report.plot("/nonexistent/dir/x.png")  # doctest: +SKIP
        """
        if isinstance(path, (int, bytes)) or not (
                isinstance(path, (str, os.PathLike)) or callable(getattr(path, "write", None))):
            raise MessageTypeError(f"path must be a file path or a binary file open for writing, not {type_name(path)}")
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise MissingDependencyError(
                "the workbench plot needs matplotlib: pip install 'agentmsg[plot]'") from None
        strategies = list(dict.fromkeys(r.strategy for r in self.overall))
        figure, (tokens_axis, valid_axis) = plt.subplots(1, 2, figsize=(13, 5))
        for name in strategies:
            rows = sorted((r for r in self.overall if r.strategy == name), key=lambda r: r.budget)
            xs = [r.tokens_mean for r in rows]
            ys = [100 * (r.prefix_stability or 0.0) for r in rows]
            tokens_axis.plot(xs, ys, marker="o", label=name)
            for r, x, y in zip(rows, xs, ys):
                tokens_axis.annotate(str(r.budget), (x, y), fontsize=7, textcoords="offset points", xytext=(3, 3))
        tokens_axis.set_xlabel(f"mean prompt tokens kept ({self.encoding})")
        tokens_axis.set_ylabel("prefix stability (% of prompt tokens reusable)")
        tokens_axis.set_title("tokens kept vs prefix stability (labels: budget)")
        tokens_axis.legend(fontsize=8)
        width = 0.8 / len(PROVIDERS)
        for k, provider in enumerate(PROVIDERS):
            shares = [100 * _mean([r.valid[provider] for r in self.overall if r.strategy == name]) for name in strategies]
            valid_axis.bar([i + k * width for i in range(len(strategies))], shares, width, label=provider)
        valid_axis.set_xticks([i + width for i in range(len(strategies))], strategies, rotation=30, ha="right", fontsize=8)
        valid_axis.set_ylabel("valid requests (% of prompts, all budgets)")
        valid_axis.set_title("requests valid under each provider's ordering rules")
        valid_axis.legend(fontsize=8, loc="lower right")
        figure.tight_layout()
        figure.savefig(path, dpi=110)
        plt.close(figure)


def _row_dict(row: ReplayMetrics, timings: bool) -> Dict[str, Any]:
    data = row.to_dict()
    if not timings:
        for key in _TIMING_FIELDS:
            del data[key]
    return data


@contextlib.contextmanager
def _opened(path: object, what: str, newline: Optional[str] = None) -> Iterator[IO[str]]:
    """``path`` opened for writing text; stdout for ``"-"``, and a caller's open file, both
    left open. An int is refused: ``open`` would take it for a file descriptor and close it
    (stdout, for 1) when done."""
    if isinstance(path, str) and path == "-":
        yield sys.stdout
        return
    if isinstance(path, (str, os.PathLike)):
        with open(path, "w", encoding="utf-8", newline=newline) as handle:
            yield handle
        return
    if not isinstance(path, (int, bytes)) and callable(getattr(path, "write", None)):
        yield path  # type: ignore[misc]  # a file object of the caller's
        return
    raise MessageTypeError(f"{what} must be a file path, '-' for stdout, or a text file open for writing, "
                           f"not {type_name(path)}")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _progress_bar(total: Optional[int], enabled: Optional[bool], unit: str) -> Any:
    """A tqdm bar on stderr; by default on only when stderr is a terminal, and drawn only once a
    run has lasted half a second, so short runs print nothing.

    >>> bar = _progress_bar(3, False, "replay"); bar.update(); bar.close()
    """
    from tqdm import tqdm

    if total is not None:
        total = require_int(total, "total")
    if enabled is not None:
        enabled = require_bool(enabled, "enabled")
    unit = require_str(unit, "unit")
    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=total, disable=not enabled, file=sys.stderr, unit=unit, leave=False, delay=0.5)


def run_workbench(
    transcripts: Iterable[Union[Transcript, Sequence[Message]]],
    strategies: Optional[Sequence[Union[str, Strategy, _StrategyFunction]]] = None,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    *, encoding: str = "o200k_base", progress: Optional[bool] = None,
) -> WorkbenchReport:
    """Replays every transcript with every strategy at every budget (see the module).

    ``transcripts``: :class:`Transcript` objects (from :func:`agentmsg.iter_transcripts`) or
    lists of messages; ``strategies``: built-in names (:func:`builtin_strategies`),
    :class:`Strategy` objects or functions ``f(history, budget) -> messages`` (default:
    :data:`DEFAULT_STRATEGIES`); ``encoding``: how tokens are counted (an encoding name or
    ``"estimate"``); ``progress``: a progress bar on stderr (default: when stderr is a terminal,
    after half a second).

    >>> chat = [Message.user("Hi"), Message.assistant("Hello")]
    >>> [(r.strategy, r.budget) for r in run_workbench([chat], ["trim", "memory"], [10, 20]).overall]
    [('trim', 10), ('trim', 20), ('memory', 10), ('memory', 20)]
    """
    known = builtin_strategies()
    specs = DEFAULT_STRATEGIES if strategies is None else _as_list(strategies, "strategies", "a sequence of strategies")
    chosen = [_strategy(s, known) for s in specs]
    if not chosen:
        raise MessageError("no strategies to replay")
    budget_list = [_budget(b, f"budgets[{i}]") for i, b in enumerate(_as_list(budgets, "budgets", "a sequence of int"))]
    if not budget_list:
        raise MessageError("no budgets to replay")
    MessageCounter(encoding)  # an unknown encoding is an error before any replay
    if progress is not None:
        progress = require_bool(progress, "progress")
    try:
        items = iter(transcripts)
    except TypeError:
        raise MessageTypeError(f"transcripts must be an iterable of transcripts, not {type_name(transcripts)}") from None
    size = len(transcripts) if isinstance(transcripts, Sized) else None
    bar = _progress_bar(None if size is None else size * len(chosen) * len(budget_list), progress, "replay")
    rows: List[ReplayMetrics] = []
    try:
        for number, item in enumerate(_streamed(items), start=1):  # one transcript in memory at a time
            name = item.name if isinstance(item, Transcript) else f"transcript {number}"
            messages = read_messages(item.messages if isinstance(item, Transcript) else item,
                                       f"transcripts[{number - 1}]")
            counter = MessageCounter(encoding)  # shared by this transcript's replays
            for strategy in chosen:
                for budget in budget_list:
                    bar.set_description(f"{name} {strategy.name} {budget}", refresh=False)
                    rows.append(replay(messages, strategy, budget, counter=counter, name=name))
                    bar.update()
    finally:
        bar.close()
    if not rows:
        raise MessageError("no transcripts to replay")
    overall = [_pooled([r for r in rows if r.strategy == s.name and r.budget == b]) for s in chosen for b in budget_list]
    return WorkbenchReport(rows, overall, encoding)


def _streamed(items: Iterator[Any]) -> Iterator[Any]:
    """The caller's items; a failure of their iterator is a MessageTypeError (as in
    ``_as_list``), except our own errors and OSError (a file that cannot be read), kept."""
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except (AgentMsgError, OSError):
            raise
        except Exception as error:  # noqa: BLE001 - any other failure of the caller's iterator is theirs
            raise MessageTypeError(f"transcripts: iterating it raised {type_name(error)}") from error
        yield item


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
