"""The pruning workbench: incremental strategies equal their from-scratch form at every turn, the
ordering rules, exact metrics, the real transcripts, and the report's outputs."""

import csv
import io
import json
import sys

import pytest
from hypothesis import given, settings

import agentmsg
import transcripts
from agentmsg import (
    Message,
    MessageCounter,
    Strategy,
    TextBlock,
    ToolUseBlock,
    builtin_strategies,
    first_sentence_summary,
    ordering_problem,
    replay,
    run_workbench,
    trim,
)
from conversations import by_metadata, conversations


@pytest.fixture(scope="module")
def histories():
    return {path.stem: transcripts.load_history(path) for path in transcripts.trajectory_files()}


def prompts(strategy, history, budget, counter):
    """The prompt the strategy gives at each assistant message, with the history before it."""
    step = strategy.start(budget, counter)
    out, last = [], 0
    for index, message in enumerate(history):
        if message.role == "assistant":
            out.append((index, step(history[last:index])))
            last = index
    return out


FROM_SCRATCH = {
    "trim": lambda h, b, c: trim(h, b, counter=c).messages,
    "trim-user": lambda h, b, c: trim(h, b, counter=c, start_on="user").messages,
    "memory": lambda h, b, c: trim(h, b, counter=c).messages,
}


def same(a, b):
    return [(m.role, m.content, m.tool_id) for m in a] == [(m.role, m.content, m.tool_id) for m in b]


@pytest.mark.parametrize("name", sorted(FROM_SCRATCH))
def test_incremental_strategies_equal_reducing_the_whole_history_on_real_transcripts(histories, name):
    strategy = builtin_strategies()[name]
    for history in histories.values():
        counter = MessageCounter("o200k_base")
        for budget in (1000, 3000, 8000):
            for index, prompt in prompts(strategy, history, budget, counter):
                assert same(prompt, FROM_SCRATCH[name](history[:index], budget, counter)), (name, budget, index)


@settings(max_examples=60, deadline=None)
@given(conversations(interleave=True))
def test_incremental_trim_equals_trimming_the_whole_history(history):
    history = history + [Message.assistant("end", metadata={"tokens": 1})]
    counter = MessageCounter(by_metadata)
    for start_on, name in ((None, "trim"), ("user", "trim-user")):
        for budget in (0, 15, 60):
            for index, prompt in prompts(builtin_strategies()[name], history, budget, counter):
                whole = trim(history[:index], budget, counter=counter, start_on=start_on)
                if whole.system_over_budget:
                    break  # the system messages alone are over: trim then keeps the newest system only
                assert same(prompt, whole.messages), (name, budget, index)


# -- ordering rules ---------------------------------------------------------------------------------

CALL = Message.assistant(tool_calls=[ToolUseBlock("c1", "calc", {})])
RESULT = Message.tool("2", tool_id="c1")


@pytest.mark.parametrize("messages, openai, anthropic, bedrock", [
    ([agentmsg.system("s"), agentmsg.user("u"), CALL, RESULT], None, None, None),
    ([RESULT], "messages[0]: tool result 'c1' has no tool call before it",
     "messages[0]: the conversation must begin with a user message, not tool", "same"),
    ([agentmsg.user("u"), CALL, agentmsg.user("x")],
     "messages[1]: tool call 'c1' (calc) has no result", "same", "same"),
    ([agentmsg.user("u"), CALL], "messages[1]: tool call 'c1' (calc) has no result", "same", "same"),
    ([agentmsg.system("s"), CALL, RESULT], None,
     "messages[1]: the conversation must begin with a user message, not assistant", "same"),
    # what the converters fix (merged turns, a late system message moved up) is no refusal
    ([agentmsg.user("a"), agentmsg.user("b")], None, None, None),
    ([agentmsg.user("a"), CALL, RESULT, agentmsg.user("and then")], None, None, None),
    ([agentmsg.user("a"), agentmsg.system("late")], None, None, None),
    ([agentmsg.user("a"), Message.assistant(tool_calls=[ToolUseBlock("", "calc", {})]),
      Message.tool("r", name="calc")], None, None, None),
    ([agentmsg.user("a"), Message("assistant", [TextBlock(" ")])], None, "messages[1]: an assistant message with "
     "nothing anthropic takes (an empty turn)", "messages[1]: an assistant message with nothing bedrock takes "
     "(an empty turn)"),
])
def test_ordering_rules_of_each_provider(messages, openai, anthropic, bedrock):
    anthropic = openai if anthropic == "same" else anthropic
    bedrock = anthropic if bedrock == "same" else bedrock
    assert ordering_problem(messages, "openai") == openai
    assert ordering_problem(messages, "anthropic") == anthropic
    assert ordering_problem(messages, "bedrock") == bedrock


