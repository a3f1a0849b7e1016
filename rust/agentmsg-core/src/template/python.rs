//! Python's text of template values: `str()` (what Jinja2 prints for `{{ value }}`), `repr()`
//! (the items of a printed list or dict) and `json.dumps` (transformers' `tojson` filter), so a
//! template prints exactly what it prints under transformers.

use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, Value};

/// Python's `repr(float)`: the shortest digits that read back, fixed notation for exponents from
/// -4 to 15, scientific (`1e+16`, `1.5e-05`) outside.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // `{:e}` gives the shortest round-trip digits as `d.ddde<exp>`.
    let sci = format!("{:e}", x);
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exponent) {
        if exponent >= 0 {
            let point = exponent as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', point - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exponent.unsigned_abs()));
    }
    out
}

/// Characters Python's `str.isprintable()` rejects, for the ranges templates meet: controls,
/// the C1 block, and the separators and format characters that print as nothing.
fn python_unprintable(c: char) -> bool {
    matches!(c as u32,
        0x00..=0x1f | 0x7f..=0xa0 | 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x1680
        | 0x180e | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x2064 | 0x2066..=0x206f
        | 0x3000 | 0xd800..=0xdfff | 0xe000..=0xf8ff | 0xfeff | 0xfff9..=0xfffb
        | 0xf0000..=0x10ffff)
}

/// Python's `repr(str)`: single quotes unless the text holds a `'` and no `"`.
pub fn str_repr(text: &str, out: &mut String) {
    let quote = if text.contains('\'') && !text.contains('"') { '"' } else { '\'' };
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if python_unprintable(c) => {
                let code = c as u32;
                if code <= 0xff {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code <= 0xffff {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `str(value)`, written to `out`: what Jinja2 prints for `{{ value }}`.
pub fn write_str(value: &Value, out: &mut String) {
    match value.kind() {
        ValueKind::Undefined => {}
        ValueKind::String => out.push_str(value.as_str().unwrap_or_default()),
        _ => write_repr(value, out),
    }
}

/// Python's `str(value)`.
pub fn to_str(value: &Value) -> String {
    let mut out = String::new();
    write_str(value, &mut out);
    out
}

/// Python's `repr(value)` for the values a template holds.
pub fn write_repr(value: &Value, out: &mut String) {
    match value.kind() {
        ValueKind::Undefined => {}
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => write_number(value, out),
        ValueKind::String => str_repr(value.as_str().unwrap_or_default(), out),
        ValueKind::Seq | ValueKind::Iterable => {
            let tuple = value.is_tuple();
            out.push(if tuple { '(' } else { '[' });
            let mut count = 0;
            if let Ok(items) = value.try_iter() {
                for (index, item) in items.enumerate() {
                    if index > 0 {
                        out.push_str(", ");
                    }
                    write_repr(&item, out);
                    count += 1;
                }
            }
            if tuple && count == 1 {
                out.push(',');
            }
            out.push(if tuple { ')' } else { ']' });
        }
        ValueKind::Map if value.as_object().and_then(|object| object.try_iter_pairs()).is_some() => {
            out.push('{');
            let pairs = value.as_object().and_then(|object| object.try_iter_pairs());
            for (index, (key, item)) in pairs.into_iter().flatten().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_repr(&key, out);
                out.push_str(": ");
                write_repr(&item, out);
            }
            out.push('}');
        }
        _ => out.push_str(&value.to_string()),
    }
}

fn write_number(value: &Value, out: &mut String) {
    match float_of(value) {
        Some(x) => out.push_str(&float_repr(x)),
        None => out.push_str(&value.to_string()),
    }
}

/// The float of a number that is a float (ints print as ints).
fn float_of(value: &Value) -> Option<f64> {
    if value.is_number() && !value.is_integer() {
        f64::try_from(value.clone()).ok()
    } else {
        None
    }
}

/// The options of Python's `json.dumps` that transformers' `tojson` exposes.
pub struct JsonOptions {
    pub ensure_ascii: bool,
    /// `None`: one line; `Some(unit)`: one item per line, indented by `unit` per level.
    pub indent: Option<String>,
    pub item_separator: String,
    pub key_separator: String,
    pub sort_keys: bool,
}

impl Default for JsonOptions {
    fn default() -> Self {
        Self { ensure_ascii: false, indent: None, item_separator: ", ".into(), key_separator: ": ".into(), sort_keys: false }
    }
}

fn json_string(text: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ensure_ascii && (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A dict key as `json.dumps` writes it: strings as they are, numbers, booleans and None as
/// their JSON text; other keys are Python's TypeError.
fn json_key(key: &Value) -> Result<String, Error> {
    match key.kind() {
        ValueKind::String => Ok(key.as_str().unwrap_or_default().to_owned()),
        ValueKind::None => Ok("null".into()),
        ValueKind::Bool => Ok(if key.is_true() { "true" } else { "false" }.into()),
        ValueKind::Number => Ok(match float_of(key) {
            Some(x) => json_float(x),
            None => key.to_string(),
        }),
        _ => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("tojson: keys must be str, int, float, bool or None, not {}", key.kind()),
        )),
    }
}

fn json_float(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity".into() } else { "-Infinity".into() }
    } else {
        float_repr(x)
    }
}

/// Python's `json.dumps(value, ...)` with `options`.
pub fn json_dumps(value: &Value, options: &JsonOptions) -> Result<String, Error> {
    let mut out = String::new();
    write_json(value, options, 0, &mut out)?;
    Ok(out)
}

fn newline(options: &JsonOptions, level: usize, out: &mut String) {
    if let Some(unit) = &options.indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str(unit);
        }
    }
}

fn write_json(value: &Value, options: &JsonOptions, level: usize, out: &mut String) -> Result<(), Error> {
    match value.kind() {
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => match float_of(value) {
            Some(x) => out.push_str(&json_float(x)),
            None => out.push_str(&value.to_string()),
        },
        ValueKind::String => json_string(value.as_str().unwrap_or_default(), options.ensure_ascii, out),
        ValueKind::Seq => {
            let items: Vec<Value> = value.try_iter()?.collect();
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(&options.item_separator);
                }
                newline(options, level + 1, out);
                write_json(item, options, level + 1, out)?;
            }
            newline(options, level, out);
            out.push(']');
        }
        ValueKind::Map => {
            let Some(pairs) = value.as_object().and_then(|object| object.try_iter_pairs()) else {
                return Err(not_serializable(value));
            };
            let mut pairs: Vec<(String, Value)> =
                pairs.map(|(key, item)| json_key(&key).map(|key| (key, item))).collect::<Result<_, _>>()?;
            if pairs.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            if options.sort_keys {
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
            }
            out.push('{');
            for (index, (key, item)) in pairs.iter().enumerate() {
                if index > 0 {
                    out.push_str(&options.item_separator);
                }
                newline(options, level + 1, out);
                json_string(key, options.ensure_ascii, out);
                out.push_str(&options.key_separator);
                write_json(item, options, level + 1, out)?;
            }
            newline(options, level, out);
            out.push('}');
        }
        _ => return Err(not_serializable(value)),
    }
    Ok(())
}

fn not_serializable(value: &Value) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("tojson: a value of type {} is not JSON serializable", value.kind()))
}

