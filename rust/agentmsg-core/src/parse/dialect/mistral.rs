//! mistral: `[TOOL_CALLS]` calls and `[THINK]` reasoning (Mistral 7B v0.3, Mixtral, Mistral
//! Small, Devstral, Magistral).
//!
//! `[TOOL_CALLS]` (blanks allowed after it) opens calls in one of two forms, chosen by the next
//! byte:
//! - `[`: a JSON list of `{"name", "arguments"}` objects (tokenizers before v11). The list's
//!   brackets and commas are structure; each object is one call, ending where it closes. A byte
//!   that is not `,` or `]` after an object ends the list there (the objects read are calls,
//!   the rest is text).
//! - a name character (`A-Z a-z 0-9 _ - .`): `NAME[ARGS]{…}`, `NAME[CALL_ID]ID[ARGS]{…}` or
//!   `NAME{…}` (v11+ tokenizers; the last is how they decode with special tokens skipped). The
//!   call ends where its arguments object closes; the next call repeats `[TOOL_CALLS]`.
//!
//! Anything else after `[TOOL_CALLS]` (or a name followed by anything else, or an empty list)
//! is not a call: the marker and what was read are text. `[THINK]` opens reasoning up to
//! `[/THINK]`; a `[/THINK]` with nothing open is text.
//!
//! magistral is this machine with `<think>…</think>` reasoning too (each block ends at its own
//! pair's closer). cohere (Command R7B, Command A) is this machine with other markers:
//! `<|START_ACTION|>` opens a JSON list of `{"tool_call_id", "tool_name", "parameters"}` objects
//! (no named form), `<|START_THINKING|>`…`<|END_THINKING|>` is reasoning, and `<|END_ACTION|>`,
//! `<|START_RESPONSE|>` and `<|END_RESPONSE|>` (R7B's answer), `<|START_TEXT|>` and `<|END_TEXT|>`
//! (Command A's) are dropped where they stand in text.

use std::sync::Arc;

use jiter::JsonValue;

use super::held::Held;
use super::json_call::{JsonCall, JsonShape};
use super::reading::{read_thinking, read_until, ThinkingTags};
use super::driver::{Core, Flow, Input, OpenCall, Payload, StateMachine};
use crate::parse::call::IssueKind;
use crate::parse::scan::{is_space, match_at, run_end, take_run, Found};

const TOOL_CALLS: &[u8] = b"[TOOL_CALLS]";
const ARGS: &[u8] = b"[ARGS]";
const CALL_ID: &[u8] = b"[CALL_ID]";
const THINK_OPEN: &[u8] = b"[THINK]";
const THINK_CLOSE: &[u8] = b"[/THINK]";

/// The markers and keys of a `[TOOL_CALLS]`-like dialect.
#[derive(Clone, Debug)]
pub(crate) struct ListSyntax {
    /// What text is searched for: the call opener, each reasoning pair's opener, their closers
    /// in the same order, then markers that are dropped.
    markers: &'static [&'static [u8]],
    /// How many reasoning pairs `markers` holds.
    think_pairs: usize,
    name_key: &'static str,
    arguments_key: &'static str,
    /// Whether `NAME[ARGS]{…}` calls are read (mistral's v11+ form).
    named: bool,
}

impl ListSyntax {
    /// The reasoning closers, in their pairs' order.
    fn think_closes(&self) -> &'static [&'static [u8]] {
        &self.markers[1 + self.think_pairs..1 + 2 * self.think_pairs]
    }
}

pub(crate) const MISTRAL: ListSyntax = ListSyntax {
    markers: &[TOOL_CALLS, THINK_OPEN, THINK_CLOSE],
    think_pairs: 1,
    name_key: "name",
    arguments_key: "arguments",
    named: true,
};
/// mistral's markers and `<think>` (Magistral Small 2506, whose `<think>` is not a special
/// token; 2507+ writes `[THINK]`).
pub(crate) const MAGISTRAL: ListSyntax = ListSyntax {
    markers: &[TOOL_CALLS, THINK_OPEN, b"<think>", THINK_CLOSE, b"</think>"],
    think_pairs: 2,
    ..MISTRAL
};
pub(crate) const COHERE: ListSyntax = ListSyntax {
    markers: &[
        b"<|START_ACTION|>",
        b"<|START_THINKING|>",
        b"<|END_THINKING|>",
        b"<|END_ACTION|>",
        b"<|START_RESPONSE|>",
        b"<|END_RESPONSE|>",
        b"<|START_TEXT|>",
        b"<|END_TEXT|>",
    ],
    think_pairs: 1,
    name_key: "tool_name",
    arguments_key: "parameters",
    named: false,
};

