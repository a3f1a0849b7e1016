//! Stream events as OpenAI Responses API stream events, the rules of
//! `agentmsg.convert.responses_events.responses_events` (its docstring states them for users):
//!
//! - output items in the order the model wrote them, numbered from 0 (`output_index`), ids
//!   `msg_<n>`, `rs_<n>`, `fc_<n>`; every wire event takes the next sequence number;
//! - text goes in a `message` item, thinking in a `reasoning` item (a `reasoning_text` part),
//!   each open until another item opens, its thinking block ends, or the stream ends (an empty
//!   thinking block is an empty item); a text run
//!   that opens a new item goes without the `"\n"` that joins runs;
//! - a dialect's call: a `function_call` item added at its start, an arguments delta per
//!   fragment, arguments done and item done at its end; a Forge call (nameless start): the whole
//!   item at its end, its arguments as `json.dumps` writes them;
//! - a failed call: its item (added then, with empty call id, name and arguments, if it had not
//!   gone out) done at status `incomplete` with the issue, no arguments done.
//!
//! One [`ResponsesEvent`] may stand for several wire events (an opened message is its item and
//! its content part); each says how many, and its `seq` is the first one's number.

use super::call::{CallHeader, Issue};
use super::deltas::whole_arguments;
use super::event::Event;
use std::borrow::Cow;

/// The kind of a text-like item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextItem {
    Message,
    Reasoning,
}

