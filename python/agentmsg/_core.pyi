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
