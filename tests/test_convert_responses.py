"""OpenAI Responses API items, both ways, checked against the ``openai`` SDK's own types."""

import copy
import warnings
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

import agentmsg
from agentmsg.model.blocks import document_name
from agentmsg import (
    Base64Source,
    DocumentBlock,
    ConversionError,
    ConversionWarning,
    ImageBlock,
    Message,
    MessageTypeError,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    from_responses,
    to_responses,
)
from convert_checks import _consume
from convert_strategies import histories, nonempty_text, text, tool_names
from strategies import json_objects


@lru_cache(maxsize=None)
def _input_item():
    from openai.types.responses import ResponseInputItemParam

    return TypeAdapter(ResponseInputItemParam)


@lru_cache(maxsize=None)
def _output_item():
    from openai.types.responses import ResponseOutputItem

    return TypeAdapter(ResponseOutputItem)


def check_responses(items):
    """Every item validates as the SDK's ``ResponseInputItemParam`` (what ``input=`` takes)."""
    for item in items:
        _consume(_input_item().validate_python(item))


def recorded(function, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, ConversionWarning)]


def quiet(function, *args, **kwargs):
    return recorded(function, *args, **kwargs)[0]


# A response's output with every kind of item, as the API returns them (validated below as the
# SDK's ResponseOutputItem), and a client's next input.
OUTPUT = [
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Search first."}],
     "encrypted_content": "gAAAAB-opaque", "status": "completed"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed",
     "action": {"type": "search", "query": "oracle founder"}},
    {"type": "file_search_call", "id": "fs_1", "queries": ["founder"], "status": "completed"},
    {"type": "code_interpreter_call", "id": "ci_1", "code": "print(1)", "container_id": "c_1",
     "outputs": [{"type": "logs", "logs": "1"}], "status": "completed"},
    {"type": "mcp_list_tools", "id": "ml_1", "server_label": "wiki",
     "tools": [{"name": "ask", "input_schema": {"type": "object"}}]},
    {"type": "mcp_call", "id": "mcp_1", "name": "ask", "arguments": '{"q":"Oracle"}', "server_label": "wiki",
     "output": "Larry Ellison", "status": "completed"},
    {"type": "mcp_approval_request", "id": "apr_1", "name": "ask", "arguments": "{}", "server_label": "wiki"},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [
        {"type": "output_text", "text": "Larry Ellison.", "annotations": [
            {"type": "url_citation", "start_index": 0, "end_index": 5, "title": "t", "url": "https://e.com"}]}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup", "arguments": '{"a":1}',
     "status": "completed"},
    {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_2", "name": "shell", "input": "ls -la"},
]
NEXT_INPUT = [
    {"type": "function_call_output", "call_id": "call_1", "output": "42"},
    {"type": "custom_tool_call_output", "call_id": "call_2", "output": "a.py"},
    {"type": "mcp_approval_response", "approval_request_id": "apr_1", "approve": True},
    {"role": "user", "content": "Thanks"},
]
HISTORY = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": [
    {"type": "input_text", "text": "Who founded Oracle?"},
    {"type": "input_image", "image_url": "data:image/png;base64,iVBO", "detail": "low"}]}] + OUTPUT + NEXT_INPUT


def test_the_examples_are_valid_sdk_items():
    check_responses(HISTORY)
    for item in OUTPUT:
        _output_item().validate_python(item)


