//! What a tool-call payload must hold, and the deterministic call ids.
//!
//! A payload (the bytes between `<tool>` and `</tool>`) is XML elements when its first
//! non-blank byte is `<`, else JSON. Either way it must give:
//! - `tool_name`: required, a non-empty string;
//! - `arguments`: required, an object (a JSON string, or XML text, that holds a JSON object is
//!   decoded; empty XML `<arguments/>` is `{}`);
//! - `server_name`: optional string, default `"local"`;
//! - any other key is kept in the call's metadata.
//!
//! Ids: `call_` + 16 hex digits of a word-wise FNV-1a-64: starting from the FNV offset basis,
//! for each 64-bit word `w`: `h = (h ^ w) * FNV_PRIME (mod 2^64)`. The words are the call's
//! index in the text (its position among all `<tool>` tags, bad calls included), then the raw
//! payload bytes taken 8 at a time as little-endian words, the last one zero-padded. The same text always gives the same ids; equal payloads at different
//! positions get different ids.

use serde_json::{Map, Value};

use super::{xml, ToolFormat};

/// A decoded tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub server_name: String,
    pub input: Map<String, Value>,
    pub metadata: Map<String, Value>,
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
    format!("call_{hash:016x}")
}

/// Decodes a payload into a call, or says what is wrong with it.
pub fn decode(
    payload: &[u8],
    format: ToolFormat,
    index: usize,
) -> Result<ToolCall, (IssueKind, String)> {
    let is_xml = payload.iter().find(|b| !super::bracket::is_space(**b)) == Some(&b'<');
    let fields = match (is_xml, format) {
        (true, ToolFormat::Json) => {
            return Err((IssueKind::WrongFormat, "XML payload but tool_format is 'json'".into()))
        }
        (false, ToolFormat::Xml) => {
            return Err((IssueKind::WrongFormat, "JSON payload but tool_format is 'xml'".into()))
        }
        (true, _) => xml::decode_fields(payload)?,
        (false, _) => json_fields(payload)?,
    };
    let mut call = from_fields(fields)?;
    call.id = call_id(index, payload);
    Ok(call)
}

fn json_fields(payload: &[u8]) -> Result<Map<String, Value>, (IssueKind, String)> {
    match serde_json::from_slice::<Value>(payload) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err((
            IssueKind::NotAnObject,
            format!("payload must be a JSON object, not {}", kind_name(&other)),
        )),
        Err(error) => Err((IssueKind::InvalidJson, format!("invalid JSON: {error}"))),
    }
}

fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks the fields of a payload (JSON object or XML elements) and builds the call.
pub(crate) fn from_fields(mut fields: Map<String, Value>) -> Result<ToolCall, (IssueKind, String)> {
    let name = match fields.shift_remove("tool_name") {
        None => return Err((IssueKind::MissingField, "missing tool_name".into())),
        Some(Value::String(name)) if !name.is_empty() => name,
        Some(other) => {
            return Err((
                IssueKind::InvalidField,
                format!("tool_name must be a non-empty string, not {}", describe(&other)),
            ))
        }
    };
    let input = match fields.shift_remove("arguments") {
        None => return Err((IssueKind::MissingField, "missing arguments".into())),
        Some(Value::Object(map)) => map,
        Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            _ => {
                return Err((
                    IssueKind::InvalidField,
                    "arguments must be an object or a JSON string holding one; the string is not"
                        .into(),
                ))
            }
        },
        Some(other) => {
            return Err((
                IssueKind::InvalidField,
                format!("arguments must be an object, not {}", kind_name(&other)),
            ))
        }
    };
    let server_name = match fields.shift_remove("server_name") {
        None => "local".to_string(),
        Some(Value::String(server)) => server,
        Some(other) => {
            return Err((
                IssueKind::InvalidField,
                format!("server_name must be a string, not {}", kind_name(&other)),
            ))
        }
    };
    Ok(ToolCall { id: String::new(), name, server_name, input, metadata: fields })
}

fn describe(value: &Value) -> String {
    match value {
        Value::String(_) => "an empty string".into(),
        other => kind_name(other).into(),
    }
}
