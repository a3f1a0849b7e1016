//! What every parser's tool calls are made of: the decoded call, what can be wrong with one
//! (its issue), the JSON values they hold, and the deterministic call ids.
//!
//! Ids: `call_` + 16 hex digits of a word-wise FNV-1a-64: starting from the FNV offset basis,
//! for each 64-bit word `w`: `h = (h ^ w) * FNV_PRIME (mod 2^64)`. The words are the call's
//! index in the text, then the given bytes (Forge: the raw payload; the dialects: the call's
//! place and name) taken 8 at a time as little-endian words, the last one zero-padded. The same
//! text always gives the same ids; equal payloads at different positions get different ids.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Arc;

use jiter::{JsonObject, JsonValue, JsonValueScratch, PartialMode};

/// A JSON value of a decoded payload (jiter's tree: strings owned, objects as ordered pairs).
pub type Json = JsonValue<'static>;

/// The (key, value) pairs of a JSON object in document order. A repeated key keeps every pair;
/// the last value is the one that counts, at the first key's place (as Python's `json.loads`
/// and a dict built from the pairs have it).
pub type JsonPairs = Vec<(Cow<'static, str>, Json)>;

/// A decoded tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub server_name: String,
    pub input: JsonObject<'static>,
    pub metadata: JsonObject<'static>,
}

/// A call's id and name, known when its start is reported (every dialect but Forge's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallHeader {
    pub id: String,
    pub name: String,
}

/// What was wrong with a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IssueKind {
    /// `<tool>` without `</tool>` before the end of the text.
    UnclosedTool,
    InvalidJson,
    InvalidXml,
    /// The JSON payload is valid but not an object.
    NotAnObject,
    MissingField,
    InvalidField,
    /// The payload's format is not the one `tool_format` allows.
    WrongFormat,
    /// A `<tool>` past `max_calls`: the issue holds the rest of the text, unparsed.
    TooManyCalls,
}

impl IssueKind {
    /// The snake_case name Python sees.
    pub fn name(self) -> &'static str {
        match self {
            Self::UnclosedTool => "unclosed_tool",
            Self::InvalidJson => "invalid_json",
            Self::InvalidXml => "invalid_xml",
            Self::NotAnObject => "not_an_object",
            Self::MissingField => "missing_field",
            Self::InvalidField => "invalid_field",
            Self::WrongFormat => "wrong_format",
            Self::TooManyCalls => "too_many_calls",
        }
    }
}

/// A bad tool call: what was wrong, where (byte and character spans of the whole call, tags
/// included, in the stream) and its raw text (`raw == text[span]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    pub kind: IssueKind,
    pub message: String,
    pub span: (usize, usize),
    pub char_span: (usize, usize),
    pub raw: Vec<u8>,
}

/// The id of call number `index` with raw payload `payload`.
pub fn call_id(index: usize, payload: &[u8]) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let mut mix = |word: u64| {
        hash ^= word;
        hash = hash.wrapping_mul(PRIME);
    };
    // FNV-1a over 8-byte little-endian words (the last one zero-padded): a multiply per word,
    // not per byte, keeps ids cheap for large payloads.
    mix(index as u64);
    let mut words = payload.chunks_exact(8);
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        mix(u64::from_le_bytes(bytes));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut bytes = [0u8; 8];
        bytes[..rest.len()].copy_from_slice(rest);
        mix(u64::from_le_bytes(bytes));
    }
    // Written out by hand: `format!` is a tenth of a small call's parse time.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = String::with_capacity(21);
    id.push_str("call_");
    for shift in (0..16).rev() {
        id.push(char::from(HEX[((hash >> (shift * 4)) & 0xf) as usize]));
    }
    id
}

thread_local! {
    /// jiter's parse buffers, kept per thread so a run of payloads grows them once.
    static SCRATCH: RefCell<JsonValueScratch<'static>> = RefCell::new(JsonValueScratch::new());
}

/// Parses strict JSON (no NaN or Infinity) into an owned value; the error names line and column.
pub fn parse_json(data: &[u8]) -> Result<Json, String> {
    SCRATCH
        .with(|scratch| scratch.borrow_mut().parse_owned(data, false, PartialMode::Off))
        .map_err(|error| error.description(data))
}

/// The pairs of an object (copied only if the tree shares it, which a fresh parse never does).
pub(crate) fn into_pairs(object: JsonObject<'static>) -> JsonPairs {
    Arc::try_unwrap(object).unwrap_or_else(|shared| (*shared).clone())
}

/// A call's name: a non-empty string; else the value, for the error.
pub(crate) fn call_name(value: Json) -> Result<String, Json> {
    match value {
        JsonValue::Str(name) if !name.is_empty() => Ok(name.into_owned()),
        other => Err(other),
    }
}

/// A call's arguments: an object, or a JSON string holding one (as OpenAI writes them); else the
/// value, for the error (a string then holds no object).
pub(crate) fn call_arguments(value: Json) -> Result<JsonObject<'static>, Json> {
    match value {
        JsonValue::Object(object) => Ok(object),
        JsonValue::Str(text) => match parse_json(text.as_bytes()) {
            Ok(JsonValue::Object(object)) => Ok(object),
            _ => Err(JsonValue::Str(text)),
        },
        other => Err(other),
    }
}

/// The issue of a call whose JSON holds a number past the largest float.
pub(crate) fn out_of_range() -> (IssueKind, String) {
    (IssueKind::InvalidJson, "invalid JSON: number out of range (past the largest float)".into())
}

/// Whether `value` is, or holds, an infinite float.
pub(crate) fn holds_infinity(value: &Json) -> bool {
    match value {
        JsonValue::Float(f) => f.is_infinite(),
        JsonValue::Array(items) => items.iter().any(holds_infinity),
        JsonValue::Object(pairs) => pairs.iter().any(|(_, value)| holds_infinity(value)),
        _ => false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The same value as serde_json's, for comparing with `json!` literals (last pair wins).
    pub(crate) fn to_serde(value: &Json) -> serde_json::Value {
        use serde_json::Value;
        match value {
            JsonValue::Null => Value::Null,
            JsonValue::Bool(b) => Value::Bool(*b),
            JsonValue::Int(i) => Value::from(*i),
            JsonValue::BigInt(b) => Value::String(b.to_string()),
            JsonValue::Float(f) => Value::from(*f),
            JsonValue::Str(s) => Value::String(s.to_string()),
            JsonValue::Array(items) => Value::Array(items.iter().map(to_serde).collect()),
            JsonValue::Object(pairs) => {
                Value::Object(pairs.iter().map(|(k, v)| (k.to_string(), to_serde(v))).collect())
            }
        }
    }
}
