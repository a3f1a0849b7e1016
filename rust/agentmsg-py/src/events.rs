//! The Python event of a core stream event: the classes of `agentmsg.model.results` (`TextDelta`,
//! `ThinkingDelta`, `ThinkingEnd`, `ToolCallStart`, `ToolCallDelta`, `ToolCallEnd`), built like
//! the parse results (see `results.rs`).

use agentmsg_core::parse::Event;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};
use pyo3::IntoPyObjectExt;

use crate::pystr::py_str;
use crate::results::{parse_issue, tool_use_block, CallStrs, ResultClass};

pub(crate) static TEXT_DELTA: ResultClass<1> = ResultClass::new("agentmsg.model.results", "TextDelta", ["text"]);
pub(crate) static THINKING_DELTA: ResultClass<2> = ResultClass::new("agentmsg.model.results", "ThinkingDelta", ["index", "text"]);
pub(crate) static THINKING_END: ResultClass<2> = ResultClass::new("agentmsg.model.results", "ThinkingEnd", ["index", "complete"]);
pub(crate) static TOOL_CALL_START: ResultClass<3> =
    ResultClass::new("agentmsg.model.results", "ToolCallStart", ["index", "id", "name"]);
pub(crate) static TOOL_CALL_DELTA: ResultClass<2> =
    ResultClass::new("agentmsg.model.results", "ToolCallDelta", ["index", "fragment"]);
pub(crate) static TOOL_CALL_END: ResultClass<3> = ResultClass::new("agentmsg.model.results", "ToolCallEnd", ["index", "call", "error"]);

/// The start event of a call: a dialect's names the call (`Some` id and name), Forge's does not.
pub(crate) fn tool_call_start<'py>(py: Python<'py>, index: usize, named: Option<(&str, &str)>) -> PyResult<Bound<'py, PyAny>> {
    let (id, name) = match named {
        Some((id, name)) => (PyString::new(py, id).into_any(), PyString::new(py, name).into_any()),
        None => (py.None().into_bound(py), py.None().into_bound(py)),
    };
    TOOL_CALL_START.build(py, [index.into_bound_py_any(py)?, id, name])
}

/// Whether a stream shows `event` (`event_object` makes a Python event of it): not spans, and
/// not a bare tool start where the caller announces calls its own way (`tool_start` false).
pub(crate) fn is_shown(event: &Event, tool_start: bool) -> bool {
    match event {
        Event::TextSpan { .. } | Event::ThinkingSpan { .. } => false,
        Event::ToolStart { .. } => tool_start,
        _ => true,
    }
}

/// The Python event for a stream event, or `None` for one a stream does not show (spans, and a
/// bare tool start where the caller announces calls its own way: `tool_start` false).
/// `text_block` is the text run the last text delta belonged to: a new run starts with `"\n"`.
/// `text` makes the str of a piece (the fed chunk itself when the piece is all of it).
pub(crate) fn event_object<'py>(
    py: Python<'py>,
    event: Event,
    text_block: &mut Option<usize>,
    text: &impl Fn(&[u8]) -> PyResult<Py<PyString>>,
    tool_start: bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if !is_shown(&event, tool_start) {
        return Ok(None);
    }
    let obj = match event {
        Event::Text { block, text: bytes } => {
            let s = if block > 0 && *text_block != Some(block) {
                let mut joined = Vec::with_capacity(bytes.len() + 1);
                joined.push(b'\n');
                joined.extend_from_slice(&bytes);
                py_str(py, &joined)?.unbind()
            } else {
                text(&bytes)?
            };
            *text_block = Some(block);
            TEXT_DELTA.build(py, [s.into_bound(py).into_any()])?
        }
        Event::Thinking { index, text: bytes } => {
            THINKING_DELTA.build(py, [index.into_bound_py_any(py)?, text(&bytes)?.into_bound(py).into_any()])?
        }
        Event::ThinkingEnd { index, complete } => {
            THINKING_END.build(py, [index.into_bound_py_any(py)?, PyBool::new(py, complete).to_owned().into_any()])?
        }
        Event::ToolStart { index } => tool_call_start(py, index, None)?,
        Event::ToolDelta { index, fragment } => {
            TOOL_CALL_DELTA.build(py, [index.into_bound_py_any(py)?, text(&fragment)?.into_bound(py).into_any()])?
        }
        Event::ToolEnd { index, result } => {
            let none = py.None().into_bound(py);
            let (call, error) = match result {
                Ok(call) => (tool_use_block(py, &call, &mut CallStrs::new())?, none),
                Err(issue) => (none, parse_issue(py, &issue, &mut CallStrs::new())?),
            };
            TOOL_CALL_END.build(py, [index.into_bound_py_any(py)?, call, error])?
        }
        Event::TextSpan { .. } | Event::ThinkingSpan { .. } => return Ok(None),
    };
    Ok(Some(obj))
}
