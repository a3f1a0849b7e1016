//! Reading a `tokenizer.json` into a [`Tokenizer`].

use std::borrow::Cow;

use jiter::JsonValue;

use super::added::{AddedToken, AddedTokens};
use super::bpe::{pair_key, BpeModel, FastMap, Symbols};
use super::normalize::{normalize, Normalizer};
use super::decode::DecodeStep;
use super::pretokenize::{PreStep, Prepend, SplitBehavior, SplitRegex};
use super::{Decoder, PostProcessor, Tokenizer, TokenizerError};

type Object<'j> = [(Cow<'j, str>, JsonValue<'j>)];

fn invalid(what: impl Into<String>) -> TokenizerError {
    TokenizerError::Invalid(what.into())
}

fn unsupported(what: impl Into<String>) -> TokenizerError {
    TokenizerError::Unsupported(what.into())
}

fn get<'a, 'j>(object: &'a Object<'j>, key: &str) -> Option<&'a JsonValue<'j>> {
    object.iter().rev().find(|(name, _)| name == key).map(|(_, value)| value)
}

/// The value at `key` unless it is missing or null.
fn present<'a, 'j>(object: &'a Object<'j>, key: &str) -> Option<&'a JsonValue<'j>> {
    get(object, key).filter(|value| !matches!(value, JsonValue::Null))
}

fn as_object<'a, 'j>(value: &'a JsonValue<'j>, what: &str) -> Result<&'a Object<'j>, TokenizerError> {
    match value {
        JsonValue::Object(object) => Ok(object.as_slice()),
        _ => Err(invalid(format!("{what} must be an object"))),
    }
}

fn as_str<'a>(value: &'a JsonValue<'_>, what: &str) -> Result<&'a str, TokenizerError> {
    match value {
        JsonValue::Str(text) => Ok(text),
        _ => Err(invalid(format!("{what} must be a string"))),
    }
}

fn as_array<'a, 'j>(value: &'a JsonValue<'j>, what: &str) -> Result<&'a [JsonValue<'j>], TokenizerError> {
    match value {
        JsonValue::Array(items) => Ok(items.as_slice()),
        _ => Err(invalid(format!("{what} must be a list"))),
    }
}

fn as_id(value: &JsonValue<'_>, what: &str) -> Result<u32, TokenizerError> {
    match value {
        JsonValue::Int(id) => u32::try_from(*id).map_err(|_| invalid(format!("{what} must be a token id, not {id}"))),
        _ => Err(invalid(format!("{what} must be a token id"))),
    }
}

fn flag(object: &Object<'_>, key: &str, default: bool) -> bool {
    match get(object, key) {
        Some(JsonValue::Bool(value)) => *value,
        _ => default,
    }
}

fn type_of<'a>(object: &'a Object<'_>, what: &str) -> Result<&'a str, TokenizerError> {
    as_str(get(object, "type").ok_or_else(|| invalid(format!("{what} has no type")))?, &format!("{what}'s type"))
}

/// GPT-2's table from bytes to the characters byte-level vocabularies spell them with.
fn byte_chars() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next_unprintable = 256u32;
    for (byte, slot) in table.iter_mut().enumerate() {
        let printable = matches!(byte, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
        let code = if printable {
            byte as u32
        } else {
            let code = next_unprintable;
            next_unprintable += 1;
            code
        };
        *slot = char::from_u32(code).expect("a valid character");
    }
    table
}

/// The bytes a byte-level spelling stands for, or `None` if it holds a character that stands
/// for no byte.
fn byte_level_bytes(spelling: &str, chars_to_bytes: &FastMap<char, u8>) -> Option<Vec<u8>> {
    spelling.chars().map(|c| chars_to_bytes.get(&c).copied()).collect()
}

