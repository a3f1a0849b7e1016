"""A tiktoken-compatible encoder: token ids, offline, from the tables embedded in the Rust core.

``get_encoding(name)`` and ``encoding_for_model(model)`` return an :class:`Encoding` with
tiktoken's methods and semantics (same ids, same special-token rules, same exceptions, as
subclasses of :class:`agentmsg.AgentMsgError`), for ``o200k_base``, ``cl100k_base`` and
``o200k_harmony`` (gpt-oss).

    >>> import agentmsg
    >>> enc = agentmsg.encoding_for_model("gpt-4o")
    >>> enc.name, enc.encode("hello world")
    ('o200k_base', [24912, 2375])
    >>> enc.decode([24912, 2375])
    'hello world'
    >>> agentmsg.truncate_tokens("one two three four", 2, "o200k_base")
    'one two'
"""

from __future__ import annotations

import codecs
import re
from typing import AbstractSet, Collection, Dict, FrozenSet, List, Literal, Sequence, Union, cast

from .. import _core
from .._checks import as_list, check_calls, describe, require_int, require_str, type_name
from ..errors import (
    DisallowedSpecialTokenError, EncodingError, MessageError, MessageTypeError, TokenIdError,
    UnknownModelError,
)

__all__ = ["Encoding",
    "get_encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "resolve_encoding",
    "truncate_tokens",
    "TOKEN_ENCODINGS"]

#: The encodings with token ids (``"estimate"``, which counters also accept, has none).
TOKEN_ENCODINGS = ("o200k_base", "cl100k_base", "o200k_harmony")


# tiktoken's model.py, with the same meaning: an exact name first, then the first matching
# prefix in this order. The tables live in the core (agentmsg_core::tokens::models); these are
# read-only copies for callers that list them.
_EXACT, _PREFIXES = _core.model_encodings()
MODEL_PREFIX_TO_ENCODING: Dict[str, str] = dict(_PREFIXES)
MODEL_TO_ENCODING: Dict[str, str] = dict(_EXACT)


def encoding_name_for_model(model: str) -> str:
    """The name of the encoding ``model`` uses, mapped as tiktoken maps it (exact names, then
    prefixes such as ``gpt-4o-`` or ``ft:gpt-4``); :class:`UnknownModelError` (a ``KeyError``)
    for a model it does not know.

    >>> encoding_name_for_model("gpt-4.1-mini"), encoding_name_for_model("gpt-3.5-turbo-0125")
    ('o200k_base', 'cl100k_base')
    """
    model = require_str(model, "model")
    name = _core.encoding_name_for_model(model)
    if name is not None:
        return name
    # tiktoken's message, with a long name described instead of quoted whole.
    shown = model if len(model) <= 100 else describe(model)
    raise UnknownModelError(
        f"Could not automatically map {shown} to a tokeniser. "
        "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect."
    )


def resolve_encoding(encoding_or_model: str) -> str:
    """The encoding a counter should use for ``encoding_or_model``: the name itself when it is
    one the counters accept (``"o200k_base"``, ``"cl100k_base"``, ``"o200k_harmony"``,
    ``"estimate"``), else the
    encoding of that model. :class:`agentmsg.EncodingError` (a ``ValueError``, as for an unknown
    encoding name today) when it is neither, or names a model whose encoding is not embedded.

    >>> resolve_encoding("cl100k_base"), resolve_encoding("gpt-4o-mini"), resolve_encoding("estimate")
    ('cl100k_base', 'o200k_base', 'estimate')
    """
    if encoding_or_model in _COUNTER_ENCODINGS:
        return encoding_or_model
    try:
        return encoding_for_model(encoding_or_model).name
    except UnknownModelError:
        raise EncodingError(
            f"unknown encoding or model {describe(encoding_or_model)}; known encodings: "
            f"{', '.join(_COUNTER_ENCODINGS)}, or a model name tiktoken maps to one"
        ) from None


# The names every counter accepts (agentmsg.ENCODINGS), read from the core: counting.tokens
# imports this module.
_COUNTER_ENCODINGS = tuple(_core.ENCODING_NAMES)

_encodings: Dict[str, "Encoding"] = {}


