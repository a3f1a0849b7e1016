"""``agentmsg parse --dialect NAME --tools FILE --start-in-thinking --strict`` (issue 22, section 4)."""

from __future__ import annotations

import io
import json
import sys

from agentmsg.cli import main

QWEN = "I should add.</think><tool_call>\n<function=add>\n<parameter=a>\n2\n</parameter>\n</function>\n</tool_call>"
TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}}}]


def run(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_parse_reads_a_dialect_typed_by_tools(capsys, tmp_path):
    (tmp_path / "reply.txt").write_text(QWEN)
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    code, out, err = run(capsys, "parse", str(tmp_path / "reply.txt"), "--dialect", "qwen3_coder",
                         "--tools", str(tmp_path / "tools.json"))
    data = json.loads(out)
    assert (code, err, data["thinking"], data["text"]) == (0, "", ["I should add."], "")
    assert [(c["name"], c["input"]) for c in data["tool_calls"]] == [("add", {"a": 2})]
    code, out, _ = run(capsys, "parse", str(tmp_path / "reply.txt"), "--dialect", "qwen3_coder")
    assert json.loads(out)["tool_calls"][0]["input"] == {"a": "2"}


def test_parse_stream_starts_in_thinking_when_told(capsys, monkeypatch):
    text = "plan</think>ok"
    code, out, _ = run(capsys, "parse", "--stream", "--dialect", "hermes", "--start-in-thinking",
                       stdin=text.encode(), monkeypatch=monkeypatch)
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert "".join(e["text"] for e in events if e["event"] == "ThinkingDelta") == "plan"
    assert "".join(e["text"] for e in events if e["event"] == "TextDelta") == "ok"
    code, out, _ = run(capsys, "parse", "--dialect", "hermes", "--no-start-in-thinking",
                       stdin=text.encode(), monkeypatch=monkeypatch)
    assert (json.loads(out)["text"], json.loads(out)["thinking"]) == ("plan</think>ok", [])


def test_parse_strict_keeps_calls_in_reasoning(capsys, monkeypatch):
    text = '<think>plan <tool_call>{"name": "f", "arguments": {}}</tool_call>'
    code, out, _ = run(capsys, "parse", "--dialect", "hermes", stdin=text.encode(), monkeypatch=monkeypatch)
    assert [c["name"] for c in json.loads(out)["tool_calls"]] == ["f"]
    code, out, _ = run(capsys, "parse", "--dialect", "hermes", "--strict", stdin=text.encode(), monkeypatch=monkeypatch)
    assert (json.loads(out)["tool_calls"], json.loads(out)["incomplete_thinking"]) == ([], True)


def test_parse_names_a_bad_tools_file_and_dialect(capsys, tmp_path):
    (tmp_path / "reply.txt").write_text("x")
    (tmp_path / "tools.json").write_text("[{")
    code, _, err = run(capsys, "parse", str(tmp_path / "reply.txt"), "--dialect", "hermes",
                       "--tools", str(tmp_path / "tools.json"))
    assert code == 1
    assert err.startswith(f"agentmsg: error: {tmp_path / 'tools.json'}: line 1: not JSON (")
    assert main(["parse", "--dialect", "nope"]) == 2
    assert "argument --dialect: invalid choice: 'nope'" in capsys.readouterr().err
