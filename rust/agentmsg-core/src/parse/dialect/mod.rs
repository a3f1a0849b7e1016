//! Model dialects: the tool-call and reasoning notations of model families. Forge's has its own
//! machine ([`forge`]); the others are read by machines over one driver ([`driver`]), with the same
//! guarantees.
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

mod driver;
mod element_call;
mod gemma_call;
pub mod forge;
mod harmony;
mod held;
mod json_call;
mod json_list;
mod llama_json;
mod mistral;
pub(crate) mod named;
mod py_literal;
mod pythonic;
mod reading;
pub(crate) mod syntax;
mod tagged;
mod xtml;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_soups;
#[cfg(test)]
mod tests_families_b;
#[cfg(test)]
mod tests_xtml;
#[cfg(test)]
mod tests_families_c;

use std::sync::Arc;

use super::call::{Issue, IssueKind};
use super::chars::{count_chars, CharClock};
use super::event::Event;
use super::options::{Options, StartThinking};
use super::scan;
use named::Dialect;
use driver::{Core, StateMachine};
use syntax::Syntax;
pub use named::quoted;

/// The machine of one dialect.
#[derive(Clone, Debug)]
enum Machine {
    Tagged(tagged::TaggedMachine),
    Harmony(harmony::HarmonyMachine),
    Mistral(mistral::MistralMachine),
    LlamaJson(llama_json::LlamaJsonMachine),
    Pythonic(pythonic::PythonicMachine),
    JsonList(json_list::JsonListMachine),
    Xtml(xtml::XtmlMachine),
}

/// An incremental parser of one dialect other than Forge's: `feed` chunks, then `finish`; ready
/// for a new stream after `finish`.
#[derive(Clone, Debug)]
pub struct DialectMachine {
    options: Options,
    spans: bool,
    machine: Machine,
    /// Unread bytes: a possible marker prefix held back from the last chunk.
    pending: Vec<u8>,
    /// Stream offsets (bytes, characters) of `pending[0]`.
    offset: usize,
    offset_chars: usize,
    /// Past `max_calls`: the rest of the text, from the first call over the limit.
    rest: Option<Rest>,
    /// Stream ranges `(start, len)` not yet read where a marker's spelling is text (see
    /// [`Self::feed_into_spelled`]).
    spelled: Vec<(usize, usize)>,
}

/// The text from the first call past `max_calls` on, kept raw for its one issue.
#[derive(Clone, Debug)]
struct Rest {
    index: usize,
    start: usize,
    start_chars: usize,
    raw: Vec<u8>,
}

impl DialectMachine {
    /// A streaming machine; `StartThinking::Detect` counts as `No` (a stream cannot look ahead).
    pub(crate) fn new(options: Options) -> Self {
        Self::with_spans(options, false)
    }

    /// A machine for one whole text: text and thinking are reported as ranges of the input.
    pub(crate) fn for_whole_text(options: Options) -> Self {
        Self::with_spans(options, true)
    }

