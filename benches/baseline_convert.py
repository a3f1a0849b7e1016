"""Plain pure-Python conversions of the same transcript, written the straightforward way: no
input checks, no loss tracking, no orphan check. What a careful developer writes inline when the
input is known to be well formed; agentmsg's converters do more, and are measured against this."""

import json

from agentmsg import Message, TextBlock, ToolUseBlock


def to_openai_plain(messages):
    out = []
    for m in messages:
        role = m.role.value
        if role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_id, "content": m.text})
            continue
        data = {"role": role, "content": m.text}
        calls = m.tool_calls
        if calls:
            data["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.input)}}
                for c in calls
            ]
        out.append(data)
    return out


def from_openai_plain(dicts):
    out = []
    for d in dicts:
        role = d["role"]
        if role == "tool":
            out.append(Message.tool(d["content"], tool_id=d["tool_call_id"]))
            continue
        calls = [ToolUseBlock(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                 for c in d.get("tool_calls") or ()]
        blocks = ([TextBlock(d["content"])] if d.get("content") else []) + calls
        out.append(Message(role, blocks))
    return out


def to_anthropic_plain(messages):
    system, turns = [], []
    for m in messages:
        role = m.role.value
        if role == "system":
            system.append({"type": "text", "text": m.text})
            continue
        if role == "tool":
            role, blocks = "user", [{"type": "tool_result", "tool_use_id": m.tool_id, "content": m.text}]
        else:
            blocks = [{"type": "text", "text": m.text}] if m.text else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in m.tool_calls]
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return system, turns


def from_anthropic_plain(system, turns):
    out = [Message.system(b["text"]) for b in system]
    for turn in turns:
        pending = []
        for b in turn["content"]:
            kind = b["type"]
            if kind == "tool_result":
                out.append(Message.tool(b["content"], tool_id=b["tool_use_id"]))
            elif kind == "text":
                pending.append(TextBlock(b["text"]))
            elif kind == "tool_use":
                pending.append(ToolUseBlock(b["id"], b["name"], b["input"]))
        if pending:
            out.append(Message(turn["role"], pending))
    return out
