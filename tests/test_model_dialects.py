"""dialect_for_model: model names, aliases and configs to parse options, from one table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentmsg
from agentmsg import dialect_for_model
from agentmsg.parsing.models import MODEL_DIALECTS

NAMES = {
    "Qwen/Qwen3-32B": {"dialect": "hermes"},
    "Qwen/Qwen3-235B-A22B-Thinking-2507": {"dialect": "hermes", "start_in_thinking": True},
    "Qwen/Qwen3-Coder-480B-A35B-Instruct": {"dialect": "qwen3_coder"},
    "Qwen/Qwen3.5-4B": {"dialect": "qwen3_coder", "start_in_thinking": True},
    "Qwen/QwQ-32B": {"dialect": "hermes", "start_in_thinking": True},
    "Qwen/Qwen2.5-7B-Instruct": {"dialect": "hermes"},
    "openai/gpt-oss-120b": {"dialect": "gpt_oss"},
    "openai/gpt-oss-20b": {"dialect": "gpt_oss"},
    "deepseek-ai/DeepSeek-V3.1": {"dialect": "deepseek_v31"},
    "deepseek-ai/DeepSeek-V3.1-Terminus": {"dialect": "deepseek_v31"},
    "deepseek-ai/DeepSeek-V3.2-Exp": {"dialect": "deepseek_v31"},
    "deepseek-ai/DeepSeek-V3": {"dialect": "deepseek_v3"},
    "deepseek-ai/DeepSeek-V3-0324": {"dialect": "deepseek_v3"},
    "deepseek-ai/DeepSeek-R1": {"dialect": "deepseek_v3", "start_in_thinking": True},
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": {"dialect": "deepseek_v3", "start_in_thinking": True},
    "moonshotai/Kimi-K2-Instruct": {"dialect": "kimi_k2"},
    "moonshotai/Kimi-K2-Thinking": {"dialect": "kimi_k2"},
    "zai-org/GLM-4.6": {"dialect": "glm45"},
    "zai-org/GLM-4.5-Air": {"dialect": "glm45"},
    "zai-org/GLM-4.7-Flash": {"dialect": "glm45", "start_in_thinking": True},
    "mistralai/Mistral-Small-3.2-24B-Instruct-2506": {"dialect": "mistral"},
    "mistralai/Mistral-7B-Instruct-v0.3": {"dialect": "mistral"},
    "mistralai/Mixtral-8x22B-Instruct-v0.1": {"dialect": "mistral"},
    "mistralai/Devstral-Small-2507": {"dialect": "mistral"},
    "mistralai/Magistral-Small-2509": {"dialect": "magistral"},
    "meta-llama/Llama-3.1-8B-Instruct": {"dialect": "llama3_json"},
    "meta-llama/Llama-3.3-70B-Instruct": {"dialect": "llama3_json"},
    "meta-llama/Meta-Llama-3-8B-Instruct": {"dialect": "llama3_json"},
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": {"dialect": "pythonic"},
    "NousResearch/Hermes-3-Llama-3.1-8B": {"dialect": "hermes"},
    "NousResearch/Hermes-2-Pro-Llama-3-8B": {"dialect": "hermes"},
    # Other spellings of a name: a local folder, quantized builds, Ollama tags, upper case.
    "/models/Qwen3-32B/": {"dialect": "hermes"},
    "unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF": {"dialect": "qwen3_coder"},
    "qwen3:32b": {"dialect": "hermes"},
    "GPT-OSS-120B": {"dialect": "gpt_oss"},
    # The families read since, one each.
    "deepseek-ai/DeepSeek-V3.2": {"dialect": "deepseek_v32"},
    "deepseek-ai/DeepSeek-V4-Flash": {"dialect": "deepseek_v4"},
    "mistralai/Ministral-3-14B-Reasoning-2512": {"dialect": "magistral"},
    "google/gemma-4-31B-it": {"dialect": "gemma4"},
    "google/functiongemma-270m-it": {"dialect": "functiongemma"},
    "stepfun-ai/Step-3.5-Flash": {"dialect": "step3p5", "start_in_thinking": True},
    "stepfun-ai/step3": {"dialect": "step3", "start_in_thinking": True},
    "stepfun-ai/step3-fp8": {"dialect": "step3", "start_in_thinking": True},
    "CohereLabs/c4ai-command-r7b-12-2024": {"dialect": "cohere"},
    "CohereForAI/c4ai-command-r-plus": {"dialect": "command_r"},
    "CohereForAI/c4ai-command-r-v01": {"dialect": "command_r"},
    "CohereForAI/c4ai-command-r-plus-08-2024": {"dialect": "command_r"},
    "CohereLabs/command-a-reasoning-08-2025": {"dialect": "cohere"},
    "ByteDance-Seed/Seed-OSS-36B-Instruct": {"dialect": "seed_oss"},
    "MiniMaxAI/MiniMax-M2": {"dialect": "minimax_m2", "start_in_thinking": True},
    "ibm-granite/granite-3.3-8b-instruct": {"dialect": "granite"},
    "ibm-granite/granite-4.0-h-small": {"dialect": "granite"},
    "LiquidAI/LFM2-8B-A1B": {"dialect": "lfm2"},
    "microsoft/Phi-4-mini-instruct": {"dialect": "phi4_mini"},
    "Salesforce/xLAM-2-8b-fc-r": {"dialect": "xlam"},
    "tencent/Hunyuan-A13B-Instruct": {"dialect": "hunyuan"},
    "swiss-ai/Apertus-8B-Instruct-2509": {"dialect": "apertus"},
    "ai21labs/AI21-Jamba-Mini-1.7": {"dialect": "jamba"},
    "internlm/internlm2_5-7b-chat": {"dialect": "internlm2"},
    "meituan-longcat/LongCat-Flash-Chat": {"dialect": "longcat"},
}

ALIASES = {
    "qwen3": "hermes", "qwen3-coder": "qwen3_coder", "gpt-oss": "gpt_oss", "deepseek": "deepseek_v31",
    "kimi": "kimi_k2", "glm": "glm45", "llama3": "llama3_json", "mistral": "mistral", "hermes": "hermes",
    "qwq": "hermes", "deepseek-r1": "deepseek_v3", "llama4": "pythonic",
}


@pytest.mark.parametrize("name", list(NAMES))
def test_model_names_map_to_their_dialect(name):
    assert dialect_for_model(name) == NAMES[name]


@pytest.mark.parametrize("alias", list(ALIASES))
def test_aliases(alias):
    assert dialect_for_model(alias)["dialect"] == ALIASES[alias]


def test_every_row_names_a_dialect_and_is_reached():
    for row in MODEL_DIALECTS:
        assert row.dialect in agentmsg.DIALECTS, row
        assert row.pattern == row.pattern.lower() and "/" not in row.pattern, row
    # No row is hidden behind an earlier one: its own pattern (globs read as a plain name) reaches it.
    for row in MODEL_DIALECTS:
        name = row.pattern.replace("*", "x").replace("?", "x")
        found = dialect_for_model(name)
        assert found["dialect"] == row.dialect, row


def test_the_options_parse_what_the_model_writes():
    reply = "The user wants it.</think>Here."
    p = agentmsg.parse(reply, **dialect_for_model("Qwen/QwQ-32B"))
    assert (p.thinking, p.text) == (["The user wants it."], "Here.")
    stream = agentmsg.StreamParser(**dialect_for_model("deepseek-ai/DeepSeek-R1"))
    stream.feed("Think")
    stream.feed("ing.</think>Done.")
    stream.finish()
    assert (stream.result().thinking, stream.result().text) == (["Thinking."], "Done.")


CONFIGS = [
    ({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}, {"dialect": "hermes"}),
    ({"model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"]}, {"dialect": "gpt_oss"}),
    ({"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"]}, {"dialect": "kimi_k2"}),
    ({"model_type": "glm4_moe"}, {"dialect": "glm45"}),
    ({"model_type": "mistral"}, {"dialect": "mistral"}),
    ({"model_type": "llama4"}, {"dialect": "pythonic"}),
    # transformers' "cohere" model_type is Command R/R+; its class says so before the type.
    ({"model_type": "cohere", "architectures": ["CohereForCausalLM"]}, {"dialect": "command_r"}),
    ({"model_type": "cohere2", "architectures": ["Cohere2ForCausalLM"]}, {"dialect": "cohere"}),
    # A config that names its model is read by that name.
    ({"_name_or_path": "deepseek-ai/DeepSeek-V3.1", "model_type": "deepseek_v3"}, {"dialect": "deepseek_v31"}),
    ({"name_or_path": "Qwen/QwQ-32B", "model_type": "qwen2"}, {"dialect": "hermes", "start_in_thinking": True}),
]


@pytest.mark.parametrize("config, expected", CONFIGS)
def test_configs_map_by_model_type(config, expected):
    assert dialect_for_model(config) == expected


def test_config_files_are_read(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gpt_oss"}))
    assert dialect_for_model(path) == {"dialect": "gpt_oss"}
    assert dialect_for_model(str(path)) == {"dialect": "gpt_oss"}
    tokenizer_config = tmp_path / "tokenizer_config.json"
    tokenizer_config.write_text(json.dumps({"name_or_path": "zai-org/GLM-4.6", "chat_template": "..."}))
    assert dialect_for_model(tokenizer_config) == {"dialect": "glm45"}
    # A tokenizer_config.json with no known name that ships its response_template.
    spec = json.loads((Path(__file__).parent / "data" / "response_templates" / "bracket_calls.json").read_text())
    tokenizer_config.write_text(json.dumps({"name_or_path": "my-org/new-model", "response_template": spec}))
    assert dialect_for_model(tokenizer_config)["dialect"].call_start == "[CALL]"
    # One that ships only its chat template.
    template = (Path(__file__).parent / "data" / "chat_templates" / "Qwen3-Coder.jinja").read_text()
    tokenizer_config.write_text(json.dumps({"name_or_path": "my-org/new-coder", "chat_template": template}))
    assert dialect_for_model(tokenizer_config) == {"dialect": "qwen3_coder"}


@pytest.mark.parametrize("config", [
    {"model_type": "deepseek_v3"},  # DeepSeek V3, R1 and V3.1 share it
    {"model_type": "llama", "architectures": ["LlamaForCausalLM"]},  # Llama 3, Hermes 3, R1 distills
    {"model_type": "qwen3_moe_coder_or_not"},
    {},
])
def test_configs_that_say_too_little_are_unknown(config):
    with pytest.raises(agentmsg.UnknownModelError) as error:
        dialect_for_model(config)
    assert isinstance(error.value, KeyError)
    assert "pass the model's name" in str(error.value)


@pytest.mark.parametrize("name", ["my-own-model", "", "gpt-4o", "x" * 10_000])
def test_unknown_models_say_how_to_describe_them(name):
    with pytest.raises(agentmsg.UnknownModelError) as error:
        dialect_for_model(name)
    message = str(error.value)
    for way in ["Dialect.from_chat_template", "Dialect.from_response_template", "agentmsg.Dialect(", "DIALECTS"]:
        assert way in message
    assert len(message) < 800


def test_unreadable_config_files_and_wrong_types(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(agentmsg.UnknownModelError, match="cannot read the model config"):
        dialect_for_model(bad)
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(agentmsg.UnknownModelError, match="holds no JSON object"):
        dialect_for_model(tmp_path / "list.json")
    with pytest.raises(agentmsg.MessageTypeError):
        dialect_for_model(5)
    with pytest.raises(agentmsg.MessageTypeError):
        dialect_for_model(None)
