"""Arrow string columns in, Arrow results out, read in place: no Python object per string.

Each function takes a pyarrow ``StringArray``, ``LargeStringArray`` or ``StringViewArray``, a
pyarrow ``ChunkedArray`` of them, or any object with the Arrow PyCapsule interface
(``__arrow_c_array__``: polars, arro3, nanoarrow, DuckDB results, ...). The strings are read
from the Arrow buffers (through arrow-rs's C data interface) with the GIL released and the work
is spread over the thread pool; a null string gives a null result. An array is checked before it
is read (docs/scale.md says what can and cannot be checked): a malformed one raises
:class:`~agentmsg.MessageError`. pyarrow is optional
(``pip install agentmsg[arrow]``): with it the result is a pyarrow array (a ``ChunkedArray``
for a chunked input), without it an :class:`ArrowArray` that any Arrow library imports without a
copy.

    >>> import pyarrow as pa
    >>> count_tokens_arrow(pa.array(["Hello, world!", None])).to_pylist()
    [4, None]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Union

from . import _core
from .counting.tokens import check_encoding
from .errors import MessageError
from .model.message import Role, to_role
from .parsing import core_arguments

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import ParseOptions

__all__ = ["ArrowArray", "count_tokens_arrow", "estimate_tokens_arrow", "parse_arrow"]

#: An Arrow array made by agentmsg (the capsules of the C data interface, made afresh by each
#: ``__arrow_c_array__`` call, so it can be imported more than once).
#:
#: >>> import pyarrow as pa
#: >>> counts = _core.count_tokens_arrow(pa.array(["a b"]))
#: >>> pa.array(counts).to_pylist(), pa.array(counts).to_pylist(), len(counts)
#: ([2], [2], 1)
ArrowArray = _core.ArrowArray


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow


def _per_chunk(texts: Any, compute: Callable[[Any], Any]) -> Any:
    """``compute(texts)`` as a pyarrow array if pyarrow is installed (chunk by chunk for a
    ``ChunkedArray``), else as the :class:`ArrowArray` the core returned."""
    pyarrow = _pyarrow()
    if pyarrow is None:
        return compute(texts)
    if isinstance(texts, (pyarrow.Array, pyarrow.ChunkedArray)):
        # pyarrow knows the sizes of its buffers, which the C data interface does not carry: its
        # check (of the sizes and the first and last offsets, not of each string) catches a
        # length or offsets past them before the core reads.
        try:
            texts.validate()
        except pyarrow.ArrowInvalid as error:
            raise MessageError(f"texts: {str(error)[:200]}") from None
    if isinstance(texts, pyarrow.ChunkedArray):
        chunks = [pyarrow.array(compute(chunk)) for chunk in texts.chunks]
        # The type of an empty chunked result: that of the result of no strings.
        kind = chunks[0].type if chunks else pyarrow.array(compute(pyarrow.array([], pyarrow.string()))).type
        return pyarrow.chunked_array(chunks, type=kind)
    return pyarrow.array(compute(texts))


def count_tokens_arrow(texts: Any, encoding: str = "o200k_base") -> Any:
    """The token count of each string of an Arrow string column, as a ``uint64`` Arrow array.

    Equal to ``count_tokens_batch(texts.to_pylist(), encoding)`` with nulls kept as nulls, without
    making a Python str per row. A string that is not valid UTF-8 raises
    :class:`agentmsg.MessageError` naming its index.

    >>> import pyarrow as pa
    >>> count_tokens_arrow(pa.array(["tiktoken is great!"]), "cl100k_base").to_pylist()
    [6]
    """

    name = check_encoding(encoding)  # a model name gives its encoding, as for count_tokens_batch
    return _per_chunk(texts, lambda chunk: _core.count_tokens_arrow(chunk, name))


def estimate_tokens_arrow(texts: Any, role: Union[Role, str] = Role.USER) -> Any:
    """Forge's estimate of each string of an Arrow string column written by ``role``, as a
    ``uint64`` Arrow array: equal to ``estimate_tokens(text, role)`` of each, nulls kept.

    >>> import pyarrow as pa
    >>> estimate_tokens_arrow(pa.array(["Hello", None, "Result: 8"]), "tool").to_pylist()
    [11, None, 12]
    """
    role_name = to_role(role).value
    return _per_chunk(texts, lambda chunk: _core.estimate_tokens_arrow(chunk, role_name))


def parse_arrow(texts: Any, **options: Unpack[ParseOptions]) -> Any:
    """Parses each string of an Arrow string column (the options of :func:`agentmsg.parse_many`)
    into a struct array of ``text`` (string), ``thinking`` (list of strings), ``tool_calls``
    (list of structs of ``name`` and ``arguments``, the arguments as compact JSON) and
    ``errors`` (uint32: the number of bad tool calls); a null string gives a null row.

    Row ``i`` holds what ``parse_many(texts)[i]`` holds: its ``text``, ``thinking``, the name and
    input of each of its ``tool_calls`` and ``len(errors)``. Columns whose data pass 2 GiB are
    ``large_string`` / ``large_list``.

    >>> import pyarrow as pa
    >>> reply = '<think>hm</think>Hi <tool>{"tool_name": "ls", "arguments": {"path": "."}}</tool>'
    >>> parse_arrow(pa.array([reply, None])).to_pylist()[0]
    {'text': 'Hi', 'thinking': ['hm'], 'tool_calls': [{'name': 'ls', 'arguments': '{"path":"."}'}], 'errors': 0}
    >>> parse_arrow(pa.array(['<tool_call>{"name": "f", "arguments": {}}</tool_call>']), dialect="hermes").field("tool_calls").to_pylist()
    [[{'name': 'f', 'arguments': '{}'}]]
    """

    arguments = core_arguments(options, "parse_arrow")
    return _per_chunk(texts, lambda chunk: _core.parse_arrow(chunk, **arguments))
