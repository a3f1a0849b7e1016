"""Forge's parser typed by ``tools=``: the text values of ``<tool>`` XML payloads take their
parameter's schema type (the schema code qwen3_coder uses), a value that does not convert stays
text and is named in ``schema_errors``, and a call to an unknown tool is kept and flagged. Whole,
batched and streamed (every chunking) results agree."""

from __future__ import annotations

import pytest

import agentmsg

TOOLS = [
    {"type": "function", "function": {"name": "typed", "parameters": {"type": "object", "properties": {
        "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"}, "o": {"type": "object"},
        "a": {"type": "array"}, "s": {"type": "string"}, "z": {"type": ["integer", "null"]}}}}},
    {"name": "plain", "parameters": {"type": "object", "properties": {"i": {"type": "integer"}}}},
]


def xml(name, **arguments):
    body = "".join(f"<{key}>{value}</{key}>" for key, value in arguments.items())
    return f"<tool><tool_name>{name}</tool_name><arguments>{body}</arguments></tool>"


CASES = [
    pytest.param(xml("typed", i="42", n=" 1.5 ", b="True", o='{"k": [1]}', a="[1, 2]", s="7", z="null", q="3"),
                 [("typed", {"i": 42, "n": 1.5, "b": True, "o": {"k": [1]}, "a": [1, 2], "s": "7", "z": None,
                             "q": "3"}, {})], [], id="every-type"),
    pytest.param(xml("typed", i="4.5", b="yes", a="{}"),
                 [("typed", {"i": "4.5", "b": "yes", "a": "{}"},
                   {"schema_errors": ["parameter 'i' is not an integer; kept as text",
                                      "parameter 'b' is not a boolean; kept as text",
                                      "parameter 'a' is not an array; kept as text"]})], [], id="kept-as-text"),
    pytest.param(xml("plain", i="&#55;"), [("plain", {"i": 7}, {})], [], id="entity-then-typed"),
    pytest.param(xml("plain", i="<![CDATA[ 8 ]]>"), [("plain", {"i": 8}, {})], [], id="cdata-then-typed"),
    pytest.param(xml("other", i="1"), [("other", {"i": "1"}, {"unknown_tool": True})], [], id="unknown-xml-tool"),
    pytest.param('<tool>{"tool_name": "other", "arguments": {"i": "1"}}</tool>',
                 [("other", {"i": "1"}, {"unknown_tool": True})], [], id="unknown-json-tool"),
    pytest.param('<tool>{"tool_name": "plain", "arguments": {"i": "1"}}</tool>',
                 [("plain", {"i": "1"}, {})], [], id="json-values-are-as-written"),
    pytest.param("<tool><tool_name>typed</tool_name><arguments><o><k>1</k></o><a>1</a><a>2</a></arguments></tool>",
                 [("typed", {"o": {"k": "1"}, "a": ["1", "2"]}, {})], [], id="elements-keep-their-shape"),
    pytest.param(xml("typed", n="1e400"), [("typed", {"n": "1e400"},
                 {"schema_errors": ["parameter 'n' is not a number; kept as text"]})], [], id="number-past-the-largest"),
    pytest.param("Sure. " + xml("plain", i="1") + " and " + xml("typed", b="false"),
                 [("plain", {"i": 1}, {}), ("typed", {"b": False}, {})], [], id="two-calls"),
]


def summary(parsed):
    calls = [(c.name, c.input, c.metadata) for c in parsed.tool_calls]
    return calls, [(e.kind, e.message) for e in parsed.errors]


def chunkings(text):
    yield [text]
    for size in (1, 2, 3, 7):
        yield [text[i:i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("text, calls, errors", CASES)
def test_xml_payloads_typed_by_tools(text, calls, errors):
    parsed = agentmsg.parse(text, tools=TOOLS)
    assert summary(parsed) == (calls, errors)
    assert agentmsg.parse_many([text, text], tools=TOOLS) == [parsed, parsed]
    for pieces in chunkings(text):
        parser = agentmsg.StreamParser(tools=TOOLS)
        events = [event for piece in pieces for event in parser.feed(piece)] + parser.finish()
        assert parser.result() == parsed, pieces
        ends = [e for e in events if isinstance(e, agentmsg.ToolCallEnd)]
        assert [e.call for e in ends if e.call is not None] == parsed.tool_calls


def test_without_tools_values_stay_text_and_nothing_is_flagged():
    parsed = agentmsg.parse(xml("other", i="1") + xml("typed", i="4.5"))
    assert summary(parsed) == ([("other", {"i": "1"}, {}), ("typed", {"i": "4.5"}, {})], [])
    assert agentmsg.parse(xml("typed", i="1"), tools=[]).tool_calls[0].metadata == {"unknown_tool": True}


def test_tools_work_with_the_other_options():
    text = "[plan]\n" + xml("plain", i="3")
    parsed = agentmsg.parse(text, tools=TOOLS, tool_format="xml", thinking="brackets", max_calls=1)
    assert (parsed.thinking, summary(parsed)) == (["plan"], ([("plain", {"i": 3}, {})], []))
    json_only = agentmsg.parse(xml("plain", i="3"), tools=TOOLS, tool_format="json")
    assert [e.kind for e in json_only.errors] == ["wrong_format"]


@pytest.mark.parametrize("call", [
    lambda tools: agentmsg.parse("x", tools=tools),
    lambda tools: agentmsg.parse_many(["x"], tools=tools),
    lambda tools: agentmsg.StreamParser(tools=tools),
])
def test_bad_tools_are_refused_with_the_dialects_messages(call):
    with pytest.raises(agentmsg.MessageTypeError, match="tools must be a list of tool definitions, not str"):
        call("[]")
    with pytest.raises(agentmsg.MessageError, match=r"invalid tools: tools\[0\] has no function name"):
        call([{}])
