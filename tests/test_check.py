"""agentmsg.check / agentmsg.repair: the reasons a provider refuses a history, and their repairs.

Each rule is the peer bug it prevents: an orphaned tool result after pruning (LangChain #33245,
LiteLLM #10696), a call left without its result, an approval whose request was pruned (Vercel AI
#20953), a user message typed while a tool ran, a conversation that starts with the assistant,
a server tool's result whose call was pruned, blank text Anthropic refuses, an empty turn,
thinking whose signature was lost in a conversion (LiteLLM #27946, #26916), a Gemini 3 function
call without its thought signature.
"""

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import (
    CHECKED_PROVIDERS, HistoryProblem, Message, Repair, ServerToolResultBlock, ServerToolUseBlock, TextBlock,
    ThinkingBlock, ToolUseBlock, check, repair,
)
from convert_strategies import histories, nonempty_text

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


def test_a_server_result_without_its_call_blank_text_and_empty_turns():
    search = ServerToolUseBlock("srvtoolu_1", "web_search", {"query": "x"}, provider="anthropic")
    found = ServerToolResultBlock("srvtoolu_1", [], provider="anthropic")
    stray = ServerToolResultBlock("srvtoolu_0", [], provider="anthropic")
    chat = [Message.user("q"), Message("assistant", [stray, search, found, TextBlock(" ")]),
            Message.user([TextBlock("\n")]), Message("assistant", [ThinkingBlock("lost its signature")]),
            Message.user("next")]
    assert check(chat, "anthropic", thinking=False) == [
        HistoryProblem(1, "orphan_server_result", "server tool result 'srvtoolu_0' has no server tool call before it"),
        HistoryProblem(1, "blank_text", "a text block of only whitespace"),
        HistoryProblem(2, "empty_message", "a user message with nothing anthropic takes (an empty turn)"),
        HistoryProblem(3, "empty_message", "an assistant message with nothing anthropic takes (an empty turn)")]
    fixed, repairs = repair(chat, "anthropic")
    assert [str(r) for r in repairs] == [
        "messages[1]: orphan_server_result: dropped server tool result 'srvtoolu_0'",
        "messages[1]: blank_text: dropped a text block of only whitespace",
        "messages[2]: empty_message: dropped a user message with nothing to send",
        "messages[3]: empty_message: dropped an assistant message with nothing to send"]
    assert [m.content for m in fixed] == [chat[0].content, (search, found), chat[4].content]
    assert check(fixed, "anthropic") == []
    # OpenAI takes whitespace, and drops server blocks and thinking: only the empty turn is its problem
    assert [(p.index, p.rule) for p in check(chat, "openai")] == [(3, "empty_message")]


def test_unsigned_thinking_with_tool_calls_when_thinking_is_on():
    signed = Message("assistant", [ThinkingBlock("plan", "sig"), TextBlock("ok")])
    lost = Message("assistant", [ThinkingBlock("from another provider"), CALC])
    chat = [Message.user("q"), signed, Message.user("go"), lost, Message.tool("2", tool_id="c1")]
    problem = HistoryProblem(3, "unsigned_thinking", "thinking without its signature, in a turn with tool calls "
                                                     "(Anthropic refuses unsigned thinking)")
    assert check(chat, "anthropic") == [problem]  # thinking found on: the signed block
    assert check(chat, "anthropic", thinking=False) == [] and check(chat[2:], "anthropic") == []
    assert check(chat[2:], "anthropic", thinking=True) == [HistoryProblem(1, problem.rule, problem.detail)]
    fixed, repairs = repair(chat, "anthropic")
    assert [str(r) for r in repairs] == [
        "messages[3]: unsigned_thinking: dropped thinking without its signature; this turn's tool loop is still "
        "open, so send this request with thinking off (the signature cannot be rebuilt)"]
    assert fixed[3].content == (CALC,) and check(fixed, "anthropic") == []
    closed = chat + [Message.assistant("2"), Message.user("thanks")]
    assert repair(closed, "anthropic").repairs[0].action == (
        "dropped thinking without its signature (Anthropic takes earlier turns without their thinking)")


