"""LangChain's ``trim_messages``, with the selection done by agentmsg's core.

:func:`trim_messages` has the signature and meaning of ``langchain_core.messages.trim_messages``
and takes and returns LangChain messages (the same objects; only a message cut by
``allow_partial`` is a copy), but it never splits a tool call from its results (LangChain
issue 33245: LangChain's can return a ``ToolMessage`` whose ``AIMessage`` was trimmed away, which
providers reject), and it reads only the messages it may keep: the history is walked from the
kept end and counting stops once the budget is spent. ``docs/langchain.md`` lists every place its
result differs from LangChain's, and why.

    >>> from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    >>> chat = [SystemMessage("Be brief"), HumanMessage("2+2?"),
    ...         AIMessage("", tool_calls=[{"id": "c1", "name": "calc", "args": {"a": 2}}]),
    ...         ToolMessage("4", tool_call_id="c1"), AIMessage("It is 4")]
    >>> [m.type for m in trim_messages(chat, max_tokens=20, token_counter="approximate",
    ...                                include_system=True)]
    ['system', 'ai']
"""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _core
from ._checks import check_calls, describe
from .convert.langchain import from_langchain, to_langchain
from .counting.counter import TokenCounter
from .counting.encoding import resolve_encoding
from .errors import EncodingError, MessageError, MessageTypeError, warn_caller
from .history.check import CheckedProvider, repair
from .history.trim import check_budget
from .model.message import ROLE_CODES, Role
from .readers.langchain import langchain_messages

if TYPE_CHECKING:
    from .options import TrimStrategy

__all__ = ["trim_messages"]

_SYSTEM, _USER, _ASSISTANT, _TOOL = (ROLE_CODES[r] for r in (Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL))
#: Role codes of LangChain's message types (a ChatMessage's by its role).
_TYPE_CODES = {"human": _USER, "ai": _ASSISTANT, "system": _SYSTEM, "tool": _TOOL, "function": _TOOL}
_CHAT_ROLE_CODES = {"user": _USER, "human": _USER, "assistant": _ASSISTANT, "ai": _ASSISTANT,
                    "system": _SYSTEM, "developer": _SYSTEM, "tool": _TOOL, "function": _TOOL}

TypeRule = Union[str, type, Sequence[Union[str, type]], None]


