"""The native binding under hostile input: every bad value ends in a typed error that says what
is wrong and where, in bounded time and space, and never crashes the process.

Arrow arrays whose structs lie (lengths and offsets past their buffers, wrong buffer counts, null
counts that do not add up) are built in ``tests/arrow_structs.py`` and run in a subprocess each:
one that still crashed would fail its test with the exit status instead of killing pytest.
"""

from __future__ import annotations

import copy
import ctypes
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agentmsg
from agentmsg import EncodingError, MessageError, MessageTypeError, _core, arrow, dialects

TESTS = Path(__file__).resolve().parent
DIALECT_NAMES = ", ".join(agentmsg.DIALECTS)
# An error's text stays this short whatever the input (as in test_hostile_api).
MAX_ERROR_CHARS = 600


def run_python(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = dict(os.environ if env is None else env, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, *args], env=environment, capture_output=True, text=True, timeout=120)


# -- Arrow: structs that lie -------------------------------------------------------------------

PAST_THE_BUFFERS = "more than the producer's memory holds there: the array's length, offset or offsets exceed its buffers"
ARROW_CASES = {
    "length past the buffers": f"MessageError: texts: the offsets would take 4398046511108 bytes, {PAST_THE_BUFFERS}",
    "large_string offsets near 2**63":
        "MessageError: texts: the data would end 9223372036854775800 bytes past its start, past the end of memory",
    "large_string data past the buffers":
        f"MessageError: texts: the data would take 4611686018427387904 bytes, {PAST_THE_BUFFERS}",
    "offset past what memory holds":
        "MessageError: texts: offset (4611686018427387904) + length (2) is more rows than memory can hold",
    "negative length": "MessageError: texts: length (-1) and offset (0) must be at least 0",
    "null count past the length": "MessageError: texts: null_count (5) must be -1 (unknown) or from 0 to the length (2)",
    "null count without a bitmap": "MessageError: texts: null_count is 1 but there is no validity bitmap",
    "null count against the bitmap":
        "MessageError: texts: null_count is 0 but the validity bitmap marks 1 of the 2 rows null",
    "two buffers": "MessageError: texts: a string array has 3 buffers, not 2",
    "a child": "MessageError: texts: a string array has no children, not 1",
    "offsets that run backwards": "MessageError: texts: the offsets must run forward from at least 0, not from 5 to 0",
    "a row's offsets that run backwards": "MessageError: texts[0]: offsets 2..0 run backwards",
    "a row's offsets outside the data": "MessageError: texts[0]: offsets 0..5 outside the data (bytes 0..3)",
    "a negative first offset": "MessageError: texts: the offsets must run forward from at least 0, not from -1 to 3",
    "misaligned offsets": "MessageError: texts: the offsets buffer is not aligned to 4 bytes",
    "a null offsets buffer": "MessageError: texts: the offsets buffer is null",
    "a null data buffer": "MessageError: texts: the data buffer is null",
    "views: two buffers": "MessageError: texts: a string_view array has 3 or more buffers, not 2",
    "views: length past the buffers": f"MessageError: texts: the views would take 17592186044416 bytes, {PAST_THE_BUFFERS}",
    "views: a negative size": "MessageError: texts: data buffer 0 has a negative size (-1)",
    "views: a size past the buffer":
        f"MessageError: texts: the data buffer 0 would take 1099511627776 bytes, {PAST_THE_BUFFERS}",
    "capsules swapped": "MessageTypeError: texts.__arrow_c_array__() must return the schema capsule first, "
                        "then the array capsule; it returned them the other way round",
    "schema released": "MessageError: texts: the Arrow schema was already released",
    "no format": "MessageError: texts: the Arrow schema has no format",
}


def test_every_arrow_case_is_checked():
    pytest.importorskip("pyarrow")
    import arrow_structs

    assert set(arrow_structs.CASES) == set(ARROW_CASES)


@pytest.mark.parametrize("case", ARROW_CASES)
def test_a_lying_arrow_array_is_refused_before_anything_reads_it(case):
    pytest.importorskip("pyarrow")
    done = run_python(str(TESTS / "arrow_structs.py"), case)
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-2000:]}"
    # Each of count_tokens_arrow, estimate_tokens_arrow, parse_arrow; no panic text either.
    assert done.stdout.splitlines() == [ARROW_CASES[case]] * 3
    assert done.stderr == ""


