"""The message model: `Role` and the immutable `Message` (Forge, arcaelas, Wolo and AgentScope).

    >>> import agentmsg
    >>> str(agentmsg.user("What's the weather?"))
    "Message(user): What's the weather?"
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from dataclasses import FrozenInstanceError
from datetime import datetime, timezone
from enum import Enum, EnumMeta
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union, cast

from .._checks import (
    MAX_JSON_DEPTH, as_list, check_calls, describe, json_copy, json_copy_dict, optional_str, require_bool,
    require_int, type_name, unexpected_keyword, utf8_json,
)
from ..errors import MessageError, MessageTypeError
from ..options import PARSE_OPTION_NAMES, ParseOptions
from .blocks import (
    SERVER_BLOCKS, Block, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, block_from_dict, block_to_dict,
    coerce_blocks,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Role", "Message", "system", "user", "assistant", "tool", "ROLE_CODES"]


class _RoleType(EnumMeta):
    def __call__(cls, value, *args, **kwargs):  # type: ignore[no-untyped-def]
        # Role(x) is a lookup: checked like every role argument (case-insensitive, typed error
        # naming the valid roles) instead of Enum's bare ValueError with the value's whole repr.
        # It takes nothing else (Enum's functional API cannot extend an enum with members).
        if kwargs:
            raise unexpected_keyword("Role", min(kwargs), ["value"])
        if args:
            raise MessageTypeError(f"Role() takes one value, a role name, not {1 + len(args)}")
        return to_role(value)


class Role(str, Enum, metaclass=_RoleType):
    """Who wrote a message. A ``str`` enum, so ``Role.USER == "user"``.

    ``Role(name)`` is case-insensitive; anything else is a ``MessageError`` (a ``ValueError``)
    or ``MessageTypeError`` (a ``TypeError``).

    >>> Role("tool") is Role.TOOL
    True
    >>> Role("TOOL") is Role.TOOL
    True
    """

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"

    def __str__(self) -> str:
        return self.value


# Role.X goes through EnumType's __getattr__ hook (about 90 ns a lookup): hot code uses these.
SYSTEM_ROLE, USER_ROLE, ASSISTANT_ROLE, TOOL_ROLE = Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL
ROLE_NAMES = {role: role._value_ for role in Role}  # role.value is an enum property: slower
_VALID_ROLES = ", ".join(r.value for r in Role)
_ROLE_BY_NAME = {r.value: r for r in Role}

ContentInput = Union[str, Block, Sequence[Block]]

# to_json's indent: wider is no use to a reader, and a huge one would only make a huge text.
_MAX_INDENT = 64

# str(msg) shows at most this many characters of content before cutting (arcaelas).
_STR_LIMIT = 50
_STR_KEEP = 47


def to_role(value: object) -> Role:
    if isinstance(value, Role):
        return value
    if not isinstance(value, str):
        raise MessageTypeError(f"role must be a str or Role, not {type_name(value)}")
    value = str.__str__(value)  # a str subclass's own hash or lower() must not decide
    role = _ROLE_BY_NAME.get(value) or _ROLE_BY_NAME.get(value.lower())
    if role is None:
        raise MessageError(f"unknown role {describe(value)}; valid roles: {_VALID_ROLES}")
    return role


_now = time.time  # the creation time, kept as a number until ``timestamp`` is read


def _to_timestamp(value: object) -> datetime:
    if value is None:
        return datetime.now(timezone.utc)
    if isinstance(value, datetime):
        # A naive datetime is taken to be UTC; an aware one is converted to UTC.
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, timezone.utc)
        except (OverflowError, ValueError, OSError):
            raise MessageError(f"timestamp {describe(value)} is not a representable epoch time") from None
    if isinstance(value, str):
        value = str.__str__(value)
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise MessageError(f"timestamp is not ISO 8601: {describe(value)}") from None
        return _to_timestamp(parsed)
    raise MessageTypeError(
        f"timestamp must be a datetime, ISO 8601 str or epoch number, not {type_name(value)}"
    )


def format_timestamp(ts: datetime) -> str:
    return ts.isoformat(timespec="microseconds").replace("+00:00", "Z")


# Ids are a random per-process prefix plus a counter: unique across processes like a uuid4, but
# without a system call per message (message construction is a hot path of every converter).
_ID_PREFIX = "msg_" + os.urandom(8).hex()
_id_counter = itertools.count()


def _new_id_prefix() -> None:
    global _ID_PREFIX, _id_counter  # a forked child must not repeat its parent's ids
    _ID_PREFIX = "msg_" + os.urandom(8).hex()
    _id_counter = itertools.count()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_id_prefix)


def _new_id() -> str:
    return f"{_ID_PREFIX}{next(_id_counter):016x}"


def give_ids(messages: Sequence["Message"], prefix: str) -> None:
    """Gives each message that has no id yet the id ``prefix`` + its position as 16 hex digits
    (the shape of a made id, with a prefix the caller derives from the input instead of a random
    one), so the same input always gives the same ids. Only for messages just built, whose id
    nobody has read: it fills the lazy id slot."""
    for position, message in enumerate(messages):
        if message._id is None:
            _set_id(message, f"{prefix}{position:016x}")


def _check_content(role: Role, content: Tuple[Block, ...]) -> None:
    # One pass: block placement, and whether anything but empty text is there.
    empty = True
    block: Any  # dispatched on its class, which mypy cannot follow through `kind`
    for index, block in enumerate(content):
        kind = block.__class__
        if kind is TextBlock:
            if block.text:
                empty = False
            continue
        empty = False  # a tool call alone, an image alone... is content
        if kind is ToolUseBlock and role is ASSISTANT_ROLE or kind is ToolResultBlock and role is TOOL_ROLE:
            continue
        if isinstance(block, ToolUseBlock) and role is not ASSISTANT_ROLE:
            raise MessageError(
                f"content[{index}]: a tool_use block belongs in an assistant message, not {role.value}"
            )
        if isinstance(block, ToolResultBlock) and role is not TOOL_ROLE:
            raise MessageError(
                f"content[{index}]: a tool_result block belongs in a tool message, not {role.value}"
            )
        if isinstance(block, SERVER_BLOCKS) and role is not ASSISTANT_ROLE:
            # the provider ran the tool and answered it within the model's own turn
            raise MessageError(
                f"content[{index}]: a {block.type} block belongs in an assistant message, not {role.value}"
            )
    # An empty tool result is a real result (a command with no output).
    if empty and role is not TOOL_ROLE:
        raise MessageError(f"content is empty: a {role.value} message needs text or other content")


def _tool_result(
    content: Tuple[Block, ...], tool_id: Optional[str], is_error: bool
) -> Tuple[Tuple[Block, ...], Optional[str]]:
    """Brings tool content to its canonical form: one ToolResultBlock that agrees with tool_id."""
    results = [b for b in content if isinstance(b, ToolResultBlock)]
    if not results:
        return (ToolResultBlock(tool_id or "", content, is_error),), tool_id
    if len(results) > 1 or len(content) > 1:
        raise MessageError(
            "a tool message carries exactly one tool_result block; split several results into "
            "several tool messages"
        )
    result = results[0]
    if tool_id is None:
        tool_id = result.tool_use_id or None
    elif result.tool_use_id and result.tool_use_id != tool_id:
        raise MessageError(
            f"tool_id {describe(tool_id)} does not match the tool_result's tool_use_id "
            f"{describe(result.tool_use_id)}"
        )
    elif not result.tool_use_id:
        result = ToolResultBlock(tool_id, result.output, result.is_error)
    return (result,), tool_id


class _MessageSlots:
    """The storage of a :class:`Message`: plain slots, written once while a message is built."""

    __slots__ = ("role", "content", "name", "tool_id", "finished", "finish_reason",
                 "reasoning_content", "_id", "_created", "_metadata")

    role: Role
    content: Tuple[Block, ...]
    name: Optional[str]
    tool_id: Optional[str]
    finished: Optional[bool]
    finish_reason: Optional[str]
    reasoning_content: Optional[str]
    _id: Optional[str]
    _created: Union[datetime, float]  # the epoch seconds until `timestamp` is read
    _metadata: Optional[Dict[str, Any]]  # None until `metadata` is read, when empty


# Building writes the slots of a _MessageSlots and then makes it a Message: plain attribute
# stores, where a frozen class's object.__setattr__ per field costs about 1 µs per message.
_new_slots = object.__new__
_become = object.__setattr__
_set_id = vars(_MessageSlots)["_id"].__set__  # the slots' own descriptors
_set_created = vars(_MessageSlots)["_created"].__set__
_set_metadata = vars(_MessageSlots)["_metadata"].__set__
# Guards the first read of a lazy id or metadata, so two threads never see two values.
_LAZY = threading.Lock()
class Message(_MessageSlots):
    """One message of a conversation. Immutable: use :meth:`replace` for a changed copy.

    ``content`` is a tuple of blocks; a plain string becomes one :class:`TextBlock`. A tool
    message holds exactly one :class:`ToolResultBlock` and links to its call by ``tool_id``
    (Forge's name-only results give ``name`` instead).

    A message costs little until asked: the id is made the first time it is read, the creation
    time is kept as a number until ``timestamp`` is read, and empty metadata is a dict only once
    ``metadata`` is read.

    >>> m = Message("user", "Hello world")
    >>> (m.role, m.text, m.length)
    (<Role.USER: 'user'>, 'Hello world', 11)
    """

    __slots__ = ()
    # Written out: type checkers read match patterns only from a literal tuple.
    __match_args__ = ("role", "content", "name", "id", "timestamp", "metadata", "tool_id", "finished",
                      "finish_reason", "reasoning_content")

    def __new__(
        cls,
        role: Union[Role, str],
        content: ContentInput,
        *,
        name: Optional[str] = None,
        id: Optional[str] = None,
        timestamp: Union[datetime, str, float, None] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        tool_id: Optional[str] = None,
        finished: Optional[bool] = None,
        finish_reason: Optional[str] = None,
        reasoning_content: Optional[str] = None,
    ) -> "Message":
        role = role if role.__class__ is Role else to_role(role)
        if content.__class__ is str:
            blocks: Tuple[Block, ...] = (TextBlock(content),)
            if not content and role is not TOOL_ROLE:
                _check_content(role, blocks)  # raises: empty
        else:
            blocks = coerce_blocks(content, "content")
            _check_content(role, blocks)
        if not (name is id is tool_id is finish_reason is reasoning_content is None):
            name = optional_str(name, "name")
            id = optional_str(id, "id")
            tool_id = optional_str(tool_id, "tool_id")
            finish_reason = optional_str(finish_reason, "finish_reason")
            reasoning_content = optional_str(reasoning_content, "reasoning_content")
        if finished is not None and finished is not True and finished is not False:
            raise MessageTypeError(f"finished must be a bool or None, not {type_name(finished)}")
        # A checked deep copy: the message holds JSON values no caller shares.
        if metadata is not None and (metadata.__class__ is not dict or metadata):
            metadata = json_copy_dict(metadata, "metadata")
        else:
            metadata = None  # made on first read
        if role is TOOL_ROLE:
            blocks, tool_id = _tool_result(blocks, tool_id, False)
            if not tool_id and not name:
                raise MessageError(
                    "a tool message needs tool_id (the id of the call it answers) or name "
                    "(the tool's name)"
                )
        elif tool_id is not None:
            raise MessageError(f"tool_id is only for tool messages, not {role.value}")
        self = _new_slots(_MessageSlots)
        self.role = role
        self.content = blocks
        self.name = name
        self.tool_id = tool_id
        self.finished = finished
        self.finish_reason = finish_reason
        self.reasoning_content = reasoning_content
        self._id = id
        self._created = _now() if timestamp is None else _to_timestamp(timestamp)
        self._metadata = metadata
        if cls is Message:
            _become(self, "__class__", Message)
            return self  # type: ignore[return-value]
        # A subclass may add slots or a __dict__: built the slow way, field by field.
        built = _new_slots(cls)
        for slot in _MessageSlots.__slots__:
            _become(built, slot, getattr(self, slot))
        return built

    # -- fields made on first read ---------------------------------------------------------------

    @property
    def id(self) -> str:
        """The message id: as given, else ``msg_`` + a per-process prefix + a counter, made the
        first time it is read (unique across threads and processes).

        >>> Message.user("Hi", id="m1").id
        'm1'
        """
        value = self._id
        if value is None:
            with _LAZY:
                value = self._id
                if value is None:
                    value = _new_id()
                    _set_id(self, value)
        return value

    @property
    def timestamp(self) -> datetime:
        """When the message was made (or the time it was given), a timezone-aware UTC datetime.

        >>> Message.user("Hi", timestamp="2024-01-15T10:30:00Z").timestamp.isoformat()
        '2024-01-15T10:30:00+00:00'
        """
        value = self._created
        if value.__class__ is float:
            value = datetime.fromtimestamp(value, timezone.utc)
            _set_created(self, value)  # any thread makes the same datetime
        return cast(datetime, value)

    @property
    def metadata(self) -> Dict[str, Any]:
        """Extra JSON data the message carries (a dict of its own; ``{}`` when none).

        >>> Message.user("Hi", metadata={"source": "web"}).metadata
        {'source': 'web'}
        """
        value = self._metadata
        if value is None:
            with _LAZY:
                value = self._metadata
                if value is None:
                    value = {}
                    _set_metadata(self, value)
        return value

    # -- a frozen value --------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> Tuple[Any, ...]:
        return (self.role, self.content, self.name, self.id, self.timestamp, self.metadata,
                self.tool_id, self.finished, self.finish_reason, self.reasoning_content)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # metadata is a dict

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in zip(_FIELDS, self._values()))
        return f"{type(self).__qualname__}({shown})"

    def __reduce__(self) -> Tuple[Any, ...]:
        # Rebuilt through the constructor, with the id and time read (so a copy is equal).
        return (_unpickle, self._values())

    # -- constructors -------------------------------------------------------------------------

    @classmethod
    def system(cls, text: ContentInput, **kwargs: Any) -> "Message":
        """A system message.

        >>> Message.system("You are a helpful assistant").role
        <Role.SYSTEM: 'system'>
        """
        return cls(SYSTEM_ROLE, text, **kwargs)

    @classmethod
    def user(cls, content: ContentInput, **kwargs: Any) -> "Message":
        """A user message; ``content`` is text or a list of blocks (e.g. text plus an image).

        >>> Message.user("Hi").text
        'Hi'
        """
        return cls(USER_ROLE, content, **kwargs)

    @classmethod
    def assistant(
        cls,
        text: str = "",
        tool_calls: Iterable[ToolUseBlock] = (),
        *,
        thinking: Optional[str] = None,
        **kwargs: Any,
    ) -> "Message":
        """An assistant reply: optional thinking, then text, then tool calls.

        >>> call = ToolUseBlock("call_1", "calculator", {"a": 5})
        >>> Message.assistant(tool_calls=[call]).has_tool_calls
        True
        """
        if not isinstance(text, str):
            raise MessageTypeError(f"text must be a str, not {type_name(text)}")
        calls = as_list(tool_calls, "tool_calls", "a list of ToolUseBlock")
        for index, call in enumerate(calls):
            if not isinstance(call, ToolUseBlock):
                raise MessageTypeError(
                    f"tool_calls[{index}] must be a ToolUseBlock, not {type_name(call)}"
                )
        thinking = optional_str(thinking, "thinking")
        blocks: List[Block] = []
        if thinking is not None:
            blocks.append(ThinkingBlock(thinking))
        if text or not calls:
            blocks.append(TextBlock(text))
        blocks.extend(calls)
        return cls(ASSISTANT_ROLE, blocks, **kwargs)

    @classmethod
    def tool(
        cls,
        result: ContentInput,
        *,
        tool_id: Optional[str] = None,
        name: Optional[str] = None,
        is_error: bool = False,
        **kwargs: Any,
    ) -> "Message":
        """A tool result, linked to its call by ``tool_id`` (or, Forge style, by ``name``).

        >>> str(Message.tool("Result data here", tool_id="weather_001"))
        'Message(tool) [weather_001]: Result data here'
        """
        require_bool(is_error, "is_error")
        tool_id = optional_str(tool_id, "tool_id")
        if isinstance(result, ToolResultBlock):
            block = result
        else:
            block = ToolResultBlock(tool_id or "", coerce_blocks(result, "result"), is_error)
        return cls(TOOL_ROLE, [block], tool_id=tool_id, name=name, **kwargs)

    @classmethod
    def from_text(
        cls,
        role: Union[Role, str],
        text: str,
        *,
        name: Optional[str] = None,
        id: Optional[str] = None,
        timestamp: Union[datetime, str, float, None] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        tool_id: Optional[str] = None,
        finished: Optional[bool] = None,
        finish_reason: Optional[str] = None,
        reasoning_content: Optional[str] = None,
        **options: Unpack[ParseOptions],
    ) -> "Message":
        """Builds a message from model text, parsing thinking and tool calls into blocks.

        Only what a model wrote is parsed: for an assistant message the text goes through
        :func:`agentmsg.parse` with ``options`` (its keyword options: ``dialect``, ``tools``,
        ``thinking``...); for any other role it is kept as written (a user message or an
        observation may well contain ``[File: x]`` lines or tags that are not thoughts), and the
        options are only checked. The other keywords are the message's fields. A tool call the
        parser could not use is kept: ``metadata["parse_errors"]`` holds each
        :class:`~agentmsg.ParseIssue` as a dict (``kind``, ``message``, ``span``, ``raw``).

        >>> m = Message.from_text("assistant", "[Let me check]\\nIt is 42.")
        >>> (m.thinking, m.text)
        ('Let me check', 'It is 42.')
        >>> Message.from_text("user", "[File: a.py]").text
        '[File: a.py]'
        >>> reply = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
        >>> Message.from_text("assistant", reply, dialect="hermes").tool_calls[0].name
        'f'
        """
        from ..parsing import parse

        if not isinstance(text, str):
            raise MessageTypeError(f"text must be a str, not {type_name(text)}")
        unknown = options.keys() - PARSE_OPTION_NAMES
        if unknown:
            raise unexpected_keyword("Message.from_text", min(unknown), _FROM_TEXT_ARGUMENTS)
        fields: Dict[str, Any] = {
            "name": name, "id": id, "timestamp": timestamp, "metadata": metadata, "tool_id": tool_id,
            "finished": finished, "finish_reason": finish_reason, "reasoning_content": reasoning_content,
        }
        if to_role(role) is not ASSISTANT_ROLE:
            if options:  # checked by the parser they would build, though only assistant text is parsed
                parse("", **options)
            return cls(role, text, **fields)
        parsed = parse(text, **options)
        if parsed.errors:  # nothing the model wrote is dropped
            fields["metadata"] = _with_parse_errors(metadata, parsed.errors)
        return cls(role, parsed.blocks if parsed.blocks else text, **fields)

    # -- views ---------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The text blocks joined with newlines; for a tool message, the result's text.

        >>> Message.user([TextBlock("a"), TextBlock("b")]).text
        'a\\nb'
        """
        parts = []
        for block in self.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolResultBlock):
                parts.append(block.text)
        return "\n".join(parts)

    @property
    def tool_calls(self) -> Tuple[ToolUseBlock, ...]:
        """The tool-use blocks, in order.

        >>> Message.user("hi").tool_calls
        ()
        """
        return tuple(b for b in self.content if isinstance(b, ToolUseBlock))

    @property
    def has_tool_calls(self) -> bool:
        """Whether the message calls any tool.

        >>> Message.assistant("done").has_tool_calls
        False
        """
        return any(isinstance(b, ToolUseBlock) for b in self.content)

    @property
    def thinking(self) -> str:
        """The thinking blocks joined with newlines, else ``reasoning_content``, else ``""``.

        >>> Message.assistant("42", thinking="add them").thinking
        'add them'
        """
        parts = [b.thinking for b in self.content if isinstance(b, ThinkingBlock)]
        if parts:
            return "\n".join(parts)
        return self.reasoning_content or ""

    @property
    def length(self) -> int:
        """Character length of :attr:`text` (arcaelas).

        >>> Message.user("Hello world").length
        11
        """
        return len(self.text)

    @property
    def is_error(self) -> bool:
        """For a tool message, whether the result is an error; else False.

        >>> Message.tool("boom", name="calc", is_error=True).is_error
        True
        """
        return any(isinstance(b, ToolResultBlock) and b.is_error for b in self.content)

    def __str__(self) -> str:
        text = self.text
        if len(text) > _STR_LIMIT:
            text = text[:_STR_KEEP] + "..."
        link = f" [{self.tool_id}]" if self.tool_id else ""
        return f"Message({self.role.value}){link}: {text}"

    # -- copies and serialization --------------------------------------------------------------

    def replace(self, **changes: Any) -> "Message":
        """A copy with some fields changed; the result is validated like a new message.

        >>> Message.user("Hi", id="m1").replace(content="Hello").id
        'm1'
        """
        values = dict(zip(_FIELDS, self._values()))
        unknown = [key for key in changes if key not in values]
        if unknown:
            raise unexpected_keyword("Message.replace", min(unknown), _FIELDS)
        values.update(changes)
        role = values.pop("role")
        content = values.pop("content")
        return Message(role, content, **values)

    def to_dict(self) -> Dict[str, Any]:
        """Plain JSON-ready data in AgentScope's shape; optional fields appear only when set.

        >>> d = Message.user("Hi", id="m1", timestamp="2024-01-15T10:30:00Z").to_dict()
        >>> d["content"], d["timestamp"]
        ([{'type': 'text', 'text': 'Hi'}], '2024-01-15T10:30:00.000000Z')
        """
        data: Dict[str, Any] = {
            "name": self.name,
            "role": self.role.value,
            "content": [block_to_dict(b) for b in self.content],
            "metadata": json_copy(self.metadata, "metadata"),  # a copy: the message stays as it is
            "id": self.id,
            "timestamp": format_timestamp(self.timestamp),
        }
        for key in ("tool_id", "finished", "finish_reason", "reasoning_content"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Message":
        """Reads :meth:`to_dict` output, or arcaelas' flat shape (``content`` a string).

        >>> Message.from_dict({"role": "tool", "content": "Data", "tool_id": "calc_123"}).text
        'Data'
        """
        if not isinstance(data, Mapping):
            raise MessageTypeError(f"message must be a dict, not {type_name(data)}")
        if "role" not in data:
            raise MessageError("message is missing field 'role'")
        if "content" not in data:
            raise MessageError("message is missing field 'content'")
        content = data["content"]
        if isinstance(content, list):
            content = [block_from_dict(b, f"content[{i}]") for i, b in enumerate(content)]
        elif not isinstance(content, str):
            raise MessageTypeError(f"content must be a str or a list of blocks, not {type_name(content)}")
        known = ("name", "id", "timestamp", "metadata", "tool_id", "finished", "finish_reason",
                 "reasoning_content")
        return cls(data["role"], content, **{k: data[k] for k in known if k in data})

    def to_json(
        self,
        *,
        indent: Union[int, str, None] = None,
        sort_keys: bool = False,
        separators: Optional[Tuple[str, str]] = None,
    ) -> str:
        """:meth:`to_dict` as JSON text; the options mean what they mean to ``json.dumps``.

        Non-ASCII text is written as is, unless the message holds lone surrogates (they cannot
        be UTF-8): then the whole text uses ``\\u`` escapes, which keep them losslessly.

        >>> Message.user("Hi", id="m1").to_json().startswith('{"name": null, "role": "user"')
        True
        """
        if indent is not None and not isinstance(indent, str):
            indent = require_int(indent, "indent")
            if indent > _MAX_INDENT:
                raise MessageError(f"indent must be at most {_MAX_INDENT}, not {describe(indent)}")
        elif isinstance(indent, str) and len(indent) > _MAX_INDENT:
            raise MessageError(f"indent must be at most {_MAX_INDENT} characters")
        options: Dict[str, Any] = {"indent": indent, "sort_keys": require_bool(sort_keys, "sort_keys")}
        if separators is not None:
            if (not isinstance(separators, (tuple, list)) or len(separators) != 2
                    or not all(isinstance(part, str) for part in separators)):
                raise MessageTypeError("separators must be a pair of str, such as (', ', ': ')")
            options["separators"] = (str.__str__(separators[0]), str.__str__(separators[1]))
        return utf8_json(self.to_dict(), **options)

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> "Message":
        """Reads :meth:`to_json` output (or arcaelas' JSON); bad JSON names line and column.

        >>> Message.from_json('{"role": "user", "content": "Hi"}').text
        'Hi'
        """
        if not isinstance(text, (str, bytes, bytearray)):
            raise MessageTypeError(f"text must be a str or bytes, not {type_name(text)}")
        try:
            data = json.loads(text)
        except UnicodeDecodeError as error:
            raise MessageError(f"JSON bytes are not valid UTF-8: {error.reason} at byte {error.start}") from None
        except json.JSONDecodeError as error:
            raise MessageError(
                f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
            ) from None
        except ValueError as error:  # an int of more digits than Python converts
            raise MessageError(f"invalid JSON: {str(error)[:100]}") from None
        except RecursionError:
            raise MessageError(
                f"invalid JSON: nested deeper than Python's json reader goes (JSON values in a "
                f"message nest at most {MAX_JSON_DEPTH} deep)"
            ) from None
        return cls.from_dict(data)


def _unpickle(role: Role, content: Tuple[Block, ...], name: Optional[str], id: str,
              timestamp: datetime, metadata: Dict[str, Any], tool_id: Optional[str],
              finished: Optional[bool], finish_reason: Optional[str],
              reasoning_content: Optional[str]) -> Message:
    return Message(role, content, name=name, id=id, timestamp=timestamp, metadata=metadata,
                   tool_id=tool_id, finished=finished, finish_reason=finish_reason,
                   reasoning_content=reasoning_content)


#: What Message.from_text takes: a message's role, text and fields, then parse's options.
_FROM_TEXT_ARGUMENTS = ("role", "text", *Message.__match_args__[2:], *PARSE_OPTION_NAMES)


def _with_parse_errors(metadata: Optional[Mapping[str, Any]], errors: Sequence[Any]) -> Dict[str, Any]:
    """``metadata`` plus ``parse_errors``: each bad tool call's kind, message, span and raw text."""
    if metadata is not None and not isinstance(metadata, Mapping):
        raise MessageTypeError(f"metadata must be a dict, not {type_name(metadata)}")
    if metadata is not None and "parse_errors" in metadata:
        raise MessageError("metadata['parse_errors'] is where from_text keeps the tool calls it could not "
                           "use: the text has some, so the key must be free")
    issues = [{"kind": e.kind, "message": e.message, "span": list(e.span), "raw": e.raw} for e in errors]
    return {**(metadata or {}), "parse_errors": issues}


def metadata_view(message: Message) -> Mapping[str, Any]:
    """A message's metadata for reading, without making a dict when it has none.

    >>> dict(metadata_view(Message.user("Hi", metadata={"k": 1})))
    {'k': 1}
    """
    value = message._metadata
    return _NO_METADATA if value is None else value


_NO_METADATA: Mapping[str, Any] = MappingProxyType({})


def system(text: ContentInput, **kwargs: Any) -> Message:
    """Same as :meth:`Message.system`.

    >>> system("Be brief").role.value
    'system'
    """
    return Message.system(text, **kwargs)


def user(content: ContentInput, **kwargs: Any) -> Message:
    """Same as :meth:`Message.user`.

    >>> user("Hi").text
    'Hi'
    """
    return Message.user(content, **kwargs)


def assistant(
    text: str = "", tool_calls: Iterable[ToolUseBlock] = (), **kwargs: Any
) -> Message:
    """Same as :meth:`Message.assistant`.

    >>> assistant("Paris").text
    'Paris'
    """
    return Message.assistant(text, tool_calls, **kwargs)


def tool(result: ContentInput, **kwargs: Any) -> Message:
    """Same as :meth:`Message.tool`.

    >>> tool("Result: 8", name="calculator").name
    'calculator'
    """
    return Message.tool(result, **kwargs)

#: The fields of a message, in order (its ``repr`` and ``to_dict`` read them through this).
_FIELDS = Message.__match_args__


#: The code of each role in the arrays handed to the Rust core.
ROLE_CODES: Dict[Role, int] = {Role.SYSTEM: 0, Role.USER: 1, Role.ASSISTANT: 2, Role.TOOL: 3}


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
