"""What the converters share about a whole history: the order providers require (a call's
results right after it, system messages first, alternating turns) and the policy for tool
results whose call is missing (``on_orphan``)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .. import _core
from .._checks import shown
from ..errors import ConversionError, Losses, ToolPairError, warn_caller
from ..history.toolpairs import pair_tool_results, repair_tool_pairs
from ..model.blocks import TextBlock
from ..model.message import SYSTEM_ROLE, TOOL_ROLE, Message

__all__ = []


def results_first(items: List[Message], converter: str) -> List[int]:
    """The order to write ``items`` in (their indices) so that the results of each assistant
    turn's tool calls directly follow it, as OpenAI, Anthropic and Bedrock require.

    A message between a call and its result (a user interjecting while a tool runs) moves after
    the last result of that turn, with a :class:`ConversionWarning` naming it; nothing else moves.
    Which call a result answers is the core pairing rule (:mod:`agentmsg.toolpairs`); a result
    after the next assistant message is not that turn's.
    """
    order, moved = _core.results_first(items)  # the core pairing rule, read from the slots
    if moved:
        warn_caller(f"{converter} moved messages {', '.join(map(str, moved))} after the tool results they "
                    "interrupted (tool results must directly follow their call)")
    return order


def write_in_order(
    items: List[Message], losses: "Losses", write: Callable[[Message, int], Optional[Dict[str, Any]]],
) -> List[Dict[str, Any]]:
    """``write(message, index)`` for each message in :func:`results_first` order, leaving out
    what gives None; then the losses' warnings (for converters with one output per message)."""
    out = []
    for index in results_first(items, losses.converter):
        data = write(items[index], index)
        if data is not None:
            out.append(data)
    if losses.found:
        losses.warn()
    return out


class SystemAndTurns(NamedTuple):
    """A history laid out the way Anthropic and Bedrock take it: system text apart, turns merged."""

    system: List[Dict[str, Any]]
    turns: List[Dict[str, Any]]
    # message index -> (turn, blocks in it so far) after that message; turn -1 is the system list
    ends: Dict[int, Tuple[int, int]]


def split_system_and_merge_turns(
    items: List[Message],
    converter: str,
    losses: Losses,
    system_text: Callable[[str], Dict[str, Any]],
    turn_blocks: Callable[[Message, int], Tuple[str, List[Dict[str, Any]]]],
) -> SystemAndTurns:
    """Collects system text into one list (warning when a system message comes after the
    conversation started), converts every other message with ``turn_blocks(message, index)`` and
    merges consecutive turns of the same role, as both providers require."""
    system: List[Dict[str, Any]] = []
    turns: List[Dict[str, Any]] = []
    ends: Dict[int, Tuple[int, int]] = {}
    moved: List[int] = []
    for index in results_first(items, converter):
        message = items[index]
        if message.role is SYSTEM_ROLE:
            if turns:
                moved.append(index)
            for block in message.content:
                if type(block) is TextBlock:
                    if block.text:
                        system.append(system_text(block.text))
                else:
                    losses.add(f"{block.type} blocks in system messages", index)
            if message.name is not None:
                losses.add("name on non-tool messages", index)
            if system:
                ends[index] = (-1, len(system))
            continue
        role, blocks = turn_blocks(message, index)
        if not blocks:
            losses.add("messages with nothing else it can carry", index)
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
        ends[index] = (len(turns) - 1, len(turns[-1]["content"]))
    if moved:
        warn_caller(f"{converter} moved system messages {', '.join(map(str, moved))} from the middle of "
                    "the conversation to the system prompt")
    return SystemAndTurns(system, turns, ends)


ORPHAN_POLICIES = ("raise", "repair", "keep")


def settle_tool_pairs(messages: List[Message], on_orphan: str, converter: str) -> List[Message]:
    """Applies the caller's orphan policy to a freshly read history, with :mod:`agentmsg.toolpairs`.

    A result is an orphan when no earlier call answers to it; a call is an orphan when the
    conversation moves on (a non-tool message follows) before it is answered. Calls of the last
    turn are pending (the model just asked for them), not orphans.
    """
    if on_orphan not in ORPHAN_POLICIES:
        raise ConversionError(f"on_orphan must be one of {', '.join(ORPHAN_POLICIES)}, not {shown(on_orphan)}")
    if on_orphan == "keep":
        return messages
    pairing = pair_tool_results(messages)
    last = len(messages) - 1
    while last >= 0 and messages[last].role is TOOL_ROLE:
        last -= 1
    pending = {call.id for index, call in pairing.unanswered if index == last}
    unanswered = [(index, call) for index, call in pairing.unanswered if index != last]
    if not pairing.orphans and not unanswered:
        return messages
    if on_orphan == "raise":
        problems = [(i, f"tool result {_result_link(messages[i])} has no earlier call") for i in pairing.orphans]
        problems += [(i, f"tool call {call.id!r} is never answered") for i, call in unanswered]
        index, text = min(problems)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ToolPairError(
            f"{converter}: messages[{index}]: {text}{more}; pass on_orphan='repair' to fix or "
            "'keep' to accept"
        )
    repaired = repair_tool_pairs(messages)
    while pending and repaired and repaired[-1].metadata.get("repaired") == "interrupted" \
            and repaired[-1].tool_id in pending:
        repaired.pop()  # pending calls of the last turn keep waiting for their results
    if pairing.orphans:
        warn_dropped_results(converter, pairing.orphans)
    if unanswered:
        warn_caller(f"{converter}: added {len(unanswered)} error result(s) for tool calls that were never answered")
    return repaired


def warn_dropped_results(converter: str, indices: Sequence[int]) -> None:
    """The warning for tool results dropped because no call answers to them (on_orphan='repair')."""
    warn_caller(f"{converter}: dropped tool results with no matching call (messages {', '.join(map(str, indices))})")


def _result_link(message: Message) -> str:
    if message.tool_id:
        return f"{message.tool_id!r}"
    return f"for tool name {message.name!r}"


