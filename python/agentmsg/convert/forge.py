"""Forge's text format, both ways: everything lives in ``{"role", "content"}`` text.

An assistant turn is thinking in ``[brackets]``, text, and tool calls as ``<tool>`` JSON blocks,
separated by blank lines; a tool result is ``Tool: name\\nresult`` (``Error: ...`` for errors).
Parsing uses :func:`agentmsg.parse`, so ``from_forge(to_forge(x))`` reads back what was written.

What the format cannot carry: tool-call ids (the text has none; :func:`from_forge` gives calls
the parser's deterministic ids and pairs each result by the core pairing rule in Forge's
scope: the earliest unanswered call of its tool name), media, names on non-tool messages,
thinking signatures, and text that would read back as something else (a line ``[like this]``
reads as thinking). Each loss gives a :class:`ConversionWarning`; ``reasoning_content`` is
written as thinking.

The call itself is written by :func:`agentmsg.format_tool_call` (its example shows the text).

    >>> import agentmsg
    >>> call = agentmsg.ToolUseBlock("c1", "calculator", {"a": 5})
    >>> forge = agentmsg.to_forge([agentmsg.assistant(tool_calls=[call], thinking="I'll use the calculator")])
    >>> forge[0]["content"].splitlines()[:3]
    ["[I'll use the calculator]", '', '<tool>']
    >>> back = agentmsg.from_forge(forge)[0]
    >>> (back.thinking, [(c.name, c.input) for c in back.tool_calls])
    ("I'll use the calculator", [('calculator', {'a': 5})])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Set, Tuple, cast

from .. import _core
from .._checks import check_calls, require_dict
from ..errors import ConversionError, Losses, MessageTypeError, ToolCallError, ToolPairError, warn_caller
from ..model.arguments import RAW_ARGUMENTS, json_text
from ..model.blocks import Block, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from ..model.message import ROLE_CODES, Message, Role
from ..parsing import parse
from ..parsing.forge_text import format_tool_call, format_tool_result, parse_tool_result
from ..readers import check_messages
from ..readers._fields import build, check_dicts, require_str_key
from ._order import ORPHAN_POLICIES, settle_tool_pairs, warn_dropped_results

if TYPE_CHECKING:
    from ..options import OrphanPolicy

__all__ = ["to_forge", "from_forge"]

_SEPARATOR = "\n\n"


def _thinking_text(thinking: str) -> Optional[str]:
    """``[thinking]`` when that reads back exactly, else ``<think>`` tags when those do."""
    for candidate in (f"[{thinking}]", f"<think>{thinking}</think>"):
        if "\n" in thinking and candidate[0] == "[":
            continue
        parsed = parse(candidate)
        if parsed.thinking == [thinking] and not parsed.text and not parsed.tool_calls:
            return candidate
    return None


def _same_blocks(expected: List[Any], actual: List[Any]) -> bool:
    if len(expected) != len(actual):
        return False
    for want, got in zip(expected, actual):
        if type(want) is not type(got):
            return False
        if type(want) is ToolUseBlock:
            if (want.name, want.input, want.server_name) != (got.name, got.input, got.server_name):
                return False
        elif want != got:
            return False
    return True


_ERROR_PREFIX = "Error: "


def _without_own_text(call: ToolUseBlock, index: int) -> ToolUseBlock:
    """The call as Forge writes it: its input checked as JSON, and without the OpenAI argument
    text kept in ``metadata["raw_arguments"]`` when that text is just the input's (Forge writes
    arguments as an object; text that was not a JSON object stays, as a key of the payload)."""
    where = f"messages[{index}] tool call {call.name[:60]!r}"
    json_text(call.input, f"{where}.input")
    metadata = call.metadata
    if RAW_ARGUMENTS in metadata and call.input:
        metadata = {k: v for k, v in metadata.items() if k != RAW_ARGUMENTS}
    json_text(metadata, f"{where}.metadata")
    if metadata is call.metadata:
        return call
    return ToolUseBlock(call.id, call.name, call.input, call.server_name, metadata)


def to_forge(messages: Iterable[Message]) -> List[Dict[str, str]]:
    """Renders messages as Forge ``{"role", "content"}`` dicts (Forge's text format).

    A tool result is written with its message's ``name``, else the name of the call it answers.

    >>> to_forge([Message.tool("Result: 8", name="calculator"), Message.tool("division by zero", name="calculator", is_error=True)])
    [{'role': 'tool', 'content': 'Tool: calculator\\nResult: 8'}, {'role': 'tool', 'content': 'Tool: calculator\\nError: division by zero'}]
    """
    items = check_messages(messages)
    losses = Losses("to_forge")
    call_names: Dict[str, str] = {}
    out: List[Dict[str, str]] = []
    for index, message in enumerate(items):
        role = message.role
        if role is Role.TOOL:
            result = cast(ToolResultBlock, message.content[0])  # a tool message holds one result
            name = message.name or call_names.get(message.tool_id or "")
            if not name:
                raise ConversionError(
                    f"messages[{index}].name: Forge writes 'Tool: <name>', but the message has no name "
                    "and no earlier call with its tool_id"
                )
            if any(type(b) is not TextBlock for b in result.output):
                losses.add("media in tool results", index)
            if not result.is_error and result.text.startswith(_ERROR_PREFIX):
                losses.add(
                    f"successful results whose text starts with {_ERROR_PREFIX!r}", index,
                    "they read back as errors",
                )
            try:
                content = format_tool_result(name, result.text, result.is_error)
            except ToolCallError as error:
                raise ConversionError(f"messages[{index}].name: {error}") from None
            out.append({"role": "tool", "content": content})
            continue
        if message.name is not None:
            losses.add("names on non-tool messages", index)
        pieces: List[str] = []
        expected: List[Any] = []
        has_thinking = any(type(b) is ThinkingBlock for b in message.content)
        if message.reasoning_content and not has_thinking:
            blocks: Tuple[Block, ...] = (ThinkingBlock(message.reasoning_content),) + message.content
        else:
            blocks = message.content
            if message.reasoning_content is not None:
                # one thinking channel: thinking blocks and reasoning_content would read back as one
                losses.add("reasoning_content besides thinking blocks (or empty)", index)
        block: Any  # dispatched on type(block), which mypy cannot follow through `kind`
        for block in blocks:
            kind = type(block)
            if kind is TextBlock:
                if block.text:
                    pieces.append(block.text)
                    if expected and type(expected[-1]) is TextBlock:
                        expected[-1] = TextBlock(expected[-1].text + _SEPARATOR + block.text)
                    else:
                        expected.append(block)
            elif kind is ThinkingBlock and role is Role.ASSISTANT:
                if block.signature is not None:
                    losses.add("thinking signatures", index)
                rendered = _thinking_text(block.thinking)
                if rendered is None:
                    losses.add("thinking the text format cannot delimit", index)
                    rendered = f"<think>{block.thinking}</think>"
                pieces.append(rendered)
                expected.append(ThinkingBlock(block.thinking))
            elif kind is ToolUseBlock:
                call_names[block.id] = block.name
                block = _without_own_text(block, index)
                pieces.append(format_tool_call(block))
                expected.append(block)
            else:
                losses.add(f"{block.type} blocks in {role.value} messages", index)
        if not pieces:
            losses.add("messages with nothing else it can carry", index)
            continue
        content = _SEPARATOR.join(pieces)
        if role is Role.ASSISTANT and not _same_blocks(expected, parse(content).blocks):
            losses.add(
                "text that reads back as thinking or tool calls", index,
                "it is written as is and parses differently when read back",
            )
        out.append({"role": role.value, "content": content})
    if losses.found:
        losses.warn()
    return out


def _assistant_blocks(text: str, where: str) -> List[Any]:
    """Parsed blocks; a malformed tool call stays in place as text (never dropped)."""
    parsed = parse(text)
    if not parsed.errors:
        return parsed.blocks
    warn_caller(f"{where}.content: {len(parsed.errors)} malformed tool call(s) kept as text "
                f"({parsed.errors[0].message})")
    blocks: List[Any] = []
    start = 0
    for issue in parsed.errors:
        begin, end = issue.span
        blocks.extend(parse(text[start:begin]).blocks)
        blocks.append(TextBlock(issue.raw))
        start = end
    blocks.extend(parse(text[start:]).blocks)
    return blocks


def from_forge(messages: Iterable[Mapping[str, Any]], *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """Parses Forge ``{"role", "content"}`` dicts back into messages.

    Assistant text is parsed into thinking, text and tool calls; a tool message
    ``Tool: name\\nresult`` is paired by the core pairing rule in Forge's scope (the earliest
    unanswered call of that tool name in any earlier turn, see :mod:`agentmsg.toolpairs`) and
    gets that call's id. A result no call asked for is an orphan: ``on_orphan="raise"``
    (ToolPairError), ``"repair"`` (dropped, with a warning) or ``"keep"`` (kept, linked by name
    only).

    >>> msgs = from_forge([{"role": "assistant", "content": '<tool>{"tool_name": "calc", "arguments": {}}</tool>'},
    ...                    {"role": "tool", "content": "Tool: calc\\nResult: 8"}])
    >>> msgs[1].tool_id == msgs[0].tool_calls[0].id, msgs[1].text
    (True, 'Result: 8')
    """
    if on_orphan not in ORPHAN_POLICIES:
        raise ConversionError(f"on_orphan must be one of {', '.join(ORPHAN_POLICIES)}, not {on_orphan!r}")
    read: List[Any] = []  # a Message, or a tool result (name, result, is_error) to link first
    used_ids: Set[str] = set()
    for index, data in enumerate(check_dicts(messages, "messages")):
        where = f"messages[{index}]"
        data = require_dict(data, where)
        role = require_str_key(data, "role", where)
        content = require_str_key(data, "content", where)
        if role == "tool":
            try:
                read.append(tuple(parse_tool_result(content)))
            except ToolCallError:
                name = data.get("name")
                if not name:
                    raise ConversionError(
                        f"{where}.content: a Forge tool result reads 'Tool: <name>\\n<result>'"
                    ) from None
                if not isinstance(name, str):
                    raise MessageTypeError(f"{where}.name must be a str, not {type(name).__name__}")
                read.append((name, content, False))
            continue
        if role != "assistant":
            read.append(build(where, lambda: Message(role, content)))
            continue
        blocks = []
        for block in _assistant_blocks(content, where):
            if type(block) is ToolUseBlock:
                call_id = block.id if block.id not in used_ids else f"{block.id}-{index}"
                used_ids.add(call_id)
                block = ToolUseBlock(call_id, block.name, block.input, block.server_name, block.metadata)
            blocks.append(block)
        read.append(build(where, lambda: Message(role, blocks if blocks else content)))
    out = _linked_results(read, on_orphan)
    return settle_tool_pairs(out, on_orphan, "from_forge")


def _linked_results(read: List[Any], on_orphan: str) -> List[Message]:
    """The messages, with each tool result ``(name, result, is_error)`` made a tool message
    linked to the call the core pairing rule gives it (Forge's scope: any earlier turn)."""
    calls = [(index, block) for index, item in enumerate(read) if type(item) is Message
             for block in item.content if type(block) is ToolUseBlock]
    roles = [ROLE_CODES[Role.TOOL] if type(item) is tuple else ROLE_CODES[item.role] for item in read]
    names = [item[0] if type(item) is tuple else None for item in read]
    # Names with lone surrogates pair by their surrogatepass bytes, like any other.
    call_of, orphans, _ = _core.pair_tool_results(
        roles, [None] * len(read), names, [index for index, _ in calls],
        [block.id for _, block in calls], [block.name for _, block in calls], any_turn=True,
    )
    if orphans and on_orphan == "raise":
        raise ToolPairError(
            f"from_forge: messages[{orphans[0]}]: tool result for {read[orphans[0]][0]!r} has no "
            "unanswered call of that tool; pass on_orphan='repair' to drop it or 'keep' to accept"
        )
    # Calls of one name in one message are answered in order (the rule takes the earliest), so
    # a result's call is the next of its name in the message the rule names.
    ids_by_turn: Dict[Tuple[int, str], List[str]] = {}
    for index, block in calls:
        ids_by_turn.setdefault((index, block.name), []).append(block.id)
    dropped = set(orphans) if on_orphan == "repair" else set()
    out: List[Message] = []
    for index, item in enumerate(read):
        if type(item) is not tuple:
            out.append(item)
        elif index not in dropped:
            name, result, is_error = item
            tool_id = ids_by_turn[(call_of[index], name)].pop(0) if call_of[index] >= 0 else None
            out.append(build(f"messages[{index}]", lambda: Message.tool(
                result, tool_id=tool_id, name=name, is_error=is_error)))
    if dropped:
        warn_dropped_results("from_forge", sorted(dropped))
    return out


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