#[derive(Clone, Debug)]
enum State {
    Text,
    /// Reasoning opened by pair `pair` (None: the reply started inside it; any closer ends it).
    Thinking { pair: Option<usize> },
    /// After `[TOOL_CALLS]` and blanks: `[` opens a list, a name character a named call.
    Opening(Held),
    /// A named call's name, from `bytes[name_at..]`.
    Name { held: Held, name_at: usize },
    /// After `[CALL_ID]`: the model's call id, up to `[ARGS]`.
    CallId { call: OpenCall, id: Vec<u8> },
    /// The name (and id) are complete: blanks, then the arguments object.
    ArgumentsStart { call: OpenCall, id: Option<String> },
    /// A list, before an item: `held` is the list's opening until its first call.
    ListItem { held: Option<Held> },
    /// A list, after an item: `,` or `]`.
    ListNext,
    Call { call: OpenCall, id: Option<String>, in_list: bool },
}

#[derive(Clone, Debug)]
pub(crate) struct MistralMachine {
    pub core: Core,
    state: State,
    tags: ThinkingTags,
    /// `[TOOL_CALLS]` repeated (blanks between) is text, not one opener.
    strict: bool,
    syntax: ListSyntax,
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

impl MistralMachine {
    pub fn new(mut core: Core, syntax: ListSyntax, start_in_thinking: bool, strict: bool) -> Self {
        let mut tags = ThinkingTags::default();
        let state = if start_in_thinking {
            tags.open(&mut core);
            State::Thinking { pair: None }
        } else {
            State::Text
        };
        Self { core, state, tags, strict, syntax }
    }

    fn text(&mut self, input: &mut Input, i: usize) -> Flow {
        let (at, which) = match read_until(&mut self.core, input, i, self.syntax.markers, false) {
            Ok(found) => found,
            Err(flow) => return flow,
        };
        let marker = self.syntax.markers[which];
        let pairs = self.syntax.think_pairs;
        if which == 0 {
            self.state = State::Opening(Held::new(input.at(at), marker));
        } else if which > 2 * pairs {
            // cohere's action and response markers: dropped.
            self.core.out.end_text();
        } else if which <= pairs {
            self.tags.open(&mut self.core);
            self.state = State::Thinking { pair: Some(which - 1) };
        } else {
            self.tags.stray_close(&mut self.core, marker, input.abs(at));
        }
        Flow::Continue(at + marker.len())
    }

    fn thinking(&mut self, input: &Input, i: usize) -> Flow {
        let State::Thinking { pair } = self.state else { return Flow::Wait(i) };
        let closes = self.syntax.think_closes();
        let closes = match pair {
            Some(pair) => &closes[pair..=pair],
            None => closes,
        };
        match read_thinking(&mut self.core, input, i, closes) {
            Ok(next) => {
                self.state = State::Text;
                Flow::Continue(next)
            }
            Err(flow) => flow,
        }
    }

    fn opening(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let State::Opening(held) = &mut self.state else { return Flow::Wait(i) };
        let Some(i) = held.hold_blanks(data, i) else { return Flow::Continue(data.len()) };
        if !self.strict {
            // Mistral 7B v0.3 writes `[TOOL_CALLS] [TOOL_CALLS] [...]`: one opener.
            let opener = self.syntax.markers[0];
            match input.settle(match_at(data, i, &[opener])) {
                Found::Partial { .. } => return Flow::Wait(i),
                Found::Marker { .. } => {
                    held.bytes.extend_from_slice(opener);
                    return Flow::Continue(i + opener.len());
                }
                Found::None => {}
            }
        }
        let State::Opening(mut held) = std::mem::replace(&mut self.state, State::Text) else { return Flow::Wait(i) };
        let b = data[i];
        if b == b'[' {
            held.bytes.push(b);
            self.state = State::ListItem { held: Some(held) };
            Flow::Continue(i + 1)
        } else if is_name_byte(b) && self.syntax.named {
            let name_at = held.bytes.len();
            self.state = State::Name { held, name_at };
            Flow::Continue(i)
        } else {
            held.not_a_call(&mut self.core, i)
        }
    }

