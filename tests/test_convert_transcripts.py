"""The converters on real SWE-agent transcripts (tests/data): valid for every SDK, and back."""

import warnings

import pytest

import transcripts
from agentmsg import (
    from_anthropic,
    from_bedrock,
    from_openai,
    to_anthropic,
    to_bedrock,
    to_dashscope,
    to_forge,
    to_openai,
)
from convert_checks import check_anthropic, check_bedrock, check_openai

@pytest.fixture(scope="module", params=[p.name for p in transcripts.trajectory_files()])
def history(request):
    return transcripts.load_history(transcripts.TRAJECTORY_DIR / request.param)


def test_openai_round_trip_is_exact_on_real_histories(history, recwarn):
    out = to_openai(history)
    check_openai(out)
    back = from_openai(out)
    assert [(m.role, m.content, m.tool_id, m.name) for m in back] == [
        (m.role, m.content, m.tool_id, m.name) for m in history]
    assert not recwarn.list  # nothing in these histories is lost


def test_anthropic_and_bedrock_accept_real_histories(history):
    system, turns = to_anthropic(history, cache=["system", "last"])
    check_anthropic(system, turns)
    assert sum(1 for m in from_anthropic(system, turns) if m.role.value == "tool") == sum(
        1 for m in history if m.role.value == "tool")
    system, turns = to_bedrock(history, cache=["system", "last"])
    check_bedrock(system, turns)
    assert [m.text for m in from_bedrock(system, turns) if m.role.value == "tool"] == [
        m.text for m in history if m.role.value == "tool"]


def test_dashscope_and_forge_render_every_real_message(history):
    assert len(to_dashscope(history)) == len(history)
    # Some real assistant turns have whole lines in [brackets]; to_forge writes them as is and
    # says that they will parse as thinking.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        forge = to_forge(history)
    assert len(forge) == len(history)
    assert [f["content"] for f, m in zip(forge, history) if m.role.value == "user"] == [
        m.text for m in history if m.role.value == "user"]
    assert all("parses differently when read back" in str(w.message) for w in caught)
