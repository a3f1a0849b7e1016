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
  ``shell_call_output`` or ``apply_patch_call_output`` item whose call item is gone (Responses),
  or a :class:`ServerToolResultBlock` with no :class:`ServerToolUseBlock` of its id before it
  (Anthropic, Responses: a server tool's result is sent back only with its call). Repair: remove
  the item or the block.
* ``blank_text``: a text block of only whitespace (Anthropic: "text content blocks must contain
  non-whitespace text"; Bedrock: "the text field is blank"). Repair: drop the block.
* ``empty_message``: a user or assistant message with nothing the provider takes (only empty
  text, thinking it does not carry, another provider's server blocks): sent as an empty turn, or
  silently left out by a converter. Repair: drop the message.
* ``unsigned_thinking``: with thinking on (``thinking=True``, or found in the history: a signed
  thinking block), an assistant message with tool calls whose thinking lost its signature
  (Anthropic refuses unsigned thinking; a conversion from another provider or a framework that
  kept the text but not the signature). Repair: drop the unsigned thinking, which Anthropic allows
  for every turn but the one of an open tool loop: there the signature cannot be rebuilt, and the
  repair says to send that request with thinking off.
* ``missing_thought_signature``: with thinking on (``thinking=True``, or a Gemini signature in
  the history), a model turn of the current turn (since the last user text) whose first function
  call has no ``thoughtSignature`` (Gemini 3 answers 400). Repair: give it the placeholder
  signature Google documents for calls it did not sign (``skip_thought_signature_validator``).

Pairing is the core's one rule (:mod:`agentmsg.history.toolpairs`); for Gemini it is what makes
function responses follow their calls, and a history must begin with a user turn (a function call
turn must come right after a user turn or a function response). The Responses items are those
:func:`agentmsg.from_responses` keeps in ``metadata["responses"]["items"]``.

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
from typing import Any, Dict, Iterable, List, Literal, NamedTuple, Optional, Set, Tuple, cast

from .. import _core
from .._checks import check_calls, describe
from ..errors import MessageError
from ..model.blocks import (
    ServerToolResultBlock, ServerToolUseBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock,
)
from ..model.message import Message, Role
from ..readers import MessageLike, read_messages
from .toolpairs import interrupted_result, pair_messages

__all__ = ["CHECKED_PROVIDERS", "HistoryProblem", "Repair", "Repaired", "check", "repair"]

#: The providers whose rules :func:`check` knows (``"openai"`` is Chat Completions).
CHECKED_PROVIDERS = ("openai", "responses", "anthropic", "bedrock", "gemini")
CheckedProvider = Literal["openai", "responses", "anthropic", "bedrock", "gemini"]

# Responses call items run by the client, whose outputs must follow them: output type -> call type.
_SERVER_OUTPUTS = {
    "computer_call_output": "computer_call", "local_shell_call_output": "local_shell_call",
    "shell_call_output": "shell_call", "apply_patch_call_output": "apply_patch_call",
}
#: Providers whose conversation must open with a user turn (trim starts its kept run on one).
USER_FIRST_PROVIDERS = frozenset(("anthropic", "bedrock", "gemini"))
#: Providers that refuse a text block of only whitespace.
_NO_BLANK_TEXT = frozenset(("anthropic", "bedrock"))
#: The server blocks each provider takes back (those it ran; "" is unknown, taken by both).
_SERVER_PROVIDERS = {"anthropic": ("", "anthropic"), "responses": ("", "openai")}
#: The signature Google documents for function calls Gemini did not sign (a history from elsewhere).
GEMINI_UNSIGNED_CALL = "skip_thought_signature_validator"


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


def check(messages: Iterable[MessageLike], provider: CheckedProvider = "openai", *,
          thinking: Optional[bool] = None) -> List[HistoryProblem]:
    """Every reason ``provider`` would refuse ``messages`` as a request's history, in message
    order (empty: it would accept it). See the module for the rules. ``thinking``: whether the
    request turns thinking on (None: on when the history holds the provider's signed thinking).

    >>> check([Message.user("hi"), Message.tool("42", tool_id="c9")], provider="anthropic")
    [HistoryProblem(index=1, rule='orphan_result', detail="tool result 'c9' has no tool call before it")]
    """
    name = _provider(provider)
    items = read_messages(messages)
    thinking_on = _thinking_on(items, name, _optional_bool(thinking, "thinking"))
    problems: List[HistoryProblem] = []
    for index, _, found in _content_fixes(items, name, thinking_on):
        problems += [HistoryProblem(index, rule, detail) for rule, detail, _ in found]
    if name == "gemini" and thinking_on:
        problems += [HistoryProblem(i, "missing_thought_signature", f"the first function call of this model turn "
                                    f"({call.name}) has no thoughtSignature") for i, _, call in _unsigned_calls(items)]
    if name in USER_FIRST_PROVIDERS:
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
           unanswered: Literal["synthesize", "drop"] = "synthesize", thinking: Optional[bool] = None) -> Repaired:
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
    thinking_on = _thinking_on(items, name, _optional_bool(thinking, "thinking"))
    origin = list(range(len(items)))  # each message's index in the given history
    repairs: List[Repair] = []
    items, origin, fixed = _with_content_fixed(items, origin, name, thinking_on)
    repairs += fixed
    if name == "gemini" and thinking_on:
        items = list(items)
        for index, position, call in _unsigned_calls(items):
            items[index] = _with_placeholder_signature(items[index], position)
            repairs.append(Repair(origin[index], "missing_thought_signature", f"gave function call {call.name!r} "
                                  f"the placeholder signature {GEMINI_UNSIGNED_CALL!r}"))
    if name in USER_FIRST_PROVIDERS:
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
        items, origin, fixed = _with_content_fixed(items, origin, name, thinking_on)  # a turn left with nothing
        repairs += fixed
    if name == "responses":
        items, fixed = _without_stale_items(items, origin)
        repairs += fixed
    return Repaired(items, repairs)


# -- the rules --------------------------------------------------------------------------------------


def _optional_bool(value: object, where: str) -> Optional[bool]:
    if value is None or value is True or value is False:
        return value
    raise MessageError(f"{where} must be True, False or None, not {describe(value)}")


def _thinking_on(items: List[Message], name: str, thinking: Optional[bool]) -> bool:
    """Whether the request has thinking on: as told, or found in the history (the provider's
    signed thinking; for Gemini a kept signature on any part)."""
    if thinking is not None:
        return thinking
    if name not in ("anthropic", "gemini"):
        return False
    for message in items:
        if message.role is not Role.ASSISTANT:
            continue
        if any(type(block) is ThinkingBlock and block.signature for block in message.content):
            return True
        if name == "gemini" and _gemini_signatures(message):
            return True
    return False


Fix = Tuple[int, Optional[Message], List[Tuple[str, str, str]]]


def _content_fixes(items: List[Message], name: str, thinking_on: bool) -> List[Fix]:
    """Each message the block rules change: (index, the message repaired or None to drop it,
    [(rule, problem, repair)]). See the module: orphan_server_result (blocks), blank_text,
    unsigned_thinking, empty_message."""
    out: List[Fix] = []
    servers = _SERVER_PROVIDERS.get(name)
    calls: Set[str] = set()
    for index, message in enumerate(items):
        role = message.role
        if role is Role.SYSTEM:
            continue
        found: List[Tuple[str, str, str]] = []
        kept: List[Any] = []
        block: Any  # dispatched on its class, which mypy cannot follow through `kind`
        has_call = role is Role.ASSISTANT and any(type(b) is ToolUseBlock for b in message.content)
        for block in message.content:
            kind = type(block)
            if kind is ServerToolUseBlock:
                calls.add(block.id)
            elif kind is ServerToolResultBlock and servers is not None and block.provider in servers \
                    and block.tool_use_id not in calls:
                found.append(("orphan_server_result", f"server tool result {block.tool_use_id!r} has no server "
                              "tool call before it", f"dropped server tool result {block.tool_use_id!r}"))
                continue
            elif kind is TextBlock and name in _NO_BLANK_TEXT and block.text and not block.text.strip():
                found.append(("blank_text", "a text block of only whitespace", "dropped a text block of only whitespace"))
                continue
            elif kind is ThinkingBlock and name == "anthropic" and thinking_on and has_call and block.signature is None \
                    and (block.thinking or not _redacted(message)):
                found.append(("unsigned_thinking", "thinking without its signature, in a turn with tool calls "
                              "(Anthropic refuses unsigned thinking)", _unsigned_action(items, index)))
                continue
            elif kind is ToolResultBlock and name in _NO_BLANK_TEXT:
                output = [b for b in block.output if not (type(b) is TextBlock and b.text and not b.text.strip())]
                if len(output) != len(block.output):
                    found.append(("blank_text", "a text block of only whitespace in a tool result",
                                  "dropped a text block of only whitespace from the tool result"))
                    block = ToolResultBlock(block.tool_use_id, output, block.is_error)
            kept.append(block)
        if role is not Role.TOOL and not any(_carried(block, message, name, servers) for block in kept):
            out.append((index, None, [("empty_message", f"{_a(role.value)} message with nothing {name} takes "
                                       "(an empty turn)", f"dropped {_a(role.value)} message with nothing to send")]))
        elif found:
            out.append((index, message.replace(content=kept), found))
    return out


def _with_content_fixed(items: List[Message], origin: List[int], name: str, thinking_on: bool,
                        ) -> Tuple[List[Message], List[int], List[Repair]]:
    repairs: List[Repair] = []
    # A dropped turn can take with it the server call a later result needed, so the rules run
    # again until nothing changes (each pass drops or shortens a message, so this ends).
    while True:
        fixes = _content_fixes(items, name, thinking_on)
        if not fixes:
            return items, origin, repairs
        gone = set()
        items = list(items)
        for index, fixed, found in fixes:
            repairs += [Repair(origin[index], rule, action) for rule, _, action in found]
            if fixed is None:
                gone.add(index)
            else:
                items[index] = fixed
        items, origin = _without(items, origin, gone)


def _redacted(message: Message) -> bool:
    kept = message.metadata.get("anthropic") if message.metadata else None
    return isinstance(kept, dict) and bool(kept.get("redacted_thinking"))


def _unsigned_action(items: List[Message], index: int) -> str:
    """The repair's words for dropping unsigned thinking: a plain drop, unless the turn is the one
    of an open tool loop (only tool results after it), which Anthropic wants signed."""
    if all(message.role is Role.TOOL for message in items[index + 1:]):
        return ("dropped thinking without its signature; this turn's tool loop is still open, so send this "
                "request with thinking off (the signature cannot be rebuilt)")
    return "dropped thinking without its signature (Anthropic takes earlier turns without their thinking)"


def _carried(block: Any, message: Message, name: str, servers: Optional[Tuple[str, ...]]) -> bool:
    """Whether ``name``'s converter sends anything of ``block``."""
    kind = type(block)
    if kind is TextBlock:
        return bool(block.text.strip() if name in _NO_BLANK_TEXT else block.text)
    if kind is ThinkingBlock:
        if name == "anthropic":
            return block.signature is not None or _redacted(message)
        if name == "responses":
            return bool(_responses_items(message))
        return name in ("bedrock", "gemini")
    if kind is ServerToolUseBlock or kind is ServerToolResultBlock:
        return servers is not None and block.provider in servers
    return True


def _gemini_signatures(message: Message) -> Dict[Any, Any]:
    kept = message.metadata.get("gemini") if message.metadata else None
    found = kept.get("signatures") if isinstance(kept, dict) else None
    if not isinstance(found, list):
        return {}
    return {entry.get("block"): entry.get("signature") for entry in found if isinstance(entry, dict)}


def _unsigned_calls(items: List[Message]) -> List[Tuple[int, int, ToolUseBlock]]:
    """(message, block position, call) of the first function call of each model turn since the
    last user text that has no thoughtSignature."""
    start = 0
    for index, message in enumerate(items):
        if message.role is Role.USER and any(type(b) is TextBlock and b.text for b in message.content):
            start = index
    found = []
    for index in range(start, len(items)):
        message = items[index]
        if message.role is not Role.ASSISTANT:
            continue
        position = next((p for p, b in enumerate(message.content) if type(b) is ToolUseBlock), None)
        if position is not None and not _gemini_signatures(message).get(position):
            found.append((index, position, cast(ToolUseBlock, message.content[position])))
    return found


def _with_placeholder_signature(message: Message, position: int) -> Message:
    metadata = dict(message.metadata)
    kept = dict(metadata["gemini"]) if isinstance(metadata.get("gemini"), dict) else {}
    entries = [e for e in kept.get("signatures") or () if isinstance(e, dict) and e.get("block") != position]
    kept["signatures"] = entries + [{"block": position, "signature": GEMINI_UNSIGNED_CALL}]
    metadata["gemini"] = kept
    return message.replace(metadata=metadata)


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
    return f"an {word}" if word[0] in "aeio" else f"a {word}"  # the roles: "a user", "an assistant"


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
