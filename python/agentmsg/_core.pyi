"""Type stubs for the native module ``agentmsg._core`` (built from rust/agentmsg-py).

These functions are the Rust hot paths; the public, documented API is the ``agentmsg`` package,
which wraps them.
"""

from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Protocol, Sequence, Tuple, Union, final, overload

from typing_extensions import Self

from agentmsg.model.blocks import ToolUseBlock
from agentmsg.model.message import Message
from agentmsg.model.results import Event, Parsed

__version__: str

# -- estimate (Forge) ---------------------------------------------------------------------------

def estimate_tokens(text: str, role: Optional[str] = None) -> int:
    """``utf8_bytes // 4`` + role overhead (4; 10 for tool) + 10 if ``text`` contains ``<tool>``."""

def estimate_tokens_many(texts: Sequence[str], roles: Sequence[int]) -> List[int]:
    """:func:`estimate_tokens` of each text; ``roles`` holds codes 0 system, 1 user, 2 assistant, 3 tool."""

def estimate_messages(messages: Iterable[Message]) -> List[int]:
    """Forge's estimate of each ``agentmsg.Message``, read from its slots: the measured text of
    ``agentmsg.counting.tokens.measured_text`` is measured without being built (a tool call's
    JSON by Python's ``json.dumps`` only for values Rust cannot write exactly). An item that is
    not a Message is a ``MessageTypeError`` naming its index."""

# -- parsing (rust/agentmsg-py/src/parse.rs, stream.rs, options.rs, classes.rs; public API and docs: agentmsg.parsing) --
# Every parser takes the same keyword-only options, read by options.rs (None is "not given").

def parse(
    text: str,
    *,
    dialect: Any = None,
    thinking: Optional[str] = None,
    tool_format: Optional[str] = None,
    code_fences: Optional[bool] = None,
    start_in_thinking: Optional[bool] = None,
    max_calls: Optional[int] = None,
    tools: Optional[Union[Tools, Sequence[Any]]] = None,
    strict: Optional[bool] = None,
    **unexpected: Any,
) -> Parsed:
    """Parses ``text`` into an ``agentmsg.Parsed``."""

def parse_ids(
    ids: Sequence[int],
    *,
    tokenizer: Any,
    dialect: Any = None,
    thinking: Optional[str] = None,
    tool_format: Optional[str] = None,
    code_fences: Optional[bool] = None,
    start_in_thinking: Optional[bool] = None,
    max_calls: Optional[int] = None,
    tools: Optional[Union[Tools, Sequence[Any]]] = None,
    strict: Optional[bool] = None,
    **unexpected: Any,
) -> Parsed:
    """``parse`` of the text of token ids, with markers that are added tokens read by id
    (``tokenizer``: an ``agentmsg.Tokenizer`` or ``agentmsg.Encoding``, or the core class each wraps)."""

def parse_many(
    texts: Iterable[str],
    *,
    dialect: Any = None,
    thinking: Optional[str] = None,
    tool_format: Optional[str] = None,
    code_fences: Optional[bool] = None,
    start_in_thinking: Optional[bool] = None,
    max_calls: Optional[int] = None,
    tools: Optional[Union[Tools, Sequence[Any]]] = None,
    strict: Optional[bool] = None,
    **unexpected: Any,
) -> List[Parsed]:
    """Parses each text into an ``agentmsg.Parsed``, in parallel with the GIL released."""

