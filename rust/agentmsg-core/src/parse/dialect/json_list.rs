//! JSON calls after a marker, one object or a list of them: the families whose calls are JSON
//! `{"name", "arguments"}` objects in a list (or `{"NAME": {arguments}}`, apertus), opened by a
//! marker and often closed by another.
//!
//! - jamba, hunyuan: `<tool_calls>[{…}, …]</tool_calls>`;
//! - granite: `<|tool_call|>[{…}, …]` (Granite 3) and `<tool_call>{…}</tool_call>` (Granite 4);
//! - phi4_mini: `<|tool_call|>[…]<|/tool_call|>` and `functools[…]`;
//! - xlam: a list that starts the reply (or follows reasoning), in a ```` ```json ```` fence, or
//!   after `[TOOL_CALLS]` or `<tool_call>`;
//! - apertus: `<|tools_prefix|>[{"NAME": {…}}, …]<|tools_suffix|>`;
//! - internlm2: `<|action_start|><|plugin|>{"name", "parameters"}<|action_end|>`;
//! - command_r (Command R, R+): `Action:` at the start of a line (or of the reply), then
//!   optionally a ```` ```json ```` fence, then a list of `{"tool_name", "parameters"}` objects;
//!   the fence's closing ```` ``` ```` after the list is dropped.
//!
//! A marker opens calls only if (after blanks) what it may hold starts: `[` then `{` for a list,
//! `{` for one object; otherwise the marker and what was read are text. Each object is one call,
//! ending where it closes; the list's brackets and commas are structure, and a byte that is not
//! `,` or `]` after an object ends the list there (the rest is text). The closing marker after
//! the calls is dropped, and may be missing. A closing marker outside a JSON string before the
//! object closes ends the call there, as malformed. Reasoning runs from its opener to its closer;
//! a closer with nothing open is text. Unless strict, an opener in reasoning that opens calls
//! ends the reasoning (Apertus writes its calls inside its reasoning block), and the next closer
//! with nothing open is then that reasoning's closer (dropped). Markers that wrap the answer
//! (`<response>`, `<answer>`) are dropped.

use super::driver::{Core, Flow, Input, OpenCall, Payload, StateMachine};
use super::held::Held;
use super::json_call::{JsonCall, JsonShape};
use super::reading::{read_until, text_blanks, ThinkingTags};
use crate::parse::scan::{is_space, match_at, run_end, take_run, Found};

/// A code fence's marker.
const FENCE: &[u8] = b"```";

/// A marker that opens calls.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opener {
    marker: &'static [u8],
    /// The marker after the calls (dropped; forgiven when missing).
    close: Option<&'static [u8]>,
    /// A list `[{…}, …]` may follow.
    list: bool,
    /// One object `{…}` may follow.
    object: bool,
    /// A code fence: an info string, `json` or none, comes before the list.
    fence: bool,
    /// A code fence may follow the marker (blanks between): ```` ``` ```` and an info string,
    /// `json` or none; `close` then applies only if the fence was there.
    fence_after: bool,
}

const fn list(marker: &'static [u8], close: Option<&'static [u8]>) -> Opener {
    Opener { marker, close, list: true, object: false, fence: false, fence_after: false }
}

const fn object(marker: &'static [u8], close: Option<&'static [u8]>) -> Opener {
    Opener { marker, close, list: false, object: true, fence: false, fence_after: false }
}

/// The start of the reply (xlam): a list with no marker.
const REPLY_START: Opener = list(b"", None);

/// How a call object names its tool.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `{name_key: "NAME", arguments_key: {…}}`, `alias` accepted for `arguments_key`.
    Fields { name_key: &'static str, arguments_key: &'static str, alias: Option<&'static str> },
    /// `{"NAME": {…}}`.
    NameKeyed,
}

const NAME_ARGUMENTS: Shape = Shape::Fields { name_key: "name", arguments_key: "arguments", alias: Some("parameters") };
const THINK: Option<(&[u8], &[u8])> = Some((b"<think>", b"</think>"));

/// The markers and object shape of a JSON-list dialect.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ListSyntax {
    openers: &'static [Opener],
    /// A list that starts the reply (after blanks, or after a reasoning block) needs no marker.
    at_start: bool,
    /// The first opener's marker begins with a line break, which the reply's start (after
    /// blanks) stands for: the marker is read only at the start of a line.
    line_start: bool,
    think: Option<(&'static [u8], &'static [u8])>,
    /// Markers that wrap the answer, dropped from the text.
    dropped: &'static [&'static [u8]],
    shape: Shape,
}