def test_unknown_provider_and_strategy_are_value_errors():
    with pytest.raises(agentmsg.MessageError, match="unknown provider 'gemini'; known: openai, anthropic, bedrock"):
        ordering_problem([], "gemini")
    with pytest.raises(agentmsg.MessageError, match="unknown strategy 'nope'; known: compress, "):
        replay([agentmsg.user("a")], "nope", 10)
    with pytest.raises(agentmsg.MessageTypeError, match="budget must be an int, not str"):
        replay([agentmsg.user("a")], "trim", "10")
    with pytest.raises(agentmsg.MessageTypeError, match="a strategy must be a name, a Strategy or a callable, not int"):
        run_workbench([[agentmsg.user("a")]], [5], [10])


# -- metrics ---------------------------------------------------------------------------------------


def sized(role, tokens, text=None, **kw):
    text = text or f"{role} {tokens}"
    if role == "tool":
        return Message.tool(text, metadata={"tokens": tokens}, **kw)
    if role == "assistant" and "tool_calls" in kw:
        return Message.assistant(text, metadata={"tokens": tokens}, **kw)
    return Message(role, text, metadata={"tokens": tokens}, **kw)


def test_replay_metrics_are_exact_on_a_small_agent_loop():
    history = [
        sized("system", 10),
        sized("user", 20, "Fix the crash in src/parser.py please."),
        sized("assistant", 5, "Reading it.", tool_calls=[ToolUseBlock("c1", "read", {"path": "src/parser.py"})]),
        sized("tool", 50, "def parse_header(): ...", tool_id="c1"),
        sized("assistant", 5, "I will edit parse_header in src/parser.py."),
        sized("user", 56, "Go on."),
        sized("assistant", 5, "Done: parse_header is fixed in src/parser.py."),
    ]
    m = replay(history, "trim", 70, counter=MessageCounter(by_metadata), name="loop")
    # prompts: [sys, user] = 30; [sys, call, result] = 65 (the first user turn no longer fits);
    # [sys, user] = 66 (the last assistant message no longer fits)
    assert (m.transcript, m.strategy, m.budget, m.turns) == ("loop", "trim", 70, 3)
    assert (m._turns["tokens"], m.tokens_max, m.tokens_p95, m.over_budget) == ([30, 65, 66], 66, 66, 0)
    assert m.tokens_mean == pytest.approx(161 / 3) and m.kept_mean == pytest.approx(7 / 3)
    assert m.valid == {"openai": 1.0, "anthropic": pytest.approx(2 / 3), "bedrock": pytest.approx(2 / 3)}
    # each prompt shares only the system message with the one before
    assert m.prefix_stability == pytest.approx((10 / 65 + 10 / 66) / 2)
    assert (m.tool_outputs_lost, m.tool_outputs, m.user_turns_lost, m.user_turns) == (1, 1, 1, 2)
    # turn 1 uses src/parser.py (in the user turn it sees); turn 2 parse_header and src/parser.py
    # (in the call and result it sees); turn 3 both again, but its prompt no longer has them
    assert (m._turns["used"], m._turns["found"]) == ([1, 2, 2], [1, 2, 0])
    assert m.recall == pytest.approx(3 / 5)
    assert m.to_dict()["valid"]["openai"] == 1.0 and "_turns" not in m.to_dict()


def test_a_user_function_is_a_strategy_given_the_whole_history():
    seen = []

    def last_two(history, budget):
        seen.append(len(history))
        return history[-2:]

    history = [sized("user", 1), sized("assistant", 1), sized("user", 1), sized("assistant", 1)]
    m = replay(history, last_two, 100, counter=MessageCounter(by_metadata))
    assert (m.strategy, seen, m._turns["kept"]) == ("last_two", [1, 3], [1, 2])
    named = Strategy.from_function(last_two, name="two")
    assert run_workbench([history], [named], [5], encoding="estimate").overall[0].strategy == "two"


