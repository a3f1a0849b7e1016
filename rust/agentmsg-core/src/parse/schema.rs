//! Tool definitions (OpenAI style) and the typing of parameter values written as text.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use jiter::JsonValue;

use super::call::{parse_json, Json};
use super::json_text;

/// The JSON types a schema allows, as bits.
const STRING: u8 = 1;
const INTEGER: u8 = 2;
const NUMBER: u8 = 4;
const BOOLEAN: u8 = 8;
const OBJECT: u8 = 16;
const ARRAY: u8 = 32;
const NULL: u8 = 64;
const ANY: u8 = 127;
/// The non-null types in the order a text value is tried as them, with their names.
const TRIED: [(u8, &str); 5] =
    [(INTEGER, "an integer"), (NUMBER, "a number"), (BOOLEAN, "a boolean"), (OBJECT, "an object"), (ARRAY, "an array")];
/// How deep `anyOf`/`oneOf`/`allOf`/`$ref` may nest in one parameter's schema.
const MAX_SCHEMA_DEPTH: usize = 32;

/// How a parameter's value written as text is typed, from its schema.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamType {
    /// A string, or no usable type: the value stays text (and streams as it arrives).
    Text,
    /// One of these JSON types (bits): the text is read as the first of integer, number,
    /// boolean, object, array that it is; `null` reads as null.
    Typed(u8),
    /// One of these values (`enum`, `const`), not all strings: the text is matched to them.
    Choice(Arc<Vec<Json>>),
    /// The schema cannot be resolved (why): the value stays text with a note.
    Unresolved(Arc<str>),
}

impl ParamType {
    /// The type of a parameter's `schema`; `root` is the `parameters` object that `$ref`s
    /// (`#/$defs/…`, `#/definitions/…`, any `#/` pointer) are resolved in.
    fn from_schema(schema: &Json, root: &Json) -> Self {
        match Allowed::of(schema, root, &mut Vec::new()) {
            Err(why) => Self::Unresolved(why.into()),
            Ok(Allowed { choices: Some(choices), .. }) => {
                if choices.iter().all(|c| matches!(c, JsonValue::Str(_))) {
                    Self::Text
                } else {
                    Self::Choice(Arc::new(choices))
                }
            }
            Ok(Allowed { types, .. }) if types & STRING != 0 || types == ANY || types == 0 => Self::Text,
            Ok(Allowed { types, .. }) => Self::Typed(types),
        }
    }

    /// Any JSON value but a string (DSML's `string="false"` with no schema type).
    pub(crate) fn json() -> Self {
        Self::Typed(ANY & !STRING)
    }

    /// Whether values of this type are streamed as JSON string text as they arrive.
    pub fn is_text(&self) -> bool {
        matches!(self, Self::Text)
    }
}

/// What a schema allows: JSON types (bits) and, for `enum`/`const`, the values.
struct Allowed {
    types: u8,
    choices: Option<Vec<Json>>,
}