def test_offsets_past_a_pyarrow_buffer_are_refused_by_pyarrow_s_check():
    pa = pytest.importorskip("pyarrow")
    texts = pa.array(["ab"])
    # (100, 101) over a data buffer of 2 bytes: the C data interface cannot tell, pyarrow can.
    ctypes.memmove(texts.buffers()[1].address, (100).to_bytes(4, "little") + (101).to_bytes(4, "little"), 8)
    for function in (arrow.count_tokens_arrow, arrow.estimate_tokens_arrow, arrow.parse_arrow):
        with pytest.raises(MessageError, match=r"^texts: First or last binary offset out of bounds$"):
            function(texts)
        with pytest.raises(MessageError, match=r"^texts: In chunk 1: .*First or last binary offset out of bounds$"):
            function(pa.chunked_array([pa.array(["fine"]), texts]))


def test_what_is_not_a_pair_of_capsules_is_named():
    pa = pytest.importorskip("pyarrow")

    class Producer:
        def __init__(self, result):
            self.result = result

        def __arrow_c_array__(self, requested_schema=None):
            return self.result

    schema, array = pa.array(["a"]).__arrow_c_array__()
    expected = r"^texts.__arrow_c_array__\(\) must return a pair of capsules named 'arrow_schema' and 'arrow_array'$"
    for result in ([schema, array], (schema,), (schema, array, array), (schema, "x"), (schema, schema), (array, array)):
        with pytest.raises(MessageTypeError, match=expected):
            arrow.count_tokens_arrow(Producer(result))


def test_types_that_are_not_strings_are_named_without_reading_them():
    pa = pytest.importorskip("pyarrow")
    prefix = "texts must be an Arrow string, large_string or string_view array, not "
    for texts, named in [
        (pa.array([1, 2]), "Int64"),
        (pa.array([b"x"]), "Binary"),
        (pa.array(["a", "a"]).dictionary_encode(), "a dictionary-encoded array (decode it first)"),
        (pa.array([{"a": 1}]), 'an array of Arrow format "+s"'),
        (pa.array([["a"]]), 'an array of Arrow format "+l"'),
    ]:
        with pytest.raises(MessageTypeError) as raised:
            arrow.parse_arrow(texts)
        assert str(raised.value) == prefix + named


def test_good_arrays_of_every_shape_still_read():
    pa = pytest.importorskip("pyarrow")
    strings = ["one two", None, "", "three four five", "x" * 40]
    for kind in (pa.string(), pa.large_string(), pa.string_view()):
        texts = pa.array(strings, kind)
        expected = [None if t is None else agentmsg.count_tokens(t) for t in strings]
        assert arrow.count_tokens_arrow(texts).to_pylist() == expected
        assert arrow.count_tokens_arrow(texts.slice(1, 3)).to_pylist() == expected[1:4]
        assert arrow.count_tokens_arrow(texts.slice(5)).to_pylist() == []
        assert arrow.count_tokens_arrow(pa.array([], kind)).to_pylist() == []


def test_arrow_name_arguments_are_checked_and_described_briefly():
    pa = pytest.importorskip("pyarrow")
    texts = pa.array(["a b"])
    # A model name gives its encoding, as for count_tokens_batch.
    assert arrow.count_tokens_arrow(texts, "gpt-4o").to_pylist() == agentmsg.count_tokens_batch(["a b"], "gpt-4o")
    known = "known encodings: o200k_base, cl100k_base, o200k_harmony, estimate"
    with pytest.raises(EncodingError, match=rf"^unknown encoding '\\ud800'; {known}$"):
        arrow.count_tokens_arrow(texts, "\ud800")
    with pytest.raises(EncodingError, match=rf"^unknown encoding 'xxxx.*'\.\.\. \(10000000 characters\); {known}$"):
        arrow.count_tokens_arrow(texts, "x" * 10_000_000)
    valid_roles = "valid roles: system, user, assistant, tool"
    for role, shown in [("\ud800", r"'\\ud800'"), ("r" * 10_000_000, r"'r{40}'\.\.\. \(10000000 characters\)")]:
        for estimate in (arrow.estimate_tokens_arrow, lambda t, r: _core.estimate_tokens_arrow(t, r)):
            with pytest.raises(MessageError, match=rf"^unknown role {shown}; {valid_roles}$"):
                estimate(texts, role)
    with pytest.raises(MessageTypeError, match=r"^role must be a str, not int$"):
        _core.estimate_tokens_arrow(texts, 3)


# -- the thread pool -------------------------------------------------------------------------


