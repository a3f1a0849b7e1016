//! XML-element tool payloads: `<tool_name>x</tool_name><arguments><path>a.go</path></arguments>`.
//!
//! A small, strict-where-it-matters reader (no attributes, no DTD): an element holding only
//! text (with entities and CDATA sections) is a string; an element holding elements is an
//! object (an element name that repeats becomes a list); whitespace between elements is
//! ignored; comments are skipped. Leniency: a `<` not followed by a name character, and an `&`
//! that does not start a known entity, are literal text (models write `a < b` and `&&`).
//! Names (`tool_name`, `server_name`) are stripped of surrounding whitespace; other text is
//! kept exactly.

use std::collections::HashMap;
use std::sync::Arc;

use jiter::JsonValue;

use crate::parse::call::{IssueKind, Json, JsonPairs};

const MAX_DEPTH: usize = 128;
/// Bytes between `&` and `;` in the longest entity read (`#x` and eight hex digits).
const MAX_ENTITY_NAME: usize = 10;

type Error = (IssueKind, String);

fn err(message: impl Into<String>) -> Error {
    (IssueKind::InvalidXml, format!("invalid XML: {}", message.into()))
}

enum Content {
    Text(String),
    Elements(Vec<(String, Content)>),
}

struct Reader<'a> {
    s: &'a str,
    pos: usize,
}

/// The fields of an XML payload, as JSON values.
pub(crate) fn decode_fields(payload: &[u8]) -> Result<JsonPairs, Error> {
    let s = std::str::from_utf8(payload).map_err(|_| err("payload is not valid UTF-8"))?;
    let mut reader = Reader { s, pos: 0 };
    let elements = match reader.content(None, 0)? {
        Content::Elements(elements) => elements,
        Content::Text(text) if text.trim().is_empty() => Vec::new(),
        Content::Text(_) => return Err(err("text outside elements")),
    };
    let mut fields = group(elements);
    for (name, value) in &mut fields {
        match (name.as_ref(), &*value) {
            ("tool_name" | "server_name", JsonValue::Str(text)) => {
                *value = JsonValue::Str(text.trim().to_string().into());
            }
            ("arguments", JsonValue::Str(text)) if text.trim().is_empty() => {
                *value = JsonValue::Object(Arc::new(Vec::new()));
            }
            _ => {}
        }
    }
    Ok(fields)
}

