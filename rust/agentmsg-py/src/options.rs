//! Reading the keyword options of the parsers (`parse`, `parse_many`, `StreamParser` and their
//! dialect forms): each option's type checked, its value validated, its default applied.

use std::sync::Arc;

use agentmsg_core::parse::dialect::{self as core_dialect, Dialect, DialectOptions, Tools};
use agentmsg_core::parse::{self as core_parse, Document, Options, StartThinking, ThinkingMode, ToolFormat};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};

use crate::errors::{describe, ErrorClass};
use crate::pystr::type_name;

/// One keyword option: its default when not given, a `MessageTypeError` naming it when given
/// with the wrong type.
pub(crate) fn option<'py, T: FromPyObjectOwned<'py>>(
    value: Option<&Bound<'py, PyAny>>,
    name: &str,
    expected: &str,
    default: T,
) -> PyResult<T> {
    match value {
        None => Ok(default),
        Some(value) => value.extract::<T>().map_err(|_| {
            ErrorClass::MessageType.new_err(value.py(), format!("{name} must be {expected}, not {}", type_name(value)))
        }),
    }
}

/// A name option (`dialect`, `thinking`, `tool_format`): what `lookup` finds for it, else an
/// error that describes it briefly (a str that cannot be UTF-8 is no name either) and lists
/// `valid`, the names `lookup` knows.
fn named<T>(value: &Bound<'_, PyAny>, option: &str, kind: &str, valid: &[&str], lookup: impl Fn(&str) -> Option<T>) -> PyResult<T> {
    let py = value.py();
    let Ok(name) = value.cast::<PyString>() else {
        return Err(ErrorClass::MessageType.new_err(py, format!("{option} must be a str, not {}", type_name(value))));
    };
    name.to_str().ok().and_then(lookup).ok_or_else(|| {
        ErrorClass::Message.new_err(py, format!("unknown {kind} {}; valid: {}", describe(value), valid.join(", ")))
    })
}

/// The dialect named `name` ("forge" is a name too, though not a `Dialect`: it is Forge's parser).
fn dialect_named(name: &Bound<'_, PyAny>) -> PyResult<Dialect> {
    let valid: Vec<&str> = ["forge"].into_iter().chain(Dialect::ALL.iter().map(|(name, _)| *name)).collect();
    named(name, "dialect", "dialect", &valid, Dialect::from_name)
}

/// `start_in_thinking`: a bool, or None (or not given) for `default` ("detect" for whole text,
/// "no" for a stream, which cannot look ahead).
fn start_in_thinking(value: Option<&Bound<'_, PyAny>>, default: StartThinking) -> PyResult<StartThinking> {
    Ok(match value {
        Some(value) if !value.is_none() => {
            if option(Some(value), "start_in_thinking", "a bool or None", false)? {
                StartThinking::Yes
            } else {
                StartThinking::No
            }
        }
        _ => default,
    })
}

/// `max_calls`: None (no limit) or an int from 0 to `usize::MAX`.
fn max_calls(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(value) = value.filter(|value| !value.is_none()) else { return Ok(None) };
    let py = value.py();
    let count = value.cast::<PyInt>().ok().filter(|_| !value.is_instance_of::<PyBool>()).ok_or_else(|| {
        ErrorClass::MessageType.new_err(py, format!("max_calls must be an int or None, not {}", type_name(value)))
    })?;
    // The bad value is not shown: a huge int's digits are unbounded.
    count.extract::<usize>().map(Some).map_err(|_| {
        let sign = if count.lt(0).unwrap_or(false) { "negative" } else { "too large" };
        ErrorClass::Message.new_err(py, format!("max_calls must be from 0 to {} (this one is {sign})", usize::MAX))
    })
}

/// The keyword options (`**options`) a parser was given, each as passed; `None` given for an
/// option is the option not given. `forge` reads them into the options of Forge's parser,
/// `dialect` into a dialect's, `parser` into the one `dialect` names.
#[derive(Default)]
pub(crate) struct Keywords<'py> {
    dialect: Option<Bound<'py, PyAny>>,
    thinking: Option<Bound<'py, PyAny>>,
    tool_format: Option<Bound<'py, PyAny>>,
    code_fences: Option<Bound<'py, PyAny>>,
    start_in_thinking: Option<Bound<'py, PyAny>>,
    max_calls: Option<Bound<'py, PyAny>>,
    tools_json: Option<Bound<'py, PyAny>>,
}

impl<'py> Keywords<'py> {
    /// Reads `**options` of `caller`; a name no parser takes is a `MessageTypeError`, as Python
    /// names an unexpected keyword argument.
    pub(crate) fn read(caller: &str, options: Option<&Bound<'py, PyDict>>) -> PyResult<Self> {
        let mut keywords = Self::default();
        for (name, value) in options.into_iter().flatten() {
            let slot = match name.cast::<PyString>().ok().and_then(|name| name.to_str().ok()) {
                Some("dialect") => &mut keywords.dialect,
                Some("thinking") => &mut keywords.thinking,
                Some("tool_format") => &mut keywords.tool_format,
                Some("code_fences") => &mut keywords.code_fences,
                Some("start_in_thinking") => &mut keywords.start_in_thinking,
                Some("max_calls") => &mut keywords.max_calls,
                Some("tools_json") => &mut keywords.tools_json,
                _ => {
                    let message = format!("{caller}() got an unexpected keyword argument {}", describe(&name));
                    return Err(ErrorClass::MessageType.new_err(name.py(), message));
                }
            };
            *slot = Some(value).filter(|value| !value.is_none());
        }
        Ok(keywords)
    }