pub(crate) const JAMBA: ListSyntax = ListSyntax {
    openers: &[list(b"<tool_calls>", Some(b"</tool_calls>"))],
    at_start: false,
    line_start: false,
    think: None,
    dropped: &[],
    shape: NAME_ARGUMENTS,
};

pub(crate) const HUNYUAN: ListSyntax = ListSyntax {
    openers: &[list(b"<tool_calls>", Some(b"</tool_calls>"))],
    at_start: false,
    line_start: false,
    think: THINK,
    dropped: &[b"<answer>", b"</answer>"],
    shape: NAME_ARGUMENTS,
};

pub(crate) const GRANITE: ListSyntax = ListSyntax {
    openers: &[
        Opener { marker: b"<|tool_call|>", close: None, list: true, object: true, fence: false, fence_after: false },
        object(b"<tool_call>", Some(b"</tool_call>")),
    ],
    at_start: false,
    line_start: false,
    think: THINK,
    dropped: &[b"<response>", b"</response>"],
    shape: NAME_ARGUMENTS,
};

pub(crate) const PHI4_MINI: ListSyntax = ListSyntax {
    openers: &[list(b"<|tool_call|>", Some(b"<|/tool_call|>")), list(b"functools", None)],
    at_start: false,
    line_start: false,
    think: None,
    dropped: &[],
    shape: NAME_ARGUMENTS,
};

pub(crate) const XLAM: ListSyntax = ListSyntax {
    openers: &[
        Opener { marker: b"```", close: Some(b"```"), list: true, object: false, fence: true, fence_after: false },
        list(b"[TOOL_CALLS]", None),
        Opener { marker: b"<tool_call>", close: Some(b"</tool_call>"), list: true, object: true, fence: false, fence_after: false },
    ],
    at_start: true,
    line_start: false,
    think: THINK,
    dropped: &[],
    shape: NAME_ARGUMENTS,
};

pub(crate) const APERTUS: ListSyntax = ListSyntax {
    openers: &[list(b"<|tools_prefix|>", Some(b"<|tools_suffix|>"))],
    at_start: false,
    line_start: false,
    think: Some((b"<|inner_prefix|>", b"<|inner_suffix|>")),
    dropped: &[],
    shape: Shape::NameKeyed,
};

pub(crate) const INTERNLM2: ListSyntax = ListSyntax {
    openers: &[object(b"<|action_start|><|plugin|>", Some(b"<|action_end|>"))],
    at_start: false,
    line_start: false,
    think: None,
    dropped: &[],
    shape: Shape::Fields { name_key: "name", arguments_key: "parameters", alias: Some("arguments") },
};

/// Command R and R+: `Action:` at a line's start, a list of `{"tool_name", "parameters"}`
/// objects, in a ```` ```json ```` fence as the template writes it. No reasoning markers.
pub(crate) const COMMAND_R: ListSyntax = ListSyntax {
    openers: &[Opener { marker: b"\nAction:", close: Some(b"```"), list: true, object: false, fence: false, fence_after: true }],
    at_start: false,
    line_start: true,
    think: None,
    dropped: &[],
    shape: Shape::Fields { name_key: "tool_name", arguments_key: "parameters", alias: None },
};

#[derive(Clone, Debug)]
enum State {
    /// The start of the reply, or right after reasoning (dialects with `at_start`).
    Start,
    Text,
    Thinking,
    /// After opener `opener` (held): a fence's info string (from `held.bytes[info_at]`), blanks,
    /// then `[` or `{` or not. `fenced`: a fence was read after the marker. `in_thinking`: the
    /// opener was read in reasoning, which calls end and goes on otherwise.
    Opening { held: Held, opener: usize, info_at: Option<usize>, fenced: bool, in_thinking: bool },
    /// A list, before an item: `held` is the list's opening until its first call.
    Item { held: Option<Held>, opener: usize },
    /// A list, after an item: `,` or `]`.
    Next { opener: usize },
    Call { call: Box<OpenCall>, opener: usize, in_list: bool },
    /// After the calls: blanks, then the closing marker (dropped) or text.
    After { opener: usize },
}

