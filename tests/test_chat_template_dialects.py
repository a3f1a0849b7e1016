"""Dialect.from_chat_template on the models' own chat templates (tests/data/chat_templates),
rendered by the core's Jinja renderer with probe messages and read back: the day-zero test (a
new model's template gives its dialect without new code). For each of the families agentmsg reads by hand, the template derives that dialect,
and the derived dialect gives the hand-written one's results and events on every conformance
case of the dialect tables.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import agentmsg
import test_dialect_kimi_k3
import test_dialects
import test_dialects_families
import test_dialects_families_b
import test_dialects_json_and_pythonic
import test_dialects_lenient
import test_dialects_token_markers
from agentmsg import Dialect, DialectTemplateError
from test_dialects import stream

TEMPLATES = Path(__file__).resolve().parent / "data" / "chat_templates"


def derive(template: str):
    return Dialect.from_chat_template((TEMPLATES / f"{template}.jinja").read_text(encoding="utf-8"))


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
    "moonshotai-Kimi-K2": ("kimi_k2", False),
    "GLM-4.6": ("glm45", False),
    "GLM-4.7-Flash": ("glm45", True),
    "poolside-Laguna-XS.2": ("glm45", False),
    # Its replies continue the prompt's "<|start|>assistant" header; two calls are two messages.
    "openai-gpt-oss-120b": ("gpt_oss", False),
    # Families read since by their own dialects.
    "ByteDance-Seed-OSS": ("seed_oss", False),
    "google-gemma-4-31B-it": ("gemma4", False),
    "google-gemma-4-31B-it-interleaved": ("gemma4", False),
    "deepseek-ai-DeepSeek-V4": ("deepseek_v4", False),
    "Apertus-8B-Instruct": ("apertus", False),
    # The prompt ends with an empty reasoning block ("<think></think>"), the history with "</think>".
    "deepseek-ai-DeepSeek-V3.2": ("deepseek_v32", False),
    # The history writes no reasoning block for a message without reasoning.
    "MiniMax-M2": ("minimax_m2", True),
    # Its template writes the generation prompt whether asked or not; a call's turn ends unlike a text's.
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": ("cohere", False),
    # Command A: its answer between <|START_TEXT|> and <|END_TEXT|>, reasoning opened by the prompt.
    "Cohere2MoE": ("cohere", True),
    # Only a call's turn, not a last text's, ends with the end-of-sentence token.
    "tencent-Hy3": ("hy3", False),
    # A calling message's text is rendered as the next assistant turn, behind the end of sentence.
    "llama-cpp-deepseek-r1": ("deepseek_v3", True),
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B": ("deepseek_v3", False),
    # Writes calls only in OpenAI's wire form (content None, arguments a JSON string).
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B": ("deepseek_v3", True),
    # Typhoon 2.1 (Gemma 3): "[probe_tool(probe_key=\"probe_value\")]", its text after the list.
    "typhoon-ai-typhoon2.1-gemma3-4b": ("pythonic", False),
    # The prompt opens its think element; the reply's response element follows the closer.
    "Kimi-K3": ("kimi_k3", True),
    # Its calls are "Action:" and a fenced list, and its instruction turn follows every message.
    "CohereForAI-c4ai-command-r-plus-tool_use": ("command_r", False),
}


@pytest.mark.parametrize("template", list(DERIVED))
def test_templates_derive_their_hand_written_dialect(template):
    name, starts_in_thinking = DERIVED[template]
    assert derive(template) == ({"dialect": name, "start_in_thinking": True} if starts_in_thinking else {"dialect": name})


def test_a_template_with_other_markers_derives_a_custom_dialect():
    """Markers no named dialect has: a custom Dialect of them, with the payload shape found."""
    template = (
        "{%- for m in messages -%}<|{{ m.role }}|>{% if m.content %}{{ m.content }}{% endif %}"
        "{%- if m.tool_calls %}{% for c in m.tool_calls %}"
        "<fn>{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}</fn>"
        "{% endfor %}{% endif %}<|end|>{%- endfor -%}{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}"
    )
    dialect = Dialect.from_chat_template(template)["dialect"]
    assert dialect == Dialect(name="chat_template", call_start="<fn>", call_end="</fn>", payload="json")
    parsed = agentmsg.parse('Checking.<fn>{"name": "get_weather", "arguments": {"city": "Paris"}}</fn>', dialect=dialect)
    assert (parsed.text, parsed.tool_calls[0].name, parsed.tool_calls[0].input) == (
        "Checking.", "get_weather", {"city": "Paris"})


#: Small templates, each rendering the history unlike what the model writes after the prompt in
#: one way (the rules of docs/dialects.md, "From a Jinja chat template"), and the dialect each derives.
def _turns(calling: str, plain: str, prompt: str) -> str:
    """A template: user turns, calling and plain assistant turns, and the generation prompt."""
    return ("{%- for m in messages -%}{%- if m.role == 'user' -%}<U>{{ m.content }}<E>{%- elif m.tool_calls -%}"
            + calling + "{%- else -%}" + plain + "{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}"
            + prompt + "{%- endif -%}")


_FN = "<fn>{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}</fn>"
_HERMES = "<tool_call>{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}</tool_call>"
_FN_DIALECT = Dialect(name="chat_template", call_start="<fn>", call_end="</fn>", payload="json")
SHAPES = {
    # A calling message's text rendered as another assistant turn after the end of turn (DeepSeek R1).
    "text-as-the-next-turn": (_turns(
        calling="<A>{% for c in m.tool_calls %}" + _FN + "{% endfor %}<E>{% if m.content %}<A>{{ m.content }}<E>{% endif %}",
        plain="<A>{{ m.content }}<E>", prompt="<A>"), {"dialect": _FN_DIALECT}),
    # The arguments concatenated as a string: only OpenAI's wire form renders (DeepSeek R1 Distill Llama).
    "wire-form-arguments": (_turns(
        calling="<A>{{ m.content or '' }}{% for c in m.tool_calls %}<fn>{{ '{\"name\": \"' + c.function.name + "
                "'\", \"arguments\": ' + c.function.arguments + '}' }}</fn>{% endfor %}<E>",
        plain="<A>{{ m.content }}<E>", prompt="<A>"), {"dialect": _FN_DIALECT}),
    # The prompt closes an empty reasoning block, the history writes its closer alone (DeepSeek V3.2).
    "closer-alone-after-an-empty-block": (_turns(
        calling="<A></think>{{ m.content }}{% for c in m.tool_calls %}" + _HERMES + "{% endfor %}<E>",
        plain="<A></think>{{ m.content }}<E>", prompt="<A><think></think>"), {"dialect": "hermes"}),
    # The prompt opens reasoning, the history writes none for a message without it (MiniMax M2).
    "no-block-in-the-history": (_turns(
        calling="<A>{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}"
                "{% for c in m.tool_calls %}" + _HERMES + "{% endfor %}<E>",
        plain="<A>{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}<E>",
        prompt="<A><think>"), {"dialect": "hermes", "start_in_thinking": True}),
    # Only a calling turn ends with the end-of-sentence token (Hy3).
    "only-calls-end-with-a-token": (_turns(
        calling="<A>{{ m.content }}{% for c in m.tool_calls %}" + _FN + "{% endfor %}<eos>",
        plain="<A>{{ m.content }}{% if not loop.last %}<eos>{% endif %}", prompt="<A>"), {"dialect": _FN_DIALECT}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_replies_are_cut_as_the_model_writes_them(shape):
    template, derived = SHAPES[shape]
    assert Dialect.from_chat_template(template) == derived


#: Templates that derive no dialect today, and why.
NOT_DERIVED = {
    "HuggingFaceTB-SmolLM3-3B": "writes no tool call",
    # Other formats than minimax_m2's: JSON lines in <tool_calls> (M1), ]<]minimax[>[ separators (M3).
    "MiniMax-M1": "no dialect reads",
    "MiniMax-M3": "no dialect reads",
    # These copies call list.append, which the renderer refuses (as transformers' sandbox does).
    "Kimi-K2-Instruct": "does not render an assistant message with a tool call",
    "Kimi-K2-Thinking": "does not render an assistant message with a tool call",
}


@pytest.mark.parametrize("template", list(NOT_DERIVED))
def test_templates_no_dialect_reads_say_what_they_write(template):
    with pytest.raises(DialectTemplateError) as error:
        derive(template)
    assert NOT_DERIVED[template] in str(error.value)
    assert isinstance(error.value, ValueError)


# -- the derived dialect on every conformance case of its hand-written one -------------------------

def cases(dialect: str):
    tables = [test_dialects.ALL, test_dialects_json_and_pythonic.ALL, test_dialects_token_markers.ALL,
              test_dialects_families_b.ALL]
    found = [c for table in tables for name, rows in table if name == dialect for c in rows]
    found += [c for name, c in test_dialects_lenient.ALL_CASES + test_dialects_families.ALL_CASES if name == dialect]
    found += test_dialect_kimi_k3.CASES if dialect == "kimi_k3" else []
    return found


def test_a_chat_template_object_and_bad_templates():
    qwen3 = agentmsg.ChatTemplate.from_file(TEMPLATES / "Qwen-Qwen3-0.6B.jinja")
    assert Dialect.from_chat_template(qwen3) == {"dialect": "hermes"}
    with pytest.raises(agentmsg.TemplateError):
        Dialect.from_chat_template("{% if %}")
    with pytest.raises(agentmsg.TemplateError, match="raised"):
        Dialect.from_chat_template("{{ raise_exception('no') }}")
    refuses_calls = "{% for m in messages %}{% if m.tool_calls %}{{ raise_exception('no calls') }}{% endif %}{{ m.content }}{% endfor %}"
    with pytest.raises(DialectTemplateError, match="does not render an assistant message with a tool call: .*no calls"):
        Dialect.from_chat_template(refuses_calls)
    with pytest.raises(agentmsg.MessageTypeError):
        Dialect.from_chat_template(5)


def derived_dialects():
    seen = {}
    for template, (name, _) in DERIVED.items():
        seen.setdefault(name, template)
    return [(name, template) for name, template in seen.items()]


@pytest.mark.parametrize("hand_written, template", derived_dialects())
def test_derived_dialect_equals_the_hand_written_one_on_every_case(hand_written, template):
    options = derive(template)
    dialect = options["dialect"]
    rows = cases(hand_written)
    assert len(rows) >= 10
    for row in rows:
        text, _, options = row.values
        assert agentmsg.parse(text, dialect=dialect, **options) == agentmsg.parse(text, dialect=hand_written, **options)
        for pieces in ([text], [text[i:i + 3] for i in range(0, len(text), 3)]):
            events, result = stream(text, dialect, options, pieces)
            assert (events, result) == stream(text, hand_written, options, pieces)
