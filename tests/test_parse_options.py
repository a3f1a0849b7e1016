"""The parsers' options are one ``ParseOptions``, read by one function: every parser takes the
same keys, names a bad one alike, and gives the same result for the same options."""

import inspect
import json

import pytest
from hypothesis import given, settings, strategies as st

import agentmsg
import agentmsg.dialects  # the old module path (one release): an attribute only once imported
from agentmsg import MessageError, MessageTypeError, StreamParser, parse, parse_many, parse_tool_calls
from agentmsg import _core
from agentmsg.arrow import parse_arrow
from agentmsg.options import ParseOptions

pa = pytest.importorskip("pyarrow")

CALL = '<think>plan</think>Hi <tool>{"tool_name": "ls", "arguments": {"p": 1}}</tool>'
HERMES_CALL = '<think>plan</think>Hi <tool_call>{"name": "ls", "arguments": {"p": 1}}</tool_call>'
TOOLS = [{"type": "function", "function": {"name": "ls", "parameters": {"properties": {"p": {"type": "integer"}}}}}]


def test_parse_options_lists_every_key():
    assert set(ParseOptions.__optional_keys__) == {
        "dialect", "start_in_thinking", "tools", "strict", "thinking", "tool_format", "code_fences", "max_calls"}
    assert ParseOptions.__required_keys__ == frozenset()


def everywhere(text, options):
    """What each parser gives for ``text`` under ``options``, as plain data."""
    stream = StreamParser(**{"start_in_thinking": None, **options})
    stream.feed(text)
    stream.finish()
    row = parse_arrow(pa.array([text]), **options).to_pylist()[0]
    return [
        parse(text, **options), parse_many([text], **options)[0], stream.result(),
    ], parse_tool_calls(text, **options), row


@pytest.mark.parametrize("text, options", [
    (CALL, {}),
    (CALL, {"thinking": "none", "code_fences": False, "max_calls": 5, "tool_format": "json"}),
    (CALL, {"dialect": "forge", "tools": TOOLS}),
    (HERMES_CALL, {"dialect": "hermes"}),
    (HERMES_CALL, {"dialect": "hermes", "tools": TOOLS, "start_in_thinking": False}),
    (HERMES_CALL, {"dialect": agentmsg.Dialect(name="mine", call_start="<tool_call>", call_end="</tool_call>",
                                          think_start="<think>", think_end="</think>")}),
])
def test_every_parser_reads_the_options_alike(text, options):
    whole, calls, row = everywhere(text, options)
    first = whole[0]
    assert [(p.text, p.thinking, p.tool_calls, p.errors) for p in whole] == [
        (first.text, first.thinking, first.tool_calls, first.errors)] * 3
    assert calls == first.tool_calls
    assert row["text"] == first.text and row["thinking"] == first.thinking
    assert [c["name"] for c in row["tool_calls"]] == [c.name for c in first.tool_calls]
    thinking_off = options.get("thinking") == "none"
    assert first.thinking == ([] if thinking_off else ["plan"])


PARSERS = {
    "parse": lambda **options: parse("x", **options),
    "parse_many": lambda **options: parse_many(["x"], **options),
    "parse_tool_calls": lambda **options: parse_tool_calls("x", **options),
    "StreamParser": lambda **options: StreamParser(**options),
    "parse_arrow": lambda **options: parse_arrow(pa.array(["x"]), **options),
}


@pytest.mark.parametrize("name", PARSERS)
def test_an_unknown_option_is_a_type_error_naming_it(name):
    caller = "parse" if name == "parse_tool_calls" else name
    with pytest.raises(MessageTypeError) as info:
        PARSERS[name](thinkng="tags")
    assert str(info.value) == (f"{caller}() got an unexpected keyword argument 'thinkng' (did you mean 'thinking'?); "
                               "it takes: code_fences, dialect, max_calls, start_in_thinking, strict, thinking, tool_format, "
                               "tools")
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("name", PARSERS)
@pytest.mark.parametrize("options, error, message", [
    ({"thinking": "maybe"}, MessageError, r"^unknown thinking mode 'maybe'; valid: auto, tags, brackets, none$"),
    ({"tool_format": 3}, MessageTypeError, r"^tool_format must be a str, not int$"),
    ({"dialect": "klingon"}, MessageError, r"^unknown dialect 'klingon'; valid: forge, hermes, "),
    ({"dialect": "hermes", "max_calls": -2}, MessageError, r"^max_calls must be from 0 to "),
    ({"dialect": "hermes", "strict": 1}, MessageTypeError, r"^strict must be a bool, not int$"),
    ({"dialect": "hermes", "thinking": "tags", "code_fences": False}, MessageError,
     r"^thinking, code_fences: an option of the forge dialect only, not of 'hermes'$"),
    ({"tools": "ls"}, MessageTypeError, r"^tools must be a list of tool definitions, not str$"),
])
def test_every_parser_names_a_bad_option_alike(name, options, error, message):
    with pytest.raises(error, match=message):
        PARSERS[name](**options)


