"""agentmsg: the message work of LLM agents, with a Rust core.

The whole public API is importable from here::

    >>> import agentmsg
    >>> agentmsg.user("Hi").text
    'Hi'
"""

from .errors import *  # noqa: F401,F403
from .blocks import *  # noqa: F401,F403
from .message import *  # noqa: F401,F403
from .estimate import *  # noqa: F401,F403
from .conversation import *  # noqa: F401,F403
from .parsing import *  # noqa: F401,F403
from .tokens import *  # noqa: F401,F403
from .encoding import *  # noqa: F401,F403
from .memory import *  # noqa: F401,F403
from .toolpairs import *  # noqa: F401,F403
from .compaction import *  # noqa: F401,F403
from .convert import *  # noqa: F401,F403
from .transcripts import *  # noqa: F401,F403
from .workbench import *  # noqa: F401,F403
from .dialects import DIALECTS, Dialect, ToolCallHeader, openai_deltas  # noqa: F401
from .pool import *  # noqa: F401,F403
from . import (
    blocks as _blocks,
    compaction as _compaction,
    conversation as _conversation,
    convert as _convert,
    errors as _errors,
    estimate as _estimate,
    memory as _memory,
    message as _message,
    parsing as _parsing,
    pool as _pool,
    tokens as _tokens,
    encoding as _encoding,
    toolpairs as _toolpairs,
    transcripts as _transcripts,
    workbench as _workbench,
)

__version__ = "0.1.0"

__all__ = [
    name
    for module in (
        _errors, _blocks, _message, _estimate, _conversation, _parsing, _tokens, _encoding, _memory,
        _toolpairs, _compaction, _convert, _pool, _transcripts, _workbench,
    )
    for name in module.__all__
] + ["DIALECTS", "Dialect", "ToolCallHeader", "openai_deltas"]
