"""The exceptions agentmsg raises.

Every one subclasses :class:`AgentMsgError`, and also the builtin that fits, so code that already
catches ``ValueError`` or ``TypeError`` keeps working::

    >>> import agentmsg
    >>> try:
    ...     agentmsg.Message("robot", "hi")
    ... except ValueError as error:
    ...     print(type(error).__name__)
    MessageError
"""

from __future__ import annotations

__all__ = [
    "AgentMsgError",
    "MessageError",
    "MessageTypeError",
    "ToolCallError",
    "EncodingError",
    "ToolPairError",
    "ConversionError",
]


class AgentMsgError(Exception):
    """Base class of every agentmsg error.

    >>> issubclass(agentmsg.MessageError, agentmsg.AgentMsgError)
    True
    """


class MessageError(AgentMsgError, ValueError):
    """A message is invalid: unknown role, empty content, missing tool link, misplaced block.

    >>> agentmsg.Message.user("")
    Traceback (most recent call last):
    ...
    agentmsg.errors.MessageError: content is empty: a user message needs text or other content
    """


class MessageTypeError(AgentMsgError, TypeError):
    """A value has the wrong Python type.

    >>> agentmsg.Message.user(42)
    Traceback (most recent call last):
    ...
    agentmsg.errors.MessageTypeError: content must be a str or a list of blocks, not int
    """


class ToolCallError(AgentMsgError, ValueError):
    """A text-embedded tool call is malformed (see :func:`agentmsg.validate_tool_call`).

    >>> agentmsg.validate_tool_call("no call here")
    Traceback (most recent call last):
    ...
    agentmsg.errors.ToolCallError: missing <tool> tag
    """


class EncodingError(AgentMsgError, ValueError):
    """An unknown token encoding name was given; the message lists the known ones.

    >>> issubclass(agentmsg.EncodingError, ValueError)
    True
    """


class ToolPairError(AgentMsgError, ValueError):
    """A tool result has no matching call, or a call has no result; names the index.

    >>> agentmsg.check_tool_pairs([agentmsg.tool("42", tool_id="call_9")])
    Traceback (most recent call last):
    ...
    agentmsg.errors.ToolPairError: messages[0]: tool result for call id 'call_9' has no matching tool call before it
    """


class ConversionError(AgentMsgError, ValueError):
    """Input in a provider or framework format is malformed; names the message index and field.

    >>> agentmsg.from_openai([{"role": "robot", "content": "hi"}])
    Traceback (most recent call last):
    ...
    agentmsg.errors.ConversionError: messages[0].role: ...
    """
