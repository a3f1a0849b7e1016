//! Model dialects: the tool-call and reasoning notations of model families other than Forge's,
//! read whole or streamed by one kind of machine with the same guarantees as the Forge parser.
//!
//! - **hermes**: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, `<think>` reasoning
//!   (Hermes 2 Pro, Qwen 2.5, Qwen 3 and their fine-tunes).
//! - **qwen3_coder**: `<tool_call><function=NAME><parameter=KEY>value</parameter>…</function>
//!   </tool_call>`, `<think>` reasoning (Qwen3-Coder, Qwen 3.5).
//! - **gpt_oss**: OpenAI's Harmony messages (`<|channel|>analysis|commentary|final`,
//!   `to=functions.NAME`, `<|message|>`, `<|end|>` / `<|call|>` / `<|return|>`).
//! - **deepseek_v3** / **deepseek_v31**: `<｜tool▁calls▁begin｜>` sections of
//!   `<｜tool▁call▁begin｜>…<｜tool▁call▁end｜>` calls (V3: `function<｜tool▁sep｜>NAME` and a
//!   fenced JSON block; V3.1: `NAME<｜tool▁sep｜>{json}`), `<think>` reasoning.
//! - **kimi_k2**: `<|tool_calls_section_begin|>` sections of `<|tool_call_begin|>functions.NAME:IDX
//!   <|tool_call_argument_begin|>{json}<|tool_call_end|>` calls, `◁think▷` or `<think>` reasoning.
//! - **glm45**: `<tool_call>NAME` then `<arg_key>k</arg_key><arg_value>v</arg_value>` pairs,
//!   `</tool_call>`, `<think>` reasoning.
//!
//! Every machine reads its input once: markers are found with `memchr` and compared in place,
//! only a possible marker prefix (a few bytes) is held back between chunks, and a call's bytes
//! are kept once for its final decode and raw text. Whole-text parsing is feeding everything
//! and finishing, so streamed and whole results agree by construction. `docs/dialects.md`
//! states each dialect's rules.

mod element_call;
mod harmony;
mod held;
mod json_call;
pub mod json_text;
mod llama_json;
mod mistral;
mod py_literal;
mod pythonic;
mod reading;
mod scan;
pub mod schema;
mod tagged;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_more;

use std::sync::Arc;

use jiter::JsonValue;

use super::chars::count_chars;
use super::output::Output;
use super::payload::{call_id, Issue, IssueKind, ToolCall};
use super::{Document, Event, StartThinking};
use element_call::ElementCall;
use json_call::JsonCall;
pub use schema::Tools;
pub use tagged::quoted;

/// A model family's notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Hermes,
    Qwen3Coder,
    GptOss,
    Mistral,
    Llama3Json,
    Pythonic,
    DeepseekV3,
    DeepseekV31,
    KimiK2,
    Glm45,
    /// A dialect from parts: [`DialectOptions::custom`].
    Custom,
}

impl Dialect {
    /// Every dialect with its name, in the order they are documented.
    pub const ALL: [(&'static str, Dialect); 10] = [
        ("hermes", Self::Hermes),
        ("qwen3_coder", Self::Qwen3Coder),
        ("gpt_oss", Self::GptOss),
        ("mistral", Self::Mistral),
        ("llama3_json", Self::Llama3Json),
        ("pythonic", Self::Pythonic),
        ("deepseek_v3", Self::DeepseekV3),
        ("deepseek_v31", Self::DeepseekV31),
        ("kimi_k2", Self::KimiK2),
        ("glm45", Self::Glm45),
    ];

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, d)| *d)
    }

    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, d)| *d == self).map(|(n, _)| *n).unwrap_or_default()
    }
}

/// Options of a dialect parser.
#[derive(Clone, Debug, PartialEq)]
pub struct DialectOptions {
    pub dialect: Dialect,
    /// Whether the reply starts inside reasoning whose opening tag the prompt wrote (`<think>`
    /// dialects only). `Detect` (whole text only): yes when the first thinking tag is `</think>`.
    pub start_in_thinking: StartThinking,
    /// Tool definitions: values written as text are typed by them, unknown tools are flagged.
    pub tools: Option<Arc<Tools>>,
    /// The markers and payload of a custom dialect.
    pub(crate) syntax: Option<Arc<tagged::Syntax>>,
}

