//! Token ids, as tiktoken's `Encoding` gives them: encoding with and without special tokens,
//! decoding, and cutting a text after its first N tokens.
//!
//! Ids come from the same embedded tables the counters use (bpe-openai reads each tiktoken rank
//! file in order, so a token's id is its tiktoken rank); the special tokens are tiktoken's
//! (`tiktoken_ext.openai_public`). Each pre-tokenized piece is encoded as tiktoken encodes it:
//! its id if the piece is one token, else the byte-pair merge (tiktoken's merge loop on the
//! stack for short pieces, the bpe crate's linear backtracking encoder for long ones, which
//! gives the same ids).

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

/// One exact encoding with its ids: tiktoken's `Encoding` for the same name.
#[derive(Clone, Copy)]
pub struct TokenEncoder {
    encoding: Encoding,
    bpe: &'static Bpe,
    special: &'static [SpecialToken],
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
        let special: &'static [SpecialToken] = match encoding {
            Encoding::O200kBase => &O200K_SPECIAL,
            Encoding::Cl100kBase => &CL100K_SPECIAL,
            Encoding::Estimate => return None,
        };
        Some(Self {
            encoding,
            bpe: encoding.bpe()?,
            special,
        })
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The special tokens, in tiktoken's order.
    pub fn special_tokens(&self) -> &'static [SpecialToken] {
        self.special
    }

    /// The number of mergeable (ordinary) tokens: their ids are `0..mergeable_tokens()`.
    pub fn mergeable_tokens(&self) -> usize {
        self.bpe.tokenizer.bpe.num_tokens()
    }

    /// tiktoken's `n_vocab`: the largest id plus one (the id space has holes before the last
    /// special tokens, as in tiktoken).
    pub fn n_vocab(&self) -> u32 {
        let largest_special = self.special.iter().map(|&(_, id)| id).max().unwrap_or(0);
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
        let allowed: Vec<SpecialToken> = self
            .special
            .iter()
            .copied()
            .filter(|(token, _)| allowed_special.contains(token))
            .collect();
        if allowed.is_empty() {
            return self.encode_ordinary(text);
        }
        let mut out = Vec::with_capacity(text.len() / 4);
        let mut occurrences = NextOccurrences::new(allowed.iter().map(|&(token, _)| token));
        let mut start = 0;
        while let Some((at, index)) = occurrences.leftmost(text, start) {
            self.encode_ordinary_into(&text[start..at], &mut out);
            let (token, id) = allowed[index];
            out.push(id);
            start = at + token.len();
        }
        self.encode_ordinary_into(&text[start..], &mut out);
        out
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
        self.special
            .iter()
            .find(|&&(_, id)| id == token)
            .map(|&(text, _)| text.as_bytes())
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
    fn first_occurrence_prefers_leftmost_then_listed_order() {
        assert_eq!(first_occurrence("xxab", &["b", "ab", "a"]), Some((2, 1)));
        assert_eq!(first_occurrence("", &[""]), Some((0, 0)));
    }
}