def trim_messages(
    messages: Any,
    *,
    max_tokens: int,
    token_counter: Any,
    strategy: TrimStrategy = "last",
    allow_partial: bool = False,
    end_on: TypeRule = None,
    start_on: TypeRule = None,
    include_system: bool = False,
    text_splitter: Optional[Callable[[str], List[str]]] = None,
    provider: Optional[CheckedProvider] = None,
) -> List[Any]:
    """Trims LangChain messages to ``max_tokens``, as ``langchain_core.messages.trim_messages``.

    ``token_counter`` is what LangChain takes — ``"approximate"`` (LangChain's
    ``count_tokens_approximately`` rule, computed here), a function of a list of messages, a
    function of one message (its first parameter annotated ``BaseMessage``), or a chat model
    with ``get_num_tokens_from_messages`` — or one of ours: ``"estimate"``, an encoding name
    (``"o200k_base"``) or a model name (``"gpt-4o"``) for exact chat counts. A list counter is
    asked about one message at a time; its count of an empty list is taken as a fixed cost of
    the request (so OpenAI's 3 reply-priming tokens are counted once, as LangChain counts them).

    ``strategy``, ``allow_partial`` (with ``text_splitter``, by default a split at newlines),
    ``start_on``, ``end_on`` (LangChain type names such as ``"human"``, message classes, or lists
    of them) and ``include_system`` (keep ``messages[0]`` when it is a system message) mean what
    they mean in LangChain. Tool calls and their results are kept or dropped together; the result
    never exceeds ``max_tokens`` (a run that cannot fit is dropped, as LangChain drops it).

    ``provider=`` (one of :data:`agentmsg.CHECKED_PROVIDERS`) makes the result pass
    :func:`agentmsg.check` for that provider: :func:`agentmsg.repair` with ``unanswered="drop"``
    (so the result stays within ``max_tokens``) fixes what the history or the cut left, each
    repair announced with a :class:`agentmsg.ConversionWarning`; kept messages are the given objects.

    >>> from langchain_core.messages import HumanMessage, AIMessage
    >>> chat = [HumanMessage("first question"), AIMessage("first answer"),
    ...         HumanMessage("second question"), AIMessage("second answer")]
    >>> [m.content for m in trim_messages(chat, max_tokens=26, token_counter="approximate")]
    ['first answer', 'second question', 'second answer']
    >>> [m.content for m in trim_messages(chat, max_tokens=26, token_counter="approximate",
    ...                                   start_on="human")]
    ['second question', 'second answer']
    """
    lc = langchain_messages()
    if strategy not in ("last", "first"):
        raise MessageError(f"Unrecognized strategy={describe(strategy)}. Supported strategies are 'last' and 'first'.")
    if start_on and strategy == "first":
        raise MessageError("start_on parameter is only valid with strategy='last'")
    if include_system and strategy == "first":
        raise MessageError("include_system parameter is only valid with strategy='last'")
    budget = check_budget(max_tokens)
    if hasattr(messages, "to_messages"):  # a PromptValue
        messages = messages.to_messages()
    items = messages if isinstance(messages, list) else list(messages)
    count_one, overhead = _counter(token_counter, lc.BaseMessage)
    splitter = _splitter(text_splitter)
    start_codes, end_codes = _codes(start_on, "start_on"), _codes(end_on, "end_on")
    options = (budget, count_one, overhead, strategy == "first", allow_partial, start_codes, end_codes,
               include_system, splitter, lc.SystemMessage)
    if provider is not None:
        repair([], provider)  # checks the name before any work
    try:
        kept = _trim(items, *options)
    except _NotAMessage:
        try:  # dicts, tuples and strings: read by LangChain first, then the same trim
            kept = _trim(lc.convert_to_messages(items), *options)
        except _NotAMessage:
            raise MessageTypeError("messages must be LangChain messages (a RemoveMessage or other type "
                                   "has no role to trim by)") from None
    return kept if provider is None else _accepted(kept, provider)


def _accepted(kept: List[Any], provider: CheckedProvider) -> List[Any]:
    """``kept`` repaired for ``provider`` (drops only), the surviving LangChain objects unchanged."""
    ours = from_langchain(kept)  # one message per LangChain message
    fixed, repairs = repair(ours, provider, unanswered="drop")
    if not repairs:
        return kept
    warn_caller(f"trim_messages repaired the history for {provider}: " + "; ".join(map(str, repairs)))
    position = {id(message): index for index, message in enumerate(ours)}
    return [kept[position[id(m)]] if id(m) in position else to_langchain([m])[0] for m in fixed]


def _trim(items: List[Any], max_tokens: int, count_one: Callable[[Any], int], overhead: int, first: bool,
          allow_partial: bool, start_codes: Optional[List[int]], end_codes: Optional[List[int]],
          include_system: bool, splitter: Callable[[str], List[str]], system_type: type) -> List[Any]:
    if not items:
        return []
    if end_codes is not None and not any(_LangChainSource.code(m) in end_codes for m in reversed(items)):
        return []  # LangChain's end_on removes every message, a leading system one too
    head: List[Any] = []
    budget = max_tokens - overhead
    if include_system and isinstance(items[0], system_type):
        # LangChain's rule: only a leading system message is kept, and counted on its own.
        head = [items[0]]
        budget = max(0, max_tokens - (count_one(items[0]) + overhead)) - overhead
        items = items[1:]
    if budget < 0:
        return head
    source = _LangChainSource(items, count_one, splitter, overhead)
    kept_at, _, over_budget, _, to_cut = _core.select_source(source, budget, start_on=start_codes, end_on=end_codes,
                                                            first=first, allow_partial=allow_partial)
    cut = None
    if to_cut is not None:
        index, allowance, keep_end, joined, others = to_cut
        cut = source.cut(index, allowance, keep_end)
        if cut is not None:  # else the selection stands as it is
            kept_at, over_budget = joined, others + cut[1] > budget
    if over_budget:
        return head  # LangChain never returns more than max_tokens: a run that cannot fit goes
    if start_codes is not None and kept_at and source.code(items[kept_at[0]]) not in start_codes:
        return head  # no message can start the run: our trim ignores start_on, LangChain keeps nothing
    kept = [items[i] for i in kept_at]
    if cut is not None:
        kept[kept_at.index(to_cut[0])] = cut[0]  # type: ignore[index]
    return head + kept


