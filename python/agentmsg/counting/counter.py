"""One way to count messages for pruning and compaction, whatever the counter, with one cache.

A counter is ``"estimate"`` (the fast heuristic of :mod:`agentmsg.counting.tokens`), an encoding name
(``"o200k_base"``, ``"cl100k_base"``: exact chat counts, :func:`agentmsg.message_token_counts`)
or a callable ``Message -> int``. :class:`TokenCounter` puts each behind one interface, checks
what a callable returns, and :class:`CountCache` counts each message object once however many
times a memory, a compactor or its policies ask (messages are immutable, so a count never goes
stale).

    >>> from agentmsg import Message
    >>> cache = CountCache(TokenCounter(lambda m: len(m.text)))
    >>> hello = Message.user("Hello")
    >>> cache.counts([hello, hello]), cache.total([hello])
    ([5, 5], 5)
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Sequence, Tuple, Union

from .. import _core
from .._checks import check_calls, describe, type_name
from ..errors import EncodingError, MessageError, MessageTypeError
from ..model.message import Message
from ..readers import MessageLike, read_messages
from .chat_tokens import ChatTokenCounter
from .tokens import estimate_tokens_many, message_token_counts

__all__ = ["Counter", "TokenCounter", "CountCache", "MessageCounter", "token_counter"]

#: What counts a message's tokens: ``"estimate"``, an encoding name, or ``Message -> int``.
Counter = Union[str, Callable[[Message], int]]

_MAX_COUNT = 2**64


def _checked_count(value: object, index: int) -> int:
    if value.__class__ is not int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise MessageTypeError(
                f"counter returned {type(value).__name__} for message {index}; it must return an int"
            )
    if not 0 <= value < _MAX_COUNT:
        shown = value if abs(value) < 10**30 else f"an int of {value.bit_length()} bits"
        raise MessageError(f"counter returned {shown} for message {index}; counts must be in [0, 2**64)")
    return int(value)


class TokenCounter:
    """A counter behind one interface: :meth:`count` one message, :meth:`count_many` a batch.

    ``counter`` is ``"estimate"``, an encoding name, a callable returning an int in
    ``[0, 2**64)``, or another TokenCounter (used as is). Unknown encodings fail here, not on
    first use.

    >>> TokenCounter("estimate").count(Message.user("Hello"))
    5
    >>> TokenCounter(lambda m: 7).count_many([Message.user("a"), Message.user("b")])
    [7, 7]
    """

    __slots__ = ("spec", "count", "count_many")

    spec: Counter
    count: Callable[[Message], int]
    #: ``count_many(messages, positions=None)``: ``positions[i]`` is the index an error names.
    count_many: Callable[..., List[int]]

    def __init__(self, counter: Union[Counter, "TokenCounter"] = "estimate") -> None:
        if isinstance(counter, TokenCounter):
            self.spec, self.count, self.count_many = counter.spec, counter.count, counter.count_many
            return
        self.spec = counter
        if isinstance(counter, str):
            if counter == "estimate":
                estimate = _core.estimate_messages  # read from the message's slots
                self.count = lambda message: estimate((message,))[0]
                self.count_many = lambda messages, positions=None: estimate_tokens_many(messages)
                return
            self._exact(counter)
        elif callable(counter):
            self.count = lambda message: _checked_count(counter(message), 0)
            self.count_many = lambda messages, positions=None: [
                _checked_count(counter(m), i if positions is None else positions[i]) for i, m in enumerate(messages)
            ]
        else:
            raise MessageTypeError(
                f"counter must be 'estimate', an encoding name or a callable, not {type(counter).__name__}"
            )

    def _exact(self, encoding: str) -> None:

        try:
            message_token_counts([], encoding)  # an unknown encoding raises here, not on first use
        except UnicodeError:
            raise EncodingError(f"unknown counter {describe(encoding)}: not an encoding name") from None
        self.count = lambda message: message_token_counts((message,), encoding)[0]
        self.count_many = lambda messages, positions=None: message_token_counts(messages, encoding)

    def __repr__(self) -> str:
        return f"TokenCounter({self.spec!r})"


class CountCache:
    """Counts each message object once: later asks for the same object reuse its count.

    The cache holds the messages it counted (so their identities stay theirs); make one per
    job, or seed it with counts already known (``known``: ``(message, count)`` pairs).

    >>> calls = []
    >>> cache = CountCache(TokenCounter(lambda m: calls.append(m) or 1))
    >>> hi = Message.user("hi")
    >>> cache.total([hi, hi]), cache.total([hi]), len(calls)
    (2, 1, 1)
    """

    __slots__ = ("counter", "_known")

    def __init__(self, counter: Union[Counter, TokenCounter] = "estimate",
                 known: Iterable[Tuple[Message, int]] = ()) -> None:
        self.counter = counter if isinstance(counter, TokenCounter) else TokenCounter(counter)
        # id -> (count, message): holding the message pins its id.
        self._known: Dict[int, Tuple[int, Message]] = {id(m): (c, m) for m, c in known}

    def counts(self, messages: Sequence[Message]) -> List[int]:
        """The count of each message, counting (in one batch) only those not seen before.

        >>> CountCache("estimate").counts([Message.user("Hello")])
        [5]
        """
        known = self._known
        fresh = [m for m in messages if id(m) not in known]
        if fresh:
            unique = list({id(m): m for m in fresh}.values())
            for message, value in zip(unique, self.counter.count_many(unique)):
                known[id(message)] = (value, message)
        return [known[id(m)][0] for m in messages]

    def total(self, messages: Sequence[Message]) -> int:
        """The sum of :meth:`counts`.

        >>> CountCache("estimate").total([Message.user("Hello"), Message.user("Hi")])
        9
        """
        return sum(self.counts(messages))


class MessageCounter(CountCache):
    """A :class:`CountCache` for an encoding name, ``"estimate"``, an open model's
    :class:`agentmsg.ChatTokenCounter` or another counter, called on one message: a replay counts each message
    once, not once per prompt it appears in. ``base`` is the request's fixed cost beyond its
    messages' counts (the chat counter's :attr:`~agentmsg.ChatTokenCounter.base`; 0 otherwise).

    >>> count = MessageCounter("o200k_base")
    >>> m = Message.user("Hello, world!")
    >>> (count(m), count.total([m, m]), count.base)
    (8, 16, 0)
    """

    __slots__ = ("encoding", "base")

    def __init__(self, encoding: Counter = "o200k_base") -> None:
        super().__init__(encoding)
        self.encoding = encoding
        self.base = encoding.base if isinstance(encoding, ChatTokenCounter) else 0

    def __call__(self, message: Message) -> int:
        if not isinstance(message, Message):
            raise MessageTypeError(f"message must be a Message, not {type_name(message)}")
        return self.counts((message,))[0]

    def total(self, messages: Iterable[MessageLike]) -> int:
        """The sum of the messages' counts (any form :func:`agentmsg.as_messages` reads).

        >>> MessageCounter("estimate").total([Message.user("Hello")])
        5
        """
        return super().total(read_messages(messages))


def token_counter(counter: Counter) -> Callable[[Sequence[Message]], List[int]]:
    """The batch form of ``counter``: a function from messages to their token counts (see
    :class:`agentmsg.counting.TokenCounter`, which this returns the ``count_many`` of).

    ``"estimate"`` is the fast heuristic (:func:`agentmsg.estimate_tokens_many`); an encoding
    name (``"o200k_base"``, ``"cl100k_base"``) gives exact per-message chat counts
    (:func:`agentmsg.message_token_counts`); a callable is called once per message and must
    return an int >= 0.

    >>> token_counter("estimate")([Message.user("Hello")])
    [5]
    >>> token_counter(lambda m: len(m.text))([Message.user("Hello")])
    [5]
    """
    return TokenCounter(counter).count_many


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