@pytest.mark.parametrize("name", ["compress", "mask-tool-outputs"])
def test_compaction_acts_on_the_live_context_once_per_message(histories, name):
    # Unlike trim, compacting then trimming is not the same on the live context as on the whole
    # history (a message shrinks after trim dropped what it crowded out): what was dropped stays
    # dropped, as in an agent that compacts its context.
    for history in histories.values():
        for index, prompt in prompts(builtin_strategies()[name], history, 3000, MessageCounter()):
            assert all(m.text.count("... (truncated)") <= 1 for m in prompt)
            assert all(m.text.count("[tool output pruned") <= 1 for m in prompt)
            if name == "mask-tool-outputs":
                results = [m for m in prompt if m.role == "tool"]
                assert not any("pruned_chars" in m.metadata for m in results[-2:])
            assert ordering_problem(prompt, "openai") is None
            assert [m.role for m in prompt if m.role != "system"] == [
                m.role for m in history[:index] if m.role != "system"][-sum(1 for m in prompt if m.role != "system"):]


def test_first_sentence_summary_is_deterministic_and_bounded():
    text = first_sentence_summary([agentmsg.user("One. Two."), agentmsg.assistant("x" * 500), agentmsg.user("   ")])
    assert text == "Summary of earlier messages:\nuser: One.\nassistant: " + "x" * 197 + "..."


def test_summarize_replaces_old_messages_with_the_stand_in_summary(histories):
    history = histories["xml_marshmallow"]
    m = replay(history, "summarize", 4000)
    assert m.over_budget == 0 and m.user_turns_lost > 0
    with_summary = [index for index, prompt in prompts(builtin_strategies()["summarize"], history, 4000, MessageCounter())
                    if any(p.text.startswith("Summary of earlier messages:\n") for p in prompt)]
    assert with_summary == [14, 20, 22, 24]


def test_langchain_peer_runs_on_real_transcripts(histories):
    m = replay(histories["function_calling_marshmallow"], "langchain", 4000)
    assert m.turns == 11 and m.over_budget == 0 and m.tokens_max <= 4000


# -- the real transcripts ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report():
    return run_workbench(agentmsg.iter_transcripts(transcripts.TRAJECTORY_DIR), budgets=[2000, 4000, 8000, 16000])


def test_workbench_on_the_real_transcripts(report):
    assert len(report.rows) == 5 * 6 * 4 and len(report.overall) == 6 * 4
    overall = {(r.strategy, r.budget): r for r in report.overall}
    full = overall["trim", 16000]
    # 16000 tokens hold every transcript whole: nothing lost, every prompt the whole history so far
    assert (full.turns, full.tokens_max, full.over_budget, full.user_turns_lost, full.tool_outputs_lost) == (
        58, 13886, 0, 0, 0)
    assert (full.tool_outputs, full.user_turns, full.recall) == (14, 45, 1.0)
    # every whole history is valid (gpt4_pydicom's two user messages in a row are one Bedrock turn)
    assert full.valid["bedrock"] == 1.0 and full.valid["anthropic"] == 1.0
    for row in report.rows:
        assert row.valid["openai"] == 1.0  # no strategy here splits a tool pair
        if row.strategy in ("trim", "memory", "mask-tool-outputs", "compress", "summarize"):
            # over budget only when the newest message (with its tool group) alone is over it
            assert row.over_budget == 0 or row.budget == 2000
    assert overall["trim", 2000].to_dict() | {"seconds_per_turn": 0, "seconds": 0} == overall["memory", 2000].to_dict() | {
        "seconds_per_turn": 0, "seconds": 0, "strategy": "trim"}
    assert overall["mask-tool-outputs", 16000].tool_outputs_lost == 10  # all but the last 2 of each run


