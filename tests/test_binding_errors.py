"""The binding raises the classes of ``agentmsg.errors`` (each also the matching builtin), looked up
once and cached (rust/agentmsg-py/src/errors.rs), and core failures convert in that one place."""

from __future__ import annotations

import pytest

import agentmsg
from agentmsg import _core
from agentmsg.errors import AgentMsgError, EncodingError, MessageError, MessageTypeError


def test_bad_group_sizes_are_a_value_error():
    with pytest.raises(MessageError, match="^group sizes sum to more than 2\\*\\*64 for 1 texts") as raised:
        _core.count_tokens_grouped(["a"], [2**64 - 1, 2], [0, 0])
    assert isinstance(raised.value, ValueError)
    with pytest.raises(MessageError, match="^a group's token count overflows 2\\*\\*64$"):
        _core.count_tokens_grouped(["a", "b"], [1, 1], [2**64 - 1, 5])


@pytest.mark.parametrize(
    "call, cls, builtin, message",
    [
        (lambda: _core.count_tokens("x", "o300k"), EncodingError, ValueError, "o300k"),
        (lambda: _core.TokenEncoder("estimate"), EncodingError, ValueError, "has no token ids"),
        (lambda: _core.count_tokens(5), MessageTypeError, TypeError, "^text must be a str, not int$"),
        (lambda: _core.TokenEncoder("o200k_base").encode_ordinary(b"x"), MessageTypeError, TypeError, "^text must be a str, not bytes$"),
        (lambda: _core.pair_tool_results([1], [None, None], [None], [], [], []), MessageError, ValueError, "^1 roles, 2 result ids and 1 result names: the arrays must"),
        (lambda: _core.parse("x", dialect="nope"), MessageError, ValueError, "^unknown dialect 'nope'"),
        (lambda: _core.select_messages([], 10, "estimate", start_on=[9]), MessageError, ValueError, "^unknown role code 9 at index 0$"),
        (lambda: _core.select_messages([agentmsg.user("x")], 10, lambda positions: [1, 2]), MessageError, ValueError, "^2 counts for 1 messages: one entry per message asked for$"),
        (lambda: _core.parse_many(5), MessageTypeError, TypeError, "^texts must be a sequence of str, not int$"),
        (lambda: agentmsg.TextDelta(3), MessageTypeError, TypeError, "^TextDelta.text must be a str, not a int$"),
        (lambda: agentmsg.ThinkingEnd(-1, True), MessageError, ValueError, "^ThinkingEnd.index must be .*, not out of range$"),
    ],
)
def test_each_failure_raises_its_class_which_is_also_the_builtin(call, cls, builtin, message):
    with pytest.raises(cls, match=message) as raised:
        call()
    assert isinstance(raised.value, builtin) and isinstance(raised.value, AgentMsgError)


def test_the_classes_are_the_package_s_own_on_every_raise():
    # Cached after the first lookup: the same class objects the package exports, every time.
    for _ in range(3):
        with pytest.raises(agentmsg.MessageError) as raised:
            _core.set_num_threads(0)
        assert type(raised.value) is agentmsg.MessageError
