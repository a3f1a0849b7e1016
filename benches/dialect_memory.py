"""Peak memory per input byte of each dialect on a reply of tiny calls, with and without
``max_calls`` (issue 22): how much a hostile or runaway reply can make a parser hold.

    PYTHONPATH=$PWD/python python benches/dialect_memory.py [MEGABYTES]

Each dialect runs in its own process: the figure is (peak RSS after ``dialects.parse`` - RSS
with the reply built) / reply bytes, so it counts the core's work and the Python result
(one ``ToolUseBlock`` per call). Run on a release build; the README and docs/dialects.md quote it.
"""

from __future__ import annotations

import resource
import subprocess
import sys

TINY = {
    "forge": '<tool>{"tool_name": "f", "arguments": {}}</tool>',
    "hermes": '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
    "qwen3_coder": "<tool_call><function=f></function></tool_call>",
    "glm45": "<tool_call>f</tool_call>",
    "gpt_oss": "<|channel|>commentary to=functions.f<|message|>{}<|call|>",
    "mistral": "[TOOL_CALLS]f[ARGS]{}",
    "llama3_json": '{"name": "f", "parameters": {}}; ',
    "pythonic": "[" + "f(), " * 1 + "f()]\n",
    "deepseek_v31": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "kimi_k2": ("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}"
                "<|tool_call_end|><|tool_calls_section_end|>"),
    "step3": ("<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\">"
              "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>"),
    "command_r": '\nAction: [{"tool_name": "f", "parameters": {}}]',
    "seed_oss": "<seed:tool_call><function=f></function></seed:tool_call>",
    "minimax_m2": '<minimax:tool_call><invoke name="f"></invoke></minimax:tool_call>',
    "magistral": "[TOOL_CALLS]f[ARGS]{}",
    "granite": '<|tool_call|>[{"name": "f", "arguments": {}}]',
    "lfm2": "<|tool_call_start|>[f()]<|tool_call_end|>",
    "phi4_mini": '<|tool_call|>[{"name": "f", "arguments": {}}]<|/tool_call|>',
    "xlam": '```json\n[{"name": "f", "arguments": {}}]\n```\n',
    "hunyuan": '<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>',
    "apertus": '<|tools_prefix|>[{"f": {}}]<|tools_suffix|>',
    "jamba": '<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>',
    "internlm2": '<|action_start|><|plugin|>{"name": "f", "parameters": {}}<|action_end|>',
    "longcat": '<longcat_tool_call>{"name": "f", "arguments": {}}</longcat_tool_call>',
    "hy3": "<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource></tool_call:opensource></tool_calls:opensource>",
    "kimi_k3": '<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
}


def reply(dialect: str, size: int) -> str:
    if dialect == "llama3_json":
        unit = TINY[dialect]
        return (unit * (size // len(unit)))[:-2]
    if dialect == "pythonic":
        return "[" + "f(), " * (size // 5) + "f()]"
    unit = TINY[dialect]
    return unit * (size // len(unit.encode()))


def measure(dialect: str, size: int, max_calls: int | None) -> float:
    from agentmsg import dialects

    text = reply(dialect, size)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    parsed = dialects.parse(text, dialect=dialect, max_calls=max_calls)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert parsed.tool_calls or parsed.errors
    return (peak - before) * 1024 / len(text.encode())


def main() -> None:
    size = int(float(sys.argv[1]) * 1_000_000) if len(sys.argv) > 1 else 4_000_000
    print(f"peak memory per input byte, {size / 1e6:g} MB of tiny calls")
    print(f"{'dialect':14} {'no limit':>9} {'max_calls=10':>13}")
    for dialect in TINY:
        figures = []
        for limit in ("None", "10"):
            code = f"import dialect_memory as m; print(m.measure({dialect!r}, {size}, {limit}))"
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                 cwd=__file__.rsplit("/", 1)[0])
            figures.append(float(out.stdout))
        print(f"{dialect:14} {figures[0]:9.0f} {figures[1]:13.1f}")


if __name__ == "__main__":
    main()
