"""Type stubs for the native module ``agentmsg._core`` (built from rust/agentmsg-py).

These functions are the Rust hot paths; the public, documented API is the ``agentmsg`` package,
which wraps them.
"""

from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

__version__: str

# -- estimate (seed 000) ---------------------------------------------------------------------------

def estimate_tokens(text: str, role: str = "user") -> int:
    """``utf8_bytes // 4`` + role overhead (4; 10 for tool) + 10 if ``text`` contains ``<tool>``."""

def estimate_tokens_many(texts: Sequence[str], roles: Sequence[int]) -> List[int]:
    """:func:`estimate_tokens` of each text; ``roles`` holds codes 0 system, 1 user, 2 assistant, 3 tool."""

# -- parsing (rust/agentmsg-py/src/parse.rs; public API and docs: agentmsg.parsing) -------------

# Options given as None take their defaults: thinking "auto", tool_format "auto", code_fences True,
# start_in_thinking detected (whole text) or False (stream).

def parse(
    text: str,
    *,
    thinking: Optional[str] = None,
    tool_format: Optional[str] = None,
    code_fences: Optional[bool] = None,
    start_in_thinking: Optional[bool] = None,
) -> Any:
    """Parses ``text``; returns an ``agentmsg.parsing.Parsed``."""

def parse_many(
    texts: Iterable[str],
    *,
    thinking: Optional[str] = None,
    tool_format: Optional[str] = None,
    code_fences: Optional[bool] = None,
    start_in_thinking: Optional[bool] = None,
) -> List[Any]:
    """Parses each text in parallel with the GIL released; a list of ``Parsed``."""

class TextDelta:
    text: str
    def __init__(self, text: str) -> None: ...

class ThinkingDelta:
    index: int
    text: str
    def __init__(self, index: int, text: str) -> None: ...

class ThinkingEnd:
    index: int
    complete: bool
    def __init__(self, index: int, complete: bool) -> None: ...

class ToolCallStart:
    index: int
    def __init__(self, index: int) -> None: ...

class ToolCallDelta:
    index: int
    fragment: str
    def __init__(self, index: int, fragment: str) -> None: ...

class ToolCallEnd:
    index: int
    call: Optional[Any]  # agentmsg.ToolUseBlock
    error: Optional[Any]  # agentmsg.ParseIssue
    def __init__(self, index: int, call: Optional[Any], error: Optional[Any]) -> None: ...

Event = Union[TextDelta, ThinkingDelta, ThinkingEnd, ToolCallStart, ToolCallDelta, ToolCallEnd]

class StreamParser:
    def __init__(
        self,
        *,
        thinking: Optional[str] = None,
        tool_format: Optional[str] = None,
        code_fences: Optional[bool] = None,
        start_in_thinking: Optional[bool] = None,
    ) -> None: ...
    def feed(self, chunk: str) -> List[Event]: ...
    def finish(self) -> List[Event]: ...

# -- model dialects (rust/agentmsg-py/src/dialect.rs; public API and docs: agentmsg.dialects) ----

def dialect_names() -> List[str]:
    """The dialect names the core reads (``hermes``, ``qwen3_coder``, ``gpt_oss``)."""

def parse_dialect(
    text: str, *, dialect: str, start_in_thinking: Optional[bool] = None, tools_json: Optional[str] = None
) -> Any:  # agentmsg.Parsed
    """One reply in ``dialect``; ``tools_json`` is the JSON text of OpenAI tool definitions."""

def parse_dialect_many(
    texts: Sequence[str], *, dialect: str, start_in_thinking: Optional[bool] = None, tools_json: Optional[str] = None
) -> List[Any]:
    """:func:`parse_dialect` of each text, in parallel with the GIL released."""

class ToolCallHeader:
    index: int
    id: str
    name: str
    def __init__(self, index: int, id: str, name: str) -> None: ...

DialectEvent = Union[TextDelta, ThinkingDelta, ThinkingEnd, ToolCallHeader, ToolCallDelta, ToolCallEnd]

class DialectStreamParser:
    def __init__(
        self, *, dialect: str, start_in_thinking: Optional[bool] = None, tools_json: Optional[str] = None
    ) -> None: ...
    def feed(self, chunk: str) -> List[DialectEvent]: ...
    def finish(self) -> List[DialectEvent]: ...
    def result(self) -> Any: ...  # agentmsg.Parsed

# -- tokens (exact counting; issue 4) ---------------------------------------------------------------

ENCODING_NAMES: List[str]
# encoding=None means "o200k_base".

def count_tokens(text: str, encoding: Optional[str] = None) -> int:
    """``len(tiktoken.get_encoding(encoding).encode_ordinary(text))``; ``"estimate"`` gives seed 000's text formula."""

def count_tokens_up_to(text: str, limit: int, encoding: Optional[str] = None) -> int:
    """``min(count_tokens(text, encoding), limit + 1)``, stopping at the first piece past ``limit``."""

def count_tokens_batch(texts: Sequence[str], encoding: Optional[str] = None) -> List[int]:
    """:func:`count_tokens` of each text; the GIL is released and the texts spread over the cores."""

def count_tokens_grouped(
    texts: Sequence[str], sizes: Sequence[int], base: Sequence[int], encoding: Optional[str] = None
) -> List[int]:
    """Group ``i`` is the next ``sizes[i]`` texts; its result is ``base[i]`` plus their counts."""

# -- prune (budget pruning; agentmsg.memory) ------------------------------------------------------


def select_kept(
    counts: Sequence[int],
    roles: Sequence[int],
    groups: Sequence[int],
    max_tokens: int,
    keep_system: bool = True,
    start_on: Optional[int] = None,
) -> Tuple[List[int], int, bool, bool]:
    """Indices kept within ``max_tokens`` by the four pruning rules, and (total, over_budget,
    system_over_budget). ``groups[i]`` is the index of the first message of message i's tool
    group (its own index when it is alone); roles and ``start_on`` are role codes."""

class RollingBudget:
    """Running totals of a history that grows at the end and is pruned at the front."""

    def __init__(self, max_tokens: int, keep_system: bool = True) -> None: ...
    def push(self, count: int, role: int, group: Optional[int] = None, prune: bool = True) -> Tuple[int, int]:
        """Adds a message (joining the group that starts at sequence number ``group``); returns
        how many (system, non-system) messages to remove from the front."""
    def prune(self) -> Tuple[int, int]:
        """Removes the oldest messages while over budget; returns (system, non-system) counts."""
    def clear(self) -> None: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def next_seq(self) -> int: ...
    @property
    def front_seq(self) -> int: ...
    @property
    def over_budget(self) -> bool: ...
    @property
    def system_over_budget(self) -> bool: ...
