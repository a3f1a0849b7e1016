//! pythonic: a Python list of calls, `[get_weather(city='Paris'), search(q="x", n=3)]`, as
//! Llama 3.2, Llama 4 and other models write it.
//!
//! A list is a possible call list only where it starts a line (only blanks before it on its
//! line, so also at the start of the reply) or right after `<|python_start|>`; it is one once `[`,
//! a name and `(` are read. Each call's keyword arguments are Python literals, read by the safe
//! reader of [`super::py_literal`] and streamed as JSON. The list's brackets and commas are
//! structure; `<|python_end|>` right after the list is dropped. A `[` that does not go on as
//! `[name(` is text. A call whose arguments are not literals makes the list malformed there:
//! the call is reported (`invalid_json`, with its raw text) and its raw text also stays text,
//! as does everything after it. After a call, anything but `,` or `]` ends the list; the rest
//! is text.
//!
//! lfm2 is this machine with other markers: lists only after `<|tool_call_start|>` (dropping
//! `<|tool_call_end|>` after them), and `<think>` reasoning.

use super::held::Held;
use super::py_literal::{ArgsReader, Step};
use super::reading::{read_thinking, text_blanks, ThinkingTags};
use super::driver::{Core, Flow, Input, OpenCall, Payload, StateMachine};
use crate::parse::call::IssueKind;
use crate::parse::scan::{match_at, take_run, Found};

/// Where a pythonic dialect's call lists are: the tags around them, whether a line may start
/// one without its tag, and the reasoning markers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ListMarkers {
    start: &'static [u8],
    end: &'static [u8],
    line_lists: bool,
    think: Option<(&'static [u8], &'static [u8])>,
}

/// pythonic: `<|python_start|>…<|python_end|>` (Llama 4) or a list that starts a line.
pub(crate) const PYTHONIC: ListMarkers =
    ListMarkers { start: b"<|python_start|>", end: b"<|python_end|>", line_lists: true, think: None };
/// lfm2: `<|tool_call_start|>[…]<|tool_call_end|>` only, `<think>` reasoning (LFM2, LFM2.5).
pub(crate) const LFM2: ListMarkers = ListMarkers {
    start: b"<|tool_call_start|>",
    end: b"<|tool_call_end|>",
    line_lists: false,
    think: Some((b"<think>", b"</think>")),
};

#[derive(Clone, Debug)]
enum State {
    /// At the start of a line: only blanks read on it.
    LineStart,
    Text,
    Thinking,
    /// After `<|python_start|>` (held): blanks, then `[` or not.
    AfterStartTag(Held),
    /// Before a call's name: after the list's `[` (`first`) or a `,`.
    BeforeName { held: Held, first: bool },
    Name { held: Held, name_at: usize },
    Call(Box<OpenCall>),
    /// After a call's `)`: blanks (held), then `,` or `]`.
    AfterCall(Held),
    /// After the list's `]`: blanks on its line, then `<|python_end|>` is dropped.
    AfterList,
}

#[derive(Clone, Debug)]
pub(crate) struct PythonicMachine {
    pub core: Core,
    state: State,
    markers: ListMarkers,
    tags: ThinkingTags,
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Blanks on a line (not the newline).
fn is_line_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

impl PythonicMachine {
    pub fn new(mut core: Core, markers: ListMarkers, start_in_thinking: bool) -> Self {
        let mut tags = ThinkingTags::default();
        let state = if start_in_thinking && markers.think.is_some() {
            tags.open(&mut core);
            State::Thinking
        } else if markers.line_lists {
            State::LineStart
        } else {
            State::Text
        };
        Self { core, state, markers, tags }
    }

    pub fn saw_stray_close(&self) -> bool {
        self.tags.saw_stray_close
    }

    fn thinking(&mut self, input: &Input, i: usize) -> Flow {
        let Some((_, close)) = self.markers.think else { return Flow::Wait(i) };
        match read_thinking(&mut self.core, input, i, &[close]) {
            Ok(next) => {
                self.state = State::Text;
                Flow::Continue(next)
            }
            Err(flow) => flow,
        }
    }

    fn line_start(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let Some(i) = text_blanks(&mut self.core, input, i, |b| is_line_blank(b) || b == b'\n') else {
            return Flow::Continue(data.len());
        };
        if data[i] == b'[' {
            self.state = State::BeforeName { held: Held::new(input.at(i), b"["), first: true };
            return Flow::Continue(i + 1);
        }
        self.state = State::Text;
        Flow::Continue(i)
    }

    /// Text up to the next line start (where lines may start lists), the start tag or a
    /// reasoning marker (each begins with `<`).
    fn text(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let ListMarkers { start, line_lists, think, .. } = self.markers;
        let newline = if line_lists { b'\n' } else { b'<' };
        let Some(k) = memchr::memchr2(newline, b'<', &data[i..]) else {
            self.core.out.text(&data[i..], input.abs(i));
            return Flow::Continue(data.len());
        };
        let at = i + k;
        if data[at] == b'\n' {
            self.core.out.text(&data[i..=at], input.abs(i));
            self.state = State::LineStart;
            return Flow::Continue(at + 1);
        }
        let markers: &[&[u8]] = match think {
            Some((open, close)) => &[start, open, close],
            None => &[start],
        };
        match input.settle(match_at(data, at, markers)) {
            Found::Marker { which: 0, .. } => {
                self.core.out.text(&data[i..at], input.abs(i));
                self.state = State::AfterStartTag(Held::new(input.at(at), start));
                Flow::Continue(at + start.len())
            }
            Found::Marker { which, .. } => {
                self.core.out.text(&data[i..at], input.abs(i));
                if which == 1 {
                    self.tags.open(&mut self.core);
                    self.state = State::Thinking;
                } else {
                    self.tags.stray_close(&mut self.core, markers[which], input.abs(at));
                }
                Flow::Continue(at + markers[which].len())
            }
            Found::Partial { .. } => {
                self.core.out.text(&data[i..at], input.abs(i));
                Flow::Wait(at)
            }
            Found::None => {
                self.core.out.text(&data[i..=at], input.abs(i));
                Flow::Continue(at + 1)
            }
        }
    }

