"""Dialects read from what a model ships: its ``response_template`` (transformers' response
parsing spec) and its Jinja chat template. ``agentmsg.Dialect.from_response_template`` and
``Dialect.from_chat_template`` call these; each returns the parts of a dialect as a
:class:`DerivedDialect`, which ``options`` turns into parse options.

    >>> spec = {"start_anchor": "<|im_start|>assistant\\n", "fields": {
    ...     "thinking": {"open": "<think>", "close": "</think>"},
    ...     "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
    ...                    "transform": {"type": "function", "function": "{content}"}},
    ...     "content": {"close": "<|im_end|>"}}}
    >>> response_template_dialect(spec).name
    'hermes'
"""

from __future__ import annotations

import re
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple

from ._checks import check_calls, describe, type_name
from .errors import DialectTemplateError, MessageTypeError

__all__ = ["DerivedDialect", "response_template_dialect", "NAMED_MARKER_DIALECTS"]


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


check_calls(globals())
