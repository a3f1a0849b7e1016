"""``import agentmsg`` loads nothing heavy: each public name comes from its module on first use,
and the common API does not pull in asyncio (imported by the async counters when they run)."""

import json
import os
import subprocess
import sys

import pytest

import importlib

import agentmsg

# The agentmsg these tests imported, not whatever a subprocess would find first.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(agentmsg.__file__))
HEAVY = ("asyncio", "concurrent.futures", "statistics", "csv", "dataclasses", "json", "inspect")


def modules_after(code):
    """The modules a fresh interpreter holds after running ``code``."""
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT}
    script = code + "\nimport json as _json, sys as _sys; print(_json.dumps(sorted(_sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_import_agentmsg_loads_only_the_package_file():
    baseline = modules_after("")
    loaded = modules_after("import agentmsg") - baseline
    assert loaded == {"agentmsg"}
    assert not {name for name in HEAVY if name in loaded}


def test_the_common_api_does_not_load_asyncio_or_the_workbench():
    loaded = modules_after(
        "from agentmsg import Message, trim, ConversationMemory, count_message_tokens, count_tokens, parse, "
        "StreamParser, to_openai, to_anthropic, from_openai, as_messages, from_openai_stream, check_tool_pairs"
    )
    assert "asyncio" not in loaded
    assert not {"agentmsg.workbench", "agentmsg.workbench.transcripts", "statistics", "csv"} & loaded


def test_names_load_on_first_use_and_are_those_of_the_modules():
    loaded = modules_after("import agentmsg; agentmsg.user('hi')")
    assert {"agentmsg.model.message", "agentmsg.model.blocks"} <= loaded
    assert "agentmsg.convert" not in loaded
    modules = [importlib.import_module(f"agentmsg.{name}") for name in agentmsg._MODULES]
    by_module = [(module, agentmsg._EXPORTED.get(name, module.__all__)) for name, module in zip(agentmsg._MODULES, modules)]
    exported = [name for _, names in by_module for name in names]
    assert sorted(agentmsg.__all__) == sorted(exported) and len(set(exported)) == len(exported)
    assert all(getattr(agentmsg, name) is getattr(module, name) for module, names in by_module for name in names)
    namespace = {}
    exec("from agentmsg import *", namespace)
    assert set(agentmsg.__all__) <= set(namespace) and set(agentmsg.__all__) <= set(dir(agentmsg))


def test_unknown_names_are_attribute_errors_and_submodules_stay_reachable():
    with pytest.raises(AttributeError, match="module 'agentmsg' has no attribute 'no_such_name'"):
        agentmsg.no_such_name
    assert not hasattr(agentmsg, "_no_such_private_name")
    assert agentmsg.convert.openai.to_openai is agentmsg.to_openai
    assert "agentmsg.convert.openai" in modules_after("import agentmsg; agentmsg.convert.openai")


def test_the_async_counters_import_asyncio_when_they_run():
    loaded = modules_after("import asyncio, agentmsg; print(asyncio.run(agentmsg.acount_tokens('x' * 5000)))")
    assert "asyncio" in loaded
