"""Conversations for the corpus-job tests and benches: the shared transcripts cut into tool turns
(a call with its results stays in one conversation), as OpenAI-style dicts."""

from __future__ import annotations

import json
from typing import List

from agentmsg.convert import to_openai
from transcripts import _histories, _units


def unique_conversations() -> List[list]:
    """Each tool turn (or lone message) of each transcript, as OpenAI message dicts."""
    return [to_openai(unit) for history in _histories() for unit in _units(history)]


def conversation_rows(n: int) -> List[str]:
    """``n`` conversations as JSON strings: the unique ones repeated in order."""
    unique = [json.dumps(c, ensure_ascii=False) for c in unique_conversations()]
    return [unique[i % len(unique)] for i in range(n)]


def blocks(table, count: int) -> list:
    """``table`` cut into ``count`` slices (no copy): Ray gives each block to one worker."""
    size = -(-table.num_rows // count)
    return [table.slice(start, size) for start in range(0, table.num_rows, size)]
