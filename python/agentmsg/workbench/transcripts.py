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

An OpenAI Batch output file is read together with its request file, paired by ``custom_id``,
when both are among the sources (a failed request is skipped with a ``ConversionWarning``).

A file that cannot be read raises :class:`TranscriptError` (a ``ValueError``) naming the file,
the line and the reason, in one line.

    >>> import agentmsg, io
    >>> t = agentmsg.load_transcript(io.StringIO('[{"role": "user", "content": "Hi"}]'))
    >>> (t.format, [m.text for m in t.messages])
    ('openai JSON', ['Hi'])
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import itertools
import json
import os
import re
import sys
import zlib
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
from ..errors import AgentMsgError, MessageTypeError, TranscriptError, warn_caller
from ..model.blocks import ToolUseBlock
from ..model.message import Message, give_ids
from ..readers import read_messages

if TYPE_CHECKING:
    from typing_extensions import TypeIs

__all__ = ["Transcript", "load_transcript", "iter_transcripts", "TRANSCRIPT_FORMATS"]

#: The message formats :func:`load_transcript` reads (besides ``"auto"``).
TRANSCRIPT_FORMATS = ("agentmsg", "openai", "anthropic", "bedrock", "swe-agent", "sharegpt", "openhands")

#: The fields of a whole-conversation record that hold its messages, in the order tried.
RECORD_FIELDS = ("messages", "trajectory", "history", "conversations")

#: The recorded outcomes of a run a record may hold (at its top level, or in its ``info``,
#: ``report`` or ``test_result``), carried into :attr:`Transcript.outcome`.
OUTCOME_FIELDS = ("resolved", "exit_status", "reward", "success")

# Role names some datasets use for the two speakers (OpenHands and SWE-agent dataset dumps).
_ROLE_ALIASES: Dict[Any, Any] = {"human": "user", "ai": "assistant", "gpt": "assistant"}

Source = Union[str, "os.PathLike[str]", IO[str], IO[bytes]]


@dataclass(frozen=True)
class Transcript:
    """One conversation read from a file: its ``messages``, the ``format`` detected (e.g.
    ``"openai JSONL, one message per line"``), a ``name`` (the file's stem, with the record's
    line for a file of many) and the ``source`` path; ``line`` is the record's line or None;
    ``outcome`` what the file records of the run's result (``resolved``, ``exit_status``,
    ``reward``, ``success``) and ``usage`` the provider's token counts or costs it records.

    >>> Transcript("chat", [Message.user("Hi")], "openai JSON", "chat.json").name
    'chat'
    """

    name: str
    messages: List[Message] = field(repr=False)
    format: str
    source: str
    line: Optional[int] = None
    outcome: Dict[str, Any] = field(default_factory=dict, repr=False)
    usage: Dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        checked = {
            "name": require_str(self.name, "Transcript.name"),
            "messages": read_messages(self.messages, "Transcript.messages"),
            "format": require_str(self.format, "Transcript.format"),
            "source": require_str(self.source, "Transcript.source"),
            "line": None if self.line is None else require_int(self.line, "Transcript.line", minimum=1),
            "outcome": _require_dict(self.outcome, "Transcript.outcome"),
            "usage": _require_dict(self.usage, "Transcript.usage"),
        }
        for key, value in checked.items():  # frozen: set as dataclasses' own __init__ does
            object.__setattr__(self, key, value)


