//! The call payload of Gemma 4 and FunctionGemma, read as it streams and written out as compact
//! JSON arguments while the values arrive: `call:NAME{key:value,…}` (the marker dialect reads
//! `call:`), where a value is a string between two delimiters (`<|"|>` for Gemma 4, `<escape>`
//! for FunctionGemma), a bare number, `true`, `false` or `null`, an object `{key:value,…}` or a
//! list `[value,…]`. Keys are bare (up to the `:`) or delimited like strings.
//!
//! Nothing but the delimiter ends a string, so markers inside one are text. A bare word that is
//! no JSON literal is read as a string (the model left out the delimiters); `None`, `True` and
//! `False` (what a Jinja template writes for Python values) are null and booleans. A top-level
//! string value whose schema type (`tools=`) is not text is held to its end and converted as
//! qwen3_coder's values are.

use memchr::memchr;

use super::element_call::Step;
use crate::parse::call::parse_json;
use crate::parse::json_text;
use crate::parse::scan::{find_marker, is_space, match_at, Found};
use crate::parse::schema::{typed_value_into, ParamType, Tools};
use jiter::JsonValue;

/// The longest function name read (longer: the call is malformed).
const MAX_NAME: usize = 256;
/// The deepest nesting of objects and lists read (deeper: the call is malformed).
const MAX_DEPTH: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Name,
    /// Expecting a key (or the object's `}`).
    Key,
    BareKey,
    DelimitedKey,
    /// After a key, expecting `:`.
    Colon,
    Value,
    Str,
    Scalar,
    /// After a value, expecting `,` or the container's close.
    AfterValue,
    /// The arguments object closed: only blanks may come before the end marker.
    Done,
    /// Malformed: skip to the end marker.
    Bad,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Level {
    object: bool,
    items: usize,
}

#[derive(Clone, Debug)]
pub(crate) struct GemmaCall {
    delimiter: &'static [u8],
    state: State,
    name_bytes: Vec<u8>,
    pub name: Option<String>,
    name_ready: bool,
    /// The compact JSON arguments written so far (all of it final).
    pub arguments: Vec<u8>,
    levels: Vec<Level>,
    key: Vec<u8>,
    scalar: Vec<u8>,
    /// The schema type of the top-level value being read.
    value_type: ParamType,
    /// A typed string's text, converted at its end.
    value: Vec<u8>,
    pub error: Option<String>,
    pub schema_errors: Vec<String>,
}

impl GemmaCall {
    /// A call whose `call:` was just read; strings are between two `delimiter`s.
    pub fn new(delimiter: &'static [u8]) -> Self {
        Self {
            delimiter,
            state: State::Name,
            name_bytes: Vec::new(),
            name: None,
            name_ready: false,
            arguments: Vec::new(),
            levels: Vec::new(),
            key: Vec::new(),
            scalar: Vec::new(),
            value_type: ParamType::Text,
            value: Vec::new(),
            error: None,
            schema_errors: Vec::new(),
        }
    }

    pub fn take_name(&mut self) -> Option<&str> {
        if !std::mem::take(&mut self.name_ready) {
            return None;
        }
        self.name.as_deref()
    }

    fn fail(&mut self, why: &str) {
        self.error.get_or_insert_with(|| why.to_string());
        self.state = State::Bad;
    }

    /// Whether the string or the top-level value being read is converted at its end.
    fn typed(&self) -> bool {
        self.levels.len() == 1 && !self.value_type.is_text()
    }

