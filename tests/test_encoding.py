"""The tiktoken-compatible encoder, tested against tiktoken itself (loaded offline from the same
rank files, see tiktoken_oracle.py): identical ids, identical exceptions, decode round trips."""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest
import tiktoken.model
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmsg
import tiktoken_oracle
import transcripts
from agentmsg.encoding import (
    DisallowedSpecialTokenError,
    TokenIdError,
    UnknownModelError,
    encoding_name_for_model,
)

NAMES = ("o200k_base", "cl100k_base", "o200k_harmony")


@pytest.fixture(params=NAMES)
def pair(request):
    """(ours, tiktoken's) for one encoding."""
    return agentmsg.get_encoding(request.param), tiktoken_oracle.encoding(request.param)


def outcome(call):
    """The result of ``call``, or the type-independent signature of what it raised: whether it
    is a ValueError / KeyError / TypeError, and its message."""
    try:
        return ("ok", call())
    except (ValueError, KeyError, TypeError) as error:
        kind = next(k for k in (ValueError, KeyError, TypeError) if isinstance(error, k))
        return (kind.__name__, str(error))


# Text over all of Unicode (surrogates included), dense in what the pre-tokenizers split on.
unicode_text = st.lists(
    st.one_of(
        st.characters(min_codepoint=0, max_codepoint=0x10FFFF, codec=None),
        st.sampled_from(list(" \t\n\r'sSlLdDtT0123456789.,!?/<|>_-") + ["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "'ll", "\u00a0", "\u0301"]
                        + ["<|start|>", "<|channel|>", "<|message|>", "<|call|>", "<|reserved_200018|>", "<|reserved_201087|>"]),
    ),
    max_size=60,
).map("".join)


# -- metadata ------------------------------------------------------------------------------------


def test_metadata_is_tiktokens(pair):
    ours, theirs = pair
    assert ours.name == theirs.name
    assert ours.n_vocab == theirs.n_vocab
    assert ours.max_token_value == theirs.max_token_value
    assert ours.eot_token == theirs.eot_token
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours._special_tokens == theirs._special_tokens
    assert repr(ours) == repr(theirs)


def test_get_encoding_is_shared_and_pickles_by_name():
    enc = agentmsg.get_encoding("cl100k_base")
    assert agentmsg.get_encoding("cl100k_base") is enc
    assert pickle.loads(pickle.dumps(enc)) is enc


@pytest.mark.parametrize("name", ["gpt2", "p50k_base", "estimate", "O200K_BASE", ""])
def test_unknown_encoding_is_a_value_error(name):
    with pytest.raises(agentmsg.EncodingError) as error:
        agentmsg.get_encoding(name)
    assert isinstance(error.value, ValueError)
    assert repr(name) in str(error.value) or f'"{name}"' in str(error.value)


def test_encoding_name_must_be_a_str():
    with pytest.raises(agentmsg.MessageTypeError, match="encoding name must be a str, not int"):
        agentmsg.get_encoding(5)


# -- model names -------------------------------------------------------------------------------------


def test_every_model_and_prefix_maps_as_tiktoken():
    models = list(tiktoken.model.MODEL_TO_ENCODING)
    models += [prefix + "2025-01-01" for prefix in tiktoken.model.MODEL_PREFIX_TO_ENCODING]
    models += ["gpt-4o-mini", "gpt-4.1-nano", "o3-mini", "o4-mini-high", "gpt-5-mini", "gpt-5.1",
               "ft:gpt-4o-mini:org::id", "gpt-3.5-turbo-16k", "gpt-4-32k", "chatgpt-4o-latest"]
    for model in models:
        assert encoding_name_for_model(model) == tiktoken.model.encoding_name_for_model(model), model
        expected = tiktoken.model.encoding_name_for_model(model)
        if expected in NAMES:
            assert agentmsg.encoding_for_model(model).name == expected
        else:
            with pytest.raises(agentmsg.EncodingError, match=expected):
                agentmsg.encoding_for_model(model)


@pytest.mark.parametrize("model", ["claude-3", "gpt", "o2", "", "GPT-4O", "text-embedding-4"])
def test_unknown_model_raises_tiktokens_key_error(model):
    with pytest.raises(KeyError) as theirs:
        tiktoken.model.encoding_name_for_model(model)
    with pytest.raises(UnknownModelError) as ours:
        agentmsg.encoding_for_model(model)
    assert isinstance(ours.value, KeyError) and isinstance(ours.value, agentmsg.AgentMsgError)
    assert str(ours.value) == str(theirs.value)


def test_resolve_encoding_takes_encodings_and_models():
    from agentmsg.encoding import resolve_encoding

    for name in agentmsg.ENCODINGS:
        assert resolve_encoding(name) == name
    assert resolve_encoding("gpt-4.1-mini") == "o200k_base"
    assert resolve_encoding("text-embedding-3-small") == "cl100k_base"
    assert agentmsg.count_tokens("hello world", resolve_encoding("gpt-4")) == 2
    for bad in ["p50k_base", "gpt2", "claude-3", ""]:
        with pytest.raises(agentmsg.EncodingError):
            resolve_encoding(bad)
    with pytest.raises(agentmsg.MessageTypeError):
        resolve_encoding(None)


def test_model_must_be_a_str():
    with pytest.raises(agentmsg.MessageTypeError):
        agentmsg.encoding_for_model(None)


# -- encoding: differential --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(text=unicode_text)
def test_encode_ordinary_is_tiktokens_on_all_unicode(text):
    for name in NAMES:
        ours, theirs = agentmsg.get_encoding(name), tiktoken_oracle.encoding(name)
        ids = ours.encode_ordinary(text)
        assert ids == theirs.encode_ordinary(text)
        assert ours.decode_bytes(ids) == theirs.decode_bytes(ids)
        assert ours.decode(ids) == theirs.decode(ids)
        assert len(ids) == agentmsg.count_tokens(text, name)


@settings(max_examples=200, deadline=None)
@given(
    text=unicode_text,
    allowed=st.one_of(st.just("all"), st.sets(st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|endofprompt|>", "plain",
                                                               "<|start|>", "<|channel|>", "<|reserved_200018|>"]))),
    disallowed=st.one_of(st.just("all"), st.just(()), st.sets(st.sampled_from(["<|endoftext|>", "<|fim_middle|>", "<|endofprompt|>",
                                                                               "<|message|>", "<|reserved_201087|>"]))),
)
def test_encode_with_special_arguments_is_tiktokens(text, allowed, disallowed):
    for name in NAMES:
        ours, theirs = agentmsg.get_encoding(name), tiktoken_oracle.encoding(name)
        expected = outcome(lambda: theirs.encode(text, allowed_special=allowed, disallowed_special=disallowed))
        actual = outcome(lambda: ours.encode(text, allowed_special=allowed, disallowed_special=disallowed))
        assert actual == expected
        batch = [text, "x", text[::-1]]
        expected = outcome(lambda: theirs.encode_batch(batch, allowed_special=allowed, disallowed_special=disallowed))
        assert outcome(lambda: ours.encode_batch(batch, allowed_special=allowed, disallowed_special=disallowed)) == expected


