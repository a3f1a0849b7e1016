//! The marker dialects: text with reasoning blocks and tool calls between fixed markers. One
//! machine reads them all from a [`Syntax`]: the call markers, the payload form, the reasoning
//! markers and, for the special-token dialects, the section that holds the calls.
//!
//! - `<tool_call>` dialects (hermes, qwen3_coder, glm45, custom): the call marker opens a call
//!   only when the payload starts right after it (blanks allowed): a `{` for JSON, `<function=`
//!   for qwen3_coder, a name then `<arg_key>` or the end marker for glm45; otherwise the marker
//!   is text. A JSON call ends at the first end marker outside a JSON string; an element call at
//!   the first end marker outside a value.
//! - Special-token dialects (deepseek_v3, deepseek_v31, kimi_k2, minimax_m2, hy3, deepseek_v32,
//!   deepseek_v4, step3): calls open only inside the calls section; a call is a header up to a
//!   separator, then JSON arguments up to the call's end token (minimax_m2, hy3, step3 and the
//!   DSML dialects: an element call up to its end token). Their tokens cannot occur in prose, so a
//!   call marker in the section always opens a call (a malformed one is reported with its raw
//!   text).
//! - Reasoning runs from an opening to its closing marker; a closing marker with nothing open is
//!   text. Unless strict, a call (or section) opener in reasoning that opens a call ends the
//!   reasoning, and the next closer with nothing open is then that reasoning's closer (dropped).
//! - qwen3_coder, unless strict: `<function=NAME>` with no `<tool_call>` opens a call when
//!   `<parameter=` or `</function>` follows; the call may end at `</function>`.

use std::sync::Arc;

use super::gemma_call::GemmaCall;
use super::element_call::{ElementCall, ElementForm, Step, ARG_KEY_OPEN, FUNCTION_CLOSE, FUNCTION_OPEN, PARAMETER_OPEN};
use super::json_call::{JsonCall, JsonShape};
use super::syntax::{Form, HeaderKind, Syntax};
use super::reading::{read_until, ThinkingTags};
use super::driver::{Core, Flow, Input, JsonStep, OpenCall, Payload, StateMachine};
use crate::parse::scan::{find_marker, is_space, match_at, take_run, Found};

const FENCE: u8 = b'`';
/// What follows a Gemma call marker (blanks allowed before it) for a call to open.
const GEMMA_CALL: &[u8] = b"call:";
/// The longest name read after a `<function=` with no `<tool_call>` (longer: text).
const MAX_BARE_NAME: usize = 256;

#[derive(Clone, Debug)]
enum State {
    Text,
    /// Reasoning opened by pair `pair` (None: the reply started inside it; any closer ends it).
    Thinking { pair: Option<usize> },
    /// Inside the calls section, between calls.
    Section,
    /// After the call marker of a `<tool_call>` dialect: held until the payload's start decides.
    /// `thinking`: the marker was read in reasoning opened by this pair (see `Thinking`), which
    /// a call ends and goes on otherwise. `bare`: qwen3_coder's `<function=` with no `<tool_call>`.
    Opening { start: usize, start_chars: usize, held: Vec<u8>, name: Vec<u8>, thinking: Option<Option<usize>>, bare: bool, named: bool },
    /// A special-token call's header, up to the separator (and for deepseek_v3 the name line).
    Header { call: Box<OpenCall>, header: Vec<u8>, name: Option<Vec<u8>> },
    Call(Box<OpenCall>),
}

#[derive(Clone, Debug)]
pub(crate) struct TaggedMachine {
    pub core: Core,
    syntax: Arc<Syntax>,
    state: State,
    tags: ThinkingTags,
    /// What text is searched for: the syntax's markers, then (qwen3_coder, not strict) `<function=`.
    text_markers: Vec<Vec<u8>>,
    /// What ends reasoning, by the pair that opened it (index 0: the reply started inside it):
    /// its closers, then (not strict) the call or section opener.
    think_stops: Vec<Vec<Vec<u8>>>,
    /// A call ended the reasoning it was written in: the next closer with nothing open is that
    /// reasoning's closer, not text.
    call_ended_thinking: bool,
}

