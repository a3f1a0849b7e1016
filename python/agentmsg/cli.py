"""The ``agentmsg`` command line: stats, count, trim, convert, parse and the pruning workbench.

Every command reads transcripts through :func:`agentmsg.iter_transcripts` (our JSON, OpenAI,
Anthropic, SWE-agent ``.traj``; JSON, JSON Lines of messages, or JSON Lines of whole
conversations, streamed in constant memory); ``-`` is stdin (and stdout for ``-o``). Exit status:
0 on success, 1 on bad input (one line on stderr, never a traceback), 2 on a usage error.

    $ agentmsg stats
    $ agentmsg convert chat.json --to anthropic -o chat.anthropic.json
    $ agentmsg workbench tests/data/swe-agent-trajectories --plot wb.png
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import importlib.util
import json
import os
import sys
import warnings
from importlib import resources
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, TextIO, Union

from . import __version__
from ._checks import check_calls, describe, utf8_json, utf8_text
from .convert import (
    to_agentscope, to_anthropic, to_arcaelas, to_bedrock, to_dashscope, to_db_rows, to_forge, to_openai,
    to_wolo,
)
from .counting.chat_template import ChatTemplate
from .counting.chat_tokens import ChatTokenCounter, count_chat_tokens
from .counting.encoding import TOKEN_ENCODINGS, resolve_encoding
from .counting.request import count_request_tokens
from .counting.tokenizer import Tokenizer
from .counting.tokens import ENCODINGS, count_message_tokens
from .errors import AgentMsgError, EncodingError, MissingDependencyError, TranscriptError
from .history.conversation import conversation_stats
from .history.trim import trim
from .model.message import Message, Role
from .parsing import DIALECTS, StreamParser, parse
from .workbench import run_workbench, write_html
from .workbench.report import progress_bar
from .workbench.cost import PRICES, PRICES_DATE, Prices
from .workbench.strategies import DEFAULT_BUDGETS, DEFAULT_STRATEGIES, builtin_strategies, strategy_of
from .workbench.transcripts import TRANSCRIPT_FORMATS, Transcript, iter_transcripts

__all__ = ["main", "load_sample"]

SAMPLE = "sample_transcript.json"

def _model_encoding(model: str) -> str:
    """The encoding of ``--model``, as tiktoken maps model names (:func:`agentmsg.encoding_for_model`)."""
    try:
        return resolve_encoding(model)
    except EncodingError:
        raise EncodingError(
            f"unknown model {describe(model)}: give --encoding, or a model name tiktoken maps to an encoding"
        ) from None


def load_sample() -> List[Message]:
    """The sample transcript shipped in the package (Forge's conversation flow).

    >>> len(load_sample()) > 0
    True
    """
    return _sample().messages


def _sample() -> Transcript:
    # One name per joinpath: Python 3.10's Traversable takes no more.
    with resources.files("agentmsg").joinpath("data").joinpath(SAMPLE).open("rb") as handle:
        found = next(iter_transcripts(handle))
    return dataclasses.replace(found, name=SAMPLE, source=SAMPLE, format=f"sample shipped with agentmsg, {found.format}")


# -- input and output ------------------------------------------------------------------------------


def _transcripts(files: Sequence[str], fmt: str = "auto", progress: bool = True) -> Iterator[Transcript]:
    """The transcripts of ``files`` (``-`` is stdin), streamed, with a progress bar on stderr
    for long runs when it is a terminal."""
    bar = progress_bar(None, None if progress else False, "conversation")
    try:
        # All files in one call, so a Batch output file finds its request file among them.
        for transcript in iter_transcripts([sys.stdin if name == "-" else name for name in files], fmt):
            yield transcript
            bar.update()
    finally:
        bar.close()


class _Output:
    """Where results go: stdout for ``-`` (or no ``-o``), else a file opened on first write."""

    def __init__(self, path: Optional[str]) -> None:
        self.path = path
        self._handle: Optional[TextIO] = None

    def write(self, text: str) -> None:
        handle = self._handle
        if handle is None:
            path = self.path
            handle = self._handle = sys.stdout if path is None or path == "-" else open(path, "w", encoding="utf-8")
        handle.write(text)

    def close(self) -> None:
        if self._handle is not None and self._handle is not sys.stdout:
            self._handle.close()


def _plain(value: Any) -> Any:
    """JSON for what converters return besides dicts: dataclasses (Wolo) and bytes (Bedrock media)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _dumps(value: Any, indent: Optional[int] = None) -> str:
    """JSON text UTF-8 can carry, as ``Message.to_json`` writes it."""
    return utf8_json(value, indent=indent, default=_plain)


def _write_documents(documents: Iterable[Any], output: _Output) -> None:
    """One document as indented JSON; two or more as JSON Lines, streamed one per line."""
    documents = iter(documents)
    first = next(documents, None)
    if first is None:
        return
    second = next(documents, None)
    if second is None:
        output.write(_dumps(first, indent=2) + "\n")
        return
    output.write(_dumps(first) + "\n")
    output.write(_dumps(second) + "\n")
    for document in documents:
        output.write(_dumps(document) + "\n")


def _pair(convert: Callable[[List[Message]], Any]) -> Callable[[List[Message]], Any]:
    def as_request(messages: List[Message]) -> Dict[str, Any]:
        system, turns = convert(messages)
        return {"system": system, "messages": turns}

    return as_request


#: ``convert --to`` targets: each turns a conversation into one JSON document.
TARGETS: Dict[str, Callable[[List[Message]], Any]] = {
    "agentmsg": lambda messages: [m.to_dict() for m in messages],
    "openai": to_openai,
    "anthropic": _pair(to_anthropic),
    "bedrock": _pair(to_bedrock),
    "dashscope": to_dashscope,
    "forge": to_forge,
    "wolo": to_wolo,
    "suna": to_db_rows,
    "agentscope": to_agentscope,
    "arcaelas": to_arcaelas,
}


# -- the commands ------------------------------------------------------------------------------------


def _stats_block(transcript: Transcript, as_json: bool) -> str:
    messages = transcript.messages
    stats = conversation_stats(messages)
    # Exact counts in the encodings of OpenAI's chat models (o200k_harmony, gpt-oss's, counts text
    # as o200k_base does), OpenAI chat format.
    exact = {name: count_message_tokens(messages, encoding=name) for name in TOKEN_ENCODINGS[:2]}
    if as_json:
        return _dumps({"name": transcript.name, "source": transcript.source, "format": transcript.format,
                       **stats.__dict__, "prompt_tokens": exact})
    lines = [f"{utf8_text(transcript.source)}{'' if transcript.line is None else f' line {transcript.line}'} "
             f"({utf8_text(transcript.format)}): {stats.total_messages} messages, {stats.total_chars} characters, "
             f"{stats.estimated_tokens} estimated tokens",
             f"{'role':<10} {'messages':>9} {'characters':>11} {'est. tokens':>12}"]
    for role in Role:
        r = role.value
        lines.append(f"{r:<10} {stats.by_role[r]:>9} {stats.chars_by_role[r]:>11} {stats.tokens_by_role[r]:>12}")
    lines.append(f"{'total':<10} {stats.total_messages:>9} {stats.total_chars:>11} {stats.estimated_tokens:>12}")
    lines.append(f"tool calls: {stats.tool_calls}, tool results: {stats.tool_results}")
    counts = ", ".join(f"{count} ({name})" for name, count in exact.items())
    lines.append(f"exact prompt tokens as an OpenAI chat request: {counts}")
    return "\n".join(lines)


def _stats(args: argparse.Namespace) -> int:
    found = _transcripts(args.files, args.format) if args.files else iter([_sample()])
    output = _Output(None)
    for number, transcript in enumerate(found):
        if number and not args.json:
            output.write("\n")
        output.write(_stats_block(transcript, args.json) + "\n")
    return 0


def _encoding(args: argparse.Namespace) -> str:
    """The encoding ``--encoding`` names, or the one of ``--model``."""
    return _model_encoding(args.model) if args.model else str(args.encoding)


def _count_requests(args: argparse.Namespace) -> int:
    """``count --request``: each FILE is one request body (JSON), counted whole."""
    for name in args.files:
        text = _read_text(name)
        try:
            request = json.loads(text)
        except ValueError as error:
            raise TranscriptError(name, getattr(error, "lineno", None), f"not JSON ({getattr(error, 'msg', error)})") from None
        count = count_request_tokens(request, model=args.model)
        if args.json:
            print(_dumps({"name": name, **count.as_dict()}))
            continue
        how = "exact" if count.exact else f"estimate, {count.low}-{'?' if count.high is None else count.high}"
        print(f"{count.total}\t{how}\t{utf8_text(name)}")
        for part, tokens in count.parts.items():
            print(f"  {part}: {tokens}{' (estimate)' if part in count.estimated else ''}")
        for note in count.notes:
            print(f"  note: {utf8_text(note)}")
    return 0


def _chat_model(args: argparse.Namespace) -> Optional[ChatTokenCounter]:
    """The open model of ``--tokenizer`` and ``--template`` (given together) as a counter, or None."""
    if (args.tokenizer is None) != (args.template is None):
        raise EncodingError("--tokenizer and --template go together: a model's tokenizer and its chat template")
    if args.tokenizer is None:
        return None
    return ChatTokenCounter(Tokenizer.from_file(args.tokenizer), ChatTemplate.from_file(args.template))


def _model_label(args: argparse.Namespace) -> str:
    return f"{utf8_text(args.template)} + {utf8_text(args.tokenizer)}"


def _count(args: argparse.Namespace) -> int:
    if args.request:
        return _count_requests(args)
    model = _chat_model(args)
    encoding = _encoding(args) if model is None else _model_label(args)
    total = conversations = 0
    for transcript in _transcripts(args.files, args.format):
        if model is not None:
            tokens = count_chat_tokens(transcript.messages, tokenizer=model.tokenizer, template=model.template)
        else:
            tokens = count_message_tokens(transcript.messages, encoding=encoding)
        total += tokens
        conversations += 1
        if args.json:
            print(_dumps({"name": transcript.name, "source": transcript.source, "messages": len(transcript.messages),
                          "prompt_tokens": tokens, "encoding": encoding}))
        else:
            print(f"{tokens}\t{utf8_text(transcript.name)}")
    if conversations > 1 and not args.json:
        print(f"{total}\ttotal ({conversations} conversations, {encoding})")
    return 0


def _written(args: argparse.Namespace, documents: Iterable[Any]) -> int:
    output = _Output(args.output)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _write_documents(documents, output)
        for warning in caught:  # what the target format cannot carry, one line each
            print(f"agentmsg: warning: {warning.message}", file=sys.stderr)
    finally:
        output.close()
    return 0


def _target(args: argparse.Namespace, transcript: Transcript) -> Callable[[List[Message]], Any]:
    """The writer of ``--to``, or of the transcript's own format (its detected format's first
    word) when it has one; else OpenAI's, with a warning."""
    if args.to is not None:
        return TARGETS[args.to]
    fmt = transcript.format.split()[0]
    if fmt not in TARGETS:
        print(f"agentmsg: warning: {utf8_text(transcript.name)}: {fmt} is read, not written; written as openai "
              f"(choose with --to)", file=sys.stderr)
        fmt = "openai"
    return TARGETS[fmt]


def _trim(args: argparse.Namespace) -> int:
    model = _chat_model(args)
    # In a model's tokens the budget is the whole request: its fixed part is taken off first.
    counter: Union[str, ChatTokenCounter] = _encoding(args) if model is None else model
    budget = args.max_tokens if model is None else max(args.max_tokens - model.base, 0)
    return _written(args, (
        _target(args, t)(trim(t.messages, budget, counter=counter, start_on=args.start_on).messages)
        for t in _transcripts(args.files, args.format)))


def _convert(args: argparse.Namespace) -> int:
    return _written(args, (_target(args, t)(t.messages) for t in _transcripts(args.files, args.format)))


def _read_text(name: str) -> str:
    if name == "-":
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8", "surrogatepass")
    else:
        with open(name, "rb") as handle:
            data = handle.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise TranscriptError(name, line, f"not UTF-8 text (byte 0x{data[error.start]:02x})") from None


def _event_dict(event: Any) -> Dict[str, Any]:
    data: Dict[str, Any] = {"event": type(event).__name__}
    for name in ("index", "text", "fragment", "complete"):
        if hasattr(event, name):
            data[name] = getattr(event, name)
    if hasattr(event, "call"):
        data["call"] = None if event.call is None else dataclasses.asdict(event.call)
        data["error"] = None if event.error is None else dataclasses.asdict(event.error)
    return data


def _parse_options(args: argparse.Namespace) -> Dict[str, Any]:
    """The parser options of ``parse``'s flags; ``--tools`` names a JSON file of tool definitions."""
    options: Dict[str, Any] = {"dialect": args.dialect, "strict": args.strict}
    if args.start_in_thinking is not None:
        options["start_in_thinking"] = args.start_in_thinking
    if args.tools is not None:
        text = _read_text(args.tools)
        try:
            options["tools"] = json.loads(text)
        except ValueError as error:
            raise TranscriptError(args.tools, getattr(error, "lineno", None), f"not JSON ({getattr(error, 'msg', error)})") from None
    return options


def _parse(args: argparse.Namespace) -> int:
    options = _parse_options(args)
    if args.stream:
        parser = StreamParser(**options)
        stream = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")
        try:
            while True:
                chunk = stream.read(args.chunk_size) if stream is not sys.stdin else _stdin_chunk(args.chunk_size)
                if not chunk:
                    break
                for event in parser.feed(chunk):
                    print(_dumps(_event_dict(event)), flush=True)
            for event in parser.finish():
                print(_dumps(_event_dict(event)), flush=True)
        except UnicodeDecodeError as error:
            raise TranscriptError(args.file, None, f"not UTF-8 text ({error.reason})") from None
        finally:
            if stream is not sys.stdin:
                stream.close()
        return 0
    result = parse(_read_text(args.file), **options)
    print(_dumps({
        "text": result.text,
        "thinking": result.thinking,
        "tool_calls": [dataclasses.asdict(c) for c in result.tool_calls],
        "errors": [dataclasses.asdict(e) for e in result.errors],
        "incomplete_thinking": result.incomplete_thinking,
    }, indent=2))
    return 0


def _stdin_chunk(size: int) -> str:
    """What stdin has now (up to ``size`` characters): a pipe's data as it arrives, not at EOF."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None or not hasattr(buffer, "read1"):
        return sys.stdin.read(size)
    data: bytes = buffer.read1(size)
    # A UTF-8 character may straddle two reads: complete it before decoding.
    while data and _incomplete_utf8(data):
        more = buffer.read(1)
        if not more:
            break
        data += more
    return data.decode("utf-8")


def _incomplete_utf8(data: bytes) -> bool:
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # the start of the last character
            needed = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
            return needed > back
    return False


def _workbench(args: argparse.Namespace) -> int:
    if args.plot and importlib.util.find_spec("matplotlib") is None:  # say so before a long run
        raise MissingDependencyError("--plot needs matplotlib: pip install 'agentmsg[plot]'")
    strategies = args.strategy or list(DEFAULT_STRATEGIES)
    shows = args.show or []
    model = _chat_model(args)
    report = run_workbench(_transcripts(args.files, args.format, progress=False), strategies, args.budget or DEFAULT_BUDGETS,
                           encoding=_encoding(args) if model is None else model, prices=args.prices,
                           keep_prompts=True if args.html else {name for name, _ in shows},
                           progress=args.progress)
    to_stdout = "-" in (args.json, args.csv)  # machine output replaces the table
    for name, call in shows:
        rows = [r for r in report.rows if r.transcript == name]
        if not rows:
            known = ", ".join(dict.fromkeys(r.transcript for r in report.rows))
            raise TranscriptError(name, None, f"--show names no transcript read; the transcripts: {known}")
        if not 1 <= call <= rows[0].turns:
            raise TranscriptError(name, None, f"--show asks for model call {call}; this transcript has "
                                              f"{rows[0].turns} (numbered from 1)")
        for row in rows:
            assert row.prompts is not None  # kept for this transcript
            print(f"== {utf8_text(name)}: {utf8_text(row.strategy)} at {row.budget} tokens ==\n"
                  f"{row.prompts[call - 1].render()}\n", file=sys.stderr if to_stdout else sys.stdout)
    if args.per_transcript and not to_stdout:
        for name in dict.fromkeys(r.transcript for r in report.rows):
            rows = [r for r in report.rows if r.transcript == name]
            recorded = ", ".join(f"{key} {utf8_text(str(value))}" for key, value in rows[0].outcome.items())
            print(f"{utf8_text(name)}{f' ({recorded})' if recorded else ''}:\n{report.table(rows, timings=args.timings)}\n")
        print("all transcripts:")
    if not to_stdout:
        print(report.table(timings=args.timings))
    if args.json:
        report.write_json(args.json, timings=args.timings)
    if args.csv:
        report.write_csv(args.csv, timings=args.timings)
    if args.plot:
        report.plot(args.plot)
    if args.html:
        write_html(report, args.html)
    return 0


# -- the parser ------------------------------------------------------------------------------------------


def _whole_number(text: str, what: str, least: int, most: int) -> int:
    """An integer option in [least, most]; anything else is argparse's usage error (exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of {what}: {describe(text)}") from None
    if not least <= value <= most:
        raise argparse.ArgumentTypeError(f"must be from {least} to {most} {what}, got {describe(text)}")
    return value


def _budget(text: str) -> int:
    # The library's bound: a token budget is below 2**64.
    return _whole_number(text, "tokens", 0, 2**64 - 1)


# A chunk is read whole into memory (stdin's read1 allocates the size asked): a stream of
# larger chunks is no stream.
MAX_CHUNK_SIZE = 16 * 1024 * 1024


def _chunk_size(text: str) -> int:
    return _whole_number(text, "characters", 1, MAX_CHUNK_SIZE)


def _strategy_name(text: str) -> str:
    if text.split("+")[0] == "langchain" and importlib.util.find_spec("langchain_core") is None:
        raise argparse.ArgumentTypeError("the langchain strategy needs langchain-core: pip install 'agentmsg[langchain]'")
    try:
        return strategy_of(text, builtin_strategies()).name
    except AgentMsgError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _prices(text: str) -> Prices:
    """A name in PRICES, or INPUT/CACHED/WRITE dollars per million tokens."""
    if text in PRICES:
        return PRICES[text]
    parts = text.split("/")
    try:
        numbers = [float(part) for part in parts]
        if len(numbers) != 3:
            raise ValueError(text)
        return Prices(text, input=numbers[0], cached_input=numbers[1], cache_write=numbers[2])
    except (ValueError, AgentMsgError):
        raise argparse.ArgumentTypeError(
            f"not a model of known prices ({', '.join(PRICES)}) nor INPUT/CACHED/WRITE dollars per million "
            f"tokens: {describe(text)}") from None


def _show(text: str) -> "tuple[str, int]":
    name, colon, call = text.rpartition(":")
    if not colon or not name:
        raise argparse.ArgumentTypeError(f"expected TRANSCRIPT:CALL (a transcript's name and a model call from 1), "
                                         f"not {describe(text)}")
    return name, _whole_number(call, "model calls", 1, 2**63 - 1)


def _command(commands: Any, name: str, summary: str, example: str, run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    sub = commands.add_parser(name, help=summary, description=summary, epilog=f"example:\n  {example}",
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.set_defaults(run=run)
    parser: argparse.ArgumentParser = sub
    return parser


class _Deprecated(argparse.Action):
    """An option's old name, kept for one release: it sets what the new name sets, with a
    warning on stderr, and is not listed by --help."""

    def __init__(self, option_strings: Sequence[str], dest: str, use: str = "", **kwargs: Any) -> None:
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.use = use

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        print(f"agentmsg: warning: {option_string} is deprecated and will be removed in the next release: "
              f"use {self.use}", file=sys.stderr)
        setattr(namespace, self.dest, values)


FORMAT_CHOICES = ("auto", *TRANSCRIPT_FORMATS)
ENCODING_CHOICES = tuple(dict.fromkeys(("estimate", *ENCODINGS)))


def _inputs(sub: argparse.ArgumentParser, required: bool = True) -> None:
    sub.add_argument("files", nargs="+" if required else "*", metavar="FILE",
                     help="transcript files or folders (- is stdin): JSON, JSON Lines, .traj, each also .gz")
    sub.add_argument("--format", default="auto", choices=FORMAT_CHOICES, metavar="FORMAT",
                     help=f"the input's format: {', '.join(FORMAT_CHOICES)} (default: detected)")


def _counting(sub: argparse.ArgumentParser) -> None:
    """--encoding or --model: how tokens are counted, the same in every command."""
    how = sub.add_mutually_exclusive_group()
    how.add_argument("--encoding", default="o200k_base", choices=ENCODING_CHOICES, metavar="ENCODING",
                     help="how tokens are counted: o200k_base (the default), cl100k_base, o200k_harmony (gpt-oss), "
                          "or estimate (4 characters a token)")
    how.add_argument("--model", help="an OpenAI model name, e.g. gpt-4o or gpt-4 (picks the encoding)")


def _output_format(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--to", choices=sorted(TARGETS), metavar="FORMAT",
                     help=f"the output format: {', '.join(sorted(TARGETS))} (default: the input's, when it can be "
                          f"written; else OpenAI's)")
    sub.add_argument("-o", "--output", help="output file (default: stdout); JSON Lines for many conversations")


def _chat_model_options(sub: argparse.ArgumentParser, meaning: str) -> None:
    sub.add_argument("--tokenizer", metavar="PATH",
                     help="count in an open model's tokens: its tokenizer.json, or a model directory (with --template)")
    sub.add_argument("--template", metavar="PATH",
                     help=f"the model's chat template: a .jinja file, a tokenizer_config.json or a model directory; "
                          f"{meaning}")


def _parser() -> argparse.ArgumentParser:

    parser = argparse.ArgumentParser(prog="agentmsg", description=__doc__.splitlines()[0],
                                     epilog="example:\n  agentmsg stats chat.jsonl\n"
                                            "run 'agentmsg COMMAND --help' for each command's options",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"agentmsg {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    stats = _command(commands, "stats", "messages, characters and estimated tokens by role, and the exact prompt "
                     "tokens, of each conversation (the sample transcript without FILE)",
                     "agentmsg stats tests/data/swe-agent-trajectories/gpt4_pydicom.traj", _stats)
    _inputs(stats, required=False)
    stats.add_argument("--json", action="store_true", help="one JSON object per conversation")

    count = _command(commands, "count", "exact prompt tokens of each conversation as an OpenAI chat request",
                     "agentmsg count chats.jsonl --model gpt-4o", _count)
    _inputs(count)
    _counting(count)
    _chat_model_options(count, "the count is the whole rendered request with the generation prompt")
    count.add_argument("--json", action="store_true", help="one JSON object per conversation")
    count.add_argument("--request", action="store_true",
                       help="each FILE is one request body (OpenAI Chat Completions or Responses, Anthropic, Gemini): "
                            "count all of it (tools, images, schemas) and say what is estimated")

    trimmed = _command(commands, "trim", "keep the newest messages of each conversation that fit a token budget "
                       "(system messages and tool pairs kept) and write them",
                       "agentmsg trim chat.json --max-tokens 8000 --to openai -o short.json", _trim)
    _inputs(trimmed)
    trimmed.add_argument("--max-tokens", type=_budget, required=True, help="the token budget")
    _counting(trimmed)
    trimmed.add_argument("--counter", dest="encoding", choices=ENCODING_CHOICES, action=_Deprecated, use="--encoding")
    trimmed.add_argument("--start-on", choices=("user",), help="make the kept run start on a user message")
    _chat_model_options(trimmed, "the budget is the whole request's (its fixed part, ChatTokenCounter.base, "
                                 "taken off first)")
    _output_format(trimmed)

    converted = _command(commands, "convert", "convert conversations to a provider or framework format",
                         "agentmsg convert run.traj --to anthropic -o run.anthropic.json", _convert)
    _inputs(converted)
    converted.add_argument("--from", dest="format", choices=FORMAT_CHOICES, action=_Deprecated, use="--format")
    _output_format(converted)

    parsed = _command(commands, "parse", "parse model text (thinking, tool calls, text) into JSON",
                      "agentmsg parse - < reply.txt", _parse)
    parsed.add_argument("file", nargs="?", default="-", help="the model text (default: - for stdin)")
    parsed.add_argument("--stream", action="store_true",
                        help="read incrementally and print each stream event as a JSON line as it is found")
    parsed.add_argument("--chunk-size", type=_chunk_size, default=4096,
                        help=f"characters per read with --stream, 1 to {MAX_CHUNK_SIZE} (default: 4096)")
    parsed.add_argument("--dialect", choices=list(DIALECTS), default="forge", metavar="DIALECT",
                        help="how the model writes calls and reasoning: forge (the default), "
                             + ", ".join(name for name in DIALECTS if name != "forge"))
    parsed.add_argument("--tools", metavar="FILE",
                        help="a JSON file of OpenAI tool definitions: types the values a model writes as text")
    parsed.add_argument("--start-in-thinking", action=argparse.BooleanOptionalAction, default=None,
                        help="the text starts inside reasoning the prompt opened (default: detected, "
                             "and no for --stream)")
    parsed.add_argument("--strict", action="store_true",
                        help="read only calls written as the chat template writes them")

    bench = _command(commands, "workbench", "replay transcripts turn by turn under each pruning strategy and budget "
                     "and compare tokens, validity, prefix stability and losses",
                     "agentmsg workbench tests/data/swe-agent-trajectories --budget 4000 --budget 8000 "
                     "--json wb.json --csv wb.csv --plot wb.png", _workbench)
    _inputs(bench)
    bench.add_argument("--strategy", action="append", type=_strategy_name, metavar="NAME",
                       help=f"one of {', '.join(sorted(builtin_strategies()))}, or NAME+clearN to prune only "
                            f"past the budget, to N%% below it; repeat for several (default: all but "
                            f"memory-compactor and langchain)")
    bench.add_argument("--budget", action="append", type=_budget,
                       help=f"token budget; repeat for several (default: {', '.join(map(str, DEFAULT_BUDGETS))})")
    _counting(bench)
    _chat_model_options(bench, "each budget is the whole request's, as for trim")
    bench.add_argument("--prices", type=_prices, default=PRICES["claude-sonnet-4.5"], metavar="PRICES",
                       help=f"the input prices of the costs: one of {', '.join(PRICES)} (published prices read on "
                            f"{PRICES_DATE}), or INPUT/CACHED/WRITE dollars per million tokens "
                            f"(default: claude-sonnet-4.5)")
    bench.add_argument("--show", action="append", type=_show, metavar="TRANSCRIPT:CALL",
                       help="print the prompt each strategy and budget sent at this model call (from 1) of this "
                            "transcript, with what was dropped, masked or summarized since the previous call; "
                            "repeat for several")
    bench.add_argument("--per-transcript", action="store_true", help="also print a table per transcript")
    bench.add_argument("--json", metavar="PATH", help="write every measure as JSON (- for stdout, instead of the table)")
    bench.add_argument("--csv", metavar="PATH", help="write every measure as CSV (- for stdout, instead of the table)")
    bench.add_argument("--plot", metavar="PATH", help="write a PNG plot (needs agentmsg[plot])")
    bench.add_argument("--html", metavar="PATH", help="write a self-contained HTML report: the table, charts per "
                                                      "measure and budget, and each call's prompt per strategy")
    bench.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="progress bar on stderr (default: when stderr is a terminal)")
    bench.add_argument("--timings", action=argparse.BooleanOptionalAction, default=True,
                       help="the time columns (default: on); --no-timings leaves out the only measures that "
                            "differ between runs, so the same input gives the same output byte for byte")
    return parser


def _show_warning(message: Union[Warning, str], *_: Any, **__: Any) -> None:
    print(f"agentmsg: warning: {message}", file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``agentmsg`` console script; returns the exit status (0 success, 1 bad
    input, 2 usage error).

    >>> main(["stats"])  # doctest: +ELLIPSIS
    sample_transcript.json ...
    0
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:  # --help, --version and usage errors
        return stop.code if isinstance(stop.code, int) else 2
    try:
        with warnings.catch_warnings():  # a warning (e.g. a skipped Batch request) is one line on stderr
            warnings.showwarning = _show_warning
            status: int = args.run(args)
        return status
    except (AgentMsgError, OSError, ValueError, RecursionError, MemoryError) as error:
        if isinstance(error, BrokenPipeError):  # e.g. `agentmsg convert ... | head`: stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        where = f"{error.filename}: " if isinstance(error, OSError) and error.filename else ""
        text = f"{where}{reason}".splitlines()[0] if f"{where}{reason}" else type(error).__name__
        print(f"agentmsg: error: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())


if __name__ == "__main__":
    sys.exit(main())
