"""Hostile Arrow arrays for the tests: pyarrow's export through the C data interface, with fields
of the exported ``ArrowArray`` / ``ArrowSchema`` structs (or the buffers they point at)
overwritten with ctypes, handed over by a producer that is not pyarrow (so pyarrow's own checks
never see them).

``report(case)`` runs one case through the three Arrow functions and prints what each raised;
the tests run it in a subprocess, so that an array that crashes the process fails the test with
the exit status instead of killing pytest.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Callable, Dict, Tuple

import pyarrow as pa

import agentmsg
from agentmsg.arrow import count_tokens_arrow, estimate_tokens_arrow, parse_arrow


class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [
    ("format", ctypes.c_void_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))), ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p),
]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)), ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)), ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p),
]

_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_pointer.restype = ctypes.c_void_p
_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

Edit = Callable[[ArrowSchema, ArrowArray], None]


class Producer:
    """An Arrow library other than pyarrow: it exports ``array`` and then applies ``edit`` to the
    exported structs; ``swap`` hands the capsules over in the wrong order."""

    def __init__(self, array: Any, edit: Edit = lambda schema, array: None, swap: bool = False) -> None:
        self.array, self.edit, self.swap = array, edit, swap

    def __arrow_c_array__(self, requested_schema: Any = None) -> Tuple[Any, Any]:
        schema, array = self.array.__arrow_c_array__()
        self.edit(ArrowSchema.from_address(_pointer(schema, b"arrow_schema")),
                  ArrowArray.from_address(_pointer(array, b"arrow_array")))
        return (array, schema) if self.swap else (schema, array)


def fields(**values: int) -> Edit:
    """An edit setting fields of the array struct."""
    def edit(schema: ArrowSchema, array: ArrowArray) -> None:
        for name, value in values.items():
            setattr(array, name, value)
    return edit


def offsets(*values: int) -> Edit:
    """An edit overwriting the first offsets of a string (``i32``) or large_string (``i64``) array."""
    def edit(schema: ArrowSchema, array: ArrowArray) -> None:
        large = ctypes.string_at(schema.format) == b"U"
        kind = ctypes.c_int64 if large else ctypes.c_int32
        (kind * len(values)).from_address(array.buffers[1])[:] = values
    return edit


def buffer(index: int, shift: int = 0, value: Any = None) -> Edit:
    """An edit moving buffer pointer ``index`` by ``shift`` bytes, or setting it to ``value``."""
    def edit(schema: ArrowSchema, array: ArrowArray) -> None:
        array.buffers[index] = value if value is not None else array.buffers[index] + shift
    return edit


def view_sizes(*values: int) -> Edit:
    """An edit overwriting the declared sizes of a string_view array's data buffers."""
    def edit(schema: ArrowSchema, array: ArrowArray) -> None:
        (ctypes.c_int64 * len(values)).from_address(array.buffers[array.n_buffers - 1])[:] = values
    return edit


_kept: list = []  # what a test's structs point at, kept alive until the process ends


def a_child(schema: ArrowSchema, array: ArrowArray) -> None:
    # A released child, which the producer's release callback skips.
    child = ArrowArray()
    children = (ctypes.POINTER(ArrowArray) * 1)(ctypes.pointer(child))
    _kept.extend([child, children])
    array.n_children = 1
    array.children = ctypes.cast(children, ctypes.POINTER(ctypes.POINTER(ArrowArray)))


def released_schema(schema: ArrowSchema, array: ArrowArray) -> None:
    # The producer's release callback is kept by pyarrow's capsule destructor's own check.
    schema.release = None


def no_format(schema: ArrowSchema, array: ArrowArray) -> None:
    schema.format = None


STRINGS = pa.array(["ab", "c"])
LARGE = pa.array(["ab", "c"], pa.large_string())
VIEWS = pa.array(["a string longer than twelve bytes", "c"], pa.string_view())

# name: (array, edit, swap)
CASES: Dict[str, Tuple[Any, Edit, bool]] = {
    "length past the buffers": (STRINGS, fields(length=2**40), False),
    "large_string offsets near 2**63": (LARGE, offsets(0, 2**63 - 10, 2**63 - 8), False),
    "large_string data past the buffers": (LARGE, offsets(0, 1, 2**62), False),
    "offset past what memory holds": (STRINGS, fields(offset=2**62), False),
    "negative length": (STRINGS, fields(length=-1), False),
    "null count past the length": (STRINGS, fields(null_count=5), False),
    "null count without a bitmap": (STRINGS, fields(null_count=1), False),
    "null count against the bitmap": (pa.array(["a", None]), fields(null_count=0), False),
    "two buffers": (STRINGS, fields(n_buffers=2), False),
    "a child": (STRINGS, a_child, False),
    "offsets that run backwards": (STRINGS, offsets(5, 1, 0), False),
    "a row's offsets that run backwards": (STRINGS, offsets(2, 0, 3), False),
    "a row's offsets outside the data": (STRINGS, offsets(0, 5, 3), False),
    "a negative first offset": (STRINGS, offsets(-1, 1), False),
    "misaligned offsets": (STRINGS, buffer(1, shift=1), False),
    "a null offsets buffer": (STRINGS, buffer(1, value=0), False),
    "a null data buffer": (STRINGS, buffer(2, value=0), False),
    "views: two buffers": (VIEWS, fields(n_buffers=2), False),
    "views: length past the buffers": (VIEWS, fields(length=2**40), False),
    "views: a negative size": (VIEWS, view_sizes(-1), False),
    "views: a size past the buffer": (VIEWS, view_sizes(2**40), False),
    "capsules swapped": (STRINGS, lambda schema, array: None, True),
    "schema released": (STRINGS, released_schema, False),
    "no format": (STRINGS, no_format, False),
}


def report(case: str) -> None:
    """Prints what each Arrow function raises for ``case`` (``returned`` if none)."""
    array, edit, swap = CASES[case]
    for function in (count_tokens_arrow, lambda texts: estimate_tokens_arrow(texts, "user"), parse_arrow):
        try:
            function(Producer(array, edit, swap))
            print("returned")
        except agentmsg.AgentMsgError as error:
            print(f"{type(error).__name__}: {error}")


if __name__ == "__main__":
    report(sys.argv[1])