pub(super) fn from_json(json: &[u8]) -> Result<Tokenizer, TokenizerError> {
    let root = JsonValue::parse(json, false).map_err(|error| invalid(format!("not JSON: {error}")))?;
    let root = as_object(&root, "the file")?;
    if get(root, "model").is_none() && matches!(get(root, "vocab"), Some(JsonValue::Array(_))) {
        return from_tekken(root);
    }

    let normalizers = match present(root, "normalizer") {
        Some(value) => normalizer_steps(value)?,
        None => Vec::new(),
    };
    let mut pre = Vec::new();
    if let Some(value) = present(root, "pre_tokenizer") {
        pre_tokenizer_steps(value, &mut pre)?;
    }
    let byte_level = pre.iter().any(|step| matches!(step, PreStep::ByteLevel { .. }));

    let model = as_object(get(root, "model").ok_or_else(|| invalid("no model"))?, "model")?;
    let model_type = match get(model, "type") {
        Some(value) => as_str(value, "the model's type")?,
        // Old files leave the type out; only BPE has merges.
        None if get(model, "merges").is_some() => "BPE",
        None => return Err(invalid("the model has no type")),
    };
    if model_type != "BPE" {
        return Err(unsupported(format!("the model type {model_type} (only BPE is supported)")));
    }
    for key in ["continuing_subword_prefix", "end_of_word_suffix"] {
        if let Some(JsonValue::Str(value)) = present(model, key) {
            if !value.is_empty() {
                return Err(unsupported(format!("the BPE model's {key} {value:?}")));
            }
        }
    }
    if let Some(dropout) = present(model, "dropout") {
        let zero = matches!(dropout, JsonValue::Int(0)) || matches!(dropout, JsonValue::Float(f) if *f == 0.0);
        if !zero {
            return Err(unsupported("BPE dropout (it makes ids random)"));
        }
    }

    let chars_to_bytes: FastMap<char, u8> =
        byte_chars().iter().enumerate().map(|(byte, &c)| (c, byte as u8)).collect();
    let vocab_json = as_object(get(model, "vocab").ok_or_else(|| invalid("the model has no vocab"))?, "the vocab")?;
    let mut by_spelling: FastMap<&str, u32> = FastMap::default();
    by_spelling.reserve(vocab_json.len());
    let mut vocab: FastMap<Box<[u8]>, u32> = FastMap::default();
    vocab.reserve(vocab_json.len());
    let mut spellings: Vec<Box<[u8]>> = Vec::new();
    let mut known: Vec<bool> = Vec::new();
    let place = |id: u32, bytes: Box<[u8]>, spellings: &mut Vec<Box<[u8]>>, known: &mut Vec<bool>| {
        let at = id as usize;
        if spellings.len() <= at {
            spellings.resize(at + 1, Box::default());
            known.resize(at + 1, false);
        }
        spellings[at] = bytes;
        known[at] = true;
    };
    for (spelling, id) in vocab_json {
        let id = as_id(id, &format!("the vocab entry {spelling:?}"))?;
        if id as usize > 16 * 1024 * 1024 {
            return Err(invalid(format!("the vocab entry {spelling:?} has the id {id}, beyond any vocabulary")));
        }
        by_spelling.insert(spelling, id);
        let decoded = if byte_level { byte_level_bytes(spelling, &chars_to_bytes) } else { None };
        match decoded {
            Some(bytes) => {
                vocab.insert(bytes.clone().into_boxed_slice(), id);
                place(id, bytes.into_boxed_slice(), &mut spellings, &mut known);
            }
            None => {
                if !byte_level {
                    vocab.insert(spelling.as_bytes().into(), id);
                }
                place(id, spelling.as_bytes().into(), &mut spellings, &mut known);
            }
        }
    }

    let merges_json = match get(model, "merges") {
        Some(value) => as_array(value, "the merges")?,
        None => &[],
    };
    let mut merges: FastMap<u64, (u32, u32)> = FastMap::default();
    merges.reserve(merges_json.len());
    for (rank, merge) in merges_json.iter().enumerate() {
        let (left, right): (&str, &str) = match merge {
            JsonValue::Str(line) => {
                let mut parts = line.split(' ');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(left), Some(right), None) => (left, right),
                    _ => return Err(invalid(format!("merge {rank} ({line:?}) is not two tokens"))),
                }
            }
            JsonValue::Array(pair) if pair.len() == 2 => {
                (as_str(&pair[0], "a merge's token")?, as_str(&pair[1], "a merge's token")?)
            }
            _ => return Err(invalid(format!("merge {rank} is not a pair of tokens"))),
        };
        let id_of = |token: &str| {
            by_spelling
                .get(token)
                .copied()
                .ok_or_else(|| invalid(format!("merge {rank} names {token:?}, which is not in the vocab")))
        };
        let merged = format!("{left}{right}");
        let (left, right, merged) = (id_of(left)?, id_of(right)?, id_of(&merged)?);
        // A pair listed twice keeps its last rank, as in the library.
        merges.insert(pair_key(left, right), (rank as u32, merged));
    }

    let unk = match present(model, "unk_token") {
        Some(value) => {
            let name = as_str(value, "the unknown token")?;
            Some(
                by_spelling
                    .get(name)
                    .copied()
                    .ok_or_else(|| invalid(format!("the unknown token {name:?} is not in the vocab")))?,
            )
        }
        None => None,
    };
    let symbols = if byte_level { Symbols::Bytes } else { Symbols::Chars };
    let bpe = BpeModel::new(
        symbols,
        vocab,
        merges,
        flag(model, "byte_fallback", false),
        unk,
        flag(model, "fuse_unk", false),
        flag(model, "ignore_merges", false),
    );

    // The library gives each added token its id when it loads the file, whatever id the file
    // says: the id of a token already spelled so (an earlier added token, or a vocabulary
    // entry), else the next one after the vocabulary; a later entry for an id replaces the
    // earlier one's options.
    let mut added_tokens: Vec<AddedToken> = Vec::new();
    let mut added_ids: FastMap<String, u32> = FastMap::default();
    let mut next_id = by_spelling.len() as u32;
    if let Some(value) = present(root, "added_tokens") {
        for (index, token) in as_array(value, "added_tokens")?.iter().enumerate() {
            let what = format!("added_tokens[{index}]");
            let token = as_object(token, &what)?;
            let content = as_str(get(token, "content").ok_or_else(|| invalid(format!("{what} has no content")))?, &what)?;
            if content.is_empty() {
                continue;
            }
            let id = match added_ids.get(content).or_else(|| by_spelling.get(content)) {
                Some(&id) => id,
                None => {
                    next_id += 1;
                    next_id - 1
                }
            };
            if id as usize > 16 * 1024 * 1024 {
                return Err(invalid(format!("{what} would have the id {id}, beyond any vocabulary")));
            }
            added_ids.insert(content.to_owned(), id);
            let special = flag(token, "special", false);
            let added = AddedToken {
                id,
                content: content.to_owned(),
                single_word: flag(token, "single_word", false),
                lstrip: flag(token, "lstrip", false),
                rstrip: flag(token, "rstrip", false),
                normalized: flag(token, "normalized", !special),
                special,
            };
            match added_tokens.iter_mut().find(|earlier| earlier.id == id) {
                Some(earlier) => *earlier = added,
                None => added_tokens.push(added),
            }
        }
    }
    let mut special = vec![false; spellings.len()];
    for token in &added_tokens {
        // The decoder reads an added token's content (normalized, if the token is) as it reads
        // any token's spelling.
        let content = if token.normalized {
            normalize(&normalizers, &token.content)
        } else {
            Cow::Borrowed(token.content.as_str())
        };
        let bytes = if byte_level {
            byte_level_bytes(&content, &chars_to_bytes).unwrap_or_else(|| content.as_bytes().to_vec())
        } else {
            content.as_bytes().to_vec()
        };
        place(token.id, bytes.into_boxed_slice(), &mut spellings, &mut known);
        if special.len() < spellings.len() {
            special.resize(spellings.len(), false);
        }
        special[token.id as usize] = token.special;
    }
    let added = AddedTokens::new(added_tokens, |content| normalize(&normalizers, content).into_owned());

    let post = match present(root, "post_processor") {
        Some(value) => post_processor(value)?,
        None => PostProcessor::Nothing,
    };
    let decoder = match present(root, "decoder") {
        Some(value) => {
            let object = as_object(value, "the decoder")?;
            match type_of(object, "the decoder")? {
                "ByteLevel" if byte_level => Decoder::Bytes,
                _ => {
                    let mut steps = Vec::new();
                    match decoder_steps(value, &mut steps) {
                        Ok(()) => Decoder::Steps(steps),
                        Err(error) => Decoder::Unsupported(error.to_string()),
                    }
                }
            }
        }
        None => Decoder::Unsupported("a file without a decoder (tokens joined by spaces)".to_owned()),
    };

    let specials = added.tokens.iter().filter(|token| token.special).map(|token| (token.content.clone(), token.id)).collect();
    Ok(Tokenizer {
        model: bpe,
        normalizers,
        pre,
        added,
        post,
        decoder,
        spellings,
        known,
        special,
        specials,
    })
}

