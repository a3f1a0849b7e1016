//! Parsing of model text: tool calls (`<tool>…</tool>`, JSON or XML payload), thinking
//! (`[bracket]` lines, `<think>` / `<thinking>` tags) and the visible text around them.
//!
//! One incremental state machine ([`StreamMachine`]) does all the work; whole-text [`parse`] is
//! "feed everything, then finish", so streamed and whole-text results agree by construction.
//! Input is bytes (UTF-8, or the `surrogatepass` encoding of a Python string with lone
//! surrogates): every place the machine cuts the input is an ASCII byte, so every piece it hands
//! out is as valid as the input was.
//!
//! The rules (the Python docstring of `agentmsg.parse` states them for users):
//! - **Tool calls**: `<tool>` opens a call anywhere outside a code fence, a thinking block and
//!   another call; the payload ends at the first `</tool>` that is not inside a JSON string (JSON
//!   payloads) or a CDATA section (XML payloads). See [`payload`] for what a valid payload is.
//!   Recovery: if a JSON call never closes because a string never ends, it ends at the first
//!   `</tool>` inside its strings instead, and what follows is parsed as if it had (a second,
//!   "fallback" machine reads along from that point, so this stays one linear pass).
//! - **Thinking tags**: `<think>…</think>` and `<thinking>…</thinking>`; the content is raw
//!   (nothing inside is parsed). An unclosed tag is thinking to the end and marked incomplete.
//! - **Bracket lines**: see [`bracket`].
//! - **Code fences**: a line whose first non-blank characters are three or more backticks or
//!   tildes opens a fence; a line of at least as many of the same character (and nothing else
//!   but blanks) closes it. Inside a fence nothing is parsed.
//! - **Call limit**: with [`Options::max_calls`] `= Some(n)`, the `<tool>` that would open call
//!   `n + 1` and everything after it become one issue ([`IssueKind::TooManyCalls`]) whose raw
//!   text is that rest: nothing is lost and the cost of a reply is bounded.
//! - **Text**: each run of text between two elements is stripped of ASCII whitespace at both
//!   ends; empty runs are dropped; the visible text is the runs joined with `"\n"`.

use std::borrow::Cow;
use std::sync::Arc;

pub mod bracket;
pub mod dialect;
mod chars;
mod machine;
mod output;
pub mod payload;
mod xml;

pub use machine::StreamMachine;
pub use jiter::{JsonObject, JsonValue};
pub use payload::{parse_json, Issue, IssueKind, Json, JsonPairs, ToolCall};

/// Which thinking notations are recognized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinkingMode {
    /// Tags and bracket lines.
    Auto,
    /// Only `<think>` and `<thinking>` tags.
    Tags,
    /// Only `[bracket]` lines.
    Brackets,
    /// No thinking: tags and brackets are text.
    None,
}

impl ThinkingMode {
    /// The mode named `name` (`"auto"`, `"tags"`, `"brackets"`, `"none"`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(Self::Auto),
            "tags" => Some(Self::Tags),
            "brackets" => Some(Self::Brackets),
            "none" => Some(Self::None),
            _ => None,
        }
    }

    pub(crate) fn tags(self) -> bool {
        matches!(self, Self::Auto | Self::Tags)
    }

    pub(crate) fn brackets(self) -> bool {
        matches!(self, Self::Auto | Self::Brackets)
    }
}

/// Which tool-call payloads are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolFormat {
    /// JSON when the payload starts with anything but `<`, else XML elements.
    Auto,
    /// Only JSON payloads; an XML payload is an error record.
    Json,
    /// Only XML-element payloads; a JSON payload is an error record.
    Xml,
}

impl ToolFormat {
    /// The format named `name` (`"auto"`, `"json"`, `"xml"`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(Self::Auto),
            "json" => Some(Self::Json),
            "xml" => Some(Self::Xml),
            _ => None,
        }
    }
}

/// Whether the text starts inside a thinking block whose opening tag the prompt already wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartThinking {
    No,
    Yes,
    /// Whole-text only: yes when the first thinking tag in the text is a closing tag.
    /// A [`StreamMachine`] cannot look ahead and treats this as `No`.
    Detect,
}

/// Parser options; the default is what `agentmsg.parse` uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub thinking: ThinkingMode,
    pub tool_format: ToolFormat,
    /// Whether code fences are tracked (tags and bracket lines inside them are text).
    pub code_fences: bool,
    pub start_in_thinking: StartThinking,
    /// At most this many tool calls (good or bad) are parsed; from the next `<tool>` on, the
    /// rest of the text is one [`IssueKind::TooManyCalls`] issue holding it raw. `None`: no limit.
    pub max_calls: Option<usize>,
    /// Tool definitions: an XML payload's text values are typed by them, and a call to a tool
    /// not among them is flagged (`unknown_tool`). `None`: values stay text, nothing is flagged.
    pub tools: Option<Arc<dialect::Tools>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            thinking: ThinkingMode::Auto,
            tool_format: ToolFormat::Auto,
            code_fences: true,
            start_in_thinking: StartThinking::Detect,
            max_calls: None,
            tools: None,
        }
    }
}

/// What the machine reports as it reads. Text pieces are stripped and joined as described in
/// the module docs; `block` numbers the text runs from 0. The `…Span` events come only from
/// [`StreamMachine::for_whole_text`]: byte ranges of the input instead of copies (a later span
/// of the same run extends it).
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Text { block: usize, text: Vec<u8> },
    TextSpan { block: usize, start: usize, end: usize },
    Thinking { index: usize, text: Vec<u8> },
    ThinkingSpan { index: usize, start: usize, end: usize },
    ThinkingEnd { index: usize, complete: bool },
    ToolStart { index: usize },
    ToolDelta { index: usize, fragment: Vec<u8> },
    ToolEnd { index: usize, result: Result<ToolCall, Issue> },
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
        Self { doc: Document::default(), input, text_at: None, thinking_at: None }
    }

    /// The document of the events pushed so far.
    pub fn document(&self) -> &Document<'a> {
        &self.doc
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
            }
            (Some((n, at, first)), Piece::Span(_, end)) if n == number => {
                blocks[at] = make(Cow::Borrowed(slice(first, end)));
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
    machine.finish().into_iter().for_each(|event| folder.push(event));
    (folder.doc, machine.saw_stray_thinking_close())
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