def test_a_history_reads_into_messages_and_writes_back_item_for_item():
    messages = from_responses(HISTORY)
    assert [m.role.value for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assistant = messages[2]
    openai = dict(provider="openai")
    assert assistant.content == (
        ThinkingBlock("Search first."),
        # the tools OpenAI ran: a server call, and its result when the item holds one
        ServerToolUseBlock("ws_1", "web_search", {"action": {"type": "search", "query": "oracle founder"}},
                           metadata={"status": "completed"}, **openai),
        ServerToolUseBlock("fs_1", "file_search", {"queries": ["founder"]},
                           metadata={"status": "completed"}, **openai),
        ServerToolUseBlock("ci_1", "code_interpreter", {"code": "print(1)", "container_id": "c_1"},
                           metadata={"status": "completed"}, **openai),
        ServerToolResultBlock("ci_1", {"outputs": [{"type": "logs", "logs": "1"}]}, **openai),
        ServerToolUseBlock("ml_1", "mcp_list_tools", {}, "wiki", metadata={"type": "mcp_list_tools"}, **openai),
        ServerToolResultBlock("ml_1", {"tools": [{"name": "ask", "input_schema": {"type": "object"}}]}, **openai),
        ServerToolUseBlock("mcp_1", "ask", {"q": "Oracle"}, "wiki", metadata={
            "status": "completed", "raw_arguments": '{"q":"Oracle"}'}, **openai),
        ServerToolResultBlock("mcp_1", {"output": "Larry Ellison"}, **openai),
        TextBlock("Larry Ellison."),
        ToolUseBlock("call_1", "lookup", {"a": 1}, metadata={"raw_arguments": '{"a":1}'}),
        ToolUseBlock("call_2", "shell", {"input": "ls -la"}),
    )
    assert [(m.tool_id, m.name, m.text) for m in messages[3:5]] == [("call_1", "lookup", "42"), ("call_2", "shell", "a.py")]
    assert messages[1].content[1] == ImageBlock(Base64Source("image/png", "iVBO"))
    # what has no block is kept as read (the approval response with the message before it)
    kept = [item["type"] for item in assistant.metadata["responses"]["items"]]
    assert kept == [item["type"] for item in OUTPUT]
    assert [i["type"] for i in messages[4].metadata["responses"]["items"]] == [
        "custom_tool_call_output", "mcp_approval_response"]
    assert to_responses(messages) == HISTORY


def test_messages_an_earlier_release_read_go_back_item_for_item():
    """Stored histories and pickles hold messages as the last release read them: an mcp_call as
    a tool call and a tool message, built-in calls kept in metadata only."""
    old = [
        Message("system", "Be brief.", metadata={"responses": {"items": HISTORY[:1]}}),
        Message("user", [TextBlock("Who founded Oracle?"), ImageBlock(Base64Source("image/png", "iVBO"))],
                metadata={"responses": {"items": HISTORY[1:2]}}),
        Message("assistant", [
            ThinkingBlock("Search first."),
            ToolUseBlock("mcp_1", "ask", {"q": "Oracle"}, "wiki", {"raw_arguments": '{"q":"Oracle"}'}),
            TextBlock("Larry Ellison."),
            ToolUseBlock("call_1", "lookup", {"a": 1}, metadata={"raw_arguments": '{"a":1}'}),
            ToolUseBlock("call_2", "shell", {"input": "ls -la"})], metadata={"responses": {"items": OUTPUT}}),
        Message.tool("Larry Ellison", tool_id="mcp_1", name="ask"),
        Message.tool("42", tool_id="call_1", name="lookup"),
        Message.tool("a.py", tool_id="call_2", name="shell", metadata={"responses": {"items": NEXT_INPUT[1:3]}}),
        Message.user("Thanks"),
    ]
    assert to_responses(old) == HISTORY
    # changed, the message is written from its blocks, keeping the built-in calls it has no block for
    edited = old[2].replace(content=[ThinkingBlock("Search first."), TextBlock("Edited.")])
    out = quiet(to_responses, [old[1], edited])
    assert [item.get("type") for item in out[1:]] == [
        "web_search_call", "file_search_call", "code_interpreter_call", "mcp_list_tools", "mcp_approval_request",
        None]


def test_sdk_objects_read_as_their_dicts():
    objects = [_output_item().validate_python(item) for item in OUTPUT]
    from_objects = from_responses(objects + NEXT_INPUT)
    from_dicts = from_responses(OUTPUT + NEXT_INPUT)
    assert [m.content for m in from_objects] == [m.content for m in from_dicts]
    check_responses(to_responses(from_objects))


def test_a_whole_response_stands_for_its_output():
    from openai.types.responses import Response

    usage = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0},
             "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}}
    response = Response.model_validate({
        "id": "resp_1", "created_at": 1, "model": "gpt-5", "object": "response", "output": OUTPUT[-3:-2],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": usage, "status": "completed"})
    [message] = from_responses(response)
    assert message.text == "Larry Ellison."
    assert message.metadata["responses"]["response"] == {
        "id": "resp_1", "model": "gpt-5", "status": "completed", "usage": usage}
    assert to_responses([message]) == OUTPUT[-3:-2]


def test_reasoning_stays_reasoning_across_formats():
    messages = from_responses([{"role": "user", "content": "q"}, OUTPUT[0], OUTPUT[-3]])
    assert messages[1].thinking == "Search first." and messages[1].text == "Larry Ellison."
    out, said = recorded(agentmsg.to_anthropic, messages)
    assert out[1][1]["content"] == [{"type": "text", "text": "Larry Ellison."}]  # never as visible text
    assert said == ["to_anthropic cannot carry thinking without a signature (message 1); they were left out"]
    out, said = recorded(agentmsg.to_openai, messages)
    assert out[1] == {"role": "assistant", "content": "Larry Ellison."}
    assert said == ["to_openai cannot carry thinking blocks (message 1); they were left out"]
    # another provider's thinking cannot become a Responses reasoning item (they need OpenAI's ids)
    out, said = recorded(to_responses, [Message.user("q"), Message.assistant("42", thinking="5 + 37")])
    assert out == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "42"}]
    assert said == ["to_responses cannot carry thinking that was not read from a Responses reasoning item "
                    "(message 1); they were left out"]


