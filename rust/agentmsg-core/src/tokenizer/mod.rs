//! Open models' own tokenizers, loaded from a Hugging Face `tokenizer.json`, giving the ids the
//! `tokenizers` library gives.
//!
//! Supported: the BPE model (byte-level, as Llama 3, Qwen 2.5/3, DeepSeek, GLM and gpt-oss
//! ship it, or over characters with byte fallback), the `Split` and `ByteLevel`
//! pre-tokenizers, the NFC/NFD/NFKC/NFKD, `Lowercase`, `Prepend`, `Replace` and `Strip`
//! normalizers, added and special tokens with their matching options, `TemplateProcessing`
//! for `add_special_tokens`, and the `ByteLevel` decoder. Anything else a file holds is a
//! [`TokenizerError::Unsupported`] naming it, at load (or, for a post-processor or decoder,
//! when it is needed): never a wrong count.
//!
//! Speed comes from the pre-tokenizer regexes run on a lazy DFA (see [`pretokenize`]) and from
//! merging short pieces in place without allocating.

mod added;
mod bpe;
pub(crate) mod decode;
mod load;
mod normalize;
mod pretokenize;

use std::borrow::Cow;
use std::hash::Hasher;
use std::fmt;

use rayon::prelude::*;

use added::AddedTokens;
use bpe::BpeModel;
use normalize::Normalizer;
use pretokenize::PreStep;

/// [`Tokenizer::count`] remembers the counts of pieces it has merged in a text of at least
/// `MEMO_MIN_TEXT` bytes, for pieces of `MEMO_MIN_PIECE..=MEMO_MAX_PIECE` bytes (shorter ones
/// merge faster than they are looked up), in a slot per 16 bytes of text, within
/// `MEMO_MIN_SLOTS..=MEMO_MAX_SLOTS`.
const MEMO_MIN_TEXT: usize = 1024;
const MEMO_MIN_PIECE: usize = 3;
const MEMO_MAX_PIECE: usize = 24;
const MEMO_MIN_SLOTS: usize = 64;
const MEMO_MAX_SLOTS: usize = 16384;

/// One remembered piece: its bytes (`len` of them; 0 for an empty slot) and its token count.
#[derive(Clone, Copy)]
struct MemoSlot {
    len: u8,
    bytes: [u8; MEMO_MAX_PIECE],
    count: u32,
}

/// The token counts of the pieces merged so far in one text, direct-mapped: a piece whose slot
/// holds another takes it over. A lookup is one hash and one comparison whatever the text, so
/// no text can make it cost more (a hash table's chains could be flooded by crafted pieces).
struct PieceMemo {
    slots: Vec<MemoSlot>,
    /// 64 minus the bits of a slot's index.
    shift: u32,
}

impl PieceMemo {
    /// A memo for a text of `text_len` bytes.
    fn new(text_len: usize) -> Self {
        let slots = (text_len / 16).next_power_of_two().clamp(MEMO_MIN_SLOTS, MEMO_MAX_SLOTS);
        Self {
            slots: vec![MemoSlot { len: 0, bytes: [0; MEMO_MAX_PIECE], count: 0 }; slots],
            shift: 64 - slots.trailing_zeros(),
        }
    }

    /// Whether `piece` is remembered at all, and its slot.
    fn slot(&self, piece: &[u8]) -> Option<usize> {
        if !(MEMO_MIN_PIECE..=MEMO_MAX_PIECE).contains(&piece.len()) {
            return None;
        }
        let mut hasher = bpe::FastHasher::default();
        hasher.write(piece);
        // The high bits: the multiply mixes into them.
        Some((hasher.finish() >> self.shift) as usize)
    }

    fn get(&self, slot: usize, piece: &[u8]) -> Option<usize> {
        let held = &self.slots[slot];
        (usize::from(held.len) == piece.len() && held.bytes[..piece.len()] == *piece).then_some(held.count as usize)
    }

    fn put(&mut self, slot: usize, piece: &[u8], count: usize) {
        let held = &mut self.slots[slot];
        held.len = piece.len() as u8;
        held.bytes[..piece.len()].copy_from_slice(piece);
        held.count = count as u32;
    }
}

/// Why a tokenizer file cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenizerError {
    /// The file is not the JSON it should be; says what is wrong and where.
    Invalid(String),
    /// The file asks for something this implementation does not do; names it.
    Unsupported(String),
    /// A token id that is no token of this tokenizer.
    UnknownId(u32),
}

impl fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(what) => write!(f, "invalid tokenizer file: {what}"),
            Self::Unsupported(what) => write!(f, "unsupported tokenizer: {what}"),
            Self::UnknownId(id) => write!(f, "token id {id} is no token of this tokenizer"),
        }
    }
}

