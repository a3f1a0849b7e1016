//! The qwen3_coder payload, `<function=NAME><parameter=KEY>value</parameter>…</function>`,
//! read as it streams and written out as compact JSON arguments while the values arrive.
//!
//! Rules: blanks between elements are ignored; a value is everything up to the first
//! `</parameter>` (nothing else ends it, so any other marker inside is value text), less one
//! leading and one trailing newline (the chat template writes the value on its own line).
//! Text values are streamed as JSON string text; a value whose schema type is not text is held
//! to its end and converted (see [`super::schema`]).

use memchr::memchr;

use super::json_text;
use super::scan::{find_marker, is_space, match_at, Found};
use super::schema::{typed_value_into, ParamType, Tools};

const PARAMETER_OPEN: &[u8] = b"<parameter=";
const PARAMETER_CLOSE: &[u8] = b"</parameter>";
const FUNCTION_CLOSE: &[u8] = b"</function>";
pub(crate) const FUNCTION_OPEN: &[u8] = b"<function=";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Name,
    Between,
    ParamName,
    Value,
    AfterFunction,
    /// Malformed: skip to the end marker.
    Bad,
}

/// What a scan step ended with.
pub(crate) enum Step {
    /// All of the data up to this index is read; the rest (a possible marker) needs more input.
    Wait(usize),
    /// The end marker ends at this index.
    End(usize),
}

#[derive(Clone, Debug)]
pub(crate) struct ElementCall {
    state: State,
    end_marker: &'static [u8],
    name_bytes: Vec<u8>,
    pub name: Option<String>,
    name_ready: bool,
    /// The compact JSON arguments written so far.
    pub arguments: Vec<u8>,
    params: usize,
    key: Vec<u8>,
    value_type: ParamType,
    /// Held text of a value that is converted at its end.
    value: Vec<u8>,
    at_value_start: bool,
    held_newline: bool,
    /// Why the call is malformed.
    pub error: Option<String>,
    /// Parameters whose text did not convert to their schema type.
    pub schema_errors: Vec<String>,
}