def test_encrypted_reasoning_alone_is_an_empty_thinking_block_kept_with_its_item():
    item = {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "opaque"}
    [message] = from_responses([item])
    assert message.content == (ThinkingBlock(""),)
    assert to_responses([message]) == [item]


def test_a_changed_message_is_written_plainly_keeping_its_blockless_items():
    [message] = from_responses(OUTPUT[1:2] + OUTPUT[-3:-2])
    edited = message.replace(content=[TextBlock("Edited.")])
    assert to_responses([edited]) == [OUTPUT[1], {"role": "assistant", "content": "Edited."}]


def test_mcp_calls_go_back_with_their_result_and_errors():
    # a tool call with a server_name and its tool message (what an earlier release read) is an mcp_call
    call = ToolUseBlock("mcp_9", "ask", {"q": "x"}, server_name="wiki")
    chat = [Message.user("q"), Message.assistant(tool_calls=[call]),
            Message.tool("server down", tool_id="mcp_9", is_error=True)]
    out, said = recorded(to_responses, chat)
    assert said == []
    error = {"type": "mcp_tool_execution_error", "content": "server down"}
    assert out[1] == {"type": "mcp_call", "id": "mcp_9", "name": "ask", "arguments": '{"q": "x"}',
                      "server_label": "wiki", "error": error}
    check_responses(out)
    back = from_responses(out)  # read as the server call it is, its error an error result
    assert back[1].content == (ServerToolUseBlock("mcp_9", "ask", {"q": "x"}, "wiki", "openai"),
                               ServerToolResultBlock("mcp_9", {"error": error}, True, "openai"))
    assert to_responses(back) == out


def test_losses_name_what_and_where():
    chat = [
        Message.user("q", name="ann"),
        Message.assistant("a", reasoning_content="r"),
        Message.assistant(tool_calls=[ToolUseBlock("c1", "f", {}, metadata={"k": 1})]),
        Message.tool("x", tool_id="c1", is_error=True),
    ]
    _, said = recorded(to_responses, chat)
    assert said == [
        "to_responses cannot carry name on messages (message 0); they were left out",
        "to_responses cannot carry reasoning_content (message 1); they were left out",
        "to_responses cannot carry a tool call's metadata (message 2); they were left out",
        "to_responses cannot carry the is_error flag of tool results (message 3); they were left out",
    ]


def test_bad_input_names_the_item_and_field():
    with pytest.raises(ConversionError, match=r"items\[0\]\.type: unknown item type 'nope'"):
        from_responses([{"type": "nope"}])
    with pytest.raises(MessageTypeError, match=r"items\[0\]\.content\[0\]\.type must be a str, not dict"):
        from_responses([{"role": "user", "content": [{"type": {"x": 1}}]}])
    with pytest.raises(ConversionError, match=r"items\[0\]: missing field 'call_id'"):
        from_responses([{"type": "function_call_output", "output": "x"}])
    with pytest.raises(agentmsg.ToolPairError, match="tool result 'ghost' has no earlier call"):
        from_responses([{"role": "user", "content": "q"},
                        {"type": "function_call_output", "call_id": "ghost", "output": "x"}])
    assert from_responses("Hi")[0].text == "Hi"


# -- property tests -------------------------------------------------------------------------------

