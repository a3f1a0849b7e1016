//! Parsing of model text: tool calls, thinking and the visible text around them, in one of many
//! model dialects ([`Dialect`]; Forge's, the default, and those of [`dialect`]).
//!
//! One incremental state machine per dialect ([`StreamMachine`]) does all the work; whole-text
//! [`parse`] is "feed everything, then finish", so streamed and whole-text results agree by
//! construction. Every dialect reports the same [`Event`]s and gives the same [`Document`].
//! Input is bytes (UTF-8, or the `surrogatepass` encoding of a Python string with lone
//! surrogates): every place the machine cuts the input is an ASCII byte, so every piece it hands
//! out is as valid as the input was.
//!
//! The rules of Forge's dialect (the Python docstring of `agentmsg.parse` states them for users;
//! `docs/dialects.md` those of the others):
//! - **Tool calls**: `<tool>` opens a call anywhere outside a code fence, a thinking block and
//!   another call; the payload ends at the first `</tool>` that is not inside a JSON string (JSON
//!   payloads) or a CDATA section (XML payloads). See
//!   [`payload`](dialect::forge::payload) for what a valid payload is.
//!   Recovery: if a JSON call never closes because a string never ends, it ends at the first
//!   `</tool>` inside its strings instead, and what follows is parsed as if it had (a second,
//!   "fallback" machine reads along from that point, so this stays one linear pass).
//! - **Thinking tags**: `<think>…</think>` and `<thinking>…</thinking>`; the content is raw
//!   (nothing inside is parsed). An unclosed tag is thinking to the end and marked incomplete.
//! - **Bracket lines**: see [`bracket`](dialect::forge::bracket).
//! - **Code fences**: a line whose first non-blank characters are three or more backticks or
//!   tildes opens a fence; a line of at least as many of the same character (and nothing else
//!   but blanks) closes it. Inside a fence nothing is parsed.
//! - **Call limit**: with [`ForgeOptions::max_calls`] `= Some(n)`, the `<tool>` that would open call
//!   `n + 1` and everything after it become one issue ([`IssueKind::TooManyCalls`]) whose raw
//!   text is that rest: nothing is lost and the cost of a reply is bounded.
//! - **Text**: each run of text between two elements is stripped of ASCII whitespace at both
//!   ends; empty runs are dropped; the visible text is the runs joined with `"\n"`.

use std::borrow::Cow;

mod call;
mod chars;
pub mod deltas;
pub mod responses;
pub mod dialect;
mod event;
pub mod json_text;
mod options;
mod output;
mod scan;
pub mod schema;

pub use call::{call_id, parse_json, CallHeader, Issue, IssueKind, Json, JsonPairs, ToolCall};
pub use event::Event;
pub use jiter::{JsonObject, JsonValue};
pub use dialect::named::{CustomDialect, Dialect, DialectError};
pub use options::{ForgeOptions, Options, StartThinking, ThinkingMode, ToolFormat};
pub use schema::{Tools, ToolsError};

use dialect::forge::ForgeMachine;
use dialect::DialectMachine;

/// The incremental parser of a dialect: [`feed`](Self::feed) chunks, then
/// [`finish`](Self::finish); ready for a new stream after `finish`.
///
/// ```
/// use agentmsg_core::parse::{CallHeader, Dialect, Event, Options, StreamMachine};
/// let mut forge = StreamMachine::new(Options::default());
/// assert_eq!(forge.feed(b"Hi <tool>"), [Event::Text { block: 0, text: b"Hi".to_vec() }, Event::ToolStart { index: 0, header: None }]);
/// let mut hermes = StreamMachine::new(Options::new(Dialect::Hermes));
/// let events = hermes.feed(br#"<tool_call>{"name": "f", "#);
/// let Event::ToolStart { header: Some(CallHeader { name, .. }), .. } = &events[0] else { panic!() };
/// assert_eq!(name, "f");
/// ```
// The machine is picked by a match, not a `dyn`, and held in place, not boxed: this runs for
// every chunk, and a token-sized chunk's parse costs a few tens of nanoseconds.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)]
pub enum StreamMachine {
    Forge(ForgeMachine),
    Dialect(DialectMachine),
}