impl DialectOptions {
    /// The options of a listed dialect (`Dialect::Custom` without parts reads as hermes).
    pub fn new(dialect: Dialect) -> Self {
        Self { dialect, start_in_thinking: StartThinking::Detect, tools: None, syntax: None }
    }

    /// The options of a dialect from parts; the error names the part that is wrong (an empty
    /// marker, two equal markers, an unknown payload, keys that do not apply).
    ///
    /// ```
    /// use agentmsg_core::parse::dialect::{parse, CustomDialect, DialectOptions};
    /// let parts = CustomDialect { call_start: "<call>".into(), call_end: "</call>".into(), ..CustomDialect::default() };
    /// let doc = parse(br#"Hi<call>{"name": "f", "arguments": {}}</call>"#, &DialectOptions::custom(&parts).unwrap());
    /// assert_eq!(doc.text(), b"Hi");
    /// let bad = CustomDialect { call_end: "<call>".into(), ..parts };
    /// assert_eq!(DialectOptions::custom(&bad).unwrap_err(), "call_start and call_end must differ (both are '<call>')");
    /// ```
    pub fn custom(parts: &CustomDialect) -> Result<Self, String> {
        let syntax = tagged::Syntax::custom(parts)?;
        Ok(Self { syntax: Some(Arc::new(syntax)), ..Self::new(Dialect::Custom) })
    }
}

/// The parts of a dialect for models that are not listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomDialect {
    pub call_start: String,
    pub call_end: String,
    /// `json` (an object with the name and the arguments under `name_key` and `arguments_key`),
    /// `qwen3_coder` or `glm45` (those dialects' element forms).
    pub payload: String,
    pub name_key: String,
    pub arguments_key: String,
    /// Reasoning markers, if the model writes reasoning.
    pub think: Option<(String, String)>,
}

impl Default for CustomDialect {
    /// Hermes' parts: `<tool_call>{"name", "arguments"}</tool_call>` with `<think>` reasoning.
    fn default() -> Self {
        Self {
            call_start: "<tool_call>".into(),
            call_end: "</tool_call>".into(),
            payload: "json".into(),
            name_key: "name".into(),
            arguments_key: "arguments".into(),
            think: Some(("<think>".into(), "</think>".into())),
        }
    }
}

/// What a dialect machine reports: the Forge machine's events, except that a call starts only
/// once its name is complete, with its id and name.
#[derive(Clone, Debug, PartialEq)]
pub enum DialectEvent {
    Event(Event),
    ToolStart { index: usize, id: String, name: String },
}

/// The payload reader of an open call.
#[derive(Clone, Debug)]
enum Payload {
    Json(JsonCall),
    Element(ElementCall),
    Pythonic(py_literal::ArgsReader),
}

/// A call being read: where it started, its raw bytes so far, and what was streamed of it.
#[derive(Clone, Debug)]
struct OpenCall {
    index: usize,
    start: usize,
    start_chars: usize,
    raw: Vec<u8>,
    payload: Payload,
    /// Id and name, once the name is complete.
    header: Option<(String, String)>,
    /// How much of the arguments text was reported.
    emitted: usize,
}

/// What every dialect machine shares: the output (text stripping, thinking blocks), call
/// numbering and the tool definitions.
#[derive(Clone, Debug)]
struct Core {
    out: Output,
    calls: usize,
    /// Id and name of each started call, by index, until the events are taken.
    headers: Vec<(usize, String, String)>,
    tools: Option<Arc<Tools>>,
}

impl Core {
    fn new(spans: bool, tools: Option<Arc<Tools>>) -> Self {
        Self { out: Output::new(spans), calls: 0, headers: Vec::new(), tools }
    }

    /// Opens call number `calls` starting at stream offset (`start`, `start_chars`).
    fn open_call(&mut self, start: usize, start_chars: usize, raw: Vec<u8>, payload: Payload) -> OpenCall {
        self.out.end_text();
        let index = self.calls;
        self.calls += 1;
        OpenCall { index, start, start_chars, raw, payload, header: None, emitted: 0 }
    }

    fn start_call(&mut self, call: &mut OpenCall, name: &str) {
        self.start_call_as(call, None, name);
    }

