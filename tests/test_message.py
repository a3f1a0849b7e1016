"""The message model: constructors, properties, str(), validation, replace."""

from datetime import datetime, timedelta, timezone

import pytest

import agentmsg
from agentmsg import (
    AgentMsgError,
    Base64Source,
    ImageBlock,
    Message,
    MessageError,
    MessageTypeError,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    URLSource,
)

CALL = ToolUseBlock("call_001", "calculator", {"a": 5, "b": 3})


def test_role_is_a_str_enum():
    assert Role.USER == "user"
    assert isinstance(Role.TOOL, str)
    assert [r.value for r in Role] == ["system", "user", "assistant", "tool"]
    assert str(Role.ASSISTANT) == "assistant"


@pytest.mark.parametrize(
    "make, role",
    [
        (lambda: Message.system("S"), Role.SYSTEM),
        (lambda: Message.user("U"), Role.USER),
        (lambda: Message.assistant("A"), Role.ASSISTANT),
        (lambda: agentmsg.system("S"), Role.SYSTEM),
        (lambda: agentmsg.user("U"), Role.USER),
        (lambda: agentmsg.assistant("A"), Role.ASSISTANT),
    ],
)
def test_text_constructors(make, role):
    message = make()
    assert message.role is role
    assert len(message.content) == 1 and isinstance(message.content[0], TextBlock)
    assert message.text == message.content[0].text


def test_plain_string_becomes_one_text_block():
    assert Message("user", "Hello").content == (TextBlock("Hello"),)


def test_assistant_with_tool_calls_and_thinking_orders_blocks():
    message = Message.assistant("Let me add", [CALL], thinking="add 5 and 3")
    assert message.content == (ThinkingBlock("add 5 and 3"), TextBlock("Let me add"), CALL)
    assert message.tool_calls == (CALL,)
    assert message.has_tool_calls
    assert message.thinking == "add 5 and 3"
    assert message.text == "Let me add"


def test_assistant_with_only_tool_calls_is_not_empty():
    message = Message.assistant(tool_calls=[CALL])
    assert message.content == (CALL,)
    assert message.text == ""
    assert message.length == 0


@pytest.mark.parametrize("make", [Message.tool, agentmsg.tool])
def test_tool_constructor_wraps_one_result_block(make):
    message = make("Result: 8", tool_id="call_001", name="calculator")
    assert message.role is Role.TOOL
    assert message.tool_id == "call_001"
    assert message.name == "calculator"
    assert message.content == (ToolResultBlock("call_001", (TextBlock("Result: 8"),)),)
    assert message.text == "Result: 8"
    assert not message.is_error


def test_tool_error_and_name_only_result():
    message = Message.tool("Error: division by zero", name="calculator", is_error=True)
    assert message.tool_id is None
    assert message.is_error
    assert message.content[0].tool_use_id == ""


def test_generic_constructor_gives_the_same_tool_message():
    by_hand = Message("tool", "Data", tool_id="calc_123", id="m", timestamp=0)
    assert by_hand == Message.tool("Data", tool_id="calc_123", id="m", timestamp=0)


def test_tool_id_taken_from_the_result_block():
    message = Message("tool", [ToolResultBlock("call_9", "ok")])
    assert message.tool_id == "call_9"


def test_empty_tool_result_is_allowed():
    assert Message.tool("", tool_id="c").text == ""


def test_multimodal_user_message():
    image = ImageBlock(URLSource("https://example.com/photo.jpg"))
    message = Message.user([TextBlock("What's in this image?"), image])
    assert message.content[1] is image
    assert message.text == "What's in this image?"


def test_text_joins_text_blocks_with_newlines():
    assert Message.user([TextBlock("a"), TextBlock("b")]).text == "a\nb"


def test_thinking_falls_back_to_reasoning_content():
    message = Message.assistant("Hi", reasoning_content="Looking at this code")
    assert message.thinking == "Looking at this code"
    assert Message.assistant("Hi").thinking == ""


