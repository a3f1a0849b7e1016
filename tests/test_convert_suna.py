"""Suna db rows, cached blocks and the Bedrock filter."""

import json
import warnings

import pytest
from hypothesis import given, settings

from agentmsg import (
    ConversionError,
    ConversionWarning,
    Message,
    MessageTypeError,
    ToolPairError,
    ToolUseBlock,
    filter_for_bedrock,
    format_conversation_for_cache,
    from_db_rows,
    is_cached_block,
    to_db_rows,
)
from convert_strategies import histories
from test_convert_openai import carried as openai_carried

CALL = {"id": "tooluse_FLTrjOjmSQmzWZCwoun-IA", "type": "function",
        "function": {"name": "web_search", "arguments": '{"query": "Larry Ellison biography", "num_results": 10}'}}
ROWS = [
    {"message_id": "m0", "thread_id": "t", "type": "system", "is_llm_message": True,
     "content": json.dumps({"role": "system", "content": "You are Suna.so..."}), "metadata": {},
     "created_at": "2025-01-01T00:00:00+00:00"},
    {"message_id": "m1", "thread_id": "t", "type": "status", "is_llm_message": False,
     "content": {"status_type": "thread_run_start", "thread_run_id": "r"}, "metadata": {}},
    {"message_id": "m2", "thread_id": "t", "type": "user", "is_llm_message": True,
     "content": "research about larry ellison... (truncated)", "created_at": "2025-01-01T00:00:01Z",
     "metadata": {"compressed": True, "compressed_content": "research about larry ellison... (truncated)"}},
    {"message_id": "m3", "thread_id": "t", "type": "assistant", "is_llm_message": True,
     "content": json.dumps({"role": "assistant", "content": "I'll research.", "tool_calls": [CALL],
                            "message_id": "m3"}), "metadata": {}, "created_at": "2025-01-01T00:00:02Z"},
    {"message_id": "m4", "thread_id": "t", "type": "tool", "is_llm_message": True,
     "content": {"role": "tool", "name": "web_search", "content": '{"answer": "..."}'},
     "metadata": {"tool_call_id": "tooluse_FLTrjOjmSQmzWZCwoun-IA"}, "created_at": "2025-01-01T00:00:03Z"},
    {"message_id": "m5", "thread_id": "t", "type": "llm_response_end", "content": "{}", "metadata": {}},
]


def test_from_db_rows_reads_every_content_shape_and_skips_non_llm_rows():
    messages = from_db_rows(ROWS)
    assert [(m.id, m.role.value, m.text) for m in messages] == [
        ("m0", "system", "You are Suna.so..."),
        ("m2", "user", "research about larry ellison... (truncated)"),
        ("m3", "assistant", "I'll research."),
        ("m4", "tool", '{"answer": "..."}'),
    ]
    assert messages[2].tool_calls == (ToolUseBlock(CALL["id"], "web_search",
                                                   {"query": "Larry Ellison biography", "num_results": 10}),)
    assert (messages[3].tool_id, messages[3].name) == (CALL["id"], "web_search")
    assert messages[0].metadata == {"suna_row": {"thread_id": "t"}}
    assert messages[2].metadata == {"openai": {"message_id": "m3"}, "suna_row": {"thread_id": "t"}}
    assert messages[1].timestamp.isoformat() == "2025-01-01T00:00:01+00:00"


def test_rows_round_trip_through_messages():
    rows = [r for r in ROWS if r.get("is_llm_message") is True]
    back = to_db_rows(from_db_rows(rows))
    assert [r["message_id"] for r in back] == ["m0", "m2", "m3", "m4"]
    assert back[1]["content"] == rows[1]["content"]  # compressed rows keep their stored content
    assert json.loads(back[2]["content"]) == json.loads(rows[2]["content"])
    assert back[3]["metadata"] == {"tool_call_id": CALL["id"]}
    assert json.loads(back[3]["content"]) == {"role": "tool", "tool_call_id": CALL["id"],
                                              "content": '{"answer": "..."}', "name": "web_search"}
    assert all(r["thread_id"] == "t" and r["is_llm_message"] is True for r in back)
    assert [m.to_dict() for m in from_db_rows(back)] == [m.to_dict() for m in from_db_rows(rows)]


