"""trim()'s LangChain-shaped options: strategy="first", end_on, role lists and allow_partial,
checked on examples and against a plain Python model of the rules over generated histories."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmsg import Message, MessageError, MessageTypeError, get_encoding, pair_tool_results, trim
from conversations import by_metadata, rule1, conversations, m, turn

ROLES = ["user", "assistant", "tool"]


def model(source, budget, start_on=None, end_on=None, first=False):
    """The kept indices by definition: systems by rule 1, then among the runs that split no tool
    group and meet the role rules, the longest that fits, else the shortest."""
    counts, kept_systems, others, remaining = rule1(source, budget)
    groups = pair_tool_results(source).groups

    def whole(run):
        inside = set(run)
        return all((j in inside) == (groups[j] in inside) for j in others)

    def role_in(i, rule):
        return rule is None or source[i].role in rule

    def clean_end(k):  # no group goes on past others[k]
        return all(groups[j] > others[k] for j in others[k + 1:])

    if not others:
        return kept_systems
    if first:
        runs = [others[:k + 1] for k in reversed(range(len(others)))
                if role_in(others[k], end_on) and whole(others[:k + 1])]
        if not runs:
            runs = [] if end_on else [others]
    else:
        ends = [k for k in range(len(others)) if role_in(others[k], end_on) and clean_end(k)]
        if not ends:
            return kept_systems
        b = ends[-1]
        runs = [others[k:b + 1] for k in range(b + 1) if whole(others[k:b + 1])]
        starting = [r for r in runs if role_in(r[0], start_on)]
        runs = starting or runs
    if not runs:
        return kept_systems
    fitting = [r for r in runs if sum(counts[i] for i in r) <= remaining]
    return sorted(kept_systems + (fitting[0] if fitting else runs[-1]))


role_rules = st.one_of(st.none(), st.lists(st.sampled_from(ROLES), min_size=1, max_size=2, unique=True))


@settings(max_examples=300, deadline=None)
@given(conversations(), st.integers(0, 120), role_rules, role_rules)
def test_strategy_last_with_end_on_matches_the_model(chat, budget, start_on, end_on):
    r = trim(chat, budget, counter=by_metadata, start_on=start_on, end_on=end_on)
    assert list(r.kept) == model(chat, budget, start_on, end_on)
    assert r.total_tokens == sum(by_metadata(chat[i]) for i in r.kept)
    assert r.over_budget == (r.total_tokens > budget) and r.partial is None


@settings(max_examples=300, deadline=None)
@given(conversations(), st.integers(0, 120), role_rules)
def test_strategy_first_matches_the_model(chat, budget, end_on):
    r = trim(chat, budget, counter=by_metadata, strategy="first", end_on=end_on)
    assert list(r.kept) == model(chat, budget, end_on=end_on, first=True)
    assert r.total_tokens == sum(by_metadata(chat[i]) for i in r.kept)
    assert r.over_budget == (r.total_tokens > budget)


@settings(max_examples=100, deadline=None)
@given(conversations(max_steps=80), st.integers(0, 60), role_rules, st.booleans())
def test_long_histories_window_matches_the_model(chat, budget, end_on, first):
    # Long enough that the window grows several times before it decides.
    r = trim(chat, budget, counter=by_metadata, end_on=end_on, strategy="first" if first else "last")
    assert list(r.kept) == model(chat, budget, end_on=end_on, first=first)


def test_first_keeps_the_oldest_and_never_splits_a_group():
    chat = [m("system", 1), m("user", 1), turn(1, "a"), m("tool", 1, tool_id="a"), m("user", 1)]
    assert trim(chat, 3, counter=by_metadata, strategy="first").kept == (0, 1)
    assert trim(chat, 4, counter=by_metadata, strategy="first").kept == (0, 1, 2, 3)
    r = trim([m("user", 9), m("user", 1)], 5, counter=by_metadata, strategy="first")
    assert r.kept == (0,) and r.over_budget  # the oldest group is always kept


def test_end_on_removes_what_follows_and_takes_role_lists():
    chat = [m("system", 1), m("user", 1), turn(1, "a"), m("tool", 1, tool_id="a"), m("assistant", 1)]
    assert trim(chat, 10, counter=by_metadata, end_on="user").kept == (0, 1)
    assert trim(chat, 10, counter=by_metadata, end_on=["tool", "user"]).kept == (0, 1, 2, 3)
    # The assistant that called is no end: its result would be cut off.
    assert trim(chat[:4], 10, counter=by_metadata, end_on="assistant").kept == (0,)


def test_long_history_with_end_on_counts_only_the_tail():
    counted = []

    def counter(message):
        counted.append(message)
        return 10

    chat = [m("user", 0) if i % 2 else m("assistant", 0) for i in range(10_001)]
    r = trim(chat, 30, counter=counter, end_on="user", start_on="user")
    assert r.kept == (9997, 9998, 9999) and len(counted) < 200  # 10_000 is an assistant


def test_bad_options():
    with pytest.raises(MessageError, match="strategy must be 'last' or 'first'"):
        trim([], 5, strategy="middle")
    with pytest.raises(MessageError, match="start_on is only valid with strategy='last'"):
        trim([], 5, strategy="first", start_on="user")
    with pytest.raises(MessageError, match="end_on must name at least one role"):
        trim([], 5, end_on=[])
    with pytest.raises(MessageError, match="unknown role"):
        trim([], 5, end_on=["user", "robot"])
    with pytest.raises(MessageTypeError, match="allow_partial must be a bool"):
        trim([], 5, allow_partial=1)
    with pytest.raises(MessageTypeError, match="end_on must be a role or a sequence of roles"):
        trim([], 5, end_on=3)


# -- allow_partial ------------------------------------------------------------------------------

O200K = get_encoding("o200k_base")


def chars(message):
    return len(message.text)


def test_partial_keeps_the_newest_tokens_of_the_message_before_the_run():
    chat = [Message.user("alpha beta gamma delta"), Message.assistant("ok")]
    r = trim(chat, 14, counter=chars, allow_partial=True)
    assert [x.text for x in r.messages] == [" gamma delta", "ok"]
    assert r.partial == 0 and r.kept == (0, 1) and r.total_tokens == 14 and not r.over_budget
    assert r.removed == [] and r.source[0] is chat[0]  # the original stays in source
    # strategy first keeps the oldest tokens of the message after the run.
    r = trim([Message.assistant("ok"), Message.user("alpha beta gamma delta")], 14, counter=chars,
             allow_partial=True, strategy="first")
    assert [x.text for x in r.messages] == ["ok", "alpha beta"] and r.partial == 1


def test_partial_cuts_the_newest_message_alone_over_budget():
    r = trim([Message.user("one two three four five six")], 8, allow_partial=True)
    assert r.messages[0].text == " four five six" and r.partial == 0 and not r.over_budget
    # With the exact counter, the cut is at that encoding's token boundary and fits exactly.
    text = "The quick brown fox jumps over the lazy dog. " * 20
    r = trim([Message.user(text)], 60, counter="o200k_base", allow_partial=True)
    tokens = O200K.encode_ordinary(text)
    assert r.total_tokens <= 60 and text.endswith(r.messages[0].text)
    kept = len(O200K.encode_ordinary(r.messages[0].text))
    assert O200K.decode(tokens[-kept:]) == r.messages[0].text
    assert trim([Message.user(O200K.decode(tokens[-kept - 1:]))], 60, counter="o200k_base").over_budget


def test_partial_never_cuts_a_tool_group_or_a_call():
    chat = [turn(1, "a"), m("tool", 1, tool_id="a"), Message.user("hello")]  # "call", "t1", "hello"
    r = trim(chat, 6, counter=chars, allow_partial=True)
    assert r.partial is None and r.kept == (2,)
    # A result alone over budget stays whole (over budget), as without allow_partial.
    r = trim(chat[:2], 1, counter=chars, allow_partial=True)
    assert r.partial is None and r.over_budget
    # start_on: the cut message must be able to begin the run.
    chat = [Message.assistant("alpha beta gamma"), Message.user("hi")]
    assert trim(chat, 10, counter=chars, allow_partial=True, start_on="user").partial is None


def test_partial_character_boundaries():
    # A token boundary inside a character moves to the whole character (no U+FFFD, a true suffix).
    text = "日本語のテキスト😀😀 and more 🎉"
    for budget in range(1, len(text)):
        r = trim([Message.user(text)], budget, counter=chars, allow_partial=True)
        cut = r.messages[0].text
        assert text.endswith(cut) and "\ufffd" not in cut
        assert r.partial == 0 or r.over_budget


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "system"]),
                          st.text(min_size=1, max_size=40)), max_size=8),
       st.integers(0, 120), st.booleans())
def test_partial_adds_at_most_one_cut_message(spec, budget, first):
    chat = [Message(role, text) for role, text in spec]
    strategy = "first" if first else "last"
    plain = trim(chat, budget, counter=chars, strategy=strategy)
    r = trim(chat, budget, counter=chars, strategy=strategy, allow_partial=True)
    if r.partial is None:
        assert r.kept == plain.kept
        return
    assert r.total_tokens <= budget and not r.over_budget
    assert set(r.kept) - set(plain.kept) <= {r.partial}
    assert set(plain.kept) - set(r.kept) == set()
    cut = r.messages[r.kept.index(r.partial)].text
    original = chat[r.partial].text
    assert cut and (original.startswith(cut) if first else original.endswith(cut))
    assert r.total_tokens == sum(chars(x) for x in r.messages)
