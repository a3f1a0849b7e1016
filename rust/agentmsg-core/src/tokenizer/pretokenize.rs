//! Pre-tokenizers: the splits a `tokenizer.json` makes before the model sees a piece.
//!
//! The files' regexes are Oniguruma's; they are run on `regex-automata` (a lazy DFA, several
//! times faster). The one construct the two do not share, the look-ahead `\s+(?!\S)` that every
//! GPT-style pattern ends with, is rewritten: it matches a whitespace run that reaches the end
//! of the piece, or a run of two or more minus its last character, so it becomes `\s+\z` and
//! `\s+\s` with the last character given back. Any other look-around is refused by name.

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

use super::TokenizerError;

/// GPT-2's pattern, the one a `ByteLevel` pre-tokenizer with `use_regex` splits with.
const GPT2_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// The look-ahead alternative and what it becomes.
const LOOKAHEAD_RUN: &str = r"\s+(?!\S)";

/// A pattern split into a regex of several patterns, leftmost-first in the file's order (which
/// is the alternation's own order), and for each whether its match gives back its last character.
pub(crate) struct SplitRegex {
    regex: Regex,
    gives_back_last: Vec<bool>,
}

impl SplitRegex {
    /// Translates an Oniguruma pattern, or names what it holds that cannot be run exactly.
    pub fn new(pattern: &str) -> Result<Self, TokenizerError> {
        let mut patterns: Vec<String> = Vec::new();
        let mut gives_back_last = Vec::new();
        for alternative in top_level_alternatives(pattern) {
            if alternative == LOOKAHEAD_RUN {
                patterns.push(r"\s+\z".to_owned());
                gives_back_last.push(false);
                patterns.push(r"\s+\s".to_owned());
                gives_back_last.push(true);
                continue;
            }
            if ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|look| alternative.contains(look)) {
                return Err(TokenizerError::Unsupported(format!(
                    "a look-around in the pre-tokenizer regex {pattern:?} (only `\\s+(?!\\S)` as a whole alternative is supported)"
                )));
            }
            if has_line_anchor(alternative) {
                return Err(TokenizerError::Unsupported(format!(
                    "a `^` or `$` anchor in the pre-tokenizer regex {pattern:?} (Oniguruma's are line anchors)"
                )));
            }
            patterns.push(alternative.to_owned());
            gives_back_last.push(false);
        }
        let regex = Regex::new_many(&patterns).map_err(|error| {
            TokenizerError::Unsupported(format!("the pre-tokenizer regex {pattern:?}: {error}"))
        })?;
        Ok(Self { regex, gives_back_last })
    }

    /// A pattern that matches `literal` as written.
    pub fn literal(literal: &str) -> Result<Self, TokenizerError> {
        let regex = Regex::new(&regex_syntax_escape(literal))
            .map_err(|error| TokenizerError::Unsupported(format!("the split string {literal:?}: {error}")))?;
        Ok(Self {
            regex,
            gives_back_last: vec![false],
        })
    }

    pub fn gpt2() -> Self {
        Self::new(GPT2_PATTERN).expect("GPT-2's pattern translates")
    }

    /// Calls `each(start, end, matched)` for every match and every gap between matches, in
    /// order, skipping empty ones.
    pub fn for_each_split(&self, text: &str, mut each: impl FnMut(usize, usize, bool)) {
        // `gap_from`: where the text not yet given out starts; `search_from`: where the next
        // search starts (past an empty match, one character further, as Oniguruma steps).
        let mut gap_from = 0;
        let mut search_from = 0;
        let mut input = Input::new(text);
        while search_from <= text.len() {
            input.set_start(search_from);
            // Matches mostly follow one another: a search anchored where the last one ended
            // finds the same match as the leftmost search, without the reverse scan that
            // finds where a match starts.
            input.set_anchored(Anchored::Yes);
            let found = self.regex.search(&input).or_else(|| {
                input.set_anchored(Anchored::No);
                self.regex.search(&input)
            });
            let Some(found) = found else {
                break;
            };
            let start = found.start();
            let mut end = found.end();
            if self.gives_back_last[found.pattern().as_usize()] {
                end -= text[..end].chars().next_back().map_or(0, char::len_utf8);
            }
            if end <= start {
                // An empty match still ends the gap before it, as in the library.
                if start > gap_from {
                    each(gap_from, start, false);
                    gap_from = start;
                }
                search_from = start + text[start..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            if start > gap_from {
                each(gap_from, start, false);
            }
            each(start, end, true);
            gap_from = end;
            search_from = end;
        }
        if gap_from < text.len() {
            each(gap_from, text.len(), false);
        }
    }
}

/// How a `Split` pre-tokenizer treats its matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SplitBehavior {
    Isolated,
    Removed,
    MergedWithPrevious,
    MergedWithNext,
}

