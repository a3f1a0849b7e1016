//! Kimi K3's XTML: elements written with three special tokens, `<|open|>TAG attr="v"…<|sep|>` and
//! `<|close|>TAG<|sep|>`, attribute values escaped with `&amp;` and `&quot;`. A reply is a
//! `think` element (reasoning), a `response` element (the visible text), then a `tools` element
//! of calls:
//!
//! ```text
//! <|open|>call tool="NAME" index="N"<|sep|>
//!   <|open|>argument key="K" type="string|number|boolean|null|object|array"<|sep|>VALUE<|close|>argument<|sep|>…
//! <|close|>call<|sep|>
//! ```
//!
//! or, in place of the arguments, one `<|open|>json type="object"<|sep|>{…}<|close|>json<|sep|>`.
//!
//! - Text outside `response` is visible text too: the `response` and `message` tags and the
//!   `<|end_of_msg|>` token are dropped wherever they stand outside a call and reasoning. A tag that is not
//!   one of these, or that does not end with `<|sep|>` before the next token (or within
//!   [`MAX_TAG`] bytes), is text as written.
//! - Reasoning runs from `<|open|>think<|sep|>` to `<|close|>think<|sep|>`; a closing tag with
//!   nothing open is text. Unless strict, a `response`, `tools` or `call` opening tag in
//!   reasoning ends it.
//! - In `tools`, every `<|open|>call …<|sep|>` opens a call (the tokens cannot occur in prose);
//!   unless strict, a call with the `tools` tag left out opens one too. A `string` value is its
//!   raw text up to `<|close|>argument<|sep|>` (nothing else ends it), streamed as it arrives;
//!   another type's value is JSON. The tool schema (`tools=`) types a value as in qwen3_coder;
//!   a `json` element's object is written out when its closing tag is read. A call cut off by
//!   the end of the text is an `unclosed_tool` issue with its raw text.

use memchr::memchr;

use super::driver::{Core, Flow, Input, OpenCall, Payload, StateMachine};
use super::element_call::{attributes, open_parameter, value_until, Step};
use super::reading::{read_until, ThinkingTags};
use crate::parse::call::{parse_json, IssueKind};
use crate::parse::json_text;
use crate::parse::scan::{find_marker, is_space, match_at, Found};
use crate::parse::schema::{typed_value_into, ParamType, Tools};
use jiter::JsonValue;

const OPEN: &[u8] = b"<|open|>";
const CLOSE: &[u8] = b"<|close|>";
const SEP: &[u8] = b"<|sep|>";
const END_OF_MESSAGE: &[u8] = b"<|end_of_msg|>";
const ARGUMENT_CLOSE: &[u8] = b"<|close|>argument<|sep|>";
const JSON_CLOSE: &[u8] = b"<|close|>json<|sep|>";
const CALL_CLOSE: &[u8] = b"<|close|>call<|sep|>";
/// The longest tag read outside a call, from its first token to `<|sep|>` (longer: text).
pub(crate) const MAX_TAG: usize = 4096;

/// Where a tag was read: the state reading goes back to if it is not one that counts there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Text,
    Thinking,
    Tools,
}

#[derive(Clone, Debug)]
enum State {
    At(Place),
    /// After `<|open|>` or `<|close|>`: the tag up to `<|sep|>`; `held` holds it from its token.
    Tag { place: Place, close: bool, start: (usize, usize), held: Vec<u8> },
    Call(Box<OpenCall>),
}

#[derive(Clone, Debug)]
pub(crate) struct XtmlMachine {
    core: Core,
    state: State,
    tags: ThinkingTags,
    strict: bool,
}

impl XtmlMachine {
    pub fn new(mut core: Core, start_in_thinking: bool, strict: bool) -> Self {
        let mut tags = ThinkingTags::default();
        let place = if start_in_thinking {
            tags.open(&mut core);
            Place::Thinking
        } else {
            Place::Text
        };
        Self { core, state: State::At(place), tags, strict }
    }