    /// Whether `dialect` is not given or is "forge".
    fn is_forge(&self) -> bool {
        self.dialect.as_ref().is_none_or(|dialect| {
            dialect.cast::<PyString>().is_ok_and(|name| name.to_str().is_ok_and(|name| name == "forge"))
        })
    }

    /// The parser `dialect` names (Forge's when not given) with its options; `start_default`
    /// when `start_in_thinking` is not given.
    pub(crate) fn parser(&self, py: Python<'_>, start_default: StartThinking) -> PyResult<Parser> {
        Ok(if self.is_forge() {
            Parser::Forge(self.forge(py, start_default)?)
        } else {
            Parser::Dialect(self.dialect(py, start_default)?)
        })
    }

    /// The options of Forge's parser; a dialect other than "forge" is refused.
    pub(crate) fn forge(&self, py: Python<'_>, start_default: StartThinking) -> PyResult<Options> {
        if let Some(dialect) = self.dialect.as_ref().filter(|_| !self.is_forge()) {
            // An unknown name is named as such; a known one is not this parser's.
            if dialect.is_instance_of::<PyString>() {
                dialect_named(dialect)?;
            }
            return Err(ErrorClass::Message.new_err(py, "this parser reads Forge's dialect only"));
        }
        let max_calls = max_calls(self.max_calls.as_ref())?;
        let thinking = match &self.thinking {
            Some(value) => named(value, "thinking", "thinking mode", &["auto", "tags", "brackets", "none"], ThinkingMode::from_name)?,
            None => ThinkingMode::Auto,
        };
        let tool_format = match &self.tool_format {
            Some(value) => named(value, "tool_format", "tool format", &["auto", "json", "xml"], ToolFormat::from_name)?,
            None => ToolFormat::Auto,
        };
        let code_fences: bool = option(self.code_fences.as_ref(), "code_fences", "a bool", true)?;
        let start_in_thinking = start_in_thinking(self.start_in_thinking.as_ref(), start_default)?;
        let tools = tools(py, self.tools_json.as_ref())?;
        Ok(Options { thinking, tool_format, code_fences, start_in_thinking, max_calls, tools })
    }

    /// The options of a dialect's parser: `dialect` is required, and the options of Forge's
    /// parser are refused.
    pub(crate) fn dialect(&self, py: Python<'_>, start_default: StartThinking) -> PyResult<DialectOptions> {
        let Some(dialect) = &self.dialect else {
            return Err(ErrorClass::MessageType.new_err(py, "dialect must be a str, not NoneType"));
        };
        if self.is_forge() {
            let message = "dialect 'forge' is not read here: Forge's format has its own parser (agentmsg.StreamParser)";
            return Err(ErrorClass::Message.new_err(py, message));
        }
        // The dialect first: the error about options it does not take names it.
        let mut options = if dialect.is_instance_of::<PyString>() {
            DialectOptions::new(dialect_named(dialect)?)
        } else {
            crate::dialect::custom_options(dialect)?
        };
        let forge_only = [("thinking", &self.thinking), ("tool_format", &self.tool_format),
            ("code_fences", &self.code_fences), ("max_calls", &self.max_calls)];
        let given: Vec<&str> = forge_only.iter().filter(|(_, value)| value.is_some()).map(|(name, _)| *name).collect();
        if !given.is_empty() {
            let name = if dialect.is_instance_of::<PyString>() { Ok(dialect.clone()) } else { dialect.getattr("name") };
            let name = name.map_or_else(|_| format!("a {}", type_name(dialect)), |name| describe(&name));
            let message = format!("{}: an option of the forge dialect only, not of {name}", given.join(", "));
            return Err(ErrorClass::Message.new_err(py, message));
        }
        options.start_in_thinking = start_in_thinking(self.start_in_thinking.as_ref(), start_default)?;
        options.tools = tools(py, self.tools_json.as_ref())?;
        Ok(options)
    }
}

/// Forge's parser or a dialect's, with its options.
pub(crate) enum Parser {
    Forge(Options),
    Dialect(DialectOptions),
}

impl Parser {
    pub(crate) fn parse<'a>(&self, text: &'a [u8]) -> Document<'a> {
        match self {
            Self::Forge(options) => core_parse::parse(text, options),
            Self::Dialect(options) => core_dialect::parse(text, options),
        }
    }

    pub(crate) fn parse_many<'a, T: AsRef<[u8]> + Sync>(&self, texts: &'a [T]) -> Vec<Document<'a>> {
        match self {
            Self::Forge(options) => core_parse::parse_many(texts, options),
            Self::Dialect(options) => core_dialect::parse_many(texts, options),
        }
    }
}

/// The tool definitions given as JSON text (`tools_json`), read once for the whole parse.
fn tools(py: Python<'_>, tools_json: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Arc<Tools>>> {
    match tools_json {
        Some(value) if !value.is_none() => {
            let Ok(text) = value.cast::<PyString>() else {
                return Err(ErrorClass::MessageType.new_err(py, format!("tools_json must be a str, not {}", type_name(value))));
            };
            let text = text.to_str().map_err(|_| {
                ErrorClass::Message.new_err(py, "tools_json must be valid text, not hold a lone surrogate")
            })?;
            let tools = Tools::from_json(text.as_bytes())
                .map_err(|e| ErrorClass::Message.new_err(py, format!("invalid tools: {e}")))?;
            Ok(Some(Arc::new(tools)))
        }
        _ => Ok(None),
    }
}