impl std::error::Error for TokenizerError {}

/// What `add_special_tokens` adds around a text (the file's post-processor).
enum PostProcessor {
    /// Nothing (no post-processor, or one that only moves offsets, like `ByteLevel`).
    Nothing,
    /// `TemplateProcessing`'s single-sequence template: ids before and after the text.
    Template { before: Vec<u32>, after: Vec<u32> },
    /// A post-processor this implementation does not run; named when it is needed.
    Unsupported(String),
}

/// How ids become text.
enum Decoder {
    /// The token spellings' bytes, joined, read as UTF-8 with U+FFFD for invalid bytes.
    Bytes,
    /// SentencePiece-style steps over the spellings (`Replace`, `ByteFallback`, `Fuse`,
    /// `Strip`, `Metaspace`).
    Steps(Vec<decode::DecodeStep>),
    /// A decoder this implementation does not run; named when it is needed.
    Unsupported(String),
}

/// A tokenizer loaded from a `tokenizer.json`.
pub struct Tokenizer {
    model: BpeModel,
    normalizers: Vec<Normalizer>,
    pre: Vec<PreStep>,
    added: AddedTokens,
    post: PostProcessor,
    decoder: Decoder,
    /// Each id's bytes when decoded (empty for a hole in the id space).
    spellings: Vec<Box<[u8]>>,
    /// Whether each id is a token at all, and whether it is special.
    known: Vec<bool>,
    special: Vec<bool>,
    /// The special tokens, `(spelling, id)`, in the file's order.
    specials: Vec<(String, u32)>,
}

/// One unit of a text as the pipeline cuts it, with where it ends in the text (`None` if a
/// normalizer changed its segment, so its end in the original text is not known).
enum Unit<'a> {
    Added { id: u32, end: Option<usize>, segment_start: usize },
    Piece { piece: &'a str, end: Option<usize>, segment_start: usize },
}

impl Tokenizer {
    /// Loads a tokenizer from the text of a `tokenizer.json`, or of a Mistral `tekken.json`
    /// (tiktoken ranks and split pattern, ids after the special tokens; special tokens are not
    /// read in text, as Mistral's tokenizer does not read them).
    ///
    /// ```
    /// use agentmsg_core::tokenizer::{Tokenizer, TokenizerError};
    /// let json = r#"{"model": {"type": "WordPiece", "vocab": {}}}"#;
    /// let error = Tokenizer::from_json(json.as_bytes()).err().unwrap();
    /// assert!(matches!(error, TokenizerError::Unsupported(ref what) if what.contains("WordPiece")));
    /// ```
    pub fn from_json(json: &[u8]) -> Result<Self, TokenizerError> {
        load::from_json(json)
    }

    /// Loads a tiktoken rank file (`base64 rank` lines) with the split pattern and the special
    /// tokens `(text, id)` that go with it; special tokens are read in text (as tiktoken's
    /// `encode(text, allowed_special="all")`).
    pub fn from_tiktoken(ranks: &[u8], pattern: &str, special_tokens: Vec<(String, u32)>) -> Result<Self, TokenizerError> {
        load::from_tiktoken(ranks, pattern, special_tokens)
    }

    /// The number of ids: the largest id plus one.
    pub fn vocab_size(&self) -> usize {
        self.spellings.len()
    }

