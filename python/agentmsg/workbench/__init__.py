"""The pruning workbench: replay transcripts as an agent loop and measure what each pruning
strategy keeps, loses and breaks.

At each model call (each assistant message of a transcript) the prompt is the history so far,
reduced by a strategy to a token budget. For each strategy x budget, per transcript and overall,
:func:`run_workbench` measures the prompt tokens (mean, p95, max, how many prompts were over the
budget), the messages kept, the share of prompts the OpenAI, Anthropic and Bedrock APIs would
accept (:func:`agentmsg.check`; :func:`ordering_problem` names the first problem), the prefix stability (the share of each prompt's
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

import re
import time
from functools import lru_cache
from typing import (
    Any,
    Collection,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Sized,
    Union,
    cast,
)

from .._checks import as_list, check_calls, describe, require_bool, require_str, type_name
from ..counting.chat_tokens import ChatTokenCounter
from ..counting.counter import MessageCounter
from ..counting.tokens import measured_text
from ..errors import AgentMsgError, MessageError, MessageTypeError
from ..history.check import CheckedProvider, check
from ..errors import MissingDependencyError as MissingDependencyError  # here before errors.py had it
from ..model.message import Message, Role
from ..readers import MessageLike, read_messages
from .cost import PRICES, PRICES_DATE, Prices, prices_of
from .html import HTML_TEXT_CHARS, write_html
from .report import (
    PROMPT_STATUSES, PROVIDERS, ReplayMetrics, SentPrompt, WorkbenchReport, pooled_metrics, progress_bar,
    replay_metrics,
)
from .strategies import (
    DEFAULT_BUDGETS, DEFAULT_STRATEGIES, Strategy, budget_value, strategy_of, StrategyFunction,
    builtin_strategies, first_sentence_summary,
)
from .transcripts import TRANSCRIPT_FORMATS, Transcript, iter_transcripts, load_transcript

__all__ = [
    "DEFAULT_STRATEGIES",
    "DEFAULT_BUDGETS",
    "Strategy",
    "first_sentence_summary",
    "builtin_strategies",
    "ReplayMetrics",
    "WorkbenchReport",
    "PROVIDERS",
    "ordering_problem",
    "replay",
    "run_workbench",
    "Transcript",
    "load_transcript",
    "iter_transcripts",
    "TRANSCRIPT_FORMATS",
    "SentPrompt",
    "PROMPT_STATUSES",
    "Prices",
    "PRICES",
    "PRICES_DATE",
    "write_html",
    "HTML_TEXT_CHARS",
]


_SYSTEM, _USER, _ASSISTANT, _TOOL = Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL


# -- ordering rules ---------------------------------------------------------------------------------


def ordering_problem(messages: Iterable[MessageLike], provider: str) -> Optional[str]:
    """The first reason ``provider`` would refuse ``messages``, or None when it would take them:
    the first problem :func:`agentmsg.check` lists (the one set of rules; the workbench's
    ``valid`` measure is the share of prompts it passes).

    >>> chat = [Message.system("s"), Message.assistant("Hi"), Message.user("a")]
    >>> (ordering_problem(chat, "openai"), ordering_problem(chat, "anthropic"))
    (None, 'messages[1]: the conversation must begin with a user message, not assistant')
    """
    provider = require_str(provider, "provider")
    if provider not in PROVIDERS:
        raise MessageError(f"unknown provider {describe(provider)}; known: {', '.join(PROVIDERS)}")
    problems = check(messages, cast(CheckedProvider, provider))
    return str(problems[0]) if problems else None


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


def _common_prefix_tokens(prompt: List[Message], previous: List[Message], counter: MessageCounter) -> int:
    total = 0
    for mine, theirs in zip(prompt, previous):
        if mine is not theirs and mine != theirs:
            break
        total += counter(mine)
    return total


def _sent_prompt(call: int, answered: int, prompt: List[Message], previous: List[Message], new: Sequence[Message],
                 position: Dict[int, int], origin_of_id: Dict[str, int], tokens: int, cached: int,
                 counter: MessageCounter) -> SentPrompt:
    """What changed between the previous prompt (plus the ``new`` messages) and ``prompt``."""
    before = {m.id: m for m in previous}
    arrived = {id(m) for m in new}
    status: List[str] = []
    origin: List[Optional[int]] = []
    for message in prompt:
        earlier = before.get(message.id)
        index = position.get(id(message))
        if index is None:
            index = origin_of_id.get(message.id)
        origin.append(index)
        if earlier is not None and (earlier is message or earlier == message):
            status.append("kept")
        elif id(message) in arrived:
            status.append("new")
        else:
            status.append("summary" if index is None else "masked")
    present = {m.id for m in prompt}
    dropped = [m for m in (*previous, *new) if m.id not in present]
    dropped_origins = [position.get(id(m), origin_of_id.get(m.id)) for m in dropped]
    return SentPrompt(call, answered, list(prompt), status, origin, dropped, dropped_origins,
                      "summary" in status, tokens, cached, [counter(m) for m in prompt])


def replay(
    messages: Iterable[MessageLike], strategy: Union[str, Strategy, StrategyFunction], budget: int, *,
    counter: Union[str, ChatTokenCounter, MessageCounter] = "o200k_base", name: str = "transcript",
    prices: Union[str, Prices] = "claude-sonnet-4.5", keep_prompts: bool = False,
) -> ReplayMetrics:
    """Replays one transcript with one strategy at one budget (see the module) and measures it.

    ``counter`` is an encoding name, ``"estimate"``, an open model's
    :class:`agentmsg.ChatTokenCounter` (its ``base`` is part of every prompt: the strategies
    keep ``budget - base`` of messages, and each prompt's tokens include it), or a
    :class:`MessageCounter` to share between replays of the same messages; ``prices`` a name in :data:`PRICES` or a
    :class:`Prices` for the costs; ``keep_prompts=True`` keeps each call's prompt in
    ``prompts`` (:class:`SentPrompt`: what was sent, and what was dropped, masked or summarized
    since the previous call).

    >>> m = replay([Message.user("x " * 200), Message.assistant("a"), Message.user("go"), Message.assistant("b")],
    ...            "trim", 50, counter="estimate")
    >>> (m.turns, m.tokens_max, m.over_budget, m.user_turns_lost)
    (2, 104, 1, 1)
    """
    budget = budget_value(budget, "budget")
    name = require_str(name, "name")
    keep_prompts = require_bool(keep_prompts, "keep_prompts")
    price = prices_of(prices)
    history = read_messages(messages)
    count = counter if isinstance(counter, MessageCounter) else MessageCounter(counter)
    chosen = strategy_of(strategy, builtin_strategies())
    count.total(history)  # count every message now, so no strategy's time includes counting
    step = chosen.start(max(budget - count.base, 0), count)
    turns: Dict[str, List[Any]] = {key: [] for key in (
        "tokens", "kept", "stability", "used", "found", "seconds", "hit", "cost", "cost_uncached", *PROVIDERS)}
    position: Dict[int, int] = {}  # id of a history message -> its index
    origin_of_id: Dict[str, int] = {}  # a history message's id -> its index (masked copies keep the id)
    terms: Dict[int, FrozenSet[str]] = {}
    seen_terms: Set[str] = set()
    tool_count = user_count = 0
    prompt: List[Message] = []
    previous: List[Message] = []
    sent: Optional[List[SentPrompt]] = [] if keep_prompts else None
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
        for offset, item in enumerate(new, start=last):
            position[id(item)] = offset
            origin_of_id.setdefault(item.id, offset)
            tool_count += item.role is _TOOL
            user_count += item.role is _USER
        began = time.perf_counter()
        prompt = step(new)
        turns["seconds"].append(time.perf_counter() - began)
        for item in new:
            seen_terms |= terms_of(item)
        last = index
        tokens = count.base + count.total(prompt)
        shared = _common_prefix_tokens(prompt, previous, count)
        turns["tokens"].append(tokens)
        turns["kept"].append(len(prompt))
        for provider in PROVIDERS:
            turns[provider].append(not check(prompt, cast(CheckedProvider, provider)))
        if len(turns["tokens"]) > 1:  # prompts after the first
            turns["stability"].append(shared / tokens if tokens else 1.0)
        turns["hit"].append(price.cache_hit(min(shared, tokens)))
        turns["cost"].append(price.prompt_cost(tokens, shared))
        turns["cost_uncached"].append(price.prompt_cost(tokens, shared, caching=False))
        if sent is not None:
            sent.append(_sent_prompt(len(sent) + 1, index, prompt, previous, new, position, origin_of_id, tokens, shared,
                                     count))
        previous = prompt
        needed = terms_of(message) & seen_terms
        turns["used"].append(len(needed))
        turns["found"].append(sum(1 for term in needed if any(term in terms_of(m) for m in reversed(prompt))))
    intact = [m for m in prompt if id(m) in position]
    lost = (
        tool_count - sum(1 for m in intact if m.role is _TOOL), tool_count,
        user_count - sum(1 for m in intact if m.role is _USER), user_count,
    )
    metrics = replay_metrics(name, chosen.name, budget, turns, lost)
    metrics.prompts = sent
    return metrics


# -- the report ------------------------------------------------------------------------------------


def run_workbench(
    transcripts: Iterable[Union[Transcript, Sequence[Message]]],
    strategies: Optional[Sequence[Union[str, Strategy, StrategyFunction]]] = None,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    *, encoding: Union[str, ChatTokenCounter] = "o200k_base", prices: Union[str, Prices] = "claude-sonnet-4.5",
    keep_prompts: Union[bool, Collection[str]] = False, progress: Optional[bool] = None,
) -> WorkbenchReport:
    """Replays every transcript with every strategy at every budget (see the module).

    ``transcripts``: :class:`Transcript` objects (from :func:`agentmsg.iter_transcripts`) or
    lists of messages; ``strategies``: built-in names (:func:`builtin_strategies`),
    :class:`Strategy` objects or functions ``f(history, budget) -> messages`` (default:
    :data:`DEFAULT_STRATEGIES`); ``encoding``: how tokens are counted (an encoding name,
    ``"estimate"``, or an open model's :class:`agentmsg.ChatTokenCounter`, as :func:`replay`
    takes it); ``prices``: a name in :data:`PRICES` or a :class:`Prices` for the costs;
    ``keep_prompts``: keep each call's prompt (:attr:`ReplayMetrics.prompts`) for every
    transcript (True) or for the transcripts of these names; ``progress``: a progress bar on
    stderr (default: when stderr is a terminal, after half a second).

    >>> chat = [Message.user("Hi"), Message.assistant("Hello")]
    >>> [(r.strategy, r.budget) for r in run_workbench([chat], ["trim", "memory"], [10, 20]).overall]
    [('trim', 10), ('trim', 20), ('memory', 10), ('memory', 20)]
    """
    known = builtin_strategies()
    specs = DEFAULT_STRATEGIES if strategies is None else as_list(strategies, "strategies", "a sequence of strategies")
    chosen = [strategy_of(s, known) for s in specs]
    if not chosen:
        raise MessageError("no strategies to replay")
    budget_list = [budget_value(b, f"budgets[{i}]") for i, b in enumerate(as_list(budgets, "budgets", "a sequence of int"))]
    if not budget_list:
        raise MessageError("no budgets to replay")
    if not isinstance(encoding, (str, ChatTokenCounter)):
        raise MessageTypeError(f"encoding must be an encoding name or a ChatTokenCounter, not {type_name(encoding)}")
    MessageCounter(encoding)  # an unknown encoding is an error before any replay
    price = prices_of(prices)
    keep_all = keep_prompts is True
    if isinstance(keep_prompts, bool):
        names: FrozenSet[str] = frozenset()
    elif isinstance(keep_prompts, str) or not isinstance(keep_prompts, Collection):
        raise MessageTypeError(f"keep_prompts must be a bool or a collection of transcript names, not {type_name(keep_prompts)}")
    else:
        names = frozenset(require_str(n, "keep_prompts[...]") for n in keep_prompts)
    if progress is not None:
        progress = require_bool(progress, "progress")
    try:
        items = iter(transcripts)
    except TypeError:
        raise MessageTypeError(f"transcripts must be an iterable of transcripts, not {type_name(transcripts)}") from None
    size = len(transcripts) if isinstance(transcripts, Sized) else None
    bar = progress_bar(None if size is None else size * len(chosen) * len(budget_list), progress, "replay")
    rows: List[ReplayMetrics] = []
    histories: Dict[str, List[Message]] = {}
    try:
        for number, item in enumerate(_streamed(items), start=1):  # one transcript in memory at a time
            name = item.name if isinstance(item, Transcript) else f"transcript {number}"
            messages = read_messages(item.messages if isinstance(item, Transcript) else item,
                                       f"transcripts[{number - 1}]")
            counter = MessageCounter(encoding)  # shared by this transcript's replays
            for strategy in chosen:
                for budget in budget_list:
                    bar.set_description(f"{name} {strategy.name} {budget}", refresh=False)
                    keep = keep_all or name in names
                    if keep:
                        histories[name] = messages
                    row = replay(messages, strategy, budget, counter=counter, name=name, prices=price,
                                 keep_prompts=keep)
                    if isinstance(item, Transcript):
                        row.outcome, row.usage = dict(item.outcome), dict(item.usage)
                    rows.append(row)
                    bar.update()
    finally:
        bar.close()
    if not rows:
        raise MessageError("no transcripts to replay")
    overall = [pooled_metrics([r for r in rows if r.strategy == s.name and r.budget == b]) for s in chosen for b in budget_list]
    label = encoding if isinstance(encoding, str) else f"{encoding.template.path or 'a chat template'} (base {encoding.base})"
    return WorkbenchReport(rows, overall, label, price, histories)


def _streamed(items: Iterator[Any]) -> Iterator[Any]:
    """The caller's items; a failure of their iterator is a MessageTypeError (as in
    ``as_list``), except our own errors and OSError (a file that cannot be read), kept."""
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
