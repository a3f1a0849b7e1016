"""Hypothesis strategies for the converter tests: messages with realistic media (valid base64,
real media types) and signed or unsigned thinking. Builds on tests/strategies.py."""

import base64

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
from strategies import json_objects, nonempty_text, text, timestamps

names = st.none() | nonempty_text
MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "audio/wav",
               "audio/mpeg", "audio/ogg", "video/mp4", "video/webm"]
b64 = st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode("ascii"))
url_sources = st.builds(URLSource, st.sampled_from(["https://", "http://", "file:///"]).flatmap(
    lambda p: text.map(lambda t: p + t)))
base64_sources = st.builds(Base64Source, st.sampled_from(MEDIA_TYPES), b64)
sources = url_sources | base64_sources
media = st.one_of(st.builds(ImageBlock, sources), st.builds(AudioBlock, sources),
                  st.builds(VideoBlock, sources), st.builds(DocumentBlock, sources, names))
text_blocks = st.builds(TextBlock, nonempty_text)
thinking_blocks = st.builds(ThinkingBlock, text, st.none() | nonempty_text)
tool_names = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
tool_uses = st.builds(ToolUseBlock, nonempty_text, tool_names, json_objects)
tool_uses_any = st.builds(ToolUseBlock, nonempty_text, tool_names, json_objects,
                          st.just("local") | nonempty_text, json_objects)
common = dict(name=names, id=st.none() | text, timestamp=timestamps, metadata=json_objects)

system_messages = st.builds(Message, st.just("system"), st.lists(text_blocks, min_size=1, max_size=3), **common)
user_messages = st.builds(Message, st.just("user"), st.lists(text_blocks | media, min_size=1, max_size=3),
                          **common)
assistant_messages = st.builds(
    Message,
    st.just("assistant"),
    st.tuples(st.lists(thinking_blocks, max_size=2), st.lists(text_blocks, max_size=2),
              st.lists(tool_uses, max_size=2)).filter(lambda t: t[1] or t[2]).map(lambda t: t[0] + t[1] + t[2]),
    finished=st.none() | st.booleans(),
    finish_reason=st.none() | text,
    reasoning_content=st.none() | text,
    **common,
)
tool_messages = st.builds(
    lambda tid, out, err, **kw: Message.tool(out, tool_id=tid, is_error=err, **kw),
    nonempty_text,
    st.lists(text_blocks | media, max_size=2),
    st.booleans(),
    **common,
)
messages = st.one_of(system_messages, user_messages, assistant_messages, tool_messages)
histories = st.lists(messages, max_size=6)