#[derive(Clone, Debug)]
pub(crate) struct JsonListMachine {
    pub core: Core,
    syntax: ListSyntax,
    state: State,
    tags: ThinkingTags,
    /// Looked for in text: the openers' markers, the reasoning opener and closer, the dropped ones.
    text_markers: Vec<&'static [u8]>,
    /// What ends reasoning: its closer, then (not strict) the openers.
    think_stops: Vec<&'static [u8]>,
    /// Calls ended the reasoning they were written in: the next closer with nothing open is
    /// that reasoning's closer, not text.
    call_ended_thinking: bool,
    /// The open calls' opener was followed by a fence (command_r): its closing fence is dropped.
    fenced: bool,
}

impl JsonListMachine {
    pub fn new(mut core: Core, syntax: ListSyntax, start_in_thinking: bool, strict: bool) -> Self {
        let mut tags = ThinkingTags::default();
        let state = if start_in_thinking && syntax.think.is_some() {
            tags.open(&mut core);
            State::Thinking
        } else if syntax.at_start || syntax.line_start {
            State::Start
        } else {
            State::Text
        };
        let mut text_markers: Vec<&'static [u8]> = syntax.openers.iter().map(|opener| opener.marker).collect();
        if let Some((open, close)) = syntax.think {
            text_markers.extend([open, close]);
        }
        text_markers.extend(syntax.dropped);
        let mut think_stops: Vec<&'static [u8]> = syntax.think.iter().map(|(_, close)| *close).collect();
        if !strict {
            think_stops.extend(syntax.openers.iter().map(|opener| opener.marker));
        }
        Self { core, syntax, state, tags, text_markers, think_stops, call_ended_thinking: false, fenced: false }
    }

