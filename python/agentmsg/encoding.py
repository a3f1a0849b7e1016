"""``agentmsg.encoding`` is now :mod:`agentmsg.counting.encoding` (its errors are in
:mod:`agentmsg.errors`); this path re-exports them for one release.

    >>> from agentmsg.encoding import get_encoding
    >>> get_encoding("o200k_base").encode("hi")
    [3686]
"""

from .counting.encoding import *  # noqa: F401,F403
from .counting.encoding import __all__ as _names
from .counting.encoding import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING  # noqa: F401
from .errors import DisallowedSpecialTokenError, TokenIdError, UnknownModelError  # noqa: F401

__all__ = [*_names, "DisallowedSpecialTokenError", "TokenIdError", "UnknownModelError"]
