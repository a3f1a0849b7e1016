"""Real agent transcripts from ``tests/data`` as agentmsg messages, for tests and benches.

SWE-agent ``.traj`` files hold the conversation in ``history``: ``role``, ``content`` and, in the
function-calling runs, ``tool_calls`` / ``tool_call_ids`` (JSON lists, or Python ``repr`` strings
in some recordings, so both are read). Note that the function-calling runs reuse a call id in a
later turn once the earlier call is answered: a result pairs with the latest call of its id.
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, List

from agentmsg import Message, ToolUseBlock

REPO = Path(__file__).resolve().parent.parent
# Copied into the repository with their MIT license, so a fresh clone runs every test.
TRAJECTORY_DIR = REPO / "tests" / "data" / "swe-agent-trajectories"


def trajectory_files() -> List[Path]:
    """The ``.traj`` files, sorted by name; fails clearly if the shared data is missing."""
    files = sorted(TRAJECTORY_DIR.glob("*.traj"))
    if not files:
        raise FileNotFoundError(f"no .traj files in {TRAJECTORY_DIR}")
    return files


def _python_or_json_list(value: Any) -> list:
    if isinstance(value, str):
        return ast.literal_eval(value)
    return list(value or [])


def _tool_call(call: dict) -> ToolUseBlock:
    function = call["function"]
    arguments = function.get("arguments") or "{}"
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    return ToolUseBlock(id=call["id"], name=function["name"], input=arguments)


def _message(entry: dict, call_names: dict, id_suffix: str) -> Message:
    role, content = entry["role"], entry.get("content") or ""
    metadata = {key: entry[key] for key in ("agent", "message_type") if key in entry}
    if role == "assistant" and entry.get("tool_calls"):
        calls = []
        for call in _python_or_json_list(entry["tool_calls"]):
            block = _tool_call(call)
            block = ToolUseBlock(id=block.id + id_suffix, name=block.name, input=block.input)
            call_names[block.id] = block.name
            calls.append(block)
        return Message.assistant(content, tool_calls=calls, metadata=metadata)
    if role == "tool":
        tool_id = _python_or_json_list(entry.get("tool_call_ids"))[0] + id_suffix
        return Message.tool(content, tool_id=tool_id, name=call_names.get(tool_id), metadata=metadata)
    return Message(role, content, metadata=metadata)


def load_history(path: Path, id_suffix: str = "") -> List[Message]:
    """One trajectory's history as messages; ``id_suffix`` is appended to every tool-call id."""
    history = json.loads(Path(path).read_text(encoding="utf-8"))["history"]
    call_names: dict = {}
    return [_message(entry, call_names, id_suffix) for entry in history]


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
