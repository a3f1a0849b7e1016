"""Which dialect a model writes: :func:`dialect_for_model` and its one table, :data:`MODEL_DIALECTS`.

    >>> from agentmsg import dialect_for_model, parse
    >>> dialect_for_model("Qwen/Qwen3-32B")
    {'dialect': 'hermes'}
    >>> dialect_for_model("Qwen/QwQ-32B")
    {'dialect': 'hermes', 'start_in_thinking': True}
    >>> parse("I should call it.</think>Done.", **dialect_for_model("qwq")).thinking
    ['I should call it.']
"""

from __future__ import annotations

import fnmatch
import json
import os
from typing import Any, List, Mapping, NamedTuple, Optional, Tuple, Union

from .._checks import check_calls, describe, type_name
from ..errors import DialectTemplateError, MessageTypeError, TemplateError, UnknownModelError
from ..options import Dialect, ParseOptions

__all__ = ["dialect_for_model", "MODEL_DIALECTS", "ModelDialect"]


class ModelDialect(NamedTuple):
    """One row of :data:`MODEL_DIALECTS`: a pattern of model names, the dialect those models
    write, and whether their chat template opens the reasoning in the prompt (the reply then
    starts inside it: ``start_in_thinking``).

    >>> ModelDialect("qwq*", "hermes", True).dialect
    'hermes'
    """

    pattern: str
    dialect: str
    starts_in_thinking: bool = False