def test_every_special_token_allowed_and_disallowed(pair):
    ours, theirs = pair
    tokens = sorted(theirs.special_tokens_set)
    if len(tokens) > 100:  # o200k_harmony: its named tokens and every 97th reserved one
        tokens = [t for t in tokens if "reserved" not in t] + tokens[::97]
    for token in tokens:
        text = f"before {token} after{token}"
        for kwargs in [
            {},
            {"allowed_special": {token}},
            {"allowed_special": "all"},
            {"disallowed_special": ()},
            {"disallowed_special": {token}},
            {"allowed_special": {token}, "disallowed_special": "all"},
            {"allowed_special": set(), "disallowed_special": theirs.special_tokens_set - {token}},
        ]:
            assert outcome(lambda: ours.encode(text, **kwargs)) == outcome(lambda: theirs.encode(text, **kwargs)), (token, kwargs)
        assert ours.encode(token, allowed_special="all") == [theirs._special_tokens[token]]
        with pytest.raises(DisallowedSpecialTokenError) as error:
            ours.encode(text)
        assert isinstance(error.value, ValueError) and isinstance(error.value, agentmsg.AgentMsgError)


def test_disallowed_strings_that_are_not_special_tokens(pair):
    # tiktoken searches disallowed_special for any string, special or not.
    ours, theirs = pair
    for disallowed in [{"x"}, {"world", "<|endoftext|>"}, {""}, {"a.b"}]:
        for text in ["hello world", "a.b <|endoftext|>", "axb", ""]:
            kwargs = {"disallowed_special": disallowed}
            assert outcome(lambda: ours.encode(text, **kwargs)) == outcome(lambda: theirs.encode(text, **kwargs))


