"""Reading agent transcripts from files: :func:`load_transcript` for one, :func:`iter_transcripts`
for many, streamed.

Formats, detected from the content (``format="auto"``) or named:

- ``agentmsg``: our :meth:`Message.to_dict` shape (or arcaelas's flat shape);
- ``openai``: Chat Completions messages (``tool_calls`` and ``tool_call_id`` kept), or a request
  body ``{"messages": [...]}``;
- ``anthropic``: Messages API turns, or ``{"system": ..., "messages": [...]}``;
- ``bedrock``: Converse turns (``text``, ``toolUse``, ``toolResult`` blocks), or the same pair;
- ``swe-agent``: a SWE-agent ``.traj`` file: its ``history``, with ``tool_calls`` and
  ``tool_call_ids`` given as JSON lists or as Python ``repr`` strings (read with
  :func:`ast.literal_eval`, which evaluates literals only, never code).

Each can come as one JSON document, as JSON Lines with one message per line (one conversation),
or as JSON Lines with one whole conversation per line (a ``messages``, ``trajectory`` or
``history`` field), as the public SWE-agent and OpenHands trajectory datasets ship them. The
latter is read one line at a time, so :func:`iter_transcripts` runs in constant memory.

A file that cannot be read raises :class:`TranscriptError` (a ``ValueError``) naming the file,
the line and the reason, in one line.

    >>> import agentmsg, io
    >>> t = agentmsg.load_transcript(io.StringIO('[{"role": "user", "content": "Hi"}]'))
    >>> (t.format, [m.text for m in t.messages])
    ('openai JSON', ['Hi'])
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    IO,
    TYPE_CHECKING,
    Any,
    Dict,
    Generator,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .._checks import MAX_INT_DIGITS, check_calls, describe, require_int, require_str, type_name, where_label
from ..convert import from_anthropic, from_bedrock, from_openai
from ..errors import AgentMsgError, MessageTypeError, TranscriptError
from ..model.blocks import ToolUseBlock
from ..model.message import Message, give_ids
from ..readers import read_messages

if TYPE_CHECKING:
    from typing_extensions import TypeIs

__all__ = ["Transcript", "load_transcript", "iter_transcripts", "TRANSCRIPT_FORMATS"]

#: The message formats :func:`load_transcript` reads (besides ``"auto"``).
TRANSCRIPT_FORMATS = ("agentmsg", "openai", "anthropic", "bedrock", "swe-agent")

#: The fields of a whole-conversation record that hold its messages, in the order tried.
RECORD_FIELDS = ("messages", "trajectory", "history")

# Role names some datasets use for the two speakers (OpenHands and SWE-agent dataset dumps).
_ROLE_ALIASES: Dict[Any, Any] = {"human": "user", "ai": "assistant", "gpt": "assistant"}

Source = Union[str, "os.PathLike[str]", IO[str], IO[bytes]]


@dataclass(frozen=True)
class Transcript:
    """One conversation read from a file: its ``messages``, the ``format`` detected (e.g.
    ``"openai JSONL, one message per line"``), a ``name`` (the file's stem, with the record's
    line for a file of many) and the ``source`` path; ``line`` is the record's line or None.

    >>> Transcript("chat", [Message.user("Hi")], "openai JSON", "chat.json").name
    'chat'
    """

    name: str
    messages: List[Message] = field(repr=False)
    format: str
    source: str
    line: Optional[int] = None

    def __post_init__(self) -> None:
        checked = {
            "name": require_str(self.name, "Transcript.name"),
            "messages": read_messages(self.messages, "Transcript.messages"),
            "format": require_str(self.format, "Transcript.format"),
            "source": require_str(self.source, "Transcript.source"),
            "line": None if self.line is None else require_int(self.line, "Transcript.line", minimum=1),
        }
        for key, value in checked.items():  # frozen: set as dataclasses' own __init__ does
            object.__setattr__(self, key, value)


# -- reading bytes -------------------------------------------------------------------------------


def _describe(source: Source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", "<stream>")
    return str(name) if isinstance(name, (str, int)) else "<stream>"


def _is_source(value: object) -> TypeIs[Source]:
    return isinstance(value, (str, os.PathLike)) or hasattr(value, "read")


def _binary_lines(source: Source, argument: str) -> Tuple[Iterator[bytes], Optional[IO[bytes]]]:
    """The source's lines as bytes (newlines kept), and the file to close (if we opened one).

    A file that cannot be opened raises its OSError, with the path cut short in the message."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            handle = open(path, "rb")
        except OSError as error:
            raise type(error)(error.errno, error.strerror, where_label(str(path))) from None
        except ValueError:  # a NUL character, or a lone surrogate the file system cannot encode
            raise TranscriptError(str(path), None, "not a usable file name (a NUL character or a lone surrogate)") from None
        return iter(handle), handle
    try:  # sys.stdin and other text wrappers: read their bytes
        buffer = getattr(source, "buffer", None)
    except ValueError:  # a detached wrapper
        raise TranscriptError(_describe(source), None, f"{argument} is a detached text file: pass its buffer") from None
    return _file_lines(source if buffer is None else buffer, argument, _describe(source)), None


