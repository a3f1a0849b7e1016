"""Exact token counts equal tiktoken's (the oracle, loaded offline), on real and generated text."""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
import tiktoken_oracle as oracle
import transcripts
from agentmsg import (
    EncodingError,
    Message,
    MessageTypeError,
    count_tokens,
    count_tokens_batch,
    count_tokens_up_to,
    estimate_tokens,
    fits,
)

EXACT = oracle.NAMES
ALL = EXACT + ("estimate",)


def transcript_texts():
    """Every text the counters see in the shared transcripts: contents, call names, arguments."""
    texts = []
    for message in transcripts.all_messages():
        texts.append(message.text)
        for call in message.tool_calls:
            texts.append(call.name)
            texts.append(json.dumps(call.input, ensure_ascii=False))
    return texts


# -- the oracle itself ------------------------------------------------------------------------------


def test_oracle_is_tiktoken_on_the_crate_data():
    for name in EXACT:
        encoding = oracle.encoding(name)
        assert encoding.name == name
        assert encoding.n_vocab == {"o200k_base": 200019, "cl100k_base": 100277}[name]
    assert oracle.encoding("cl100k_base").encode_ordinary("tiktoken is great!") == [
        83, 1609, 5963, 374, 2294, 0
    ]


# -- differential: shared transcripts ---------------------------------------------------------------


@pytest.mark.parametrize("name", EXACT)
def test_every_transcript_text_counts_as_tiktoken(name):
    texts = transcript_texts()
    expected = [oracle.count(text, name) for text in texts]
    assert [count_tokens(text, name) for text in texts] == expected
    assert count_tokens_batch(texts, name) == expected


@pytest.mark.parametrize("name", EXACT)
def test_raw_trajectory_contents_count_as_tiktoken(name):
    for path in transcripts.trajectory_files():
        for entry in json.loads(path.read_text(encoding="utf-8"))["history"]:
            content = entry.get("content") or ""
            assert count_tokens(content, name) == oracle.count(content, name)


# -- differential: generated text -------------------------------------------------------------------

WHITESPACE = " \t\n\r\x0b\x0c\u00a0\u1680\u2000\u2009\u200b\u2028\u2029\u202f\u3000"
CODE = "".join(map(chr, range(0x20, 0x7F))) + "\n\t"
EMOJI = "😀👍🏽👨‍👩‍👧‍👦🇫🇷❤️\u200d\ufe0f🤖"
CJK = "日本語中文한국어の漢字カタカナ，。「」"
CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "’s"]

texts = st.one_of(
    st.text(st.characters(codec=None), max_size=60),  # all of Unicode, lone surrogates included
    st.text(st.sampled_from(WHITESPACE + "ab1."), max_size=60),
    st.text(st.sampled_from(CODE), max_size=120),
    st.text(st.sampled_from(EMOJI + CJK + " \n"), max_size=40),
    st.lists(st.sampled_from(CONTRACTIONS + ["I", "WE", "you", " ", "\n", "123", "4567"]), max_size=20).map(
        "".join
    ),
)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_generated_text_counts_as_tiktoken(text):
    for name in EXACT:
        assert count_tokens(text, name) == oracle.count(text, name)


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, max_size=20))
def test_batch_is_each_count(batch):
    for name in ALL:
        assert count_tokens_batch(batch, name) == [count_tokens(text, name) for text in batch]


def test_lone_surrogates_count_as_tiktoken_repairs_them():
    # tiktoken retries a string that is not valid UTF-8 after a UTF-16 round trip with
    # "replace": a lone surrogate becomes U+FFFD and a split pair joins into one character.
    for text in ["\ud800", "a\udfffb", "\ud83d\ude00", "x\ud83d", "\ud83d\ude00\ud83d"]:
        for name in EXACT:
            assert count_tokens(text, name) == oracle.count(text, name)
            assert count_tokens_batch([text], name) == [oracle.count(text, name)]


# -- pathological input -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("char", ["a", " ", "\n", "1", "é", "日", "😀", " a"])
def test_runs_count_as_tiktoken(name, char):
    for length in (1, 2, 3, 63, 64, 65, 127, 128, 129, 1000, 50_000):
        text = char * length
        assert count_tokens(text, name) == oracle.count(text, name), length


def test_million_char_runs_complete_with_tiktokens_counts():
    # tiktoken's own counts (0.3-0.5 s each there, so written down rather than recomputed). On a
    # million spaces with o200k_base tiktoken's regex overflows its stack; its pattern makes the
    # whole run one piece, and tiktoken's BPE of that piece (Encoding._encode_single_piece) is
    # 7,813 tokens; the next test checks that reasoning where encode_ordinary still works.
    million = 1_000_000
    assert count_tokens("a" * million, "o200k_base") == 125_000
    assert count_tokens("a" * million, "cl100k_base") == 125_000
    assert count_tokens(" " * million, "cl100k_base") == 7_813
    assert count_tokens(" " * million, "o200k_base") == 7_813


def test_a_space_run_is_one_piece_for_tiktoken():
    encoding = oracle.encoding("o200k_base")
    for length in (1, 80, 129, 1000, 100_000):
        text = " " * length
        assert len(encoding.encode_ordinary(text)) == len(encoding._encode_single_piece(text))
        assert count_tokens(text, "o200k_base") == len(encoding._encode_single_piece(text))


