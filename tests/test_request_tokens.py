"""Whole-request counts (agentmsg.count_request_tokens): the providers' published examples, image
sizes read from headers, what is exact and what is estimated, and bad requests."""

import base64
import io
import json
import struct
import zlib

import pytest
from hypothesis import given, settings, strategies as st

import agentmsg
from agentmsg import MessageError, MessageTypeError, count_request_tokens
from agentmsg.counting.media import (
    anthropic_image_tokens, data_url_bytes, gemini_image_tokens, image_size, openai_image_patches,
    openai_image_tokens, pdf_page_count,
)

# -- published examples ----------------------------------------------------------------------------


def test_openai_tile_rule_worked_examples():
    # OpenAI's "Images and vision" guide, "Calculating costs" (gpt-4o, gpt-4.1, gpt-4.5).
    assert openai_image_tokens(1024, 1024, "high") == 765
    assert openai_image_tokens(2048, 4096, "high") == 1105
    assert openai_image_tokens(4096, 8192, "low") == 85
    # The same rule's steps by hand: 512 px is one tile; 768 x 768 is four.
    assert openai_image_tokens(512, 512, "high") == 85 + 170
    assert openai_image_tokens(768, 768, "high") == 85 + 4 * 170
    assert openai_image_tokens(4000, 1000, "high") == 85 + 170 * 4  # 2048 x 512: never scaled up to 768
    # The per-model costs of the guide's table.
    assert openai_image_tokens(1024, 1024, "high", "gpt-4o-mini") == 2833 + 4 * 5667
    assert openai_image_tokens(1024, 1024, "low", "o1") == 75
    assert openai_image_tokens(1024, 1024, "high", "o3") == 75 + 4 * 150
    assert openai_image_tokens(1024, 1024, "high", "gpt-5") == 70 + 4 * 140
    assert openai_image_tokens(1024, 1024, "high", "computer-use-preview") == 65 + 4 * 129


def test_openai_patch_rule_worked_examples():
    # The guide's two patch examples: 1024 x 1024 is 1024 patches; 1800 x 2400 is scaled to
    # 1056 x 1408, 33 x 44 = 1452 patches. Then the model's multiplier.
    assert openai_image_patches(1024, 1024) == 1024
    assert openai_image_patches(1800, 2400) == 1452
    assert openai_image_tokens(1800, 2400, "high", "gpt-4.1-mini") == 2353  # 1452 x 1.62 = 2352.24
    assert openai_image_tokens(1024, 1024, "low", "gpt-4.1-nano") == 2520  # 1024 x 2.46 = 2519.04
    assert openai_image_tokens(1024, 1024, "high", "o4-mini") == 1762  # 1024 x 1.72 = 1761.28
    assert openai_image_patches(32, 32) == 1 and openai_image_patches(33, 1) == 2
    assert openai_image_patches(100_000, 100_000) <= 1536


def test_anthropic_and_gemini_image_examples():
    # Anthropic's vision guide: "~54", "~1334", "~1590" tokens; larger images are scaled down.
    assert anthropic_image_tokens(200, 200) == 54
    assert anthropic_image_tokens(1000, 1000) == 1334
    assert anthropic_image_tokens(1092, 1092) == 1590
    assert anthropic_image_tokens(8000, 8000) == 1600
    assert anthropic_image_tokens(1568, 100) == 210  # long edge at the limit: not scaled
    # Gemini's guide: 258 tokens up to 384 px on both sides; 768 px tiles of 258 beyond.
    assert gemini_image_tokens(384, 384) == 258
    assert gemini_image_tokens(385, 100) == 258
    assert gemini_image_tokens(1536, 768) == 516


COOKBOOK_TOOLS = [{"type": "function", "function": {
    "name": "get_current_weather",
    "description": "Get the current weather in a given location",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
        "unit": {"type": "string", "description": "The unit of temperature to return",
                 "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"]}}}]