def _file_lines(file: Any, argument: str, path: str) -> Iterator[bytes]:
    """The lines of a caller's open file as bytes, a text file's encoded back to UTF-8; a closed
    file, or one that gives anything but bytes or str, is a typed error naming ``argument``."""
    try:
        lines = iter(file)
        for line in lines:
            if line.__class__ is bytes:
                yield line
            elif isinstance(line, str):
                yield line.encode("utf-8", "surrogatepass")
            elif isinstance(line, (bytes, bytearray, memoryview)):
                yield bytes(line)
            else:
                raise MessageTypeError(
                    f"{argument} ({where_label(path)}) gave a line of type {type_name(line)}; "
                    f"an open file gives lines of bytes or str")
    except TypeError as error:
        if isinstance(error, AgentMsgError):
            raise
        raise MessageTypeError(f"{argument} ({where_label(path)}) must be a path or an open file that gives "
                               f"its lines, not {type_name(file)}") from None
    except ValueError as error:
        if isinstance(error, AgentMsgError) or getattr(file, "closed", False) is not True:
            raise
        raise TranscriptError(path, None, f"{argument} is a closed file: open it again, or pass its path") from None


def _decode(data: bytes, path: str, line: int, first: bool) -> str:
    if first:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise TranscriptError(path, line, "UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8")
        if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark is harmless: skip it
            data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        extra = data.count(b"\n", 0, error.start)
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise TranscriptError(
            path, line + extra, f"not UTF-8 text (byte 0x{data[error.start]:02x} at column {column})"
        ) from None


def _json(text: str, path: str, line: int) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise TranscriptError(
            path, line + error.lineno - 1, f"invalid JSON: {error.msg} (column {error.colno})"
        ) from None
    except RecursionError:
        raise TranscriptError(path, line, "JSON nested too deeply to read") from None
    except ValueError:  # json's bare error for an int past Python's digit limit
        raise _too_many_digits(text, path, line) from None


def _too_many_digits(text: str, path: str, line: int) -> TranscriptError:
    """The error for a JSON int of more digits than Python converts, naming its line and column.

    Refused, not read some other way: a message's JSON values hold ints of at most
    ``MAX_INT_DIGITS`` digits (so ``json.dumps`` can write them back), and a float or a string
    would not be the number the file holds."""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else MAX_INT_DIGITS
    found = re.search(r"-?\d{%d,}" % (limit + 1), text)
    if found is None:  # not expected: json raised its ValueError for a reason of its own
        return TranscriptError(path, line, "invalid JSON: a number Python cannot read")
    start = found.start()
    column = start - text.rfind("\n", 0, start)
    digits = found.end() - start - (text[start] == "-")
    return TranscriptError(path, line + text.count("\n", 0, start),
                           f"an integer of {digits} digits (column {column}): JSON ints are read up to "
                           f"{limit} digits (Python's int conversion limit)")