/// A Mistral `tekken.json`: tiktoken's ranks (base64 bytes, in rank order) and split pattern;
/// the first `default_num_special_tokens` ids are the special tokens (named by the file's list,
/// the rest `<SPECIAL_i>`), then ranks below `default_vocab_size` minus those.
fn from_tekken(root: &Object<'_>) -> Result<Tokenizer, TokenizerError> {
    let config = as_object(get(root, "config").ok_or_else(|| invalid("tekken.json has no config"))?, "config")?;
    let number = |key: &str| match get(config, key) {
        Some(JsonValue::Int(value)) if *value >= 0 && *value <= 16 * 1024 * 1024 => Ok(*value as usize),
        _ => Err(invalid(format!("config.{key} must be a count"))),
    };
    let num_special = number("default_num_special_tokens")?;
    let vocab_size = number("default_vocab_size")?;
    let pattern = as_str(get(config, "pattern").ok_or_else(|| invalid("config has no pattern"))?, "config.pattern")?;
    let entries = as_array(get(root, "vocab").ok_or_else(|| invalid("tekken.json has no vocab"))?, "vocab")?;
    let inner = vocab_size
        .checked_sub(num_special)
        .filter(|&inner| inner <= entries.len())
        .ok_or_else(|| invalid(format!("vocab size {vocab_size} does not fit {num_special} special tokens and {} ranks", entries.len())))?;

    let mut ranked: Vec<Vec<u8>> = Vec::with_capacity(inner);
    for (rank, entry) in entries[..inner].iter().enumerate() {
        let entry = as_object(entry, "a vocab entry")?;
        let encoded = as_str(get(entry, "token_bytes").ok_or_else(|| invalid(format!("rank {rank} has no token_bytes")))?, "token_bytes")?;
        ranked.push(base64_decode(encoded).ok_or_else(|| invalid(format!("rank {rank}'s token_bytes is not base64")))?);
    }
    let mut specials: Vec<(String, u32)> = Vec::with_capacity(num_special);
    if let Some(list) = present(root, "special_tokens") {
        for (index, token) in as_array(list, "special_tokens")?.iter().enumerate() {
            let token = as_object(token, "a special token")?;
            let name = as_str(get(token, "token_str").ok_or_else(|| invalid(format!("special token {index} has no token_str")))?, "token_str")?;
            specials.push((name.to_owned(), index as u32));
        }
    }
    if specials.len() > num_special {
        return Err(invalid(format!("{} special tokens listed, {num_special} declared", specials.len())));
    }
    for index in specials.len()..num_special {
        specials.push((format!("<SPECIAL_{index}>"), index as u32));
    }
    // Mistral's tokenizer does not read special tokens in text.
    ranked_tokenizer(ranked, num_special as u32, pattern, specials, false)
}

