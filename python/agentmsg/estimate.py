"""Forge's token estimate, computed in the Rust core.

``tokens = utf8_bytes(measured text) // 4 + role overhead (4; 10 for tool) + 10 if it contains "<tool>"``

    >>> import agentmsg
    >>> agentmsg.estimate_tokens("Hello")
    5
"""

from __future__ import annotations

import json
from typing import Dict, Iterable, List, Union

from . import _core
from .blocks import (
    AudioBlock, ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, URLSource,
    VideoBlock,
)
from ._checks import check_calls, type_name
from .errors import MessageTypeError
from .message import Message, Role, _to_role
from .normalize import MessageLike, read_messages

__all__ = ["estimate_tokens", "estimate_tokens_many", "measured_text", "ROLE_CODES"]

#: The code of each role in the arrays handed to the Rust core.
ROLE_CODES: Dict[Role, int] = {Role.SYSTEM: 0, Role.USER: 1, Role.ASSISTANT: 2, Role.TOOL: 3}


def _tool_call_json(block: ToolUseBlock) -> str:
    payload = {"server_name": block.server_name, "tool_name": block.name, "arguments": block.input}
    return json.dumps(payload, ensure_ascii=False)


def measured_text(message: Message) -> str:
    """The text the estimate measures for a message: its blocks joined with newlines.

    Text and thinking count as written; a tool call counts as Forge's payload JSON wrapped in
    ``<tool>...</tool>`` (so the XML overhead applies, as it does to the same call written in
    text); a tool result counts its output's text; media count only their URL (base64 data is
    not text a model reads as tokens).

    >>> from agentmsg import ToolUseBlock
    >>> measured_text(Message.assistant(tool_calls=[ToolUseBlock("c1", "calc", {"a": 1})]))
    '<tool>{"server_name": "local", "tool_name": "calc", "arguments": {"a": 1}}</tool>'
    """
    if not isinstance(message, Message):
        raise MessageTypeError(f"message must be a Message, not {type_name(message)}")
    parts: List[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            parts.append(block.thinking)
        elif isinstance(block, ToolUseBlock):
            parts.append("<tool>" + _tool_call_json(block) + "</tool>")
        elif isinstance(block, ToolResultBlock):
            parts.append(block.text)
        elif isinstance(block, (ImageBlock, AudioBlock, VideoBlock)):
            if isinstance(block.source, URLSource):
                parts.append(block.source.url)
    return "\n".join(parts)


def estimate_tokens(message_or_text: Union[Message, str], role: Union[Role, str] = Role.USER) -> int:
    """Estimates the tokens of a message, or of a text written by ``role``.

    >>> estimate_tokens("Hello", role="user")
    5
    >>> estimate_tokens(Message.tool("Result: 8", name="calculator"))
    12
    """
    if isinstance(message_or_text, Message):
        return _core.estimate_tokens(_measured_text(message_or_text), message_or_text.role.value)
    if isinstance(message_or_text, str):
        return _core.estimate_tokens(message_or_text, _to_role(role).value)
    raise MessageTypeError(f"estimate_tokens takes a Message or a str, not {type_name(message_or_text)}")


def estimate_tokens_many(messages: Iterable[MessageLike]) -> List[int]:
    """Estimates every message of a conversation in one call into the core.

    >>> estimate_tokens_many([Message.user("Hello"), Message.system("Hi")])
    [5, 4]
    """
    texts = []
    roles = []
    for message in read_messages(messages):
        texts.append(_measured_text(message))
        roles.append(ROLE_CODES[message.role])
    return _core.estimate_tokens_many(texts, roles)


# The per-message loops above call measured_text as written: check_calls wraps the public name,
# whose argument-checking frame would cost them a third of their time.
_measured_text = measured_text

# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