    fn with_spans(options: Options, spans: bool) -> Self {
        let core = Core::new(spans, options.tools.clone(), options.forge.max_calls);
        let start_in_thinking = options.start_in_thinking == StartThinking::Yes;
        let syntax = match (&options.syntax, options.dialect) {
            (Some(syntax), _) => Some(Arc::clone(syntax)),
            (None, Dialect::Custom) => Syntax::of(Dialect::Hermes).map(Arc::new),
            (None, dialect) => Syntax::of(dialect).map(Arc::new),
        };
        let machine = match (syntax, options.dialect) {
            (Some(syntax), _) => Machine::Tagged(tagged::TaggedMachine::new(core, syntax, start_in_thinking, options.strict)),
            (None, Dialect::Mistral) => {
                Machine::Mistral(mistral::MistralMachine::new(core, mistral::MISTRAL, start_in_thinking, options.strict))
            }
            (None, Dialect::Magistral) => {
                Machine::Mistral(mistral::MistralMachine::new(core, mistral::MAGISTRAL, start_in_thinking, options.strict))
            }
            (None, Dialect::Cohere) => {
                Machine::Mistral(mistral::MistralMachine::new(core, mistral::COHERE, start_in_thinking, options.strict))
            }
            (None, Dialect::Llama3Json) => Machine::LlamaJson(llama_json::LlamaJsonMachine::new(core)),
            (None, Dialect::Pythonic) => Machine::Pythonic(pythonic::PythonicMachine::new(core, pythonic::PYTHONIC, false)),
            (None, Dialect::Lfm2) => Machine::Pythonic(pythonic::PythonicMachine::new(core, pythonic::LFM2, start_in_thinking)),
            (None, Dialect::Granite) => list_machine(core, json_list::GRANITE, start_in_thinking, options.strict),
            (None, Dialect::Phi4Mini) => list_machine(core, json_list::PHI4_MINI, start_in_thinking, options.strict),
            (None, Dialect::Xlam) => list_machine(core, json_list::XLAM, start_in_thinking, options.strict),
            (None, Dialect::Hunyuan) => list_machine(core, json_list::HUNYUAN, start_in_thinking, options.strict),
            (None, Dialect::Apertus) => list_machine(core, json_list::APERTUS, start_in_thinking, options.strict),
            (None, Dialect::Jamba) => list_machine(core, json_list::JAMBA, start_in_thinking, options.strict),
            (None, Dialect::Internlm2) => list_machine(core, json_list::INTERNLM2, start_in_thinking, options.strict),
            (None, Dialect::CommandR) => list_machine(core, json_list::COMMAND_R, start_in_thinking, options.strict),
            (None, Dialect::GptOss) => Machine::Harmony(harmony::HarmonyMachine::new(core)),
            (None, Dialect::KimiK3) => Machine::Xtml(xtml::XtmlMachine::new(core, start_in_thinking, options.strict)),
            // Never reached: Forge's dialect has its own machine and every marker dialect has a
            // syntax. Named one by one, so that a new dialect must choose its machine here.
            (
                None,
                Dialect::Forge
                | Dialect::Hermes
                | Dialect::Qwen3Coder
                | Dialect::DeepseekV3
                | Dialect::DeepseekV31
                | Dialect::KimiK2
                | Dialect::Glm45
                | Dialect::DeepseekV32
                | Dialect::DeepseekV4
                | Dialect::Gemma4
                | Dialect::FunctionGemma
                | Dialect::Step3p5
                | Dialect::SeedOss
                | Dialect::MinimaxM2
                | Dialect::Longcat
                | Dialect::Hy3
                | Dialect::Step3
                | Dialect::Custom,
            ) => Machine::Harmony(harmony::HarmonyMachine::new(core)),
        };
        Self { options, spans, machine, pending: Vec::new(), offset: 0, offset_chars: 0, rest: None, spelled: Vec::new() }
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Whether the first thinking tag read was a closing one (see [`StartThinking::Detect`]).
    pub fn saw_stray_thinking_close(&self) -> bool {
        match &self.machine {
            Machine::Tagged(m) => m.saw_stray_close(),
            Machine::Mistral(m) => m.saw_stray_close(),
            Machine::Pythonic(m) => m.saw_stray_close(),
            Machine::JsonList(m) => m.saw_stray_close(),
            Machine::Xtml(m) => m.saw_stray_close(),
            Machine::Harmony(_) | Machine::LlamaJson(_) => false,
        }
    }

    /// Reads a chunk; appends the events it completes.
    pub fn feed_into(&mut self, chunk: &[u8], events: &mut Vec<Event>) {
        if let Some(rest) = &mut self.rest {
            rest.raw.extend_from_slice(chunk);
            return;
        }
        if self.pending.is_empty() {
            self.run(chunk, false);
        } else {
            let mut data = std::mem::take(&mut self.pending);
            data.extend_from_slice(chunk);
            self.run(&data, false);
        }
        events.append(&mut self.core().out.events);
    }

    /// [`Self::feed_into`], where no marker is read at the stream ranges `spelled` (`(start,
    /// len)`, in this chunk or held back before it): there a marker's spelling is text. Token
    /// ids in ([`crate::ids`]) give the places where ordinary tokens spell an added token.
    pub fn feed_into_spelled(&mut self, chunk: &[u8], spelled: &[(usize, usize)], events: &mut Vec<Event>) {
        self.spelled.extend_from_slice(spelled);
        self.feed_into(chunk, events);
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut events = Vec::new();
        self.feed_into(chunk, &mut events);
        events
    }

    /// Ends the stream: what was held back is read as final, open elements are closed (a call
    /// cut off is reported with its raw text). The machine is then ready for a new stream.
    pub fn finish(&mut self) -> Vec<Event> {
        let data = std::mem::take(&mut self.pending);
        if self.rest.is_none() {
            self.run(&data, true);
        }
        if let Some(rest) = self.rest.take() {
            let max_calls = self.options.forge.max_calls.unwrap_or_default();
            let issue = Issue {
                kind: IssueKind::TooManyCalls,
                message: format!("more than {max_calls} tool calls (max_calls): this call and the rest of the text are not parsed"),
                span: (rest.start, rest.start + rest.raw.len()),
                char_span: (rest.start_chars, rest.start_chars + count_chars(&rest.raw)),
                raw: rest.raw,
            };
            let mut events = std::mem::take(&mut self.core().out.events);
            events.push(Event::ToolEnd { index: rest.index, result: Err(issue) });
            *self = Self::with_spans(self.options.clone(), self.spans);
            return events;
        }
        match &mut self.machine {
            Machine::Tagged(m) => m.finish(),
            Machine::Harmony(m) => m.finish(),
            Machine::Mistral(m) => m.finish(),
            Machine::LlamaJson(m) => m.finish(),
            Machine::Pythonic(m) => m.finish(),
            Machine::JsonList(m) => m.finish(),
            Machine::Xtml(m) => m.finish(),
        }
        let mut events = Vec::new();
        events.append(&mut self.core().out.events);
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
            Machine::JsonList(m) => m.core(),
            Machine::Xtml(m) => m.core(),
        }
    }