impl Allowed {
    fn of(schema: &Json, root: &Json, refs: &mut Vec<String>) -> Result<Self, String> {
        if refs.len() > MAX_SCHEMA_DEPTH {
            return Err("has a schema that nests too deep".into());
        }
        let JsonValue::Object(_) = schema else { return Ok(Self { types: ANY, choices: None }) };
        let mut allowed = Self { types: ANY, choices: None };
        match get(schema, "type") {
            Some(JsonValue::Str(name)) => allowed.types &= type_bit(name),
            Some(JsonValue::Array(names)) => {
                allowed.types &= names.iter().map(|n| if let JsonValue::Str(n) = n { type_bit(n) } else { ANY }).fold(0, |a, b| a | b)
            }
            _ => {}
        }
        if matches!(get(schema, "nullable"), Some(JsonValue::Bool(true))) && allowed.types != ANY {
            allowed.types |= NULL;
        }
        let listed = match (get(schema, "enum"), get(schema, "const")) {
            (Some(JsonValue::Array(values)), _) => Some(values.iter().cloned().collect::<Vec<_>>()),
            (_, Some(value)) => Some(vec![value.clone()]),
            _ => None,
        };
        if let Some(values) = listed {
            allowed.types &= values.iter().map(value_bit).fold(0, |a, b| a | b);
            allowed.choices = Some(values);
        }
        for key in ["anyOf", "oneOf"] {
            let Some(JsonValue::Array(branches)) = get(schema, key) else { continue };
            let mut union = Self { types: 0, choices: Some(Vec::new()) };
            for branch in branches.iter() {
                let branch = Self::of(branch, root, refs)?;
                union.types |= branch.types;
                union.choices = match (union.choices, branch.choices) {
                    (Some(mut all), Some(more)) => {
                        all.extend(more);
                        Some(all)
                    }
                    _ => None,
                };
            }
            if !branches.is_empty() {
                allowed.intersect(union);
            }
        }
        if let Some(JsonValue::Array(branches)) = get(schema, "allOf") {
            for branch in branches.iter() {
                let branch = Self::of(branch, root, refs)?;
                allowed.intersect(branch);
            }
        }
        if let Some(reference) = get(schema, "$ref") {
            let JsonValue::Str(reference) = reference else { return Err("has a $ref that is not a string".into()) };
            if refs.iter().any(|r| r == reference.as_ref()) {
                return Err(format!("has a $ref '{reference}' that refers to itself"));
            }
            let Some(target) = pointer(root, reference) else {
                return Err(format!("has a $ref '{reference}' that cannot be resolved"));
            };
            refs.push(reference.to_string());
            let target = Self::of(target, root, refs);
            refs.pop();
            allowed.intersect(target?);
        }
        Ok(allowed)
    }

    fn intersect(&mut self, other: Self) {
        self.types &= other.types;
        if self.choices.is_none() {
            self.choices = other.choices;
        }
    }
}

fn type_bit(name: &str) -> u8 {
    match name {
        "string" => STRING,
        "integer" => INTEGER,
        // A number may be written as an integer.
        "number" => NUMBER | INTEGER,
        "boolean" => BOOLEAN,
        "object" => OBJECT,
        "array" => ARRAY,
        "null" => NULL,
        _ => ANY,
    }
}

fn value_bit(value: &Json) -> u8 {
    match value {
        JsonValue::Null => NULL,
        JsonValue::Bool(_) => BOOLEAN,
        JsonValue::Int(_) | JsonValue::BigInt(_) => INTEGER,
        JsonValue::Float(_) => NUMBER,
        JsonValue::Str(_) => STRING,
        JsonValue::Array(_) => ARRAY,
        JsonValue::Object(_) => OBJECT,
    }
}

