//! Binding of the model dialects: `DialectStreamParser`, the parts of a custom `Dialect`, the
//! dialect names. `parse`, `parse_many` and `parse_arrow` read a dialect through `dialect=`;
//! results, events, options and the stream wrapper are those of Forge's parser.

use agentmsg_core::parse::dialect::{self as core_dialect, CustomDialect, Dialect, DialectEvent, DialectMachine, DialectOptions};
use agentmsg_core::parse::{Event, StartThinking};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use pyo3::IntoPyObjectExt;

use crate::events::{is_shown, tool_call_start};
use crate::errors::ErrorClass;
use crate::options::option;
use crate::pystr::type_name;

/// The options of an `agentmsg.Dialect` (a dialect from parts): its attributes are read and
/// checked by the core; an error names the dialect and the part.
pub(crate) fn custom_options(dialect: &Bound<'_, PyAny>) -> PyResult<DialectOptions> {
    let py = dialect.py();
    let text = |field: &str| -> PyResult<Option<String>> {
        let value = dialect.getattr(field).map_err(|_| {
            let message = format!("dialect must be a str or an agentmsg.Dialect, not {}", type_name(dialect));
            ErrorClass::MessageType.new_err(py, message)
        })?;
        if value.is_none() {
            return Ok(None);
        }
        if let Ok(text) = value.cast::<PyString>() {
            let text = text.to_str().map_err(|_| {
                ErrorClass::Message.new_err(py, format!("Dialect.{field} must be valid text, not hold a lone surrogate"))
            })?;
            return Ok(Some(text.to_owned()));
        }
        let what = format!("Dialect.{field}");
        option(Some(&value), &what, "a str", String::new()).map(Some)
    };
    let required = |field: &str| -> PyResult<String> {
        text(field)?
            .ok_or_else(|| ErrorClass::MessageType.new_err(py, format!("Dialect.{field} must be a str, not NoneType")))
    };
    let name = required("name")?;
    let think = match (text("think_start")?, text("think_end")?) {
        (Some(start), Some(end)) => Some((start, end)),
        (None, None) => None,
        _ => {
            let name = core_dialect::quoted(&name);
            return Err(ErrorClass::Message.new_err(py, format!("dialect {name}: think_start and think_end go together")));
        }
    };
    let parts = CustomDialect {
        call_start: required("call_start")?,
        call_end: required("call_end")?,
        payload: required("payload")?,
        name_key: required("name_key")?,
        arguments_key: required("arguments_key")?,
        think,
    };
    DialectOptions::custom(&parts)
        .map_err(|error| ErrorClass::Message.new_err(py, format!("dialect {}: {error}", core_dialect::quoted(&name))))
}

/// Checks the parts of an `agentmsg.Dialect` (its constructor calls this).
#[pyfunction]
fn check_dialect(dialect: &Bound<'_, PyAny>) -> PyResult<()> {
    custom_options(dialect).map(|_| ())
}

crate::stream::stream_parser_class! {
    /// Incremental parser of streamed text in one dialect (see `agentmsg.dialects.StreamParser`).
    class DialectStreamParser in "agentmsg",
    machine DialectMachine {
        type Event = DialectEvent;
        const SHOWS_TOOL_START: bool = false;

        fn is_shown(event: &DialectEvent) -> bool {
            match event {
                DialectEvent::ToolStart { .. } => true,
                DialectEvent::Event(event) => is_shown(event, Self::SHOWS_TOOL_START),
            }
        }

        fn split<'py>(py: Python<'py>, event: DialectEvent) -> PyResult<Result<Event, Bound<'py, PyAny>>> {
            Ok(match event {
                DialectEvent::ToolStart { index, id, name } => Err(tool_call_start(py, index, Some((&id, &name)))?),
                DialectEvent::Event(event) => Ok(event),
            })
        }
    },
    options => dialect,
    methods {},
}

/// The dialect names with the model families that use them, for `agentmsg.DIALECTS`.
#[pyfunction]
fn dialect_names(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    Dialect::ALL.iter().map(|(name, _)| *name).collect::<Vec<_>>().into_bound_py_any(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dialect_names, m)?)?;
    m.add_function(wrap_pyfunction!(check_dialect, m)?)?;
    m.add_class::<DialectStreamParser>()?;
    Ok(())
}
