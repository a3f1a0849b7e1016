//! Models' Jinja chat templates, rendered as transformers' `apply_chat_template` renders them.
//!
//! A template is compiled once ([`ChatTemplate::new`]) and rendered many times
//! ([`ChatTemplate::render`]) with MiniJinja, configured to match the Jinja2 environment
//! transformers builds (`ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`
//! with loop controls):
//! - globals `raise_exception(message)` (a [`TemplateError::Raised`] carrying the message),
//!   `strftime_now(format)` (Python's `datetime.now().strftime`), `namespace`, `dict`, `range`;
//! - the `tojson` filter of transformers: `json.dumps(x, ensure_ascii=False, indent=None,
//!   separators=None, sort_keys=False)`, byte for byte, with those arguments;
//! - values print as Python's `str()` prints them (`None`, `True`, `['a', 1]`, `{'k': 1.0}`),
//!   as do the `string` and `join` filters;
//! - Python's methods on strings, dicts and lists that templates call (`.strip()`,
//!   `.split()`, `.startswith()`, `.items()`, `.get()`, ...): MiniJinja's Python
//!   compatibility callback;
//! - tests as Jinja2 defines them where MiniJinja differs (`sequence`: strings and dicts are
//!   sequences);
//! - `{% generation %}` blocks (transformers' assistant-mask tag) render their body.
//!
//! Templates are untrusted input. They see only the context they are given: there is no loader,
//! no include, import or extends, and no value reaches the host. A render is bounded by fuel (a
//! budget for every instruction and every byte a template makes; loops and strings that grow
//! without bound run out of it) and by the size of its output; both end it with
//! [`TemplateError::Limit`].
//!
//! The context transformers passes is `messages`, `tools`, `documents`,
//! `add_generation_prompt` and the keyword arguments (the tokenizer's special tokens, such as
//! `bos_token`, then the caller's, such as `enable_thinking`): [`chat_context`] builds it.

mod clock;
mod environment;
pub mod python;

use std::cell::{Cell, RefCell};
use std::fmt;
use std::io;

use minijinja::{Environment, ErrorKind};

pub use clock::DateTime;
pub use minijinja::Value;

/// What a render may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// MiniJinja's fuel: one per instruction, plus one per 64 bytes of data the template makes.
    pub fuel: u64,
    /// The largest output, in bytes.
    pub max_output_bytes: usize,
}

impl Default for Limits {
    /// Ten million fuel (well under a second of work, and at most about 640 MB of data made; a
    /// 10,000-message history with tools takes less than a million) and 64 MiB of output.
    fn default() -> Self {
        Self { fuel: 10_000_000, max_output_bytes: 64 << 20 }
    }
}

/// Why a template could not be compiled or rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// The template is not valid Jinja (or uses what is refused: includes, imports, extends).
    Syntax { line: usize, message: String },
    /// The template called `raise_exception(message)`.
    Raised { message: String },
    /// The render ran out of fuel or output.
    Limit { message: String },
    /// The render failed (an undefined attribute, a wrong type, an unknown filter...).
    Render { line: Option<usize>, message: String },
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Syntax { line, message } => write!(f, "syntax error on line {line} of the template: {message}"),
            Self::Raised { message } => write!(f, "the template raised: {message}"),
            Self::Limit { message } => write!(f, "the template exceeded its limits: {message}"),
            Self::Render { line: Some(line), message } => write!(f, "the template failed on line {line}: {message}"),
            Self::Render { line: None, message } => write!(f, "the template failed: {message}"),
        }
    }
}

impl std::error::Error for TemplateError {}

thread_local! {
    /// The message of the `raise_exception` call that ended the render on this thread.
    static RAISED: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The UTC offset `strftime_now` formats at, for the render on this thread.
    static UTC_OFFSET: Cell<i32> = const { Cell::new(0) };
}

const NAME: &str = "chat_template";

/// A compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    limits: Limits,
}

