"""Dialects read from what a model ships: its ``response_template`` (transformers' response
parsing spec) and its Jinja chat template. ``agentmsg.Dialect.from_response_template`` and
``Dialect.from_chat_template`` (which passes the core's Jinja renderer) call these; each returns
the parts of a dialect as a :class:`DerivedDialect`, which ``options`` turns into parse options.

    >>> spec = {"start_anchor": "<|im_start|>assistant\\n", "fields": {
    ...     "thinking": {"open": "<think>", "close": "</think>"},
    ...     "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
    ...                    "transform": {"type": "function", "function": "{content}"}},
    ...     "content": {"close": "<|im_end|>"}}}
    >>> response_template_dialect(spec).name
    'hermes'
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from ._checks import check_calls, describe, type_name
from .errors import DialectTemplateError, MessageTypeError

__all__ = ["DerivedDialect", "response_template_dialect", "chat_template_dialect", "NAMED_MARKER_DIALECTS"]


class DerivedDialect(NamedTuple):
    """A dialect derived from a model's files: ``name`` is one of ``agentmsg.DIALECTS`` when the
    markers are exactly that dialect's, else ``None`` and ``parts`` are the keyword arguments of
    ``agentmsg.Dialect``; ``start_in_thinking`` when the prompt opens the reasoning.

    >>> DerivedDialect("hermes", {}, False).name
    'hermes'
    """

    name: Optional[str]
    parts: Dict[str, str]
    start_in_thinking: bool


#: The built-in dialects that a custom dialect's parts can describe exactly: parts -> name.
NAMED_MARKER_DIALECTS: Tuple[Tuple[Dict[str, str], str], ...] = (
    ({"call_start": "<tool_call>", "call_end": "</tool_call>", "payload": "json", "name_key": "name",
      "arguments_key": "arguments", "think_start": "<think>", "think_end": "</think>"}, "hermes"),
    ({"call_start": "<tool_call>", "call_end": "</tool_call>", "payload": "qwen3_coder",
      "think_start": "<think>", "think_end": "</think>"}, "qwen3_coder"),
    ({"call_start": "<tool_call>", "call_end": "</tool_call>", "payload": "glm45",
      "think_start": "<think>", "think_end": "</think>"}, "glm45"),
)


def named_or_custom(parts: Dict[str, str], start_in_thinking: bool) -> DerivedDialect:
    """The named dialect whose markers ``parts`` are exactly, else the custom parts."""
    given = {key: value for key, value in parts.items() if key != "name"}
    defaults = {"payload": "json", "name_key": "name", "arguments_key": "arguments"}
    for named_parts, name in NAMED_MARKER_DIALECTS:
        if {**defaults, **named_parts} == {**defaults, **given}:
            return DerivedDialect(name, {}, start_in_thinking)
    return DerivedDialect(None, parts, start_in_thinking)


# -- response_template (transformers >= 5.13, tokenizer.parse_response) ----------------------------

_TEMPLATE_KEYS = {"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"}
_FIELD_KEYS = {"open", "open_pattern", "close", "close_pattern", "content", "content_args", "repeats", "join",
               "optional", "transform", "transform_each"}
#: The output keys transformers' templates put reasoning under.
REASONING_FIELDS = ("thinking", "reasoning_content", "reasoning")
_PLACEHOLDER = re.compile(r"\{content(?:\.(\w+))?\}")


def _fail(field: Optional[str], reason: str) -> DialectTemplateError:
    where = f"response_template field {field!r}" if field is not None else "response_template"
    return DialectTemplateError(f"{where}: {reason}")


def _literal(field_name: str, field: Mapping[str, Any], key: str, required: bool) -> Optional[str]:
    """The one literal marker under ``key``; a regex (``key_pattern``) or several literals is an error."""
    if f"{key}_pattern" in field:
        raise _fail(field_name, f"'{key}_pattern' is a regex; only literal markers ('{key}': \"...\") compile "
                                "to a streaming dialect (describe the model with agentmsg.Dialect(...) or a named dialect)")
    value = field.get(key)
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if value is None:
        if required:
            raise _fail(field_name, f"has no '{key}' marker; a region that runs to the end of the reply is not a "
                                    "dialect's reasoning or call")
        return None
    if not isinstance(value, str):
        raise _fail(field_name, f"'{key}' must be one literal str here, not {describe(value)}")
    if not value:
        raise _fail(field_name, f"'{key}' is empty")
    return value


def _call_keys(field_name: str, transform: Any) -> Tuple[str, str]:
    """The JSON keys of the call's name and arguments that the ``transform`` reads."""
    shape = "{'type': 'function', 'function': '{content}'} or {'type': 'function', 'function': " \
            "{'name': '{content.KEY}', 'arguments': '{content.KEY}'}}"
    if not isinstance(transform, Mapping) or transform.get("type") != "function" or set(transform) != {"type", "function"}:
        raise _fail(field_name, f"the transform must be {shape}, not {describe(transform)}")
    function = transform["function"]
    if function == "{content}":
        return "name", "arguments"
    if isinstance(function, Mapping) and set(function) == {"name", "arguments"}:
        keys = []
        for part in ("name", "arguments"):
            value = function[part]
            match = _PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
            if match is None or match.group(1) is None:
                raise _fail(field_name, f"the transform's function.{part} must be '{{content.KEY}}' (a key of the "
                                        f"call's JSON object), not {describe(value)}: captures of a regex header "
                                        "do not compile to markers")
            keys.append(match.group(1))
        return keys[0], keys[1]
    raise _fail(field_name, f"the transform must be {shape}, not {describe(transform)}")