impl SplitBehavior {
    pub fn from_name(name: &str) -> Result<Self, TokenizerError> {
        Ok(match name {
            "Isolated" => Self::Isolated,
            "Removed" => Self::Removed,
            "MergedWithPrevious" => Self::MergedWithPrevious,
            "MergedWithNext" => Self::MergedWithNext,
            other => return Err(TokenizerError::Unsupported(format!("the Split behavior {other:?}"))),
        })
    }
}

/// One pre-tokenizer step.
pub(crate) enum PreStep {
    Split { regex: SplitRegex, behavior: SplitBehavior },
    /// `ByteLevel`: an optional leading space, GPT-2's split if `use_regex`. (Its mapping of
    /// bytes to characters is the vocabulary's spelling, undone when the file is loaded.)
    ByteLevel { add_prefix_space: bool, regex: Option<SplitRegex> },
    /// `Metaspace` (SentencePiece style): spaces become `replacement`, which is prepended
    /// (always, or only to the piece that starts the text), and split before if `split`.
    Metaspace { replacement: char, prepend: Prepend, split: bool },
}

/// When `Metaspace` prepends its replacement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prepend {
    Always,
    First,
    Never,
}

/// Runs `steps` on `piece`, calling `out` with each final piece. `at_start`: whether the piece
/// starts the whole text (for `Metaspace`'s `first`).
pub(crate) fn pre_tokenize(steps: &[PreStep], piece: &str, at_start: bool, out: &mut dyn FnMut(&str)) {
    // An empty piece goes no further (the library drops empty splits at every step).
    if piece.is_empty() {
        return;
    }
    let Some((step, rest)) = steps.split_first() else {
        out(piece);
        return;
    };
    let starts = |sub: &str| at_start && sub.as_ptr() == piece.as_ptr();
    match step {
        PreStep::Split { regex, behavior } => {
            split(regex, *behavior, piece, &mut |sub| pre_tokenize(rest, sub, starts(sub), out))
        }
        PreStep::ByteLevel { add_prefix_space, regex } => {
            let spaced;
            let piece = if *add_prefix_space && !piece.starts_with(' ') {
                spaced = format!(" {piece}");
                spaced.as_str()
            } else {
                piece
            };
            match regex {
                Some(regex) => split(regex, SplitBehavior::Isolated, piece, &mut |sub| {
                    pre_tokenize(rest, sub, at_start && sub.as_ptr() == piece.as_ptr(), out)
                }),
                None => pre_tokenize(rest, piece, at_start, out),
            }
        }
        PreStep::Metaspace { replacement, prepend, split } => {
            let mut replaced = String::with_capacity(piece.len() + 3);
            let wants_prefix = match prepend {
                Prepend::Always => true,
                Prepend::First => at_start,
                Prepend::Never => false,
            };
            if wants_prefix && !piece.starts_with(' ') && !piece.starts_with(*replacement) {
                replaced.push(*replacement);
            }
            for c in piece.chars() {
                replaced.push(if c == ' ' { *replacement } else { c });
            }
            if !*split {
                pre_tokenize(rest, &replaced, at_start, out);
                return;
            }
            // Each replacement opens a new piece.
            let mut from = 0;
            for (at, c) in replaced.char_indices() {
                if c == *replacement && at > from {
                    pre_tokenize(rest, &replaced[from..at], at_start && from == 0, out);
                    from = at;
                }
            }
            pre_tokenize(rest, &replaced[from..], at_start && from == 0, out);
        }
    }
}

