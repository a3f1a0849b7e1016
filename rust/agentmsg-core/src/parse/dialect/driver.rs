//! What every dialect machine but Forge's shares: the [`Core`] (output, call numbering, the
//! decoding of a call once its end is read) and the one loop, [`StateMachine::run`], that drives
//! a machine's steps over the data.

use std::sync::Arc;

use jiter::JsonValue;

use super::element_call::ElementCall;
use super::gemma_call::GemmaCall;
use super::json_call::JsonCall;
use super::py_literal;
use super::xtml::XtmlCall;
use crate::parse::call::{call_id, holds_infinity, out_of_range, parse_json, CallHeader, Issue, IssueKind, ToolCall};
use crate::parse::chars::{count_chars, CharClock};
use crate::parse::output::Output;
use crate::parse::scan;
use crate::parse::schema::Tools;
use crate::parse::event::Event;

/// The payload reader of an open call.
#[derive(Clone, Debug)]
pub(crate) enum Payload {
    Json(JsonCall),
    Element(ElementCall),
    Pythonic(py_literal::ArgsReader),
    Gemma(GemmaCall),
    Xtml(XtmlCall),
}

/// A call being read: where it started, its raw bytes so far, and what was streamed of it.
#[derive(Clone, Debug)]
pub(crate) struct OpenCall {
    pub(crate) index: usize,
    pub(crate) start: usize,
    pub(crate) start_chars: usize,
    pub(crate) raw: Vec<u8>,
    pub(crate) payload: Payload,
    /// Id and name, once the name is complete.
    pub(crate) header: Option<(String, String)>,
    /// How much of the arguments text was reported.
    pub(crate) emitted: usize,
}

/// What every dialect machine shares: the output (text stripping, thinking blocks), call
/// numbering and the tool definitions.
#[derive(Clone, Debug)]
pub(crate) struct Core {
    pub(crate) out: Output,
    pub(crate) calls: usize,
    pub(crate) tools: Option<Arc<Tools>>,
    /// At most this many calls are read (`max_calls`).
    pub(crate) max_calls: Option<usize>,
    /// The first call past `max_calls`, once opened: the machine stops there.
    pub(crate) limit: Option<Limit>,
}

/// Where the first call past `max_calls` opened: from there on the text is one issue.
#[derive(Clone, Debug)]
pub(crate) struct Limit {
    pub(crate) index: usize,
    pub(crate) start: usize,
    pub(crate) start_chars: usize,
    /// The call's bytes when it opened (they may have come in earlier chunks).
    pub(crate) prefix: Vec<u8>,
    /// How many events came before it: the later ones are dropped.
    pub(crate) events: usize,
}

impl Core {
    pub(crate) fn new(spans: bool, tools: Option<Arc<Tools>>, max_calls: Option<usize>) -> Self {
        Self { out: Output::new(spans), calls: 0, tools, max_calls, limit: None }
    }

    /// Opens call number `calls` starting at stream offset (`start`, `start_chars`).
    pub(crate) fn open_call(&mut self, start: usize, start_chars: usize, raw: Vec<u8>, payload: Payload) -> OpenCall {
        self.out.end_text();
        let index = self.calls;
        self.calls += 1;
        if self.limit.is_none() && self.max_calls.is_some_and(|max| index >= max) {
            let events = self.out.events.len();
            self.limit = Some(Limit { index, start, start_chars, prefix: raw.clone(), events });
        }
        OpenCall { index, start, start_chars, raw, payload, header: None, emitted: 0 }
    }

    pub(crate) fn start_call(&mut self, call: &mut OpenCall, name: &str) {
        self.start_call_as(call, None, name);
    }

    /// Starts a call with the id the model wrote (kimi_k2) or, without one, an id that is
    /// deterministic and the same for every chunking: from the call's place and its name.
    pub(crate) fn start_call_as(&mut self, call: &mut OpenCall, id: Option<String>, name: &str) {
        let id = id.unwrap_or_else(|| call_id(call.index, format!("{}:{name}", call.start).as_bytes()));
        let header = CallHeader { id: id.clone(), name: name.to_owned() };
        call.header = Some((id, name.to_owned()));
        self.out.push(Event::ToolStart { index: call.index, header: Some(header) });
    }

    /// A call reader stopped at `stop` waiting for more (`Step::Wait`): the call's raw text grows
    /// by `data[i..stop]` and its progress goes out. At the end of the input nothing more will
    /// come, so what was held back is the cut-off call's too.
    pub(crate) fn call_waits(&mut self, call: &mut OpenCall, input: &Input, i: usize, stop: usize) -> Flow {
        let data = input.data;
        call.raw.extend_from_slice(&data[i..stop]);
        self.progress(call);
        if input.at_end {
            call.raw.extend_from_slice(&data[stop..]);
            return Flow::Continue(data.len());
        }
        Flow::Wait(stop)
    }

