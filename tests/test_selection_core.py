"""The core's readers of Message slots and its selection call: Forge's estimate measured from the
slots equals the estimate of ``measured_text``; the selection counts the same with the estimate
read in Rust and with a counter called back; callbacks' exceptions come back unchanged; ids with
lone surrogates pair."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import Message, ToolUseBlock, _core, measured_text
from agentmsg.counting.counter import TokenCounter
from agentmsg.model.message import ROLE_CODES

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**40), 10**40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def messages(draw):
    kind = draw(st.sampled_from(["user", "assistant", "call", "tool"]))
    text = draw(st.text(max_size=30))
    if kind == "call":
        calls = [ToolUseBlock(draw(st.text(max_size=4)), draw(st.text(min_size=1, max_size=4)),
                              {"a": draw(json_values)}, server_name=draw(st.text(max_size=4)))]
        return Message.assistant(text, tool_calls=calls)
    if kind == "tool":
        return Message.tool(text, tool_id=draw(st.text(min_size=1, max_size=4)))
    return Message(kind, text or "x")


@settings(max_examples=300, deadline=None)
@given(st.lists(messages(), max_size=12))
def test_the_estimate_read_from_slots_is_the_estimate_of_the_measured_text(history):
    expected = [_core.estimate_tokens(measured_text(m), m.role.value) for m in history]
    assert _core.estimate_messages(history) == expected
    assert agentmsg.estimate_tokens_many(history) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(messages(), max_size=40), st.integers(0, 300), st.booleans(), st.booleans())
def test_estimate_in_rust_and_a_counter_called_back_select_alike(history, budget, first, allow_partial):
    counter = TokenCounter("estimate")
    asked = []

    def counts(positions):
        asked.extend(positions)
        return counter.count_many([history[i] for i in positions])

    options = dict(first=first, allow_partial=allow_partial)
    assert _core.select_messages(history, budget, "estimate", **options) == \
        _core.select_messages(history, budget, counts, **options)
    assert len(asked) == len(set(asked))  # each message counted at most once


def test_a_callback_exception_comes_back_unchanged():
    class Stop(Exception):
        pass

    def counts(positions):
        raise Stop(positions[:2])

    with pytest.raises(Stop) as raised:
        _core.select_messages([Message.user("a"), Message.user("b")], 10, counts)
    assert raised.value.args == ([0, 1],)


def test_bad_counts_are_typed_errors_naming_the_index():
    history = [Message.user("a")] * 3
    with pytest.raises(agentmsg.MessageTypeError, match=r"^counts returned str at index 0; it must return ints$"):
        _core.select_messages(history, 10, lambda positions: ["1"] * len(positions))
    with pytest.raises(agentmsg.MessageError, match=r"^1 counts for 3 messages: one entry per message asked for$"):
        _core.select_messages(history, 10, lambda positions: [1])
    with pytest.raises(agentmsg.MessageTypeError, match=r"^messages\[1\] must be a Message, not int$"):
        _core.select_messages([Message.user("a"), 5], 10, "estimate")


def test_ids_with_lone_surrogates_pair_and_trim_keeps_their_group():
    chat = [Message.user("go"), Message.assistant(tool_calls=[ToolUseBlock("\ud800", "f\udc00", {})]),
            Message.tool("r", tool_id="\ud800"), Message.tool("s", name="f\udc00")]
    call_of, orphans, unanswered, between = _core.pair_messages(chat)
    assert (call_of, orphans, unanswered, between) == ([-1, -1, 1, -1], [3], [], None)
    counts = agentmsg.estimate_tokens_many(chat)
    assert agentmsg.trim(chat, sum(counts) - 1).kept == (1, 2, 3)
    assert agentmsg.trim(chat, counts[2] + counts[3]).kept == (3,)  # 2 leaves with its call
    with pytest.raises(agentmsg.MessageError, match=r"^messages\[1\]: a tool call's id is not valid Unicode"):
        agentmsg.pair_tool_results(chat)


def test_role_codes_of_the_stub_match_the_core():
    roles = [Message.system("s"), Message.user("u"), Message.assistant("a"), Message.tool("t", tool_id="x")]
    assert [ROLE_CODES[m.role] for m in roles] == [0, 1, 2, 3]
    assert _core.valid_cuts(roles) == [False, True, True, True]
