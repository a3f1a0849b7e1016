"""What the workbench measured: one replay's :class:`ReplayMetrics`, pooled per strategy and
budget into a :class:`WorkbenchReport` (a table, CSV and a plot), and the progress bar of long
runs."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import statistics
import sys
from dataclasses import dataclass, field, fields
from typing import IO, Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .._checks import check_calls, require_bool, require_int, require_str, shown, type_name, utf8_text
from ..errors import MessageError, MessageTypeError, MissingDependencyError
from ..model.message import Message
from .cost import Prices

__all__ = ["ReplayMetrics", "WorkbenchReport", "PROVIDERS", "SentPrompt", "PROMPT_STATUSES"]


#: What happened to each message of a prompt since the previous model call: ``new`` (arrived
#: since, intact), ``kept`` (in the previous prompt, unchanged), ``masked`` (a message of the
#: history whose content changed since: masked, compressed), ``summary`` (a message the history
#: does not hold: a summary).
PROMPT_STATUSES = ("new", "kept", "masked", "summary")


@dataclass(frozen=True)
class SentPrompt:
    """The prompt a strategy sent at one model call (kept by ``replay(..., keep_prompts=True)``).

    ``call`` counts model calls from 1; ``answered`` is the index, in the transcript, of the
    assistant message this prompt was sent for; ``messages`` the prompt, with for each message
    its ``status`` (:data:`PROMPT_STATUSES`) and its ``origin`` (the index of the history
    message it is, or was made from; None for a summary); ``dropped`` the messages of the
    previous prompt, or arrived since, that are in no form in this one (``dropped_origins``
    their indices in the history), summarized when ``summarized`` (this call added a summary);
    ``tokens`` the prompt's tokens (``message_tokens`` per message) and ``cached`` those of its
    prefix shared with the previous prompt (what a provider's cache can serve).

    >>> m = replay([Message.user("a"), Message.assistant("b"), Message.user("c"), Message.assistant("d")],
    ...            "trim", 100, counter="estimate", keep_prompts=True)
    >>> [(p.call, p.answered, p.status, p.origin) for p in m.prompts]
    [(1, 1, ['new'], [0]), (2, 3, ['kept', 'new', 'new'], [0, 1, 2])]
    """

    call: int
    answered: int
    messages: List[Message] = field(repr=False)
    status: List[str]
    origin: List[Optional[int]]
    dropped: List[Message] = field(repr=False)
    dropped_origins: List[Optional[int]]
    summarized: bool
    tokens: int
    cached: int
    message_tokens: List[int] = field(repr=False)

    def render(self, width: int = 100) -> str:
        """The prompt as text, one line per message (its status mark, origin in the history,
        role, tokens and the start of its text, cut to ``width`` characters), then the messages
        dropped or summarized since the previous call. Marks: ``+`` new, `` `` kept, ``~``
        masked, ``*`` summary, ``-`` dropped (or summarized).

        >>> m = replay([Message.user("a"), Message.assistant("b")], "trim", 100, counter="estimate", keep_prompts=True)
        >>> print(m.prompts[0].render())
        call 1 (answers message 1): 1 message, 4 tokens, 0 from the previous prompt
        + [0]   user           4  a
        """
        width = require_int(width, "width", minimum=40)
        lines = [f"call {self.call} (answers message {self.answered}): {len(self.messages)} "
                 f"message{'s' if len(self.messages) != 1 else ''}, {self.tokens} tokens, {self.cached} from the "
                 f"previous prompt"]
        for message, status, origin, tokens in zip(self.messages, self.status, self.origin, self.message_tokens):
            lines.append(_message_line(_MARKS[status], origin, message, tokens, width))
        if self.dropped:
            lines.append(f"{'summarized' if self.summarized else 'dropped'} since the previous call:")
            for message, origin in zip(self.dropped, self.dropped_origins):
                lines.append(_message_line("-", origin, message, None, width))
        return "\n".join(lines)


_MARKS = {"new": "+", "kept": " ", "masked": "~", "summary": "*"}


def _message_line(mark: str, origin: Optional[int], message: Message, tokens: Optional[int], width: int) -> str:
    where = "[-]" if origin is None else f"[{origin}]"
    head = f"{mark} {where:<5} {message.role.value:<9} {'' if tokens is None else tokens:>6}  "
    text = " ".join(utf8_text(message.text).split()) or (
        ", ".join(f"{c.name}(...)" for c in message.tool_calls) if message.tool_calls else "")
    room = max(width - len(head), 10)
    return head + (text if len(text) <= room else text[: room - 3] + "...")


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
    the prompt it saw (None when none were used); ``cost`` is the dollars of the replay's
    prompts with prompt caching (each prompt's prefix shared with the previous one read from the
    cache, see :class:`Prices`), ``cost_uncached`` without, and ``cached_share`` the share of
    input tokens read from the cache (for the pooled rows, ``cost`` and ``cost_uncached`` are
    dollars per transcript); ``seconds_per_turn`` is the median time the strategy took per
    model call and ``seconds`` its total (tokens are counted before, so both are the strategy's
    own work). ``outcome`` and ``usage`` are what the transcript's file records of the run's
    result and of the provider's usage (:class:`Transcript`; empty in the pooled rows), so the
    proxies can be read against outcomes. ``prompts`` holds each call's :class:`SentPrompt` when
    the replay kept them.

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
    cost: float
    cost_uncached: float
    cached_share: Optional[float]
    seconds_per_turn: float
    seconds: float
    outcome: Dict[str, Any] = field(default_factory=dict, repr=False)
    usage: Dict[str, Any] = field(default_factory=dict, repr=False)
    prompts: Optional[List[SentPrompt]] = field(default=None, repr=False, compare=False)
    _turns: Dict[str, List[Any]] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> Dict[str, Any]:
        """The measures as plain JSON data (without ``prompts``).

        >>> replay([Message.user("Hi"), Message.assistant("Hello")], "trim", 100).to_dict()["turns"]
        1
        """
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("prompts", "_turns")}
        data["valid"] = dict(self.valid)
        data["outcome"], data["usage"] = dict(self.outcome), dict(self.usage)
        return data


def _p95(values: Sequence[int]) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else 0


def pooled_metrics(rows: List[ReplayMetrics]) -> ReplayMetrics:
    turns: Dict[str, List[Any]] = {key: [] for key in rows[0]._turns}
    for row in rows:
        for key, values in row._turns.items():
            turns[key].extend(values)
    lost = tuple(sum(getattr(r, f) for r in rows) for f in ("tool_outputs_lost", "tool_outputs", "user_turns_lost", "user_turns"))
    return replay_metrics("(all)", rows[0].strategy, rows[0].budget, turns, lost, transcripts=len(rows))


_CSV_FIELDS = (
    "transcript", "strategy", "budget", "turns", "tokens_mean", "tokens_p95", "tokens_max", "over_budget",
    "kept_mean", "valid_openai", "valid_anthropic", "valid_bedrock", "prefix_stability", "tool_outputs_lost",
    "tool_outputs", "user_turns_lost", "user_turns", "recall", "cost", "cost_uncached", "cached_share",
    "outcome", "usage", "seconds_per_turn", "seconds",
)


# The measures of time: the only ones that differ between two runs on the same input.
_TIMING_FIELDS = ("seconds_per_turn", "seconds")


def _percent(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


@dataclass
class WorkbenchReport:
    """What :func:`run_workbench` measured: ``rows`` per transcript x strategy x budget,
    ``overall`` per strategy x budget with every transcript's turns pooled; ``encoding`` counted
    the tokens and ``prices`` gave the costs; ``histories`` holds the messages of the
    transcripts whose prompts were kept (``keep_prompts``), for the HTML report's per-call view.

    >>> report = run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [100])
    >>> print(report.table().splitlines()[0].split()[:3])
    ['strategy', 'budget', 'tokens']
    """

    rows: List[ReplayMetrics]
    overall: List[ReplayMetrics]
    encoding: str
    prices: Optional[Prices] = None
    histories: Dict[str, List[Message]] = field(default_factory=dict, repr=False, compare=False)

    def table(self, rows: Optional[List[ReplayMetrics]] = None, *, timings: bool = True) -> str:
        """A text table of ``rows`` (the overall rows by default), one line per strategy x budget,
        with the dollars per transcript with prompt caching (``$ cached``) and without
        (``$ plain``) at :attr:`prices`, and the share of input read from the cache;
        ``timings=False`` leaves out the time column (see :meth:`to_dict`).

        >>> run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [100]).table().count("\\n")
        1
        """
        timings = require_bool(timings, "timings")
        shown = self.overall if rows is None else rows
        width = max([18, *(len(utf8_text(r.strategy)) for r in shown)])  # long names keep the columns aligned
        header = (f"{'strategy':<{width}} {'budget':>6} {'tokens':>7} {'p95':>6} {'max':>6} {'over':>4} {'kept':>5} "
                  f"{'openai':>6} {'anthr.':>6} {'bedrock':>7} {'prefix':>6} {'tools lost':>10} {'users lost':>10} "
                  f"{'recall':>6} {'$ cached':>9} {'$ plain':>9} {'cached':>6}")
        lines = [header + (f" {'us/turn':>8}" if timings else "")]
        for r in shown:
            lines.append(
                f"{utf8_text(r.strategy):<{width}} {r.budget:>6} {r.tokens_mean:>7.0f} {r.tokens_p95:>6} {r.tokens_max:>6} "
                f"{r.over_budget:>4} {r.kept_mean:>5.1f} {_percent(r.valid['openai']):>6} "
                f"{_percent(r.valid['anthropic']):>6} {_percent(r.valid['bedrock']):>7} "
                f"{_percent(r.prefix_stability):>6} {f'{r.tool_outputs_lost}/{r.tool_outputs}':>10} "
                f"{f'{r.user_turns_lost}/{r.user_turns}':>10} {_percent(r.recall):>6} "
                f"{r.cost:>9.4f} {r.cost_uncached:>9.4f} {_percent(r.cached_share):>6}"
                + (f" {1e6 * r.seconds_per_turn:>8.0f}" if timings else "")
            )
        return "\n".join(lines)

    def to_dict(self, *, timings: bool = True) -> Dict[str, Any]:
        """Every row as plain JSON data: ``{"encoding", "overall", "transcripts"}``.

        ``timings=False`` leaves out ``seconds_per_turn`` and ``seconds``, the only measures
        that differ between two runs on the same input: what is left is the same, byte for
        byte, in every run.

        >>> sorted(run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [9]).to_dict())
        ['encoding', 'overall', 'prices', 'transcripts']
        """
        timings = require_bool(timings, "timings")
        prices = None if self.prices is None else {f.name: getattr(self.prices, f.name) for f in fields(self.prices)}
        return {"encoding": self.encoding, "prices": prices, "overall": [_row_dict(r, timings) for r in self.overall],
                "transcripts": [_row_dict(r, timings) for r in self.rows]}

    def write_json(self, path: Union[str, "os.PathLike[str]", IO[str]], *, timings: bool = True) -> None:
        """Writes :meth:`to_dict` as JSON to ``path``: a file path, ``"-"`` (stdout) or a text
        file open for writing (left open).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "wb.json")
        >>> run_workbench([[Message.user("Hi"), Message.assistant("Hello")]], ["trim"], [9]).write_json(path)
        """
        data = self.to_dict(timings=timings)
        with opened(path, "path") as handle:
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
        with opened(path, "path", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(fields)
            for r in [*self.rows, *self.overall]:
                data = r.to_dict()
                for provider in PROVIDERS:
                    data[f"valid_{provider}"] = data["valid"][provider]
                for key in ("outcome", "usage"):  # JSON in one cell; empty when the file recorded none
                    data[key] = json.dumps(data[key], sort_keys=True) if data[key] else None
                # A name holding a lone surrogate (read from a JSON escape) is written escaped:
                # UTF-8 cannot carry it.
                writer.writerow(["" if data[f] is None else utf8_text(data[f]) if isinstance(data[f], str)
                                 else data[f] for f in fields])

    def plot(self, path: Union[str, "os.PathLike[str]", IO[bytes]]) -> None:
        """A PNG of the overall rows: a row of panels per measure (tokens, dollars with caching,
        share read from the cache, prefix stability, recall, validity under Anthropic's and
        Bedrock's rules, tool outputs and user turns lost, prompts over budget), a panel per
        budget, a bar per strategy with its value, so equal values stay visible side by side;
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
            from matplotlib.ticker import MaxNLocator
        except ImportError:
            raise MissingDependencyError(
                "the workbench plot needs matplotlib: pip install 'agentmsg[plot]'") from None
        strategies = list(dict.fromkeys(r.strategy for r in self.overall))
        budgets = sorted(dict.fromkeys(r.budget for r in self.overall))
        rows = {(r.strategy, r.budget): r for r in self.overall}
        measures = [m for m in MEASURES if m[0] != "cost_uncached"]
        # Small multiples: a row per measure, a panel per budget, a bar per strategy. Each strategy
        # has its own bar, so equal values stay visible side by side, and every label has its place.
        height = 0.2 * len(strategies) + 0.55
        figure, axes = plt.subplots(len(measures), len(budgets), squeeze=False, sharey=True,
                                    figsize=(1.2 + 2.6 * len(budgets), height * len(measures) + 0.6))
        colors = plt.get_cmap("tab10")
        positions = list(range(len(strategies)))
        for i, (key, label, kind) in enumerate(measures):
            values = [measure_value(r, key) for r in self.overall]
            top = 1.0 if kind == "share" else max([v for v in values if v is not None] + [1e-12])
            for j, budget in enumerate(budgets):
                axis = axes[i][j]
                found = [measure_value(rows[s, budget], key) if (s, budget) in rows else None for s in strategies]
                axis.barh(positions, [0 if v is None else v for v in found], height=0.7,
                          color=[colors(k % 10) for k in positions])
                for k, value in zip(positions, found):
                    axis.text(0 if value is None else value, k, " " + _shown(value, kind), va="center", fontsize=6)
                axis.set_xlim(0, top * 1.35)
                if kind == "share":
                    axis.set_xticks([0, 0.5, 1], ["0%", "50%", "100%"])
                else:  # few ticks, none at the right edge, where the next panel's first one is
                    axis.xaxis.set_major_locator(MaxNLocator(nbins=3, prune="upper"))
                axis.set_yticks(positions, strategies, fontsize=7)
                axis.tick_params(axis="x", labelsize=6)
            axes[i][0].set_title(label, fontsize=7, loc="left", fontweight="bold")
        axes[0][0].invert_yaxis()  # the first strategy on top (the y axis is shared)
        inch = 1 / figure.get_figheight()
        figure.suptitle(f"agentmsg workbench: every strategy x budget, all transcripts pooled "
                        f"({self.encoding}{'' if self.prices is None else ', ' + self.prices.name})", fontsize=9)
        figure.tight_layout(rect=(0, 0, 1, 1 - 0.6 * inch))
        for j, budget in enumerate(budgets):  # column headers, above the first row's titles
            box = axes[0][j].get_position()
            figure.text((box.x0 + box.x1) / 2, box.y1 + 0.22 * inch, f"budget {budget:,} tokens", ha="center",
                        fontsize=8, fontweight="bold")
        figure.savefig(path, dpi=110)
        plt.close(figure)


# The measures charted (in the PNG and the HTML report): key, label, and how values read (share:
# 0..1 shown in %, dollars, number).
MEASURES: Tuple[Tuple[str, str, str], ...] = (
    ("tokens_mean", "mean prompt tokens", "number"),
    ("cost", "$ per transcript, with prompt caching", "dollars"),
    ("cost_uncached", "$ per transcript, without caching", "dollars"),
    ("cached_share", "share of input read from the cache", "share"),
    ("prefix_stability", "prefix stability", "share"),
    ("recall", "recall of paths and identifiers used", "share"),
    ("valid_anthropic", "prompts valid under Anthropic's rules", "share"),
    ("valid_bedrock", "prompts valid under Bedrock's rules", "share"),
    ("tool_outputs_lost", "tool outputs lost (share)", "share"),
    ("user_turns_lost", "user turns lost (share)", "share"),
    ("over_budget", "prompts over the budget", "number"),
)


def measure_value(row: ReplayMetrics, key: str) -> Optional[float]:
    """The value of one of :data:`MEASURES` for ``row`` (None when it has none)."""
    if key.startswith("valid_"):
        return row.valid[key[len("valid_"):]]
    if key == "tool_outputs_lost":
        return row.tool_outputs_lost / row.tool_outputs if row.tool_outputs else None
    if key == "user_turns_lost":
        return row.user_turns_lost / row.user_turns if row.user_turns else None
    value = getattr(row, key)
    return None if value is None else float(value)


def _shown(value: Optional[float], kind: str) -> str:
    if value is None:
        return "-"
    if kind == "share":
        return f"{100 * value:.0f}%"
    if kind == "dollars":
        return f"${value:.4f}"
    return f"{value:.0f}"


def _row_dict(row: ReplayMetrics, timings: bool) -> Dict[str, Any]:
    data = row.to_dict()
    if not timings:
        for key in _TIMING_FIELDS:
            del data[key]
    return data


@contextlib.contextmanager
def opened(path: object, what: str, newline: Optional[str] = None) -> Iterator[IO[str]]:
    """``path`` opened for writing text; stdout for ``"-"``, and a caller's open file, both
    left open. An int is refused: ``open`` would take it for a file descriptor and close it
    (stdout, for 1) when done."""
    if isinstance(path, str) and path == "-":
        yield sys.stdout
        return
    if isinstance(path, (str, os.PathLike)):
        try:
            handle = open(path, "w", encoding="utf-8", newline=newline)
        except ValueError:  # a NUL character, or a lone surrogate the file system cannot encode
            raise MessageError(f"{what} is not a usable file name (a NUL character or a lone surrogate): "
                               f"{shown(os.fspath(path))}") from None
        with handle:
            yield handle
        return
    if not isinstance(path, (int, bytes)) and callable(getattr(path, "write", None)):
        yield path  # type: ignore[misc]  # a file object of the caller's
        return
    raise MessageTypeError(f"{what} must be a file path, '-' for stdout, or a text file open for writing, "
                           f"not {type_name(path)}")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def progress_bar(total: Optional[int], enabled: Optional[bool], unit: str) -> Any:
    """A tqdm bar on stderr; by default on only when stderr is a terminal, and drawn only once a
    run has lasted half a second, so short runs print nothing.

    >>> bar = progress_bar(3, False, "replay"); bar.update(); bar.close()
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


def replay_metrics(transcript: str, strategy: str, budget: int, turns: Dict[str, List[Any]],
                   lost: Tuple[int, int, int, int], transcripts: int = 1) -> ReplayMetrics:
    """The measures from a replay's per-call lists (``turns``), pooled over ``transcripts``."""
    tokens, stability, used, found = turns["tokens"], turns["stability"], turns["used"], turns["found"]
    n = len(tokens)
    total = sum(tokens)
    return ReplayMetrics(
        transcript=transcript, strategy=strategy, budget=budget, turns=n,
        tokens_mean=sum(tokens) / n if n else 0.0, tokens_p95=_p95(tokens), tokens_max=max(tokens, default=0),
        over_budget=sum(1 for t in tokens if t > budget),
        kept_mean=sum(turns["kept"]) / n if n else 0.0,
        valid={p: (sum(turns[p]) / n if n else 1.0) for p in PROVIDERS},
        prefix_stability=sum(stability) / len(stability) if stability else None,
        tool_outputs_lost=lost[0], tool_outputs=lost[1], user_turns_lost=lost[2], user_turns=lost[3],
        recall=sum(found) / sum(used) if sum(used) else None,
        cost=sum(turns["cost"]) / transcripts, cost_uncached=sum(turns["cost_uncached"]) / transcripts,
        cached_share=sum(turns["hit"]) / total if total else None,
        seconds_per_turn=statistics.median(turns["seconds"]) if n else 0.0,
        seconds=sum(turns["seconds"]),
        _turns=turns,
    )


#: The providers whose ordering rules :func:`ordering_problem` knows.
PROVIDERS = ("openai", "anthropic", "bedrock")


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