class StreamParser:
    """Incremental parser of streamed text; used by one thread at a time (a call while another
    thread's call on the same parser runs raises ``MessageError``)."""

    def __new__(
        cls,
        *,
        dialect: Any = None,
        thinking: Optional[str] = None,
        tool_format: Optional[str] = None,
        code_fences: Optional[bool] = None,
        start_in_thinking: Optional[bool] = None,
        max_calls: Optional[int] = None,
        tools: Optional[Union[Tools, Sequence[Any]]] = None,
        tokenizer: Any = None,
        strict: Optional[bool] = None,
        **unexpected: Any,
    ) -> Self: ...
    def feed(self, chunk: Optional[str], **unexpected: Any) -> List[Event]: ...
    def finish(self, **unexpected: Any) -> List[Event]: ...
    def result(self) -> Parsed: ...
    def feed_openai(self, chunk: Optional[str], **unexpected: Any) -> List[Dict[str, Any]]: ...
    def finish_openai(self, **unexpected: Any) -> List[Dict[str, Any]]: ...
    def feed_ids(self, ids: Sequence[int], **unexpected: Any) -> List[Event]: ...
    def feed_ids_openai(self, ids: Sequence[int], **unexpected: Any) -> List[Dict[str, Any]]: ...
    def feed_ids_responses(self, ids: Sequence[int], *, sequence_number: Optional[int] = None,
                           **unexpected: Any) -> List[Dict[str, Any]]: ...
    def feed_responses(self, chunk: Optional[str], *, sequence_number: Optional[int] = None,
                       **unexpected: Any) -> List[Dict[str, Any]]: ...
    def finish_responses(self, *, sequence_number: Optional[int] = None, **unexpected: Any) -> List[Dict[str, Any]]: ...

@final
class StreamBatch:
    """Many streams advanced together; used by one thread at a time (a call while another
    thread's call on the same batch runs raises ``MessageError``)."""

    def __new__(
        cls,
        *,
        dialect: Any = None,
        thinking: Optional[str] = None,
        tool_format: Optional[str] = None,
        code_fences: Optional[bool] = None,
        start_in_thinking: Optional[bool] = None,
        max_calls: Optional[int] = None,
        tools: Optional[Union[Tools, Sequence[Any]]] = None,
        tokenizer: Any = None,
        output: Optional[Literal["openai", "responses"]] = None,
        strict: Optional[bool] = None,
        **unexpected: Any,
    ) -> Self: ...
    def add(self, *, sequence_number: Optional[int] = None, **unexpected: Any) -> int: ...
    def step(
        self, pairs: List[Tuple[int, Union[str, Sequence[int]]]], **unexpected: Any
    ) -> List[List[Dict[str, Any]]]: ...
    def finish(self, stream: int, **unexpected: Any) -> List[Dict[str, Any]]: ...
    def __len__(self) -> int: ...

@final
class Tools:
    """Tool definitions compiled once (rust/agentmsg-py/src/tools.rs; public as ``agentmsg.Tools``)."""

    def __new__(cls, definitions: Union[Tools, Sequence[Any]], **unexpected: Any) -> Self: ...
    @property
    def definitions(self) -> List[Dict[str, Any]]: ...
    @property
    def names(self) -> Tuple[str, ...]: ...
    def __len__(self) -> int: ...
    def __hash__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __reduce__(self) -> Tuple[Any, Tuple[List[Dict[str, Any]]]]: ...

def result_classes() -> List[Tuple[str, str, List[str]]]:
    """``(module, class, fields)`` of each class parse results and stream events are built of without ``__init__``
    (rust/agentmsg-py/src/classes.rs); ``tests/test_result_classes.py`` holds them to the
    dataclasses."""

def dialect_names() -> List[str]:
    """The dialect names the core reads (``forge``, ``hermes``, ``qwen3_coder``, ...)."""

def check_dialect(dialect: Any) -> None:
    """Checks the parts of an ``agentmsg.Dialect``; raises MessageError / MessageTypeError."""

# -- tokens (exact counting; agentmsg.counting.tokens) ----------------------------------------------------------

ENCODING_NAMES: List[str]
# encoding=None means "o200k_base".

def count_tokens(text: str, encoding: Optional[str] = None, limit: Optional[int] = None) -> int:
    """``len(tiktoken.get_encoding(encoding).encode_ordinary(text))``; ``"estimate"`` gives Forge's
    text formula. With ``limit``: ``min(count, limit + 1)``, stopping at the first piece past it."""

def count_tokens_batch(texts: Sequence[str], encoding: Optional[str] = None) -> List[int]:
    """:func:`count_tokens` of each text; the GIL is released and the texts spread over the cores."""

def count_tokens_grouped(
    texts: Sequence[str], sizes: Sequence[int], base: Sequence[int], encoding: Optional[str] = None
) -> List[int]:
    """Group ``i`` is the next ``sizes[i]`` texts; its result is ``base[i]`` plus their counts."""