impl ElementCall {
    /// A call whose `<function=` was just read; `end_marker` closes the call.
    pub fn new(end_marker: &'static [u8]) -> Self {
        Self {
            state: State::Name,
            end_marker,
            name_bytes: Vec::new(),
            name: None,
            name_ready: false,
            arguments: Vec::new(),
            params: 0,
            key: Vec::new(),
            value_type: ParamType::Any,
            value: Vec::new(),
            at_value_start: false,
            held_newline: false,
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

    /// Reads `data[from..]` as far as it can.
    pub fn scan(&mut self, data: &[u8], from: usize, tools: Option<&Tools>) -> Step {
        let mut i = from;
        while i < data.len() {
            match self.state {
                State::Name | State::ParamName => {
                    let Some(k) = memchr(b'>', &data[i..]) else {
                        self.name_or_key().extend_from_slice(&data[i..]);
                        return Step::Wait(data.len());
                    };
                    self.name_or_key().extend_from_slice(&data[i..i + k]);
                    i += k + 1;
                    if self.state == State::Name {
                        self.end_name();
                    } else {
                        self.begin_value(tools);
                    }
                }
                State::Between | State::AfterFunction => {
                    let b = data[i];
                    if is_space(b) {
                        i += 1;
                        continue;
                    }
                    let markers: &[&[u8]] = &[PARAMETER_OPEN, FUNCTION_CLOSE, self.end_marker];
                    match match_at(data, i, markers) {
                        Found::Partial { at } => return Step::Wait(at),
                        Found::Marker { which: 0, .. } if self.state == State::Between => {
                            i += PARAMETER_OPEN.len();
                            self.key.clear();
                            self.state = State::ParamName;
                        }
                        Found::Marker { which: 1, .. } if self.state == State::Between => {
                            i += FUNCTION_CLOSE.len();
                            self.arguments.push(b'}');
                            self.state = State::AfterFunction;
                        }
                        Found::Marker { which: 2, .. } => {
                            if self.state == State::Between {
                                // `</function>` left out: the call still ends here.
                                self.arguments.push(b'}');
                            }
                            return Step::End(i + self.end_marker.len());
                        }
                        _ => self.fail(if self.state == State::Between {
                            "expected <parameter=…> or </function>"
                        } else {
                            "expected the end of the call after </function>"
                        }),
                    }
                }
                State::Value => match find_marker(data, i, &[PARAMETER_CLOSE]) {
                    Found::Marker { at, .. } => {
                        self.value_text(&data[i..at]);
                        i = at + PARAMETER_CLOSE.len();
                        self.end_value();
                    }
                    Found::Partial { at } => {
                        self.value_text(&data[i..at]);
                        return Step::Wait(at);
                    }
                    Found::None => {
                        self.value_text(&data[i..]);
                        return Step::Wait(data.len());
                    }
                },
                State::Bad => match find_marker(data, i, &[self.end_marker]) {
                    Found::Marker { at, .. } => return Step::End(at + self.end_marker.len()),
                    Found::Partial { at } => return Step::Wait(at),
                    Found::None => return Step::Wait(data.len()),
                },
            }
        }
        Step::Wait(i)
    }

    fn name_or_key(&mut self) -> &mut Vec<u8> {
        if self.state == State::Name {
            &mut self.name_bytes
        } else {
            &mut self.key
        }
    }

    fn end_name(&mut self) {
        match std::str::from_utf8(self.name_bytes.trim_ascii()) {
            Ok(name) if !name.is_empty() && !name.contains('<') => {
                self.name = Some(name.to_owned());
                self.name_ready = true;
                self.arguments.push(b'{');
                self.state = State::Between;
            }
            _ => self.fail("the function name is empty or not text"),
        }
    }

    fn begin_value(&mut self, tools: Option<&Tools>) {
        let key = self.key.trim_ascii().to_vec();
        if key.is_empty() || key.contains(&b'<') {
            self.fail("a parameter name is empty or holds '<'");
            return;
        }
        if self.params > 0 {
            self.arguments.push(b',');
        }
        self.params += 1;
        json_text::string_into(&key, &mut self.arguments);
        self.arguments.push(b':');
        self.key = key;
        self.value_type = match (tools, &self.name, std::str::from_utf8(&self.key)) {
            (Some(tools), Some(name), Ok(key)) => tools.param_type(name, key),
            _ => ParamType::Any,
        };
        if self.value_type.is_text() {
            self.arguments.push(b'"');
        }
        self.value.clear();
        self.at_value_start = true;
        self.held_newline = false;
        self.state = State::Value;
    }

    /// A piece of value text; one leading newline is dropped and a trailing one held back
    /// (dropped if the value ends right after it).
    fn value_text(&mut self, mut piece: &[u8]) {
        if piece.is_empty() {
            return;
        }
        if self.at_value_start {
            self.at_value_start = false;
            if piece[0] == b'\n' {
                piece = &piece[1..];
            }
        }
        if piece.is_empty() {
            return;
        }
        if std::mem::take(&mut self.held_newline) {
            self.value_piece(b"\n");
        }
        if let Some((b'\n', rest)) = piece.split_last() {
            self.held_newline = true;
            piece = rest;
        }
        self.value_piece(piece);
    }

    fn value_piece(&mut self, piece: &[u8]) {
        if self.value_type.is_text() {
            json_text::escape_into(piece, &mut self.arguments);
        } else {
            self.value.extend_from_slice(piece);
        }
    }

    fn end_value(&mut self) {
        if self.value_type.is_text() {
            self.arguments.push(b'"');
        } else if let Err(why) = typed_value_into(self.value_type, &self.value, &mut self.arguments) {
            let key = String::from_utf8_lossy(&self.key);
            self.schema_errors.push(format!("parameter '{key}' {why}; kept as text"));
        }
        self.state = State::Between;
    }
}
