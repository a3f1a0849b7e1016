"""Whole-request token counts: every part of a request as sent to OpenAI (Chat Completions or
Responses), Anthropic (Messages) or Gemini (``generateContent``), and how each part was counted.

OpenAI's text is counted exactly (its encodings are embedded) by the cookbook's verified chat
rules, and its images by the published tile and patch rules; what no published rule covers (an
image at a remote URL, a built-in tool's hidden prompt, Responses framing) is an estimate with a
range. Anthropic's and Gemini's tokenizers are not public: their counts are estimates, made with
``o200k_base`` and scaled by a ratio measured on recorded ``usage`` numbers, with the error range
measured on those records (docs/tokens.md, "Whole requests").

    >>> import agentmsg
    >>> count = agentmsg.count_request_tokens(
    ...     {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hello, world!"}]})
    >>> count.total, count.exact, dict(count.parts)
    (11, True, {'messages': 11})
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .. import _core
from .._checks import check_calls, describe, json_copy, require_dict, require_list, require_str, type_name
from ..errors import EncodingError, MessageError, MessageTypeError
from .encoding import encoding_name_for_model, resolve_encoding
from .media import (
    MEASURED_PATCH_MULTIPLIERS, anthropic_image_tokens, data_url_bytes, gemini_image_tokens, image_size,
    openai_image_patches, openai_image_rule, openai_image_tokens, pdf_page_count,
)
from .tokens import REPLY_PRIMING_TOKENS, message_token_counts, tool_definition_tokens

__all__ = ["RequestCount", "count_request_tokens", "REQUEST_PROVIDERS", "ESTIMATE_CALIBRATION"]

#: The request formats :func:`count_request_tokens` reads.
REQUEST_PROVIDERS = ("openai", "openai-responses", "anthropic", "gemini")

#: How Anthropic and Gemini text is estimated: ``o200k_base`` tokens of the request's text (as
#: :func:`count_request_tokens` renders it) times ``ratio``, plus ``per_message`` per message and
#: ``fixed`` per request; ``low`` and ``high`` bound the ratio of the recorded count to the
#: estimate, measured over ``records`` recorded requests (pydantic-ai's test cassettes, MIT) of
#: plain text (no tools, media, thinking or output formats). Claude Opus 4.7 and the models
#: after it have a new tokenizer (about 1.4 times the tokens), so they have their own row.
ESTIMATE_CALIBRATION: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "anthropic": MappingProxyType({"ratio": 1.02, "per_message": 6, "fixed": 2, "low": 0.88, "high": 1.27,
                                   "records": 14}),
    "anthropic-opus-4.7": MappingProxyType({"ratio": 1.41, "per_message": 2, "fixed": 2, "low": 0.93, "high": 1.3,
                                            "records": 9}),
    "gemini": MappingProxyType({"ratio": 1.02, "per_message": 0, "fixed": 0, "low": 0.8, "high": 1.2,
                                "records": 27}),
})
_NEW_TOKENIZER = re.compile(r"claude-(opus-4-[7-9]|[a-z]+-[5-9])")

# Anthropic's tool use guide ("Pricing"): the system prompt that enabling tools adds, by model
# and tool_choice (auto or none; any or tool), for the models it lists; then how far above it
# recorded requests went for the model (Claude Sonnet and Haiku 4.5 and 4.6 requests recorded
# in 2026 show about 170 more with auto and 300 more with a forced tool, and up to 130 more
# with strict tools; earlier ones, none).
_ANTHROPIC_TOOL_PROMPT = (
    ("claude-3-opus", 530, 281, 0, 0), ("claude-3-sonnet", 159, 235, 0, 0), ("claude-3-haiku", 264, 340, 0, 0),
    ("claude-3-5-haiku", 264, 340, 0, 0), ("claude-3-5-sonnet", 346, 313, 0, 0), ("claude-3-7", 346, 313, 120, 120),
    ("claude-sonnet-4-0", 346, 313, 120, 120), ("claude-opus-4-0", 346, 313, 120, 120),
    ("claude-opus-4-1", 346, 313, 120, 120),
    ("claude-sonnet-4-2025", 346, 313, 120, 120), ("claude-opus-4-2025", 346, 313, 120, 120),
    ("claude-", 346, 313, 300, 450),  # Claude 4.5 and later, listed at the figures of 3.7
)
# Extended thinking adds a prompt too (recorded: 29 and 17 tokens; none on Opus 4.7 and later).
_THINKING_PROMPT = (17, 0, 40)
# Structured outputs (output_format) add a prompt besides the schema (recorded: about 185).
_OUTPUT_FORMAT_PROMPT = (185, 150, 230)

# Gemini 3's media resolution guide: an image costs up to 1,120 tokens at the default resolution.
_GEMINI_3_IMAGE = 1120

# Anthropic's PDF support guide: each page costs about 1,500 to 3,000 tokens (its text and its
# image). OpenAI and Gemini files are counted alike; Gemini's guide gives 258 tokens a page.
_PAGE_RANGE = (1500, 3000)
# A remote image's size is unknown offline: the estimate assumes a 1024 x 1024 image.
_UNKNOWN_SIDE = 1024
# OpenAI files: no published rule; recorded one-page PDFs cost 34 and 219 tokens. A page is
# estimated as one high-detail 512 px image (255), within 20 to 3,000.
_OPENAI_PAGE = (255, 20, 3000)

# What pydantic-ai's recorded OpenAI requests (its test cassettes, MIT) showed beyond the
# cookbook's rules: each tool call with its result costs about 7 more tokens than its name and
# arguments (5 pairs of requests: 7 to 8); reasoning models (o1, o3, o4, gpt-5) count 1 token
# fewer than the rules give (10 requests); a tool list is within 8 tokens a tool plus 5% of the rule
# except for the cookbook's own verified example (a tool with an empty description: 7 fewer).
_CALL_FRAMING = (7, 4, 10)
_REASONING_MODELS = ("o1", "o3", "o4", "gpt-5")
# The models the cookbook's rules count exactly on recorded requests (14 of 15 plain ones equal);
# a search, audio or realtime variant frames its prompt otherwise (gpt-4o-search-preview: 11 fewer).
_VERIFIED_MODELS = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-4", "gpt-3.5", "chatgpt-4o")
_OTHER_VARIANTS = ("search", "audio", "realtime", "transcribe", "tts")


@dataclass(frozen=True)
class RequestCount:
    """The tokens of one whole request, part by part, and how far to trust them.

    ``total`` is the count; ``exact`` is True only when every part was counted by a published
    rule that gives the exact figure (then ``low == high == total``). Otherwise ``low`` and
    ``high`` bound it (``high`` is None when no bound is known, as for audio), ``estimated`` names
    the parts that are estimates, and ``notes`` say how each was made. ``parts`` maps each part
    (``messages``, ``tools``, ``images``, ``documents``, ``response_format``, ``audio``, ...) to
    its tokens; they sum to ``total``.

    >>> count = count_request_tokens({"model": "claude-sonnet-4-5", "max_tokens": 100,
    ...                               "messages": [{"role": "user", "content": "Hi"}]})
    >>> count.exact, count.provider, count.low <= count.total <= count.high
    (False, 'anthropic', True)
    """

    total: int
    exact: bool
    parts: Mapping[str, int]
    provider: str
    model: Optional[str]
    method: str
    low: int
    high: Optional[int]
    estimated: Tuple[str, ...] = ()
    notes: Tuple[str, ...] = field(default=())

    @property
    def error_range(self) -> Tuple[int, Optional[int]]:
        """``(low, high)``: the bounds of the true count (``(total, total)`` when exact)."""
        return self.low, self.high

    def as_dict(self) -> Dict[str, Any]:
        """The count as plain JSON data (what ``agentmsg count --request --json`` prints).

        >>> count_request_tokens({"model": "gpt-4o", "messages": []}).as_dict()["total"]
        3
        """
        return {"total": self.total, "exact": self.exact, "parts": dict(self.parts), "provider": self.provider,
                "model": self.model, "method": self.method, "low": self.low, "high": self.high,
                "estimated": list(self.estimated), "notes": list(self.notes)}


class _Tally:
    """The parts of a count as they are added: tokens, bounds, and whether each is estimated."""

    def __init__(self) -> None:
        self.parts: Dict[str, int] = {}
        self.low = 0
        self.high: Optional[int] = 0
        self.estimated: Dict[str, None] = {}
        self.notes: Dict[str, None] = {}

    def exact(self, part: str, tokens: int) -> None:
        self.estimate(part, tokens, tokens, tokens)

    def estimate(self, part: str, tokens: int, low: int, high: Optional[int], note: str = "") -> None:
        self.parts[part] = self.parts.get(part, 0) + tokens
        self.low += low
        self.high = None if high is None or self.high is None else self.high + high
        if low != tokens or high != tokens:
            self.estimated[part] = None
        if note:
            self.notes[note] = None

    def note(self, note: str) -> None:
        self.notes[note] = None

    def result(self, provider: str, model: Optional[str], method: str) -> RequestCount:
        total = sum(self.parts.values())
        exact = not self.estimated
        return RequestCount(total, exact, MappingProxyType(dict(self.parts)), provider, model, method,
                            total if exact else self.low, total if exact else self.high,
                            tuple(self.estimated), tuple(self.notes))


# -- reading the request ---------------------------------------------------------------------------


def _provider_of(request: Mapping[str, Any], model: Optional[str]) -> str:
    """The request's format, from its fields (and the model's name where the fields agree)."""
    if "contents" in request:
        return "gemini"
    if "input" in request or "instructions" in request:
        return "openai-responses"
    if "messages" in request:
        name = model if isinstance(model, str) else ""
        if name.startswith(("claude", "anthropic")) or isinstance(request.get("system"), (str, list)):
            return "anthropic"
        return "openai"
    raise MessageError("request has none of 'messages' (Chat Completions, Anthropic), 'input' (Responses) "
                       f"or 'contents' (Gemini); its keys: {', '.join(map(str, list(request)[:8]))}")


def _content_parts(content: Any, where: str) -> Iterable[Tuple[str, Mapping[str, Any]]]:
    """The dict parts of a list content, with their paths; a str content has none."""
    if content is None or isinstance(content, str):
        return ()
    return ((f"{where}[{index}]", require_dict(part, f"{where}[{index}]"))
            for index, part in enumerate(require_list(content, where)) if not isinstance(part, str))


def _texts_tokens(texts: Sequence[str], encoding: str) -> int:
    return sum(_core.count_tokens_batch(list(texts), encoding)) if texts else 0


def _json_text(value: Any, where: str) -> str:
    return json.dumps(json_copy(value, where), ensure_ascii=False, separators=(",", ":"))


# -- OpenAI ----------------------------------------------------------------------------------------


def _openai_encoding(model: Optional[str], tally: _Tally) -> Tuple[str, bool]:
    """The encoding of ``model`` and whether it is the model's own (else o200k_base, estimated)."""
    if model is None:
        tally.note("no model given: counted with o200k_base, the encoding of every current OpenAI model")
        return "o200k_base", False
    try:
        return resolve_encoding(encoding_name_for_model(model)), True
    except (EncodingError, KeyError):
        tally.note(f"model {describe(model)} is not one tiktoken maps: counted with o200k_base")
        return "o200k_base", False