class _NotAMessage(Exception):
    """An item that is not a LangChain message: the history is read by LangChain first."""


class _LangChainSource:
    """A list of LangChain messages as the core's selection reads it (``_core.select_source``
    calls these methods back)."""

    def __init__(self, items: List[Any], count_one: Callable[[Any], int],
                 splitter: Callable[[str], List[str]], overhead: int) -> None:
        self.items = items
        self.count_one = count_one
        self.splitter = splitter
        self.overhead = overhead

    def __len__(self) -> int:
        return len(self.items)

    @staticmethod
    def code(message: Any) -> int:
        try:
            kind = message.type
        except AttributeError:
            raise _NotAMessage from None
        code = _TYPE_CODES.get(kind)
        if code is None:
            if kind == "chat":
                return _CHAT_ROLE_CODES.get(message.role, _USER)
            return _code_of_chunk(message)
        return code

    def role_codes(self, start: int, stop: int) -> List[int]:
        window = self.items[start:stop]
        try:
            codes = [_TYPE_CODES.get(m.type) for m in window]
        except AttributeError:
            raise _NotAMessage from None
        if None in codes:  # chat messages and chunks
            codes = [self.code(m) if c is None else c for m, c in zip(window, codes)]
        return codes  # type: ignore[return-value]

    def counts(self, positions: Sequence[int]) -> List[int]:
        items, count_one = self.items, self.count_one
        return [count_one(items[i]) for i in positions]

    def groups(self, start: int, stop: int, codes: List[int]) -> Tuple[List[int], bool]:
        window = self.items[start:stop]
        result_ids: List[Optional[str]] = [None] * len(window)
        result_names: List[Optional[str]] = [None] * len(window)
        call_messages: List[int] = []
        call_ids: List[str] = []
        call_names: List[str] = []
        for j, code in enumerate(codes):
            if code == _TOOL:
                message = window[j]
                result_ids[j] = getattr(message, "tool_call_id", None)
                result_names[j] = message.name
            elif code == _ASSISTANT:
                for call in getattr(window[j], "tool_calls", None) or ():
                    call_messages.append(j)
                    call_ids.append(call.get("id") or "")
                    call_names.append(call.get("name") or "")
        call_of, orphans, _ = _core.pair_tool_results(codes, result_ids, result_names, call_messages,
                                                      call_ids, call_names)
        return [c if c >= 0 else j for j, c in enumerate(call_of)], bool(orphans)

    def cut(self, index: int, tokens: int, keep_end: bool) -> Optional[Tuple[Any, int]]:
        """LangChain's partial message: drop whole content blocks from the far end while that
        fits, else keep the splits of its text that fit (the newest when ``keep_end``)."""
        message = self.items[index]
        if self.code(message) == _TOOL or getattr(message, "tool_calls", None):
            return None  # part of a tool group is never kept
        content = message.content
        if isinstance(content, list):
            blocks = list(reversed(content)) if keep_end else list(content)
            for size in range(len(blocks) - 1, 0, -1):
                kept = blocks[:size]
                candidate = message.model_copy(update={"content": list(reversed(kept)) if keep_end else kept}, deep=True)
                count = self.count_one(candidate)
                if count <= tokens:
                    return candidate, count
            content = blocks[:1]
        text = _first_text(content)
        if not text:
            return None
        splits = self.splitter(text)
        if keep_end:
            splits = splits[::-1]
        best = None
        low, high = 1, len(splits)
        while low <= high:  # LangChain counts the cut message as a list of its own here
            middle = (low + high) // 2
            pieces = splits[:middle]
            candidate = message.model_copy(update={"content": "".join(pieces[::-1] if keep_end else pieces)}, deep=True)
            count = self.count_one(candidate)
            if count + self.overhead <= tokens:
                best, low = (candidate, count), middle + 1
            else:
                high = middle - 1
        return best


