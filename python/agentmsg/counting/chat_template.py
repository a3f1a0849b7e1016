"""Models' Jinja chat templates, rendered in the Rust core exactly as transformers'
``apply_chat_template(..., tokenize=False)`` renders them.

    >>> template = ChatTemplate("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\\n{% endfor %}"
    ...                         "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    >>> render_chat([agentmsg.user("Hi")], template)
    '<|user|>Hi\\n<|assistant|>'

A history in any form :func:`agentmsg.as_messages` reads becomes the dicts a template sees
(:func:`template_messages`, the one definition); the template gets them as ``messages``, with
``tools``, ``documents`` (``None``), ``add_generation_prompt``, the template's special tokens
(``bos_token``, ``eos_token``, ...) and the caller's keyword arguments (``enable_thinking``...),
as transformers passes them. Templates are untrusted: they see only those values, and a render
is bounded by fuel and output size (:class:`agentmsg.errors.TemplateError`, kind ``"limit"``).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from .. import _core
from .._checks import check_calls, describe, type_name
from ..errors import MessageTypeError, TemplateError
from ..model.blocks import (
    AudioBlock, DocumentBlock, ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, VideoBlock,
)
from ..model.message import ROLE_NAMES, Message
from ..readers import read_messages

__all__ = ["ChatTemplate", "render_chat", "template_messages"]

#: The special tokens of a ``tokenizer_config.json`` that transformers passes to a template
#: (its ``special_tokens_map``), in its order.
SPECIAL_TOKEN_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")

#: A render's default budget: MiniJinja fuel (one per instruction and per 64 bytes made, so at
#: most about 640 MB of data) and output bytes. A 10,000-message history with tools takes less
#: than a million fuel.
DEFAULT_FUEL = 10_000_000
DEFAULT_MAX_OUTPUT_BYTES = 64 << 20

_MEDIA_TYPES: Dict[type, str] = {ImageBlock: "image", AudioBlock: "audio", VideoBlock: "video",
                                 DocumentBlock: "document"}


def _template_message(message: Message) -> Dict[str, Any]:
    blocks = message.content
    result: Dict[str, Any]
    if len(blocks) == 1 and blocks[0].__class__ is TextBlock and message.reasoning_content is None:
        # Most messages of a history are one text (this runs for every message of every render).
        result = {"role": ROLE_NAMES[message.role], "content": blocks[0].text}
        if message.tool_id is not None:
            result["tool_call_id"] = message.tool_id
        if message.name is not None:
            result["name"] = message.name
        return result
    # One pass over the blocks: the text as Message.text joins it, and the blocks each field is
    # made of.
    texts: List[str] = []
    thinking: List[str] = []
    calls: List[ToolUseBlock] = []
    result_id: Optional[str] = None
    media = False
    block: Any  # dispatched on its class, which mypy cannot follow through `kind`
    for block in blocks:
        kind = block.__class__
        if kind is TextBlock:
            texts.append(block.text)
        elif kind is ToolUseBlock:
            calls.append(block)
        elif kind is ThinkingBlock:
            thinking.append(block.thinking)
        elif kind is ToolResultBlock:
            texts.append(block.text)
            if result_id is None:
                result_id = block.tool_use_id or ""
        elif kind in _MEDIA_TYPES:
            media = True
        elif isinstance(block, (TextBlock, ToolResultBlock)):
            texts.append(block.text)
    content: Union[str, List[Dict[str, Any]]]
    if media:
        # transformers' multimodal form: the parts in order, media as {"type": "image"}.
        content = [
            {"type": "text", "text": block.text} if type(block) is TextBlock else {"type": _MEDIA_TYPES[type(block)]}
            for block in message.content
            if type(block) is TextBlock or type(block) in _MEDIA_TYPES
        ]
    else:
        content = "\n".join(texts)
    reasoning = "\n".join(thinking) if thinking else message.reasoning_content
    result = {}
    if reasoning is not None:
        # transformers fills `thinking` (which gpt-oss reads) first and `reasoning_content` after.
        result["thinking"] = reasoning
    result["role"] = ROLE_NAMES[message.role]
    result["content"] = content
    if reasoning is not None:
        result["reasoning_content"] = reasoning
    if calls:
        result["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.input}}
            for call in calls
        ]
    if message.tool_id is not None:
        result["tool_call_id"] = message.tool_id
    elif result_id:
        result["tool_call_id"] = result_id
    if message.name is not None:
        result["name"] = message.name
    return result


def template_messages(messages: Iterable[Any]) -> List[Dict[str, Any]]:
    """The dicts a chat template sees for ``messages`` (any form :func:`agentmsg.as_messages`
    reads): OpenAI's chat shape, as transformers expects it.

    - ``role``: ``system``, ``user``, ``assistant`` or ``tool``;
    - ``content``: the text (text blocks joined with newlines; a tool message's result text),
      ``""`` when there is none; a message with images, audio or video has the list of its
      parts instead (``{"type": "text", "text": ...}``, ``{"type": "image"}``, ...);
    - ``thinking`` (first) and ``reasoning_content`` (after ``content``): the reasoning, when
      the message has any, as transformers aliases it;
    - ``tool_calls``: ``[{"id", "type": "function", "function": {"name", "arguments"}}]`` with
      ``arguments`` a dict, as chat templates read it;
    - ``tool_call_id`` on a tool result, and ``name`` when the message has one.

    >>> template_messages([agentmsg.assistant("4", thinking="2+2", tool_calls=[agentmsg.ToolUseBlock("c1", "add", {"a": 2})]),
    ...                    {"role": "tool", "tool_call_id": "c1", "content": "4"}])
    [{'thinking': '2+2', 'role': 'assistant', 'content': '4', 'reasoning_content': '2+2', 'tool_calls': [{'id': 'c1', 'type': 'function', 'function': {'name': 'add', 'arguments': {'a': 2}}}]}, {'role': 'tool', 'content': '4', 'tool_call_id': 'c1', 'name': 'add'}]
    """
    return [_template_message(message) for message in read_messages(messages)]


def _token_text(value: object) -> Optional[str]:
    """A special token of a ``tokenizer_config.json``: a string, or an added-token dict."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError) as error:
        raise TemplateError(f"cannot read a chat template at {describe(path)}: {error}", "syntax", None) from None


def _read_config(path: str) -> Dict[str, Any]:
    try:
        config = json.loads(_read_text(path))
    except ValueError as error:
        raise TemplateError(f"{path} is not valid JSON: {error}", "syntax", None) from None
    if not isinstance(config, dict):
        raise TemplateError(f"{path} holds {type_name(config)}, not a tokenizer config object", "syntax", None)
    return config


def _config_template(config: Mapping[str, Any], path: str) -> Optional[str]:
    """The ``chat_template`` of a tokenizer config: a string, or a list of named templates of
    which the one named ``default`` is taken."""
    template = config.get("chat_template")
    if template is None or isinstance(template, str):
        return template
    if isinstance(template, list):
        for entry in template:
            if isinstance(entry, Mapping) and entry.get("name") == "default" and isinstance(entry.get("template"), str):
                return str(entry["template"])
    raise TemplateError(f"{path}: chat_template is neither a string nor a list holding a 'default' template",
                        "syntax", None)


def _config_tokens(config: Mapping[str, Any]) -> Dict[str, str]:
    tokens = {}
    for name in SPECIAL_TOKEN_NAMES:
        text = _token_text(config.get(name))
        if text is not None:
            tokens[name] = text
    return tokens


class ChatTemplate:
    """A model's chat template, compiled once in the Rust core; :meth:`render` it (or pass it to
    :func:`render_chat`) as often as needed.

    ``special_tokens`` (``{"bos_token": "<s>", ...}``) are passed to every render, as
    transformers passes its tokenizer's; :meth:`from_file` reads them from a
    ``tokenizer_config.json``. ``fuel`` and ``max_output_bytes`` bound each render.

    >>> t = ChatTemplate("{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}",
    ...                  special_tokens={"bos_token": "<s>"})
    >>> t.render([agentmsg.system("Be brief."), agentmsg.user("Hi")])
    '<s>[system] Be brief.[user] Hi'
    >>> ChatTemplate("line one\\n{% if %}")
    Traceback (most recent call last):
    ...
    agentmsg.errors.TemplateError: syntax error on line 2 of the template: unexpected end of block
    """

    __slots__ = ("_native", "source", "special_tokens", "path")

    def __init__(self, source: str, special_tokens: Optional[Mapping[str, str]] = None, *,
                 fuel: int = DEFAULT_FUEL, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
                 path: str = "") -> None:
        if not isinstance(source, str):
            raise MessageTypeError(f"source must be a str, not {type_name(source)}")
        tokens: Dict[str, str] = {}
        for name, text in dict(special_tokens or {}).items():
            if not isinstance(name, str) or not isinstance(text, str):
                raise MessageTypeError(f"special_tokens must map str to str, not {type_name(name)} to {type_name(text)}")
            tokens[name] = text
        for what, limit in (("fuel", fuel), ("max_output_bytes", max_output_bytes)):
            if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit < 2**63:
                raise MessageTypeError(f"{what} must be a positive int, not {describe(limit)}")
        self._native = _core.ChatTemplate(source, fuel, max_output_bytes)
        #: The template's text.
        self.source: str = source
        #: The special tokens every render gets.
        self.special_tokens: Dict[str, str] = tokens
        #: The file it was read from, or "".
        self.path: str = path

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"], *, fuel: int = DEFAULT_FUEL,
                  max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES) -> "ChatTemplate":
        """Reads a template: a ``.jinja`` file, a ``tokenizer_config.json`` (its
        ``chat_template`` and special tokens), or a model directory (its ``chat_template.jinja``,
        else its config's template; special tokens from its ``tokenizer_config.json``).

        >>> ChatTemplate.from_file("tests/data/chat_templates/Qwen-Qwen3-0.6B.jinja").path
        'tests/data/chat_templates/Qwen-Qwen3-0.6B.jinja'
        """
        if not isinstance(path, (str, os.PathLike)):
            raise MessageTypeError(f"path must be a str or a path, not {type_name(path)}")
        path = os.fspath(path)
        tokens: Dict[str, str] = {}
        source: Optional[str]
        if os.path.isdir(path):
            config_path = os.path.join(path, "tokenizer_config.json")
            config = _read_config(config_path) if os.path.isfile(config_path) else {}
            tokens = _config_tokens(config)
            jinja_path = os.path.join(path, "chat_template.jinja")
            source = _read_text(jinja_path) if os.path.isfile(jinja_path) else _config_template(config, config_path)
            if source is None:
                raise TemplateError(f"no chat template in {describe(path)}", "syntax", None)
        elif path.endswith(".json"):
            config = _read_config(path)
            source = _config_template(config, path)
            if source is None:
                raise TemplateError(f"{path} has no chat_template", "syntax", None)
            tokens = _config_tokens(config)
        else:
            source = _read_text(path)
        try:
            return cls(source, tokens, fuel=fuel, max_output_bytes=max_output_bytes, path=path)
        except TemplateError as error:
            raise TemplateError(f"{path}: {error}", error.kind, error.line, error.template_message) from None

    def __repr__(self) -> str:
        return f"<ChatTemplate {self.path or 'from a string'}: {len(self.source)} chars>"

    def render(self, messages: Iterable[Any], tools: Optional[Sequence[Mapping[str, Any]]] = None,
               add_generation_prompt: bool = True, **template_kwargs: Any) -> str:
        """The text of ``messages`` in this template: :func:`render_chat` with this template.

        >>> ChatTemplate("{{ messages|length }} {{ tools|tojson }} {{ enable_thinking }}").render(
        ...     [agentmsg.user("Hi")], tools=[{"type": "function", "function": {"name": "f"}}], enable_thinking=False)
        '1 [{"type": "function", "function": {"name": "f"}}] False'
        """
        return self.render_dicts(template_messages(messages), tools, add_generation_prompt, **template_kwargs)

    def render_dicts(self, messages: List[Dict[str, Any]], tools: Optional[Sequence[Mapping[str, Any]]] = None,
                     add_generation_prompt: bool = True, **template_kwargs: Any) -> str:
        """:meth:`render` of dicts a template reads as they are (:func:`template_messages`
        makes them), for callers that keep them.

        >>> ChatTemplate("{{ messages[0]['role'] }}").render_dicts([{"role": "user", "content": "x"}])
        'user'
        """
        if not isinstance(add_generation_prompt, bool):
            raise MessageTypeError(f"add_generation_prompt must be a bool, not {type_name(add_generation_prompt)}")
        if tools is not None and not isinstance(tools, (list, tuple)):
            raise MessageTypeError(f"tools must be a list of tool dicts or None, not {type_name(tools)}")
        kwargs = {**self.special_tokens, **template_kwargs} if self.special_tokens else template_kwargs
        return str(self._native.render(messages, tools, add_generation_prompt, kwargs, time.localtime().tm_gmtoff))


