//! Forge's incremental state machine, behind both streaming and whole-text parsing.
//!
//! Linear by design: plain text is skipped with `memchr` to the next `<` or newline; a possible
//! tag is matched byte by byte in a small buffer (never by looking back into the input); a
//! possible bracket line is held once and, if it turns out not to be a thought, fed through the
//! machine once more. JSON string and escape state survive chunk boundaries, so a payload is
//! never rescanned across chunks. A JSON call that is whole in its chunk is read once by jiter
//! instead; only if that one attempt per call fails is the payload scanned byte by byte. Each
//! input byte is therefore examined a bounded number of times whatever the chunking.

use jiter::{Jiter, JsonValue};
use memchr::{memchr, memchr2, memchr3, memrchr};

use super::bracket::{BracketLine, Scan};
use super::payload;
use crate::parse::call::{call_id, into_pairs, Issue, IssueKind};
use crate::parse::chars::CharClock;
use crate::parse::output::{is_space, Output};
use crate::parse::event::Event;
use crate::parse::options::{Options, StartThinking, ToolFormat};

const TOOL_OPEN: &[u8] = b"<tool>";
const TOOL_CLOSE: &[u8] = b"</tool>";
const THINK_OPEN: &[u8] = b"<think>";
const THINKING_OPEN: &[u8] = b"<thinking>";
const THINK_CLOSE: &[u8] = b"</think>";
const THINKING_CLOSE: &[u8] = b"</thinking>";
const CDATA_OPEN: &[u8] = b"<![CDATA[";
const BOM: &[u8] = b"\xef\xbb\xbf";

const TEXT_TAGS: &[&[u8]] = &[TOOL_OPEN, THINK_OPEN, THINKING_OPEN, THINK_CLOSE, THINKING_CLOSE];
const TEXT_TAGS_NO_THINKING: &[&[u8]] = &[TOOL_OPEN];
const CLOSE_THINK: &[&[u8]] = &[THINK_CLOSE];
const CLOSE_THINKING: &[&[u8]] = &[THINKING_CLOSE];
const CLOSE_ANY_THINKING: &[&[u8]] = &[THINK_CLOSE, THINKING_CLOSE];
const PAYLOAD_TAGS: &[&[u8]] = &[TOOL_CLOSE];
const XML_PAYLOAD_TAGS: &[&[u8]] = &[TOOL_CLOSE, CDATA_OPEN];

