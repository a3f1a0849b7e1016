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

    >>> agentmsg.Message.user("")  # doctest: +SKIP
    MessageError: content is empty ...
    """


class MessageTypeError(AgentMsgError, TypeError):
    """A value has the wrong Python type, e.g. ``Message.user(42)``."""


class ToolCallError(AgentMsgError, ValueError):
    """A text-embedded tool call is malformed (see :func:`agentmsg.validate_tool_call`)."""


class EncodingError(AgentMsgError, ValueError):
    """An unknown token encoding name was given; the message lists the known ones."""


class ToolPairError(AgentMsgError, ValueError):
    """A tool result has no matching call, or a call has no result; names the index."""


class ConversionError(AgentMsgError, ValueError):
    """Input in a provider or framework format is malformed; names the message index and field."""
