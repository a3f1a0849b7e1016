"""LangChain messages (``langchain_core.messages``), both ways.

``HumanMessage``, ``AIMessage``, ``SystemMessage``, ``ToolMessage``, ``FunctionMessage`` and
``ChatMessage`` (and their chunks) become user, assistant, system and tool messages:

* content as a string or a list of content blocks: ``text`` (and bare strings), media
  (LangChain v1 ``image`` / ``audio`` / ``video`` with ``url`` or ``base64`` + ``mime_type``, the
  older ``source_type`` form, OpenAI's ``image_url`` and Anthropic's ``source`` objects), and
  reasoning (v1 ``reasoning`` blocks with ``extras["signature"]``, Anthropic's ``thinking``
  blocks) as :class:`agentmsg.ThinkingBlock`; ``additional_kwargs["reasoning_content"]`` (what
  DeepSeek and Qwen return through LangChain) is the message's ``reasoning_content``;
* ``AIMessage.tool_calls`` (id, name, args) as tool calls; ``ToolMessage.tool_call_id`` and
  ``status="error"`` as the result's link and error flag; a ``FunctionMessage`` is a result
  linked by name only (Forge's way), and a tool message without ``tool_id`` goes back as one;
* ``name`` and ``id`` as the message's own; what our model has no field for
  (``invalid_tool_calls``, ``additional_kwargs``, ``response_metadata``, ``usage_metadata``,
  ``artifact``, a ``ChatMessage``'s role) in ``metadata["langchain"]``, so it comes back.

The other way, agentmsg's own fields (timestamp, metadata, ``finished``, ``finish_reason``, a
call's ``server_name`` and metadata) travel in ``additional_kwargs["agentmsg"]``, which
LangChain's converters do not send to a provider. Tool calls always follow the content on the
way back (LangChain keeps them apart from it). ``langchain-core`` is imported only when these
functions run; without it they raise :class:`agentmsg.workbench.MissingDependencyError`.

    >>> from langchain_core.messages import AIMessage, ToolMessage
    >>> chat = from_langchain([AIMessage("", tool_calls=[{"id": "c1", "name": "calc", "args": {"a": 1}}]),
    ...                        ToolMessage("2", tool_call_id="c1")])
    >>> chat[0].tool_calls[0].input, chat[1].tool_id
    ({'a': 1}, 'c1')
    >>> type(to_langchain(chat)[1]).__name__
    'ToolMessage'
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, cast

from .._checks import bounded, check_calls, shown
from ..errors import AgentMsgError, ConversionError, Losses, MessageTypeError
from ..model.arguments import json_output_copy
from ..model.blocks import ToolResultBlock, ToolUseBlock
from ..model.message import Message, format_timestamp
from ..readers import check_messages
from ..readers._fields import check_dicts, own_namespace
from ..readers.langchain import (
    NAMESPACE, OURS, langchain_content, langchain_messages, message_blocks, message_from_langchain,
)

__all__ = ["to_langchain", "from_langchain"]


# -- from LangChain ------------------------------------------------------------------------------


def from_langchain(messages: Iterable[Any]) -> List[Message]:
    """Reads LangChain messages (see the module notes for what maps where).

    >>> from langchain_core.messages import HumanMessage, AIMessage
    >>> chat = from_langchain([HumanMessage("Hi", name="ann"),
    ...                        AIMessage([{"type": "reasoning", "reasoning": "greet"}, {"type": "text", "text": "Hello"}])])
    >>> [(m.role.value, m.name, m.text, m.thinking) for m in chat]
    [('user', 'ann', 'Hi', ''), ('assistant', None, 'Hello', 'greet')]
    """
    lc = langchain_messages()
    if isinstance(messages, lc.BaseMessage):
        raise MessageTypeError(f"messages must be a list of LangChain messages, not a single {type(messages).__name__}")
    losses = Losses("from_langchain")
    out = [message_from_langchain(lc, message, index, losses) for index, message in enumerate(check_dicts(messages, "messages"))]
    losses.warn()
    return out


# -- to LangChain ---------------------------------------------------------------------------------


def to_langchain(messages: Iterable[Message]) -> List[Any]:
    """Converts messages to LangChain messages (see the module notes; lossless with
    :func:`from_langchain`).

    >>> import agentmsg
    >>> [type(m).__name__ for m in to_langchain([agentmsg.system("Be brief"), agentmsg.user("Hi"),
    ...                                          agentmsg.tool("42", name="calc")])]
    ['SystemMessage', 'HumanMessage', 'FunctionMessage']
    """
    lc = langchain_messages()
    out = []
    for index, message in enumerate(check_messages(messages)):
        try:
            out.append(_to_one(lc, message, index))
        except AgentMsgError:
            raise
        except (ValueError, TypeError) as error:  # LangChain's validation of what metadata["langchain"] held
            raise ConversionError(f"messages[{index}]: LangChain refused the message: {bounded(error)}") from None
    return out


def _to_one(lc: Any, message: Message, index: int) -> Any:
    where = f"messages[{index}]"
    metadata = json_output_copy(message.metadata, f"{where}.metadata")
    kept = own_namespace(metadata, NAMESPACE)
    if kept:
        del metadata[NAMESPACE]
    ours: Dict[str, Any] = {"timestamp": format_timestamp(message.timestamp)}
    if metadata:
        ours["metadata"] = metadata
    for key in ("finished", "finish_reason"):
        if getattr(message, key) is not None:
            ours[key] = getattr(message, key)
    additional = dict(kept.get("additional_kwargs") or {})
    if message.reasoning_content is not None:
        additional["reasoning_content"] = message.reasoning_content
    additional[OURS] = ours
    fields: Dict[str, Any] = {"additional_kwargs": additional, "name": message.name,
                              "id": None if "id" in kept and kept["id"] is None else message.id}
    if kept.get("response_metadata"):
        fields["response_metadata"] = kept["response_metadata"]
    role = message.role.value
    content = langchain_content(message_blocks(message.content), bool(kept.get("list_content")))
    if role == "tool":
        result = cast(ToolResultBlock, message.content[0])  # a tool message holds exactly one
        if message.tool_id is None:
            if result.is_error:
                ours["is_error"] = True
            return lc.FunctionMessage(content=content, **fields)
        if "artifact" in kept:
            fields["artifact"] = kept["artifact"]
        return lc.ToolMessage(content=content, tool_call_id=message.tool_id,
                              status="error" if result.is_error else "success", **fields)
    if "chat_role" in kept:
        return lc.ChatMessage(content=content, role=kept["chat_role"], **fields)
    if role == "system":
        return lc.SystemMessage(content=content, **fields)
    if role == "user":
        return lc.HumanMessage(content=content, **fields)
    calls = [b for b in message.content if type(b) is ToolUseBlock]
    if any(call.server_name != "local" or call.metadata for call in calls):
        ours["calls"] = [{"server_name": c.server_name, "metadata": dict(c.metadata)} for c in calls]
    for key in ("usage_metadata", "invalid_tool_calls"):
        if key in kept:
            fields[key] = kept[key]
    return lc.AIMessage(
        content=content,
        tool_calls=[{"id": c.id, "name": c.name, "args": json_output_copy(c.input, f"{where} tool call {shown(c.id)}"),
                     "type": "tool_call"} for c in calls],
        **fields,
    )


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