def _check_field(name: str, field: Any) -> Mapping[str, Any]:
    if not isinstance(field, Mapping):
        raise _fail(name, f"must be a dict, not {type_name(field)}")
    unknown = set(field) - _FIELD_KEYS
    if unknown:
        raise _fail(name, f"unknown keys {sorted(unknown)}")
    return field


def response_template_dialect(spec: Mapping[str, Any]) -> DerivedDialect:
    """The dialect of a transformers ``response_template`` (or a ``tokenizer_config.json`` dict
    holding one): its reasoning field (``thinking``) and its ``tool_calls`` field with literal
    markers and a JSON object payload, and its implicit ``content`` field. What does not fit
    raises :class:`~agentmsg.errors.DialectTemplateError` naming the field and why.

    >>> response_template_dialect({"start_anchor": "<s>", "fields": {"tool_calls": {"open": "[CALL]",
    ...     "close": "[/CALL]", "repeats": True, "content": "json",
    ...     "transform": {"type": "function", "function": "{content}"}}, "content": {}}}).parts["call_start"]
    '[CALL]'
    """
    if isinstance(spec, Mapping) and "fields" not in spec and isinstance(spec.get("response_template"), Mapping):
        spec = spec["response_template"]  # a tokenizer_config.json
    if not isinstance(spec, Mapping):
        raise MessageTypeError(f"a response_template must be a dict, not {type_name(spec)}")
    if spec.get("version", 1) != 1:
        raise _fail(None, f"unsupported version {describe(spec.get('version'))} (version 1 is read)")
    unknown = set(spec) - _TEMPLATE_KEYS
    if unknown:
        raise _fail(None, f"unknown keys {sorted(unknown)}")
    fields = spec.get("fields")
    if not isinstance(fields, Mapping) or not fields:
        raise _fail(None, "'fields' must be a non-empty dict")
    parts: Dict[str, str] = {}
    for name, raw in fields.items():
        field = _check_field(name, raw)
        content = field.get("content", "text")
        if "open" not in field and "open_pattern" not in field:
            if name != "content" or content != "text" or "transform" in field:
                raise _fail(name, "the field with no 'open' (the text outside every region) must be 'content' "
                                  "of content 'text': it is the reply's text")
            if field.get("content_args", {}).get("strip", True) is not True:
                raise _fail(name, "strip=False keeps blanks the dialects strip from text")
            _literal(name, field, "close", required=False)  # an end-of-turn token: checked, not needed
        elif name in REASONING_FIELDS:
            if content != "text" or "transform" in field or field.get("content_args", {}).get("strip", True) is not True:
                raise _fail(name, "reasoning must be plain stripped text (content 'text', no transform)")
            parts["think_start"] = _literal(name, field, "open", required=True) or ""
            parts["think_end"] = _literal(name, field, "close", required=True) or ""
        elif name == "tool_calls":
            if field.get("transform_each"):
                raise _fail(name, "transform_each (all calls in one JSON list) is not a marker dialect")
            if content == "xml-inline":
                raise _fail(name, "xml-inline parameters are typed by guessing JSON (value_parser), which no "
                                  "dialect does: use the named dialect (qwen3_coder, glm45) with tools=")
            if content != "json":
                raise _fail(name, f"content {describe(content)} is not a JSON object payload")
            args = field.get("content_args") or {}
            if any(args.get(key) for key in ("unquoted_keys", "string_delims", "allow_non_json")):
                raise _fail(name, f"content_args {sorted(key for key in args if args[key])} relax JSON, which "
                                  "the dialects read strictly")
            parts["call_start"] = _literal(name, field, "open", required=True) or ""
            parts["call_end"] = _literal(name, field, "close", required=True) or ""
            parts["name_key"], parts["arguments_key"] = _call_keys(name, field.get("transform"))
        else:
            raise _fail(name, "agentmsg reads reasoning ('thinking'), tool calls ('tool_calls') and text "
                              "('content'); a field of another name has no place in a parse result")
    if "call_start" not in parts:
        raise _fail(None, "has no 'tool_calls' field with literal markers: nothing to read calls by")
    parts["name"] = "response_template"
    return named_or_custom(parts, False)


