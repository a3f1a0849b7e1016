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
//! - **Text**: each run of text between two elements is stripped of ASCII whitespace at both
//!   ends; empty runs are dropped; the visible text is the runs joined with `"\n"`.

use std::borrow::Cow;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub thinking: ThinkingMode,
    pub tool_format: ToolFormat,
    /// Whether code fences are tracked (tags and bracket lines inside them are text).
    pub code_fences: bool,
    pub start_in_thinking: StartThinking,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            thinking: ThinkingMode::Auto,
            tool_format: ToolFormat::Auto,
            code_fences: true,
            start_in_thinking: StartThinking::Detect,
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
        let mut doc = Document::default();
        let slice = |start: usize, end: usize| input.get(start..end).unwrap_or_default();
        // The open text / thinking block: its number, place in `blocks` and span start.
        let mut text_at: Option<(usize, usize, usize)> = None;
        let mut thinking_at: Option<(usize, usize, usize)> = None;
        for event in events {
            match event {
                Event::Text { block, text } => match text_at {
                    Some((b, at, _)) if b == block => {
                        if let Block::Text(t) = &mut doc.blocks[at] {
                            extend(t, &text);
                        }
                    }
                    _ => {
                        text_at = Some((block, doc.blocks.len(), 0));
                        doc.blocks.push(Block::Text(Cow::Owned(text)));
                    }
                },
                Event::TextSpan { block, start, end } => match text_at {
                    Some((b, at, first)) if b == block => {
                        doc.blocks[at] = Block::Text(Cow::Borrowed(slice(first, end)));
                    }
                    _ => {
                        text_at = Some((block, doc.blocks.len(), start));
                        doc.blocks.push(Block::Text(Cow::Borrowed(slice(start, end))));
                    }
                },
                Event::Thinking { index, text } => match thinking_at {
                    Some((i, at, _)) if i == index => {
                        if let Block::Thinking(t) = &mut doc.blocks[at] {
                            extend(t, &text);
                        }
                    }
                    _ => {
                        thinking_at = Some((index, doc.blocks.len(), 0));
                        doc.blocks.push(Block::Thinking(Cow::Owned(text)));
                    }
                },
                Event::ThinkingSpan { index, start, end } => match thinking_at {
                    Some((i, at, first)) if i == index => {
                        doc.blocks[at] = Block::Thinking(Cow::Borrowed(slice(first, end)));
                    }
                    _ => {
                        thinking_at = Some((index, doc.blocks.len(), start));
                        doc.blocks.push(Block::Thinking(Cow::Borrowed(slice(start, end))));
                    }
                },
                Event::ThinkingEnd { index, complete } => {
                    if thinking_at.map(|(i, _, _)| i) != Some(index) {
                        // An empty thinking block still marks where the model thought.
                        doc.blocks.push(Block::Thinking(Cow::Borrowed(&[])));
                    }
                    thinking_at = None;
                    if !complete {
                        doc.incomplete_thinking = true;
                    }
                }
                Event::ToolStart { .. } | Event::ToolDelta { .. } => {}
                Event::ToolEnd { result, .. } => match result {
                    Ok(call) => doc.blocks.push(Block::ToolCall(call)),
                    Err(issue) => doc.issues.push(issue),
                },
            }
        }
        doc
    }
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
    let mut machine = StreamMachine::for_whole_text(*options);
    let mut events = machine.feed(text);
    events.extend(machine.finish());
    if options.start_in_thinking == StartThinking::Detect && machine.saw_stray_thinking_close() {
        let again = Options { start_in_thinking: StartThinking::Yes, ..*options };
        let mut machine = StreamMachine::for_whole_text(again);
        events = machine.feed(text);
        events.extend(machine.finish());
    }
    Document::fold(events, text)
}

/// Parses many texts in parallel (rayon); the result is in input order.
pub fn parse_many<'a, T: AsRef<[u8]> + Sync>(texts: &'a [T], options: &Options) -> Vec<Document<'a>> {
    use rayon::prelude::*;
    texts.par_iter().map(|text| parse(text.as_ref(), options)).collect()
}

#[cfg(test)]
mod tests;