def _openai_messages(total: int, exact_encoding: bool, model: Optional[str], tally: _Tally) -> None:
    """The messages' count by the cookbook's rules: exact for the models they were verified on."""
    if exact_encoding and model is not None and model.startswith(_REASONING_MODELS):
        tally.estimate("messages", total - 1, total - 1, total + 8,
                       "reasoning models: recorded requests count 1 token fewer than the cookbook's rules give "
                       "(o1-mini, which reads a system message as a user one, 8 more)")
    elif exact_encoding and model is not None and model.startswith(_VERIFIED_MODELS) \
            and not any(variant in model for variant in _OTHER_VARIANTS):
        tally.exact("messages", total)
    else:
        tally.estimate("messages", total, total * 9 // 10 - 12, total * 11 // 10 + 12,
                       f"model {describe(model)}: the cookbook's rules are not verified for it; within 10% and 12 tokens")


def _call_framing(calls: int, tally: _Tally) -> None:
    if calls:
        point, low, high = _CALL_FRAMING
        tally.estimate("messages", point * calls, low * calls, high * calls,
                       f"tool calls: about {point} tokens of framing each with its result, beyond the name and "
                       "arguments (measured on recorded requests; no rule is published)")


def _openai_image(url: Any, detail: Any, where: str, model: str, tally: _Tally) -> None:
    url = require_str(url, f"{where}.url")
    detail = "auto" if detail is None else require_str(detail, f"{where}.detail")
    if detail not in ("low", "high", "auto"):
        raise MessageError(f"{where}.detail must be 'low', 'high' or 'auto', not {describe(detail)}")
    kind, costs = openai_image_rule(model)
    decoded = data_url_bytes(url, 1 << 16)
    size = image_size(decoded[1]) if decoded else None
    if decoded and size is None:  # a JPEG whose frame header lies past the first 64 KB
        full = data_url_bytes(url)
        size = image_size(full[1]) if full else None
        if size is None:
            raise MessageError(f"{where}.url is a data URL of {describe(decoded[0])} whose size cannot be read: "
                               "not a PNG, JPEG, GIF or WebP image")
    if size is None:
        tally.note(f"an image at a remote URL ({where}): its size is unknown offline; estimated as "
                   f"{_UNKNOWN_SIDE} x {_UNKNOWN_SIDE}")
        if kind == "patches" or detail != "low":
            low = openai_image_tokens(1, 1, "high", model)
            high = openai_image_tokens(768, 2048, "high", model) if kind != "patches" else \
                openai_image_tokens(1536 * 32, 32, "high", model)
            tokens = openai_image_tokens(_UNKNOWN_SIDE, _UNKNOWN_SIDE, "high", model)
            tally.estimate("images", tokens, low, high)
        else:
            tally.estimate("images", int(costs[0]), int(costs[0]), int(costs[0]))
        return
    width, height = size
    tokens = openai_image_tokens(width, height, detail, model)
    if kind == "patches":
        patches = openai_image_patches(width, height)
        prefix = next((p for p in MEASURED_PATCH_MULTIPLIERS if model.startswith(p)), None)
        low_multiplier = MEASURED_PATCH_MULTIPLIERS[prefix] if prefix else costs[0]
        tally.estimate("images", tokens, math.floor(patches * low_multiplier), tokens + 2,
                       "patch-rule images: the guide does not say how patches x multiplier is rounded"
                       + (f"; {prefix} measures at {low_multiplier}x, not the listed {costs[0]}x" if prefix else ""))
    elif kind == "unknown":
        tally.estimate("images", tokens, openai_image_tokens(width, height, "low", model),
                       max(tokens, 2833 + 5667 * 8),
                       f"model {describe(model)} is not in OpenAI's image cost table: gpt-4o's tile rule used")
    elif detail == "auto":
        tally.estimate("images", tokens, int(costs[0]), tokens,
                       "detail 'auto' lets the model choose: counted as 'high' (what it is billed as), low bound 'low'")
    else:
        tally.exact("images", tokens)