# -- Jinja chat templates, read by rendering probe messages (the idea of llama.cpp's autoparser) ---

#: Renders a chat template: (messages, tools, add_generation_prompt) -> the prompt text.
Render = Callable[[List[Dict[str, Any]], List[Dict[str, Any]], bool], str]
#: Parses a reply with a dialect: (text, dialect name or Dialect parts, start_in_thinking) -> Parsed.
Reader = Callable[[str, Union[str, Dict[str, str]], bool], Any]

PROBE_TOOL, PROBE_KEY = "probe_tool", "probe_key"
PROBE_VALUES = ("probe_value", "second_value")
PROBE_USER, PROBE_ANSWER, PROBE_THINKING = "PROBE_USER", "PROBE_ANSWER", "PROBE_THINKING"
PROBE_TOOLS: List[Dict[str, Any]] = [{"type": "function", "function": {
    "name": PROBE_TOOL, "description": "A probe.",
    "parameters": {"type": "object", "properties": {PROBE_KEY: {"type": "string", "description": "A value."}},
                   "required": [PROBE_KEY]}}}]


def _call(index: int) -> Dict[str, Any]:
    # Nine letters and digits: Mistral's templates refuse other ids.
    return {"id": f"call{index}abcd", "type": "function",
            "function": {"name": PROBE_TOOL, "arguments": {PROBE_KEY: PROBE_VALUES[index]}}}


def _assistant(content: str, calls: int = 0, thinking: bool = False) -> Dict[str, Any]:
    message: Dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [_call(i) for i in range(calls)]
    if thinking:
        # Templates read reasoning under either name.
        message["reasoning_content"] = message["thinking"] = PROBE_THINKING
    return message


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _rest_of_header(prompt: str, generation_prompt: str, text: str, start: int) -> int:
    """How much of the reply's header is still ahead at ``text[start]``: the prompt wrote another
    turn (Command R+'s closing instruction) between the header's first token and the rest."""
    for k in range(len(generation_prompt) - 1, 0, -1):
        rest = generation_prompt[k:]
        if (text.startswith(rest, start) and text.endswith(generation_prompt[:k], 0, start)
                and not prompt.startswith(rest, start)):
            return len(rest)
    return 0


def _shared_turns(reply: str, end_of_turn: str) -> int:
    """The end of a plain reply's end-of-turn text that ``reply`` ends with, from a marker's
    start: a turn the template writes after every message (Command R+'s instruction), which a
    calling turn that ends otherwise than a plain one still has after it."""
    shared = _common_prefix(reply[::-1], end_of_turn[::-1])
    marker = reply.find("<", len(reply) - shared)
    return len(reply) - marker if shared and marker >= 0 else 0


