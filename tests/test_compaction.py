"""Compaction policies, the Compactor, and ConversationMemory with a compactor."""

import agentmsg
import asyncio
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmsg import (
    Compactor,
    ConversationMemory,
    Message,
    MessageError,
    MessageTypeError,
    ToolUseBlock,
    asummarize,
    check_tool_pairs,
    compress,
    expand,
    pair_tool_results,
    prune_tool_outputs,
    summarize,
)
from conversations import conversations


def call(id, name="calc"):
    return ToolUseBlock(id, name, {})


def tool_chat():
    return [
        Message.system("sys"),
        Message.user("go"),
        Message.assistant("", tool_calls=[call("a"), call("b", "search")]),
        Message.tool("A" * 300, tool_id="a", is_error=True),
        Message.tool("B" * 200, tool_id="b", name="search"),
        Message.assistant("", tool_calls=[call("c")]),
        Message.tool("C" * 100, tool_id="c"),
    ]


def test_prune_tool_outputs_keeps_recent_and_pairs():
    chat = tool_chat()
    out = prune_tool_outputs(chat, keep_recent=1)
    assert [m.text for m in out[3:5]] == [
        "[tool output pruned: 300 characters removed]",
        "[tool output pruned: 200 characters removed]",
    ]
    assert out[6] is chat[6]
    assert out[3].is_error and out[3].tool_id == "a" and out[3].id == chat[3].id
    assert out[4].name == "search" and out[4].metadata == {"pruned_chars": 200}
    assert out[:3] == chat[:3]
    check_tool_pairs(out)
    assert prune_tool_outputs(out, keep_recent=1) == out  # already pruned ones are left alone


def test_prune_tool_outputs_custom_placeholder_and_short_outputs():
    chat = [Message.tool("tiny", tool_id="x"), Message.tool("z" * 50, tool_id="y")]
    out = prune_tool_outputs(chat, keep_recent=0, placeholder="<{chars} gone>")
    assert [m.text for m in out] == ["tiny", "<50 gone>"]


def test_compress_suna_format_and_expand():
    original = Message.user("research about larry ellison", id="uuid")
    (short,) = compress([original], max_chars=28 - 14)
    assert short.text == ('research about... (truncated)\n\nmessage_id "uuid"\n'
                          "Use expand-message tool to see full content")
    assert short.metadata["compressed"] is True
    assert expand([short], "uuid") == original
    assert compress([short], max_chars=5) == [short]  # never compressed twice


def test_compress_keeps_tool_calls_results_systems_and_recent():
    chat = tool_chat()
    out = compress(chat, max_chars=10, keep_recent=1)
    assert out[0] is chat[0]  # system untouched
    assert out[3].tool_id == "a" and out[3].is_error and out[3].text.startswith("A" * 10 + "... (truncated)")
    assert out[6] is chat[6]  # the newest is kept
    assert out[2] is chat[2]  # no text to compress
    check_tool_pairs(out)
    assert [expand(out, m.id) for m in out] == chat


def test_compress_assistant_keeps_its_calls():
    m = Message.assistant("t" * 50, tool_calls=[call("a")], thinking="hmm")
    (out,) = compress([m], max_chars=5)
    assert out.tool_calls == m.tool_calls and out.thinking == "hmm"
    assert out.text.startswith("ttttt... (truncated)")


def test_expand_unknown_id():
    with pytest.raises(MessageError, match="no message with id 'nope'"):
        expand([Message.user("a")], "nope")


def test_summarize_never_splits_a_tool_pair():
    chat = tool_chat()
    seen = []

    def summarizer(old):
        seen.append(old)
        return "summary"

    # keep_recent=3 would start the kept part at the second result of the first turn.
    out = summarize(chat, summarizer, keep_recent=3)
    assert [m.text for m in seen[0]] == ["go"]
    assert [m.role.value for m in out] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool"]
    assert out[1].text == "summary" and out[1].metadata == {"summary_of": [chat[1].id]}
    check_tool_pairs(out)
    out = summarize(chat, lambda old: Message.assistant(f"{len(old)} old"), keep_recent=2)
    assert [m.text for m in out[:2]] == ["sys", "4 old"]


