"""The parsing rules of agentmsg.parse, one test (or more) per rule, with exact results."""

import doctest
import json

import pytest

import agentmsg
from agentmsg import (
    Message,
    MessageError,
    MessageTypeError,
    ParseIssue,
    StreamParser,
    TextBlock,
    ThinkingBlock,
    ToolCallEnd,
    ToolCallError,
    ToolUseBlock,
    format_tool_call,
    format_tool_result,
    parse,
    parse_many,
    parse_tool_calls,
    parse_tool_result,
    validate_tool_call,
)

SEED_CALL = """<tool>
{
  "server_name": "local",
  "tool_name": "calculator",
  "arguments": {"a": 5, "b": 3, "operation": "add"}
}
</tool>"""


def call_id(index: int, payload: str) -> str:
    """The documented id scheme, computed independently."""
    data = payload.encode("utf-8", "surrogatepass")
    data += b"\0" * (-len(data) % 8)
    words = [index] + [int.from_bytes(data[i : i + 8], "little") for i in range(0, len(data), 8)]
    h = 0xCBF29CE484222325
    for w in words:
        h = ((h ^ w) * 0x100000001B3) % 2**64
    return f"call_{h:016x}"


def shape(parsed):
    out = []
    for b in parsed.blocks:
        if isinstance(b, TextBlock):
            out.append(("text", b.text))
        elif isinstance(b, ThinkingBlock):
            out.append(("thinking", b.thinking))
        else:
            out.append(("call", b.name))
    return out


# -- tool calls ---------------------------------------------------------------------------------


def test_seed_tool_call_with_bracket_thinking():
    text = "[I'll use the calculator for this]\n\n" + SEED_CALL
    p = parse(text)
    payload = SEED_CALL[len("<tool>") : -len("</tool>")]
    assert p.tool_calls == [
        ToolUseBlock(call_id(0, payload), "calculator", {"a": 5, "b": 3, "operation": "add"}, "local", {})
    ]
    assert p.thinking == ["I'll use the calculator for this"]
    assert p.text == ""
    assert p.errors == []
    assert p.blocks == [ThinkingBlock("I'll use the calculator for this"), p.tool_calls[0]]


def test_seed_multiple_tools_and_text_kept_in_order():
    text = (
        "[I'll need to use multiple tools for this]\n\nFirst:\n"
        '<tool>{"server_name": "local", "tool_name": "search", "arguments": {"query": "Python tutorials"}}</tool>'
        "\n\n[Now I'll summarize the results]\n\nthen\n"
        '<tool>{"server_name": "local", "tool_name": "task_completion", "arguments": {"result": "ok"}}</tool>'
        "\nAfter the last call."
    )
    p = parse(text)
    assert shape(p) == [
        ("thinking", "I'll need to use multiple tools for this"),
        ("text", "First:"),
        ("call", "search"),
        ("thinking", "Now I'll summarize the results"),
        ("text", "then"),
        ("call", "task_completion"),
        ("text", "After the last call."),
    ]
    assert p.text == "First:\nthen\nAfter the last call."
    assert [c.input for c in p.tool_calls] == [{"query": "Python tutorials"}, {"result": "ok"}]


def test_close_and_open_tags_inside_json_strings_are_payload():
    text = '<tool>{"tool_name": "write", "arguments": {"s": "</tool> and <tool> and \\" </tool>"}}</tool>done'
    p = parse(text)
    assert p.tool_calls[0].input == {"s": '</tool> and <tool> and " </tool>'}
    assert p.text == "done"


def test_arguments_json_string_server_name_and_extra_keys():
    p = parse('<tool>{"tool_name": "t", "arguments": "{\\"x\\": [1]}", "server_name": "mcp", "why": {"k": 1}}</tool>')
    (call,) = p.tool_calls
    assert (call.input, call.server_name, call.metadata) == ({"x": [1]}, "mcp", {"why": {"k": 1}})
    assert parse('<tool>{"tool_name": "t", "arguments": {}}</tool>').tool_calls[0].server_name == "local"


def test_key_order_of_arguments_is_kept():
    p = parse('<tool>{"tool_name": "t", "arguments": {"z": 1, "a": 2, "m": {"y": 1, "b": 2}}}</tool>')
    assert list(p.tool_calls[0].input) == ["z", "a", "m"]
    assert list(p.tool_calls[0].input["m"]) == ["y", "b"]