/// A tiktoken rank file (`base64 rank` lines, as tiktoken's `load_tiktoken_bpe` reads them),
/// with the split pattern and special tokens that go with it (the file holds neither); special
/// tokens are read in text, as tiktoken's `encode(text, allowed_special="all")` reads them.
pub(super) fn from_tiktoken(ranks: &[u8], pattern: &str, specials: Vec<(String, u32)>) -> Result<Tokenizer, TokenizerError> {
    let text = std::str::from_utf8(ranks).map_err(|_| invalid("a tiktoken file is ASCII text"))?;
    let mut ranked: Vec<Vec<u8>> = Vec::new();
    for (line_number, line) in text.lines().enumerate().filter(|(_, line)| !line.is_empty()) {
        let line_number = line_number + 1;
        let (encoded, rank) = line
            .split_once(' ')
            .ok_or_else(|| invalid(format!("line {line_number} is not `base64 rank`")))?;
        let rank: usize = rank.trim().parse().map_err(|_| invalid(format!("line {line_number}'s rank is not a number")))?;
        if rank != ranked.len() {
            return Err(unsupported(format!("line {line_number} has rank {rank}: ranks must run 0, 1, 2... in order")));
        }
        ranked.push(base64_decode(encoded).ok_or_else(|| invalid(format!("line {line_number} is not base64")))?);
    }
    ranked_tokenizer(ranked, 0, pattern, specials, true)
}