impl TaggedMachine {
    pub fn new(mut core: Core, syntax: Arc<Syntax>, start_in_thinking: bool, strict: bool) -> Self {
        let mut tags = ThinkingTags::default();
        let state = if start_in_thinking && syntax.think_opens > 0 {
            tags.open(&mut core);
            State::Thinking { pair: None }
        } else {
            State::Text
        };
        let mut text_markers = syntax.text_markers.clone();
        if !strict && syntax.form == Form::Element(ElementForm::Qwen3Coder) {
            text_markers.push(FUNCTION_OPEN.to_vec());
        }
        let opener = (!strict).then(|| syntax.text_markers[0].clone());
        let stops = |closes: &[Vec<u8>]| closes.iter().cloned().chain(opener.clone()).collect::<Vec<_>>();
        let mut think_stops = vec![stops(&syntax.think_closes)];
        think_stops.extend(syntax.think_closes.iter().map(|close| stops(std::slice::from_ref(close))));
        Self { core, syntax, state, tags, text_markers, think_stops, call_ended_thinking: false }
    }

    fn text(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        // A borrow, not a clone: no atomic count per step.
        let syntax = &self.syntax;
        match input.settle(find_marker(data, i, &self.text_markers)) {
            Found::Marker { at, which } => {
                self.core.out.text(&data[i..at], input.abs(i));
                let marker = &self.text_markers[which];
                let bare = which == syntax.text_markers.len();
                if which == 0 && syntax.section.is_some() {
                    self.core.out.end_text();
                    self.state = State::Section;
                } else if which == 0 || bare {
                    let (start, start_chars) = input.at(at);
                    let held = marker.clone();
                    self.state = State::Opening { start, start_chars, held, name: Vec::new(), thinking: None, bare, named: false };
                } else if syntax.dropped.is_some() && which + 1 == syntax.text_markers.len() {
                    // The stop token after calls (gemma4's `<|tool_response>`): dropped.
                    self.core.out.end_text();
                } else if which <= syntax.think_opens {
                    self.call_ended_thinking = false;
                    self.tags.open(&mut self.core);
                    self.state = State::Thinking { pair: Some(which - 1) };
                } else if std::mem::take(&mut self.call_ended_thinking) {
                    self.core.out.end_text();
                } else {
                    self.tags.stray_close(&mut self.core, marker, input.abs(at));
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

    /// Reasoning, up to its closer or (not strict) a call opener.
    fn thinking(&mut self, input: &mut Input, i: usize) -> Flow {
        let State::Thinking { pair } = self.state else { return Flow::Wait(i) };
        let stops = &self.think_stops[pair.map_or(0, |pair| pair + 1)];
        let (at, which) = match read_until(&mut self.core, input, i, stops, true) {
            Ok(found) => found,
            Err(flow) => return flow,
        };
        let marker = &stops[which];
        // The opener, when reasoning looks for it, is the last stop.
        let is_opener = which + 1 == stops.len() && self.think_stops[0].len() > self.syntax.think_closes.len();
        if !is_opener {
            self.core.out.end_thinking(true);
            self.state = State::Text;
        } else if self.syntax.section.is_some() {
            // A section's opener is a special token: the calls begin, the reasoning ends.
            self.core.out.end_thinking(true);
            self.call_ended_thinking = true;
            self.state = State::Section;
        } else {
            let (start, start_chars) = input.at(at);
            let held = marker.clone();
            self.state = State::Opening { start, start_chars, held, name: Vec::new(), thinking: Some(pair), bare: false, named: false };
        }
        Flow::Continue(at + marker.len())
    }

    /// Between the calls of a section: a call marker opens a call, the section's end closes
    /// it, anything else is text.
    fn section(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let syntax = &self.syntax;
        let Some((_, section_close)) = syntax.section else { return Flow::Wait(i) };
        let markers: [&[u8]; 2] = [&syntax.call_open, section_close];
        let found = input.settle(find_marker(data, i, &markers));
        let until = match found {
            Found::Marker { at, .. } | Found::Partial { at } => at,
            Found::None => data.len(),
        };
        self.core.out.text(&data[i..until], input.abs(i));
        match found {
            Found::Marker { at, which: 0 } => {
                let (start, start_chars) = input.at(at);
                let raw = syntax.call_open.clone();
                let next = at + syntax.call_open.len();
                if let Form::Element(form) = syntax.form {
                    // An element form's call marker begins the element call: what follows it
                    // (minimax_m2's quoted name, DSML's attributes, hy3's name) is the form's.
                    let call = self.core.open_call(start, start_chars, raw, Payload::Element(ElementCall::new(form)));
                    self.state = State::Call(Box::new(call));
                    return Flow::Continue(next);
                }
                let payload = Payload::Json(JsonCall::new(JsonShape::Arguments).ending_at_close());
                let call = self.core.open_call(start, start_chars, raw, payload);
                self.state = State::Header { call: Box::new(call), header: Vec::new(), name: None };
                Flow::Continue(next)
            }
            Found::Marker { at, .. } => {
                self.core.out.end_text();
                self.state = State::Text;
                Flow::Continue(at + section_close.len())
            }
            Found::Partial { at } => Flow::Wait(at),
            Found::None => Flow::Continue(data.len()),
        }
    }

    /// A special-token call's header: up to the separator, then (deepseek_v3) the name line.
    fn header(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let syntax = Arc::clone(&self.syntax);
        let Form::Header { sep, kind } = syntax.form else { return Flow::Wait(i) };
        let State::Header { call, header, name } = &mut self.state else { return Flow::Wait(i) };
        let Some(name) = name else {
            let markers: [&[u8]; 2] = [sep, &syntax.call_close];
            let found = input.settle(find_marker(data, i, &markers));
            let until = match found {
                Found::Marker { at, .. } | Found::Partial { at } => at,
                Found::None => data.len(),
            };
            header.extend_from_slice(&data[i..until]);
            call.raw.extend_from_slice(&data[i..until]);
            return match found {
                Found::Marker { at, which: 0 } => {
                    call.raw.extend_from_slice(sep);
                    if kind == HeaderKind::TypedName {
                        *name = Some(Vec::new());
                    } else {
                        let header = std::mem::take(header);
                        self.begin_arguments(header);
                    }
                    Flow::Continue(at + sep.len())
                }
                Found::Marker { at, .. } => {
                    call.raw.extend_from_slice(&syntax.call_close);
                    self.malformed("the call has no separator between its name and its arguments");
                    Flow::Continue(at + syntax.call_close.len())
                }
                Found::Partial { at } => Flow::Wait(at),
                Found::None => Flow::Continue(data.len()),
            };
        };
        // deepseek_v3: the name runs to the line break (or to where the arguments begin).
        let end = data[i..].iter().position(|&b| matches!(b, b'\n' | FENCE | b'{' | b'<'));
        let until = end.map_or(data.len(), |k| i + k);
        name.extend_from_slice(&data[i..until]);
        call.raw.extend_from_slice(&data[i..until]);
        if end.is_none() {
            return Flow::Continue(until);
        }
        let name = std::mem::take(name);
        self.begin_arguments(name);
        Flow::Continue(until)
    }

    /// The header is complete: the call starts with its name (and, for kimi_k2, its id).
    fn begin_arguments(&mut self, header: Vec<u8>) {
        let State::Header { call, .. } = std::mem::replace(&mut self.state, State::Text) else { return };
        let mut call = call;
        let Form::Header { kind, .. } = self.syntax.form else { return };
        let header = String::from_utf8_lossy(header.trim_ascii()).into_owned();
        let (id, name) = match kind {
            HeaderKind::FunctionsId => {
                let name = header.strip_prefix("functions.").unwrap_or(&header);
                let name = match name.rsplit_once(':') {
                    Some((name, index)) if !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => name,
                    _ => name,
                };
                (Some(header.clone()), name.to_owned())
            }
            HeaderKind::Name | HeaderKind::TypedName => (None, header),
        };
        if !name.is_empty() {
            self.core.start_call_as(&mut call, id, &name);
        }
        self.state = State::Call(call);
    }

    /// Ends the open special-token call as malformed.
    fn malformed(&mut self, why: &str) {
        if let State::Header { call, .. } = std::mem::replace(&mut self.state, State::Section) {
            self.core.close(*call, Err((crate::parse::call::IssueKind::WrongFormat, why.to_owned())));
        }
    }

    /// Blanks after the call marker are held; the first other bytes decide whether a call opens.
    fn opening(&mut self, input: &Input, mut i: usize) -> Flow {
        let data = input.data;
        let syntax = Arc::clone(&self.syntax);
        let State::Opening { held, name, bare, named, .. } = &mut self.state else { return Flow::Wait(i) };
        let payload = match syntax.form {
            Form::Element(ElementForm::Qwen3Coder) if *bare => {
                // `<function=NAME>`, blanks, then `<parameter=` or `</function>`.
                if !*named {
                    let end = data[i..].iter().position(|b| matches!(b, b'>' | b'<' | b'\n'));
                    let until = end.map_or(data.len(), |k| i + k);
                    held.extend_from_slice(&data[i..until]);
                    i = until;
                    let long = held.len() > FUNCTION_OPEN.len() + MAX_BARE_NAME;
                    if end.is_none() && !long {
                        return Flow::Continue(i);
                    }
                    if !long && data[i] == b'>' && held.len() > FUNCTION_OPEN.len() {
                        held.push(b'>');
                        i += 1;
                        *named = true;
                    }
                }
                let mut payload = None;
                if *named {
                    let Some(next) = take_run(data, i, held, is_space) else { return Flow::Continue(data.len()) };
                    i = next;
                    match input.settle(match_at(data, i, &[PARAMETER_OPEN, FUNCTION_CLOSE])) {
                        Found::Partial { .. } => return Flow::Wait(i),
                        Found::Marker { .. } => {
                            let mut element = ElementCall::new(ElementForm::Qwen3Coder).without_opener();
                            let tools = self.core.tools.as_deref();
                            // The name and blanks held: read now, as they would have streamed.
                            element.scan(&held[FUNCTION_OPEN.len()..], 0, &syntax.call_close, tools);
                            payload = Some(Payload::Element(element));
                        }
                        Found::None => {}
                    }
                }
                payload
            }
            Form::Element(ElementForm::Glm45) => {
                // Blanks, the name (no blanks or markup in it), blanks, then a key or the end marker.
                while i < data.len() {
                    let b = data[i];
                    let name_done = !name.is_empty() && held.last().is_some_and(|last| is_space(*last));
                    if is_space(b) || (!name_done && is_name_byte(b)) {
                        if !is_space(b) {
                            name.push(b);
                        }
                        held.push(b);
                        i += 1;
                    } else {
                        break;
                    }
                }
                if i == data.len() {
                    return Flow::Continue(i);
                }
                let markers: [&[u8]; 2] = [ARG_KEY_OPEN, &syntax.call_close];
                match input.settle(match_at(data, i, &markers)) {
                    Found::Partial { .. } => return Flow::Wait(i),
                    Found::Marker { .. } if !name.is_empty() => std::str::from_utf8(name)
                        .ok()
                        .filter(|n| !n.is_empty())
                        .map(|n| Payload::Element(ElementCall::named(ElementForm::Glm45, n.to_owned()))),
                    _ => None,
                }
            }
            _ => {
                let Some(next) = take_run(data, i, held, is_space) else { return Flow::Continue(data.len()) };
                i = next;
                match &syntax.form {
                    Form::Gemma { delimiter } => match input.settle(match_at(data, i, &[GEMMA_CALL])) {
                        Found::Partial { .. } => return Flow::Wait(i),
                        Found::Marker { .. } => {
                            held.extend_from_slice(GEMMA_CALL);
                            i += GEMMA_CALL.len();
                            Some(Payload::Gemma(GemmaCall::new(delimiter)))
                        }
                        Found::None => None,
                    },
                    Form::Element(ElementForm::Qwen3Coder) => match input.settle(match_at(data, i, &[FUNCTION_OPEN])) {
                        Found::Partial { .. } => return Flow::Wait(i),
                        Found::Marker { .. } => {
                            held.extend_from_slice(FUNCTION_OPEN);
                            i += FUNCTION_OPEN.len();
                            Some(Payload::Element(ElementCall::new(ElementForm::Qwen3Coder)))
                        }
                        Found::None => None,
                    },
                    Form::Json(shape) => (data[i] == b'{')
                        .then(|| Payload::Json(JsonCall::new(shape.clone()).stopping_at(syntax.call_close[0]))),
                    _ => None,
                }
            }
        };
        let State::Opening { start, start_chars, held, thinking, .. } = std::mem::replace(&mut self.state, State::Text)
        else {
            return Flow::Wait(i);
        };
        match (payload, thinking) {
            (Some(payload), thinking) => {
                if thinking.is_some() {
                    // The call ends the reasoning it was written in.
                    self.core.out.end_thinking(true);
                    self.call_ended_thinking = true;
                }
                let call = self.core.open_call(start, start_chars, held, payload);
                self.state = State::Call(Box::new(call));
            }
            // Not a call: the marker and what was held are text (or reasoning), and reading
            // goes on from here.
            (None, None) => self.core.out.text(&held, start),
            (None, Some(pair)) => {
                self.core.out.thinking(&held, start);
                self.state = State::Thinking { pair };
            }
        }
        Flow::Continue(i)
    }

    fn call(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let syntax = &self.syntax;
        let close: &[u8] = &syntax.call_close;
        let fenced = matches!(syntax.form, Form::Header { kind: HeaderKind::TypedName, .. });
        let State::Call(call) = &mut self.state else { return Flow::Wait(i) };
        match &mut call.payload {
            Payload::Json(_) => {
                // deepseek_v3: the line break and ```json line before the JSON, the ``` after it.
                let fence = |json: &JsonCall, b: u8| {
                    fenced && ((json.closed && b == FENCE) || (json.payload.is_empty() && is_fence_line_byte(b)))
                };
                match self.core.read_json_call(call, input, i, &[close], fence) {
                    JsonStep::Read => Flow::Continue(data.len()),
                    JsonStep::Wait(at) => Flow::Wait(at),
                    JsonStep::End { at, .. } => {
                        call.raw.extend_from_slice(close);
                        let next = at + close.len();
                        self.end_call(next)
                    }
                }
            }
            Payload::Element(element) => match element.scan(data, i, close, self.core.tools.as_deref()) {
                Step::Wait(stop) if input.at_end && element.is_complete() => {
                    // A call without `<tool_call>` is complete at `</function>`: what was held
                    // after it is text.
                    call.raw.extend_from_slice(&data[i..stop]);
                    self.end_call(stop)
                }
                Step::Wait(stop) => self.core.call_waits(call, input, i, stop),
                Step::End(stop) => {
                    call.raw.extend_from_slice(&data[i..stop]);
                    self.end_call(stop)
                }
            },
            Payload::Gemma(gemma) => match gemma.scan(data, i, close, self.core.tools.as_deref()) {
                Step::Wait(stop) => self.core.call_waits(call, input, i, stop),
                Step::End(stop) => {
                    call.raw.extend_from_slice(&data[i..stop]);
                    self.end_call(stop)
                }
            },
            // Pythonic and XTML calls are never opened here.
            Payload::Pythonic(_) | Payload::Xtml(_) => Flow::Wait(i),
        }
    }

    fn end_call(&mut self, next: usize) -> Flow {
        let after = if self.syntax.section.is_some() { State::Section } else { State::Text };
        if let State::Call(call) = std::mem::replace(&mut self.state, after) {
            self.core.end_call(*call);
        }
        Flow::Continue(next)
    }
}

impl StateMachine for TaggedMachine {
    #[inline(always)]
    fn step(&mut self, input: &mut Input, i: usize) -> Flow {
        match self.state {
            State::Text => self.text(input, i),
            State::Thinking { .. } => self.thinking(input, i),
            State::Section => self.section(input, i),
            State::Opening { .. } => self.opening(input, i),
            State::Header { .. } => self.header(input, i),
            State::Call(_) => self.call(input, i),
        }
    }

    /// The end of the text: closes what is open.
    fn finish(&mut self) {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text | State::Section => {}
            State::Thinking { .. } => self.core.out.end_thinking(false),
            State::Opening { start, held, thinking: None, .. } => self.core.out.text(&held, start),
            State::Opening { start, held, thinking: Some(_), .. } => {
                self.core.out.thinking(&held, start);
                self.core.out.end_thinking(false);
            }
            State::Call(call) if matches!(&call.payload, Payload::Element(element) if element.is_complete()) => {
                self.core.end_call(*call)
            }
            State::Header { call, .. } | State::Call(call) => self.core.cut_off(*call, "a tool call"),
        }
    }

    fn saw_stray_close(&self) -> bool {
        self.tags.saw_stray_close
    }

    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
}

/// A byte of a glm45 function name: anything but blanks and markup.
fn is_name_byte(b: u8) -> bool {
    !is_space(b) && !matches!(b, b'<' | b'>' | b'{' | b'}' | b'"' | b'\'')
}

/// A byte of the line break and ```json fence line before deepseek_v3's arguments.
fn is_fence_line_byte(b: u8) -> bool {
    is_space(b) || b == FENCE || b.is_ascii_alphanumeric()
}
