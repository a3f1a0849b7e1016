"""The public API's main jobs, each timed in this process: prints one JSON object, job -> seconds
(the median of REPEATS runs). Only names every release has are used, so
``scripts/compare-commits`` runs this same file against two builds, interleaved, and compares.

    PYTHONPATH=python python benches/api_jobs.py
"""

import json
import sys

import agentmsg
from timing import appendix_b_history, medians

REPEATS = 5


LONG = appendix_b_history(50_000)
SHORT = appendix_b_history(2_000)
OPENAI = agentmsg.to_openai(SHORT)
REPLY = ("Let me think. <think>The user wants the weather.</think> Checking. "
         '<tool>{"server_name": "local", "tool_name": "weather", "arguments": {"city": "Paris"}}</tool>') * 20
HERMES = ('I will call it. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\n') * 40
CHUNKS = [(REPLY * 10)[i:i + 4] for i in range(0, len(REPLY) * 10, 4)]
HERMES_CHUNKS = [(HERMES * 10)[i:i + 4] for i in range(0, len(HERMES) * 10, 4)]


def stream(chunks: list, **options: object) -> None:
    parser = agentmsg.StreamParser(**options)
    for chunk in chunks:
        parser.feed(chunk)
    parser.finish()


JOBS = {
    "trim 110k, full budget": lambda: agentmsg.trim(LONG, 10**9),
    "trim 110k, 4000 tokens": lambda: agentmsg.trim(LONG, 4000),
    "trim 4k, o200k, 2000 tokens": lambda: agentmsg.trim(SHORT, 2000, counter="o200k_base"),
    "estimate_tokens_many 4k": lambda: agentmsg.estimate_tokens_many(SHORT),
    "check_tool_pairs 110k": lambda: agentmsg.check_tool_pairs(LONG),
    "message_token_counts 4k": lambda: agentmsg.message_token_counts(SHORT, "o200k_base"),
    "parse 2k chars x100": lambda: [agentmsg.parse(REPLY) for _ in range(100)],
    "parse hermes x100": lambda: [agentmsg.parse(HERMES, dialect="hermes") for _ in range(100)],
    "stream forge, 4-char chunks": lambda: stream(CHUNKS),
    "stream hermes, 4-char chunks": lambda: stream(HERMES_CHUNKS, dialect="hermes"),
    "to_openai 4k": lambda: agentmsg.to_openai(SHORT),
    "from_openai 4k": lambda: agentmsg.from_openai(OPENAI),
    "to_anthropic 4k": lambda: agentmsg.to_anthropic(SHORT),
    "as_messages 4k dicts": lambda: agentmsg.as_messages(OPENAI),
}


if __name__ == "__main__":
    print(json.dumps(medians(JOBS, REPEATS, sys.argv[1:])))
