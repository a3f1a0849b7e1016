"""The agentmsg command line, in-process through main([...]) and, for a few, as `python -m agentmsg`."""

import argparse
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import agentmsg
import transcripts
from agentmsg import count_message_tokens, load_transcript
from agentmsg.cli import TARGETS, main

DATA = Path(__file__).parent / "data"
FORMATS = DATA / "transcript-formats"
BAD = DATA / "bad"
TRAJ = transcripts.TRAJECTORY_DIR
SIMPLE = str(TRAJ / "function_calling_simple.traj")
REPO = Path(__file__).resolve().parent.parent

README_STATS = """\
sample_transcript.json (sample shipped with agentmsg, agentmsg JSON): 9 messages, 194 characters, 211 estimated tokens
role        messages  characters  est. tokens
system             1          28           11
user               2          51           20
assistant          4          82          153
tool               2          33           27
total              9         194          211
tool calls: 2, tool results: 2
exact prompt tokens as an OpenAI chat request: 135 (o200k_base), 136 (cl100k_base)
"""


def run(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_stats_of_the_sample_is_the_readme_output(capsys):
    assert run(capsys, "stats") == (0, README_STATS, "")


def test_stats_keeps_openai_tool_calls_and_counts_the_whole_request(capsys):
    code, out, err = run(capsys, "stats", str(FORMATS / "openai.json"))
    messages = load_transcript(FORMATS / "openai.json").messages
    assert (code, err) == (0, "")
    assert "tool calls: 5, tool results: 5" in out
    exact = count_message_tokens(messages, encoding="o200k_base")
    assert f"exact prompt tokens as an OpenAI chat request: {exact} (o200k_base)" in out
    assert exact > count_message_tokens([m for m in messages if not m.tool_calls and m.role != "tool"])


def test_stats_reads_traj_files_and_folders_and_stdin(capsys, monkeypatch):
    code, out, _ = run(capsys, "stats", str(TRAJ))
    assert code == 0 and out.count("(swe-agent .traj)") == 5
    code, out, _ = run(capsys, "stats", "-", "--json", stdin=(FORMATS / "openai.jsonl").read_bytes(),
                       monkeypatch=monkeypatch)
    data = json.loads(out)
    assert (code, data["format"], data["tool_calls"], data["total_messages"]) == (
        0, "openai JSONL, one message per line", 5, 12)


@pytest.mark.parametrize("name", sorted(p.name for p in BAD.iterdir()))
def test_every_bad_file_is_one_line_and_exit_1_for_every_command(capsys, name):
    for command in (["stats"], ["count"], ["convert", "--to", "openai"], ["trim", "--max-tokens", "100"],
                    ["workbench", "--budget", "100"]):
        code, out, err = run(capsys, *command, str(BAD / name))
        assert code == 1, (command, name)
        assert err.count("\n") == 1 and err.startswith(f"agentmsg: error: {BAD / name}"), (command, err)


def test_a_missing_file_is_one_line(capsys):
    code, _, err = run(capsys, "count", "nope.json")
    assert (code, err) == (1, "agentmsg: error: nope.json: No such file or directory\n")


@pytest.mark.parametrize("argv", [
    [], ["frobnicate"], ["convert", SIMPLE, "--from", "yaml"], ["convert", SIMPLE, "--to", "yaml"], ["trim", SIMPLE],
    ["trim", SIMPLE, "--max-tokens", "-5"], ["count", SIMPLE, "--model", "gpt-4o", "--encoding", "cl100k_base"],
    ["workbench", SIMPLE, "--strategy", "magic"],
])
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and "usage: agentmsg" in err


@pytest.mark.parametrize("command", ["stats", "count", "trim", "convert", "parse", "workbench"])
def test_every_command_has_help_with_a_description_and_an_example(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and f"usage: agentmsg {command}" in out and "\nexample:\n  agentmsg " + command in out


def test_version(capsys):
    assert run(capsys, "--version") == (0, f"agentmsg {agentmsg.__version__}\n", "")


def test_count_per_encoding_and_model(capsys):
    messages = {t.name: t.messages for t in agentmsg.iter_transcripts(TRAJ)}
    code, out, _ = run(capsys, "count", str(TRAJ), "--model", "gpt-4")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 6
    expected = {name: count_message_tokens(m, encoding="cl100k_base") for name, m in messages.items()}
    assert lines[:5] == [f"{tokens}\t{name}" for name, tokens in expected.items()]
    assert lines[5] == f"{sum(expected.values())}\ttotal (5 conversations, cl100k_base)"
    code, out, _ = run(capsys, "count", SIMPLE, "--json")
    assert json.loads(out) == {"name": "function_calling_simple", "source": SIMPLE, "messages": 12,
                               "prompt_tokens": count_message_tokens(messages["function_calling_simple"]),
                               "encoding": "o200k_base"}
    code, _, err = run(capsys, "count", SIMPLE, "--model", "llama-3")
    assert code == 1 and err.startswith("agentmsg: error: unknown model 'llama-3': give --encoding")


def test_count_whole_requests(capsys, tmp_path):
    tool = {"type": "function", "function": {"name": "now", "description": "The time."}}
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}], "tools": [tool]}))
    expected = agentmsg.count_request_tokens(json.loads(chat.read_text()))
    code, out, err = run(capsys, "count", "--request", str(chat))
    assert (code, err) == (0, "")
    assert out.splitlines() == [f"{expected.total}\testimate, {expected.low}-{expected.high}\t{chat}",
                                f"  messages: {expected.parts['messages']}", f"  tools: {expected.parts['tools']} (estimate)",
                                *[f"  note: {note}" for note in expected.notes]]
    code, out, _ = run(capsys, "count", "--request", str(chat), "--json", "--model", "claude-sonnet-4-5")
    data = json.loads(out)
    assert code == 0 and data["provider"] == "anthropic" and data["exact"] is False and data["name"] == str(chat)
    chat.write_text(json.dumps({"model": "gpt-4o", "messages": "Hi"}))
    code, _, err = run(capsys, "count", "--request", str(chat))
    assert code == 1 and err == "agentmsg: error: request.messages must be a list, not str\n"


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_convert_to_every_target(capsys, target, tmp_path):
    out_file = tmp_path / f"out.{target}.json"
    code, _, err = run(capsys, "convert", SIMPLE, "--to", target, "-o", str(out_file))
    assert code == 0
    document = json.loads(out_file.read_text())
    assert document
    if target in ("agentmsg", "openai", "anthropic", "bedrock"):
        back = load_transcript(out_file)
        assert back.format == f"{target} JSON"
        original = load_transcript(SIMPLE).messages
        assert [(m.role, m.text, m.tool_id) for m in back.messages] == [(m.role, m.text, m.tool_id) for m in original]


