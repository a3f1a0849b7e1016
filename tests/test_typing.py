"""Type checkers see the whole public API, the package passes ``mypy --strict``, and what the
converters return is what the SDKs' request methods take (tests/typing/user_script.py)."""

import ast
import importlib
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import get_args

import pytest

import agentmsg
from agentmsg.convert._order import ORPHAN_POLICIES
from agentmsg.options import DialectName, OrphanPolicy, ThinkingMode, ToolFormat, TrimStrategy

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["agentmsg", "agentmsg.convert"]


def _stated_all(module: types.ModuleType) -> list:
    """The ``__all__`` the module's source states, which must be a literal list of names."""
    for node in ast.parse(Path(module.__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            return ast.literal_eval(node.value)  # ValueError when built at run time
    raise AssertionError(f"{module.__name__} states no __all__")


@pytest.mark.parametrize("name", PACKAGES)
def test_stated_all_is_exactly_what_the_package_exports(name):
    package = importlib.import_module(name)
    stated = _stated_all(package)
    assert len(stated) == len(set(stated)), "a name is listed twice"
    assert stated == package.__all__
    for key in stated:  # each one is there (agentmsg loads its names on first use)
        getattr(package, key)
    exported = {
        key for key, value in vars(package).items()
        if not key.startswith("_") and not isinstance(value, types.ModuleType)
        and value is not getattr(typing, key, None)  # the package's own `from typing import ...`
    }
    assert set(stated) == exported


def _accepted(option: str) -> set:
    """The values the core accepts for a name option: those its error for another one lists."""
    with pytest.raises(agentmsg.MessageError, match="; valid: ") as raised:
        agentmsg.parse("x", **{option: "?"})
    return set(str(raised.value).split("; valid: ")[1].split(", "))


def test_option_literals_hold_exactly_the_accepted_values():
    assert set(get_args(ThinkingMode)) == _accepted("thinking")
    assert set(get_args(ToolFormat)) == _accepted("tool_format")
    assert set(get_args(DialectName)) == _accepted("dialect")
    assert set(get_args(DialectName)) == set(agentmsg.DIALECTS)
    assert get_args(OrphanPolicy) == ORPHAN_POLICIES
    for strategy in get_args(TrimStrategy):
        assert agentmsg.trim([agentmsg.user("hi")], 100, strategy=strategy).messages[0].text == "hi"
    with pytest.raises(agentmsg.MessageError, match="strategy"):
        agentmsg.trim([agentmsg.user("hi")], 100, strategy="middle")


def test_core_stub_matches_the_native_module():
    """Every name of ``agentmsg._core`` has a stub, with the runtime's parameters (stubtest)."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "--mypy-config-file", "pyproject.toml", "--concise",
         "--ignore-disjoint-bases", "--allowlist", "tests/typing/stubtest_allowlist.txt", "agentmsg._core"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_event_classes_match_positionally():
    match agentmsg.TextDelta("hi"):
        case agentmsg.TextDelta(text):
            assert text == "hi"


def test_mypy_strict_accepts_the_package_and_a_user_script(tmp_path):
    # Every exported name, imported the way users do: mypy must see each one.
    every_name = tmp_path / "every_name.py"
    every_name.write_text("".join(
        f"from {name} import {', '.join(importlib.import_module(name).__all__)}\n" for name in PACKAGES
    ))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "--no-error-summary",
         "python/agentmsg", "tests/typing/user_script.py", str(every_name)],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr

