"""The dataset shapes the workbench reads besides the provider formats (ShareGPT, OpenHands
events, OpenAI Batch lines, a request next to its response), gzipped or not, and the outcomes and
usage they record, carried into the report."""

import gzip
import io
import json
import shutil
import warnings
from pathlib import Path

import pytest

import agentmsg
import transcripts
from agentmsg import TranscriptError, iter_transcripts, load_transcript, run_workbench
from agentmsg.cli import main

DATASETS = Path(__file__).parent / "data" / "dataset-formats"


def shape(transcript):
    return [(m.role.value, m.text, [(c.id, c.name, c.input) for c in m.tool_calls], m.tool_id)
            for m in transcript.messages]


def test_sharegpt_turns_with_a_function_call_and_its_observation():
    t = load_transcript(DATASETS / "sharegpt.json")
    assert (t.name, t.format, t.outcome, t.usage) == ("sharegpt", "sharegpt JSON", {"reward": 1.0}, {})
    assert shape(t) == [
        ("system", "You call functions.", [], None),
        ("user", "Weather in Paris?", [], None),
        ("assistant", "", [("call_2", "weather", {"city": "Paris"})], None),
        ("tool", '{"temp": 18}', [], "call_2"),
        ("assistant", "It is 18 degrees in Paris.", [], None),
    ]


def test_openhands_events_as_a_run_record_and_one_per_line():
    run = load_transcript(DATASETS / "openhands-run.json")
    assert (run.format, run.outcome, run.usage) == ("openhands JSON", {"resolved": True}, {"accumulated_cost": 0.12})
    assert shape(run) == [
        ("system", "You are OpenHands.", [], None),
        ("user", "Fix parse.py", [], None),
        ("assistant", "Look first.", [("toolu_1", "execute_bash", {"command": "cat parse.py"})], None),
        ("tool", "def parse(): pass", [], "toolu_1"),
        ("assistant", "", [("event_5", "finish", {"final_thought": "Done"})], None),
    ]
    lines = load_transcript(DATASETS / "openhands-events.jsonl")
    assert lines.format == "openhands JSONL, one message per line" and shape(lines) == shape(run)


def test_openai_batch_lines_and_a_request_next_to_its_response():
    first, second = iter_transcripts(DATASETS / "openai-batch.jsonl")
    assert (first.name, first.format, shape(first)) == (
        "openai-batch:req-1", "openai Batch request JSONL, one conversation per line", [("user", "Hi", [], None)])
    assert (second.name, second.format) == ("openai-batch:req-2",
                                            "openai Batch request and response JSONL, one conversation per line")
    assert shape(second) == [("user", "Bye", [], None), ("assistant", "Goodbye", [], None)]
    assert second.usage == {"prompt_tokens": 8, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 0}}
    pair = load_transcript(DATASETS / "chat-completion.json")
    assert pair.format == "openai request and response JSON" and pair.usage["total_tokens"] == 22
    assert shape(pair)[-1] == ("assistant", "Paris.", [], None)


