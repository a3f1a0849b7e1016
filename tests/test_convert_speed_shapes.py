"""The fast paths of the converters and the message model give exactly what the general paths
give: openai_to_anthropic against to_anthropic(from_openai(...)), the lazy fields of Message,
and the core pairing rule in from_forge and in the reordering of interjected messages."""

import copy
import pickle
import threading
import warnings
from dataclasses import FrozenInstanceError
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import ConversionWarning, Message, ToolUseBlock, from_forge, from_openai, openai_to_anthropic, to_anthropic
from agentmsg.model.message import metadata_view
from transcripts import build_transcript


def outcome(convert, *args, **kwargs):
    """What a conversion gives: its result or its error, and the warnings it gave, as text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("result", convert(*args, **kwargs))
        except agentmsg.AgentMsgError as error:
            result = ("error", type(error).__name__, str(error))
    return result, [str(w.message) for w in caught]


def two_steps(messages, on_orphan="raise"):
    return to_anthropic(from_openai(messages, on_orphan=on_orphan))


# -- openai_to_anthropic ------------------------------------------------------------------------

ids = st.sampled_from(["a", "b", "c"])
tool_names = st.sampled_from(["ls", "cat"])
arguments = st.sampled_from(['{"p": 1}', '{"p":1}', '{"q": [1, {"r": null}]}', "", None, "[1]", "NaN", "{bad"])
texts = st.sampled_from(["hi", "", "two\nlines"])
calls = st.builds(lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}},
                  ids, tool_names, arguments)
steps = st.one_of(
    st.builds(lambda t: {"role": "system", "content": t}, texts),
    st.builds(lambda t: {"role": "user", "content": t}, texts),
    st.builds(lambda t: {"role": "assistant", "content": t}, texts),
    st.builds(lambda t, c: {"role": "assistant", "content": t, "tool_calls": c},
              st.none() | texts, st.lists(calls, min_size=1, max_size=3)),
    st.builds(lambda i, t: {"role": "tool", "tool_call_id": i, "content": t}, ids, texts),
    # shapes the direct path leaves to the two-step path
    st.builds(lambda t: {"role": "developer", "content": t}, texts),
    st.builds(lambda t: {"role": "user", "content": t, "name": "ann"}, texts),
    st.builds(lambda t: {"role": "user", "content": [{"type": "text", "text": t}]}, texts),
    st.just({"role": "assistant", "content": None, "refusal": "no"}),
    st.just({"role": "robot", "content": "x"}),
    st.just("not a dict"),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=8), st.sampled_from(["raise", "repair", "keep"]))
def test_openai_to_anthropic_is_the_two_step_conversion(history, on_orphan):
    assert outcome(openai_to_anthropic, history, on_orphan=on_orphan) == \
        outcome(two_steps, history, on_orphan=on_orphan)


def test_openai_to_anthropic_on_the_shared_transcripts():
    dicts = agentmsg.to_openai(build_transcript(2_000))
    direct, caught = outcome(openai_to_anthropic, dicts)
    assert caught == [] and direct == outcome(two_steps, dicts)[0]
    system, turns = direct[1]
    assert system and [t["role"] for t in turns[:2]] == ["user", "assistant"]


def test_openai_to_anthropic_exact_shape():
    history = [
        {"role": "system", "content": "Be brief"},
        {"role": "user", "content": "List files"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"path":"."}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "user", "content": "Thanks"},
    ]
    assert openai_to_anthropic(history) == (
        [{"type": "text", "text": "Be brief"}],
        [{"role": "user", "content": [{"type": "text", "text": "List files"}]},
         {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "ls", "input": {"path": "."}}]},
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                       "content": [{"type": "text", "text": "a.py"}]},
                                      {"type": "text", "text": "Thanks"}]}],
    )


def test_openai_to_anthropic_moves_an_interjection_as_to_anthropic_does():
    history = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "user", "content": "hurry"},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    ]
    with pytest.warns(ConversionWarning, match="moved messages 1 after the tool results"):
        _, turns = openai_to_anthropic(history)
    assert [b["type"] for b in turns[1]["content"]] == ["tool_result", "text"]


# -- Message: fields made on first read ---------------------------------------------------------

def test_ids_are_made_once_and_unique():
    first, second = Message.user("a"), Message.user("a")
    assert first.id == first.id and first.id != second.id and first.id.startswith("msg_")
    assert Message.user("a", id="given").id == "given"


def test_one_id_when_threads_read_it_together():
    for _ in range(50):
        message = Message.user("a")
        seen = []
        threads = [threading.Thread(target=lambda: seen.append(message.id)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(set(seen)) == 1


def test_timestamp_is_the_creation_time():
    before = datetime.now(timezone.utc)
    message = Message.user("a")
    after = datetime.now(timezone.utc)
    stamp = message.timestamp
    assert stamp.tzinfo is timezone.utc and stamp is message.timestamp
    # kept as a float until read: within a microsecond of the clock either side
    assert before - timedelta(microseconds=1) <= stamp <= after + timedelta(microseconds=1)


def test_metadata_is_made_on_read_and_keeps_changes():
    message = Message.user("a")
    assert dict(metadata_view(message)) == {}
    message.metadata["k"] = 1  # the dict is the message's own, as before
    assert message.metadata == {"k": 1} and metadata_view(message) == {"k": 1}


def test_frozen_equal_copies_and_repr():
    message = Message.user("a", metadata={"k": [1]})
    with pytest.raises(FrozenInstanceError):
        message.role = "system"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del message.name
    for copied in (pickle.loads(pickle.dumps(message)), copy.copy(message), copy.deepcopy(message)):
        assert copied == message and type(copied) is Message
    assert message != Message.user("a", metadata={"k": [1]})  # other id
    assert repr(Message.user("Hi", id="m1", timestamp=0)) == (
        "Message(role=<Role.USER: 'user'>, content=(TextBlock(text='Hi'),), name=None, id='m1', "
        "timestamp=datetime.datetime(1970, 1, 1, 0, 0, tzinfo=datetime.timezone.utc), metadata={}, "
        "tool_id=None, finished=None, finish_reason=None, reasoning_content=None)")
    with pytest.raises(TypeError):
        hash(message)


def test_subclasses_are_built_too():
    class Note(Message):
        __slots__ = ()

    note = Note("user", "hi")
    assert type(note) is Note and note.text == "hi"


def test_tool_call_metadata_must_be_a_dict():
    with pytest.raises(agentmsg.MessageTypeError, match="ToolUseBlock.metadata must be a dict"):
        ToolUseBlock("c1", "f", {}, "local", None)  # type: ignore[arg-type]


# -- the core pairing rule in the converters ----------------------------------------------------

forge_steps = st.one_of(
    st.lists(tool_names, min_size=1, max_size=3).map(
        lambda names: ("call", names)),
    tool_names.map(lambda name: ("result", name)),
    st.just(("user", None)),
)


def forge_history(steps):
    out = []
    for kind, value in steps:
        if kind == "call":
            out.append({"role": "assistant", "content": "\n\n".join(
                '<tool>{"tool_name": "%s", "arguments": {"n": %d}}</tool>' % (name, n) for n, name in enumerate(value))})
        elif kind == "result":
            out.append({"role": "tool", "content": f"Tool: {value}\nok"})
        else:
            out.append({"role": "user", "content": "go on"})
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(forge_steps, max_size=10))
def test_from_forge_links_each_result_to_the_earliest_unanswered_call_of_its_name(steps):
    messages = from_forge(forge_history(steps), on_orphan="keep")
    waiting = {}  # Forge's scope of the core rule, written out: every earlier call, oldest first
    for message in messages:
        for call in message.tool_calls:
            waiting.setdefault(call.name, []).append(call.id)
        if message.role == "tool":
            queue = waiting.get(message.name)
            assert message.tool_id == (queue.pop(0) if queue else None)


def test_from_forge_pairs_across_turns():
    history = forge_history([("call", ["ls"]), ("call", ["cat"]), ("result", "ls"), ("result", "cat")])
    messages = from_forge(history)
    assert messages[2].tool_id == messages[0].tool_calls[0].id
    assert messages[3].tool_id == messages[1].tool_calls[0].id


def test_interjection_moves_by_the_core_rule_with_a_reused_id():
    # The id c1 is reused: the second result answers the latest call with that id (the second
    # turn's), so only the user message of the second turn moves.
    call = ToolUseBlock("c1", "ls", {})
    history = [Message.assistant(tool_calls=[call]), Message.tool("1", tool_id="c1"),
               Message.assistant(tool_calls=[call]), Message.user("hurry"), Message.tool("2", tool_id="c1")]
    with pytest.warns(ConversionWarning, match="moved messages 3 after"):
        out = agentmsg.to_openai(history)
    assert [m["role"] for m in out] == ["assistant", "tool", "assistant", "tool", "user"]


def test_ids_and_names_the_core_cannot_read_still_order_results():
    call = ToolUseBlock("c\ud800", "\udc00", {})
    history = [Message.assistant(tool_calls=[call]), Message.user("hurry"),
               Message.tool("1", tool_id="c\ud800", name="\udc00")]
    with pytest.warns(ConversionWarning, match="moved messages 1 after"):
        out = agentmsg.to_openai(history)
    assert [m["role"] for m in out] == ["assistant", "tool", "user"]