    /// Reads `data[from..]` as far as it can; `end_marker` closes the call.
    pub fn scan(&mut self, data: &[u8], from: usize, end_marker: &[u8], tools: Option<&Tools>) -> Step {
        let mut i = from;
        while i < data.len() {
            let b = data[i];
            match self.state {
                State::Name => {
                    let end = data[i..].iter().position(|b| matches!(b, b'{' | b'<' | b'\n'));
                    let until = end.map_or(data.len(), |k| i + k);
                    self.name_bytes.extend_from_slice(&data[i..until]);
                    i = until;
                    if self.name_bytes.len() > MAX_NAME {
                        self.fail("the function name is too long");
                    } else if end.is_some() {
                        self.end_name(data[i]);
                        if self.state != State::Bad {
                            i += 1;
                        }
                    }
                }
                State::Key | State::Colon | State::Value | State::AfterValue | State::Done if is_space(b) => i += 1,
                State::Key => match b {
                    b'}' => i = self.close(i, true),
                    b'<' => match self.marker_at(data, i, end_marker) {
                        Some(Ok(next)) => {
                            self.key.clear();
                            self.state = State::DelimitedKey;
                            i = next;
                        }
                        Some(Err(step)) => return step,
                        None => self.fail("expected a key"),
                    },
                    b'{' | b'[' | b']' | b',' | b':' => self.fail("expected a key"),
                    _ => {
                        self.key.clear();
                        self.state = State::BareKey;
                    }
                },
                State::BareKey => match b {
                    b':' => {
                        self.begin_value(tools);
                        i += 1;
                    }
                    b'{' | b'}' | b'[' | b']' | b',' | b'<' | b'\n' => self.fail("expected ':' after a key"),
                    _ => {
                        self.key.push(b);
                        i += 1;
                    }
                },
                State::DelimitedKey => match find_marker(data, i, &[self.delimiter]) {
                    Found::Marker { at, .. } => {
                        self.key.extend_from_slice(&data[i..at]);
                        self.state = State::Colon;
                        i = at + self.delimiter.len();
                    }
                    Found::Partial { at } => {
                        self.key.extend_from_slice(&data[i..at]);
                        return Step::Wait(at);
                    }
                    Found::None => {
                        self.key.extend_from_slice(&data[i..]);
                        return Step::Wait(data.len());
                    }
                },
                State::Colon if b == b':' => {
                    self.begin_value(tools);
                    i += 1;
                }
                State::Colon => self.fail("expected ':' after a key"),
                State::Value => {
                    let in_list = self.levels.last().is_some_and(|level| !level.object);
                    // An empty list, or a trailing comma (forgiven, as in objects).
                    if b == b']' && in_list {
                        i = self.close(i, false);
                        continue;
                    }
                    if matches!(b, b'}' | b']' | b',' | b':') {
                        self.fail("expected a value");
                        continue;
                    }
                    let delimited = if b == b'<' {
                        match self.marker_at(data, i, end_marker) {
                            Some(Ok(next)) => Some(next),
                            Some(Err(step)) => return step,
                            None => {
                                self.fail("expected a value");
                                continue;
                            }
                        }
                    } else {
                        None
                    };
                    if in_list {
                        self.item();
                    }
                    match (b, delimited) {
                        (_, Some(next)) => {
                            if self.typed() {
                                self.value.clear();
                            } else {
                                self.arguments.push(b'"');
                            }
                            self.state = State::Str;
                            i = next;
                        }
                        (b'{' | b'[', _) => {
                            if self.levels.len() >= MAX_DEPTH {
                                self.fail("the arguments nest too deep");
                                continue;
                            }
                            self.arguments.push(b);
                            self.levels.push(Level { object: b == b'{', items: 0 });
                            self.state = if b == b'{' { State::Key } else { State::Value };
                            i += 1;
                        }
                        _ => {
                            self.scalar.clear();
                            self.state = State::Scalar;
                        }
                    }
                }
                State::Str => match find_marker(data, i, &[self.delimiter]) {
                    Found::Marker { at, .. } => {
                        self.string_text(&data[i..at]);
                        self.end_string();
                        i = at + self.delimiter.len();
                    }
                    Found::Partial { at } => {
                        self.string_text(&data[i..at]);
                        return Step::Wait(at);
                    }
                    Found::None => {
                        self.string_text(&data[i..]);
                        return Step::Wait(data.len());
                    }
                },
                State::Scalar => {
                    let end = data[i..].iter().position(|b| matches!(b, b',' | b'}' | b']' | b'<' | b'{' | b'['));
                    let until = end.map_or(data.len(), |k| i + k);
                    self.scalar.extend_from_slice(&data[i..until]);
                    i = until;
                    if end.is_some() {
                        self.end_scalar();
                    }
                }
                State::AfterValue => match b {
                    b',' => {
                        let object = self.levels.last().is_some_and(|level| level.object);
                        self.state = if object { State::Key } else { State::Value };
                        i += 1;
                    }
                    b'}' | b']' => {
                        if self.levels.last().is_some_and(|level| level.object == (b == b'}')) {
                            i = self.close(i, b == b'}');
                        } else {
                            self.fail("a bracket closes what it did not open");
                        }
                    }
                    b'<' => match self.marker_at(data, i, end_marker) {
                        Some(Err(step)) => return step,
                        _ => self.fail("expected ',' or the end of an object or list"),
                    },
                    _ => self.fail("expected ',' or the end of an object or list"),
                },
                State::Done => match match_at(data, i, &[end_marker]) {
                    Found::Marker { .. } => return Step::End(i + end_marker.len()),
                    Found::Partial { .. } => return Step::Wait(i),
                    Found::None => self.fail("text after the arguments"),
                },
                State::Bad => return Step::skip_to(data, i, end_marker),
            }
        }
        Step::Wait(i)
    }

