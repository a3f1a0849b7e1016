"""Type stubs for the native module ``agentmsg._core`` (built from rust/agentmsg-py).

These functions are the Rust hot paths; the public, documented API is the ``agentmsg`` package,
which wraps them.
"""

from typing import List, Sequence

__version__: str

# -- estimate (seed 000) ---------------------------------------------------------------------------

def estimate_tokens(text: str, role: str = "user") -> int:
    """``utf8_bytes // 4`` + role overhead (4; 10 for tool) + 10 if ``text`` contains ``<tool>``."""

def estimate_tokens_many(texts: Sequence[str], roles: Sequence[int]) -> List[int]:
    """:func:`estimate_tokens` of each text; ``roles`` holds codes 0 system, 1 user, 2 assistant, 3 tool."""

# -- tokens (exact counting; issue 4) ---------------------------------------------------------------

ENCODING_NAMES: List[str]

def count_tokens(text: str, encoding: str | None = "o200k_base") -> int:
    """``len(tiktoken.get_encoding(encoding).encode_ordinary(text))``; ``"estimate"`` gives seed 000's text formula."""

def count_tokens_up_to(text: str, limit: int, encoding: str | None = "o200k_base") -> int:
    """``min(count_tokens(text, encoding), limit + 1)``, stopping at the first piece past ``limit``."""

def count_tokens_batch(texts: Sequence[str], encoding: str | None = "o200k_base") -> List[int]:
    """:func:`count_tokens` of each text; the GIL is released and the texts spread over the cores."""

def count_tokens_grouped(
    texts: Sequence[str], sizes: Sequence[int], base: Sequence[int], encoding: str | None = "o200k_base"
) -> List[int]:
    """Group ``i`` is the next ``sizes[i]`` texts; its result is ``base[i]`` plus their counts."""
