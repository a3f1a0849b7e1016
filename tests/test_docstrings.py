"""The examples in the public docstrings run and give what they show."""

import doctest

import pytest

import agentmsg
from agentmsg import blocks, conversation, errors, estimate, message

MODULES = [errors, blocks, message, estimate, conversation]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    globs = {"agentmsg": agentmsg, **{name: getattr(agentmsg, name) for name in agentmsg.__all__}}
    result = doctest.testmod(module, extraglobs=globs, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{module.__name__} has no examples"
    assert result.failed == 0
