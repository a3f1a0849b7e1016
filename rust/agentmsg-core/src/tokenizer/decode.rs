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
            Self::Replace { .. } => tokens.into_iter().map(|token| self.map_token(&token, false)).collect(),
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
            Self::Strip { .. } => tokens.into_iter().map(|token| self.map_token(&token, false)).collect(),
            Self::Metaspace { .. } => tokens.into_iter().enumerate().map(|(index, token)| self.map_token(&token, index == 0)).collect(),
        }
    }

    /// What a step that maps each token on its own (`Replace`, `Strip`, `Metaspace`) makes of
    /// `token`; `first`: whether it is the first token.
    fn map_token(&self, token: &str, first: bool) -> String {
        match self {
            Self::Replace { pattern, content } => {
                let mut out = String::with_capacity(token.len());
                pattern.for_each_split(token, |start, end, matched| {
                    out.push_str(if matched { content } else { &token[start..end] });
                });
                out
            }
            Self::Strip { content, start, stop } => {
                let chars: Vec<char> = token.chars().collect();
                let from = chars.iter().take(*start).take_while(|&&c| c == *content).count();
                let rest = &chars[from..];
                let to = rest.len() - rest.iter().rev().take(*stop).take_while(|&&c| c == *content).count();
                rest[..to].iter().collect()
            }
            Self::Metaspace { replacement, strip_first } => {
                let replaced: String = token.chars().map(|c| if c == *replacement { ' ' } else { c }).collect();
                match replaced.strip_prefix(' ') {
                    Some(rest) if first && *strip_first => rest.to_owned(),
                    _ => replaced,
                }
            }
            Self::ByteFallback | Self::Fuse => token.to_owned(),
        }
    }
}

/// A piece of decoded text, and whether it is an added token's text (unchanged by the steps).
pub(crate) struct Piece {
    pub text: String,
    pub added: bool,
}

/// Why `steps` cannot run token by token, if they cannot: after the first `Fuse` the text is
/// one token, which only steps that read it character by character can take as it comes.
pub(crate) fn why_not_streamed(steps: &[DecodeStep]) -> Option<&'static str> {
    let fuse = steps.iter().position(|step| matches!(step, DecodeStep::Fuse))?;
    steps[fuse..]
        .iter()
        .any(|step| matches!(step, DecodeStep::Replace { .. } | DecodeStep::ByteFallback))
        .then_some("reading token ids with a Replace or ByteFallback decoder after Fuse")
}

/// What one step remembers between tokens.
#[derive(Default)]
struct StepState {
    /// `ByteFallback`: the bytes of the run of byte tokens not yet ended.
    run: Vec<u8>,
    /// `Metaspace`: whether it has taken its first token; `Strip` after `Fuse`: whether the
    /// text's leading characters are past.
    started: bool,
    /// `Strip` after `Fuse`: the leading characters removed so far.
    stripped: usize,
    /// `Strip` after `Fuse`: trailing characters it may remove when the text ends.
    trailing: String,
}

/// The decoder chain run over tokens as they come, for reading ids ([`crate::ids`]): the text
/// it has given after each token is what [`decode_chain`] gives for the tokens so far, less
/// what a later token can still change: a run of byte tokens not yet ended (`decode` reads a
/// run with an invalid byte as one U+FFFD per byte, so no part of a run is known before it
/// ends) and trailing characters a `Strip` after `Fuse` may remove. Steps before the first
/// `Fuse` take each token; those after it take the one text the tokens make, piece by piece.
pub(crate) struct StreamedChain {
    states: Vec<StepState>,
}

impl StreamedChain {
    pub fn new(steps: &[DecodeStep]) -> Self {
        Self { states: steps.iter().map(|_| StepState::default()).collect() }
    }

    /// Whether text is held back (a run of byte tokens, trailing characters).
    pub fn holds(&self) -> bool {
        self.states.iter().any(|state| !state.run.is_empty() || !state.trailing.is_empty())
    }

    /// Takes one token's spelling; appends the text it completes to `out`.
    pub fn push(&mut self, steps: &[DecodeStep], token: Piece, out: &mut Vec<Piece>) {
        self.push_token(steps, 0, token, out);
    }

    /// Ends the text: appends what was held (as `decode` ends it) to `out`; then ready for a
    /// new text.
    pub fn finish(&mut self, steps: &[DecodeStep], out: &mut Vec<Piece>) {
        let fuse = fuse_index(steps);
        for index in 0..fuse {
            self.end_run(steps, index, out);
        }
        // A `Strip`'s trailing characters are what it removes at the end: dropped.
        for state in &mut self.states {
            *state = StepState::default();
        }
    }

