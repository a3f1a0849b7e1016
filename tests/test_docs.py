"""Every example in the guides (docs/*.md) runs and gives what it shows."""

import doctest
from pathlib import Path

import pytest

import agentmsg

DOCS = Path(__file__).resolve().parent.parent / "docs"
# Pages that explain (architecture, design) rather than show calls have no examples to run.
WITHOUT_EXAMPLES = {"architecture.md"}


def test_every_guide_is_checked():
    assert {p.name for p in DOCS.glob("*.md")} - WITHOUT_EXAMPLES, "no guides found"


@pytest.mark.parametrize("name", sorted(p.name for p in DOCS.glob("*.md") if p.name not in WITHOUT_EXAMPLES))
def test_guide_examples(name):
    result = doctest.testfile(
        str(DOCS / name),
        module_relative=False,
        globs={"agentmsg": agentmsg},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted > 0, f"docs/{name} shows no example"
    assert result.failed == 0
