"""``max_calls`` in every dialect, with Forge's meaning (issue 22, section 1b): at most ``n``
calls (good or bad) are read; the first call past them and all the text after it are one
``too_many_calls`` issue holding it raw. Whole and streamed agree (every 1-3 character chunking).
"""

from __future__ import annotations

import re

import pytest

from agentmsg import dialects
from test_dialects import ID, case, chunkings_test, run_case

H = '<tool_call>{{"name": "{}", "arguments": {{}}}}</tool_call>'
Q = "<tool_call>\n<function={}>\n</function>\n</tool_call>"
G = "<tool_call>{}\n</tool_call>"
K = "<|tool_call_begin|>functions.{}:0<|tool_call_argument_begin|>{{}}<|tool_call_end|>"
D = "<｜tool▁call▁begin｜>{}<｜tool▁sep｜>{{}}<｜tool▁call▁end｜>"
CALLS = {
    "hermes": ("a " + H.format("f") + " b " + H.format("g") + " c <think>x</think>", H.format("g")),
    "qwen3_coder": ("a " + Q.format("f") + " b " + Q.format("g") + " c", Q.format("g")),
    "glm45": ("a " + G.format("f") + " b " + G.format("g") + " c", G.format("g")),
    "gpt_oss": ("<|channel|>commentary to=functions.f<|message|>{}<|call|>"
                "<|channel|>commentary to=functions.g<|message|>{}<|call|><|channel|>final<|message|>c",
                "<|channel|>commentary to=functions.g"),
    "mistral": ("a [TOOL_CALLS]f[ARGS]{} b [TOOL_CALLS]g[ARGS]{} c", "[TOOL_CALLS]g"),
    "llama3_json": ('{"name": "f", "parameters": {}}; {"name": "g", "parameters": {}} c', '{"name": "g"'),
    "pythonic": ("a\n[f(), g()] c", "g("),
    "deepseek_v31": ("a <｜tool▁calls▁begin｜>" + D.format("f") + D.format("g") + "<｜tool▁calls▁end｜> c", D.format("g")),
    "kimi_k2": ("a <|tool_calls_section_begin|>" + K.format("f") + K.format("g") + "<|tool_calls_section_end|> c",
                K.format("g")),
}


def limited(dialect):
    text, second = CALLS[dialect]
    return text, text.index(second)


@pytest.mark.parametrize("dialect", list(CALLS))
def test_calls_past_max_calls_are_one_issue_with_the_raw_rest(dialect):
    text, rest_at = limited(dialect)
    full = dialects.parse(text, dialect=dialect)
    assert [c.name for c in full.tool_calls] == ["f", "g"]
    one = dialects.parse(text, dialect=dialect, max_calls=1)
    assert [c.name for c in one.tool_calls] == ["f"]
    assert [e.kind for e in one.errors] == ["too_many_calls"]
    issue = one.errors[0]
    assert text[issue.span[0]:issue.span[1]] == issue.raw
    # The rest starts where the second call's own text starts (its opener may come before).
    assert issue.span[1] == len(text) and issue.span[0] <= rest_at
    assert issue.message == "more than 1 tool calls (max_calls): this call and the rest of the text are not parsed"
    assert dialects.parse(text, dialect=dialect, max_calls=2) == full
    zero = dialects.parse(text, dialect=dialect, max_calls=0)
    assert (zero.tool_calls, [e.kind for e in zero.errors]) == ([], ["too_many_calls"])


def _cases():
    out = []
    for dialect in CALLS:
        text, _ = limited(dialect)
        whole = dialects.parse(text, dialect=dialect, max_calls=1)
        out.append((dialect, case(f"{dialect}-max-calls-1", text, out=whole.text, thinking=whole.thinking,
                                  calls=[(c.name, c.input) for c in whole.tool_calls],
                                  errors=["too_many_calls"], max_calls=1)))
    return out


CASES = _cases()


@pytest.mark.parametrize("dialect, text, expected, options",
                         [pytest.param(d, *c.values, id=c.id) for d, c in CASES])
def test_max_calls_streams_as_whole(dialect, text, expected, options):
    ids = re.compile(r"functions\.\w+:\d+") if dialect == "kimi_k2" else ID
    run_case(dialect, text, expected, options, ids=ids)


test_random_chunkings_with_max_calls = chunkings_test([(d, [c]) for d, c in CASES], 150)
