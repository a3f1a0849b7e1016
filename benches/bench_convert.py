"""Converting a 10,000-message real transcript to OpenAI and Anthropic format and back.

Side by side per group: agentmsg, the plain pure-Python baseline (benches/baseline_convert.py)
and, for OpenAI, LangChain (``convert_to_openai_messages`` on LangChain messages built from the
same transcript before timing; ``convert_to_messages`` for the way back).

    PYTHONPATH=$PWD/python python -m pytest benches/bench_convert.py --benchmark-only \
        --benchmark-columns=median,ops
"""

import json

import pytest

import agentmsg
import baseline_convert as baseline
from transcripts import build_transcript

N = 10_000


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
