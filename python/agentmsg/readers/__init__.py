"""One reading of every form a history comes in, used at the entry of every function that takes
messages (trimming, memory, counting, converters, tool pairs, statistics).

:func:`as_messages` turns a sequence of any mix of these into :class:`Message` objects:

* our :class:`Message` objects (kept as they are: a list of them costs one type check each);
* OpenAI Chat Completions message dicts, read by :func:`agentmsg.from_openai`'s reader;
* the ``openai`` SDK's objects: a ``ChatCompletionMessage``, or a whole ``ChatCompletion``,
  which stands for its first choice's message (``choices[0].message``, with its
  ``finish_reason``; pass ``choice.message`` for another choice);
* Anthropic turns read by :func:`agentmsg.from_anthropic`'s reader: the ``anthropic`` SDK's
  response ``Message``, and ``MessageParam`` dicts whose content holds SDK blocks or Anthropic
  block dicts (``tool_use``, ``tool_result``, ``thinking``, ``image`` with a ``source``...), as in
  Anthropic's documented tool loop ``{"role": "assistant", "content": response.content}``. A
  user turn holding tool results becomes one tool message per result (and a user message for
  its other blocks), so one turn may give several messages;
* LangChain messages (``HumanMessage``, ``AIMessage``, ``ToolMessage``...), read by
  :func:`agentmsg.from_langchain`'s reader;
* any other pydantic model, through ``model_dump()``, then read as above.

A dict whose content is a string, or a list of OpenAI parts (``text``, ``image_url``,
``input_audio``, ``refusal``), is read as OpenAI's. Tool pairs are not checked here (a history
may end with calls still waiting for their results): :func:`agentmsg.check_tool_pairs` does that.

    >>> import agentmsg
    >>> [m.role.value for m in agentmsg.as_messages([agentmsg.user("Hi"), {"role": "assistant", "content": "Hello"}])]
    ['user', 'assistant']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Union

from .._checks import as_list, check_calls, type_name
from ..errors import MessageTypeError
from ..model.blocks import ToolUseBlock
from ..model.message import Message, Role
from ..errors import Losses
from ._fields import plain_data
from .anthropic import messages_from_anthropic
from .langchain import langchain_messages, message_from_langchain
from .openai import message_from_openai, reply_of_completion

__all__ = ["as_messages"]

#: One item :func:`as_messages` reads: a Message, a message dict or an SDK object (see the list
#: in this module's docstring).
MessageLike = Any

#: What :func:`as_messages` reads, for error texts.
EXPECTED = "a Message, an OpenAI or Anthropic message dict, or an SDK message object"

# Block types only Anthropic's content lists hold (OpenAI's parts are text, image_url,
# input_audio, refusal and file): one of them makes a user or assistant dict an Anthropic turn.
_ANTHROPIC_BLOCKS = frozenset((
    "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document",
    "server_tool_use", "web_search_tool_result",
))


def as_messages(messages: Iterable[MessageLike]) -> List[Message]:
    """The messages of ``messages`` (any mix of the forms in this module's list) as a new list
    of :class:`Message`; an item that is none of them is a typed error naming its index.

    A single response (a ``ChatCompletion`` or an Anthropic response ``Message``) stands for
    the list holding it.

    >>> from agentmsg import Message
    >>> as_messages([Message.user("Hi"), {"role": "tool", "tool_call_id": "c1", "content": "42"}])[1].tool_id
    'c1'
    >>> as_messages([{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "calc",
    ...                                               "input": {"a": 1}}]}])[0].tool_calls[0].input
    {'a': 1}
    >>> as_messages([3])
    Traceback (most recent call last):
    ...
    agentmsg.errors.MessageTypeError: messages[0] must be a Message, an OpenAI or Anthropic message dict, or an SDK message object, not int
    """
    return read_messages(messages)


def read_messages(messages: Any, what: str = "messages") -> List[Message]:
    """:func:`as_messages` with the name errors give the sequence (``what[index]``)."""
    items = _items(messages, what)
    for item in items:
        if type(item) is not Message:
            return _read(items, _first_other(items), what, keep_openai_dicts=False)
    return items


def _first_other(items: List[Any]) -> int:
    """The index of the first item that is not exactly a Message (the fast loops above check
    without counting)."""
    return next(index for index, item in enumerate(items) if type(item) is not Message)


def read_message(message: Any, what: str = "message") -> List[Message]:
    """The messages one item gives (one, or several for an Anthropic turn holding tool
    results), for the functions that take a single message; errors name ``what``."""
    if message.__class__ is Message:
        return [message]
    return _read([message], 0, what, keep_openai_dicts=False, single=True)


def messages_or_openai_dicts(messages: Any, what: str = "messages") -> List[Union[Message, Mapping[str, Any]]]:
    """Like :func:`read_messages`, but OpenAI message dicts (and SDK objects that dump to one)
    stay dicts: the exact token counters count the request's own text, as it will be sent."""
    items = _items(messages, what)
    for index, item in enumerate(items):
        cls = item.__class__
        if cls is not Message and (cls is not dict or _shape(item) != "openai"):
            return _read(items, index, what, keep_openai_dicts=True)
    return items


