"""ConversationMemory: all-or-nothing adds, counting each message a constant number of times with
a compactor, and typed errors for hostile values in every public name of memory, counting,
toolpairs and compaction."""

import asyncio
import math
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import (
    AgentMsgError,
    Compactor,
    ConversationMemory,
    Message,
    ToolUseBlock,
    prune_tool_outputs,
    summarize,
)
from agentmsg.counting import CountCache, TokenCounter
from conversations import by_metadata, conversations, m, turn


class Boom(Exception):
    pass


def state(memory):
    return (memory.messages, memory.total_tokens, memory.over_budget, memory.system_over_budget,
            memory.pruned, len(memory))


def failing_once(calls_before_failure):
    """An on_prune that raises on its n-th call, and records what it was shown otherwise."""
    seen = {"calls": 0}

    def on_prune(removed):
        seen["calls"] += 1
        if seen["calls"] == calls_before_failure:
            raise Boom("on_prune failed")

    return on_prune


def test_failing_on_prune_leaves_the_memory_as_it_was():
    mem = ConversationMemory(10, counter=by_metadata, on_prune=failing_once(1))
    chat = [m("system", 2), m("user", 4), turn(2, "a"), m("tool", 5, tool_id="a")]
    mem.extend(chat[:3])
    before = state(mem)
    with pytest.raises(Boom):
        mem.add(chat[3])  # would prune the user
    assert state(mem) == before
    # A retry adds the message once, and the result pairs with its call as if nothing happened.
    mem.add(chat[3])
    assert mem.messages == [chat[0], chat[2], chat[3]] and mem.pruned == [chat[1]]


def test_failing_on_prune_in_extend_undoes_the_whole_batch():
    mem = ConversationMemory(6, counter=by_metadata, on_prune=failing_once(1))
    mem.add(m("user", 3))
    before = state(mem)
    with pytest.raises(Boom):
        mem.extend([m("user", 2), m("user", 2), m("user", 3)])
    assert state(mem) == before


def test_failing_policy_leaves_the_memory_as_it_was():
    def policy(messages):
        raise Boom("policy failed")

    mem = ConversationMemory(20, counter=by_metadata, compactor=Compactor([policy], trigger=0.5))
    mem.extend([m("user", 4), m("user", 4)])
    before = state(mem)
    with pytest.raises(Boom):
        mem.add(m("user", 4))
    assert state(mem) == before


def test_on_prune_cannot_add_to_its_own_memory():
    mem = ConversationMemory(5, counter=by_metadata)
    mem._on_prune = lambda removed: mem.add(m("user", 1))
    mem.add(m("user", 4))
    before = state(mem)
    with pytest.raises(agentmsg.MessageError, match="cannot add to the memory they serve"):
        mem.add(m("user", 4))
    assert state(mem) == before


@settings(max_examples=150, deadline=None)
@given(conversations(max_steps=20), st.integers(0, 80), st.lists(st.integers(1, 6), max_size=4),
       st.booleans())
def test_a_failed_add_changes_nothing_later(chat, max_tokens, failures, compact):
    """A memory whose on_prune fails now and then, with every failed add retried, ends exactly
    like a memory that never failed (same messages, totals and pruned records)."""
    compactor = Compactor([partial(prune_tool_outputs, keep_recent=1)], trigger=0.7) if compact else None
    calls = {"n": 0}
    failing_at = set()
    for f in failures:
        failing_at.add(f + (max(failing_at) if failing_at else 0))

    def flaky(removed):
        calls["n"] += 1
        if calls["n"] in failing_at:
            raise Boom()

    reference = ConversationMemory(max_tokens, counter=by_metadata, compactor=compactor)
    tested = ConversationMemory(max_tokens, counter=by_metadata, compactor=compactor, on_prune=flaky)
    for message in chat:
        reference.add(message)
        while True:
            before = state(tested)
            try:
                tested.add(message)
                break
            except Boom:
                assert state(tested) == before
        assert state(tested) == state(reference)


def test_counter_calls_stay_constant_per_message_with_a_compactor():
    calls = {"n": 0}

    def counting(message):
        calls["n"] += 1
        return agentmsg.estimate_tokens(message)

    policies = [partial(prune_tool_outputs, keep_recent=2),
                partial(summarize, summarizer=lambda old: f"{len(old)} messages", keep_recent=20)]
    mem = ConversationMemory(4_000, counter=counting, compactor=Compactor(policies, trigger=0.8))
    n = 10_000
    for i in range(n):
        if i % 3 == 1:
            mem.add(Message.assistant(tool_calls=[ToolUseBlock(f"c{i}", "read", {"path": "x" * 40})]))
        elif i % 3 == 2:
            mem.add(Message.tool("output " * 60, tool_id=f"c{i - 1}"))
        else:
            mem.add(Message.user("question " * 10))
    # Each added message is counted once; each message a policy creates is counted once.
    assert calls["n"] <= 3 * n
    assert mem.total_tokens <= 4_000


def test_memory_state_matches_trim_after_compaction_free_adds():
    chat = [m("system", 3)] + [m("user", 1 + i % 5) for i in range(200)]
    mem = ConversationMemory(40, counter=by_metadata)
    for x in chat:
        mem.add(x)
    assert mem.messages == agentmsg.trim(chat, 40, counter=by_metadata).messages


