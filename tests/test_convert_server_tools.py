"""Tools the provider runs itself (web search, code execution, MCP connector calls...) as
ServerToolUseBlock / ServerToolResultBlock: Anthropic's blocks both ways, checked against the
``anthropic`` SDK's own types; every other format leaves them out with a ConversionWarning."""

import copy
import warnings
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

import agentmsg
from agentmsg import (
    ConversionError,
    ConversionWarning,
    Message,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    from_anthropic,
    to_anthropic,
)
from convert_checks import _consume
from convert_strategies import nonempty_text, tool_names
from strategies import json_objects, json_values


@lru_cache(maxsize=None)
def _adapter(beta):
    if beta:  # the MCP connector's blocks are in the beta API only
        from anthropic.types.beta import BetaMessageParam

        return TypeAdapter(BetaMessageParam)
    from anthropic.types import MessageParam

    return TypeAdapter(MessageParam)


def check_turns(turns, beta=False):
    for turn in turns:
        _consume(_adapter(beta).validate_python(turn))


def recorded(function, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, ConversionWarning)]


SEARCH = [
    {"type": "text", "text": "Let me look."},
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "oracle founder"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
        {"type": "web_search_result", "url": "https://e.com/o", "title": "Oracle", "encrypted_content": "EqgfCi",
         "page_age": "2 days"}]},
    {"type": "server_tool_use", "id": "srvtoolu_2", "name": "code_execution", "input": {"code": "print(1)"}},
    {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_2", "content": {
        "type": "code_execution_result", "stdout": "1\n", "stderr": "", "return_code": 0, "content": []}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_3", "content": {
        "type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
    {"type": "text", "text": "Larry Ellison."},
]
MCP = [
    {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "ask", "server_name": "wiki", "input": {"q": "Oracle"}},
    {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": False,
     "content": [{"type": "text", "text": "Larry Ellison"}]},
    {"type": "mcp_tool_use", "id": "mcptoolu_2", "name": "ask", "server_name": "wiki", "input": {}},
    {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_2", "is_error": True, "content": "server down"},
]
TURNS = [{"role": "user", "content": [{"type": "text", "text": "Who founded Oracle?"}]},
         {"role": "assistant", "content": SEARCH + MCP}]


def test_the_examples_are_valid_sdk_turns():
    check_turns([TURNS[0], {"role": "assistant", "content": SEARCH}])
    check_turns(TURNS, beta=True)


def test_anthropic_server_and_mcp_blocks_read_into_blocks_and_go_back_exactly():
    messages = from_anthropic(None, copy.deepcopy(TURNS))
    anthropic = dict(provider="anthropic")
    assert messages[1].content == (
        TextBlock("Let me look."),
        ServerToolUseBlock("srvtoolu_1", "web_search", {"query": "oracle founder"}, **anthropic),
        ServerToolResultBlock("srvtoolu_1", SEARCH[2]["content"], metadata={"type": "web_search_tool_result"},
                              **anthropic),
        ServerToolUseBlock("srvtoolu_2", "code_execution", {"code": "print(1)"}, **anthropic),
        ServerToolResultBlock("srvtoolu_2", SEARCH[4]["content"], metadata={"type": "code_execution_tool_result"},
                              **anthropic),
        ServerToolResultBlock("srvtoolu_3", SEARCH[5]["content"], metadata={"type": "web_search_tool_result"},
                              **anthropic),
        TextBlock("Larry Ellison."),
        ServerToolUseBlock("mcptoolu_1", "ask", {"q": "Oracle"}, "wiki", **anthropic),
        ServerToolResultBlock("mcptoolu_1", [{"type": "text", "text": "Larry Ellison"}],
                              metadata={"type": "mcp_tool_result"}, **anthropic),
        ServerToolUseBlock("mcptoolu_2", "ask", {}, "wiki", **anthropic),
        ServerToolResultBlock("mcptoolu_2", "server down", True, metadata={"type": "mcp_tool_result"}, **anthropic),
    )
    system, turns = to_anthropic(messages)
    assert (system, turns) == ([], TURNS)
    check_turns(turns, beta=True)


def test_sdk_response_objects_read_as_their_dicts():
    from anthropic.types.beta import BetaMessage

    response = BetaMessage.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": MCP,
        "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})
    [message] = from_anthropic(None, [response])
    assert message.content == from_anthropic(None, [{"role": "assistant", "content": MCP}])[0].content


def test_a_result_without_a_kept_type_takes_it_from_its_call_in_the_turn():
    chat = [Message.user("q"), Message("assistant", [
        ServerToolUseBlock("srvtoolu_9", "web_fetch", {"url": "https://e.com"}),
        ServerToolResultBlock("srvtoolu_9", {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"}),
        ServerToolUseBlock("mcptoolu_9", "ask", {"q": 1}, "wiki"),
        ServerToolResultBlock("mcptoolu_9", "ok"),
        ServerToolResultBlock("elsewhere", "?")])]
    (_, turns), said = recorded(to_anthropic, chat)
    assert [block["type"] for block in turns[1]["content"]] == [
        "server_tool_use", "web_fetch_tool_result", "mcp_tool_use", "mcp_tool_result"]
    assert turns[1]["content"][3] == {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_9", "content": "ok",
                                      "is_error": False}
    assert said == ["to_anthropic cannot carry server tool results of unknown type without their call "
                    "(message 1); they were left out"]
    check_turns(turns, beta=True)


def test_other_formats_leave_server_blocks_out_and_say_so():
    messages = from_anthropic(None, copy.deepcopy(TURNS))
    out, said = recorded(agentmsg.to_openai, messages)
    assert out[1] == {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                                                       {"type": "text", "text": "Larry Ellison."}]}
    assert said == [
        "to_openai cannot carry server_tool_use blocks in assistant messages (message 1); they were left out",
        "to_openai cannot carry server_tool_result blocks in assistant messages (message 1); they were left out"]
    for convert in (agentmsg.to_bedrock, agentmsg.to_gemini, agentmsg.to_dashscope):
        _, said = recorded(convert, messages)
        assert said == [f"{convert.__name__} cannot carry {kind} blocks (tools another provider ran) (message 1); "
                        "they were left out" for kind in ("server_tool_use", "server_tool_result")]
    # the Responses API takes back only the calls OpenAI ran (Anthropic's ids mean nothing to it)
    out, said = recorded(agentmsg.to_responses, messages)
    assert said == ["to_responses cannot carry server tool blocks run by anthropic (message 1); they were left out",
                    "to_responses cannot carry server tool results without their call (message 1); they were left out"]
    assert out == [{"role": "user", "content": "Who founded Oracle?"}, {"role": "assistant", "content": "Let me look."},
                   {"role": "assistant", "content": "Larry Ellison."}]
    # and Anthropic only Anthropic's
    openai_turn = agentmsg.from_responses([{"role": "user", "content": "q"}, {
        "type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}}])
    (_, turns), said = recorded(to_anthropic, openai_turn)
    assert turns == [{"role": "user", "content": [{"type": "text", "text": "q"}]}]
    assert said == ["to_anthropic cannot carry server tool blocks run by openai (message 1); they were left out",
                    "to_anthropic cannot carry messages with nothing else it can carry (message 1); they were left out"]


def test_langchain_and_agentscope_carry_server_blocks():
    messages = from_anthropic(None, copy.deepcopy(TURNS))
    lc = agentmsg.to_langchain(messages)
    assert lc[1].content[1] == {"type": "server_tool_call", "id": "srvtoolu_1", "name": "web_search",
                                "args": {"query": "oracle founder"}, "extras": {"provider": "anthropic"}}
    assert [m.content for m in agentmsg.from_langchain(lc)] == [m.content for m in messages]
    back = agentmsg.from_agentscope(agentmsg.to_agentscope(messages))
    assert [m.content for m in back] == [m.content for m in messages]


LISTING = {"type": "mcp_tool_listing", "mcp_server_name": "wiki", "tools": [
    {"name": "ask", "description": "Ask the wiki", "input_schema": {"type": "object", "properties": {"q": {}}}}]}
LISTED = [ServerToolUseBlock("mcp_tool_listing_0_14766b614326", "mcp_list_tools", {}, "wiki", "anthropic",
                             {"type": "mcp_tool_listing"}),
          ServerToolResultBlock("mcp_tool_listing_0_14766b614326", {"tools": LISTING["tools"]}, False, "anthropic",
                                {"type": "mcp_tool_listing"})]


def test_an_mcp_tool_listing_reads_as_the_responses_listing_does_and_goes_back_whole():
    turns = [TURNS[0], {"role": "assistant", "content": [LISTING] + MCP[:2]}]
    check_turns(turns, beta=True)
    messages = from_anthropic(None, copy.deepcopy(turns))
    assert messages[1].content[:2] == tuple(LISTED)
    # the same pair as the Responses API's mcp_list_tools item, but for its id and provider
    responses = agentmsg.from_responses([{"type": "mcp_list_tools", "id": "ml_1", "server_label": "wiki",
                                          "tools": LISTING["tools"]}])[0].content
    assert [(b.name, b.server_name) for b in responses[:1]] == [("mcp_list_tools", "wiki")]
    assert responses[1].content == {"tools": LISTING["tools"]}
    (system, out), said = recorded(to_anthropic, messages)
    assert (system, out, said) == ([], turns, [])
    assert agentmsg.check(messages, provider="anthropic") == []


def test_an_mcp_tool_listing_streams_and_counts():
    events = [
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "c",
                                              "content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": LISTING},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"}]
    assert agentmsg.from_anthropic_stream(events).content == tuple(LISTED)
    request = {"model": "claude-sonnet-4-5", "messages": [TURNS[0], {"role": "assistant", "content": [LISTING]}]}
    without = {"model": "claude-sonnet-4-5", "messages": [TURNS[0], {"role": "assistant", "content": "x"}]}
    counted, bare = agentmsg.count_request_tokens(request), agentmsg.count_request_tokens(without)
    assert counted.total > bare.total + 10 and not counted.exact
    assert any("mcp_tool_listing" in note for note in counted.notes)


def test_half_a_listing_is_left_out_and_said():
    (_, out), said = recorded(to_anthropic, [Message("user", "q"), Message("assistant", [LISTED[1], TextBlock("a")])])
    assert out[1]["content"] == [{"type": "text", "text": "a"}]
    assert said == ["to_anthropic cannot carry an MCP tool listing without its server (message 1); "
                    "they were left out"]
    (_, out), said = recorded(to_anthropic, [Message("user", "q"), Message("assistant", [LISTED[0], TextBlock("a")])])
    assert out[1]["content"] == [{"type": "text", "text": "a"}]
    assert len(said) == 1 and "an MCP tool listing without its tools" in said[0]


def test_bad_server_blocks_name_the_field():
    with pytest.raises(ConversionError, match=r"messages\[1\]\.content\[0\]: missing field 'tools'"):
        from_anthropic(None, [TURNS[0], {"role": "assistant", "content": [
            {"type": "mcp_tool_listing", "mcp_server_name": "wiki"}]}])
    with pytest.raises(agentmsg.MessageTypeError, match=r"messages\[1\]\.content\[0\]\.tools must be a list"):
        from_anthropic(None, [TURNS[0], {"role": "assistant", "content": [
            {"type": "mcp_tool_listing", "mcp_server_name": "wiki", "tools": "ask"}]}])
    with pytest.raises(ConversionError, match=r"messages\[0\]\.content\[0\]: missing field 'server_name'"):
        from_anthropic(None, [{"role": "assistant", "content": [
            {"type": "mcp_tool_use", "id": "m1", "name": "ask", "input": {}}]}])
    with pytest.raises(agentmsg.MessageTypeError, match=r"messages\[0\]\.content\[0\]\.is_error must be a bool"):
        from_anthropic(None, [{"role": "assistant", "content": [
            {"type": "mcp_tool_result", "tool_use_id": "m1", "is_error": "no"}]}])
    with pytest.raises(ConversionError, match="belongs in an assistant message, not user"):
        from_anthropic(None, [{"role": "user", "content": [
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}]}])
    with pytest.raises(agentmsg.MessageTypeError, match=r"ServerToolUseBlock.input\['a'\] must be a JSON value"):
        ServerToolUseBlock("s1", "web_search", {"a": {1}})
    with pytest.raises(agentmsg.MessageError, match="ServerToolUseBlock.name is empty"):
        ServerToolUseBlock("s1", "", {})


# -- property tests -------------------------------------------------------------------------------

ids = tool_names
search_results = st.lists(st.fixed_dictionaries(
    {"type": st.just("web_search_result"), "url": nonempty_text, "title": nonempty_text,
     "encrypted_content": nonempty_text}, optional={"page_age": nonempty_text}), max_size=2)
text_parts = st.lists(st.builds(lambda t: {"type": "text", "text": t}, nonempty_text), max_size=2)


listed_tools = st.lists(st.fixed_dictionaries(
    {"name": tool_names, "input_schema": json_objects}, optional={"description": nonempty_text}), max_size=3)


@st.composite
def server_turns(draw):
    """An assistant turn of Anthropic's server and MCP blocks, each result after its call."""
    content = []
    for call_id in draw(st.lists(ids, min_size=1, max_size=4, unique=True)):
        if draw(st.booleans()):
            content.append({"type": "server_tool_use", "id": call_id, "name": "web_search",
                            "input": draw(json_objects)})
            if draw(st.booleans()):
                content.append({"type": "web_search_tool_result", "tool_use_id": call_id,
                                "content": draw(search_results)})
        else:
            content.append({"type": "mcp_tool_use", "id": call_id, "name": draw(tool_names),
                            "server_name": draw(nonempty_text), "input": draw(json_objects)})
            if draw(st.booleans()):
                content.append({"type": "mcp_tool_result", "tool_use_id": call_id, "is_error": draw(st.booleans()),
                                "content": draw(nonempty_text | text_parts)})
        if draw(st.booleans()):
            content.append({"type": "text", "text": draw(nonempty_text)})
        if draw(st.integers(0, 3)) == 0:
            content.append({"type": "mcp_tool_listing", "mcp_server_name": draw(nonempty_text),
                            "tools": draw(listed_tools)})
    return [{"role": "user", "content": [{"type": "text", "text": "q"}]}, {"role": "assistant", "content": content}]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(server_turns())
def test_anthropic_server_turns_round_trip_exactly(turns):
    check_turns(turns, beta=True)
    messages = from_anthropic(None, copy.deepcopy(turns))
    (system, out), said = recorded(to_anthropic, messages)
    assert said == [] and system == [] and out == turns
    assert pickle_round_trip(messages) == messages


def pickle_round_trip(value):
    import pickle

    return pickle.loads(pickle.dumps(value))


server_calls = st.builds(ServerToolUseBlock, ids, tool_names, json_objects, st.none() | nonempty_text,
                         st.sampled_from(["", "anthropic", "openai"]), json_objects)
server_results = st.builds(ServerToolResultBlock, ids, json_values, st.booleans(),
                           st.sampled_from(["", "anthropic", "openai"]), json_objects)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(server_calls | server_results, min_size=1, max_size=4))
def test_server_blocks_survive_block_dicts_and_pickles(blocks):
    message = Message("assistant", blocks)
    assert [agentmsg.block_from_dict(agentmsg.block_to_dict(b)) for b in blocks] == blocks
    assert pickle_round_trip(message) == message


def test_an_anthropic_stream_reads_server_and_mcp_blocks_with_their_streamed_input():
    events = [
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "c",
                                              "content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"query"'}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ': "x"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": SEARCH[2]},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {
            "type": "mcp_tool_use", "id": "mcptoolu_1", "name": "ask", "server_name": "wiki", "input": {}}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"q": 1}'}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"}]
    message = agentmsg.from_anthropic_stream(events)
    assert message.content == (
        ServerToolUseBlock("srvtoolu_1", "web_search", {"query": "x"}, provider="anthropic"),
        from_anthropic(None, [{"role": "assistant", "content": [SEARCH[2]]}])[0].content[0],
        ServerToolUseBlock("mcptoolu_1", "ask", {"q": 1}, "wiki", provider="anthropic"))
