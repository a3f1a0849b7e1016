//! Added tokens (special and not): found in the text before anything else, as whole tokens.
//!
//! As in the `tokenizers` library: tokens marked `normalized: false` are found in the raw text,
//! the others in each remaining segment after normalization; matches are leftmost-longest; a
//! `single_word` token only counts between non-word characters; `lstrip`/`rstrip` take the
//! whitespace beside the token into it.

use aho_corasick::{AhoCorasick, MatchKind};
use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

/// One added token as the file describes it.
#[derive(Clone, Debug)]
pub(crate) struct AddedToken {
    pub id: u32,
    pub content: String,
    pub single_word: bool,
    pub lstrip: bool,
    pub rstrip: bool,
    pub normalized: bool,
    pub special: bool,
}

/// The tokens to look for in one kind of text (raw or normalized).
struct Finder {
    automaton: AhoCorasick,
    /// Pattern index to token.
    tokens: Vec<AddedToken>,
}

/// The added tokens and their two finders.
pub(crate) struct AddedTokens {
    pub tokens: Vec<AddedToken>,
    raw: Option<Finder>,
    normalized: Option<Finder>,
    word_char: Regex,
}

impl AddedTokens {
    /// `normalize` gives a normalized token's content as the normalized text spells it.
    pub fn new(tokens: Vec<AddedToken>, normalize: impl Fn(&str) -> String) -> Self {
        let raw: Vec<AddedToken> = tokens.iter().filter(|token| !token.normalized).cloned().collect();
        let normalized: Vec<AddedToken> = tokens
            .iter()
            .filter(|token| token.normalized)
            .map(|token| AddedToken {
                content: normalize(&token.content),
                ..token.clone()
            })
            .collect();
        Self {
            tokens,
            raw: Finder::new(raw),
            normalized: Finder::new(normalized),
            word_char: Regex::new(r"\w").expect("valid regex"),
        }
    }

    /// Calls `each(start, end, Some(id))` for each added token found in `text` (its span with
    /// the whitespace it strips) and `each(start, end, None)` for the text between.
    pub fn split_raw(&self, text: &str, each: &mut dyn FnMut(usize, usize, Option<u32>)) {
        self.split(self.raw.as_ref(), text, each);
    }

    /// As [`Self::split_raw`], for a segment after normalization.
    pub fn split_normalized(&self, text: &str, each: &mut dyn FnMut(usize, usize, Option<u32>)) {
        self.split(self.normalized.as_ref(), text, each);
    }

    fn split(&self, finder: Option<&Finder>, text: &str, each: &mut dyn FnMut(usize, usize, Option<u32>)) {
        let Some(finder) = finder else {
            each(0, text.len(), None);
            return;
        };
        let mut from = 0;
        for found in finder.automaton.find_iter(text) {
            let token = &finder.tokens[found.pattern().as_usize()];
            let (mut start, mut end) = (found.start(), found.end());
            if token.single_word && (self.ends_with_word(&text[..start]) || self.starts_with_word(&text[end..])) {
                continue;
            }
            if token.lstrip {
                start = (text[..start].trim_end().len()).max(from);
            }
            if token.rstrip {
                end = text.len() - text[end..].trim_start().len();
            }
            if from < start {
                each(from, start, None);
            }
            each(start, end, Some(token.id));
            from = end;
        }
        if from < text.len() || text.is_empty() {
            each(from, text.len(), None);
        }
    }

    fn starts_with_word(&self, text: &str) -> bool {
        self.word_char.search(&Input::new(text).anchored(Anchored::Yes)).is_some()
    }

    fn ends_with_word(&self, text: &str) -> bool {
        match text.char_indices().next_back() {
            Some((at, _)) => self.starts_with_word(&text[at..]),
            None => false,
        }
    }
}

impl Finder {
    fn new(mut tokens: Vec<AddedToken>) -> Option<Self> {
        tokens.retain(|token| !token.content.is_empty());
        if tokens.is_empty() {
            return None;
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(tokens.iter().map(|token| token.content.as_bytes()))
            .ok()?;
        Some(Self { automaton, tokens })
    }
}