    /// Starts a call with the id the model wrote (kimi_k2) or, without one, an id that is
    /// deterministic and the same for every chunking: from the call's place and its name.
    fn start_call_as(&mut self, call: &mut OpenCall, id: Option<String>, name: &str) {
        let id = id.unwrap_or_else(|| call_id(call.index, format!("{}:{name}", call.start).as_bytes()));
        self.headers.push((call.index, id.clone(), name.to_owned()));
        call.header = Some((id, name.to_owned()));
        self.out.push(Event::ToolStart { index: call.index });
    }

    /// Reports a name that just completed and the arguments text that arrived.
    fn progress(&mut self, call: &mut OpenCall) {
        if call.header.is_none() {
            let name = match &mut call.payload {
                Payload::Json(json) => json.take_name().map(str::to_owned),
                Payload::Element(element) => element.take_name().map(str::to_owned),
                // Named when opened.
                Payload::Pythonic(_) => None,
            };
            match name {
                Some(name) => self.start_call(call, &name),
                None => return,
            }
        }
        let arguments = match &call.payload {
            Payload::Json(json) => &json.arguments,
            Payload::Element(element) => &element.arguments,
            Payload::Pythonic(reader) => &reader.out[..reader.stable_len()],
        };
        if arguments.len() > call.emitted {
            let fragment = arguments[call.emitted..].to_vec();
            call.emitted = arguments.len();
            self.out.push(Event::ToolDelta { index: call.index, fragment });
        }
    }

    /// Reads a JSON call's payload from `data[i..]` up to the first of `ends` outside a JSON
    /// string, reporting what arrived. `skip(json, byte)` names bytes that are the call's raw
    /// text but not its JSON (deepseek_v3's fence).
    fn read_json_call(
        &mut self,
        call: &mut OpenCall,
        input: &Input,
        mut i: usize,
        ends: &[&[u8]],
        skip: impl Fn(&JsonCall, u8) -> bool,
    ) -> JsonStep {
        let data = input.data;
        loop {
            let Payload::Json(json) = &mut call.payload else { return JsonStep::Wait(i) };
            if i < data.len() && skip(json, data[i]) {
                call.raw.push(data[i]);
                i += 1;
                continue;
            }
            let stop = json.scan(data, i);
            call.raw.extend_from_slice(&data[i..stop]);
            i = stop;
            if i == data.len() {
                self.progress(call);
                return JsonStep::Read;
            }
            if !ends.iter().any(|end| end[0] == data[i]) {
                // The JSON closed (a payload that ends at its close): go on reading.
                continue;
            }
            match input.settle(scan::match_at(data, i, ends)) {
                scan::Found::Marker { which, .. } => return JsonStep::End { at: i, which },
                scan::Found::Partial { .. } => {
                    self.progress(call);
                    return JsonStep::Wait(i);
                }
                scan::Found::None => {
                    json.push_byte(data[i]);
                    call.raw.push(data[i]);
                    i += 1;
                }
            }
        }
    }

    /// Ends a call whose end marker was read (or, for Harmony, whose message ended).
    fn end_call(&mut self, mut call: OpenCall) {
        self.progress(&mut call);
        let result = self.decode(&mut call);
        self.close(call, result);
    }

    /// Ends a call cut off by the end of the text.
    fn cut_off(&mut self, call: OpenCall, what: &str) {
        let result = Err((IssueKind::UnclosedTool, format!("the text ended inside {what}")));
        self.close(call, result);
    }

    fn close(&mut self, call: OpenCall, result: Result<ToolCall, (IssueKind, String)>) {
        let result = result.map_err(|(kind, message)| {
            let end = call.start + call.raw.len();
            let end_chars = call.start_chars + count_chars(&call.raw);
            Issue { kind, message, span: (call.start, end), char_span: (call.start_chars, end_chars), raw: call.raw }
        });
        self.out.push(Event::ToolEnd { index: call.index, result });
    }

