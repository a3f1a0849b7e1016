//! Turns classified bytes into events: strips text and thinking runs at both ends (holding back
//! trailing whitespace until something else follows) and merges adjacent pieces.

use super::bracket::is_space;
use super::Event;

/// A run of text or tag thinking that is stripped at both ends as it streams.
#[derive(Debug, Default)]
struct Run {
    /// Something other than whitespace has been emitted in this run.
    started: bool,
    /// Whitespace seen after the last emitted byte, emitted only if more content follows.
    pending_space: Vec<u8>,
}

impl Run {
    /// The part of `bytes` to emit now (pending whitespace first), or `None`.
    fn take(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) -> bool {
        if !self.started {
            match bytes.iter().position(|b| !is_space(*b)) {
                None => return false,
                Some(first) => bytes = &bytes[first..],
            }
        }
        match bytes.iter().rposition(|b| !is_space(*b)) {
            None => {
                self.pending_space.extend_from_slice(bytes);
                false
            }
            Some(last) => {
                self.started = true;
                out.append(&mut self.pending_space);
                out.extend_from_slice(&bytes[..=last]);
                self.pending_space.extend_from_slice(&bytes[last + 1..]);
                true
            }
        }
    }

    fn end(&mut self) {
        self.started = false;
        self.pending_space.clear();
    }
}

#[derive(Debug, Default)]
pub(crate) struct Output {
    pub events: Vec<Event>,
    text: Run,
    text_blocks: usize,
    thinking: Run,
    thinking_index: usize,
    thinking_count: usize,
    scratch: Vec<u8>,
}

impl Output {
    /// Visible text.
    pub fn text(&mut self, bytes: &[u8]) {
        let started = self.text.started;
        self.scratch.clear();
        if !self.text.take(bytes, &mut self.scratch) {
            return;
        }
        if !started {
            self.text_blocks += 1;
        }
        let block = self.text_blocks - 1;
        if let Some(Event::Text { block: b, text }) = self.events.last_mut() {
            if *b == block {
                text.extend_from_slice(&self.scratch);
                return;
            }
        }
        self.events.push(Event::Text { block, text: self.scratch.clone() });
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

    /// Content of the open thinking block.
    pub fn thinking(&mut self, bytes: &[u8]) {
        self.scratch.clear();
        if !self.thinking.take(bytes, &mut self.scratch) {
            return;
        }
        let index = self.thinking_index;
        if let Some(Event::Thinking { index: i, text }) = self.events.last_mut() {
            if *i == index {
                text.extend_from_slice(&self.scratch);
                return;
            }
        }
        self.events.push(Event::Thinking { index, text: self.scratch.clone() });
    }

    pub fn end_thinking(&mut self, complete: bool) {
        self.thinking.end();
        self.events.push(Event::ThinkingEnd { index: self.thinking_index, complete });
    }

    /// A whole bracket thought (already stripped, never empty).
    pub fn thought(&mut self, text: &[u8]) {
        let index = self.begin_thinking();
        self.events.push(Event::Thinking { index, text: text.to_vec() });
        self.end_thinking(true);
    }

    pub fn push(&mut self, event: Event) {
        self.events.push(event);
    }
}