# -- encoding (token ids; rust/agentmsg-py/src/encoding.rs; public API: agentmsg.counting.encoding) -------

def encoding_name_for_model(model: str) -> Optional[str]:
    """The encoding ``model`` uses by tiktoken's tables (an exact name, then the first matching
    prefix), or None for a model they do not know."""

def model_encodings() -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]]]:
    """The tables of :func:`encoding_name_for_model`: (model, encoding) and (prefix, encoding)
    pairs, in lookup order."""

@final
class TokenEncoder:
    """One of tiktoken's encodings with ids; ``agentmsg.Encoding`` wraps it. Failures tiktoken
    reports with its own messages come back as values, and ``agentmsg.counting.encoding`` raises them."""

    def __new__(cls, name: str) -> Self:
        """``EncodingError`` for a name other than ``o200k_base`` / ``cl100k_base``."""
    @property
    def name(self) -> str: ...
    @property
    def n_vocab(self) -> int: ...
    @property
    def special_tokens(self) -> Dict[str, int]:
        """The special tokens and their ids, in tiktoken's order."""
    def encode_ordinary(self, text: str) -> List[int]: ...
    @overload
    def encode(self, text: str, allowed: Sequence[str], disallowed: Sequence[str]) -> Union[List[int], str]:  # type: ignore[overload-overlap]  # a str is one text
        """The ids, or the first string of ``disallowed`` found in ``text`` instead; of any other
        sequence, the ids of each text, or (index, string) for the first text holding a
        disallowed string."""
    @overload
    def encode(
        self, text: Sequence[str], allowed: Sequence[str], disallowed: Sequence[str]
    ) -> Union[List[List[int]], Tuple[int, str]]: ...
    def decode_bytes(self, tokens: Sequence[int]) -> Union[bytes, int]:
        """The bytes, or the first id that is no token instead."""
    def token_bytes(self, token: int) -> Optional[bytes]:
        """The bytes of one token, or ``None`` if the id is no token."""
    def truncate(self, text: str, max_tokens: int, keep_end: bool = False) -> str:
        """The text of the first ``max_tokens`` tokens, without a character the cut splits; with
        ``keep_end``, of the last ``max_tokens`` tokens (a suffix starting on a character)."""

# -- prune (budget pruning; agentmsg.history.trim, .memory) ------------------------------------------------------


def valid_cuts(messages: Sequence[Message], keep_system: bool = True) -> List[bool]:
    """For each message (read from its slots), whether a kept run of non-system messages may
    start there without splitting a tool group: where compaction may end a summarized span."""

#: ``(index, allowance, keep_end, kept, others)``: the message ``allow_partial`` may cut, the
#: tokens its cut copy may take, whether the cut keeps its newest part (else its oldest), the kept
#: indices with it among them, and the tokens of the others.
_Partial = Tuple[int, int, bool, List[int], int]
#: ``(kept, total, over_budget, system_over_budget, partial)``.
_Chosen = Tuple[List[int], int, bool, bool, Optional[_Partial]]

def select_messages(
    messages: Sequence[Message], max_tokens: int, counts: Union[str, Callable[[List[int]], List[int]]], *,
    keep_system: bool = True, start_on: Optional[Sequence[int]] = None, end_on: Optional[Sequence[int]] = None,
    first: bool = False, allow_partial: bool = False,
) -> _Chosen:
    """What ``agentmsg.trim`` keeps of ``messages`` within ``max_tokens``, in one call: the
    growing window of the newest messages (the oldest with ``first``), counting only what can be
    kept, and the message ``allow_partial`` may cut (the caller cuts it; with the cut copy of
    ``c`` tokens the kept indices are ``partial[2]`` and the total ``partial[3] + c``). Roles,
    groups and Forge's estimate are read from the messages' slots; ``counts`` is ``"estimate"``
    or ``counts(positions) -> counts``, called back with the positions to count (its exception
    propagates unchanged). ``start_on``/``end_on`` are role codes."""

class _Source(Protocol):
    def __len__(self) -> int: ...
    def role_codes(self, start: int, stop: int) -> List[int]: ...
    def counts(self, positions: List[int]) -> List[int]: ...
    def groups(self, start: int, stop: int, codes: List[int]) -> Tuple[List[int], bool]: ...