def test_summarize_nothing_to_do():
    chat = [Message.user("a")]
    assert summarize(chat, lambda old: 1 / 0, keep_recent=1) == chat


def test_summarize_rejects_async_and_bad_results():
    async def model(old):
        return "x"

    chat = [Message.user("a"), Message.user("b")]
    with pytest.raises(MessageTypeError, match="asummarize"):
        summarize(chat, model, keep_recent=1)
    with pytest.raises(MessageTypeError, match="must return a str or Message"):
        summarize(chat, lambda old: 3, keep_recent=1)


def test_asummarize_sync_and_async():
    async def model(old):
        await asyncio.sleep(0)
        return "async summary"

    chat = [Message.user("a"), Message.assistant("b"), Message.user("c")]
    out = asyncio.run(asummarize(chat, model, keep_recent=1))
    assert [m.text for m in out] == ["async summary", "c"]
    out = asyncio.run(asummarize(chat, lambda old: "sync", keep_recent=1))
    assert [m.text for m in out] == ["sync", "c"]


@settings(max_examples=200, deadline=None)
@given(conversations(), st.integers(0, 8))
def test_policies_keep_pairs_valid(chat, keep):
    before = pair_tool_results(chat)
    for out in (prune_tool_outputs(chat, keep_recent=keep), compress(chat, max_chars=3, keep_recent=keep),
                summarize(chat, lambda old: "s", keep_recent=keep)):
        after = pair_tool_results(out)
        assert len(after.orphans) <= len(before.orphans)
        assert len(after.unanswered) <= len(before.unanswered)


def test_compactor_runs_policies_in_order_until_it_fits():
    calls = []

    def tracked(name, policy):
        def run(messages):
            calls.append(name)
            return policy(messages)
        return run

    compactor = Compactor([
        tracked("prune", partial(prune_tool_outputs, keep_recent=0)),
        tracked("summary", partial(summarize, summarizer=lambda old: "s", keep_recent=1)),
    ], trigger=0.5)
    chat = tool_chat()
    out = compactor.compact(chat, max_tokens=400)
    assert calls == ["prune"]  # pruning alone brought it under 200
    calls.clear()
    out = compactor.compact(chat, max_tokens=60)
    assert calls == ["prune", "summary"]
    assert [m.text for m in out][:2] == ["sys", "s"]
    calls.clear()
    assert compactor.compact(chat, max_tokens=10_000) == chat and calls == []


def test_compactor_async_policy():
    async def model(old):
        return "async"

    compactor = Compactor([partial(asummarize, summarizer=model, keep_recent=1)], trigger=0.1)
    chat = [Message.user("a" * 100), Message.user("b")]
    assert [m.text for m in asyncio.run(compactor.acompact(chat, 50))] == ["async", "b"]
    with pytest.raises(MessageTypeError, match="acompact"):
        compactor.compact(chat, 50)


def test_compactor_bad_arguments():
    with pytest.raises(MessageError, match="trigger"):
        Compactor([], trigger=0)
    with pytest.raises(MessageTypeError, match=r"policies\[0\]"):
        Compactor([3])


def test_memory_with_compactor_compacts_before_dropping():
    pruned = []
    compactor = Compactor([partial(prune_tool_outputs, keep_recent=1)], trigger=0.9)
    memory = ConversationMemory(200, compactor=compactor, on_prune=pruned.extend)
    memory.extend(tool_chat())
    # The big outputs became placeholders; nothing had to be dropped.
    assert len(memory) == 7
    assert [m.text for m in memory.messages][3:5] == [
        "[tool output pruned: 300 characters removed]",
        "[tool output pruned: 200 characters removed]",
    ]
    assert memory.total_tokens <= 180
    check_tool_pairs(memory.messages)
    # The replaced originals are reported, so nothing is lost silently.
    assert [m.text[:3] for m in pruned] == ["AAA", "BBB"]


