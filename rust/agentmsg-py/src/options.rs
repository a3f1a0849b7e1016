//! Reading the keyword options of the parsers (`parse`, `parse_many`, `StreamParser` and their
//! dialect forms): each option's type checked, its value validated, its default applied.

use std::sync::Arc;

use agentmsg_core::parse::dialect::{Dialect, DialectOptions, Tools};
use agentmsg_core::parse::{Options, StartThinking, ThinkingMode, ToolFormat};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};

use crate::errors::ErrorClass;
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

/// The keyword options a parser function was given, each as passed (`None` where not given):
/// `forge` reads them into the options of Forge's parser, `dialect` into a dialect's.
#[derive(Clone, Copy, Default)]
pub(crate) struct Keywords<'a, 'py> {
    pub(crate) dialect: Option<&'a Bound<'py, PyAny>>,
    pub(crate) thinking: Option<&'a Bound<'py, PyAny>>,
    pub(crate) tool_format: Option<&'a Bound<'py, PyAny>>,
    pub(crate) code_fences: Option<&'a Bound<'py, PyAny>>,
    pub(crate) start_in_thinking: Option<&'a Bound<'py, PyAny>>,
    pub(crate) max_calls: Option<&'a Bound<'py, PyAny>>,
    pub(crate) tools_json: Option<&'a Bound<'py, PyAny>>,
}

impl Keywords<'_, '_> {
    /// The options of Forge's parser (`parse`, `parse_many`, `StreamParser`); `start_default`
    /// when `start_in_thinking` is not given.
    pub(crate) fn forge(self, py: Python<'_>, start_default: StartThinking) -> PyResult<Options> {
        let max_calls = max_calls(self.max_calls)?;
        let thinking: String = option(self.thinking, "thinking", "a str", "auto".to_owned())?;
        let tool_format: String = option(self.tool_format, "tool_format", "a str", "auto".to_owned())?;
        let code_fences: bool = option(self.code_fences, "code_fences", "a bool", true)?;
        let start_in_thinking = start_in_thinking(self.start_in_thinking, start_default)?;
        let thinking = ThinkingMode::from_name(&thinking).ok_or_else(|| {
            ErrorClass::Message.new_err(py, format!("unknown thinking mode '{thinking}'; valid: auto, tags, brackets, none"))
        })?;
        let tool_format = ToolFormat::from_name(&tool_format).ok_or_else(|| {
            ErrorClass::Message.new_err(py, format!("unknown tool_format '{tool_format}'; valid: auto, json, xml"))
        })?;
        let tools = tools(py, self.tools_json)?;
        Ok(Options { thinking, tool_format, code_fences, start_in_thinking, max_calls, tools })
    }

    /// The options of a dialect's parser (`parse_dialect`, `parse_dialect_many`,
    /// `DialectStreamParser`); `dialect` is required, so `None` here is a `None` given for it.
    pub(crate) fn dialect(self, py: Python<'_>, start_default: StartThinking) -> PyResult<DialectOptions> {
        let Some(dialect) = self.dialect else {
            return Err(ErrorClass::MessageType.new_err(py, "dialect must be a str, not NoneType"));
        };
        let mut options = if dialect.is_instance_of::<PyString>() {
            let name: String = option(Some(dialect), "dialect", "a str", String::new())?;
            let dialect = Dialect::from_name(&name).ok_or_else(|| {
                let valid: Vec<&str> = Dialect::ALL.iter().map(|(n, _)| *n).collect();
                ErrorClass::Message.new_err(py, format!("unknown dialect '{name}'; valid: {}", valid.join(", ")))
            })?;
            DialectOptions::new(dialect)
        } else {
            crate::dialect::custom_options(dialect)?
        };
        options.start_in_thinking = start_in_thinking(self.start_in_thinking, start_default)?;
        options.tools = tools(py, self.tools_json)?;
        Ok(options)
    }
}

/// The tool definitions given as JSON text (`tools_json`), read once for the whole parse.
fn tools(py: Python<'_>, tools_json: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Arc<Tools>>> {
    match tools_json {
        Some(value) if !value.is_none() => {
            let text: String = option(Some(value), "tools_json", "a str", String::new())?;
            let tools = Tools::from_json(text.as_bytes())
                .map_err(|e| ErrorClass::Message.new_err(py, format!("invalid tools: {e}")))?;
            Ok(Some(Arc::new(tools)))
        }
        _ => Ok(None),
    }
}
