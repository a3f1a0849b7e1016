"""Reading the items of a provider's stream, sync or async: what every stream reader shares
(:mod:`agentmsg.convert.streams`, :mod:`agentmsg.convert.responses_stream`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterable, cast

from .._checks import type_name
from ..errors import MessageTypeError

__all__ = []


def sync_items(items: Any, what: str, async_twin: str) -> Iterable[Any]:
    """``items`` as an iterator; an async iterable names ``async_twin``, the reader to await."""
    if hasattr(items, "__aiter__") and not hasattr(items, "__iter__"):
        raise MessageTypeError(f"{what} is an async iterable: await {async_twin}({what}) instead")
    if isinstance(items, (str, bytes, Mapping)):
        raise MessageTypeError(f"{what} must be an iterable of stream items, not a single {type_name(items)}")
    try:
        return iter(cast(Iterable[Any], items))
    except TypeError:
        raise MessageTypeError(f"{what} must be an iterable of stream items, not {type_name(items)}") from None


async def async_items(items: Any, what: str) -> Any:
    """The items of an async iterable, or of a sync one, as an async generator."""
    if hasattr(items, "__aiter__"):
        async for item in items:
            yield item
        return
    for item in sync_items(items, what, ""):
        yield item


def item_field(item: Any, name: str) -> Any:
    """``item[name]`` of a dict, ``item.name`` of an SDK object (None when absent)."""
    if type(item) is dict:
        return item.get(name)
    try:
        return getattr(item, name)  # the SDK objects: tried before the slower Mapping test
    except AttributeError:
        return item.get(name) if isinstance(item, Mapping) else None


def stream_object(item: Any, where: str) -> Any:
    """A stream item: a dict or an SDK object (anything else is a typed error)."""
    if type(item) is dict or hasattr(item, "model_dump") or isinstance(item, Mapping):
        return item
    raise MessageTypeError(f"{where} must be a stream object of the SDK or its dict, not {type_name(item)}")
