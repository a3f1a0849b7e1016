"""What each strategy sent at each model call (replay(keep_prompts=True), agentmsg workbench
--show), and what it cost with and without prompt caching (Prices, NAME+clearN)."""

import pytest

import agentmsg
import transcripts
from agentmsg import PRICES, Message, MessageCounter, Prices, Strategy, ToolUseBlock, replay, run_workbench
from agentmsg.cli import main


def one_token_each(message):
    return 1


def agent_loop():
    """system, task, then three tool calls each answered, and a last answer: 5 model calls."""
    chat = [agentmsg.system("Fix bugs."), agentmsg.user("The crash is in src/parser.py.")]
    for n in range(3):
        chat += [Message.assistant(f"Step {n}.", tool_calls=[ToolUseBlock(f"c{n}", "read", {"n": n})]),
                 agentmsg.tool(f"output {n} " * 30, tool_id=f"c{n}")]
    return chat + [agentmsg.assistant("Fixed.")]


def test_prompts_are_kept_only_on_request():
    assert replay(agent_loop(), "trim", 100).prompts is None
    report = run_workbench([agent_loop(), agent_loop()], ["trim"], [100], keep_prompts={"transcript 2"})
    assert [r.prompts is None for r in report.rows] == [True, False]
    assert all(r.prompts is None for r in report.overall)
    assert all(r.prompts is not None for r in run_workbench([agent_loop()], ["trim"], [100], keep_prompts=True).rows)
    with pytest.raises(agentmsg.MessageTypeError, match="keep_prompts must be a bool or a collection"):
        run_workbench([agent_loop()], ["trim"], [100], keep_prompts="transcript 1")


def test_each_prompt_is_what_the_strategy_sent_with_its_changes_marked():
    chat = agent_loop()
    sent = []

    def start(budget, counter):
        step = agentmsg.builtin_strategies()["mask-tool-outputs"].start(budget, counter)
        return lambda new: sent.append(step(new)) or sent[-1]

    m = replay(chat, Strategy("mask-tool-outputs", start), 10**6, counter="estimate", keep_prompts=True)
    assert [p.messages for p in m.prompts] == sent
    assert [(p.call, p.answered) for p in m.prompts] == [(1, 2), (2, 4), (3, 6), (4, 8)]
    # call 4: the first tool output (message 3) is masked, the newest two kept whole
    last = m.prompts[3]
    assert last.origin == [0, 1, 2, 3, 4, 5, 6, 7]
    assert last.status == ["kept", "kept", "kept", "masked", "kept", "kept", "new", "new"]
    assert last.messages[3].id == chat[3].id and last.messages[3].text != chat[3].text
    assert (last.dropped, last.summarized) == ([], False)
    assert last.tokens == sum(last.message_tokens) == MessageCounter("estimate").total(last.messages)
    # nothing before the masked output changed: its prefix is what the previous call sent
    assert last.cached == sum(last.message_tokens[:3])


def test_dropped_and_summarized_messages_are_named_with_their_place_in_the_history():
    chat = agent_loop()
    counter = MessageCounter(one_token_each)
    trimmed = replay(chat, "trim", 4, counter=counter, keep_prompts=True)
    assert [p.origin for p in trimmed.prompts] == [[0, 1], [0, 1, 2, 3], [0, 4, 5], [0, 6, 7]]
    assert [p.dropped_origins for p in trimmed.prompts] == [[], [], [1, 2, 3], [4, 5]]
    assert [p.status for p in trimmed.prompts][2] == ["kept", "new", "new"]
    summarize = agentmsg.builtin_strategies(keep_recent=2)["summarize"]
    summarized = replay(chat, summarize, 4, counter=counter, keep_prompts=True)
    third = summarized.prompts[2]
    assert third.status == ["kept", "summary", "new", "new"] and third.origin == [0, None, 4, 5]
    assert third.summarized and third.dropped_origins == [1, 2, 3]
    assert third.messages[1].text.startswith("Summary of earlier messages:")
    text = third.render()
    assert text.splitlines()[0] == "call 3 (answers message 6): 4 messages, 4 tokens, 1 from the previous prompt"
    assert text.splitlines()[2].startswith("* [-]   user           1  Summary of earlier messages:")
    assert text.splitlines()[5] == "summarized since the previous call:"
    assert [line[:5] for line in text.splitlines()[6:]] == ["- [1]", "- [2]", "- [3]"]


