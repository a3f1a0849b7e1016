//! What a stream machine reports as it reads, whatever the dialect.

use super::call::{CallHeader, Issue, ToolCall};

/// What the machine reports as it reads. Text pieces are stripped and joined as described in
/// the module docs of [`parse`](super); `block` numbers the text runs from 0. The `…Span` events
/// come only from [`StreamMachine::for_whole_text`](super::StreamMachine::for_whole_text): byte
/// ranges of the input instead of copies (a later span of the same run extends it).
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Text { block: usize, text: Vec<u8> },
    TextSpan { block: usize, start: usize, end: usize },
    Thinking { index: usize, text: Vec<u8> },
    ThinkingSpan { index: usize, start: usize, end: usize },
    ThinkingEnd { index: usize, complete: bool },
    /// A call opened. Forge's dialect starts a call at its `<tool>`, before its name is known
    /// (`header` is `None`); the other dialects once its name is complete, with its id and name.
    ToolStart { index: usize, header: Option<CallHeader> },
    ToolDelta { index: usize, fragment: Vec<u8> },
    ToolEnd { index: usize, result: Result<ToolCall, Issue> },
}