def select_source(
    source: _Source, max_tokens: int, *, keep_system: bool = False, start_on: Optional[Sequence[int]] = None,
    end_on: Optional[Sequence[int]] = None, first: bool = False, allow_partial: bool = False,
) -> _Chosen:
    """:func:`select_messages` over a history read through ``source``, whose methods are called
    back: role codes of a range, counts of positions, and the tool groups of a range (relative
    indices) with whether some result there answers no call in it. ``agentmsg.langchain``'s
    ``trim_messages`` reads LangChain messages this way."""


@final
class RollingHistory:
    """A memory's state but its messages: counts, tool groups, totals and the pairing of tool
    results with calls, under one journal (``begin`` / ``commit`` / ``rollback``)."""

    def __new__(cls, max_tokens: int, keep_system: bool = True) -> Self: ...
    def push(
        self,
        count: int,
        role: int,
        calls: Optional[Sequence[Tuple[str, str]]] = None,
        result_id: Optional[str] = None,
        result_name: Optional[str] = None,
        prune: bool = True,
    ) -> Optional[Tuple[int, int]]:
        """Adds a message (an assistant's ``(id, name)`` calls open a turn; a tool result pairs
        by id, else by name); returns how many (system, non-system) messages to remove from the
        front, or None for a tool result whose call was already pruned (it is not added)."""
    def prune(self) -> Tuple[int, int]:
        """Removes the oldest messages while over budget; returns (system, non-system) counts."""
    def clear(self) -> None:
        """Forgets every message and pairing (journaled inside a transaction)."""
    def begin(self) -> None:
        """Starts a transaction: ``rollback`` restores this state, in time proportional to the changes."""
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def system_counts(self) -> List[int]:
        """The kept system messages' counts, oldest first."""
    def counts(self) -> List[int]:
        """The kept non-system messages' counts, oldest first."""
    @property
    def total(self) -> int: ...
    @property
    def over_budget(self) -> bool: ...
    @property
    def system_over_budget(self) -> bool: ...

# -- pairs (tool pairing; agentmsg.history.toolpairs) ------------------------------------------------------

def pair_tool_results(
    roles: Sequence[int],
    result_ids: Sequence[Optional[str]],
    result_names: Sequence[Optional[str]],
    call_messages: Sequence[int],
    call_ids: Sequence[str],
    call_names: Sequence[str],
    any_turn: bool = False,
) -> Tuple[List[int], List[int], List[int]]:
    """The library's pairing rule over arrays: per message its role code and, for a tool result,
    the id and name it carries; the calls flattened in order, each naming its assistant message.
    Returns (call_of: the index of the message whose call each result answers, -1 for none;
    orphans; unanswered calls as indices into the flattened calls). ``any_turn`` lets a name-only
    result reach the earliest unanswered call of that name anywhere (Forge's reader) instead of
    only the latest turn's."""
def pair_messages(
    messages: Sequence[Message], any_turn: bool = False, refuse_lone_surrogates: bool = False,
) -> Tuple[List[int], List[int], List[Tuple[int, ToolUseBlock]], Optional[Tuple[int, int, int]]]:
    """:func:`pair_tool_results` of ``agentmsg.Message`` objects, read from their slots; each
    unanswered call comes as ``(message index, block)``, and last the first message between a
    call and one of its results as ``(message, call message, result)`` (None when there is none). Ids and names pair by their
    ``surrogatepass`` bytes; with ``refuse_lone_surrogates`` one holding a lone surrogate is a
    ``MessageError`` naming it."""

def order_problem(
    messages: Sequence[Message],
) -> Optional[Tuple[str, int, Optional[int], Optional[ToolUseBlock]]]:
    """The first way ``messages`` (read from their slots, paired by the library's rule) break the
    order every provider requires, as ``(kind, index, caller, call)``: ``("stray", result, None,
    None)`` for a result that answers no open call of the assistant message before it,
    ``("interrupted", message, caller, call)`` for a message that comes while ``call`` of
    ``caller`` is unanswered, ``("never", caller, caller, call)`` for a call of the last caller
    never answered; None when results always follow their call."""

