"""from_langchain / to_langchain: round trips both ways (hypothesis), every message kind and block
shape, and the errors."""

import sys
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)

from agentmsg import (
    Base64Source,
    ConversionError,
    ConversionWarning,
    ImageBlock,
    Message,
    MessageTypeError,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    URLSource,
    from_langchain,
    to_langchain,
    to_openai,
)
from agentmsg.errors import MissingDependencyError
from convert_strategies import messages as our_messages
from convert_strategies import json_objects, nonempty_text, text

# -- ours -> LangChain -> ours -------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(our_messages, max_size=5))
def test_ours_to_langchain_and_back_is_lossless(chat):
    assert from_langchain(to_langchain(chat)) == chat


# -- LangChain -> ours -> LangChain --------------------------------------------------------------

ids = st.none() | nonempty_text
names = st.none() | nonempty_text
media_blocks = st.one_of(
    st.builds(lambda url: {"type": "image", "url": "https://" + url}, text),
    st.builds(lambda data: {"type": "image", "base64": data, "mime_type": "image/png"}, nonempty_text),
    st.builds(lambda url: {"type": "audio", "url": "https://" + url}, text),
)
text_parts = st.builds(lambda t: {"type": "text", "text": t}, nonempty_text)
reasoning_parts = st.one_of(
    st.builds(lambda t: {"type": "reasoning", "reasoning": t}, text),
    st.builds(lambda t, s: {"type": "reasoning", "reasoning": t, "extras": {"signature": s}}, text, text),
)
user_content = nonempty_text | st.lists(text_parts | media_blocks, min_size=1, max_size=3)
tool_calls = st.lists(st.builds(lambda i, n, a: {"id": i, "name": n, "args": a, "type": "tool_call"},
                                nonempty_text, nonempty_text, json_objects), max_size=2)
usage = st.none() | st.builds(lambda a, b: {"input_tokens": a, "output_tokens": b, "total_tokens": a + b},
                              st.integers(0, 1000), st.integers(0, 1000))
extra_kwargs = st.dictionaries(st.sampled_from(["refusal", "audio", "reasoning_content"]), text, max_size=2)


@st.composite
def ai_messages(draw):
    calls = draw(tool_calls)
    parts = draw(st.lists(reasoning_parts, max_size=1)) + draw(st.lists(text_parts, max_size=2))
    content = draw(st.just("") | nonempty_text) if not parts or draw(st.booleans()) else parts
    if not calls and not content:
        content = "ok"
    return AIMessage(content=content, tool_calls=calls, id=draw(ids), name=draw(names),
                     usage_metadata=draw(usage), additional_kwargs=draw(extra_kwargs),
                     response_metadata=draw(st.just({}) | st.just({"model_provider": "openai", "finish_reason": "stop"})))


langchain_messages = st.one_of(
    st.builds(lambda c, i, n: SystemMessage(c, id=i, name=n), nonempty_text, ids, names),
    st.builds(lambda c, i, n: HumanMessage(c, id=i, name=n), user_content, ids, names),
    ai_messages(),
    st.builds(lambda c, t, s, i, a: ToolMessage(c, tool_call_id=t, status=s, id=i, artifact=a),
              text | st.lists(text_parts, max_size=2), nonempty_text, st.sampled_from(["success", "error"]), ids,
              st.none() | json_objects),
    st.builds(lambda c, n: FunctionMessage(c, name=n), text, nonempty_text),
    st.builds(lambda c, r: ChatMessage(c, role=r), nonempty_text, st.sampled_from(["developer", "user", "ai"])),
)

FIELDS = ("type", "content", "name", "id", "tool_calls", "invalid_tool_calls", "usage_metadata",
          "response_metadata", "tool_call_id", "status", "artifact", "role")


def fields(message):
    out = {key: getattr(message, key) for key in FIELDS if hasattr(message, key)}
    out["additional_kwargs"] = {k: v for k, v in message.additional_kwargs.items() if k != "agentmsg"}
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(langchain_messages, max_size=5))
def test_langchain_to_ours_and_back_keeps_every_field(chat):
    back = to_langchain(from_langchain(chat))
    assert [type(m) for m in back] == [type(m) for m in chat]
    assert [fields(m) for m in back] == [fields(m) for m in chat]


# -- shapes ----------------------------------------------------------------------------------------


def test_reads_every_message_kind():
    chat = from_langchain([
        SystemMessage("Be brief", id="s1"),
        HumanMessage("What is 2+2?", name="ann"),
        AIMessage("", tool_calls=[{"id": "c1", "name": "calc", "args": {"a": 2, "b": 2}}],
                  additional_kwargs={"reasoning_content": "add them"}),
        ToolMessage("4", tool_call_id="c1"),
        ToolMessage("boom", tool_call_id="c2", status="error"),
        FunctionMessage("4", name="calc"),
        ChatMessage("rules", role="developer"),
        AIMessageChunk("partial"),
    ])
    assert [m.role.value for m in chat] == ["system", "user", "assistant", "tool", "tool", "tool", "system", "assistant"]
    assert chat[0].id == "s1" and chat[1].name == "ann"
    assert chat[2].tool_calls == (ToolUseBlock("c1", "calc", {"a": 2, "b": 2}),)
    assert chat[2].reasoning_content == "add them" and chat[2].thinking == "add them"
    assert (chat[3].tool_id, chat[3].text, chat[3].is_error) == ("c1", "4", False)
    assert chat[4].is_error
    assert (chat[5].tool_id, chat[5].name) == (None, "calc")
    assert chat[6].metadata == {"langchain": {"chat_role": "developer", "id": None}}
    assert chat[7].text == "partial"