impl StreamMachine {
    /// A streaming machine; [`StartThinking::Detect`] counts as `No` (a stream cannot look ahead).
    pub fn new(options: Options) -> Self {
        match options.dialect {
            Dialect::Forge => Self::Forge(ForgeMachine::new(options)),
            _ => Self::Dialect(DialectMachine::new(options)),
        }
    }

    /// A machine for one whole input that the caller holds (fed in one or more chunks): text
    /// and thinking are reported as [`Event::TextSpan`] / [`Event::ThinkingSpan`] ranges of that
    /// input instead of copies.
    pub fn for_whole_text(options: Options) -> Self {
        match options.dialect {
            Dialect::Forge => Self::Forge(ForgeMachine::for_whole_text(options)),
            _ => Self::Dialect(DialectMachine::for_whole_text(options)),
        }
    }

    pub fn options(&self) -> &Options {
        match self {
            Self::Forge(machine) => machine.options(),
            Self::Dialect(machine) => machine.options(),
        }
    }

    /// Whether the first thinking tag read was a stray closing one (the sign of a prompt that
    /// already opened the thinking block; see [`StartThinking::Detect`]).
    pub fn saw_stray_thinking_close(&self) -> bool {
        match self {
            Self::Forge(machine) => machine.saw_stray_thinking_close(),
            Self::Dialect(machine) => machine.saw_stray_thinking_close(),
        }
    }

    /// Reads the next chunk and returns the events it completes.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut events = Vec::new();
        self.feed_into(chunk, &mut events);
        events
    }

    /// [`feed`](Self::feed) that appends the events to `events` (a caller can reuse one buffer).
    #[inline]
    pub fn feed_into(&mut self, chunk: &[u8], events: &mut Vec<Event>) {
        match self {
            Self::Forge(machine) => machine.feed_into(chunk, events),
            Self::Dialect(machine) => machine.feed_into(chunk, events),
        }
    }

    /// [`feed_into`](Self::feed_into), where no marker is read at the stream ranges `spelled`
    /// (`(start, len)`): there an added token's text spelled by ordinary tokens is text (see
    /// [`crate::ids`]). Forge's markers are no model's tokens: its machine reads as `feed_into`.
    pub fn feed_into_spelled(&mut self, chunk: &[u8], spelled: &[(usize, usize)], events: &mut Vec<Event>) {
        match self {
            Self::Forge(machine) => machine.feed_into(chunk, events),
            Self::Dialect(machine) => machine.feed_into_spelled(chunk, spelled, events),
        }
    }

    /// Ends the stream: flushes what was held back and reports an unclosed call or thinking
    /// block. The machine is then ready for a new stream with the same options.
    pub fn finish(&mut self) -> Vec<Event> {
        match self {
            Self::Forge(machine) => machine.finish(),
            Self::Dialect(machine) => machine.finish(),
        }
    }
}

/// A block of a parsed text, in document order; text borrows from the input when it can.
#[derive(Clone, Debug, PartialEq)]
pub enum Block<'a> {
    Text(Cow<'a, [u8]>),
    Thinking(Cow<'a, [u8]>),
    ToolCall(ToolCall),
}

/// The result of parsing a whole text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document<'a> {
    pub blocks: Vec<Block<'a>>,
    /// Bad tool calls, in order, each with its raw text.
    pub issues: Vec<Issue>,
    /// The text ended inside an unclosed thinking tag.
    pub incomplete_thinking: bool,
}

/// Appends a copied piece to a block's text.
fn extend(text: &mut Cow<'_, [u8]>, more: &[u8]) {
    text.to_mut().extend_from_slice(more);
}

