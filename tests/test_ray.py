"""agentmsg.ray's jobs on a local Ray (2 CPUs) give what the single-process functions give.

The main test runs 100,000 conversations (the transcripts' tool turns, repeated) through the
prompt-token job; the parse, trim and convert jobs run on 5,000. About a minute on 2 cores.
"""

from __future__ import annotations

import json

import pytest
import pyarrow.parquet  # noqa: F401  (pa.parquet below)

import agentmsg
from agentmsg.convert import from_openai, to_anthropic, to_openai
from agentmsg.ray import ConvertConversations, CountPromptTokens, CountTextTokens, ParseText, TrimConversations
from scale_jobs import blocks, conversation_rows, unique_conversations

ray = pytest.importorskip("ray")
pa = pytest.importorskip("pyarrow")

CONVERSATIONS = 100_000


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


def serial_prompt_tokens(n: int) -> list:
    unique = [agentmsg.count_message_tokens(c) for c in unique_conversations()]
    return [unique[i % len(unique)] for i in range(n)]


def test_prompt_tokens_of_100k_conversations_equal_serial(local_ray):
    table = pa.table({"row": pa.array(range(CONVERSATIONS)), "messages": conversation_rows(CONVERSATIONS)})
    # 20 blocks, so that both workers get some.
    dataset = ray.data.from_arrow(blocks(table, 20)).map_batches(
        CountPromptTokens, batch_format="pyarrow", batch_size=5_000, compute=ray.data.ActorPoolStrategy(size=2)
    )
    out = dataset.to_arrow_refs()
    result = pa.concat_tables(ray.get(out)).sort_by("row")
    assert result["row"].to_pylist() == list(range(CONVERSATIONS))
    assert result["prompt_tokens"].to_pylist() == serial_prompt_tokens(CONVERSATIONS)


def test_parse_trim_convert_equal_serial(local_ray):
    n = 5_000
    rows = conversation_rows(n)
    replies = [json.loads(r)[0].get("content") or "" for r in rows]
    table = pa.table({"row": pa.array(range(n)), "messages": rows, "reply": replies})
    # Job objects as plain functions (Ray tasks): four actor pools would want more than 2 CPUs.
    dataset = (
        ray.data.from_arrow(blocks(table, 4))
        .map_batches(ParseText("reply"), batch_format="pyarrow", batch_size=1_000)
        .map_batches(TrimConversations(1_000, counter="o200k_base"), batch_format="pyarrow", batch_size=1_000)
        .map_batches(ConvertConversations("anthropic"), batch_format="pyarrow", batch_size=1_000)
        .map_batches(CountTextTokens("reply"), batch_format="pyarrow", batch_size=1_000)
    )
    result = pa.concat_tables(ray.get(dataset.to_arrow_refs())).sort_by("row")
    parsed = agentmsg.parse_many(replies)
    conversations = [json.loads(r) for r in rows]
    assert result["parsed_text"].to_pylist() == [p.text for p in parsed]
    assert result["parsed_thinking"].to_pylist() == [list(p.thinking) for p in parsed]
    assert result["parsed_errors"].to_pylist() == [len(p.errors) for p in parsed]
    assert [[(c["name"], json.loads(c["arguments"])) for c in calls] for calls in result["parsed_tool_calls"].to_pylist()] == [
        [(c.name, c.input) for c in p.tool_calls] for p in parsed
    ]
    assert [json.loads(t) for t in result["trimmed"].to_pylist()] == [
        to_openai(agentmsg.trim(from_openai(c), 1_000, counter="o200k_base").messages) for c in conversations
    ]
    assert [json.loads(t) for t in result["anthropic"].to_pylist()] == [
        json.loads(json.dumps(to_anthropic(from_openai(c)))) for c in conversations
    ]
    assert result["reply_tokens"].to_pylist() == agentmsg.count_tokens_batch(replies)


def test_jsonl_to_parquet_example(local_ray, tmp_path):
    # The documented job: nested message lists read from JSONL, results written to Parquet.
    conversations = unique_conversations()
    source = tmp_path / "conversations.jsonl"
    source.write_text("".join(json.dumps({"id": i, "messages": c}) + "\n" for i, c in enumerate(conversations)))
    # Read first: the 2 actors below hold both CPUs, which the read tasks would wait for.
    dataset = ray.data.read_json(str(source)).repartition(4).materialize().map_batches(
        CountPromptTokens, batch_format="pyarrow", compute=ray.data.ActorPoolStrategy(size=2)
    )
    dataset.write_parquet(str(tmp_path / "out"))
    written = pa.concat_tables(
        [pa.parquet.read_table(path) for path in sorted((tmp_path / "out").glob("*.parquet"))]
    ).sort_by("id")
    assert written["prompt_tokens"].to_pylist() == [agentmsg.count_message_tokens(c) for c in conversations]


def test_null_texts_give_null_parse_columns():
    out = ParseText("reply")(pa.table({"reply": pa.array([None, "a"], type=pa.string())}))
    assert [out[f"parsed_{name}"].to_pylist() for name in ("text", "thinking", "tool_calls", "errors")] == [
        [None, "a"], [None, []], [None, []], [None, 0]
    ]


def test_bad_rows_are_named():
    with pytest.raises(agentmsg.MessageTypeError, match=r"messages\[1\] must be a list of messages"):
        CountPromptTokens()(pa.table({"messages": ["[]", "7"]}))
    with pytest.raises(agentmsg.MessageError, match=r"texts\[1\]: invalid UTF-8"):
        bad_utf8 = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(bytes([0] * 4 + [1, 0, 0, 0, 2, 0, 0, 0])), pa.py_buffer(b"a\xff")])
        ParseText("reply")(pa.table({"reply": bad_utf8}))
    with pytest.raises(agentmsg.MessageTypeError, match="no converter to_gpt2; known formats: "):
        ConvertConversations("gpt2")
