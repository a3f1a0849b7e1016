//! gpt_oss: OpenAI's Harmony format.
//!
//! A reply is a sequence of messages. A message starts with a header (`<|start|>` or
//! `<|channel|>`, then e.g. `assistant<|channel|>commentary to=functions.get_weather
//! <|constrain|>json`) that ends at `<|message|>`; its content ends at `<|end|>`, `<|call|>` or
//! `<|return|>`, at the next header, or at the end of the text (servers strip the final stop
//! token). The header's channel and recipient decide what the content is: a recipient
//! (`to=NAME`) makes it a tool call whose arguments are the JSON object of the content (the
//! name is NAME without a leading `functions.`); else channel `analysis` is reasoning, and
//! every other channel (`final`, a `commentary` preamble) is visible text. Text outside any
//! message is visible text. Harmony's markers are special tokens: they are always structure,
//! except inside a tool call's JSON strings, where they are argument text.
//!
//! A reply whose first non-blank text is `to=` or `<|constrain|>` continues the header the
//! prompt opened (`<|start|>assistant`). A header that ends (`<|end|>`, `<|call|>`,
//! `<|return|>`, `<|start|>`) before any `<|message|>` is still a message: its content is what
//! follows the header's words.

use super::json_call::{JsonCall, JsonShape};
use super::reading::read_until;
use super::driver::{Core, Flow, Input, JsonStep, OpenCall, Payload, StateMachine};
use crate::parse::scan::{find_marker, is_space, match_at, take_run, Found};

/// A Harmony marker: the special token `<|name|>`.
macro_rules! special_token {
    ($name:ident) => {
        concat!("<|", stringify!($name), "|>").as_bytes()
    };
}

const START: &[u8] = special_token!(start);
const CHANNEL: &[u8] = special_token!(channel);
const MESSAGE: &[u8] = special_token!(message);
const END: &[u8] = special_token!(end);
const CALL: &[u8] = special_token!(call);
const RETURN: &[u8] = special_token!(return);
const CONSTRAIN: &[u8] = special_token!(constrain);
/// What ends a header: its `<|message|>`, or (the header had none) what ends a message.
const HEADER_ENDS: &[&[u8]] = &[MESSAGE, END, CALL, RETURN, START];
/// How a reply that continues the prompt's `<|start|>assistant` header starts (after blanks).
const HEADER_STARTS: &[&[u8]] = &[b"to=", CONSTRAIN];
/// What ends a message's content; the first three are part of the message, the others open the next.
const CONTENT_ENDS: &[&[u8]] = &[END, CALL, RETURN, START, CHANNEL];

#[derive(Clone, Debug)]
enum State {
    /// The reply's first blanks: a recipient or constraint after them means it starts inside
    /// the header the prompt opened.
    Begin { held: Vec<u8> },
    /// Outside a message.
    Text,
    Header { start: usize, start_chars: usize, held: Vec<u8> },
    Content { thinking: bool },
    Call(Box<OpenCall>),
}

#[derive(Clone, Debug)]
pub(crate) struct HarmonyMachine {
    pub core: Core,
    state: State,
}

/// The word after `prefix` in a header (up to a blank or `<`).
fn header_word<'h>(header: &'h [u8], prefix: &[u8]) -> Option<&'h [u8]> {
    let at = memchr::memmem::rfind(header, prefix)? + prefix.len();
    let rest = &header[at..];
    let end = rest.iter().position(|b| b.is_ascii_whitespace() || *b == b'<').unwrap_or(rest.len());
    Some(&rest[..end])
}

impl HarmonyMachine {
    pub fn new(core: Core) -> Self {
        Self { core, state: State::Begin { held: Vec::new() } }
    }

