"""AgentScope's multi-agent formatter: other agents' turns become ``[Name]: text`` user turns.

A model that expects one assistant cannot tell several agents apart, so every named message
not written by the agent being prompted is shown to it as a user turn labelled with the
sender's name.

    >>> import agentmsg
    >>> chat = [agentmsg.assistant("View A", name="AgentA"), agentmsg.assistant("View B", name="AgentB")]
    >>> [(m.role.value, m.text) for m in agentmsg.format_multi_agent(chat)]
    [('user', '[AgentA]: View A'), ('user', '[AgentB]: View B')]
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Tuple, cast

from .._checks import check_calls
from ..model.blocks import SERVER_BLOCKS, Block, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from ..model.message import Message, Role
from ..readers import check_messages

__all__ = ["format_multi_agent"]


def format_multi_agent(messages: Iterable[Message], *, self_name: Optional[str] = None) -> List[Message]:
    """Relabels named messages from other agents as user turns ``[Name]: text``.

    ``self_name`` is the agent being prompted: its own messages stay assistant turns. A user,
    assistant or system message with a ``name`` other than ``self_name`` becomes a user
    message; its tool calls become text lines ``[Name] called tool {arguments}`` and the results
    of those calls become user turns ``[Name] tool result: text`` (keeping the history free of
    calls the prompted model never made). Media blocks stay; another agent's thinking is private
    and is left out. Unnamed messages and the rest pass through unchanged. Each new message keeps
    the original's id, timestamp and metadata, with ``metadata["multi_agent_role"]`` recording
    the original role.

    >>> chat = [Message.user("Debate!"), Message.assistant("Yes", name="Me"), Message.assistant("No", name="You")]
    >>> [(m.role.value, m.text) for m in format_multi_agent(chat, self_name="Me")]
    [('user', 'Debate!'), ('assistant', 'Yes'), ('user', '[You]: No')]
    """
    items = check_messages(messages)
    foreign_calls: Dict[str, str] = {}  # call id -> the agent that made it
    out: List[Message] = []
    for message in items:
        if message.role is Role.TOOL:
            agent = foreign_calls.get(message.tool_id or "")
            if agent is None:
                out.append(message)
            else:
                label = f"[{agent}] tool result{' (error)' if message.is_error else ''}: "
                out.append(_relabel(message, [TextBlock(label + message.text)] + _media(cast(ToolResultBlock, message.content[0]).output)))
            continue
        name = message.name
        if name is None or name == self_name:
            out.append(message)
            continue
        blocks: List[Block] = []
        texts = []
        block: Any  # dispatched on type(block), which mypy cannot follow through `kind`
        for block in message.content:
            kind = type(block)
            if kind is TextBlock:
                texts.append(block.text)
            elif kind is ToolUseBlock:
                foreign_calls[block.id] = name
                texts.append(f"[{name}] called {block.name} {json.dumps(block.input, ensure_ascii=False)}")
            elif kind is not ThinkingBlock and kind not in SERVER_BLOCKS:  # the other agent's own
                blocks.append(block)
        body = "\n".join(t for t in texts if t)
        out.append(_relabel(message, [TextBlock(f"[{name}]: {body}")] + blocks))
    return out


def _media(blocks: Tuple[Block, ...]) -> List[Block]:
    return [b for b in blocks if type(b) is not TextBlock]


def _relabel(message: Message, content: List[Block]) -> Message:
    metadata = dict(message.metadata)
    metadata["multi_agent_role"] = message.role.value
    # the name now lives in the text, so the message itself is unnamed (as providers expect)
    return Message(Role.USER, content, id=message.id, timestamp=message.timestamp, metadata=metadata)


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