def test_gemini_function_calls_of_the_current_turn_need_a_thought_signature():
    signed = Message.assistant(tool_calls=[CALC], metadata={"gemini": {"signatures": [{"block": 0, "signature": "c2ln"}]}})
    unsigned = Message.assistant(tool_calls=[SEARCH])
    chat = [Message.user("q"), signed, Message.tool("2", tool_id="c1", name="calc"), unsigned,
            Message.tool("x", tool_id="c2", name="search")]
    assert check(chat, "gemini") == [
        HistoryProblem(3, "missing_thought_signature", "the first function call of this model turn (search) has no "
                                                       "thoughtSignature")]
    assert check(chat, "gemini", thinking=False) == []
    fixed, repairs = repair(chat, "gemini")
    assert [str(r) for r in repairs] == [
        "messages[3]: missing_thought_signature: gave function call 'search' the placeholder signature "
        "'skip_thought_signature_validator'"]
    assert check(fixed, "gemini") == []
    _, contents = agentmsg.to_gemini(fixed)
    assert contents[3]["parts"][0]["thoughtSignature"] == "skip_thought_signature_validator"
    # before the last user text is an earlier turn: Gemini does not check it
    assert check(chat + [Message.assistant("done"), Message.user("new question")], "gemini") == []
    # Gemini wants the conversation to open with a user turn, like Anthropic
    assert [p.rule for p in check(chat[1:3], "gemini", thinking=False)] == ["first_not_user", "first_not_user"]


def test_bad_arguments_are_typed_errors():
    with pytest.raises(agentmsg.MessageError, match="provider must be one of openai, responses, anthropic, "
                                                    "bedrock, gemini, not 'cohere'"):
        check([], "cohere")
    with pytest.raises(agentmsg.MessageError, match="thinking must be True, False or None, not 'yes'"):
        check([], "anthropic", thinking="yes")
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
    changed = sum(1 for r in repairs if r.action.startswith((
        "dropped tool calls", "removed", "dropped a text block", "dropped thinking", "dropped server tool result",
        "gave function call")))
    others = [m for m in fixed if id(m) not in given_ids and m.metadata.get("repaired") != "interrupted"]
    return len(others) <= changed


server_turns = st.builds(
    lambda ids, provider, blank: Message("assistant", [
        block for i in ids for block in (ServerToolUseBlock(i, "web_search", {}, provider=provider),
                                         ServerToolResultBlock(i, [], provider=provider))][1:] + [TextBlock(blank)]),
    st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=1, max_size=3, unique=True),
    st.sampled_from(["", "anthropic", "openai"]), st.sampled_from([" ", "\n", "ok"]))
gemini_turns = st.builds(lambda text: [Message.user(text), Message.assistant(tool_calls=[ToolUseBlock("g1", "f", {})]),
                                       Message.tool("r", tool_id="g1", name="f")], nonempty_text)
mixed_histories = st.tuples(histories, st.lists(server_turns, max_size=2), st.lists(gemini_turns, max_size=1)).map(
    lambda parts: parts[0] + parts[1] + [m for turn in parts[2] for m in turn])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mixed_histories, st.sampled_from(CHECKED_PROVIDERS), st.sampled_from(["synthesize", "drop"]),
       st.sampled_from([None, True, False]))
def test_a_repaired_history_passes_check_and_keeps_its_messages(history, provider, unanswered, thinking):
    try:
        problems = check(history, provider, thinking=thinking)
    except agentmsg.MessageError:
        return  # ids with lone surrogates: refused by the pairing rule itself
    fixed, repairs = repair(history, provider, unanswered=unanswered, thinking=thinking)
    assert check(fixed, provider, thinking=thinking) == []
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


def test_a_dropped_turn_that_held_a_server_call_takes_its_later_result_with_it():
    """Dropping an empty turn removes the server call a later turn's result answered: the rules
    run again, so that later turn (now holding only that result) is dropped too."""
    def turn(ids, provider):
        blocks = [b for i in ids for b in (ServerToolUseBlock(i, "web_search", {}, provider=provider),
                                            ServerToolResultBlock(i, [], provider=provider))]
        return Message("assistant", blocks[1:] + [TextBlock(" ")])
    history = [Message.system("0"), Message.user("0"), turn(["s1", "s2"], "openai"), turn(["s2"], "")]
    fixed, repairs = repair(history, "anthropic")
    assert [(r.index, r.rule) for r in repairs] == [(2, "empty_message"), (3, "blank_text"), (3, "empty_message")]
    assert [m.role.value for m in fixed] == ["system", "user"]
    assert check(fixed, "anthropic") == []
