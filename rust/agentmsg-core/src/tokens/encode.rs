//! Token ids, as tiktoken's `Encoding` gives them: encoding with and without special tokens,
//! decoding, and cutting a text after its first N tokens.
//!
//! Ids come from the same embedded tables the counters use (bpe-openai reads each tiktoken rank
//! file in order, so a token's id is its tiktoken rank); the special tokens are tiktoken's
//! (`tiktoken_ext.openai_public`). Each pre-tokenized piece is encoded as tiktoken encodes it:
//! its id if the piece is one token, else the byte-pair merge (tiktoken's merge loop on the
//! stack for short pieces, the bpe crate's linear backtracking encoder for long ones, which
//! gives the same ids).

use std::collections::HashMap;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use memchr::memmem;
use rayon::prelude::*;

use super::{chunk_bounds, Bpe, Encoding, MIN_CHUNK_BYTES, PARALLEL_MIN_BYTES};

/// A special token: its text and its id.
pub type SpecialToken = (&'static str, u32);

const CL100K_SPECIAL: [SpecialToken; 5] = [
    ("<|endoftext|>", 100_257),
    ("<|fim_prefix|>", 100_258),
    ("<|fim_middle|>", 100_259),
    ("<|fim_suffix|>", 100_260),
    ("<|endofprompt|>", 100_276),
];

const O200K_SPECIAL: [SpecialToken; 2] = [("<|endoftext|>", 199_999), ("<|endofprompt|>", 200_018)];

/// The Harmony format's named tokens from 200,000 on (tiktoken >= 0.12's `o200k_harmony`); every
/// other id up to 201,087 is `<|reserved_ID|>`.
const HARMONY_NAMED: [SpecialToken; 7] = [
    ("<|return|>", 200_002),
    ("<|constrain|>", 200_003),
    ("<|channel|>", 200_005),
    ("<|start|>", 200_006),
    ("<|end|>", 200_007),
    ("<|message|>", 200_008),
    ("<|call|>", 200_012),
];
/// One past the last reserved id of o200k_harmony (its `n_vocab`).
const HARMONY_END: u32 = 201_088;

/// The special tokens of one encoding, with one finder for all of them.
pub struct Specials {
    /// In tiktoken's order.
    tokens: Vec<SpecialToken>,
    /// Leftmost-first over `tokens`: what tiktoken's alternation of them finds.
    finder: AhoCorasick,
    /// The index in `tokens` of each token's text.
    index: HashMap<&'static str, usize>,
    /// The text each special id decodes to.
    by_id: HashMap<u32, &'static str>,
}

impl Specials {
    fn new(tokens: Vec<SpecialToken>) -> Self {
        let finder = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(tokens.iter().map(|&(text, _)| text))
            .expect("special tokens are short literals");
        let index = tokens.iter().enumerate().map(|(i, &(text, _))| (text, i)).collect();
        // The first token listed with an id is the text it decodes to.
        let mut by_id = HashMap::with_capacity(tokens.len());
        for &(text, id) in &tokens {
            by_id.entry(id).or_insert(text);
        }
        Self { tokens, finder, index, by_id }
    }

    /// Whether each special token is one of `names` (names that are not special are ignored).
    fn mask(&self, names: &[&str]) -> Vec<bool> {
        let mut mask = vec![false; self.tokens.len()];
        for name in names {
            if let Some(&i) = self.index.get(name) {
                mask[i] = true;
            }
        }
        mask
    }
}

static CL100K_SPECIALS: LazyLock<Specials> = LazyLock::new(|| Specials::new(CL100K_SPECIAL.to_vec()));
static O200K_SPECIALS: LazyLock<Specials> = LazyLock::new(|| Specials::new(O200K_SPECIAL.to_vec()));
static HARMONY_SPECIALS: LazyLock<Specials> = LazyLock::new(|| {
    // tiktoken's order: o200k_base's, <|startoftext|>, then every id from 200,000 (200,018 is
    // both <|endofprompt|> and <|reserved_200018|>, as in tiktoken).
    let mut tokens = O200K_SPECIAL.to_vec();
    tokens.push(("<|startoftext|>", 199_998));
    for id in 200_000..HARMONY_END {
        match HARMONY_NAMED.iter().find(|&&(_, named)| named == id) {
            Some(&token) => tokens.push(token),
            None => {
                // Built once per process: the names live as long as the tables.
                let name: &'static str = Box::leak(format!("<|reserved_{id}|>").into_boxed_str());
                tokens.push((name, id));
            }
        }
    }
    Specials::new(tokens)
});

/// One exact encoding with its ids: tiktoken's `Encoding` for the same name.
#[derive(Clone, Copy)]
pub struct TokenEncoder {
    encoding: Encoding,
    bpe: &'static Bpe,
    specials: &'static Specials,
}

/// A token id that is neither a mergeable token nor a special token of the encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidToken(pub u32);

impl TokenEncoder {
    /// The encoder of `encoding`, or `None` for [`Encoding::Estimate`], which has no ids.
    ///
    /// ```
    /// use agentmsg_core::tokens::{encode::TokenEncoder, Encoding};
    /// let cl100k = TokenEncoder::new(Encoding::Cl100kBase).unwrap();
    /// assert_eq!(cl100k.encode_ordinary("hello world"), vec![15339, 1917]);
    /// assert!(TokenEncoder::new(Encoding::Estimate).is_none());
    /// ```
    pub fn new(encoding: Encoding) -> Option<Self> {
        let specials: &'static Specials = match encoding {
            Encoding::O200kBase => &O200K_SPECIALS,
            Encoding::Cl100kBase => &CL100K_SPECIALS,
            Encoding::O200kHarmony => &HARMONY_SPECIALS,
            Encoding::Estimate => return None,
        };
        Some(Self {
            encoding,
            bpe: encoding.bpe()?,
            specials,
        })
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The special tokens, in tiktoken's order.
    pub fn special_tokens(&self) -> &'static [SpecialToken] {
        &self.specials.tokens
    }

    /// The number of mergeable (ordinary) tokens: their ids are `0..mergeable_tokens()`.
    pub fn mergeable_tokens(&self) -> usize {
        self.bpe.tokenizer.bpe.num_tokens()
    }

    /// tiktoken's `n_vocab`: the largest id plus one (the id space has holes before the last
    /// special tokens, as in tiktoken).
    pub fn n_vocab(&self) -> u32 {
        let largest_special = self.specials.tokens.iter().map(|&(_, id)| id).max().unwrap_or(0);
        largest_special.max(self.mergeable_tokens() as u32 - 1) + 1
    }

    /// The ids of `text` with special-token strings taken as plain text (tiktoken's
    /// `encode_ordinary`). A long text is encoded in chunks on rayon's pool.
    pub fn encode_ordinary(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 4);
        self.encode_ordinary_into(text, &mut out);
        out
    }

    /// The ids of `text`, where an occurrence of a special token named in `allowed_special`
    /// becomes that token's id and all other text is encoded as by [`Self::encode_ordinary`]
    /// (tiktoken's `encode` once its disallowed-token check has passed). Names in
    /// `allowed_special` that are not special tokens are ignored, as tiktoken ignores them.
    ///
    /// ```
    /// use agentmsg_core::tokens::{encode::TokenEncoder, Encoding};
    /// let cl100k = TokenEncoder::new(Encoding::Cl100kBase).unwrap();
    /// assert_eq!(cl100k.encode("hi<|endoftext|>", &["<|endoftext|>"]), vec![6151, 100257]);
    /// assert_eq!(cl100k.encode("hi<|endoftext|>", &[]).len(), 8);
    /// ```
    pub fn encode(&self, text: &str, allowed_special: &[&str]) -> Vec<u32> {
        let allowed = self.specials.mask(allowed_special);
        if !allowed.contains(&true) {
            return self.encode_ordinary(text);
        }
        let mut out = Vec::with_capacity(text.len() / 4);
        let mut start = 0;
        // Every special token is found and those not allowed are passed over, as tiktoken
        // does; no special token can overlap another, so passing over one hides none.
        for found in self.specials.finder.find_iter(text) {
            if allowed[found.pattern().as_usize()] {
                self.encode_ordinary_into(&text[start..found.start()], &mut out);
                out.push(self.specials.tokens[found.pattern().as_usize()].1);
                start = found.end();
            }
        }
        self.encode_ordinary_into(&text[start..], &mut out);
        out
    }

    /// The leftmost occurrence in `text` of a string of `disallowed`, as the index of that
    /// string (the first one listed when several start there): tiktoken's check for
    /// disallowed special tokens. Special tokens are found with the encoding's one finder;
    /// other strings by [`first_occurrence`].
    ///
    /// ```
    /// use agentmsg_core::tokens::{encode::TokenEncoder, Encoding};
    /// let cl100k = TokenEncoder::new(Encoding::Cl100kBase).unwrap();
    /// assert_eq!(cl100k.first_disallowed("a<|fim_prefix|><|endoftext|>", &["<|endoftext|>", "<|fim_prefix|>"]), Some(1));
    /// assert_eq!(cl100k.first_disallowed("a<|endoftext|>", &["<|fim_prefix|>"]), None);
    /// ```
    pub fn first_disallowed(&self, text: &str, disallowed: &[&str]) -> Option<usize> {
        if !disallowed.iter().all(|name| self.specials.index.contains_key(name)) {
            return first_occurrence(text, disallowed).map(|(_, needle)| needle);
        }
        let mask = self.specials.mask(disallowed);
        let found = self.specials.finder.find_iter(text).find(|found| mask[found.pattern().as_usize()])?;
        let token = self.specials.tokens[found.pattern().as_usize()].0;
        disallowed.iter().position(|&name| name == token)
    }

    /// The bytes of `tokens`, special tokens included (tiktoken's `decode_bytes`); the first id
    /// that is no token is the error.
    ///
    /// ```
    /// use agentmsg_core::tokens::{encode::{InvalidToken, TokenEncoder}, Encoding};
    /// let cl100k = TokenEncoder::new(Encoding::Cl100kBase).unwrap();
    /// assert_eq!(cl100k.decode_bytes(&[15339, 1917]), Ok(b"hello world".to_vec()));
    /// assert_eq!(cl100k.decode_bytes(&[15339, 100261]), Err(InvalidToken(100261)));
    /// ```
    pub fn decode_bytes(&self, tokens: &[u32]) -> Result<Vec<u8>, InvalidToken> {
        let mut out = Vec::with_capacity(tokens.len() * 4);
        for &token in tokens {
            out.extend_from_slice(self.token_bytes(token).ok_or(InvalidToken(token))?);
        }
        Ok(out)
    }

    /// The bytes of one token, special or not; `None` for an id that is no token.
    pub fn token_bytes(&self, token: u32) -> Option<&'static [u8]> {
        if (token as usize) < self.mergeable_tokens() {
            return Some(self.bpe.tokenizer.bpe.token_bytes(token));
        }
        self.specials.by_id.get(&token).map(|text| text.as_bytes())
    }

    /// The text of the first `max_tokens` tokens of `text` (encoded as by
    /// [`Self::encode_ordinary`]), without a character that the last of those tokens splits:
    /// the result is always a prefix of `text` that ends on a character boundary. Encodes no
    /// further than the piece holding token number `max_tokens`. With `keep_end`, the text of
    /// the *last* `max_tokens` tokens instead (the newest part of a message), without a
    /// character the first of them splits: a suffix that starts on a character boundary.
    ///
    /// ```
    /// use agentmsg_core::tokens::{encode::TokenEncoder, Encoding};
    /// let o200k = TokenEncoder::new(Encoding::O200kBase).unwrap();
    /// assert_eq!(o200k.truncate("one two three four", 2, false), "one two");
    /// assert_eq!(o200k.truncate("one two three four", 2, true), " three four");
    /// assert_eq!(o200k.truncate("one", 5, true), "one");
    /// ```
    pub fn truncate<'t>(&self, text: &'t str, max_tokens: usize, keep_end: bool) -> &'t str {
        if max_tokens >= text.len() {
            return text; // every token is at least one byte
        }
        if keep_end {
            return self.truncate_start(text, max_tokens);
        }
        let mut ids = Vec::with_capacity(max_tokens + 16);
        let mut end = 0;
        for piece in self.bpe.tokenizer.split(text) {
            let before = ids.len();
            self.encode_piece(piece, &mut ids);
            if ids.len() >= max_tokens {
                end += ids[before..max_tokens]
                    .iter()
                    .map(|&id| self.bpe.tokenizer.bpe.token_len(id))
                    .sum::<usize>();
                break;
            }
            end += piece.len();
        }
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        &text[..end]
    }

    /// [`Self::truncate`] keeping the end: the whole text is encoded (where the last tokens begin
    /// depends on every piece before them).
    fn truncate_start<'t>(&self, text: &'t str, max_tokens: usize) -> &'t str {
        let ids = self.encode_ordinary(text);
        let Some(first) = ids.len().checked_sub(max_tokens) else { return text };
        let kept: usize = ids[first..].iter().map(|&id| self.bpe.tokenizer.bpe.token_len(id)).sum();
        let mut start = text.len().saturating_sub(kept);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        &text[start..]
    }

    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>) {
        if text.len() < PARALLEL_MIN_BYTES {
            return self.encode_serial(text, out);
        }
        let target = (text.len() / (4 * rayon::current_num_threads())).max(MIN_CHUNK_BYTES);
        let bounds = chunk_bounds(text, target);
        let parts: Vec<Vec<u32>> = bounds
            .par_windows(2)
            .map(|pair| {
                let chunk = &text[pair[0]..pair[1]];
                let mut ids = Vec::with_capacity(chunk.len() / 4);
                self.encode_serial(chunk, &mut ids);
                ids
            })
            .collect();
        out.reserve(parts.iter().map(Vec::len).sum());
        for part in parts {
            out.extend_from_slice(&part);
        }
    }

    fn encode_serial(&self, text: &str, out: &mut Vec<u32>) {
        for piece in self.bpe.tokenizer.split(text) {
            self.encode_piece(piece, out);
        }
    }

    /// The ids of one pre-tokenized piece, appended to `out`.
    #[inline]
    fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) {
        let bytes = piece.as_bytes();
        if let Some(id) = self.bpe.whole_tokens.id(bytes) {
            out.push(id);
        } else if !self.bpe.whole_tokens.encode_short(bytes, out) {
            out.extend(self.bpe.tokenizer.bpe.encode_via_backtracking(bytes));
        }
    }
}

