"""agentmsg.Tokenizer on real vocabularies: Qwen 2 and Llama 3 (byte-level BPE), Llama 2 and
Phi-3 (SentencePiece-style BPE with byte fallback).

Each file in tests/data/tokenizers/ is checked two ways: against the models' own reference ids
(made by their Hugging Face tokenizers, shipped beside the files) and against the `tokenizers`
library (the oracle) reading the same file, on samples and random text.
"""

import gzip
from pathlib import Path

import pytest
import tokenizers
from agentmsg import Tokenizer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DATA = Path(__file__).parent / "data" / "tokenizers"
FAMILIES = ["qwen2", "llama3", "llama2", "phi3"]
SEPARATOR = "\n__ggml_vocab_test__\n"


def references(name):
    texts = (DATA / f"{name}.reference.inp").read_text(encoding="utf-8").split(SEPARATOR)
    ids = (DATA / f"{name}.reference.out").read_text(encoding="utf-8").split("\n")
    # The input file ends with a separator, so its last piece is the empty text after it.
    return [(text, [int(i) for i in line.split()]) for text, line in zip(texts, ids)]


@pytest.fixture(scope="module", params=FAMILIES)
def family(request, tmp_path_factory):
    """(name, ours, the oracle), both loaded from the same decompressed tokenizer.json."""
    path = tmp_path_factory.mktemp(request.param) / "tokenizer.json"
    path.write_bytes(gzip.decompress((DATA / f"{request.param}.tokenizer.json.gz").read_bytes()))
    return request.param, Tokenizer.from_file(str(path)), tokenizers.Tokenizer.from_file(str(path))


def test_the_models_own_reference_ids(family):
    name, ours, _ = family
    cases = references(name)
    assert len(cases) == 47
    for text, ids in cases:
        assert ours.encode(text) == ids, text[:40]
        assert ours.count(text) == len(ids)
        assert ours.decode(ids) == text


def test_vocabulary_sizes_and_specials(family):
    name, ours, oracle = family
    assert ours.vocab_size == {"qwen2": 151936, "llama3": 128256, "llama2": 32000, "phi3": 32064}[name]
    assert ours.vocab_size == oracle.get_vocab_size(with_added_tokens=True)
    marker = {"qwen2": "<|im_start|>", "llama3": "<|start_header_id|>", "llama2": "</s>",
              "phi3": "<|assistant|>"}[name]
    assert ours.token_to_id(marker) == oracle.token_to_id(marker)
    assert ours.encode(f"x{marker}y") == oracle.encode(f"x{marker}y", add_special_tokens=False).ids


def test_bos_framing_is_the_post_processors(family):
    name, ours, oracle = family
    for text in ["", "Hello", "a b"]:
        assert ours.encode(text, add_special_tokens=True) == oracle.encode(text).ids
    bos = {"qwen2": None, "llama3": 128000, "llama2": 1, "phi3": 1}[name]
    assert ours.encode("Hi", add_special_tokens=True)[:1] == ([bos] if bos is not None else ours.encode("Hi")[:1])


pieces = st.one_of(
    st.text(max_size=12),
    st.text(alphabet=" \t\n\r\u00a0\u3000", min_size=1, max_size=8),
    st.text(alphabet="日本語中文한국어ひらがなカタカナ", max_size=6),
    st.text(alphabet="🦀👩‍👧🎉😀\u200d\ufe0f", max_size=4),
    st.text(alphabet="abcXYZ'0123456789.,!?-_ ", max_size=12),
    st.sampled_from(["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>",
                     "<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|python_tag|>",
                     "<s>", "</s>", "<unk>", "<|assistant|>", "<|end|>",
                     "'s", "'LL", "\r\n", "  \n", "1234567", "Å", "e\u0301", "\x00", "\U0010ffff"]),
)
texts = st.lists(pieces, max_size=12).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts)
def test_random_text_gives_the_oracles_ids(family, text):
    _, ours, oracle = family
    expected = oracle.encode(text, add_special_tokens=False).ids
    assert ours.encode(text) == expected
    assert ours.count(text) == len(expected)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, data=st.data())
def test_decoding_cut_id_runs_gives_the_oracles_text(family, text, data):
    _, ours, oracle = family
    ids = oracle.encode(text, add_special_tokens=False).ids
    cut = data.draw(st.integers(0, len(ids)))
    for sample in (ids, ids[:cut], ids[cut:]):
        assert ours.decode(sample) == oracle.decode(sample, skip_special_tokens=False)
