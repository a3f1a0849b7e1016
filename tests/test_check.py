"""agentmsg.check / agentmsg.repair: the reasons a provider refuses a history, and their repairs.

Each rule is the peer bug it prevents: an orphaned tool result after pruning (LangChain #33245,
LiteLLM #10696), a call left without its result, an approval whose request was pruned (Vercel AI
#20953), a user message typed while a tool ran, a conversation that starts with the assistant.
"""

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import CHECKED_PROVIDERS, HistoryProblem, Message, Repair, ToolUseBlock, check, repair
from convert_strategies import histories

CALC = ToolUseBlock("c1", "calc", {"a": 1})
SEARCH = ToolUseBlock("c2", "search", {"q": "x"})


def test_a_valid_history_has_no_problem_and_is_kept_as_it_is():
    chat = [Message.system("s"), Message.user("q"), Message.assistant(tool_calls=[CALC]),
            Message.tool("2", tool_id="c1"), Message.assistant("2")]
    for provider in CHECKED_PROVIDERS:
        assert check(chat, provider) == []
        fixed, repairs = repair(chat, provider)
        assert repairs == [] and all(a is b for a, b in zip(fixed, chat)) and len(fixed) == len(chat)


def test_every_problem_is_listed_with_its_index():
    chat = [Message.assistant("hello"), Message.user("q"), Message.tool("?", tool_id="ghost"),
            Message.assistant(tool_calls=[CALC, SEARCH]), Message.user("hurry"), Message.tool("2", tool_id="c1"),
            Message.assistant("done")]
    assert check(chat, "anthropic") == [
        HistoryProblem(0, "first_not_user", "the conversation must begin with a user message, not assistant"),
        HistoryProblem(2, "orphan_result", "tool result 'ghost' has no tool call before it"),
        HistoryProblem(3, "unanswered_call", "tool call 'c2' (search) has no result"),
        HistoryProblem(4, "interjected", "a user message between tool calls and their results (results must "
                                         "directly follow their call)"),
    ]
    assert [p.rule for p in check(chat, "openai")] == ["orphan_result", "unanswered_call", "interjected"]


def test_repair_fixes_each_problem_and_says_so():
    chat = [Message.assistant("hello"), Message.user("q"), Message.tool("?", tool_id="ghost"),
            Message.assistant(tool_calls=[CALC, SEARCH]), Message.user("hurry"), Message.tool("2", tool_id="c1"),
            Message.assistant("done")]
    fixed, repairs = repair(chat, "anthropic")
    assert [str(r) for r in repairs] == [
        "messages[0]: first_not_user: dropped an assistant message before the first user message",
        "messages[4]: interjected: moved after the tool results it interrupted",
        "messages[2]: orphan_result: dropped tool result 'ghost'",
        "messages[3]: unanswered_call: added an error result for tool call 'c2'",
    ]
    assert [(m.role.value, m.tool_id, m.text) for m in fixed] == [
        ("user", None, "q"), ("assistant", None, ""), ("tool", "c1", "2"),
        ("tool", "c2", "[tool call interrupted: no result was recorded]"), ("user", None, "hurry"),
        ("assistant", None, "done")]
    assert check(fixed, "anthropic") == []
    dropped, repairs = repair(chat, "openai", unanswered="drop")
    assert repairs[-1] == Repair(3, "unanswered_call", "dropped tool calls 'c2'")
    assert dropped[2].tool_calls == (CALC,) and check(dropped, "openai") == []


def test_a_stale_approval_and_a_server_result_without_its_call_are_removed():
    items = [{"role": "user", "content": "q"},
             {"type": "mcp_approval_request", "id": "apr_1", "name": "ask", "arguments": "{}", "server_label": "w"},
             {"role": "user", "content": "yes, go ahead"},
             {"type": "mcp_approval_response", "approval_request_id": "apr_1", "approve": True}]
    history = agentmsg.from_responses(items)
    assert [m.role.value for m in history] == ["user", "assistant", "user"] and check(history, "responses") == []
    # the approval response is kept with the user turn after its request: a cut between them
    assert check(history[2:], "responses") == [
        HistoryProblem(0, "stale_approval", "mcp_approval_response for 'apr_1', whose approval request is gone")]
    late = agentmsg.from_responses([{"role": "user", "content": "q"},
                                    {"type": "mcp_approval_response", "approval_request_id": "apr_9", "approve": True},
                                    {"type": "computer_call_output", "call_id": "cc_1",
                                     "output": {"type": "computer_screenshot", "image_url": "https://e.com/s.png"}}])
    assert check(late, "responses") == [
        HistoryProblem(0, "stale_approval", "mcp_approval_response for 'apr_9', whose approval request is gone"),
        HistoryProblem(0, "orphan_server_result", "computer_call_output for 'cc_1', whose computer_call is gone"),
    ]
    assert check(late, "openai") == []  # the items are not sent to Chat Completions
    fixed, repairs = repair(late, "responses")
    assert [str(r) for r in repairs] == [
        "messages[0]: stale_approval: removed mcp_approval_response item 1 of metadata['responses']['items']",
        "messages[0]: orphan_server_result: removed computer_call_output item 2 of metadata['responses']['items']",
    ]
    assert check(fixed, "responses") == [] and agentmsg.to_responses(fixed) == [{"role": "user", "content": "q"}]