enum TagMatch {
    Full(&'static [u8]),
    Prefix,
    No,
}

/// Matches `buf` (a `<` and the bytes after it) against the candidate tags. Cheap per byte:
/// the tags are short and differ early, so a byte comparison loop beats `memcmp` calls.
fn match_tag(buf: &[u8], candidates: &[&'static [u8]]) -> TagMatch {
    let mut prefix = false;
    for &tag in candidates {
        if tag.len() >= buf.len() && tag.iter().zip(buf).all(|(a, b)| a == b) {
            if tag.len() == buf.len() {
                return TagMatch::Full(tag);
            }
            prefix = true;
        }
    }
    if prefix {
        TagMatch::Prefix
    } else {
        TagMatch::No
    }
}

/// Where the text mode is within the current line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    /// Only blanks so far.
    Start,
    /// A run of `n` fence characters `ch` at the start of the line.
    Run { ch: u8, n: usize },
    /// A closing fence was seen; the line must end blank for it to close.
    CloseRest,
    Mid,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fence {
    ch: u8,
    len: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Payload {
    /// Before the first non-blank byte.
    Start,
    Json { in_string: bool, escape: bool },
    Xml { in_cdata: bool, close_brackets: u8 },
    Raw,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Text,
    Bracket,
    Thinking { closers: &'static [&'static [u8]] },
    Tool(Payload),
    /// Past `max_calls`: everything to the end is the raw text of one issue (kept in `payload`).
    Rest,
}

/// The streaming parser: [`feed`](Self::feed) chunks, then [`finish`](Self::finish).
///
/// ```
/// use agentmsg_core::parse::{Event, Options, StreamMachine};
/// let mut machine = StreamMachine::new(Options::default());
/// let mut events = machine.feed(b"Hi <thi");
/// assert_eq!(events, vec![Event::Text { block: 0, text: b"Hi".to_vec() }]);
/// events = machine.feed(b"nk>hm</think>");
/// assert_eq!(events[0], Event::Thinking { index: 0, text: b"hm".to_vec() });
/// ```
#[derive(Clone)]
pub struct ForgeMachine {
    options: Options,
    mode: Mode,
    line: Line,
    fence: Option<Fence>,
    /// Bytes of a possible tag, from its `<`; empty when none is being matched.
    partial: Vec<u8>,
    partial_start: (usize, usize),
    bracket: BracketLine,
    /// Payload of the open tool call, and how much of it was already sent as deltas.
    payload: Vec<u8>,
    payload_sent: usize,
    tool_start: (usize, usize),
    tool_count: usize,
    out: Output,
    /// Stream (byte, char) offset of the next byte fed.
    pos: usize,
    chars: usize,
    bom_matched: usize,
    bom_done: bool,
    /// Whether the first thinking tag seen in text was a closing one.
    first_thinking_tag_closes: Option<bool>,
    /// While a JSON call is open and a `</tool>` was seen inside one of its strings: the
    /// machine as if the call had ended there, fed the same input since. Used if the call never
    /// closes (an unterminated string swallowed its `</tool>`).
    fallback: Option<Box<ForgeMachine>>,
    /// Where in the current top-level chunk the fallback starts reading (spawned in it).
    fallback_from: Option<usize>,
    /// This machine is a fallback: it never spawns one (so at most two machines run).
    is_fallback: bool,
    /// A held bracket line is being replayed (no fallback is spawned in replayed bytes).
    replaying: bool,
    /// Stream offsets `(from, to)`: no `<` in `from..to` (see [`Self::next_lt`]).
    no_lt: (usize, usize),
}

/// The first line start in `data[from..end]` (the index after a newline) whose first non-blank
/// byte is `[`, a backtick or a tilde; `data[from]` is mid-line.
fn special_line_start(data: &[u8], from: usize, end: usize) -> Option<usize> {
    let mut pos = from;
    while let Some(k) = memchr3(b'[', b'`', b'~', &data[pos..end]) {
        let candidate = pos + k;
        let mut back = candidate;
        while back > from && matches!(data[back - 1], b' ' | b'\t') {
            back -= 1;
        }
        if back > from && data[back - 1] == b'\n' {
            return Some(back);
        }
        pos = candidate + 1;
    }
    None
}

/// The line state after mid-line text `data[from..]` that holds no special line start.
fn line_at_end(data: &[u8], from: usize) -> Line {
    match memrchr(b'\n', &data[from..]) {
        Some(k) if data[from + k + 1..].iter().all(|b| matches!(b, b' ' | b'\t')) => Line::Start,
        _ => Line::Mid,
    }
}

impl ForgeMachine {
    pub fn new(options: Options) -> Self {
        Self::with_output(options, Output::new(false))
    }

    /// A machine for one whole input that the caller holds (fed in one or more chunks): text
    /// and thinking are reported as [`Event::TextSpan`] / [`Event::ThinkingSpan`] ranges of that
    /// input instead of copies, and calls without deltas.
    pub fn for_whole_text(options: Options) -> Self {
        Self::with_output(options, Output::new(true))
    }

    fn with_output(options: Options, out: Output) -> Self {
        let mut machine = Self {
            options,
            mode: Mode::Text,
            line: Line::Start,
            fence: None,
            partial: Vec::new(),
            partial_start: (0, 0),
            bracket: BracketLine::default(),
            payload: Vec::new(),
            payload_sent: 0,
            tool_start: (0, 0),
            tool_count: 0,
            out,
            pos: 0,
            chars: 0,
            bom_matched: 0,
            bom_done: false,
            first_thinking_tag_closes: None,
            fallback: None,
            fallback_from: None,
            is_fallback: false,
            replaying: false,
            no_lt: (0, 0),
        };
        if machine.options.start_in_thinking == StartThinking::Yes {
            machine.out.begin_thinking();
            machine.mode = Mode::Thinking { closers: CLOSE_ANY_THINKING };
        }
        machine
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Whether the first thinking tag outside thinking was a closing tag with no opener (the
    /// sign of a prompt that already opened the thinking block).
    pub fn saw_stray_thinking_close(&self) -> bool {
        self.first_thinking_tag_closes == Some(true)
    }

    /// Reads the next chunk and returns the events it completes.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut events = Vec::new();
        self.feed_into(chunk, &mut events);
        events
    }

    /// [`feed`](Self::feed) that appends the events to `events` (a caller can reuse one buffer).
    pub fn feed_into(&mut self, chunk: &[u8], events: &mut Vec<Event>) {
        std::mem::swap(&mut self.out.events, events);
        let data = self.skip_bom(chunk);
        let mut clock = CharClock::new(self.pos, self.chars);
        self.fallback_from = None;
        self.run(data, &mut clock);
        let (pos, chars) = clock.at(data, data.len());
        self.pos = pos;
        self.chars = chars;
        if let Some(fallback) = self.fallback.as_mut() {
            let from = self.fallback_from.take().unwrap_or(0);
            fallback.run_chunk(&data[from..]);
        }
        self.send_payload();
        std::mem::swap(&mut self.out.events, events);
    }

    /// Ends the stream: flushes what was held back and reports an unclosed call or thinking
    /// block. The machine is then ready for a new stream with the same options.
    pub fn finish(&mut self) -> Vec<Event> {
        if !self.bom_done {
            self.bom_done = true;
            let held = &BOM[..self.bom_matched];
            let mut clock = CharClock::new(0, 0);
            self.run(held, &mut clock);
            (self.pos, self.chars) = clock.at(held, held.len());
        }
        if self.mode == Mode::Bracket {
            self.end_bracket_line();
        }
        if let (Mode::Tool(_), Some(mut fallback)) = (self.mode, self.fallback.take()) {
            // The call never closed: it ends at the first `</tool>` inside its strings, and
            // what followed is read as the fallback read it.
            self.payload.extend_from_slice(&std::mem::take(&mut self.partial));
            self.send_payload();
            let mut events = std::mem::take(&mut self.out.events);
            events.extend(fallback.finish());
            let stray = fallback.first_thinking_tag_closes;
            let spans = self.out.spans();
            *self = Self::with_output(self.options.clone(), Output::new(spans));
            self.first_thinking_tag_closes = stray;
            return events;
        }
        let held = std::mem::take(&mut self.partial);
        match self.mode {
            Mode::Text | Mode::Bracket => self.out.text(&held, self.partial_start.0),
            Mode::Rest => {
                let max_calls = self.options.forge.max_calls.unwrap_or_default();
                let issue = Issue {
                    kind: IssueKind::TooManyCalls,
                    message: format!(
                        "more than {max_calls} tool calls (max_calls): this <tool> and the rest of the text are not parsed"
                    ),
                    span: (self.tool_start.0, self.pos),
                    char_span: (self.tool_start.1, self.chars),
                    raw: std::mem::take(&mut self.payload),
                };
                self.out.push(Event::ToolEnd { index: self.tool_count - 1, result: Err(issue) });
            }
            Mode::Thinking { .. } => {
                self.out.thinking(&held, self.partial_start.0);
                self.out.end_thinking(false);
            }
            Mode::Tool(_) => {
                self.payload.extend_from_slice(&held);
                self.send_payload();
                let mut raw = Vec::with_capacity(TOOL_OPEN.len() + self.payload.len());
                raw.extend_from_slice(TOOL_OPEN);
                raw.extend_from_slice(&self.payload);
                let issue = Issue {
                    kind: IssueKind::UnclosedTool,
                    message: "unclosed <tool>: no </tool> before the end of the text".to_string(),
                    span: (self.tool_start.0, self.pos),
                    char_span: (self.tool_start.1, self.chars),
                    raw,
                };
                self.out.push(Event::ToolEnd { index: self.tool_count - 1, result: Err(issue) });
            }
        }
        self.out.end_text();
        let events = std::mem::take(&mut self.out.events);
        let stray = self.first_thinking_tag_closes;
        let spans = self.out.spans();
        *self = Self::with_output(self.options.clone(), Output::new(spans));
        self.first_thinking_tag_closes = stray;
        events
    }

    /// Runs a fallback over the rest of a chunk (its position is where that rest starts).
    fn run_chunk(&mut self, data: &[u8]) {
        let mut clock = CharClock::new(self.pos, self.chars);
        self.run(data, &mut clock);
        (self.pos, self.chars) = clock.at(data, data.len());
    }

    fn may_spawn_fallback(&self) -> bool {
        !self.is_fallback && !self.replaying && self.fallback.is_none()
    }

    /// At a `</tool>` inside a JSON string (ending at stream offset `end`, chunk index `next`):
    /// keeps a copy of the machine in which the call ended there.
    fn spawn_fallback(&mut self, end: (usize, usize), next: usize) {
        if !self.may_spawn_fallback() {
            return;
        }
        // What this machine already reported is shared history, not the fallback's to repeat
        // (and not copied: a whole-text parse holds all its events until the end).
        let events = std::mem::take(&mut self.out.events);
        let mut fallback = self.clone();
        self.out.events = events;
        fallback.is_fallback = true;
        fallback.partial.clear();
        fallback.payload_sent = fallback.payload.len();
        fallback.close_tool(end);
        (fallback.pos, fallback.chars) = end;
        self.fallback = Some(Box::new(fallback));
        self.fallback_from = Some(next);
    }

    fn skip_bom<'a>(&mut self, chunk: &'a [u8]) -> &'a [u8] {
        let mut data = chunk;
        while !self.bom_done {
            match data.first() {
                None => break,
                Some(&b) if b == BOM[self.bom_matched] => {
                    self.bom_matched += 1;
                    data = &data[1..];
                    if self.bom_matched == BOM.len() {
                        self.bom_done = true;
                        self.pos = BOM.len();
                        self.chars = 1;
                    }
                }
                Some(_) => {
                    self.bom_done = true;
                    // A false start: what looked like a BOM is input after all.
                    let held = &BOM[..self.bom_matched];
                    let mut clock = CharClock::new(0, 0);
                    self.run(held, &mut clock);
                    (self.pos, self.chars) = clock.at(held, held.len());
                }
            }
        }
        data
    }

    fn run(&mut self, data: &[u8], clock: &mut CharClock) {
        let mut i = 0;
        while i < data.len() {
            i = match self.mode {
                Mode::Text => self.text(data, i, clock),
                Mode::Bracket => self.bracket_line(data, i),
                Mode::Thinking { closers } => self.thinking(data, i, closers, clock),
                Mode::Tool(_) => self.tool(data, i, clock),
                Mode::Rest => {
                    self.payload.extend_from_slice(&data[i..]);
                    data.len()
                }
            };
        }
    }

    fn text_tags(&self) -> &'static [&'static [u8]] {
        if self.options.forge.thinking.tags() {
            TEXT_TAGS
        } else {
            TEXT_TAGS_NO_THINKING
        }
    }