    /// Runs `token` through the steps from `from` on (before `Fuse`).
    fn push_token(&mut self, steps: &[DecodeStep], from: usize, mut token: Piece, out: &mut Vec<Piece>) {
        let fuse = fuse_index(steps);
        for index in from..fuse {
            let step = &steps[index];
            match step {
                DecodeStep::ByteFallback => match fallback_byte(&token.text) {
                    Some(byte) => return self.states[index].run.push(byte),
                    None => self.end_run(steps, index, out),
                },
                DecodeStep::Metaspace { .. } => {
                    let first = !std::mem::replace(&mut self.states[index].started, true);
                    token = mapped(step, token, first);
                }
                _ => token = mapped(step, token, false),
            }
        }
        self.push_text(steps, fuse, token, out);
    }

    /// Ends the run of byte tokens of the `ByteFallback` at `index`, as `decode` does.
    fn end_run(&mut self, steps: &[DecodeStep], index: usize, out: &mut Vec<Piece>) {
        let run = std::mem::take(&mut self.states[index].run);
        if run.is_empty() {
            return;
        }
        match String::from_utf8(run) {
            Ok(text) => self.push_token(steps, index + 1, Piece { text, added: false }, out),
            Err(error) => {
                for _ in 0..error.as_bytes().len() {
                    self.push_token(steps, index + 1, Piece { text: "\u{FFFD}".to_owned(), added: false }, out);
                }
            }
        }
    }

    /// Runs a piece of the one text through the steps from `from` on (after `Fuse`).
    fn push_text(&mut self, steps: &[DecodeStep], from: usize, mut piece: Piece, out: &mut Vec<Piece>) {
        for index in from..steps.len() {
            let state = &mut self.states[index];
            match &steps[index] {
                DecodeStep::Metaspace { replacement, strip_first } => {
                    let mut text: String = piece.text.chars().map(|c| if c == *replacement { ' ' } else { c }).collect();
                    if !text.is_empty() && !std::mem::replace(&mut state.started, true) && *strip_first && text.starts_with(' ') {
                        text.remove(0);
                    }
                    piece = changed(piece, text);
                }
                DecodeStep::Strip { content, start, stop } => {
                    let mut text = piece.text.as_str();
                    while !state.started && state.stripped < *start {
                        match text.strip_prefix(*content) {
                            Some(rest) => {
                                text = rest;
                                state.stripped += 1;
                            }
                            None => break,
                        }
                    }
                    if !text.is_empty() || state.stripped == *start {
                        state.started = true;
                    }
                    let text = text.to_owned();
                    let piece_now = changed(piece, text);
                    if *stop == 0 {
                        piece = piece_now;
                        continue;
                    }
                    // Hold the last `stop` characters of a trailing run of `content`.
                    let kept = piece_now.text.trim_end_matches(*content).len();
                    if kept > 0 && !state.trailing.is_empty() {
                        let released = std::mem::take(&mut state.trailing);
                        self.push_text(steps, index + 1, Piece { text: released, added: false }, out);
                    }
                    let state = &mut self.states[index];
                    state.trailing.push_str(&piece_now.text[kept..]);
                    let excess = state.trailing.chars().count().saturating_sub(*stop);
                    let cut = state.trailing.char_indices().nth(excess).map_or(state.trailing.len(), |(at, _)| at);
                    let released: String = state.trailing.drain(..cut).collect();
                    let head = if kept == piece_now.text.len() {
                        piece_now
                    } else {
                        Piece { text: piece_now.text[..kept].to_owned(), added: false }
                    };
                    if !head.text.is_empty() {
                        self.push_text(steps, index + 1, head, out);
                    }
                    if !released.is_empty() {
                        self.push_text(steps, index + 1, Piece { text: released, added: false }, out);
                    }
                    return;
                }
                _ => {} // `Fuse`: the text is one already.
            }
        }
        if !piece.text.is_empty() {
            out.push(piece);
        }
    }
}

/// Where the steps that take each token end.
fn fuse_index(steps: &[DecodeStep]) -> usize {
    steps.iter().position(|step| matches!(step, DecodeStep::Fuse)).unwrap_or(steps.len())
}

/// `piece` with its text changed to `text` (no longer an added token's text if it changed).
fn changed(piece: Piece, text: String) -> Piece {
    let added = piece.added && text == piece.text;
    Piece { text, added }
}

fn mapped(step: &DecodeStep, piece: Piece, first: bool) -> Piece {
    let text = step.map_token(&piece.text, first);
    changed(piece, text)
}
