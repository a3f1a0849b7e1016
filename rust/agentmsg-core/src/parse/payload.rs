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

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Arc;

use jiter::{JsonObject, JsonValue, JsonValueScratch, PartialMode};

use super::dialect::schema::typed_value;
use super::dialect::Tools;
use super::{xml, ToolFormat};

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

/// Decodes a payload into a call, or says what is wrong with it.
/// `tools`, if given, types an XML payload's text values and flags an unknown tool.
pub fn decode(
    payload: &[u8],
    format: ToolFormat,
    tools: Option<&Tools>,
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
    if let Some(tools) = tools {
        if is_xml {
            type_xml_arguments(&mut call, tools)?;
        }
        check_tool(&mut call, tools);
    }
    call.id = call_id(index, payload);
    Ok(call)
}

/// Flags a call to a tool that is not in `tools` (`unknown_tool: true` in its metadata), as the
/// dialects do; the call is kept.
pub(crate) fn check_tool(call: &mut ToolCall, tools: &Tools) {
    if !tools.knows(&call.name) {
        Arc::make_mut(&mut call.metadata).push(("unknown_tool".into(), JsonValue::Bool(true)));
    }
}

/// Types the text values of an XML payload's arguments by the tool's schema, as qwen3_coder's
/// parameters are typed: a value that does not convert stays text and is named in the call's
/// `schema_errors` metadata.
fn type_xml_arguments(call: &mut ToolCall, tools: &Tools) -> Result<(), (IssueKind, String)> {
    let mut schema_errors = Vec::new();
    for (key, value) in Arc::make_mut(&mut call.input).iter_mut() {
        let JsonValue::Str(text) = &*value else { continue };
        match typed_value(tools.param_type(&call.name, key), text.as_bytes()) {
            Ok(Some(typed)) => *value = typed,
            Ok(None) => {}
            Err(why) => schema_errors.push(JsonValue::Str(format!("parameter '{key}' {why}; kept as text").into())),
        }
    }
    if call.input.iter().any(|(_, value)| holds_infinity(value)) {
        return Err(out_of_range());
    }
    if !schema_errors.is_empty() {
        Arc::make_mut(&mut call.metadata).push(("schema_errors".into(), JsonValue::Array(Arc::new(schema_errors))));
    }
    Ok(())
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

fn json_fields(payload: &[u8]) -> Result<JsonPairs, (IssueKind, String)> {
    match parse_json(payload) {
        Ok(JsonValue::Object(object)) => Ok(into_pairs(object)),
        Ok(other) => Err((
            IssueKind::NotAnObject,
            format!("payload must be a JSON object, not {}", kind_name(&other)),
        )),
        Err(error) => Err((IssueKind::InvalidJson, format!("invalid JSON: {error}"))),
    }
}

fn kind_name(value: &Json) -> &'static str {
    match value {
        JsonValue::Null => "null",
        JsonValue::Bool(_) => "a boolean",
        JsonValue::Int(_) | JsonValue::BigInt(_) | JsonValue::Float(_) => "a number",
        JsonValue::Str(_) => "a string",
        JsonValue::Array(_) => "an array",
        JsonValue::Object(_) => "an object",
    }
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

/// Checks the fields of a payload (JSON object or XML elements) and builds the call. A field
/// given twice counts with its last value, as in a JSON object read by Python.
pub(crate) fn from_fields(fields: JsonPairs) -> Result<ToolCall, (IssueKind, String)> {
    let (mut name, mut arguments, mut server_name) = (None, None, None);
    let mut metadata = Vec::new();
    for (key, value) in fields {
        match key.as_ref() {
            "tool_name" => name = Some(value),
            "arguments" => arguments = Some(value),
            "server_name" => server_name = Some(value),
            _ => metadata.push((key, value)),
        }
    }
    let name = match name.map(call_name) {
        None => return Err((IssueKind::MissingField, "missing tool_name".into())),
        Some(Ok(name)) => name,
        Some(Err(other)) => {
            return Err((
                IssueKind::InvalidField,
                format!("tool_name must be a non-empty string, not {}", describe(&other)),
            ))
        }
    };
    let input = match arguments.map(call_arguments) {
        None => return Err((IssueKind::MissingField, "missing arguments".into())),
        Some(Ok(object)) => object,
        Some(Err(JsonValue::Str(_))) => {
            return Err((
                IssueKind::InvalidField,
                "arguments must be an object or a JSON string holding one; the string is not".into(),
            ))
        }
        Some(Err(other)) => {
            return Err((
                IssueKind::InvalidField,
                format!("arguments must be an object, not {}", kind_name(&other)),
            ))
        }
    };
    let server_name = match server_name {
        None => "local".to_string(),
        Some(JsonValue::Str(server)) => server.into_owned(),
        Some(other) => {
            return Err((
                IssueKind::InvalidField,
                format!("server_name must be a string, not {}", kind_name(&other)),
            ))
        }
    };
    // jiter reads a number past the range of a float (`1e400`) as infinity, which no JSON
    // writer can carry on and a `ToolUseBlock` refuses: such a call is invalid JSON, as an
    // integer past jiter's limit is.
    if input.iter().chain(&metadata).any(|(_, value)| holds_infinity(value)) {
        return Err(out_of_range());
    }
    Ok(ToolCall { id: String::new(), name, server_name, input, metadata: Arc::new(metadata) })
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

fn describe(value: &Json) -> String {
    match value {
        JsonValue::Str(_) => "an empty string".into(),
        other => kind_name(other).into(),
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

    fn fields(json: &str) -> JsonPairs {
        json_fields(json.as_bytes()).unwrap()
    }

    #[test]
    fn a_repeated_field_counts_with_its_last_value() {
        let call = from_fields(fields(r#"{"tool_name": "a", "x": 1, "tool_name": "b", "arguments": {}, "x": 2}"#));
        let call = call.unwrap();
        assert_eq!(call.name, "b");
        assert_eq!(to_serde(&JsonValue::Object(call.metadata)), serde_json::json!({"x": 2}));
    }

    #[test]
    fn big_integers_stay_exact_and_errors_name_the_place() {
        let call = from_fields(fields(r#"{"tool_name": "t", "arguments": {"n": 123456789012345678901234567890}}"#));
        let JsonValue::BigInt(n) = &call.unwrap().input[0].1 else { panic!("not a big int") };
        assert_eq!(n.to_string(), "123456789012345678901234567890");
        assert_eq!(
            json_fields(b"{\"a\": }").unwrap_err(),
            (IssueKind::InvalidJson, "invalid JSON: expected value at line 1 column 7".to_string())
        );
        assert_eq!(json_fields(b"[1]").unwrap_err().1, "payload must be a JSON object, not an array");
    }

    #[test]
    fn tools_type_xml_values_and_flag_unknown_tools() {
        let tools = Tools::from_json(
            br#"[{"name": "f", "parameters": {"properties": {"i": {"type": "integer"}, "n": {"type": "number"}}}}]"#,
        )
        .unwrap();
        let xml = b"<tool_name>f</tool_name><arguments><i>42</i><n>x</n><s>1</s></arguments>";
        let call = decode(xml, ToolFormat::Auto, Some(&tools), 0).unwrap();
        assert_eq!(format!("{:?}", call.input[0].1), "Int(42)");
        assert_eq!(call.input[1].1, JsonValue::Str("x".into()));
        assert_eq!(call.input[2].1, JsonValue::Str("1".into()));
        assert_eq!(call.metadata.len(), 1);
        assert_eq!(call.metadata[0].0, "schema_errors");
        let unknown = decode(br#"{"tool_name": "g", "arguments": {"i": "1"}}"#, ToolFormat::Auto, Some(&tools), 0).unwrap();
        assert_eq!(unknown.input[0].1, JsonValue::Str("1".into()));
        assert_eq!(&unknown.metadata[..], &[("unknown_tool".into(), JsonValue::Bool(true))]);
        let past = b"<tool_name>f</tool_name><arguments><n>1e400</n></arguments>";
        assert_eq!(decode(past, ToolFormat::Auto, Some(&tools), 0).unwrap_err(), out_of_range());
    }

    #[test]
    fn a_float_past_the_largest_is_invalid_json_wherever_it_stands() {
        let out_of_range = (IssueKind::InvalidJson, "invalid JSON: number out of range (past the largest float)".to_string());
        for payload in [
            r#"{"tool_name": "t", "arguments": {"a": 1e400}}"#,
            r#"{"tool_name": "t", "arguments": {"a": [1, {"b": -1e400}]}}"#,
            r#"{"tool_name": "t", "arguments": "{\"a\": 1e999}"}"#,
            r#"{"tool_name": "t", "arguments": {}, "extra": [2e308]}"#,
        ] {
            assert_eq!(from_fields(fields(payload)).unwrap_err(), out_of_range, "{payload}");
        }
        // Underflow reads as zero, and the largest float is in range.
        let payload = r#"{"tool_name": "t", "arguments": {"a": 1e-400, "b": 1.7976931348623157e308}}"#;
        assert!(from_fields(fields(payload)).is_ok(), "{payload}");
    }
}
