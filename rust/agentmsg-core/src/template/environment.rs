//! The MiniJinja environment every chat template is compiled in: the Jinja2 settings, globals,
//! filters, tests and methods of transformers' environment (see the module docs of `template`).

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, Rest, ValueKind, ValueOrKwargs};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, State, UndefinedBehavior, Value};

use super::clock::DateTime;
use super::python::{self, JsonOptions};
use super::{RAISED, UTC_OFFSET};

/// A fresh environment with transformers' configuration, bounded by `fuel`.
pub(super) fn build(fuel: u64) -> Environment<'static> {
    // MiniJinja's built-in filters, tests and globals, with ours over them.
    let mut env = Environment::new();
    // Jinja2's whitespace settings as transformers sets them; the single newline ending a
    // template is dropped, as Jinja2 drops it.
    if let Ok(syntax) = SyntaxConfig::builder().trim_blocks(true).lstrip_blocks(true).keep_trailing_newline(false).build() {
        env.set_syntax(syntax);
    }
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    env.set_fuel(Some(fuel));
    env.set_formatter(|out, _state, value| {
        match value.as_str() {
            Some(text) => out.write_str(text),
            None => out.write_str(&python::to_str(value)),
        }
        .map_err(|_| Error::new(ErrorKind::WriteFailure, "could not write the output"))
    });
    env.set_unknown_method_callback(python_method);
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    env.add_filter("tojson", tojson);
    env.add_filter("string", |value: &Value| Value::from(python::to_str(value)));
    env.add_filter("join", join);
    env.add_filter("indent", indent);
    env.add_filter("trim", trim);
    // Jinja2's tests: a sequence has a length and items (strings and dicts too); iterable is
    // what Python can iterate (undefined too, not None).
    env.add_test("sequence", |value: &Value| {
        matches!(value.kind(), ValueKind::String | ValueKind::Seq | ValueKind::Map | ValueKind::Bytes)
    });
    env.add_test("iterable", |value: &Value| {
        matches!(
            value.kind(),
            ValueKind::String | ValueKind::Seq | ValueKind::Map | ValueKind::Bytes | ValueKind::Iterable | ValueKind::Undefined
        )
    });
    env
}