def test_transcripts_are_encoded_as_tiktoken(pair):
    ours, theirs = pair
    texts = [m.text for m in transcripts.all_messages()]
    expected = [theirs.encode_ordinary(text) for text in texts]
    assert ours.encode_ordinary_batch(texts) == expected
    assert [ours.encode_ordinary(text) for text in texts] == expected
    whole = "\n".join(texts)  # long enough to be encoded in parallel chunks
    assert ours.encode_ordinary(whole) == theirs.encode_ordinary(whole)
    assert ours.encode(whole, disallowed_special=()) == theirs.encode(whole, disallowed_special=())
    assert ours.decode(ours.encode_ordinary(whole)) == whole


@pytest.mark.parametrize(
    "text",
    [
        "a" * 20_000,
        " " * 20_000,
        "\n" * 20_000,
        " \n" * 10_000,
        "ab" * 10_000,
        "1" * 20_000,
        "é" * 20_000,
        "日" * 20_000,
        "🦀" * 10_000,
        ("x" * 5000 + " ") * 4,
        "\u0301" * 20_000,
        ("word " * 3000 + "\n") * 10,
        "<|endoftext|>" * 2000,
    ],
    ids=lambda text: f"{text[:3]!r}x{len(text)}",
)
def test_pathological_runs_are_tiktokens(pair, text):
    ours, theirs = pair
    ids = theirs.encode_ordinary(text)
    assert ours.encode_ordinary(text) == ids
    assert ours.decode(ids) == text


def test_lone_surrogates_are_replaced_as_tiktoken(pair):
    ours, theirs = pair
    for text in ["a\ud800b", "\udc00", "x\ud83e\udd80y", "\ud800" * 5 + "<|endoftext|>"]:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
        kwargs = {"allowed_special": "all"}
        assert ours.encode(text, **kwargs) == theirs.encode(text, **kwargs)
        assert outcome(lambda: ours.encode(text)) == outcome(lambda: theirs.encode(text))


def test_batch_reports_the_first_failing_text(pair):
    ours, theirs = pair
    batch = ["fine", "a <|endoftext|>", "b <|endofprompt|>"]
    assert outcome(lambda: ours.encode_batch(batch)) == outcome(lambda: theirs.encode_batch(batch))
    assert ours.encode_batch([]) == [] and ours.encode_ordinary_batch([]) == []


# -- decoding ------------------------------------------------------------------------------------------


def test_decode_single_token_bytes_everywhere_in_the_id_space(pair):
    ours, theirs = pair
    ids = list(range(0, theirs.n_vocab + 3, 97)) + list(range(theirs.n_vocab - 25, theirs.n_vocab + 3))
    for token in ids:
        assert outcome(lambda: ours.decode_single_token_bytes(token)) == outcome(lambda: theirs.decode_single_token_bytes(token)), token
    assert [ours.decode_single_token_bytes(t) for t in range(256)] == [theirs.decode_single_token_bytes(t) for t in range(256)]


def test_decode_tokens_bytes_and_batch(pair):
    ours, theirs = pair
    ids = theirs.encode_ordinary("héllo wörld, 日本 🦀")
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    batch = [ids, ids[:3], [], ids[-2:]]
    assert ours.decode_batch(batch) == theirs.decode_batch(batch)
    assert ours.decode_batch(batch, errors="ignore") == theirs.decode_batch(batch, errors="ignore")


def test_invalid_ids_raise_tiktokens_key_error(pair):
    ours, theirs = pair
    # No token: a hole below the last special token, or past the last one (o200k_harmony has no hole).
    hole = theirs.max_token_value - 1 if ours.name != "o200k_harmony" else theirs.n_vocab
    for tokens in [[hole], [1, 2, hole, theirs.n_vocab], [theirs.n_vocab + 5]]:
        assert outcome(lambda: ours.decode(tokens)) == outcome(lambda: theirs.decode(tokens))
    with pytest.raises(TokenIdError) as error:
        ours.decode_bytes([hole])
    assert isinstance(error.value, KeyError) and isinstance(error.value, agentmsg.AgentMsgError)