impl<'a> Document<'a> {
    /// The visible text: the text blocks joined with `"\n"`.
    pub fn text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut first = true;
        for block in &self.blocks {
            if let Block::Text(text) = block {
                if !first {
                    out.push(b'\n');
                }
                first = false;
                out.extend_from_slice(text);
            }
        }
        out
    }

    /// The same document, owning its text.
    pub fn into_owned(self) -> Document<'static> {
        let blocks = self
            .blocks
            .into_iter()
            .map(|block| match block {
                Block::Text(t) => Block::Text(Cow::Owned(t.into_owned())),
                Block::Thinking(t) => Block::Thinking(Cow::Owned(t.into_owned())),
                Block::ToolCall(call) => Block::ToolCall(call),
            })
            .collect();
        Document { blocks, issues: self.issues, incomplete_thinking: self.incomplete_thinking }
    }

    /// Folds a complete event sequence (through `finish`) of a streaming machine.
    pub fn from_events(events: impl IntoIterator<Item = Event>) -> Document<'static> {
        Document::fold(events, &[])
    }

    /// Folds a complete event sequence; span events are ranges of `input`.
    pub fn fold(events: impl IntoIterator<Item = Event>, input: &'a [u8]) -> Self {
        let mut folder = Folder::new(input);
        events.into_iter().for_each(|event| folder.push(event));
        folder.doc
    }
}

/// Builds a [`Document`] from events as they come, so a whole-text parse need not hold the
/// events of the whole text at once, and a stream can give its result at any point.
pub struct Folder<'a> {
    doc: Document<'a>,
    input: &'a [u8],
    /// The open text / thinking block: its number, place in `blocks` and span start.
    text_at: Option<(usize, usize, usize)>,
    thinking_at: Option<(usize, usize, usize)>,
    /// The first block that changed since [`Folder::take_changed_from`] was last asked
    /// (`usize::MAX`: none; blocks pushed since are new, not changed).
    changed_from: usize,
}

impl Folder<'static> {
    /// A folder for the events of a stream (pieces are copies, never spans of an input).
    pub fn for_stream() -> Self {
        Folder::new(&[])
    }
}

/// Builds a text or thinking block from its content.
type MakeBlock<'a> = fn(Cow<'a, [u8]>) -> Block<'a>;

impl<'a> Folder<'a> {
    fn new(input: &'a [u8]) -> Self {
        Self { doc: Document::default(), input, text_at: None, thinking_at: None, changed_from: usize::MAX }
    }

    /// The document of the events pushed so far.
    pub fn document(&self) -> &Document<'a> {
        &self.doc
    }

    /// The first block an event changed (a piece added to an open text or thinking block)
    /// since the last call (`usize::MAX`: none); blocks before it are as they were, so a
    /// stream's result is rebuilt from there only.
    pub fn take_changed_from(&mut self) -> usize {
        std::mem::replace(&mut self.changed_from, usize::MAX)
    }

    /// Adds the next event.
    pub fn push(&mut self, event: Event) {
        match event {
            Event::Text { block, text } => self.piece(Piece::Copy(text), block, Open::Text),
            Event::TextSpan { block, start, end } => self.piece(Piece::Span(start, end), block, Open::Text),
            Event::Thinking { index, text } => self.piece(Piece::Copy(text), index, Open::Thinking),
            Event::ThinkingSpan { index, start, end } => self.piece(Piece::Span(start, end), index, Open::Thinking),
            Event::ThinkingEnd { index, complete } => {
                if self.thinking_at.map(|(i, _, _)| i) != Some(index) {
                    // An empty thinking block still marks where the model thought.
                    self.doc.blocks.push(Block::Thinking(Cow::Borrowed(&[])));
                }
                self.thinking_at = None;
                if !complete {
                    self.doc.incomplete_thinking = true;
                }
            }
            Event::ToolStart { .. } | Event::ToolDelta { .. } => {}
            Event::ToolEnd { result, .. } => match result {
                Ok(call) => self.doc.blocks.push(Block::ToolCall(call)),
                Err(issue) => self.doc.issues.push(issue),
            },
        }
    }

    /// A piece of text or thinking: it extends the open block of its kind if that block has the
    /// same number, else it opens a new one.
    fn piece(&mut self, piece: Piece, number: usize, kind: Open) {
        let input = self.input;
        let slice = |start: usize, end: usize| input.get(start..end).unwrap_or_default();
        let (open, make): (_, MakeBlock<'a>) = match kind {
            Open::Text => (&mut self.text_at, Block::Text),
            Open::Thinking => (&mut self.thinking_at, Block::Thinking),
        };
        let blocks = &mut self.doc.blocks;
        match (*open, piece) {
            (Some((n, at, _)), Piece::Copy(text)) if n == number => {
                if let Block::Text(t) | Block::Thinking(t) = &mut blocks[at] {
                    extend(t, &text);
                }
                self.changed_from = self.changed_from.min(at);
            }
            (Some((n, at, first)), Piece::Span(_, end)) if n == number => {
                blocks[at] = make(Cow::Borrowed(slice(first, end)));
                self.changed_from = self.changed_from.min(at);
            }
            (_, piece) => {
                let (first, content) = match piece {
                    Piece::Copy(text) => (0, Cow::Owned(text)),
                    Piece::Span(start, end) => (start, Cow::Borrowed(slice(start, end))),
                };
                *open = Some((number, blocks.len(), first));
                blocks.push(make(content));
            }
        }
    }
}

