//! The `<tool_call>` dialects (hermes, qwen3_coder) with `<think>` reasoning.
//!
//! `<tool_call>` opens a call only when the payload starts right after it (blanks allowed): a
//! `{` for hermes, `<function=` for qwen3_coder; otherwise the marker is text. A hermes call
//! ends at the first `</tool_call>` outside a JSON string; a qwen3_coder call at the first
//! `</tool_call>` outside a parameter value. `<think>` opens reasoning (its content is not
//! parsed) up to `</think>`; a `</think>` with nothing open is text.

use super::element_call::{ElementCall, Step, FUNCTION_OPEN};
use super::json_call::{JsonCall, JsonShape};
use super::scan::{find_marker, is_space, match_at, Found};
use super::{Core, Dialect, Flow, Input, OpenCall, Payload};

const TOOL_CALL_OPEN: &[u8] = b"<tool_call>";
const TOOL_CALL_CLOSE: &[u8] = b"</tool_call>";
const THINK_OPEN: &[u8] = b"<think>";
const THINK_CLOSE: &[u8] = b"</think>";
const TEXT_MARKERS: &[&[u8]] = &[TOOL_CALL_OPEN, THINK_OPEN, THINK_CLOSE];
const HERMES_SHAPE: JsonShape = JsonShape::Fields { name_key: "name", arguments_key: "arguments" };

#[derive(Clone, Debug)]
enum State {
    Text,
    Thinking,
    /// After `<tool_call>`: the marker and blanks, until the payload's first byte decides.
    Opening { start: usize, start_chars: usize, held: Vec<u8> },
    Call(OpenCall),
}

#[derive(Clone, Debug)]
pub(crate) struct TaggedMachine {
    pub core: Core,
    dialect: Dialect,
    state: State,
    saw_open: bool,
    saw_stray_close: bool,
}

impl TaggedMachine {
    pub fn new(mut core: Core, dialect: Dialect, start_in_thinking: bool) -> Self {
        let state = if start_in_thinking {
            core.out.begin_thinking();
            State::Thinking
        } else {
            State::Text
        };
        Self { core, dialect, state, saw_open: start_in_thinking, saw_stray_close: false }
    }

    pub fn saw_stray_close(&self) -> bool {
        self.saw_stray_close
    }

    /// Reads as much of `data` as can be decided; returns how much.
    pub fn run(&mut self, data: &[u8], clock: &mut crate::parse::chars::CharClock, at_end: bool) -> usize {
        let mut input = Input { data, clock, at_end };
        let mut i = 0;
        while i < data.len() {
            let flow = match self.state {
                State::Text => self.text(&mut input, i),
                State::Thinking => self.thinking(&input, i),
                State::Opening { .. } => self.opening(&input, i),
                State::Call(_) => self.call(&input, i),
            };
            match flow {
                Flow::Continue(n) => i = n,
                Flow::Wait(n) => return n,
            }
        }
        i
    }

    fn text(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        match input.settle(find_marker(data, i, TEXT_MARKERS)) {
            Found::Marker { at, which } => {
                self.core.out.text(&data[i..at], input.abs(i));
                let marker = TEXT_MARKERS[which];
                if marker == TOOL_CALL_OPEN {
                    let (start, start_chars) = input.at(at);
                    self.state = State::Opening { start, start_chars, held: marker.to_vec() };
                } else if marker == THINK_OPEN {
                    self.saw_open = true;
                    self.core.out.begin_thinking();
                    self.state = State::Thinking;
                } else {
                    self.saw_stray_close |= !self.saw_open;
                    self.saw_open = true;
                    self.core.out.text(marker, input.abs(at));
                }
                Flow::Continue(at + marker.len())
            }
            Found::Partial { at } => {
                self.core.out.text(&data[i..at], input.abs(i));
                Flow::Wait(at)
            }
            Found::None => {
                self.core.out.text(&data[i..], input.abs(i));
                Flow::Continue(data.len())
            }
        }
    }

