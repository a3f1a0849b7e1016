"""check_tool_pairs / repair_tool_pairs: ids (OpenAI style) and name-only pairs (Forge style)."""

import pytest
from hypothesis import given, settings

from agentmsg import (
    Message,
    ToolPairError,
    ToolUseBlock,
    check_tool_pairs,
    pair_tool_results,
    repair_tool_pairs,
)
from agentmsg.history.toolpairs import INTERRUPTED
from conversations import conversations


def call(id, name="calc"):
    return ToolUseBlock(id, name, {})


def asst(*calls):
    return Message.assistant(tool_calls=list(calls))


def test_valid_id_pairs_pass():
    chat = [Message.user("q"), asst(call("a"), call("b")), Message.tool("1", tool_id="b"),
            Message.tool("2", tool_id="a"), Message.assistant("done")]
    check_tool_pairs(chat)
    assert pair_tool_results(chat).call_of == (-1, -1, 1, 1, -1)


def test_orphan_result_is_named_with_index():
    chat = [Message.user("q"), Message.tool("42", tool_id="call_9")]
    with pytest.raises(ToolPairError, match=r"^messages\[1\]: tool result for call id 'call_9' has no matching tool call before it$"):
        check_tool_pairs(chat)


def test_result_before_its_call_is_an_orphan():
    chat = [Message.tool("42", tool_id="a"), asst(call("a")), Message.tool("43", tool_id="a")]
    with pytest.raises(ToolPairError, match=r"^messages\[0\]: "):
        check_tool_pairs(chat)


def test_call_without_result_is_named():
    chat = [Message.user("q"), asst(call("a", "search"))]
    with pytest.raises(ToolPairError, match=r"^messages\[1\]: tool call 'a' \(search\) has no result$"):
        check_tool_pairs(chat)


def test_first_problem_wins():
    chat = [asst(call("a")), Message.user("x"), Message.tool("?", tool_id="zz")]
    with pytest.raises(ToolPairError, match=r"^messages\[0\]: tool call 'a'"):
        check_tool_pairs(chat)


def test_error_is_a_value_error():
    with pytest.raises(ValueError):
        check_tool_pairs([Message.tool("x", name="calc")])


def test_reused_id_pairs_with_latest_call():
    chat = [asst(call("a")), Message.tool("1", tool_id="a"), asst(call("a")), Message.tool("2", tool_id="a")]
    assert pair_tool_results(chat).call_of == (-1, 0, -1, 2)
    check_tool_pairs(chat)


def test_name_only_pairs_in_order():
    chat = [asst(call("", "calc"), call("", "search"), call("", "calc")),
            Message.tool("r1", name="calc"), Message.tool("r2", name="calc"), Message.tool("r3", name="search")]
    check_tool_pairs(chat)
    assert pair_tool_results(chat).call_of == (-1, 0, 0, 0)


def test_name_only_result_after_turn_is_answered_is_orphan():
    chat = [asst(call("", "calc")), Message.tool("r1", name="calc"), Message.assistant("ok"),
            Message.tool("r2", name="calc")]
    with pytest.raises(ToolPairError, match=r"^messages\[3\]: tool result for tool name 'calc'"):
        check_tool_pairs(chat)


def test_name_only_result_pairs_only_with_the_latest_turn():
    chat = [asst(call("", "calc")), Message.user("wait"), asst(call("", "search")),
            Message.tool("r", name="calc")]
    assert pair_tool_results(chat).orphans == (3,)


def test_repair_drops_orphans_and_fills_interrupted_calls():
    chat = [Message.user("q"), asst(call("a"), call("b", "search")), Message.tool("1", tool_id="a"),
            Message.tool("stray", tool_id="zz"), Message.user("next")]
    fixed = repair_tool_pairs(chat)
    assert [(m.role.value, m.tool_id, m.text) for m in fixed] == [
        ("user", None, "q"),
        ("assistant", None, ""),
        ("tool", "a", "1"),
        ("tool", "b", INTERRUPTED),
        ("user", None, "next"),
    ]
    placeholder = fixed[3]
    assert placeholder.is_error and placeholder.name == "search"
    assert placeholder.metadata == {"repaired": "interrupted"}
    check_tool_pairs(fixed)


def test_repair_pending_call_at_end():
    fixed = repair_tool_pairs([Message.user("q"), asst(call("", "calc"))])
    assert [(m.role.value, m.tool_id, m.name) for m in fixed] == [
        ("user", None, None), ("assistant", None, None), ("tool", None, "calc")]
    check_tool_pairs(fixed)


def test_repair_keeps_valid_history_unchanged():
    chat = [Message.user("q"), asst(call("a")), Message.tool("1", tool_id="a")]
    fixed = repair_tool_pairs(chat)
    assert [m.id for m in fixed] == [m.id for m in chat]


@settings(max_examples=200, deadline=None)
@given(conversations(broken=True))
def test_repair_always_gives_a_valid_history(chat):
    fixed = repair_tool_pairs(chat)
    check_tool_pairs(fixed)
    # Only orphans are dropped; every other message survives in order.
    orphans = set(pair_tool_results(chat).orphans)
    survivors = [m.id for i, m in enumerate(chat) if i not in orphans]
    assert [m.id for m in fixed if m.metadata.get("repaired") != "interrupted"] == survivors
    assert repair_tool_pairs(fixed) == fixed
