"""Reading provider dicts: the field checks and builders every reader and converter shares, each
error naming the place (``messages[3].content[0].text``) of what is wrong."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

from .._checks import as_list, bounded, require, require_dict
from ..errors import ConversionError, MessageError, MessageTypeError
from ..model.blocks import TextBlock, ThinkingBlock

__all__ = []


def plain_data(data: Any) -> Any:
    """An SDK object (pydantic, anything with ``model_dump()``) as plain data; else ``data``."""
    dump = getattr(data, "model_dump", None)
    if dump is not None and not isinstance(data, Mapping):
        return dump(exclude_none=True)
    return data


def check_dicts(items: Any, what: str) -> List[Any]:
    """A list of provider dicts; a str, dict or other non-list is a MessageTypeError."""
    return as_list(items, what, "a list of dicts")


def own_namespace(metadata: Mapping[str, Any], key: str) -> Dict[str, Any]:
    """``metadata[key]`` when it is a dict (a namespace a converter wrote), else ``{}``.

    A caller's own non-dict value under the same key is left alone, never taken for ours.
    """
    value = metadata.get(key)
    return value if isinstance(value, dict) else {}


def block_kind(block: Mapping[str, Any], where: str) -> Optional[str]:
    """A block's ``type`` tag: a str, or None when absent; any other value is a MessageTypeError."""
    kind = block.get("type")
    if kind is not None and not isinstance(kind, str):
        raise MessageTypeError(f"{where}.type must be a str, not {type(kind).__name__}")
    return kind


def tagged_dict(value: Any, where: str) -> Tuple[Mapping[str, Any], Optional[str]]:
    """A block that must be a dict, and its ``type`` tag (:func:`block_kind`)."""
    block = require_dict(value, where)
    return block, block_kind(block, where)


def thinking_dict(block: ThinkingBlock, kind: str, extras_key: str, signature_key: str) -> Dict[str, Any]:
    """A thinking block as ``{"type": kind, kind: thinking}``, its signature (if any) kept as
    ``{extras_key: {signature_key: signature}}``: AgentScope's and LangChain's reasoning blocks."""
    data: Dict[str, Any] = {"type": kind, kind: block.thinking}
    if block.signature is not None:
        data[extras_key] = {signature_key: block.signature}
    return data


def _at(where: str, error: Exception) -> str:
    """The error's message, prefixed with ``where`` unless it already names it."""
    text = bounded(error)
    return text if text.startswith(where) else f"{where}: {text}"


def build(where: str, factory: Callable[[], T]) -> T:
    """Runs ``factory`` and prefixes ``where`` to any model error, keeping its class.

    The model's own message is cut to a bounded length (it may quote the value at fault).
    """
    try:
        return factory()
    except MessageTypeError as error:
        raise MessageTypeError(_at(where, error)) from None
    except (MessageError, ConversionError) as error:
        raise ConversionError(_at(where, error)) from None
    except (ValueError, OverflowError) as error:  # e.g. an int too long to convert, in a timestamp
        raise ConversionError(f"{where}: {type(error).__name__}: {bounded(error)}") from None


def text_block(data: Mapping[str, Any], where: str) -> TextBlock:
    """The :class:`TextBlock` of a ``{"type": "text", "text": ...}`` part (OpenAI, Anthropic, AgentScope)."""
    text = require(data, "text", where)
    return build(where, lambda: TextBlock(text))


T = TypeVar("T")


def require_str_key(data: Mapping[str, Any], key: str, where: str) -> str:
    value = require(data, key, where)
    if not isinstance(value, str):
        raise MessageTypeError(f"{where}.{key} must be a str, not {type(value).__name__}")
    return value