def _require_dict(value: object, where: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise MessageTypeError(f"{where} must be a dict, not {type_name(value)}")
    return dict(value)


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
        if handle.peek(2)[:2] == _GZIP_MAGIC:  # gzip, whatever the name
            unpacked: IO[bytes] = gzip.GzipFile(fileobj=handle, mode="rb")  # type: ignore[assignment]
            return _gunzipped(unpacked, str(path)), handle
        return iter(handle), handle
    try:  # sys.stdin and other text wrappers: read their bytes
        buffer = getattr(source, "buffer", None)
    except ValueError:  # a detached wrapper
        raise TranscriptError(_describe(source), None, f"{argument} is a detached text file: pass its buffer") from None
    return _file_lines(source if buffer is None else buffer, argument, _describe(source)), None


_GZIP_MAGIC = b"\x1f\x8b"


def _gunzipped(unpacked: IO[bytes], path: str) -> Iterator[bytes]:
    """The lines of a gzip file; a broken or cut one is an error naming the line reached."""
    number = 0
    try:
        for number, line in enumerate(unpacked, start=1):  # noqa: B007 - number names the line reached
            yield line
    except (OSError, EOFError, zlib.error) as error:
        raise TranscriptError(path, number + 1, f"not a whole gzip file ({type(error).__name__}: {error})") from None


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


# ShareGPT speakers (``from``) and the roles they are.
_SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant",
                   "bard": "assistant", "model": "assistant", "system": "system"}


def _sharegpt_messages(items: List[Any]) -> List[Message]:
    """ShareGPT turns (``from`` / ``value``). A ``function_call`` turn (``{"name", "arguments"}``
    as JSON) is an assistant tool call, and the ``observation`` (or ``tool``) turn after it its
    result; the calls get ids ``call_<turn>``, since ShareGPT gives none."""
    out: List[Message] = []
    pending: Optional[ToolUseBlock] = None
    for index, item in enumerate(items):
        where = f"conversations[{index}]"
        if not isinstance(item, dict) or "from" not in item or not isinstance(item.get("value"), str):
            raise ValueError(f"{where} must be a ShareGPT turn with 'from' and a string 'value'")
        speaker, value = item["from"], item["value"]
        if speaker == "function_call":
            try:
                call = json.loads(value)
            except (json.JSONDecodeError, RecursionError):
                raise ValueError(f"{where}.value is not the JSON of a function call") from None
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ValueError(f"{where}.value must be a JSON object with a 'name'")
            arguments = call.get("arguments", {})
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except (json.JSONDecodeError, RecursionError):
                    raise ValueError(f"{where}.value's arguments are not JSON") from None
            pending = ToolUseBlock(f"call_{index}", call["name"], arguments if isinstance(arguments, dict) else {"value": arguments})
            out.append(Message.assistant("", tool_calls=[pending]))
        elif speaker in ("observation", "tool", "function_response"):
            if pending is None:
                raise ValueError(f"{where}: an {speaker} turn answers no function_call turn before it")
            out.append(Message.tool(value, tool_id=pending.id, name=pending.name))
            pending = None
        elif speaker in _SHAREGPT_ROLES:
            out.append(Message(_SHAREGPT_ROLES[speaker], value))
        else:
            raise ValueError(f"{where}.from is {describe(speaker)}; ShareGPT speakers: "
                             f"{', '.join(_SHAREGPT_ROLES)}, function_call, observation")
    return out


# OpenHands events that are the run's bookkeeping, not something a model reads.
_OPENHANDS_STATE = frozenset({"agent_state_changed", "change_agent_state", "null", "condensation"})