    /// Adds byte `b` to the held partial tag and matches it against `tags`. A full tag is
    /// dropped from the hold (the caller acts on it); a prefix is held on; anything else was no
    /// tag: the held bytes before `b` go out through `emit` (as text or thinking, whichever mode
    /// holds them) and `b` is to be read afresh.
    fn extend_partial(&mut self, b: u8, tags: &[&'static [u8]], emit: fn(&mut Output, &[u8], usize)) -> TagMatch {
        self.partial.push(b);
        let matched = match_tag(&self.partial, tags);
        match matched {
            TagMatch::Full(_) => self.partial.clear(),
            TagMatch::Prefix => {}
            TagMatch::No => {
                self.partial.pop();
                emit(&mut self.out, &self.partial, self.partial_start.0);
                self.partial.clear();
            }
        }
        matched
    }

    /// Text mode from `data[i]`; returns where it stopped (the end, or after a mode change).
    fn text(&mut self, data: &[u8], mut i: usize, clock: &mut CharClock) -> usize {
        let mut run = i; // start of text not yet handed to the output
        while i < data.len() {
            if !self.partial.is_empty() {
                match self.extend_partial(data[i], self.text_tags(), Output::text) {
                    TagMatch::Full(tag) => {
                        self.open_tag(tag);
                        return i + 1;
                    }
                    TagMatch::Prefix => i += 1,
                    TagMatch::No => {}
                }
                run = i;
                continue;
            }
            match self.line {
                Line::Start => {
                    let b = data[i];
                    if b == b' ' || b == b'\t' {
                        i += 1;
                        continue;
                    }
                    match self.fence {
                        None if b == b'[' && self.options.forge.thinking.brackets() => {
                            self.out.text(&data[run..i], clock.abs(run));
                            self.bracket.begin(clock.at(data, i));
                            self.mode = Mode::Bracket;
                            return i + 1;
                        }
                        None if self.options.forge.code_fences && (b == b'`' || b == b'~') => {
                            self.line = Line::Run { ch: b, n: 0 };
                        }
                        Some(fence) if b == fence.ch => self.line = Line::Run { ch: b, n: 0 },
                        _ => self.line = Line::Mid,
                    }
                }
                Line::Run { ch, n } => {
                    if data[i] == ch {
                        self.line = Line::Run { ch, n: n + 1 };
                        i += 1;
                        continue;
                    }
                    self.line = match self.fence {
                        None => {
                            if n >= 3 {
                                self.fence = Some(Fence { ch, len: n });
                            }
                            Line::Mid
                        }
                        Some(fence) if n >= fence.len => Line::CloseRest,
                        Some(_) => Line::Mid,
                    };
                }
                Line::CloseRest => match data[i] {
                    b' ' | b'\t' | b'\r' => i += 1,
                    b'\n' => {
                        self.fence = None;
                        self.line = Line::Start;
                        i += 1;
                    }
                    _ => self.line = Line::Mid,
                },
                Line::Mid => {
                    if self.fence.is_some() {
                        match memchr(b'\n', &data[i..]) {
                            None => i = data.len(),
                            Some(k) => {
                                i += k + 1;
                                self.line = Line::Start;
                            }
                        }
                        continue;
                    }
                    // Plain text runs to the next `<`; newlines only matter where a line
                    // starts (after blanks) with `[`, a backtick or a tilde, so only those
                    // bytes are looked for, not every newline.
                    let end = self.next_lt(data, i, clock);
                    if let Some(start) = special_line_start(data, i, end) {
                        i = start;
                        self.line = Line::Start;
                        continue;
                    }
                    if end == data.len() {
                        self.line = line_at_end(data, i);
                        i = end;
                    } else {
                        i = self.start_tag(data, run, end, clock, Output::text);
                        run = i;
                    }
                }
            }
        }
        self.out.text(&data[run..i], clock.abs(run));
        i
    }

    /// The index of the next `<` in `data[i..]`, or `data.len()`. The stretch searched is
    /// remembered in stream offsets: text mode is left and re-entered at every bracket line
    /// (and a held line is replayed from its own buffer), and without the memory each re-entry
    /// would search the same `<`-free stretch again, once per line: quadratic.
    fn next_lt(&mut self, data: &[u8], i: usize, clock: &CharClock) -> usize {
        let (known_from, known_to) = self.no_lt;
        let at = clock.abs(i);
        let known = known_from <= at && at <= known_to;
        // `data` may end before `known_to` (a replayed line is a short buffer).
        let from = if known { (i + (known_to - at)).min(data.len()) } else { i };
        let end = memchr(b'<', &data[from..]).map_or(data.len(), |k| from + k);
        self.no_lt = if known { (known_from, known_to.max(clock.abs(end))) } else { (at, clock.abs(end)) };
        end
    }

    fn open_tag(&mut self, tag: &'static [u8]) {
        self.line = Line::Mid;
        match tag {
            TOOL_OPEN => {
                self.out.end_text();
                let index = self.tool_count;
                self.tool_count += 1;
                // A whole-text parse folds only the ends of calls: a start event per call
                // would be memory spent on nothing.
                if !self.out.spans() {
                    self.out.push(Event::ToolStart { index, header: None });
                }
                self.payload.clear();
                self.payload_sent = 0;
                self.tool_start = self.partial_start;
                if self.options.forge.max_calls.is_some_and(|max| index >= max) {
                    // The raw text of the issue is built in place: `<tool>` and all that follows.
                    self.payload.extend_from_slice(TOOL_OPEN);
                    self.mode = Mode::Rest;
                } else {
                    self.mode = Mode::Tool(Payload::Start);
                }
            }
            THINK_OPEN | THINKING_OPEN => {
                self.first_thinking_tag_closes.get_or_insert(false);
                self.out.begin_thinking();
                let closers = if tag == THINK_OPEN { CLOSE_THINK } else { CLOSE_THINKING };
                self.mode = Mode::Thinking { closers };
            }
            _ => {
                // A closing thinking tag with nothing open is kept as text.
                self.first_thinking_tag_closes.get_or_insert(true);
                self.out.text(tag, self.partial_start.0);
            }
        }
    }

    fn bracket_line(&mut self, data: &[u8], i: usize) -> usize {
        match self.bracket.scan(data, i) {
            Scan::More => data.len(),
            Scan::Newline(j) => {
                if let Some((start, end)) = self.bracket.thought() {
                    let thought = self.bracket.buf[start..end].to_vec();
                    self.out.thought(&thought, self.bracket.start.0 + start);
                    self.mode = Mode::Text;
                    self.line = Line::Start;
                    j + 1
                } else {
                    self.replay_bracket_line();
                    j
                }
            }
            Scan::NotThought(j) => {
                self.replay_bracket_line();
                j
            }
        }
    }

    /// At the end of the input: the held line is a thought or is replayed as text.
    fn end_bracket_line(&mut self) {
        if let Some((start, end)) = self.bracket.thought() {
            let thought = self.bracket.buf[start..end].to_vec();
            self.out.thought(&thought, self.bracket.start.0 + start);
            self.mode = Mode::Text;
        } else {
            self.replay_bracket_line();
        }
    }

    /// The held line is not a thought: run it through the machine as mid-line text (its `[`
    /// cannot start a thought again, since the replay starts mid-line and holds no newline).
    fn replay_bracket_line(&mut self) {
        let held = std::mem::take(&mut self.bracket.buf);
        self.mode = Mode::Text;
        self.line = Line::Mid;
        let mut clock = CharClock::new(self.bracket.start.0, self.bracket.start.1);
        self.replaying = true;
        self.run(&held, &mut clock);
        self.replaying = false;
        self.bracket.buf = held;
        self.bracket.buf.clear();
    }

    fn thinking(
        &mut self,
        data: &[u8],
        mut i: usize,
        closers: &'static [&'static [u8]],
        clock: &mut CharClock,
    ) -> usize {
        let mut run = i;
        while i < data.len() {
            if !self.partial.is_empty() {
                match self.extend_partial(data[i], closers, Output::thinking) {
                    TagMatch::Full(_) => {
                        self.out.end_thinking(true);
                        self.mode = Mode::Text;
                        self.line = Line::Mid;
                        return i + 1;
                    }
                    TagMatch::Prefix => i += 1,
                    TagMatch::No => {}
                }
                run = i;
                continue;
            }
            match memchr(b'<', &data[i..]) {
                None => i = data.len(),
                Some(k) => {
                    i = self.start_tag(data, run, i + k, clock, Output::thinking);
                    run = i;
                }
            }
        }
        self.out.thinking(&data[run..i], clock.abs(run));
        i
    }