/// A piece of a text or thinking block: copied bytes, or a range of the input.
enum Piece {
    Copy(Vec<u8>),
    Span(usize, usize),
}

/// Which kind of block a piece belongs to.
#[derive(Clone, Copy)]
enum Open {
    Text,
    Thinking,
}

/// Bytes of input a whole-text parse feeds at a time: its events are folded after each slice,
/// so a text of a million small calls never holds a million events besides its document.
const WHOLE_TEXT_SLICE: usize = 1 << 20;

/// One pass of a whole-text parse, fed `slice` bytes at a time (cut before a UTF-8 lead byte);
/// also says whether the first thinking tag was a stray closing tag.
fn parse_in_slices<'a>(text: &'a [u8], options: &Options, slice: usize) -> (Document<'a>, bool) {
    let mut machine = StreamMachine::for_whole_text(options.clone());
    let mut folder = Folder::new(text);
    let mut events = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + slice.max(1)).min(text.len());
        while end < text.len() && (text[end] as i8) < -0x40 {
            end += 1; // a continuation byte: the character goes on
        }
        machine.feed_into(&text[start..end], &mut events);
        events.drain(..).for_each(|event| folder.push(event));
        start = end;
    }
    // Asked before and after `finish`: Forge's machine keeps what it saw through its reset, a
    // dialect's does not (and decides nothing about thinking tags at the end).
    let stray_close = machine.saw_stray_thinking_close();
    machine.finish().into_iter().for_each(|event| folder.push(event));
    (folder.doc, stray_close || machine.saw_stray_thinking_close())
}

/// Parses a whole text. With [`StartThinking::Detect`], a text whose first thinking tag is a
/// closing tag is parsed again as starting inside thinking (at most two passes).
///
/// ```
/// use agentmsg_core::parse::{parse, Block, Options};
/// let doc = parse(b"[Let me check]\nIt is 42.", &Options::default());
/// assert_eq!(doc.blocks[0], Block::Thinking(b"Let me check"[..].into()));
/// assert_eq!(doc.text(), b"It is 42.");
/// ```
pub fn parse<'a>(text: &'a [u8], options: &Options) -> Document<'a> {
    let (doc, stray_close) = parse_in_slices(text, options, WHOLE_TEXT_SLICE);
    if options.start_in_thinking == StartThinking::Detect && stray_close {
        let again = Options { start_in_thinking: StartThinking::Yes, ..options.clone() };
        return parse_in_slices(text, &again, WHOLE_TEXT_SLICE).0;
    }
    doc
}

/// Parses many texts in parallel (rayon); the result is in input order.
pub fn parse_many<'a, T: AsRef<[u8]> + Sync>(texts: &'a [T], options: &Options) -> Vec<Document<'a>> {
    use rayon::prelude::*;
    texts.par_iter().map(|text| parse(text.as_ref(), options)).collect()
}

#[cfg(test)]
mod tests;