def _openhands_messages(events: List[Any]) -> List[Message]:
    """An OpenHands event stream: ``message`` actions are the user's or the agent's turns
    (``system`` the system prompt); the agent's other actions (``run``, ``edit``, ``read``...)
    are tool calls (named by ``tool_call_metadata`` when it is there, else by the action) and
    the observations that name them as their ``cause`` their results; an observation of
    nothing the agent called is a user message. State changes are left out."""
    out: List[Message] = []
    calls: Dict[Any, ToolUseBlock] = {}
    for index, event in enumerate(events):
        where = f"events[{index}]"
        if not isinstance(event, dict):
            raise ValueError(f"{where} must be an object, not {type(event).__name__}")
        args: Dict[str, Any] = event["args"] if isinstance(event.get("args"), dict) else {}
        if "action" in event:
            action = event["action"]
            if action in _OPENHANDS_STATE:
                continue
            text = str(args["content"] if isinstance(args.get("content"), str) else event.get("message") or "")
            if action == "system":
                out.append(Message.system(str(text)))
            elif action == "message":
                out.append(Message.user(str(text)) if event.get("source") == "user" else Message.assistant(str(text)))
            else:
                metadata: Dict[str, Any] = (event["tool_call_metadata"] if isinstance(event.get("tool_call_metadata"), dict)
                                            else {})
                call_id = metadata.get("tool_call_id") or f"event_{event.get('id', index)}"
                name = metadata.get("function_name") or str(action)
                call = ToolUseBlock(str(call_id), str(name), {k: v for k, v in args.items() if k != "thought"})
                calls[event.get("id", index)] = call
                thought = str(args["thought"]) if isinstance(args.get("thought"), str) else ""
                out.append(Message.assistant(thought, tool_calls=[call]))
        elif "observation" in event:
            if event["observation"] in _OPENHANDS_STATE:
                continue
            content = event.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            cause = event.get("cause")
            answered = calls.pop(cause) if cause in calls else None
            if answered is not None:
                out.append(Message.tool(text, tool_id=answered.id, name=answered.name))
            elif text:
                out.append(Message.user(text))
        else:
            raise ValueError(f"{where} is neither an OpenHands action nor an observation (no 'action' or "
                             f"'observation' field)")
    return out


def _is_openhands(items: Any) -> bool:
    return isinstance(items, list) and any(isinstance(i, dict) and "role" not in i and ("action" in i or "observation" in i)
                                           for i in items[:8])


def _is_sharegpt(items: Any) -> bool:
    return isinstance(items, list) and any(isinstance(i, dict) and "from" in i and "value" in i for i in items[:8])