    fn tool(&mut self, data: &[u8], mut i: usize, clock: &mut CharClock) -> usize {
        let mut run = i; // start of payload bytes not yet appended
        while i < data.len() {
            let Mode::Tool(state) = self.mode else { break };
            if !self.partial.is_empty() {
                self.partial.push(data[i]);
                let tags = match state {
                    Payload::Xml { in_cdata: false, .. } => XML_PAYLOAD_TAGS,
                    _ => PAYLOAD_TAGS,
                };
                match match_tag(&self.partial, tags) {
                    TagMatch::Full(TOOL_CLOSE) if matches!(state, Payload::Json { in_string: true, .. }) => {
                        // Inside a JSON string this is payload; it is where the call ends if
                        // the string never closes (see `spawn_fallback`).
                        let end = clock.at(data, i + 1);
                        self.spawn_fallback(end, i + 1);
                        self.payload.extend_from_slice(&self.partial);
                        self.partial.clear();
                        i += 1;
                        run = i;
                    }
                    TagMatch::Full(TOOL_CLOSE) => {
                        self.partial.clear();
                        let end = clock.at(data, i + 1);
                        self.close_tool(end);
                        return i + 1;
                    }
                    TagMatch::Full(_) => {
                        // CDATA opens: its content may hold anything, even </tool>.
                        self.payload.extend_from_slice(&self.partial);
                        self.partial.clear();
                        self.mode = Mode::Tool(Payload::Xml { in_cdata: true, close_brackets: 0 });
                        i += 1;
                        run = i;
                    }
                    TagMatch::Prefix => {
                        i += 1;
                        run = i;
                    }
                    TagMatch::No => {
                        self.partial.pop();
                        self.payload.extend_from_slice(&self.partial);
                        self.partial.clear();
                        run = i;
                    }
                }
                continue;
            }
            match state {
                Payload::Start => match data[i..].iter().position(|b| !is_space(*b)) {
                    None => i = data.len(),
                    Some(k) => {
                        i += k;
                        if data[i] == b'{' {
                            if let Some(next) = self.whole_json_call(data, run, i) {
                                return next;
                            }
                        }
                        self.mode = Mode::Tool(match data[i] {
                            b'<' => Payload::Xml { in_cdata: false, close_brackets: 0 },
                            b'{' | b'[' | b'"' => Payload::Json { in_string: false, escape: false },
                            _ => Payload::Raw,
                        });
                    }
                },
                Payload::Json { in_string: true, escape } => {
                    if escape {
                        i += 1;
                        self.mode = Mode::Tool(Payload::Json { in_string: true, escape: false });
                        continue;
                    }
                    let found = if self.may_spawn_fallback() {
                        memchr3(b'"', b'\\', b'<', &data[i..])
                    } else {
                        memchr2(b'"', b'\\', &data[i..])
                    };
                    match found {
                        None => i = data.len(),
                        Some(k) if data[i + k] == b'<' => {
                            i = self.start_payload_tag(data, run, i + k);
                            run = i;
                        }
                        Some(k) => {
                            let j = i + k;
                            if data[j] == b'"' {
                                self.mode = Mode::Tool(Payload::Json { in_string: false, escape: false });
                                i = j + 1;
                            } else if j + 1 < data.len() {
                                i = j + 2; // the escaped byte is never special
                            } else {
                                self.mode = Mode::Tool(Payload::Json { in_string: true, escape: true });
                                i = j + 1;
                            }
                        }
                    }
                }
                Payload::Json { in_string: false, .. } => match memchr2(b'"', b'<', &data[i..]) {
                    None => i = data.len(),
                    Some(k) => {
                        let j = i + k;
                        if data[j] == b'"' {
                            self.mode = Mode::Tool(Payload::Json { in_string: true, escape: false });
                            i = j + 1;
                        } else {
                            i = self.start_payload_tag(data, run, j);
                            run = i;
                        }
                    }
                },
                Payload::Xml { in_cdata: true, close_brackets } => {
                    match memchr2(b']', b'>', &data[i..]) {
                        None => {
                            i = data.len();
                            self.mode = Mode::Tool(Payload::Xml { in_cdata: true, close_brackets: 0 });
                        }
                        Some(k) => {
                            let j = i + k;
                            let before = if k == 0 { close_brackets } else { 0 };
                            let next = if data[j] == b']' {
                                Payload::Xml { in_cdata: true, close_brackets: (before + 1).min(2) }
                            } else if before >= 2 {
                                Payload::Xml { in_cdata: false, close_brackets: 0 }
                            } else {
                                Payload::Xml { in_cdata: true, close_brackets: 0 }
                            };
                            self.mode = Mode::Tool(next);
                            i = j + 1;
                        }
                    }
                }
                Payload::Xml { in_cdata: false, .. } | Payload::Raw => {
                    match memchr(b'<', &data[i..]) {
                        None => i = data.len(),
                        Some(k) => {
                            i = self.start_payload_tag(data, run, i + k);
                            run = i;
                        }
                    }
                }
            }
        }
        if matches!(self.mode, Mode::Tool(_)) {
            self.payload.extend_from_slice(&data[run..i]);
        }
        i
    }

