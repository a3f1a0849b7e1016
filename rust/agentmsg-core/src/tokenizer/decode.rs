//! The decoders of SentencePiece-style files: steps over the tokens' spellings, in order.

use std::borrow::Cow;

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
/// Borrowed where no step changed it (from [`PieceTable`]), so reading an id copies nothing.
pub(crate) struct Piece<'t> {
    pub text: Cow<'t, str>,
    pub added: bool,
}

/// Where the streamed chain's text goes: appended to `text`; the stream range `(start, len)`
/// of each added token's text to `added`, where `text[from..]` begins at `read` in the stream.
pub(crate) struct Sink<'o> {
    pub text: &'o mut Vec<u8>,
    pub added: &'o mut Vec<(usize, usize)>,
    pub from: usize,
    pub read: usize,
}

impl Sink<'_> {
    fn take(&mut self, piece: Piece<'_>) {
        if piece.added {
            self.added.push((self.read + (self.text.len() - self.from), piece.text.len()));
        }
        self.text.extend_from_slice(piece.text.as_bytes());
    }
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

/// Each id's text after the leading steps that map every token alone, whatever comes before
/// or after it (`Replace`, and `Strip` before `Fuse`; a `Metaspace` after them as it maps any
/// token but the first, [`StreamedChain::push`] strips the first), worked out once per
/// vocabulary: reading an id is then a lookup, and [`StreamedChain`] runs only the steps from
/// [`mapped_steps`](Self::mapped_steps) on (the ones that join tokens: `ByteFallback`'s runs,
/// what follows `Fuse`). The texts are one arena with an end offset per id: about the
/// vocabulary's spellings' bytes plus 4 bytes an id.
pub(crate) struct PieceTable {
    arena: String,
    ends: Vec<u32>,
    mapped_steps: usize,
}