def get_encoding(name: str) -> "Encoding":
    """The encoding called ``name`` (``"o200k_base"``, ``"cl100k_base"`` or ``"o200k_harmony"``),
    built once and shared; :class:`agentmsg.EncodingError` (a ``ValueError``, as tiktoken raises)
    for any other.

    >>> get_encoding("cl100k_base").encode_ordinary("hello world")
    [15339, 1917]
    """
    encoding = _encodings.get(name) if isinstance(name, str) else None
    if encoding is None:
        name = require_str(name, "encoding name")
        if name not in TOKEN_ENCODINGS:
            raise EncodingError(
                f"unknown encoding {describe(name)}; known encodings: {', '.join(TOKEN_ENCODINGS)}"
            )
        encoding = _encodings.setdefault(name, Encoding(_core.TokenEncoder(name)))
    return encoding


def encoding_for_model(model: str) -> "Encoding":
    """The encoding ``model`` uses (see :func:`encoding_name_for_model`). A model whose encoding
    is not embedded here (GPT-2 and the deprecated r50k/p50k models) raises
    :class:`agentmsg.EncodingError` naming it.

    >>> encoding_for_model("gpt-4").name, encoding_for_model("gpt-oss-120b").name
    ('cl100k_base', 'o200k_harmony')
    """
    name = encoding_name_for_model(model)
    if name not in TOKEN_ENCODINGS:
        raise EncodingError(
            f"model {model!r} uses the encoding {name!r}, which agentmsg does not embed; "
            f"known encodings: {', '.join(TOKEN_ENCODINGS)}"
        )
    return get_encoding(name)


def _as_encoding(encoding: Union[str, "Encoding"]) -> "Encoding":
    return encoding if isinstance(encoding, Encoding) else get_encoding(encoding)


def truncate_tokens(text: str, max_tokens: int, encoding: Union[str, "Encoding"] = "o200k_base") -> str:
    """The text of the first ``max_tokens`` tokens of ``text`` (special-token strings encoded as
    plain text, as :meth:`Encoding.encode_ordinary` does): a prefix of ``text``, cut at a token
    boundary.

    When that boundary falls inside a character (a token ends with only part of its UTF-8
    bytes), the partial character is left out, so the result is still a prefix of ``text`` and
    never ends in U+FFFD as ``decode(tokens[:max_tokens])`` would. Encoding stops at the piece
    that holds the last kept token, so cutting a huge text to a few tokens is cheap. (Lone
    surrogates are first replaced as tiktoken replaces them, so only then is the result not a
    prefix of the input.)

    >>> truncate_tokens("The quick brown fox", 3)
    'The quick brown'
    >>> truncate_tokens("日本語", 3, "cl100k_base")
    '日本'
    """
    max_tokens = require_int(max_tokens, "max_tokens")
    return _as_encoding(encoding)._encoder.truncate(text, min(max_tokens, 2**64 - 1))


#: The default ``allowed_special``: no special token.
_NOTHING: FrozenSet[str] = frozenset()


def _check_special(value: object, what: str) -> None:
    """tiktoken accepts ``"all"`` or a collection of str for ``allowed_special`` and
    ``disallowed_special``; anything else fails there with a TypeError, and here with a typed one."""
    if isinstance(value, str) or not isinstance(value, Collection):
        raise MessageTypeError(
            f"{what} must be 'all' or a collection of str, not {type(value).__name__}"
        )
    for item in value:
        if not isinstance(item, str):
            raise MessageTypeError(f"{what} must hold only str, not {type(item).__name__}")


def _disallowed_error(token: str) -> DisallowedSpecialTokenError:
    return DisallowedSpecialTokenError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


