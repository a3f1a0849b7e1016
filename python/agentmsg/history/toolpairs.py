"""Tool calls and their results: which answers which, checking a history, repairing it.

The pairing rule lives in the Rust core (``agentmsg_core::pairs``), one for the whole library:

* by id (OpenAI style): ``tool_id`` matches the ``id`` of a preceding call; when an id is
  reused, the result answers the latest unanswered call with that id;
* by name (Forge-style text results carry only the tool's name): the result answers the first
  unanswered call of that name in the latest assistant message that made tool calls.

    >>> import agentmsg
    >>> call = agentmsg.ToolUseBlock("call_1", "calc", {"a": 1})
    >>> chat = [agentmsg.Message.assistant(tool_calls=[call]), agentmsg.Message.tool("2", tool_id="call_1")]
    >>> agentmsg.check_tool_pairs(chat)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .. import _core
from .._checks import check_calls, require_bool
from ..errors import ToolPairError
from ..model.blocks import ToolUseBlock
from ..model.message import Message, Role
from ..readers import MessageLike, read_messages

__all__ = ["ToolPairing", "pair_tool_results", "check_tool_pairs", "repair_tool_pairs"]

#: The text of the placeholder result that :func:`repair_tool_pairs` gives an unanswered call.
INTERRUPTED = "[tool call interrupted: no result was recorded]"


def pair_messages(messages: Sequence[Message], refuse_lone_surrogates: bool = False,
                  ) -> Tuple[List[int], List[int], List[Tuple[int, ToolUseBlock]], Optional[Tuple[int, int, int]]]:
    """The core's pairing of checked ``messages``, read from their slots: (call_of with -1 for
    none, orphans, unanswered calls as (message index, block), the first message between a call
    and one of its results as (message, call message, result) or None). Ids and names pair by their
    ``surrogatepass`` bytes; with ``refuse_lone_surrogates`` one holding a lone surrogate is a
    MessageError naming it (what the public functions here promise)."""
    return _core.pair_messages(messages, refuse_lone_surrogates=refuse_lone_surrogates)


@dataclass(frozen=True)
class ToolPairing:
    """How the tool messages of a history pair with calls, as :func:`pair_tool_results` finds.

    ``call_of[i]`` is, for a tool message ``i``, the index of the assistant message whose call
    it answers (``-1`` for an orphan); for any other message it is ``-1``. ``orphans`` lists the
    tool messages with no call; ``unanswered`` the ``(index, call)`` of calls with no result.

    >>> pair_tool_results([Message.tool("x", tool_id="c9")]).orphans
    (0,)
    """

    call_of: Tuple[int, ...]
    orphans: Tuple[int, ...]
    unanswered: Tuple[Tuple[int, ToolUseBlock], ...]

    @property
    def groups(self) -> List[int]:
        """For each message, the index of the first message of its tool group (a result's group
        is its call's message; every other message is its own group).

        >>> calc = ToolUseBlock("c1", "calc", {})
        >>> pair_tool_results([Message.assistant(tool_calls=[calc]), Message.tool("2", tool_id="c1")]).groups
        [0, 0]
        """
        return [call if call >= 0 else index for index, call in enumerate(self.call_of)]


def pair_tool_results(messages: Iterable[MessageLike]) -> ToolPairing:
    """Pairs every tool result with the call it answers (see the module rules), in one pass.

    >>> calc = ToolUseBlock("c1", "calc", {})
    >>> p = pair_tool_results([Message.assistant(tool_calls=[calc]), Message.tool("2", name="calc")])
    >>> p.call_of, p.unanswered
    ((-1, 0), ())
    """
    return _pairing(read_messages(messages))


def _pairing(messages: List[Message]) -> ToolPairing:
    call_of, orphans, unanswered, _ = pair_messages(messages, refuse_lone_surrogates=True)
    return ToolPairing(tuple(call_of), tuple(orphans), tuple(unanswered))


def _describe_result(message: Message) -> str:
    return f"call id {message.tool_id!r}" if message.tool_id else f"tool name {message.name!r}"


def check_tool_pairs(messages: Iterable[MessageLike], strict: bool = False) -> None:
    """Raises :class:`ToolPairError` at the first tool result without a matching call before it,
    or the first call without a result, naming its index; returns None for a valid history.

    With ``strict=True`` a message between a tool call and one of its results (a user writing
    while a tool runs) is an error too: OpenAI, Anthropic and Bedrock want the results right
    after their call, so the converters move such a message after them (with a
    ConversionWarning); strict checking finds it before that.

    >>> check_tool_pairs([Message.user("hi"), Message.tool("42", tool_id="call_9")])
    Traceback (most recent call last):
    ...
    agentmsg.errors.ToolPairError: messages[1]: tool result for call id 'call_9' has no matching tool call before it
    >>> calc = ToolUseBlock("c1", "calc", {})
    >>> chat = [Message.assistant(tool_calls=[calc]), Message.user("hurry"), Message.tool("2", tool_id="c1")]
    >>> check_tool_pairs(chat)
    >>> check_tool_pairs(chat, strict=True)
    Traceback (most recent call last):
    ...
    agentmsg.errors.ToolPairError: messages[1]: a user message between tool call 'c1' (messages[0]) and its result (messages[2]); results must directly follow their call
    """
    strict = require_bool(strict, "strict")
    messages = read_messages(messages)
    call_of, orphans, unanswered, between = pair_messages(messages, refuse_lone_surrogates=True)
    pairing = ToolPairing(tuple(call_of), tuple(orphans), tuple(unanswered))
    problems = []
    if pairing.orphans:
        index = pairing.orphans[0]
        problems.append((index, f"messages[{index}]: tool result for {_describe_result(messages[index])} "
                                "has no matching tool call before it"))
    if pairing.unanswered:
        index, call = pairing.unanswered[0]
        problems.append((index, f"messages[{index}]: tool call {call.id!r} ({call.name}) has no result"))
    if strict and between is not None:
        problems.append((between[0], _interjection_text(messages, *between)))
    if problems:
        raise ToolPairError(min(problems)[1])


def _interjection_text(messages: List[Message], between: int, call: int, result: int) -> str:
    """The error for a message between a tool call and its result (the core finds the first)."""
    call_id = messages[result].tool_id or messages[result].name
    return (f"messages[{between}]: a {messages[between].role.value} message between tool call "
            f"{call_id!r} (messages[{call}]) and its result (messages[{result}]); results must "
            "directly follow their call")


def interrupted_result(call: ToolUseBlock) -> Message:
    """The error result that stands in for ``call``'s missing one (repairs write it)."""
    return Message.tool(
        INTERRUPTED,
        tool_id=call.id or None,
        name=call.name,
        is_error=True,
        metadata={"repaired": "interrupted"},
    )


def repair_tool_pairs(messages: Iterable[MessageLike]) -> List[Message]:
    """A valid copy of ``messages``: results without a call are dropped, and each call without a
    result gets a placeholder result (an error saying the call was interrupted) right after its
    turn's results. A valid history comes back unchanged.

    >>> calc = ToolUseBlock("c1", "calc", {})
    >>> fixed = repair_tool_pairs([Message.assistant(tool_calls=[calc]), Message.tool("?", tool_id="zz")])
    >>> [(m.role.value, m.tool_id, m.text) for m in fixed]
    [('assistant', None, ''), ('tool', 'c1', '[tool call interrupted: no result was recorded]')]
    """
    messages = read_messages(messages)
    pairing = _pairing(messages)
    orphans = set(pairing.orphans)
    missing: Dict[int, List[ToolUseBlock]] = {}
    for index, call in pairing.unanswered:
        missing.setdefault(index, []).append(call)
    repaired: List[Message] = []
    pending: List[ToolUseBlock] = []  # placeholders owed by the current tool turn
    for index, message in enumerate(messages):
        if pending and message.role is not Role.TOOL:
            repaired.extend(interrupted_result(call) for call in pending)
            pending = []
        if index in orphans:
            continue
        repaired.append(message)
        if index in missing:
            repaired.extend(interrupted_result(call) for call in pending)
            pending = missing[index]
    repaired.extend(interrupted_result(call) for call in pending)
    return repaired


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