impl fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatTemplate").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// Compiles `source` with the default [`Limits`].
    pub fn new(source: &str) -> Result<Self, TemplateError> {
        Self::with_limits(source, Limits::default())
    }

    /// Compiles `source`; renders are bounded by `limits`.
    pub fn with_limits(source: &str, limits: Limits) -> Result<Self, TemplateError> {
        let mut env = environment::build(limits.fuel);
        let source = environment::rewrite_generation_tags(source);
        env.add_template_owned(NAME, source).map_err(|error| TemplateError::Syntax {
            line: error.line().unwrap_or(1),
            message: error.detail().map_or_else(|| error.kind().to_string(), str::to_owned),
        })?;
        Ok(Self { env, limits })
    }

    /// The limits renders are bounded by.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Renders the template with `context` (a map, usually from [`chat_context`]); `strftime_now`
    /// reads the time in UTC.
    pub fn render(&self, context: &Value) -> Result<String, TemplateError> {
        self.render_at(context, 0)
    }

    /// [`render`](Self::render) with `strftime_now` at `utc_offset_seconds` from UTC.
    pub fn render_at(&self, context: &Value, utc_offset_seconds: i32) -> Result<String, TemplateError> {
        RAISED.with(|raised| raised.borrow_mut().take());
        UTC_OFFSET.with(|offset| offset.set(utc_offset_seconds));
        let template = self.env.get_template(NAME).map_err(|error| render_error(&error))?;
        let mut output = LimitedOutput { bytes: Vec::new(), max: self.limits.max_output_bytes, overflow: false };
        let result = template.render_captured_to(context.clone(), &mut output);
        match result {
            Ok(_) => Ok(String::from_utf8(output.bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())),
            Err(error) => {
                if let Some(message) = RAISED.with(|raised| raised.borrow_mut().take()) {
                    return Err(TemplateError::Raised { message });
                }
                if output.overflow {
                    return Err(TemplateError::Limit {
                        message: format!("the output passed {} bytes", self.limits.max_output_bytes),
                    });
                }
                if error.kind() == ErrorKind::OutOfFuel {
                    return Err(TemplateError::Limit {
                        message: format!("the render used all of its {} fuel", self.limits.fuel),
                    });
                }
                Err(render_error(&error))
            }
        }
    }
}

fn render_error(error: &minijinja::Error) -> TemplateError {
    let mut message = error.kind().to_string();
    if let Some(detail) = error.detail() {
        message.push_str(": ");
        message.push_str(detail);
    }
    TemplateError::Render { line: error.line(), message }
}

/// The output of a render, refusing to grow past `max` bytes.
struct LimitedOutput {
    bytes: Vec<u8>,
    max: usize,
    overflow: bool,
}

impl io::Write for LimitedOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.bytes.len() + buf.len() > self.max {
            self.overflow = true;
            return Err(io::Error::other("output limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The context transformers renders a chat template with: `messages`, `tools` (`None` when there
/// are none), `documents` (`None`), `add_generation_prompt`, then `extra` (special tokens and
/// the caller's keyword arguments; a later entry wins). An extra named like one of the four is
/// refused, as Python refuses a repeated keyword.
pub fn chat_context<I>(messages: Value, tools: Option<Value>, add_generation_prompt: bool, extra: I) -> Result<Value, String>
where
    I: IntoIterator<Item = (String, Value)>,
{
    let mut pairs: Vec<(String, Value)> = vec![
        ("messages".into(), messages),
        ("tools".into(), tools.unwrap_or(Value::from(()))),
        ("documents".into(), Value::from(())),
        ("add_generation_prompt".into(), Value::from(add_generation_prompt)),
    ];
    for (name, value) in extra {
        if pairs[..4].iter().any(|(fixed, _)| *fixed == name) {
            return Err(format!("{name} cannot be passed as a template keyword argument"));
        }
        match pairs.iter_mut().find(|(existing, _)| *existing == name) {
            Some(slot) => slot.1 = value,
            None => pairs.push((name, value)),
        }
    }
    Ok(Value::from_pairs(pairs))
}

#[cfg(test)]
mod tests;