    fn decode(&mut self, call: &mut OpenCall) -> Result<ToolCall, (IssueKind, String)> {
        let (name, input, text, mut metadata) = match &call.payload {
            Payload::Json(json) => {
                let decoded = json.decode()?;
                let metadata = Arc::try_unwrap(decoded.metadata).unwrap_or_else(|shared| (*shared).clone());
                (decoded.name, decoded.input, decoded.arguments_text, metadata)
            }
            Payload::Element(element) => {
                if let Some(error) = &element.error {
                    return Err((IssueKind::InvalidXml, format!("malformed call: {error}")));
                }
                let input = match super::parse_json(&element.arguments) {
                    Ok(JsonValue::Object(object)) => object,
                    _ => return Err((IssueKind::InvalidXml, "malformed call: the arguments did not close".into())),
                };
                let mut metadata = Vec::new();
                if !element.schema_errors.is_empty() {
                    let errors = element.schema_errors.iter().map(|e| JsonValue::Str(e.clone().into())).collect();
                    metadata.push(("schema_errors".into(), JsonValue::Array(Arc::new(errors))));
                }
                (element.name.clone(), input, element.arguments.clone(), metadata)
            }
            Payload::Pythonic(reader) => match super::parse_json(&reader.out) {
                Ok(JsonValue::Object(input)) => (None, input, reader.out.clone(), Vec::new()),
                _ => return Err((IssueKind::InvalidJson, "malformed call: the arguments did not close".into())),
            },
        };
        let name = match (&call.header, name) {
            (Some((_, started)), Some(name)) if *started != name => {
                return Err((IssueKind::InvalidField, "the name changed after it was streamed".into()))
            }
            (Some((_, started)), _) => started.clone(),
            (None, Some(name)) => {
                self.start_call(call, &name);
                name
            }
            (None, None) => return Err((IssueKind::MissingField, "missing the function name".into())),
        };
        if !text.starts_with(&arguments_of(&call.payload)[..call.emitted]) {
            return Err((IssueKind::InvalidJson, "the arguments differ from what was streamed".into()));
        }
        if text.len() > call.emitted {
            let fragment = text[call.emitted..].to_vec();
            call.emitted = text.len();
            self.out.push(Event::ToolDelta { index: call.index, fragment });
        }
        // As in Forge's payloads: `1e400` reads as infinity, which no JSON writer can carry on.
        if input.iter().chain(&metadata).any(|(_, value)| super::payload::holds_infinity(value)) {
            return Err(super::payload::out_of_range());
        }
        if let Some(tools) = &self.tools {
            if !tools.knows(&name) {
                metadata.push(("unknown_tool".into(), JsonValue::Bool(true)));
            }
        }
        let id = call.header.as_ref().map(|(id, _)| id.clone()).unwrap_or_default();
        Ok(ToolCall { id, name, server_name: "local".into(), input, metadata: Arc::new(metadata) })
    }

    /// Moves the events out, turning `ToolStart` into the dialect form with its header.
    fn drain_into(&mut self, events: &mut Vec<DialectEvent>) {
        let mut headers = self.headers.drain(..);
        for event in self.out.events.drain(..) {
            match event {
                Event::ToolStart { index } => {
                    let (_, id, name) = headers.find(|(i, _, _)| *i == index).unwrap_or_default();
                    events.push(DialectEvent::ToolStart { index, id, name });
                }
                other => events.push(DialectEvent::Event(other)),
            }
        }
    }
}

fn arguments_of(payload: &Payload) -> &[u8] {
    match payload {
        Payload::Json(json) => &json.arguments,
        Payload::Element(element) => &element.arguments,
        Payload::Pythonic(reader) => &reader.out,
    }
}

/// The machine of one dialect.
#[derive(Clone, Debug)]
enum Machine {
    Tagged(tagged::TaggedMachine),
    Harmony(harmony::HarmonyMachine),
    Mistral(mistral::MistralMachine),
    LlamaJson(llama_json::LlamaJsonMachine),
    Pythonic(pythonic::PythonicMachine),
}

/// An incremental parser of one dialect: `feed` chunks, then `finish`; ready for a new stream
/// after `finish`.
#[derive(Clone, Debug)]
pub struct DialectMachine {
    options: DialectOptions,
    spans: bool,
    machine: Machine,
    /// Unread bytes: a possible marker prefix held back from the last chunk.
    pending: Vec<u8>,
    /// Stream offsets (bytes, characters) of `pending[0]`.
    offset: usize,
    offset_chars: usize,
}

impl DialectMachine {
    /// A streaming machine; `StartThinking::Detect` counts as `No` (a stream cannot look ahead).
    pub fn new(options: DialectOptions) -> Self {
        Self::with_spans(options, false)
    }

    /// A machine for one whole text: text and thinking are reported as ranges of the input.
    pub fn for_whole_text(options: DialectOptions) -> Self {
        Self::with_spans(options, true)
    }

