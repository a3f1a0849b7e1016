"""agentmsg.langchain.trim_messages against langchain_core.messages.trim_messages.

Over generated histories the two give the same messages, except where LangChain's result splits a
tool call from its results (LangChain issue 33245); there ours is the longest run within LangChain's
that keeps every group whole. docs/langchain.md lists the differences."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages import trim_messages as langchain_trim_messages
from langchain_core.messages.utils import count_tokens_approximately

from agentmsg import MessageError, MessageTypeError
from agentmsg.langchain import count_approximately, trim_messages

words = st.text(st.sampled_from("abc de\nfgh ij"), min_size=1, max_size=60)


@st.composite
def histories(draw, tools=True):
    out = []
    if draw(st.booleans()):
        out.append(SystemMessage(draw(words)))
    calls = 0
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["human", "ai", "system"] + (["turn", "turn"] if tools else [])))
        if kind == "human":
            out.append(HumanMessage(draw(words)))
        elif kind == "ai":
            out.append(AIMessage(draw(words)))
        elif kind == "system":
            out.append(SystemMessage(draw(words)))
        else:
            ids = [f"c{calls + k}" for k in range(draw(st.integers(1, 2)))]
            calls += len(ids)
            out.append(AIMessage(draw(st.just("") | words), tool_calls=[{"id": i, "name": "f", "args": {}} for i in ids]))
            out.extend(ToolMessage(draw(words), tool_call_id=i) for i in ids)
    return out


def per_message(message: BaseMessage) -> int:
    return len(message.content) // 3 + 1


def with_request_cost(messages):
    return count_tokens_approximately(messages) + 3


COUNTERS = ["approximate", per_message, with_request_cost]


def options():
    return st.one_of(
        st.fixed_dictionaries({
            "strategy": st.just("last"),
            "include_system": st.booleans(),
            "start_on": st.sampled_from([None, "human", ("human", "ai")]),
            "end_on": st.sampled_from([None, "human", ("human", "tool"), "ai"]),
        }),
        st.fixed_dictionaries({"strategy": st.just("first"), "end_on": st.sampled_from([None, "human", "ai"])}),
    )


def groups_whole(history, kept):
    """Every kept result has its call kept and every kept call its results (ids are unique)."""
    results = {m.tool_call_id for m in history if isinstance(m, ToolMessage)}
    kept_calls = {c["id"] for m in kept if isinstance(m, AIMessage) for c in m.tool_calls}
    kept_results = {m.tool_call_id for m in kept if isinstance(m, ToolMessage)}
    return kept_calls & results == kept_results


def positions(history, kept):
    where = {id(m): i for i, m in enumerate(history)}
    return [where[id(m)] for m in kept]


def clean_end(history, b):
    """No tool result after message ``b`` answers a call made at or before it."""
    call_at = {c["id"]: i for i, m in enumerate(history) if isinstance(m, AIMessage) for c in m.tool_calls}
    return all(call_at.get(m.tool_call_id, b + 1) > b for m in history[b + 1:] if isinstance(m, ToolMessage))


def langchain_splits_a_group(history, theirs, kwargs):
    """LangChain's result orphans a result or a call, or (strategy last) its end_on stops at a
    message whose group goes on after it."""
    if not groups_whole(history, theirs):
        return True
    end_on = kwargs.get("end_on")
    if kwargs["strategy"] == "last" and end_on:
        types = (end_on,) if isinstance(end_on, str) else end_on
        ends = [i for i, m in enumerate(history) if m.type in types]
        return bool(ends) and not clean_end(history, ends[-1])
    return False


@settings(max_examples=400, deadline=None)
@given(histories(), st.integers(0, 150), options(), st.sampled_from(COUNTERS))
def test_same_as_langchain_unless_it_splits_a_tool_group(history, max_tokens, kwargs, counter):
    theirs = langchain_trim_messages(history, max_tokens=max_tokens, token_counter=counter, **kwargs)
    ours = trim_messages(history, max_tokens=max_tokens, token_counter=counter, **kwargs)
    assert groups_whole(history, ours)
    mine = positions(history, ours)
    if not langchain_splits_a_group(history, theirs, kwargs):
        assert mine == positions(history, theirs)
        return
    # Where LangChain splits a group, ours keeps groups whole and keeps LangChain's other rules.
    head = 1 if kwargs.get("include_system") and history and isinstance(history[0], SystemMessage) else 0
    body = [i for i in mine if i >= head]
    assert mine[:head] == list(range(head)) or not mine
    assert body == list(range(body[0], body[-1] + 1)) if body else True
    if body:
        start_on, end_on = kwargs.get("start_on"), kwargs.get("end_on")
        assert start_on is None or history[body[0]].type in ((start_on,) if isinstance(start_on, str) else start_on)
        assert end_on is None or history[body[-1]].type in ((end_on,) if isinstance(end_on, str) else end_on)
        assert kwargs["strategy"] == "last" or body[0] == head


@settings(max_examples=300, deadline=None)
@given(histories(tools=False), st.integers(0, 150), options(), st.sampled_from(COUNTERS))
def test_allow_partial_same_as_langchain(history, max_tokens, kwargs, counter):
    theirs = langchain_trim_messages(history, max_tokens=max_tokens, token_counter=counter,
                                     allow_partial=True, **kwargs)
    ours = trim_messages(history, max_tokens=max_tokens, token_counter=counter, allow_partial=True, **kwargs)
    assert ours == theirs


@settings(max_examples=200, deadline=None)
@given(histories(tools=False), st.integers(0, 150))
def test_text_splitter_and_list_content(history, max_tokens):
    def by_words(text):
        return [w + " " for w in text.split(" ")]

    history = [type(m)(content=[{"type": "text", "text": m.content}, {"type": "text", "text": "x y"}])
               if isinstance(m, HumanMessage) else m for m in history]
    for strategy in ("last", "first"):
        kwargs = dict(max_tokens=max_tokens, token_counter="approximate", strategy=strategy,
                      allow_partial=True, text_splitter=by_words)
        assert trim_messages(history, **kwargs) == langchain_trim_messages(history, **kwargs)


def test_approximate_counter_is_langchains():
    samples = [HumanMessage("Hello there", name="ann"), SystemMessage("x" * 37),
               AIMessage("", tool_calls=[{"id": "c1", "name": "calc", "args": {"a": 1}}]),
               AIMessage([{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "u"}},
                          {"type": "reasoning", "reasoning": "r"}]),
               ToolMessage("42", tool_call_id="call_123")]
    for message in samples:
        assert count_approximately(message) == count_tokens_approximately([message])
    assert sum(map(count_approximately, samples)) == count_tokens_approximately(samples)


def test_issue_33245_no_orphaned_tool_result():
    history = [HumanMessage("What is the weather?"),
               AIMessage("", tool_calls=[{"id": "c1", "name": "weather", "args": {"city": "Paris"}}]),
               ToolMessage("Sunny, 24C, light wind from the west", tool_call_id="c1"),
               AIMessage("It is sunny.")]
    theirs = langchain_trim_messages(history, max_tokens=30, token_counter="approximate")
    assert isinstance(theirs[0], ToolMessage)  # LangChain: a result without its call
    assert trim_messages(history, max_tokens=30, token_counter="approximate") == [history[-1]]


def test_our_counters_and_chat_models():
    history = [SystemMessage("Be brief"), HumanMessage("Hello there"), AIMessage("Hi! How can I help?")]
    kept = trim_messages(history, max_tokens=12, token_counter="o200k_base")
    assert kept == history[2:]  # each message is its exact chat count: 3 framing + role + text
    assert trim_messages(history, max_tokens=12, token_counter="gpt-4o") == kept
    assert trim_messages(history, max_tokens=100, token_counter="estimate") == history

    class Model:
        def get_num_tokens_from_messages(self, messages):
            return 3 + sum(4 + len(m.content) for m in messages)

    assert trim_messages(history, max_tokens=3 + 4 + 19, token_counter=Model()) == history[2:]
    assert langchain_trim_messages(history, max_tokens=3 + 4 + 19, token_counter=Model()) == history[2:]


def test_reads_dicts_and_prompt_values_like_langchain():
    from langchain_core.prompt_values import ChatPromptValue

    history = [{"role": "user", "content": "hello"}, ("ai", "hi there")]
    ours = trim_messages(history, max_tokens=8, token_counter="approximate")
    assert ours == langchain_trim_messages(history, max_tokens=8, token_counter="approximate")
    assert [m.content for m in ours] == ["hi there"]
    value = ChatPromptValue(messages=[HumanMessage("a"), AIMessage("b")])
    assert trim_messages(value, max_tokens=100, token_counter="approximate") == value.to_messages()


def test_errors_match_langchains():
    history = [HumanMessage("a")]
    for kwargs in ({"strategy": "first", "start_on": "human"}, {"strategy": "first", "include_system": True},
                   {"strategy": "middle"}):
        with pytest.raises(ValueError):
            langchain_trim_messages(history, max_tokens=5, token_counter="approximate", **kwargs)
        with pytest.raises(MessageError):
            trim_messages(history, max_tokens=5, token_counter="approximate", **kwargs)
    with pytest.raises(MessageError, match="Invalid token_counter shortcut 'nonsense'"):
        trim_messages(history, max_tokens=5, token_counter="nonsense")
    with pytest.raises(MessageTypeError, match="token_counter must be"):
        trim_messages(history, max_tokens=5, token_counter=42)
    with pytest.raises(MessageError, match="end_on: unknown message type 'robot'"):
        trim_messages(history, max_tokens=5, token_counter="approximate", end_on="robot")
    with pytest.raises(MessageError, match="max_tokens must be >= 0"):
        trim_messages(history, max_tokens=-1, token_counter="approximate")


def test_long_history_counts_only_the_tail():
    counted = []

    def counter(message: BaseMessage) -> int:
        counted.append(message)
        return 10

    history = [SystemMessage("s")] + [HumanMessage("q") if i % 2 else AIMessage("a") for i in range(20_001)]
    kept = trim_messages(history, max_tokens=50, token_counter=counter, include_system=True, start_on="human")
    assert kept[0] is history[0] and [m.type for m in kept[1:]] == ["human", "ai", "human", "ai"]
    assert len(counted) < 200


def test_missing_langchain_is_a_typed_error(monkeypatch):
    import sys

    from agentmsg.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "langchain_core", None)
    with pytest.raises(MissingDependencyError, match="pip install 'langchain-core"):
        trim_messages([], max_tokens=5, token_counter="approximate")