def _reply(response: Any, where: str) -> Tuple[Dict[str, Any], Any]:
    """The assistant message and the ``usage`` of a ChatCompletion response (or of a Batch
    output line's ``response``, whose ``body`` is one)."""
    if isinstance(response, dict) and "choices" not in response and isinstance(response.get("body"), dict):
        response = response["body"]
    choices = response.get("choices") if isinstance(response, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
            or not isinstance(choices[0].get("message"), dict):
        raise ValueError(f"{where} must be a ChatCompletion with choices[0].message")
    return choices[0]["message"], response.get("usage")


def _messages_from(data: Any, fmt: str, system: Any = None) -> Tuple[List[Message], str]:
    """Messages from a list of message dicts (or a container of one) in ``fmt``; the format used."""
    if isinstance(data, dict):
        request = next((data[k] for k in ("body", "request") if isinstance(data.get(k), dict)), None)
        if request is not None and "messages" in request and fmt in ("auto", "openai"):
            # An OpenAI Batch request line ({"custom_id", "body"}), or a request with its response.
            items = request["messages"]
            if not isinstance(items, list):
                raise ValueError("the request's 'messages' must be a list")
            kind = "openai Batch request" if "custom_id" in data else "openai request"
            if data.get("response") is not None:
                reply, _ = _reply(data["response"], "'response'")
                items, kind = [*items, reply], f"{kind} and response"
            return from_openai(_normalized(items), on_orphan="keep"), kind
        if _is_batch_output(data):
            raise ValueError("an OpenAI Batch output line holds no prompt: give its Batch request file too "
                             "(both files, or the folder holding them)")
        if "choices" in data:
            raise ValueError("a ChatCompletion response without its request: give the request's messages too "
                             "(an object with 'request' or 'body', and 'response')")
        if "history" in data and fmt in ("auto", "swe-agent") and not _is_openhands(data["history"]):
            return _swe_agent_messages(data["history"]), "swe-agent"
        for key in RECORD_FIELDS:
            if key in data:
                return _messages_from(data[key], fmt, data.get("system"))
        raise ValueError(f"an object needs a 'messages', 'trajectory', 'history' or 'conversations' field with the "
                         f"messages; it has {', '.join(map(describe, list(data)[:6])) or 'no fields'}")
    if not isinstance(data, list):
        raise ValueError(f"expected a list of messages, not {type(data).__name__}")
    if fmt == "openhands" or fmt == "auto" and _is_openhands(data):
        return _openhands_messages(data), "openhands"
    if fmt == "sharegpt" or fmt == "auto" and _is_sharegpt(data):
        return _sharegpt_messages(data), "sharegpt"
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


def _facts(data: Any) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The outcome (:data:`OUTCOME_FIELDS`) and the provider usage a record holds: at its top
    level or in ``info``, ``report`` or ``test_result``; usage from ``usage``, a response's
    ``usage``, SWE-agent's ``info.model_stats`` or OpenHands' ``metrics``."""
    if not isinstance(data, dict):
        return {}, {}
    outcome: Dict[str, Any] = {}
    places = [data, *(data[k] for k in ("info", "report", "test_result") if isinstance(data.get(k), dict))]
    for key in OUTCOME_FIELDS:
        for place in places:
            value = place.get(key)
            if isinstance(value, (bool, int, float, str)):
                outcome[key] = value
                break
    usage: Any = data.get("usage")
    if usage is None and isinstance(data.get("response"), dict):
        response = data["response"]
        usage = (response.get("body") if isinstance(response.get("body"), dict) else response).get("usage")
    if usage is None and isinstance(data.get("info"), dict):
        usage = data["info"].get("model_stats")
    if usage is None:
        usage = data.get("metrics")
    return outcome, dict(usage) if isinstance(usage, dict) else {}


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
    them; a directory gives its ``.json``, ``.jsonl`` and ``.traj`` files in name order. An
    OpenAI Batch output file among them is read with its request file: one conversation per
    ``custom_id``, at the request file's place.

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
    # The files are listed first (folders opened), so a Batch output file finds its request file
    # wherever it stands among them.
    files: List[Tuple[str, Any]] = []
    for what, source in named:
        if not _is_source(source):
            raise MessageTypeError(f"{what} must be a path or an open file, not {type_name(source)}")
        if isinstance(source, str):
            source = require_str(source, what)  # a str subclass's methods must not run
        if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
            files.extend((what, child) for child in _folder_files(source))
        else:
            files.append((what, source))
    outputs_of = _batch_pairs([source for _, source in files], fmt)
    paired = {output for outputs in outputs_of.values() for output in outputs}
    for what, source in files:
        path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
        if path in paired:
            continue  # read with its request file
        if path in outputs_of:
            yield from _batch_conversations(path, outputs_of[path], fmt, what)
        else:
            yield from _transcripts_of(source, fmt, what)


# -- OpenAI Batch request and output files, paired by custom_id ------------------------------------


def _is_batch_output(data: Any) -> bool:
    """Whether a JSON Lines record is an OpenAI Batch output (or error file) line."""
    return isinstance(data, dict) and "custom_id" in data and "body" not in data \
        and ("response" in data or "error" in data)


def _batch_kind(path: str, what: str) -> Optional[str]:
    """``"request"`` or ``"output"`` for an OpenAI Batch file (by its first record), else None.
    A file that cannot be read here is left for the reader proper to report."""
    try:
        lines, handle = _binary_lines(path, what)
    except (OSError, ValueError):
        return None
    try:
        first = next((raw for raw in lines if raw.strip()), b"")
        data = json.loads(first) if b'"custom_id"' in first else None
    except (OSError, ValueError, EOFError, zlib.error, RecursionError):
        return None
    finally:
        if handle is not None:
            handle.close()
    if not isinstance(data, dict) or not isinstance(data.get("custom_id"), str):
        return None
    return "request" if isinstance(data.get("body"), dict) else "output" if _is_batch_output(data) else None


def _batch_pairs(sources: List[Any], fmt: str) -> Dict[str, List[str]]:
    """The Batch output files among ``sources`` by the request file each answers: the only
    request file, or the one holding the custom_id of the output's first line. Only JSON Lines
    paths are looked at, and only when there are two or more."""
    candidates = [os.fspath(s) for s in sources if isinstance(s, (str, os.PathLike))
                  and os.fspath(s).endswith((".jsonl", ".jsonl.gz"))]
    if fmt not in ("auto", "openai") or len(candidates) < 2:
        return {}
    kinds = {path: _batch_kind(path, "sources") for path in candidates}
    requests = [path for path, kind in kinds.items() if kind == "request"]
    outputs = [path for path, kind in kinds.items() if kind == "output"]
    pairs: Dict[str, List[str]] = {}
    if not requests or not outputs:
        return pairs
    ids = {} if len(requests) == 1 else {path: {cid for _, cid, _ in _batch_lines(path, "request")} for path in requests}
    for output in outputs:
        first = next((cid for _, cid, _ in _batch_lines(output, "output")), None)
        request = requests[0] if len(requests) == 1 else next((r for r in requests if first in ids[r]), None)
        if request is not None:
            pairs.setdefault(request, []).append(output)
    return pairs


def _batch_lines(path: str, kind: str) -> Iterator[Tuple[int, str, Dict[str, Any]]]:
    """The line number, custom_id and record of each line of a Batch ``kind`` file."""
    lines, handle = _binary_lines(path, "sources")
    try:
        for number, raw in enumerate(lines, start=1):
            text = _decode(raw, path, number, first=number == 1)
            if not text.strip():
                continue
            data = _json(text, path, number)
            if not isinstance(data, dict) or not isinstance(data.get("custom_id"), str):
                raise TranscriptError(path, number, f"not an OpenAI Batch {kind} line: it has no 'custom_id' string")
            if kind == "output" and not _is_batch_output(data):
                raise TranscriptError(path, number, "not an OpenAI Batch output line: it needs 'response' or 'error'")
            yield number, data["custom_id"], data
    finally:
        if handle is not None:
            handle.close()


def _batch_conversations(request_path: str, output_paths: List[str], fmt: str, what: str) -> Iterator[Transcript]:
    """One conversation per custom_id of a Batch request file, in its order: the request's
    messages and the reply its output files give. An output line whose custom_id no request has
    is an error; a failed request (an ``error`` line, or a status other than 200) and a request
    with no output line are skipped, with a :class:`ConversionWarning` saying so."""
    answers: Dict[str, Tuple[str, int, Dict[str, Any]]] = {}
    for output in output_paths:
        for number, cid, data in _batch_lines(output, "output"):
            if cid in answers:
                raise TranscriptError(output, number, f"custom_id {describe(cid)} is answered twice "
                                                      f"(first at {where_label(answers[cid][0])} line {answers[cid][1]})")
            answers[cid] = (output, number, data)
    names = ", ".join(os.path.basename(output) for output in output_paths)
    label = f"openai Batch request JSONL and its output {names}, one conversation per line"
    unanswered: List[str] = []
    for number, cid, request in _batch_lines(request_path, "request"):
        answer = answers.pop(cid, None)
        if answer is None:
            unanswered.append(cid)
            continue
        output, out_number, data = answer
        response = data.get("response")
        status = response.get("status_code", 200) if isinstance(response, dict) else None
        if data.get("error") is not None or status != 200:
            warn_caller(f"{where_label(output)}: line {out_number}: custom_id {describe(cid)} failed in the Batch "
                        f"({_batch_failure(data, status)}); its conversation was skipped")
            continue
        try:
            _reply(response, "'response'")
        except ValueError as error:
            raise TranscriptError(output, out_number, str(error)) from None
        record = {**request, "response": response}
        messages, _ = _read(record, fmt, request_path, number)
        ids = _ids_of(json.dumps(request, sort_keys=True))
        ids.update(json.dumps(response, sort_keys=True).encode())
        yield _transcript(f"{_stem(request_path)}:{cid}", messages, label, request_path, number, ids, record)
    if answers:
        cid, (output, out_number, _) = next(iter(answers.items()))
        raise TranscriptError(output, out_number, f"custom_id {describe(cid)} has no request in "
                                                  f"{where_label(request_path)}")
    if unanswered:
        shown = ", ".join(map(describe, unanswered[:3])) + (", ..." if len(unanswered) > 3 else "")
        warn_caller(f"{where_label(request_path)}: {len(unanswered)} request(s) have no line in {names} "
                    f"(custom_id {shown}); skipped")


def _batch_failure(data: Dict[str, Any], status: Any) -> str:
    """What a failed Batch line says of its failure: the error's code and message, or the status."""
    error = data.get("error")
    if not isinstance(error, dict):
        response = data.get("response")
        body = response.get("body") if isinstance(response, dict) else None
        error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return ": ".join(str(error[k]) for k in ("code", "message") if error.get(k) is not None) or "an error"
    return f"status {status}" if status is not None else "no response"


#: The file names a folder's transcripts have (each also gzipped, with ``.gz`` after it).
FOLDER_SUFFIXES = (".json", ".jsonl", ".traj")


def _folder_files(folder: Union[str, "os.PathLike[str]"]) -> List[Path]:
    """The transcript files of a folder (by suffix), in name order. A link among them that leads
    nowhere (broken, or a loop) is kept, so opening it says so; a folder holding none is an
    error that says what it holds instead (subfolders are not searched)."""
    children = sorted(Path(folder).iterdir())
    files = [child for child in children if _transcript_suffix(child)
             and (child.is_file() or child.is_symlink() and not child.exists())]
    if not files:
        raise TranscriptError(os.fspath(folder), None, f"no .json, .jsonl or .traj file (or .gz of one) in this folder "
                                                       f"({_folder_contents(children)})")
    return files


def _transcript_suffix(path: Path) -> bool:
    suffix = Path(path.stem).suffix if path.suffix == ".gz" else path.suffix
    return suffix in FOLDER_SUFFIXES


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
    if name.endswith(".gz") and "." in name[:-3].lstrip("."):
        name = name[:-3]
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
    if isinstance(first, list) or isinstance(first, dict) and not _is_one_message(first):
        # A whole conversation on the first line: the file is that one document, or JSON Lines
        # of conversations, streamed.
        rest = _record_lines(lines, path, first_number)
        second = next(rest, None)
        if second is None:
            messages, used = _read(first, fmt, path, None)
            yield _transcript(_stem(path), messages, _label(used, "JSON"), path, None, _ids_of(first_text), first)
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
    yield _transcript(_stem(path), messages, _label(used, "JSON"), path, None, _ids_of(body), data)


def _is_one_message(item: Dict[str, Any]) -> bool:
    """Whether a JSON Lines line is one message (or OpenHands event, or ShareGPT turn), not a
    whole conversation."""
    return "role" in item or "action" in item or "observation" in item or "from" in item and "value" in item


def _ids_of(text: str) -> "hashlib.blake2b":
    """The hash that names a conversation's messages: of the text it was read from (fed more
    text with ``update``; see :func:`_transcript`)."""
    return hashlib.blake2b(text.encode(), digest_size=8)


def _transcript(name: str, messages: List[Message], fmt: str, path: str, line: Optional[int],
                ids: "hashlib.blake2b", record: Any = None) -> Transcript:
    # A message the file gives no id gets one from the conversation's text and its position:
    # made ids are random per process, and they reach what a model reads (compress's hint), so
    # reading the same file must give the same ids for a replay to give the same figures.
    give_ids(messages, f"msg_{ids.hexdigest()}")
    outcome, usage = _facts(record)
    return Transcript(name, messages, fmt, path, line, outcome, usage)


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
        (str(data[k]) for k in ("instance_id", "custom_id", "id", "name") if isinstance(data.get(k), (str, int))), None)
    name = f"{_stem(path)}:{label or number}"
    return _transcript(name, messages, _label(used, "JSONL, one conversation per line"), path, number, _ids_of(text), data)


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