def test_convert_jsonl_of_conversations_streams_jsonl(capsys):
    code, out, _ = run(capsys, "convert", str(FORMATS / "conversations-messages.jsonl"), "--to", "anthropic")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 and all(set(json.loads(line)) == {"system", "messages"} for line in lines)


def test_trim_writes_the_trimmed_conversation(capsys):
    code, out, _ = run(capsys, "trim", SIMPLE, "--max-tokens", "1000", "--to", "openai")
    kept = json.loads(out)
    expected = agentmsg.to_openai(agentmsg.trim(load_transcript(SIMPLE).messages, 1000, counter="o200k_base").messages)
    assert code == 0 and kept == expected and kept[0]["role"] == "system" and len(kept) < 12


def test_parse_a_file_and_stdin(capsys, monkeypatch, tmp_path):
    text = '<think>plan</think>Done <tool>{"tool_name": "calc", "arguments": {"a": 1}}</tool>'
    (tmp_path / "reply.txt").write_text(text)
    code, out, _ = run(capsys, "parse", str(tmp_path / "reply.txt"))
    data = json.loads(out)
    assert (code, data["text"], data["thinking"], data["errors"]) == (0, "Done", ["plan"], [])
    assert data["tool_calls"][0]["name"] == "calc" and data["tool_calls"][0]["input"] == {"a": 1}
    code, out, _ = run(capsys, "parse", stdin=text.encode(), monkeypatch=monkeypatch)
    assert json.loads(out) == data
    code, _, err = run(capsys, "parse", str(BAD / "latin-1.json"))
    assert code == 1 and err == f"agentmsg: error: {BAD / 'latin-1.json'}: line 1: not UTF-8 text (byte 0xe9)\n"


