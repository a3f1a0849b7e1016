//! Normalizers: what a `tokenizer.json` does to text before splitting it.

use std::borrow::Cow;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use super::pretokenize::SplitRegex;

/// One normalizer step.
pub(crate) enum Normalizer {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Lowercase,
    /// Prepends its text to a non-empty text.
    Prepend(String),
    /// Replaces every match of the pattern with the content.
    Replace { pattern: SplitRegex, content: String },
    /// Strips whitespace on the left and/or right.
    Strip { left: bool, right: bool },
}

/// Applies `steps` in order; borrowed when nothing changed.
pub(crate) fn normalize<'a>(steps: &[Normalizer], text: &'a str) -> Cow<'a, str> {
    let mut current = Cow::Borrowed(text);
    for step in steps {
        if let Some(changed) = step.apply(&current) {
            current = Cow::Owned(changed);
        }
    }
    current
}

impl Normalizer {
    /// The normalized text, or `None` if it is `text` unchanged.
    fn apply(&self, text: &str) -> Option<String> {
        match self {
            Self::Nfc => {
                if text.is_ascii() || is_nfc_quick(text.chars()) == IsNormalized::Yes {
                    return None;
                }
                changed(text, text.nfc().collect())
            }
            Self::Nfd => (!text.is_ascii()).then(|| text.nfd().collect()).and_then(|new| changed(text, new)),
            Self::Nfkc => (!text.is_ascii()).then(|| text.nfkc().collect()).and_then(|new| changed(text, new)),
            Self::Nfkd => (!text.is_ascii()).then(|| text.nfkd().collect()).and_then(|new| changed(text, new)),
            Self::Lowercase => changed(text, text.to_lowercase()),
            Self::Prepend(prefix) => (!text.is_empty()).then(|| format!("{prefix}{text}")),
            Self::Replace { pattern, content } => {
                let mut out = String::with_capacity(text.len());
                let mut replaced = false;
                pattern.for_each_split(text, |start, end, matched| {
                    if matched {
                        out.push_str(content);
                        replaced = true;
                    } else {
                        out.push_str(&text[start..end]);
                    }
                });
                replaced.then_some(out)
            }
            Self::Strip { left, right } => {
                let mut stripped = text;
                if *left {
                    stripped = stripped.trim_start();
                }
                if *right {
                    stripped = stripped.trim_end();
                }
                (stripped.len() != text.len()).then(|| stripped.to_owned())
            }
        }
    }
}

fn changed(text: &str, new: String) -> Option<String> {
    (new != text).then_some(new)
}
