//! A JSON tool-call payload read as it streams: string state survives chunk boundaries (so a
//! marker inside a string is argument text), the call's name is reported as soon as its string
//! closes, and the arguments object is copied out without insignificant whitespace as it
//! arrives. The payload is decoded once, by jiter, when the call ends; the streamed view only
//! decides what can be forwarded early.

use std::sync::Arc;

use jiter::JsonValue;
use memchr::memchr2;

use crate::parse::call::{call_arguments, call_name, into_pairs, parse_json, IssueKind, Json};
use crate::parse::json_text;
use crate::parse::scan::is_space;
use jiter::JsonObject;

/// Where the call's name and arguments are in the payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum JsonShape {
    /// An object `{name_key: "NAME", arguments_key: {...}}` (hermes, custom dialects).
    Fields { name_key: Arc<str>, arguments_key: Arc<str> },
    /// The payload is the arguments object; the name came before it (gpt_oss).
    Arguments,
    /// An object whose one key is the name and whose value is the arguments (apertus:
    /// `{"get_weather": {"city": "Paris"}}`).
    NameKeyed,
}

/// The position at the top level of a `Fields` object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    ExpectKey,
    InKey,
    AfterKey,
    ExpectValue,
    InValue,
    AfterValue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Name,
    Arguments,
    Other,
}

/// What the bytes of the open string are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reading {
    Nothing,
    Key,
    Name,
}

/// A decoded call: name, arguments, their compact JSON text, other top-level fields.
pub(crate) struct Decoded {
    pub name: Option<String>,
    pub input: JsonObject<'static>,
    pub arguments_text: Vec<u8>,
    pub metadata: JsonObject<'static>,
}

#[derive(Clone, Debug)]
pub(crate) struct JsonCall {
    shape: JsonShape,
    /// The payload bytes read so far.
    pub payload: Vec<u8>,
    depth: u32,
    in_string: bool,
    escaped: bool,
    started: bool,
    /// The top-level value has closed.
    pub closed: bool,
    /// The structure is not one this shape can stream; the end decode reports why.
    broken: bool,
    slot: Slot,
    field: Field,
    reading: Reading,
    key: Vec<u8>,
    name_raw: Vec<u8>,
    /// The name, once its string closed (None if empty or not a string).
    name: Option<String>,
    name_seen: bool,
    /// A name just completed; the machine takes it with [`JsonCall::take_name`].
    name_ready: bool,
    arguments_seen: bool,
    repeated: Option<Arc<str>>,
    /// Arguments bytes are being copied now.
    streaming: bool,
    /// The compact text of the arguments object so far.
    pub arguments: Vec<u8>,
    /// The arguments object was copied whole.
    arguments_complete: bool,
    /// `scan` stops right after the top-level value closes (payloads with no end marker).
    ends_at_close: bool,
    /// A second accepted name for the arguments key (llama3_json's `arguments` for `parameters`).
    arguments_alias: Option<&'static str>,
    /// The first byte of the end marker: `scan` stops there outside strings.
    stop: u8,
}

impl JsonCall {
    pub fn new(shape: JsonShape) -> Self {
        Self {
            shape,
            payload: Vec::new(),
            depth: 0,
            in_string: false,
            escaped: false,
            started: false,
            closed: false,
            broken: false,
            slot: Slot::ExpectKey,
            field: Field::Other,
            reading: Reading::Nothing,
            key: Vec::new(),
            name_raw: Vec::new(),
            name: None,
            name_seen: false,
            name_ready: false,
            arguments_seen: false,
            repeated: None,
            streaming: false,
            arguments: Vec::new(),
            arguments_complete: false,
            ends_at_close: false,
            arguments_alias: None,
            stop: b'<',
        }
    }

    /// A payload whose end marker starts with `stop` (`<` unless told).
    pub fn stopping_at(mut self, stop: u8) -> Self {
        self.stop = stop;
        self
    }

    /// A payload that ends where its top-level value closes: `scan` stops right after it.
    pub fn ending_at_close(mut self) -> Self {
        self.ends_at_close = true;
        self
    }

    /// Accepts `alias` as the arguments key too (both in one object: given twice).
    pub fn with_arguments_alias(mut self, alias: &'static str) -> Self {
        self.arguments_alias = Some(alias);
        self
    }