def test_prices_cost_a_prompt_with_and_without_its_cached_prefix():
    sonnet = PRICES["claude-sonnet-4.5"]
    assert (sonnet.input, sonnet.cached_input, sonnet.cache_write) == (3.0, 0.3, 3.75)
    assert sonnet.prompt_cost(3000, 2000) == pytest.approx((2000 * 0.3 + 1000 * 3.75) / 1e6)
    assert sonnet.prompt_cost(3000, 500) == pytest.approx(3000 * 3.75 / 1e6)  # under the 1,024 minimum: no hit
    assert sonnet.prompt_cost(900, 0) == pytest.approx(900 * 3.0 / 1e6)  # too short to be cached at all
    assert sonnet.prompt_cost(3000, 2000, caching=False) == pytest.approx(3000 * 3.0 / 1e6)
    gpt = PRICES["gpt-4.1"]
    assert [gpt.cache_hit(n) for n in (1023, 1024, 1151, 1152, 1500)] == [0, 1024, 1024, 1152, 1408]
    assert gpt.prompt_cost(1500, 1500) == pytest.approx((1408 * 0.5 + 92 * 2.0) / 1e6)
    with pytest.raises(agentmsg.MessageError, match=r"^Prices.input must be a finite price of 0 or more, not -1.0$"):
        Prices("x", input=-1.0, cached_input=0, cache_write=0)
    with pytest.raises(agentmsg.MessageTypeError, match="Prices.cached_input must be a number"):
        Prices("x", input=1, cached_input="0.1", cache_write=0)
    with pytest.raises(agentmsg.MessageError, match="unknown prices 'gpt-9'"):
        replay(agent_loop(), "trim", 100, prices="gpt-9")


def test_a_replay_costs_the_sum_of_its_prompts():
    history = transcripts.load_history(transcripts.TRAJECTORY_DIR / "gpt4_pydicom.traj")
    for name in ("trim", "summarize", "trim+clear25"):
        m = replay(history, name, 4000, keep_prompts=True, prices="claude-haiku-4.5")
        haiku = PRICES["claude-haiku-4.5"]
        assert m.cost == pytest.approx(sum(haiku.prompt_cost(p.tokens, p.cached) for p in m.prompts))
        assert m.cost_uncached == pytest.approx(sum(p.tokens for p in m.prompts) * 1.0 / 1e6)
        hits = sum(haiku.cache_hit(p.cached) for p in m.prompts)
        assert m.cached_share == pytest.approx(hits / sum(p.tokens for p in m.prompts))


def test_clearing_prunes_only_past_the_budget_then_to_n_percent_below_it():
    strategy = agentmsg.builtin_strategies()["trim"].clearing(50)
    assert strategy.name == "trim+clear50"
    counter = MessageCounter(one_token_each)
    lazy = replay(agent_loop(), "trim+clear50", 6, counter=counter, keep_prompts=True)
    eager = replay(agent_loop(), "trim", 6, counter=counter, keep_prompts=True)
    # at call 4 (8 messages) both prune: trim to 6 tokens, trim+clear50 to 3 (system and the newest pair)
    assert [len(p.messages) for p in eager.prompts] == [2, 4, 6, 5]
    assert [len(p.messages) for p in lazy.prompts] == [2, 4, 6, 3]
    assert lazy.prompts[3].origin == [0, 6, 7]
    with pytest.raises(agentmsg.MessageError, match="^percent must be from 1 to 99, not 100$"):
        strategy.clearing(100)
    with pytest.raises(agentmsg.MessageError, match="each also as NAME\\+clearN"):
        replay(agent_loop(), "trim+clear100", 4)