def test_the_thread_count_is_bounded_and_each_bad_one_named():
    before = agentmsg.num_threads()
    limit = r"at most \d+ \(the pool's limit on this machine: 256, or one per core if there are more\)"
    try:
        started = time.perf_counter()
        for threads, error, message in [
            (0, MessageError, r"^threads must be at least 1, not 0$"),
            (-1, MessageError, r"^threads must be at least 1, not -1$"),
            (-(2**70), MessageError, r"^threads must be at least 1, not an int of 71 bits$"),
            (5000, MessageError, rf"^threads must be {limit}, not 5000$"),
            (10**6, MessageError, rf"^threads must be {limit}, not 1000000$"),
            (2**70, MessageError, rf"^threads must be {limit}, not an int of 71 bits$"),
            (1.5, MessageTypeError, r"^threads must be an int, not float$"),
            (True, MessageTypeError, r"^threads must be an int, not bool$"),
            ("2", MessageTypeError, r"^threads must be an int, not str$"),
            (None, MessageTypeError, r"^threads must be an int, not NoneType$"),
        ]:
            with pytest.raises(error, match=message):
                agentmsg.set_num_threads(threads)
            with pytest.raises(error, match=message):
                _core.set_num_threads(threads)
        # The limit itself is accepted (the pool is built only by the next parallel call).
        agentmsg.set_num_threads(256)
        assert time.perf_counter() - started < 5
    finally:
        agentmsg.set_num_threads(before)
    assert agentmsg.num_threads() == before


@pytest.mark.parametrize("value, shown", [
    ("5000", "'5000'"),
    ("0", "'0'"),
    ("-1", "'-1'"),
    (str(2**70), "'1180591620717411303424'"),
    ("many", "'many'"),
    ("9" * 10_000, "'" + "9" * 40 + "'... (10000 characters)"),
])
def test_a_bad_thread_count_in_the_environment_is_named_quickly(value, shown):
    code = "import agentmsg; agentmsg.count_tokens_batch(['a'])"
    started = time.perf_counter()
    done = run_python("-c", code, env=dict(os.environ, AGENTMSG_NUM_THREADS=value))
    assert time.perf_counter() - started < 30
    assert done.returncode == 1
    last_line = done.stderr.splitlines()[-1]
    assert last_line.startswith("agentmsg.errors.MessageError: AGENTMSG_NUM_THREADS must be a whole number from 1 to ")
    assert last_line.endswith(f", not {shown}")


# -- parser options ----------------------------------------------------------------------------