def test_ids_are_deterministic_positional_and_documented():
    text = SEED_CALL + SEED_CALL
    a, b = parse(text).tool_calls
    payload = SEED_CALL[6:-7]
    assert (a.id, b.id) == (call_id(0, payload), call_id(1, payload))
    assert parse(text).tool_calls == [a, b]
    # A bad call before a good one still takes an index.
    bad_first = parse("<tool>{}</tool>" + SEED_CALL)
    assert bad_first.tool_calls[0].id == call_id(1, payload)


@pytest.mark.parametrize(
    "text, kind, message",
    [
        ("<tool>{\"tool_name\": \"t\",}</tool>", "invalid_json", "invalid JSON: trailing comma at line 1 column 19"),
        ("<tool>\n{\n  oops\n}</tool>", "invalid_json", "invalid JSON: key must be a string at line 3 column 3"),
        ('<tool>{"arguments": {}}</tool>', "missing_field", "missing tool_name"),
        ('<tool>{"tool_name": "t"}</tool>', "missing_field", "missing arguments"),
        ('<tool>{"tool_name": "", "arguments": {}}</tool>', "invalid_field", "tool_name must be a non-empty string, not an empty string"),
        ('<tool>{"tool_name": "t", "arguments": [1]}</tool>', "invalid_field", "arguments must be an object, not an array"),
        ('<tool>{"tool_name": "t", "arguments": "nope"}</tool>', "invalid_field", "arguments must be an object or a JSON string holding one; the string is not"),
        ('<tool>{"tool_name": "t", "arguments": {}, "server_name": 1}</tool>', "invalid_field", "server_name must be a string, not a number"),
        ("<tool>[1, 2]</tool>", "not_an_object", "payload must be a JSON object, not an array"),
        ("<tool>calculator(1, 2)</tool>", "invalid_json", "invalid JSON: expected value at line 1 column 1"),
        ('<tool>{"tool_name": "t", "arguments": {}}', "unclosed_tool", "unclosed <tool>: no </tool> before the end of the text"),
    ],
)
def test_bad_calls_become_issues_with_raw_text(text, kind, message):
    full = "Before ünïcode. " + text + (" After." if kind != "unclosed_tool" else "")
    p = parse(full)
    (issue,) = p.errors
    assert (issue.kind, issue.message) == (kind, message)
    assert full[issue.span[0] : issue.span[1]] == issue.raw == text
    assert p.tool_calls == []
    assert p.text == ("Before ünïcode.\nAfter." if kind != "unclosed_tool" else "Before ünïcode.")


def test_unterminated_json_string_ends_the_call_at_its_first_close_tag():
    text = 'a <tool>{"tool_name": "t", "arguments": {"s": "oops}</tool> b\n' + SEED_CALL + "\nc"
    p = parse(text)
    assert shape(p) == [("text", "a"), ("text", "b"), ("call", "calculator"), ("text", "c")]
    assert p.errors[0].raw == '<tool>{"tool_name": "t", "arguments": {"s": "oops}</tool>'
    assert p.errors[0].message == "invalid JSON: EOF while parsing a string at line 1 column 44"


def test_rest_of_text_parses_after_bad_calls():
    p = parse("<tool>{bad}</tool>\n[thinking]\n" + SEED_CALL + "\nend")
    assert shape(p) == [("thinking", "thinking"), ("call", "calculator"), ("text", "end")]
    assert [e.kind for e in p.errors] == ["invalid_json"]


def test_xml_payload_with_cdata_entities_nesting_and_lists():
    text = (
        "Editing.\n<tool>\n  <server_name>local</server_name>\n  <tool_name> edit </tool_name>\n"
        "  <arguments>\n    <path>a.go</path>\n    <code><![CDATA[if a < b && c </tool> {}]]></code>\n"
        "    <opts><mode>fast &amp; safe &#x263A;</mode></opts>\n    <tag>x</tag><tag>y</tag>\n"
        "  </arguments>\n  <note>kept</note>\n</tool>\nDone."
    )
    p = parse(text)
    (call,) = p.tool_calls
    assert call.name == "edit"
    assert call.input == {
        "path": "a.go",
        "code": "if a < b && c </tool> {}",
        "opts": {"mode": "fast & safe \u263a"},
        "tag": ["x", "y"],
    }
    assert call.metadata == {"note": "kept"}
    assert p.text == "Editing.\nDone."