    /// Text, reasoning or the space between calls, up to the next token.
    fn read(&mut self, input: &mut Input, i: usize, place: Place) -> Flow {
        // In reasoning the end-of-message token is reasoning text: a run of it cannot have a gap.
        let tokens: &[&[u8]] = if place == Place::Thinking { &[OPEN, CLOSE] } else { &[OPEN, CLOSE, END_OF_MESSAGE] };
        let (at, which) = match read_until(&mut self.core, input, i, tokens, place == Place::Thinking) {
            Ok(found) => found,
            Err(flow) => return flow,
        };
        if which == 2 {
            self.core.out.end_text();
            return Flow::Continue(at + END_OF_MESSAGE.len());
        }
        let token = if which == 0 { OPEN } else { CLOSE };
        self.state = State::Tag { place, close: which == 1, start: input.at(at), held: token.to_vec() };
        Flow::Continue(at + token.len())
    }

    fn tag(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let State::Tag { held, .. } = &mut self.state else { return Flow::Wait(i) };
        let found = input.settle(find_marker(data, i, &[SEP, OPEN, CLOSE, END_OF_MESSAGE]));
        let until = match found {
            Found::Marker { at, .. } | Found::Partial { at } => at,
            Found::None => data.len(),
        };
        held.extend_from_slice(&data[i..until]);
        if held.len() > MAX_TAG {
            self.not_a_tag();
            return Flow::Continue(until);
        }
        match found {
            Found::Marker { at, which: 0 } => {
                held.extend_from_slice(SEP);
                self.tag_read();
                Flow::Continue(at + SEP.len())
            }
            Found::Marker { at, .. } => {
                self.not_a_tag();
                Flow::Continue(at)
            }
            Found::Partial { at } => Flow::Wait(at),
            Found::None => Flow::Continue(data.len()),
        }
    }

    /// The held bytes are text (or reasoning) where they stand.
    fn not_a_tag(&mut self) {
        let State::Tag { place, start, held, .. } = std::mem::replace(&mut self.state, State::At(Place::Text)) else { return };
        self.keep(place, &held, start.0);
    }

    fn keep(&mut self, place: Place, bytes: &[u8], at: usize) {
        if place == Place::Thinking {
            self.core.out.thinking(bytes, at);
        } else {
            self.core.out.text(bytes, at);
        }
        self.state = State::At(place);
    }

    /// A whole tag: what it does where it stands.
    fn tag_read(&mut self) {
        let State::Tag { place, close, start, held } = std::mem::replace(&mut self.state, State::At(Place::Text)) else { return };
        let token = if close { CLOSE.len() } else { OPEN.len() };
        let body = held[token..held.len() - SEP.len()].trim_ascii();
        let name_end = body.iter().position(|b| is_space(*b)).unwrap_or(body.len());
        let (name, attrs) = body.split_at(name_end);
        let lenient = !self.strict;
        let mut place = place;
        if place == Place::Thinking {
            match (close, name) {
                (true, b"think") => return self.core.out.end_thinking(true),
                (false, b"response" | b"tools" | b"call") if lenient => {
                    self.core.out.end_thinking(true);
                    place = Place::Text;
                }
                _ => return self.keep(place, &held, start.0),
            }
        }
        match (place, close, name) {
            (Place::Text, false, b"think") => {
                self.tags.open(&mut self.core);
                self.state = State::At(Place::Thinking);
            }
            (Place::Text, true, b"think") => self.tags.stray_close(&mut self.core, &held, start.0),
            (Place::Text | Place::Tools, false, b"tools") => {
                self.core.out.end_text();
                self.state = State::At(Place::Tools);
            }
            (Place::Tools, false, b"call") => self.open_call(start, held.clone(), attrs),
            // The tools tag left out.
            (Place::Text, false, b"call") if lenient => self.open_call(start, held.clone(), attrs),
            // The reply's frame: dropped (a text run cannot span it), and what follows is text.
            (Place::Tools, true, b"tools") | (_, _, b"response" | b"message") => self.core.out.end_text(),
            _ => self.keep(place, &held, start.0),
        }
    }

    fn open_call(&mut self, (start, start_chars): (usize, usize), held: Vec<u8>, attrs: &[u8]) {
        let name = attributes(attrs)
            .and_then(|attrs| attrs.into_iter().find(|(key, _)| *key == b"tool"))
            .and_then(|(_, name)| String::from_utf8(unescaped(name)).ok())
            .filter(|name| !name.trim().is_empty());
        let call = self.core.open_call(start, start_chars, held, Payload::Xtml(XtmlCall::new(name)));
        self.state = State::Call(Box::new(call));
    }