# -- from dicts to messages ------------------------------------------------------------------------


def _literal_list(value: Any, what: str) -> List[Any]:
    """A list given as a JSON list or as its JSON or Python ``repr`` string (SWE-agent).

    ``ast.literal_eval`` reads literals only: no name lookups, calls or attribute access.
    """
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as error:
                raise ValueError(f"{what} is neither a JSON list nor a Python literal ({type(error).__name__})") from None
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{what} must be a list, not {type(value).__name__}")
    return list(value)


def _swe_agent_call(call: Any, where: str) -> ToolUseBlock:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise ValueError(f"{where} must be an OpenAI tool call with a 'function' object")
    function = call["function"]
    arguments = function.get("arguments") or "{}"
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (json.JSONDecodeError, RecursionError):
            raise ValueError(f"{where}.function.arguments is not valid JSON") from None
    return ToolUseBlock(id=call.get("id"), name=function.get("name"), input=arguments)  # type: ignore[arg-type]  # it checks the id


def _swe_agent_text(parts: List[Any], where: str) -> str:
    """The text of SWE-agent's list content (``[{"type": "text", "text": ...}]``), parts joined
    with newlines; any other part is an error, so nothing is dropped."""
    texts = []
    for index, part in enumerate(parts):
        if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
            raise ValueError(f"{where}[{index}] must be a text part ({{'type': 'text', 'text': ...}})")
        texts.append(part["text"])
    return "\n".join(texts)


def _swe_agent_messages(history: Any) -> List[Message]:
    """SWE-agent's ``history`` entries as messages (``agent`` and ``message_type`` kept in
    metadata). The function-calling runs reuse a call id once it is answered, so a result
    takes the name of the latest call with its id."""
    if not isinstance(history, list):
        raise ValueError(f"'history' must be a list, not {type(history).__name__}")
    call_names: Dict[str, str] = {}
    out = []
    for index, entry in enumerate(history):
        where = f"history[{index}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be an object, not {type(entry).__name__}")
        role: Any = _ROLE_ALIASES.get(entry.get("role"), entry.get("role"))  # Message checks it
        content = entry.get("content") or ""
        if isinstance(content, list):
            content = _swe_agent_text(content, f"{where}.content")
        elif not isinstance(content, str):
            raise ValueError(f"{where}.content must be a string or a list of parts")
        metadata = {key: entry[key] for key in ("agent", "message_type") if key in entry}
        try:
            if role == "assistant" and entry.get("tool_calls"):
                calls = [_swe_agent_call(c, f"{where}.tool_calls[{j}]")
                         for j, c in enumerate(_literal_list(entry["tool_calls"], f"{where}.tool_calls"))]
                call_names.update((c.id, c.name) for c in calls)
                out.append(Message.assistant(content, tool_calls=calls, metadata=metadata))
            elif role == "tool":
                ids = _literal_list(entry.get("tool_call_ids"), f"{where}.tool_call_ids")
                if len(ids) != 1 or not isinstance(ids[0], str):
                    raise ValueError(f"{where}.tool_call_ids must hold one call id, got {ids!r:.60}")
                out.append(Message.tool(content, tool_id=ids[0], name=call_names.get(ids[0]), metadata=metadata))
            else:
                out.append(Message(role, content, metadata=metadata))
        except AgentMsgError as error:
            raise ValueError(f"{where}: {error}") from None
    return out


def _message_dicts_format(items: Sequence[Any]) -> str:
    """Which of our, OpenAI's or Anthropic's shape a list of message dicts is in."""
    for item in items:
        if not isinstance(item, dict):
            continue
        if "tool_calls" in item or "tool_call_id" in item or "tool_call_ids" in item:
            return "openai"
        if "tool_id" in item or "timestamp" in item:
            return "agentmsg"
        content = item.get("content")
        if isinstance(content, list):
            parts = [part for part in content if isinstance(part, dict)]
            if parts and all("type" not in part for part in parts):
                return "bedrock"
            kinds = {part.get("type") for part in parts}
            if item.get("role") == "user" and "tool_result" in kinds:
                return "anthropic"
            if "image_url" in kinds or "input_audio" in kinds:
                return "openai"
    return "openai"  # plain role/content messages read the same in every shape