    fn with_spans(options: DialectOptions, spans: bool) -> Self {
        let core = Core::new(spans, options.tools.clone());
        let start_in_thinking = options.start_in_thinking == StartThinking::Yes;
        let syntax = match (&options.syntax, options.dialect) {
            (Some(syntax), _) => Some(Arc::clone(syntax)),
            (None, Dialect::Custom) => tagged::Syntax::of(Dialect::Hermes).map(Arc::new),
            (None, dialect) => tagged::Syntax::of(dialect).map(Arc::new),
        };
        let machine = match (syntax, options.dialect) {
            (Some(syntax), _) => Machine::Tagged(tagged::TaggedMachine::new(core, syntax, start_in_thinking)),
            (None, Dialect::Mistral) => Machine::Mistral(mistral::MistralMachine::new(core, start_in_thinking)),
            (None, Dialect::Llama3Json) => Machine::LlamaJson(llama_json::LlamaJsonMachine::new(core)),
            (None, Dialect::Pythonic) => Machine::Pythonic(pythonic::PythonicMachine::new(core)),
            (None, _) => Machine::Harmony(harmony::HarmonyMachine::new(core)),
        };
        Self { options, spans, machine, pending: Vec::new(), offset: 0, offset_chars: 0 }
    }

    pub fn options(&self) -> &DialectOptions {
        &self.options
    }

    /// Whether the first thinking tag read was a closing one (see [`StartThinking::Detect`]).
    pub fn saw_stray_thinking_close(&self) -> bool {
        match &self.machine {
            Machine::Tagged(m) => m.saw_stray_close(),
            Machine::Mistral(m) => m.saw_stray_close(),
            Machine::Harmony(_) | Machine::LlamaJson(_) | Machine::Pythonic(_) => false,
        }
    }

    /// Reads a chunk; appends the events it completes.
    pub fn feed_into(&mut self, chunk: &[u8], events: &mut Vec<DialectEvent>) {
        if self.pending.is_empty() {
            self.run(chunk, false);
        } else {
            let mut data = std::mem::take(&mut self.pending);
            data.extend_from_slice(chunk);
            self.run(&data, false);
        }
        self.core().drain_into(events);
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Vec<DialectEvent> {
        let mut events = Vec::new();
        self.feed_into(chunk, &mut events);
        events
    }

    /// Ends the stream: what was held back is read as final, open elements are closed (a call
    /// cut off is reported with its raw text). The machine is then ready for a new stream.
    pub fn finish(&mut self) -> Vec<DialectEvent> {
        let data = std::mem::take(&mut self.pending);
        self.run(&data, true);
        match &mut self.machine {
            Machine::Tagged(m) => m.finish(),
            Machine::Harmony(m) => m.finish(),
            Machine::Mistral(m) => m.finish(),
            Machine::LlamaJson(m) => m.finish(),
            Machine::Pythonic(m) => m.finish(),
        }
        let mut events = Vec::new();
        self.core().drain_into(&mut events);
        *self = Self::with_spans(self.options.clone(), self.spans);
        events
    }

    // The machine is picked by a match, not a `dyn StateMachine`: this runs for every chunk, and
    // the direct calls measured faster on token-sized chunks.
    fn core(&mut self) -> &mut Core {
        match &mut self.machine {
            Machine::Tagged(m) => m.core(),
            Machine::Harmony(m) => m.core(),
            Machine::Mistral(m) => m.core(),
            Machine::LlamaJson(m) => m.core(),
            Machine::Pythonic(m) => m.core(),
        }
    }

    /// Reads `data` (at the current offset); keeps what could not be decided yet.
    fn run(&mut self, data: &[u8], at_end: bool) {
        let mut clock = super::chars::CharClock::new(self.offset, self.offset_chars);
        let read = match &mut self.machine {
            Machine::Tagged(m) => m.run(data, &mut clock, at_end),
            Machine::Harmony(m) => m.run(data, &mut clock, at_end),
            Machine::Mistral(m) => m.run(data, &mut clock, at_end),
            Machine::LlamaJson(m) => m.run(data, &mut clock, at_end),
            Machine::Pythonic(m) => m.run(data, &mut clock, at_end),
        };
        let (offset, chars) = clock.at(data, read);
        self.offset = offset;
        self.offset_chars = chars;
        self.pending.extend_from_slice(&data[read..]);
    }
}

/// How reading a JSON call's payload stopped.
enum JsonStep {
    /// All the data is read.
    Read,
    /// `data[at..]` may be the start of an end marker: keep it for the next chunk.
    Wait(usize),
    /// End marker number `which` starts at `at`.
    End { at: usize, which: usize },
}

/// How a machine's state step ended.
enum Flow {
    /// Read up to here; go on (the state may have changed).
    Continue(usize),
    /// `data[at..]` may be the start of a marker: keep it for the next chunk.
    Wait(usize),
}

/// A dialect machine: a step per state, driven over the data by the one loop in [`run`].
///
/// [`run`]: StateMachine::run
trait StateMachine {
    fn core(&mut self) -> &mut Core;