def _openai_file(part: Mapping[str, Any], where: str, tally: _Tally) -> None:
    """A PDF (or other file) part: its pages by the per-page estimate, when its bytes are here."""
    data = part.get("file_data")
    pages = None
    if isinstance(data, str):
        decoded = data_url_bytes(data) if data.startswith("data:") else data_url_bytes("data:;base64," + data)
        pages = pdf_page_count(decoded[1]) if decoded else None
    if part.get("filename") is not None:
        require_str(part.get("filename"), f"{where}.filename")
    if pages:
        point, low, high = _OPENAI_PAGE
        tally.estimate("documents", point * pages, low * pages, high * pages,
                       f"documents: {point} tokens a page, within {low}-{high:,} (OpenAI publishes no rule)")
    else:
        tally.estimate("documents", 0, 0, None, f"a file at {where} is not here (an id or URL) or not a PDF: "
                       "not counted, no upper bound")


def _openai_parts(messages: Sequence[Any], model: str, tally: _Tally, where: str) -> None:
    """Images, audio and files of Chat Completions messages (their text is counted with the messages)."""
    for index, message in enumerate(messages):
        message = require_dict(message, f"{where}[{index}]")
        for place, part in _content_parts(message.get("content"), f"{where}[{index}].content"):
            kind = part.get("type")
            if kind == "image_url":
                image = part.get("image_url")
                if isinstance(image, str):
                    _openai_image(image, None, f"{place}.image_url", model, tally)
                else:
                    image = require_dict(image, f"{place}.image_url")
                    _openai_image(image.get("url"), image.get("detail"), f"{place}.image_url", model, tally)
            elif kind == "input_audio":
                tally.estimate("audio", 0, 0, None, "audio is not counted offline (no published rule): no upper bound")
            elif kind == "file":
                _openai_file(require_dict(part.get("file"), f"{place}.file"), f"{place}.file", tally)


_FLAT_KEYS = frozenset({"type", "description", "enum", "title", "default"})


def _flat_schema(parameters: Any) -> bool:
    """Whether a tool's parameters have the shape the cookbook's tool rule was verified on: each
    property a type, a description and maybe an enum (nested objects and arrays of objects go
    beyond what it counts)."""
    if not isinstance(parameters, dict):  # plain JSON data here (json_copy): dict checks are exact
        return True
    properties = parameters.get("properties") or {}
    if not isinstance(properties, dict):
        return False
    return all(isinstance(schema, dict) and schema.keys() <= _FLAT_KEYS and not isinstance(schema.get("type"), (list, dict))
               for schema in properties.values())