/// Objects from elements: a repeated name becomes a list of its values, in order.
fn group(elements: Vec<(String, Content)>) -> JsonPairs {
    let mut pairs: JsonPairs = Vec::with_capacity(elements.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (name, content) in elements {
        let value = match content {
            Content::Text(text) => JsonValue::Str(text.into()),
            Content::Elements(children) => JsonValue::Object(Arc::new(group(children))),
        };
        match seen.get(&name) {
            None => {
                seen.insert(name.clone(), pairs.len());
                pairs.push((name.into(), value));
            }
            Some(&at) => {
                let existing = &mut pairs[at].1;
                // Element values are strings or objects, so an array here was made by repetition.
                match existing {
                    JsonValue::Array(items) => Arc::make_mut(items).push(value),
                    _ => {
                        let first: Json = std::mem::replace(existing, JsonValue::Null);
                        *existing = JsonValue::Array(Arc::new(vec![first, value]));
                    }
                }
            }
        }
    }
    pairs
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    /// Reads content up to the closing tag of `parent` (or the end, at top level).
    fn content(&mut self, parent: Option<&str>, depth: usize) -> Result<Content, Error> {
        if depth > MAX_DEPTH {
            return Err(err(format!("elements nested deeper than {MAX_DEPTH}")));
        }
        let mut text = String::new();
        let mut elements = Vec::new();
        loop {
            let rest = self.rest();
            let Some(k) = rest.find(['<', '&']) else {
                text.push_str(rest);
                self.pos = self.s.len();
                break;
            };
            text.push_str(&rest[..k]);
            self.pos += k;
            let rest = self.rest();
            if rest.starts_with('&') {
                self.entity(&mut text);
            } else if let Some(after) = rest.strip_prefix("<![CDATA[") {
                let end = after.find("]]>").ok_or_else(|| err("unclosed CDATA section"))?;
                text.push_str(&after[..end]);
                self.pos += 9 + end + 3;
            } else if let Some(after) = rest.strip_prefix("<!--") {
                let end = after.find("-->").ok_or_else(|| err("unclosed comment"))?;
                self.pos += 4 + end + 3;
            } else if let Some(after) = rest.strip_prefix("</") {
                let end = after.find('>').ok_or_else(|| err("unclosed end tag"))?;
                let name = after[..end].trim();
                match parent {
                    Some(open) if open == name => {
                        self.pos += 2 + end + 1;
                        return finish(open, text, elements);
                    }
                    Some(open) => {
                        return Err(err(format!("</{name}> closes <{open}>")));
                    }
                    None => return Err(err(format!("</{name}> has no opening tag"))),
                }
            } else if rest[1..].starts_with(|c: char| c.is_alphabetic() || c == '_' || c == ':') {
                elements.push(self.element(depth)?);
            } else {
                text.push('<');
                self.pos += 1;
            }
        }
        match parent {
            Some(open) => Err(err(format!("<{open}> is not closed"))),
            None => finish("tool", text, elements),
        }
    }

    /// Reads `<name ...>content</name>` or `<name/>`, starting at its `<`.
    fn element(&mut self, depth: usize) -> Result<(String, Content), Error> {
        let rest = &self.rest()[1..];
        let end = rest.find('>').ok_or_else(|| err("unclosed start tag"))?;
        let tag = &rest[..end];
        let (tag, empty) = match tag.strip_suffix('/') {
            Some(tag) => (tag, true),
            None => (tag, false),
        };
        let name = tag.trim_end();
        if name.contains(char::is_whitespace) {
            let name = name.split(char::is_whitespace).next().unwrap_or(name);
            return Err(err(format!("attributes are not supported (in <{name}>)")));
        }
        let name = name.to_string();
        self.pos += 1 + end + 1;
        if empty {
            return Ok((name, Content::Text(String::new())));
        }
        let content = self.content(Some(&name), depth + 1)?;
        Ok((name, content))
    }

    /// Decodes the entity at `&`, or keeps the `&` as text.
    fn entity(&mut self, text: &mut String) {
        let rest = self.rest();
        // The longest entity name is 10 bytes: look for its `;` no further (searching the whole
        // rest for each `&` that is not an entity makes a run of `&` quadratic).
        let window = &rest.as_bytes()[1..rest.len().min(MAX_ENTITY_NAME + 2)];
        let decoded = memchr::memchr(b';', window).and_then(|end| {
            let name = &rest[1..1 + end];
            let c = match name {
                "lt" => Some('<'),
                "gt" => Some('>'),
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => {
                    let code = if let Some(hex) = name.strip_prefix("#x").or(name.strip_prefix("#X")) {
                        u32::from_str_radix(hex, 16).ok()
                    } else if let Some(dec) = name.strip_prefix('#') {
                        dec.parse().ok()
                    } else {
                        None
                    };
                    code.and_then(char::from_u32)
                }
            };
            c.map(|c| (c, end + 2))
        });
        match decoded {
            Some((c, len)) => {
                text.push(c);
                self.pos += len;
            }
            None => {
                text.push('&');
                self.pos += 1;
            }
        }
    }
}

fn finish(name: &str, text: String, elements: Vec<(String, Content)>) -> Result<Content, Error> {
    if elements.is_empty() {
        return Ok(Content::Text(text));
    }
    if !text.trim().is_empty() {
        return Err(err(format!("<{name}> mixes text and elements")));
    }
    Ok(Content::Elements(elements))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::call::tests::to_serde;
    use serde_json::json;

    fn fields(s: &str) -> Result<serde_json::Value, Error> {
        decode_fields(s.as_bytes()).map(|pairs| to_serde(&JsonValue::Object(Arc::new(pairs))))
    }

    #[test]
    fn elements_cdata_entities_nesting_lists() {
        let got = fields(
            "\n<server_name> local </server_name>\n<tool_name>edit</tool_name>\n<arguments>\
             <path>a.go</path><code><![CDATA[if a < b && </tool> {}]]></code>\
             <opts><deep>1 &lt; 2 &amp;&amp; &#x41;&#66;</deep></opts><tag>x</tag><tag>y</tag>\
             <empty/></arguments><!-- note --><note>extra</note>",
        )
        .unwrap();
        assert_eq!(
            got,
            json!({
                "server_name": "local", "tool_name": "edit",
                "arguments": {"path": "a.go", "code": "if a < b && </tool> {}",
                    "opts": {"deep": "1 < 2 && AB"}, "tag": ["x", "y"], "empty": ""},
                "note": "extra"
            })
        );
    }

    #[test]
    fn lenient_text_and_errors() {
        assert_eq!(
            fields("<tool_name>t</tool_name><arguments><c>a < b & c</c></arguments>").unwrap(),
            json!({"tool_name": "t", "arguments": {"c": "a < b & c"}})
        );
        assert_eq!(fields("<a x=\"1\">v</a>").unwrap_err().1, "invalid XML: attributes are not supported (in <a>)");
        assert_eq!(fields("<a>v</b>").unwrap_err().1, "invalid XML: </b> closes <a>");
        assert_eq!(fields("<a>v").unwrap_err().1, "invalid XML: <a> is not closed");
        assert_eq!(fields("<a>v<b>w</b></a>").unwrap_err().1, "invalid XML: <a> mixes text and elements");
        assert_eq!(fields("hi <a>v</a>").unwrap_err().1, "invalid XML: <tool> mixes text and elements");
        assert_eq!(fields("< b").unwrap_err().1, "invalid XML: text outside elements");
        let deep = "<a>".repeat(200) + &"</a>".repeat(200);
        assert!(fields(&deep).unwrap_err().1.contains("deeper than 128"));
    }
}
