"""Responses as the SDKs return them, built offline with the SDKs' own types: an OpenAI
``ChatCompletion`` and Anthropic's documented tool loop ``{"role": "assistant", "content":
response.content}``."""

import pytest
from anthropic.types import Message as AnthropicMessage
from anthropic.types import TextBlock as AnthropicText
from anthropic.types import ThinkingBlock as AnthropicThinking
from anthropic.types import ToolUseBlock as AnthropicToolUse
from anthropic.types import Usage
from openai.types.chat import ChatCompletion

import agentmsg
from agentmsg import ConversionError, Message, TextBlock, ThinkingBlock, ToolUseBlock
from convert_checks import check_anthropic, check_openai


def completion(**message):
    return ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", **message}}],
    })


def test_from_openai_reads_a_chat_completion_as_its_first_choice():
    response = completion(content=None, tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q":"x"}'}}])
    [reply] = agentmsg.from_openai(response)
    assert (reply.tool_calls[0].name, reply.tool_calls[0].input, reply.finish_reason) == ("search", {"q": "x"}, "tool_calls")
    # in a history, next to dicts, and back out with the model's own argument text
    history = agentmsg.from_openai([{"role": "user", "content": "find x"}, response], on_orphan="keep")
    out = agentmsg.to_openai(history)
    assert out[1]["tool_calls"][0]["function"]["arguments"] == '{"q":"x"}'
    check_openai(out)
    # the dict form of a response works the same way
    assert agentmsg.from_openai(response.model_dump())[0].tool_calls == reply.tool_calls


def test_a_completion_without_choices_is_a_conversion_error():
    with pytest.raises(ConversionError, match=r"^messages\[0\]\.choices: a completion with no choices has no message$"):
        agentmsg.from_openai({"id": "x", "choices": []})


def test_from_anthropic_reads_the_documented_tool_loop_with_sdk_blocks():
    response = AnthropicMessage(
        id="msg_1", type="message", role="assistant", model="claude", stop_reason="tool_use",
        stop_sequence=None, usage=Usage(input_tokens=1, output_tokens=2),
        content=[AnthropicThinking(type="thinking", thinking="plan", signature="sig"),
                 AnthropicText(type="text", text="Looking."),
                 AnthropicToolUse(type="tool_use", id="t1", name="search", input={"q": "x"})],
    )
    turns = [{"role": "user", "content": "find x"}, {"role": "assistant", "content": response.content},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "found"}]}]
    messages = agentmsg.from_anthropic(None, turns)
    assert messages[1].content == (ThinkingBlock("plan", "sig"), TextBlock("Looking."),
                                   ToolUseBlock("t1", "search", {"q": "x"}))
    assert (messages[2].tool_id, messages[2].name, messages[2].text) == ("t1", "search", "found")
    system, again = agentmsg.to_anthropic(messages)
    check_anthropic(system, again)
    assert again[1]["content"][2] == {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "x"}}
    # the input is a copy: the response object is not changed through the message
    messages[1].tool_calls[0].input["q"] = "changed"
    assert response.content[2].input == {"q": "x"}


def test_from_anthropic_reads_a_whole_response_message():
    response = AnthropicMessage(
        id="msg_1", type="message", role="assistant", model="claude", stop_reason="end_turn",
        stop_sequence=None, usage=Usage(input_tokens=1, output_tokens=2),
        content=[AnthropicText(type="text", text="Hi.")],
    )
    [message] = agentmsg.from_anthropic(None, [response])
    assert (message.role, message.text, message.metadata["anthropic"]["id"]) == (Message.assistant("x").role, "Hi.", "msg_1")
