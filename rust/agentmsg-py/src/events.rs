//! The Python event of a core stream event: the classes of `agentmsg.model.results` (`TextDelta`,
//! `ThinkingDelta`, `ThinkingEnd`, `ToolCallStart`, `ToolCallDelta`, `ToolCallEnd`), built without
//! `__init__` from the table of [`crate::classes`].

use agentmsg_core::parse::{CallHeader, Event};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};
use pyo3::IntoPyObjectExt;

use crate::classes::{TEXT_DELTA, THINKING_DELTA, THINKING_END, TOOL_CALL_DELTA, TOOL_CALL_END, TOOL_CALL_START};
use crate::results::{parse_issue, tool_use_block, CallStrs};
use crate::strings::py_str;

/// The start event of a call: with its id and name where the dialect knows them at the start
/// (every dialect but Forge's), else with None for both.
fn tool_call_start<'py>(py: Python<'py>, index: usize, header: Option<&CallHeader>) -> PyResult<Bound<'py, PyAny>> {
    let (id, name) = match header {
        Some(CallHeader { id, name }) => (PyString::new(py, id).into_any(), PyString::new(py, name).into_any()),
        None => (py.None().into_bound(py), py.None().into_bound(py)),
    };
    TOOL_CALL_START.build(py, [index.into_bound_py_any(py)?, id, name])
}

/// Whether a stream shows `event` (`event_object` makes a Python event of it): not spans.
pub(crate) fn is_shown(event: &Event) -> bool {
    !matches!(event, Event::TextSpan { .. } | Event::ThinkingSpan { .. })
}

/// The Python event for a stream event, or `None` for one a stream does not show (spans).
/// `text_block` is the text run the last text delta belonged to: a new run starts with `"\n"`.
/// `text` makes the str of a piece (the fed chunk itself when the piece is all of it).
pub(crate) fn event_object<'py>(
    py: Python<'py>,
    event: &Event,
    text_block: &mut Option<usize>,
    text: &impl Fn(&[u8]) -> PyResult<Py<PyString>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let obj = match event {
        Event::Text { block, text: bytes } => {
            let s = if *block > 0 && *text_block != Some(*block) {
                let mut joined = Vec::with_capacity(bytes.len() + 1);
                joined.push(b'\n');
                joined.extend_from_slice(bytes);
                py_str(py, &joined)?.unbind()
            } else {
                text(bytes)?
            };
            *text_block = Some(*block);
            TEXT_DELTA.build(py, [s.into_bound(py).into_any()])?
        }
        Event::Thinking { index, text: bytes } => {
            THINKING_DELTA.build(py, [index.into_bound_py_any(py)?, text(bytes)?.into_bound(py).into_any()])?
        }
        Event::ThinkingEnd { index, complete } => {
            THINKING_END.build(py, [index.into_bound_py_any(py)?, PyBool::new(py, *complete).to_owned().into_any()])?
        }
        Event::ToolStart { index, header } => tool_call_start(py, *index, header.as_ref())?,
        Event::ToolDelta { index, fragment } => {
            TOOL_CALL_DELTA.build(py, [index.into_bound_py_any(py)?, text(fragment)?.into_bound(py).into_any()])?
        }
        Event::ToolEnd { index, result } => {
            let none = py.None().into_bound(py);
            let (call, error) = match result {
                Ok(call) => (tool_use_block(py, call, &mut CallStrs::new())?, none),
                Err(issue) => (none, parse_issue(py, issue, &mut CallStrs::new())?),
            };
            TOOL_CALL_END.build(py, [index.into_bound_py_any(py)?, call, error])?
        }
        Event::TextSpan { .. } | Event::ThinkingSpan { .. } => return Ok(None),
    };
    Ok(Some(obj))
}
