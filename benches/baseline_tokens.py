"""The pure-Python way to count tokens exactly: tiktoken's regex, then a byte-pair merge by rank.

What a careful Python developer writes without a native tokenizer: the ``regex`` module (it has
the ``\\p{..}`` classes the pattern needs) splits the text, a piece that is a whole token counts
1, and any other piece is merged pair by pair, lowest rank first, as OpenAI's BPE defines it.
It uses the same rank data and pattern as the oracle (tests/tiktoken_oracle.py).
"""

from __future__ import annotations

from typing import Dict, List

import regex

import tiktoken_oracle


class PurePythonCounter:
    """Counts tokens like ``len(tiktoken.get_encoding(name).encode_ordinary(text))``."""

    def __init__(self, name: str) -> None:
        encoding = tiktoken_oracle.encoding(name)
        self.ranks: Dict[bytes, int] = encoding._mergeable_ranks
        self.pattern = regex.compile(encoding._pat_str)

    def merge(self, piece: bytes) -> List[bytes]:
        """The byte-pair encoding of one piece: merge the lowest-ranked adjacent pair until none is a token."""
        parts = [piece[i : i + 1] for i in range(len(piece))]
        ranks = self.ranks
        while len(parts) > 1:
            best_rank = None
            best_at = -1
            for i in range(len(parts) - 1):
                rank = ranks.get(parts[i] + parts[i + 1])
                if rank is not None and (best_rank is None or rank < best_rank):
                    best_rank = rank
                    best_at = i
            if best_rank is None:
                break
            parts[best_at : best_at + 2] = [parts[best_at] + parts[best_at + 1]]
        return parts

    def count(self, text: str) -> int:
        total = 0
        ranks = self.ranks
        for piece in self.pattern.findall(text):
            data = piece.encode("utf-8")
            total += 1 if data in ranks else len(self.merge(data))
        return total