def test_count_cache_counts_each_object_once():
    calls = []
    cache = CountCache(TokenCounter(lambda x: calls.append(x) or 2))
    a, b = Message.user("a"), Message.user("b")
    assert cache.counts([a, b, a]) == [2, 2, 2] and cache.total([b, a]) == 4
    assert calls == [a, b]
    seeded = CountCache(lambda x: 1 / 0, known=[(a, 7)])
    assert seeded.counts([a]) == [7]


# -- hostile values ------------------------------------------------------------------------------

def deep_list(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


HOSTILE = [None, True, math.nan, float("inf"), 2**200, -1, b"bytes", "\ud800", "", deep_list(100_000),
           {"a": 1}, 3.5, object()]


def hostile_calls():
    msg = Message.user("hello")
    chat = [msg]
    comp = Compactor([])
    yield "trim(messages)", lambda v: agentmsg.trim(v, 10)
    yield "trim(max_tokens)", lambda v: agentmsg.trim(chat, v)
    yield "trim(counter)", lambda v: agentmsg.trim(chat, 10, counter=v)
    yield "trim(keep_system)", lambda v: agentmsg.trim(chat, 10, keep_system=v)
    yield "trim(start_on)", lambda v: agentmsg.trim(chat, 10, start_on=v)
    yield "trim(list with value)", lambda v: agentmsg.trim([msg, v], 10)
    yield "token_counter", lambda v: agentmsg.token_counter(v)
    yield "ConversationMemory(max_tokens)", lambda v: ConversationMemory(v)
    yield "ConversationMemory(counter)", lambda v: ConversationMemory(10, counter=v)
    yield "ConversationMemory(keep_system)", lambda v: ConversationMemory(10, keep_system=v)
    yield "ConversationMemory(compactor)", lambda v: ConversationMemory(10, compactor=v)
    yield "ConversationMemory(on_prune)", lambda v: ConversationMemory(10, on_prune=v)
    yield "ConversationMemory.add", lambda v: ConversationMemory(10).add(v)
    yield "ConversationMemory.extend", lambda v: ConversationMemory(10).extend(v)
    yield "ConversationMemory.extend(list)", lambda v: ConversationMemory(10).extend([msg, v])
    yield "ConversationMemory.aadd", lambda v: asyncio.run(ConversationMemory(10).aadd(v))
    yield "ConversationMemory.recent", lambda v: ConversationMemory(10).recent(v)
    yield "ConversationMemory.by_role", lambda v: ConversationMemory(10).by_role(v)
    yield "counter returns", lambda v: agentmsg.trim(chat, 10, counter=lambda _: v)
    yield "pair_tool_results", lambda v: agentmsg.pair_tool_results(v)
    yield "pair_tool_results(list)", lambda v: agentmsg.pair_tool_results([msg, v])
    yield "check_tool_pairs", lambda v: agentmsg.check_tool_pairs(v)
    yield "repair_tool_pairs", lambda v: agentmsg.repair_tool_pairs(v)
    yield "prune_tool_outputs(keep_recent)", lambda v: prune_tool_outputs(chat, keep_recent=v)
    yield "prune_tool_outputs(placeholder)", lambda v: prune_tool_outputs(chat, placeholder=v)
    yield "compress(max_chars)", lambda v: agentmsg.compress(chat, max_chars=v)
    yield "compress(messages)", lambda v: agentmsg.compress(v)
    yield "expand(message_id)", lambda v: agentmsg.expand(chat, v)
    yield "summarize(summarizer)", lambda v: summarize([msg, Message.user("b")], v, keep_recent=1)
    yield "summarize(keep_recent)", lambda v: summarize(chat, str, keep_recent=v)
    yield "summarizer returns", lambda v: summarize([msg, Message.user("b")], lambda old: v, keep_recent=1)
    yield "Compactor(policies)", lambda v: Compactor(v)
    yield "Compactor(trigger)", lambda v: Compactor([], trigger=v)
    yield "Compactor.compact(max_tokens)", lambda v: comp.compact(chat, v)
    yield "Compactor.compact(messages)", lambda v: comp.compact(v, 10)
    yield "Compactor.compact(counter)", lambda v: Compactor([str]).compact([msg], 1, counter=v)
    yield "CountCache(counter)", lambda v: CountCache(v)
    yield "TokenCounter", lambda v: TokenCounter(v)


@pytest.mark.parametrize("name,call", list(hostile_calls()), ids=[n for n, _ in hostile_calls()])
def test_hostile_values_give_typed_errors(name, call):
    for value in HOSTILE:
        try:
            call(value)
        except AgentMsgError as error:
            assert isinstance(error, (ValueError, TypeError)), (name, value, error)
            assert len(str(error)) < 400, (name, str(error)[:100])
        except Exception as error:  # noqa: BLE001
            pytest.fail(f"{name} with {type(value).__name__}: bare {type(error).__name__}: {str(error)[:200]}")


def test_hostile_ids_in_tool_messages_give_typed_errors():
    chat = [Message.assistant(tool_calls=[ToolUseBlock("\ud800", "calc", {})]), Message.tool("r", tool_id="\ud800")]
    with pytest.raises(agentmsg.MessageError, match=r"^messages\[0\]: a tool call"):
        agentmsg.pair_tool_results(chat)
    mem = ConversationMemory(100)
    with pytest.raises(agentmsg.MessageError, match="not valid Unicode"):
        mem.add(chat[0])
    assert len(mem) == 0
