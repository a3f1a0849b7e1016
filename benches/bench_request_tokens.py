"""Whole-request counts: agentmsg.count_request_tokens vs the same rules in plain Python
(tiktoken and ``base64``) vs LiteLLM's ``token_counter``, on a request with 160 MCP tools,
20 messages and 4 images of 1 MB each.

Run on a release build (LiteLLM from the ``bench`` extra, which wants its own environment):
    PYTHONPATH=$PWD/python python -m pytest benches/bench_request_tokens.py --benchmark-only \\
        --benchmark-columns=median,ops --benchmark-group-by=group
The plain-Python count must equal ours before it is timed. LiteLLM's figure is printed next to
ours (``-s``): it is a correctness comparison, not an equality check.
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any, Dict

import pytest

import agentmsg
from baseline_request_tokens import PlainPythonRequestCounter


def png(width: int, height: int, size: int) -> bytes:
    """A PNG header of the given size, padded to ``size`` bytes (only the header is read)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + header + struct.pack(">I", zlib.crc32(b"IHDR" + header))
    return data + b"\0" * (size - len(data))


def mcp_request(tools: int = 160, images: int = 4) -> Dict[str, Any]:
    """A chat request as an agent with many MCP servers sends it."""
    definitions = [{"type": "function", "function": {
        "name": f"server{i % 8}__tool_{i}",
        "description": f"Tool {i} of MCP server {i % 8}: reads, filters and writes the records of kind {i}, "
                       "returning them as JSON.",
        "parameters": {"type": "object", "properties": {
            "id": {"type": "string", "description": "The record's id."},
            "query": {"type": "string", "description": "A filter in the server's query language."},
            "limit": {"type": "integer", "description": "How many records to return at most."},
            "order": {"type": "string", "description": "The sort order.", "enum": ["asc", "desc"]}},
            "required": ["id"]}}} for i in range(tools)]
    messages: list = [{"role": "system", "content": "You are an agent with many tools. " * 20}]
    for turn in range(20):
        messages.append({"role": "user" if turn % 2 == 0 else "assistant",
                         "content": f"Turn {turn}: please look up the records and summarize what changed. " * 8})
    url = "data:image/png;base64," + base64.b64encode(png(1600, 1200, 1_000_000)).decode()
    messages.append({"role": "user", "content": [{"type": "text", "text": "And these screenshots?"}] + [
        {"type": "image_url", "image_url": {"url": url, "detail": "high"}} for _ in range(images)]})
    return {"model": "gpt-4o", "messages": messages, "tools": definitions}


@pytest.fixture(scope="module")
def request_160():
    return mcp_request()


@pytest.fixture(scope="module")
def expected(request_160):
    count = agentmsg.count_request_tokens(request_160)
    assert count.parts["images"] == 4 * 765 and count.parts["tools"] > 160 * 40
    return count.total


def test_agentmsg(benchmark, request_160, expected):
    benchmark.group = "request with 160 MCP tools and 4 images"
    assert benchmark(lambda: agentmsg.count_request_tokens(request_160).total) == expected


def test_plain_python(benchmark, request_160, expected):
    counter = PlainPythonRequestCounter()
    benchmark.group = "request with 160 MCP tools and 4 images"
    assert benchmark(counter.count, request_160) == expected


def test_litellm(benchmark, request_160, expected):
    litellm = pytest.importorskip("litellm")
    benchmark.group = "request with 160 MCP tools and 4 images"
    counted = benchmark(lambda: litellm.token_counter(model="gpt-4o", messages=request_160["messages"],
                                                      tools=request_160["tools"]))
    print(f"\nLiteLLM token_counter: {counted}; agentmsg: {expected} "
          f"({agentmsg.count_request_tokens(request_160).parts})")