#: Model name -> dialect, first match wins: a specific row goes before a general one. A pattern is
#: a glob (``*``, ``?``, ``[…]``) on the lowercased name without its organisation
#: (``"Qwen/Qwen3-32B"`` is matched as ``"qwen3-32b"``); a pattern without a glob character is
#: an exact name, which is how aliases (``"deepseek"``) and config ``model_type``s (``"glm4_moe"``)
#: are written. A config's ``model_type`` is looked up among the exact names only: several
#: families share one (``qwen3_moe`` is Qwen 3 and Qwen3-Coder, ``deepseek_v3`` is DeepSeek V3,
#: R1 and V3.1; ``qwen2`` is Qwen 2.5 and the R1 distills), so only the ones that say the dialect
#: have a row. Adding a model is adding a row.
MODEL_DIALECTS: Tuple[ModelDialect, ...] = (
    # Qwen: Qwen 3 writes <think> itself; the Thinking-2507 models, QwQ and Qwen 3.5 open it in the prompt.
    ModelDialect("qwen3-coder*", "qwen3_coder"),
    ModelDialect("qwen3_coder", "qwen3_coder"),
    ModelDialect("qwen3.5*", "qwen3_coder", True),
    ModelDialect("qwen3*thinking*", "hermes", True),
    ModelDialect("qwen3*", "hermes"),
    ModelDialect("qwq*", "hermes", True),
    ModelDialect("qwen2*", "hermes"),
    ModelDialect("qwen", "hermes"),
    ModelDialect("qwen3", "hermes"),
    # Hermes (before llama: "Hermes-3-Llama-3.1-8B")
    ModelDialect("hermes*", "hermes"),
    # DeepSeek: R1 and its distills open <think> in the prompt; V3.2 final and V4 write DSML.
    ModelDialect("deepseek-r1*", "deepseek_v3", True),
    ModelDialect("deepseek-v3.1*", "deepseek_v31"),
    ModelDialect("deepseek-v3.2-exp*", "deepseek_v31"),
    ModelDialect("deepseek-v3.2*", "deepseek_v32"),
    ModelDialect("deepseek_v32", "deepseek_v32"),
    ModelDialect("deepseek-v4*", "deepseek_v4"),
    ModelDialect("deepseek_v4", "deepseek_v4"),
    ModelDialect("deepseek-v3", "deepseek_v3"),
    ModelDialect("deepseek-v3-*", "deepseek_v3"),
    ModelDialect("deepseek", "deepseek_v31"),
    # OpenAI
    ModelDialect("gpt-oss*", "gpt_oss"),
    ModelDialect("gpt_oss", "gpt_oss"),
    # Moonshot
    ModelDialect("kimi-k2*", "kimi_k2"),
    # Kimi K3's template opens the think element in the prompt (thinking is on by default).
    ModelDialect("kimi-k3*", "kimi_k3", True),
    ModelDialect("kimi_k3", "kimi_k3", True),
    ModelDialect("kimi", "kimi_k2"),
    ModelDialect("kimi_k2", "kimi_k2"),
    # Zhipu: GLM 4.7 opens <think> in the prompt.
    ModelDialect("glm-4.7*", "glm45", True),
    ModelDialect("glm-4.5*", "glm45"),
    ModelDialect("glm-4.6*", "glm45"),
    ModelDialect("glm", "glm45"),
    ModelDialect("glm4_moe", "glm45"),
    # Mistral
    ModelDialect("mistral*", "mistral"),
    ModelDialect("mistral", "mistral"),
    ModelDialect("mistral3", "mistral"),
    ModelDialect("mixtral*", "mistral"),
    ModelDialect("ministral-3-*reasoning*", "magistral"),
    ModelDialect("ministral*", "mistral"),
    ModelDialect("devstral*", "mistral"),
    ModelDialect("magistral*", "magistral"),
    ModelDialect("magistral", "magistral"),
    ModelDialect("codestral*", "mistral"),
    # Meta: Llama 3.x writes JSON calls, Llama 4 pythonic ones.
    ModelDialect("llama-3*", "llama3_json"),
    ModelDialect("meta-llama-3*", "llama3_json"),
    ModelDialect("llama3*", "llama3_json"),
    ModelDialect("llama-4*", "pythonic"),
    ModelDialect("llama4*", "pythonic"),
    ModelDialect("llama4", "pythonic"),
    # The families read since: each its own dialect (docs/dialects.md), with the aliases they go by.
    ModelDialect("gemma-4*", "gemma4"),
    ModelDialect("gemma4", "gemma4"),
    ModelDialect("functiongemma*", "functiongemma"),
    ModelDialect("step-3.5*", "step3p5", True),
    ModelDialect("step3p5", "step3p5", True),
    ModelDialect("step3", "step3", True),
    ModelDialect("step-3", "step3", True),
    ModelDialect("step3-fp8", "step3", True),
    ModelDialect("c4ai-command-r7b*", "cohere"),
    ModelDialect("c4ai-command-r-*", "command_r"),
    ModelDialect("c4ai-command-r", "command_r"),
    ModelDialect("command-r-*", "command_r"),
    ModelDialect("command-r", "command_r"),
    ModelDialect("command_r", "command_r"),
    ModelDialect("command-a*", "cohere"),
    ModelDialect("cohere", "cohere"),
    # Configs: transformers' Cohere classes. model_type "cohere" is Command R/R+ there, but as a
    # name it is the dialect: a config's architectures are looked up first, and say it.
    ModelDialect("cohereforcausallm", "command_r"),
    ModelDialect("cohere2forcausallm", "cohere"),
    ModelDialect("cohere2", "cohere"),
    ModelDialect("seed-oss*", "seed_oss"),
    ModelDialect("seed_oss", "seed_oss"),
    ModelDialect("minimax-m2*", "minimax_m2", True),
    ModelDialect("minimax", "minimax_m2", True),
    ModelDialect("minimax_m2", "minimax_m2", True),
    ModelDialect("granite-3*", "granite"),
    ModelDialect("granite-4*", "granite"),
    ModelDialect("granite", "granite"),
    ModelDialect("lfm2*", "lfm2"),
    ModelDialect("phi-4-mini*", "phi4_mini"),
    ModelDialect("phi4-mini*", "phi4_mini"),
    ModelDialect("phi4_mini", "phi4_mini"),
    ModelDialect("xlam*", "xlam"),
    ModelDialect("hunyuan-a13b*", "hunyuan"),
    ModelDialect("hunyuan", "hunyuan"),
    ModelDialect("hy3*", "hy3", True),
    ModelDialect("hunyuan-3*", "hy3", True),
    ModelDialect("apertus*", "apertus"),
    ModelDialect("ai21-jamba*", "jamba"),
    ModelDialect("jamba*", "jamba"),
    ModelDialect("internlm2*", "internlm2"),
    ModelDialect("longcat*", "longcat"),
)

# Config files name their model here, when they do.
_NAME_KEYS = ("_name_or_path", "name_or_path")


def _short_name(name: str) -> str:
    """The name as the table matches it: lowercased, without organisation or folders."""
    return name.strip().rstrip("/").rsplit("/", 1)[-1].lower()


def _lookup(name: str, exact_only: bool = False) -> Optional[ModelDialect]:
    short = _short_name(name)
    for row in MODEL_DIALECTS:
        if short == row.pattern or (not exact_only and fnmatch.fnmatchcase(short, row.pattern)):
            return row
    return None