def render_chat(messages: Iterable[Any], template: Union[str, ChatTemplate],
                tools: Optional[Sequence[Mapping[str, Any]]] = None, add_generation_prompt: bool = True,
                **template_kwargs: Any) -> str:
    """The text of ``messages`` (any form :func:`agentmsg.as_messages` reads) in a model's chat
    ``template`` (a :class:`ChatTemplate`, or its source, compiled for this call), byte for byte
    what transformers' ``apply_chat_template(messages, tools=tools,
    add_generation_prompt=add_generation_prompt, tokenize=False, **template_kwargs)`` gives.

    >>> qwen3 = ChatTemplate.from_file("tests/data/chat_templates/Qwen-Qwen3-0.6B.jinja")
    >>> print(render_chat([agentmsg.user("Hi")], qwen3, enable_thinking=False))
    <|im_start|>user
    Hi<|im_end|>
    <|im_start|>assistant
    <think>
    <BLANKLINE>
    </think>
    <BLANKLINE>
    <BLANKLINE>
    """
    if isinstance(template, str):
        template = ChatTemplate(template)
    elif not isinstance(template, ChatTemplate):
        raise MessageTypeError(f"template must be a ChatTemplate or a template's source, not {type_name(template)}")
    return template.render(messages, tools, add_generation_prompt, **template_kwargs)


check_calls(globals())