def test_parse_stream_prints_events_as_json_lines(capsys, monkeypatch):
    text = "Hi <tool>" + '{"tool_name": "t", "arguments": {}}' + "</tool> é"
    code, out, _ = run(capsys, "parse", "--stream", "--chunk-size", "3", stdin=text.encode(), monkeypatch=monkeypatch)
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert "".join(e["text"] for e in events if e["event"] == "TextDelta") == agentmsg.parse(text).text
    end = next(e for e in events if e["event"] == "ToolCallEnd")
    assert end["call"]["name"] == "t" and end["error"] is None


def test_workbench_command_writes_table_json_csv_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    code, out, err = run(capsys, "workbench", SIMPLE, "--strategy", "trim", "--strategy", "mask-tool-outputs",
                         "--budget", "1000", "--budget", "4000", "--json", str(tmp_path / "wb.json"),
                         "--csv", str(tmp_path / "wb.csv"), "--plot", str(tmp_path / "wb.png"), "--per-transcript")
    assert (code, err) == (0, "")
    assert out.startswith("function_calling_simple:\nstrategy") and out.count("\ntrim ") == 4
    assert len(json.loads((tmp_path / "wb.json").read_text())["overall"]) == 4
    assert (tmp_path / "wb.csv").read_text().count("\n") == 1 + 4 + 4
    assert (tmp_path / "wb.png").read_bytes()[:4] == b"\x89PNG"


def module(*argv, stdin=b""):
    # The agentmsg these tests imported (installed, or a dev tree on PYTHONPATH), not the bare source
    # tree, which has no compiled core in a fresh clone.
    env = {**os.environ, "PYTHONPATH": str(Path(agentmsg.__file__).resolve().parent.parent)}
    return subprocess.run([sys.executable, "-m", "agentmsg", *argv], input=stdin, capture_output=True, env=env,
                          cwd=REPO, timeout=120)


def test_python_dash_m_agentmsg():
    done = module("--version")
    assert (done.returncode, done.stdout.decode()) == (0, f"agentmsg {agentmsg.__version__}\n")
    done = module("stats", str(BAD / "latin-1.json"))
    assert done.returncode == 1 and b"Traceback" not in done.stderr and done.stderr.count(b"\n") == 1
    done = module("parse", "--stream", stdin=b"<think>a</think>b")
    assert done.returncode == 0 and [json.loads(line)["event"] for line in done.stdout.splitlines()] == [
        "ThinkingDelta", "ThinkingEnd", "TextDelta"]


def test_workbench_json_to_stdout_replaces_the_table(capsys):
    code, out, _ = run(capsys, "workbench", SIMPLE, "--strategy", "trim", "--budget", "1000", "--json", "-")
    data = json.loads(out)
    assert code == 0 and [(r["strategy"], r["budget"], r["turns"]) for r in data["overall"]] == [("trim", 1000, 5)]


