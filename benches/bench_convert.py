"""Converting a 10,000-message real transcript to OpenAI and Anthropic format and back, and the
memory of a million messages.

Side by side per group: agentmsg, the plain pure-Python baseline (benches/baseline_convert.py)
and the peers: LangChain (``convert_to_openai_messages`` on LangChain messages built from the
same transcript before timing; ``convert_to_messages`` for the way back) and LiteLLM
(``anthropic_messages_pt`` on the same OpenAI dicts; install the ``bench`` extra).

    PYTHONPATH=$PWD/python python -m pytest benches/bench_convert.py --benchmark-only \
        --benchmark-columns=median,ops

``python benches/bench_convert.py [runs]`` prints the peer ratios as the median of the medians
of ``runs`` runs (3 by default), each run alternating ours and the peer's, timed in process CPU
time so other work on the machine weighs less, and the memory ratio.
"""

import gc
import json
import os
import statistics
import sys
import time
import tracemalloc

import pytest

import agentmsg
import baseline_convert as baseline
from transcripts import build_transcript

N = 10_000
MEMORY_N = 1_000_000
# LiteLLM fetches a price map over the network at import unless told to use its own copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def litellm_to_anthropic():
    """LiteLLM's OpenAI-to-Anthropic message conversion (skips the bench without LiteLLM)."""
    factory = pytest.importorskip("litellm.litellm_core_utils.prompt_templates.factory")
    return lambda dicts: factory.anthropic_messages_pt(dicts, "claude-sonnet-4-5", "anthropic")


@pytest.fixture(scope="module")
def transcript():
    return build_transcript(N)


@pytest.fixture(scope="module")
def openai_dicts(transcript):
    return agentmsg.to_openai(transcript)


@pytest.fixture(scope="module")
def anthropic_request(transcript):
    return agentmsg.to_anthropic(transcript)


@pytest.fixture(scope="module")
def anthropic_count(anthropic_request):
    return len(agentmsg.from_anthropic(*anthropic_request))  # same-role turns were merged


@pytest.fixture(scope="module")
def langchain_messages(transcript):
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out = []
    for m in transcript:
        role = m.role.value
        if role == "system":
            out.append(SystemMessage(m.text))
        elif role == "user":
            out.append(HumanMessage(m.text))
        elif role == "tool":
            out.append(ToolMessage(m.text, tool_call_id=m.tool_id))
        else:
            calls = [{"name": c.name, "args": c.input, "id": c.id, "type": "tool_call"} for c in m.tool_calls]
            out.append(AIMessage(m.text, tool_calls=calls))
    return out


def _same_openai(ours, theirs):
    # the peers produce the same conversation (modulo optional keys), so the timings compare like with like
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a["role"] == b["role"] and (a.get("content") or "") == (b.get("content") or "")
        if "tool_calls" in a:
            assert [json.loads(c["function"]["arguments"]) for c in a["tool_calls"]] == [
                json.loads(c["function"]["arguments"]) for c in b["tool_calls"]]


# -- to OpenAI -----------------------------------------------------------------------------------

def test_to_openai_agentmsg(benchmark, transcript):
    benchmark.group = "to_openai 10k"
    out = benchmark(agentmsg.to_openai, transcript)
    assert len(out) == N


def test_to_openai_baseline(benchmark, transcript, openai_dicts):
    benchmark.group = "to_openai 10k"
    _same_openai(openai_dicts, benchmark(baseline.to_openai_plain, transcript))


def test_to_openai_langchain(benchmark, langchain_messages, openai_dicts):
    from langchain_core.messages.utils import convert_to_openai_messages

    benchmark.group = "to_openai 10k"
    _same_openai(openai_dicts, benchmark(convert_to_openai_messages, langchain_messages))


# -- from OpenAI ---------------------------------------------------------------------------------

def test_from_openai_agentmsg(benchmark, openai_dicts):
    benchmark.group = "from_openai 10k"
    assert len(benchmark(agentmsg.from_openai, openai_dicts)) == N


def test_from_openai_baseline(benchmark, openai_dicts):
    benchmark.group = "from_openai 10k"
    assert len(benchmark(baseline.from_openai_plain, openai_dicts)) == N


def test_from_openai_langchain(benchmark, openai_dicts):
    from langchain_core.messages.utils import convert_to_messages

    benchmark.group = "from_openai 10k"
    assert len(benchmark(convert_to_messages, openai_dicts)) == N


# -- Anthropic -----------------------------------------------------------------------------------

def test_to_anthropic_agentmsg(benchmark, transcript):
    benchmark.group = "to_anthropic 10k"
    system, turns = benchmark(agentmsg.to_anthropic, transcript)
    assert system and turns


def test_to_anthropic_baseline(benchmark, transcript, anthropic_request):
    benchmark.group = "to_anthropic 10k"
    system, turns = benchmark(baseline.to_anthropic_plain, transcript)
    assert len(turns) == len(anthropic_request[1])


def test_from_anthropic_agentmsg(benchmark, anthropic_request, anthropic_count):
    benchmark.group = "from_anthropic 10k"
    assert len(benchmark(agentmsg.from_anthropic, *anthropic_request)) == anthropic_count


