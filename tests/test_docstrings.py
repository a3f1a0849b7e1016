"""The examples in the public docstrings run and give what they show."""

import doctest
import importlib
import pkgutil

import pytest

import agentmsg

# Every submodule with a public API must show it working; the native module has no docstrings.
MODULES = [
    importlib.import_module(info.name)
    for info in pkgutil.walk_packages(agentmsg.__path__, prefix="agentmsg.")
    if info.name not in ("agentmsg._core", "agentmsg.__main__")
]
PUBLIC_MODULES = [m for m in MODULES if getattr(m, "__all__", None)]


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    globs = {"agentmsg": agentmsg, **{name: getattr(agentmsg, name) for name in agentmsg.__all__}}
    result = doctest.testmod(module, extraglobs=globs, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{module.__name__} has no examples"
    assert result.failed == 0