    /// At a `<` outside a string: `Some(Ok(next))` for the delimiter (read on at `next`),
    /// `Some(Err(step))` to stop (the end marker before the arguments closed, or a possible
    /// marker cut by the chunk), None for anything else.
    fn marker_at(&mut self, data: &[u8], i: usize, end_marker: &[u8]) -> Option<Result<usize, Step>> {
        match match_at(data, i, &[self.delimiter, end_marker]) {
            Found::Marker { which: 0, .. } => Some(Ok(i + self.delimiter.len())),
            Found::Marker { .. } => {
                self.error.get_or_insert_with(|| "the call ended before its arguments closed".into());
                Some(Err(Step::End(i + end_marker.len())))
            }
            Found::Partial { .. } => Some(Err(Step::Wait(i))),
            Found::None => None,
        }
    }

    fn end_name(&mut self, stop: u8) {
        match std::str::from_utf8(self.name_bytes.trim_ascii()) {
            Ok(name) if stop == b'{' && !name.is_empty() => {
                self.name = Some(name.to_owned());
                self.name_ready = true;
                self.arguments.push(b'{');
                self.levels.push(Level { object: true, items: 0 });
                self.state = State::Key;
            }
            Ok("") if stop == b'{' => self.fail("the function name is empty"),
            _ => self.fail("expected '{' after the function name"),
        }
    }

    /// A new item of the innermost container: a comma before all but its first.
    fn item(&mut self) {
        if let Some(level) = self.levels.last_mut() {
            if level.items > 0 {
                self.arguments.push(b',');
            }
            level.items += 1;
        }
    }

    /// The key is complete: writes it; a top-level value gets its schema type.
    fn begin_value(&mut self, tools: Option<&Tools>) {
        let key = self.key.trim_ascii().to_vec();
        if key.is_empty() {
            self.fail("a key is empty");
            return;
        }
        self.item();
        json_text::string_into(&key, &mut self.arguments);
        self.arguments.push(b':');
        self.value_type = match (tools, &self.name, std::str::from_utf8(&key), self.levels.len()) {
            (Some(tools), Some(name), Ok(key), 1) => tools.param_type(name, key),
            _ => ParamType::Text,
        };
        self.key = key;
        self.state = State::Value;
    }

    fn string_text(&mut self, piece: &[u8]) {
        if self.typed() {
            self.value.extend_from_slice(piece);
        } else {
            json_text::escape_into(piece, &mut self.arguments);
        }
    }

    fn end_string(&mut self) {
        if !self.typed() {
            self.arguments.push(b'"');
        } else if let Err(why) = typed_value_into(&self.value_type, &self.value, &mut self.arguments) {
            let key = String::from_utf8_lossy(&self.key);
            self.schema_errors.push(format!("parameter '{key}' {why}; kept as text"));
        }
        self.state = State::AfterValue;
    }

    /// A bare value: a JSON number or literal as written, `None`/`True`/`False` as JSON, any
    /// other word as a string.
    fn end_scalar(&mut self) {
        let text = self.scalar.trim_ascii();
        let literal: Option<&[u8]> = match text {
            b"true" | b"True" => Some(b"true"),
            b"false" | b"False" => Some(b"false"),
            b"null" | b"None" => Some(b"null"),
            _ => None,
        };
        if text.is_empty() {
            self.fail("expected a value");
            return;
        }
        match literal {
            Some(literal) => self.arguments.extend_from_slice(literal),
            None if is_number(text) => self.arguments.extend_from_slice(text),
            None => json_text::string_into(text, &mut self.arguments),
        }
        self.state = State::AfterValue;
    }

    /// Closes the innermost container at `data[i]`; returns where reading goes on.
    fn close(&mut self, i: usize, object: bool) -> usize {
        self.arguments.push(if object { b'}' } else { b']' });
        self.levels.pop();
        self.state = if self.levels.is_empty() { State::Done } else { State::AfterValue };
        i + 1
    }
}

/// Whether `text` is a finite JSON number (a number past the largest float is no number).
fn is_number(text: &[u8]) -> bool {
    if memchr(b'"', text).is_some() || !text.first().is_some_and(|b| *b == b'-' || b.is_ascii_digit()) {
        return false;
    }
    match parse_json(text) {
        Ok(JsonValue::Int(_) | JsonValue::BigInt(_)) => true,
        Ok(JsonValue::Float(f)) => f.is_finite(),
        _ => false,
    }
}
