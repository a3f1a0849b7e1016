"""A user's script that tests/test_typing.py type-checks with ``mypy --strict`` (never run).

agentmsg's converters feed the SDKs' own request methods with no cast, and the string options
accept exactly their values: each ``type: ignore[...]`` below marks a call mypy must reject (an
ignore that is not needed is itself an error under ``--strict``).
"""

from anthropic import Anthropic
from openai import OpenAI

import agentmsg
from agentmsg import Message, ToolUseBlock, from_openai, parse, to_anthropic, to_openai
from agentmsg.options import OrphanPolicy, ParseOptions

history = [
    agentmsg.system("You are a helpful math tutor"),
    agentmsg.user("What is 15 + 27?"),
    Message.assistant(tool_calls=[ToolUseBlock("call_1", "calculator", {"a": 15, "b": 27})]),
    agentmsg.tool("42", tool_id="call_1"),
]

completion = OpenAI().chat.completions.create(model="gpt-4o", messages=to_openai(history))
reply = from_openai([completion.choices[0].message.model_dump()])

system, messages = to_anthropic(history)
response = Anthropic().messages.create(
    model="claude-sonnet-4-5", max_tokens=1024, system=system, messages=messages
)

policy: OrphanPolicy = "repair"
from_openai(to_openai(history), on_orphan=policy)
from_openai(to_openai(history), on_orphan="drop")  # type: ignore[arg-type]
parse("<think>hmm</think>Hi", thinking="tags", dialect="forge")
parse("Hi", thinking="xml")  # type: ignore[arg-type]
parse("Hi", dialect="hermes")
parse("Hi", dialect="llama")  # type: ignore[arg-type]
hermes: ParseOptions = {"dialect": "hermes", "tools": None}
parse("Hi", **hermes)
parse("Hi", thinkng="tags")  # type: ignore[call-arg]