def _items(messages: Any, what: str) -> List[Any]:
    """``messages`` as a new list; a single whole response is a list of one."""
    expected = f"a sequence of messages (each {EXPECTED})"
    if messages.__class__ is not list and messages.__class__ is not tuple and not isinstance(messages, Message):

        data = plain_data(messages)
        if isinstance(data, Mapping):
            if _shape(data) in ("completion", "response"):
                return [messages]
            if data is not messages:  # one SDK message object (pydantic models iterate as fields)
                raise MessageTypeError(f"{what} must be {expected}, not a single {type_name(messages)}")
    return as_list(messages, what, expected)


def _shape(data: Mapping[str, Any]) -> str:
    """Which reader a message dict needs: ``"completion"`` (a whole OpenAI response),
    ``"response"`` (a whole Anthropic response), ``"anthropic"`` (a turn holding Anthropic
    blocks) or ``"openai"``."""
    if "role" not in data:
        if "choices" in data:
            return "completion"
        return "openai"  # its reader names the missing role
    if data.get("type") == "message":
        return "response"
    content = data.get("content")
    if isinstance(content, (list, tuple)) and data.get("role") in ("user", "assistant") \
            and "tool_calls" not in data:
        for block in content:
            if isinstance(block, Mapping):
                kind = block.get("type")
                if kind.__class__ is str and kind in _ANTHROPIC_BLOCKS:
                    return "anthropic"
            elif not isinstance(block, str):
                return "anthropic"  # an SDK block object (OpenAI's content parts are dicts)
    return "openai"


def _read(items: List[Any], start: int, what: str, keep_openai_dicts: bool, single: bool = False) -> List[Any]:
    """Reads ``items[start:]`` (the items before are known to be Messages) into messages."""

    out: List[Any] = items[:start]
    # Tool messages are named after their call, as the converters name them: learn the calls.
    call_names: Dict[str, str] = {}
    for message in out:
        _learn_calls(message, call_names)
    langchain_losses = None
    for index in range(start, len(items)):
        item = items[index]
        where = what if single else f"{what}[{index}]"
        if type(item) is dict:
            data = item
        elif isinstance(item, Message):
            out.append(item)
            _learn_calls(item, call_names)
            continue
        elif type(item).__module__.startswith("langchain_core."):  # (without importing LangChain)
            langchain_losses = langchain_losses or Losses("as_messages")
            out.append(message_from_langchain(langchain_messages(), item, index, langchain_losses))
            _learn_calls(out[-1], call_names)
            continue
        else:
            data = plain_data(item)
        if type(data) is not dict and not isinstance(data, Mapping):
            raise MessageTypeError(f"{where} must be {EXPECTED}, not {type_name(item)}")
        shape = _shape(data)
        if shape == "anthropic" or shape == "response":
            for message in messages_from_anthropic(data, where, {}):
                if message.role is Role.TOOL and message.name is None and message.tool_id in call_names:
                    message = message.replace(name=call_names[message.tool_id])
                out.append(message)
                _learn_calls(message, call_names)
            continue
        fields: Dict[str, Any] = {}
        if shape == "completion":
            data, fields = reply_of_completion(data, where)
            data = plain_data(data)
        calls = data.get("tool_calls")
        if calls and isinstance(calls, (list, tuple)) and any(type(call) is not dict for call in calls):
            # {"tool_calls": message.tool_calls}: the SDK's call objects, as dicts
            data = {**data, "tool_calls": [plain_data(call) for call in calls]}
        if keep_openai_dicts:
            out.append(data)
            continue
        out.append(message_from_openai(data, where, call_names=call_names, **fields))
    if langchain_losses is not None and langchain_losses.found:
        langchain_losses.warn()
    return out


def _learn_calls(message: Any, call_names: Dict[str, str]) -> None:
    if isinstance(message, Message) and message.role is Role.ASSISTANT:  # (kept OpenAI dicts name nothing)
        for block in message.content:
            if type(block) is ToolUseBlock:
                call_names[block.id] = block.name


def check_messages(messages: Iterable[Message], what: str = "messages") -> List[Message]:
    """The messages as a list of Message, read by :func:`agentmsg.as_messages` (dicts and SDK
    objects too); an item it cannot read is an error naming its index."""
    return read_messages(messages, what)


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
