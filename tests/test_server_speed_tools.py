"""agentmsg.Tools: tool definitions compiled once, accepted wherever ``tools=`` is, and the cache
that compiles a plain list given again only when its content changed (issue 25)."""

from __future__ import annotations

import copy
import pickle
import threading
from collections import UserDict
from typing import Any, Dict, List

import pytest

import agentmsg
from agentmsg import MessageError, MessageTypeError, Tools
from agentmsg.arrow import parse_arrow

CALL = "<tool_call><function=get_weather><parameter=days>3</parameter><parameter=city>Paris</parameter></function></tool_call>"


def definitions(days_type: str = "integer") -> List[Dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"days": {"type": days_type}, "city": {"type": "string"}}}}},
        {"name": "noop"},
    ]


def days(tools: Any) -> Any:
    return agentmsg.parse(CALL, dialect="qwen3_coder", tools=tools).tool_calls[0].input["days"]


def test_tools_types_values_as_the_definitions_do() -> None:
    tools = Tools(definitions())
    assert days(tools) == 3
    assert days(definitions()) == 3
    assert days(Tools(definitions("string"))) == "3"


def test_tools_is_accepted_by_every_parser() -> None:
    tools = Tools(definitions())
    expected = agentmsg.parse(CALL, dialect="qwen3_coder", tools=definitions())
    assert agentmsg.parse(CALL, dialect="qwen3_coder", tools=tools) == expected
    assert agentmsg.parse_many([CALL, CALL], dialect="qwen3_coder", tools=tools) == [expected, expected]
    assert agentmsg.parse_tool_calls(CALL, dialect="qwen3_coder", tools=tools) == expected.tool_calls
    parser = agentmsg.StreamParser(dialect="qwen3_coder", tools=tools)
    for piece in (CALL[:40], CALL[40:]):
        parser.feed(piece)
    parser.finish()
    assert parser.result() == expected
    pa = pytest.importorskip("pyarrow")
    row = parse_arrow(pa.array([CALL]), dialect="qwen3_coder", tools=tools).to_pylist()[0]
    assert row["tool_calls"] == [{"name": "get_weather", "arguments": '{"days":3,"city":"Paris"}'}]


def test_unknown_tools_are_flagged_with_a_tools_object() -> None:
    call = agentmsg.parse('<tool_call>{"name": "other", "arguments": {}}</tool_call>', dialect="hermes",
                          tools=Tools(definitions())).tool_calls[0]
    assert call.metadata == {"unknown_tool": True}


def test_tools_value_semantics() -> None:
    tools = Tools(definitions())
    assert repr(tools) == "Tools(['get_weather', 'noop'])"
    assert len(tools) == 2
    assert tools.names == ("get_weather", "noop")
    assert tools == Tools(definitions()) and hash(tools) == hash(Tools(definitions()))
    assert tools != Tools(definitions("string"))
    assert tools != definitions()
    assert Tools(tools) == tools
    assert {tools: 1}[Tools(definitions())] == 1
    assert pickle.loads(pickle.dumps(tools)) == tools
    assert copy.deepcopy(tools) == tools and copy.copy(tools) == tools
    assert tools.definitions == definitions()
    tools.definitions[0]["function"]["name"] = "changed"  # a new list each time
    assert tools.names[0] == "get_weather" and tools.definitions == definitions()
    with pytest.raises(AttributeError):
        tools.names = ()  # type: ignore[misc]


def test_tools_errors_are_those_of_the_option() -> None:
    with pytest.raises(MessageError, match=r"^invalid tools: tools\[1\] has no function name$"):
        Tools([{"name": "f"}, {}])
    with pytest.raises(MessageError, match=r"^invalid tools: tools\[1\] has no function name$"):
        agentmsg.parse("x", dialect="hermes", tools=[{"name": "f"}, {}])
    with pytest.raises(MessageTypeError, match="^tools must be a list of tool definitions, not int$"):
        Tools(5)  # type: ignore[arg-type]
    with pytest.raises(MessageTypeError, match="^tools must be a list of tool definitions, not str$"):
        Tools("[]")  # type: ignore[arg-type]


def test_a_list_changed_in_place_is_compiled_again() -> None:
    tools = definitions()
    assert days(tools) == 3
    assert days(tools) == 3  # the cached compile
    tools[0]["function"]["parameters"]["properties"]["days"]["type"] = "string"
    assert days(tools) == "3"
    tools[0]["function"]["parameters"]["properties"]["days"] = {"type": "integer"}
    assert days(tools) == 3
    tools[0]["function"]["name"] = "other"
    assert days(tools) == "3"  # the tool is unknown now: values stay text
    tools[0]["function"]["name"] = "get_weather"
    tools.append({"name": "more"})
    assert days(tools) == 3
    del tools[0]
    assert days(tools) == "3"


def test_values_the_cache_cannot_key_are_compiled_each_time() -> None:
    class Definition(UserDict):  # type: ignore[type-arg]
        pass

    class Text(str):
        pass

    mapping = Definition(name="f")
    assert Tools([mapping]).names == ("f",)
    mapping["name"] = "g"
    assert Tools([mapping]).names == ("g",)
    tools = definitions()
    tools[0]["function"]["name"] = Text("get_weather")
    assert days(tools) == 3
    tools[0]["function"]["parameters"]["properties"]["days"]["type"] = Text("string")
    assert days(tools) == "3"
    as_tuple = tuple(definitions())
    assert days(as_tuple) == 3 and Tools(as_tuple) == Tools(definitions())
    big = definitions()
    big[0]["function"]["x-limit"] = 2**80  # an int past 64 bits is no key
    assert days(big) == 3
    assert days([*definitions(), {"name": "float", "x-weight": 1.5, "x-flag": True, "x-none": None}]) == 3


def test_a_cyclic_list_is_refused() -> None:
    tools: List[Any] = [{"name": "f"}]
    tools[0]["self"] = tools
    with pytest.raises((MessageError, MessageTypeError)):
        Tools(tools)


def test_one_tools_object_is_shared_by_threads() -> None:
    tools = Tools(definitions())
    results: List[Any] = []

    def work() -> None:
        for _ in range(200):
            parser = agentmsg.StreamParser(dialect="qwen3_coder", tools=tools)
            parser.feed(CALL)
            parser.finish()
            results.append(parser.result().tool_calls[0].input["days"])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [3] * 800