def _deep_schema(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _parsers():
    """Every parser entry, each taking the options of the test."""
    pa = pytest.importorskip("pyarrow")
    return {
        "parse": lambda **o: agentmsg.parse("x", **o),
        "parse_many": lambda **o: agentmsg.parse_many(["x"], **o),
        "parse_tool_calls": lambda **o: agentmsg.parse_tool_calls("x", **o),
        "StreamParser": lambda **o: agentmsg.StreamParser(**o),
        "parse_arrow": lambda **o: arrow.parse_arrow(pa.array(["x"]), **o),
        "dialects.parse": lambda **o: dialects.parse("x", **{"dialect": "hermes", **o}),
        "dialects.StreamParser": lambda **o: dialects.StreamParser(**{"dialect": "hermes", **o}),
    }


DEEP_TOOLS = r"^tools\[0\]\['function'\]\['parameters'\]\['a'\]\['a'\]\['a'\]\.\.\.\(194 more levels\) " \
             r"nests deeper than 200 levels \(or contains itself\)$"


@pytest.mark.parametrize("parser", ["parse", "parse_many", "parse_tool_calls", "StreamParser", "parse_arrow",
                                    "dialects.parse", "dialects.StreamParser"])
def test_tools_nested_past_the_json_limit_are_refused_naming_the_limit(parser):
    call = _parsers()[parser]
    tool = {"type": "function", "function": {"name": "f", "parameters": _deep_schema(100_000)}}
    with pytest.raises(MessageError, match=DEEP_TOOLS):
        call(tools=[tool])
    # The deepest the core's JSON reader reads is accepted; one level more is not.
    call(tools=[{"type": "function", "function": {"name": "f", "parameters": _deep_schema(196)}}])
    with pytest.raises(MessageError, match=r"nests deeper than 200 levels"):
        call(tools=[{"type": "function", "function": {"name": "f", "parameters": _deep_schema(197)}}])
    looped: dict = {"name": "f"}
    looped["parameters"] = looped
    with pytest.raises(MessageError, match=r"^tools\[0\]\['parameters'\]\['parameters'\].*contains itself\)$"):
        call(tools=[looped])


def test_tools_whose_len_lies_are_read_by_iterating():
    class Lying(list):
        def __len__(self):
            return 2**62

    tools = Lying([{"type": "function", "function": {"name": "f", "parameters": {}}}])
    assert agentmsg.parse('<tool_call>{"name": "f", "arguments": {}}</tool_call>', dialect="hermes",
                          tools=tools).tool_calls[0].name == "f"


@pytest.mark.parametrize("make", [
    lambda: agentmsg.StreamParser(),
    lambda: agentmsg.StreamParser(dialect="hermes"),
    lambda: dialects.StreamParser(dialect="gpt_oss"),
    lambda: _core.StreamParser(),
    lambda: _core.StreamParser(dialect="hermes"),
], ids=["forge", "dialect", "dialects.StreamParser", "core forge", "core dialect"])
def test_no_stream_parser_is_pickled_or_copied(make):
    parser = make()
    parser.feed("Hi <tool_call>")
    message = (r"^a StreamParser cannot be pickled or copied: it holds a stream in progress; create a "
               r"StreamParser with the same options in the process that reads the stream$")
    for attempt in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(MessageTypeError, match=message):
            attempt(parser)


def _every_parser_with_core():
    parsers = _parsers()
    parsers.update({
        "core parse": lambda **o: _core.parse("x", **o),
        "core parse many": lambda **o: _core.parse_many(["x"], **o),
        "core StreamParser": lambda **o: _core.StreamParser(**o),
        "core StreamParser of a dialect": lambda **o: _core.StreamParser(**{"dialect": "hermes", **o}),
        "core parse_arrow": lambda **o: _core.parse_arrow(pytest.importorskip("pyarrow").array(["x"]), **o),
    })
    return parsers


BIG = "x" * 10_000_000
SHOWN_BIG = r"'x{40}'\.\.\. \(10000000 characters\)"


@pytest.mark.parametrize("name", ["parse", "parse_many", "parse_tool_calls", "StreamParser", "parse_arrow",
                                  "core parse", "core parse many", "core StreamParser", "core parse_arrow"])
@pytest.mark.parametrize("option, value, expected", [
    ("dialect", "\ud800", rf"^unknown dialect '\\ud800'; valid: {DIALECT_NAMES}$"),
    ("dialect", BIG, rf"^unknown dialect {SHOWN_BIG}; valid: {DIALECT_NAMES}$"),
    ("dialect", "a\udc80b", rf"^unknown dialect 'a\\udc80b'; valid: {DIALECT_NAMES}$"),
    ("thinking", "\ud800", r"^unknown thinking mode '\\ud800'; valid: auto, tags, brackets, none$"),
    ("thinking", BIG, rf"^unknown thinking mode {SHOWN_BIG}; valid: auto, tags, brackets, none$"),
    ("tool_format", "\ud800", r"^unknown tool format '\\ud800'; valid: auto, json, xml$"),
    ("tool_format", BIG, rf"^unknown tool format {SHOWN_BIG}; valid: auto, json, xml$"),
])
def test_a_bad_name_option_is_named_briefly_and_the_valid_ones_listed(name, option, value, expected):
    with pytest.raises(MessageError, match=expected) as raised:
        _every_parser_with_core()[name](**{option: value})
    assert len(str(raised.value)) < MAX_ERROR_CHARS


@pytest.mark.parametrize("name", ["dialects.parse", "dialects.StreamParser", "core StreamParser of a dialect"])
@pytest.mark.parametrize("value, shown", [("\ud800", r"'\\ud800'"), (BIG, SHOWN_BIG)])
def test_the_dialect_parsers_name_a_bad_dialect_alike(name, value, shown):
    with pytest.raises(MessageError, match=rf"^unknown dialect {shown}; valid: {DIALECT_NAMES}$"):
        _every_parser_with_core()[name](dialect=value)


def test_the_core_reads_every_str_option_whatever_it_holds():
    with pytest.raises(MessageError, match=r"^invalid tools: unexpected end of hex escape at line 1 column 9$"):
        _core.parse("x", tools=["\ud800"])
    with pytest.raises(MessageTypeError, match=r"^parse\(\) got an unexpected keyword argument '\\ud800'; it takes: "):
        _core.parse("x", **{"\ud800": 1})
    for parse in (agentmsg.parse, _core.parse):
        with pytest.raises(MessageTypeError, match=rf"^parse\(\) got an unexpected keyword argument {SHOWN_BIG}; "
                                                   r"it takes: code_fences, dialect, max_calls, start_in_thinking, "
                                                   r"strict, thinking, tool_format, tools$"):
            parse("x", **{BIG: 1})
    with pytest.raises(MessageTypeError, match=r"^dialect must be a str or an agentmsg.Dialect, not int$"):
        _core.parse("x", dialect=3)
    # A str where a bool goes is the wrong type, whatever it holds.
    for parse in (agentmsg.parse, _core.parse):
        with pytest.raises(MessageTypeError, match=r"^code_fences must be a bool, not str$"):
            parse("x", code_fences="\ud800")


def test_forge_options_given_to_another_dialect_name_it_briefly():
    long_name = agentmsg.Dialect(name="n" * 10_000_000, call_start="<c>", call_end="</c>")
    shown = r"'n{40}'\.\.\. \(10000000 characters\)"
    for parse in (agentmsg.parse, _core.parse):
        with pytest.raises(MessageError, match=rf"^thinking: an option of the forge dialect only, not of {shown}$"):
            parse("x", dialect=long_name, thinking="tags")
    # A value whose == misbehaves is compared with no default: it is simply 'given'.
    class Strange:
        def __eq__(self, other):
            raise RuntimeError("compared")

    with pytest.raises(MessageError, match=r"^thinking: an option of the forge dialect only, not of 'hermes'$"):
        agentmsg.parse("x", dialect="hermes", thinking=Strange())


@pytest.mark.parametrize("part", ["name", "call_start", "call_end", "payload", "name_key", "arguments_key",
                                  "think_start", "think_end"])
def test_dialect_parts_holding_a_lone_surrogate_are_named(part):
    parts = {"name": "mine", "call_start": "<c>", "call_end": "</c>", "think_start": "<t>", "think_end": "</t>"}
    with pytest.raises(MessageError, match=rf"^Dialect\.{part} must be valid text, not hold a lone surrogate$"):
        agentmsg.Dialect(**{**parts, part: "a\ud800"})


def test_dialect_parts_are_described_briefly():
    with pytest.raises(MessageError) as raised:
        agentmsg.Dialect(name="n", call_start=BIG, call_end=BIG)
    assert str(raised.value) == f"dialect 'n': call_start and call_end must differ (both are '{'x' * 40}'... (10000000 characters))"
    with pytest.raises(MessageError) as raised:
        agentmsg.Dialect(name=BIG, call_start="<c>", call_end="</c>", payload=BIG)
    assert str(raised.value) == (f"dialect '{'x' * 40}'... (10000000 characters): unknown payload '{'x' * 40}'... "
                                 "(10000000 characters); valid: json, qwen3_coder, glm45")


# -- what else the binding reads ------------------------------------------------------------------


class LyingLength(list):
    """A list whose __len__ claims 2**62 items: nothing may reserve room by it."""

    def __len__(self):
        return 2**62


@pytest.mark.parametrize("call", [
    lambda: agentmsg.parse_many(LyingLength(["a b"])),
    lambda: dialects.parse_many(LyingLength(["a b"]), dialect="hermes"),
    lambda: agentmsg.count_tokens_batch(LyingLength(["a b"])),
    lambda: agentmsg.get_encoding("cl100k_base").encode_batch(LyingLength(["a b"])),
    lambda: _core.parse_many(LyingLength(["a b"])),
    lambda: _core.TokenEncoder("cl100k_base").decode_bytes(LyingLength([64, 293])),
], ids=["parse_many", "dialects.parse_many", "count_tokens_batch", "encode_batch", "core parse", "decode_bytes"])
def test_a_sequence_whose_len_lies_is_read_by_iterating(call):
    assert len(call()) in (1, 3)  # one result per text, or the 3 bytes of 'a b'


def test_core_estimate_and_encoder_name_their_arguments():
    with pytest.raises(MessageTypeError, match=r"^text must be a str, not int$"):
        _core.estimate_tokens(3)
    with pytest.raises(MessageTypeError, match=r"^role must be a str, not int$"):
        _core.estimate_tokens("a", 3)
    with pytest.raises(MessageError, match=rf"^unknown role {SHOWN_BIG}; valid roles: system, user, assistant, tool$"):
        _core.estimate_tokens("a", BIG)
    assert _core.estimate_tokens("abcd") == agentmsg.estimate_tokens("abcd")
    known = "known encodings: o200k_base, cl100k_base, o200k_harmony, estimate"
    with pytest.raises(EncodingError, match=rf'^unknown encoding "x{{40}}"\.\.\. \(10000000 characters\); {known}$'):
        _core.TokenEncoder(BIG)
    with pytest.raises(EncodingError, match=rf"^unknown encoding '\\ud800'; {known}$"):
        _core.TokenEncoder("\ud800")
    with pytest.raises(MessageTypeError, match=r"^name must be a str, not bytes$"):
        _core.TokenEncoder(b"cl100k_base")
    with pytest.raises(EncodingError, match=rf'^unknown encoding "x{{40}}"\.\.\. \(10000000 characters\); {known}$'):
        _core.count_tokens("a", BIG)
