"""Bad input anywhere in the public API is an AgentMsgError of the matching builtin, naming what."""

import pytest

import agentmsg
from agentmsg import Message, MessageError, MessageTypeError, _core

ONE = [Message.user("x")]


@pytest.mark.parametrize(
    "call",
    [
        lambda value: agentmsg.trim(value, 10),
        lambda value: agentmsg.to_openai(value),
        lambda value: agentmsg.check_tool_pairs(value),
        lambda value: agentmsg.repair_tool_pairs(value),
        lambda value: agentmsg.pair_tool_results(value),
        lambda value: agentmsg.conversation_stats(value),
        lambda value: agentmsg.count_message_tokens(value),
        lambda value: agentmsg.ConversationMemory(100).extend(value),
        lambda value: agentmsg.compress(value),
    ],
)
@pytest.mark.parametrize("value", [None, 5, "text", Message.user("x")])
def test_a_non_sequence_of_messages_is_a_type_error_naming_messages(call, value):
    with pytest.raises(MessageTypeError, match=r"^messages must be a (sequence|list) of "):
        call(value)


def test_any_iterable_of_messages_is_accepted():
    assert agentmsg.check_tool_pairs(iter(ONE)) is None
    assert [m.text for m in agentmsg.repair_tool_pairs(m for m in ONE)] == ["x"]


def test_parse_options_are_type_checked_by_name():
    with pytest.raises(MessageTypeError, match="^code_fences must be a bool, not str$"):
        agentmsg.parse("x", code_fences="no")
    with pytest.raises(MessageTypeError, match="^start_in_thinking must be a bool or None, not int$"):
        agentmsg.parse("x", start_in_thinking=1)
    with pytest.raises(MessageTypeError, match="^thinking must be a str, not int$"):
        agentmsg.StreamParser(thinking=3)
    with pytest.raises(MessageError, match="unknown thinking mode 'sometimes'"):
        agentmsg.parse_many(["x"], thinking="sometimes")


def test_a_str_subclass_cannot_change_what_the_parser_reads():
    class Sneaky(str):
        def encode(self, *args, **kwargs):
            return 5

    assert agentmsg.parse(Sneaky("a\udc80b")).text == "a\udc80b"


def test_grouped_counts_never_overflow_or_panic():
    with pytest.raises(agentmsg.AgentMsgError, match="group sizes sum to more than 2\\*\\*64"):
        _core.count_tokens_grouped(["a"], [2**64 - 1, 2], [0, 0])
    with pytest.raises(agentmsg.AgentMsgError, match="overflows 2\\*\\*64"):
        _core.count_tokens_grouped(["a", "b"], [1, 1], [2**64 - 1, 5])


def test_message_fields_out_of_range_or_of_the_wrong_type():
    with pytest.raises(MessageError, match="timestamp 1e\\+20 is not a representable epoch time"):
        Message.from_dict({"role": "user", "content": "x", "timestamp": 1e20})
    with pytest.raises(MessageTypeError, match="^text must be a str or bytes, not int$"):
        Message.from_json(5)
    with pytest.raises(MessageError, match="not valid UTF-8"):
        Message.from_json(b"\xff")


def test_compaction_arguments():
    with pytest.raises(MessageTypeError, match="^summarizer must be callable, not int$"):
        agentmsg.summarize(ONE, 5)
    with pytest.raises(MessageTypeError, match="^trigger must be a number, not str$"):
        agentmsg.Compactor([], trigger="x")
    with pytest.raises(MessageError, match="trigger must be a fraction"):
        agentmsg.Compactor([], trigger=2)
