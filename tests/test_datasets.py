"""The agentmsg.ray jobs as Hugging Face ``datasets.map(batched=True, num_proc=2)`` functions:
the worker processes are forked after the parent used the batch functions, and the results
equal the single-process ones."""

from __future__ import annotations

import json

import pytest

import agentmsg
from agentmsg.ray import CountPromptTokens, CountTextTokens, ParseText, as_datasets_function
from scale_jobs import conversation_rows, unique_conversations

datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")

N = 4_000


def test_map_with_two_processes_equals_serial(tmp_path):
    rows = conversation_rows(N)
    replies = [json.loads(r)[0].get("content") or "" for r in rows]
    # The parent starts its thread pool before datasets forks its workers.
    expected_reply_tokens = agentmsg.count_tokens_batch(replies)
    parsed = agentmsg.parse_many(replies)
    unique = [agentmsg.count_message_tokens(c) for c in unique_conversations()]

    dataset = datasets.Dataset.from_dict({"messages": rows, "reply": replies})
    for job in (CountPromptTokens(), CountTextTokens("reply"), ParseText("reply")):
        dataset = dataset.map(
            as_datasets_function(job), batched=True, batch_size=500, num_proc=2,
            cache_file_name=str(tmp_path / f"{type(job).__name__}.arrow"),
        )
    assert dataset["prompt_tokens"] == [unique[i % len(unique)] for i in range(N)]
    assert dataset["reply_tokens"] == expected_reply_tokens
    assert dataset["parsed_text"] == [p.text for p in parsed]
    assert dataset["parsed_errors"] == [len(p.errors) for p in parsed]
    assert [[c["name"] for c in calls] for calls in dataset["parsed_tool_calls"]] == [
        [c.name for c in p.tool_calls] for p in parsed
    ]
