"""The dataset shapes the workbench reads besides the provider formats (ShareGPT, OpenHands
events, OpenAI Batch lines, a request next to its response), gzipped or not, and the outcomes and
usage they record, carried into the report."""

import gzip
import json
import shutil
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
    assert (caught.value.line, caught.value.reason) == (1, "a ChatCompletion response without its request: give the "
                                                           "request's messages too (an object with 'request' or "
                                                           "'body', and 'response')")


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
        packed_ones = list(iter_transcripts(folder / (source.name + ".gz")))
        plain_ones = list(iter_transcripts(source))
        assert [(t.name, t.format, shape(t), t.outcome, t.usage) for t in packed_ones] == [
            (t.name, t.format, shape(t), t.outcome, t.usage) for t in plain_ones], source.name
    assert len(list(iter_transcripts(folder))) == sum(len(list(iter_transcripts(s))) for s in sources)
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
    found = [line for line in capsys.readouterr().out.splitlines() if line.startswith(str(DATASETS))]
    assert [line.split(" (", 1)[1].split(")")[0] for line in found] == [
        "openai request and response JSON",
        "openai Batch request JSONL, one conversation per line",
        "openai Batch request and response JSONL, one conversation per line",
        "openhands JSONL, one message per line",
        "openhands JSON",
        "sharegpt JSON",
    ]
    assert agentmsg.TRANSCRIPT_FORMATS[-2:] == ("sharegpt", "openhands")
