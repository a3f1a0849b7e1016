"""Token counts of Arrow string columns, read in place: no Python object per string.

:func:`count_tokens_arrow` takes a pyarrow ``StringArray`` or ``LargeStringArray``, a pyarrow
``ChunkedArray`` of them, or any object with the Arrow PyCapsule interface
(``__arrow_c_array__``: polars, arro3, nanoarrow, DuckDB results, ...). The strings are read
from the Arrow buffers with the GIL released and counted on the thread pool; the counts come
back as a ``uint64`` Arrow array, null where the string is null. pyarrow is optional
(``pip install agentmsg[arrow]``): without it the result is an :class:`ArrowArray` that any Arrow
library imports without a copy.

    >>> import pyarrow as pa
    >>> count_tokens_arrow(pa.array(["Hello, world!", None])).to_pylist()
    [4, None]
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _core

__all__ = ["ArrowArray", "count_tokens_arrow"]


class ArrowArray:
    """An Arrow array made by agentmsg, held as the two capsules of the Arrow C data interface.

    Pass it to any Arrow library (``pyarrow.array(result)``, ``polars.Series(result)``); it can
    be imported once.

    >>> import pyarrow as pa
    >>> counts = ArrowArray(_core.count_tokens_arrow(pa.array(["a b"])))
    >>> pa.array(counts).to_pylist()
    [2]
    """

    __slots__ = ("_capsules",)

    def __init__(self, capsules: Tuple[Any, Any]) -> None:
        self._capsules = capsules

    def __arrow_c_array__(self, requested_schema: Optional[object] = None) -> Tuple[Any, Any]:
        """The (schema, array) capsules; a requested schema other than our own is not cast to."""
        return self._capsules


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow


def count_tokens_arrow(texts: Any, encoding: str = "o200k_base") -> Any:
    """The token count of each string of an Arrow string column, as a ``uint64`` Arrow array.

    Equal to ``count_tokens_batch(texts.to_pylist(), encoding)`` with nulls kept as nulls, without
    making a Python str per row. Returns a ``pyarrow.UInt64Array`` (a ``ChunkedArray`` for a
    chunked input) when pyarrow is installed, else an :class:`ArrowArray`. A string that is not
    valid UTF-8 raises :class:`agentmsg.MessageError` naming its index.

    >>> import pyarrow as pa
    >>> count_tokens_arrow(pa.array(["tiktoken is great!"]), "cl100k_base").to_pylist()
    [6]
    """
    pyarrow = _pyarrow()
    if pyarrow is not None and isinstance(texts, pyarrow.ChunkedArray):
        chunks = [count_tokens_arrow(chunk, encoding) for chunk in texts.chunks]
        return pyarrow.chunked_array(chunks, type=pyarrow.uint64())
    counts = ArrowArray(_core.count_tokens_arrow(texts, encoding))
    return counts if pyarrow is None else pyarrow.array(counts)