    fn call(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let State::Call(call) = &mut self.state else { return Flow::Wait(i) };
        let Payload::Xtml(xtml) = &mut call.payload else { return Flow::Wait(i) };
        match xtml.scan(data, i, self.core.tools.as_deref()) {
            Step::Wait(stop) => self.core.call_waits(call, input, i, stop),
            Step::End(stop) => {
                call.raw.extend_from_slice(&data[i..stop]);
                if let State::Call(call) = std::mem::replace(&mut self.state, State::At(Place::Tools)) {
                    self.core.end_call(*call);
                }
                Flow::Continue(stop)
            }
        }
    }
}

impl StateMachine for XtmlMachine {
    #[inline(always)]
    fn step(&mut self, input: &mut Input, i: usize) -> Flow {
        match self.state {
            State::At(place) => self.read(input, i, place),
            State::Tag { .. } => self.tag(input, i),
            State::Call(_) => self.call(input, i),
        }
    }

    fn finish(&mut self) {
        if let State::Tag { .. } = self.state {
            self.not_a_tag();
        }
        match std::mem::replace(&mut self.state, State::At(Place::Text)) {
            State::At(Place::Thinking) => self.core.out.end_thinking(false),
            State::Call(call) => self.core.cut_off(*call, "a tool call"),
            State::At(_) | State::Tag { .. } => {}
        }
    }

    fn saw_stray_close(&self) -> bool {
        self.tags.saw_stray_close
    }

    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
}

