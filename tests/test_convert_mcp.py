"""An MCP CallToolResult as a tool message (from_mcp_result), checked against the ``mcp`` SDK's
own types, and written by the provider converters in their shapes."""

import copy
import json
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import (
    AudioBlock,
    Base64Source,
    DocumentBlock,
    ConversionError,
    ImageBlock,
    Message,
    MessageTypeError,
    TextBlock,
    ToolUseBlock,
    from_mcp_result,
)
from convert_checks import check_anthropic, check_openai
from convert_strategies import b64, nonempty_text
from strategies import json_objects


def validated(result):
    """``result`` is a CallToolResult by the mcp SDK's own model."""
    from mcp.types import CallToolResult

    CallToolResult.model_validate(result)
    return result


RESULT = {
    "content": [
        {"type": "text", "text": "Sunny, 21 C"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///forecast.md", "mimeType": "text/markdown", "text": "# Week"}},
        {"type": "resource", "resource": {"uri": "file:///map.jpg", "mimeType": "image/jpeg", "blob": "/9j/4AAQ"}},
        {"type": "resource", "resource": {"uri": "file:///report.pdf", "mimeType": "application/pdf", "blob": "JVBERi0="}},
        {"type": "resource_link", "uri": "https://e.com/radar", "name": "radar", "description": "Live radar"},
    ],
    "structuredContent": {"temperature": 21, "sky": "clear"},
    "isError": False,
    "_meta": {"server": "weather"},
}


def test_every_content_type_becomes_blocks_and_the_result_is_kept_whole():
    message = from_mcp_result(validated(copy.deepcopy(RESULT)), tool_id="call_1", name="forecast")
    assert (message.role.value, message.tool_id, message.name, message.is_error) == ("tool", "call_1", "forecast", False)
    assert message.content[0].output == (
        TextBlock("Sunny, 21 C"),
        ImageBlock(Base64Source("image/png", "iVBORw0KGgo=")),
        AudioBlock(Base64Source("audio/wav", "UklGRg==")),
        TextBlock("# Week"),
        ImageBlock(Base64Source("image/jpeg", "/9j/4AAQ")),
        DocumentBlock(Base64Source("application/pdf", "JVBERi0="), "file:///report.pdf"),
        TextBlock("[resource: radar](https://e.com/radar) Live radar"),
        TextBlock('{"temperature": 21, "sky": "clear"}'),
    )
    assert message.metadata == {"mcp": {"result": RESULT}}


def test_structured_content_already_sent_as_text_is_not_repeated():
    result = {"content": [{"type": "text", "text": '{"a":  1}'}], "structuredContent": {"a": 1}}
    assert from_mcp_result(validated(result), tool_id="c1").text == '{"a":  1}'
    result = {"content": [], "structuredContent": {"a": 1}, "isError": True}
    message = from_mcp_result(validated(result), tool_id="c1")
    assert (message.text, message.is_error) == ('{"a": 1}', True)


def test_sdk_objects_read_as_the_spec_dicts():
    from mcp.types import CallToolResult

    message = from_mcp_result(CallToolResult.model_validate(RESULT), tool_id="call_1")
    expected = from_mcp_result(copy.deepcopy(RESULT), tool_id="call_1")
    assert message.content == expected.content


def test_each_provider_writes_the_result_in_its_shape():
    chat = [Message.user("Weather?"), Message.assistant(tool_calls=[ToolUseBlock("call_1", "forecast", {})]),
            from_mcp_result(copy.deepcopy(RESULT), tool_id="call_1", name="forecast")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        system, turns = agentmsg.to_anthropic(chat)
    check_anthropic(system, turns)
    assert [str(w.message) for w in caught] == [
        "to_anthropic cannot carry audio blocks in tool results (message 2); they were left out"]
    assert [part["type"] for part in turns[2]["content"][0]["content"]] == [
        "text", "image", "text", "image", "document", "text", "text"]  # no audio in Anthropic's tool results
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = agentmsg.to_openai(chat)
    check_openai(out)
    assert [part["text"] for part in out[2]["content"]][:2] == ["Sunny, 21 C", "# Week"]
    assert [str(w.message) for w in caught] == [
        "to_openai cannot carry media in tool results (message 2); they were left out"]


def test_bad_results_name_the_field():
    with pytest.raises(ConversionError, match=r"result: missing field 'content'"):
        from_mcp_result({"isError": False}, tool_id="c1")
    with pytest.raises(ConversionError, match=r"result\.content\[0\]\.type: unknown MCP content type 'video'"):
        from_mcp_result({"content": [{"type": "video"}]}, tool_id="c1")
    with pytest.raises(MessageTypeError, match=r"result\.content\[0\]\.text must be a str, not int"):
        from_mcp_result({"content": [{"type": "text", "text": 1}]}, tool_id="c1")
    with pytest.raises(MessageTypeError, match=r"result\.isError must be a bool, not str"):
        from_mcp_result({"content": [], "isError": "yes"}, tool_id="c1")
    with pytest.raises(MessageTypeError, match=r"result\.structuredContent must be an object \(dict\), not list"):
        from_mcp_result({"content": [], "structuredContent": [1]}, tool_id="c1")
    with pytest.raises(MessageTypeError, match=r"result must be an object \(dict\)"):
        from_mcp_result("text", tool_id="c1")
    with pytest.raises(ConversionError, match=r"a tool message needs tool_id"):
        from_mcp_result({"content": []})


texts = st.builds(lambda t: {"type": "text", "text": t}, nonempty_text)
images = st.builds(lambda d, m: {"type": "image", "data": d, "mimeType": m}, b64,
                   st.sampled_from(["image/png", "image/jpeg"]))
embedded = st.builds(lambda t: {"type": "resource", "resource": {"uri": "file:///a.txt", "text": t}}, nonempty_text)
links = st.builds(lambda n: {"type": "resource_link", "uri": "https://e.com/x", "name": n}, nonempty_text)
results = st.fixed_dictionaries({"content": st.lists(texts | images | embedded | links, max_size=4)},
                                optional={"structuredContent": json_objects, "isError": st.booleans()})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(results)
def test_any_result_reads_into_one_tool_result_holding_all_its_text(result):
    validated(result)
    message = from_mcp_result(copy.deepcopy(result), tool_id="c1")
    assert message.metadata["mcp"]["result"] == result
    assert message.is_error == result.get("isError", False)
    output = message.content[0].output
    assert len(output) >= len(result["content"])
    assert [b.source.data for b in output if isinstance(b, ImageBlock)] == [
        part["data"] for part in result["content"] if part["type"] == "image"]
    if "structuredContent" in result:
        assert any(parsed(b.text) == result["structuredContent"] for b in output if isinstance(b, TextBlock))


def parsed(text):
    try:
        return json.loads(text)
    except ValueError:
        return None