COOKBOOK_MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant that can answer to questions about the weather."},
    {"role": "user", "content": "What's the weather like in San Francisco?"}]


@pytest.mark.parametrize("model, expected", [("gpt-4o", 101), ("gpt-4o-mini", 101), ("gpt-4", 105),
                                             ("gpt-3.5-turbo", 105)])
def test_cookbook_tool_example(model, expected):
    # The OpenAI cookbook's published prompt_tokens for its weather-tool request: the figure is
    # exact; tool lists in general are not (recorded requests differ by a few tokens), so the
    # tools part is an estimate whose range holds the figure.
    count = count_request_tokens({"model": model, "messages": COOKBOOK_MESSAGES, "tools": COOKBOOK_TOOLS})
    assert count.total == expected and count.low <= expected <= count.high
    assert count.parts["messages"] + count.parts["tools"] == expected
    assert count.provider == "openai" and count.estimated == ("tools",)


@pytest.mark.parametrize("model, messages, expected", [
    ("gpt-4o", COOKBOOK_MESSAGES, 33), ("gpt-4", COOKBOOK_MESSAGES, 34), ("gpt-4.1-mini", COOKBOOK_MESSAGES, 33)])
def test_plain_messages_are_exact(model, messages, expected):
    count = count_request_tokens({"model": model, "messages": messages})
    assert (count.total, count.exact, count.error_range, count.estimated) == (expected, True, (expected, expected), ())


def test_reasoning_and_unverified_models_are_estimates():
    o3 = count_request_tokens({"model": "o3-mini", "messages": COOKBOOK_MESSAGES})
    assert (o3.total, o3.exact) == (32, False) and o3.low == 32
    search = count_request_tokens({"model": "gpt-4o-search-preview", "messages": COOKBOOK_MESSAGES})
    assert not search.exact and search.low < search.total < search.high


def test_plain_chat_request_equals_count_message_tokens():
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi", "name": "ann"}]
    count = count_request_tokens({"model": "gpt-4o", "messages": messages})
    assert count.total == agentmsg.count_message_tokens(messages, encoding="o200k_base")
    assert dict(count.parts) == {"messages": count.total}


# -- images in requests ----------------------------------------------------------------------------


def png_header(width, height):
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))


def data_url(data, media_type="image/png"):
    return f"data:{media_type};base64," + base64.b64encode(data).decode()


def image_message(url, detail=None):
    image = {"url": url} if detail is None else {"url": url, "detail": detail}
    return {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                        {"type": "image_url", "image_url": image}]}


