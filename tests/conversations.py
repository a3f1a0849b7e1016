"""Hypothesis strategies for conversations with tool pairs, and a checker of the pruning rules.

Every generated message carries its token count in ``metadata["tokens"]``; ``by_metadata`` is the
counter that reads it, so the tests control sizes exactly.
"""

from hypothesis import strategies as st

from agentmsg import Message, ToolUseBlock, pair_tool_results


def by_metadata(message):
    return message.metadata["tokens"]


tokens = st.integers(0, 30)
tool_names = st.sampled_from(["calc", "search", "read"])


@st.composite
def conversations(draw, broken=False, interleave=True, max_steps=25):
    """A conversation of systems, users, assistants and tool turns (an assistant with calls and
    their results, by id or by name only, results in any order). ``interleave`` lets a user
    message fall between a call and its results; ``broken`` adds orphan results and calls whose
    results never come."""
    out = []
    next_id = [0]

    def msg(role, **kw):
        return Message(role, f"{role} {len(out)}", metadata={"tokens": draw(tokens)}, **kw)

    for _ in range(draw(st.integers(0, max_steps))):
        kind = draw(st.sampled_from(["system", "user", "assistant", "turn", "turn", "turn"]
                                    + (["orphan"] if broken else [])))
        if kind in ("system", "user", "assistant"):
            out.append(msg(kind))
        elif kind == "orphan":
            out.append(Message.tool("stray", tool_id=f"x{len(out)}", metadata={"tokens": draw(tokens)}))
        else:
            named = draw(st.booleans())
            names = draw(st.lists(tool_names, min_size=1, max_size=3))
            calls = []
            for name in names:
                next_id[0] += 1
                calls.append(ToolUseBlock("" if named else f"c{next_id[0]}", name, {}))
            out.append(Message.assistant(f"calling {len(out)}", tool_calls=calls,
                                         metadata={"tokens": draw(tokens)}))
            order = draw(st.permutations(calls))
            if broken:
                order = order[: draw(st.integers(0, len(order)))]
            for position, call in enumerate(order):
                if interleave and not named and position and draw(st.integers(0, 4)) == 0:
                    out.append(msg("user"))
                result = {"name": call.name} if named else {"tool_id": call.id}
                out.append(Message.tool(f"result {len(out)}", metadata={"tokens": draw(tokens)}, **result))
    return out


def check_rules(source, kept, max_tokens, total, over_budget, system_over_budget, keep_system=True):
    """Asserts the four pruning rules for ``kept`` (a sub-list of ``source``, by identity)."""
    position = {id(m): i for i, m in enumerate(source)}
    kept_at = [position[id(m)] for m in kept]
    assert kept_at == sorted(kept_at), "kept messages are in order"
    counts = [by_metadata(m) for m in source]
    assert total == sum(counts[i] for i in kept_at)
    assert over_budget == (total > max_tokens)

    is_system = [keep_system and m.role == "system" for m in source]
    systems = [i for i in range(len(source)) if is_system[i]]
    kept_set = set(kept_at)
    # Rule 1: systems are kept; when they alone exceed the budget, the newest that fit stay.
    system_total = sum(counts[i] for i in systems)
    assert system_over_budget == (system_total > max_tokens)
    kept_systems = [i for i in systems if i in kept_set]
    if not system_over_budget:
        assert kept_systems == systems
    elif systems:
        assert kept_systems and kept_systems[-1] == systems[-1]
        assert kept_systems == systems[len(systems) - len(kept_systems):]
        used = sum(counts[i] for i in kept_systems)
        assert used <= max_tokens or len(kept_systems) == 1
        dropped = systems[: len(systems) - len(kept_systems)]
        assert not dropped or used + counts[dropped[-1]] > max_tokens

    # Rule 3: the kept non-systems are a contiguous run ending at the newest one.
    others = [i for i in range(len(source)) if not is_system[i]]
    kept_others = [i for i in others if i in kept_set]
    assert kept_others == others[len(others) - len(kept_others):]
    # Rule 4: the newest non-system message is kept.
    if others:
        assert kept_others and kept_others[-1] == others[-1]

    # Rule 2: a call and its results are kept or dropped together.
    pairing = pair_tool_results(source)
    for result, call in enumerate(pairing.call_of):
        if call >= 0:
            assert (result in kept_set) == (call in kept_set), (result, call)
    return kept_others, others


def rule1(source, max_tokens):
    """Rule 1 by definition, for brute-force models: (counts, kept system indices, the other
    indices, tokens left for the others)."""
    counts = [by_metadata(x) for x in source]
    systems = [i for i, x in enumerate(source) if x.role == "system"]
    others = [i for i, x in enumerate(source) if x.role != "system"]
    kept_systems = list(systems)
    while sum(counts[i] for i in kept_systems) > max_tokens and len(kept_systems) > 1:
        kept_systems.pop(0)
    return counts, kept_systems, others, max_tokens - sum(counts[i] for i in kept_systems)


# Small messages whose token count rides in metadata (count them with ``by_metadata``).
def m(role, tokens, **kw):
    if role == "tool":
        return Message.tool(f"t{tokens}", metadata={"tokens": tokens}, **kw)
    return Message(role, f"{role}{tokens}", metadata={"tokens": tokens}, **kw)


def turn(tokens, *ids):
    return Message.assistant("call", tool_calls=[ToolUseBlock(i, "calc", {}) for i in ids],
                             metadata={"tokens": tokens})
