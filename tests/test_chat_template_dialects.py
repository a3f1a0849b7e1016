"""Dialects derived from the models' own chat templates (tests/data/chat_templates), by rendering
probe messages and reading the replies back: the day-zero test of issue 22. For each of the
families agentmsg reads by hand, the template derives that dialect, and the derived dialect
gives the hand-written one's results and events on every conformance case of the dialect tables.

The templates are rendered with jinja2 (``chat_template_render``) until the core's renderer,
``agentmsg.render_chat``, takes its place.
"""

from __future__ import annotations

import pytest

import agentmsg
import test_dialects
import test_dialects_json_and_pythonic
import test_dialects_lenient
import test_dialects_token_markers
from agentmsg import DialectTemplateError
from agentmsg.dialect_templates import chat_template_dialect
from agentmsg.options import read_with
from chat_template_render import renderer
from test_dialects import stream

NAMES = [name for name in agentmsg.DIALECTS if name != "forge"]


def derive(template: str):
    return chat_template_dialect(renderer(template), read_with, NAMES)


#: Template -> (the hand-written dialect it derives, whether its prompt opens the reasoning).
DERIVED = {
    "Qwen-Qwen3-0.6B": ("hermes", False),
    "Qwen-Qwen2.5-7B-Instruct": ("hermes", False),
    "Qwen-QwQ-32B": ("hermes", False),  # this copy closes the <think> it opens unless enable_thinking
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use": ("hermes", False),
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use": ("hermes", False),
    "ibm-granite-granite-4.0": ("hermes", False),
    "Qwen3-Coder": ("qwen3_coder", False),
    "Qwen3.5-4B": ("qwen3_coder", True),
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": ("qwen3_coder", True),
    "StepFun3.5-Flash": ("qwen3_coder", True),
    "meta-llama-Llama-3.1-8B-Instruct": ("llama3_json", False),
    "meta-llama-Llama-3.2-3B-Instruct": ("llama3_json", False),
    "meta-llama-Llama-3.3-70B-Instruct": ("llama3_json", False),
    "Mistral-Small-3.2-24B-Instruct-2506": ("mistral", False),
    "mistralai-Mistral-Nemo-Instruct-2407": ("mistral", False),
    "mistralai-Ministral-3-14B-Reasoning-2512": ("mistral", False),
    "unsloth-mistral-Devstral-Small-2507": ("mistral", False),
    "deepseek-ai-DeepSeek-V3.1": ("deepseek_v31", False),
    "Kimi-K2-Instruct": ("kimi_k2", False),
    "Kimi-K2-Thinking": ("kimi_k2", False),
    "moonshotai-Kimi-K2": ("kimi_k2", False),
    "GLM-4.6": ("glm45", False),
    "GLM-4.7-Flash": ("glm45", True),
    # Its replies continue the prompt's "<|start|>assistant" header; two calls are two messages.
    "openai-gpt-oss-120b": ("gpt_oss", False),
}


@pytest.mark.parametrize("template", list(DERIVED))
def test_templates_derive_their_hand_written_dialect(template):
    derived = derive(template)
    assert (derived.name, derived.start_in_thinking) == DERIVED[template]


def test_a_template_with_other_markers_derives_a_custom_dialect():
    derived = derive("ByteDance-Seed-OSS")
    assert derived.name is None
    assert derived.parts == {"name": "chat_template", "payload": "qwen3_coder", "call_start": "<seed:tool_call>",
                             "call_end": "</seed:tool_call>", "think_start": "<seed:think>", "think_end": "</seed:think>"}
    dialect = agentmsg.Dialect(**derived.parts)
    reply = ("<seed:think>Weather first.</seed:think>Checking.<seed:tool_call>\n<function=get_weather>\n"
             "<parameter=city>\nParis\n</parameter>\n</function>\n</seed:tool_call>")
    parsed = agentmsg.parse(reply, dialect=dialect)
    assert (parsed.thinking, parsed.text, parsed.tool_calls[0].input) == (["Weather first."], "Checking.", {"city": "Paris"})


#: Templates that derive no dialect today, and why (the report of issue 22 lists them).
NOT_DERIVED = {
    "HuggingFaceTB-SmolLM3-3B": "writes no tool call",
    "deepseek-ai-DeepSeek-V3.2": "no dialect reads",  # DSML
    "google-gemma-4-31B-it": "no dialect reads",
    "MiniMax-M2": "no dialect reads",
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": "no dialect reads",
}


@pytest.mark.parametrize("template", list(NOT_DERIVED))
def test_templates_no_dialect_reads_say_what_they_write(template):
    with pytest.raises(DialectTemplateError) as error:
        derive(template)
    assert NOT_DERIVED[template] in str(error.value)
    assert isinstance(error.value, ValueError)


# -- the derived dialect on every conformance case of its hand-written one -------------------------

def cases(dialect: str):
    tables = [test_dialects.ALL, test_dialects_json_and_pythonic.ALL, test_dialects_token_markers.ALL]
    found = [c for table in tables for name, rows in table if name == dialect for c in rows]
    found += [c for name, c in test_dialects_lenient.ALL_CASES if name == dialect]
    return found


def derived_dialects():
    seen = {}
    for template, (name, _) in DERIVED.items():
        seen.setdefault(name, template)
    return [(name, template) for name, template in seen.items()]


@pytest.mark.parametrize("hand_written, template", derived_dialects())
def test_derived_dialect_equals_the_hand_written_one_on_every_case(hand_written, template):
    derived = derive(template)
    dialect = derived.name if derived.name is not None else agentmsg.Dialect(**derived.parts)
    rows = cases(hand_written)
    assert len(rows) >= 10
    for row in rows:
        text, _, options = row.values
        assert agentmsg.parse(text, dialect=dialect, **options) == agentmsg.parse(text, dialect=hand_written, **options)
        for pieces in ([text], [text[i:i + 3] for i in range(0, len(text), 3)]):
            events, result = stream(text, dialect, options, pieces)
            assert (events, result) == stream(text, hand_written, options, pieces)