/// One step of the Responses stream, borrowing from its event.
#[derive(Debug, PartialEq)]
pub enum ResponsesEvent<'e> {
    /// `response.output_item.added` of a message or reasoning item, then its
    /// `response.content_part.added` (two wire events).
    TextOpened { seq: u64, output: usize, kind: TextItem },
    /// `response.output_item.added` of a `function_call` item.
    CallOpened { seq: u64, output: usize, call_id: Cow<'e, str>, name: &'e str },
    /// `response.output_text.delta`; `newline`: the text goes after a `"\n"` (a new text run in
    /// the same item).
    Text { seq: u64, output: usize, newline: bool, text: &'e [u8] },
    /// `response.reasoning_text.delta`.
    Reasoning { seq: u64, output: usize, text: &'e [u8] },
    /// `response.function_call_arguments.delta`.
    Arguments { seq: u64, output: usize, fragment: Cow<'e, [u8]> },
    /// The item's text done, its part done, the item done (three wire events); `complete`: its
    /// status is `completed`, else `incomplete`.
    TextClosed { seq: u64, output: usize, kind: TextItem, complete: bool, text: Vec<u8> },
    /// A call's arguments done and its item done (two wire events), or, with `issue`, its item
    /// done at status `incomplete` (one).
    CallClosed { seq: u64, output: usize, call_id: String, name: String, arguments: Vec<u8>, issue: Option<&'e Issue> },
}

impl ResponsesEvent<'_> {
    /// How many wire events this one stands for.
    pub fn wire_events(&self) -> u64 {
        match self {
            Self::TextOpened { .. } => 2,
            Self::TextClosed { .. } => 3,
            Self::CallClosed { issue: None, .. } => 2,
            _ => 1,
        }
    }
}

/// The open message or reasoning item.
#[derive(Clone, Debug)]
struct OpenText {
    kind: TextItem,
    output: usize,
    /// The thinking block a reasoning item holds.
    block: usize,
    text: Vec<u8>,
}

/// A call whose item went out and has not ended.
#[derive(Clone, Debug)]
struct OpenCall {
    index: usize,
    output: usize,
    call_id: String,
    name: String,
    arguments: Vec<u8>,
}

/// What turning a stream's events into Responses events remembers between events.
#[derive(Clone, Debug, Default)]
pub struct ResponsesState {
    /// The number of the next wire event.
    seq: u64,
    /// The `output_index` of the next item.
    next_output: usize,
    /// The text run the last text went to (a new run is joined with `"\n"`).
    text_block: Option<usize>,
    current: Option<OpenText>,
    /// The calls open without a name (Forge's): sent whole at their end.
    nameless: Vec<usize>,
    calls: Vec<OpenCall>,
}

impl ResponsesState {
    /// Ready for a new stream.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// The number the next wire event takes.
    pub fn sequence_number(&self) -> u64 {
        self.seq
    }

    /// Numbers the next wire events from `seq` on.
    pub fn set_sequence_number(&mut self, seq: u64) {
        self.seq = seq;
    }

    fn push<'e>(&mut self, event: ResponsesEvent<'e>, out: &mut Vec<ResponsesEvent<'e>>) {
        self.seq += event.wire_events();
        out.push(event);
    }

    /// The Responses events of `event`, appended to `out`.
    pub fn events<'e>(&mut self, event: &'e Event, out: &mut Vec<ResponsesEvent<'e>>) {
        match event {
            Event::Text { block, text } => {
                let newline = *block > 0 && self.text_block != Some(*block);
                self.text_block = Some(*block);
                // A run that opens an item goes without its "\n": the items are joined with it.
                let (output, newline) = match &self.current {
                    Some(open) if open.kind == TextItem::Message => (open.output, newline),
                    _ => (self.open_text(TextItem::Message, 0, out), false),
                };
                let open = self.current.as_mut().expect("opened above");
                if newline {
                    open.text.push(b'\n');
                }
                open.text.extend_from_slice(text);
                let seq = self.seq;
                self.push(ResponsesEvent::Text { seq, output, newline, text }, out);
            }
            Event::Thinking { index, text } => {
                let output = match &self.current {
                    Some(open) if open.kind == TextItem::Reasoning && open.block == *index => open.output,
                    _ => self.open_text(TextItem::Reasoning, *index, out),
                };
                self.current.as_mut().expect("opened above").text.extend_from_slice(text);
                let seq = self.seq;
                self.push(ResponsesEvent::Reasoning { seq, output, text }, out);
            }
            Event::ThinkingEnd { index, complete } => {
                // An empty block is an empty item, as the parse keeps an empty thinking block.
                if !matches!(&self.current, Some(open) if open.kind == TextItem::Reasoning && open.block == *index) {
                    self.open_text(TextItem::Reasoning, *index, out);
                }
                self.close_text(*complete, out);
            }
            Event::ToolStart { index, header: Some(CallHeader { id, name }) } => {
                let output = self.open_call(Cow::Borrowed(id), name, out);
                self.calls.push(OpenCall { index: *index, output, call_id: id.clone(), name: name.clone(), arguments: Vec::new() });
            }
            Event::ToolStart { index, header: None } => self.nameless.push(*index),
            Event::ToolDelta { index, fragment } => {
                if let Some(call) = self.calls.iter_mut().find(|call| call.index == *index) {
                    call.arguments.extend_from_slice(fragment);
                    let (seq, output) = (self.seq, call.output);
                    self.push(ResponsesEvent::Arguments { seq, output, fragment: Cow::Borrowed(fragment) }, out);
                }
            }
            Event::ToolEnd { index, result } => {
                let nameless = self.nameless.iter().position(|i| i == index).map(|at| self.nameless.swap_remove(at)).is_some();
                let call = self.calls.iter().position(|call| call.index == *index).map(|at| self.calls.swap_remove(at));
                match result {
                    Err(issue) => {
                        let call = call.unwrap_or_else(|| {
                            // A call that failed before its item went out: its call_id is its
                            // item's id, so that every item of the response has its own.
                            let call_id = format!("fc_{}", self.next_output);
                            let output = self.open_call(Cow::Owned(call_id.clone()), "", out);
                            OpenCall { index: *index, output, call_id, name: String::new(), arguments: Vec::new() }
                        });
                        self.close_call(call, Some(issue), out);
                    }
                    Ok(whole) if nameless => {
                        let output = self.open_call(Cow::Borrowed(&whole.id), &whole.name, out);
                        let arguments = whole_arguments(whole);
                        let seq = self.seq;
                        self.push(ResponsesEvent::Arguments { seq, output, fragment: Cow::Owned(arguments.clone()) }, out);
                        let call = OpenCall { index: *index, output, call_id: whole.id.clone(), name: whole.name.clone(), arguments };
                        self.close_call(call, None, out);
                    }
                    Ok(_) => {
                        if let Some(call) = call {
                            self.close_call(call, None, out);
                        }
                    }
                }
            }
            Event::TextSpan { .. } | Event::ThinkingSpan { .. } => {}
        }
    }

    /// The end of the stream: the open item closes.
    pub fn finish<'e>(&mut self, out: &mut Vec<ResponsesEvent<'e>>) {
        self.close_text(true, out);
    }

    /// Opens a message or reasoning item (closing the open one); its output index.
    fn open_text<'e>(&mut self, kind: TextItem, block: usize, out: &mut Vec<ResponsesEvent<'e>>) -> usize {
        self.close_text(true, out);
        let output = self.next_output;
        self.next_output += 1;
        let seq = self.seq;
        self.push(ResponsesEvent::TextOpened { seq, output, kind }, out);
        self.current = Some(OpenText { kind, output, block, text: Vec::new() });
        output
    }

    /// Adds a call's item (closing the open text item); its output index.
    fn open_call<'e>(&mut self, call_id: Cow<'e, str>, name: &'e str, out: &mut Vec<ResponsesEvent<'e>>) -> usize {
        self.close_text(true, out);
        let output = self.next_output;
        self.next_output += 1;
        let seq = self.seq;
        self.push(ResponsesEvent::CallOpened { seq, output, call_id, name }, out);
        output
    }

    fn close_text(&mut self, complete: bool, out: &mut Vec<ResponsesEvent<'_>>) {
        if let Some(open) = self.current.take() {
            let seq = self.seq;
            self.push(ResponsesEvent::TextClosed { seq, output: open.output, kind: open.kind, complete, text: open.text }, out);
        }
    }

    fn close_call<'e>(&mut self, call: OpenCall, issue: Option<&'e Issue>, out: &mut Vec<ResponsesEvent<'e>>) {
        let OpenCall { output, call_id, name, arguments, .. } = call;
        let seq = self.seq;
        self.push(ResponsesEvent::CallClosed { seq, output, call_id, name, arguments, issue }, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Dialect, Options, StreamMachine};

    /// The wire events' types and numbers of `text` fed in `pieces`.
    fn wire(options: Options, pieces: &[&[u8]]) -> Vec<String> {
        let mut machine = StreamMachine::new(options);
        let mut events = Vec::new();
        for piece in pieces {
            events.extend(machine.feed(piece));
        }
        events.extend(machine.finish());
        let mut state = ResponsesState::default();
        state.set_sequence_number(2);
        let mut out = Vec::new();
        for event in &events {
            state.events(event, &mut out);
        }
        state.finish(&mut out);
        let mut expected_seq = 2;
        let names = out.iter().map(|event| {
            assert_eq!(
                match event {
                    ResponsesEvent::TextOpened { seq, .. }
                    | ResponsesEvent::CallOpened { seq, .. }
                    | ResponsesEvent::Text { seq, .. }
                    | ResponsesEvent::Reasoning { seq, .. }
                    | ResponsesEvent::Arguments { seq, .. }
                    | ResponsesEvent::TextClosed { seq, .. }
                    | ResponsesEvent::CallClosed { seq, .. } => *seq,
                },
                expected_seq
            );
            expected_seq += event.wire_events();
            match event {
                ResponsesEvent::TextOpened { output, kind, .. } => format!("open {kind:?} {output}"),
                ResponsesEvent::CallOpened { output, call_id, name, .. } => format!("call {name} {output} {call_id}"),
                ResponsesEvent::Text { newline, text, .. } => format!("text {newline} {}", String::from_utf8_lossy(text)),
                ResponsesEvent::Reasoning { text, .. } => format!("reasoning {}", String::from_utf8_lossy(text)),
                ResponsesEvent::Arguments { fragment, .. } => format!("arguments {}", String::from_utf8_lossy(fragment)),
                ResponsesEvent::TextClosed { kind, complete, text, .. } => {
                    format!("close {kind:?} {complete} {}", String::from_utf8_lossy(text))
                }
                ResponsesEvent::CallClosed { output, name, arguments, issue, .. } => {
                    format!("close call {name} {output} {} {}", String::from_utf8_lossy(arguments), issue.is_some())
                }
            }
        });
        let names: Vec<String> = names.collect();
        assert_eq!(state.sequence_number(), expected_seq);
        names
    }

    #[test]
    fn items_open_and_close_in_order() {
        let hermes: &[&[u8]] = &[b"<think>hm", b"m</think>Hi <tool_call>{\"name\": \"f\", \"argu", b"ments\": {\"a\": 1}}</tool_call> ok"];
        assert_eq!(
            wire(Options::new(Dialect::Hermes), hermes),
            [
                "open Reasoning 0",
                "reasoning hm",
                "reasoning m",
                "close Reasoning true hmm",
                "open Message 1",
                "text false Hi",
                "close Message true Hi",
                "call f 2 call_420196a1052644b7",
                "arguments {\"a\":1}",
                "close call f 2 {\"a\":1} false",
                "open Message 3",
                "text false ok",
                "close Message true ok",
            ]
        );
    }

    #[test]
    fn forge_calls_go_whole_and_failed_calls_end_incomplete() {
        let forge: &[&[u8]] = &[b"Hi <tool>{\"tool_name\": \"f\", \"arg", b"uments\": {\"a\": 1.5}}</tool> ok <tool>{bad</tool>"];
        assert_eq!(
            wire(Options::default(), forge),
            [
                "open Message 0",
                "text false Hi",
                "close Message true Hi",
                "call f 1 call_5d07e55a83684416",
                "arguments {\"a\":1.5}",
                "close call f 1 {\"a\":1.5} false",
                "open Message 2",
                "text false ok",
                "close Message true ok",
                "call  3 fc_3",
                "close call  3  true",
            ]
        );
        let hermes: &[&[u8]] = &[b"<tool_call>{\"name\": \"f\", \"arguments\": {}} x</tool_call>"];
        // A failed call's item closes with what went out of it, as a client accumulated it.
        assert_eq!(wire(Options::new(Dialect::Hermes), hermes), ["call f 0 call_6e08980861f62d1d", "arguments {}", "close call f 0 {} true"]);
    }

    #[test]
    fn an_unclosed_thinking_block_ends_incomplete_and_an_empty_one_is_an_empty_item() {
        assert_eq!(wire(Options::default(), &[b"<think>hm"]), ["open Reasoning 0", "reasoning hm", "close Reasoning false hm"]);
        assert_eq!(
            wire(Options::default(), &[b"<think></think>Hi"]),
            ["open Reasoning 0", "close Reasoning true ", "open Message 1", "text false Hi", "close Message true Hi"]
        );
    }
}