def carried(message):
    """What the Responses format carries of a message, as from_responses gives it back."""
    role = message.role.value
    if role == "tool":
        output = tuple(_named(b) for b in message.content[0].output if isinstance(b, (TextBlock, ImageBlock, DocumentBlock)))
        return (role, message.tool_id, output)
    blocks = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            blocks.append(block)
        elif isinstance(block, ToolUseBlock) and role == "assistant":
            blocks.append(("call", block.id, block.name, block.input, block.server_name))
        elif role == "user" and isinstance(block, (ImageBlock, DocumentBlock)):
            blocks.append(_named(block))
    return (role, tuple(blocks)) if blocks else None


def _named(block):
    """A document as the Responses API gives it back: a base64 one always has a file name."""
    if isinstance(block, DocumentBlock) and block.name is None and isinstance(block.source, Base64Source):
        return DocumentBlock(block.source, document_name(block), block.metadata)
    return block


def merged(views):
    """Consecutive assistant messages read back as one (Responses items are flat)."""
    out = []
    for view in views:
        if out and view[0] == "assistant" and out[-1][0] == "assistant":
            out[-1] = ("assistant", out[-1][1] + view[1])
        else:
            out.append(view)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories)
def test_round_trip_keeps_what_responses_carries(messages):
    out = quiet(to_responses, messages)
    check_responses(out)
    back = quiet(from_responses, out, on_orphan="keep")
    expected = merged([c for c in map(carried, messages) if c is not None])
    assert [carried(m) for m in back] == expected


ids = tool_names  # valid Unicode: pairing refuses ids with lone surrogates
mcp_calls = st.builds(ServerToolUseBlock, ids, tool_names, json_objects, nonempty_text, st.just("openai"))


@st.composite
def mcp_histories(draw):
    """Turns of function calls, each answered right after its call, and MCP calls OpenAI ran,
    each with its output or error in the same message."""
    history = []
    seen = set()
    for turn in range(draw(st.integers(1, 3))):
        history.append(Message.user(draw(nonempty_text)))
        calls = draw(st.lists(st.one_of(mcp_calls, st.builds(ToolUseBlock, ids, tool_names, json_objects)),
                              min_size=1, max_size=3, unique_by=lambda c: c.id))
        calls = [c for c in calls if c.id not in seen]
        seen.update(c.id for c in calls)
        if not calls:
            continue
        blocks = [TextBlock(draw(nonempty_text))] if draw(st.booleans()) else []
        for call in calls:
            blocks.append(call)
            if type(call) is ServerToolUseBlock and draw(st.booleans()):
                error = draw(st.booleans())
                content = {"error": {"type": "mcp_tool_execution_error", "content": draw(text)}} if error else {
                    "output": draw(text)}
                blocks.append(ServerToolResultBlock(call.id, content, error, "openai"))
        history.append(Message("assistant", blocks))
        for call in calls:
            if type(call) is ToolUseBlock:
                history.append(Message.tool(draw(nonempty_text), tool_id=call.id, name=call.name))
    return history


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mcp_histories())
def test_function_and_mcp_turns_round_trip_exactly(messages):
    out, said = recorded(to_responses, messages)
    assert said == []
    check_responses(out)
    back = from_responses(out)
    assert [(m.role, m.content, m.tool_id, m.name) for m in back] == [
        (m.role, m.content, m.tool_id, m.name) for m in messages]
    assert to_responses(back) == out


item_pool = st.sampled_from([[item] for item in OUTPUT] + [NEXT_INPUT[2:]] + [HISTORY[:2]])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(item_pool, max_size=8))
def test_any_sequence_of_items_is_written_back_exactly(chunks):
    items = [copy.deepcopy(item) for chunk in chunks for item in chunk]
    ids = set()
    unique = []
    for item in items:  # one item per call id (a history never repeats one)
        key = item.get("call_id") or item.get("id")
        if key not in ids or key is None:
            unique.append(item)
            ids.add(key)
    back = from_responses(unique, on_orphan="keep")
    assert to_responses(back) == unique


# -- streams ---------------------------------------------------------------------------------------

REASONING = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Add them."}],
             "encrypted_content": "gAAA"}
ANSWER = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
          "content": [{"type": "output_text", "text": "It is 42.", "annotations": [], "logprobs": []}]}
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "calc", "arguments": '{"a": 1}',
        "status": "completed"}