def _options(row: ModelDialect) -> ParseOptions:
    options: ParseOptions = {"dialect": row.dialect}  # type: ignore[typeddict-item]
    if row.starts_in_thinking:
        options["start_in_thinking"] = True
    return options


def _unknown(what: str) -> UnknownModelError:
    return UnknownModelError(
        f"no dialect is known for {what}. Describe the model instead: "
        "agentmsg.Dialect.from_chat_template(its chat template), "
        "agentmsg.Dialect.from_response_template(its response_template), "
        "agentmsg.Dialect(name=..., call_start=..., call_end=..., ...) from its markers, or one of "
        "agentmsg.DIALECTS by name"
    )


def _read_config(path: "os.PathLike[str] | str") -> Mapping[str, Any]:
    try:
        with open(path, encoding="utf-8") as file:
            config = json.load(file)
    except (OSError, ValueError) as error:
        raise UnknownModelError(f"cannot read the model config {describe(str(path))}: {error}") from None
    if not isinstance(config, dict):
        raise UnknownModelError(f"the model config {describe(str(path))} holds no JSON object")
    return config


def _from_config(config: Mapping[str, Any]) -> ParseOptions:
    for key in _NAME_KEYS:
        name = config.get(key)
        if isinstance(name, str) and name and (row := _lookup(name)) is not None:
            return _options(row)
    if isinstance(config.get("response_template"), Mapping):
        # A tokenizer_config.json that ships the model's own response_template.
        return Dialect.from_response_template(config["response_template"])
    if isinstance(config.get("chat_template"), str):
        try:
            return Dialect.from_chat_template(config["chat_template"])
        except (DialectTemplateError, TemplateError):
            pass  # the model_type may still say it
    # The architectures first: a class names one family where a model_type may name several.
    names: List[str] = []
    architectures = config.get("architectures")
    if isinstance(architectures, list):
        names.extend(item for item in architectures if isinstance(item, str))
    model_type = config.get("model_type")
    if isinstance(model_type, str):
        names.append(model_type)
    for name in names:
        if (row := _lookup(name, exact_only=True)) is not None:
            return _options(row)
    described = ", ".join(repr(name) for name in names) or "no model_type or architectures"
    raise _unknown(f"a config with {described} (a model_type several families share, such as "
                   "'deepseek_v3' or 'llama', says too little: pass the model's name)")


def dialect_for_model(name_or_config: Union[str, Mapping[str, Any], "os.PathLike[str]"]) -> ParseOptions:
    """The parse options of a model's dialect: ``{"dialect": NAME}``, with
    ``"start_in_thinking": True`` when the model's chat template opens the reasoning in the
    prompt. Pass them on: ``parse(text, **dialect_for_model("Qwen/QwQ-32B"))``.

    ``name_or_config`` is a model name (a Hugging Face repo id such as ``"Qwen/Qwen3-32B"``, a
    local folder or file name, an alias such as ``"qwen3"``, ``"gpt-oss"``, ``"deepseek"``), a
    model's ``config.json`` as a dict (its ``model_type`` and ``architectures`` are looked up)
    or the path of a ``config.json`` or ``tokenizer_config.json`` (its ``name_or_path``, else the
    ``response_template`` it ships, read by :meth:`Dialect.from_response_template`, else its
    ``chat_template``, read by :meth:`Dialect.from_chat_template`).
    :data:`MODEL_DIALECTS` is the table. A model it does not know raises
    :class:`~agentmsg.UnknownModelError` (a ``KeyError``) saying how to describe the model.

    >>> dialect_for_model("openai/gpt-oss-120b")
    {'dialect': 'gpt_oss'}
    >>> dialect_for_model({"model_type": "glm4_moe", "architectures": ["Glm4MoeForCausalLM"]})
    {'dialect': 'glm45'}
    """
    if isinstance(name_or_config, Mapping):
        return _from_config(name_or_config)
    if isinstance(name_or_config, os.PathLike):
        return _from_config(_read_config(name_or_config))
    if not isinstance(name_or_config, str):
        raise MessageTypeError(
            f"name_or_config must be a model name, a config dict or a path, not {type_name(name_or_config)}"
        )
    if name_or_config.endswith(".json") and os.path.isfile(name_or_config):
        return _from_config(_read_config(name_or_config))
    row = _lookup(name_or_config)
    if row is None:
        raise _unknown(f"the model {describe(name_or_config)}")
    return _options(row)


check_calls(globals())