    fn name(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let State::Name { held, .. } = &mut self.state else { return Flow::Wait(i) };
        let Some(i) = take_run(data, i, &mut held.bytes, is_name_byte) else { return Flow::Continue(data.len()) };
        let marker = if data[i] == b'[' {
            match input.settle(match_at(data, i, &[ARGS, CALL_ID])) {
                Found::Partial { .. } => return Flow::Wait(i),
                Found::Marker { which, .. } => Some([ARGS, CALL_ID][which]),
                Found::None => None,
            }
        } else {
            None
        };
        let State::Name { mut held, name_at } = std::mem::replace(&mut self.state, State::Text) else {
            return Flow::Wait(i);
        };
        if marker.is_none() && data[i] != b'{' {
            return held.not_a_call(&mut self.core, i);
        }
        // Name bytes are ASCII, so this is the name as written.
        let name = String::from_utf8_lossy(&held.bytes[name_at..]).into_owned();
        held.bytes.extend_from_slice(marker.unwrap_or_default());
        let json = JsonCall::new(JsonShape::Arguments).ending_at_close();
        let mut call = self.core.open_call(held.start, held.start_chars, held.bytes, Payload::Json(json));
        self.core.start_call(&mut call, &name);
        self.state = match marker {
            Some(CALL_ID) => State::CallId { call, id: Vec::new() },
            Some(_) => State::ArgumentsStart { call, id: None },
            None => State::Call { call, id: None, in_list: false },
        };
        Flow::Continue(i + marker.map_or(0, <[u8]>::len))
    }

    fn call_id(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let State::CallId { call, id } = &mut self.state else { return Flow::Wait(i) };
        let run_end = take_run(data, i, id, |b| b.is_ascii_alphanumeric());
        call.raw.extend_from_slice(&data[i..run_end.unwrap_or(data.len())]);
        let Some(i) = run_end else { return Flow::Continue(data.len()) };
        let found = input.settle(match_at(data, i, &[ARGS]));
        if let Found::Partial { .. } = found {
            return Flow::Wait(i);
        }
        let State::CallId { mut call, id } = std::mem::replace(&mut self.state, State::Text) else {
            return Flow::Wait(i);
        };
        match found {
            Found::Marker { .. } if !id.is_empty() => {
                call.raw.extend_from_slice(ARGS);
                let id = String::from_utf8_lossy(&id).into_owned();
                self.state = State::ArgumentsStart { call, id: Some(id) };
                Flow::Continue(i + ARGS.len())
            }
            _ => self.malformed(call, "expected a call id of letters and digits, then [ARGS]", i),
        }
    }

    fn arguments_start(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let State::ArgumentsStart { call, .. } = &mut self.state else { return Flow::Wait(i) };
        let Some(i) = take_run(data, i, &mut call.raw, is_space) else { return Flow::Continue(data.len()) };
        let State::ArgumentsStart { call, id } = std::mem::replace(&mut self.state, State::Text) else {
            return Flow::Wait(i);
        };
        if data[i] != b'{' {
            return self.malformed(call, "the arguments are not a JSON object", i);
        }
        self.state = State::Call { call, id, in_list: false };
        Flow::Continue(i)
    }

    /// Ends a call that cannot go on; reading goes on at `i` as text.
    fn malformed(&mut self, call: OpenCall, why: &str, i: usize) -> Flow {
        self.core.close(call, Err((IssueKind::InvalidJson, format!("malformed call: {why}"))));
        self.state = State::Text;
        Flow::Continue(i)
    }