def test_tool_format_option():
    xml = "<tool><tool_name>t</tool_name><arguments><a>1</a></arguments></tool>"
    jsn = '<tool>{"tool_name": "t", "arguments": {"a": "1"}}</tool>'
    assert parse(xml).tool_calls[0].input == parse(jsn).tool_calls[0].input == {"a": "1"}
    assert parse(xml, tool_format="xml").tool_calls[0].name == "t"
    assert parse(jsn, tool_format="json").tool_calls[0].name == "t"
    assert parse(xml, tool_format="json").errors[0].message == "XML payload but tool_format is 'json'"
    assert parse(jsn, tool_format="xml").errors[0].message == "JSON payload but tool_format is 'xml'"


def test_invalid_xml_is_an_issue():
    p = parse('<tool><tool_name a="1">t</tool_name></tool>')
    assert (p.errors[0].kind, p.errors[0].message) == (
        "invalid_xml",
        "invalid XML: attributes are not supported (in <tool_name>)",
    )


# -- code fences ----------------------------------------------------------------------------------


def test_tags_and_brackets_in_code_fences_are_text():
    text = "Example:\n```xml\n<tool>{\"tool_name\": \"t\", \"arguments\": {}}</tool>\n[not a thought]\n```\n[a thought]"
    p = parse(text)
    assert p.tool_calls == []
    assert p.thinking == ["a thought"]
    assert p.text == 'Example:\n```xml\n<tool>{"tool_name": "t", "arguments": {}}</tool>\n[not a thought]\n```'


def test_fence_needs_same_char_and_length_to_close():
    p = parse("~~~~\n```\n<think>x</think>\n~~~\n~~~~\n<think>y</think>")
    assert p.thinking == ["y"]


def test_code_fences_option_off():
    p = parse("```\n<tool>{\"tool_name\": \"t\", \"arguments\": {}}</tool>\n```", code_fences=False)
    assert [c.name for c in p.tool_calls] == ["t"]
    assert p.text == "```\n```"


# -- thinking -------------------------------------------------------------------------------------


def test_bracket_thoughts():
    p = parse("[First]\n  [nested [inner] thought]  \r\n\t[tab]\nanswer")
    assert p.thinking == ["First", "nested [inner] thought", "tab"]
    assert p.text == "answer"


@pytest.mark.parametrize(
    "line",
    [
        "[link](https://x.y)",
        "![image](a.png)",
        "[ref]: https://x.y",
        "[a] and [b]",
        "[ ]",
        "[x]",
        "[X]",
        "[]",
        "[1]",
        "[2, 3]",
        "[4-6]",
        '["a", "b"]',
        '[{"k": 1}]',
        "[1.5, true, null]",
        "- [ ] task",
        "text [not at start]",
        "[unclosed",
        "[a]]",
    ],
)
def test_bracket_exclusions(line):
    p = parse(line + "\nnext")
    assert p.thinking == []
    assert p.text == line + "\nnext"


def test_think_and_thinking_tags():
    p = parse("<think>\nstep 1\nstep 2\n</think>\n\nAnswer: 4 <thinking>check</thinking> ok")
    assert p.thinking == ["step 1\nstep 2", "check"]
    assert p.text == "Answer: 4\nok"
    assert p.incomplete_thinking is False


def test_tag_content_is_raw():
    p = parse("<think>[not separate] <tool>{}</tool> ```</think>x")
    assert p.thinking == ["[not separate] <tool>{}</tool> ```"]
    assert p.tool_calls == [] and p.errors == []


def test_empty_think_pair_is_an_empty_block():
    assert parse("<think>\n\n</think>\n\nHi").blocks == [ThinkingBlock(""), TextBlock("Hi")]


def test_unclosed_thinking_is_thinking_to_the_end_and_incomplete():
    p = parse("Sure. <think>still thinking [x]\nmore")
    assert p.thinking == ["still thinking [x]\nmore"]
    assert p.text == "Sure."
    assert p.incomplete_thinking is True


def test_start_in_thinking_detected_from_a_closing_tag_with_no_opener():
    p = parse("The user wants 2+2.\n</think>\n\n4")
    assert (p.thinking, p.text) == (["The user wants 2+2."], "4")
    assert parse("x</thinking>y").thinking == ["x"]
    # An opener first: the later stray closer is text.
    assert parse("<think>a</think> b </think>").text == "b </think>"


def test_start_in_thinking_explicit():
    assert parse("a</think>b", start_in_thinking=False).text == "a</think>b"
    p = parse("still", start_in_thinking=True)
    assert (p.thinking, p.incomplete_thinking) == (["still"], True)