def test_chat_image_by_detail():
    text_only = count_request_tokens({"model": "gpt-4o", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"}]}]}).total
    for detail, expected in (("high", 765), ("low", 85)):
        count = count_request_tokens({"model": "gpt-4o",
                                      "messages": [image_message(data_url(png_header(1024, 1024)), detail)]})
        assert count.exact and count.parts["images"] == expected and count.total == text_only + expected
    # 'auto' is billed as high, but the model may choose: an estimate bounded by low and high.
    auto = count_request_tokens({"model": "gpt-4o", "messages": [image_message(data_url(png_header(2048, 4096)))]})
    assert not auto.exact and auto.parts["images"] == 1105 and auto.estimated == ("images",)
    assert auto.error_range == (text_only + 85, text_only + 1105)


def test_remote_image_is_an_estimate():
    count = count_request_tokens({"model": "gpt-4o", "messages": [image_message("https://example.com/a.png", "high")]})
    assert not count.exact and "images" in count.estimated
    assert count.low < count.total < count.high
    assert any("remote URL" in note for note in count.notes)
    # The bug of LiteLLM #39910 the other way: never 85 for a high-detail image of unknown size.
    assert count.parts["images"] == 765


def test_patch_model_images_give_a_rounding_range():
    count = count_request_tokens({"model": "gpt-4.1-mini",
                                  "messages": [image_message(data_url(png_header(1800, 2400)), "high")]})
    assert count.parts["images"] == 2353 and "images" in count.estimated
    assert (count.low, count.high) == (11 + 2352, 11 + 2355)  # floor of 2352.24 to the rounded-up figure + 2


def test_image_sizes_from_real_encoders():
    image_module = pytest.importorskip("PIL.Image")
    for fmt, media in (("PNG", "png"), ("JPEG", "jpeg"), ("GIF", "gif"), ("WEBP", "webp")):
        for size in ((1, 1), (37, 1200), (1024, 768), (3000, 17)):
            buffer = io.BytesIO()
            image_module.new("RGB", size, (200, 10, 10)).save(buffer, fmt)
            assert image_size(buffer.getvalue()) == size, (fmt, size)
            decoded = data_url_bytes(data_url(buffer.getvalue(), f"image/{media}"), 1 << 16)
            assert image_size(decoded[1]) == size
    lossless = io.BytesIO()
    image_module.new("RGBA", (300, 200)).save(lossless, "WEBP", lossless=True)
    assert image_size(lossless.getvalue()) == (300, 200)


def test_jpeg_with_large_metadata_before_the_frame():
    # A JPEG whose frame header comes after 100 KB of APP segments: read from the whole data URL.
    app = b"\xff\xe1" + struct.pack(">H", 65000) + b"\0" * 64998
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, 600, 800, 1) + b"\x01\x11\x00"
    jpeg = b"\xff\xd8" + app + app + sof + b"\xff\xd9"
    assert image_size(jpeg) == (800, 600)
    count = count_request_tokens({"model": "gpt-4o", "messages": [image_message(data_url(jpeg, "image/jpeg"), "high")]})
    assert count.parts["images"] == 85 + 170 * 4  # 800 x 600 -> 1024 x 768 -> 2 x 2 tiles


def test_headers_never_crash_on_garbage():
    for data in (b"", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"\xff\xd8" + b"\xff\xe0\x00\x01", b"RIFF\0\0\0\0WEBPVP8X",
                 b"GIF89a\x00\x00\x00\x00", b"\xff\xd8\xff\xc0\x00\x11\x08"):
        assert image_size(data) is None
    with pytest.raises(MessageError, match="base64"):
        data_url_bytes("data:image/png;base64,!!!!")
    assert pdf_page_count(b"not a pdf") is None


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_header_reader_is_total(data):
    size = image_size(data)
    assert size is None or (size[0] > 0 and size[1] > 0)


# -- tools: MCP lists, Responses -------------------------------------------------------------------


def mcp_tools(count):
    return [{"type": "function", "function": {
        "name": f"server_{i % 7}__tool_{i}",
        "description": f"Tool number {i} of an MCP server: reads and writes records of kind {i}.",
        "parameters": {"type": "object", "properties": {
            "id": {"type": "string", "description": "The record's id."},
            "limit": {"type": "integer", "description": "How many to return."}}, "required": ["id"]}}}
        for i in range(count)]


def test_large_mcp_tool_list_is_counted():
    # LiteLLM #36671 counted 160 MCP tools as 0 tokens.
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "tools": mcp_tools(160)}
    count = count_request_tokens(request)
    assert count.parts["tools"] == agentmsg.count_message_tokens(
        request["messages"], tools=request["tools"]) - count.parts["messages"]
    assert count.parts["tools"] > 160 * 30 and count.low < count.total < count.high
    assert "messages" not in count.estimated


def test_nested_tool_schema_is_an_estimate():
    tool = {"type": "function", "function": {"name": "create", "description": "Create an order.",
            "parameters": {"type": "object", "properties": {"items": {"type": "array", "items": {
                "type": "object", "properties": {"sku": {"type": "string", "description": "The SKU."}}}}}}}}
    count = count_request_tokens({"model": "gpt-4o", "messages": [], "tools": [tool]})
    assert not count.exact and count.estimated == ("tools",) and count.low < count.total < count.high