def test_length_counts_characters_not_bytes():
    assert Message.user("Hello world").length == 11
    assert Message.user("日本語").length == 3


def test_id_and_timestamp_are_generated():
    before = datetime.now(timezone.utc)
    first, second = Message.user("a"), Message.user("a")
    assert first.id.startswith("msg_") and first.id != second.id
    assert first.timestamp.tzinfo is not None
    assert first.timestamp.utcoffset() == timedelta(0)
    assert before <= first.timestamp <= datetime.now(timezone.utc)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2024-01-15T10:30:00Z", datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)),
        ("2024-01-15T12:30:00+02:00", datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)),
        (datetime(2024, 1, 15, 10, 30), datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)),
        (1704067200.0, datetime(2024, 1, 1, tzinfo=timezone.utc)),
    ],
)
def test_timestamp_inputs_become_utc(value, expected):
    stamp = Message.user("a", timestamp=value).timestamp
    assert stamp == expected
    assert stamp.tzinfo == timezone.utc


def test_messages_are_immutable_and_replace_copies():
    message = Message.user("Hi", id="m1", metadata={"k": 1})
    with pytest.raises(AttributeError):
        message.role = Role.SYSTEM  # type: ignore[misc]
    changed = message.replace(content="Hello", name="bob")
    assert (changed.text, changed.name, changed.id, changed.metadata) == ("Hello", "bob", "m1", {"k": 1})
    assert message.text == "Hi"
    assert message.replace() == message


def test_replace_validates_and_rejects_unknown_fields():
    message = Message.user("Hi")
    with pytest.raises(MessageError, match="content is empty"):
        message.replace(content="")
    with pytest.raises(MessageTypeError) as caught:
        message.replace(colour="red")
    assert str(caught.value) == ("Message.replace() got an unexpected keyword argument 'colour'; it takes: role, "
                                 "content, name, id, timestamp, metadata, tool_id, finished, finish_reason, "
                                 "reasoning_content")


def test_metadata_is_copied():
    source = {"a": 1}
    message = Message.user("x", metadata=source)
    source["a"] = 2
    assert message.metadata == {"a": 1}


# -- str() follows arcaelas exactly ---------------------------------------------------------------

def test_str_of_seed_001_examples():
    assert str(Message.user("What's the weather?")) == "Message(user): What's the weather?"
    assert (
        str(Message.tool("Result data here", tool_id="weather_001"))
        == "Message(tool) [weather_001]: Result data here"
    )
    long = Message.assistant(
        "This is a very long message that will be truncated when displayed as a string representation"
    )
    assert str(long) == "Message(assistant): This is a very long message that will be trunca..."


def test_str_cut_boundary_is_fifty_characters():
    assert str(Message.user("x" * 50)) == "Message(user): " + "x" * 50
    assert str(Message.user("x" * 51)) == "Message(user): " + "x" * 47 + "..."


# -- validation --------------------------------------------------------------------------------------

def test_unknown_role_names_the_valid_ones():
    with pytest.raises(MessageError) as info:
        Message("robot", "hi")
    assert "unknown role 'robot'" in str(info.value)
    assert "system, user, assistant, tool" in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, AgentMsgError)


def test_role_names_are_case_insensitive():
    assert Message("USER", "hi").role is Role.USER


@pytest.mark.parametrize("role", ["system", "user", "assistant"])
@pytest.mark.parametrize("content", ["", [], [TextBlock("")]])
def test_empty_content_is_rejected(role, content):
    with pytest.raises(MessageError, match="content is empty"):
        Message(role, content)


def test_tool_message_needs_tool_id_or_name():
    with pytest.raises(MessageError, match="needs tool_id"):
        Message.tool("Data")
    with pytest.raises(MessageError, match="needs tool_id"):
        Message("tool", "Data")


def test_tool_id_only_for_tool_messages():
    with pytest.raises(MessageError, match="only for tool messages"):
        Message.user("hi", tool_id="x")