/// An attribute value as written by the template: `&quot;` and `&amp;` read back.
fn unescaped(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while let Some(k) = memchr(b'&', &value[i..]) {
        out.extend_from_slice(&value[i..i + k]);
        i += k;
        let rest = &value[i..];
        let (byte, len) = if rest.starts_with(b"&quot;") {
            (b'"', 6)
        } else if rest.starts_with(b"&amp;") {
            (b'&', 5)
        } else {
            (b'&', 1)
        };
        out.push(byte);
        i += len;
    }
    out.extend_from_slice(&value[i..]);
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CallState {
    /// Between elements (after the call's tag, or after an argument).
    Between,
    /// After `<|open|>` or `<|close|>` in the call: its tag up to `<|sep|>`.
    Tag { close: bool },
    Value,
    /// The json element's text.
    Json,
    /// Malformed: skip to the call's end.
    Bad,
}

/// A call's elements, read as they stream and written out as compact JSON arguments while the
/// values arrive.
#[derive(Clone, Debug)]
pub(crate) struct XtmlCall {
    state: CallState,
    pub name: Option<String>,
    name_ready: bool,
    /// The compact JSON arguments written so far (`{` once the first element opens).
    pub arguments: Vec<u8>,
    params: usize,
    /// The json element was read: only the call's end may follow.
    json_read: bool,
    /// The tag being read.
    held: Vec<u8>,
    key: Vec<u8>,
    value_type: ParamType,
    /// Held text of a value that is converted at its end.
    value: Vec<u8>,
    pub error: Option<String>,
    pub schema_errors: Vec<String>,
}

impl XtmlCall {
    fn new(name: Option<String>) -> Self {
        let mut call = Self {
            state: CallState::Between,
            name_ready: name.is_some(),
            name,
            arguments: Vec::new(),
            params: 0,
            json_read: false,
            held: Vec::new(),
            key: Vec::new(),
            value_type: ParamType::Text,
            value: Vec::new(),
            error: None,
            schema_errors: Vec::new(),
        };
        if call.name.is_none() {
            call.fail("the call has no tool=\"…\" attribute");
        }
        call
    }

    pub fn take_name(&mut self) -> Option<&str> {
        if !std::mem::take(&mut self.name_ready) {
            return None;
        }
        self.name.as_deref()
    }

    /// The issue kind of a malformed call.
    pub fn issue_kind(&self) -> IssueKind {
        if self.name.is_none() { IssueKind::MissingField } else { IssueKind::InvalidXml }
    }

    fn fail(&mut self, why: &str) {
        self.error.get_or_insert_with(|| why.to_string());
        self.state = CallState::Bad;
    }

    /// Reads `data[from..]` as far as it can; `<|close|>call<|sep|>` ends the call.
    pub fn scan(&mut self, data: &[u8], from: usize, tools: Option<&Tools>) -> Step {
        let mut i = from;
        while i < data.len() {
            match self.state {
                CallState::Between => {
                    if is_space(data[i]) {
                        i += 1;
                        continue;
                    }
                    match match_at(data, i, &[OPEN, CLOSE]) {
                        Found::Partial { at } => return Step::Wait(at),
                        Found::Marker { which, .. } => {
                            self.held.clear();
                            self.state = CallState::Tag { close: which == 1 };
                            i += if which == 0 { OPEN.len() } else { CLOSE.len() };
                        }
                        Found::None => self.fail("expected an argument, a json element or the end of the call"),
                    }
                }
                CallState::Tag { close } => match find_marker(data, i, &[SEP, OPEN, CLOSE]) {
                    Found::Marker { at, which: 0 } => {
                        self.held.extend_from_slice(&data[i..at]);
                        i = at + SEP.len();
                        if self.element(close, tools) {
                            return Step::End(i);
                        }
                    }
                    Found::Marker { at, .. } => {
                        i = at;
                        self.fail("a tag does not end with <|sep|>");
                    }
                    Found::Partial { at } => {
                        self.held.extend_from_slice(&data[i..at]);
                        return Step::Wait(at);
                    }
                    Found::None => {
                        self.held.extend_from_slice(&data[i..]);
                        return Step::Wait(data.len());
                    }
                },
                CallState::Value | CallState::Json => {
                    let close = if self.state == CallState::Value { ARGUMENT_CLOSE } else { JSON_CLOSE };
                    match value_until(data, i, close, |text| self.value_text(text)) {
                        Ok(next) => {
                            i = next;
                            self.end_value();
                        }
                        Err(step) => return step,
                    }
                }
                CallState::Bad => return Step::skip_to(data, i, CALL_CLOSE),
            }
        }
        Step::Wait(i)
    }

    /// A whole element tag in the call; true if it ends the call.
    fn element(&mut self, close: bool, tools: Option<&Tools>) -> bool {
        let body = std::mem::take(&mut self.held);
        let body = body.trim_ascii();
        let name_end = body.iter().position(|b| is_space(*b)).unwrap_or(body.len());
        let (name, attrs) = body.split_at(name_end);
        match (close, name) {
            (true, b"call") => {
                if self.arguments.is_empty() {
                    self.arguments.push(b'{');
                }
                if !self.json_read {
                    self.arguments.push(b'}');
                }
                return true;
            }
            (false, b"argument") if !self.json_read => self.begin_value(attrs, tools),
            (false, b"json") if self.params == 0 && !self.json_read => {
                self.value.clear();
                self.state = CallState::Json;
            }
            (false, b"json" | b"argument") => self.fail("a json element must be the call's only element"),
            _ => self.fail("expected an argument, a json element or the end of the call"),
        }
        false
    }

    fn begin_value(&mut self, attrs: &[u8], tools: Option<&Tools>) {
        let Some(attrs) = attributes(attrs) else { return self.fail("an argument's attributes are malformed") };
        let json = attrs.iter().any(|(k, v)| *k == b"type" && *v != b"string");
        let Some((_, key)) = attrs.into_iter().find(|(k, _)| *k == b"key") else {
            return self.fail("an argument has no key=\"…\" attribute");
        };
        let key = unescaped(key);
        if key.is_empty() {
            return self.fail("an argument's key is empty");
        }
        self.arguments.push(if self.params == 0 { b'{' } else { b',' });
        self.params += 1;
        self.value_type = open_parameter(&mut self.arguments, &key, self.name.as_deref(), tools, json);
        self.key = key;
        self.value.clear();
        self.state = CallState::Value;
    }

    fn value_text(&mut self, piece: &[u8]) {
        if self.state == CallState::Value && self.value_type.is_text() {
            json_text::escape_into(piece, &mut self.arguments);
        } else {
            self.value.extend_from_slice(piece);
        }
    }

    fn end_value(&mut self) {
        if self.state == CallState::Json {
            match parse_json(self.value.trim_ascii()) {
                Ok(object @ JsonValue::Object(_)) => {
                    json_text::value_into(&object, &mut self.arguments);
                    self.json_read = true;
                    self.state = CallState::Between;
                }
                _ => self.fail("the json element is not a JSON object"),
            }
            return;
        }
        if self.value_type.is_text() {
            self.arguments.push(b'"');
        } else if let Err(why) = typed_value_into(&self.value_type, &self.value, &mut self.arguments) {
            let key = String::from_utf8_lossy(&self.key);
            self.schema_errors.push(format!("parameter '{key}' {why}; kept as text"));
        }
        self.state = CallState::Between;
    }
}