/// The value a local JSON pointer (`#/$defs/Item`) names in `root`.
fn pointer<'a>(root: &'a Json, reference: &str) -> Option<&'a Json> {
    let path = reference.strip_prefix('#')?;
    if path.is_empty() {
        return Some(root);
    }
    let mut at = root;
    for part in path.strip_prefix('/')?.split('/') {
        let part = part.replace("~1", "/").replace("~0", "~");
        at = match at {
            JsonValue::Object(_) => get(at, &part)?,
            JsonValue::Array(items) => items.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// The tools a reply may call: name -> parameter name -> type.
#[derive(Clone, Debug, Default, PartialEq)]
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
            if let Some(root) = get(function, "parameters") {
                if let Some(JsonValue::Object(properties)) = get(root, "properties") {
                    for (key, schema) in properties.iter() {
                        params.insert(key.to_string(), ParamType::from_schema(schema, root));
                    }
                }
            }
            tools.insert(name.to_string(), params);
        }
        Ok(Self { tools })
    }

    pub fn knows(&self, tool: &str) -> bool {
        self.tools.contains_key(tool)
    }

    /// The type of `tool`'s parameter `param` (`Text` when unknown).
    pub fn param_type(&self, tool: &str, param: &str) -> ParamType {
        self.tools.get(tool).and_then(|params| params.get(param)).cloned().unwrap_or(ParamType::Text)
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
pub(crate) fn typed_value_into(ty: &ParamType, text: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
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
/// `null` reads as null for every type but text and choices.
pub(crate) fn typed_value(ty: &ParamType, text: &[u8]) -> Result<Option<Json>, String> {
    let trimmed = text.trim_ascii();
    match ty {
        ParamType::Text => Ok(None),
        ParamType::Unresolved(why) => Err(why.to_string()),
        ParamType::Choice(choices) => {
            if choices.iter().any(|c| matches!(c, JsonValue::Str(s) if s.as_bytes() == text)) {
                return Ok(None);
            }
            let lowered = trimmed.to_ascii_lowercase();
            let parsed = match lowered.as_slice() {
                b"true" | b"false" => parse_json(&lowered).ok(),
                _ => parse_json(trimmed).ok(),
            };
            match parsed.filter(|value| choices.contains(value)) {
                Some(value) => Ok(Some(value)),
                None => Err("is not one of the schema's values".into()),
            }
        }
        ParamType::Typed(types) => {
            if trimmed == b"null" {
                return Ok(Some(JsonValue::Null));
            }
            TRIED
                .iter()
                .filter(|(bit, _)| types & bit != 0)
                .find_map(|(bit, _)| typed_as(*bit, trimmed))
                .map(Some)
                .ok_or_else(|| {
                    // A number's integers are not named apart.
                    let named = if types & NUMBER != 0 { types & !INTEGER } else { *types };
                    let names: Vec<&str> = TRIED.iter().filter(|(bit, _)| named & bit != 0).map(|(_, n)| *n).collect();
                    match names.is_empty() {
                        true => "is not null".to_owned(),
                        false => format!("is not {}", names.join(" or ")),
                    }
                })
        }
    }
}

/// `trimmed` read as the JSON type `bit`, if it is one.
fn typed_as(bit: u8, trimmed: &[u8]) -> Option<Json> {
    if bit == BOOLEAN {
        return match trimmed.to_ascii_lowercase().as_slice() {
            b"true" => Some(JsonValue::Bool(true)),
            b"false" => Some(JsonValue::Bool(false)),
            _ => None,
        };
    }
    // A number past the largest float reads as an infinity, which the call's arguments cannot
    // hold: such a value is no number of the schema's and stays text (the other arguments kept).
    let value = parse_json(trimmed).ok().filter(all_finite)?;
    let fits = match bit {
        INTEGER => matches!(value, JsonValue::Int(_) | JsonValue::BigInt(_)),
        NUMBER => matches!(value, JsonValue::Int(_) | JsonValue::BigInt(_) | JsonValue::Float(_)),
        OBJECT => matches!(value, JsonValue::Object(_)),
        ARRAY => matches!(value, JsonValue::Array(_)),
        _ => false,
    };
    fits.then_some(value)
}

/// Whether every float of `value` (nested ones too) is finite.
fn all_finite(value: &Json) -> bool {
    match value {
        JsonValue::Float(f) => f.is_finite(),
        JsonValue::Array(items) => items.iter().all(all_finite),
        JsonValue::Object(pairs) => pairs.iter().all(|(_, item)| all_finite(item)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(parameters: &str) -> Tools {
        let text = format!(r#"[{{"type": "function", "function": {{"name": "f", "parameters": {parameters}}}}}]"#);
        Tools::from_json(text.as_bytes()).unwrap()
    }

    fn typed(tools: &Tools, param: &str, text: &str) -> Result<String, String> {
        let mut out = Vec::new();
        typed_value_into(&tools.param_type("f", param), text.as_bytes(), &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn reads_tool_schemas_and_types_values() {
        let tools = tools(r#"{"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": ["number", "null"]}, "s": {}}}"#);
        assert_eq!(tools.param_type("f", "n"), ParamType::Typed(INTEGER));
        assert_eq!(tools.param_type("f", "x"), ParamType::Typed(NUMBER | INTEGER | NULL));
        assert_eq!(tools.param_type("f", "s"), ParamType::Text);
        assert_eq!(tools.param_type("g", "n"), ParamType::Text);
        assert_eq!(typed(&tools, "n", " 42 ").unwrap(), "42");
        let mut out = Vec::new();
        assert_eq!(typed_value_into(&ParamType::Typed(INTEGER), b"4.5", &mut out).unwrap_err(), "is not an integer");
        assert_eq!(out, b"\"4.5\"");
        assert_eq!(typed(&tools, "x", "4.5").unwrap(), "4.5");
        assert_eq!(typed(&tools, "x", "null").unwrap(), "null");
        assert_eq!(typed(&tools, "x", "four").unwrap_err(), "is not a number");
        assert_eq!(typed(&tools, "x", "1e400").unwrap_err(), "is not a number");
        assert_eq!(typed(&tools, "x", "-1e400").unwrap_err(), "is not a number");
        assert_eq!(Tools::from_json(b"[{}]").unwrap_err(), ToolsError::Unnamed { index: 0 });
    }

    #[test]
    fn types_unions_references_and_choices() {
        let tools = tools(
            r##"{"type": "object", "$defs": {"Point": {"type": "object"}, "Mode": {"enum": [1, 2, "auto"]},
                 "Loop": {"anyOf": [{"$ref": "#/$defs/Loop"}, {"type": "null"}]},
                 "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
                 "properties": {
                   "opt": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                   "one": {"oneOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "integer"}}]},
                   "opt_text": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                   "point": {"$ref": "#/$defs/Point"},
                   "node": {"$ref": "#/$defs/Node"},
                   "mode": {"$ref": "#/$defs/Mode"},
                   "flag": {"const": true},
                   "nullable": {"type": "integer", "nullable": true},
                   "loop": {"$ref": "#/$defs/Loop"},
                   "missing": {"$ref": "#/$defs/Nope"},
                   "remote": {"$ref": "https://example.com/schema.json"},
                   "all": {"allOf": [{"type": ["integer", "string"]}, {"type": "integer"}]}}}"##,
        );
        assert_eq!(typed(&tools, "opt", "5").unwrap(), "5");
        assert_eq!(typed(&tools, "opt", "null").unwrap(), "null");
        assert_eq!(typed(&tools, "opt", "five").unwrap_err(), "is not an integer");
        assert_eq!(typed(&tools, "one", "True").unwrap(), "true");
        assert_eq!(typed(&tools, "one", "[1, 2]").unwrap(), "[1,2]");
        assert_eq!(typed(&tools, "one", "x").unwrap_err(), "is not a boolean or an array");
        assert!(tools.param_type("f", "opt_text").is_text());
        assert_eq!(typed(&tools, "point", r#"{"x": 1}"#).unwrap(), r#"{"x":1}"#);
        assert_eq!(typed(&tools, "node", r#"{"next": null}"#).unwrap(), r#"{"next":null}"#);
        assert_eq!(typed(&tools, "mode", "2").unwrap(), "2");
        assert_eq!(typed(&tools, "mode", "auto").unwrap(), r#""auto""#);
        assert_eq!(typed(&tools, "mode", "3").unwrap_err(), "is not one of the schema's values");
        assert_eq!(typed(&tools, "flag", "true").unwrap(), "true");
        assert_eq!(typed(&tools, "nullable", "null").unwrap(), "null");
        assert_eq!(typed(&tools, "all", "7").unwrap(), "7");
        assert_eq!(typed(&tools, "loop", "1").unwrap_err(), "has a $ref '#/$defs/Loop' that refers to itself");
        assert_eq!(typed(&tools, "missing", "1").unwrap_err(), "has a $ref '#/$defs/Nope' that cannot be resolved");
        assert_eq!(
            typed(&tools, "remote", "1").unwrap_err(),
            "has a $ref 'https://example.com/schema.json' that cannot be resolved"
        );
    }
}