def _class_codes() -> Tuple[Tuple[type, int], ...]:
    """The role code of each LangChain message class (a chunk's is its base class's)."""
    from langchain_core.messages import AIMessage, FunctionMessage, HumanMessage, SystemMessage, ToolMessage

    return ((AIMessage, _ASSISTANT), (HumanMessage, _USER), (SystemMessage, _SYSTEM), (ToolMessage, _TOOL),
            (FunctionMessage, _TOOL))


def _code_of_chunk(message: Any) -> int:
    """A chunk's type is its class name (``"AIMessageChunk"``): its role is its base class's."""
    from langchain_core.messages import ChatMessage

    for kind, code in _class_codes():
        if isinstance(message, kind):
            return code
    if isinstance(message, ChatMessage):
        return _CHAT_ROLE_CODES.get(message.role, _USER)
    raise _NotAMessage


def _first_text(content: Any) -> Optional[str]:
    if isinstance(content, str):
        return content
    for block in content:
        if isinstance(block, str):
            return block
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            return text if isinstance(text, str) else None
    return None


def _default_splitter(text: str) -> List[str]:
    """LangChain's default: split after each newline."""
    splits = text.split("\n")
    return [s + "\n" for s in splits[:-1]] + splits[-1:]


def _splitter(text_splitter: Any) -> Callable[[str], List[str]]:
    if text_splitter is None:
        return _default_splitter
    split_text = getattr(text_splitter, "split_text", None)  # a langchain_text_splitters TextSplitter
    if callable(split_text):
        return split_text  # type: ignore[no-any-return]
    if not callable(text_splitter):
        raise MessageTypeError(f"text_splitter must be a function or a TextSplitter, not {type(text_splitter).__name__}")
    return text_splitter  # type: ignore[no-any-return]


def _codes(rule: TypeRule, what: str) -> Optional[List[int]]:
    """A LangChain type rule (names, classes, or a list of them) as role codes."""
    if not rule:
        return None
    rules = [rule] if isinstance(rule, (str, type)) else list(rule)
    codes = set()
    for item in rules:
        if isinstance(item, str):
            if item not in _TYPE_CODES and item != "chat":
                raise MessageError(f"{what}: unknown message type {describe(item)}; valid: {', '.join(_TYPE_CODES)}")
            codes.add(_TYPE_CODES.get(item, _USER))
        elif isinstance(item, type):
            codes.add(_code_of_class(item, what))
        else:
            raise MessageTypeError(f"{what} must hold type names or message classes, not {type(item).__name__}")
    return sorted(codes)


def _code_of_class(cls: type, what: str) -> int:
    for kind, code in _class_codes():
        if issubclass(cls, kind):
            return code
    raise MessageError(f"{what}: {cls.__name__} is not a LangChain message class agentmsg can match")


# -- token counters ------------------------------------------------------------------------------