def test_reads_every_block_shape():
    content = [
        "bare string",
        {"type": "text", "text": "text"},
        {"type": "image", "url": "https://a/b.png"},
        {"type": "image", "base64": "AAAA", "mime_type": "image/png"},
        {"type": "image", "source_type": "base64", "data": "BBBB", "mime_type": "image/jpeg"},
        {"type": "image", "source_type": "url", "url": "https://c/d.png"},
        {"type": "image_url", "image_url": {"url": "data:image/gif;base64,CCCC"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "DDDD"}},
    ]
    blocks = from_langchain([HumanMessage(content)])[0].content
    assert blocks == (
        TextBlock("bare string"), TextBlock("text"), ImageBlock(URLSource("https://a/b.png")),
        ImageBlock(Base64Source("image/png", "AAAA")), ImageBlock(Base64Source("image/jpeg", "BBBB")),
        ImageBlock(URLSource("https://c/d.png")), ImageBlock(Base64Source("image/gif", "CCCC")),
        ImageBlock(Base64Source("image/webp", "DDDD")),
    )
    # Anthropic's thinking blocks and its content copy of a call.
    ai = AIMessage([{"type": "thinking", "thinking": "hm", "signature": "sig"},
                    {"type": "tool_use", "id": "c1", "name": "calc", "input": {}}],
                   tool_calls=[{"id": "c1", "name": "calc", "args": {}}])
    assert from_langchain([ai])[0].content == (ThinkingBlock("hm", "sig"), ToolUseBlock("c1", "calc", {}))


def test_writes_v1_blocks_and_strings():
    chat = [Message.user([TextBlock("look"), ImageBlock(Base64Source("image/png", "AAAA"))]),
            Message.assistant("Sure", thinking="plan", tool_calls=[ToolUseBlock("c1", "calc", {"a": 1})])]
    human, ai = to_langchain(chat)
    assert human.content == [{"type": "text", "text": "look"},
                             {"type": "image", "base64": "AAAA", "mime_type": "image/png"}]
    assert ai.content == [{"type": "reasoning", "reasoning": "plan"}, {"type": "text", "text": "Sure"}]
    assert ai.tool_calls == [{"id": "c1", "name": "calc", "args": {"a": 1}, "type": "tool_call"}]


def test_agrees_with_langchains_openai_converter():
    chat = [SystemMessage("Be brief"), HumanMessage("2+2?", name="ann"),
            AIMessage("", tool_calls=[{"id": "c1", "name": "calc", "args": {"a": 2}}]),
            ToolMessage("4", tool_call_id="c1"), AIMessage("It is 4")]
    theirs = convert_to_openai_messages(chat)
    ours = to_openai(from_langchain(chat))
    for mine, reference in zip(ours, theirs):
        reference = {k: v for k, v in reference.items() if v not in (None, [])}
        if "tool_calls" in mine:
            mine = dict(mine, content=mine.get("content") or "")
        assert mine == reference


def test_our_fields_are_not_sent_to_providers():
    chat = [Message.user("Hi", metadata={"trace": 1}),
            Message.assistant("ok", tool_calls=[ToolUseBlock("c1", "calc", {}, "mcp", {"k": 1})], finished=True),
            Message.tool("2", tool_id="c1")]
    sent = convert_to_openai_messages(to_langchain(chat))
    assert "agentmsg" not in repr(sent) and "trace" not in repr(sent) and "mcp" not in repr(sent)


def test_errors():
    with pytest.raises(MessageTypeError, match=r"messages\[1\] must be a LangChain message, not dict"):
        from_langchain([HumanMessage("a"), {"role": "user", "content": "b"}])
    with pytest.raises(MessageTypeError, match="not a single HumanMessage"):
        from_langchain(HumanMessage("a"))
    with pytest.raises(ConversionError, match=r"^messages\[0\].content\[0\]: media with neither url nor base64 data "
                                              r"\(a file_id cannot be read\)$"):
        from_langchain([HumanMessage([{"type": "file", "file_id": "f1"}])])
    with pytest.raises(ConversionError, match=r"messages\[0\].content\[0\].type: unknown content block type 'x'"):
        from_langchain([HumanMessage([{"type": "x"}])])
    with pytest.raises(ConversionError, match="a ChatMessage with role 'critic' has no agentmsg role"):
        from_langchain([ChatMessage("x", role="critic")])
    with pytest.raises(ConversionError, match=r"messages\[0\]: content is empty"):
        from_langchain([HumanMessage("")])
    with pytest.raises(MessageTypeError, match="must be a Message"):
        to_langchain([3])
    assert to_langchain([HumanMessage("a")])[0].content == "a"  # read by as_messages, as every input


def test_what_cannot_be_kept_is_reported():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chat = from_langchain([ToolMessage("x", tool_call_id="c1", artifact=object()),
                               AIMessage([{"type": "text", "text": "hi", "annotations": [1]}])])
    assert [str(w.message) for w in caught] == [
        "from_langchain cannot carry artifact that is not JSON (message 0); they were left out",
        "from_langchain cannot carry content block fields ('annotations') (message 1); they were left out",
    ]
    assert all(w.category is ConversionWarning for w in caught) and chat[0].text == "x"


def test_missing_langchain_is_a_typed_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    with pytest.raises(MissingDependencyError, match="pip install 'langchain-core"):
        to_langchain([Message.user("a")])
    with pytest.raises(ImportError):
        from_langchain([])
