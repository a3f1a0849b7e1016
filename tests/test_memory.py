"""ConversationMemory: the four rules after every add, the pruned record, threads, counters."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmsg import (
    ConversationMemory,
    Message,
    MessageError,
    MessageTypeError,
    ToolUseBlock,
    estimate_tokens,
    trim,
)
from conversations import by_metadata, check_rules, conversations, m, turn


def memory(max_tokens, **kw):
    return ConversationMemory(max_tokens, counter=by_metadata, **kw)


def test_basic_flow_counts_with_the_estimate():
    mem = ConversationMemory(8000)
    mem.add(Message.system("You are a helpful math tutor"))
    mem.add(Message.user("What is 15 + 27?"))
    assert [x.role.value for x in mem] == ["system", "user"]
    assert mem.total_tokens == sum(estimate_tokens(x) for x in mem.messages)


def test_rule1_system_never_pruned():
    mem = memory(10)
    mem.extend([m("system", 4), m("user", 3), m("user", 3), m("user", 3)])
    assert [x.text for x in mem] == ["system4", "user3", "user3"]
    assert mem.total_tokens == 10 and not mem.over_budget


def test_rule1_systems_alone_over_budget_keep_newest():
    mem = memory(10)
    mem.extend([m("system", 6), m("user", 1), m("system", 6)])
    assert [x.text for x in mem] == ["user1", "system6"]
    assert mem.system_over_budget and not mem.over_budget
    assert [x.text for x in mem.pruned] == ["system6"]


def test_rule1_keep_system_false():
    mem = memory(5, keep_system=False)
    mem.extend([m("system", 4), m("user", 3)])
    assert [x.text for x in mem] == ["user3"]


def test_rule2_tool_group_leaves_together():
    mem = memory(12)
    mem.extend([m("user", 4), turn(3, "a", "b"), m("tool", 3, tool_id="a"), m("tool", 3, tool_id="b")])
    assert len(mem) == 3  # the user went; the group is 9
    mem.add(m("user", 4))  # 13 > 12: the whole group must go, not just the call
    assert [x.text for x in mem] == ["user4"]
    assert [x.role.value for x in mem.pruned] == ["assistant", "tool", "tool"]


def test_rule2_name_only_results_join_their_call():
    calls = [ToolUseBlock("", "calc", {}), ToolUseBlock("", "search", {})]
    mem = memory(8)
    mem.extend([Message.assistant("c", tool_calls=calls, metadata={"tokens": 2}),
                m("tool", 2, name="calc"), m("tool", 2, name="search"), m("user", 3)])
    assert [x.text for x in mem] == ["user3"]


def test_rule2_late_result_of_a_pruned_call_is_pruned_too():
    mem = memory(5)
    mem.extend([turn(3, "a"), m("user", 4)])
    assert [x.text for x in mem] == ["user4"]
    mem.add(m("tool", 1, tool_id="a"))
    assert [x.text for x in mem] == ["user4"]
    assert [x.tool_id for x in mem.pruned] == ["a"]


def test_rule3_contiguous_even_if_small_old_message_would_fit():
    mem = memory(10)
    mem.extend([m("user", 1), m("user", 8), m("user", 2)])
    assert [x.text for x in mem] == ["user8", "user2"]
    mem.add(m("user", 1))
    assert [x.text for x in mem] == ["user2", "user1"]


def test_rule4_newest_kept_when_alone_over_budget():
    mem = memory(10)
    mem.extend([m("system", 2), m("user", 3), m("user", 50)])
    assert [x.text for x in mem] == ["system2", "user50"]
    assert mem.over_budget and mem.total_tokens == 52
    mem.add(m("user", 1))
    assert [x.text for x in mem] == ["system2", "user1"] and not mem.over_budget


def test_pruned_record_and_callback():
    seen = []
    mem = ConversationMemory(5, counter=by_metadata, on_prune=seen.append)
    mem.add(m("user", 3))
    assert mem.pruned == [] and seen == []
    mem.extend([m("user", 3), m("user", 3)])
    assert [x.text for x in mem.pruned] == ["user3", "user3"]
    assert seen == [mem.pruned]


def test_each_message_counted_once():
    calls = []

    def counter(message):
        calls.append(message.id)
        return 1

    mem = ConversationMemory(3, counter=counter)
    msgs = [Message.user(str(i)) for i in range(10)]
    for x in msgs[:5]:
        mem.add(x)
    mem.extend(msgs[5:])
    _ = (mem.messages, mem.total_tokens, list(mem), mem.recent(2))
    assert calls == [x.id for x in msgs]


def test_views():
    mem = memory(100)
    msgs = [m("system", 1), m("user", 1), m("assistant", 1), m("user", 2)]
    mem.extend(msgs)
    assert mem.messages == msgs and list(mem) == msgs and len(mem) == 4
    assert mem.recent(2) == msgs[2:] and mem.recent(0) == [] and mem.recent(10) == msgs
    assert mem.by_role("user") == [msgs[1], msgs[3]]
    assert mem.max_tokens == 100
    copy = mem.messages
    copy.clear()
    assert len(mem) == 4
    assert repr(mem) == "ConversationMemory(4 messages, 5/100 tokens)"
    mem.clear()
    assert len(mem) == 0 and mem.total_tokens == 0 and mem.messages == []


def test_interleaved_systems_keep_their_place():
    mem = memory(100)
    msgs = [m("user", 1), m("system", 1), m("assistant", 1), m("system", 1)]
    mem.extend(msgs)
    assert mem.messages == msgs


def test_bad_input():
    with pytest.raises(MessageTypeError, match="message must be a Message, .*, not str"):
        ConversationMemory(10).add("hi")
    with pytest.raises(MessageTypeError, match=r"messages\[1\] must be a Message"):
        ConversationMemory(10).extend([Message.user("a"), 3])
    with pytest.raises(MessageError, match="max_tokens must be >= 0"):
        ConversationMemory(-1)
    with pytest.raises(MessageTypeError):
        ConversationMemory(10, counter=None)
    with pytest.raises(MessageTypeError):
        ConversationMemory(10).recent("2")


def test_thread_pool_adds_are_all_accounted_for():
    pruned = []
    mem = ConversationMemory(1_000, counter=by_metadata, on_prune=pruned.extend)

    def worker(k):
        for i in range(200):
            mem.add(m("user", 1 + (i + k) % 7))
            assert mem.total_tokens <= 1_000
            _ = mem.messages
        return k

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert sorted(pool.map(worker, range(8))) == list(range(8))
    kept = mem.messages
    assert len(kept) + len(pruned) == 1_600
    assert {x.id for x in kept}.isdisjoint(x.id for x in pruned)
    assert mem.total_tokens == sum(by_metadata(x) for x in kept) <= 1_000


@settings(max_examples=300, deadline=None)
@given(st.booleans().flatmap(lambda interleave: st.tuples(st.just(interleave), conversations(interleave=interleave))),
       st.integers(0, 120))
def test_rules_hold_after_every_add(case, max_tokens):
    interleave, chat = case
    mem = memory(max_tokens)
    source = []  # what was added, minus late results whose call had already been pruned
    systems_dropped = False
    for message in chat:
        mem.add(message)
        kept = mem.messages
        if message.role == "tool" and message not in kept:
            assert mem.pruned == [message]  # a late result: rule 2 wins over rule 4, reported
        else:
            source.append(message)
        systems_dropped |= any(x.role == "system" for x in mem.pruned)
        check_rules(source, kept, max_tokens, mem.total_tokens, mem.over_budget,
                    mem.system_over_budget)
    if not interleave and not systems_dropped:
        # Results follow their calls and the system share never shrank: memory keeps exactly
        # what trim keeps for the whole history.
        assert mem.messages == trim(chat, max_tokens, counter=by_metadata).messages


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_encoding_counter_counts_each_message_once_exactly(encoding):
    from agentmsg import message_token_counts

    msgs = [Message.system("You are terse."), Message.user("What is the capital of France?"),
            Message.assistant("Paris."), Message.user("And of Italy?")]
    exact = message_token_counts(msgs, encoding)
    mem = ConversationMemory(sum(exact) - 1, counter=encoding)
    mem.extend(msgs)
    assert mem.messages == [msgs[0]] + msgs[2:]
    assert mem.total_tokens == exact[0] + exact[2] + exact[3]
    one = ConversationMemory(1_000, counter=encoding)
    for x in msgs:
        one.add(x)
    assert one.total_tokens == sum(exact)