def test_memory_with_compactor_still_drops_when_compaction_is_not_enough():
    compactor = Compactor([partial(prune_tool_outputs, keep_recent=0)], trigger=1.0)
    memory = ConversationMemory(10, compactor=compactor)
    memory.extend([Message.user("x" * 200), Message.user("hi")])
    assert [m.text for m in memory] == ["hi"]


def test_memory_aadd_with_async_summarizer():
    seen = []

    async def model(old):
        await asyncio.sleep(0)
        seen.append([m.text for m in old])
        return "summary"

    compactor = Compactor([partial(asummarize, summarizer=model, keep_recent=1)], trigger=0.5)
    memory = ConversationMemory(40, compactor=compactor)

    async def run():
        for text in ["a" * 40, "b" * 40, "c" * 40]:
            await memory.aadd(Message.user(text))

    asyncio.run(run())
    assert seen == [["a" * 40], ["summary", "b" * 40]]
    assert [m.text for m in memory] == ["summary", "c" * 40]
    assert [m.text for m in memory.pruned] == ["summary", "b" * 40]
    before = (memory.messages, memory.total_tokens, memory.pruned)
    with pytest.raises(MessageTypeError, match="acompact"):
        memory.add(Message.user("d" * 40))
    # add is all or nothing: the failed compaction left the memory exactly as it was.
    assert (memory.messages, memory.total_tokens, memory.pruned) == before


def test_memory_aadd_concurrent_adds_discard_stale_compaction():
    async def model(old):
        await asyncio.sleep(0.01)
        return "summary"

    compactor = Compactor([partial(asummarize, summarizer=model, keep_recent=1)], trigger=0.5)
    memory = ConversationMemory(60, compactor=compactor)

    async def run():
        await asyncio.gather(*(memory.aadd(Message.user(str(i) * 40)) for i in range(6)))

    asyncio.run(run())
    kept = memory.messages
    assert memory.total_tokens <= 60 and kept[-1].text == "5" * 40
    assert len(kept) <= 4


def test_memory_aadd_failing_summarizer_changes_nothing():
    async def model(old):
        raise RuntimeError("model down")

    compactor = Compactor([partial(asummarize, summarizer=model, keep_recent=1)], trigger=0.5)
    memory = ConversationMemory(20, compactor=compactor)
    asyncio.run(memory.aadd(Message.user("a" * 40)))
    with pytest.raises(RuntimeError, match="model down"):
        asyncio.run(memory.aadd(Message.user("b" * 40)))
    # aadd is all or nothing: "b" was not added, so a retry adds it once.
    assert [m.text for m in memory] == ["a" * 40] and memory.total_tokens == 14


def test_compaction_takes_message_dicts_and_sdk_forms_like_messages():
    """Every compaction function reads its input with the library's one reader (as_messages):
    OpenAI dicts give exactly what the same messages give."""
    with pytest.warns(agentmsg.ConversionWarning, match="is_error"):
        dicts = agentmsg.to_openai(tool_chat())
    same = agentmsg.from_openai(dicts)

    def plain(messages):
        # metadata names messages by their ids, which each read of the dicts draws afresh
        return [(m.role, m.content, m.name, m.tool_id, sorted(m.metadata)) for m in messages]

    assert plain(prune_tool_outputs(dicts, keep_recent=1)) == plain(prune_tool_outputs(same, keep_recent=1))
    # compress names each cut message by its id, which each read of the dicts draws afresh
    shown = lambda messages: [m.text.split("message_id")[0] for m in messages]  # noqa: E731
    assert shown(compress(dicts, max_chars=50)) == shown(compress(same, max_chars=50))
    first = lambda span: span[0].text  # noqa: E731
    assert plain(summarize(dicts, first, keep_recent=2)) == plain(summarize(same, first, keep_recent=2))
    compactor = Compactor([partial(prune_tool_outputs, keep_recent=0)])
    compacted = compactor.compact(dicts, 40, "estimate")
    assert plain(compacted) == plain(compactor.compact(same, 40, "estimate"))
    assert compacted[3].metadata["pruned_chars"] == 300
    with pytest.raises(agentmsg.MessageTypeError, match=r"^messages\[1\] must be "):
        compress([dicts[0], 3])