def test_an_unknown_model_is_an_encoding_error():
    from agentmsg.encoding import resolve_encoding

    with pytest.raises(agentmsg.EncodingError) as caught:
        resolve_encoding("llama-3")
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("argv, message", [
    (["parse", "--stream", "--chunk-size", "0"], "argument --chunk-size: must be from 1 to 16777216 characters, got '0'"),
    (["parse", "--stream", "--chunk-size", "-3"], "argument --chunk-size: must be from 1 to 16777216 characters, got '-3'"),
    (["parse", "--stream", "--chunk-size", str(10**30)],
     "argument --chunk-size: must be from 1 to 16777216 characters, got '1000000000000000000000000000000'"),
    (["parse", "--stream", "--chunk-size", "16777217"],
     "argument --chunk-size: must be from 1 to 16777216 characters, got '16777217'"),
    (["parse", "--stream", "--chunk-size", "lots"], "argument --chunk-size: not a whole number of characters: 'lots'"),
    (["trim", SIMPLE, "--max-tokens", str(2**64)],
     "argument --max-tokens: must be from 0 to 18446744073709551615 tokens, got '18446744073709551616'"),
    (["workbench", SIMPLE, "--budget", str(10**30)],
     "argument --budget: must be from 0 to 18446744073709551615 tokens, got '1000000000000000000000000000000'"),
])
def test_integer_options_out_of_range_are_usage_errors(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and err.endswith(f"error: {message}\n")


def test_the_smallest_and_largest_chunks_stream_everything(capsys, monkeypatch):
    text = "Hi <think>plan</think> done é"
    expected = agentmsg.parse(text)
    for size in ("1", "16777216"):
        code, out, _ = run(capsys, "parse", "--stream", "--chunk-size", size, stdin=text.encode(), monkeypatch=monkeypatch)
        events = [json.loads(line) for line in out.splitlines()]
        assert code == 0
        assert "".join(e["text"] for e in events if e["event"] == "TextDelta") == expected.text


LONE = [{"role": "user", "content": "a lone \ud800 surrogate"}, {"role": "assistant", "content": "kept \udfff"}]


@pytest.mark.parametrize("command", [["convert", "--to", "openai"], ["trim", "--max-tokens", "1000", "--to", "openai"],
                                     ["stats", "--json"]])
def test_lone_surrogates_are_written_as_json_escapes(capsys, tmp_path, command):
    path = tmp_path / "lone.json"
    path.write_text(json.dumps(LONE))  # ASCII, with \ud800 escapes, as JSON writers give them
    code, out, err = run(capsys, command[0], str(path), *command[1:])
    assert (code, err) == (0, "")
    assert out.isascii() and "\\ud800" in out
    if command[0] != "stats":
        assert json.loads(out) == LONE  # nothing lost
    code, _, err = run(capsys, command[0], str(path), *command[1:], *(["-o", str(tmp_path / "out.json")]
                                                                        if command[0] != "stats" else []))
    assert (code, err) == (0, "")


def test_names_with_a_lone_surrogate_are_shown_escaped_in_plain_text(capsys, tmp_path):
    record = json.dumps({"instance_id": "task-\ud800", "messages": LONE})
    (tmp_path / "runs.jsonl").write_text(record + "\n" + record + "\n")
    code, out, err = run(capsys, "count", str(tmp_path / "runs.jsonl"))
    assert (code, err) == (0, "") and out.splitlines()[0].endswith("\truns:task-\\ud800")
    code, out, err = run(capsys, "workbench", str(tmp_path / "runs.jsonl"), "--budget", "100", "--strategy", "trim",
                         "--csv", "-", "--no-timings")
    assert (code, err) == (0, "") and out.splitlines()[1].startswith("runs:task-\\ud800,trim,100,")


def test_a_folder_without_transcripts_is_one_line_and_exit_1(capsys, tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for command in (["stats"], ["count"], ["convert", "--to", "openai"], ["trim", "--max-tokens", "100"],
                    ["workbench", "--budget", "100"]):
        code, out, err = run(capsys, *command, str(tmp_path))
        assert (code, out) == (1, "") and err == (
            f"agentmsg: error: {tmp_path}: no .json, .jsonl or .traj file (or .gz of one) in this folder (it holds 1 broken or "
            "looping link)\n"), command


def test_an_int_past_the_digit_limit_names_file_and_line(capsys, tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text('{"role": "user", "content": "x"}\n{"role": "assistant", "content": "y", "metadata": {"n": '
                    + "9" * 4301 + "}}\n")
    code, _, err = run(capsys, "stats", str(path))
    assert code == 1 and err == (f"agentmsg: error: {path}: line 2: an integer of 4301 digits (column 57): JSON ints "
                                 "are read up to 4300 digits (Python's int conversion limit)\n")


def test_workbench_no_timings_drops_the_time_columns(capsys):
    code, out, _ = run(capsys, "workbench", SIMPLE, "--strategy", "trim", "--budget", "1000", "--no-timings")
    assert code == 0 and out.splitlines()[0].split()[-1] == "cached"
    code, out, _ = run(capsys, "workbench", SIMPLE, "--strategy", "trim", "--budget", "1000", "--csv", "-",
                       "--no-timings")
    assert code == 0 and out.splitlines()[0].endswith(",user_turns,recall,cost,cost_uncached,cached_share,outcome,usage")


# -- one name per option, the input's format kept, extras checked first --------------------------


def test_trim_and_convert_keep_the_input_format_unless_told(capsys, tmp_path):
    for name, shape in (("openai.json", list), ("anthropic.json", dict), ("agentmsg.json", list)):
        code, out, err = run(capsys, "trim", str(FORMATS / name), "--max-tokens", "100000")
        assert (code, err) == (0, "")
        written = json.loads(out)
        assert isinstance(written, shape), name
        assert load_transcript(io.StringIO(out)).format.split()[0] == name.split(".")[0]
        code, out, err = run(capsys, "convert", str(FORMATS / name))
        assert (code, err, load_transcript(io.StringIO(out)).format.split()[0]) == (0, "", name.split(".")[0])
    code, out, err = run(capsys, "convert", SIMPLE)
    assert code == 0 and err == ("agentmsg: warning: function_calling_simple: swe-agent is read, not written; "
                                 "written as openai (choose with --to)\n")
    assert out == run(capsys, "convert", SIMPLE, "--to", "openai")[1]


def test_old_option_names_work_for_one_release_with_a_warning(capsys):
    new = run(capsys, "trim", SIMPLE, "--max-tokens", "1000", "--encoding", "cl100k_base", "--to", "openai")
    old = run(capsys, "trim", SIMPLE, "--max-tokens", "1000", "--counter", "cl100k_base", "--to", "openai")
    assert old[:2] == new[:2] and new[2] == ""
    assert old[2] == "agentmsg: warning: --counter is deprecated and will be removed in the next release: use --encoding\n"
    old = run(capsys, "convert", SIMPLE, "--from", "swe-agent", "--to", "anthropic")
    assert old[:2] == run(capsys, "convert", SIMPLE, "--format", "swe-agent", "--to", "anthropic")[:2]
    assert old[2].startswith("agentmsg: warning: --from is deprecated")
    for command in ("trim", "convert"):
        _, help_text, _ = run(capsys, command, "--help")
        assert "--counter" not in help_text and "--from" not in help_text


def test_encoding_and_model_mean_the_same_in_every_command(capsys):
    by_model = run(capsys, "trim", SIMPLE, "--max-tokens", "1000", "--model", "gpt-4")
    assert by_model == run(capsys, "trim", SIMPLE, "--max-tokens", "1000", "--encoding", "cl100k_base")
    wb = ["workbench", SIMPLE, "--strategy", "trim", "--budget", "1000", "--no-timings"]
    assert run(capsys, *wb, "--model", "gpt-4") == run(capsys, *wb, "--encoding", "cl100k_base")
    for command in ("count", "trim", "workbench"):
        assert run(capsys, command, SIMPLE, "--max-tokens", "9", "--model", "gpt-4o", "--encoding", "cl100k_base")[0] == 2


def test_help_lists_each_choice_once(capsys):
    parser = agentmsg.cli._parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        _, text, _ = run(capsys, name, "--help")
        assert "{" not in text.split("options:")[0].replace("{user}", ""), name  # no choice list in the usage
        for action in sub._actions:
            if action.choices and action.help != argparse.SUPPRESS and len(action.choices) > 1:
                words = re.findall(r"[\w.+-]+", str(action.help))  # deepseek_v3 is not counted in deepseek_v31
                assert all(words.count(str(choice)) == 1 for choice in action.choices), (name, action.dest)
    _, text, _ = run(capsys, "workbench", "--help")
    assert text.count("trim-user") == 1 and text.count("estimate") == 1


def test_the_workbench_table_stays_aligned_for_long_strategy_names(capsys):
    _, out, _ = run(capsys, "workbench", SIMPLE, "--strategy", "mask-tool-outputs+clear25", "--strategy", "trim",
                    "--budget", "1000", "--budget", "20000", "--no-timings")
    lines = out.splitlines()
    ends = {line.index(" ", len("mask-tool-outputs+clear25") + 1) for line in lines[1:]}
    assert len(ends) == 1 and all(len(line) == len(lines[0]) for line in lines)


def test_a_missing_extra_is_reported_before_the_run(capsys, monkeypatch):
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in (
        "matplotlib", "langchain_core") else found(name, *a))
    monkeypatch.setattr(agentmsg.cli, "run_workbench", lambda *a, **k: pytest.fail("the run started"))
    code, out, err = run(capsys, "workbench", SIMPLE, "--plot", "wb.png")
    assert (code, out, err) == (1, "", "agentmsg: error: --plot needs matplotlib: pip install 'agentmsg[plot]'\n")
    code, out, err = run(capsys, "workbench", SIMPLE, "--strategy", "langchain")
    assert code == 2 and "the langchain strategy needs langchain-core: pip install 'agentmsg[langchain]'" in err
