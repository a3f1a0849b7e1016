"""Would a provider accept this history? :func:`check` lists every reason it would refuse it (a
400 before the model reads a word), :func:`repair` fixes what can be fixed and lists each
repair, so nothing changes silently. One set of rules, used by :func:`agentmsg.trim`,
:class:`agentmsg.ConversationMemory`, :class:`agentmsg.Compactor` and
:func:`agentmsg.langchain.trim_messages` when they are given ``provider=``, and by the
workbench's validity measure.

The rules (``HistoryProblem.rule``), for ``provider`` one of :data:`CHECKED_PROVIDERS`:

* ``orphan_result``: a tool result with no call before it (every provider). Repair: drop it.
* ``unanswered_call``: a tool call with no result (every provider refuses a request whose calls
  are not all answered). Repair: add an error result saying the call was interrupted
  (``unanswered="synthesize"``, the default), or drop the call (``unanswered="drop"``; a message
  left with nothing goes too).
* ``interjected``: a message between a tool call and its results (OpenAI, Anthropic, Bedrock and
  the Responses API want the results right after their call). Repair: move it after them.
* ``first_not_user``: the conversation (after the system messages) does not begin with a user
  message (Anthropic, Bedrock). Repair: drop the messages before the first user message.
* ``stale_approval``: an ``mcp_approval_response`` item whose ``mcp_approval_request`` is gone
  (Responses). Repair: remove the item.
* ``orphan_server_result``: a ``computer_call_output``, ``local_shell_call_output``,
  ``shell_call_output`` or ``apply_patch_call_output`` item whose call item is gone (Responses).
  Repair: remove the item.

Pairing is the core's one rule (:mod:`agentmsg.history.toolpairs`); the Responses items are
those :func:`agentmsg.from_responses` keeps in ``metadata["responses"]["items"]``.

    >>> import agentmsg
    >>> call = agentmsg.ToolUseBlock("c1", "search", {"q": "x"})
    >>> chat = [agentmsg.user("Find x"), agentmsg.assistant(tool_calls=[call]), agentmsg.user("hurry")]
    >>> [str(p) for p in agentmsg.check(chat, provider="openai")]
    ["messages[1]: tool call 'c1' (search) has no result"]
    >>> fixed, repairs = agentmsg.repair(chat, provider="openai")
    >>> [m.role.value for m in fixed], [str(r) for r in repairs]
    (['user', 'assistant', 'tool', 'user'], ["messages[1]: unanswered_call: added an error result for tool call 'c1'"])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Literal, NamedTuple, Optional, Set, Tuple

from .. import _core
from .._checks import check_calls, describe
from ..errors import MessageError
from ..model.blocks import ToolUseBlock
from ..model.message import Message, Role
from ..readers import MessageLike, read_messages
from .toolpairs import interrupted_result, pair_messages

__all__ = ["CHECKED_PROVIDERS", "HistoryProblem", "Repair", "Repaired", "check", "repair"]

#: The providers whose rules :func:`check` knows (``"openai"`` is Chat Completions).
CHECKED_PROVIDERS = ("openai", "responses", "anthropic", "bedrock")
CheckedProvider = Literal["openai", "responses", "anthropic", "bedrock"]

# Responses call items run by the client, whose outputs must follow them: output type -> call type.
_SERVER_OUTPUTS = {
    "computer_call_output": "computer_call", "local_shell_call_output": "local_shell_call",
    "shell_call_output": "shell_call", "apply_patch_call_output": "apply_patch_call",
}
_USER_FIRST = frozenset(("anthropic", "bedrock"))


@dataclass(frozen=True)
class HistoryProblem:
    """One reason a provider would refuse a history: the message's index, the rule (see the
    module) and what is wrong.

    >>> str(HistoryProblem(2, "orphan_result", "tool result 'c9' has no tool call before it"))
    "messages[2]: tool result 'c9' has no tool call before it"
    """

    index: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"messages[{self.index}]: {self.detail}"


@dataclass(frozen=True)
class Repair:
    """One change :func:`repair` made: the index of the message in the history it was given,
    the rule it fixes, and what it did.

    >>> str(Repair(3, "orphan_result", "dropped tool result 'c9'"))
    "messages[3]: orphan_result: dropped tool result 'c9'"
    """

    index: int
    rule: str
    action: str

    def __str__(self) -> str:
        return f"messages[{self.index}]: {self.rule}: {self.action}"


class Repaired(NamedTuple):
    """What :func:`repair` gives: the repaired history and each repair, in the order made.

    >>> Repaired([], []).repairs
    []
    """

    messages: List[Message]
    repairs: List[Repair]


def _provider(provider: object) -> str:
    if provider not in CHECKED_PROVIDERS:
        raise MessageError(f"provider must be one of {', '.join(CHECKED_PROVIDERS)}, not {describe(provider)}")
    return str(provider)


def check(messages: Iterable[MessageLike], provider: CheckedProvider = "openai") -> List[HistoryProblem]:
    """Every reason ``provider`` would refuse ``messages`` as a request's history, in message
    order (empty: it would accept it). See the module for the rules.

    >>> check([Message.user("hi"), Message.tool("42", tool_id="c9")], provider="anthropic")
    [HistoryProblem(index=1, rule='orphan_result', detail="tool result 'c9' has no tool call before it")]
    """
    name = _provider(provider)
    items = read_messages(messages)
    problems: List[HistoryProblem] = []
    if name in _USER_FIRST:
        problems += [HistoryProblem(i, "first_not_user", f"the conversation must begin with a user message, "
                                    f"not {items[i].role.value}") for i in _before_first_user(items)]
    _, orphans, unanswered, _ = pair_messages(items, refuse_lone_surrogates=True)
    problems += [HistoryProblem(i, "orphan_result", f"tool result {_link(items[i])} has no tool call before it")
                 for i in orphans]
    problems += [HistoryProblem(i, "unanswered_call", f"tool call {call.id!r} ({call.name}) has no result")
                 for i, call in unanswered]
    _, moved = _core.results_first(items)
    problems += [HistoryProblem(i, "interjected", f"a {items[i].role.value} message between tool calls and "
                                "their results (results must directly follow their call)") for i in moved]
    if name == "responses":
        problems += [HistoryProblem(i, rule, text) for i, _, rule, text in _stale_items(items)]
    return sorted(problems, key=lambda p: p.index)


def repair(messages: Iterable[MessageLike], provider: CheckedProvider = "openai", *,
           unanswered: Literal["synthesize", "drop"] = "synthesize") -> Repaired:
    """``messages`` repaired so that ``check(result.messages, provider)`` is empty, and every
    repair made (see the module for the rules and their repairs). Messages not named in a
    repair are kept unchanged, in order (a moved message is named).

    >>> calc = ToolUseBlock("c1", "calc", {})
    >>> fixed, repairs = repair([Message.assistant(tool_calls=[calc]), Message.user("hi")], "anthropic",
    ...                         unanswered="drop")
    >>> [m.text for m in fixed], [str(r) for r in repairs]
    (['hi'], ['messages[0]: first_not_user: dropped an assistant message before the first user message'])
    """
    name = _provider(provider)
    if unanswered not in ("synthesize", "drop"):
        raise MessageError(f"unanswered must be 'synthesize' or 'drop', not {describe(unanswered)}")
    items = read_messages(messages)
    origin = list(range(len(items)))  # each message's index in the given history
    repairs: List[Repair] = []
    if name in _USER_FIRST:
        leading = set(_before_first_user(items))
        repairs += [Repair(i, "first_not_user", f"dropped {_a(items[i].role.value)} message before the first "
                           "user message") for i in sorted(leading)]
        items, origin = _without(items, origin, leading)
    order, moved = _core.results_first(items)
    if moved:
        repairs += [Repair(origin[i], "interjected", "moved after the tool results it interrupted") for i in moved]
        items, origin = [items[i] for i in order], [origin[i] for i in order]
    _, orphans, calls, _ = pair_messages(items, refuse_lone_surrogates=True)
    repairs += [Repair(origin[i], "orphan_result", f"dropped tool result {_link(items[i])}") for i in orphans]
    items, origin = _without(items, origin, set(orphans))
    _, _, calls, _ = pair_messages(items, refuse_lone_surrogates=True)
    if calls and unanswered == "synthesize":
        items, origin, added = _with_placeholders(items, origin, calls)
        repairs += added
    elif calls:
        items, origin, dropped = _without_calls(items, origin, calls)
        repairs += dropped
    if name == "responses":
        items, fixed = _without_stale_items(items, origin)
        repairs += fixed
    return Repaired(items, repairs)


# -- the rules --------------------------------------------------------------------------------------


def _before_first_user(items: List[Message]) -> List[int]:
    """The non-system messages before the first user message (all of them when there is none)."""
    out = []
    for index, message in enumerate(items):
        if message.role is Role.USER:
            break
        if message.role is not Role.SYSTEM:
            out.append(index)
    return out


def _link(message: Message) -> str:
    return repr(message.tool_id) if message.tool_id else f"for tool name {message.name!r}"


def _a(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def _without(items: List[Message], origin: List[int], drop: Set[int]) -> Tuple[List[Message], List[int]]:
    if not drop:
        return items, origin
    keep = [i for i in range(len(items)) if i not in drop]
    return [items[i] for i in keep], [origin[i] for i in keep]


def _with_placeholders(items: List[Message], origin: List[int], calls: List[Tuple[int, ToolUseBlock]],
                       ) -> Tuple[List[Message], List[int], List[Repair]]:
    """An error result for each unanswered call, after the last result of its turn."""
    owed: Dict[int, List[ToolUseBlock]] = {}
    for index, call in calls:
        owed.setdefault(index, []).append(call)
    out: List[Message] = []
    out_origin: List[int] = []
    repairs: List[Repair] = []
    pending: List[Tuple[int, ToolUseBlock]] = []

    def settle() -> None:
        for index, call in pending:
            out.append(interrupted_result(call))
            out_origin.append(origin[index])
            repairs.append(Repair(origin[index], "unanswered_call", f"added an error result for tool call {call.id!r}"))
        pending.clear()

    for index, message in enumerate(items):
        if pending and message.role is not Role.TOOL:
            settle()
        out.append(message)
        out_origin.append(origin[index])
        if index in owed:
            settle()
            pending.extend((index, call) for call in owed[index])
    settle()
    return out, out_origin, repairs


def _without_calls(items: List[Message], origin: List[int], calls: List[Tuple[int, ToolUseBlock]],
                   ) -> Tuple[List[Message], List[int], List[Repair]]:
    """The unanswered calls taken out of their messages (a message left with nothing is dropped)."""
    owed: Dict[int, List[ToolUseBlock]] = {}
    for index, call in calls:
        owed.setdefault(index, []).append(call)
    out: List[Message] = []
    out_origin: List[int] = []
    repairs: List[Repair] = []
    for index, message in enumerate(items):
        if index not in owed:
            out.append(message)
            out_origin.append(origin[index])
            continue
        gone = {id(call) for call in owed[index]}
        content = [block for block in message.content if id(block) not in gone]
        names = ", ".join(repr(call.id) for call in owed[index])
        if _has_content(content):
            out.append(message.replace(content=content))
            out_origin.append(origin[index])
            repairs.append(Repair(origin[index], "unanswered_call", f"dropped tool calls {names}"))
        else:
            repairs.append(Repair(origin[index], "unanswered_call",
                                  f"dropped the message, whose tool calls {names} had no result"))
    return out, out_origin, repairs


def _has_content(content: List[Any]) -> bool:
    """Whether blocks make a message (anything but empty text)."""
    return any(not hasattr(block, "text") or block.text for block in content)


def _responses_items(message: Message) -> Optional[List[Any]]:
    kept = message.metadata.get("responses") if message.metadata else None
    items = kept.get("items") if isinstance(kept, dict) else None
    return items if isinstance(items, list) else None


def _stale_items(items: List[Message]) -> List[Tuple[int, int, str, str]]:
    """(message, item position, rule, text) of every Responses item whose request or call is gone."""
    requests: Set[Any] = set()
    calls: Set[Tuple[Any, Any]] = set()
    found = []
    for index, message in enumerate(items):
        for position, item in enumerate(_responses_items(message) or ()):
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "mcp_approval_request":
                requests.add(item.get("id"))
            elif kind in _SERVER_OUTPUTS.values():
                calls.add((kind, item.get("call_id")))
            elif kind == "mcp_approval_response" and item.get("approval_request_id") not in requests:
                found.append((index, position, "stale_approval", "mcp_approval_response for "
                              f"{describe(item.get('approval_request_id'))}, whose approval request is gone"))
            elif kind in _SERVER_OUTPUTS and (_SERVER_OUTPUTS[kind], item.get("call_id")) not in calls:
                found.append((index, position, "orphan_server_result", f"{kind} for "
                              f"{describe(item.get('call_id'))}, whose {_SERVER_OUTPUTS[kind]} is gone"))
    return found


def _without_stale_items(items: List[Message], origin: List[int]) -> Tuple[List[Message], List[Repair]]:
    stale: Dict[int, List[Tuple[int, str]]] = {}
    for index, position, rule, _ in _stale_items(items):
        stale.setdefault(index, []).append((position, rule))
    repairs = []
    out = list(items)
    for index, found in stale.items():
        message = items[index]
        kept_items = _responses_items(message) or []
        gone = {position for position, _ in found}
        metadata = dict(message.metadata)
        left = [item for p, item in enumerate(kept_items) if p not in gone]
        namespace = {key: value for key, value in metadata["responses"].items() if key != "items"}
        metadata["responses"] = {**namespace, "items": left} if left else namespace
        out[index] = message.replace(metadata=metadata)
        for position, rule in found:
            repairs.append(Repair(origin[index], rule, f"removed {kept_items[position].get('type')} item "
                                  f"{position} of metadata['responses']['items']"))
    return out, repairs


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