    fn list_item(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let State::ListItem { held } = &mut self.state else { return Flow::Wait(i) };
        let next = match held {
            Some(held) => held.hold_blanks(data, i),
            None => run_end(data, i, is_space),
        };
        let Some(i) = next else { return Flow::Continue(data.len()) };
        let State::ListItem { held } = std::mem::replace(&mut self.state, State::Text) else { return Flow::Wait(i) };
        match (data[i], held) {
            (b'{', held) => {
                let (start, start_chars, raw) = match held {
                    Some(held) => (held.start, held.start_chars, held.bytes),
                    None => {
                        let (start, start_chars) = input.at(i);
                        (start, start_chars, Vec::new())
                    }
                };
                let (name_key, arguments_key) = (self.syntax.name_key.into(), self.syntax.arguments_key.into());
                let json = JsonCall::new(JsonShape::Fields { name_key, arguments_key }).ending_at_close();
                let call = self.core.open_call(start, start_chars, raw, Payload::Json(json));
                self.state = State::Call { call, id: None, in_list: true };
                Flow::Continue(i)
            }
            // `]` after a comma: the list ends (a trailing comma is forgiven).
            (b']', None) => Flow::Continue(i + 1),
            (_, Some(held)) => held.not_a_call(&mut self.core, i),
            (_, None) => Flow::Continue(i),
        }
    }

    fn list_next(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let Some(i) = run_end(data, i, is_space) else { return Flow::Continue(data.len()) };
        match data[i] {
            b',' => {
                self.state = State::ListItem { held: None };
                Flow::Continue(i + 1)
            }
            b']' => {
                self.state = State::Text;
                Flow::Continue(i + 1)
            }
            _ => {
                self.state = State::Text;
                Flow::Continue(i)
            }
        }
    }

    fn call(&mut self, input: &Input, mut i: usize) -> Flow {
        let data = input.data;
        let State::Call { call, .. } = &mut self.state else { return Flow::Wait(i) };
        let Payload::Json(json) = &mut call.payload else { return Flow::Wait(i) };
        loop {
            let stop = json.scan(data, i);
            call.raw.extend_from_slice(&data[i..stop]);
            i = stop;
            if json.closed {
                break;
            }
            if i == data.len() {
                self.core.progress(call);
                return Flow::Continue(i);
            }
            // A `<` outside a string: no end marker to look for here.
            json.push_byte(b'<');
            call.raw.push(b'<');
            i += 1;
        }
        let State::Call { call, id, in_list } = std::mem::replace(&mut self.state, State::Text) else {
            return Flow::Wait(i);
        };
        self.end_call(call, id);
        if in_list {
            self.state = State::ListNext;
        }
        Flow::Continue(i)
    }

    /// Ends a call whose arguments closed; the model's own id (`[CALL_ID]`) goes to metadata.
    fn end_call(&mut self, mut call: OpenCall, id: Option<String>) {
        self.core.progress(&mut call);
        let result = self.core.decode(&mut call).map(|mut decoded| {
            if let Some(id) = id {
                Arc::make_mut(&mut decoded.metadata).push(("id".into(), JsonValue::Str(id.into())));
            }
            decoded
        });
        self.core.close(call, result);
    }
}

impl StateMachine for MistralMachine {
    #[inline(always)]
    fn step(&mut self, input: &mut Input, i: usize) -> Flow {
        match self.state {
            State::Text => self.text(input, i),
            State::Thinking { .. } => self.thinking(input, i),
            State::Opening(_) => self.opening(input, i),
            State::Name { .. } => self.name(input, i),
            State::CallId { .. } => self.call_id(input, i),
            State::ArgumentsStart { .. } => self.arguments_start(input, i),
            State::ListItem { .. } => self.list_item(input, i),
            State::ListNext => self.list_next(input, i),
            State::Call { .. } => self.call(input, i),
        }
    }

    /// The end of the text: closes what is open.
    fn finish(&mut self) {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text | State::ListNext | State::ListItem { held: None } => {}
            State::Thinking { .. } => self.core.out.end_thinking(false),
            State::Opening(held) | State::Name { held, .. } | State::ListItem { held: Some(held) } => {
                held.into_text(&mut self.core)
            }
            State::CallId { call, .. } | State::ArgumentsStart { call, .. } | State::Call { call, .. } => {
                self.core.cut_off(call, "a tool call")
            }
        }
    }

    fn saw_stray_close(&self) -> bool {
        self.tags.saw_stray_close
    }

    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
}
