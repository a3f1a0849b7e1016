"""The parser takes any input: random text, deep nesting, megabyte payloads, odd characters."""

import threading
from concurrent.futures import ThreadPoolExecutor

from hypothesis import given, settings
from hypothesis import strategies as st

from agentmsg import (
    Message,
    StreamParser,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    format_tool_call,
    parse,
    parse_many,
)

any_text = st.text(st.characters(codec=None), max_size=200)
tagged_text = st.lists(
    st.sampled_from(["<tool>", "</tool>", "<think>", "</think>", "[", "]", "\n", "```", '"', "{", "}"])
    | st.text(st.characters(codec=None), max_size=8),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(any_text | tagged_text)
def test_any_text_parses_and_loses_nothing_unaccounted(text):
    p = parse(text)
    assert parse(text) == p  # deterministic
    for error in p.errors:
        assert text[error.span[0] : error.span[1]] == error.raw
    for block in p.blocks:
        assert isinstance(block, (TextBlock, ThinkingBlock, ToolUseBlock))
        if isinstance(block, TextBlock):
            assert block.text and block.text == block.text.strip(" \t\n\r\x0b\x0c")
    # Every visible text run comes from the input.
    for block in p.blocks:
        if isinstance(block, TextBlock) and "</think>" not in block.text:
            assert block.text in text.replace("\ufeff", "", 1)


@settings(max_examples=150, deadline=None)
@given(any_text)
def test_plain_text_without_markup_is_returned_stripped(text):
    if any(c in text for c in "<[`~\ufeff"):
        return
    assert parse(text).text == text.strip(" \t\n\r\x0b\x0c")


json_scalar = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(
    st.characters(blacklist_categories=["Cs"]), max_size=20
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
names = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=10)


@settings(max_examples=200, deadline=None)
@given(names, st.dictionaries(st.text(max_size=5), json_value, max_size=4), names,
       st.dictionaries(st.text(max_size=5).filter(lambda k: k not in ("server_name", "tool_name", "arguments")),
                       json_value, max_size=2))
def test_format_tool_call_round_trips(name, arguments, server, metadata):
    block = ToolUseBlock("id", name, arguments, server, metadata)
    (back,) = parse("Intro\n" + format_tool_call(block) + "\nOutro").tool_calls
    assert (back.name, back.input, back.server_name, back.metadata) == (name, arguments, server, metadata)


def test_deep_nesting():
    for text in ["[" * 100_000, "{" * 100_000, "<tool>" + "{" * 100_000 + "</tool>",
                 "[" * 100_000 + "]" * 100_000, "<tool>" + "[" * 100_000 + "</tool>",
                 "<tool>" + "<a>" * 100_000 + "</tool>", "<think>" + "[" * 100_000]:
        p = parse(text)
        assert p.text or p.thinking or p.errors
    p = parse("<tool>" + '{"a": ' * 100_000 + "</tool>")
    assert p.errors[0].message == "invalid JSON: recursion limit exceeded at line 1 column 1207"
    p = parse("<tool>" + "<a>" * 100_000 + "</tool>")
    assert p.errors[0].message == "invalid XML: elements nested deeper than 128"


def test_megabyte_payloads_and_texts():
    big = "x\\n\\\"" * 500_000
    text = 'Go.\n<tool>{"tool_name": "write", "arguments": {"content": "' + big + '"}}</tool>\nDone.'
    p = parse(text)
    assert p.tool_calls[0].input["content"] == 'x\n"' * 500_000
    assert p.text == "Go.\nDone."
    xml = "<tool><tool_name>w</tool_name><arguments><c><![CDATA[" + "<" * 2_000_000 + "]]></c></arguments></tool>"
    assert parse(xml).tool_calls[0].input["c"] == "<" * 2_000_000
    plain = "word " * 400_000
    assert parse(plain).text == plain.strip()


def test_megabyte_stream_in_small_chunks():
    text = "[think]\n" + "a" * 300_000 + '<tool>{"tool_name": "t", "arguments": {"d": "' + "b" * 300_000 + '"}}</tool>'
    parser = StreamParser()
    events = []
    for i in range(0, len(text), 7):
        events.extend(parser.feed(text[i : i + 7]))
    events.extend(parser.finish())
    assert events[-1].call.input == {"d": "b" * 300_000}


def test_nul_crlf_bom_and_lone_surrogates():
    p = parse("\ufeff\x00a\r\n[th\udc80ought]\r\n<think>\ud800</think>b\udfff")
    assert p.blocks == [TextBlock("\x00a"), ThinkingBlock("th\udc80ought"), ThinkingBlock("\ud800"), TextBlock("b\udfff")]
    bad = "<tool>{\"tool_name\": \"\udc80\", \"arguments\": {}}</tool>"
    p = parse("x" + bad)
    assert p.errors[0].raw == bad and p.errors[0].span == (1, 1 + len(bad))
    parser = StreamParser()
    assert "".join(e.text for e in parser.feed("\ud800 x") + parser.finish()) == "\ud800 x"
    assert Message.from_text("assistant", "a\udc80").text == "a\udc80"


def test_parse_many_from_threads_and_big_batches():
    texts = [f"[t{i}]\nText {i} <tool>{{\"tool_name\": \"n{i}\", \"arguments\": {{}}}}</tool>" for i in range(2000)]
    expected = [parse(t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: parse_many(texts), range(4)))
    assert all(r == expected for r in results)


def test_stream_parsers_in_threads_are_independent():
    text = "[a]\n<think>b</think>c" * 50
    expected = parse(text, start_in_thinking=False)
    results = []

    def work():
        parser = StreamParser()
        events = []
        for ch in text:
            events.extend(parser.feed(ch))
        events.extend(parser.finish())
        results.append("".join(getattr(e, "text", "") for e in events if type(e).__name__ == "TextDelta"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected.text] * 4
