//! The decoders of SentencePiece-style files: steps over the tokens' spellings, in order.

use super::pretokenize::SplitRegex;

/// One decoder step.
pub(crate) enum DecodeStep {
    /// Replaces every match in each token.
    Replace { pattern: SplitRegex, content: String },
    /// Runs of `<0xXX>` tokens become the text of their bytes (one U+FFFD per byte if the run is
    /// no UTF-8).
    ByteFallback,
    /// All tokens become one.
    Fuse,
    /// Strips up to `start` leading and `stop` trailing `content` characters from each token.
    Strip { content: char, start: usize, stop: usize },
    /// The replacement becomes a space; the first token loses a leading space if one was
    /// prepended.
    Metaspace { replacement: char, strip_first: bool },
}

/// Runs `steps` over the token spellings and joins the result.
pub(crate) fn decode_chain(steps: &[DecodeStep], mut tokens: Vec<String>) -> String {
    for step in steps {
        tokens = step.apply(tokens);
    }
    tokens.concat()
}

fn fallback_byte(token: &str) -> Option<u8> {
    let bytes = token.as_bytes();
    if bytes.len() == 6 && token.starts_with("<0x") && token.ends_with('>') {
        u8::from_str_radix(&token[3..5], 16).ok()
    } else {
        None
    }
}

impl DecodeStep {
    fn apply(&self, tokens: Vec<String>) -> Vec<String> {
        match self {
            Self::Replace { pattern, content } => tokens
                .into_iter()
                .map(|token| {
                    let mut out = String::with_capacity(token.len());
                    pattern.for_each_split(&token, |start, end, matched| {
                        out.push_str(if matched { content } else { &token[start..end] });
                    });
                    out
                })
                .collect(),
            Self::ByteFallback => {
                let mut out = Vec::with_capacity(tokens.len());
                let mut pending: Vec<u8> = Vec::new();
                let flush = |pending: &mut Vec<u8>, out: &mut Vec<String>| {
                    if pending.is_empty() {
                        return;
                    }
                    match String::from_utf8(std::mem::take(pending)) {
                        Ok(text) => out.push(text),
                        Err(error) => out.extend(std::iter::repeat_n("\u{FFFD}".to_owned(), error.as_bytes().len())),
                    }
                };
                for token in tokens {
                    match fallback_byte(&token) {
                        Some(byte) => pending.push(byte),
                        None => {
                            flush(&mut pending, &mut out);
                            out.push(token);
                        }
                    }
                }
                flush(&mut pending, &mut out);
                out
            }
            Self::Fuse => vec![tokens.concat()],
            Self::Strip { content, start, stop } => tokens
                .into_iter()
                .map(|token| {
                    let chars: Vec<char> = token.chars().collect();
                    let from = chars.iter().take(*start).take_while(|&&c| c == *content).count();
                    let rest = &chars[from..];
                    let to = rest.len() - rest.iter().rev().take(*stop).take_while(|&&c| c == *content).count();
                    rest[..to].iter().collect()
                })
                .collect(),
            Self::Metaspace { replacement, strip_first } => tokens
                .into_iter()
                .enumerate()
                .map(|(index, token)| {
                    let replaced: String = token.chars().map(|c| if c == *replacement { ' ' } else { c }).collect();
                    match replaced.strip_prefix(' ') {
                        Some(rest) if index == 0 && *strip_first => rest.to_owned(),
                        _ => replaced,
                    }
                })
                .collect(),
        }
    }
}