def results_first(messages: Sequence[Message]) -> Tuple[List[int], List[int]]:
    """``(order, moved)``: the order to write ``messages`` in so that each assistant turn's tool
    results directly follow it (a message between a call and its result moves after the turn's
    last result), and the messages that moved."""

def pending_calls(
    roles: Sequence[int], call_messages: Sequence[int], unanswered: Sequence[int],
) -> Tuple[List[int], List[int]]:
    """The unanswered calls (indices into the flattened calls, as :func:`pair_tool_results`
    gives them) split into (pending, missing): the calls of the last turn, the last message that
    is not a tool result, are pending."""

# -- the thread pool ---------------------------------------------------------------------------

def num_threads() -> int:
    """The number of threads of this process's pool (built on first use, again after a fork)."""

def set_num_threads(threads: int) -> None:
    """Rebuilds the pool with ``threads`` threads on its next use: an int from 1 to 256 (or to the
    number of cores, if more); ``MessageError`` / ``MessageTypeError`` otherwise."""

# -- Arrow -------------------------------------------------------------------------------------

@final
class ArrowArray:
    """An Arrow array made by agentmsg; exported afresh by every ``__arrow_c_array__`` call."""

    def __arrow_c_array__(self, requested_schema: Optional[object] = None) -> Tuple[object, object]: ...
    def __len__(self) -> int: ...

def count_tokens_arrow(texts: object, encoding: Optional[str] = None) -> ArrowArray:
    """Counts each string of an Arrow string array (any object with ``__arrow_c_array__``):
    a ``uint64`` array, null where the string is null."""

def estimate_tokens_arrow(texts: object, role: str) -> ArrowArray:
    """Forge's estimate of each string of an Arrow string array written by ``role``: a
    ``uint64`` array, null where the string is null."""

def parse_arrow(
    texts: object,
    *,
    dialect: Any = None,
    thinking: Optional[str] = None,
    tool_format: Optional[str] = None,
    code_fences: Optional[bool] = None,
    start_in_thinking: Optional[bool] = None,
    max_calls: Optional[int] = None,
    tools: Optional[Union[Tools, Sequence[Any]]] = None,
    strict: Optional[bool] = None,
    **unexpected: Any,
) -> ArrowArray:
    """Parses each string of an Arrow string array: a struct array of ``text``, ``thinking``,
    ``tool_calls`` (``name``, ``arguments`` JSON) and ``errors``, null where the string is null."""

# -- open models' tokenizers (agentmsg.Tokenizer wraps this) -----------------------------------

@final
class Tokenizer:
    """A model's tokenizer loaded from a ``tokenizer.json``; ``agentmsg.Tokenizer`` wraps it."""

    @staticmethod
    def from_json(json: bytes) -> "Tokenizer":
        """``TokenizerError`` naming what the file holds that is not supported."""
    @staticmethod
    def from_tiktoken(ranks: bytes, pattern: str, special_tokens: Sequence[Tuple[str, int]]) -> "Tokenizer": ...
    @property
    def vocab_size(self) -> int: ...
    def special_tokens(self) -> List[Tuple[str, int]]: ...
    def token_to_id(self, token: str) -> Optional[int]: ...
    def encode(self, text: str, add_special_tokens: bool) -> List[int]: ...
    def count(self, text: str, add_special_tokens: bool) -> int: ...
    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool) -> List[List[int]]: ...
    def count_batch(self, texts: Sequence[str], add_special_tokens: bool) -> List[int]: ...
    def decode(self, ids: Sequence[int], skip_special_tokens: bool) -> str: ...
    def decode_bytes(self, ids: Sequence[int], skip_special_tokens: bool) -> bytes: ...
    def truncate(self, text: str, max_tokens: int) -> str: ...

@final
class ChatTemplate:
    """A compiled chat template; ``agentmsg.ChatTemplate`` wraps it. Errors are
    ``agentmsg.errors.TemplateError``."""

    def __new__(cls, source: str, fuel: int, max_output_bytes: int) -> "ChatTemplate": ...
    @property
    def fuel(self) -> int: ...
    @property
    def max_output_bytes(self) -> int: ...
    def render(self, messages: Any, tools: Any, add_generation_prompt: bool, kwargs: Dict[str, Any],
               utc_offset: int) -> str: ...
