"""The examples in docs/memory.md run and give what they show."""

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "memory.md"


def test_memory_doc_examples():
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 20
    assert result.failed == 0