    /// Reports a name that just completed and the arguments text that arrived.
    pub(crate) fn progress(&mut self, call: &mut OpenCall) {
        if call.header.is_none() {
            let name = match &mut call.payload {
                Payload::Json(json) => json.take_name().map(str::to_owned),
                Payload::Element(element) => element.take_name().map(str::to_owned),
                Payload::Gemma(gemma) => gemma.take_name().map(str::to_owned),
                Payload::Xtml(xtml) => xtml.take_name().map(str::to_owned),
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
            Payload::Gemma(gemma) => &gemma.arguments,
            Payload::Xtml(xtml) => &xtml.arguments,
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
    pub(crate) fn read_json_call(
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
    pub(crate) fn end_call(&mut self, mut call: OpenCall) {
        self.progress(&mut call);
        let result = self.decode(&mut call);
        self.close(call, result);
    }

    /// Ends a call cut off by the end of the text.
    pub(crate) fn cut_off(&mut self, call: OpenCall, what: &str) {
        let result = Err((IssueKind::UnclosedTool, format!("the text ended inside {what}")));
        self.close(call, result);
    }

    pub(crate) fn close(&mut self, call: OpenCall, result: Result<ToolCall, (IssueKind, String)>) {
        let result = result.map_err(|(kind, message)| {
            let end = call.start + call.raw.len();
            let end_chars = call.start_chars + count_chars(&call.raw);
            Issue { kind, message, span: (call.start, end), char_span: (call.start_chars, end_chars), raw: call.raw }
        });
        self.out.push(Event::ToolEnd { index: call.index, result });
    }

    pub(crate) fn decode(&mut self, call: &mut OpenCall) -> Result<ToolCall, (IssueKind, String)> {
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
                let input = match parse_json(&element.arguments) {
                    Ok(JsonValue::Object(object)) => object,
                    _ => return Err((IssueKind::InvalidXml, "malformed call: the arguments did not close".into())),
                };
                (element.name.clone(), input, element.arguments.clone(), schema_errors(&element.schema_errors))
            }
            Payload::Gemma(gemma) => {
                if let Some(error) = &gemma.error {
                    return Err((IssueKind::InvalidJson, format!("malformed call: {error}")));
                }
                let input = match parse_json(&gemma.arguments) {
                    Ok(JsonValue::Object(object)) => object,
                    _ => return Err((IssueKind::InvalidJson, "malformed call: the arguments did not close".into())),
                };
                (gemma.name.clone(), input, gemma.arguments.clone(), schema_errors(&gemma.schema_errors))
            }
            Payload::Xtml(xtml) => {
                if let Some(error) = &xtml.error {
                    return Err((xtml.issue_kind(), format!("malformed call: {error}")));
                }
                let input = match parse_json(&xtml.arguments) {
                    Ok(JsonValue::Object(object)) => object,
                    _ => return Err((IssueKind::InvalidXml, "malformed call: the arguments did not close".into())),
                };
                (xtml.name.clone(), input, xtml.arguments.clone(), schema_errors(&xtml.schema_errors))
            }
            Payload::Pythonic(reader) => match parse_json(&reader.out) {
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
        if input.iter().chain(&metadata).any(|(_, value)| holds_infinity(value)) {
            return Err(out_of_range());
        }
        if let Some(tools) = &self.tools {
            if !tools.knows(&name) {
                metadata.push(("unknown_tool".into(), JsonValue::Bool(true)));
            }
        }
        let id = call.header.as_ref().map(|(id, _)| id.clone()).unwrap_or_default();
        Ok(ToolCall { id, name, server_name: "local".into(), input, metadata: Arc::new(metadata) })
    }
}

/// The call's `metadata` for values that did not convert to their schema type.
fn schema_errors(errors: &[String]) -> Vec<(std::borrow::Cow<'static, str>, crate::parse::call::Json)> {
    if errors.is_empty() {
        return Vec::new();
    }
    let errors = errors.iter().map(|e| JsonValue::Str(e.clone().into())).collect();
    vec![("schema_errors".into(), JsonValue::Array(Arc::new(errors)))]
}

fn arguments_of(payload: &Payload) -> &[u8] {
    match payload {
        Payload::Json(json) => &json.arguments,
        Payload::Element(element) => &element.arguments,
        Payload::Gemma(gemma) => &gemma.arguments,
        Payload::Xtml(xtml) => &xtml.arguments,
        Payload::Pythonic(reader) => &reader.out,
    }
}

/// How reading a JSON call's payload stopped.
pub(crate) enum JsonStep {
    /// All the data is read.
    Read,
    /// `data[at..]` may be the start of an end marker: keep it for the next chunk.
    Wait(usize),
    /// End marker number `which` starts at `at`.
    End { at: usize, which: usize },
}

/// How a machine's state step ended.
pub(crate) enum Flow {
    /// Read up to here; go on (the state may have changed).
    Continue(usize),
    /// `data[at..]` may be the start of a marker: keep it for the next chunk.
    Wait(usize),
}

/// A dialect machine: a step per state, driven over the data by the one loop in [`run`].
///
/// [`run`]: StateMachine::run
pub(crate) trait StateMachine {
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
    fn run(&mut self, data: &[u8], clock: &mut CharClock, at_end: bool) -> usize {
        let mut input = Input { data, clock, at_end };
        let mut i = 0;
        while i < data.len() {
            match self.step(&mut input, i) {
                // Past `max_calls` nothing more is read: the rest is kept raw.
                Flow::Continue(n) if self.core().limit.is_some() => return n,
                Flow::Continue(n) => i = n,
                Flow::Wait(n) => return n,
            }
        }
        i
    }
}

/// What a machine's `run` sees: the data, where in the stream it sits, and whether more will come.
pub(crate) struct Input<'a, 'c> {
    pub(crate) data: &'a [u8],
    pub(crate) clock: &'c mut CharClock,
    pub(crate) at_end: bool,
}

impl Input<'_, '_> {
    /// The stream byte offset of `data[i]`.
    pub(crate) fn abs(&self, i: usize) -> usize {
        self.clock.abs(i)
    }

    /// The (byte, char) stream offsets of `data[i]` (asked in increasing order).
    pub(crate) fn at(&mut self, i: usize) -> (usize, usize) {
        self.clock.at(self.data, i)
    }

    /// A marker search result with "could be a marker" read as "is not" at the end of the text.
    pub(crate) fn settle(&self, found: scan::Found) -> scan::Found {
        match found {
            scan::Found::Partial { .. } if self.at_end => scan::Found::None,
            found => found,
        }
    }
}

