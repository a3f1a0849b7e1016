"""The README's two set-up commands are what CI runs: `.ci/run` runs the test command exactly as
written, and both make a fresh virtual environment, so CI sees what a user's clean machine sees."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def readme_commands() -> list:
    """The README's first two ``bash`` blocks: the main job, then the tests."""
    blocks = re.findall(r"```bash\n(.*?)\n```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)
    return blocks[:2]


def test_ci_runs_the_readme_test_command_exactly():
    ci_lines = [line for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
                if line and not line.startswith("#")]
    assert ci_lines[-1] == readme_commands()[1]
    assert "set -euo pipefail" in ci_lines


def test_both_commands_make_a_virtual_environment_first():
    main_job, tests = readme_commands()
    setup = "python3 -m venv .venv && . .venv/bin/activate && "
    assert main_job == setup + "pip install . && agentmsg stats"
    assert tests == setup + "pip install '.[test]' && python -m pytest && cargo test -p agentmsg-core"
    assert "/.venv/" in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
