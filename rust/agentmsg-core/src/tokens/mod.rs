//! Exact token counts with OpenAI's BPE encodings, embedded in the binary by `bpe-openai`.
//!
//! A count equals `len(tiktoken.get_encoding(name).encode_ordinary(text))`: special-token
//! strings such as `<|endoftext|>` are plain text. The `bpe` crate's backtracking encoder is
//! linear in the input, so a million identical characters cost what a million words cost.
//!
//! [`Encoding::Estimate`] is Forge's heuristic for text (`utf8_bytes / 4`, plus 10 if the text
//! holds `<tool>`), so one parameter switches a pipeline between exact and estimated counts.

use std::fmt;
use std::sync::LazyLock;

use bpe_openai::Tokenizer;
use rayon::prelude::*;

mod chunks;
pub mod encode;
pub mod models;
mod whole_tokens;
use whole_tokens::WholeTokens;

pub use chunks::chunk_bounds;

/// Texts of at least this many UTF-8 bytes are cut into chunks counted in parallel (on the rayon
/// pool the call runs in); shorter ones are counted on the calling thread.
pub const PARALLEL_MIN_BYTES: usize = 64 * 1024;
/// The smallest chunk worth a rayon task.
const MIN_CHUNK_BYTES: usize = 32 * 1024;

pub use crate::estimate::{estimate_text_bytes, estimate_text_size};

/// A way of counting tokens: one of OpenAI's BPE encodings, or Forge's estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, o-series, GPT-5.
    O200kBase,
    /// GPT-4, GPT-3.5-turbo, text-embedding-3.
    Cl100kBase,
    /// gpt-oss: o200k_base's tokens and pattern, with the Harmony format's special tokens.
    O200kHarmony,
    /// Forge's heuristic: a quarter of the UTF-8 bytes, plus 10 for a `<tool>` tag.
    Estimate,
}

/// The names [`Encoding::from_name`] accepts, in the order error messages list them.
pub const ENCODING_NAMES: [&str; 4] = ["o200k_base", "cl100k_base", "o200k_harmony", "estimate"];

/// An encoding name that is not one of [`ENCODING_NAMES`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownEncoding {
    pub name: String,
}

impl fmt::Display for UnknownEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A long name is cut to its first 40 characters: the message stays short whatever it was.
        const EXCERPT: usize = 40;
        match self.name.char_indices().nth(EXCERPT) {
            Some((cut, _)) => {
                let chars = self.name.chars().count();
                write!(f, "unknown encoding {:?}... ({chars} characters)", &self.name[..cut])?
            }
            None => write!(f, "unknown encoding {:?}", self.name)?,
        }
        write!(f, "; known encodings: {}", ENCODING_NAMES.join(", "))
    }
}

impl std::error::Error for UnknownEncoding {}

impl Encoding {
    /// The encoding called `name` (tiktoken's names, plus `"estimate"`).
    ///
    /// ```
    /// use agentmsg_core::tokens::Encoding;
    /// assert_eq!(Encoding::from_name("cl100k_base"), Ok(Encoding::Cl100kBase));
    /// assert!(Encoding::from_name("gpt2").unwrap_err().to_string().contains("o200k_base"));
    /// ```
    pub fn from_name(name: &str) -> Result<Self, UnknownEncoding> {
        match name {
            "o200k_base" => Ok(Self::O200kBase),
            "cl100k_base" => Ok(Self::Cl100kBase),
            "o200k_harmony" => Ok(Self::O200kHarmony),
            "estimate" => Ok(Self::Estimate),
            _ => Err(UnknownEncoding {
                name: name.to_owned(),
            }),
        }
    }

    /// The name [`Encoding::from_name`] maps to this encoding.
    pub fn name(self) -> &'static str {
        match self {
            Self::O200kBase => "o200k_base",
            Self::Cl100kBase => "cl100k_base",
            Self::O200kHarmony => "o200k_harmony",
            Self::Estimate => "estimate",
        }
    }

    /// Whether this is an exact BPE encoding (not the estimate).
    pub fn is_exact(self) -> bool {
        !matches!(self, Self::Estimate)
    }

    /// Loads the encoding's tables now (otherwise its first count does; about 45 ms for
    /// o200k_base).
    pub fn load(self) {
        let _ = self.bpe();
    }

    fn bpe(self) -> Option<&'static Bpe> {
        match self {
            // Harmony differs from o200k_base only in its special tokens (`encode.rs`).
            Self::O200kBase | Self::O200kHarmony => Some(&O200K_BASE),
            Self::Cl100kBase => Some(&CL100K_BASE),
            Self::Estimate => None,
        }
    }
}

