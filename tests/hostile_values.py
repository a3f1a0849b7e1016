"""The shared table of hostile values: what an attacker (or a buggy caller) hands a public function.

Each entry is ``(label, make)``: ``make()`` builds a fresh value, so a call that mutates its
argument cannot spoil the next one, and the expensive ones (10 MB strings, 100,000-deep nesting)
are built only when a sampled call needs them. :func:`shapes` puts a value where a well-formed
argument holds one (inside a list, as a dict value, as each field of a dict).
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, List, Tuple

DEEP = 100_000
BIG_TEXT_CHARS = 10 * 1024 * 1024


class SneakyStr(str):
    """A str subclass whose methods lie: the library must read the characters, not call these."""

    def encode(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return 5

    def lower(self) -> Any:  # type: ignore[override]
        return None

    def __str__(self) -> str:
        return "lie"

    def __hash__(self) -> int:
        return 0


class SneakyInt(int):
    def __index__(self) -> int:
        raise RuntimeError("__index__ called")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ called")


class Unreprable:
    """An object whose repr and str raise: an error message must not need either."""

    def __repr__(self) -> str:
        raise RuntimeError("repr called")

    __str__ = __repr__


class ExplodingIterable:
    """Iterating it raises in the middle: a library must not leak half-done state or a bare error."""

    def __iter__(self) -> Iterator[int]:
        yield 1
        raise RuntimeError("iteration failed")


def _deep_list() -> list:
    value: list = []
    for _ in range(DEEP):
        value = [value]
    return value


def _deep_dict() -> dict:
    value: dict = {}
    for _ in range(DEEP):
        value = {"k": value}
    return value


def _circular_dict() -> dict:
    value: dict = {"a": 1}
    value["self"] = value
    return value


def _circular_list() -> list:
    value: list = [1]
    value.append(value)
    return value


# Immutable, so built once and shared.
_BIG_TEXTS = ("a b<" * (BIG_TEXT_CHARS // 4), "[" * BIG_TEXT_CHARS)

#: The labels of the values that take long to build or to process: sampled less often.
COSTLY = {"2**100000", "10 MB str", "10 MB of brackets", "100,000-deep list", "100,000-deep dict",
          "huge list", "<tool> bomb"}

HOSTILE: List[Tuple[str, Callable[[], Any]]] = [
    ("None", lambda: None),
    ("True", lambda: True),
    ("False", lambda: False),
    ("zero", lambda: 0),
    ("minus one", lambda: -1),
    ("2**64", lambda: 2**64),
    ("-2**63-1", lambda: -(2**63) - 1),
    ("2**100000", lambda: 2**100_000),
    ("NaN", lambda: math.nan),
    ("inf", lambda: math.inf),
    ("-inf", lambda: -math.inf),
    ("1.5", lambda: 1.5),
    ("1e308", lambda: 1e308),
    ("bytes", lambda: b"user"),
    ("bytearray", lambda: bytearray(b"x")),
    ("empty str", lambda: ""),
    ("str", lambda: "user"),
    ("str subclass", lambda: SneakyStr("assistant")),
    ("int subclass", lambda: SneakyInt(3)),
    ("lone surrogate", lambda: "\ud800"),
    ("surrogates in text", lambda: "a\udc80b\ud83d"),
    ("NUL", lambda: "\x00"),
    ("10 MB str", lambda: _BIG_TEXTS[0]),
    ("10 MB of brackets", lambda: _BIG_TEXTS[1]),
    ("empty list", lambda: []),
    ("empty dict", lambda: {}),
    ("list of None", lambda: [None]),
    ("dict with int keys", lambda: {1: "a"}),
    ("100,000-deep list", _deep_list),
    ("100,000-deep dict", _deep_dict),
    ("circular dict", _circular_dict),
    ("circular list", _circular_list),
    ("set", lambda: {1, 2}),
    ("object", object),
    ("unreprable object", Unreprable),
    ("exploding iterable", ExplodingIterable),
    ("generator", lambda: (x for x in "ab")),
    ("naive datetime", lambda: datetime(2024, 1, 1)),
    ("aware datetime", lambda: datetime(2024, 1, 1, tzinfo=timezone.utc)),
    ("function", lambda: abs),
    ("type", lambda: int),
    ("huge list", lambda: [0] * 100_000),
    ("str with NaN JSON", lambda: '{"x": NaN}'),
    ("<tool> bomb", lambda: "<tool></tool>" * 10_000),
]


def shapes(baseline: Any, make: Callable[[], Any]) -> Iterator[Tuple[str, Callable[[], Any]]]:
    """The ways to put a hostile value where ``baseline`` (a good argument) sits.

    The value itself; inside a list (after the good items of a list baseline); as each field of a
    dict baseline and of the first dict in a list baseline; and as a dict value under a new key.
    """
    yield "", make
    if isinstance(baseline, (list, tuple)):
        yield "[v]", lambda: [make()]
        yield "[...good, v]", lambda: [*baseline, make()]
        if baseline and isinstance(baseline[0], dict):
            for key in baseline[0]:
                yield f"[0][{key!r}]", lambda key=key: [{**baseline[0], key: make()}, *baseline[1:]]
    if isinstance(baseline, dict):
        for key in baseline:
            yield f"[{key!r}]", lambda key=key: {**baseline, key: make()}
        yield "{'k': v}", lambda: {**baseline, "k": make()}
    elif not isinstance(baseline, (list, tuple)):
        yield "{'k': v}", lambda: {"k": make()}

