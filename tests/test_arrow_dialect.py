"""parse_arrow with a dialect from parts (an ``agentmsg.dialects.Dialect``): row by row what
parse_many gives for the same dialect, nulls kept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import _core
from agentmsg.arrow import parse_arrow
from agentmsg.dialects import Dialect
from test_arrow import arrow_rows, rows_of

pa = pytest.importorskip("pyarrow")

BRACKETS = Dialect(name="brackets", call_start="[CALL]", call_end="[/CALL]", name_key="tool",
                   arguments_key="args", think_start="[THINK]", think_end="[/THINK]")
# An element payload: the arguments are typed by the tool definitions.
ELEMENTS = Dialect(name="elements", call_start="<call>", call_end="</call>", payload="qwen3_coder")
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"x": {"type": "integer"}, "s": {"type": "string"}}}}}]

BRACKET_TEXTS = [
    '[THINK]plan[/THINK]Ok.[CALL]{"tool": "f", "args": {"a": 1}}[/CALL]',
    '[CALL]{"tool": "g", "args": {"b": [1, 2.5, "é"]}}[/CALL] and [CALL]{"tool": "h"',
    "[CALL]not json[/CALL] then text",
    "[THINK]unclosed reasoning",
    "plain text, no call",
    "",
]
ELEMENT_TEXTS = [
    "<call>\n<function=f>\n<parameter=x>\n5\n</parameter>\n<parameter=s>\nhi\n</parameter>\n</function>\n</call>",
    "before <call>\n<function=f>\n<parameter=x>\nnot a number\n</parameter>\n</function>\n</call> after",
    "<call>\n<function=f>",
]


def expected_rows(texts, **options):
    """The struct rows ``parse_arrow`` gives: those of ``parse_many`` over the non-null texts."""
    parsed = iter(agentmsg.parse_many([t for t in texts if t is not None], **options))
    return rows_of([None if text is None else next(parsed) for text in texts])


@pytest.mark.parametrize("string_type", ["string", "large_string", "string_view"])
def test_custom_dialect_equals_parse_many_row_by_row(string_type):
    texts = BRACKET_TEXTS + [None]
    parsed = parse_arrow(pa.array(texts, type=getattr(pa, string_type)()), dialect=BRACKETS)
    assert arrow_rows(parsed) == expected_rows(texts, dialect=BRACKETS)
    # The rows hold what the dialect found: thinking, a call, a cut-off call as an error.
    assert arrow_rows(parsed)[0] == {"text": "Ok.", "thinking": ["plan"], "tool_calls": [("f", {"a": 1})], "errors": 0}


def test_custom_dialect_options_reach_the_parser():
    texts = ["[/THINK]was thinking[CALL]{\"tool\": \"f\", \"args\": {}}[/CALL]"] + BRACKET_TEXTS
    for start_in_thinking in (None, True, False):
        parsed = parse_arrow(pa.array(texts), dialect=BRACKETS, start_in_thinking=start_in_thinking)
        assert arrow_rows(parsed) == expected_rows(texts, dialect=BRACKETS, start_in_thinking=start_in_thinking)
    parsed = parse_arrow(pa.array(ELEMENT_TEXTS), dialect=ELEMENTS, tools=TOOLS)
    assert arrow_rows(parsed) == expected_rows(ELEMENT_TEXTS, dialect=ELEMENTS, tools=TOOLS)
    assert arrow_rows(parsed)[0]["tool_calls"] == [("f", {"x": 5, "s": "hi"})]


def test_core_parse_arrow_takes_the_dialect_object():
    parsed = _core.parse_arrow(pa.array(BRACKET_TEXTS), dialect=BRACKETS, start_in_thinking=None, tools=None)
    assert arrow_rows(pa.array(parsed)) == expected_rows(BRACKET_TEXTS, dialect=BRACKETS)
    with pytest.raises(agentmsg.MessageTypeError, match="dialect must be a str or an agentmsg.Dialect, not int"):
        _core.parse_arrow(pa.array(["a"]), dialect=5)
    with pytest.raises(agentmsg.MessageError, match="^thinking: an option of the forge dialect only, not of "):
        _core.parse_arrow(pa.array(["a"]), dialect=BRACKETS, thinking="none")
    with pytest.raises(agentmsg.MessageTypeError, match="^parse_arrow\\(\\) got an unexpected keyword argument 'tools_json' "
                                                        "\\(did you mean 'tools'\\?\\); it takes: "):
        _core.parse_arrow(pa.array(["a"]), tools_json="[]")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.none() | st.lists(st.sampled_from(
    ["[THINK]", "[/THINK]", "[CALL]", "[/CALL]", '{"tool": "t", "args": {"k": "v"}}', '{"tool": ', "\n",
     "text ", "é"]), max_size=12).map("".join), max_size=8))
def test_custom_dialect_matches_parse_many_on_marker_soup(texts):
    assert arrow_rows(parse_arrow(pa.array(texts, type=pa.string()), dialect=BRACKETS)) == expected_rows(texts, dialect=BRACKETS)