/// One exact encoding: bpe-openai's tokenizer (pre-tokenizing regex and BPE) and the set of its
/// whole tokens.
struct Bpe {
    tokenizer: &'static Tokenizer,
    whole_tokens: WholeTokens,
}

impl Bpe {
    fn new(tokenizer: &'static Tokenizer) -> Self {
        Self {
            tokenizer,
            whole_tokens: WholeTokens::new(&tokenizer.bpe),
        }
    }

    /// The tokens of one pre-tokenized piece, as tiktoken counts them: 1 if the piece is a token,
    /// else its byte-pair encoding (tiktoken's merge loop for short pieces, the bpe crate's
    /// linear backtracking encoder for long ones).
    #[inline]
    fn count_piece(&self, piece: &str) -> usize {
        let bytes = piece.as_bytes();
        if self.whole_tokens.contains(bytes) {
            return 1;
        }
        match self.whole_tokens.count_short(bytes) {
            Some(count) => count,
            None => self.tokenizer.bpe.count(bytes),
        }
    }

    fn count_serial(&self, text: &str) -> usize {
        self.tokenizer
            .split(text)
            .map(|piece| self.count_piece(piece))
            .sum()
    }

    fn count(&self, text: &str) -> usize {
        if text.len() < PARALLEL_MIN_BYTES {
            return self.count_serial(text);
        }
        let target = (text.len() / (4 * rayon::current_num_threads())).max(MIN_CHUNK_BYTES);
        self.count_chunked(text, target)
    }

    fn count_chunked(&self, text: &str, target: usize) -> usize {
        let bounds = chunk_bounds(text, target);
        bounds
            .par_windows(2)
            .map(|pair| self.count_serial(&text[pair[0]..pair[1]]))
            .sum()
    }
}

static O200K_BASE: LazyLock<Bpe> = LazyLock::new(|| Bpe::new(bpe_openai::o200k_base()));
static CL100K_BASE: LazyLock<Bpe> = LazyLock::new(|| Bpe::new(bpe_openai::cl100k_base()));

/// Counts the tokens of `text`.
///
/// ```
/// use agentmsg_core::tokens::{count_tokens, Encoding};
/// assert_eq!(count_tokens("Hello, world!", Encoding::O200kBase), 4);
/// assert_eq!(count_tokens("Hello, world!", Encoding::Estimate), 3);
/// ```
pub fn count_tokens(text: &str, encoding: Encoding) -> usize {
    match encoding.bpe() {
        Some(bpe) => bpe.count(text),
        None => estimate_text_bytes(text.as_bytes()),
    }
}

/// Counts the tokens of `text` as far as needed to compare with `limit`: the exact count if it
/// is at most `limit`, else `limit + 1` (saturating). Stops at the first pre-tokenized piece
/// that takes the count past the limit.
///
/// ```
/// use agentmsg_core::tokens::{count_tokens_up_to, Encoding};
/// assert_eq!(count_tokens_up_to("one two three", 10, Encoding::O200kBase), 3);
/// assert_eq!(count_tokens_up_to("one two three", 2, Encoding::O200kBase), 3);
/// ```
pub fn count_tokens_up_to(text: &str, limit: usize, encoding: Encoding) -> usize {
    let over = limit.saturating_add(1);
    let Some(bpe) = encoding.bpe() else {
        return estimate_text_bytes(text.as_bytes()).min(over);
    };
    if limit >= text.len() {
        // Every token is at least one byte, so the count cannot pass the limit: count it all,
        // in parallel for a long text.
        return bpe.count(text);
    }
    let mut total = 0usize;
    for piece in bpe.tokenizer.split(text) {
        // Each piece is counted in full: the bpe crate's own early stop is not proven exact.
        total += bpe.count_piece(piece);
        if total > limit {
            return over;
        }
    }
    total
}

/// Whether `text` has at most `limit` tokens; stops early like [`count_tokens_up_to`].
pub fn fits(text: &str, limit: usize, encoding: Encoding) -> bool {
    count_tokens_up_to(text, limit, encoding) <= limit
}

