"""The module paths of the release before the layered package keep working for one release:
every name they exported imports from the old path, and pickles made then still load."""

import importlib
import pickle

import pytest

import agentmsg

#: The old module paths and the names users imported from them (their ``__all__`` then, and
#: the documented extras).
OLD_NAMES = {
    "agentmsg.dialects": ["DIALECTS", "Dialect", "parse", "parse_many", "parse_tool_calls", "StreamParser",
                          "ToolCallHeader", "openai_deltas"],
    "agentmsg.encoding": ["Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model",
                          "resolve_encoding", "truncate_tokens", "TOKEN_ENCODINGS", "DisallowedSpecialTokenError",
                          "TokenIdError", "UnknownModelError", "MODEL_TO_ENCODING", "MODEL_PREFIX_TO_ENCODING"],
    "agentmsg.toolpairs": ["ToolPairing", "pair_tool_results", "check_tool_pairs", "repair_tool_pairs",
                           "INTERRUPTED"],
    "agentmsg.events": ["TextDelta", "ThinkingDelta", "ThinkingEnd", "ToolCallStart", "ToolCallDelta",
                        "ToolCallEnd", "Event"],
    "agentmsg.blocks": ["TextBlock", "ImageBlock", "ToolUseBlock", "ToolResultBlock", "Block", "block_from_dict"],
    "agentmsg.message": ["Message", "Role", "system", "user", "assistant", "tool", "ROLE_CODES"],
    "agentmsg.memory": ["token_counter", "TrimResult", "trim", "ConversationMemory"],
    "agentmsg.parsing": ["parse", "Parsed", "ParseIssue", "parse_many", "parse_tool_calls", "validate_tool_call",
                         "format_tool_call", "format_tool_result", "parse_tool_result", "ToolResultText",
                         "StreamParser", "TextDelta", "ThinkingDelta", "ThinkingEnd", "ToolCallStart",
                         "ToolCallDelta", "ToolCallEnd"],
    "agentmsg.workbench": ["MessageCounter", "Strategy", "first_sentence_summary", "builtin_strategies",
                           "DEFAULT_STRATEGIES", "DEFAULT_BUDGETS", "PROVIDERS", "ordering_problem",
                           "ReplayMetrics", "WorkbenchReport", "replay", "run_workbench",
                           "MissingDependencyError"],
    "agentmsg.counting": ["Counter", "TokenCounter", "CountCache"],
}


@pytest.mark.parametrize("path", sorted(OLD_NAMES))
def test_every_old_name_imports_from_its_old_path(path):
    module = importlib.import_module(path)
    missing = [name for name in OLD_NAMES[path] if not hasattr(module, name)]
    assert missing == []
    public = [name for name in OLD_NAMES[path] if name in agentmsg.__all__]
    assert all(getattr(module, name) is getattr(agentmsg, name) for name in public)


def _as_an_earlier_release_pickled(value):
    """The pickle an earlier release made of ``value``: the same, with the module paths then."""
    data = pickle.dumps(value, protocol=2)  # protocol 2 names classes as text, so paths can be swapped
    for now, then in ((b"agentmsg.history.memory", b"agentmsg.memory"), (b"agentmsg.model.message", b"agentmsg.message"),
                      (b"agentmsg.model.blocks", b"agentmsg.blocks"), (b"agentmsg.model.results", b"agentmsg.events")):
        data = data.replace(now, then)
    return data


def test_pickles_of_an_earlier_release_load():
    reply = agentmsg.assistant("It is 4", thinking="add", tool_calls=[agentmsg.ToolUseBlock("c1", "calc", {"a": 2})])
    data = _as_an_earlier_release_pickled(reply)
    assert b"agentmsg.message" in data and b"agentmsg.blocks" in data
    assert pickle.loads(data) == reply

    memory = agentmsg.ConversationMemory(100)
    memory.add(reply)
    data = _as_an_earlier_release_pickled(memory)
    assert b"agentmsg.memory" in data
    assert list(pickle.loads(data)) == [reply]

    events = agentmsg.StreamParser().feed("Hi <think>plan</think>")
    data = _as_an_earlier_release_pickled(events)
    assert b"agentmsg.events" in data
    assert pickle.loads(data) == events
