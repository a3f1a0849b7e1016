"""load_transcript / iter_transcripts: every format of the real transcripts reads back the same
conversation, detection says what it found, bad files give one typed line, JSONL streams."""

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
import transcripts
from agentmsg import TranscriptError, iter_transcripts, load_transcript

DATA = Path(__file__).parent / "data"
FORMATS = DATA / "transcript-formats"
BAD = DATA / "bad"


def essence(messages):
    """What every format must carry: roles, text, tool links and calls."""
    return [(m.role.value, m.text, m.tool_id, [(c.id, c.name, c.input) for c in m.tool_calls]) for m in messages]


@pytest.fixture(scope="module")
def original():
    return transcripts.load_history(transcripts.TRAJECTORY_DIR / "function_calling_simple.traj")


@pytest.mark.parametrize("name, detected", [
    ("agentmsg.json", "agentmsg JSON"),
    ("agentmsg.jsonl", "agentmsg JSONL, one message per line"),
    ("openai.json", "openai JSON"),
    ("openai.jsonl", "openai JSONL, one message per line"),
    ("openai-request.json", "openai JSON"),
    ("anthropic.json", "anthropic JSON"),
    ("bedrock.json", "bedrock JSON"),
    ("repr-strings.traj", "swe-agent .traj"),
])
def test_every_format_reads_back_the_same_conversation(original, name, detected):
    transcript = load_transcript(FORMATS / name)
    assert (transcript.format, transcript.name, transcript.line) == (detected, name.rsplit(".", 1)[0], None)
    assert essence(transcript.messages) == essence(original)
    assert sum(len(m.tool_calls) for m in transcript.messages) == 5


def test_the_real_traj_files_keep_tool_calls_and_metadata():
    t = load_transcript(transcripts.TRAJECTORY_DIR / "function_calling_marshmallow.traj")
    assert (t.format, len(t.messages)) == ("swe-agent .traj", 24)
    call = t.messages[2].tool_calls[0]
    assert (call.name, call.input) == ("create", {"filename": "reproduce.py"})
    assert t.messages[3].tool_id == call.id and t.messages[3].name == "create"
    assert t.messages[2].metadata == {"agent": "main", "message_type": "action"}


def test_jsonl_of_conversations_is_streamed_record_by_record(original):
    found = list(iter_transcripts(FORMATS / "conversations-messages.jsonl"))
    assert [(t.name, t.line, t.format, len(t.messages)) for t in found] == [
        ("conversations-messages:function_calling_simple", 1, "openai JSONL, one conversation per line", 12),
        ("conversations-messages:xml_marshmallow", 2, "openai JSONL, one conversation per line", 25),
    ]
    assert essence(found[0].messages) == essence(original)
    with pytest.raises(TranscriptError, match="line 2: holds more than one conversation: use iter_transcripts$"):
        load_transcript(FORMATS / "conversations-messages.jsonl")


def test_trajectory_records_with_text_and_dataset_role_names():
    first = next(iter_transcripts(FORMATS / "conversations-trajectory.jsonl"))
    assert [m.role.value for m in first.messages][:3] == ["system", "user", "assistant"]
    assert first.messages[1].text.startswith("We're currently solving the following issue")


def test_iter_transcripts_reads_lazily():
    class Lines:
        """A file whose third line may not be read before the caller asks for it."""
        name = "lazy.jsonl"

        def read(self):  # pragma: no cover - only its presence matters
            raise AssertionError

        def __iter__(self):
            yield b'{"messages": [{"role": "user", "content": "a"}]}\n'
            yield b'{"messages": [{"role": "user", "content": "b"}]}\n'
            raise AssertionError("read past the second record")

    first = next(iter_transcripts(Lines()))
    assert (first.name, first.messages[0].text) == ("lazy:1", "a")


def test_a_folder_gives_its_files_in_name_order():
    names = [t.name for t in iter_transcripts(transcripts.TRAJECTORY_DIR)]
    assert names == ["ctf_katy", "function_calling_marshmallow", "function_calling_simple", "gpt4_pydicom",
                     "xml_marshmallow"]


def test_open_files_text_or_binary_and_a_utf8_byte_order_mark():
    text = '[{"role": "user", "content": "Hi"}]'
    for source in (io.StringIO(text), io.BytesIO(text.encode()), io.BytesIO(b"\xef\xbb\xbf" + text.encode())):
        assert [m.text for m in load_transcript(source).messages] == ["Hi"]
    assert load_transcript(BAD.parent / "transcript-formats" / "openai.json", format="openai").format == "openai JSON"


BAD_FILES = {
    "empty.json": (None, "empty file: no messages"),
    "blank-lines.jsonl": (None, "empty file: no messages"),
    "latin-1.json": (1, "not UTF-8 text (byte 0xe9 at column 34)"),
    "utf-16.json": (1, "UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8"),
    "truncated.json": (1, "invalid JSON: Unterminated string starting at (column 46)"),
    "deep-nesting.json": (1, "JSON nested too deeply to read"),
    "bad-line.jsonl": (3, "invalid JSON: Expecting value (column 10)"),
    "bad-role.json": (None, "messages[0].role: unknown role 'robot'; valid: system, developer, user, assistant, tool"),
    "scalar.json": (None, "expected a list of messages, not int"),
    "no-messages.json": (None, "an object needs a 'messages', 'trajectory', 'history' or 'conversations' field with the messages; "
                               "it has 'model', 'temperature'"),
    "evil-repr.traj": (None, "history[0].tool_calls is neither a JSON list nor a Python literal (ValueError)"),
    "bad-record.jsonl": (2, "expected a list of messages, not int"),
}


