"""Hypothesis strategies for arbitrary valid messages, shared by the property tests."""

from hypothesis import strategies as st

from agentmsg import (
    AudioBlock,
    Base64Source,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    URLSource,
    VideoBlock,
    DocumentBlock,
)

# Any text, including lone surrogates, NUL and control characters.
text = st.text(st.characters(codec=None), max_size=40)
nonempty_text = st.text(st.characters(codec=None), min_size=1, max_size=40)
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(
    allow_nan=False, allow_infinity=False
) | text
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(text, json_values, max_size=4)

sources = st.builds(
    URLSource, st.sampled_from(["https://", "http://", "file:///"]).flatmap(lambda p: text.map(lambda t: p + t))
) | st.builds(Base64Source, nonempty_text, text)
media = st.one_of(st.builds(ImageBlock, sources), st.builds(AudioBlock, sources), st.builds(VideoBlock, sources),
                  st.builds(DocumentBlock, sources, st.none() | text, json_objects))
text_blocks = st.builds(TextBlock, nonempty_text)
thinking_blocks = st.builds(ThinkingBlock, text, st.none() | text)
tool_uses = st.builds(ToolUseBlock, text, nonempty_text, json_objects, text, json_objects)
timestamps = st.datetimes(timezones=st.just(__import__("datetime").timezone.utc))

common = dict(
    name=st.none() | text,
    id=st.none() | text,
    timestamp=timestamps,
    metadata=json_objects,
)


def _message(role, content, **kw):
    return Message(role, content, **kw)


messages = st.one_of(
    st.builds(_message, st.just("system"), st.lists(text_blocks, min_size=1, max_size=3), **common),
    st.builds(_message, st.just("user"), st.lists(text_blocks | media, min_size=1, max_size=3).filter(
        lambda bs: any(isinstance(b, TextBlock) or not isinstance(b, TextBlock) for b in bs)), **common),
    st.builds(
        _message,
        st.just("assistant"),
        st.tuples(st.lists(thinking_blocks, max_size=1), st.lists(text_blocks, min_size=1, max_size=2),
                  st.lists(tool_uses, max_size=2)).map(lambda t: t[0] + t[1] + t[2]),
        finished=st.none() | st.booleans(),
        finish_reason=st.none() | text,
        reasoning_content=st.none() | text,
        **common,
    ),
    st.builds(
        lambda tid, out, err, **kw: Message.tool(out, tool_id=tid, is_error=err, **kw),
        nonempty_text,
        st.lists(text_blocks | media, max_size=2),
        st.booleans(),
        **common,
    ),
)
