"""Real agent transcripts from ``tests/data`` as agentmsg messages, for tests and benches.

The library's loader (``agentmsg.load_transcript``) reads the SWE-agent ``.traj`` files. Note that the function-calling runs reuse a call id in a
later turn once the earlier call is answered: a result pairs with the latest call of its id.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import List

from agentmsg import Message, ToolUseBlock, load_transcript

REPO = Path(__file__).resolve().parent.parent
# Copied into the repository with their MIT license, so a fresh clone runs every test.
TRAJECTORY_DIR = REPO / "tests" / "data" / "swe-agent-trajectories"


def trajectory_files() -> List[Path]:
    """The ``.traj`` files, sorted by name; fails clearly if the shared data is missing."""
    files = sorted(TRAJECTORY_DIR.glob("*.traj"))
    if not files:
        raise FileNotFoundError(f"no .traj files in {TRAJECTORY_DIR}")
    return files


def load_history(path: Path, id_suffix: str = "") -> List[Message]:
    """One trajectory's history as messages (read by ``agentmsg.load_transcript``);
    ``id_suffix`` is appended to every tool-call id."""
    messages = load_transcript(path, format="swe-agent").messages
    if not id_suffix:
        return messages
    out = []
    for message in messages:
        if message.has_tool_calls:
            message = message.replace(content=[
                replace(b, id=b.id + id_suffix) if isinstance(b, ToolUseBlock) else b for b in message.content])
        elif message.role == "tool":
            result = message.content[0]
            message = message.replace(content=[replace(result, tool_use_id=result.tool_use_id + id_suffix)],
                                      tool_id=message.tool_id + id_suffix)
        out.append(message)
    return out


@lru_cache(maxsize=None)
def _histories() -> tuple:
    return tuple(tuple(load_history(path)) for path in trajectory_files())


def all_messages() -> List[Message]:
    """Every message of every trajectory, in file order."""
    return [message for history in _histories() for message in history]


def _units(history) -> list:
    """Split a history into units that must stay together: a tool-calling turn with its results."""
    units: list = []
    for message in history:
        if message.role == "tool" and units and (units[-1][0].has_tool_calls):
            units[-1].append(message)
        else:
            units.append([message])
    return units


def build_transcript(n: int) -> List[Message]:
    """``n`` messages made by repeating the trajectories end to end.

    Only the first system prompt is kept (a real long session has one). Tool-call ids get a
    ``-r<k>`` suffix per repetition so they stay unique, and every call keeps its results: when
    a whole tool turn no longer fits, the remaining slots are filled with plain user messages.
    Message ids are fresh. Deterministic apart from ids and timestamps.
    """
    paths = trajectory_files()
    out: List[Message] = []
    repetition = 0
    while len(out) < n:
        for path in paths:
            history = load_history(path, id_suffix=f"-r{repetition}")
            for unit in _units(history):
                if out and unit[0].role == "system":
                    continue
                if len(out) + len(unit) > n:
                    while len(out) < n:
                        out.append(Message.user(unit[0].text or "(continued)"))
                    return out
                out.extend(unit)
        repetition += 1
    return out
