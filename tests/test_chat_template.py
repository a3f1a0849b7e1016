"""render_chat and ChatTemplate: byte for byte transformers' apply_chat_template(tokenize=False)
on the real templates of tests/data/chat_templates, typed errors for templates that raise, fail
to parse or run past their limits, and the reading of templates from files."""

import json
import threading
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import (ChatTemplate, ImageBlock, TemplateError, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock,
                      URLSource, render_chat, template_messages)
from chat_cases import OPTIONS, SPECIAL_TOKENS, TEMPLATES, TOOLS, cases, conversations, oracle_render

pytest.importorskip("transformers")

#: Templates rendered on only part of the cases, or with their own arguments, and why: everywhere
#: else agentmsg renders every case as transformers does (equal text, or both raise).
#: (cases kept: "tools" / "no_tools" / "all"; extra template arguments; tools to pass instead)
COHERE_TOOLS = [{"name": "internet_search", "description": "Search the web",
                 "parameter_definitions": {"query": {"description": "Query", "type": "str", "required": True}}}]
FIREFUNCTION_KWARGS = {"functions": json.dumps([tool["function"] for tool in TOOLS], indent=2), "datetime": "2024-07-26"}
SPECIAL_CASES: Dict[str, Any] = {
    # They loop over `tools` without checking it: with no tools, Jinja2 raises iterating None,
    # where MiniJinja iterates None as empty and renders.
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja": ("tools", {}, None),
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": ("tools", {}, None),
    # The same, and it takes Cohere's own tool format.
    "CohereForAI-c4ai-command-r-plus-tool_use.jinja": ("tools", {}, COHERE_TOOLS),
    # `tools|map(attribute='function')|tojson`: Jinja2's map is a generator json.dumps refuses,
    # so transformers raises with tools; agentmsg writes the list.
    "llama-cpp-deepseek-r1.jinja": ("no_tools", {}, None),
    # `"..."|safe + name`: Jinja2's Markup HTML-escapes the text added to it (the tool list comes
    # out as `&#34;name&#34;`); agentmsg does not escape.
    "meetkai-functionary-medium-v3.1.jinja": ("no_tools", {}, None),
    # It reads its tools from a `functions` string and a `datetime` argument.
    "fireworks-ai-llama-3-firefunction-v2.jinja": ("all", FIREFUNCTION_KWARGS, None),
}
TEMPLATE_NAMES = sorted(path.name for path in TEMPLATES.glob("*.jinja"))

CONVERSATIONS = conversations()


def _template(name: str) -> ChatTemplate:
    return ChatTemplate((TEMPLATES / name).read_text(encoding="utf-8"), SPECIAL_TOKENS)


_COMPILED: Dict[str, ChatTemplate] = {}


def _compiled(name: str) -> ChatTemplate:
    if name not in _COMPILED:
        _COMPILED[name] = _template(name)
    return _COMPILED[name]


def _both(name: str, messages: List[Dict[str, Any]], tools: Any, generation: bool, **kwargs: Any) -> None:
    """Renders with both; equal text, or both raise."""
    source = (TEMPLATES / name).read_text(encoding="utf-8")
    try:
        want = oracle_render(source, messages, tools, generation, **kwargs)
    except Exception:
        with pytest.raises(TemplateError):
            _compiled(name).render_dicts(messages, tools, generation, **kwargs)
        return
    assert _compiled(name).render_dicts(messages, tools, generation, **kwargs) == want


def _selected(name: str) -> List[Any]:
    kept, kwargs, tools = SPECIAL_CASES.get(name, ("all", {}, None))
    return [(case, kwargs, tools) for case in cases() if kept == "all" or case[1] == kept]


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_templates_render_as_transformers(name: str) -> None:
    for (conversation, _, with_tools, generation, options), kwargs, tools in _selected(name):
        _both(name, template_messages(CONVERSATIONS[conversation]), (tools or TOOLS) if with_tools else None,
              generation, **OPTIONS[options], **kwargs)


def test_every_template_renders_on_most_cases() -> None:
    assert len(TEMPLATE_NAMES) >= 70
    assert all(len(_selected(name)) >= len(cases()) // 2 for name in TEMPLATE_NAMES)


# Random histories: the families we parse, each rendered by both on what hypothesis makes.
PROPERTY_TEMPLATES = [
    "Qwen-Qwen3-0.6B.jinja", "Qwen-Qwen2.5-7B-Instruct.jinja", "Qwen3-Coder.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja", "deepseek-ai-DeepSeek-V3.1.jinja", "openai-gpt-oss-120b.jinja",
    "moonshotai-Kimi-K2.jinja", "GLM-4.6.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
]

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30)
_args = st.dictionaries(st.sampled_from(["city", "query", "n", "flag"]),
                        st.one_of(_text, st.integers(-5, 10**6), st.booleans(), st.floats(allow_nan=False,
                                                                                             allow_infinity=False)),
                        max_size=3)


