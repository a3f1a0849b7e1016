"""SDK inputs and streams: import time vs tiktoken, the cost of as_messages on a list of Messages,
and reading a stream into a message vs the SDKs' own stream accumulators, side by side.

    PYTHONPATH=$PWD/python python -m pytest benches/bench_sdk.py --benchmark-only \\
        --benchmark-columns=median,min --benchmark-group-by=group

Import times are whole fresh interpreters (``python -c ...``, median of 10 after a warm-up that
writes the bytecode cache), so each line includes the interpreter's own start-up (``pass``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import (
    InputJSONDelta,
    Message as AnthropicMessage,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageStartEvent,
    TextBlock as AnthropicTextBlock,
    TextDelta,
    ToolUseBlock as AnthropicToolUseBlock,
    Usage,
)
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

import agentmsg
from agentmsg import Message, ToolUseBlock

PACKAGE_ROOT = os.path.dirname(os.path.dirname(agentmsg.__file__))
PYCACHE = tempfile.mkdtemp(prefix="agentmsg-bench-pyc-")


def interpreter(code):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=PACKAGE_ROOT, PYTHONPYCACHEPREFIX=PYCACHE)
    command = [sys.executable, "-c", code]
    subprocess.run(command, env=env, check=True)  # warm-up: compiles to the bytecode cache
    return lambda: subprocess.run(command, env=env, check=True)


@pytest.mark.benchmark(group="import")
@pytest.mark.parametrize("code", [
    "pass", "import tiktoken", "import agentmsg",
    "from agentmsg import Message, trim, count_message_tokens, to_openai, as_messages",
    "import agentmsg; agentmsg.__all__",
])
def test_import_time(benchmark, code):
    benchmark.pedantic(interpreter(code), rounds=10, iterations=1)


@pytest.fixture(scope="module")
def history():
    out = [Message.system("Be brief")]
    for i in range(25_000):
        out += [Message.user(f"question {i}"),
                Message.assistant(f"call {i}", tool_calls=[ToolUseBlock(f"c{i}", "calc", {"a": i})]),
                Message.tool(f"result {i}", tool_id=f"c{i}"), Message.assistant(f"answer {i}")]
    return out


@pytest.mark.benchmark(group="as_messages on 100k Messages")
def test_trim_100k(benchmark, history):
    benchmark(agentmsg.trim, history, 2000)


@pytest.mark.benchmark(group="as_messages on 100k Messages")
def test_as_messages_100k(benchmark, history):
    assert benchmark(agentmsg.as_messages, history) == history


@pytest.mark.benchmark(group="as_messages on 100k Messages")
def test_trim_100k_openai_dicts(benchmark, history):
    dicts = agentmsg.to_openai(history)
    benchmark.pedantic(agentmsg.trim, (dicts, 2000), rounds=5, iterations=1)


# -- streams --------------------------------------------------------------------------------------

REPLY_WORDS = 2000  # a reply of about 2,000 tokens, one chunk per word, and a call of 200 fragments


@pytest.fixture(scope="module")
def openai_chunks():
    def chunk(delta, finish_reason=None):
        return ChatCompletionChunk.model_validate({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": f"word{i} "}) for i in range(REPLY_WORDS)]
    chunks.append(chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                         "function": {"name": "search", "arguments": '{"q": "'}}]}))
    chunks += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": f"w{i} "}}]}) for i in range(200)]
    chunks.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}, "tool_calls"))
    return chunks


@pytest.mark.benchmark(group="OpenAI stream to message")
def test_openai_stream_ours(benchmark, openai_chunks):
    message = benchmark(agentmsg.from_openai_stream, openai_chunks)
    assert message.tool_calls[0].name == "search" and message.text.startswith("word0 word1")


@pytest.mark.benchmark(group="OpenAI stream to message")
def test_openai_stream_sdk(benchmark, openai_chunks):
    def accumulate():
        state = ChatCompletionStreamState()
        for chunk in openai_chunks:
            state.handle_chunk(chunk)
        return state.get_final_completion()

    completion = benchmark(accumulate)
    assert completion.choices[0].message.tool_calls[0].function.name == "search"


@pytest.fixture(scope="module")
def anthropic_events():
    start = RawMessageStartEvent(type="message_start", message=AnthropicMessage(
        id="msg_1", type="message", role="assistant", content=[], model="claude", stop_reason=None,
        stop_sequence=None, usage=Usage(input_tokens=5, output_tokens=1)))
    events = [start, RawContentBlockStartEvent(type="content_block_start", index=0,
                                               content_block=AnthropicTextBlock(type="text", text=""))]
    events += [RawContentBlockDeltaEvent(type="content_block_delta", index=0,
                                         delta=TextDelta(type="text_delta", text=f"word{i} ")) for i in range(REPLY_WORDS)]
    events.append(RawContentBlockStopEvent(type="content_block_stop", index=0))
    events.append(RawContentBlockStartEvent(type="content_block_start", index=1, content_block=AnthropicToolUseBlock(
        type="tool_use", id="toolu_1", name="search", input={})))
    events += [RawContentBlockDeltaEvent(type="content_block_delta", index=1, delta=InputJSONDelta(
        type="input_json_delta", partial_json=part)) for part in ['{"q": "', *[f"w{i} " for i in range(200)], '"}']]
    events.append(RawContentBlockStopEvent(type="content_block_stop", index=1))
    return events


@pytest.mark.benchmark(group="Anthropic stream to message")
def test_anthropic_stream_ours(benchmark, anthropic_events):
    message = benchmark(agentmsg.from_anthropic_stream, anthropic_events)
    assert message.tool_calls[0].input["q"].startswith("w0 w1")


@pytest.mark.benchmark(group="Anthropic stream to message")
def test_anthropic_stream_sdk(benchmark, anthropic_events):
    def accumulate():
        snapshot, buffers = None, {}
        for event in anthropic_events:
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
        return snapshot

    assert benchmark(accumulate).content[1].input["q"].startswith("w0 w1")