USAGE = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0},
         "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}}


def response(output, status="completed"):
    return {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5", "output": output,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "status": status, "usage": USAGE}


def stream_events():
    """The events the API sends for a reasoning summary, a text answer and a function call."""
    n = iter(range(1000))
    events = [{"type": "response.created", "response": response([], "in_progress")}]
    events.append({"type": "response.output_item.added", "output_index": 0,
                   "item": {**REASONING, "summary": [], "status": "in_progress"}})
    events.append({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0,
                   "summary_index": 0, "part": {"type": "summary_text", "text": ""}})
    for piece in ("Add ", "them."):
        events.append({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
                       "summary_index": 0, "delta": piece})
    events.append({"type": "response.reasoning_summary_text.done", "item_id": "rs_1", "output_index": 0,
                   "summary_index": 0, "text": "Add them."})
    events.append({"type": "response.output_item.done", "output_index": 0, "item": REASONING})
    events.append({"type": "response.output_item.added", "output_index": 1,
                   "item": {**ANSWER, "status": "in_progress", "content": []}})
    events.append({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 1, "content_index": 0,
                   "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}})
    for piece in ("It is ", "42."):
        events.append({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
                       "content_index": 0, "delta": piece, "logprobs": []})
    events.append({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 1, "content_index": 0,
                   "text": "It is 42.", "logprobs": []})
    events.append({"type": "response.output_item.done", "output_index": 1, "item": ANSWER})
    events.append({"type": "response.output_item.added", "output_index": 2,
                   "item": {**CALL, "arguments": "", "status": "in_progress"}})
    for piece in ('{"a"', ": 1}"):
        events.append({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 2,
                       "delta": piece})
    events.append({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 2,
                   "name": "calc", "arguments": '{"a": 1}'})
    events.append({"type": "response.output_item.done", "output_index": 2, "item": CALL})
    events.append({"type": "response.completed", "response": response([REASONING, ANSWER, CALL])})
    return [{**event, "sequence_number": next(n)} for event in events]


@lru_cache(maxsize=None)
def _stream_event():
    from openai.types.responses import ResponseStreamEvent

    return TypeAdapter(ResponseStreamEvent)


def contents(messages):
    return [(m.role, m.content) for m in messages]


def test_a_stream_gives_what_the_whole_response_gives():
    events = stream_events()
    objects = [_stream_event().validate_python(event) for event in events]  # the SDK's own event types
    whole = from_responses(response([REASONING, ANSWER, CALL]))
    for given_events in (events, objects):
        streamed = agentmsg.from_responses_stream(given_events)
        assert contents(streamed) == contents(whole)
        assert streamed[0].metadata["responses"] == whole[0].metadata["responses"]
    assert whole[0].content == (ThinkingBlock("Add them."), TextBlock("It is 42."), ToolUseBlock("call_1", "calc", {"a": 1}))


def test_a_stream_cut_off_is_read_from_its_items_and_deltas():
    events = stream_events()
    whole = from_responses(response([REASONING, ANSWER, CALL]))
    without_completed = agentmsg.from_responses_stream(events[:-1])
    assert to_responses(without_completed) == [REASONING, ANSWER, CALL]
    # only the added items and the deltas: the text and arguments come from the deltas
    deltas_only = [e for e in events if not e["type"].endswith((".done", "completed"))]
    assert contents(agentmsg.from_responses_stream(deltas_only)) == contents(whole)


def test_async_stream_and_errors():
    import asyncio

    async def stream():
        for event in stream_events():
            yield event

    assert contents(asyncio.run(agentmsg.afrom_responses_stream(stream()))) == contents(
        agentmsg.from_responses_stream(stream_events()))
    with pytest.raises(ConversionError, match=r"events\[1\]: the stream reported an error: 'overloaded'"):
        agentmsg.from_responses_stream(stream_events()[:1] + [{"type": "error", "message": "overloaded"}])
    with pytest.raises(ConversionError, match=r"events\[0\]: output item 3 was never added"):
        agentmsg.from_responses_stream([{"type": "response.output_text.delta", "output_index": 3,
                                         "content_index": 0, "delta": "x"}])
    with pytest.raises(MessageTypeError, match="events is an async iterable: await afrom_responses_stream"):
        agentmsg.from_responses_stream(stream())