@pytest.mark.parametrize(
    "role, block",
    [("user", CALL), ("tool", CALL), ("assistant", ToolResultBlock("c", "x")), ("user", ToolResultBlock("c", "x"))],
)
def test_blocks_in_the_wrong_role_are_rejected(role, block):
    with pytest.raises(MessageError, match="belongs in"):
        Message(role, [block], tool_id="c" if role == "tool" else None)


def test_tool_message_with_two_results_or_mismatched_id():
    with pytest.raises(MessageError, match="exactly one tool_result"):
        Message("tool", [ToolResultBlock("a", "x"), ToolResultBlock("b", "y")])
    with pytest.raises(MessageError, match="does not match"):
        Message("tool", [ToolResultBlock("a", "x")], tool_id="b")


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Message(42, "hi"), "role must be a str"),
        (lambda: Message.user(42), "content must be a str or a list of blocks"),
        (lambda: Message.user(["hi"]), r"content\[0\] must be a content block"),
        (lambda: Message.user("hi", name=3), "name must be a str"),
        (lambda: Message.user("hi", metadata=[1]), "metadata must be a dict"),
        (lambda: Message.user("hi", timestamp=object()), "timestamp must be"),
        (lambda: Message.assistant("hi", finished="yes"), "finished must be a bool"),
        (lambda: Message.assistant(5), "text must be a str"),
        (lambda: Message.assistant("x", [{"name": "f"}]), r"tool_calls\[0\] must be a ToolUseBlock"),
        (lambda: Message.tool("x", name="t", is_error=1), "is_error must be a bool"),
        (lambda: TextBlock(5), "TextBlock.text must be a str"),
        (lambda: ToolUseBlock("id", "n", "not a dict"), "input must be a dict"),
        (lambda: ImageBlock("https://x"), "source must be a URLSource"),
    ],
)
def test_wrong_python_types_raise_type_errors(make, match):
    with pytest.raises(MessageTypeError, match=match) as info:
        make()
    assert isinstance(info.value, TypeError) and isinstance(info.value, AgentMsgError)


def test_bad_timestamp_string():
    with pytest.raises(MessageError, match="not ISO 8601"):
        Message.user("hi", timestamp="yesterday")


def test_block_value_checks():
    with pytest.raises(MessageError, match="must start with http"):
        URLSource("ftp://example.com/a.png")
    with pytest.raises(MessageError, match="media_type is empty"):
        Base64Source("", "AAAA")
    with pytest.raises(MessageError, match="name is empty"):
        ToolUseBlock("id", "", {})
    assert URLSource("file:///tmp/a.png").url == "file:///tmp/a.png"


def test_seed_001_optional_fields_for_seed_003():
    message = Message.assistant(
        "I'll analyze the code structure.",
        finished=True,
        finish_reason="stop",
        reasoning_content="Looking at this code...",
    )
    assert (message.finished, message.finish_reason, message.reasoning_content) == (
        True, "stop", "Looking at this code...",
    )


def test_from_text_parses_only_what_the_assistant_wrote():
    observation = "[File: reproduce.py (7 lines total)]\n<tool>not a call</tool>"
    for role in ("user", "system"):
        message = Message.from_text(role, observation)
        assert (message.text, message.thinking, message.tool_calls) == (observation, "", ())
    assert Message.from_text("assistant", "[File: x]\nok").thinking == "File: x"


HERMES_REPLY = '<think>look it up</think>Checking.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}</tool_call>'
WEATHER_TOOL = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]


