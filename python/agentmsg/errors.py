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

import sys
import warnings
from types import FrameType
from typing import Dict, List, Optional

__all__ = [
    "AgentMsgError",
    "MessageError",
    "MessageTypeError",
    "ToolCallError",
    "EncodingError",
    "ToolPairError",
    "ConversionError",
    "MissingDependencyError",
    "DisallowedSpecialTokenError",
    "TokenIdError",
    "UnknownModelError",
    "TranscriptError",
    "TokenizerError",
    "TemplateError",
    "DialectTemplateError",
    "ConversionWarning",
]


#: How much of a caller's path an error message shows.
_MAX_PATH = 120


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


class MissingDependencyError(AgentMsgError, ImportError):
    """An optional dependency a feature needs is not installed; the message says what to install.

    >>> issubclass(MissingDependencyError, ImportError)
    True
    """


class DisallowedSpecialTokenError(AgentMsgError, ValueError):
    """``encode`` met the text of a special token it was not allowed to encode (tiktoken's
    ValueError, with tiktoken's message).

    >>> get_encoding("cl100k_base").encode("<|endoftext|>")
    Traceback (most recent call last):
    ...
    agentmsg.errors.DisallowedSpecialTokenError: Encountered text corresponding to disallowed special token '<|endoftext|>'...
    """


class TokenIdError(AgentMsgError, KeyError):
    """A token id that is no token of the encoding (tiktoken's KeyError).

    >>> get_encoding("cl100k_base").decode([100261])
    Traceback (most recent call last):
    ...
    agentmsg.errors.TokenIdError: 'Invalid token for decoding: 100261'
    """


class UnknownModelError(AgentMsgError, KeyError):
    """A model name that maps to no encoding (tiktoken's KeyError, with tiktoken's message), or
    to no dialect (``dialect_for_model``, whose message says how to describe the model).

    >>> encoding_for_model("my-model")
    Traceback (most recent call last):
    ...
    agentmsg.errors.UnknownModelError: 'Could not automatically map my-model to a tokeniser. ...'
    """


class TokenizerError(AgentMsgError, ValueError):
    """A tokenizer file that cannot be used: missing, not the JSON it should be, or holding what
    :class:`agentmsg.Tokenizer` does not run (a WordPiece model, an unknown normalizer...), named.

    >>> from agentmsg import Tokenizer
    >>> Tokenizer.from_file("/no/such/model")
    Traceback (most recent call last):
    ...
    agentmsg.errors.TokenizerError: no tokenizer file at '/no/such/model'
    """


class TemplateError(AgentMsgError, ValueError):
    """A chat template that cannot be compiled or rendered. ``kind`` says why: ``"syntax"`` (not
    valid Jinja, or an include, import or extends, which templates cannot use; ``line`` names
    the line), ``"raised"`` (the template called ``raise_exception``; ``template_message`` is
    its message), ``"limit"`` (the render ran out of fuel or output) or ``"render"`` (an error
    while rendering, on ``line`` when known).

    >>> from agentmsg import ChatTemplate
    >>> ChatTemplate("{{ raise_exception('Only user and assistant roles are supported') }}").render([])
    Traceback (most recent call last):
    ...
    agentmsg.errors.TemplateError: the template raised: Only user and assistant roles are supported
    """

    def __init__(self, message: str, kind: str = "render", line: Optional[int] = None,
                 template_message: Optional[str] = None) -> None:
        super().__init__(message)
        self.kind, self.line, self.template_message = kind, line, template_message

    def __reduce__(self) -> "tuple[type, tuple[str, str, Optional[int], Optional[str]]]":
        return (type(self), (str(self), self.kind, self.line, self.template_message))

class DialectTemplateError(AgentMsgError, ValueError):
    """A model's chat template or ``response_template`` from which no dialect can be derived; the
    message names the part and says why.

    >>> from agentmsg import Dialect
    >>> Dialect.from_response_template({"start_anchor": "<s>", "fields": {"answer": {"open": "<a>"}}})
    Traceback (most recent call last):
    ...
    agentmsg.errors.DialectTemplateError: response_template field 'answer': agentmsg reads reasoning ...
    """


class TranscriptError(AgentMsgError, ValueError):
    """A transcript file that cannot be read: ``path``, ``line`` (1-based, or None for the whole
    file) and ``reason``; ``str()`` is one line naming all three.

    >>> str(TranscriptError("chat.jsonl", 3, "invalid JSON: Expecting value (column 1)"))
    'chat.jsonl: line 3: invalid JSON: Expecting value (column 1)'
    """

    def __init__(self, path: str, line: Optional[int], reason: str) -> None:
        self.path, self.line, self.reason = path, line, reason
        label = str(path)  # a path of any length gives a short message
        label = label if len(label) <= _MAX_PATH else label[:_MAX_PATH] + "..."
        where = f"{label}: line {line}" if line is not None else label
        super().__init__(f"{where}: {reason}")


class ConversionWarning(UserWarning):
    """A converter dropped something its target format cannot carry, or kept malformed input aside.

    Filter it like any warning, e.g. ``warnings.simplefilter("error", ConversionWarning)`` to
    make every loss an exception.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = agentmsg.to_openai([agentmsg.assistant("42", thinking="add")])
    >>> print(caught[0].message)
    to_openai cannot carry thinking blocks (message 0); they were left out
    """


def warn_caller(message: str) -> None:
    """Warns a :class:`ConversionWarning` at the caller's line: the first frame outside agentmsg,
    however many of the library's frames (helpers, the call checks of every public function)
    lie between it and this one."""
    frame: Optional[FrameType] = sys._getframe()
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "agentmsg":
        frame = frame.f_back
        level += 1
    warnings.warn(message, ConversionWarning, stacklevel=level)


class Losses:
    """Collects what a conversion could not carry, then warns once per kind of loss."""

    __slots__ = ("converter", "found", "consequences")

    def __init__(self, converter: str) -> None:
        self.converter = converter
        self.found: Dict[str, List[int]] = {}
        self.consequences: Dict[str, str] = {}

    def add(self, what: str, index: int, consequence: str = "they were left out") -> None:
        where = self.found.setdefault(what, [])
        self.consequences[what] = consequence
        if not where or where[-1] != index:
            where.append(index)

    def warn(self) -> None:
        for what, where in self.found.items():
            shown = ", ".join(map(str, where[:10])) + (", ..." if len(where) > 10 else "")
            noun = "message" if len(where) == 1 else "messages"
            warn_caller(f"{self.converter} cannot carry {what} ({noun} {shown}); {self.consequences[what]}")