    /// Reads `data[from..]` up to the first stop byte (`<`) outside a string (a possible end marker, not
    /// consumed) or the end; returns where it stopped.
    pub fn scan(&mut self, data: &[u8], from: usize) -> usize {
        let mut i = from;
        while i < data.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    self.string_bytes(&data[i..=i]);
                    i += 1;
                    continue;
                }
                match memchr2(b'"', b'\\', &data[i..]) {
                    None => {
                        self.string_bytes(&data[i..]);
                        i = data.len();
                    }
                    Some(k) => {
                        self.string_bytes(&data[i..i + k]);
                        i += k;
                        if data[i] == b'\\' {
                            self.escaped = true;
                            self.string_bytes(b"\\");
                        } else {
                            self.close_string();
                        }
                        i += 1;
                    }
                }
                continue;
            }
            let b = data[i];
            if b == self.stop {
                break;
            }
            self.structural(b);
            i += 1;
            if self.closed && self.ends_at_close {
                break;
            }
        }
        self.payload.extend_from_slice(&data[from..i]);
        i
    }

    /// Takes a stop byte that did not start an end marker as payload text.
    pub fn push_byte(&mut self, b: u8) {
        self.structural(b);
        self.payload.push(b);
    }

    /// The name, if it completed since the last call.
    pub fn take_name(&mut self) -> Option<&str> {
        if !std::mem::take(&mut self.name_ready) {
            return None;
        }
        self.name.as_deref()
    }

    fn string_bytes(&mut self, bytes: &[u8]) {
        if self.streaming {
            self.arguments.extend_from_slice(bytes);
        }
        match self.reading {
            Reading::Key => self.key.extend_from_slice(bytes),
            Reading::Name => self.name_raw.extend_from_slice(bytes),
            Reading::Nothing => {}
        }
    }

    fn close_string(&mut self) {
        self.in_string = false;
        if self.streaming {
            self.arguments.push(b'"');
        }
        match std::mem::replace(&mut self.reading, Reading::Nothing) {
            Reading::Key => {
                self.slot = Slot::AfterKey;
                self.field = self.classify();
            }
            Reading::Name => {
                self.slot = Slot::AfterValue;
                self.name = decode_string(&self.name_raw).filter(|name| !name.is_empty());
                self.name_ready = self.name.is_some();
            }
            Reading::Nothing => {
                if self.depth == 1 && self.slot == Slot::InValue {
                    self.slot = Slot::AfterValue;
                }
            }
        }
    }

    fn classify(&mut self) -> Field {
        if self.shape == JsonShape::NameKeyed {
            if std::mem::replace(&mut self.name_seen, true) {
                return Field::Other;
            }
            self.name = decode_string(&self.key).filter(|name| !name.is_empty());
            self.name_ready = self.name.is_some();
            return Field::Arguments;
        }
        let JsonShape::Fields { name_key, arguments_key } = &self.shape else { return Field::Other };
        let key = decode_string(&self.key).unwrap_or_default();
        let (field, seen, label) = if key == **name_key {
            (Field::Name, &mut self.name_seen, name_key)
        } else if key == **arguments_key || Some(key.as_str()) == self.arguments_alias {
            (Field::Arguments, &mut self.arguments_seen, arguments_key)
        } else {
            return Field::Other;
        };
        if std::mem::replace(seen, true) {
            // A second value would contradict what was already streamed: an error at the end.
            self.repeated.get_or_insert_with(|| label.clone());
            return Field::Other;
        }
        field
    }

    fn structural(&mut self, b: u8) {
        if self.in_string {
            // Only `push_byte` of a `<` inside a string lands here.
            self.string_bytes(&[b]);
            return;
        }
        if is_space(b) {
            return;
        }
        if b == b'"' {
            if self.closed {
                // After the top-level value, a quote opens no string: the payload is malformed,
                // and the end marker after it still ends the call (as whole text reads it).
                self.broken = true;
                return;
            }
            self.in_string = true;
            if self.streaming {
                self.arguments.push(b);
            } else if self.depth == 1 && !self.broken && self.shape != JsonShape::Arguments {
                match self.slot {
                    Slot::ExpectKey => {
                        self.slot = Slot::InKey;
                        self.reading = Reading::Key;
                        self.key.clear();
                    }
                    Slot::ExpectValue => {
                        self.slot = Slot::InValue;
                        if self.field == Field::Name {
                            self.reading = Reading::Name;
                        }
                    }
                    _ => self.broken = true,
                }
            }
            return;
        }
        if self.broken {
            return;
        }
        let fields = self.shape != JsonShape::Arguments;
        match b {
            b'{' | b'[' => {
                if self.depth == 0 {
                    if self.started || b != b'{' {
                        self.broken = true;
                        return;
                    }
                    self.started = true;
                    self.depth = 1;
                    if self.shape == JsonShape::Arguments {
                        self.streaming = true;
                        self.arguments.push(b);
                    }
                    return;
                }
                if self.depth == 1 && fields {
                    match self.slot {
                        Slot::ExpectValue => {
                            self.slot = Slot::InValue;
                            if self.field == Field::Arguments && b == b'{' {
                                self.streaming = true;
                            }
                        }
                        _ => {
                            self.broken = true;
                            return;
                        }
                    }
                }
                if self.streaming {
                    self.arguments.push(b);
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                if self.depth == 0 {
                    self.broken = true;
                    return;
                }
                if self.streaming {
                    self.arguments.push(b);
                }
                self.depth -= 1;
                if self.depth == 0 {
                    self.closed = true;
                    if self.streaming {
                        self.streaming = false;
                        self.arguments_complete = true;
                    }
                } else if self.depth == 1 && fields {
                    if self.streaming {
                        self.streaming = false;
                        self.arguments_complete = true;
                    }
                    self.slot = Slot::AfterValue;
                }
            }
            _ if self.depth == 0 => self.broken = true,
            b':' if self.depth == 1 && fields && !self.streaming => {
                if self.slot == Slot::AfterKey {
                    self.slot = Slot::ExpectValue;
                } else {
                    self.broken = true;
                }
            }
            b',' if self.depth == 1 && fields && !self.streaming => self.slot = Slot::ExpectKey,
            _ => {
                if self.streaming {
                    self.arguments.push(b);
                } else if self.depth == 1 && fields && self.slot == Slot::ExpectValue {
                    self.slot = Slot::InValue;
                }
            }
        }
    }

    /// Decodes the whole payload (the call ended).
    pub fn decode(&self) -> Result<Decoded, (IssueKind, String)> {
        let object = match parse_json(&self.payload) {
            Ok(JsonValue::Object(object)) => object,
            Ok(_) => return Err((IssueKind::NotAnObject, "payload must be a JSON object".into())),
            Err(error) => return Err((IssueKind::InvalidJson, format!("invalid JSON: {error}"))),
        };
        if self.shape == JsonShape::NameKeyed {
            return self.decode_name_keyed(object);
        }
        let JsonShape::Fields { name_key, arguments_key } = &self.shape else {
            let arguments_text = self.arguments_text(|| JsonValue::Object(object.clone()));
            return Ok(Decoded { name: None, input: object, arguments_text, metadata: Arc::new(Vec::new()) });
        };
        if let Some(key) = &self.repeated {
            return Err((IssueKind::InvalidField, format!("'{key}' is given twice")));
        }
        let (mut name, mut arguments) = (None, None);
        let mut metadata = Vec::new();
        for (key, value) in into_pairs(object) {
            if *key == **name_key {
                name = Some(value);
            } else if *key == **arguments_key || self.arguments_alias == Some(&*key) {
                arguments = Some(value);
            } else {
                metadata.push((key, value));
            }
        }
        let name = match name.map(call_name) {
            None => return Err((IssueKind::MissingField, format!("missing '{name_key}'"))),
            Some(Ok(name)) => name,
            Some(Err(_)) => return Err((IssueKind::InvalidField, format!("'{name_key}' must be a non-empty string"))),
        };
        let input = match arguments.map(call_arguments) {
            None => Arc::new(Vec::new()),
            Some(Ok(object)) => object,
            Some(Err(JsonValue::Str(_))) => {
                let why = format!("'{arguments_key}' must be an object or a JSON string holding one");
                return Err((IssueKind::InvalidField, why));
            }
            Some(Err(_)) => return Err((IssueKind::InvalidField, format!("'{arguments_key}' must be an object"))),
        };
        let arguments_text = self.arguments_text(|| JsonValue::Object(input.clone()));
        Ok(Decoded { name: Some(name), input, arguments_text, metadata: Arc::new(metadata) })
    }

    /// A `{"NAME": {arguments}}` object: one key, the name; its value, the arguments.
    fn decode_name_keyed(&self, object: JsonObject<'static>) -> Result<Decoded, (IssueKind, String)> {
        let mut pairs = into_pairs(object).into_iter();
        let (name, arguments) = match (pairs.next(), pairs.next()) {
            (Some(pair), None) => pair,
            (None, _) => return Err((IssueKind::MissingField, "the call object names no tool".into())),
            (Some(_), Some(_)) => {
                return Err((IssueKind::InvalidField, "the call object must hold one key, the tool's name".into()))
            }
        };
        if name.is_empty() {
            return Err((IssueKind::InvalidField, "the tool's name must not be empty".into()));
        }
        let input = match call_arguments(arguments) {
            Ok(object) => object,
            Err(_) => return Err((IssueKind::InvalidField, format!("the arguments of '{name}' must be an object"))),
        };
        let arguments_text = self.arguments_text(|| JsonValue::Object(input.clone()));
        Ok(Decoded { name: Some(name.to_string()), input, arguments_text, metadata: Arc::new(Vec::new()) })
    }

    /// The streamed text when the arguments object was copied whole, else the compact text of
    /// the decoded value (arguments given as a string, or missing).
    fn arguments_text(&self, value: impl FnOnce() -> Json) -> Vec<u8> {
        if self.arguments_complete {
            return self.arguments.clone();
        }
        let mut text = Vec::new();
        json_text::value_into(&value(), &mut text);
        text
    }
}

/// The value of a JSON string's inside (escapes decoded), or None if it is not valid.
fn decode_string(raw: &[u8]) -> Option<String> {
    if !raw.contains(&b'\\') {
        return std::str::from_utf8(raw).ok().map(str::to_owned);
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    match parse_json(&quoted) {
        Ok(JsonValue::Str(s)) => Some(s.into_owned()),
        _ => None,
    }
}
