"""Conversation helpers and the CLI."""

import json
import subprocess
import sys

import pytest

import agentmsg
from agentmsg import Message, MessageError, conversation_stats, count_by_role, filter_by_role
from agentmsg.cli import load_sample, main

CHAT = [
    Message.system("You are a helpful customer service assistant", timestamp=0),
    Message.user("I need help with my order", timestamp=1),
    Message.assistant("I'd be happy to help! What's your order number?", timestamp=2),
    Message.user("Order #12345", timestamp=3),
    Message.tool("found", tool_id="t1", timestamp=10),
]


def test_filter_by_role():
    assert [m.text for m in filter_by_role(CHAT, "user")] == ["I need help with my order", "Order #12345"]
    assert filter_by_role(CHAT, "assistant") == [CHAT[2]]
    with pytest.raises(MessageError, match="unknown role"):
        filter_by_role(CHAT, "robot")


def test_count_by_role():
    assert count_by_role(CHAT) == {"system": 1, "user": 2, "assistant": 1, "tool": 1}
    assert count_by_role([]) == {"system": 0, "user": 0, "assistant": 0, "tool": 0}


def test_stats():
    stats = conversation_stats(CHAT)
    assert stats.total_messages == 5
    assert stats.by_role == {"system": 1, "user": 2, "assistant": 1, "tool": 1}
    assert stats.chars_by_role["user"] == 25 + 12
    assert stats.total_chars == sum(m.length for m in CHAT)
    assert stats.average_length == stats.total_chars / 5
    assert stats.last_user_message == "Order #12345"
    assert stats.tool_results == 1 and stats.tool_calls == 0
    assert stats.duration_seconds == 10.0
    assert stats.estimated_tokens == sum(stats.tokens_by_role.values())
    empty = conversation_stats([])
    assert (empty.total_messages, empty.average_length, empty.duration_seconds) == (0, 0.0, 0.0)


def test_sample_transcript_ships_in_the_package():
    sample = load_sample()
    assert len(sample) == 9
    assert sample[0].role == "system"
    assert sum(1 for m in sample if m.has_tool_calls) == 2


def test_cli_stats_on_sample(capsys):
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "9 messages" in out
    assert "estimated tokens" in out
    assert "assistant          4" in out
    sample = load_sample()
    exact = [agentmsg.count_message_tokens(sample, encoding=e) for e in ("o200k_base", "cl100k_base")]
    assert out.splitlines()[-1] == (
        f"exact prompt tokens as an OpenAI chat request: {exact[0]} (o200k_base), {exact[1]} (cl100k_base)"
    )


def test_cli_stats_file_and_json(tmp_path, capsys):
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}]))
    assert main(["stats", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by_role"]["user"] == 1
    assert data["estimated_tokens"] == 5 + 4
    # Per message 3 + the role ("user", "assistant": 1 token each) + the content ("Hello", "Hi":
    # 1 token each), then 3 to prime the reply (OpenAI cookbook).
    assert data["prompt_tokens"] == {"o200k_base": (3 + 1 + 1) * 2 + 3, "cl100k_base": (3 + 1 + 1) * 2 + 3}


def test_cli_reports_bad_input(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text('[{"role": "robot", "content": "x"}]')
    assert main(["stats", str(path)]) == 1
    assert "unknown role 'robot'" in capsys.readouterr().err


def test_console_script_is_installed():
    result = subprocess.run([sys.executable, "-m", "agentmsg.cli", "stats"], capture_output=True, text=True)
    assert result.returncode == 0 and "9 messages" in result.stdout