def test_forge_defaults_given_explicitly_are_accepted_by_another_dialect():
    options: ParseOptions = {"dialect": "hermes", "thinking": "auto", "tool_format": "auto",
                             "code_fences": True, "max_calls": None}
    assert parse(HERMES_CALL, **options).tool_calls[0].name == "ls"
    # None is the default of every option, the dialect's too.
    assert parse(HERMES_CALL, dialect="hermes", thinking=None, code_fences=None).tool_calls[0].name == "ls"
    assert parse(CALL, dialect=None).tool_calls[0].input == {"p": 1}


XML_CALL = "<tool><tool_name>ls</tool_name><arguments><p>1</p><q>x</q></arguments></tool>"


@pytest.mark.parametrize("name", ["parse", "parse_many", "StreamParser", "parse_arrow"])
def test_tools_reach_every_parser(name):
    """Forge's XML values are text unless ``tools`` types them: each parser must pass it on."""
    def calls(**options):
        if name == "parse":
            return [(c.name, c.input) for c in parse(XML_CALL, **options).tool_calls]
        if name == "parse_many":
            return [(c.name, c.input) for c in parse_many([XML_CALL], **options)[0].tool_calls]
        if name == "StreamParser":
            stream = StreamParser(**options)
            stream.feed(XML_CALL)
            stream.finish()
            return [(c.name, c.input) for c in stream.result().tool_calls]
        row = parse_arrow(pa.array([XML_CALL]), **options).to_pylist()[0]
        return [(c["name"], json.loads(c["arguments"])) for c in row["tool_calls"]]

    assert calls() == [("ls", {"p": "1", "q": "x"})]
    assert calls(tools=TOOLS) == [("ls", {"p": 1, "q": "x"})]


def test_one_stream_parser_reads_every_dialect_forge_included():
    forge = agentmsg.dialects.StreamParser(dialect="forge")
    hermes = agentmsg.StreamParser(dialect="hermes")
    assert agentmsg.dialects.StreamParser is agentmsg.StreamParser
    assert isinstance(forge, agentmsg.StreamParser) and isinstance(hermes, agentmsg.StreamParser)
    forge.feed(CALL)
    forge.finish()
    assert forge.result().tool_calls[0].input == {"p": 1}


@settings(max_examples=60, deadline=None)
@given(st.fixed_dictionaries({}, optional={
    "thinking": st.sampled_from(["auto", "tags", "brackets", "none"]),
    "tool_format": st.sampled_from(["auto", "json", "xml"]),
    "code_fences": st.booleans(),
    "start_in_thinking": st.sampled_from([None, True, False]),
    "max_calls": st.none() | st.integers(0, 3),
}), st.text(alphabet="<>/toolhink[]{}\"\n :`a", max_size=40))
def test_parse_and_parse_many_agree_for_any_options(options, text):
    one, many = parse(text, **options), parse_many([text], **options)[0]
    assert (one.text, one.thinking, one.tool_calls, one.errors) == (many.text, many.thinking, many.tool_calls, many.errors)


@pytest.mark.parametrize("name", PARSERS)
@pytest.mark.parametrize("options, error, message", [
    ({"start_in_thinking": "yes"}, MessageTypeError, r"^start_in_thinking must be a bool or None, not str$"),
    ({"max_calls": -1}, MessageError, r"^max_calls must be from 0 to \d+ \(this one is negative\)$"),
    ({"max_calls": True}, MessageTypeError, r"^max_calls must be an int or None, not bool$"),
    ({"code_fences": 1}, MessageTypeError, r"^code_fences must be a bool, not int$"),
    ({"dialect": 3}, MessageTypeError, r"^dialect must be a str or an agentmsg.Dialect, not int$"),
    ({"tools": [{}]}, MessageError, r"^invalid tools: tools\[0\] has no function name$"),
])
def test_each_option_value_is_read_by_one_reader_with_one_message(name, options, error, message):
    with pytest.raises(error, match=message):
        PARSERS[name](**options)


NATIVE_PARSERS = {
    "parse": _core.parse, "parse_many": _core.parse_many, "StreamParser": _core.StreamParser,
    "StreamBatch": _core.StreamBatch, "parse_arrow": _core.parse_arrow,
}


@pytest.mark.parametrize("name", NATIVE_PARSERS)
def test_every_native_parser_names_strict_in_its_signature(name):
    # `strict` once came in through `**unexpected`, hidden from the signature and the stubs.
    parameter = inspect.signature(NATIVE_PARSERS[name]).parameters["strict"]
    assert (parameter.kind, parameter.default) == (inspect.Parameter.KEYWORD_ONLY, None)
    assert list(inspect.signature(NATIVE_PARSERS[name]).parameters)[-2:] == ["strict", "unexpected"]


def test_strict_none_is_strict_not_given():
    text = "<think>" + HERMES_CALL[len("<think>plan</think>Hi "):] + "</think>"
    assert parse(text, dialect="hermes", strict=None) == parse(text, dialect="hermes")
    assert parse(text, dialect="hermes", strict=True).thinking == [HERMES_CALL[len("<think>plan</think>Hi "):]]