@st.composite
def _histories(draw: Any) -> List[agentmsg.Message]:
    messages: List[agentmsg.Message] = []
    if draw(st.booleans()):
        messages.append(agentmsg.system(draw(_text)))
    for turn in range(draw(st.integers(1, 4))):
        messages.append(agentmsg.user(draw(_text)))
        calls = [agentmsg.ToolUseBlock(f"call_{turn}_{i}", draw(st.sampled_from(["get_weather", "search"])), draw(_args))
                 for i in range(draw(st.integers(0, 2)))]
        thinking = draw(st.one_of(st.none(), _text))
        messages.append(agentmsg.Message.assistant(draw(_text), calls, thinking=thinking))
        for call in calls:
            messages.append(agentmsg.Message.tool(draw(_text), tool_id=call.id, name=call.name))
        if calls:
            messages.append(agentmsg.Message.assistant(draw(_text)))
    if draw(st.booleans()):
        messages.append(agentmsg.user(draw(_text)))
    return messages


@pytest.mark.parametrize("name", PROPERTY_TEMPLATES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=_histories(), with_tools=st.booleans(), generation=st.booleans(),
       options=st.sampled_from(sorted(OPTIONS)))
def test_random_histories_render_as_transformers(name: str, history: List[agentmsg.Message], with_tools: bool,
                                                 generation: bool, options: str) -> None:
    kept = SPECIAL_CASES.get(name, ("all",))[0]
    with_tools = {"tools": True, "no_tools": False}.get(kept, with_tools)
    _both(name, template_messages(history), TOOLS if with_tools else None, generation, **OPTIONS[options])


_printable = st.characters(exclude_categories=("Cn", "Co", "Cs"))
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**62), 2**62), st.floats(allow_nan=False, allow_infinity=False),
              # Python's repr escapes every unprintable character; the core escapes the common ones
              # (controls, separators, format characters), not unassigned code points.
              st.text(_printable, max_size=10)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(_printable, max_size=5), inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(value=_json, indent=st.sampled_from([None, 0, 2, 4]), sort_keys=st.booleans(), ensure_ascii=st.booleans(),
       compact=st.booleans())
def test_tojson_is_json_dumps(value: Any, indent: Any, sort_keys: bool, ensure_ascii: bool, compact: bool) -> None:
    separators = (",", ":") if compact else None
    template = ChatTemplate("{{ messages[0]['content'] }}|{{ v|tojson(indent=indent, sort_keys=sort_keys, "
                            "ensure_ascii=ensure_ascii, separators=separators) }}|{{ v }}")
    # A value printed with {{ }} is Python's str() of it.
    got = template.render([agentmsg.user("x")], v=value, indent=indent, sort_keys=sort_keys,
                          ensure_ascii=ensure_ascii, separators=list(separators) if separators else None)
    want = "x|" + json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                             separators=separators) + "|" + (value if isinstance(value, str) else str(value))
    assert got == want


def test_every_input_form_renders_the_same() -> None:
    template = _compiled("Qwen-Qwen2.5-7B-Instruct.jinja")
    openai = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
    ]
    anthropic = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather",
                                           "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "Sunny"}]},
    ]
    messages = agentmsg.as_messages(openai)
    assert render_chat(openai, template) == render_chat(messages, template)
    assert render_chat(openai, template.source) == render_chat(messages, template)
    assert "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>" in \
        render_chat(anthropic, template)


def test_raise_exception_is_a_typed_error() -> None:
    template = _compiled("mistralai-Mistral-Nemo-Instruct-2407.jinja")
    with pytest.raises(TemplateError) as caught:
        render_chat([agentmsg.user("a"), agentmsg.user("b")], template)
    assert caught.value.kind == "raised"
    assert caught.value.template_message == (
        "After the optional system message, conversation roles must alternate user/assistant/user/assistant/...")
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, agentmsg.AgentMsgError)


def test_syntax_errors_name_the_line() -> None:
    with pytest.raises(TemplateError) as caught:
        ChatTemplate("{% for m in messages %}\n{{ m.content }}\n{% endif %}")
    assert caught.value.kind == "syntax" and caught.value.line == 3
    assert "line 3" in str(caught.value)


@pytest.mark.parametrize("source", [
    "{% include 'secrets.txt' %}", "{% import 'macros.j2' as m %}", "{% extends 'base.j2' %}",
    "{% from 'x' import y %}",
])
def test_templates_cannot_load_files(source: str) -> None:
    with pytest.raises(TemplateError):
        ChatTemplate(source).render([agentmsg.user("x")])