def test_responses_request():
    request = {"model": "gpt-4o", "instructions": "Be brief.", "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"},
                                     {"type": "input_image", "image_url": data_url(png_header(512, 512)),
                                      "detail": "high"}]},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
        {"type": "function_call_output", "call_id": "c1", "output": "18C"},
        {"type": "mcp_list_tools", "server_label": "crm", "tools": [
            {"name": "find", "description": "Find a customer.", "input_schema": {"type": "object"}}]}],
        "tools": [{"type": "function", "name": "get_weather", "description": "Weather.",
                   "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
                  {"type": "mcp", "server_label": "crm", "server_url": "https://crm.example.com/mcp"}],
        "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}}}
    count = count_request_tokens(request)
    assert count.provider == "openai-responses" and not count.exact
    assert count.parts["images"] == 255
    assert count.parts["tools"] == agentmsg.count_message_tokens([], tools=[
        {"name": "find", "description": "Find a customer.", "parameters": {"type": "object"}},
        request["tools"][0]]) - 3
    assert set(count.parts) == {"messages", "images", "tools", "response_format"}
    assert sum(count.parts.values()) == count.total and count.low <= count.total <= count.high
    # A remote MCP server whose list is not in the input: said, with no upper bound.
    bare = count_request_tokens({"model": "gpt-4o", "input": "hi", "tools": [request["tools"][1]]})
    assert bare.high is None and any("mcp_list_tools" in note for note in bare.notes)


def test_builtin_tools_are_named_not_counted():
    count = count_request_tokens({"model": "gpt-4o", "input": "hi", "tools": [{"type": "web_search"}]})
    assert count.high is None and any("web_search" in note for note in count.notes)


# -- Anthropic and Gemini: estimates ---------------------------------------------------------------


def test_anthropic_request_is_an_estimate_with_a_range():
    request = {"model": "claude-sonnet-4-5", "max_tokens": 100, "system": "Be brief.",
               "messages": [{"role": "user", "content": [
                   {"type": "text", "text": "What is in this image?"},
                   {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                "data": base64.b64encode(png_header(1000, 1000)).decode()}}]}],
               "tools": [{"name": "get_weather", "description": "Weather.",
                          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}
    count = count_request_tokens(request)
    assert count.provider == "anthropic" and not count.exact
    assert count.parts["images"] == 1334
    assert count.parts["tools"] > 346  # the published tool-use system prompt is in
    assert count.low < count.total < count.high
    assert "messages" in count.estimated and "tools" in count.estimated


def test_gemini_request_is_an_estimate_with_a_range():
    request = {"systemInstruction": {"parts": [{"text": "Be brief."}]}, "contents": [
        {"role": "user", "parts": [{"text": "Describe it."},
                                   {"inlineData": {"mimeType": "image/png",
                                                   "data": base64.b64encode(png_header(300, 300)).decode()}}]}]}
    count = count_request_tokens(request, model="gemini-2.5-flash")
    assert count.provider == "gemini" and count.parts["images"] == 258 and not count.exact
    assert count.low <= count.total <= count.high


# -- properties and bad input ----------------------------------------------------------------------

texts = st.text(max_size=40)


@settings(max_examples=60, deadline=None)
@given(st.lists(texts, max_size=6), texts, st.integers(0, 4),
       st.sampled_from(["gpt-4o", "gpt-4", "claude-sonnet-4-5", "gemini"]))
def test_counts_grow_with_messages_and_tools(contents, extra, tools, model):
    def request(messages, tool_count):
        if model == "gemini":
            return {"contents": [{"role": "user", "parts": [{"text": text}]} for text in messages],
                    "tools": [{"functionDeclarations": [t["function"] for t in mcp_tools(tool_count)]}]}
        body = {"model": model, "max_tokens": 10, "messages": [{"role": "user", "content": text} for text in messages]}
        if tool_count:
            body["tools"] = mcp_tools(tool_count) if not model.startswith("claude") else [
                {"name": t["function"]["name"], "description": t["function"]["description"],
                 "input_schema": t["function"]["parameters"]} for t in mcp_tools(tool_count)]
        return body
    base = count_request_tokens(request(contents, tools))
    more_messages = count_request_tokens(request(contents + [extra], tools))
    more_tools = count_request_tokens(request(contents, tools + 1))
    for bigger in (more_messages, more_tools):
        assert bigger.total >= base.total and bigger.low >= base.low
        assert base.high is None or bigger.high is None or bigger.high >= base.high


@pytest.mark.parametrize("request_, error, path", [
    ([], MessageTypeError, "request"),
    ({"model": "gpt-4o"}, MessageError, "'messages'"),
    ({"model": "gpt-4o", "messages": "hi"}, MessageTypeError, "request.messages"),
    ({"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": 3}]}]},
     MessageTypeError, "request.messages[0].content[0].image_url"),
    ({"model": "gpt-4o", "messages": [image_message("data:image/png;base64,AAAA", "high")]},
     MessageError, "request.messages[0].content[1].image_url.url"),
    ({"model": "gpt-4o", "messages": [image_message(data_url(png_header(4, 4)), "ultra")]},
     MessageError, "detail"),
    ({"model": "gpt-4o", "messages": [], "tools": [{"type": "function", "function": {"name": 3}}]},
     MessageTypeError, "request.tools[0].function.name"),
    ({"model": "gpt-4o", "messages": [], "response_format": {"type": "xml"}}, MessageError, "response_format"),
    ({"model": "gpt-4o", "input": [{"type": "message", "role": "user", "content": [{"type": "video"}]}]},
     MessageError, "request.input[0].content[0]"),
    ({"model": "claude-3-7-sonnet", "messages": [{"role": "system", "content": "x"}]},
     MessageError, "request.messages[0].role"),
    ({"contents": [{"parts": [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}]},
     MessageError, "request.contents[0].parts[0].inlineData.data"),
])
def test_malformed_requests_name_the_field(request_, error, path):
    with pytest.raises(error) as caught:
        count_request_tokens(request_)
    assert path in str(caught.value)
    assert isinstance(caught.value, agentmsg.AgentMsgError)