def test_the_bad_folder_is_covered():
    assert sorted(p.name for p in BAD.iterdir()) == sorted(BAD_FILES)


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_each_bad_file_gives_one_typed_line_naming_file_line_and_reason(name):
    line, reason = BAD_FILES[name]
    with pytest.raises(TranscriptError) as caught:
        list(iter_transcripts(BAD / name))
    error = caught.value
    assert isinstance(error, ValueError) and isinstance(error, agentmsg.AgentMsgError)
    assert (Path(error.path).name, error.line, error.reason) == (name, line, reason)
    assert "\n" not in str(error) and str(error).startswith(str(BAD / name))


def test_unknown_format_is_named():
    with pytest.raises(TranscriptError, match="unknown format 'yaml'; valid: auto, agentmsg, openai, anthropic"):
        load_transcript(FORMATS / "openai.json", format="yaml")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["role", "content", "messages", "history", "tool_calls", "tool_call_id", "tool_call_ids",
                         "system", "type", "text", "id", "name", "function", "arguments", "trajectory"]),
        inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    json_values.map(lambda v: json.dumps(v).encode()),
    st.lists(json_values, max_size=3).map(lambda vs: "\n".join(json.dumps(v) for v in vs).encode()),
    st.binary(max_size=40),
))
def test_any_input_loads_or_raises_transcript_error(data):
    try:
        list(iter_transcripts(io.BytesIO(data)))
    except TranscriptError as error:
        assert "\n" not in str(error)


def test_swe_agent_list_content_is_its_text_parts_joined():
    history = [
        {"role": "user", "content": [{"type": "text", "text": "Fix"}, {"type": "text", "text": "it", "cache_control": {}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "On it"}],
         "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{}"}}]},
    ]
    t = agentmsg.load_transcript(io.StringIO(json.dumps({"history": history})))
    assert [m.text for m in t.messages] == ["Fix\nit", "On it"]
    assert t.messages[1].tool_calls[0].name == "bash"
    image = {"history": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}
    with pytest.raises(ValueError, match=r"history\[0\]\.content\[0\] must be a text part"):
        agentmsg.load_transcript(io.StringIO(json.dumps(image)))


# -- what a caller hands the readers -------------------------------------------------------------

HUGE = "1" * 5000  # past Python's int conversion limit (4300 digits)


@pytest.mark.parametrize("text, line, column", [
    # a JSON document over several lines: the line and column of the number
    ('[{"role": "user", "content": "x"},\n {"role": "assistant", "content": "y", "metadata": {"n": ' + HUGE + "}}]\n",
     2, 58),
    # one message per line, the number on the first line
    ('{"role": "user", "content": "x", "metadata": {"n": ' + HUGE + "}}\n", 1, 52),
    # one conversation per line, the number on the third line
    ('{"messages": [{"role": "user", "content": "a"}]}\n' * 2 + '{"messages": [{"role": "user", "content": "b", '
     '"n": -' + HUGE + "}]}\n", 3, 53),
])
def test_an_int_past_pythons_digit_limit_is_a_typed_error_naming_file_line_and_column(tmp_path, text, line, column):
    path = tmp_path / "big.json"
    path.write_text(text)
    with pytest.raises(TranscriptError) as caught:
        list(iter_transcripts(path))
    assert (caught.value.path, caught.value.line, caught.value.reason) == (
        str(path), line, f"an integer of 5000 digits (column {column}): JSON ints are read up to 4300 digits "
                         "(Python's int conversion limit)")


def test_a_closed_file_is_a_typed_error_naming_the_argument():
    closed = open(FORMATS / "openai.json", "rb")
    closed.close()
    with pytest.raises(TranscriptError) as caught:
        load_transcript(closed)
    assert str(caught.value) == f"{FORMATS / 'openai.json'}: source is a closed file: open it again, or pass its path"
    stream = io.StringIO('[{"role": "user", "content": "Hi"}]')
    stream.close()
    with pytest.raises(TranscriptError, match=r"^<stream>: sources\[1\] is a closed file"):
        list(iter_transcripts([FORMATS / "openai.json", stream]))


class _Numbers:
    """A file-like object that gives ints where a file gives lines."""

    def read(self) -> int:
        return 1

    def __iter__(self):
        return iter([1, 2])


class _NoLines:
    """Something with a read method that cannot be iterated for its lines."""

    def read(self) -> str:
        return "[]"


@pytest.mark.parametrize("source, message", [
    (_Numbers(), "source (<stream>) gave a line of type int; an open file gives lines of bytes or str"),
    (_NoLines(), "source (<stream>) must be a path or an open file that gives its lines, not _NoLines"),
])
def test_a_file_like_that_gives_no_lines_is_a_typed_error_naming_the_argument(source, message):
    with pytest.raises(agentmsg.MessageTypeError) as caught:
        load_transcript(source)
    assert isinstance(caught.value, TypeError) and str(caught.value) == message


def test_a_folder_without_transcripts_is_an_error_saying_what_it_holds(tmp_path):
    with pytest.raises(TranscriptError) as caught:
        list(iter_transcripts(tmp_path))
    assert str(caught.value) == f"{tmp_path}: no .json, .jsonl or .traj file (or .gz of one) in this folder (it is empty)"
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "chat.json").write_text('[{"role": "user", "content": "Hi"}]')
    with pytest.raises(TranscriptError) as caught:
        load_transcript(tmp_path)
    assert caught.value.reason == ("no .json, .jsonl or .traj file (or .gz of one) in this folder (it holds 2 broken or looping "
                                   "links, 1 folder, 1 other file; folders in it are not searched)")
    # A transcript file that is a link to nowhere is named, not skipped.
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    with pytest.raises(OSError) as caught_os:
        list(iter_transcripts(tmp_path))
    assert caught_os.value.filename == str(tmp_path / "loop.json")