def test_bad_arguments_are_typed_errors():
    with pytest.raises(agentmsg.MessageError, match="provider must be one of openai, responses, anthropic, "
                                                    "bedrock, not 'gemini'"):
        check([], "gemini")
    with pytest.raises(agentmsg.MessageError, match="unanswered must be 'synthesize' or 'drop'"):
        repair([], "openai", unanswered="keep")


def test_trim_with_a_provider_gives_a_history_it_accepts():
    chat = [Message.system("s"), Message.user("q" * 50), Message.assistant("a" * 40),
            Message.tool("x", tool_id="zz"), Message.assistant(tool_calls=[CALC]), Message.user("hi")]
    result = agentmsg.trim(chat, 30, provider="anthropic")
    assert [str(r) for r in result.repairs] == [
        "messages[3]: orphan_result: dropped tool result 'zz'",
        "messages[4]: unanswered_call: added an error result for tool call 'c1'"]
    assert [m.role.value for m in result.messages] == ["system", "user"] and check(result.messages, "anthropic") == []
    assert agentmsg.trim(chat, 30).repairs == ()  # without a provider nothing is repaired


# -- properties -------------------------------------------------------------------------------------

def same_messages(fixed, repairs, history):
    """Every output message is an input message unchanged, a placeholder result, or named in a repair."""
    given_ids = {id(m) for m in history}
    changed = sum(1 for r in repairs if r.action.startswith(("dropped tool calls", "removed")))
    others = [m for m in fixed if id(m) not in given_ids and m.metadata.get("repaired") != "interrupted"]
    return len(others) <= changed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(histories, st.sampled_from(CHECKED_PROVIDERS), st.sampled_from(["synthesize", "drop"]))
def test_a_repaired_history_passes_check_and_keeps_its_messages(history, provider, unanswered):
    try:
        problems = check(history, provider)
    except agentmsg.MessageError:
        return  # ids with lone surrogates: refused by the pairing rule itself
    fixed, repairs = repair(history, provider, unanswered=unanswered)
    assert check(fixed, provider) == []
    assert same_messages(fixed, repairs, history)
    assert bool(problems) == bool(repairs)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories, st.sampled_from(CHECKED_PROVIDERS), st.integers(0, 300))
def test_a_trim_for_a_provider_passes_its_check(history, provider, budget):
    try:
        check(history, provider)
    except agentmsg.MessageError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = agentmsg.trim(history, budget, provider=provider)
    assert check(result.messages, provider) == []


def test_memory_compactor_and_langchain_trim_take_a_provider():
    chat = [Message.user("q" * 200), Message.assistant(tool_calls=[CALC]), Message.tool("1", tool_id="c1"),
            Message.assistant("hello"), Message.user("next")]
    memory = agentmsg.ConversationMemory(20, provider="anthropic")
    memory.extend(chat)
    assert [m.role.value for m in memory.messages] == ["user"]
    assert [str(r) for r in memory.repairs] == [
        "messages[0]: first_not_user: dropped an assistant message before the first user message"]
    assert check(memory.messages, "anthropic") == []

    def drop_assistants(messages):
        return [m for m in messages if m.role.value != "assistant"]

    compactor = agentmsg.Compactor([drop_assistants], trigger=0.5, provider="openai")
    with pytest.warns(agentmsg.ConversionWarning, match=r"Compactor repaired the history for openai: "
                                                        r"messages\[1\]: orphan_result: dropped tool result 'c1'"):
        out = compactor.compact(chat, max_tokens=100)
    assert [m.text for m in out] == ["q" * 200, "next"]

    from langchain_core.messages import AIMessage, HumanMessage
    from agentmsg.langchain import trim_messages

    lc_chat = [AIMessage("", tool_calls=[{"id": "c1", "name": "calc", "args": {}}]), HumanMessage("q"),
               AIMessage("a")]
    with pytest.warns(agentmsg.ConversionWarning, match="first_not_user"):
        kept = trim_messages(lc_chat, max_tokens=1000, token_counter="approximate", provider="bedrock")
    assert kept == lc_chat[1:] and kept[0] is lc_chat[1]
    assert trim_messages(lc_chat, max_tokens=1000, token_counter="approximate") == lc_chat


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories, st.sampled_from(CHECKED_PROVIDERS), st.integers(0, 300))
def test_a_memory_for_a_provider_gives_what_it_accepts(history, provider, budget):
    try:
        check(history, provider)
    except agentmsg.MessageError:
        return
    memory = agentmsg.ConversationMemory(budget, provider=provider)
    memory.extend(history)
    assert check(memory.messages, provider) == []
