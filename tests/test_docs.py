"""Every example in README.md and the guides (docs/*.md) runs and gives what it shows.

The tests find the examples by these conventions; a page follows them or this file fails:

- A ```python block is a doctest: `>>>` and `...` lines, each followed by what it prints
  (ELLIPSIS and NORMALIZE_WHITESPACE apply: `...` in an output stands for what the reader need
  not see, such as a generated id). It runs in a fresh interpreter with the package under test
  on PYTHONPATH, from the repository root. Each README block runs on its own, as a reader copies
  one block; a guide runs top to bottom in one interpreter, its blocks sharing names in the order
  they are read (indented `>>>` examples in its prose count too). Every python block holds an
  example. In a guide, a block that cannot run here (it needs a network service or a cluster)
  says so on the line before it: `<!-- not run: REASON -->`; the README has no such block.
- A ```console block is a terminal session, and the only place a page shows what a command
  prints. A line starting with `$ ` is a command (a line ending in `\\` goes on to the next);
  the lines after it, up to the next command, are what it prints, stdout and stderr together
  (blank lines at the end of an output are not part of it). bash runs each command in a scratch
  folder that sees the repository's `tests/` (so paths read as from the repository root, and
  files a command writes land in the scratch folder), with `agentmsg` the command of the package
  under test. It must exit with status 0 (`; echo $?` shows the status of one that fails), and
  its output must equal the one shown, line by line once runs of blanks are squeezed. A table
  column headed `us/turn` is a timing, a measurement rather than an output, and is not compared
  (the page says which run it comes from). With AGENTMSG_UPDATE_DOCS=1 the test also writes
  what the commands printed into the pages, in place of what they show; review that diff.
- The other blocks are not run: ```bash commands to type (install, test, benchmarks), ```json
  data shapes, a bare ``` layout. None shows output: a `$ ` line outside a console block fails.

Performance figures (ratios, times) are measurements, not outputs: the text beside each names the
bench or run it comes from, and no test compares them. The sizes of the tests' own tables that the
pages quote in prose are checked at the end of this file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

import pytest

import agentmsg

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
GUIDES = sorted((REPO / "docs").glob("*.md"))
PAGES = [README, *GUIDES]
# The folder holding the agentmsg package this test imported: the fresh interpreters use it too.
PACKAGE_ROOT = Path(agentmsg.__file__).resolve().parent.parent
NOT_RUN = re.compile(r"<!-- not run: \S.* -->")
TIMING_COLUMNS = {"us/turn"}
COMMAND_TIMEOUT = 600
# AGENTMSG_UPDATE_DOCS=1 writes what each console command printed into its page (review the diff).
UPDATE = os.environ.get("AGENTMSG_UPDATE_DOCS") == "1"

# Runs one page's (or one block's) doctest in the interpreter it is given to: argv is the page
# name and the line before the text; the text comes on stdin. Failures name the page's lines.
DOCTEST_RUNNER = """
import doctest, sys
name, lineno = sys.argv[1], int(sys.argv[2])
test = doctest.DocTestParser().get_doctest(sys.stdin.read(), {"__name__": "__main__"}, name, name, lineno)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
runner.run(test)
print(f"{runner.tries} examples, {runner.failures} failed")
sys.exit(1 if runner.failures or not runner.tries else 0)
"""


@dataclass
class Block:
    page: Path
    line: int  # the line of the opening fence, 1-based
    info: str  # what follows the opening ```
    lines: List[str]
    note: str  # the line before the opening fence

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def fenced_blocks(page: Path) -> List[Block]:
    lines = page.read_text().splitlines()
    blocks = []
    index = 0
    while index < len(lines):
        if lines[index].startswith("```"):
            end = index + 1
            while not lines[end].startswith("```"):
                end += 1
            note = lines[index - 1] if index else ""
            blocks.append(Block(page, index + 1, lines[index][3:].strip(), lines[index + 1 : end], note))
            index = end
        index += 1
    return blocks


def environment() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as on a terminal
    env.pop("AGENTMSG_NUM_THREADS", None)
    return env


def run_fresh(argv: List[str], cwd: Path, stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    """`argv` in a fresh process that imports the package under test; stdout and stderr together."""
    return subprocess.run(argv, input=stdin if stdin is not None else "", stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, cwd=cwd, env=environment(),
                          timeout=COMMAND_TIMEOUT)


def run_doctest(text: str, name: str, lineno: int) -> None:
    """Run `text` as a doctest in a fresh interpreter; `lineno` is the page line before it."""
    result = run_fresh([sys.executable, "-c", DOCTEST_RUNNER, name, str(lineno)], REPO, stdin=text)
    if result.returncode:
        pytest.fail(f"{name}:\n{result.stdout}", pytrace=False)


# -- python blocks ---------------------------------------------------------------------------------


def python_blocks(page: Path) -> List[Block]:
    return [b for b in fenced_blocks(page) if b.info == "python"]


def readme_python_blocks() -> List[Block]:
    return python_blocks(README)


@pytest.mark.parametrize("block", readme_python_blocks(), ids=lambda b: b.where)
def test_readme_python_block_runs_on_its_own(block):
    run_doctest("\n".join(block.lines), "README.md", block.line)


@pytest.mark.parametrize("page", [p for p in GUIDES if ">>> " in p.read_text()], ids=lambda p: p.name)
def test_guide_examples(page):
    # A closing fence right after an expected output would read as part of that output.
    text = "\n".join("" if line.startswith("```") else line for line in page.read_text().splitlines())
    run_doctest(text, f"docs/{page.name}", 0)


@pytest.mark.parametrize("block", [b for page in PAGES for b in python_blocks(page)], ids=lambda b: b.where)
def test_every_python_block_is_an_example_or_says_why_not(block):
    if any(line.startswith(">>> ") for line in block.lines):
        return
    if block.page == README:
        pytest.fail(f"{block.where}: a README block runs: write it as a doctest", pytrace=False)
    if not NOT_RUN.fullmatch(block.note.strip()):
        pytest.fail(f"{block.where}: a python block is a doctest, or says `<!-- not run: REASON -->` before it", pytrace=False)


# -- console blocks --------------------------------------------------------------------------------


def console_blocks() -> List[Block]:
    return [b for page in PAGES for b in fenced_blocks(page) if b.info == "console"]


CONSOLE_BLOCKS = console_blocks()  # as collected: their lines before AGENTMSG_UPDATE_DOCS writes


@dataclass
class Command:
    text: str  # without the `$ `; continued lines joined with their newlines
    shown: List[str]  # the output lines shown after it
    first: int  # index in the block's lines of the first output line


def session(block: Block) -> List[Command]:
    """The commands of a console block, each with the output shown after it."""
    assert block.lines and block.lines[0].startswith("$ "), f"{block.where}: a session starts with `$ `"
    commands: List[Command] = []
    index = 0
    while index < len(block.lines):
        line = block.lines[index]
        index += 1
        if line.startswith("$ "):
            text = line[2:]
            while text.endswith("\\"):
                text += "\n" + block.lines[index]
                index += 1
            commands.append(Command(text, [], index))
        else:
            commands[-1].shown.append(line)
    for command in commands:
        while command.shown and not command.shown[-1].strip():
            command.shown.pop()
    return commands


def comparable(lines: List[str]) -> List[str]:
    """Lines with runs of blanks squeezed and the timing columns left out."""
    result = []
    timed = False
    for line in lines:
        fields = line.split()
        if not fields:
            timed = False
        elif fields[-1] in TIMING_COLUMNS:
            timed = True
        if timed:
            fields = fields[:-1]
        result.append(" ".join(fields))
    return result


def run_command(command: str, folder: Path) -> List[str]:
    # pipefail: a pipeline whose first command fails must fail the check.
    shell = f'set -o pipefail\nagentmsg() {{ "{sys.executable}" -m agentmsg "$@"; }}\n'
    result = run_fresh(["bash", "-c", shell + command], folder)
    if result.returncode:
        pytest.fail(f"$ {command}\nexit status {result.returncode}\n{result.stdout}", pytrace=False)
    return result.stdout.splitlines()


def write_outputs(block: Block, outputs: List[List[str]]) -> None:
    """Put what the commands printed in place of what the page shows (AGENTMSG_UPDATE_DOCS=1)."""
    # Read the block again: an earlier block of the page may have changed length.
    same_page = [b for b in CONSOLE_BLOCKS if b.page == block.page]
    current = [b for b in fenced_blocks(block.page) if b.info == "console"][
        [b.line for b in same_page].index(block.line)
    ]
    lines = block.page.read_text().split("\n")
    for command, output in reversed(list(zip(session(current), outputs))):
        first = current.line + command.first  # the page index of its first output line
        lines[first : first + len(command.shown)] = output
    block.page.write_text("\n".join(lines))


@pytest.mark.parametrize("block", CONSOLE_BLOCKS, ids=lambda b: b.where)
def test_console_session_prints_what_the_page_shows(block, tmp_path):
    (tmp_path / "tests").symlink_to(REPO / "tests")
    printed = [(command, run_command(command.text, tmp_path)) for command in session(block)]
    if UPDATE and any(comparable(output) != comparable(command.shown) for command, output in printed):
        write_outputs(block, [output for _, output in printed])
    for command, output in printed:
        assert comparable(output) == comparable(command.shown), f"{block.where}: $ {command.text}"


def test_commands_and_their_output_are_shown_only_in_console_blocks():
    for page in PAGES:
        for block in fenced_blocks(page):
            if block.info != "console":
                assert not any(line.startswith("$ ") for line in block.lines), (
                    f"{block.where}: a command with its output goes in a ```console block"
                )


def test_the_examples_are_found():
    assert len(readme_python_blocks()) >= 10
    assert len(console_blocks()) >= 4
    assert any(python_blocks(page) for page in GUIDES)


# -- counts of the tests' own tables that the pages quote -------------------------------------------


def quoted(page: Path, pattern: str) -> int:
    found = re.findall(pattern, page.read_text())
    assert found, f"{page.name} no longer says {pattern!r}: update this test"
    assert len(set(found)) == 1, f"{page.name} quotes {pattern!r} differently: {found}"
    return int(found[0].replace(",", ""))


def test_the_sizes_of_the_test_tables_are_quoted_as_they_are():
    import adversarial
    import test_convert_hostile

    families = len(adversarial.FAMILIES)
    assert quoted(README, r"([\d,]+) adversarial families") == families
    assert quoted(README, r"over ([\d,]+) shapes") == families
    assert quoted(REPO / "docs" / "parsing.md", r"generates ([\d,]+) families") == families
    cases = test_convert_hostile.CASES
    assert quoted(README, r"tested over ([\d,]+) calls") == len(cases)
    assert quoted(REPO / "docs" / "convert.md", r"holds the table \(([\d,]+) calls") == len(cases)
    langchain = sum(case[0] in ("from_langchain", "to_langchain") for case in cases)
    assert quoted(REPO / "docs" / "langchain.md", r"\(([\d,]+) cases: every field of a LangChain") == langchain