    /// A good JSON call whose object starts at `data[i]` and whose `</tool>` is in this chunk,
    /// read in one pass by jiter; returns where the machine goes on, or `None` to scan the
    /// payload byte by byte instead (split across chunks, invalid, or not a good call).
    ///
    /// The call ends where the byte-wise scan would end it: outside its strings a valid JSON
    /// value holds no `<`, so the first `</tool>` outside strings is the one after the object.
    fn whole_json_call(&mut self, data: &[u8], run: usize, i: usize) -> Option<usize> {
        let json_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        if self.options.forge.tool_format == ToolFormat::Xml
            || !self.payload.iter().chain(&data[run..i]).all(json_space)
        {
            return None;
        }
        let mut reader = Jiter::new(&data[i..]);
        let JsonValue::Object(object) = reader.next_value_owned().ok()? else { return None };
        let mut end = i + reader.current_index();
        end += data[end..].iter().take_while(|b| json_space(b)).count();
        if !data[end..].starts_with(TOOL_CLOSE) {
            return None;
        }
        let mut call = payload::from_fields(into_pairs(object)).ok()?;
        if let Some(tools) = &self.options.tools {
            payload::check_tool(&mut call, tools);
        }
        let index = self.tool_count - 1;
        let fresh = &data[run..end];
        call.id = if self.payload.is_empty() && self.out.spans() {
            call_id(index, fresh)
        } else {
            self.payload.extend_from_slice(fresh);
            self.send_payload();
            call_id(index, &self.payload)
        };
        self.out.push(Event::ToolEnd { index, result: Ok(call) });
        self.mode = Mode::Text;
        self.line = Line::Mid;
        self.fallback = None;
        Some(end + TOOL_CLOSE.len())
    }