/// Encodes each text with [`TokenEncoder::encode`], spread over rayon's pool.
pub fn encode_batch<S: AsRef<str> + Sync>(
    encoder: &TokenEncoder,
    texts: &[S],
    allowed_special: &[&str],
) -> Vec<Vec<u32>> {
    texts
        .par_iter()
        .map(|text| encoder.encode(text.as_ref(), allowed_special))
        .collect()
}

/// The leftmost occurrence in `text` of any of `needles`: its byte offset and the index of the
/// needle (the first one listed when several start there), as a regex alternation of the
/// needles finds it. This is tiktoken's check for disallowed special tokens.
///
/// ```
/// use agentmsg_core::tokens::encode::first_occurrence;
/// assert_eq!(first_occurrence("a <|b|> <|c|>", &["<|c|>", "<|b|>"]), Some((2, 1)));
/// assert_eq!(first_occurrence("plain", &["<|c|>"]), None);
/// ```
pub fn first_occurrence(text: &str, needles: &[&str]) -> Option<(usize, usize)> {
    NextOccurrences::new(needles.iter().copied()).leftmost(text, 0)
}

/// The next occurrence of each needle, found once and searched again only once passed, so
/// finding every occurrence in order stays linear in the text for each needle.
struct NextOccurrences<'n> {
    finders: Vec<memmem::Finder<'n>>,
    /// For each needle: where its next occurrence at or after the last search start begins
    /// (`None`: not searched yet or passed; `Some(None)`: none left).
    next: Vec<Option<Option<usize>>>,
}