def _normalized(items: List[Any]) -> List[Any]:
    """Dataset spellings of a message: ``text`` for ``content``, ``human``/``ai`` roles."""
    out = []
    for item in items:
        if isinstance(item, dict) and ("content" not in item and "text" in item or item.get("role") in _ROLE_ALIASES):
            item = dict(item)
            if "content" not in item:
                item["content"] = item.pop("text")
            if item.get("role") in _ROLE_ALIASES:
                item["role"] = _ROLE_ALIASES[item["role"]]
        out.append(item)
    return out


def _messages_from(data: Any, fmt: str, system: Any = None) -> Tuple[List[Message], str]:
    """Messages from a list of message dicts (or a container of one) in ``fmt``; the format used."""
    if isinstance(data, dict):
        if "history" in data and fmt in ("auto", "swe-agent"):
            return _swe_agent_messages(data["history"]), "swe-agent"
        for key in RECORD_FIELDS:
            if key in data:
                return _messages_from(data[key], fmt, data.get("system"))
        raise ValueError(f"an object needs a 'messages', 'trajectory' or 'history' field with the messages; it has "
                         f"{', '.join(map(describe, list(data)[:6])) or 'no fields'}")
    if not isinstance(data, list):
        raise ValueError(f"expected a list of messages, not {type(data).__name__}")
    items = _normalized(data)
    if fmt == "auto":
        fmt = _message_dicts_format(items)
        if system is not None and fmt == "openai":
            fmt = "anthropic"
    if fmt == "bedrock":
        return from_bedrock(system, items, on_orphan="keep"), fmt
    if fmt == "swe-agent":
        return _swe_agent_messages(items), fmt
    if fmt == "anthropic":
        return from_anthropic(system, items, on_orphan="keep"), fmt
    if fmt == "openai":
        if system is not None:
            items = [{"role": "system", "content": system}, *items]
        return from_openai(items, on_orphan="keep"), fmt
    messages = []
    for index, item in enumerate(items):
        try:
            messages.append(Message.from_dict(item))
        except AgentMsgError as error:
            raise ValueError(f"messages[{index}]: {error}") from None
    return messages, fmt


def _checked(fmt: object) -> str:
    fmt = require_str(fmt, "format")
    if fmt != "auto" and fmt not in TRANSCRIPT_FORMATS:
        raise TranscriptError("<format>", None, f"unknown format {describe(fmt)}; valid: auto, {', '.join(TRANSCRIPT_FORMATS)}")
    return fmt


def _read(data: Any, fmt: str, path: str, line: Optional[int], system: Any = None) -> Tuple[List[Message], str]:
    try:
        return _messages_from(data, fmt, system)
    except (AgentMsgError, ValueError, TypeError, LookupError, AttributeError) as error:
        # A converter's error names the message and field; keep its first line.
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise TranscriptError(path, line, reason if not isinstance(error, LookupError) else f"missing {reason}") from None
    except RecursionError:
        raise TranscriptError(path, line, "nested too deeply to read") from None


# -- the public readers ------------------------------------------------------------------------------


def iter_transcripts(
    sources: Union[Source, Iterable[Source]], format: str = "auto"
) -> Generator[Transcript, None, None]:
    """The conversations in one or many files, streamed: a JSON Lines file of whole conversations
    is read one line at a time, so memory stays constant however long it is.

    ``sources`` is a path, an open file (text or binary, e.g. ``sys.stdin``), or an iterable of
    them; a directory gives its ``.json``, ``.jsonl`` and ``.traj`` files in name order.

    >>> import io
    >>> lines = io.StringIO('{"messages": [{"role": "user", "content": "a"}]}\\n'
    ...                     '{"messages": [{"role": "user", "content": "b"}]}\\n')
    >>> [(t.name, t.line, t.messages[0].text) for t in iter_transcripts(lines)]
    [('<stream>:1', 1, 'a'), ('<stream>:2', 2, 'b')]
    """
    return _iter_transcripts(sources, format, "sources")