    /// Reads `data` (at the current offset); keeps what could not be decided yet.
    fn run(&mut self, data: &[u8], at_end: bool) {
        let mut clock = CharClock::new(self.offset, self.offset_chars);
        let mut read_data = |clock: &mut CharClock| match &mut self.machine {
            Machine::Tagged(m) => m.run(data, clock, at_end),
            Machine::Harmony(m) => m.run(data, clock, at_end),
            Machine::Mistral(m) => m.run(data, clock, at_end),
            Machine::LlamaJson(m) => m.run(data, clock, at_end),
            Machine::Pythonic(m) => m.run(data, clock, at_end),
            Machine::JsonList(m) => m.run(data, clock, at_end),
            Machine::Xtml(m) => m.run(data, clock, at_end),
        };
        let read = if self.spelled.is_empty() {
            read_data(&mut clock)
        } else {
            let spelled = std::mem::take(&mut self.spelled);
            let read = scan::reading_not_markers(data, self.offset, &spelled, || read_data(&mut clock));
            // What was read is never read again: only the ranges held back stay.
            let offset = clock.abs(read);
            self.spelled = spelled.into_iter().filter(|&(start, _)| start >= offset).collect();
            read
        };
        if let Some(limit) = self.core().limit.take() {
            // Past `max_calls`: what the machine read after the call opened is dropped, and the
            // call's bytes with everything after them become the rest.
            self.core().out.events.truncate(limit.events);
            let mut raw = Vec::new();
            if limit.start < self.offset {
                raw.extend_from_slice(&limit.prefix[..(self.offset - limit.start).min(limit.prefix.len())]);
            }
            raw.extend_from_slice(&data[limit.start.saturating_sub(self.offset)..]);
            self.rest = Some(Rest { index: limit.index, start: limit.start, start_chars: limit.start_chars, raw });
            return;
        }
        let (offset, chars) = clock.at(data, read);
        self.offset = offset;
        self.offset_chars = chars;
        self.pending.extend_from_slice(&data[read..]);
    }
}

fn list_machine(core: Core, syntax: json_list::ListSyntax, start_in_thinking: bool, strict: bool) -> Machine {
    Machine::JsonList(json_list::JsonListMachine::new(core, syntax, start_in_thinking, strict))
}
