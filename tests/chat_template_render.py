"""Renders the Jinja chat templates of tests/data/chat_templates with jinja2, as transformers'
``apply_chat_template`` does (a sandbox, ``tojson``, ``raise_exception``, ``strftime_now``), for the
tests of derived dialects until the core's renderer takes its place.

    >>> render = renderer("Qwen-Qwen3-0.6B")
    >>> render([{"role": "user", "content": "Hi"}], [], True)[-22:]
    'Hi<|im_end|>\\n<|im_start|>assistant\\n'
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import jinja2
from jinja2.sandbox import SandboxedEnvironment

TEMPLATES = Path(__file__).resolve().parent / "data" / "chat_templates"


class TemplateRefused(ValueError):
    """The template raised (``raise_exception``) or failed to render."""


def _raise(message: str) -> None:
    raise TemplateRefused(message)


def _tojson(value, indent=None, ensure_ascii=False, separators=None, sort_keys=False):
    return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, separators=separators, sort_keys=sort_keys)


def renderer(name: str):
    """``render(messages, tools, add_generation_prompt) -> str`` of the template ``name``."""
    env = SandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime(2026, 1, 1).strftime(fmt)
    template = env.from_string((TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8"))

    def render(messages, tools, add_generation_prompt):
        try:
            return template.render(messages=messages, tools=tools or None, add_generation_prompt=add_generation_prompt,
                                   bos_token="<s>", eos_token="</s>")
        except jinja2.TemplateError as error:
            raise TemplateRefused(str(error)) from None

    return render
