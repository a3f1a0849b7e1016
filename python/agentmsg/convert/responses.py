"""OpenAI Responses API items, both ways: a request's ``input`` list and a response's ``output``.

Responses histories are flat lists of typed items; this module groups them into messages.
``message`` items become user, system (``developer`` too) or assistant messages with their
text and images; ``reasoning`` items become thinking blocks (one per summary or
reasoning-text part, an empty one when the item only carries ``encrypted_content``);
``function_call`` and ``custom_tool_call`` items become tool calls (a custom tool's free text
is the call's ``{"input": ...}``), their ``*_output`` items tool messages. The tools OpenAI runs
itself become server blocks, each item a :class:`ServerToolUseBlock` (``provider="openai"``, the
item's other fields in its ``metadata``) followed by a :class:`ServerToolResultBlock` holding the
item's result fields when it has any: ``web_search_call`` (``web_search``, its ``action``),
``file_search_call`` (``file_search``: ``queries``; ``results``), ``code_interpreter_call``
(``code_interpreter``: ``code``, ``container_id``; ``outputs``), ``image_generation_call``
(``image_generation``; ``result``), ``mcp_call`` (the tool's name, ``server_name`` the server's
label, its ``arguments`` as the input; ``output`` or ``error``, an error result) and
``mcp_list_tools`` (``server_name`` the label; ``tools`` or ``error``). Consecutive items the model
produced (reasoning, messages, calls) form one assistant message.

Items with no block of their own (the calls the client runs and answers, ``computer_call``,
``local_shell_call``, ``shell_call``, ``apply_patch_call``, and their outputs;
``mcp_approval_request`` / ``mcp_approval_response``, ``compaction`` and ``item_reference``
items...) and every field the blocks do not hold (item ids, statuses, ``encrypted_content``,
annotations, ``phase``) are kept, exactly as read, in the message's
``metadata["responses"]["items"]``; :func:`to_responses` writes them back untouched while the
message's content is still what they were read into. A message made only of such items holds an
empty :class:`ThinkingBlock` as a stand-in. A whole ``Response`` stands for its ``output``, its
id, model, status, ``incomplete_details``, error, usage and ``previous_response_id`` kept in the
last message's ``metadata["responses"]["response"]``.

What the format cannot carry, left out with a :class:`ConversionWarning`: thinking that was not
read from a Responses reasoning item (the API takes back only its own reasoning items, by id),
``reasoning_content``, audio and video (message parts are text, images and files), images outside
user messages and tool results, a tool result's ``is_error`` flag (except an MCP call's error),
``name`` on messages, a tool result name that differs from its call's, and a tool call's
``metadata``, and server blocks another provider ran. A message between a tool call and its
results is moved after them, with a warning.

Messages read by an earlier release (an ``mcp_call`` as a tool call and a tool message, built-in
calls kept in metadata only) are written back as the items they were read from, as before.

    >>> import agentmsg
    >>> call = agentmsg.ToolUseBlock("call_1", "calculator", {"a": 5})
    >>> agentmsg.to_responses([agentmsg.user("Add"), agentmsg.assistant(tool_calls=[call])])
    [{'role': 'user', 'content': 'Add'}, {'type': 'function_call', 'call_id': 'call_1', 'name': 'calculator', 'arguments': '{"a": 5}'}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Tuple, cast

from .._checks import check_calls, require, require_choice, require_dict
from ..errors import ConversionError, Losses, MessageTypeError
from ..model.arguments import RAW_ARGUMENTS, call_place, dump_arguments, json_text, load_arguments
from ..model.blocks import (
    Block,
    DocumentBlock,
    ImageBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    URLSource,
    document_name,
)
from ..model.message import ASSISTANT_ROLE, TOOL_ROLE, USER_ROLE, Message, metadata_view
from ..readers import check_messages
from ..readers._fields import build, check_dicts, own_namespace, plain_data, require_str_key, tagged_dict
from ..readers.openai import document_from_openai, source_from_url
from ._order import results_first, settle_tool_pairs
from .openai import data_url

if TYPE_CHECKING:
    from .._sdk_types import ResponsesInputItemParam
    from ..options import OrphanPolicy

__all__ = ["to_responses", "from_responses"]

#: Item types the model made (besides messages, reasoning and calls) that have no block of their
#: own: kept in the assistant message's ``metadata["responses"]["items"]`` as they are.
_MODEL_ITEMS = frozenset((
    "computer_call", "local_shell_call", "shell_call", "apply_patch_call", "tool_search_call", "tool_search_output",
    "mcp_approval_request", "compaction", "program",
))
#: The tools OpenAI runs itself, read into server blocks: item type -> (the call's name, or None
#: for the item's own ``name``; the fields of the call's input; the fields of its result).
SERVER_ITEMS: Dict[str, Tuple[Optional[str], Tuple[str, ...], Tuple[str, ...]]] = {
    "web_search_call": ("web_search", ("action",), ()),
    "file_search_call": ("file_search", ("queries",), ("results",)),
    "code_interpreter_call": ("code_interpreter", ("code", "container_id"), ("outputs",)),
    "image_generation_call": ("image_generation", (), ("result",)),
    "mcp_call": (None, (), ("output", "error")),
    "mcp_list_tools": ("mcp_list_tools", (), ("tools", "error")),
}
#: The item type of a server call without one kept (a block not read from a Responses item).
_SERVER_ITEM_OF_NAME = {name: kind for kind, (name, _, _) in SERVER_ITEMS.items() if name is not None}
#: Item types the client sends that have no block of their own: kept with the message before them.
_CLIENT_ITEMS = frozenset((
    "computer_call_output", "local_shell_call_output", "shell_call_output", "apply_patch_call_output",
    "mcp_approval_response", "item_reference", "compaction_trigger", "additional_tools", "configuration_update",
    "program_output",
))
#: Every item type carried untouched in ``metadata["responses"]["items"]``.
RESPONSES_OPAQUE_ITEMS = _MODEL_ITEMS | _CLIENT_ITEMS
_CALL_ITEMS = ("reasoning", "function_call", "custom_tool_call")
_RESULT_ITEMS = ("function_call_output", "custom_tool_call_output")
_ITEM_TYPES = ("message",) + _CALL_ITEMS + _RESULT_ITEMS + tuple(SERVER_ITEMS) + tuple(sorted(RESPONSES_OPAQUE_ITEMS))
_MESSAGE_ROLES = ("user", "system", "developer", "assistant")
_PART_TYPES = ("input_text", "output_text", "refusal", "input_image", "input_file")
_OUTPUT_PART_TYPES = ("input_text", "input_image", "input_file")
# What a whole Response keeps besides its output (its tools and settings are the request's).
_RESPONSE_KEYS = ("id", "model", "status", "incomplete_details", "error", "usage", "previous_response_id")
# What stands for a message made only of items agentmsg has no block for.
_STAND_IN = ThinkingBlock("")
# The key of the namespace this module keeps in a message's metadata.
NAMESPACE = "responses"


# -- writing --------------------------------------------------------------------------------------


def to_responses(messages: Iterable[Message]) -> List[ResponsesInputItemParam]:
    """Converts messages to the ``input`` items of ``client.responses.create``.

    Messages read by :func:`from_responses` go back as the items they were read from (ids,
    reasoning's ``encrypted_content`` and every item without a block of its own included) while
    their content is unchanged; other messages are written as plain items: ``{"role", "content"}``
    messages, ``function_call`` / ``function_call_output`` pairs, and an ``mcp_call`` (with its
    result's ``output`` or ``error``) for a tool call whose ``server_name`` is not ``"local"``.

    >>> to_responses([Message.system("Be brief"), Message.user("Hi")])
    [{'role': 'system', 'content': 'Be brief'}, {'role': 'user', 'content': 'Hi'}]
    """
    items = check_messages(messages)
    losses = Losses("to_responses")
    writer = _Writer(items, losses)
    out: List[Dict[str, Any]] = []
    for index in results_first(items, "to_responses"):
        out += writer.items_of(index)
    if losses.found:
        losses.warn()
    return cast("List[ResponsesInputItemParam]", out)  # the SDK's TypedDicts


class _Writer:
    """Writes the messages of one history, folding MCP results into their ``mcp_call`` items."""

    def __init__(self, messages: List[Message], losses: Losses) -> None:
        self.messages = messages
        self.losses = losses
        self.call_names: Dict[str, str] = {}
        self.custom_calls: set[str] = set()
        self.folded: set[int] = set()  # tool messages written inside their mcp_call item
        self.results: Dict[str, int] = {}  # call id -> the first tool message answering it
        for index, message in enumerate(messages):
            if message.role is TOOL_ROLE and message.tool_id and message.tool_id not in self.results:
                self.results[message.tool_id] = index

    def result_of(self, call_id: str) -> Optional[Message]:
        index = self.results.get(call_id)
        return None if index is None else self.messages[index]

    def items_of(self, index: int) -> List[Dict[str, Any]]:
        if index in self.folded:
            return []
        message = self.messages[index]
        kept = own_namespace(metadata_view(message), NAMESPACE).get("items")
        if kept is not None:
            reused = self._kept_items(message, index, kept)
            if reused is not None:
                return reused
            # an earlier release kept built-in calls here only: they go back unless a block holds them
            blocks = {block.id for block in message.content if type(block) is ServerToolUseBlock}
            kept = [item for item in kept if isinstance(item, Mapping) and (
                item.get("type") in RESPONSES_OPAQUE_ITEMS
                or item.get("type") in SERVER_ITEMS and item.get("type") != "mcp_call" and item.get("id") not in blocks)]
        items = [dict(item) for item in kept or ()]
        return items + fresh_items(message, index, self.losses, self)

    def _kept_items(self, message: Message, index: int, kept: Any) -> Optional[List[Dict[str, Any]]]:
        """The items ``message`` was read from, when reading them again gives its content (and
        its MCP results' content); else None."""
        where = f"messages[{index}].metadata['{NAMESPACE}']['items']"
        if not isinstance(kept, list) or not kept:
            raise MessageTypeError(f"{where} must be a non-empty list of items")
        reused = self._kept_as_read(message, kept, where, False)
        if reused is None and any(isinstance(item, Mapping) and item.get("type") in SERVER_ITEMS for item in kept):
            reused = self._kept_as_read(message, kept, where, True)  # as an earlier release read them
        return reused

    def _kept_as_read(self, message: Message, kept: List[Any], where: str, legacy: bool,
                      ) -> Optional[List[Dict[str, Any]]]:
        reader = _Reader(where, legacy)
        for position, item in enumerate(kept):
            reader.add(item, position)
        again = reader.finish()
        first = again[0]
        mcp_calls = {block.id for block in first.content if type(block) is ToolUseBlock and block.server_name != "local"}
        if any(result.tool_id not in mcp_calls for result in again[1:]):
            return None
        if first.role is not message.role or first.content != message.content or first.tool_id != message.tool_id:
            return None
        mcp_results = []
        for result in again[1:]:
            answer = self.results.get(result.tool_id or "")
            if answer is None or self.messages[answer].content != result.content:
                return None
            mcp_results.append(answer)
        self.folded.update(mcp_results)
        for block in message.content:
            if type(block) is ToolUseBlock:
                self.call_names[block.id] = block.name
        for item in kept:
            if item.get("type") == "custom_tool_call":
                self.custom_calls.add(item["call_id"])
        return [_copy(item) for item in kept]


def _copy(item: Mapping[str, Any]) -> Dict[str, Any]:
    """A fresh copy of a kept item (output never shares a dict with a message's metadata)."""
    return {key: _copy_value(value) for key, value in item.items()}


def _copy_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return _copy(value)
    if isinstance(value, list):
        return [_copy_value(item) for item in value]
    return value


def fresh_items(message: Message, index: int, losses: Losses, writer: Optional[_Writer] = None) -> List[Dict[str, Any]]:
    """``message`` written as plain items (no ids), as a message no Responses item was read into."""
    if message.name is not None and message.role is not TOOL_ROLE:
        losses.add("name on messages", index)
    if message.reasoning_content is not None:
        losses.add("reasoning_content", index)
    role = message.role
    if role is TOOL_ROLE:
        return _tool_items(message, index, losses, writer)
    if role is ASSISTANT_ROLE:
        return _assistant_items(message, index, losses, writer)
    written = "user" if role is USER_ROLE else "system"
    content = message.content
    if len(content) == 1 and type(content[0]) is TextBlock:
        return [{"role": written, "content": content[0].text}]
    parts = []
    block: Any
    for block in content:
        kind = type(block)
        if kind is TextBlock:
            if block.text:
                parts.append({"type": "input_text", "text": block.text})
        elif (part := _media_part(block, role is USER_ROLE, index, losses)) is not None:
            parts.append(part)
        elif block == _STAND_IN:
            continue
        else:
            losses.add(f"{block.type} blocks in {role.value} messages", index)
    if not parts:
        losses.add("messages with nothing else it can carry", index)
        return []
    return [{"role": written, "content": parts}]


def _media_part(block: Any, images: bool, index: int, losses: Losses) -> Optional[Dict[str, Any]]:
    """An image as an ``input_image`` part, a document as an ``input_file`` (its data or URL);
    None for anything else."""
    kind = type(block)
    if kind is not ImageBlock and kind is not DocumentBlock or not images:
        return None
    source = block.source
    if kind is DocumentBlock:
        if block.metadata:
            losses.add("a document's metadata", index)
        if type(source) is URLSource:
            part = {"type": "input_file", "file_url": source.url}
            if block.name is not None:
                part["filename"] = block.name
            return part
        return {"type": "input_file", "filename": document_name(block), "file_data": data_url(source)}
    url = source.url if type(source) is URLSource else data_url(source)
    return {"type": "input_image", "image_url": url, "detail": "auto"}


def _assistant_items(message: Message, index: int, losses: Losses, writer: Optional[_Writer]) -> List[Dict[str, Any]]:
    items: List[Dict[str, Any]] = []
    block: Any
    for block in message.content:
        kind = type(block)
        if kind is TextBlock:
            if block.text:
                items.append({"role": "assistant", "content": block.text})
        elif kind is ToolUseBlock:
            items.append(_call_item(block, index, losses, writer))
        elif kind is ThinkingBlock:
            if block != _STAND_IN:
                losses.add("thinking that was not read from a Responses reasoning item", index)
        elif kind is ServerToolUseBlock:
            if (item := _server_item(block, message.content, index, losses)) is not None:
                items.append(item)
        elif kind is ServerToolResultBlock:
            if not any(type(b) is ServerToolUseBlock and b.id == block.tool_use_id for b in message.content):
                losses.add("server tool results without their call", index)
            # else written in its call's item
        else:
            losses.add(f"{block.type} blocks in assistant messages", index)
    if not items:
        losses.add("messages with nothing else it can carry", index)
    return items


def _call_item(call: ToolUseBlock, index: int, losses: Losses, writer: Optional[_Writer]) -> Dict[str, Any]:
    if any(key != RAW_ARGUMENTS for key in call.metadata):
        losses.add("a tool call's metadata", index)
    arguments = dump_arguments(call, call_place(index, call, "input"))
    if writer is not None:
        writer.call_names[call.id] = call.name
    if call.server_name == "local":
        return {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments}
    item: Dict[str, Any] = {"type": "mcp_call", "id": call.id, "name": call.name, "arguments": arguments,
                            "server_label": call.server_name}
    result = None if writer is None else writer.result_of(call.id)
    if writer is not None and result is not None:
        answer = cast(ToolResultBlock, result.content[0])
        if any(type(block) is not TextBlock for block in answer.output):
            losses.add("media in MCP tool results", index)
        if answer.is_error:
            item["error"] = {"type": "mcp_tool_execution_error", "content": answer.text}
        else:
            item["output"] = answer.text
        writer.folded.add(writer.results[call.id])
    return item


def _server_item(call: ServerToolUseBlock, content: Iterable[Block], index: int, losses: Losses,
                 ) -> Optional[Dict[str, Any]]:
    """The item of a tool OpenAI ran, its result (in the same message) folded in; None (a loss)
    for another provider's call or a tool the Responses API has no item for."""
    if call.provider not in ("", "openai"):
        losses.add(f"server tool blocks run by {call.provider}", index)
        return None
    item = {key: _copy_value(value) for key, value in call.metadata.items() if key != RAW_ARGUMENTS}
    kind = item.get("type")
    if kind not in SERVER_ITEMS:
        kind = _server_item_type(call.name, call.server_name)
        if kind is None:
            losses.add("server tool calls the Responses API has no item for", index)
            return None
    _, call_fields, result_fields = SERVER_ITEMS[kind]
    if kind in ("mcp_call", "mcp_list_tools") and call.server_name is None:
        losses.add("MCP calls without a server_name", index)
        return None
    item.update(type=kind, id=call.id)
    if kind == "mcp_call":
        item.update(name=call.name, arguments=dump_arguments(call, call_place(index, call, "input")))
    if kind in ("mcp_call", "mcp_list_tools"):
        item["server_label"] = call.server_name
    elif call.input:
        if any(key not in call_fields for key in call.input):
            losses.add(f"server tool call input fields a {kind} item has no place for", index)
        item.update((key, _copy_value(value)) for key, value in call.input.items() if key in call_fields)
    for block in content:
        if type(block) is ServerToolResultBlock and block.tool_use_id == call.id:
            if not isinstance(block.content, Mapping) or any(key not in result_fields for key in block.content):
                losses.add(f"server tool results a {kind} item has no place for", index)
            else:
                item.update((key, _copy_value(value)) for key, value in block.content.items())
    return item


def _server_item_type(name: str, server_name: Optional[str]) -> Optional[str]:
    """The item type of a server call that does not say it: an MCP server's tool, or a built-in one."""
    return "mcp_call" if server_name is not None else _SERVER_ITEM_OF_NAME.get(name)


def _tool_items(message: Message, index: int, losses: Losses, writer: Optional[_Writer]) -> List[Dict[str, Any]]:
    if not message.tool_id:
        raise ConversionError(f"messages[{index}].tool_id: the Responses API needs the id of the call a tool "
                              "message answers")
    call_names = writer.call_names if writer is not None else {}
    if message.name is not None and call_names.get(message.tool_id) != message.name:
        losses.add("a tool result name that differs from its call's", index)
    result = cast(ToolResultBlock, message.content[0])
    if result.is_error:
        losses.add("the is_error flag of tool results", index)
    output: Any
    if len(result.output) == 1 and type(result.output[0]) is TextBlock:
        output = result.output[0].text
    else:
        output = []
        for block in result.output:
            if type(block) is TextBlock:
                output.append({"type": "input_text", "text": block.text})
            elif type(block) is ImageBlock or type(block) is DocumentBlock:
                output.append(_media_part(block, True, index, losses))
            else:
                losses.add(f"{block.type} blocks in tool results", index)
        if not output:
            output = ""
    custom = writer is not None and message.tool_id in writer.custom_calls
    kind = "custom_tool_call_output" if custom else "function_call_output"
    return [{"type": kind, "call_id": message.tool_id, "output": output}]


# -- reading --------------------------------------------------------------------------------------


def from_responses(items: Any, *, on_orphan: OrphanPolicy = "raise") -> List[Message]:
    """Reads Responses API items back into messages: an ``input`` list (a str is one user
    message), a response's ``output``, or a whole ``Response`` (which stands for its output);
    items are dicts or the ``openai`` SDK's objects.

    Consecutive items the model made form one assistant message; what has no block of its own
    is kept in ``metadata["responses"]`` (see the module). ``on_orphan``: ``"raise"``,
    ``"repair"`` or ``"keep"``, as for every ``from_*``.

    >>> [m.text for m in from_responses([{"role": "user", "content": "Hi"},
    ...     {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
    ...      "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}])]
    ['Hi', 'Hello']
    """
    data = plain_data(items)
    if isinstance(items, str):
        return [build("items", lambda: Message.user(items))]
    response: Optional[Dict[str, Any]] = None
    if isinstance(data, Mapping) and "output" in data and "role" not in data and "type" not in data:
        response = {key: data[key] for key in _RESPONSE_KEYS if data.get(key) is not None}
        items = require(data, "output", "response")
        what = "response.output"
    else:
        what = "items"
    reader = _Reader(what)
    for index, item in enumerate(check_dicts(items, what)):
        reader.add(item, index)
    out = reader.finish()
    if response is not None and out:
        last = out[-1]
        kept = dict(own_namespace(metadata_view(last), NAMESPACE))
        kept["response"] = response
        out[-1] = build("response", lambda: last.replace(metadata={**last.metadata, NAMESPACE: kept}))
    return settle_tool_pairs(out, on_orphan, "from_responses")


class _Group:
    """The items of one assistant message being read, and the MCP results that follow it."""

    __slots__ = ("items", "blocks", "results")

    def __init__(self, items: List[Dict[str, Any]]) -> None:
        self.items = items
        self.blocks: List[Block] = []
        self.results: List[Message] = []


class _Reader:
    """Reads items one by one into messages (see the module for the grouping).

    An MCP call's result (read from the call's own item) goes among its turn's tool messages in
    call order: before the first result of a later call, the tool results as sent kept in order.
    """

    def __init__(self, what: str, legacy: bool = False) -> None:
        self.what = what
        self.legacy = legacy  # as the last release read: mcp_call a tool call, built-in calls only kept
        self.out: List[Message] = []
        self.group: Optional[_Group] = None
        self.held: List[Dict[str, Any]] = []  # client items before any message: kept with the next
        self.call_names: Dict[str, str] = {}
        self.calls: Dict[str, int] = {}  # the calls of the last assistant message -> their position
        self.mcp_results: List[Message] = []  # its MCP results not placed yet, in call order
        self.anchor = -1  # the last message client items may join (an MCP result never takes them)

    def add(self, item: Any, index: int) -> None:
        where = f"{self.what}[{index}]"
        item = plain_data(item)
        if type(item) is not dict:
            item = dict(require_dict(item, where))
        kind = item.get("type")
        if kind is None and "role" in item:
            kind = "message"
        kind = require_choice(kind, _ITEM_TYPES, f"{where}.type", "item type")
        if kind == "message":
            role = require_choice(require(item, "role", where), _MESSAGE_ROLES, f"{where}.role", "role")
            blocks = _message_blocks(item, role, where)
            if role == "assistant":
                group = self._group()
                group.blocks.extend(blocks)
                group.items.append(item)
            else:
                self._close()
                self._place_mcp_results(None)
                message = build(where, lambda: Message("system" if role == "developer" else role, blocks or [_STAND_IN]))
                self._keep(where, message, item)
        elif kind in SERVER_ITEMS and not (self.legacy and kind != "mcp_call"):
            group = self._group()
            group.items.append(item)
            if self.legacy:  # an mcp_call as a tool call and a tool message
                call = _call_block(item, kind, where)
                self.call_names[call.id] = call.name
                group.blocks.append(call)
                if item.get("output") is not None or item.get("error") is not None:
                    group.results.append(_mcp_result(item, call, where))
            else:
                group.blocks.extend(_server_blocks(item, kind, where))
        elif kind in _CALL_ITEMS:
            group = self._group()
            group.items.append(item)
            if kind == "reasoning":
                group.blocks.extend(_reasoning_blocks(item, where))
                return
            call = _call_block(item, kind, where)
            self.call_names[call.id] = call.name
            group.blocks.append(call)
        elif kind in _RESULT_ITEMS:
            self._close()
            call_id = require_str_key(item, "call_id", where)
            self._place_mcp_results(call_id)
            output = _output_blocks(require(item, "output", where), f"{where}.output")
            self._keep(where, build(where, lambda: Message(
                TOOL_ROLE, [ToolResultBlock(call_id, output)], tool_id=call_id, name=self.call_names.get(call_id))),
                item)
        elif kind in _MODEL_ITEMS or kind in SERVER_ITEMS:  # (a built-in call, for the legacy reader)
            self._group().items.append(item)
        elif self.group is not None:
            self.group.items.append(item)
        elif self.anchor >= 0:
            last = self.out[self.anchor]
            kept = own_namespace(metadata_view(last), NAMESPACE)
            items = list(kept.get("items") or ()) or fresh_items(last, 0, Losses("from_responses"))
            self.out[self.anchor] = build(where, lambda: last.replace(
                metadata={**last.metadata, NAMESPACE: {**kept, "items": items + [item]}}))
        else:
            self.held.append(item)

    def _group(self) -> _Group:
        if self.group is None:
            self._place_mcp_results(None)
            self.group = _Group(self.held)
            self.held = []
        return self.group

    def _keep(self, where: str, message: Message, item: Dict[str, Any]) -> None:
        """Appends ``message``, keeping the items it was read from unless plain items give it."""
        items = self.held + [item]
        self.held = []
        self.anchor = len(self.out)
        self.out.append(_with_items(message, items, where, ()))

    def _close(self) -> None:
        group = self.group
        if group is None:
            return
        self.group = None
        where = self.what
        message = build(where, lambda: Message(ASSISTANT_ROLE, group.blocks or [_STAND_IN]))
        self.anchor = len(self.out)
        self.out.append(_with_items(message, group.items, where, group.results))
        self.calls = {block.id: position for position, block in enumerate(message.content)
                      if type(block) is ToolUseBlock}
        self.mcp_results = group.results

    def _place_mcp_results(self, call_id: Optional[str]) -> None:
        """Places the MCP results that come before the result of ``call_id`` (all: None)."""
        position = self.calls.get(call_id, -1) if call_id is not None else None
        while self.mcp_results and (position is None or self.calls[self.mcp_results[0].tool_id or ""] < position):
            self.out.append(self.mcp_results.pop(0))

    def finish(self) -> List[Message]:
        self._close()
        self._place_mcp_results(None)
        if self.held:  # client items and nothing else: kept on a stand-in
            self.out.append(_with_items(Message(ASSISTANT_ROLE, [_STAND_IN]), self.held, self.what, ()))
            self.held = []
        return self.out


def _with_items(message: Message, items: List[Dict[str, Any]], where: str, results: Iterable[Message]) -> Message:
    """``message`` keeping ``items`` in its metadata, unless writing it plainly gives them back."""
    fresh = _Writer([message, *results], Losses("from_responses"))
    if fresh.items_of(0) == items:
        return message
    return build(where, lambda: message.replace(metadata={NAMESPACE: {"items": items}}))


def _text(value: Any, where: str) -> TextBlock:
    return build(where, lambda: TextBlock(value))


def _message_blocks(item: Mapping[str, Any], role: str, where: str) -> List[Block]:
    content = require(item, "content", where)
    if isinstance(content, str):
        return [_text(content, f"{where}.content")] if content else []
    if not isinstance(content, (list, tuple)):
        raise MessageTypeError(f"{where}.content must be a str or a list of parts, not {type(content).__name__}")
    blocks: List[Block] = []
    for j, part in enumerate(content):
        pwhere = f"{where}.content[{j}]"
        part, kind = tagged_dict(plain_data(part), pwhere)
        kind = require_choice(kind, _PART_TYPES, f"{pwhere}.type", "content part type")
        block = _part_block(part, kind, pwhere)
        if block is not None:
            blocks.append(block)
    return blocks


def _part_block(part: Mapping[str, Any], kind: str, where: str) -> Optional[Block]:
    """The block of one content part; None for a part only kept (a file, an image by file id)."""
    if kind in ("input_text", "output_text"):
        return _text(require(part, "text", where), f"{where}.text")
    if kind == "refusal":
        return _text(require(part, "refusal", where), f"{where}.refusal")
    if kind == "input_image":
        url = part.get("image_url")
        if url is None:
            return None  # an uploaded file's id: kept in the item
        return build(where, lambda: ImageBlock(source_from_url(url, f"{where}.image_url")))
    if "file_data" in part or "file_url" in part:
        return document_from_openai(part, where)
    return None  # a file by its id: kept in the item


def _reasoning_blocks(item: Mapping[str, Any], where: str) -> List[Block]:
    blocks: List[Block] = []
    for key, part_type in (("summary", "summary_text"), ("content", "reasoning_text")):
        parts = item.get(key)
        if parts is None:
            continue
        if not isinstance(parts, (list, tuple)):
            raise MessageTypeError(f"{where}.{key} must be a list of parts, not {type(parts).__name__}")
        for j, part in enumerate(parts):
            pwhere = f"{where}.{key}[{j}]"
            part, kind = tagged_dict(plain_data(part), pwhere)
            require_choice(kind, (part_type,), f"{pwhere}.type", f"{key} part type")
            text = require(part, "text", pwhere)
            blocks.append(build(pwhere, lambda: ThinkingBlock(text)))
    encrypted = item.get("encrypted_content")
    if encrypted is not None and not isinstance(encrypted, str):
        raise MessageTypeError(f"{where}.encrypted_content must be a str, not {type(encrypted).__name__}")
    return blocks or [_STAND_IN]


def _call_block(item: Mapping[str, Any], kind: str, where: str) -> ToolUseBlock:
    name = require(item, "name", where)
    if kind == "mcp_call":
        call_id = require(item, "id", where)
        server = require(item, "server_label", where)
        arguments, metadata = load_arguments(require(item, "arguments", where), f"{where}.arguments")
        return build(where, lambda: ToolUseBlock(call_id, name, arguments, server, metadata))
    call_id = require(item, "call_id", where)
    if kind == "custom_tool_call":
        text = require(item, "input", where)
        if not isinstance(text, str):
            raise MessageTypeError(f"{where}.input must be a str, not {type(text).__name__}")
        return build(where, lambda: ToolUseBlock(call_id, name, {"input": text}))
    arguments, metadata = load_arguments(require(item, "arguments", where), f"{where}.arguments")
    return build(where, lambda: ToolUseBlock(call_id, name, arguments, metadata=metadata))


def _server_blocks(item: Mapping[str, Any], kind: str, where: str) -> List[Block]:
    """The server call of an item OpenAI ran (see the module), and its result when the item has one."""
    name, call_fields, result_fields = SERVER_ITEMS[kind]
    call_id = require_str_key(item, "id", where)
    taken = {"id"}.union(call_fields)
    server = None
    if kind in ("mcp_call", "mcp_list_tools"):
        server = require_str_key(item, "server_label", where)
        taken.add("server_label")
    if kind == "mcp_call":
        name = require(item, "name", where)
        arguments, raw = load_arguments(require(item, "arguments", where), f"{where}.arguments")
        taken.update(("name", "arguments"))
    else:
        arguments, raw = {key: item[key] for key in call_fields if key in item}, {}
    result = {key: item[key] for key in result_fields if item.get(key) is not None}
    taken.update(result)  # a None result field stays with the item's other fields
    metadata = {key: value for key, value in item.items() if key not in taken}
    if _server_item_type(cast(str, name), server) == kind:
        del metadata["type"]  # the call's name and server say it
    metadata.update(raw)
    call = build(where, lambda: ServerToolUseBlock(call_id, cast(str, name), arguments, server, "openai", metadata))
    if not result:
        return [call]
    return [call, build(where, lambda: ServerToolResultBlock(call_id, result, "error" in result, "openai"))]


def _mcp_result(item: Mapping[str, Any], call: ToolUseBlock, where: str) -> Message:
    """The tool message of an MCP call's ``output``, or of its ``error`` (an error result): the
    error's ``message`` or ``content`` as text (older items held a plain string)."""
    error = item.get("error")
    if error is None:
        text = item.get("output")
        field = "output"
    elif isinstance(error, Mapping):
        text = error.get("message", error.get("content"))
        if text is not None and not isinstance(text, str):
            text = json_text(text, f"{where}.error.content")
        field = "error.message"
    else:
        text, field = error, "error"
    if not isinstance(text, str):
        raise MessageTypeError(f"{where}.{field} must be a str, not {type(text).__name__}")
    return build(where, lambda: Message.tool(text, tool_id=call.id, name=call.name, is_error=error is not None))


def _output_blocks(output: Any, where: str) -> List[Block]:
    if isinstance(output, str):
        return [_text(output, where)] if output else []
    if not isinstance(output, (list, tuple)):
        raise MessageTypeError(f"{where} must be a str or a list of parts, not {type(output).__name__}")
    blocks: List[Block] = []
    for j, part in enumerate(output):
        pwhere = f"{where}[{j}]"
        part, kind = tagged_dict(plain_data(part), pwhere)
        kind = require_choice(kind, _OUTPUT_PART_TYPES, f"{pwhere}.type", "output part type")
        block = _part_block(part, kind, pwhere)
        if block is not None:
            blocks.append(block)
    return blocks


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