def test_report_writes_table_json_csv_and_plot(report, tmp_path):
    lines = report.table().splitlines()
    assert lines[0].split()[:4] == ["strategy", "budget", "tokens", "p95"] and len(lines) == 25
    report.write_json(tmp_path / "wb.json")
    data = json.loads((tmp_path / "wb.json").read_text())
    assert (data["encoding"], len(data["overall"]), len(data["transcripts"])) == ("o200k_base", 24, 120)
    report.write_csv(tmp_path / "wb.csv")
    rows = list(csv.DictReader((tmp_path / "wb.csv").open()))
    assert len(rows) == 144 and rows[-1]["transcript"] == "(all)" and rows[0]["valid_openai"] == "1.0"
    pytest.importorskip("matplotlib")
    report.plot(tmp_path / "wb.png")
    assert (tmp_path / "wb.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_what_to_install(report, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(agentmsg.MissingDependencyError, match=r"pip install 'agentmsg\[plot\]'"):
        report.plot(tmp_path / "wb.png")


def test_progress_bar_is_on_for_a_terminal_only(monkeypatch):
    from agentmsg.workbench.report import progress_bar

    assert progress_bar(10, None, "replay").disable  # pytest's stderr is not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    bar = progress_bar(10, None, "replay")
    assert not bar.disable
    bar.close()
    assert progress_bar(10, False, "replay").disable


def test_workbench_doc_examples():
    import doctest
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "docs" / "workbench.md"
    result = doctest.testfile(str(doc), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 7 and result.failed == 0


# -- the same input gives the same output ----------------------------------------------------------


def _workbench_in_a_new_process(hash_seed, tmp_path):
    """The CLI's JSON and CSV of the shared transcripts, from a fresh interpreter with this
    PYTHONHASHSEED (every default strategy and budget; the time measures left out)."""
    import os
    import subprocess
    from pathlib import Path

    out = tmp_path / f"seed-{hash_seed}"
    out.mkdir()
    root = Path(agentmsg.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-m", "agentmsg", "workbench", str(transcripts.TRAJECTORY_DIR), "--no-timings",
         "--no-progress", "--json", str(out / "wb.json"), "--csv", str(out / "wb.csv")],
        env=env, capture_output=True, timeout=300)
    assert (done.returncode, done.stderr) == (0, b"")
    return (out / "wb.json").read_bytes(), (out / "wb.csv").read_bytes(), done.stdout


def test_the_workbench_gives_the_same_bytes_in_every_process_and_hash_seed(tmp_path):
    # Made message ids are random per process; the compress hint quotes a message's id, so ids
    # made at load time used to move its token counts and its valid shares from run to run.
    runs = [_workbench_in_a_new_process(seed, tmp_path) for seed in ("0", "12345", "random")]
    assert runs[0] == runs[1] == runs[2]
    overall = {(r["strategy"], r["budget"]): r for r in json.loads(runs[0][0])["overall"]}
    compress = overall["compress", 4000]
    assert (round(compress["tokens_mean"], 3), compress["tokens_max"], compress["valid"]["anthropic"]) == (
        2582.81, 3999, 36 / 58)
    assert "seconds" not in compress and b"seconds" not in runs[0][1] and b"us/turn" not in runs[0][2]


def test_transcripts_read_twice_give_the_same_message_ids():
    first = [m.id for t in agentmsg.iter_transcripts(transcripts.TRAJECTORY_DIR) for m in t.messages]
    again = [m.id for t in agentmsg.iter_transcripts(transcripts.TRAJECTORY_DIR) for m in t.messages]
    assert first == again and len(set(first)) == len(first) == 124
    simple = agentmsg.load_transcript(transcripts.TRAJECTORY_DIR / "function_calling_simple.traj").messages
    # The shape of a made id: msg_, 16 hex digits of the conversation's text, the position.
    assert [m.id[20:] for m in simple[:3]] == ["0000000000000000", "0000000000000001", "0000000000000002"]
    assert len({m.id[:20] for m in simple}) == 1 and simple[0].id.startswith("msg_")
    # An id the file gives is kept.
    given = agentmsg.load_transcript(io.StringIO('[{"role": "user", "content": "Hi", "id": "u1"}]'), format="agentmsg")
    assert given.messages[0].id == "u1"


def test_timings_false_leaves_out_the_time_measures_only(report):
    with_times, without = report.to_dict(), report.to_dict(timings=False)
    for row, bare in zip(with_times["overall"] + with_times["transcripts"], without["overall"] + without["transcripts"]):
        assert {key: value for key, value in row.items() if key not in ("seconds", "seconds_per_turn")} == bare
    assert report.table(timings=False).splitlines()[0].split()[-1] == "cached"
    assert report.table().splitlines()[0].split()[-1] == "us/turn"
    with pytest.raises(agentmsg.MessageTypeError, match="^timings must be a bool, not str$"):
        report.to_dict(timings="no")


def test_the_report_writes_to_a_path_or_a_file_object_and_refuses_a_descriptor(report, tmp_path):
    import os

    text = io.StringIO()
    report.write_json(text, timings=False)
    assert json.loads(text.getvalue()) == report.to_dict(timings=False) and not text.closed
    report.write_csv(text)
    assert not text.closed
    for write in (report.write_json, report.write_csv, report.plot):
        with pytest.raises(agentmsg.MessageTypeError) as caught:
            write(1)
        assert str(caught.value).startswith("path must be a file path") and str(caught.value).endswith("not int")
    os.fstat(1)  # stdout is still open
