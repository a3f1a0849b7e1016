"""Token counting: exact counts with OpenAI's encodings (:mod:`agentmsg.counting.tokens`,
:mod:`agentmsg.counting.encoding`), Forge's estimate, and one counter interface with one
per-message cache (:mod:`agentmsg.counting.counter`), whose names are re-exported here.

    >>> from agentmsg.counting import TokenCounter
    >>> TokenCounter("estimate").count(agentmsg.user("Hello"))
    5
"""

from .counter import CountCache, Counter, MessageCounter, TokenCounter, token_counter

__all__ = ["Counter", "TokenCounter", "CountCache", "MessageCounter", "token_counter"]