def _iter_transcripts(sources: Any, format: object, argument: str) -> Generator[Transcript, None, None]:
    """:func:`iter_transcripts`, with the name errors give the argument (``sources`` or, for
    :func:`load_transcript`, ``source``)."""
    fmt = _checked(format)
    named: Iterable[Tuple[str, Any]]
    if _is_source(sources):
        named = [(argument, sources)]
    elif isinstance(sources, (bytes, bytearray, dict)) or not isinstance(sources, Iterable):
        raise MessageTypeError(f"{argument} must be a path, an open file or an iterable of them, not {type_name(sources)}")
    else:
        named = ((f"{argument}[{index}]", source) for index, source in enumerate(sources))
    for what, source in named:
        if not _is_source(source):
            raise MessageTypeError(f"{what} must be a path or an open file, not {type_name(source)}")
        if isinstance(source, str):
            source = require_str(source, what)  # a str subclass's methods must not run
        if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
            for child in _folder_files(source):
                yield from _transcripts_of(child, fmt, what)
        else:
            yield from _transcripts_of(source, fmt, what)


#: The file names a folder's transcripts have.
FOLDER_SUFFIXES = (".json", ".jsonl", ".traj")


def _folder_files(folder: Union[str, "os.PathLike[str]"]) -> List[Path]:
    """The transcript files of a folder (by suffix), in name order. A link among them that leads
    nowhere (broken, or a loop) is kept, so opening it says so; a folder holding none is an
    error that says what it holds instead (subfolders are not searched)."""
    children = sorted(Path(folder).iterdir())
    files = [child for child in children if child.suffix in FOLDER_SUFFIXES
             and (child.is_file() or child.is_symlink() and not child.exists())]
    if not files:
        raise TranscriptError(os.fspath(folder), None, f"no .json, .jsonl or .traj file in this folder "
                                                       f"({_folder_contents(children)})")
    return files


def _folder_contents(children: List[Path]) -> str:
    if not children:
        return "it is empty"
    counts = {"broken or looping link": 0, "folder": 0, "other file": 0}
    for child in children:
        counts["broken or looping link" if child.is_symlink() and not child.exists()
               else "folder" if child.is_dir() else "other file"] += 1
    found = ", ".join(f"{count} {kind}{'s' if count > 1 else ''}" for kind, count in counts.items() if count)
    return f"it holds {found}" + ("; folders in it are not searched" if counts["folder"] else "")


def _stem(path: str) -> str:
    name = os.path.basename(path)
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name


def _transcripts_of(source: Source, fmt: str, argument: str) -> Iterator[Transcript]:
    path = _describe(source)
    lines, handle = _binary_lines(source, argument)
    try:
        yield from _parse_lines(lines, path, fmt)
    finally:
        if handle is not None:
            handle.close()