@pytest.mark.parametrize(
    "mode, thinking, text",
    [
        ("auto", ["b", "t"], "x"),
        ("tags", ["t"], "[b]\nx"),
        ("brackets", ["b"], "<think>t</think>x"),
        ("none", [], "[b]\n<think>t</think>x"),
    ],
)
def test_thinking_modes(mode, thinking, text):
    p = parse("[b]\n<think>t</think>x", thinking=mode)
    assert (p.thinking, p.text) == (thinking, text)


# -- text normalization ------------------------------------------------------------------------


def test_text_runs_are_stripped_and_joined_with_newlines():
    p = parse("\n\n  Hello  \n\n<think>t</think>\n\n  World \r\n")
    assert p.blocks == [TextBlock("Hello"), ThinkingBlock("t"), TextBlock("World")]
    assert p.text == "Hello\nWorld"
    assert parse("a\n\n\nb").text == "a\n\n\nb"


def test_bom_is_dropped_crlf_and_nul_are_kept():
    p = parse("\ufeff[thought]\r\nline one\r\nNUL\x00here")
    assert (p.thinking, p.text) == (["thought"], "line one\r\nNUL\x00here")


def test_message_from_text():
    m = Message.from_text("assistant", "[Let me check]\nIt is 42.")
    assert (m.thinking, m.text) == ("Let me check", "It is 42.")
    m = Message.from_text("assistant", "Calling.\n" + SEED_CALL)
    assert (m.text, [c.name for c in m.tool_calls]) == ("Calling.", ["calculator"])


# -- the other functions -----------------------------------------------------------------------


def test_parse_tool_calls():
    assert [c.name for c in parse_tool_calls(SEED_CALL + "\n" + SEED_CALL)] == ["calculator"] * 2


@pytest.mark.parametrize(
    "text, message",
    [
        ("no tags", "missing <tool> tag"),
        ('<tool>{"tool_name": "t", "arguments": {}}', "missing </tool> tag (the <tool> at character 0 is not closed)"),
        ("<tool>\n{\n  oops\n}</tool>", "invalid JSON: key must be a string at line 3 column 3 (tool call at characters 0-24)"),
        ('<tool>{"arguments": {}}</tool>', "missing tool_name (tool call at characters 0-30)"),
        ('x <tool>{"tool_name": "t"}</tool>', "missing arguments (tool call at characters 2-33)"),
        ("```\n<tool>{}</tool>\n```", "missing <tool> tag outside code fences and thinking"),
    ],
)
def test_validate_tool_call_rejects(text, message):
    with pytest.raises(ToolCallError) as info:
        validate_tool_call(text)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError) and isinstance(info.value, agentmsg.AgentMsgError)


def test_validate_tool_call_returns_the_first_call():
    assert validate_tool_call(SEED_CALL).input == {"a": 5, "b": 3, "operation": "add"}


def test_format_tool_call_is_seed_form_and_parses_back():
    block = ToolUseBlock("c1", "api_request", {"body": '{"key": "value"}', "u": "ü </tool>"}, "local", {"why": 1})
    text = format_tool_call(block)
    assert text.startswith('<tool>\n{\n  "server_name": "local",\n  "tool_name": "api_request",\n')
    assert text.endswith("\n}\n</tool>")
    (back,) = parse(text).tool_calls
    assert (back.name, back.input, back.server_name, back.metadata) == (
        block.name, block.input, block.server_name, block.metadata)


def test_tool_result_format_and_parse():
    assert format_tool_result("calculator", "Result: 8") == "Tool: calculator\nResult: 8"
    assert format_tool_result("calculator", "division by zero", True) == "Tool: calculator\nError: division by zero"
    assert parse_tool_result("Tool: calculator\nResult: 8") == ("calculator", "Result: 8", False)
    assert parse_tool_result("Tool: calculator\nError: division by zero") == ("calculator", "division by zero", True)
    assert parse_tool_result("Tool: ls") == ("ls", "", False)
    assert parse_tool_result("Tool: ls\r\nx\ny") == ("ls", "x\ny", False)
    with pytest.raises(ToolCallError):
        parse_tool_result("Result: 8")
    with pytest.raises(ToolCallError):
        format_tool_result("two\nlines", "x")