class _Probes:
    """The replies a template writes for each probe message: the text after the prompt and before
    the end-of-turn text that every reply shares."""

    def __init__(self, render: Render) -> None:
        user = {"role": "user", "content": PROBE_USER}
        self.prompt = render([user], PROBE_TOOLS, True)
        # What add_generation_prompt adds: the reply's header, and maybe a reasoning opener.
        history = render([user], PROBE_TOOLS, False)
        self.generation_prompt = self.prompt[_common_prefix(history, self.prompt):]
        probes = {
            "plain": _assistant(PROBE_ANSWER),
            "call": _assistant("", calls=1),
            "calls": _assistant("", calls=2),
            "text_call": _assistant(PROBE_ANSWER, calls=1),
            "thinking": _assistant(PROBE_ANSWER, thinking=True),
        }
        rendered: Dict[str, str] = {}
        for name, message in probes.items():
            try:
                rendered[name] = render([user, message], PROBE_TOOLS, False)
            except ValueError as error:
                if name in ("plain", "call"):
                    raise DialectTemplateError(f"the chat template does not render an assistant message "
                                               f"{'with a tool call' if name == 'call' else 'of text'}: {error}") from None
                # A template may refuse a probe (Llama 3.1 refuses parallel calls): it is not read.
        # The end-of-turn text is what follows a plain reply's text.
        plain = rendered["plain"]
        end_of_turn = plain[plain.rindex(PROBE_ANSWER) + len(PROBE_ANSWER):] if PROBE_ANSWER in plain else ""
        self.replies: Dict[str, str] = {}
        for name, text in rendered.items():
            start = _common_prefix(self.prompt, text)
            if start < len(self.prompt):
                # The prompt wrote more than the message does (an opener such as "<think>"): the
                # reply starts after the last whole marker they share, not inside one.
                start = max(self.prompt.rfind(c, 0, start) for c in (">", "]", "\n", " ")) + 1
                start += _rest_of_header(self.prompt, self.generation_prompt, text, start)
            stop = len(text) - len(end_of_turn) if end_of_turn and text.endswith(end_of_turn) else len(text)
            if end_of_turn and stop == len(text):
                stop -= _shared_turns(text[start:], end_of_turn)
            self.replies[name] = text[start:max(start, stop)]
        if PROBE_VALUES[1] not in self.replies.get("calls", PROBE_VALUES[1]):
            del self.replies["calls"]  # one call per message (gpt-oss writes only the first)
        self.shows_thinking = PROBE_THINKING in self.replies.get("thinking", "")

    def reasoning_markers(self) -> Optional[Tuple[str, str, bool]]:
        """(think_start, think_end, whether the prompt opens it), when the template writes reasoning."""
        if not self.shows_thinking:
            return None
        reply = self.replies["thinking"]
        at = reply.index(PROBE_THINKING)
        after = reply[at + len(PROBE_THINKING):]
        end = after[:after.find(PROBE_ANSWER)].strip() if PROBE_ANSWER in after else ""
        before = reply[:at].strip()
        if not end:
            return None
        # The opener is what the reply writes before the reasoning, else the closer without its '/'
        # (the prompt wrote it).
        opener = before.splitlines()[-1].strip() if before else end.replace("/", "", 1)
        if opener == end:
            return None
        return opener, end, self.prompt.rstrip().endswith(opener)


def _expected_calls(count: int) -> List[Tuple[str, Dict[str, str]]]:
    return [(PROBE_TOOL, {PROBE_KEY: PROBE_VALUES[i]}) for i in range(count)]


def _reads(probes: _Probes, dialect: Union[str, Dict[str, str]], think: Optional[Tuple[str, str, bool]],
           read: Reader) -> bool:
    """Whether ``dialect`` reads every probe reply as what the probe message held."""
    start_in_thinking = think is not None and think[2]
    for name, calls in (("plain", 0), ("call", 1), ("calls", 2), ("text_call", 1), ("thinking", 0)):
        if name not in probes.replies:
            continue
        reply = probes.replies[name]
        # A message of the history may write the opener the prompt writes for a reply.
        starts_inside = start_in_thinking and not (think is not None and reply.lstrip().startswith(think[0]))
        try:
            parsed = read(reply, dialect, starts_inside)
        except ValueError:
            return False
        text = PROBE_ANSWER if PROBE_ANSWER in reply else ""
        thinking = [t for t in parsed.thinking if t]
        expected_thinking = [PROBE_THINKING] if name == "thinking" and probes.shows_thinking else []
        if name == "text_call" and not parsed.text and thinking == [PROBE_ANSWER]:
            # The template writes a calling message's text as reasoning (gpt-oss's analysis channel).
            text, expected_thinking = "", [PROBE_ANSWER]
        got = [(call.name, call.input) for call in parsed.tool_calls]
        if parsed.errors or parsed.text != text or got != _expected_calls(calls) or thinking != expected_thinking:
            return False
    return True