def _parse_lines(lines: Iterator[bytes], path: str, fmt: str) -> Iterator[Transcript]:
    # Read up to the first line holding a whole JSON value: if it is a conversation record, the
    # file is JSON Lines of conversations and the rest is streamed; otherwise read it all.
    first_number, first_text = 0, ""
    for number, raw in enumerate(lines, start=1):
        text = _decode(raw, path, number, first=number == 1)
        if text.strip():
            first_number, first_text = number, text
            break
    else:
        raise TranscriptError(path, None, "empty file: no messages")
    try:
        first = json.loads(first_text)
    except (json.JSONDecodeError, RecursionError):
        first = None  # a JSON document spread over several lines: read it whole below
    except ValueError:
        raise _too_many_digits(first_text, path, first_number) from None
    if isinstance(first, list) or isinstance(first, dict) and "role" not in first:
        # A whole conversation on the first line: the file is that one document, or JSON Lines
        # of conversations, streamed.
        rest = _record_lines(lines, path, first_number)
        second = next(rest, None)
        if second is None:
            messages, used = _read(first, fmt, path, None)
            yield _transcript(_stem(path), messages, _label(used, "JSON"), path, None, _ids_of(first_text))
            return
        for number, text in itertools.chain([(first_number, first_text), second], rest):
            yield _record(first if number == first_number else _json(text, path, number), fmt, path, number, text)
        return
    if isinstance(first, dict):  # one message per line: one conversation
        ids = _ids_of(first_text)
        items = [first]
        for number, text in _record_lines(lines, path, first_number):
            ids.update(text.encode())
            items.append(_json(text, path, number))
        messages, used = _read(items, fmt, path, None)
        yield _transcript(_stem(path), messages, _label(used, "JSONL, one message per line"), path, None, ids)
        return
    body = first_text + "".join(_decode(raw, path, number, False)
                                for number, raw in enumerate(lines, start=first_number + 1))
    data = _json(body, path, first_number)
    messages, used = _read(data, fmt, path, None)
    yield _transcript(_stem(path), messages, _label(used, "JSON"), path, None, _ids_of(body))


def _ids_of(text: str) -> "hashlib.blake2b":
    """The hash that names a conversation's messages: of the text it was read from (fed more
    text with ``update``; see :func:`_transcript`)."""
    return hashlib.blake2b(text.encode(), digest_size=8)


def _transcript(name: str, messages: List[Message], fmt: str, path: str, line: Optional[int],
                ids: "hashlib.blake2b") -> Transcript:
    # A message the file gives no id gets one from the conversation's text and its position:
    # made ids are random per process, and they reach what a model reads (compress's hint), so
    # reading the same file must give the same ids for a replay to give the same figures.
    give_ids(messages, f"msg_{ids.hexdigest()}")
    return Transcript(name, messages, fmt, path, line)


def _label(used: str, container: str) -> str:
    return "swe-agent .traj" if used == "swe-agent" and container == "JSON" else f"{used} {container}"


def _record_lines(lines: Iterator[bytes], path: str, after: int) -> Iterator[Tuple[int, str]]:
    for number, raw in enumerate(lines, start=after + 1):
        text = _decode(raw, path, number, first=False)
        if text.strip():
            yield number, text


def _record(data: Any, fmt: str, path: str, number: int, text: str) -> Transcript:
    if not isinstance(data, (dict, list)):
        raise TranscriptError(path, number, f"expected a conversation on this line, not {type(data).__name__}")
    messages, used = _read(data, fmt, path, number)
    label = None if isinstance(data, list) else next(
        (str(data[k]) for k in ("instance_id", "id", "name") if isinstance(data.get(k), (str, int))), None)
    name = f"{_stem(path)}:{label or number}"
    return _transcript(name, messages, _label(used, "JSONL, one conversation per line"), path, number, _ids_of(text))


def load_transcript(source: Source, format: str = "auto") -> Transcript:
    """The one conversation in a file (path or open file); see the module for the formats.

    A file holding several conversations (JSON Lines of records) raises
    :class:`TranscriptError`: read those with :func:`iter_transcripts`.

    >>> import io
    >>> t = load_transcript(io.StringIO('{"history": [{"role": "user", "content": "Fix it"}]}'))
    >>> (t.format, t.messages[0].text)
    ('swe-agent .traj', 'Fix it')
    """
    found = _iter_transcripts(source, format, "source")
    try:
        transcript = next(found, None)
        extra = None if transcript is None else next(found, None)
    finally:
        found.close()
    if transcript is None:  # an empty list of sources (a folder without transcript files raised)
        raise TranscriptError(_describe(source) if _is_source(source) else "sources", None, "holds no transcript")
    if extra is not None:
        raise TranscriptError(transcript.source, extra.line, "holds more than one conversation: use iter_transcripts")
    return transcript


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