    /// A `<` at `data[j]` in text or thinking: `emit` what came before it, start matching a tag.
    fn start_tag(
        &mut self,
        data: &[u8],
        run: usize,
        j: usize,
        clock: &mut CharClock,
        emit: fn(&mut Output, &[u8], usize),
    ) -> usize {
        emit(&mut self.out, &data[run..j], clock.abs(run));
        self.partial.push(b'<');
        self.partial_start = clock.at(data, j);
        j + 1
    }

    /// A `<` at `data[j]` in a payload: keep the payload before it, start matching a tag.
    fn start_payload_tag(&mut self, data: &[u8], run: usize, j: usize) -> usize {
        self.payload.extend_from_slice(&data[run..j]);
        self.partial.push(b'<');
        j + 1
    }

    /// Sends the payload received since the last delta.
    fn send_payload(&mut self) {
        // A whole-text parse has no use for deltas (the call's end carries everything).
        if self.out.spans() {
            return;
        }
        if matches!(self.mode, Mode::Tool(_)) && self.payload_sent < self.payload.len() {
            let fragment = self.payload[self.payload_sent..].to_vec();
            self.payload_sent = self.payload.len();
            self.out.push(Event::ToolDelta { index: self.tool_count - 1, fragment });
        }
    }

    fn close_tool(&mut self, end: (usize, usize)) {
        self.send_payload();
        let index = self.tool_count - 1;
        let result = payload::decode(&self.payload, self.options.forge.tool_format, self.options.tools.as_deref(), index).map_err(
            |(kind, message)| {
                let mut raw = Vec::with_capacity(self.payload.len() + 13);
                raw.extend_from_slice(TOOL_OPEN);
                raw.extend_from_slice(&self.payload);
                raw.extend_from_slice(TOOL_CLOSE);
                Issue {
                    kind,
                    message,
                    span: (self.tool_start.0, end.0),
                    char_span: (self.tool_start.1, end.1),
                    raw,
                }
            },
        );
        self.out.push(Event::ToolEnd { index, result });
        self.mode = Mode::Text;
        self.line = Line::Mid;
        self.fallback = None;
    }
}