/// A tokenizer of tiktoken ranks: token `rank` has the id `rank + first_id`.
fn ranked_tokenizer(
    ranked: Vec<Vec<u8>>,
    first_id: u32,
    pattern: &str,
    specials: Vec<(String, u32)>,
    read_specials_in_text: bool,
) -> Result<Tokenizer, TokenizerError> {
    let mut vocab: FastMap<Box<[u8]>, u32> = FastMap::default();
    vocab.reserve(ranked.len());
    for (rank, bytes) in ranked.iter().enumerate() {
        vocab.insert(bytes.clone().into_boxed_slice(), rank as u32 + first_id);
    }
    // tiktoken merges the adjacent pair whose bytes together are the lowest-ranked token: every
    // way of cutting a token into two tokens is a merge to it, at its rank.
    let mut merges: FastMap<u64, (u32, u32)> = FastMap::default();
    for (rank, bytes) in ranked.iter().enumerate() {
        let id = rank as u32 + first_id;
        for cut in 1..bytes.len() {
            if let (Some(&left), Some(&right)) = (vocab.get(&bytes[..cut]), vocab.get(&bytes[cut..])) {
                merges.insert(pair_key(left, right), (rank as u32, id));
            }
        }
    }
    // tiktoken takes a piece that is one token as that token before merging.
    let model = BpeModel::new(Symbols::Bytes, vocab, merges, false, None, false, true);

    let mut spellings: Vec<Box<[u8]>> = vec![Box::default(); first_id as usize];
    let mut known = vec![false; first_id as usize];
    spellings.extend(ranked.into_iter().map(Vec::into_boxed_slice));
    known.resize(spellings.len(), true);
    for (name, id) in &specials {
        let at = *id as usize;
        if at > 16 * 1024 * 1024 {
            return Err(invalid(format!("the special token {name:?} has the id {id}, beyond any vocabulary")));
        }
        if spellings.len() <= at {
            spellings.resize(at + 1, Box::default());
            known.resize(at + 1, false);
        }
        spellings[at] = name.as_bytes().into();
        known[at] = true;
    }
    let mut special = vec![false; spellings.len()];
    for (_, id) in &specials {
        special[*id as usize] = true;
    }
    let added = if read_specials_in_text {
        let tokens = specials
            .iter()
            .map(|(name, id)| AddedToken {
                id: *id,
                content: name.clone(),
                single_word: false,
                lstrip: false,
                rstrip: false,
                normalized: false,
                special: true,
            })
            .collect();
        AddedTokens::new(tokens, str::to_owned)
    } else {
        AddedTokens::new(Vec::new(), str::to_owned)
    };
    Ok(Tokenizer {
        model,
        normalizers: Vec::new(),
        pre: vec![PreStep::Split {
            regex: SplitRegex::new(pattern)?,
            behavior: SplitBehavior::Isolated,
        }],
        added,
        post: PostProcessor::Nothing,
        decoder: Decoder::Bytes,
        spellings,
        known,
        special,
        specials,
    })
}

/// Standard base64 (with or without padding), or `None`.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn normalizer_steps(value: &JsonValue<'_>) -> Result<Vec<Normalizer>, TokenizerError> {
    let object = as_object(value, "the normalizer")?;
    let step = match type_of(object, "the normalizer")? {
        "Sequence" => {
            let mut steps = Vec::new();
            for item in as_array(get(object, "normalizers").ok_or_else(|| invalid("a Sequence normalizer has no list"))?, "normalizers")? {
                steps.extend(normalizer_steps(item)?);
            }
            return Ok(steps);
        }
        "NFC" => Normalizer::Nfc,
        "NFD" => Normalizer::Nfd,
        "NFKC" => Normalizer::Nfkc,
        "NFKD" => Normalizer::Nfkd,
        "Lowercase" => Normalizer::Lowercase,
        "Prepend" => Normalizer::Prepend(
            as_str(get(object, "prepend").ok_or_else(|| invalid("Prepend has no text"))?, "Prepend's text")?.to_owned(),
        ),
        "Replace" => Normalizer::Replace {
            pattern: pattern(object, "Replace")?,
            content: as_str(get(object, "content").ok_or_else(|| invalid("Replace has no content"))?, "Replace's content")?
                .to_owned(),
        },
        "Strip" => Normalizer::Strip {
            left: flag(object, "strip_left", true),
            right: flag(object, "strip_right", true),
        },
        other => return Err(unsupported(format!("the normalizer {other}"))),
    };
    Ok(vec![step])
}

