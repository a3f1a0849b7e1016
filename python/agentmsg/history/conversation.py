"""Helpers over a list of messages (arcaelas' usage patterns): filter, count, summarize.

    >>> import agentmsg
    >>> chat = [agentmsg.system("Be brief"), agentmsg.user("Hi"), agentmsg.assistant("Hello")]
    >>> agentmsg.count_by_role(chat)
    {'system': 1, 'user': 1, 'assistant': 1, 'tool': 0}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Union

from .._checks import check_calls
from ..counting.tokens import estimate_tokens_many
from ..model.message import Message, Role, to_role
from ..readers import MessageLike, read_messages

__all__ = ["filter_by_role", "count_by_role", "ConversationStats", "conversation_stats"]


def filter_by_role(messages: Iterable[MessageLike], role: Union[Role, str]) -> List[Message]:
    """The messages written by ``role``, in order.

    >>> [m.text for m in filter_by_role([Message.user("a"), Message.assistant("b")], "user")]
    ['a']
    """
    wanted = to_role(role)
    return [m for m in read_messages(messages) if m.role is wanted]


def count_by_role(messages: Iterable[MessageLike]) -> Dict[str, int]:
    """How many messages each role wrote; every role appears, in the order of :class:`Role`.

    >>> count_by_role([Message.user("a"), Message.user("b")])["user"]
    2
    """
    counts = {role.value: 0 for role in Role}
    for message in read_messages(messages):
        counts[message.role.value] += 1
    return counts


@dataclass(frozen=True)
class ConversationStats:
    """A summary of a conversation, as :func:`conversation_stats` computes it.

    >>> conversation_stats([Message.user("Hello")]).estimated_tokens
    5
    """

    total_messages: int
    by_role: Dict[str, int]
    chars_by_role: Dict[str, int]
    tokens_by_role: Dict[str, int]
    total_chars: int
    average_length: float
    estimated_tokens: int
    tool_calls: int
    tool_results: int
    last_user_message: Optional[str]
    duration_seconds: float


def conversation_stats(messages: Iterable[MessageLike]) -> ConversationStats:
    """Counts, characters (of ``.text``) and estimated tokens, overall and by role.

    ``duration_seconds`` is the time from the first message's timestamp to the last's.

    >>> s = conversation_stats([Message.user("Hi"), Message.assistant("Hello!")])
    >>> (s.total_messages, s.total_chars, s.by_role["assistant"])
    (2, 8, 1)
    """
    items = read_messages(messages)
    by_role = {role.value: 0 for role in Role}
    chars = {role.value: 0 for role in Role}
    tokens = {role.value: 0 for role in Role}
    estimates = estimate_tokens_many(items)
    tool_calls = 0
    last_user: Optional[str] = None
    for message, estimate in zip(items, estimates):
        role = message.role.value
        by_role[role] += 1
        chars[role] += message.length
        tokens[role] += estimate
        tool_calls += len(message.tool_calls)
        if message.role is Role.USER:
            last_user = message.text
    total_chars = sum(chars.values())
    duration = (items[-1].timestamp - items[0].timestamp).total_seconds() if items else 0.0
    return ConversationStats(
        total_messages=len(items),
        by_role=by_role,
        chars_by_role=chars,
        tokens_by_role=tokens,
        total_chars=total_chars,
        average_length=total_chars / len(items) if items else 0.0,
        estimated_tokens=sum(estimates),
        tool_calls=tool_calls,
        tool_results=by_role[Role.TOOL.value],
        last_user_message=last_user,
        duration_seconds=duration,
    )


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