def test_parse_many_of_each_serial_size_equals_parse_one_by_one():
    # Under 4 MiB in all parse_many parses serially: with the GIL held up to 1 MiB (as parse
    # does), released past it (a 3.9 MB batch must not block other threads; that is not timed
    # here, only that the results are unchanged), and past 4 MiB on the pool.
    call = 'Hi <tool>{"tool_name": "f", "arguments": {"i": 1}}</tool> '
    for total in (100_000, 1_100_000, 3_900_000, 4_300_000):
        texts = [call * (total // len(call) // 8)] * 8
        results = parse_many(texts)
        assert results == [parse(texts[0])] * 8
        assert [len(r.tool_calls) for r in results] == [total // len(call) // 8] * 8


def test_parse_many_equals_parse_one_by_one():
    texts = ["[a]\nb", SEED_CALL, "<think>x", "", "plain"] * 20
    assert parse_many(texts) == [parse(t) for t in texts]
    assert parse_many(iter(["x"]), thinking="none") == [parse("x", thinking="none")]
    assert parse_many([]) == []


def test_bad_arguments_raise_agentmsg_errors():
    with pytest.raises(MessageTypeError):
        parse(b"bytes")
    with pytest.raises(MessageTypeError, match="texts must be a sequence of str, not a single str"):
        parse_many("abc")
    with pytest.raises(MessageTypeError, match="texts must be a sequence of str, not int"):
        parse_many(3)
    with pytest.raises(MessageTypeError, match=r"texts\[1\] must be a str, not int"):
        parse_many(["a", 1])
    with pytest.raises(MessageError, match="unknown thinking mode 'brain'; valid: auto, tags, brackets, none"):
        parse("x", thinking="brain")
    with pytest.raises(MessageError, match="unknown tool format 'yaml'; valid: auto, json, xml"):
        agentmsg.StreamParser(tool_format="yaml")
    with pytest.raises(MessageTypeError, match="chunk must be a str, not bytes"):
        agentmsg.StreamParser().feed(b"x")
    with pytest.raises(MessageTypeError):
        validate_tool_call(None)


def test_parse_issue_and_parsed_are_frozen():
    issue = parse("<tool>x</tool>").errors[0]
    assert isinstance(issue, ParseIssue)
    with pytest.raises(AttributeError):
        issue.kind = "other"


@pytest.mark.parametrize(
    "cls",
    ["StreamParser", "TextDelta", "ThinkingDelta", "ThinkingEnd", "ToolCallStart", "ToolCallDelta", "ToolCallEnd"],
)
def test_native_class_docstring_examples(cls):
    """The examples of the classes defined in Rust (test_docstrings only sees Python modules)."""
    obj = getattr(agentmsg, cls)
    globs = {"agentmsg": agentmsg, **{n: getattr(agentmsg, n) for n in agentmsg.__all__}}
    tests = doctest.DocTestFinder().find(obj, cls, globs=globs)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    attempted = 0
    for test in tests:
        result = runner.run(test)
        attempted += result.attempted
        assert result.failed == 0
    assert attempted > 0



def test_floats_in_arguments_read_back_exactly():
    values = [2.5e-308, 0.1, 1e308, -0.0, 123456789.123456789, 5e-324]
    call = ToolUseBlock("c1", "t", {f"v{i}": v for i, v in enumerate(values)})
    (parsed,) = parse(format_tool_call(call)).tool_calls
    assert list(parsed.input.values()) == values


def test_json_payloads_read_as_json_loads_reads_them():
    """Integers of any size stay exact, a repeated key keeps its last value at its first place,
    and the result equals json.loads on the same payload (here both in the fast one-pass read
    of a whole call and in the byte-wise scan a split stream takes)."""
    payload = (
        '{"tool_name": "t", "arguments": {"big": 123456789012345678901234567890, "neg": -18446744073709551617,'
        ' "a": 1, "b": [true, null, "x\\u00e9\\ud83c\\udf89"], "a": 2}, "note": 1, "note": {"k": []}}'
    )
    expected = json.loads(payload)
    text = f"Go <tool>{payload}</tool> done"
    (call,) = parse(text).tool_calls
    assert call.input == expected["arguments"]
    assert list(call.input) == ["big", "neg", "a", "b"] and call.input["a"] == 2
    assert call.metadata == {"note": {"k": []}}
    streamed = StreamParser(start_in_thinking=False)
    ends = [e for chunk in text for e in streamed.feed(chunk) if isinstance(e, ToolCallEnd)]
    assert ends[0].call == call


def test_strict_json_only():
    for bad in ('{"tool_name": "t", "arguments": {"x": NaN}}', '{"tool_name": "t", "arguments": {"x": 1,}}'):
        (issue,) = parse(f"<tool>{bad}</tool>").errors
        assert issue.kind == "invalid_json" and issue.raw == f"<tool>{bad}</tool>"