fn split(regex: &SplitRegex, behavior: SplitBehavior, piece: &str, out: &mut dyn FnMut(&str)) {
    match behavior {
        SplitBehavior::Isolated => regex.for_each_split(piece, |start, end, _| out(&piece[start..end])),
        SplitBehavior::Removed => regex.for_each_split(piece, |start, end, matched| {
            if !matched {
                out(&piece[start..end]);
            }
        }),
        SplitBehavior::MergedWithPrevious => {
            // A match closes the piece that runs from the previous match's end.
            let mut from = 0;
            regex.for_each_split(piece, |_, end, matched| {
                if matched {
                    out(&piece[from..end]);
                    from = end;
                }
            });
            if from < piece.len() {
                out(&piece[from..]);
            }
        }
        SplitBehavior::MergedWithNext => {
            // A match opens a new piece.
            let mut from = 0;
            regex.for_each_split(piece, |start, _, matched| {
                if matched && start > from {
                    out(&piece[from..start]);
                    from = start;
                }
            });
            if from < piece.len() {
                out(&piece[from..]);
            }
        }
    }
}

/// The alternatives of `pattern` at nesting depth zero (outside groups and classes).
fn top_level_alternatives(pattern: &str) -> Vec<&str> {
    let bytes = pattern.as_bytes();
    let mut alternatives = Vec::new();
    let mut depth = 0usize;
    let mut class_depth = 0usize;
    let mut from = 0;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 1,
            b'[' => class_depth += 1,
            b']' if class_depth > 0 => class_depth -= 1,
            b'(' if class_depth == 0 => depth += 1,
            b')' if class_depth == 0 => depth = depth.saturating_sub(1),
            b'|' if class_depth == 0 && depth == 0 => {
                alternatives.push(&pattern[from..at]);
                from = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    alternatives.push(&pattern[from.min(pattern.len())..]);
    alternatives
}

/// Whether `alternative` has `^` or `$` outside a character class (a `^` that negates a class
/// does not count).
fn has_line_anchor(alternative: &str) -> bool {
    let bytes = alternative.as_bytes();
    let mut class_depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 1,
            b'[' => class_depth += 1,
            b']' if class_depth > 0 => class_depth -= 1,
            b'^' | b'$' if class_depth == 0 => return true,
            _ => {}
        }
        at += 1;
    }
    false
}

/// `literal` with every regex meta character escaped.
fn regex_syntax_escape(literal: &str) -> String {
    let mut escaped = String::with_capacity(literal.len());
    for c in literal.chars() {
        if "\\.+*?()|[]{}^$#&-~ \t\n\r".contains(c) {
            match c {
                ' ' => escaped.push_str("\\x20"),
                '\t' => escaped.push_str("\\t"),
                '\n' => escaped.push_str("\\n"),
                '\r' => escaped.push_str("\\r"),
                _ => {
                    escaped.push('\\');
                    escaped.push(c);
                }
            }
        } else {
            escaped.push(c);
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splits(pattern: &str, text: &str) -> Vec<String> {
        let regex = SplitRegex::new(pattern).unwrap();
        let mut out = Vec::new();
        regex.for_each_split(text, |start, end, _| out.push(text[start..end].to_owned()));
        out
    }

    #[test]
    fn the_lookahead_run_leaves_one_space_for_the_next_word() {
        assert_eq!(splits(GPT2_PATTERN, "a   b  "), ["a", "  ", " b", "  "]);
        assert_eq!(splits(GPT2_PATTERN, "a \n"), ["a", " \n"]);
    }

    #[test]
    fn other_lookarounds_are_refused_by_name() {
        let Err(TokenizerError::Unsupported(message)) = SplitRegex::new(r"a(?=b)|\s+") else {
            panic!("accepted");
        };
        assert!(message.contains("look-around"), "{message}");
        assert!(matches!(SplitRegex::new(r"^a"), Err(TokenizerError::Unsupported(_))));
        assert!(SplitRegex::new(r"[^a]").is_ok());
    }

    #[test]
    fn alternatives_split_only_at_depth_zero() {
        assert_eq!(top_level_alternatives(r"(a|b)|[|]|\|"), [r"(a|b)", "[|]", r"\|"]);
    }
}