def test_the_cost_table_on_the_shared_transcripts():
    report = run_workbench(agentmsg.iter_transcripts(transcripts.TRAJECTORY_DIR), ["trim", "trim+clear25"], [4000, 8000])
    rows = {(r.strategy, r.budget): r for r in report.overall}
    assert [(round(rows[k].cost, 4), round(rows[k].cost_uncached, 4), round(rows[k].cached_share, 2)) for k in (
        ("trim", 4000), ("trim+clear25", 4000), ("trim", 8000), ("trim+clear25", 8000))] == [
        (0.0522, 0.0993, 0.63), (0.0391, 0.0912, 0.71), (0.0507, 0.1545, 0.8), (0.0484, 0.1498, 0.81)]
    # the overall row is dollars per transcript: the mean of the transcripts' rows
    for key, row in rows.items():
        per_transcript = [r.cost for r in report.rows if (r.strategy, r.budget) == key]
        assert row.cost == pytest.approx(sum(per_transcript) / 5)
    assert report.to_dict()["prices"]["name"] == "claude-sonnet-4.5"


def test_cli_show_prints_each_strategys_prompt_at_that_call(capsys, tmp_path):
    path = tmp_path / "loop.json"
    path.write_text(agentmsg.Message.list_to_json(agent_loop()) if hasattr(Message, "list_to_json") else
                    "[" + ",".join(m.to_json() for m in agent_loop()) + "]")
    code = main(["workbench", str(path), "--strategy", "trim", "--strategy", "mask-tool-outputs", "--budget", "100000",
                 "--show", "loop:4", "--no-timings"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    blocks = out.split("\n\n")
    assert blocks[0].splitlines()[0] == "== loop: trim at 100000 tokens =="
    assert blocks[1].splitlines()[0] == "== loop: mask-tool-outputs at 100000 tokens =="
    assert [line[:2] for line in blocks[1].splitlines()[2:]] == ["  ", "  ", "  ", "~ ", "  ", "  ", "+ ", "+ "]
    assert blocks[2].splitlines()[0].split()[:2] == ["strategy", "budget"]
    for argv, message in ((["--show", "nope:1"], "--show names no transcript read; the transcripts: loop"),
                          (["--show", "loop:5"], "--show asks for model call 5; this transcript has 4")):
        assert main(["workbench", str(path), "--strategy", "trim", *argv]) == 1
        assert message in capsys.readouterr().err
    assert main(["workbench", str(path), "--show", "loop"]) == 2
    assert "expected TRANSCRIPT:CALL" in capsys.readouterr().err


def test_cli_prices_and_clearing_strategies(capsys):
    simple = str(transcripts.TRAJECTORY_DIR / "function_calling_simple.traj")
    assert main(["workbench", simple, "--strategy", "trim+clear25", "--budget", "1000", "--prices", "1/0.1/1.25",
                 "--json", "-"]) == 0
    data = __import__("json").loads(capsys.readouterr().out)
    assert data["prices"] == {"name": "1/0.1/1.25", "input": 1.0, "cached_input": 0.1, "cache_write": 1.25,
                              "min_cached_tokens": 1024, "cache_increment": 1}
    assert data["overall"][0]["strategy"] == "trim+clear25"
    assert main(["workbench", simple, "--prices", "1/2"]) == 2
    assert "nor INPUT/CACHED/WRITE dollars per million tokens" in capsys.readouterr().err


def test_the_png_has_a_panel_per_measure_and_budget_a_bar_per_strategy_and_no_overlapping_text(monkeypatch, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")  # an extra: agentmsg[plot]
    import matplotlib.pyplot as plt

    names = ["trim", "trim-user", "memory", "memory-compactor", "mask-tool-outputs", "compress", "summarize",
             "mask-tool-outputs+clear25"]
    report = run_workbench(agentmsg.iter_transcripts(transcripts.TRAJECTORY_DIR), names, [2000, 4000, 8000, 16000])
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    report.plot(tmp_path / "wb.png")
    (figure,) = figures
    axes = figure.axes
    assert len(axes) == 10 * 4
    assert all(len(axis.patches) == len(names) for axis in axes)
    # trim and memory give the same prompts: two bars of the same width, both drawn
    first = axes[0]
    assert first.patches[0].get_width() == first.patches[2].get_width() > 0
    renderer = figure.canvas.get_renderer()
    texts = [t for t in figure.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    overlapping = [(a, b) for i, (a, box) in enumerate(boxes) for b, other in boxes[i + 1:]
                   if box.overlaps(other) and box.width and other.width]
    assert overlapping == [], overlapping[:5]
    plt.close("all")