    /// The start of the reply: blanks, then `to=` or `<|constrain|>` (the prompt ended with
    /// `<|start|>assistant`, so the reply continues its header) or anything else (text).
    fn begin(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let State::Begin { held } = &mut self.state else { return Flow::Wait(i) };
        let Some(at) = take_run(data, i, held, is_space) else { return Flow::Continue(data.len()) };
        let in_header = match input.settle(match_at(data, at, HEADER_STARTS)) {
            Found::Partial { .. } => return Flow::Wait(at),
            Found::Marker { .. } => true,
            Found::None => false,
        };
        let held = std::mem::take(held);
        if in_header {
            self.state = State::Header { start: 0, start_chars: 0, held };
        } else {
            self.core.out.text(&held, 0);
            self.state = State::Text;
        }
        Flow::Continue(at)
    }

    /// Text outside messages and the content of text and reasoning messages.
    fn content(&mut self, input: &mut Input, i: usize) -> Flow {
        let thinking = matches!(self.state, State::Content { thinking: true });
        let (at, which) = match read_until(&mut self.core, input, i, CONTENT_ENDS, thinking) {
            Ok(found) => found,
            Err(flow) => return flow,
        };
        if thinking {
            self.core.out.end_thinking(true);
        }
        let marker = CONTENT_ENDS[which];
        if marker == START || marker == CHANNEL {
            self.open_header(input, at, marker);
        } else {
            // The marker is left out of the text, so the text run ends here.
            self.core.out.end_text();
            self.state = State::Text;
        }
        Flow::Continue(at + marker.len())
    }

    fn open_header(&mut self, input: &mut Input, at: usize, marker: &[u8]) {
        let (start, start_chars) = input.at(at);
        self.core.out.end_text();
        self.state = State::Header { start, start_chars, held: marker.to_vec() };
    }

    fn header(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let State::Header { held, .. } = &mut self.state else { return Flow::Wait(i) };
        let found = input.settle(find_marker(data, i, HEADER_ENDS));
        let until = match found {
            Found::Marker { at, .. } | Found::Partial { at } => at,
            Found::None => data.len(),
        };
        held.extend_from_slice(&data[i..until]);
        match found {
            Found::Marker { at, which: 0 } => {
                held.extend_from_slice(MESSAGE);
                self.open_message();
                Flow::Continue(at + MESSAGE.len())
            }
            Found::Marker { at, which } => {
                let marker = HEADER_ENDS[which];
                self.message_in_header(input, at, marker);
                Flow::Continue(at + marker.len())
            }
            Found::Partial { at } => Flow::Wait(at),
            Found::None => Flow::Continue(data.len()),
        }
    }

    /// A header ended by `marker` before any `<|message|>`: what follows its words (role,
    /// channel, recipient, constraint) is the message's content, so nothing is lost.
    fn message_in_header(&mut self, input: &mut Input, at: usize, marker: &[u8]) {
        let State::Header { start, held, .. } = &self.state else { return };
        let (start, split) = (*start, content_start(held));
        let content = held[split..].to_vec();
        let opens_next = marker == START;
        if !opens_next {
            let State::Header { held, .. } = &mut self.state else { return };
            held.extend_from_slice(marker);
        }
        self.open_message();
        match &mut self.state {
            State::Call(call) => {
                let Payload::Json(json) = &mut call.payload else { return };
                let arguments = memchr::memchr(b'{', &content).map_or(&content[..], |k| &content[k..]);
                let mut k = 0;
                while k < arguments.len() {
                    k = json.scan(arguments, k);
                    if k < arguments.len() {
                        json.push_byte(arguments[k]);
                        k += 1;
                    }
                }
                let State::Call(call) = std::mem::replace(&mut self.state, State::Text) else { return };
                self.core.end_call(*call);
            }
            State::Content { thinking } => {
                if *thinking {
                    self.core.out.thinking(&content, start + split);
                    self.core.out.end_thinking(true);
                } else {
                    self.core.out.text(&content, start + split);
                    self.core.out.end_text();
                }
                self.state = State::Text;
            }
            _ => {}
        }
        if opens_next {
            self.open_header(input, at, marker);
        }
    }