def test_ten_megabytes_of_random_bytes_decoded_leniently():
    data = random.Random(10).randbytes(10 * 1024 * 1024).decode("utf-8", errors="replace")
    for name in EXACT:
        total = count_tokens(data, name)
        assert 0 < total <= len(data.encode("utf-8"))  # at most one token per byte
        head = data[: 128 * 1024]  # over the parallel threshold, so cut into chunks
        assert count_tokens(head, name) == oracle.count(head, name)


# -- early stop -------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(texts, st.integers(min_value=0, max_value=80))
def test_up_to_is_count_capped_at_limit_plus_one(text, limit):
    for name in ALL:
        full = count_tokens(text, name)
        assert count_tokens_up_to(text, limit, name) == min(full, limit + 1)
        assert fits(text, limit, name) == (full <= limit)


def test_limits_are_checked_and_huge_ones_mean_no_limit():
    with pytest.raises(agentmsg.MessageError, match="limit must be at least 0, not -1"):
        count_tokens_up_to("abc", -1)
    with pytest.raises(agentmsg.MessageTypeError, match="limit must be an int, not float"):
        fits("abc", 2.5)
    assert count_tokens_up_to("Hello, world!", 2**70) == 4
    assert fits("Hello, world!", 2**70)


def test_up_to_on_a_huge_text_with_a_small_limit():
    text = "word " * 2_000_000
    assert count_tokens_up_to(text, 10) == 11
    assert not fits(text, 10)
    assert fits(text, 10**12)


# -- estimate ---------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(texts)
def test_estimate_is_seed_formula_without_role_overhead(text):
    assert count_tokens(text, "estimate") == estimate_tokens(text, role="user") - 4


# -- threads ----------------------------------------------------------------------------------------


def test_eight_threads_count_as_serial():
    batch = transcript_texts() * 3
    serial = {name: [count_tokens(text, name) for text in batch] for name in EXACT}
    jobs = [(name, start) for name in EXACT for start in range(8)]

    def work(job):
        name, start = job
        # Each thread walks the texts from a different place so they overlap differently.
        order = batch[start::8] + batch[:start]
        return job, [count_tokens(text, name) for text in order], count_tokens_batch(batch, name)

    with ThreadPoolExecutor(max_workers=8) as pool:
        for (name, start), singles, batched in pool.map(work, jobs):
            expected = serial[name][start::8] + serial[name][:start]
            assert singles == expected
            assert batched == serial[name]


# -- errors -----------------------------------------------------------------------------------------

CALLS = [
    lambda e: count_tokens("x", e),
    lambda e: count_tokens_batch(["x"], e),
    lambda e: count_tokens_up_to("x", 3, e),
    lambda e: fits("x", 3, e),
    lambda e: agentmsg.message_token_counts([Message.user("x")], e),
    lambda e: agentmsg.count_message_tokens([Message.user("x")], e),
]


@pytest.mark.parametrize("call", CALLS)
def test_unknown_encoding_lists_the_known_ones(call):
    with pytest.raises(EncodingError) as raised:
        call("p50k_base")
    assert isinstance(raised.value, ValueError)
    assert str(raised.value) == (
        'unknown encoding "p50k_base"; known encodings: o200k_base, cl100k_base, o200k_harmony, estimate'
    )


def test_wrong_types_raise_message_type_error():
    with pytest.raises(MessageTypeError, match="text must be a str, not int"):
        count_tokens(42)
    with pytest.raises(MessageTypeError, match="encoding must be a str, not int"):
        count_tokens("x", 3)
    with pytest.raises(MessageTypeError, match=r"texts\[1\] must be a str, not bytes"):
        count_tokens_batch(["a", b"b"])
    with pytest.raises(MessageTypeError, match="not a single str"):
        count_tokens_batch("abc")
    with pytest.raises(MessageTypeError, match="must be a sequence of str, not int"):
        count_tokens_batch(3)
    with pytest.raises(MessageTypeError, match="limit must be an int"):
        fits("x", 2.5)
    assert issubclass(MessageTypeError, TypeError)


def test_encodings_constant():
    assert agentmsg.ENCODINGS == ("o200k_base", "cl100k_base", "o200k_harmony", "estimate")


def test_counting_leaves_no_utf8_copy_on_the_string():
    # CPython caches a str's UTF-8 form once asked for it (sys.getsizeof then counts it); the
    # counters transcode into a temporary buffer instead, so counted histories do not double.
    import sys

    for text in ["héllo wörld " * 100, "日本語 <tool>" * 100, "emoji 😀 " * 100, "lone \ud800 " * 100]:
        before = sys.getsizeof(text)
        for name in ALL:
            count_tokens(text, name)
            count_tokens_batch([text], name)
            count_tokens_up_to(text, 5, name)
        assert sys.getsizeof(text) == before


@settings(max_examples=200, deadline=None)
@given(texts)
def test_estimate_of_any_string_is_over_its_surrogatepass_bytes(text):
    data = text.encode("utf-8", "surrogatepass")
    expected = len(data) // 4 + (10 if b"<tool>" in data else 0)
    assert count_tokens(text, "estimate") == expected
    assert count_tokens_batch([text], "estimate") == [expected]