def _nested_texts(schema: Any, texts: List[str], depth: int = 0) -> int:
    """The ``key:type:description`` texts of properties below the top level, and their count:
    what an estimate adds to the cookbook's rule for a nested schema."""
    if not isinstance(schema, dict) or depth > 64:
        return 0
    found = 0
    for key in ("items", "additionalProperties"):
        found += _nested_texts(schema.get(key), texts, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        for option in schema.get(key) or ():
            found += _nested_texts(option, texts, depth + 1)
    for defs in ("$defs", "definitions"):
        for sub in (schema.get(defs) or {}).values() if isinstance(schema.get(defs), dict) else ():
            found += _nested_texts(sub, texts, depth + 1)
    properties = schema.get("properties")
    if depth > 0 and isinstance(properties, dict):
        for key, sub in properties.items():
            sub = sub if isinstance(sub, dict) else {}
            texts.append(f"{key}:{sub.get('type', '')}:{sub.get('description', '')}")
            found += 1
    if isinstance(properties, dict):
        for sub in properties.values():
            found += _nested_texts(sub, texts, depth + 1)
    return found


def _openai_tools(functions: List[Mapping[str, Any]], encoding: str, tally: _Tally) -> None:
    """Function tools by the cookbook's rule, an estimate with the range measured on recorded
    requests; nested schemas add their inner properties."""
    if not functions:
        return
    functions = json_copy(functions, "request.tools")
    tokens = tool_definition_tokens(functions, encoding)
    texts: List[str] = []
    nested = 0
    for function in functions:
        parameters = function.get("parameters", function.get("input_schema"))
        if not _flat_schema(parameters):
            nested += _nested_texts(parameters, texts) + 1
    extra = _texts_tokens(texts, encoding) + 3 * len(texts)
    slack = 8 * len(functions) + tokens // 20
    tally.estimate("tools", tokens + extra, max(0, tokens - slack), tokens + 2 * extra + 3 * nested + slack,
                   "tools: the cookbook's rule (exact on its own example; within 8 tokens a tool plus 5% on "
                   "recorded requests)" + (", plus the inner properties of nested schemas" if nested else ""))


def _function_of(tool: Any, where: str, tally: _Tally, builtin_ok: bool = True) -> Optional[Mapping[str, Any]]:
    """The function definition of a tool entry, or None for a built-in tool (noted, estimated)."""
    tool = require_dict(tool, where)
    kind = tool.get("type", "function")
    if kind == "function":
        function = tool.get("function", tool)
        function = require_dict(function, f"{where}.function" if "function" in tool else where)
        require_str(function.get("name"), f"{where}.name" if function is tool else f"{where}.function.name")
        parameters = function.get("parameters")
        if parameters is not None:
            require_dict(parameters, f"{where}.parameters" if function is tool else f"{where}.function.parameters")
        return function
    if kind == "custom":  # a free-form tool of Chat Completions or Responses
        custom = tool.get("custom", tool)
        require_str(require_dict(custom, where).get("name"), f"{where}.name")
        return {"name": custom["name"], "description": custom.get("description") or ""}
    require_str(kind, f"{where}.type")
    tally.estimate("tools", 0, 0, None, f"a {describe(kind)} tool adds a prompt of its own that is not published: "
                   "not counted, no upper bound")
    return None


def _response_format(schema: Any, where: str, encoding: str, tally: _Tally) -> None:
    """A JSON schema the reply must follow: its compact JSON, estimated (no rule is published)."""
    text = _json_text(schema, where)
    tokens = _core.count_tokens(text, encoding)
    tally.estimate("response_format", tokens, tokens // 2, tokens * 2,
                   "response_format: the schema's JSON tokens (OpenAI publishes no rule), within half to twice")


def _count_openai_chat(request: Mapping[str, Any], model: Optional[str], tally: _Tally) -> str:
    encoding, exact_encoding = _openai_encoding(model, tally)
    messages = require_list(request.get("messages"), "request.messages")
    counts = message_token_counts(messages, encoding)
    _openai_messages(sum(counts) + REPLY_PRIMING_TOKENS, exact_encoding, model, tally)
    calls = sum(len(m.get("tool_calls") or ()) + (m.get("function_call") is not None)
                for m in messages if isinstance(m, Mapping))
    _call_framing(calls, tally)
    _openai_parts(messages, model or "gpt-4o", tally, "request.messages")
    functions = []
    tools = request.get("tools")
    if tools is not None:
        for index, tool in enumerate(require_list(tools, "request.tools")):
            function = _function_of(tool, f"request.tools[{index}]", tally)
            if function is not None:
                functions.append(function)
    legacy = request.get("functions")
    if legacy is not None:
        for index, function in enumerate(require_list(legacy, "request.functions")):
            function = require_dict(function, f"request.functions[{index}]")
            require_str(function.get("name"), f"request.functions[{index}].name")
            functions.append(function)
    _openai_tools(functions, encoding, tally)
    response_format = request.get("response_format")
    if response_format is not None:
        response_format = require_dict(response_format, "request.response_format")
        if response_format.get("type") == "json_schema":
            schema = require_dict(response_format.get("json_schema"), "request.response_format.json_schema")
            _response_format(schema.get("schema", {}), "request.response_format.json_schema.schema", encoding, tally)
        elif response_format.get("type") not in ("text", "json_object", None):
            raise MessageError("request.response_format.type must be 'text', 'json_object' or 'json_schema', "
                               f"not {describe(response_format.get('type'))}")
    return f"{encoding}, OpenAI cookbook chat and tool rules, OpenAI image cost rules"


# Responses input items, as the chat messages they stand for.


def _responses_messages(request: Mapping[str, Any], tally: _Tally, model: str) -> Tuple[List[Dict[str, Any]],
                                                                                   List[Mapping[str, Any]]]:
    """Chat dicts for the Responses request's ``instructions`` and ``input`` items (their images and
    files counted on the way), and the tools that ``mcp_list_tools`` items list."""
    messages: List[Dict[str, Any]] = []
    listed: List[Mapping[str, Any]] = []
    instructions = request.get("instructions")
    if instructions is not None:
        messages.append({"role": "developer", "content": require_str(instructions, "request.instructions")})
    items = request.get("input", [])
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
        return messages, listed
    for index, item in enumerate(require_list(items, "request.input")):
        where = f"request.input[{index}]"
        item = require_dict(item, where)
        kind = item.get("type", "message")
        if kind == "message":
            role = require_str(item.get("role"), f"{where}.role")
            content = item.get("content")
            texts: List[str] = []
            if isinstance(content, str):
                texts.append(content)
            else:
                for place, part in _content_parts(content, f"{where}.content"):
                    part_kind = part.get("type")
                    if part_kind in ("input_text", "output_text", "text"):
                        texts.append(require_str(part.get("text"), f"{place}.text"))
                    elif part_kind == "refusal":
                        texts.append(require_str(part.get("refusal"), f"{place}.refusal"))
                    elif part_kind == "input_image":
                        if part.get("image_url") is None:
                            tally.estimate("images", 0, 0, None, f"an image by file id ({place}): not counted")
                        else:
                            before = tally.parts.get("images", 0)
                            _openai_image(part.get("image_url"), part.get("detail"), place, model, tally)
                            added = tally.parts["images"] - before
                            tally.estimate("images", 0, 0, added // 4,
                                           "Responses images: one recorded image cost 1.2x its chat figure")
                    elif part_kind == "input_file":
                        _openai_file(part, place, tally)
                    elif part_kind == "input_audio":
                        tally.estimate("audio", 0, 0, None, "audio is not counted offline: no upper bound")
                    else:
                        raise MessageError(f"{place}.type: unknown content part {describe(part_kind)}")
            messages.append({"role": role, "content": "\n".join(texts)})
        elif kind in ("function_call", "custom_tool_call", "mcp_call"):
            arguments = item.get("arguments", item.get("input", ""))
            if not isinstance(arguments, str):
                arguments = _json_text(arguments, f"{where}.arguments")
            name = require_str(item.get("name"), f"{where}.name")
            call = {"role": "assistant", "content": None,
                    "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]}
            messages.append(call)
            if kind == "mcp_call" and item.get("output") is not None:
                messages.append({"role": "tool", "content": _output_text(item.get("output"), f"{where}.output")})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            messages.append({"role": "tool", "content": _output_text(item.get("output"), f"{where}.output")})
        elif kind == "mcp_list_tools":
            for tool_index, tool in enumerate(require_list(item.get("tools", []), f"{where}.tools")):
                tool = require_dict(tool, f"{where}.tools[{tool_index}]")
                require_str(tool.get("name"), f"{where}.tools[{tool_index}].name")
                listed.append({"name": tool["name"], "description": tool.get("description") or "",
                               "parameters": tool.get("input_schema") or {}})
        elif kind in ("mcp_approval_request", "mcp_approval_response"):
            tally.estimate("messages", 0, 0, 16, "MCP approval items: their framing is not published (0-16 tokens each)")
        elif kind == "reasoning":
            if item.get("encrypted_content"):
                tally.estimate("reasoning", 0, 0, None, "encrypted reasoning items are not readable offline: "
                               "counted 0, no upper bound")
            else:
                summary = require_list(item.get("summary") or [], f"{where}.summary")
                texts = [require_str(require_dict(s, f"{where}.summary[{i}]").get("text", ""),
                                     f"{where}.summary[{i}].text") for i, s in enumerate(summary)]
                tally.estimate("reasoning", 0, 0, _texts_tokens(texts, "o200k_base"),
                               "reasoning items: OpenAI drops earlier turns' reasoning; counted 0, bounded by "
                               "the summary")
        elif kind == "item_reference":
            tally.estimate("messages", 0, 0, None, "an item_reference points at stored state: not counted")
        else:
            require_str(kind, f"{where}.type")
            tally.estimate("messages", 0, 0, None, f"a {describe(kind)} item (a built-in tool's call or state): "
                           "its rendering is not published; not counted")
    return messages, listed


def _output_text(output: Any, where: str) -> str:
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    parts = []
    for place, part in _content_parts(output, where):
        if part.get("type") in ("input_text", "output_text", "text"):
            parts.append(require_str(part.get("text"), f"{place}.text"))
    return "\n".join(parts)


def _count_openai_responses(request: Mapping[str, Any], model: Optional[str], tally: _Tally) -> str:
    encoding, _ = _openai_encoding(model, tally)
    messages, listed = _responses_messages(request, tally, model or "gpt-4o")
    counts = message_token_counts(messages, encoding)
    # Recorded Responses requests of plain messages count as the chat rules give (gpt-4.1, gpt-4o-mini:
    # 10 of 10), but no rule is published for them: an estimate within a token a message.
    total = sum(counts) + REPLY_PRIMING_TOKENS
    if model is not None and model.startswith(_REASONING_MODELS):
        total -= 1
    slack = 1 + len(messages)
    tally.estimate("messages", total, max(0, total - slack), total + slack,
                   "Responses items: the chat rules applied to them (no rule is published; recorded requests "
                   "match them)")
    calls = sum(1 for m in messages if m.get("tool_calls"))
    _call_framing(calls, tally)
    for key in ("previous_response_id", "conversation"):
        if request.get(key) is not None:
            tally.estimate("messages", 0, 0, None, f"{key}: the earlier turns OpenAI stores are not here: not "
                           "counted, no upper bound")
    functions = list(listed)
    for index, tool in enumerate(require_list(request.get("tools") or [], "request.tools")):
        where = f"request.tools[{index}]"
        if isinstance(tool, Mapping) and tool.get("type") == "mcp":
            require_str(tool.get("server_label"), f"{where}.server_label")
            if not listed:
                tally.estimate("tools", 0, 0, None, f"the MCP server {describe(tool['server_label'])} lists its tools "
                               "at request time: not counted (pass its mcp_list_tools item to count them)")
            continue
        function = _function_of(tool, where, tally)
        if function is not None:
            functions.append(function)
    _openai_tools(functions, encoding, tally)
    text = request.get("text")
    if text is not None:
        text_format = require_dict(text, "request.text").get("format")
        if text_format is not None and require_dict(text_format, "request.text.format").get("type") == "json_schema":
            _response_format(text_format.get("schema", {}), "request.text.format.schema", encoding, tally)
    return f"{encoding}, OpenAI cookbook chat and tool rules applied to Responses items, OpenAI image cost rules"


# -- Anthropic and Gemini: estimates ---------------------------------------------------------------


def _calibration(provider: str, model: Optional[str]) -> str:
    """The row of :data:`ESTIMATE_CALIBRATION` for the model."""
    if provider == "anthropic" and model is not None and _NEW_TOKENIZER.match(model):
        return "anthropic-opus-4.7"
    return provider


def _scaled(tally: _Tally, part: str, provider: str, raw: int, count: int, note: str) -> None:
    """``raw`` o200k tokens of text (and ``count`` messages) as the calibrated estimate of ``part``."""
    calibration = ESTIMATE_CALIBRATION[provider]
    tokens = round(raw * calibration["ratio"] + count * calibration["per_message"])
    tally.estimate(part, tokens, math.floor(tokens * calibration["low"]), math.ceil(tokens * calibration["high"]),
                   note)


def _base64_image(data: Any, where: str) -> Tuple[int, int]:
    decoded = data_url_bytes("data:;base64," + require_str(data, where), 1 << 16)
    size = image_size(decoded[1]) if decoded else None
    if size is None:
        full = data_url_bytes("data:;base64," + data)
        size = image_size(full[1]) if full else None
    if size is None:
        raise MessageError(f"{where} is not a PNG, JPEG, GIF or WebP image whose size can be read")
    return size


def _anthropic_blocks(content: Any, where: str, texts: List[str], tally: _Tally) -> None:
    if content is None:
        return
    if isinstance(content, str):
        texts.append(content)
        return
    for place, block in _content_parts(content, where):
        kind = block.get("type")
        if kind == "text":
            texts.append(require_str(block.get("text"), f"{place}.text"))
        elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
            texts.append(require_str(block.get("name"), f"{place}.name"))
            texts.append(_json_text(block.get("input", {}), f"{place}.input"))
        elif kind in ("tool_result", "mcp_tool_result"):
            _anthropic_blocks(block.get("content"), f"{place}.content", texts, tally)
        elif kind == "image":
            source = require_dict(block.get("source"), f"{place}.source")
            if source.get("type") == "base64":
                width, height = _base64_image(source.get("data"), f"{place}.source.data")
                tokens = anthropic_image_tokens(width, height)
                tally.estimate("images", tokens, tokens * 9 // 10, tokens + tokens // 10 + 1,
                               "images: Anthropic's published width x height / 750 (after scaling), which its "
                               "guide calls approximate")
            else:
                tally.estimate("images", anthropic_image_tokens(_UNKNOWN_SIDE, _UNKNOWN_SIDE), 1, 1600,
                               f"an image by URL or file ({place}): size unknown offline, estimated as 1024 x 1024")
        elif kind == "document":
            source = require_dict(block.get("source"), f"{place}.source")
            if source.get("type") == "text":
                texts.append(require_str(source.get("data"), f"{place}.source.data"))
                tally.estimate("documents", 38, 0, 60, "text documents: framing of their own (one recorded: 38)")
            elif source.get("type") == "content":
                _anthropic_blocks(source.get("content"), f"{place}.source.content", texts, tally)
            elif source.get("type") == "base64":
                decoded = data_url_bytes("data:;base64," + require_str(source.get("data"), f"{place}.source.data"))
                pages = pdf_page_count(decoded[1]) if decoded else None
                if pages:
                    low, high = pages * _PAGE_RANGE[0], pages * _PAGE_RANGE[1]
                    tally.estimate("documents", (low + high) // 2, low, high,
                                   "documents: Anthropic's published 1,500-3,000 tokens a PDF page")
                else:
                    tally.estimate("documents", 0, 0, None, f"{place}: not a PDF whose pages can be counted")
            else:
                tally.estimate("documents", 0, 0, None, f"a document by URL or file ({place}): not counted")
        elif kind in ("thinking", "redacted_thinking"):
            tally.note("thinking blocks: Anthropic drops earlier turns' thinking, so they are not counted")
        elif isinstance(kind, str) and kind.endswith("_tool_result"):  # web search results and the like
            texts.append(_json_text(block.get("content", ""), f"{place}.content"))
        elif kind == "mcp_tool_listing":
            texts.append(_json_text(block.get("tools", []), f"{place}.tools"))
            tally.note("mcp_tool_listing blocks: their tools counted as JSON text (how Anthropic renders a listing "
                       "is not published)")
        else:
            require_str(kind, f"{place}.type")
            tally.estimate("messages", 0, 0, None, f"a {describe(kind)} block: its cost is not published; not counted")


def _count_anthropic(request: Mapping[str, Any], model: Optional[str], tally: _Tally) -> str:
    texts: List[str] = []
    system = request.get("system")
    if system is not None:
        _anthropic_blocks(system, "request.system", texts, tally)
    messages = require_list(request.get("messages"), "request.messages")
    for index, message in enumerate(messages):
        where = f"request.messages[{index}]"
        message = require_dict(message, where)
        role = require_str(message.get("role"), f"{where}.role")
        if role not in ("user", "assistant"):
            raise MessageError(f"{where}.role must be 'user' or 'assistant', not {describe(role)}")
        _anthropic_blocks(message.get("content"), f"{where}.content", texts, tally)
    if request.get("mcp_servers"):
        tally.estimate("tools", 0, 0, None, "mcp_servers: the servers' tools are listed at request time: not counted")
    row = _calibration("anthropic", model)
    calibration = ESTIMATE_CALIBRATION[row]
    raw = _texts_tokens(texts, "o200k_base")
    _scaled(tally, "messages", row, raw + round(calibration["fixed"] / calibration["ratio"]), len(messages),
            f"text: o200k_base tokens x {calibration['ratio']} + {calibration['per_message']} a message "
            f"(Anthropic's tokenizer is not public; calibrated on {calibration['records']} recorded requests)")
    thinking = request.get("thinking")
    if thinking is not None and require_dict(thinking, "request.thinking").get("type") in ("enabled", "adaptive"):
        tally.estimate("messages", *_THINKING_PROMPT, "extended thinking: its prompt, as recorded requests show it")
    output_format = request.get("output_format")
    if output_format is None and isinstance(request.get("output_config"), Mapping):
        output_format = request["output_config"].get("format")
    config = request.get("output_config")
    if isinstance(config, Mapping) and set(config) - {"format"}:
        tally.estimate("messages", 20, 0, 60, "output_config (effort, task budget): a prompt of its own "
                       "(recorded: 0 to 40 tokens)")
    if output_format is not None:
        schema = require_dict(output_format, "request.output_format").get("schema", {})
        _response_format(schema, "request.output_format.schema", "o200k_base", tally)
        tally.estimate("response_format", *_OUTPUT_FORMAT_PROMPT,
                       "structured outputs: about 185 tokens of prompt besides the schema on recorded requests")
    tools = request.get("tools")
    if tools:
        tool_texts: List[str] = []
        for index, tool in enumerate(require_list(tools, "request.tools")):
            where = f"request.tools[{index}]"
            tool = require_dict(tool, where)
            if tool.get("type") == "function" and isinstance(tool.get("function"), Mapping):
                function = tool["function"]  # an OpenAI-style tool sent to Claude through a proxy
                tool = {"name": function.get("name"), "description": function.get("description") or "",
                        "input_schema": function.get("parameters") or {}}
            if "input_schema" in tool or tool.get("type") in (None, "custom"):
                tool_texts.append(require_str(tool.get("name"), f"{where}.name"))
                tool_texts.append(require_str(tool.get("description") or "", f"{where}.description"))
                tool_texts.append(_json_text(tool.get("input_schema", {}), f"{where}.input_schema"))
            else:
                tally.estimate("tools", 0, 0, None, f"a {describe(tool.get('type'))} server tool adds a prompt "
                               "that is not published: not counted, no upper bound")
        if tool_texts:
            _scaled(tally, "tools", row, _texts_tokens(tool_texts, "o200k_base"), 0,
                    "tools: their name, description and JSON schema, estimated like text")
            choice = request.get("tool_choice")
            choice_type = require_dict(choice, "request.tool_choice").get("type") if choice is not None else "auto"
            for prefix, auto, forced, auto_more, forced_more in _ANTHROPIC_TOOL_PROMPT:
                if (model or "claude-").startswith(prefix):
                    listed, more = (auto, auto_more) if choice_type in ("auto", "none") else (forced, forced_more)
                    point = listed + (more * 3) // 5
                    tally.estimate("tools", point, listed - listed // 4, listed + more,
                                   "tools: plus the tool-use system prompt Anthropic lists for the model and "
                                   "tool_choice, up to what recorded requests show")
                    break
    if request.get("context_management") is not None:
        tally.note("context_management: Anthropic may clear or compact earlier content first, so the count "
                   "may be far lower")
        tally.low = 0
    return "estimate: o200k_base text scaled by a ratio measured on recorded Anthropic usage"


def _gemini_parts(parts: Any, where: str, texts: List[str], tally: _Tally, model: str = "") -> None:
    for place, part in _content_parts(parts, where):
        if "text" in part:
            text = require_str(part.get("text"), f"{place}.text")
            if part.get("thought"):  # sent back, counted by some recorded requests and not others
                tokens = _core.count_tokens(text, "o200k_base")
                tally.estimate("reasoning", 0, 0, 2 * tokens, "thought parts: counted 0, up to twice their text")
            else:
                texts.append(text)
            continue
        inline = part.get("inlineData", part.get("inline_data"))
        if inline is not None:
            inline = require_dict(inline, f"{place}.inlineData")
            mime = require_str(inline.get("mimeType", inline.get("mime_type", "")), f"{place}.inlineData.mimeType")
            if mime.startswith("image/"):
                width, height = _base64_image(inline.get("data"), f"{place}.inlineData.data")
                if model.startswith("gemini-3"):
                    tally.estimate("images", _GEMINI_3_IMAGE, 258, _GEMINI_3_IMAGE,
                                   f"images: Gemini 3's default media resolution, up to {_GEMINI_3_IMAGE} tokens an image")
                else:
                    tokens = gemini_image_tokens(width, height)
                    tally.estimate("images", tokens, 258, max(tokens, 258 * 4),
                                   "images: Gemini's published 258 tokens, or 258 per 768 px tile for larger ones "
                                   "(how tiles are cut is not published)")
            elif mime == "application/pdf":
                decoded = data_url_bytes("data:;base64," + require_str(inline.get("data"), f"{place}.inlineData.data"))
                pages = pdf_page_count(decoded[1]) if decoded else None
                if pages:
                    tally.estimate("documents", 258 * pages, 258 * pages, _PAGE_RANGE[1] * pages,
                                   "documents: Gemini's published 258 tokens a page (plus any text it extracts)")
                else:
                    tally.estimate("documents", 0, 0, None, f"{place}: a PDF whose pages cannot be counted")
            else:
                tally.estimate("media", 0, 0, None, f"{describe(mime)} media: not counted offline")
            continue
        call = part.get("functionCall", part.get("function_call"))
        if call is not None:
            call = require_dict(call, f"{place}.functionCall")
            texts.append(require_str(call.get("name"), f"{place}.functionCall.name"))
            texts.append(_json_text(call.get("args", {}), f"{place}.functionCall.args"))
            continue
        response = part.get("functionResponse", part.get("function_response"))
        if response is not None:
            response = require_dict(response, f"{place}.functionResponse")
            texts.append(require_str(response.get("name"), f"{place}.functionResponse.name"))
            texts.append(_json_text(response.get("response", {}), f"{place}.functionResponse.response"))
            if response.get("parts") is not None:  # media a Gemini 3 tool returns
                _gemini_parts(response.get("parts"), f"{place}.functionResponse.parts", texts, tally, model)
            continue
        if part.get("fileData", part.get("file_data")) is not None:
            tally.estimate("media", 0, 0, None, f"a file by URI ({place}): not counted offline")
            continue
        if not set(part) <= {"thoughtSignature", "thought_signature", "thought"}:
            raise MessageError(f"{place}: unknown part with keys {', '.join(map(str, list(part)[:5]))}")


def _count_gemini(request: Mapping[str, Any], model: Optional[str], tally: _Tally) -> str:
    texts: List[str] = []
    system = request.get("systemInstruction", request.get("system_instruction"))
    if system is not None:
        if isinstance(system, str):
            texts.append(system)
        else:
            _gemini_parts(require_dict(system, "request.systemInstruction").get("parts"),
                          "request.systemInstruction.parts", texts, tally, model or "")
    contents = require_list(request.get("contents"), "request.contents")
    for index, content in enumerate(contents):
        where = f"request.contents[{index}]"
        content = require_dict(content, where)
        _gemini_parts(content.get("parts"), f"{where}.parts", texts, tally, model or "")
    calibration = ESTIMATE_CALIBRATION["gemini"]
    _scaled(tally, "messages", "gemini", _texts_tokens(texts, "o200k_base"), len(contents),
            f"text: o200k_base tokens x {calibration['ratio']} + {calibration['per_message']} a turn "
            f"(Gemini's tokenizer is not public; calibrated on {calibration['records']} recorded requests)")
    if request.get("cachedContent", request.get("cached_content")) is not None:
        tally.estimate("messages", 0, 0, None, "cachedContent: the cached turns are not here: not counted")
    if (model or "").startswith("gemini-3"):
        tally.estimate("messages", 0, 0, None, "Gemini 3: recorded requests count up to several times the text "
                       "estimate (its prompt framing is not published): no upper bound")
    tool_texts: List[str] = []
    for index, tool in enumerate(require_list(request.get("tools") or [], "request.tools")):
        tool = require_dict(tool, f"request.tools[{index}]")
        declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
        if declarations is None:
            tally.estimate("tools", 0, 0, None, "a built-in Gemini tool (search, code execution, ...): not counted")
            continue
        for place, declaration in _content_parts(declarations, f"request.tools[{index}].functionDeclarations"):
            tool_texts.append(_json_text(declaration, place))
    if tool_texts:
        # Recorded requests count declarations at 0.3 to 2.4 times their JSON's tokens (more with
        # toolConfig's VALIDATED mode).
        raw = _texts_tokens(tool_texts, "o200k_base")
        tally.estimate("tools", raw, raw // 4, raw * 5 // 2 + 30, "tools: their declarations' JSON tokens, within "
                       "a quarter to 2.5 times and 30 (as recorded requests show)")
    config = request.get("generationConfig", request.get("generation_config"))
    if config is not None:
        config = require_dict(config, "request.generationConfig")
        for key in ("responseSchema", "response_schema", "responseJsonSchema", "response_json_schema"):
            if config.get(key) is not None:
                # Recorded requests show Gemini's promptTokenCount leaves the schema out.
                tokens = _core.count_tokens(_json_text(config[key], f"request.generationConfig.{key}"), "o200k_base")
                tally.estimate("response_format", 0, 0, tokens, "response schema: not in Gemini's recorded "
                               "prompt counts; bounded by the schema's tokens")
    return "estimate: o200k_base text scaled by a ratio measured on recorded Gemini usage"


# -- the entry point -------------------------------------------------------------------------------


def count_request_tokens(request: Mapping[str, Any], model: Optional[str] = None,
                         provider: Optional[str] = None) -> RequestCount:
    """The input tokens of a whole request, as a :class:`RequestCount` that says how each part was
    counted and which parts are estimates.

    ``request`` is the request body as sent (a dict, or an SDK's params TypedDict): OpenAI Chat
    Completions (``messages``), OpenAI Responses (``input``, ``instructions``), Anthropic Messages
    (``messages`` with a Claude model or a ``system``) or Gemini (``contents``). ``model`` defaults
    to the request's ``model``; ``provider`` (one of :data:`REQUEST_PROVIDERS`) to the format
    read from the fields. A malformed request raises :class:`agentmsg.MessageError` (a
    ``ValueError``) or :class:`agentmsg.MessageTypeError` (a ``TypeError``) naming the field's path.

    >>> weather = {"type": "function", "function": {"name": "get_weather", "description": "Weather.",
    ...     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
    >>> count = count_request_tokens({"model": "gpt-4o", "tools": [weather],
    ...                               "messages": [{"role": "user", "content": "Weather in Paris?"}]})
    >>> count.total, count.exact, dict(count.parts), count.estimated, count.error_range
    (43, False, {'messages': 11, 'tools': 32}, ('tools',), (34, 52))
    """
    request = require_dict(request, "request")
    if model is None and request.get("model") is not None:
        model = require_str(request.get("model"), "request.model")
    elif model is not None:
        model = require_str(model, "model")
    if provider is None:
        provider = _provider_of(request, model)
    elif provider not in REQUEST_PROVIDERS:
        raise MessageError(f"provider must be one of {', '.join(REQUEST_PROVIDERS)}, not {describe(provider)}")
    tally = _Tally()
    counters = {"openai": _count_openai_chat, "openai-responses": _count_openai_responses,
                "anthropic": _count_anthropic, "gemini": _count_gemini}
    method = counters[provider](request, model, tally)
    return tally.result(provider, model, method)


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
