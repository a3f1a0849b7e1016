//! Tool definitions (OpenAI style) and the typing of parameter values written as text.

use std::collections::HashMap;
use std::fmt;

use jiter::JsonValue;

use super::call::{parse_json, Json};
use super::json_text;

/// The JSON type a parameter's schema names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    String,
    Integer,
    Number,
    Boolean,
    Object,
    Array,
    Null,
    /// No usable `type`: the value stays text.
    Any,
}

impl ParamType {
    fn from_schema(schema: &Json) -> Self {
        let JsonValue::Object(pairs) = schema else { return Self::Any };
        let named = |name: &str| match name {
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            "object" => Self::Object,
            "array" => Self::Array,
            "null" => Self::Null,
            _ => Self::Any,
        };
        match pairs.iter().rev().find(|(key, _)| key == "type").map(|(_, value)| value) {
            Some(JsonValue::Str(name)) => named(name),
            // ["integer", "null"]: the first type that is not null.
            Some(JsonValue::Array(names)) => names
                .iter()
                .filter_map(|n| if let JsonValue::Str(n) = n { Some(named(n)) } else { None })
                .find(|t| *t != Self::Null)
                .unwrap_or(Self::Any),
            _ => Self::Any,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::String | Self::Any => "a string",
            Self::Integer => "an integer",
            Self::Number => "a number",
            Self::Boolean => "a boolean",
            Self::Object => "an object",
            Self::Array => "an array",
            Self::Null => "null",
        }
    }

    /// Whether values of this type are streamed as JSON string text as they arrive.
    pub fn is_text(self) -> bool {
        matches!(self, Self::String | Self::Any)
    }
}

/// The tools a reply may call: name -> parameter name -> type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tools {
    tools: HashMap<String, HashMap<String, ParamType>>,
}

fn get<'a>(value: &'a Json, key: &str) -> Option<&'a Json> {
    match value {
        JsonValue::Object(pairs) => pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

impl Tools {
    /// Reads a JSON list of OpenAI tool definitions (`{"type": "function", "function": {"name",
    /// "parameters"}}`, or the inner `{"name", "parameters"}` alone). The error names the item.
    ///
    /// ```
    /// use agentmsg_core::parse::{Tools, ToolsError};
    /// assert!(Tools::from_json(br#"[{"name": "f"}]"#).unwrap().knows("f"));
    /// let error = Tools::from_json(br#"[{"name": "f"}, {}]"#).unwrap_err();
    /// assert_eq!(error, ToolsError::Unnamed { index: 1 });
    /// assert_eq!(error.to_string(), "tools[1] has no function name");
    /// ```
    pub fn from_json(text: &[u8]) -> Result<Self, ToolsError> {
        let JsonValue::Array(items) = parse_json(text).map_err(ToolsError::InvalidJson)? else {
            return Err(ToolsError::NotAList);
        };
        let mut tools = HashMap::new();
        for (i, item) in items.iter().enumerate() {
            let function = get(item, "function").unwrap_or(item);
            let Some(JsonValue::Str(name)) = get(function, "name") else {
                return Err(ToolsError::Unnamed { index: i });
            };
            let mut params = HashMap::new();
            if let Some(JsonValue::Object(properties)) = get(function, "parameters").and_then(|p| get(p, "properties")) {
                for (key, schema) in properties.iter() {
                    params.insert(key.to_string(), ParamType::from_schema(schema));
                }
            }
            tools.insert(name.to_string(), params);
        }
        Ok(Self { tools })
    }

    pub fn knows(&self, tool: &str) -> bool {
        self.tools.contains_key(tool)
    }

    /// The type of `tool`'s parameter `param` (`Any` when unknown).
    pub fn param_type(&self, tool: &str, param: &str) -> ParamType {
        self.tools.get(tool).and_then(|params| params.get(param)).copied().unwrap_or(ParamType::Any)
    }
}

/// Why tool definitions could not be read; its text names the item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolsError {
    /// The text is not JSON (the reason, with line and column).
    InvalidJson(String),
    /// The JSON is not a list.
    NotAList,
    /// Item `index` names no function.
    Unnamed { index: usize },
}

impl fmt::Display for ToolsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidJson(why) => f.write_str(why),
            Self::NotAList => f.write_str("tools must be a list"),
            Self::Unnamed { index } => write!(f, "tools[{index}] has no function name"),
        }
    }
}

impl std::error::Error for ToolsError {}

/// Appends the JSON of a text value read as `ty`; on failure appends it as a string and returns
/// why (the caller reports it).
pub(crate) fn typed_value_into(ty: ParamType, text: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    match typed_value(ty, text) {
        Ok(Some(value)) => {
            json_text::value_into(&value, out);
            Ok(())
        }
        Ok(None) => {
            json_text::string_into(text, out);
            Ok(())
        }
        Err(why) => {
            json_text::string_into(text, out);
            Err(why)
        }
    }
}

/// A text value read as `ty`: `None` for a text type (it stays text), or why it is not a `ty`.
/// `null` reads as null for every non-text type.
pub(crate) fn typed_value(ty: ParamType, text: &[u8]) -> Result<Option<Json>, String> {
    if ty.is_text() {
        return Ok(None);
    }
    let trimmed = text.trim_ascii();
    let parsed = match ty {
        ParamType::String | ParamType::Any => None,
        _ if trimmed == b"null" => Some(JsonValue::Null),
        ParamType::Boolean => match trimmed.to_ascii_lowercase().as_slice() {
            b"true" => Some(JsonValue::Bool(true)),
            b"false" => Some(JsonValue::Bool(false)),
            _ => None,
        },
        ParamType::Integer => parse_json(trimmed).ok().filter(|v| matches!(v, JsonValue::Int(_) | JsonValue::BigInt(_))),
        ParamType::Number => parse_json(trimmed)
            .ok()
            .filter(|v| matches!(v, JsonValue::Int(_) | JsonValue::BigInt(_) | JsonValue::Float(_))),
        ParamType::Object => parse_json(trimmed).ok().filter(|v| matches!(v, JsonValue::Object(_))),
        ParamType::Array => parse_json(trimmed).ok().filter(|v| matches!(v, JsonValue::Array(_))),
        ParamType::Null => None,
    };
    parsed.map(Some).ok_or_else(|| format!("is not {}", ty.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tool_schemas_and_types_values() {
        let tools = Tools::from_json(
            br#"[{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
                 "properties": {"n": {"type": "integer"}, "x": {"type": ["number", "null"]}, "s": {}}}}}]"#,
        )
        .unwrap();
        assert_eq!(tools.param_type("f", "n"), ParamType::Integer);
        assert_eq!(tools.param_type("f", "x"), ParamType::Number);
        assert_eq!(tools.param_type("f", "s"), ParamType::Any);
        assert_eq!(tools.param_type("g", "n"), ParamType::Any);
        let mut out = Vec::new();
        typed_value_into(ParamType::Integer, b" 42 ", &mut out).unwrap();
        assert_eq!(out, b"42");
        out.clear();
        assert_eq!(typed_value_into(ParamType::Integer, b"4.5", &mut out).unwrap_err(), "is not an integer");
        assert_eq!(out, b"\"4.5\"");
        assert_eq!(Tools::from_json(b"[{}]").unwrap_err(), ToolsError::Unnamed { index: 0 });
    }
}