def test_result_is_frozen_and_serializable():
    count = count_request_tokens({"model": "gpt-4o", "messages": []})
    with pytest.raises(AttributeError):
        count.total = 3
    with pytest.raises(TypeError):
        count.parts["messages"] = 1
    assert json.loads(json.dumps(count.as_dict()))["exact"] is True


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 2500), st.integers(1, 2500), st.sampled_from(["PNG", "JPEG", "GIF", "WEBP"]))
def test_header_sizes_equal_pillows(width, height, fmt):
    image_module = pytest.importorskip("PIL.Image")
    if fmt == "WEBP" and max(width, height) > 16383:
        return
    buffer = io.BytesIO()
    image_module.new("L", (width, height), 7).save(buffer, fmt)
    assert image_size(buffer.getvalue()) == (width, height)


def test_pdf_pages_in_anthropic_and_gemini_requests():
    pdf = b"%PDF-1.4\n" + b"".join(b"%d 0 obj << /Type /Page /Parent 1 0 R >> endobj\n" % i for i in range(3)) + \
        b"1 0 obj << /Type /Pages /Count 3 >> endobj\n%%EOF"
    assert pdf_page_count(pdf) == 3
    data = base64.b64encode(pdf).decode()
    claude = count_request_tokens({"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}}]}]})
    assert (claude.parts["documents"], "documents" in claude.estimated) == (3 * 2250, True)
    gemini = count_request_tokens({"contents": [{"role": "user", "parts": [
        {"inlineData": {"mimeType": "application/pdf", "data": data}}]}]}, model="gemini-2.5-flash")
    assert gemini.parts["documents"] == 3 * 258
    chat = count_request_tokens({"model": "gpt-4o", "messages": [{"role": "user", "content": [
        {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64," + data}}]}]})
    assert chat.parts["documents"] == 3 * 255 and chat.error_range[1] - chat.total == 3 * (3000 - 255)
