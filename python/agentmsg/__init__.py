"""agentmsg: the message work of LLM agents, with a Rust core."""
from .errors import *  # noqa: F401,F403
from .blocks import *  # noqa: F401,F403
from .parsing import *  # noqa: F401,F403
from .tokens import *  # noqa: F401,F403
from .memory import *  # noqa: F401,F403
from .toolpairs import *  # noqa: F401,F403
from .compaction import *  # noqa: F401,F403
from .convert import *  # noqa: F401,F403