    /// The list's structure between names: blanks (held), then the byte that decides. After
    /// `<|python_start|>` a `[` opens the list; before a name, a name starts (or, after a comma,
    /// `]` ends the list: a trailing comma is forgiven); after a call, `,` or `]`.
    fn structure(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let (State::AfterStartTag(held) | State::BeforeName { held, .. } | State::AfterCall(held)) = &mut self.state
        else {
            return Flow::Wait(i);
        };
        let Some(i) = held.hold_blanks(data, i) else { return Flow::Continue(data.len()) };
        match (std::mem::replace(&mut self.state, State::Text), data[i]) {
            (State::AfterStartTag(mut held), b'[') => {
                held.bytes.push(b'[');
                self.state = State::BeforeName { held, first: true };
                Flow::Continue(i + 1)
            }
            (State::BeforeName { held, .. }, b) if is_name_start(b) => {
                let name_at = held.bytes.len();
                self.state = State::Name { held, name_at };
                Flow::Continue(i)
            }
            (State::AfterCall(mut held), b',') => {
                held.bytes.push(b',');
                self.state = State::BeforeName { held, first: false };
                Flow::Continue(i + 1)
            }
            (State::BeforeName { first: false, .. } | State::AfterCall(_), b']') => {
                self.state = State::AfterList;
                Flow::Continue(i + 1)
            }
            (State::AfterStartTag(held) | State::BeforeName { held, .. } | State::AfterCall(held), _) => {
                held.not_a_call(&mut self.core, i)
            }
            (state, _) => {
                self.state = state;
                Flow::Wait(i)
            }
        }
    }

    fn name(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let State::Name { held, .. } = &mut self.state else { return Flow::Wait(i) };
        let Some(i) = take_run(data, i, &mut held.bytes, is_name_byte) else { return Flow::Continue(data.len()) };
        let State::Name { mut held, name_at } = std::mem::replace(&mut self.state, State::Text) else {
            return Flow::Wait(i);
        };
        if data[i] != b'(' {
            return held.not_a_call(&mut self.core, i);
        }
        let name = String::from_utf8_lossy(&held.bytes[name_at..]).into_owned();
        held.bytes.push(b'(');
        let payload = Payload::Pythonic(ArgsReader::new());
        let mut call = self.core.open_call(held.start, held.start_chars, held.bytes, payload);
        self.core.start_call(&mut call, &name);
        self.state = State::Call(Box::new(call));
        Flow::Continue(i + 1)
    }

    fn call(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let State::Call(call) = &mut self.state else { return Flow::Wait(i) };
        let Payload::Pythonic(reader) = &mut call.payload else { return Flow::Wait(i) };
        let step = reader.feed(data, i);
        let stop = match step {
            Step::More => data.len(),
            Step::Done(at) | Step::Error(at, _) => at,
        };
        call.raw.extend_from_slice(&data[i..stop]);
        if let Step::More = step {
            self.core.progress(call);
            return Flow::Continue(stop);
        }
        let State::Call(call) = std::mem::replace(&mut self.state, State::Text) else { return Flow::Wait(i) };
        match step {
            Step::Error(_, why) => {
                // Malformed: reported, and its text stays text (it may well be prose).
                let text = Held { start: call.start, start_chars: call.start_chars, bytes: call.raw.clone() };
                self.core.close(*call, Err((IssueKind::InvalidJson, format!("malformed Python call: {why}"))));
                text.into_text(&mut self.core);
            }
            _ => {
                self.core.end_call(*call);
                self.state = State::AfterCall(Held::new(input.at(stop), b""));
            }
        }
        Flow::Continue(stop)
    }

    fn after_list(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        // Not the newline: the text state reads it, so the next line may hold a list.
        let Some(i) = text_blanks(&mut self.core, input, i, is_line_blank) else { return Flow::Continue(data.len()) };
        let end = self.markers.end;
        match input.settle(match_at(data, i, &[end])) {
            Found::Partial { .. } => Flow::Wait(i),
            Found::Marker { .. } => {
                self.state = State::Text;
                Flow::Continue(i + end.len())
            }
            Found::None => {
                self.state = State::Text;
                Flow::Continue(i)
            }
        }
    }
}

impl StateMachine for PythonicMachine {
    #[inline(always)]
    fn step(&mut self, input: &mut Input, i: usize) -> Flow {
        match self.state {
            State::LineStart => self.line_start(input, i),
            State::Text => self.text(input, i),
            State::Thinking => self.thinking(input, i),
            State::AfterStartTag(_) | State::BeforeName { .. } | State::AfterCall(_) => self.structure(input, i),
            State::Name { .. } => self.name(input, i),
            State::Call(_) => self.call(input, i),
            State::AfterList => self.after_list(input, i),
        }
    }

    /// The end of the text: closes what is open.
    fn finish(&mut self) {
        match std::mem::replace(&mut self.state, State::Text) {
            State::LineStart | State::Text | State::AfterList => {}
            State::Thinking => self.core.out.end_thinking(false),
            State::AfterStartTag(held)
            | State::BeforeName { held, .. }
            | State::Name { held, .. }
            | State::AfterCall(held) => held.into_text(&mut self.core),
            State::Call(call) => self.core.cut_off(*call, "a Python call list"),
        }
    }

    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
}
