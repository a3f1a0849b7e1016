"""Content blocks: the typed pieces a message is made of (AgentScope's ContentBlock family).

Every block is a frozen dataclass with a ``type`` tag used in serialization::

    >>> from agentmsg import TextBlock, block_to_dict
    >>> block_to_dict(TextBlock("hi"))
    {'type': 'text', 'text': 'hi'}
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Dict, List, Mapping, Optional, Tuple, Union, final

from .._checks import check_calls, describe, json_copy, json_copy_dict, require_bool, type_name, where_label
from ..errors import MessageError, MessageTypeError

__all__ = [
    "URLSource",
    "Base64Source",
    "Source",
    "TextBlock",
    "ImageBlock",
    "AudioBlock",
    "VideoBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "ToolResultBlock",
    "Block",
    "block_to_dict",
    "block_from_dict",
    "ServerToolUseBlock",
    "ServerToolResultBlock",
    "DocumentBlock",
]

_URL_SCHEMES = ("http://", "https://", "file://")


def _require_str(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise MessageTypeError(f"{what} must be a str, not {type_name(value)}")


@final  # final, so `type(source) is URLSource` narrows a Source for type checkers
@dataclass(frozen=True, slots=True)
class URLSource:
    """Media found at a URL: ``http(s)://`` for the web, ``file://`` for a local file.

    >>> URLSource("https://example.com/photo.jpg").url
    'https://example.com/photo.jpg'
    """

    url: str
    type: ClassVar[str] = "url"

    def __post_init__(self) -> None:
        _require_str(self.url, "URLSource.url")
        # str.lower on a slice: a str subclass's own lower() must not decide.
        if not str.lower(self.url[:8]).startswith(_URL_SCHEMES):
            raise MessageError(
                f"URLSource.url must start with http://, https:// or file://, got {self.url[:40]!r}"
            )


@final
@dataclass(frozen=True, slots=True)
class Base64Source:
    """Media carried inline as base64 text with its media type.

    >>> Base64Source("image/png", "iVBORw0KGgo=").media_type
    'image/png'
    """

    media_type: str
    data: str
    type: ClassVar[str] = "base64"

    def __post_init__(self) -> None:
        _require_str(self.media_type, "Base64Source.media_type")
        _require_str(self.data, "Base64Source.data")
        if not self.media_type:
            raise MessageError("Base64Source.media_type is empty")


Source = Union[URLSource, Base64Source]


def _require_source(value: object, what: str) -> None:
    if not isinstance(value, (URLSource, Base64Source)):
        raise MessageTypeError(f"{what} must be a URLSource or Base64Source, not {type_name(value)}")


@dataclass(frozen=True, slots=True, init=False)
class TextBlock:
    """Plain text.

    >>> TextBlock("Hello").text
    'Hello'
    """

    text: str
    type: ClassVar[str] = "text"

    def __init__(self, text: str) -> None:
        # Written by hand: the block of every message, built without dataclasses' frozen setattr.
        if text.__class__ is not str:
            _require_str(text, "TextBlock.text")
        _set_text(self, text)


_set_text = vars(TextBlock)["text"].__set__


@dataclass(frozen=True, slots=True)
class _MediaBlock:
    """What an image, an audio clip and a video share: their source, a URL or base64 data."""

    source: Source

    def __post_init__(self) -> None:
        _require_source(self.source, f"{type(self).__name__}.source")


@dataclass(frozen=True, slots=True)
class ImageBlock(_MediaBlock):
    """An image, from a URL or base64 data.

    >>> ImageBlock(URLSource("https://example.com/a.png")).source.url
    'https://example.com/a.png'
    """

    type: ClassVar[str] = "image"


@dataclass(frozen=True, slots=True)
class AudioBlock(_MediaBlock):
    """An audio clip, from a URL or base64 data.

    >>> AudioBlock(Base64Source("audio/wav", "UklGRg==")).source.media_type
    'audio/wav'
    """

    type: ClassVar[str] = "audio"


@dataclass(frozen=True, slots=True)
class VideoBlock(_MediaBlock):
    """A video, from a URL or base64 data.

    >>> VideoBlock(URLSource("file:///tmp/clip.mp4")).type
    'video'
    """

    type: ClassVar[str] = "video"


@dataclass(frozen=True, slots=True)
class DocumentBlock(_MediaBlock):
    """A document (a PDF, a plain-text file...) from a URL or base64 data, its media type in the
    source. ``name`` is its file name or title, if it has one; ``metadata`` keeps the provider's
    other fields (Anthropic's ``context`` and ``citations``) as read, JSON values, copied.

    >>> doc = DocumentBlock(Base64Source("application/pdf", "JVBERi0xLjQ="), name="report.pdf")
    >>> doc.type, doc.source.media_type, doc.name
    ('document', 'application/pdf', 'report.pdf')
    """

    name: Optional[str] = None
    metadata: Dict[str, Any] = field(default_factory=dict)
    type: ClassVar[str] = "document"

    def __post_init__(self) -> None:
        _require_source(self.source, "DocumentBlock.source")
        if self.name is not None:
            _require_str(self.name, "DocumentBlock.name")
        object.__setattr__(self, "metadata", json_copy_dict(self.metadata, "DocumentBlock.metadata"))


#: The document media types the providers name by a file extension (Bedrock's ``format``, a
#: file name made up for a document that has none).
DOCUMENT_EXTENSIONS: Dict[str, str] = {
    "application/pdf": "pdf", "text/plain": "txt", "text/csv": "csv", "text/html": "html", "text/markdown": "md",
    "application/msword": "doc", "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
}


def document_text(block: DocumentBlock) -> Optional[str]:
    """The text a model reads of a document given as data: a ``text/*`` document's decoded text
    (bytes that are not UTF-8 replaced); None for a URL, or for data that is not text (a PDF).

    >>> document_text(DocumentBlock(Base64Source("text/plain", "aGk=")))
    'hi'
    """
    source = block.source
    if type(source) is not Base64Source or not source.media_type.startswith("text/"):
        return None
    try:
        return base64.b64decode(source.data).decode("utf-8", "replace")
    except ValueError:  # not base64: the data itself is what there is to read
        return source.data


def document_name(block: DocumentBlock) -> str:
    """The block's name, or ``document.<extension>`` for one that has none (providers that take a
    file's bytes want a file name)."""
    if block.name is not None:
        return block.name
    media_type = block.source.media_type if type(block.source) is Base64Source else ""
    return "document." + DOCUMENT_EXTENSIONS.get(media_type, "bin")


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """A reasoning trace; ``signature`` is the provider's integrity token (Anthropic), if any.

    >>> ThinkingBlock("Let me analyze this problem...").thinking
    'Let me analyze this problem...'
    """

    thinking: str
    signature: Optional[str] = None
    type: ClassVar[str] = "thinking"

    def __post_init__(self) -> None:
        _require_str(self.thinking, "ThinkingBlock.thinking")
        if self.signature is not None:
            _require_str(self.signature, "ThinkingBlock.signature")


_NO_METADATA: Dict[str, Any] = {}  # a default only: copied, never stored or changed


@dataclass(frozen=True, slots=True, init=False)
class ToolUseBlock:
    """A request to call a tool. ``metadata`` keeps anything else the call carried.

    ``input`` and ``metadata`` must be JSON values: dicts with str keys, lists (tuples become
    lists), str, int (at most 4,300 digits), finite float, bool, None, nested at most 200 deep
    (the parser's limit). Both are copied, so the caller's dicts stay theirs. Anything else
    (a set, bytes, an object, NaN, a dict that contains itself) is a ``MessageTypeError`` or
    ``MessageError`` naming the path, as in ``ToolUseBlock.input['a'][1]``.

    >>> ToolUseBlock("call_001", "get_weather", {"city": "Beijing"}).server_name
    'local'
    >>> ToolUseBlock("c1", "f", {"a": [1, {2}]})
    Traceback (most recent call last):
    ...
    agentmsg.errors.MessageTypeError: ToolUseBlock.input['a'][1] must be a JSON value (dict, list, str, int, float, bool or None), not set
    """

    id: str
    name: str
    input: Dict[str, Any]
    server_name: str = "local"
    metadata: Dict[str, Any] = field(default_factory=dict)
    type: ClassVar[str] = "tool_use"

    def __init__(self, id: str, name: str, input: Dict[str, Any], server_name: str = "local",
                 metadata: Dict[str, Any] = _NO_METADATA) -> None:
        # Written by hand: every call of every converter, built without dataclasses' frozen setattr.
        if id.__class__ is not str:
            _require_str(id, "ToolUseBlock.id")
        if name.__class__ is not str:
            _require_str(name, "ToolUseBlock.name")
        if server_name.__class__ is not str:
            _require_str(server_name, "ToolUseBlock.server_name")
        if not name:
            raise MessageError("ToolUseBlock.name is empty")
        _set_call_id(self, id)
        _set_call_name(self, name)
        _set_call_input(self, json_copy_dict(input, "ToolUseBlock.input"))
        _set_call_server(self, server_name)
        _set_call_metadata(self, json_copy_dict(metadata, "ToolUseBlock.metadata"))


_set_call_id = vars(ToolUseBlock)["id"].__set__
_set_call_name = vars(ToolUseBlock)["name"].__set__
_set_call_input = vars(ToolUseBlock)["input"].__set__
_set_call_server = vars(ToolUseBlock)["server_name"].__set__
_set_call_metadata = vars(ToolUseBlock)["metadata"].__set__


@dataclass(frozen=True, slots=True, init=False)
class ToolResultBlock:
    """The result of a tool call, linked to it by ``tool_use_id``.

    ``output`` is a tuple of blocks; a plain string becomes one :class:`TextBlock`. It holds
    text, media or thinking: a tool call or another tool result in it is a ``MessageError``.

    >>> ToolResultBlock("call_001", "Beijing: Sunny").output
    (TextBlock(text='Beijing: Sunny'),)
    """

    tool_use_id: str
    output: Tuple["Block", ...] = ()
    is_error: bool = False
    type: ClassVar[str] = "tool_result"

    def __init__(self, tool_use_id: str, output: Union[str, "Block", List["Block"], Tuple["Block", ...]] = (),
                 is_error: bool = False) -> None:
        # Written by hand: every tool message, built without dataclasses' frozen setattr.
        if tool_use_id.__class__ is not str:
            _require_str(tool_use_id, "ToolResultBlock.tool_use_id")
        require_bool(is_error, "ToolResultBlock.is_error")
        output = (TextBlock(output),) if output.__class__ is str else coerce_blocks(output, "ToolResultBlock.output")
        for index, block in enumerate(output):
            # A result inside a result would nest without bound (and recurse in every writer).
            if isinstance(block, (ToolResultBlock, ToolUseBlock, ServerToolUseBlock, ServerToolResultBlock)):
                raise MessageError(
                    f"ToolResultBlock.output[{index}]: a tool result holds text, media or thinking, "
                    f"not a {block.type} block"
                )
        _set_result_id(self, tool_use_id)
        _set_result_output(self, output)
        _set_result_error(self, is_error)

    @property
    def text(self) -> str:
        """The text blocks of the output, joined with newlines.

        >>> ToolResultBlock("c1", "42").text
        '42'
        """
        return "\n".join(b.text for b in self.output if isinstance(b, TextBlock))


_set_result_id = vars(ToolResultBlock)["tool_use_id"].__set__
_set_result_output = vars(ToolResultBlock)["output"].__set__
_set_result_error = vars(ToolResultBlock)["is_error"].__set__


@dataclass(frozen=True, slots=True)
class ServerToolUseBlock:
    """A tool call the provider runs itself: a built-in tool (web search, file search, code
    execution, computer use...) or an MCP server's tool, called by the provider's MCP connector.

    ``server_name`` is the MCP server's label (None for a built-in tool); ``provider`` names who
    ran it (``"anthropic"``, ``"openai"``; ``""`` when unknown): only that provider takes the call
    back, every other format leaves it out with a ``ConversionWarning``. ``metadata`` keeps the
    provider's other fields (item ids, statuses...) as read. ``input`` and ``metadata`` must be
    JSON values and are copied, as for :class:`ToolUseBlock`. It belongs in assistant messages,
    beside its :class:`ServerToolResultBlock`: the provider answered it in the same turn.

    >>> call = ServerToolUseBlock("srvtoolu_1", "web_search", {"query": "weather"}, provider="anthropic")
    >>> call.name, call.server_name
    ('web_search', None)
    """

    id: str
    name: str
    input: Dict[str, Any]
    server_name: Optional[str] = None
    provider: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)
    type: ClassVar[str] = "server_tool_use"

    def __post_init__(self) -> None:
        _require_str(self.id, "ServerToolUseBlock.id")
        _require_str(self.name, "ServerToolUseBlock.name")
        if not self.name:
            raise MessageError("ServerToolUseBlock.name is empty")
        if self.server_name is not None:
            _require_str(self.server_name, "ServerToolUseBlock.server_name")
        _require_str(self.provider, "ServerToolUseBlock.provider")
        object.__setattr__(self, "input", json_copy_dict(self.input, "ServerToolUseBlock.input"))
        object.__setattr__(self, "metadata", json_copy_dict(self.metadata, "ServerToolUseBlock.metadata"))


@dataclass(frozen=True, slots=True)
class ServerToolResultBlock:
    """What the provider's own tool returned, linked to its :class:`ServerToolUseBlock` by
    ``tool_use_id``: search results, code output, an MCP tool's content, a listed MCP server's
    tools... ``content`` is any JSON value, in the provider's shape; ``metadata`` keeps the
    provider's other fields (Anthropic's block ``type``, a Responses item's status...).

    >>> result = ServerToolResultBlock("srvtoolu_1", [{"type": "web_search_result", "url": "https://a.example"}],
    ...                                provider="anthropic", metadata={"type": "web_search_tool_result"})
    >>> result.tool_use_id, result.is_error
    ('srvtoolu_1', False)
    """

    tool_use_id: str
    content: Any = None
    is_error: bool = False
    provider: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)
    type: ClassVar[str] = "server_tool_result"

    def __post_init__(self) -> None:
        _require_str(self.tool_use_id, "ServerToolResultBlock.tool_use_id")
        require_bool(self.is_error, "ServerToolResultBlock.is_error")
        _require_str(self.provider, "ServerToolResultBlock.provider")
        object.__setattr__(self, "content", json_copy(self.content, "ServerToolResultBlock.content"))
        object.__setattr__(self, "metadata", json_copy_dict(self.metadata, "ServerToolResultBlock.metadata"))


SERVER_BLOCKS = (ServerToolUseBlock, ServerToolResultBlock)


Block = Union[
    TextBlock, ImageBlock, AudioBlock, VideoBlock, DocumentBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock,
    ServerToolUseBlock, ServerToolResultBlock,
]
_BLOCK_TYPES = (TextBlock, ImageBlock, AudioBlock, VideoBlock, DocumentBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock,
                ServerToolUseBlock, ServerToolResultBlock)
_BLOCK_CLASSES = frozenset(_BLOCK_TYPES)  # the exact classes, found by one hash lookup


def coerce_blocks(value: object, what: str) -> Tuple[Block, ...]:
    """A str becomes one TextBlock; a sequence of blocks becomes a tuple; anything else is a TypeError."""
    if isinstance(value, str):
        return (TextBlock(value),)
    if isinstance(value, _BLOCK_TYPES):
        return (value,)
    if not isinstance(value, (list, tuple)):
        raise MessageTypeError(f"{what} must be a str or a list of blocks, not {type_name(value)}")
    for index, block in enumerate(value):
        if block.__class__ not in _BLOCK_CLASSES and not isinstance(block, _BLOCK_TYPES):
            raise MessageTypeError(
                f"{what}[{index}] must be a content block, not {type_name(block)}"
            )
    return tuple(value)


def _source_to_dict(source: Source) -> Dict[str, Any]:
    if isinstance(source, URLSource):
        return {"type": "url", "url": source.url}
    return {"type": "base64", "media_type": source.media_type, "data": source.data}


def block_to_dict(block: Block) -> Dict[str, Any]:
    """Serializes one block to plain JSON-ready data with its ``type`` tag.

    >>> block_to_dict(ThinkingBlock("hmm"))
    {'type': 'thinking', 'thinking': 'hmm'}
    """
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, DocumentBlock):
        document: Dict[str, Any] = {"type": "document", "source": _source_to_dict(block.source)}
        if block.name is not None:
            document["name"] = block.name
        if block.metadata:
            document["metadata"] = json_copy(block.metadata, "DocumentBlock.metadata")
        return document
    if isinstance(block, (ImageBlock, AudioBlock, VideoBlock)):
        return {"type": block.type, "source": _source_to_dict(block.source)}
    if isinstance(block, ThinkingBlock):
        data: Dict[str, Any] = {"type": "thinking", "thinking": block.thinking}
        if block.signature is not None:
            data["signature"] = block.signature
        return data
    if isinstance(block, ToolUseBlock):
        # Copies: the output must not share a dict with the (immutable) block.
        data = {
            "type": "tool_use",
            "id": block.id,
            "name": block.name,
            "input": json_copy(block.input, "ToolUseBlock.input"),
            "server_name": block.server_name,
        }
        if block.metadata:
            data["metadata"] = json_copy(block.metadata, "ToolUseBlock.metadata")
        return data
    if isinstance(block, ToolResultBlock):
        return {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "output": [block_to_dict(b) for b in block.output],
            "is_error": block.is_error,
        }
    if isinstance(block, ServerToolUseBlock):
        data = {"type": "server_tool_use", "id": block.id, "name": block.name,
                "input": json_copy(block.input, "ServerToolUseBlock.input")}
        if block.server_name is not None:
            data["server_name"] = block.server_name
        if block.provider:
            data["provider"] = block.provider
        if block.metadata:
            data["metadata"] = json_copy(block.metadata, "ServerToolUseBlock.metadata")
        return data
    if isinstance(block, ServerToolResultBlock):
        data = {"type": "server_tool_result", "tool_use_id": block.tool_use_id,
                "content": json_copy(block.content, "ServerToolResultBlock.content"), "is_error": block.is_error}
        if block.provider:
            data["provider"] = block.provider
        if block.metadata:
            data["metadata"] = json_copy(block.metadata, "ServerToolResultBlock.metadata")
        return data
    raise MessageTypeError(f"block must be a content block, not {type_name(block)}")


def _field(data: Mapping[str, Any], key: str, where: str) -> Any:
    try:
        return data[key]
    except KeyError:
        raise MessageError(f"{where}: missing field {key!r}") from None


def _source_from_dict(data: object, where: str) -> Source:
    if not isinstance(data, Mapping):
        raise MessageTypeError(f"{where} must be an object, not {type_name(data)}")
    kind = data.get("type")
    if kind == "url":
        return URLSource(_field(data, "url", where))
    if kind == "base64":
        return Base64Source(_field(data, "media_type", where), _field(data, "data", where))
    raise MessageError(f"{where}: unknown source type {describe(kind)}; valid: 'url', 'base64'")


_MEDIA_BLOCKS: Dict[str, Callable[[Source], Block]] = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}


def block_from_dict(data: Mapping[str, Any], where: str = "block") -> Block:
    """Reads one block written by :func:`block_to_dict`; errors name ``where`` and the field.

    >>> block_from_dict({"type": "text", "text": "hi"})
    TextBlock(text='hi')
    """
    where = where_label(where)
    if not isinstance(data, Mapping):
        raise MessageTypeError(f"{where} must be an object, not {type_name(data)}")
    kind = data.get("type")
    try:
        if kind == "text":
            return TextBlock(_field(data, "text", where))
        if kind in ("image", "audio", "video"):
            return _MEDIA_BLOCKS[kind](_source_from_dict(_field(data, "source", where), f"{where}.source"))
        if kind == "document":
            metadata = data.get("metadata")
            return DocumentBlock(_source_from_dict(_field(data, "source", where), f"{where}.source"),
                                 data.get("name"), {} if metadata is None else metadata)
        if kind == "thinking":
            return ThinkingBlock(_field(data, "thinking", where), data.get("signature"))
        if kind == "tool_use":
            metadata = data.get("metadata")
            return ToolUseBlock(
                _field(data, "id", where),
                _field(data, "name", where),
                _field(data, "input", where),
                data.get("server_name", "local"),
                {} if metadata is None else metadata,
            )
        if kind == "tool_result":
            output = _field(data, "output", where)
            if not isinstance(output, (list, str)):
                raise MessageTypeError(f"{where}.output must be a list or str, not {type_name(output)}")
            if isinstance(output, list):
                output = [block_from_dict(b, f"{where}.output[{i}]") for i, b in enumerate(output)]
            return ToolResultBlock(
                _field(data, "tool_use_id", where), output, data.get("is_error", False)
            )
        if kind == "server_tool_use":
            metadata = data.get("metadata")
            return ServerToolUseBlock(
                _field(data, "id", where),
                _field(data, "name", where),
                _field(data, "input", where),
                data.get("server_name"),
                data.get("provider", ""),
                {} if metadata is None else metadata,
            )
        if kind == "server_tool_result":
            metadata = data.get("metadata")
            return ServerToolResultBlock(
                _field(data, "tool_use_id", where),
                data.get("content"),
                data.get("is_error", False),
                data.get("provider", ""),
                {} if metadata is None else metadata,
            )
    except (MessageError, MessageTypeError) as error:
        if str(error).startswith(where):
            raise
        raise type(error)(f"{where}: {error}") from None
    valid = "text, image, audio, video, document, thinking, tool_use, tool_result, server_tool_use, server_tool_result"
    raise MessageError(f"{where}: unknown block type {describe(kind)}; valid types: {valid}")


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