def test_from_anthropic_baseline(benchmark, anthropic_request, anthropic_count):
    benchmark.group = "from_anthropic 10k"
    system, turns = anthropic_request
    plain = ([{"type": "text", "text": b["text"]} for b in system],
             [{"role": t["role"], "content": [dict(b, content=b["content"][0]["text"] if b.get("content") else "")
                                              if b["type"] == "tool_result" else b for b in t["content"]]}
              for t in turns])
    assert len(benchmark(baseline.from_anthropic_plain, *plain)) == anthropic_count


# -- OpenAI dicts to Anthropic ---------------------------------------------------------------------

def test_openai_to_anthropic_agentmsg(benchmark, openai_dicts, anthropic_request):
    benchmark.group = "openai dicts to anthropic 10k"
    assert benchmark(agentmsg.openai_to_anthropic, openai_dicts) == anthropic_request


def test_openai_to_anthropic_two_steps(benchmark, openai_dicts, anthropic_request):
    benchmark.group = "openai dicts to anthropic 10k"
    convert = lambda dicts: agentmsg.to_anthropic(agentmsg.from_openai(dicts))  # noqa: E731
    assert benchmark(convert, openai_dicts) == anthropic_request


def test_openai_to_anthropic_litellm(benchmark, openai_dicts, anthropic_request):
    benchmark.group = "openai dicts to anthropic 10k"
    turns = benchmark(litellm_to_anthropic(), openai_dicts)
    # LiteLLM leaves the system message in the list, for its caller to take out
    assert len([t for t in turns if t["role"] != "system"]) == len(anthropic_request[1])


# -- memory --------------------------------------------------------------------------------------

def _plain_copy(value):
    """A fresh copy of dicts and lists that shares the strings (as Messages built from them do)."""
    if type(value) is dict:
        return {key: _plain_copy(item) for key, item in value.items()}
    if type(value) is list:
        return [_plain_copy(item) for item in value]
    return value


def memory_per_message(count=MEMORY_N):
    """Bytes per message of ``count`` Messages read from the transcript's OpenAI dicts, and of
    the same dicts copied: (messages, dicts). Text strings are shared in both, so the figures are
    what each representation adds to the text."""
    dicts = agentmsg.to_openai(build_transcript(N))
    source = (dicts * (count // len(dicts) + 1))[:count]

    def traced(make):
        gc.collect()
        tracemalloc.start()
        made = make()
        size = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del made
        return size / count

    plain = traced(lambda: [_plain_copy(d) for d in source])
    messages = traced(lambda: agentmsg.from_openai(source))
    return messages, plain


def test_memory_of_a_million_messages_against_dicts(benchmark):
    benchmark.group = "memory of 1M messages"
    messages, plain = benchmark.pedantic(memory_per_message, rounds=1, iterations=1)
    benchmark.extra_info.update(message_bytes=round(messages), dict_bytes=round(plain),
                                ratio=round(messages / plain, 2))
    assert messages <= 1.5 * plain


# -- the ratio table -----------------------------------------------------------------------------

def _ratio_table(runs):
    from langchain_core.messages.utils import convert_to_messages, convert_to_openai_messages

    transcript = build_transcript(N)
    dicts = agentmsg.to_openai(transcript)
    langchain = convert_to_messages(dicts)
    litellm = litellm_to_anthropic()
    pairs = {
        "from_openai vs LangChain convert_to_messages": (
            lambda: agentmsg.from_openai(dicts), lambda: convert_to_messages(dicts)),
        "to_openai vs LangChain convert_to_openai_messages": (
            lambda: agentmsg.to_openai(transcript), lambda: convert_to_openai_messages(langchain)),
        "openai_to_anthropic vs LiteLLM anthropic_messages_pt": (
            lambda: agentmsg.openai_to_anthropic(dicts), lambda: litellm(dicts)),
        "to_anthropic(from_openai) vs LiteLLM anthropic_messages_pt": (
            lambda: agentmsg.to_anthropic(agentmsg.from_openai(dicts)), lambda: litellm(dicts)),
    }
    for name, (ours, peer) in pairs.items():
        ours_medians, peer_medians = [], []
        for _ in range(runs):
            mine, theirs = [], []
            for _ in range(7):
                start = time.process_time()
                ours()
                mine.append(time.process_time() - start)
                start = time.process_time()
                peer()
                theirs.append(time.process_time() - start)
            ours_medians.append(statistics.median(mine))
            peer_medians.append(statistics.median(theirs))
        ours_ms, peer_ms = statistics.median(ours_medians) * 1e3, statistics.median(peer_medians) * 1e3
        print(f"{name}: ours {ours_ms:.1f} ms, peer {peer_ms:.1f} ms, peer/ours {peer_ms / ours_ms:.2f}x")
    messages, plain = memory_per_message()
    print(f"1,000,000 Messages: {messages:.0f} B each, as dicts {plain:.0f} B, ratio {messages / plain:.2f}")


if __name__ == "__main__":
    _ratio_table(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