/// Counts each text, spread over rayon's thread pool.
///
/// ```
/// use agentmsg_core::tokens::{count_tokens_batch, Encoding};
/// assert_eq!(count_tokens_batch(&["a", "hello world"], Encoding::Cl100kBase), vec![1, 2]);
/// ```
pub fn count_tokens_batch<S: AsRef<str> + Sync>(texts: &[S], encoding: Encoding) -> Vec<usize> {
    texts
        .par_iter()
        .map(|text| count_tokens(text.as_ref(), encoding))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Counting chunk by chunk gives the whole-text count, on text dense in newlines,
        /// slashes, spaces, marks and letters (where a wrong cut would show).
        #[test]
        fn chunked_count_is_the_whole_count(
            text in "([a-zA-Z]{1,4}|[ \\t\\r\\n/]{1,3}|\\n[a-z/ ]|[0-9]{1,4}|[!'.,:]{1,2}|é|\\u{301}|日本|\\u{a0}|😀|'s|'LL){0,60}",
            target in 1usize..40,
        ) {
            for encoding in EXACT {
                let bpe = encoding.bpe().unwrap();
                prop_assert_eq!(bpe.count_chunked(&text, target), bpe.count_serial(&text));
            }
        }

        #[test]
        fn up_to_is_count_capped(text in "\\PC{0,80}", limit in 0usize..40) {
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase, Encoding::Estimate] {
                let full = count_tokens(&text, encoding);
                prop_assert_eq!(count_tokens_up_to(&text, limit, encoding), full.min(limit + 1));
            }
        }
    }

    const EXACT: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    #[test]
    fn names_round_trip_and_unknown_lists_known() {
        for name in ENCODING_NAMES {
            assert_eq!(Encoding::from_name(name).unwrap().name(), name);
        }
        let error = Encoding::from_name("p50k_base").unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown encoding \"p50k_base\"; known encodings: o200k_base, cl100k_base, o200k_harmony, estimate"
        );
    }

    #[test]
    fn a_long_unknown_name_is_cut() {
        let name = "é".repeat(10_000);
        let message = Encoding::from_name(&name).unwrap_err().to_string();
        let shown = "é".repeat(40);
        assert_eq!(
            message,
            format!("unknown encoding \"{shown}\"... (10000 characters); known encodings: o200k_base, cl100k_base, o200k_harmony, estimate")
        );
    }

    #[test]
    fn known_counts() {
        // Values from tiktoken's encode_ordinary.
        assert_eq!(count_tokens("", Encoding::O200kBase), 0);
        assert_eq!(count_tokens("hello world", Encoding::O200kBase), 2);
        assert_eq!(count_tokens("hello world", Encoding::Cl100kBase), 2);
        // Special tokens are plain text.
        assert_eq!(count_tokens("<|endoftext|>", Encoding::Cl100kBase), 7);
    }

    #[test]
    fn estimate_is_forge_formula_without_role() {
        for text in ["", "Hello", "<tool>{}</tool>", "日本語日", "<too l>"] {
            let tag = text.contains("<tool>");
            assert_eq!(
                estimate_text_size(text.len(), tag),
                estimate_text_bytes(text.as_bytes())
            );
        }
        assert_eq!(count_tokens("Hello", Encoding::Estimate), 1);
        assert_eq!(
            count_tokens("<tool>{}</tool>", Encoding::Estimate),
            15 / 4 + 10
        );
        assert_eq!(count_tokens("日本語日", Encoding::Estimate), 3);
    }

    #[test]
    fn up_to_is_min_of_count_and_limit_plus_one() {
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(20);
        for encoding in [
            Encoding::O200kBase,
            Encoding::Cl100kBase,
            Encoding::Estimate,
        ] {
            let full = count_tokens(&text, encoding);
            for limit in [0, 1, 5, full - 1, full, full + 1, usize::MAX] {
                let expected = full.min(limit.saturating_add(1));
                assert_eq!(count_tokens_up_to(&text, limit, encoding), expected);
                assert_eq!(fits(&text, limit, encoding), full <= limit);
            }
        }
    }

    #[test]
    fn pathological_runs_are_counted() {
        for encoding in EXACT {
            let run = "a".repeat(100_000);
            assert!(count_tokens(&run, encoding) > 0);
            let spaces = " ".repeat(100_000);
            assert!(count_tokens(&spaces, encoding) > 0);
        }
    }

    #[test]
    fn batch_equals_serial() {
        let texts: Vec<String> = (0..200)
            .map(|i| format!("message {i}: {}", "xy ".repeat(i)))
            .collect();
        for encoding in EXACT {
            let serial: Vec<usize> = texts.iter().map(|t| count_tokens(t, encoding)).collect();
            assert_eq!(count_tokens_batch(&texts, encoding), serial);
        }
    }
}
