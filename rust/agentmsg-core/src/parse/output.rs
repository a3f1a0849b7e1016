//! Turns classified bytes into events: strips text and thinking runs at both ends (holding back
//! trailing whitespace until something else follows) and merges adjacent pieces.
//!
//! Two ways to report a piece: a copy of its bytes (streaming), or, when the whole input is at
//! hand (whole-text parsing), its byte range in the input. A stripped run is one contiguous
//! stretch of the input (nothing between its pieces is left out), so a range per run suffices.

use super::event::Event;

/// A run of text or tag thinking that is stripped at both ends as it streams.
#[derive(Clone, Debug, Default)]
struct Run {
    /// Something other than whitespace has been emitted in this run.
    started: bool,
    /// Whitespace seen after the last emitted byte, emitted only if more content follows
    /// (copy mode only; ranges cover it by extending to the next piece).
    pending_space: Vec<u8>,
}

impl Run {
    /// The range of `bytes` to emit now (after any pending whitespace), or `None` when `bytes`
    /// holds only whitespace (pending, or dropped at the start of a run).
    fn piece(&mut self, bytes: &[u8], keep_space: bool) -> Option<(usize, usize)> {
        let start = if self.started { 0 } else { bytes.iter().position(|b| !is_space(*b))? };
        match bytes[start..].iter().rposition(|b| !is_space(*b)) {
            None => {
                if keep_space {
                    self.pending_space.extend_from_slice(&bytes[start..]);
                }
                None
            }
            Some(last) => Some((start, start + last + 1)),
        }
    }

    /// Appends the pending whitespace and `bytes[start..end]` to `out`; what follows becomes
    /// pending.
    fn emit(&mut self, bytes: &[u8], (start, end): (usize, usize), out: &mut Vec<u8>) {
        out.append(&mut self.pending_space);
        out.extend_from_slice(&bytes[start..end]);
        self.pending_space.extend_from_slice(&bytes[end..]);
    }

    fn end(&mut self) {
        self.started = false;
        self.pending_space.clear();
    }
}

/// The two kinds of run an output holds.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Thinking,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Output {
    pub events: Vec<Event>,
    /// Report input ranges instead of copies.
    spans: bool,
    text: Run,
    text_blocks: usize,
    thinking: Run,
    thinking_index: usize,
    thinking_count: usize,
}

impl Output {
    pub fn new(spans: bool) -> Self {
        Self { spans, ..Self::default() }
    }

    pub fn spans(&self) -> bool {
        self.spans
    }

    /// Visible text: `bytes` sits at stream offset `at`.
    pub fn text(&mut self, bytes: &[u8], at: usize) {
        let Some(piece) = self.text.piece(bytes, !self.spans) else { return };
        if !self.text.started {
            self.text.started = true;
            self.text_blocks += 1;
        }
        self.append(Kind::Text, self.text_blocks - 1, bytes, piece, at);
    }

    /// Ends the current text run: an element (thinking, tool call) follows.
    pub fn end_text(&mut self) {
        self.text.end();
    }

    /// Opens a thinking block and returns its index.
    pub fn begin_thinking(&mut self) -> usize {
        self.end_text();
        self.thinking.end();
        self.thinking_index = self.thinking_count;
        self.thinking_count += 1;
        self.thinking_index
    }

    /// Content of the open thinking block: `bytes` sits at stream offset `at`.
    pub fn thinking(&mut self, bytes: &[u8], at: usize) {
        let Some(piece) = self.thinking.piece(bytes, !self.spans) else { return };
        self.thinking.started = true;
        self.append(Kind::Thinking, self.thinking_index, bytes, piece, at);
    }

    /// Adds `bytes[piece]` (at stream offset `at`) to block `n` of `kind`: the last event grows
    /// when it is that block's, else the block's next event starts.
    #[inline(always)]
    fn append(&mut self, kind: Kind, n: usize, bytes: &[u8], piece: (usize, usize), at: usize) {
        let last = self.events.last_mut();
        if self.spans {
            let (start, end) = (at + piece.0, at + piece.1);
            match (kind, last) {
                (Kind::Text, Some(Event::TextSpan { block, end: e, .. }))
                | (Kind::Thinking, Some(Event::ThinkingSpan { index: block, end: e, .. }))
                    if *block == n =>
                {
                    *e = end
                }
                (Kind::Text, _) => self.events.push(Event::TextSpan { block: n, start, end }),
                (Kind::Thinking, _) => self.events.push(Event::ThinkingSpan { index: n, start, end }),
            }
            return;
        }
        let run = match kind {
            Kind::Text => &mut self.text,
            Kind::Thinking => &mut self.thinking,
        };
        match (kind, last) {
            (Kind::Text, Some(Event::Text { block, text }))
            | (Kind::Thinking, Some(Event::Thinking { index: block, text }))
                if *block == n =>
            {
                run.emit(bytes, piece, text)
            }
            (kind, _) => {
                let mut text = Vec::with_capacity(run.pending_space.len() + piece.1 - piece.0);
                run.emit(bytes, piece, &mut text);
                self.events.push(match kind {
                    Kind::Text => Event::Text { block: n, text },
                    Kind::Thinking => Event::Thinking { index: n, text },
                });
            }
        }
    }

    pub fn end_thinking(&mut self, complete: bool) {
        self.thinking.end();
        self.events.push(Event::ThinkingEnd { index: self.thinking_index, complete });
    }

    /// A whole bracket thought (already stripped, never empty) at stream offset `at`.
    pub fn thought(&mut self, text: &[u8], at: usize) {
        self.begin_thinking();
        self.thinking(text, at);
        self.end_thinking(true);
    }

    pub fn push(&mut self, event: Event) {
        self.events.push(event);
    }
}

/// ASCII whitespace as the text stripping uses it: space, tab, LF, CR, VT, FF.
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}
