"""What a replay's prompts cost, with and without prompt caching: :class:`Prices` per provider
model and :data:`PRICES`, the published prices of the main models.

Providers cache the prefix of a prompt that an earlier request sent: at each model call of a
replay, the tokens the prompt shares with the previous call's prompt (whole messages, from the
start) are a cache hit, read at ``cached_input`` per million tokens; the rest is written to the
cache at ``cache_write`` (Anthropic charges 1.25x the input price for its 5-minute cache; OpenAI
writes for free, so there ``cache_write`` is the input price). A prefix shorter than
``min_cached_tokens`` is not cached, and hits count in steps of ``cache_increment`` tokens
(OpenAI caches in 128-token steps past the first 1,024).

    >>> sonnet = PRICES["claude-sonnet-4.5"]
    >>> round(sonnet.prompt_cost(tokens=3000, cached=2000), 6)  # 2000 read, 1000 written
    0.00435
    >>> round(sonnet.prompt_cost(tokens=3000, cached=0, caching=False), 6)
    0.009
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Union

from .._checks import check_calls, describe, require_int, require_str, type_name
from ..errors import MessageError, MessageTypeError

__all__ = ["Prices", "PRICES", "PRICES_DATE"]


@dataclass(frozen=True)
class Prices:
    """The input prices of one model, in US dollars per million tokens: ``input`` (uncached),
    ``cached_input`` (a cache hit) and ``cache_write`` (input written to the cache); a prefix
    of fewer than ``min_cached_tokens`` is never cached, and hits count in whole steps of
    ``cache_increment`` tokens.

    >>> Prices("mine", input=1.0, cached_input=0.1, cache_write=1.25).prompt_cost(1_000_000, 500_000)
    0.675
    """

    name: str
    input: float
    cached_input: float
    cache_write: float
    min_cached_tokens: int = 1024
    cache_increment: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", require_str(self.name, "Prices.name"))
        for key in ("input", "cached_input", "cache_write"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise MessageTypeError(f"Prices.{key} must be a number of dollars per million tokens, not {type_name(value)}")
            if not value >= 0 or value == float("inf"):
                raise MessageError(f"Prices.{key} must be a finite price of 0 or more, not {describe(value)}")
            object.__setattr__(self, key, float(value))
        object.__setattr__(self, "min_cached_tokens", require_int(self.min_cached_tokens, "Prices.min_cached_tokens"))
        object.__setattr__(self, "cache_increment",
                           require_int(self.cache_increment, "Prices.cache_increment", minimum=1))

    def cache_hit(self, shared: int) -> int:
        """How many of the ``shared`` prefix tokens the provider serves from its cache.

        >>> PRICES["gpt-4.1"].cache_hit(1500)  # 1,024 and then steps of 128
        1408
        """
        shared = require_int(shared, "shared")
        if shared < self.min_cached_tokens:
            return 0
        return shared - shared % self.cache_increment

    def prompt_cost(self, tokens: int, cached: int, caching: bool = True) -> float:
        """The dollars one prompt of ``tokens`` input tokens costs when its first ``cached``
        tokens were sent by the previous call (``caching=False``: every token at the input price).

        >>> PRICES["gpt-4o"].prompt_cost(2_000_000, 0, caching=False)
        5.0
        """
        tokens = require_int(tokens, "tokens")
        cached = require_int(cached, "cached")
        if not caching:
            return tokens * self.input / 1e6
        hit = self.cache_hit(min(cached, tokens))
        written = tokens - hit if tokens >= self.min_cached_tokens else 0
        return (hit * self.cached_input + written * self.cache_write + (tokens - hit - written) * self.input) / 1e6


#: When the prices in :data:`PRICES` were read from the providers' pricing pages.
PRICES_DATE = "2026-11-25"

#: Published input prices of the main models (US dollars per million tokens, read on
#: :data:`PRICES_DATE` from platform.claude.com/docs/en/about-claude/pricing (5-minute cache
#: writes) and openai.com/api/pricing). They change: pass a :class:`Prices` for others.
PRICES: Dict[str, Prices] = {
    prices.name: prices for prices in (
        # Opus 4.5 and Haiku 4.5 cache a prefix of at least 4,096 tokens, Sonnet 4.5 of 1,024.
        Prices("claude-opus-4.5", input=5.00, cached_input=0.50, cache_write=6.25, min_cached_tokens=4096),
        Prices("claude-sonnet-4.5", input=3.00, cached_input=0.30, cache_write=3.75),
        Prices("claude-haiku-4.5", input=1.00, cached_input=0.10, cache_write=1.25, min_cached_tokens=4096),
        Prices("gpt-4.1", input=2.00, cached_input=0.50, cache_write=2.00, cache_increment=128),
        Prices("gpt-4o", input=2.50, cached_input=1.25, cache_write=2.50, cache_increment=128),
    )
}


def prices_of(value: Union[str, Prices]) -> Prices:
    """A :class:`Prices`, or the one :data:`PRICES` has under that name."""
    if isinstance(value, Prices):
        return value
    name = require_str(value, "prices")
    if name not in PRICES:
        raise MessageError(f"unknown prices {describe(name)}; known: {', '.join(PRICES)}, or pass a Prices")
    return PRICES[name]


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