def test_a_response_without_its_request_is_a_clear_error(tmp_path):
    line = {"id": "batch_req_1", "custom_id": "req-1", "response": {"status_code": 200, "body": {
        "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}}]}}}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(TranscriptError) as caught:
        list(iter_transcripts(path))
    assert (caught.value.line, caught.value.reason) == (1, "an OpenAI Batch output line holds no prompt: give its "
                                                           "Batch request file too (both files, or the folder "
                                                           "holding them)")
    with pytest.raises(TranscriptError) as caught:
        load_transcript(io.StringIO('{"id": "x", "choices": []}'))
    assert caught.value.reason == ("a ChatCompletion response without its request: give the request's messages too "
                                   "(an object with 'request' or 'body', and 'response')")


BATCH_INPUT, BATCH_OUTPUT = DATASETS / "openai-batch-input.jsonl", DATASETS / "openai-batch-output.jsonl"
BATCH_LABEL = "openai Batch request JSONL and its output openai-batch-output.jsonl, one conversation per line"
SKIPPED = (f"{BATCH_OUTPUT}: line 3: custom_id 'task-3' failed in the Batch (rate_limit_exceeded: Too many "
           f"requests); its conversation was skipped")


@pytest.mark.parametrize("sources", [[BATCH_OUTPUT, BATCH_INPUT], [BATCH_INPUT, BATCH_OUTPUT]])
def test_a_batch_output_file_is_read_with_its_request_file_by_custom_id(sources):
    with pytest.warns(agentmsg.ConversionWarning) as caught:
        first, second = iter_transcripts(sources)
    assert [str(w.message) for w in caught] == [SKIPPED]
    assert [(t.name, t.format, t.source, t.line, t.usage) for t in (first, second)] == [
        ("openai-batch-input:task-1", BATCH_LABEL, str(BATCH_INPUT), 1,
         {"prompt_tokens": 21, "completion_tokens": 2, "total_tokens": 23}),
        ("openai-batch-input:task-2", BATCH_LABEL, str(BATCH_INPUT), 2,
         {"prompt_tokens": 14, "completion_tokens": 1, "total_tokens": 15}),
    ]
    assert shape(first) == [("system", "Answer briefly.", [], None), ("user", "Capital of France?", [], None),
                            ("assistant", "Paris.", [], None)]
    assert shape(second) == [("user", "What is 2 + 2?", [], None), ("assistant", "4", [], None)]
    with pytest.warns(agentmsg.ConversionWarning):
        again = list(iter_transcripts(sources))  # the same ids on every read
    assert [m.id for t in again for m in t.messages] == [m.id for t in (first, second) for m in t.messages]


def test_batch_files_in_a_folder_pair_with_the_request_file_holding_their_ids(tmp_path):
    for name in ("openai-batch.jsonl", BATCH_INPUT.name, BATCH_OUTPUT.name):
        shutil.copy(DATASETS / name, tmp_path / name)
    with pytest.warns(agentmsg.ConversionWarning):
        found = [(t.name, t.format) for t in iter_transcripts(tmp_path)]
    assert found == [("openai-batch-input:task-1", BATCH_LABEL), ("openai-batch-input:task-2", BATCH_LABEL),
                     ("openai-batch:req-1", "openai Batch request JSONL, one conversation per line"),
                     ("openai-batch:req-2", "openai Batch request and response JSONL, one conversation per line")]


def test_a_request_without_an_output_line_is_skipped_with_a_warning(tmp_path):
    (tmp_path / "in.jsonl").write_text(BATCH_INPUT.read_text())
    (tmp_path / "out.jsonl").write_text(BATCH_OUTPUT.read_text().splitlines()[0] + "\n")
    with pytest.warns(agentmsg.ConversionWarning) as caught:
        assert [t.name for t in iter_transcripts(tmp_path)] == ["in:task-2"]
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'in.jsonl'}: 2 request(s) have no line in out.jsonl (custom_id 'task-1', 'task-3'); skipped"]


@pytest.mark.parametrize("output, line, reason", [
    ('{"custom_id": "task-9", "response": {"status_code": 200, "body": {"choices": [{"message": '
     '{"role": "assistant", "content": "?"}}]}}}', 1, "custom_id 'task-9' has no request in {request}"),
    ('{"custom_id": "task-1", "response": {"status_code": 200, "body": {"choices": []}}}', 1,
     "'response' must be a ChatCompletion with choices[0].message"),
    ('{"custom_id": "task-1", "error": {"code": "x"}}\n{"custom_id": "task-1", "error": null, "response": null}', 2,
     "custom_id 'task-1' is answered twice (first at {output} line 1)"),
    ('{"custom_id": "task-1", "error": null}\n{"id": "batch_req_2"}', 2,
     "not an OpenAI Batch output line: it has no 'custom_id' string"),
])
def test_a_bad_batch_output_line_names_its_file_line_and_reason(tmp_path, output, line, reason):
    request = tmp_path / "in.jsonl"
    request.write_text(BATCH_INPUT.read_text())
    (tmp_path / "out.jsonl").write_text(output + "\n")
    with pytest.raises(TranscriptError) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore", agentmsg.ConversionWarning)
        list(iter_transcripts(tmp_path))
    assert (caught.value.path, caught.value.line, caught.value.reason) == (
        str(tmp_path / "out.jsonl"), line, reason.format(request=request, output=tmp_path / "out.jsonl"))


@pytest.mark.parametrize("text, reason", [
    ('{"conversations": [{"from": "human", "value": "a"}, {"from": "observation", "value": "b"}]}',
     "conversations[1]: an observation turn answers no function_call turn before it"),
    ('{"conversations": [{"from": "human", "value": "a"}, {"from": "robot", "value": "b"}]}',
     "conversations[1].from is 'robot'; ShareGPT speakers: human, user, gpt, assistant, chatgpt, bard, model, "
     "system, function_call, observation"),
    ('{"conversations": [{"from": "function_call", "value": "name=f"}]}',
     "conversations[0].value is not the JSON of a function call"),
    ('[{"action": "run", "args": {}}, {"role": "user"}]',
     "events[1] is neither an OpenHands action nor an observation (no 'action' or 'observation' field)"),
])
def test_bad_dataset_records_name_the_turn_and_the_reason(tmp_path, text, reason):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(TranscriptError) as caught:
        load_transcript(path)
    assert (caught.value.path, caught.value.line, caught.value.reason) == (str(path), None, reason)


def test_gzip_for_every_format_and_in_folders(tmp_path):
    sources = [*sorted(DATASETS.iterdir()), *sorted(transcripts.TRAJECTORY_DIR.glob("*.traj")),
               *sorted((Path(__file__).parent / "data" / "transcript-formats").iterdir())]
    folder = tmp_path / "gz"
    folder.mkdir()
    for source in sources:
        with open(source, "rb") as plain, gzip.open(folder / (source.name + ".gz"), "wb") as packed:
            shutil.copyfileobj(plain, packed)
    # A Batch output file is read with its request file: the two go together.
    groups = [[BATCH_INPUT, BATCH_OUTPUT] if s == BATCH_INPUT else [s] for s in sources if s != BATCH_OUTPUT]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", agentmsg.ConversionWarning)
        for group in groups:
            packed_ones = list(iter_transcripts([folder / (s.name + ".gz") for s in group]))
            plain_ones = list(iter_transcripts(group))
            assert [(t.name, t.format.replace(".jsonl.gz", ".jsonl"), shape(t), t.outcome, t.usage)
                    for t in packed_ones] == [
                (t.name, t.format, shape(t), t.outcome, t.usage) for t in plain_ones], group[0].name
        assert len(list(iter_transcripts(folder))) == sum(len(list(iter_transcripts(g))) for g in groups)
    broken = tmp_path / "cut.json.gz"
    broken.write_bytes((folder / "sharegpt.json.gz").read_bytes()[:-12])
    with pytest.raises(TranscriptError) as caught:
        load_transcript(broken)
    assert caught.value.reason.startswith("not a whole gzip file (EOFError: ")


def test_outcomes_and_usage_are_carried_into_the_report(tmp_path, capsys):
    report = run_workbench(iter_transcripts(sorted(DATASETS.glob("*.json"))), ["trim"], [1000])
    assert [(r.transcript, r.outcome, r.usage) for r in report.rows] == [
        ("chat-completion", {}, {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22,
                                 "prompt_tokens_details": {"cached_tokens": 0}}),
        ("openhands-run", {"resolved": True}, {"accumulated_cost": 0.12}),
        ("sharegpt", {"reward": 1.0}, {}),
    ]
    assert report.to_dict()["transcripts"][1]["outcome"] == {"resolved": True}
    assert main(["workbench", str(DATASETS / "openhands-run.json"), str(DATASETS / "sharegpt.json"), "--strategy",
                 "trim", "--budget", "1000", "--per-transcript", "--csv", str(tmp_path / "wb.csv")]) == 0
    out = capsys.readouterr().out
    assert "openhands-run (resolved True):" in out and "sharegpt (reward 1.0):" in out
    rows = (tmp_path / "wb.csv").read_text().splitlines()
    assert rows[1].startswith("openhands-run,") and '"{""resolved"": true}","{""accumulated_cost"": 0.12}"' in rows[1]


def test_detection_names_what_was_found_for_each_dataset_file(capsys):
    assert main(["stats", str(DATASETS)]) == 0
    out, err = capsys.readouterr()
    assert err == f"agentmsg: warning: {SKIPPED}\n"
    found = [line for line in out.splitlines() if line.startswith(str(DATASETS))]
    assert [line.split(" (", 1)[1].split(")")[0] for line in found] == [
        "openai request and response JSON",
        BATCH_LABEL,
        BATCH_LABEL,
        "openai Batch request JSONL, one conversation per line",
        "openai Batch request and response JSONL, one conversation per line",
        "openhands JSONL, one message per line",
        "openhands JSON",
        "sharegpt JSON",
    ]
    assert agentmsg.TRANSCRIPT_FORMATS[-2:] == ("sharegpt", "openhands")


def test_the_cli_pairs_batch_files_given_one_by_one_and_refuses_an_output_alone(tmp_path, capsys):
    assert main(["stats", str(BATCH_OUTPUT)]) == 1
    assert capsys.readouterr().err == (f"agentmsg: error: {BATCH_OUTPUT}: line 1: an OpenAI Batch output line holds "
                                       f"no prompt: give its Batch request file too (both files, or the folder "
                                       f"holding them)\n")
    assert main(["workbench", str(BATCH_OUTPUT), str(BATCH_INPUT), "--strategy", "trim", "--budget", "1000",
                 "--csv", str(tmp_path / "wb.csv")]) == 0
    assert capsys.readouterr().err == f"agentmsg: warning: {SKIPPED}\n"
    rows = (tmp_path / "wb.csv").read_text().splitlines()
    assert [row.split(",", 1)[0] for row in rows[1:]] == ["openai-batch-input:task-1", "openai-batch-input:task-2", "(all)"]
    assert '"{""completion_tokens"": 1, ""prompt_tokens"": 14, ""total_tokens"": 15}"' in rows[2]
