"""Dialect.from_response_template: transformers' response_template specs (tests/data/response_templates)
compiled to streaming dialects, whose results equal transformers' own parse_response."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response

import agentmsg
from agentmsg import Dialect, DialectTemplateError, StreamParser, parse

SPECS = Path(__file__).resolve().parent / "data" / "response_templates"


def spec(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text(encoding="utf-8"))


#: The specs that compile, with the markers and JSON keys a reply is built from.
COMPILED = {
    "smollm3": {"think": ("<think>", "</think>"), "call": ("<tool_call>", "</tool_call>"), "keys": ("name", "arguments")},
    "tool_call_no_thinking": {"think": None, "call": ("<tool_call>", "</tool_call>"), "keys": ("name", "arguments")},
    "bracket_calls": {"think": ("[REASON]", "[/REASON]"), "call": ("[CALL]", "[/CALL]"), "keys": ("tool", "args")},
}


def test_the_specs_compile_to_these_dialects():
    assert Dialect.from_response_template(spec("smollm3")) == {"dialect": "hermes"}
    no_thinking = Dialect.from_response_template(spec("tool_call_no_thinking"))["dialect"]
    assert no_thinking == Dialect(name="response_template", call_start="<tool_call>", call_end="</tool_call>")
    brackets = Dialect.from_response_template(spec("bracket_calls"))["dialect"]
    assert brackets == Dialect(name="response_template", call_start="[CALL]", call_end="[/CALL]", name_key="tool",
                               arguments_key="args", think_start="[REASON]", think_end="[/REASON]")
    # A tokenizer_config.json holding the spec is read too.
    assert Dialect.from_response_template({"response_template": spec("smollm3"), "chat_template": "..."}) == {"dialect": "hermes"}


@pytest.mark.parametrize("name, reason", [
    ("qwen3_xml_inline", "field 'tool_calls': xml-inline parameters are typed by guessing JSON"),
    ("gpt_oss_regex", "field 'tool_calls': 'open_pattern' is a regex"),
    ("cohere_list", "field 'tool_calls': transform_each (all calls in one JSON list)"),
])
def test_specs_beyond_markers_say_why(name, reason):
    with pytest.raises(DialectTemplateError) as error:
        Dialect.from_response_template(spec(name))
    assert isinstance(error.value, ValueError) and isinstance(error.value, agentmsg.AgentMsgError)
    assert reason in str(error.value)


def fields(**tool_calls):
    call = {"open": "<c>", "close": "</c>", "repeats": True, "content": "json",
            "transform": {"type": "function", "function": "{content}"}}
    return {"start_anchor": "<s>", "fields": {"tool_calls": {**call, **tool_calls}, "content": {}}}


@pytest.mark.parametrize("bad, message", [
    ({"fields": {}}, "'fields' must be a non-empty dict"),
    ({**fields(), "version": 2}, "unsupported version 2"),
    ({**fields(), "extra": 1}, "unknown keys ['extra']"),
    (fields(open=["<c>", "<call>"]), "'open' must be one literal str here"),
    (fields(close=None), "has no 'close' marker"),
    (fields(content="xml-inline"), "xml-inline parameters are typed by guessing JSON"),
    (fields(content="kv-lines"), "is not a JSON object payload"),
    (fields(content_args={"unquoted_keys": True}), "relax JSON"),
    (fields(transform={"function": "{content}"}), "the transform must be"),
    (fields(transform={"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}),
     "captures of a regex header do not compile"),
    (fields(bogus=1), "unknown keys ['bogus']"),
    ({"start_anchor": "<s>", "fields": {"content": {}}}, "has no 'tool_calls' field"),
    ({"start_anchor": "<s>", "fields": {"thinking": {"open": "<t>"}, "tool_calls": fields()["fields"]["tool_calls"]}},
     "field 'thinking': has no 'close' marker"),
    ({"start_anchor": "<s>", "fields": {"answer": {"open": "<a>", "close": "</a>"}, **fields()["fields"]}},
     "field 'answer': agentmsg reads reasoning"),
    ({"start_anchor": "<s>", "fields": {**fields()["fields"], "content": {"content": "json"}}},
     "field 'content': the field with no 'open'"),
    ({"start_anchor": "<s>", "fields": {**fields()["fields"], "content": {"content_args": {"strip": False}}}},
     "strip=False"),
    (fields(open="<c>", close="<c>"), "call_start and call_end must differ"),
])
def test_bad_specs_are_typed_errors(bad, message):
    with pytest.raises((DialectTemplateError, agentmsg.MessageError)) as error:
        Dialect.from_response_template(bad)
    assert message in str(error.value)


def test_a_spec_that_is_no_dict_is_a_type_error():
    with pytest.raises(agentmsg.MessageTypeError):
        Dialect.from_response_template("smollm3.json")
    with pytest.raises(DialectTemplateError, match="must be a dict, not int"):
        Dialect.from_response_template({"start_anchor": "<s>", "fields": {"tool_calls": 5}})


# -- the same results as transformers' parse_response ----------------------------------------------

# Words that hold no marker and no blank at either end (the text rules strip blanks).
words = st.text(alphabet="abcxyz ,.!?é日", min_size=1, max_size=12).map(str.strip).filter(bool)
json_values = st.recursive(
    st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.none(), st.text(alphabet="abc \"\\<>/{}é", max_size=8)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="abk", min_size=1, max_size=3), inner, max_size=3),
    max_leaves=6,
)
replies = st.fixed_dictionaries({
    "thinking": st.none() | words,
    "content": st.none() | words,
    "calls": st.lists(st.tuples(st.text(alphabet="abcdef_", min_size=1, max_size=8),
                                st.dictionaries(st.text(alphabet="abxy", min_size=1, max_size=4), json_values, max_size=3)),
                      max_size=3),
    "blank": st.sampled_from(["", "\n", "\n\n"]),
})


def build(reply: dict, markers: dict) -> str:
    """The reply as the model writes it with ``markers`` (blanks where the template writes them)."""
    text = ""
    if reply["thinking"] is not None and markers["think"]:
        text += f"{markers['think'][0]}\n{reply['thinking']}\n{markers['think'][1]}{reply['blank']}"
    if reply["content"] is not None:
        text += reply["content"]
    name_key, arguments_key = markers["keys"]
    for name, arguments in reply["calls"]:
        payload = json.dumps({name_key: name, arguments_key: arguments}, ensure_ascii=False)
        text += f"{reply['blank']}{markers['call'][0]}{payload}{markers['call'][1]}" if not text else \
            f"{markers['call'][0]}{payload}{markers['call'][1]}"
    return text


def as_message(parsed: agentmsg.Parsed) -> dict:
    """Our result in parse_response's shape."""
    message: dict = {"role": "assistant"}
    if parsed.thinking:
        message["thinking"] = "\n".join(parsed.thinking)
    if parsed.text:
        message["content"] = parsed.text
    if parsed.tool_calls:
        message["tool_calls"] = [{"type": "function", "function": {"name": call.name, "arguments": call.input}}
                                 for call in parsed.tool_calls]
    return message