impl PieceTable {
    /// The table of `spellings` (by id; an id that is no token has an empty spelling); `None`
    /// if no leading step maps tokens alone (the spellings are then the pieces already), or if
    /// the texts would not fit 32-bit offsets.
    pub fn new<'s>(steps: &[DecodeStep], spellings: impl ExactSizeIterator<Item = &'s [u8]>) -> Option<Self> {
        let fuse = fuse_index(steps);
        let alone = |step: &DecodeStep| matches!(step, DecodeStep::Replace { .. } | DecodeStep::Strip { .. });
        let mut mapped_steps = steps[..fuse].iter().take_while(|step| alone(step)).count();
        if matches!(steps[..fuse].get(mapped_steps), Some(DecodeStep::Metaspace { .. })) {
            mapped_steps += 1;
        }
        if mapped_steps == 0 {
            return None;
        }
        let mut ends = Vec::with_capacity(spellings.len());
        let mut arena = String::new();
        for spelling in spellings {
            let mut text = String::from_utf8_lossy(spelling).into_owned();
            for step in &steps[..mapped_steps] {
                text = step.map_token(&text, false);
            }
            arena.push_str(&text);
            ends.push(u32::try_from(arena.len()).ok()?);
        }
        arena.shrink_to_fit();
        Some(Self { arena, ends, mapped_steps })
    }

    /// The text of `id` after the steps the table ran (empty for an id out of range).
    #[inline]
    pub fn piece(&self, id: u32) -> &str {
        let index = id as usize;
        let Some(&end) = self.ends.get(index) else { return "" };
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        &self.arena[start as usize..end as usize]
    }

    /// How many of the steps the table ran (the streamed chain starts after them).
    pub fn mapped_steps(&self) -> usize {
        self.mapped_steps
    }

    /// The bytes the table holds.
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.arena.capacity() + self.ends.capacity() * std::mem::size_of::<u32>()
    }
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

    /// Takes one token, its spelling already run through `steps[..from]` (steps that map each
    /// token alone, a last `Metaspace` as it maps any token but the first: see [`PieceTable`]);
    /// gives the text it completes to `out`.
    pub fn push(&mut self, steps: &[DecodeStep], from: usize, mut token: Piece<'_>, out: &mut Sink<'_>) {
        if let Some(DecodeStep::Metaspace { strip_first, .. }) = from.checked_sub(1).map(|last| &steps[last]) {
            let first = !std::mem::replace(&mut self.states[from - 1].started, true);
            if first && *strip_first && token.text.starts_with(' ') {
                token = Piece { text: drop_front(token.text, 1), added: false };
            }
        }
        self.push_token(steps, from, token, out);
    }

    /// Ends the text: gives what was held (as `decode` ends it) to `out`; then ready for a new
    /// text.
    pub fn finish(&mut self, steps: &[DecodeStep], out: &mut Sink<'_>) {
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
    fn push_token(&mut self, steps: &[DecodeStep], from: usize, mut token: Piece<'_>, out: &mut Sink<'_>) {
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
    fn end_run(&mut self, steps: &[DecodeStep], index: usize, out: &mut Sink<'_>) {
        let run = std::mem::take(&mut self.states[index].run);
        if run.is_empty() {
            return;
        }
        match String::from_utf8(run) {
            Ok(text) => self.push_token(steps, index + 1, Piece { text: Cow::Owned(text), added: false }, out),
            Err(error) => {
                for _ in 0..error.as_bytes().len() {
                    self.push_token(steps, index + 1, Piece { text: Cow::Borrowed("\u{FFFD}"), added: false }, out);
                }
            }
        }
    }

    /// Runs a piece of the one text through the steps from `from` on (after `Fuse`).
    fn push_text(&mut self, steps: &[DecodeStep], from: usize, mut piece: Piece<'_>, out: &mut Sink<'_>) {
        for index in from..steps.len() {
            let state = &mut self.states[index];
            match &steps[index] {
                DecodeStep::Metaspace { replacement, strip_first } => {
                    if *replacement != ' ' && piece.text.contains(*replacement) {
                        let text = piece.text.replace(*replacement, " ");
                        piece = Piece { text: Cow::Owned(text), added: false };
                    }
                    if !piece.text.is_empty() && !std::mem::replace(&mut state.started, true) && *strip_first && piece.text.starts_with(' ') {
                        piece = Piece { text: drop_front(piece.text, 1), added: false };
                    }
                }
                DecodeStep::Strip { content, start, stop } => {
                    let mut cut = 0;
                    while !state.started && state.stripped < *start {
                        match piece.text[cut..].strip_prefix(*content) {
                            Some(_) => {
                                cut += content.len_utf8();
                                state.stripped += 1;
                            }
                            None => break,
                        }
                    }
                    if cut < piece.text.len() || state.stripped == *start {
                        state.started = true;
                    }
                    if cut > 0 {
                        piece = Piece { text: drop_front(piece.text, cut), added: false };
                    }
                    if *stop == 0 {
                        continue;
                    }
                    // Hold the last `stop` characters of a trailing run of `content`.
                    let kept = piece.text.trim_end_matches(*content).len();
                    if kept > 0 && !state.trailing.is_empty() {
                        let released = std::mem::take(&mut state.trailing);
                        self.push_text(steps, index + 1, Piece { text: Cow::Owned(released), added: false }, out);
                    }
                    let state = &mut self.states[index];
                    state.trailing.push_str(&piece.text[kept..]);
                    let excess = state.trailing.chars().count().saturating_sub(*stop);
                    let cut = state.trailing.char_indices().nth(excess).map_or(state.trailing.len(), |(at, _)| at);
                    let released: String = state.trailing.drain(..cut).collect();
                    let head = if kept == piece.text.len() {
                        piece
                    } else {
                        Piece { text: Cow::Owned(piece.text[..kept].to_owned()), added: false }
                    };
                    if !head.text.is_empty() {
                        self.push_text(steps, index + 1, head, out);
                    }
                    if !released.is_empty() {
                        self.push_text(steps, index + 1, Piece { text: Cow::Owned(released), added: false }, out);
                    }
                    return;
                }
                _ => {} // `Fuse`: the text is one already.
            }
        }
        if !piece.text.is_empty() {
            out.take(piece);
        }
    }
}

/// Where the steps that take each token end.
fn fuse_index(steps: &[DecodeStep]) -> usize {
    steps.iter().position(|step| matches!(step, DecodeStep::Fuse)).unwrap_or(steps.len())
}

/// `text` less its first `len` bytes; a borrowed text stays borrowed.
fn drop_front(text: Cow<'_, str>, len: usize) -> Cow<'_, str> {
    match text {
        Cow::Borrowed(text) => Cow::Borrowed(&text[len..]),
        Cow::Owned(mut text) => {
            text.drain(..len);
            Cow::Owned(text)
        }
    }
}

/// `piece` through a step that maps each token alone (no longer an added token's text if the
/// step changed it).
fn mapped<'t>(step: &DecodeStep, piece: Piece<'t>, first: bool) -> Piece<'t> {
    let text = step.map_token(&piece.text, first);
    let added = piece.added && text == piece.text;
    Piece { text: Cow::Owned(text), added }
}