def _payload_markers(call_reply: str, think: Optional[Tuple[str, str, bool]]) -> Optional[Dict[str, str]]:
    """The call markers and payload of a marker dialect, read around the probe call in the reply."""
    if think is not None and think[1] in call_reply:
        call_reply = call_reply[call_reply.rindex(think[1]) + len(think[1]):]
    name_at = call_reply.find(PROBE_TOOL)
    if name_at < 0:
        return None
    if (element := call_reply.rfind("<function=", 0, name_at)) >= 0 and f"<parameter={PROBE_KEY}>" in call_reply:
        start, end = call_reply[:element], call_reply[call_reply.rfind("</function>") + len("</function>"):]
        parts = {"payload": "qwen3_coder"}
    elif f"<arg_key>{PROBE_KEY}</arg_key>" in call_reply:
        start, end = call_reply[:name_at], call_reply[call_reply.rfind("</arg_value>") + len("</arg_value>"):]
        parts = {"payload": "glm45"}
    else:
        decoder = json.JSONDecoder()
        for brace in [i for i, c in enumerate(call_reply[:name_at]) if c == "{"][::-1]:
            try:
                payload, stop = decoder.raw_decode(call_reply, brace)
            except ValueError:
                continue
            if not isinstance(payload, dict):
                continue
            names = [k for k, v in payload.items() if v == PROBE_TOOL]
            probe_arguments = {PROBE_KEY: PROBE_VALUES[0]}
            arguments = [k for k, v in payload.items() if v in (probe_arguments, json.dumps(probe_arguments))]
            if len(names) == 1 and len(arguments) == 1:
                start, end = call_reply[:brace], call_reply[stop:]
                parts = {"payload": "json", "name_key": names[0], "arguments_key": arguments[0]}
                break
        else:
            return None
    start, end = start.strip(), end.strip()
    if not start or not end or any(c.isspace() for c in start + end):
        return None
    return {**parts, "call_start": start, "call_end": end}


def _opens_reasoning(probes: _Probes, dialect: Union[str, Dict[str, str]], read: Reader) -> bool:
    """Whether the generation prompt leaves a reasoning block of ``dialect`` open (the template
    writes ``<think>`` for the model, as QwQ's and DeepSeek R1's do)."""
    parsed = read(probes.generation_prompt, dialect, False)
    return bool(parsed.incomplete_thinking) and not any(t.strip() for t in parsed.thinking)


def chat_template_dialect(render: Render, read: Reader, dialect_names: Sequence[str]) -> DerivedDialect:
    """The dialect a chat template writes, found by rendering probe messages with ``render``: a
    reply with a known call, two calls, text and a call, reasoning, and plain text. The first of
    ``dialect_names`` that reads every probe reply back as what the probe held is the result;
    else a custom dialect of the reasoning and call markers read around the probes' texts, if it
    reads them back. ``start_in_thinking`` when the generation prompt leaves reasoning open. A
    template whose replies no dialect reads back raises
    :class:`~agentmsg.errors.DialectTemplateError` showing what it wrote for a call.
    """
    probes = _Probes(render)
    if PROBE_TOOL not in probes.replies["call"]:
        raise DialectTemplateError(
            "the chat template writes no tool call: an assistant message with tool_calls renders as "
            f"{describe(probes.replies['call'])}")
    think = probes.reasoning_markers()
    start_in_thinking = think is not None and think[2]
    for name in dialect_names:
        if _reads(probes, name, think, read):
            return DerivedDialect(name, {}, start_in_thinking or _opens_reasoning(probes, name, read))
    parts = _payload_markers(probes.replies["call"], think)
    if parts is not None:
        parts["name"] = "chat_template"
        if think is not None:
            parts["think_start"], parts["think_end"] = think[0], think[1]
        try:
            reads = _reads(probes, parts, think, read)
        except ValueError:
            reads = False
        if reads:
            return named_or_custom(parts, start_in_thinking or _opens_reasoning(probes, parts, read))
    raise DialectTemplateError(
        "no dialect reads the chat template's replies back: an assistant message with one tool call "
        f"renders as {describe(probes.replies['call'])}, with reasoning as "
        f"{describe(probes.replies.get('thinking', ''))}; describe the model with agentmsg.Dialect(...)")


check_calls(globals())