    /// The id of a token spelled `token` as the file spells it (an added token's content, or a
    /// vocabulary entry).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        load::token_to_id(self, token)
    }

    /// The special tokens, as `(spelling, id)`.
    pub fn special_tokens(&self) -> &[(String, u32)] {
        &self.specials
    }

    /// Whether `id` is a special token.
    pub fn is_special(&self, id: u32) -> bool {
        self.special.get(id as usize).copied().unwrap_or(false)
    }

    /// The ids of `text`; with `add_special_tokens`, framed as the file's post-processor says.
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>, TokenizerError> {
        let mut ids = Vec::with_capacity(text.len() / 3 + 4);
        self.walk(text, &mut |unit| match unit {
            Unit::Added { id, .. } => ids.push(id),
            Unit::Piece { piece, .. } => self.model.encode_piece(piece.as_bytes(), &mut ids),
        });
        if add_special_tokens {
            match &self.post {
                PostProcessor::Nothing => {}
                PostProcessor::Template { before, after } => {
                    ids.splice(0..0, before.iter().copied());
                    ids.extend_from_slice(after);
                }
                PostProcessor::Unsupported(what) => return Err(TokenizerError::Unsupported(what.clone())),
            }
        }
        Ok(ids)
    }

    /// The number of ids of `text` (as `encode(...).len()`, without building the list).
    pub fn count(&self, text: &str, add_special_tokens: bool) -> Result<usize, TokenizerError> {
        let mut count = 0;
        let mut scratch = Vec::with_capacity(64);
        // A text repeats its words (a chat request its markers, roles and field names): a
        // long one merges each piece once, as far as the memo remembers it.
        let mut memo = (text.len() >= MEMO_MIN_TEXT).then(|| PieceMemo::new(text.len()));
        self.walk(text, &mut |unit| match unit {
            Unit::Added { .. } => count += 1,
            Unit::Piece { piece, .. } => {
                let bytes = piece.as_bytes();
                let slot = memo.as_ref().and_then(|memo| memo.slot(bytes));
                if let (Some(memo), Some(slot)) = (&memo, slot) {
                    if let Some(known) = memo.get(slot, bytes) {
                        count += known;
                        return;
                    }
                }
                scratch.clear();
                self.model.encode_piece(bytes, &mut scratch);
                count += scratch.len();
                if let (Some(memo), Some(slot)) = (&mut memo, slot) {
                    memo.put(slot, bytes, scratch.len());
                }
            }
        });
        if add_special_tokens {
            match &self.post {
                PostProcessor::Nothing => {}
                PostProcessor::Template { before, after } => count += before.len() + after.len(),
                PostProcessor::Unsupported(what) => return Err(TokenizerError::Unsupported(what.clone())),
            }
        }
        Ok(count)
    }

    /// [`Self::encode`] of each text, in parallel on the current rayon pool.
    pub fn encode_batch(&self, texts: &[&str], add_special_tokens: bool) -> Result<Vec<Vec<u32>>, TokenizerError> {
        texts.par_iter().map(|text| self.encode(text, add_special_tokens)).collect()
    }

    /// [`Self::count`] of each text, in parallel on the current rayon pool.
    pub fn count_batch(&self, texts: &[&str], add_special_tokens: bool) -> Result<Vec<usize>, TokenizerError> {
        texts.par_iter().map(|text| self.count(text, add_special_tokens)).collect()
    }

    /// The text of `ids` (without the special tokens if `skip_special_tokens`).
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, TokenizerError> {
        if let Decoder::Steps(steps) = &self.decoder {
            let tokens = self.spelled(ids, skip_special_tokens)?;
            return Ok(decode::decode_chain(steps, tokens.iter().map(|bytes| String::from_utf8_lossy(bytes).into_owned()).collect()));
        }
        Ok(String::from_utf8_lossy(&self.decode_bytes(ids, skip_special_tokens)?).into_owned())
    }

    /// Each kept id's spelling.
    fn spelled(&self, ids: &[u32], skip_special_tokens: bool) -> Result<Vec<&[u8]>, TokenizerError> {
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            if !self.known.get(id as usize).copied().unwrap_or(false) {
                return Err(TokenizerError::UnknownId(id));
            }
            if !(skip_special_tokens && self.special[id as usize]) {
                out.push(&*self.spellings[id as usize]);
            }
        }
        Ok(out)
    }

    /// The bytes `ids` decode to, before they are read as UTF-8 (a token may end inside a
    /// character; a stream of ids decodes in pieces through these).
    pub fn decode_bytes(&self, ids: &[u32], skip_special_tokens: bool) -> Result<Vec<u8>, TokenizerError> {
        match &self.decoder {
            Decoder::Unsupported(what) => Err(TokenizerError::Unsupported(what.clone())),
            Decoder::Steps(_) => Ok(self.decode(ids, skip_special_tokens)?.into_bytes()),
            Decoder::Bytes => Ok(self.spelled(ids, skip_special_tokens)?.concat()),
        }
    }

    /// The bytes of one id's spelling, for reading ids incrementally ([`crate::ids`]); `None`
    /// for an id that is no token.
    pub(crate) fn id_bytes(&self, id: u32) -> Option<&[u8]> {
        self.known.get(id as usize).copied().unwrap_or(false).then(|| &*self.spellings[id as usize])
    }

    /// How a stream of ids decodes piece by piece: `None` if decoding joins each id's bytes,
    /// else the SentencePiece-style steps ([`decode::StreamedChain`] runs them token by token);
    /// an error names a decoder that cannot be run so.
    pub(crate) fn streamed_steps(&self) -> Result<Option<&[decode::DecodeStep]>, TokenizerError> {
        match &self.decoder {
            Decoder::Bytes => Ok(None),
            Decoder::Steps(steps) => match decode::why_not_streamed(steps) {
                None => Ok(Some(steps)),
                Some(what) => Err(TokenizerError::Unsupported(what.into())),
            },
            Decoder::Unsupported(what) => Err(TokenizerError::Unsupported(what.clone())),
        }
    }

    /// The added tokens (special or not) and the special tokens, `(spelling, id)`.
    pub(crate) fn added_tokens(&self) -> impl Iterator<Item = (&str, u32)> {
        let added = self.added.tokens.iter().map(|token| (token.content.as_str(), token.id));
        added.chain(self.specials.iter().map(|(spelling, id)| (spelling.as_str(), *id)))
    }

    /// The byte length of the longest prefix of `text` that ends where its `max_tokens`-th
    /// token ends (at a character boundary: a token that ends inside a character is left out
    /// with it). A segment that a normalizer changed is kept or cut whole.
    pub fn truncate_len(&self, text: &str, max_tokens: usize) -> usize {
        let mut count = 0usize;
        let mut kept = 0usize;
        let mut done = false;
        let mut scratch = Vec::with_capacity(64);
        self.walk(text, &mut |unit| {
            if done {
                return;
            }
            match unit {
                Unit::Added { end, segment_start, .. } => {
                    if count + 1 > max_tokens {
                        done = true;
                        return;
                    }
                    count += 1;
                    kept = end.unwrap_or(segment_start).max(kept);
                }
                Unit::Piece { piece, end, segment_start } => {
                    scratch.clear();
                    self.model.encode_piece(piece.as_bytes(), &mut scratch);
                    if count + scratch.len() <= max_tokens {
                        count += scratch.len();
                        kept = end.unwrap_or(segment_start).max(kept);
                        return;
                    }
                    done = true;
                    let Some(end) = end else {
                        return;
                    };
                    let taken = max_tokens - count;
                    let start = end - piece.len();
                    let width: Option<usize> =
                        scratch[..taken].iter().map(|&id| self.model_width(id)).sum();
                    if let Some(width) = width {
                        kept = floor_char_boundary(text, start + width.min(piece.len()));
                    }
                }
            }
        });
        if !done {
            return text.len();
        }
        kept
    }

    /// How many bytes of a piece the model token `id` stands for, if known.
    fn model_width(&self, id: u32) -> Option<usize> {
        load::model_width(self, id)
    }

    /// Cuts `text` into added tokens and pre-tokenized pieces, in order.
    fn walk<'t>(&self, text: &'t str, visit: &mut dyn FnMut(Unit<'_>)) {
        self.added.split_raw(text, &mut |start, end, id| {
            if let Some(id) = id {
                visit(Unit::Added { id, end: Some(end), segment_start: start });
                return;
            }
            let segment = &text[start..end];
            let normalized = normalize::normalize(&self.normalizers, segment);
            let unchanged = matches!(normalized, Cow::Borrowed(_));
            let base = normalized.as_ptr() as usize;
            self.added.split_normalized(&normalized, &mut |from, to, id| {
                if let Some(id) = id {
                    let end = unchanged.then_some(start + to);
                    visit(Unit::Added { id, end, segment_start: start });
                    return;
                }
                let at_start = start == 0 && from == 0;
                pretokenize::pre_tokenize(&self.pre, &normalized[from..to], at_start, &mut |piece| {
                    // A piece that is a slice of the unchanged segment knows where it ends.
                    let offset = (piece.as_ptr() as usize).wrapping_sub(base);
                    let end = (unchanged && offset <= segment.len() && offset + piece.len() <= segment.len())
                        .then_some(start + offset + piece.len());
                    visit(Unit::Piece { piece, end, segment_start: start });
                });
            });
        });
    }
}

/// `at`, moved back to the start of the character it is inside.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod memo_tests {
    use super::{PieceMemo, MEMO_MAX_PIECE};

    #[test]
    fn a_piece_in_a_taken_slot_takes_it_over() {
        let mut memo = PieceMemo::new(4096);
        assert_eq!(memo.slots.len(), 256);
        assert_eq!(memo.slot(b"ab"), None);
        assert_eq!(memo.slot(&[b'a'; MEMO_MAX_PIECE + 1]), None);
        let first = b"piece0".to_vec();
        let slot = memo.slot(&first).unwrap();
        let other = (1..100_000)
            .map(|i| format!("piece{i}").into_bytes())
            .find(|piece| memo.slot(piece) == Some(slot))
            .expect("two pieces share a slot");
        assert_eq!(memo.get(slot, &first), None);
        memo.put(slot, &first, 2);
        assert_eq!(memo.get(slot, &first), Some(2));
        assert_eq!(memo.get(slot, &other), None);
        memo.put(slot, &other, 3);
        assert_eq!(memo.get(slot, &other), Some(3));
        assert_eq!(memo.get(slot, &first), None);
        // A prefix of the held piece is not it.
        assert_eq!(memo.get(slot, &other[..other.len() - 1]), None);
    }
}
