"""Corpus jobs on Ray Data (and Hugging Face ``datasets``): ready ``map_batches`` callables.

Each job is a class, so that Ray builds it once per worker
(``compute=ray.data.ActorPoolStrategy(size=...)``) and the encodings load once per worker, not
per batch. Every class takes and returns a
``pyarrow.Table`` batch (``batch_format="pyarrow"``), reads its input column and appends its
output column; the rest of the row is passed through. The same objects work as
``datasets.Dataset.map(job, batched=True, num_proc=2)`` functions, which take and return a
dict of lists (see :func:`as_datasets_function`).

A conversation column holds, per row, either a list of OpenAI-style message dicts (as read from
JSONL; keys that Arrow filled with null because other rows have them are dropped) or the same
list as a JSON string. Outputs that are conversations or provider payloads are JSON strings,
so rows of any shape fit one Arrow schema.

Install with ``pip install agentmsg[ray]``. Example (the whole job; runs as is)::

    import ray, agentmsg.ray as jobs
    ray.init(num_cpus=2)
    ds = ray.data.read_json("conversations.jsonl")        # {"id": ..., "messages": [...]}
    ds = ds.repartition(8).materialize()                  # read first; blocks are what workers share
    ds = ds.map_batches(jobs.CountPromptTokens, batch_format="pyarrow",
                        compute=ray.data.ActorPoolStrategy(size=2))
    ds.write_parquet("out/")

    >>> import pyarrow as pa
    >>> batch = pa.table({"messages": ['[{"role": "user", "content": "Hello, world!"}]']})
    >>> CountPromptTokens()(batch).column("prompt_tokens").to_pylist()
    [11]
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, cast

from . import convert as _convert
from ._checks import check_calls
from .arrow import count_tokens_arrow, parse_arrow
from .counting.tokens import message_token_counts
from .errors import MessageTypeError
from .history.trim import trim

__all__ = [
    "CountPromptTokens",
    "CountTextTokens",
    "ParseText",
    "TrimConversations",
    "ConvertConversations",
    "as_datasets_function",
]

_PRIMING_TOKENS = 3  # count_message_tokens = sum(message_token_counts) + the reply priming


def _pyarrow() -> Any:
    import pyarrow

    return pyarrow


def _conversation(value: Any, row: int, column: str) -> List[Dict[str, Any]]:
    """One row's messages as OpenAI-style dicts, without the null keys Arrow added."""
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, (list, tuple)):
        raise MessageTypeError(f"{column}[{row}] must be a list of messages or its JSON, not {type(value).__name__}")
    return [_without_nulls(message) for message in value]


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _conversations(table: Any, column: str) -> List[List[Dict[str, Any]]]:
    return [_conversation(value, row, column) for row, value in enumerate(table.column(column).to_pylist())]


def _with_column(table: Any, name: str, values: Any) -> Any:
    """``table`` with ``name`` set to ``values`` (replaced if the batch already has it)."""
    if name in table.column_names:
        table = table.drop_columns([name])
    return table.append_column(name, values)


class CountPromptTokens:
    """Adds the prompt tokens of each conversation (:func:`agentmsg.count_message_tokens`).

    All messages of a batch are counted in one native call, spread over the worker's threads.

    >>> import pyarrow as pa
    >>> job = CountPromptTokens(encoding="cl100k_base")
    >>> job(pa.table({"messages": [[{"role": "user", "content": "Hi"}]]}))["prompt_tokens"].to_pylist()
    [8]
    """

    def __init__(self, messages_column: str = "messages", output_column: str = "prompt_tokens",
                 encoding: str = "o200k_base") -> None:
        self.messages_column, self.output_column, self.encoding = messages_column, output_column, encoding

    def __call__(self, batch: Any) -> Any:
        conversations = _conversations(batch, self.messages_column)
        counts = message_token_counts([m for c in conversations for m in c], self.encoding)
        totals, at = [], 0
        for conversation in conversations:
            totals.append(sum(counts[at:at + len(conversation)]) + _PRIMING_TOKENS)
            at += len(conversation)
        return _with_column(batch, self.output_column, _pyarrow().array(totals, type=_pyarrow().uint64()))


class CountTextTokens:
    """Adds the token count of a text column (as ``{text_column}_tokens`` unless named), read
    from Arrow in place (:func:`agentmsg.arrow.count_tokens_arrow`).

    >>> import pyarrow as pa
    >>> CountTextTokens("text")(pa.table({"text": ["Hello, world!", None]}))["text_tokens"].to_pylist()
    [4, None]
    """

    def __init__(self, text_column: str = "text", output_column: Optional[str] = None,
                 encoding: str = "o200k_base") -> None:
        self.text_column, self.encoding = text_column, encoding
        self.output_column = output_column or f"{text_column}_tokens"

    def __call__(self, batch: Any) -> Any:
        counts = count_tokens_arrow(batch.column(self.text_column), self.encoding)
        return _with_column(batch, self.output_column, counts)