fn raise_exception(message: &Value) -> Result<Value, Error> {
    let message = python::to_str(message);
    RAISED.with(|raised| *raised.borrow_mut() = Some(message.clone()));
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

fn strftime_now(format: &str) -> String {
    DateTime::now(UTC_OFFSET.with(|offset| offset.get())).strftime(format)
}

/// Jinja2's `join(value, d='', attribute=None)`, items as Python's `str()`.
fn join(state: &State, value: &Value, separator: Option<&str>, kwargs: Kwargs) -> Result<String, Error> {
    let attribute: Option<Value> = kwargs.get("attribute")?;
    kwargs.assert_all_used()?;
    if let Some(text) = value.as_str() {
        // Joining a string joins its characters.
        let sep = separator.unwrap_or("");
        return Ok(text.chars().map(String::from).collect::<Vec<_>>().join(sep));
    }
    let mut out = String::new();
    for (index, item) in value.try_iter()?.enumerate() {
        state.consume_fuel(1)?;
        if index > 0 {
            out.push_str(separator.unwrap_or(""));
        }
        let item = match &attribute {
            Some(attribute) => match attribute.as_str() {
                Some(path) => path.split('.').try_fold(item, |value, part| match part.parse::<usize>() {
                    Ok(index) => value.get_item_by_index(index),
                    Err(_) => value.get_attr(part),
                })?,
                None => item.get_item(attribute)?,
            },
            None => item,
        };
        python::write_str(&item, &mut out);
    }
    Ok(out)
}

/// Python's `str.splitlines()`.
fn python_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let width = match c {
            '\r' if chars.peek().map(|&(_, next)| next) == Some('\n') => {
                chars.next();
                2
            }
            '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}' => {
                c.len_utf8()
            }
            _ => continue,
        };
        lines.push(&text[start..at]);
        start = at + width;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Jinja2's `indent(s, width=4, first=False, blank=False)`, with its quirk: a trailing newline
/// is kept.
fn indent(value: &Value, width: Option<&Value>, first: Option<bool>, blank: Option<bool>, kwargs: Kwargs) -> Result<String, Error> {
    let width = match kwargs.get::<Option<Value>>("width")? {
        Some(w) => Some(w),
        None => width.cloned(),
    };
    let first = kwargs.get::<Option<bool>>("first")?.or(first).unwrap_or(false);
    let blank = kwargs.get::<Option<bool>>("blank")?.or(blank).unwrap_or(false);
    kwargs.assert_all_used()?;
    let unit = match &width {
        None => "    ".to_owned(),
        Some(w) => match w.as_str() {
            Some(text) => text.to_owned(),
            None => " ".repeat(w.as_i64().unwrap_or(4).clamp(0, 1024) as usize),
        },
    };
    let mut text = python::to_str(value);
    text.push('\n');
    let lines = python_lines(&text);
    let mut out = String::with_capacity(text.len() + lines.len() * unit.len());
    if blank {
        out.push_str(&lines.join(&format!("\n{unit}")));
    } else if let Some((head, rest)) = lines.split_first() {
        out.push_str(head);
        if !rest.is_empty() {
            out.push('\n');
            let indented: Vec<String> =
                rest.iter().map(|line| if line.is_empty() { String::new() } else { format!("{unit}{line}") }).collect();
            out.push_str(&indented.join("\n"));
        }
    }
    if first {
        out.insert_str(0, &unit);
    }
    Ok(out)
}

/// transformers' `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`.
fn tojson(state: &State, value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    const NAMES: [&str; 4] = ["ensure_ascii", "indent", "separators", "sort_keys"];
    let mut given: [Option<Value>; 4] = Default::default();
    let mut position = 0;
    for arg in args.into_values() {
        if arg.is_kwargs() {
            let kwargs = Kwargs::try_from(arg)?;
            for (index, name) in NAMES.iter().enumerate() {
                if let Some(v) = kwargs.get::<Option<Value>>(name)? {
                    given[index] = Some(v);
                }
            }
            kwargs.assert_all_used()?;
        } else {
            if position >= NAMES.len() {
                return Err(Error::new(ErrorKind::TooManyArguments, "tojson takes at most 4 arguments"));
            }
            given[position] = Some(arg);
            position += 1;
        }
    }
    let mut options = JsonOptions::default();
    let [ensure_ascii, indent, separators, sort_keys] = given;
    if let Some(flag) = ensure_ascii {
        options.ensure_ascii = flag.is_true();
    }
    if let Some(flag) = sort_keys {
        options.sort_keys = flag.is_true();
    }
    if let Some(indent) = indent.filter(|v| !v.is_none()) {
        options.indent = Some(match indent.as_str() {
            Some(unit) => unit.to_owned(),
            None => {
                let width = indent.as_i64().ok_or_else(|| {
                    Error::new(ErrorKind::InvalidOperation, "tojson: indent must be an int or a str")
                })?;
                " ".repeat(width.clamp(0, 64) as usize)
            }
        });
        // json.dumps drops the space after items when it indents.
        options.item_separator = ",".into();
    }
    if let Some(separators) = separators.filter(|v| !v.is_none()) {
        let parts: Vec<Value> = separators.try_iter()?.collect();
        match parts.as_slice() {
            [item, key] if item.as_str().is_some() && key.as_str().is_some() => {
                options.item_separator = item.as_str().unwrap_or_default().to_owned();
                options.key_separator = key.as_str().unwrap_or_default().to_owned();
            }
            _ => return Err(Error::new(ErrorKind::InvalidOperation, "tojson: separators must be two strings")),
        }
    }
    let text = python::json_dumps(value, &options)?;
    // Serializing walks the whole value: charge for what it wrote.
    state.consume_fuel((text.len() / 4) as u64)?;
    Ok(Value::from(text))
}

/// Python's methods that MiniJinja's compatibility callback lacks, then that callback.
fn python_method(state: &mut State, value: &Value, method: &str, args: &[Value]) -> Result<Value, Error> {
    if let Some(text) = value.as_str() {
        match (method, args) {
            ("rsplit", _) => return rsplit(text, args),
            // Python's whitespace (`str.isspace`) holds \x1c-\x1f, which Rust's does not.
            ("strip", []) => return Ok(Value::from(text.trim_matches(python_space))),
            ("lstrip", []) => return Ok(Value::from(text.trim_start_matches(python_space))),
            ("rstrip", []) => return Ok(Value::from(text.trim_end_matches(python_space))),
            ("split", []) => return Ok(text.split(python_space).filter(|part| !part.is_empty()).map(Value::from).collect()),
            ("removeprefix", [prefix]) => {
                let prefix = prefix.as_str().unwrap_or_default();
                return Ok(Value::from(text.strip_prefix(prefix).unwrap_or(text)));
            }
            ("removesuffix", [suffix]) => {
                let suffix = suffix.as_str().unwrap_or_default();
                return Ok(Value::from(text.strip_suffix(suffix).unwrap_or(text)));
            }
            ("index", [needle]) => {
                let needle = needle.as_str().unwrap_or_default();
                return match text.find(needle) {
                    Some(byte) => Ok(Value::from(text[..byte].chars().count())),
                    None => Err(Error::new(ErrorKind::InvalidOperation, "substring not found")),
                };
            }
            _ => {}
        }
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// Python's `str.isspace()` of one character.
fn python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Jinja2's `trim(value, chars=None)`: Python's `str.strip`.
fn trim(value: &Value, chars: Option<&str>) -> String {
    let text = python::to_str(value);
    match chars {
        Some(chars) => text.trim_matches(|c| chars.contains(c)).to_owned(),
        None => text.trim_matches(python_space).to_owned(),
    }
}

/// Python's `str.rsplit(sep=None, maxsplit=-1)`.
fn rsplit(text: &str, args: &[Value]) -> Result<Value, Error> {
    let separator = args.first().filter(|v| !v.is_none()).map(|v| v.as_str().unwrap_or_default().to_owned());
    let max = args.get(1).and_then(Value::as_i64).unwrap_or(-1);
    let mut parts: Vec<String> = Vec::new();
    match separator {
        Some(separator) if !separator.is_empty() => {
            let mut rest = text;
            while max < 0 || (parts.len() as i64) < max {
                match rest.rfind(&separator) {
                    Some(at) => {
                        parts.push(rest[at + separator.len()..].to_owned());
                        rest = &rest[..at];
                    }
                    None => break,
                }
            }
            parts.push(rest.to_owned());
        }
        Some(_) => return Err(Error::new(ErrorKind::InvalidOperation, "empty separator")),
        None => {
            let mut rest = text.trim_end_matches(python_space);
            while !rest.is_empty() && (max < 0 || (parts.len() as i64) < max) {
                match rest.rfind(python_space) {
                    Some(at) => {
                        let width = rest[at..].chars().next().map_or(1, char::len_utf8);
                        parts.push(rest[at + width..].to_owned());
                        rest = rest[..at].trim_end_matches(python_space);
                    }
                    None => {
                        parts.push(rest.to_owned());
                        rest = "";
                    }
                }
            }
            if !rest.is_empty() {
                parts.push(rest.trim_start_matches(python_space).to_owned());
            }
        }
    }
    parts.reverse();
    Ok(parts.into_iter().map(Value::from).collect())
}

/// `{% generation %}` and `{% endgeneration %}` (transformers' assistant-mask tag) as an `if`
/// block that always holds, with the same whitespace control, so their body renders as Jinja2
/// renders it.
pub(super) fn rewrite_generation_tags(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        out.push_str(&rest[..start]);
        let tag = &rest[start..];
        match generation_tag(tag) {
            Some((length, left, end, right)) => {
                out.push_str("{%");
                out.push_str(left);
                out.push_str(if end { " endif " } else { " if true " });
                out.push_str(right);
                out.push_str("%}");
                rest = &tag[length..];
            }
            None => {
                out.push_str("{%");
                rest = &tag[2..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A `{%[-+] [end]generation [-+]%}` tag at the start of `tag`: its length, its whitespace
/// controls and whether it ends the block.
fn generation_tag(tag: &str) -> Option<(usize, &str, bool, &str)> {
    let mut at = 2;
    let control = |text: &str| if text.starts_with('-') || text.starts_with('+') { 1 } else { 0 };
    let left = &tag[at..at + control(&tag[at..])];
    at += left.len();
    at += tag[at..].len() - tag[at..].trim_start().len();
    let end = tag[at..].starts_with("endgeneration");
    let word = if end { "endgeneration" } else { "generation" };
    if !tag[at..].starts_with(word) {
        return None;
    }
    at += word.len();
    let after = tag[at..].trim_start();
    at = tag.len() - after.len();
    let right = &tag[at..at + control(after)];
    at += right.len();
    tag[at..].starts_with("%}").then_some((at + 2, left, end, right))
}
