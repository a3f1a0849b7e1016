"""The jobs the allocator choice is measured on (``scripts/measure-allocators`` runs this file with
each candidate build): batch counting, parse_many, a loop of parse (the result build), a streamed
hermes reply fed token by token, trims of a 5,000-message history, and thread churn. Prints the
median seconds of each job as one JSON object."""

import json
import random
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import agentmsg  # noqa: E402
from timing import medians  # noqa: E402
from transcripts import build_transcript  # noqa: E402

REPEATS = 9
rng = random.Random(0)
WORDS = "the of agent tool call file read write error test python rust message token budget".split()


def words(n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


MESSAGES = [words(rng.randint(20, 200)) for _ in range(10_000)]
TURN = ("<think>" + words(60) + "</think>" + words(80) +
        '<tool>{"server_name": "local", "tool_name": "edit", "arguments": {"path": "a.py", "text": "'
        + words(40) + '"}}</tool>')
TURNS = [TURN + str(i) for i in range(2000)]
HERMES = "".join(words(30) + '<tool_call>{"name": "f", "arguments": {"x": %d, "y": "%s"}}</tool_call>' % (i, words(5))
                 for i in range(150))
ENCODING = agentmsg.get_encoding("o200k_base")
TOKEN_CHUNKS = [ENCODING.decode([token]) for token in ENCODING.encode_ordinary(HERMES)]
HISTORY = build_transcript(5_000)


def stream() -> None:
    parser = agentmsg.StreamParser(dialect="hermes")
    for chunk in TOKEN_CHUNKS:
        parser.feed(chunk)
    parser.finish()


def thread_churn() -> None:
    def work() -> None:
        agentmsg.count_tokens("hello world")
        agentmsg.parse("<think>a</think>b")
    for _ in range(100):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()


JOBS = {
    "count_tokens_batch_10k": lambda: agentmsg.count_tokens_batch(MESSAGES),
    "parse_many_2k": lambda: agentmsg.parse_many(TURNS),
    "parse_loop_2k": lambda: [agentmsg.parse(turn) for turn in TURNS],
    "stream_feed_hermes": stream,
    "trim_5k_keep_all": lambda: agentmsg.trim(HISTORY, 10**9, counter="o200k_base"),
    "trim_5k_to_50k": lambda: agentmsg.trim(HISTORY, 50_000, counter="o200k_base"),
    "thread_churn_100": thread_churn,
}

if __name__ == "__main__":
    print(json.dumps(medians(JOBS, REPEATS)))
