"""The ``agentmsg`` command line.

``agentmsg stats [FILE]`` summarizes a transcript: messages, characters and estimated tokens by
role, and the exact prompt tokens of the whole conversation as an OpenAI chat request. FILE is a JSON list of messages (``Message.to_dict`` shape or seed 001's flat shape) or
JSON Lines with one message per line; without FILE, the sample transcript shipped in the package.

    $ agentmsg stats
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from typing import List, Optional, Sequence

from .conversation import conversation_stats
from .errors import AgentMsgError, MessageError
from .message import Message, Role
from .tokens import count_message_tokens

# The exact encodings the summary reports (OpenAI chat format, see agentmsg.count_message_tokens).
EXACT_ENCODINGS = ("o200k_base", "cl100k_base")

SAMPLE = "sample_transcript.json"


def _read_messages(text: str, source: str) -> List[Message]:
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as error:
            raise MessageError(
                f"{source}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
            ) from None
    else:
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise MessageError(
                    f"{source}: invalid JSON on line {number} column {error.colno}: {error.msg}"
                ) from None
    messages = []
    for index, item in enumerate(items):
        try:
            messages.append(Message.from_dict(item))
        except AgentMsgError as error:
            raise type(error)(f"{source}: message {index}: {error}") from None
    return messages


def load_sample() -> List[Message]:
    """The sample transcript shipped in the package (seed 000's conversation flow).

    >>> len(load_sample()) > 0
    True
    """
    text = resources.files("agentmsg").joinpath("data", SAMPLE).read_text(encoding="utf-8")
    return _read_messages(text, SAMPLE)


def _stats(path: Optional[str], as_json: bool) -> int:
    if path is None:
        source, messages = f"{SAMPLE} (sample shipped with agentmsg)", load_sample()
    else:
        with open(path, encoding="utf-8") as handle:
            source, messages = path, _read_messages(handle.read(), path)
    stats = conversation_stats(messages)
    exact = {name: count_message_tokens(messages, encoding=name) for name in EXACT_ENCODINGS}
    if as_json:
        print(json.dumps({**stats.__dict__, "prompt_tokens": exact}, indent=2))
        return 0
    print(f"{source}: {stats.total_messages} messages, {stats.total_chars} characters, "
          f"{stats.estimated_tokens} estimated tokens")
    print(f"{'role':<10} {'messages':>9} {'characters':>11} {'est. tokens':>12}")
    for role in Role:
        r = role.value
        print(f"{r:<10} {stats.by_role[r]:>9} {stats.chars_by_role[r]:>11} {stats.tokens_by_role[r]:>12}")
    print(f"{'total':<10} {stats.total_messages:>9} {stats.total_chars:>11} {stats.estimated_tokens:>12}")
    print(f"tool calls: {stats.tool_calls}, tool results: {stats.tool_results}")
    counts = ", ".join(f"{count} ({name})" for name, count in exact.items())
    print(f"exact prompt tokens as an OpenAI chat request: {counts}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``agentmsg`` console script; returns the exit status.

    >>> main(["stats"])  # doctest: +ELLIPSIS
    sample_transcript.json ...
    0
    """
    parser = argparse.ArgumentParser(prog="agentmsg", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    stats = commands.add_parser("stats", help="messages, characters and estimated tokens by role")
    stats.add_argument("file", nargs="?", help="JSON list or JSON Lines of messages (default: sample)")
    stats.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    try:
        return _stats(args.file, args.json)
    except (AgentMsgError, OSError) as error:
        print(f"agentmsg: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