class Encoding:
    """One of tiktoken's encodings, with tiktoken's methods and results (same ids, same rules
    for special tokens, same exception types), encoding in Rust with the GIL released for long
    texts and batches. Get one from :func:`get_encoding` or :func:`encoding_for_model`.

    >>> enc = get_encoding("cl100k_base")
    >>> enc.encode("hello <|endoftext|>", allowed_special="all")
    [15339, 220, 100257]
    >>> enc.n_vocab, enc.eot_token
    (100277, 100257)
    """

    __slots__ = ("_encoder", "name", "_special_tokens", "special_tokens_set", "_special_order")

    def __init__(self, encoder: "_core.TokenEncoder") -> None:
        if not isinstance(encoder, _core.TokenEncoder):
            raise MessageTypeError(
                f"Encoding() takes the core's TokenEncoder, not {type_name(encoder)}: get an encoding with "
                "agentmsg.get_encoding(name) or agentmsg.encoding_for_model(model)"
            )
        self._encoder = encoder
        #: The encoding's name, as tiktoken names it.
        self.name: str = encoder.name
        self._special_tokens: Dict[str, int] = encoder.special_tokens
        #: The text of every special token.
        self.special_tokens_set: FrozenSet[str] = frozenset(self._special_tokens)
        self._special_order: List[str] = list(self._special_tokens)

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    @property
    def n_vocab(self) -> int:
        """The largest token id plus one (tiktoken's ``n_vocab``)."""
        return self._encoder.n_vocab

    @property
    def max_token_value(self) -> int:
        """The largest token id."""
        return self._encoder.n_vocab - 1

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``."""
        return self._special_tokens["<|endoftext|>"]

    # -- encoding ------------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> List[int]:
        """The ids of ``text``, special-token strings encoded as plain text.

        >>> get_encoding("cl100k_base").encode_ordinary("<|endoftext|>")
        [27, 91, 8862, 728, 428, 91, 29]
        """
        return self._encoder.encode_ordinary(text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NOTHING,
        disallowed_special: Union[Literal["all"], Collection[str], None] = "all",
    ) -> List[int]:
        """The ids of ``text``, with tiktoken's rules for special tokens: a special token in
        ``allowed_special`` (``"all"``: every one) becomes its id; text equal to a string of
        ``disallowed_special`` (``"all"``, the default: every special token not allowed) raises
        :class:`DisallowedSpecialTokenError`; ``disallowed_special=()`` encodes it as plain text.

        >>> enc = get_encoding("cl100k_base")
        >>> enc.encode("<|endoftext|>", allowed_special={"<|endoftext|>"})
        [100257]
        >>> enc.encode("<|endoftext|>", disallowed_special=())
        [27, 91, 8862, 728, 428, 91, 29]
        """
        if not isinstance(text, str):  # the core reads any other sequence as a batch
            raise MessageTypeError(f"text must be a str, not {type_name(text)}")
        allowed, disallowed = self._special_arguments(allowed_special, disallowed_special)
        if isinstance(disallowed, re.Pattern):
            self._check_with_pattern(disallowed, text)
            disallowed = []
        result = self._encoder.encode(text, allowed, disallowed)
        if isinstance(result, str):
            raise _disallowed_error(result)
        return result

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NOTHING,
        disallowed_special: Union[Literal["all"], Collection[str], None] = "all",
    ) -> List[List[int]]:
        """:meth:`encode` of each text, in one call that releases the GIL and uses every core
        (``num_threads`` is accepted for tiktoken's signature; rayon's pool sizes itself).

        >>> get_encoding("o200k_base").encode_batch(["hello world", "goodbye world"])
        [[24912, 2375], [30744, 43571, 2375]]
        """
        _no_single_text(text)
        allowed, disallowed = self._special_arguments(allowed_special, disallowed_special)
        if isinstance(disallowed, re.Pattern):
            for item in _texts(text):
                self._check_with_pattern(disallowed, item)
            disallowed = []
        result = self._encoder.encode(text, allowed, disallowed)
        if isinstance(result, tuple):
            raise _disallowed_error(result[1])
        return result

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> List[List[int]]:
        """:meth:`encode_ordinary` of each text, in one call on every core.

        >>> get_encoding("o200k_base").encode_ordinary_batch(["hello world", "<|endoftext|>"])
        [[24912, 2375], [27, 91, 419, 1440, 919, 91, 29]]
        """
        _no_single_text(text)
        # Nothing is disallowed, so the core returns ids, never the (index, string) of a find.
        return cast(List[List[int]], self._encoder.encode(text, [], []))

    def _special_arguments(
        self, allowed_special: object, disallowed_special: object
    ) -> "tuple[List[str], Union[List[str], re.Pattern[str]]]":
        """The allowed special tokens, and the disallowed strings to look for (a compiled
        pattern when they are not all special tokens), resolved as tiktoken resolves them."""
        if allowed_special is _NOTHING and disallowed_special == "all":
            return [], self._special_order  # the default, resolved once
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        elif not isinstance(allowed_special, AbstractSet):
            raise MessageTypeError(
                f"allowed_special must be 'all' or a set of str, not {type(allowed_special).__name__}"
            )
        else:
            _check_special(allowed_special, "allowed_special")
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed_special
        elif disallowed_special is None:
            disallowed_special = ()  # tiktoken skips its check for any false value
        else:
            _check_special(disallowed_special, "disallowed_special")
        allowed = [token for token in self._special_order if token in allowed_special]
        disallowed = frozenset(disallowed_special)  # type: ignore[call-overload]
        if disallowed <= self.special_tokens_set:
            # No special token is a prefix of another, so the leftmost one found is the one
            # tiktoken's alternation finds.
            return allowed, [token for token in self._special_order if token in disallowed]
        return allowed, _alternation(disallowed)

    @staticmethod
    def _check_with_pattern(pattern: "re.Pattern[str]", text: object) -> None:
        if not isinstance(text, str):
            raise MessageTypeError(f"text must be a str, not {type(text).__name__}")
        match = pattern.search(text)
        if match:
            raise _disallowed_error(match.group())

    # -- decoding ------------------------------------------------------------------------------

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens``, special tokens included; :class:`TokenIdError` (a
        ``KeyError``) for an id that is no token.

        >>> get_encoding("cl100k_base").decode_bytes([15339, 1917])
        b'hello world'
        """
        if tokens.__class__ is not list and tokens.__class__ is not tuple:
            tokens = as_list(tokens, "tokens", "a sequence of int")
        result = self._encoder.decode_bytes(tokens)
        if isinstance(result, int):
            raise TokenIdError(f"Invalid token for decoding: {describe(result)}")
        return result

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of ``tokens``; bytes that are not valid UTF-8 (a character split between
        tokens at the end) are handled by ``errors``, ``"replace"`` by default, as in tiktoken.

        >>> get_encoding("cl100k_base").decode([15339, 1917])
        'hello world'
        """
        _check_error_handler(errors)
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> List[str]:
        """:meth:`decode` of each list of ids.

        >>> get_encoding("cl100k_base").decode_batch([[15339], [1917]])
        ['hello', ' world']
        """
        return [self.decode(tokens, errors) for tokens in batch]

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token, special or not; :class:`TokenIdError` (a ``KeyError``) for an
        id that is no token.

        >>> get_encoding("cl100k_base").decode_single_token_bytes(15339)
        b'hello'
        """
        result = self._encoder.token_bytes(token)
        if result is None:
            raise TokenIdError(describe(token))
        return result

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        """The bytes of each token.

        >>> get_encoding("cl100k_base").decode_tokens_bytes([15339, 1917])
        [b'hello', b' world']
        """
        return [self.decode_single_token_bytes(token) for token in tokens]

    def __reduce__(self) -> "tuple[object, tuple[str]]":
        # Pickled by name, as tiktoken pickles its registered encodings.
        return get_encoding, (self.name,)


def _check_error_handler(errors: object) -> None:
    """``errors`` names a registered codec error handler (``"replace"``, ``"strict"``, ...)."""
    name = require_str(errors, "errors")
    try:
        codecs.lookup_error(name)
    except (LookupError, ValueError):  # an unknown name; a NUL or a lone surrogate in it
        raise MessageError(
            f"errors must name a codec error handler such as 'replace' or 'strict', not {describe(name)}"
        ) from None


def _no_single_text(texts: object) -> None:
    """A batch function given one str (the core would read it as one text, not a batch)."""
    if isinstance(texts, str):
        raise MessageTypeError("texts must be a sequence of str, not a single str")


def _texts(texts: object) -> Sequence[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise MessageTypeError(f"texts must be a sequence of str, not {type(texts).__name__}")
    return texts


def _alternation(strings: FrozenSet[str]) -> "re.Pattern[str]":
    """tiktoken's pattern for disallowed strings: an alternation in the set's order."""
    return re.compile("(" + "|".join(re.escape(string) for string in strings) + ")")


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
