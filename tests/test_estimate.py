"""Forge's token estimate through the Rust core."""

import json
import pathlib

import pytest
from hypothesis import given, settings, strategies as st

import agentmsg
from agentmsg import (
    ImageBlock,
    Base64Source,
    Message,
    MessageError,
    MessageTypeError,
    ServerToolResultBlock,
    ServerToolUseBlock,
    ToolUseBlock,
    URLSource,
    estimate_tokens,
    estimate_tokens_many,
    measured_text,
)
from agentmsg import _core

from strategies import messages

SEED_CALL = """<tool>
{
  "server_name": "local",
  "tool_name": "calculator",
  "arguments": {"a": 5, "b": 3}
}
</tool>"""


def reference(text: str, role: str) -> int:
    """Forge's Go function, written out in Python."""
    tokens = len(text.encode("utf-8", "surrogatepass")) // 4
    tokens += 10 if role == "tool" else 4
    if "<tool>" in text:
        tokens += 10
    return tokens


def test_seed_000_examples():
    assert estimate_tokens("Hello") == 5
    assert estimate_tokens(Message.user("Hello")) == 5
    long = (
        "Please explain the difference between lists and tuples in Python, including their "
        "performance characteristics and common use cases."
    )
    assert estimate_tokens(Message.user(long)) == 32 + 4  # 130 bytes // 4 = 32 (Forge: "~25 + 4")
    assert estimate_tokens(Message.assistant(SEED_CALL)) == len(SEED_CALL) // 4 + 4 + 10


@pytest.mark.parametrize("role, overhead", [("system", 4), ("user", 4), ("assistant", 4), ("tool", 10)])
def test_role_overhead(role, overhead):
    assert estimate_tokens("", role=role) == overhead
    assert estimate_tokens("abcd", role=agentmsg.Role(role)) == overhead + 1


def test_bytes_not_characters():
    assert estimate_tokens("日本語日") == 12 // 4 + 4
    assert estimate_tokens("\ud800" * 4) == 12 // 4 + 4  # lone surrogates: 3 bytes each


def test_measured_text_of_blocks():
    call = ToolUseBlock("c1", "calc", {"a": 1})
    message = Message.assistant("Adding", [call], thinking="easy")
    assert measured_text(message) == (
        'easy\nAdding\n<tool>{"server_name": "local", "tool_name": "calc", "arguments": {"a": 1}}</tool>'
    )
    assert estimate_tokens(message) == reference(measured_text(message), "assistant")
    assert estimate_tokens(message) == len(measured_text(message)) // 4 + 4 + 10
    image = Message.user([ImageBlock(URLSource("https://e.com/a.png")), ImageBlock(Base64Source("image/png", "A" * 999))])
    assert measured_text(image) == "https://e.com/a.png"
    assert measured_text(Message.tool("Result: 8", name="calculator")) == "Result: 8"


def test_a_tool_the_provider_ran_counts_as_a_call_and_its_result_as_json():
    search = ServerToolUseBlock("srvtoolu_1", "web_search", {"query": "Paris"}, provider="anthropic")
    found = ServerToolResultBlock("srvtoolu_1", [{"type": "web_search_result", "title": "Météo", "n": 1.5}],
                                  provider="anthropic")
    message = Message("assistant", [search, found, agentmsg.TextBlock("Sunny.")])
    assert measured_text(message) == (
        '<tool>{"server_name": null, "tool_name": "web_search", "arguments": {"query": "Paris"}}</tool>\n'
        '[{"type": "web_search_result", "title": "Météo", "n": 1.5}]\nSunny.'
    )
    assert estimate_tokens(message) == reference(measured_text(message), "assistant")
    # A content json.dumps writes in its own way (a subclass of dict) is measured by Python.
    class Ordered(dict):
        pass
    odd = Message("assistant", [ServerToolResultBlock("srvtoolu_1", Ordered(a="é"))])
    assert estimate_tokens(odd) == reference(measured_text(odd), "assistant")


def test_estimate_many_matches_one_by_one():
    chat = [Message.system("Be brief"), Message.user("Hello"), Message.assistant(SEED_CALL),
            Message.tool("Result: 8", name="calculator")]
    assert estimate_tokens_many(chat) == [estimate_tokens(m) for m in chat]
    assert estimate_tokens_many([]) == []


def test_errors():
    with pytest.raises(MessageError, match="unknown role 'robot'"):
        estimate_tokens("hi", role="robot")
    with pytest.raises(MessageTypeError):
        estimate_tokens(42)
    with pytest.raises(MessageTypeError, match=r"messages\[1\] must be a Message"):
        estimate_tokens_many([Message.user("a"), "b"])
    with pytest.raises(MessageError, match="2 texts but 1 roles"):
        _core.estimate_tokens_many(["a", "b"], [1])
    with pytest.raises(MessageError, match="unknown role code 7 at index 0"):
        _core.estimate_tokens_many(["a"], [7])


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec=None)), st.sampled_from(["system", "user", "assistant", "tool"]))
def test_core_matches_the_seed_formula_on_any_text(text, role):
    assert estimate_tokens(text, role=role) == reference(text, role)


def test_a_text_document_counts_its_text_and_a_pdf_only_its_url():
    import base64

    words = "the quick brown fox " * 2_000
    text_doc = agentmsg.DocumentBlock(Base64Source("text/plain", base64.b64encode(words.encode()).decode()))
    odd = agentmsg.DocumentBlock(Base64Source("text/csv", base64.b64encode(b"a,\xff\n").decode()), "a.csv")
    pdf = agentmsg.DocumentBlock(Base64Source("application/pdf", "JVBERi0xLjQK"))
    by_url = agentmsg.DocumentBlock(URLSource("https://e.com/a.pdf"))
    message = Message.user([agentmsg.TextBlock("Read these"), text_doc, odd, pdf, by_url])
    assert measured_text(message) == "Read these\n" + words + "\na,\ufffd\n\nhttps://e.com/a.pdf"
    assert estimate_tokens(message) == reference(measured_text(message), "user")
    # A budget holds the document: it is not a 2-token message.
    history = [Message.system("Be brief"), message, Message.assistant("Done")]
    assert agentmsg.trim(history, 1000, counter="estimate").kept == (0, 2)


@settings(max_examples=100, deadline=None)
@given(messages)
def test_message_estimate_is_the_formula_over_measured_text(message):
    assert estimate_tokens(message) == reference(measured_text(message), message.role.value)


def test_shared_transcripts():
    data = pathlib.Path(__file__).resolve().parent / "data" / "swe-agent-trajectories"
    files = sorted(data.glob("*.traj"))
    assert files, f"no transcripts under {data}"
    for path in files:
        for item in json.loads(path.read_text())["history"]:
            assert estimate_tokens(item["content"], role=item["role"]) == reference(item["content"], item["role"])