    /// Reads from `input.data[i..]` in the current state.
    fn step(&mut self, input: &mut Input, i: usize) -> Flow;

    /// The end of the text: closes what is open.
    fn finish(&mut self);

    /// Whether the first thinking tag read was a closing one (`<think>`-like dialects only).
    fn saw_stray_close(&self) -> bool {
        false
    }

    /// Reads as much of `data` as can be decided; returns how much. Each machine gets its own
    /// copy of this loop, so `step` is a direct call.
    // Inlined into the match that picks the machine, as each machine's own loop was.
    #[inline(always)]
    fn run(&mut self, data: &[u8], clock: &mut super::chars::CharClock, at_end: bool) -> usize {
        let mut input = Input { data, clock, at_end };
        let mut i = 0;
        while i < data.len() {
            match self.step(&mut input, i) {
                Flow::Continue(n) => i = n,
                Flow::Wait(n) => return n,
            }
        }
        i
    }
}

/// What a machine's `run` sees: the data, where in the stream it sits, and whether more will come.
struct Input<'a, 'c> {
    data: &'a [u8],
    clock: &'c mut super::chars::CharClock,
    at_end: bool,
}

impl Input<'_, '_> {
    /// The stream byte offset of `data[i]`.
    fn abs(&self, i: usize) -> usize {
        self.clock.abs(i)
    }

    /// The (byte, char) stream offsets of `data[i]` (asked in increasing order).
    fn at(&mut self, i: usize) -> (usize, usize) {
        self.clock.at(self.data, i)
    }

    /// A marker search result with "could be a marker" read as "is not" at the end of the text.
    fn settle(&self, found: scan::Found) -> scan::Found {
        match found {
            scan::Found::Partial { .. } if self.at_end => scan::Found::None,
            found => found,
        }
    }
}

/// Parses a whole text in a dialect. With `StartThinking::Detect`, a text whose first thinking
/// tag is `</think>` is parsed again as starting inside reasoning (at most two passes).
///
/// ```
/// use agentmsg_core::parse::dialect::{parse, Dialect, DialectOptions};
/// let text = br#"Sure.<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>"#;
/// let doc = parse(text, &DialectOptions::new(Dialect::Hermes));
/// assert_eq!(doc.text(), b"Sure.");
/// ```
pub fn parse<'a>(text: &'a [u8], options: &DialectOptions) -> Document<'a> {
    let run = |options: DialectOptions| {
        let mut machine = DialectMachine::for_whole_text(options);
        let mut events = machine.feed(text);
        let stray = machine.saw_stray_thinking_close();
        events.extend(machine.finish());
        (events, stray)
    };
    let (mut events, stray) = run(options.clone());
    if options.start_in_thinking == StartThinking::Detect && stray {
        events = run(DialectOptions { start_in_thinking: StartThinking::Yes, ..options.clone() }).0;
    }
    Document::fold(core_events(events), text)
}

/// The Forge-machine events of a dialect event sequence (a call start carries no header there).
pub fn core_events(events: Vec<DialectEvent>) -> impl Iterator<Item = Event> {
    events.into_iter().map(|event| match event {
        DialectEvent::Event(event) => event,
        DialectEvent::ToolStart { index, .. } => Event::ToolStart { index },
    })
}

/// Parses many texts in parallel (rayon); the result is in input order.
pub fn parse_many<'a, T: AsRef<[u8]> + Sync>(texts: &'a [T], options: &DialectOptions) -> Vec<Document<'a>> {
    use rayon::prelude::*;
    texts.par_iter().map(|text| parse(text.as_ref(), options)).collect()
}
