"""Every example in the guides (docs/*.md) runs and gives what it shows."""

import doctest
from pathlib import Path

import pytest

import agentmsg

DOCS = Path(__file__).resolve().parent.parent / "docs"
# Pages without Python examples: the architecture explains, and the command line's examples are
# shell commands that tests/test_cli.py runs.
WITHOUT_EXAMPLES = {"architecture.md", "cli.md"}


def test_every_guide_is_checked():
    assert {p.name for p in DOCS.glob("*.md")} - WITHOUT_EXAMPLES, "no guides found"


@pytest.mark.parametrize("name", sorted(p.name for p in DOCS.glob("*.md") if p.name not in WITHOUT_EXAMPLES))
def test_guide_examples(name):
    # A closing code fence right after an expected output would read as part of that output.
    text = "\n".join("" if line.strip() == "```" else line for line in (DOCS / name).read_text().splitlines())
    test = doctest.DocTestParser().get_doctest(text, {"agentmsg": agentmsg}, name, str(DOCS / name), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"docs/{name} shows no example"
    assert result.failed == 0