/// A `pattern` field: `{"String": ...}` or `{"Regex": ...}`.
fn pattern(object: &Object<'_>, what: &str) -> Result<SplitRegex, TokenizerError> {
    let pattern = as_object(get(object, "pattern").ok_or_else(|| invalid(format!("{what} has no pattern")))?, "a pattern")?;
    if let Some(literal) = get(pattern, "String") {
        return SplitRegex::literal(as_str(literal, "a String pattern")?);
    }
    if let Some(regex) = get(pattern, "Regex") {
        return SplitRegex::new(as_str(regex, "a Regex pattern")?);
    }
    Err(invalid(format!("{what}'s pattern is neither String nor Regex")))
}

fn pre_tokenizer_steps(value: &JsonValue<'_>, steps: &mut Vec<PreStep>) -> Result<(), TokenizerError> {
    let object = as_object(value, "the pre-tokenizer")?;
    match type_of(object, "the pre-tokenizer")? {
        "Sequence" => {
            let items = get(object, "pretokenizers").ok_or_else(|| invalid("a Sequence pre-tokenizer has no list"))?;
            for item in as_array(items, "pretokenizers")? {
                pre_tokenizer_steps(item, steps)?;
            }
        }
        "Split" => {
            if flag(object, "invert", false) {
                return Err(unsupported("the Split pre-tokenizer with invert"));
            }
            let behavior = as_str(get(object, "behavior").ok_or_else(|| invalid("Split has no behavior"))?, "Split's behavior")?;
            steps.push(PreStep::Split {
                regex: pattern(object, "Split")?,
                behavior: SplitBehavior::from_name(behavior)?,
            });
        }
        "ByteLevel" => steps.push(PreStep::ByteLevel {
            add_prefix_space: flag(object, "add_prefix_space", true),
            regex: flag(object, "use_regex", true).then(SplitRegex::gpt2),
        }),
        "Metaspace" => {
            let replacement = as_str(get(object, "replacement").ok_or_else(|| invalid("Metaspace has no replacement"))?, "replacement")?;
            let mut chars = replacement.chars();
            let (Some(replacement), None) = (chars.next(), chars.next()) else {
                return Err(unsupported(format!("the Metaspace replacement {replacement:?} (one character is supported)")));
            };
            steps.push(PreStep::Metaspace {
                replacement,
                prepend: metaspace_prepend(object)?,
                split: flag(object, "split", true),
            });
        }
        other => return Err(unsupported(format!("the pre-tokenizer {other}"))),
    }
    Ok(())
}

fn decoder_steps(value: &JsonValue<'_>, steps: &mut Vec<DecodeStep>) -> Result<(), TokenizerError> {
    let object = as_object(value, "the decoder")?;
    let one_char = |key: &str, what: &str| -> Result<char, TokenizerError> {
        let text = as_str(get(object, key).ok_or_else(|| invalid(format!("{what} has no {key}")))?, key)?;
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(unsupported(format!("the {what} decoder with the {key} {text:?} (one character is supported)"))),
        }
    };
    let count = |key: &str| match get(object, key) {
        Some(JsonValue::Int(value)) if *value >= 0 => Ok(*value as usize),
        _ => Err(invalid(format!("Strip's {key} must be a count"))),
    };
    match type_of(object, "the decoder")? {
        "Sequence" => {
            let items = get(object, "decoders").ok_or_else(|| invalid("a Sequence decoder has no list"))?;
            for item in as_array(items, "decoders")? {
                decoder_steps(item, steps)?;
            }
        }
        "Replace" => steps.push(DecodeStep::Replace {
            pattern: pattern(object, "Replace")?,
            content: as_str(get(object, "content").ok_or_else(|| invalid("Replace has no content"))?, "content")?.to_owned(),
        }),
        "ByteFallback" => steps.push(DecodeStep::ByteFallback),
        "Fuse" => steps.push(DecodeStep::Fuse),
        "Strip" => steps.push(DecodeStep::Strip {
            content: one_char("content", "Strip")?,
            start: count("start")?,
            stop: count("stop")?,
        }),
        "Metaspace" => steps.push(DecodeStep::Metaspace {
            replacement: one_char("replacement", "Metaspace")?,
            strip_first: metaspace_prepend(object)? != Prepend::Never,
        }),
        other => return Err(unsupported(format!("the decoder {other}"))),
    }
    Ok(())
}

