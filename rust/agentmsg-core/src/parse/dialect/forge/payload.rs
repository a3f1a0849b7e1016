//! What a Forge tool-call payload must hold.
//!
//! A payload (the bytes between `<tool>` and `</tool>`) is XML elements when its first
//! non-blank byte is `<`, else JSON. Either way it must give:
//! - `tool_name`: required, a non-empty string;
//! - `arguments`: required, an object (a JSON string, or XML text, that holds a JSON object is
//!   decoded; empty XML `<arguments/>` is `{}`);
//! - `server_name`: optional string, default `"local"`;
//! - any other key is kept in the call's metadata.
//!
//! Ids ([`call_id`]): the words hashed are the call's index in the text (its position among all
//! `<tool>` tags, bad calls included), then the raw payload bytes.

use std::sync::Arc;

use jiter::JsonValue;

use super::bracket::is_space;
use super::xml;
use crate::parse::call::{
    call_arguments, call_id, call_name, holds_infinity, into_pairs, out_of_range, parse_json, IssueKind, Json, JsonPairs,
    ToolCall,
};
use crate::parse::schema::{typed_value, Tools};
use crate::parse::options::ToolFormat;

/// Decodes a payload into a call, or says what is wrong with it.
/// `tools`, if given, types an XML payload's text values and flags an unknown tool.
pub fn decode(
    payload: &[u8],
    format: ToolFormat,
    tools: Option<&Tools>,
    index: usize,
) -> Result<ToolCall, (IssueKind, String)> {
    let is_xml = payload.iter().find(|b| !is_space(**b)) == Some(&b'<');
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
        match typed_value(&tools.param_type(&call.name, key), text.as_bytes()) {
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

fn describe(value: &Json) -> String {
    match value {
        JsonValue::Str(_) => "an empty string".into(),
        other => kind_name(other).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::call::tests::to_serde;

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
        // An XML value past the largest float is no number: it stays text, as in the dialects.
        let past = b"<tool_name>f</tool_name><arguments><n>1e400</n></arguments>";
        let past = decode(past, ToolFormat::Auto, Some(&tools), 0).unwrap();
        assert_eq!(past.input[0].1, JsonValue::Str("1e400".into()));
        assert_eq!(format!("{:?}", past.metadata), r#"[("schema_errors", Array([Str("parameter 'n' is not a number; kept as text")]))]"#);
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