def test_ids_out_of_range_and_wrong_types_are_typed():
    enc = agentmsg.get_encoding("cl100k_base")
    # tiktoken raises OverflowError for these; an id that is no token is a KeyError here.
    with pytest.raises(TokenIdError, match="-1"):
        enc.decode([5, -1])
    with pytest.raises(TokenIdError, match=str(2**40)):
        enc.decode_single_token_bytes(2**40)
    with pytest.raises(TokenIdError, match="100261"):
        enc.decode([100261, -1])  # the first bad id in order
    for bad in ["ab", 5, [1, "2"], [1.0]]:
        with pytest.raises(agentmsg.MessageTypeError):
            enc.decode(bad)
    with pytest.raises(agentmsg.MessageTypeError, match="token must be an int, not str"):
        enc.decode_single_token_bytes("a")
    assert enc.decode([True]) == enc.decode([1])  # bool is an int, as in tiktoken


@pytest.mark.parametrize(
    "call",
    [
        lambda enc: enc.encode(5),
        lambda enc: enc.encode_ordinary(b"x"),
        lambda enc: enc.encode("x", allowed_special="foo"),
        lambda enc: enc.encode("x", allowed_special=["<|endoftext|>"]),
        lambda enc: enc.encode("x", allowed_special={1}),
        lambda enc: enc.encode("x", allowed_special=None),
        lambda enc: enc.encode("x", disallowed_special=5),
        lambda enc: enc.encode_batch(["a", 5]),
    ],
)
def test_wrong_argument_types_are_type_errors_as_in_tiktoken(call):
    ours = agentmsg.get_encoding("cl100k_base")
    with pytest.raises(TypeError):
        call(tiktoken_oracle.encoding("cl100k_base"))
    with pytest.raises(agentmsg.MessageTypeError):
        call(ours)


def test_no_disallowed_special_may_be_none_as_in_tiktoken(pair):
    ours, theirs = pair
    text = "a <|endoftext|>"
    assert ours.encode(text, disallowed_special=None) == theirs.encode(text, disallowed_special=None)


def test_a_str_is_not_a_batch():
    # tiktoken would encode each character of it.
    with pytest.raises(agentmsg.MessageTypeError, match="sequence of str, not a single str"):
        agentmsg.get_encoding("o200k_base").encode_batch("ab")


# -- truncation ----------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(text=unicode_text, max_tokens=st.integers(0, 40))
def test_truncate_is_the_text_of_the_first_tokens(text, max_tokens):
    for name in NAMES:
        theirs = tiktoken_oracle.encoding(name)
        ids = theirs.encode_ordinary(text)
        cut = agentmsg.truncate_tokens(text, max_tokens, name)
        head = theirs.decode_bytes(ids[:max_tokens])
        utf8 = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        assert utf8.startswith(cut)
        # Exactly the head, less the bytes of a character the cut splits.
        assert head.startswith(cut.encode())
        assert len(head) - len(cut.encode()) < 4
        assert head.decode("utf-8", "ignore") == cut
        if max_tokens >= len(ids):
            assert cut == utf8


def test_truncate_examples_and_arguments():
    assert agentmsg.truncate_tokens("one two three", 0) == ""
    assert agentmsg.truncate_tokens("one two three", 2, agentmsg.get_encoding("cl100k_base")) == "one two"
    # "日本語" in cl100k_base: 日 is one token, 本 and 語 are split over tokens.
    enc = tiktoken_oracle.encoding("cl100k_base")
    ids = enc.encode_ordinary("日本語")
    for n in range(len(ids) + 1):
        assert agentmsg.truncate_tokens("日本語", n, "cl100k_base") == enc.decode_bytes(ids[:n]).decode("utf-8", "ignore")
    text = "word " * 200_000  # a huge text cut to a few tokens
    assert agentmsg.truncate_tokens(text, 3) == "word word word"
    assert agentmsg.truncate_tokens(text, 10**30) == text
    with pytest.raises(agentmsg.MessageError):
        agentmsg.truncate_tokens("x", -1)
    with pytest.raises(agentmsg.MessageTypeError):
        agentmsg.truncate_tokens("x", 1.5)
    with pytest.raises(agentmsg.MessageTypeError):
        agentmsg.truncate_tokens(b"x", 1)
    with pytest.raises(agentmsg.EncodingError):
        agentmsg.truncate_tokens("x", 1, "estimate")