    /// The header is complete: what its channel and recipient make of the content.
    fn open_message(&mut self) {
        let State::Header { start, start_chars, held } = std::mem::replace(&mut self.state, State::Text) else {
            return;
        };
        // `to=` after a blank or a marker, or first in a reply that continues the header.
        let at_start = held.trim_ascii_start();
        let first = at_start.starts_with(b"to=").then(|| header_word(at_start, b"to=")).flatten();
        if let Some(recipient) = header_word(&held, b" to=").or_else(|| header_word(&held, b">to=")).or(first) {
            let name = recipient.strip_prefix(b"functions.").unwrap_or(recipient);
            let name = std::str::from_utf8(name).ok().filter(|n| !n.is_empty()).map(str::to_owned);
            let mut call =
                self.core.open_call(start, start_chars, held, Payload::Json(JsonCall::new(JsonShape::Arguments)));
            if let Some(name) = name {
                self.core.start_call(&mut call, &name);
            }
            self.state = State::Call(Box::new(call));
            return;
        }
        let thinking = header_word(&held, CHANNEL) == Some(b"analysis");
        if thinking {
            self.core.out.begin_thinking();
        }
        self.state = State::Content { thinking };
    }

    fn call(&mut self, input: &mut Input, i: usize) -> Flow {
        let State::Call(call) = &mut self.state else { return Flow::Wait(i) };
        match self.core.read_json_call(call, input, i, CONTENT_ENDS, |_, _| false) {
            JsonStep::Read => Flow::Continue(input.data.len()),
            JsonStep::Wait(at) => Flow::Wait(at),
            JsonStep::End { at, which } => {
                let marker = CONTENT_ENDS[which];
                let State::Call(call) = std::mem::replace(&mut self.state, State::Text) else {
                    return Flow::Wait(at);
                };
                let mut call = *call;
                if marker == START || marker == CHANNEL {
                    self.core.end_call(call);
                    self.open_header(input, at, marker);
                } else {
                    call.raw.extend_from_slice(marker);
                    self.core.end_call(call);
                }
                Flow::Continue(at + marker.len())
            }
        }
    }
}

/// Where a header's words (`<|start|>ROLE`, `<|channel|>NAME`, `to=NAME`, `<|constrain|>TYPE`)
/// end in `header`.
fn content_start(header: &[u8]) -> usize {
    let mut at = 0;
    loop {
        let word_at = at + header[at..].iter().take_while(|b| is_space(**b)).count();
        let rest = &header[word_at..];
        let after_marker = [START, CHANNEL, CONSTRAIN].iter().find(|m| rest.starts_with(m)).map(|m| m.len());
        let word_start = match after_marker {
            Some(len) => word_at + len,
            None if rest.starts_with(b"to=") => word_at,
            None => return word_at,
        };
        let word = header[word_start..].iter().take_while(|b| !is_space(**b) && **b != b'<').count();
        at = word_start + word;
    }
}

impl StateMachine for HarmonyMachine {
    #[inline(always)]
    fn step(&mut self, input: &mut Input, i: usize) -> Flow {
        match self.state {
            State::Begin { .. } => self.begin(input, i),
            State::Text | State::Content { .. } => self.content(input, i),
            State::Header { .. } => self.header(input, i),
            State::Call(_) => self.call(input, i),
        }
    }

    /// The end of the text ends the open message (its stop token is usually stripped).
    fn finish(&mut self) {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Begin { held } => self.core.out.text(&held, 0),
            State::Text | State::Content { thinking: false } => {}
            State::Content { thinking: true } => self.core.out.end_thinking(false),
            // A header without its message: nothing to classify; its text is kept as text.
            State::Header { start, held, .. } => self.core.out.text(&held, start),
            State::Call(call) => {
                let complete = matches!(&call.payload, Payload::Json(json) if json.closed);
                if complete {
                    self.core.end_call(*call);
                } else {
                    self.core.cut_off(*call, "a tool call's arguments");
                }
            }
        }
    }

    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
}
