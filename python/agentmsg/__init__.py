"""agentmsg: the message work of LLM agents, with a Rust core.

The whole public API is importable from here::

    >>> import agentmsg
    >>> agentmsg.user("Hi").text
    'Hi'

``import agentmsg`` loads nothing but this file: a public name is imported from its module the
first time it is used (PEP 562), so the import costs no more than ``import tiktoken`` and a
program pays only for the parts it uses (``tests/test_import_time.py``).
"""

from typing import TYPE_CHECKING, Any, List

__version__ = "0.1.0"

# The modules whose public names (their ``__all__``) make the API, the cheap and common ones
# first: a name is looked up in them in this order, importing each only as far as needed.
_MODULES = (
    "errors", "blocks", "message", "normalize", "estimate", "conversation", "parsing", "tokens",
    "encoding", "toolpairs", "memory", "compaction", "convert", "streams", "dialects", "pool",
    "transcripts", "workbench",
)
# Of agentmsg.dialects only these are exported here (the rest is reached as agentmsg.dialects).
_DIALECT_NAMES = ("DIALECTS", "Dialect", "ToolCallHeader", "openai_deltas")

if TYPE_CHECKING:  # what type checkers see: the same names, imported eagerly
    from .errors import *  # noqa: F401,F403
    from .blocks import *  # noqa: F401,F403
    from .message import *  # noqa: F401,F403
    from .normalize import *  # noqa: F401,F403
    from .estimate import *  # noqa: F401,F403
    from .conversation import *  # noqa: F401,F403
    from .parsing import *  # noqa: F401,F403
    from .tokens import *  # noqa: F401,F403
    from .encoding import *  # noqa: F401,F403
    from .toolpairs import *  # noqa: F401,F403
    from .memory import *  # noqa: F401,F403
    from .compaction import *  # noqa: F401,F403
    from .convert import *  # noqa: F401,F403
    from .streams import *  # noqa: F401,F403
    from .dialects import DIALECTS, Dialect, ToolCallHeader, openai_deltas  # noqa: F401
    from .pool import *  # noqa: F401,F403
    from .transcripts import *  # noqa: F401,F403
    from .workbench import *  # noqa: F401,F403
else:
    import importlib

    _loaded: List[str] = []

    def _exported(module: Any, name: str) -> Any:
        return _DIALECT_NAMES if name == "dialects" else module.__all__

    def _load(name: str) -> List[str]:
        """Imports ``agentmsg.<name>`` and binds its public names here; returns them."""
        module = importlib.import_module(f"{__name__}.{name}")
        names = list(_exported(module, name))
        globals().update({public: getattr(module, public) for public in names})
        _loaded.append(name)
        return names

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            everything = [public for module in _MODULES for public in _load(module)]
            globals()["__all__"] = everything
            return everything
        if name.startswith("_"):  # dunder probes, and private submodules the import system finds
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        for module in _MODULES:
            if module not in _loaded and name in _load(module):
                return globals()[name]
        try:  # a submodule the imports bound (agentmsg.convert, agentmsg.dialects, ...)
            return globals()[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None

    def __dir__() -> List[str]:
        return sorted(set(globals()) | set(__getattr__("__all__")))