# -- threads -----------------------------------------------------------------------------------------


def test_concurrent_use_from_threads_gives_the_serial_results():
    texts = [m.text for m in transcripts.all_messages()][:300]
    long = "\n".join(texts)
    for name in NAMES:
        enc = agentmsg.get_encoding(name)
        serial = [enc.encode_ordinary(text) for text in texts]
        with ThreadPoolExecutor(8) as pool:
            assert list(pool.map(enc.encode_ordinary, texts)) == serial
            futures = [pool.submit(enc.encode_ordinary, long) for _ in range(4)]
            assert len({tuple(f.result()) for f in futures}) == 1


# -- o200k_harmony (gpt-oss) -------------------------------------------------------------------------

HARMONY_REPLY = ('<|start|>assistant<|channel|>analysis<|message|>Need the weather.<|end|>'
                 '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json'
                 '<|message|>{"city": "Paris"}<|call|>')


def test_o200k_harmony_is_what_gpt_oss_counts_with():
    theirs = tiktoken_oracle.encoding("o200k_harmony")
    for model in ["gpt-oss-120b", "gpt-oss-20b"]:
        assert agentmsg.encoding_for_model(model) is agentmsg.get_encoding("o200k_harmony")
        assert agentmsg.resolve_encoding(model) == "o200k_harmony"
    ours = agentmsg.get_encoding("o200k_harmony")
    ids = ours.encode(HARMONY_REPLY, allowed_special="all")
    assert ids == theirs.encode(HARMONY_REPLY, allowed_special="all")
    assert ids[:3] == [200006, 173781, 200005]  # <|start|> assistant <|channel|>
    assert ours.decode(ids) == HARMONY_REPLY
    # Counters read special-token text as plain text, as encode_ordinary does.
    assert agentmsg.count_tokens(HARMONY_REPLY, "o200k_harmony") == len(theirs.encode_ordinary(HARMONY_REPLY))
    assert agentmsg.count_tokens(HARMONY_REPLY, "o200k_harmony") == agentmsg.count_tokens(HARMONY_REPLY, "o200k_base")
    assert agentmsg.truncate_tokens(HARMONY_REPLY, 3, "o200k_harmony") == "<|start"


def test_o200k_harmony_special_tokens_are_tiktokens():
    ours, theirs = agentmsg.get_encoding("o200k_harmony"), tiktoken_oracle.encoding("o200k_harmony")
    assert list(ours._special_tokens.items()) == list(theirs._special_tokens.items())
    assert (ours.n_vocab, ours.eot_token, len(ours.special_tokens_set)) == (201088, 199999, 1091)
    every = "".join(sorted(theirs.special_tokens_set))
    assert ours.encode(every, allowed_special="all") == theirs.encode(every, allowed_special="all")
    assert ours.encode_ordinary(every) == theirs.encode_ordinary(every)
    for token in theirs.special_tokens_set:
        if theirs._special_tokens[token] != 200018:  # two names for one id: see below
            assert ours.decode_single_token_bytes(theirs._special_tokens[token]) == token.encode()
    # 200018 is both <|endofprompt|> (o200k_base's) and <|reserved_200018|>; it decodes to the first.
    assert ours.decode([200018]) == "<|endofprompt|>"


@settings(max_examples=200, deadline=None)
@given(text=unicode_text)
def test_o200k_harmony_on_random_text_is_tiktokens(text):
    ours, theirs = agentmsg.get_encoding("o200k_harmony"), tiktoken_oracle.encoding("o200k_harmony")
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert outcome(lambda: ours.encode(text)) == outcome(lambda: theirs.encode(text))


def test_o200k_harmony_special_tokens_from_threads():
    enc = agentmsg.get_encoding("o200k_harmony")
    texts = [HARMONY_REPLY * n + f"<|reserved_{200100 + n}|>" for n in range(1, 40)]
    serial = [enc.encode(text, allowed_special="all") for text in texts]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(lambda text: enc.encode(text, allowed_special="all"), texts)) == serial
        errors = list(pool.map(lambda text: outcome(lambda: enc.encode(text)), texts))
    assert all(kind == "ValueError" and "<|start|>" in message for kind, message in errors)