class ParseText:
    """Parses a column of model output in Rust, read from Arrow in place
    (:func:`agentmsg.arrow.parse_arrow`, the options of :func:`agentmsg.parse_many`, e.g.
    ``dialect``), into four columns: ``{prefix}text``, ``{prefix}thinking`` (list of strings),
    ``{prefix}tool_calls`` (list of structs of ``name`` and ``arguments``, the arguments as
    compact JSON) and ``{prefix}errors`` (the number of bad tool calls). A null text gives nulls.

    >>> import pyarrow as pa
    >>> out = ParseText("reply")(pa.table({"reply": ['<think>hm</think>Hi <tool>{"tool_name": "ls", "arguments": {}}</tool>', None]}))
    >>> out["parsed_text"].to_pylist(), out["parsed_tool_calls"].to_pylist(), out["parsed_errors"].to_pylist()
    (['Hi', None], [[{'name': 'ls', 'arguments': '{}'}], None], [0, None])
    """

    def __init__(self, text_column: str = "text", prefix: str = "parsed_", **options: Any) -> None:
        self.text_column, self.prefix, self.options = text_column, prefix, options

    def __call__(self, batch: Any) -> Any:
        parsed = parse_arrow(batch.column(self.text_column), **self.options)
        # `flatten` gives each field with the struct's nulls applied (a null text, null fields).
        chunks = parsed.chunks if isinstance(parsed, _pyarrow().ChunkedArray) else [parsed]
        fields = [chunk.flatten() for chunk in chunks]
        for index, field in enumerate(parsed.type):
            values = _pyarrow().chunked_array([chunk[index] for chunk in fields], type=field.type)
            batch = _with_column(batch, self.prefix + field.name, values)
        return batch


class TrimConversations:
    """Trims each conversation to ``max_tokens`` (:func:`agentmsg.trim`, same options) and adds the
    kept messages as an OpenAI-format JSON string.

    >>> import pyarrow as pa
    >>> chat = [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "a " * 500},
    ...         {"role": "user", "content": "Hi"}]
    >>> TrimConversations(40)(pa.table({"messages": [chat]}))["trimmed"].to_pylist()
    ['[{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Hi"}]']
    """

    def __init__(self, max_tokens: int, messages_column: str = "messages", output_column: str = "trimmed",
                 **trim_options: Any) -> None:
        self.max_tokens, self.trim_options = max_tokens, trim_options
        self.messages_column, self.output_column = messages_column, output_column

    def __call__(self, batch: Any) -> Any:
        trimmed = [
            json.dumps(_convert.to_openai(trim(_convert.from_openai(c), self.max_tokens, **self.trim_options).messages),
                       ensure_ascii=False)
            for c in _conversations(batch, self.messages_column)
        ]
        return _with_column(batch, self.output_column, _pyarrow().array(trimmed, type=_pyarrow().string()))


class ConvertConversations:
    """Converts each conversation from one provider format to another (``agentmsg.convert``'s
    ``from_<source>`` then ``to_<target>``) and adds the result as a JSON string.

    >>> import pyarrow as pa
    >>> job = ConvertConversations(target="anthropic")
    >>> job(pa.table({"messages": [[{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Hi"}]]}))["anthropic"].to_pylist()
    ['[[{"type": "text", "text": "Be brief"}], [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]]']
    """

    def __init__(self, target: str, source: str = "openai", messages_column: str = "messages",
                 output_column: Optional[str] = None) -> None:
        self.read: Callable[[Any], Any] = _converter("from_", source)
        self.write: Callable[[Any], Any] = _converter("to_", target)
        self.messages_column, self.output_column = messages_column, output_column or target

    def __call__(self, batch: Any) -> Any:
        converted = [
            json.dumps(self.write(self.read(c)), ensure_ascii=False)
            for c in _conversations(batch, self.messages_column)
        ]
        return _with_column(batch, self.output_column, _pyarrow().array(converted, type=_pyarrow().string()))


def _converter(prefix: str, format_name: str) -> Callable[[Any], Any]:
    function = getattr(_convert, prefix + format_name, None)
    if not callable(function):
        known = sorted(name[len(prefix):] for name in _convert.__all__ if name.startswith(prefix))
        raise MessageTypeError(f"no converter {prefix}{format_name}; known formats: {', '.join(known)}")
    return cast(Callable[[Any], Any], function)


def as_datasets_function(job: Callable[[Any], Any]) -> Callable[[Dict[str, Sequence[Any]]], Dict[str, List[Any]]]:
    """Wraps a job for ``datasets.Dataset.map(function, batched=True, num_proc=...)``, which
    passes and expects a dict of lists.

    >>> import pyarrow as pa
    >>> as_datasets_function(CountTextTokens())({"text": ["Hello, world!"]})
    {'text': ['Hello, world!'], 'text_tokens': [4]}
    """
    return _DatasetsFunction(job)


class _DatasetsFunction:
    """A picklable dict-of-lists wrapper of a job (``datasets`` ships it to its worker processes)."""

    def __init__(self, job: Callable[[Any], Any]) -> None:
        self.job = job

    def __call__(self, batch: Dict[str, Sequence[Any]]) -> Dict[str, List[Any]]:
        columns: Dict[str, List[Any]] = self.job(_pyarrow().table(dict(batch))).to_pydict()
        return columns


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