@settings(max_examples=150, deadline=None)
@given(reply=replies, data=st.data())
def test_results_equal_transformers_parse_response(reply, data):
    for name, markers in COMPILED.items():
        template = spec(name)
        text = build(reply, markers)
        options = Dialect.from_response_template(template)
        expected = parse_response(text, template, prefix="")
        whole = parse(text, **options)
        assert not whole.errors
        assert as_message(whole) == expected, (name, text)
        # Streamed in random chunks: the same result.
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
        stream = StreamParser(**options)
        for start, end in zip([0, *cuts], [*cuts, len(text)]):
            stream.feed(text[start:end])
        stream.finish()
        assert stream.result() == whole


def test_where_transformers_drops_text_we_keep_it():
    """Two calls with a line break between them: transformers' implicit content field is
    rewritten by the blank run between the calls and then dropped as empty; a dialect keeps
    every run of text (docs/dialects.md)."""
    template = spec("smollm3")
    text = 'Checking both.\n<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    theirs = parse_response(text, template, prefix="")
    ours = parse(text, **Dialect.from_response_template(template))
    assert "content" not in theirs
    assert ours.text == "Checking both."
    assert [c["function"]["name"] for c in theirs["tool_calls"]] == [c.name for c in ours.tool_calls] == ["a", "b"]
