//! Writing JSON text: compact (no whitespace), strings escaped the way `json.dumps(...,
//! ensure_ascii=False)` does, so the streamed argument text is what a server forwards as is.

use jiter::JsonValue;

use super::call::Json;

/// Appends `text` (UTF-8 bytes, possibly a piece of a longer string) escaped for the inside of
/// a JSON string.
pub(crate) fn escape_into(text: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut start = 0;
    for (i, &b) in text.iter().enumerate() {
        let escaped: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&text[start..i]);
        if escaped.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(escaped);
        }
        start = i + 1;
    }
    out.extend_from_slice(&text[start..]);
}

/// Appends `text` as a JSON string literal.
pub(crate) fn string_into(text: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    escape_into(text, out);
    out.push(b'"');
}

/// Appends the compact JSON text of `value`.
pub fn value_into(value: &Json, out: &mut Vec<u8>) {
    match value {
        JsonValue::Null => out.extend_from_slice(b"null"),
        JsonValue::Bool(true) => out.extend_from_slice(b"true"),
        JsonValue::Bool(false) => out.extend_from_slice(b"false"),
        JsonValue::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
        JsonValue::BigInt(big) => out.extend_from_slice(big.to_string().as_bytes()),
        // Debug gives the shortest text that reads back to the same float, with an exponent
        // for large magnitudes and always a `.` or exponent, so it never reads back as an int.
        // An infinity (read from a number past the largest float) writes as such a number, so
        // the text stays JSON and the call's decode reports it as out of range.
        JsonValue::Float(f) if f.is_infinite() => out.extend_from_slice(if *f > 0.0 { b"1e400" } else { b"-1e400" }),
        JsonValue::Float(f) => out.extend_from_slice(format!("{f:?}").as_bytes()),
        JsonValue::Str(s) => string_into(s.as_bytes(), out),
        JsonValue::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                value_into(item, out);
            }
            out.push(b']');
        }
        JsonValue::Object(pairs) => {
            out.push(b'{');
            for (i, (key, item)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string_into(key.as_bytes(), out);
                out.push(b':');
                value_into(item, out);
            }
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::call::parse_json;

    #[test]
    fn compact_text_reads_back_to_the_same_value() {
        let source = r#"{"a": [1, 2.5, 1e300, -0.0, true, null], "s": "x\"\\\n\u0001é", "o": {}}"#;
        let value = parse_json(source.as_bytes()).unwrap();
        let mut out = Vec::new();
        value_into(&value, &mut out);
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            r#"{"a":[1,2.5,1e300,-0.0,true,null],"s":"x\"\\\n\u0001é","o":{}}"#
        );
        assert_eq!(parse_json(&out).unwrap(), value);
    }
}