@pytest.mark.parametrize("source", [
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% set ns = namespace(s='ab') %}{% for i in range(80) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
])
def test_unbounded_templates_are_stopped(source: str) -> None:
    with pytest.raises(TemplateError) as caught:
        ChatTemplate(source, fuel=1_000_000).render([agentmsg.user("x")])
    assert caught.value.kind in ("limit", "render")


def test_limits_are_the_callers() -> None:
    source = "{% for i in range(1000) %}0123456789{% endfor %}"
    assert len(ChatTemplate(source).render([])) == 10_000
    with pytest.raises(TemplateError) as caught:
        ChatTemplate(source, max_output_bytes=1_000).render([])
    assert caught.value.kind == "limit"
    with pytest.raises(TemplateError) as caught:
        ChatTemplate(source, fuel=100).render([])
    assert caught.value.kind == "limit"
    with pytest.raises(agentmsg.MessageTypeError):
        ChatTemplate(source, fuel=0)


def test_values_a_template_cannot_hold_are_typed_errors() -> None:
    template = ChatTemplate("{{ x }}")
    with pytest.raises(agentmsg.MessageTypeError, match="x must be a JSON-like value"):
        template.render([], x=object())
    with pytest.raises(agentmsg.MessageTypeError):
        template.render([], documents=[])
    with pytest.raises(agentmsg.MessageTypeError):
        render_chat([], 3)  # type: ignore[arg-type]
    # The error names where the value is, through dicts, lists and tuples.
    tools = [{"type": "function", "function": {"name": "f", "parameters": ({"ok": 1}, [None, object()])}}]
    with pytest.raises(agentmsg.MessageTypeError,
                       match=r"^tools\[0\]\['function'\]\['parameters'\]\[1\]\[1\] must be a JSON-like value .* "
                             r"not object$"):
        template.render([], tools=tools)
    with pytest.raises(agentmsg.MessageError, match=r"^messages\[0\]\['content'\] holds a lone surrogate"):
        template.render_dicts([{"role": "user", "content": "\ud800"}])
    with pytest.raises(agentmsg.MessageError, match=r"^y\[0\] is an int too large"):
        template.render([], y=[2**200])


def test_from_file_reads_jinja_configs_and_directories(tmp_path: Any) -> None:
    source = (TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text(encoding="utf-8")
    config = {"chat_template": source, "bos_token": None, "eos_token": {"content": "<|im_end|>", "special": True}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    from_config = ChatTemplate.from_file(tmp_path / "tokenizer_config.json")
    assert from_config.special_tokens == {"eos_token": "<|im_end|>"}
    from_dir = ChatTemplate.from_file(tmp_path)
    assert from_dir.source == source and from_dir.special_tokens == from_config.special_tokens
    (tmp_path / "chat_template.jinja").write_text("{{ eos_token }}", encoding="utf-8")
    assert ChatTemplate.from_file(tmp_path).render([]) == "<|im_end|>"
    named = {"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}
    (tmp_path / "named.json").write_text(json.dumps(named), encoding="utf-8")
    assert ChatTemplate.from_file(tmp_path / "named.json").render([]) == "D"
    with pytest.raises(TemplateError, match="cannot read"):
        ChatTemplate.from_file(tmp_path / "missing.jinja")


def test_renders_from_threads_agree() -> None:
    template = _compiled("Qwen-Qwen3-0.6B.jinja")
    history = CONVERSATIONS["two_calls_thinking"]
    want = render_chat(history, template, tools=TOOLS)
    results: List[str] = []

    def work() -> None:
        for _ in range(20):
            results.append(render_chat(history, template, tools=TOOLS))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [want] * 80


def test_template_messages_of_every_block_kind() -> None:
    """Each field of a template dict from the blocks it is made of, in one pass over them."""
    results = agentmsg.Message("tool", [ToolResultBlock("c1", [TextBlock("r1"), TextBlock("r2")])])
    mixed = agentmsg.Message("assistant", [ThinkingBlock("a"), TextBlock("x"), ToolUseBlock("c3", "f", {"k": 1}),
                                        ThinkingBlock("b"), TextBlock("y")], name="bot")
    media = agentmsg.user([TextBlock("look"), ImageBlock(URLSource("https://example.com/a.png")), TextBlock("here")])
    assert template_messages([results, mixed, media]) == [
        {"role": "tool", "content": "r1\nr2", "tool_call_id": "c1"},
        {"thinking": "a\nb", "role": "assistant", "content": "x\ny", "reasoning_content": "a\nb",
         "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "f", "arguments": {"k": 1}}}],
         "name": "bot"},
        {"role": "user",
         "content": [{"type": "text", "text": "look"}, {"type": "image"}, {"type": "text", "text": "here"}]},
    ]