    fn thinking(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        match input.settle(find_marker(data, i, &[THINK_CLOSE])) {
            Found::Marker { at, .. } => {
                self.core.out.thinking(&data[i..at], input.abs(i));
                self.core.out.end_thinking(true);
                self.state = State::Text;
                Flow::Continue(at + THINK_CLOSE.len())
            }
            Found::Partial { at } => {
                self.core.out.thinking(&data[i..at], input.abs(i));
                Flow::Wait(at)
            }
            Found::None => {
                self.core.out.thinking(&data[i..], input.abs(i));
                Flow::Continue(data.len())
            }
        }
    }

    /// Blanks after `<tool_call>` are held; the first other byte decides whether a call opens.
    fn opening(&mut self, input: &Input, mut i: usize) -> Flow {
        let data = input.data;
        let State::Opening { held, .. } = &mut self.state else { return Flow::Wait(i) };
        let blanks = data[i..].iter().take_while(|b| is_space(**b)).count();
        held.extend_from_slice(&data[i..i + blanks]);
        i += blanks;
        if i == data.len() {
            return Flow::Continue(i);
        }
        let payload = match self.dialect {
            Dialect::Qwen3Coder => match input.settle(match_at(data, i, &[FUNCTION_OPEN])) {
                Found::Partial { .. } => return Flow::Wait(i),
                Found::Marker { .. } => {
                    held.extend_from_slice(FUNCTION_OPEN);
                    i += FUNCTION_OPEN.len();
                    Some(Payload::Element(ElementCall::new(TOOL_CALL_CLOSE)))
                }
                Found::None => None,
            },
            _ => (data[i] == b'{').then(|| Payload::Json(JsonCall::new(HERMES_SHAPE))),
        };
        let State::Opening { start, start_chars, held } = std::mem::replace(&mut self.state, State::Text) else {
            return Flow::Wait(i);
        };
        match payload {
            Some(payload) => {
                let call = self.core.open_call(start, start_chars, held, payload);
                self.state = State::Call(call);
            }
            // Not a call: the marker and blanks are text, and reading goes on from here.
            None => self.core.out.text(&held, start),
        }
        Flow::Continue(i)
    }

    fn call(&mut self, input: &Input, mut i: usize) -> Flow {
        let data = input.data;
        let State::Call(call) = &mut self.state else { return Flow::Wait(i) };
        match &mut call.payload {
            Payload::Json(json) => loop {
                let stop = json.scan(data, i);
                call.raw.extend_from_slice(&data[i..stop]);
                i = stop;
                if i == data.len() {
                    self.core.progress(call);
                    return Flow::Continue(i);
                }
                match input.settle(match_at(data, i, &[TOOL_CALL_CLOSE])) {
                    Found::Marker { .. } => {
                        call.raw.extend_from_slice(TOOL_CALL_CLOSE);
                        return self.end_call(i + TOOL_CALL_CLOSE.len());
                    }
                    Found::Partial { .. } => {
                        self.core.progress(call);
                        return Flow::Wait(i);
                    }
                    Found::None => {
                        json.push_byte(b'<');
                        call.raw.push(b'<');
                        i += 1;
                    }
                }
            },
            Payload::Element(element) => match element.scan(data, i, self.core.tools.as_deref()) {
                Step::Wait(stop) => {
                    call.raw.extend_from_slice(&data[i..stop]);
                    self.core.progress(call);
                    if input.at_end {
                        // Nothing more will come: what was held back is part of the cut-off call.
                        call.raw.extend_from_slice(&data[stop..]);
                        return Flow::Continue(data.len());
                    }
                    Flow::Wait(stop)
                }
                Step::End(stop) => {
                    call.raw.extend_from_slice(&data[i..stop]);
                    self.end_call(stop)
                }
            },
            // Pythonic calls are never opened here.
            Payload::Pythonic(_) => Flow::Wait(i),
        }
    }

    fn end_call(&mut self, next: usize) -> Flow {
        if let State::Call(call) = std::mem::replace(&mut self.state, State::Text) {
            self.core.end_call(call);
        }
        Flow::Continue(next)
    }

    /// The end of the text: closes what is open.
    pub fn finish(&mut self) {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => {}
            State::Thinking => self.core.out.end_thinking(false),
            State::Opening { start, held, .. } => self.core.out.text(&held, start),
            State::Call(call) => self.core.cut_off(call, "a <tool_call>"),
        }
    }
}
