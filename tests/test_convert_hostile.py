"""Every converter, fed hostile values and malformed nested shapes, returns or raises a typed error.

Each case starts from a valid example of the converter's input format and replaces one field
(found by walking the example) with a hostile value: None, bools, NaN, huge ints, bytes, a
dict-valued ``type``, lists where objects go, 100,000-deep nesting, lone surrogates, ... The
``to_*`` converters get messages whose tool-call inputs and metadata hold such values. A call
must return, or raise an ``AgentMsgError`` that is also a ``ValueError`` or ``TypeError``, with
a message of bounded length (values shown in errors are truncated). The full table has several
thousand cases; the test runs a fixed random sample of it so a failure always reproduces.

Run as a script (``python tests/test_convert_hostile.py``) to try every case and print counts.
"""

import math
import random
import sys
import warnings
from collections import Counter

import pytest

import agentmsg
import agentmsg.convert
from agentmsg import (
    AgentMsgError, Message, ServerToolResultBlock, ServerToolUseBlock, TextBlock, ThinkingBlock, ToolUseBlock,
)

SAMPLE_SIZE = 2500
MAX_ERROR_LENGTH = 1000
DEPTH = 100_000


def _deep_list(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def _deep_dict(depth):
    value = {}
    for _ in range(depth):
        value = {"type": value}
    return value


class StrSubclass(str):
    pass


class Unprintable:
    def __repr__(self):
        raise RuntimeError("repr of a hostile object")

    __str__ = __repr__


def _circular():
    value = {"a": 1}
    value["self"] = value
    return value


HOSTILE_VALUES = [
    None, True, False, 0, -1, 2**64, 10**5000, math.nan, math.inf, -math.inf, 1.5,
    "", "x", "\ud800", "\x00", "x" * 1_000_000, StrSubclass("text"),
    b"bytes", bytearray(b"x"), [], [1, 2], {}, {"type": "text"}, {"type": {"nested": 1}},
    {"text": None}, {1: 2}, {None: None}, {("t",): 1}, set(), frozenset({1}), (), ("a",),
    _deep_list(DEPTH), _deep_dict(DEPTH), object(), Unprintable(), _circular(),
]

# -- valid examples of every input format -----------------------------------------------------

OPENAI = [
    {"role": "system", "content": "Be brief"},
    {"role": "developer", "content": "rules"},
    {"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "https://e.com/a.png"}},
        {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
    ], "name": "alice"},
    {"role": "assistant", "content": None, "reasoning_content": "look it up", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}},
    ]},
    {"role": "tool", "tool_call_id": "call_1", "content": "found"},
    {"role": "assistant", "content": None, "refusal": "I can't help with that."},
]
ANTHROPIC = [
    [{"type": "text", "text": "Be brief"}],
    [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "plan", "signature": "sig"},
            {"type": "redacted_thinking", "data": "abc"},
            {"type": "text", "text": "Searching"},
            {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "x"}},
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [
                {"type": "web_search_result", "url": "https://e.com", "title": "e", "encrypted_content": "E"}]},
            {"type": "mcp_tool_use", "id": "m1", "name": "ask", "server_name": "wiki", "input": {"q": "x"}},
            {"type": "mcp_tool_result", "tool_use_id": "m1", "is_error": False,
             "content": [{"type": "text", "text": "found"}]},
            {"type": "mcp_tool_listing", "mcp_server_name": "wiki", "tools": [{"name": "ask", "input_schema": {}}]},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": False, "content": [
                {"type": "text", "text": "found"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
            ]},
            {"type": "text", "text": "thanks"},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done"}]},
    ],
]
BEDROCK = [
    [{"text": "Be brief"}, {"cachePoint": {"type": "default"}}],
    [
        {"role": "user", "content": [{"text": "Hi"}, {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}]},
        {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "plan", "signature": "sig"}}},
            {"reasoningContent": {"redactedContent": b"secret"}},
            {"toolUse": {"toolUseId": "t1", "name": "search", "input": {"q": "x"}}},
        ]},
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"json": {"a": 1}}, {"text": "ok"}]}},
        ]},
        {"role": "assistant", "content": [{"text": "Done"}]},
    ],
]
DASHSCOPE = [
    {"role": "system", "content": "Be brief"},
    {"role": "user", "content": [{"text": "What is this?"}, {"image": "https://e.com/a.png"}]},
    {"role": "assistant", "content": "", "reasoning_content": "think", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}},
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": "found", "name": "search"},
]
FORGE = [
    {"role": "user", "content": "What is 15 + 27?"},
    {"role": "assistant", "content": '[I\'ll add]\n\n<tool>{"server_name": "local", "tool_name": "calc", '
                                     '"arguments": {"a": 15, "b": 27}}</tool>'},
    {"role": "tool", "content": "Tool: calc\nResult: 42"},
]
SUNA = [
    {"message_id": "m1", "thread_id": "th", "type": "user", "is_llm_message": True,
     "content": '{"role": "user", "content": "Hello"}', "metadata": {}, "created_at": "2025-01-01T00:00:00Z"},
    {"message_id": "m2", "type": "assistant", "is_llm_message": True, "metadata": "{}",
     "content": {"role": "assistant", "content": None, "tool_calls": [
         {"id": "c1", "type": "function", "function": {"name": "calc", "arguments": "{}"}}]}},
    {"message_id": "m3", "type": "tool", "is_llm_message": True, "content": {"role": "tool", "content": "42"},
     "metadata": {"tool_call_id": "c1"}},
    {"message_id": "m4", "type": "user", "is_llm_message": True, "content": "short",
     "metadata": {"compressed": True, "compressed_content": "long text"}},
    {"message_id": "m5", "type": "status", "is_llm_message": False, "content": {"status_type": "start"}},
]
AGENTSCOPE = [
    {"name": "user", "role": "USER", "content": [
        {"type": "text", "text": "Hi"},
        {"type": "image", "source": {"type": "url", "url": "https://e.com/a.png"}},
        {"type": "audio", "source": {"type": "base64", "media_type": "audio/wav", "data": "UklG"}},
    ], "metadata": {"k": 1}, "id": "m1", "timestamp": "2024-01-15T10:30:00Z"},
    {"name": "bot", "role": "ASSISTANT", "content": [
        {"type": "thinking", "thinking": "plan", "metadata": {"thoughtSignature": "sig"}},
        {"type": "tool_use", "id": "c1", "name": "calc", "input": {"a": 1}, "metadata": {"agentmsg_server_name": "mcp"}},
    ], "metadata": {"agentmsg": {"finished": True}}},
    {"name": "calc", "role": "TOOL", "content": [
        {"type": "tool_result", "id": "c1", "name": "calc", "output": [{"type": "text", "text": "2"}], "state": "ERROR"},
    ]},
]
ARCAELAS = [
    {"role": "user", "content": "Hello", "timestamp": "2025-10-12T10:30:45.123Z"},
    {"role": "tool", "content": "Data", "tool_id": "calc_123", "timestamp": "2025-10-12T10:30:45.123Z"},
]
WOLO = [
    {"id": "m1", "role": "user", "parts": [{"id": "t1", "type": "text", "text": "Hi"}], "timestamp": 1704067200.0},
    {"id": "m2", "role": "assistant", "parts": [
        {"id": "t2", "type": "text", "text": "Writing"},
        {"id": "p1", "type": "tool", "tool": "write", "input": {"path": "a.py"}, "output": "ok",
         "status": "completed", "start_time": 1.0, "end_time": 2.0},
        {"id": "p2", "type": "tool", "tool": "read", "input": {}, "status": "failed", "output": "no"},
    ], "timestamp": 1704067201.0, "finished": True, "finish_reason": "stop", "reasoning_content": "plan",
     "metadata": {"k": 1}},
]
RESPONSES = [
    {"role": "developer", "content": "rules"},
    {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": "https://e.com/a.png", "detail": "auto"},
        {"type": "input_file", "file_id": "file_1"},
    ]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "plan"}],
     "encrypted_content": "gAAA"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}},
    {"type": "file_search_call", "id": "fs_1", "queries": ["x"], "status": "completed", "results": [{"text": "x"}]},
    {"type": "code_interpreter_call", "id": "ci_1", "code": "1", "container_id": "c", "status": "completed",
     "outputs": [{"type": "logs", "logs": "1"}]},
    {"type": "mcp_list_tools", "id": "ml_1", "server_label": "wiki", "tools": [{"name": "ask", "input_schema": {}}]},
    {"type": "mcp_call", "id": "mcp_1", "name": "ask", "arguments": '{"q": "x"}', "server_label": "wiki",
     "output": "found"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "search", "arguments": '{"q":"x"}',
     "status": "completed"},
    {"type": "custom_tool_call", "call_id": "call_2", "name": "shell", "input": "ls"},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [
        {"type": "output_text", "text": "Hi", "annotations": []}, {"type": "refusal", "refusal": "no"}]},
    {"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_text", "text": "ok"}]},
    {"type": "custom_tool_call_output", "call_id": "call_2", "output": "a.py"},
    {"type": "mcp_approval_response", "approval_request_id": "apr_1", "approve": True},
    {"type": "compaction", "encrypted_content": "gAAA"},
]
RESPONSES_EVENTS = [
    {"type": "response.output_item.added", "output_index": 0, "item": {
        "type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}},
    {"type": "response.content_part.added", "output_index": 0, "content_index": 0,
     "part": {"type": "output_text", "text": "", "annotations": []}},
    {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "Hi"},
    {"type": "response.output_item.added", "output_index": 1, "item": {
        "type": "function_call", "call_id": "c1", "name": "calc", "arguments": ""}},
    {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": '{"a": 1}'},
    {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": []}},
]
GEMINI = [
    {"parts": [{"text": "Be brief"}]},
    [
        {"role": "user", "parts": [{"text": "What is this?"},
                                   {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
                                   {"file_data": {"mime_type": "video/mp4", "file_uri": "https://e.com/a.mp4"}}]},
        {"role": "model", "parts": [{"text": "plan", "thought": True, "thoughtSignature": "c2ln"},
                                    {"functionCall": {"id": "c1", "name": "calc", "args": {"a": 1}},
                                     "thoughtSignature": "c2ln"}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "calc", "response": {"output": "2"}}},
                                   {"functionResponse": {"name": "calc", "response": {"temp": 20}}}]},
    ],
]
MCP_RESULT = {
    "content": [
        {"type": "text", "text": "Sunny"},
        {"type": "image", "data": "iVBO", "mimeType": "image/png"},
        {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///a.md", "mimeType": "text/markdown", "text": "# A"}},
        {"type": "resource", "resource": {"uri": "file:///b.pdf", "mimeType": "application/pdf", "blob": "JVBE"}},
        {"type": "resource_link", "uri": "https://e.com/r", "name": "r", "description": "radar"},
    ],
    "structuredContent": {"sky": "clear"},
    "isError": False,
    "_meta": {"k": 1},
}
GEMINI_CHUNKS = [
    {"candidates": [{"content": {"role": "model", "parts": [{"text": "It is ", "thought": True}]}}]},
    {"candidates": [{"content": {"role": "model", "parts": [{"text": "42."}, {"functionCall": {"name": "f", "args": {}}}]},
                     "finishReason": "STOP"}], "usageMetadata": {"totalTokenCount": 3}},
]
# LangChain messages as data: built with model_construct, which skips LangChain's validation,
# so that every hostile value reaches from_langchain.
LANGCHAIN = [
    {"kind": "system", "content": "Be brief", "id": "s1"},
    {"kind": "human", "name": "ann", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image", "url": "https://e.com/a.png"},
        {"type": "image", "base64": "iVBO", "mime_type": "image/png"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
    ]},
    {"kind": "ai", "content": [{"type": "reasoning", "reasoning": "plan", "extras": {"signature": "sig"}}],
     "tool_calls": [{"id": "c1", "name": "calc", "args": {"a": 1}, "type": "tool_call"}],
     "additional_kwargs": {"reasoning_content": "r", "agentmsg": {
         "timestamp": "2024-01-15T10:30:00Z", "metadata": {"k": 1}, "calls": [{"server_name": "mcp", "metadata": {}}]}},
     "usage_metadata": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}},
    {"kind": "tool", "content": "42", "tool_call_id": "c1", "status": "error", "artifact": {"raw": 1}},
    {"kind": "function", "content": "x", "name": "calc"},
    {"kind": "chat", "content": "rules", "role": "developer"},
]


def _langchain_messages(data):
    from langchain_core import messages as lc

    kinds = {"system": lc.SystemMessage, "human": lc.HumanMessage, "ai": lc.AIMessage,
             "tool": lc.ToolMessage, "function": lc.FunctionMessage, "chat": lc.ChatMessage}
    if not isinstance(data, list):
        return data
    return [kinds[item["kind"]].model_construct(**{k: v for k, v in item.items() if k != "kind"})
            if isinstance(item, dict) and isinstance(item.get("kind"), str) and item["kind"] in kinds else item
            for item in data]


def _pair(value):
    """``(system, messages)`` from a mutated example; a replaced root goes in both places."""
    return value if isinstance(value, list) and len(value) == 2 else (value, value)


def _reader_cases():
    """(name, call, example): ``call(example)`` runs the converter on a (mutated) example."""
    return [
        ("from_openai", lambda d: agentmsg.from_openai(d, on_orphan="keep"), OPENAI),
        ("from_anthropic", lambda d: agentmsg.from_anthropic(*_pair(d), on_orphan="keep"), ANTHROPIC),
        ("from_bedrock", lambda d: agentmsg.from_bedrock(*_pair(d), on_orphan="keep"), BEDROCK),
        ("from_dashscope", lambda d: agentmsg.from_dashscope(d, on_orphan="keep"), DASHSCOPE),
        ("from_forge", lambda d: agentmsg.from_forge(d, on_orphan="keep"), FORGE),
        ("from_db_rows", lambda d: agentmsg.from_db_rows(d, on_orphan="keep"), SUNA),
        ("from_agentscope", lambda d: agentmsg.from_agentscope(d, on_orphan="keep"), AGENTSCOPE),
        ("from_arcaelas", lambda d: agentmsg.from_arcaelas(d), ARCAELAS),
        ("from_wolo", lambda d: agentmsg.from_wolo(d), WOLO),
        ("from_langchain", lambda d: agentmsg.from_langchain(_langchain_messages(d)), LANGCHAIN),
        ("from_responses", lambda d: agentmsg.from_responses(d, on_orphan="keep"), RESPONSES),
        ("from_responses_stream", lambda d: agentmsg.from_responses_stream(d, on_orphan="keep"), RESPONSES_EVENTS),
        ("from_gemini", lambda d: agentmsg.from_gemini(_pair(d)[1], _pair(d)[0], on_orphan="keep"), GEMINI),
        ("from_gemini_stream", lambda d: agentmsg.from_gemini_stream(d, on_orphan="keep"), GEMINI_CHUNKS),
        ("from_mcp_result", lambda d: agentmsg.from_mcp_result(d, tool_id="c1"), MCP_RESULT),
        ("to_llm_messages", lambda d: agentmsg.to_llm_messages(d), WOLO),
        ("filter_for_bedrock", lambda d: agentmsg.filter_for_bedrock(d), OPENAI),
        ("is_cached_block", lambda d: agentmsg.is_cached_block(d), OPENAI[2]),
    ]


def _paths(value, prefix=()):
    """Every place in a JSON-like value that a hostile value can replace, root included."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


def _replaced(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
    else:
        copy = list(value)
    copy[head] = _replaced(value[head], rest, new)
    return copy


def _shape_changes(value):
    """The malformed shapes a field can take besides the hostile values: lists where objects go,
    objects where lists go, and the field's own value nested 100,000 deep."""
    if isinstance(value, dict):
        yield list(value.items())
        yield [value]
    if isinstance(value, list):
        yield dict(enumerate(value))
        yield {"0": value}
    yield [value] * 3


MESSAGE_HOSTILE = [
    {"x": math.nan}, {"x": math.inf}, {"x": 10**5000}, {"x": 2**64}, {"x": b"bytes"}, {"x": {1, 2}},
    {"x": object()}, {1: "int key"}, {(1,): "tuple key"}, _circular(), {"x": _deep_list(DEPTH)},
    {"x": _deep_dict(DEPTH)}, {"x": Unprintable()}, {"\ud800": "\udfff"},
]


def _message_histories(hostile):
    """Histories that hold ``hostile`` (a dict) where messages accept any dict: a tool call's
    input and metadata, a message's metadata, and converter namespaces in it."""
    def call(**kw):
        return Message.assistant("Calling", tool_calls=[ToolUseBlock("c1", "calc", **kw)])

    result = Message.tool("42", tool_id="c1", name="calc")
    builders = [
        lambda: [call(input=hostile), result],
        lambda: [call(input={}, metadata=hostile), result],
        lambda: [call(input={}, metadata={"raw_arguments": hostile}), result],
        lambda: [Message.user("Hi", metadata=hostile)],
        lambda: [Message.user("Hi", metadata={key: hostile})
                 for key in ("wolo", "suna_row", "openai", "agentmsg", "langchain", "responses", "gemini")],
        lambda: [Message.assistant("Hi", metadata={"gemini": {"signatures": [hostile]}})],
        lambda: [Message.user("Hi", metadata={"responses": {"items": hostile}})],
        lambda: [Message.user("Hi", metadata={"responses": {"items": [hostile]}})],
        lambda: [Message.assistant("Hi", metadata={"anthropic": {"redacted_thinking": [hostile]},
                                                   "bedrock": {"redacted_reasoning": [hostile]}})],
        lambda: [Message.assistant("Hi", metadata={"wolo": {"text_part_ids": hostile, "tools": hostile}})],
        lambda: [Message("assistant", [ThinkingBlock("only thinking")])],
        lambda: [Message("assistant", [ServerToolUseBlock("s1", "web_search", hostile, provider=provider),
                                       ServerToolResultBlock("s1", hostile, provider=provider)])
                 for provider in ("", "anthropic", "openai")],
        lambda: [Message("assistant", [ServerToolUseBlock("s1", "ask", {}, "wiki", provider, hostile),
                                       ServerToolResultBlock("s1", None, provider=provider, metadata=hostile)])
                 for provider in ("", "anthropic", "openai")],
    ]
    for build in builders:
        try:
            yield build()
        except AgentMsgError:
            pass  # refused when the message is built: the boundary did its job


def _writer_cases():
    writers = [
        ("to_openai", agentmsg.to_openai), ("to_anthropic", agentmsg.to_anthropic),
        ("to_bedrock", agentmsg.to_bedrock), ("to_dashscope", agentmsg.to_dashscope),
        ("to_forge", agentmsg.to_forge), ("to_db_rows", agentmsg.to_db_rows),
        ("to_agentscope", agentmsg.to_agentscope), ("to_arcaelas", agentmsg.to_arcaelas),
        ("to_wolo", agentmsg.to_wolo), ("to_llm_messages", agentmsg.to_llm_messages),
        ("to_langchain", agentmsg.to_langchain), ("to_responses", agentmsg.to_responses),
        ("to_gemini", agentmsg.to_gemini),
        ("format_conversation_for_cache", agentmsg.format_conversation_for_cache),
        ("format_multi_agent", agentmsg.format_multi_agent),
    ]
    options = {
        "to_anthropic": ["cache"], "to_bedrock": ["cache"], "to_db_rows": ["thread_id"],
        "format_multi_agent": ["self_name"], "to_llm_messages": ["system_prompt", "agent_display_name"],
    }
    chat = [Message.system("Be brief"), Message.user("Hi")]
    cases = []
    for name, function in writers:
        for value in HOSTILE_VALUES:
            cases.append((name, "messages", function, (value,), {}))
            cases.append((name, "messages[1]", function, ([chat[0], value],), {}))
            for option in options.get(name, ()):
                cases.append((name, option, function, (chat,), {option: value}))
        for hostile in MESSAGE_HOSTILE:
            for history in _message_histories(hostile):
                cases.append((name, "message fields", function, (history,), {}))
    return cases


def all_cases():
    """Every hostile call: (converter, what was replaced, function, args, kwargs)."""
    cases = []
    for name, call, example in _reader_cases():
        for path in _paths(example):
            original = example
            for key in path:
                original = original[key]
            for value in HOSTILE_VALUES + list(_shape_changes(original)):
                cases.append((name, path, call, (_replaced(example, path, value),), {}))
    return cases + _writer_cases()


def outcome(function, args, kwargs):
    """``"returned"``, ``"typed"`` for a well-formed error, else a description of what went wrong."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            function(*args, **kwargs)
    except AgentMsgError as error:
        if not isinstance(error, (ValueError, TypeError)):
            return f"AgentMsgError that is neither ValueError nor TypeError: {type(error).__name__}"
        text = str(error)
        if len(text) > MAX_ERROR_LENGTH:
            return f"error message of {len(text)} characters: {text[:200]}"
        return "typed"
    except RecursionError:
        return "RecursionError"
    except Exception as error:  # noqa: BLE001 - the point is to catch what escapes
        return f"bare {type(error).__name__}: {str(error)[:200]}"
    return "returned"


CASES = all_cases()
SAMPLE = random.Random(20261123).sample(range(len(CASES)), min(SAMPLE_SIZE, len(CASES)))


def test_the_table_covers_every_converter():
    converters = {name for name in agentmsg.convert.__all__ if name.startswith(("to_", "from_", "format_", "filter_", "is_"))}
    assert converters <= {case[0] for case in CASES}
    assert len(CASES) > 5000


@pytest.mark.parametrize("start", range(0, SAMPLE_SIZE, 250))
def test_hostile_input_returns_or_raises_a_typed_bounded_error(start):
    failures = []
    for index in SAMPLE[start:start + 250]:
        name, path, function, args, kwargs = CASES[index]
        result = outcome(function, args, kwargs)
        if result not in ("returned", "typed"):
            failures.append(f"{name} {path!r}: {result}")
    assert not failures, "\n".join(failures[:20])


if __name__ == "__main__":
    sys.setrecursionlimit(1000)
    counts = Counter()
    by_converter = Counter()
    shown = 0
    for name, path, function, args, kwargs in CASES:
        result = outcome(function, args, kwargs)
        kind = result if result in ("returned", "typed", "RecursionError") else result.split(":")[0]
        counts[kind] += 1
        if result not in ("returned", "typed"):
            by_converter[name] += 1
            if shown < int(sys.argv[1] if len(sys.argv) > 1 else 0):
                print(name, path, result[:160])
                shown += 1
    print(f"{len(CASES)} cases")
    for kind, count in counts.most_common():
        print(f"{count:6d} {kind}")
    print(dict(by_converter))