def test_from_text_reads_a_dialect_with_the_parse_options():
    message = Message.from_text("assistant", HERMES_REPLY, dialect="hermes", name="bot", id="m1")
    assert (message.thinking, message.text, message.name, message.id) == ("look it up", "Checking.", "bot", "m1")
    assert [(c.name, c.input) for c in message.tool_calls] == [("get_weather", {"city": "Paris", "days": "3"})]
    assert message.content == tuple(agentmsg.parse(HERMES_REPLY, dialect="hermes").blocks)
    # tools reach the parser: a call to a tool it does not list is marked.
    assert Message.from_text("assistant", HERMES_REPLY, dialect="hermes", tools=WEATHER_TOOL).tool_calls[0].metadata == {}
    other_tool = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    marked = Message.from_text("assistant", HERMES_REPLY, dialect="hermes", tools=other_tool)
    assert marked.tool_calls[0].metadata == {"unknown_tool": True}
    # Forge's options reach Forge's parser.
    assert Message.from_text("assistant", "[plan]\nok", thinking="none").text == "[plan]\nok"
    options: agentmsg.options.ParseOptions = {"dialect": "hermes", "start_in_thinking": True}
    assert Message.from_text("assistant", "plan</think>Done", **options).thinking == "plan"


def test_from_text_refuses_an_unknown_keyword_naming_it_and_the_accepted_ones():
    with pytest.raises(MessageTypeError) as caught:
        Message.from_text("assistant", HERMES_REPLY, dialcet="hermes")
    assert isinstance(caught.value, TypeError) and str(caught.value) == (
        "Message.from_text() got an unexpected keyword argument 'dialcet' (did you mean 'dialect'?); it takes: "
        "role, text, name, id, timestamp, metadata, tool_id, finished, finish_reason, reasoning_content, "
        "code_fences, dialect, max_calls, start_in_thinking, strict, thinking, tool_format, tools")


def test_from_text_checks_the_options_for_every_role_and_parses_only_the_assistant():
    # Text of any other role is kept as written, so a loop over a transcript can pass one
    # dialect for every message; a bad option is still an error, whatever the role.
    assert Message.from_text("user", HERMES_REPLY, dialect="hermes").text == HERMES_REPLY
    tool = Message.from_text("tool", "42", tool_id="c1", dialect="hermes")
    assert (tool.text, tool.tool_id) == ("42", "c1")
    for role in ("user", "assistant"):
        with pytest.raises(MessageError, match=r"^unknown dialect 'klingon'; valid: forge, hermes"):
            Message.from_text(role, "x", dialect="klingon")
        with pytest.raises(MessageError, match=r"^thinking: an option of the forge dialect only, not of 'hermes'$"):
            Message.from_text(role, "x", dialect="hermes", thinking="tags")


def test_from_text_keeps_the_calls_the_parser_could_not_use():
    text = 'Hi <tool>{"tool_name": "t"}</tool> then <tool>{"tool_name": "u", "arguments": {}}</tool> end'
    message = Message.from_text("assistant", text, metadata={"run": 1})
    assert [c.name for c in message.tool_calls] == ["u"]
    assert message.metadata == {"run": 1, "parse_errors": [{
        "kind": "missing_field", "message": "missing arguments", "span": [3, 34],
        "raw": '<tool>{"tool_name": "t"}</tool>'}]}
    capped = Message.from_text("assistant", text, max_calls=1)
    assert [e["kind"] for e in capped.metadata["parse_errors"]] == ["missing_field", "too_many_calls"]
    assert capped.metadata["parse_errors"][1]["raw"] == text[text.index("<tool>", 10):]
    assert "parse_errors" not in Message.from_text("assistant", "no calls here").metadata
    with pytest.raises(MessageError, match=r"^metadata\['parse_errors'\] is where from_text keeps"):
        Message.from_text("assistant", text, metadata={"parse_errors": []})


def test_generated_ids_are_unique_across_threads_and_forked_processes():
    import concurrent.futures
    import multiprocessing
    import os

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        ids = [m.id for batch in pool.map(lambda _: [Message.user("x") for _ in range(500)], range(8)) for m in batch]
    assert len(set(ids)) == len(ids) == 4000
    assert all(i.startswith("msg_") and len(i) == 36 for i in ids)
    if hasattr(os, "fork"):
        with multiprocessing.get_context("fork").Pool(2) as pool:
            child_ids = pool.map(_one_id, range(4))
        assert len(set(child_ids) | set(ids)) == 4004


def _one_id(_):
    return Message.user("x").id