/// A `Metaspace`'s prepend scheme (`prepend_scheme`, or the older `add_prefix_space`).
fn metaspace_prepend(object: &Object<'_>) -> Result<Prepend, TokenizerError> {
    match present(object, "prepend_scheme") {
        Some(value) => match as_str(value, "prepend_scheme")? {
            "always" => Ok(Prepend::Always),
            "first" => Ok(Prepend::First),
            "never" => Ok(Prepend::Never),
            other => Err(unsupported(format!("the Metaspace prepend_scheme {other:?}"))),
        },
        None => Ok(if flag(object, "add_prefix_space", true) { Prepend::Always } else { Prepend::Never }),
    }
}

fn post_processor(value: &JsonValue<'_>) -> Result<PostProcessor, TokenizerError> {
    let object = as_object(value, "the post-processor")?;
    Ok(match type_of(object, "the post-processor")? {
        "ByteLevel" => PostProcessor::Nothing,
        "Sequence" => {
            let mut result = PostProcessor::Nothing;
            let items = get(object, "processors").ok_or_else(|| invalid("a Sequence post-processor has no list"))?;
            for item in as_array(items, "processors")? {
                match post_processor(item)? {
                    PostProcessor::Nothing => {}
                    other if matches!(result, PostProcessor::Nothing) => result = other,
                    _ => return Ok(PostProcessor::Unsupported("a Sequence of several post-processors that add tokens".into())),
                }
            }
            result
        }
        "TemplateProcessing" => template(object).unwrap_or_else(|error| PostProcessor::Unsupported(error.to_string())),
        other => PostProcessor::Unsupported(format!("the post-processor {other}")),
    })
}

/// `TemplateProcessing`'s single-sequence template.
fn template(object: &Object<'_>) -> Result<PostProcessor, TokenizerError> {
    let single = as_array(get(object, "single").ok_or_else(|| invalid("TemplateProcessing has no single"))?, "single")?;
    let specials = present(object, "special_tokens").map(|value| as_object(value, "special_tokens")).transpose()?;
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut seen_sequence = false;
    for piece in single {
        let piece = as_object(piece, "a template piece")?;
        if get(piece, "Sequence").is_some() {
            if seen_sequence {
                return Err(unsupported("a single-sequence template with the sequence twice"));
            }
            seen_sequence = true;
            continue;
        }
        let Some(special) = get(piece, "SpecialToken") else {
            return Err(invalid("a template piece is neither Sequence nor SpecialToken"));
        };
        let name = as_str(get(as_object(special, "SpecialToken")?, "id").ok_or_else(|| invalid("SpecialToken has no id"))?, "id")?;
        let entry = specials
            .and_then(|specials| get(specials, name))
            .ok_or_else(|| invalid(format!("the template's special token {name:?} is not in special_tokens")))?;
        let ids = as_array(get(as_object(entry, name)?, "ids").ok_or_else(|| invalid(format!("{name:?} has no ids")))?, "ids")?;
        let target = if seen_sequence { &mut after } else { &mut before };
        for id in ids {
            target.push(as_id(id, name)?);
        }
    }
    Ok(PostProcessor::Template { before, after })
}

pub(super) fn token_to_id(tokenizer: &Tokenizer, token: &str) -> Option<u32> {
    if let Some(found) = tokenizer.added.tokens.iter().find(|added| added.content == token) {
        return Some(found.id);
    }
    let chars_to_bytes: FastMap<char, u8> =
        byte_chars().iter().enumerate().map(|(byte, &c)| (c, byte as u8)).collect();
    let key = match tokenizer.model.symbols {
        Symbols::Bytes => byte_level_bytes(token, &chars_to_bytes)?,
        Symbols::Chars => token.as_bytes().to_vec(),
    };
    tokenizer.model.vocab.get(key.as_slice()).copied()
}

/// How many bytes of a piece the model token `id` covers: its bytes for a byte-level model, its
/// spelling's for a character model (a `<0xXX>` fallback token covers one byte; the unknown
/// token's width is not known).
pub(super) fn model_width(tokenizer: &Tokenizer, id: u32) -> Option<usize> {
    if tokenizer.model.unk == Some(id) {
        return None;
    }
    let spelling = tokenizer.spellings.get(id as usize)?;
    match tokenizer.model.symbols {
        Symbols::Bytes => Some(spelling.len()),
        Symbols::Chars => {
            let is_fallback = spelling.len() == 6 && spelling.starts_with(b"<0x") && spelling.ends_with(b">");
            Some(if is_fallback { 1 } else { spelling.len() })
        }
    }
}