impl<'n> NextOccurrences<'n> {
    fn new(needles: impl Iterator<Item = &'n str>) -> Self {
        let finders: Vec<memmem::Finder<'n>> = needles.map(memmem::Finder::new).collect();
        let next = vec![None; finders.len()];
        Self { finders, next }
    }

    /// The leftmost occurrence starting at or after `start` (offsets only grow between calls).
    fn leftmost(&mut self, text: &str, start: usize) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (index, finder) in self.finders.iter().enumerate() {
            let at = match self.next[index] {
                Some(Some(at)) if at >= start => Some(at),
                Some(None) => None,
                _ => finder
                    .find(&text.as_bytes()[start..])
                    .map(|offset| start + offset),
            };
            self.next[index] = Some(at);
            if let Some(at) = at {
                if best.is_none_or(|(best_at, _)| at < best_at) {
                    best = Some((at, index));
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoders() -> [TokenEncoder; 2] {
        [
            TokenEncoder::new(Encoding::O200kBase).unwrap(),
            TokenEncoder::new(Encoding::Cl100kBase).unwrap(),
        ]
    }

    #[test]
    fn vocabulary_sizes_are_tiktokens() {
        let [o200k, cl100k] = encoders();
        assert_eq!((o200k.mergeable_tokens(), o200k.n_vocab()), (199_998, 200_019));
        assert_eq!((cl100k.mergeable_tokens(), cl100k.n_vocab()), (100_256, 100_277));
        assert_eq!(cl100k.token_bytes(100_261), None);
        assert_eq!(cl100k.token_bytes(100_276), Some(&b"<|endofprompt|>"[..]));
    }

    #[test]
    fn ids_decode_to_the_text_and_count_as_the_counter() {
        let text = "Hello, 世界! <|endoftext|> naïve   spaces\n\n\tend 12345 🦀🦀 ".repeat(50);
        for encoder in encoders() {
            let ids = encoder.encode_ordinary(&text);
            assert_eq!(ids.len(), super::super::count_tokens(&text, encoder.encoding()));
            assert_eq!(encoder.decode_bytes(&ids).unwrap(), text.as_bytes());
        }
    }

    #[test]
    fn long_text_is_chunked_with_the_same_ids() {
        let text = "line of text, with words\n".repeat(10_000);
        for encoder in encoders() {
            let mut serial = Vec::new();
            encoder.encode_serial(&text, &mut serial);
            assert_eq!(encoder.encode_ordinary(&text), serial);
        }
    }

    #[test]
    fn allowed_special_tokens_become_ids() {
        let [o200k, cl100k] = encoders();
        let text = "a<|endoftext|>b<|fim_prefix|><|endoftext|>";
        let ids = cl100k.encode(text, &["<|endoftext|>", "not special"]);
        let mut expected = cl100k.encode_ordinary("a");
        expected.push(100_257);
        expected.extend(cl100k.encode_ordinary("b<|fim_prefix|>"));
        expected.push(100_257);
        assert_eq!(ids, expected);
        // <|fim_prefix|> is not special in o200k_base.
        assert_eq!(
            o200k.encode(text, &["<|fim_prefix|>"]),
            o200k.encode_ordinary(text)
        );
    }

    #[test]
    fn many_occurrences_of_an_unallowed_token_stay_linear() {
        let [_, cl100k] = encoders();
        let text = "<|endoftext|>".repeat(20_000) + "<|fim_suffix|>";
        let ids = cl100k.encode(&text, &["<|fim_suffix|>", "<|fim_middle|>"]);
        assert_eq!(ids.last(), Some(&100_260));
    }

    #[test]
    fn truncate_keeps_whole_characters() {
        for encoder in encoders() {
            let text = "日本語のテキスト🦀 and more text";
            let ids = encoder.encode_ordinary(text);
            for max in 0..=ids.len() + 1 {
                let cut = encoder.truncate(text, max, false);
                let bytes = encoder.decode_bytes(&ids[..max.min(ids.len())]).unwrap();
                assert!(bytes.starts_with(cut.as_bytes()));
                assert!(bytes.len() - cut.len() < 4, "dropped at most one character");
                let cut = encoder.truncate(text, max, true);
                let bytes = encoder.decode_bytes(&ids[ids.len().saturating_sub(max)..]).unwrap();
                assert!(bytes.ends_with(cut.as_bytes()) && text.ends_with(cut));
                assert!(bytes.len() - cut.len() < 4, "dropped at most one character");
            }
        }
    }

    #[test]
    fn harmony_is_o200k_base_with_the_harmony_tokens() {
        let harmony = TokenEncoder::new(Encoding::O200kHarmony).unwrap();
        let [o200k, _] = encoders();
        assert_eq!((harmony.mergeable_tokens(), harmony.n_vocab()), (199_998, 201_088));
        assert_eq!(harmony.special_tokens().len(), 1091);
        let text = "<|start|>assistant<|channel|>final<|message|>Hi<|return|>";
        assert_eq!(harmony.encode_ordinary(text), o200k.encode_ordinary(text));
        let ids = harmony.encode(text, &["<|start|>", "<|channel|>", "<|message|>", "<|return|>"]);
        assert_eq!(ids[..3], [200_006, 173_781, 200_005]);
        assert_eq!(harmony.decode_bytes(&ids).unwrap(), text.as_bytes());
        // 200,018 has two names; it decodes to the first, o200k_base's.
        assert_eq!(harmony.token_bytes(200_018), Some(&b"<|endofprompt|>"[..]));
        assert_eq!(harmony.token_bytes(201_087), Some(&b"<|reserved_201087|>"[..]));
        assert_eq!(harmony.token_bytes(201_088), None);
        assert_eq!(harmony.first_disallowed("a <|end|> <|call|>", &["<|call|>", "<|end|>"]), Some(1));
    }

    #[test]
    fn no_special_token_can_overlap_another() {
        // Passing over a token that is not allowed never hides one that is (`encode`).
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase, Encoding::O200kHarmony] {
            let tokens = TokenEncoder::new(encoding).unwrap().special_tokens();
            let starts: std::collections::HashSet<&[u8]> = tokens
                .iter()
                .flat_map(|(t, _)| (1..t.len()).map(move |n| &t.as_bytes()[..n]))
                .collect();
            for (token, _) in tokens {
                for cut in 1..token.len() {
                    assert!(!starts.contains(&token.as_bytes()[cut..]), "{token}");
                }
            }
        }
    }

    #[test]
    fn first_occurrence_prefers_leftmost_then_listed_order() {
        assert_eq!(first_occurrence("xxab", &["b", "ab", "a"]), Some((2, 1)));
        assert_eq!(first_occurrence("", &[""]), Some((0, 0)));
    }
}