def _counter(token_counter: Any, base_message: type) -> Tuple[Callable[[Any], int], int]:
    """A per-message counter for ``token_counter`` and the fixed cost of a request."""
    if isinstance(token_counter, str):
        if token_counter == "approximate":
            return count_approximately, 0
        return _our_counter(token_counter), 0
    model_count = getattr(token_counter, "get_num_tokens_from_messages", None)
    if model_count is not None:
        return _list_counter(model_count)
    if not callable(token_counter):
        raise MessageTypeError(
            "token_counter must be 'approximate', an encoding or model name, a function or a chat model "
            f"with get_num_tokens_from_messages, not {type(token_counter).__name__}"
        )
    parameters = list(inspect.signature(token_counter).parameters.values())
    if parameters and parameters[0].annotation in (base_message, "BaseMessage"):
        return (lambda message: _checked(token_counter(message))), 0
    return _list_counter(token_counter)


def _list_counter(count_list: Callable[[List[Any]], int]) -> Tuple[Callable[[Any], int], int]:
    try:
        overhead = _checked(count_list([]))
    except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError):
        overhead = 0  # a counter that cannot count nothing has no fixed cost we can see
    return (lambda message: max(0, _checked(count_list([message])) - overhead)), overhead


def _checked(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MessageTypeError(f"token_counter returned {type(value).__name__}; it must return an int")
    if not 0 <= value < 2**64:
        raise MessageError(f"token_counter returned {describe(value)}; counts must be in [0, 2**64)")
    return int(math.ceil(value))


def _our_counter(name: str) -> Callable[[Any], int]:
    """Our counters on LangChain messages: each message read by :func:`agentmsg.from_langchain`."""

    if name != "estimate":
        try:
            name = resolve_encoding(name)
        except (EncodingError, KeyError):
            raise MessageError(
                f"Invalid token_counter shortcut {describe(name)}. Available: 'approximate', 'estimate', "
                "an encoding name or a model name"
            ) from None
    count = TokenCounter(name).count
    return lambda message: count(from_langchain([message])[0])


_ROLE_NAMES: Dict[str, str] = {"human": "user", "ai": "assistant", "tool": "tool", "function": "function"}


def count_approximately(message: Any) -> int:
    """LangChain's ``count_tokens_approximately`` of one message, with its defaults (4
    characters a token, 3 extra tokens a message, names counted, 85 tokens an image); the count of
    a list is the sum of its messages' counts, as LangChain's is.

    >>> from langchain_core.messages import HumanMessage
    >>> count_approximately(HumanMessage("Hello there"))  # ceil((11 + len("user")) / 4) + 3
    7
    """
    content = message.content
    tokens = 0
    kind = message.type
    if content.__class__ is str:
        chars = len(content)
        if kind == "ai" or kind == "AIMessageChunk":
            calls = message.tool_calls
            if calls:
                chars += len(repr(calls))
    else:
        chars = 0
        for block in content:
            if isinstance(block, str):
                chars += len(block)
            elif isinstance(block, dict):
                block_type = block.get("type", "")
                if block_type in ("image", "image_url"):
                    tokens += 85
                elif block_type == "text":
                    chars += len(block.get("text", ""))
                else:
                    chars += len(repr(block))
            else:
                chars += len(repr(block))
        if isinstance(content, str) and getattr(message, "tool_calls", None):  # a str subclass
            chars += len(repr(message.tool_calls))
    if kind == "tool" or kind == "ToolMessageChunk":
        chars += len(message.tool_call_id)
    role = _ROLE_NAMES.get(kind)
    chars += len(role) if role is not None else len(_openai_role(message, kind))
    name = message.name
    if name:
        chars += len(name)
    return tokens + (chars + 3) // 4 + 3


def _openai_role(message: Any, kind: str) -> str:
    if kind == "system":
        return message.additional_kwargs.get("__openai_role__", "system")  # type: ignore[no-any-return]
    if kind == "chat":
        return message.role  # type: ignore[no-any-return]
    from langchain_core.messages.utils import _get_message_openai_role

    return _get_message_openai_role(message)


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