    /// The marker after opener `k`'s calls, if it applies to the calls now open.
    fn close(&self, k: usize) -> Option<&'static [u8]> {
        let opener = self.opener(k);
        if opener.fence_after && !self.fenced { None } else { opener.close }
    }

    /// The state after reading opener `k` (held): a fence opener reads its info string first.
    fn opening_state(&self, held: Held, k: usize, in_thinking: bool) -> State {
        let opener = self.opener(k);
        let info_at = opener.fence.then_some(opener.marker.len());
        State::Opening { held, opener: k, info_at, fenced: opener.fence, in_thinking }
    }

    fn opener(&self, k: usize) -> Opener {
        self.syntax.openers.get(k).copied().unwrap_or(REPLY_START)
    }

    fn start(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let Some(i) = text_blanks(&mut self.core, input, i, is_space) else { return Flow::Continue(data.len()) };
        if self.syntax.line_start {
            // The reply's start is a line's start: the marker with no line break before it.
            let marker = &self.syntax.openers[0].marker[1..];
            match input.settle(match_at(data, i, &[marker])) {
                Found::Partial { .. } => return Flow::Wait(i),
                Found::Marker { .. } => {
                    self.state = self.opening_state(Held::new(input.at(i), marker), 0, false);
                    return Flow::Continue(i + marker.len());
                }
                Found::None => {}
            }
        }
        // A marker (`[TOOL_CALLS]`) is read as one, not as a list.
        match input.settle(match_at(data, i, &self.text_markers)) {
            Found::Partial { .. } => return Flow::Wait(i),
            Found::Marker { .. } => {
                self.state = State::Text;
                return Flow::Continue(i);
            }
            Found::None => {}
        }
        if data[i] == b'[' && self.syntax.at_start {
            let opener = self.syntax.openers.len();
            self.state = State::Item { held: Some(Held::new(input.at(i), b"[")), opener };
            return Flow::Continue(i + 1);
        }
        self.state = State::Text;
        Flow::Continue(i)
    }

    fn text(&mut self, input: &mut Input, i: usize) -> Flow {
        let (at, which) = match read_until(&mut self.core, input, i, &self.text_markers, false) {
            Ok(found) => found,
            Err(flow) => return flow,
        };
        let marker = self.text_markers[which];
        let openers = self.syntax.openers.len();
        let thinks = if self.syntax.think.is_some() { 2 } else { 0 };
        if which < openers {
            self.state = self.opening_state(Held::new(input.at(at), marker), which, false);
        } else if which == openers && thinks > 0 {
            self.call_ended_thinking = false;
            self.tags.open(&mut self.core);
            self.state = State::Thinking;
        } else if which == openers + 1 && thinks > 0 {
            if std::mem::take(&mut self.call_ended_thinking) {
                self.core.out.end_text();
            } else {
                self.tags.stray_close(&mut self.core, marker, input.abs(at));
            }
        } else {
            // A marker around the answer: dropped, it separates text runs as an element does.
            self.core.out.end_text();
        }
        Flow::Continue(at + marker.len())
    }

    /// Reasoning, up to its closer or (not strict) an opener.
    fn thinking(&mut self, input: &mut Input, i: usize) -> Flow {
        let (at, which) = match read_until(&mut self.core, input, i, &self.think_stops, true) {
            Ok(found) => found,
            Err(flow) => return flow,
        };
        let marker = self.think_stops[which];
        if which == 0 {
            self.core.out.end_thinking(true);
            self.state = if self.syntax.at_start { State::Start } else { State::Text };
        } else {
            self.state = self.opening_state(Held::new(input.at(at), marker), which - 1, true);
        }
        Flow::Continue(at + marker.len())
    }

    fn opening(&mut self, input: &Input, mut i: usize) -> Flow {
        let data = input.data;
        let State::Opening { held, opener, info_at, fenced, .. } = &mut self.state else { return Flow::Wait(i) };
        let opener = self.syntax.openers.get(*opener).copied().unwrap_or(REPLY_START);
        if let Some(at) = *info_at {
            let Some(next) = take_run(data, i, &mut held.bytes, |b| b.is_ascii_alphanumeric()) else {
                return Flow::Continue(data.len());
            };
            i = next;
            *info_at = None;
            let info = &held.bytes[at..];
            if !(info.is_empty() || info.eq_ignore_ascii_case(b"json")) {
                return self.not_a_call(i);
            }
        }
        let Some(i) = held.hold_blanks(data, i) else { return Flow::Continue(data.len()) };
        if opener.fence_after && !*fenced && data[i] == FENCE[0] {
            return match input.settle(match_at(data, i, &[FENCE])) {
                Found::Partial { .. } => Flow::Wait(i),
                Found::Marker { .. } => {
                    held.bytes.extend_from_slice(FENCE);
                    *info_at = Some(held.bytes.len());
                    *fenced = true;
                    Flow::Continue(i + FENCE.len())
                }
                Found::None => self.not_a_call(i),
            };
        }
        let byte = data[i];
        if !(byte == b'[' && opener.list || byte == b'{' && opener.object) {
            return self.not_a_call(i);
        }
        let State::Opening { mut held, opener: k, in_thinking, fenced, .. } = std::mem::replace(&mut self.state, State::Text)
        else {
            return Flow::Wait(i);
        };
        self.fenced = fenced;
        if in_thinking {
            // The calls end the reasoning they were written in.
            self.core.out.end_thinking(true);
            self.call_ended_thinking = true;
        }
        match data[i] {
            b'[' if opener.list => {
                held.bytes.push(b'[');
                self.state = State::Item { held: Some(held), opener: k };
                Flow::Continue(i + 1)
            }
            _ => {
                self.open_call(held, k, false);
                Flow::Continue(i)
            }
        }
    }

    /// What was held in `Opening` is text (or reasoning, where it was read); reading goes on at `i`.
    fn not_a_call(&mut self, i: usize) -> Flow {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Opening { held, in_thinking: true, .. } => {
                self.core.out.thinking(&held.bytes, held.start);
                self.state = State::Thinking;
                Flow::Continue(i)
            }
            State::Opening { held, .. } => held.not_a_call(&mut self.core, i),
            _ => Flow::Continue(i),
        }
    }

    fn open_call(&mut self, held: Held, opener: usize, in_list: bool) {
        let shape = match self.syntax.shape {
            Shape::Fields { name_key, arguments_key, .. } => {
                JsonShape::Fields { name_key: name_key.into(), arguments_key: arguments_key.into() }
            }
            Shape::NameKeyed => JsonShape::NameKeyed,
        };
        let mut json = JsonCall::new(shape).ending_at_close();
        if let Shape::Fields { alias: Some(alias), .. } = self.syntax.shape {
            json = json.with_arguments_alias(alias);
        }
        if let Some(close) = self.close(opener) {
            json = json.stopping_at(close[0]);
        }
        let call = self.core.open_call(held.start, held.start_chars, held.bytes, Payload::Json(json));
        self.state = State::Call { call: Box::new(call), opener, in_list };
    }

    fn item(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let State::Item { held, .. } = &mut self.state else { return Flow::Wait(i) };
        let next = match held {
            Some(held) => held.hold_blanks(data, i),
            None => run_end(data, i, is_space),
        };
        let Some(i) = next else { return Flow::Continue(data.len()) };
        let State::Item { held, opener } = std::mem::replace(&mut self.state, State::Text) else { return Flow::Wait(i) };
        match (data[i], held) {
            (b'{', held) => {
                let held = held.unwrap_or_else(|| Held::new(input.at(i), b""));
                self.open_call(held, opener, true);
                Flow::Continue(i)
            }
            // `]` after a comma: the list ends (a trailing comma is forgiven).
            (b']', None) => {
                self.state = State::After { opener };
                Flow::Continue(i + 1)
            }
            (_, Some(held)) => held.not_a_call(&mut self.core, i),
            (_, None) => Flow::Continue(i),
        }
    }

    fn next(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let State::Next { opener } = self.state else { return Flow::Wait(i) };
        let Some(i) = run_end(data, i, is_space) else { return Flow::Continue(data.len()) };
        match data[i] {
            b',' => {
                self.state = State::Item { held: None, opener };
                Flow::Continue(i + 1)
            }
            b']' => {
                self.state = State::After { opener };
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
        let close = match &self.state {
            State::Call { opener, .. } => self.close(*opener),
            _ => None,
        };
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
            // A stop byte outside a string: the closing marker ends a call that did not close.
            if let Some(close) = close {
                match input.settle(match_at(data, i, &[close])) {
                    Found::Marker { .. } => {
                        call.raw.extend_from_slice(close);
                        if let State::Call { call, .. } = std::mem::replace(&mut self.state, State::Text) {
                            self.core.end_call(*call);
                        }
                        return Flow::Continue(i + close.len());
                    }
                    Found::Partial { .. } => {
                        self.core.progress(call);
                        return Flow::Wait(i);
                    }
                    Found::None => {}
                }
            }
            json.push_byte(data[i]);
            call.raw.push(data[i]);
            i += 1;
        }
        let State::Call { call, opener, in_list } = std::mem::replace(&mut self.state, State::Text) else {
            return Flow::Wait(i);
        };
        self.core.end_call(*call);
        self.state = if in_list { State::Next { opener } } else { State::After { opener } };
        Flow::Continue(i)
    }

    fn after(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let State::After { opener } = self.state else { return Flow::Wait(i) };
        let Some(close) = self.close(opener) else {
            // Blanks are text's to read: a line break may start the next marker (command_r).
            self.state = State::Text;
            return Flow::Continue(i);
        };
        let Some(i) = text_blanks(&mut self.core, input, i, is_space) else { return Flow::Continue(data.len()) };
        match input.settle(match_at(data, i, &[close])) {
            Found::Partial { .. } => Flow::Wait(i),
            Found::Marker { .. } => {
                self.core.out.end_text();
                self.state = State::Text;
                Flow::Continue(i + close.len())
            }
            Found::None => {
                self.state = State::Text;
                Flow::Continue(i)
            }
        }
    }
}

impl StateMachine for JsonListMachine {
    #[inline(always)]
    fn step(&mut self, input: &mut Input, i: usize) -> Flow {
        match self.state {
            State::Start => self.start(input, i),
            State::Text => self.text(input, i),
            State::Thinking => self.thinking(input, i),
            State::Opening { .. } => self.opening(input, i),
            State::Item { .. } => self.item(input, i),
            State::Next { .. } => self.next(input, i),
            State::Call { .. } => self.call(input, i),
            State::After { .. } => self.after(input, i),
        }
    }

    /// The end of the text: closes what is open.
    fn finish(&mut self) {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Start | State::Text | State::Next { .. } | State::After { .. } | State::Item { held: None, .. } => {}
            State::Thinking => self.core.out.end_thinking(false),
            State::Opening { held, in_thinking: true, .. } => {
                self.core.out.thinking(&held.bytes, held.start);
                self.core.out.end_thinking(false);
            }
            State::Opening { held, .. } | State::Item { held: Some(held), .. } => held.into_text(&mut self.core),
            State::Call { call, .. } => self.core.cut_off(*call, "a JSON tool call"),
        }
    }

    fn saw_stray_close(&self) -> bool {
        self.tags.saw_stray_close
    }

    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
}
