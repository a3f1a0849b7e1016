"""trim(): the four rules, start_on, counters, and a brute-force check of optimality."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmsg import (
    EncodingError,
    Message,
    MessageError,
    MessageTypeError,
    ToolUseBlock,
    estimate_tokens,
    pair_tool_results,
    trim,
)
from conversations import by_metadata, rule1, check_rules, conversations, m, turn


def texts(result):
    return [x.text for x in result.messages]


def test_everything_fits():
    chat = [m("system", 1), m("user", 2), m("assistant", 3)]
    r = trim(chat, 6, counter=by_metadata)
    assert r.messages == chat and r.total_tokens == 6 and not r.over_budget and r.removed == []


def test_rule1_system_kept_oldest_others_go():
    chat = [m("system", 5), m("user", 4), m("assistant", 4), m("user", 4)]
    r = trim(chat, 13, counter=by_metadata)
    assert texts(r) == ["system5", "assistant4", "user4"]
    assert r.kept == (0, 2, 3) and r.removed == [chat[1]] and r.total_tokens == 13


def test_rule1_systems_alone_over_budget_keep_newest():
    chat = [m("system", 8), m("user", 1), m("system", 7), m("user", 1)]
    r = trim(chat, 10, counter=by_metadata)
    assert r.kept == (1, 2, 3)
    assert r.system_over_budget and not r.over_budget and r.total_tokens == 9


def test_rule1_keep_system_false():
    chat = [m("system", 8), m("user", 1), m("user", 1)]
    r = trim(chat, 3, counter=by_metadata, keep_system=False)
    assert r.kept == (1, 2) and not r.system_over_budget


def test_rule2_tool_group_leaves_whole():
    chat = [m("system", 1), m("user", 1), turn(5, "a", "b"), m("tool", 5, tool_id="b"),
            m("tool", 5, tool_id="a"), m("assistant", 2), m("user", 2)]
    # 14 fits the final assistant+user and either result alone, but never a result without its call.
    r = trim(chat, 10, counter=by_metadata)
    assert r.kept == (0, 5, 6)
    r = trim(chat, 20, counter=by_metadata)
    assert r.kept == (0, 2, 3, 4, 5, 6) and r.total_tokens == 20


def test_rule2_name_only_pairs():
    calls = [ToolUseBlock("", "calc", {}), ToolUseBlock("", "search", {})]
    chat = [m("user", 1), Message.assistant("c", tool_calls=calls, metadata={"tokens": 3}),
            m("tool", 3, name="calc"), m("tool", 3, name="search"), m("user", 1)]
    assert trim(chat, 9, counter=by_metadata).kept == (4,)
    assert trim(chat, 10, counter=by_metadata).kept == (1, 2, 3, 4)


def test_rule2_interleaved_user_travels_with_the_group():
    chat = [m("user", 1), turn(2, "a"), m("user", 1), m("tool", 2, tool_id="a"), m("user", 1)]
    # Cutting at 2 or 3 would split the call from its result.
    assert trim(chat, 3, counter=by_metadata).kept == (4,)
    assert trim(chat, 6, counter=by_metadata).kept == (1, 2, 3, 4)


def test_rule3_no_gaps_even_if_a_small_old_message_would_fit():
    chat = [m("user", 1), m("user", 9), m("user", 1)]
    assert trim(chat, 3, counter=by_metadata).kept == (2,)


def test_rule4_newest_kept_alone_over_budget():
    chat = [m("system", 2), m("user", 1), turn(5, "a"), m("tool", 50, tool_id="a")]
    r = trim(chat, 10, counter=by_metadata)
    assert r.kept == (0, 2, 3) and r.over_budget and r.total_tokens == 57


def test_start_on_user():
    chat = [m("system", 1), m("user", 1), m("assistant", 1), m("user", 1), turn(1, "a"),
            m("tool", 1, tool_id="a"), m("assistant", 1)]
    assert trim(chat, 5, counter=by_metadata).kept == (0, 3, 4, 5, 6)
    assert trim(chat, 4, counter=by_metadata).kept == (0, 4, 5, 6)
    assert trim(chat, 4, counter=by_metadata, start_on="user").kept == (0, 3, 4, 5, 6)
    r = trim(chat, 4, counter=by_metadata, start_on="user")
    assert r.over_budget
    # No user message at all: start_on cannot be met and is ignored.
    assert trim([m("assistant", 1), m("assistant", 1)], 1, counter=by_metadata, start_on="user").kept == (1,)


def test_estimate_counter_default():
    chat = [Message.user("Hello"), Message.user("World")]
    assert estimate_tokens(chat[0]) == 5
    assert trim(chat, 9).kept == (1,)
    assert trim(chat, 10).kept == (0, 1)


def test_empty():
    r = trim([], 10)
    assert r.messages == [] and r.total_tokens == 0 and not r.over_budget


def test_bad_input():
    with pytest.raises(MessageTypeError, match=r"messages\[1\] must be a Message, .*, not int"):
        trim([Message.user("a"), 3], 10)
    with pytest.raises(MessageError, match="max_tokens must be >= 0"):
        trim([], -1)
    with pytest.raises(MessageTypeError, match="max_tokens must be an int"):
        trim([], 1.5)
    with pytest.raises(MessageTypeError, match="counter returned str for message 0"):
        trim([Message.user("a")], 5, counter=lambda _: "3")
    with pytest.raises(MessageError, match="counter returned -1 for message 0"):
        trim([Message.user("a")], 5, counter=lambda _: -1)
    with pytest.raises(MessageError, match="counter returned 18446744073709551616 for message 0"):
        trim([Message.user("a")], 5, counter=lambda _: 2**64)
    with pytest.raises(MessageError, match="max_tokens must be"):
        trim([], 2**64)
    with pytest.raises(MessageTypeError, match="counter must be"):
        trim([], 5, counter=3)
    with pytest.raises(MessageError, match="unknown role"):
        trim([], 5, start_on="robot")


def test_unknown_encoding():
    with pytest.raises(EncodingError):
        trim([Message.user("a")], 5, counter="no_such_encoding")


def test_long_history_counts_only_the_tail():
    counted = []

    def counter(message):
        counted.append(message)
        return 10

    chat = [m("system", 0)] + [m("user", 0) for _ in range(10_000)]
    r = trim(chat, 50, counter=counter)
    assert r.kept == (0, 9997, 9998, 9999, 10000)  # the system costs 10 too
    assert len(counted) < 200


def brute_force(source, max_tokens, start_on=None):
    """The kept indices by definition: the longest valid run within budget, else the shortest."""
    counts, kept_systems, others, remaining = rule1(source, max_tokens)
    groups = pair_tool_results(source).groups
    valid = []
    for k in range(len(others)):
        run = others[k:]
        if any(groups[j] < run[0] for j in run):
            continue
        if any(groups[j] in run for j in others[:k]):
            continue
        valid.append(k)
    starting = [k for k in valid if start_on is None or source[others[k]].role == start_on]
    if not starting:
        starting = valid
    fitting = [k for k in starting if sum(counts[i] for i in others[k:]) <= remaining]
    k = fitting[0] if fitting else (starting[-1] if starting else len(others))
    return sorted(kept_systems + others[k:])


@settings(max_examples=300, deadline=None)
@given(conversations(), st.integers(0, 120), st.sampled_from([None, "user"]))
def test_rules_hold_and_selection_is_optimal(chat, max_tokens, start_on):
    r = trim(chat, max_tokens, counter=by_metadata, start_on=start_on)
    check_rules(chat, r.messages, max_tokens, r.total_tokens, r.over_budget, r.system_over_budget)
    assert list(r.kept) == brute_force(chat, max_tokens, start_on)
    assert len(r.messages) + len(r.removed) == len(chat)


@settings(max_examples=100, deadline=None)
@given(conversations(max_steps=60), st.integers(0, 60))
def test_rules_hold_without_keep_system(chat, max_tokens):
    r = trim(chat, max_tokens, counter=by_metadata, keep_system=False)
    check_rules(chat, r.messages, max_tokens, r.total_tokens, r.over_budget, r.system_over_budget,
                keep_system=False)


def test_real_transcript_keeps_pairs_and_counts_estimates():
    from agentmsg import check_tool_pairs, estimate_tokens_many
    from transcripts import build_transcript

    chat = build_transcript(3_000)
    check_tool_pairs(chat)
    r = trim(chat, 8_000)
    check_tool_pairs(r.messages)
    assert r.messages[0] is chat[0] and r.messages[-1] is chat[-1]
    assert r.total_tokens == sum(estimate_tokens_many(r.messages)) <= 8_000
    # The kept run is the longest that fits: one more group would not.
    start = r.kept[1]
    assert r.total_tokens + estimate_tokens_many([chat[start - 1]])[0] > 8_000 or chat[start - 1].role == "tool"


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_encoding_counter(encoding):
    from agentmsg import message_token_counts

    msgs = [Message.system("You are terse."), Message.user("What is the capital of France?"),
            Message.assistant("Paris."), Message.user("And of Italy?")]
    exact = message_token_counts(msgs, encoding)
    r = trim(msgs, exact[0] + exact[2] + exact[3], counter=encoding)
    assert r.kept == (0, 2, 3) and r.total_tokens == exact[0] + exact[2] + exact[3]