def test_metadata_as_json_string_and_plain_string_content():
    [m] = from_db_rows([{"type": "assistant", "content": "plain words", "metadata": '{"k": 1}'}])
    assert (m.text, m.metadata) == ("plain words", {"k": 1})


@pytest.mark.parametrize("rows, error, text", [
    ([{"content": "x"}], ConversionError, "rows[0]: missing field 'type'"),
    ([{"type": "browser_state", "content": "x", "is_llm_message": True}], ConversionError,
     "rows[0].type: unknown message type 'browser_state'"),
    ([{"type": "user", "content": 5}], MessageTypeError, "rows[0].content must be"),
    ([{"type": "user", "content": {"role": "assistant", "content": "x"}}], ConversionError,
     "rows[0].content.role: 'assistant' disagrees with the row type 'user'"),
    ([{"type": "user", "content": "x", "metadata": {"compressed": True, "compressed_content": 3}}], ConversionError,
     "rows[0].metadata.compressed_content must be a str, not int"),
    ([{"type": "tool", "content": "x"}], ConversionError, "rows[0].content: missing field 'tool_call_id'"),
])
def test_bad_rows_name_index_and_field(rows, error, text):
    with pytest.raises(error) as caught:
        from_db_rows(rows)
    assert str(caught.value).startswith(text)


def test_orphan_tool_row():
    row = {"type": "tool", "content": "x", "metadata": {"tool_call_id": "ghost"}}
    with pytest.raises(ToolPairError):
        from_db_rows([row])
    assert from_db_rows([row], on_orphan="keep")[0].tool_id == "ghost"


@settings(max_examples=120, deadline=None)
@given(histories)
def test_round_trip_keeps_ids_timestamps_metadata_and_what_openai_carries(messages):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConversionWarning)
        back = from_db_rows(to_db_rows(messages, thread_id="t"), on_orphan="keep")
    kept = [m for m in messages if openai_carried(m) is not None]
    assert [openai_carried(m) for m in back] == [openai_carried(m) for m in kept]
    assert [(m.id, m.timestamp) for m in back] == [(m.id, m.timestamp) for m in kept]
    for original, read in zip(kept, back):
        expected = {k: v for k, v in original.metadata.items() if k not in ("suna_row", "openai")}
        assert {k: v for k, v in read.metadata.items() if k not in ("suna_row", "openai")} == expected


# -- cached blocks and the Bedrock filter -----------------------------------------------------

def test_format_conversation_for_cache_exact_text():
    messages = [
        Message.user("research about larry ellison"),
        Message.assistant("I'll conduct...", tool_calls=[ToolUseBlock("t1", "web_search", {"q": "Larry"})]),
        Message.tool('{"answer": "..."}', tool_id="t1"),
    ]
    block = format_conversation_for_cache(messages)
    assert block == {"role": "user", "content": [{
        "type": "text",
        "text": 'User: research about larry ellison\n\nAssistant: I\'ll conduct...\n[tool call web_search {"q": "Larry"}]'
                '\n\nTool: {"answer": "..."}',
        "cache_control": {"type": "ephemeral"},
    }]}
    assert is_cached_block(block)


@pytest.mark.parametrize("message, expected", [
    ({"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]}, True),
    ({"role": "user", "content": [{"type": "text", "text": "x"}]}, False),
    ({"role": "user", "content": "Tool: {...}"}, False),
    ({"role": "user"}, False),
    ({"role": "user", "content": ["not a dict"]}, False),
])
def test_is_cached_block(message, expected):
    assert is_cached_block(message) is expected


def test_filter_for_bedrock_keeps_cached_blocks_and_matched_results():
    cached = {"role": "user", "content": [{"type": "text", "text": "Tool: {...}", "cache_control": {"type": "ephemeral"}}]}
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                                   "function": {"name": "f", "arguments": "{}"}}]}
    matched = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    orphan = {"role": "tool", "tool_call_id": "ghost", "content": "?"}
    embedded = {"role": "user", "content": "Tool: {...}"}
    plain = {"role": "user", "content": "Thanks"}
    with pytest.warns(ConversionWarning, match=r"dropped tool results with no matching call \(messages 3, 4\)"):
        kept = filter_for_bedrock([cached, call, matched, orphan, embedded, plain])
    assert kept == [cached, call, matched, plain]
