//! The Python dict of a core delta (`agentmsg_core::parse::deltas`): the `delta` of an OpenAI
//! Chat Completions chunk, equal to what `agentmsg.convert.deltas.openai_deltas` makes of the
//! same events.

use agentmsg_core::parse::deltas::{whole_arguments, Delta};
use agentmsg_core::parse::Issue;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::IntoPyObjectExt;

use crate::strings::py_str;

/// One `tool_calls` entry: `{"index", ["id", "type"], "function": {["name"], "arguments"}}`.
fn call_entry<'py>(
    py: Python<'py>,
    index: usize,
    head: Option<(&str, &str)>,
    arguments: Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyDict>> {
    let function = PyDict::new(py);
    let entry = PyDict::new(py);
    entry.set_item(intern!(py, "index"), index)?;
    if let Some((id, name)) = head {
        entry.set_item(intern!(py, "id"), id)?;
        entry.set_item(intern!(py, "type"), intern!(py, "function"))?;
        function.set_item(intern!(py, "name"), name)?;
    }
    function.set_item(intern!(py, "arguments"), arguments)?;
    entry.set_item(intern!(py, "function"), function)?;
    let delta = PyDict::new(py);
    delta.set_item(intern!(py, "tool_calls"), PyList::new(py, [entry])?)?;
    Ok(delta)
}

/// `{"agentmsg_issues": [{"index", "tool_call_index", "kind", "message", "span", "raw"}]}`.
fn issue_delta<'py>(
    py: Python<'py>,
    index: usize,
    tool_call: Option<usize>,
    issue: &Issue,
) -> PyResult<Bound<'py, PyDict>> {
    let body = PyDict::new(py);
    body.set_item(intern!(py, "index"), index)?;
    body.set_item(intern!(py, "tool_call_index"), tool_call)?;
    body.set_item(intern!(py, "kind"), PyString::intern(py, issue.kind.name()))?;
    body.set_item(intern!(py, "message"), &issue.message)?;
    body.set_item(intern!(py, "span"), PyList::new(py, [issue.char_span.0, issue.char_span.1])?)?;
    body.set_item(intern!(py, "raw"), py_str(py, &issue.raw)?)?;
    let delta = PyDict::new(py);
    delta.set_item(intern!(py, "agentmsg_issues"), PyList::new(py, [body])?)?;
    Ok(delta)
}

/// The dict of `delta`; `text` makes the str of a piece (the fed chunk itself when the piece is
/// all of it).
pub(crate) fn delta_dict<'py>(
    py: Python<'py>,
    delta: &Delta<'_>,
    text: &impl Fn(&[u8]) -> PyResult<Bound<'py, PyString>>,
) -> PyResult<Bound<'py, PyAny>> {
    let single = |key: &Bound<'py, PyString>, value: Bound<'py, PyString>| -> PyResult<Bound<'py, PyAny>> {
        let dict = PyDict::new(py);
        dict.set_item(key, value)?;
        Ok(dict.into_any())
    };
    match delta {
        Delta::Content { newline: false, text: bytes } => single(intern!(py, "content"), text(bytes)?),
        Delta::Content { newline: true, text: bytes } => {
            let mut joined = Vec::with_capacity(bytes.len() + 1);
            joined.push(b'\n');
            joined.extend_from_slice(bytes);
            single(intern!(py, "content"), py_str(py, &joined)?)
        }
        Delta::Reasoning(bytes) => single(intern!(py, "reasoning_content"), text(bytes)?),
        Delta::CallStart { index, header } => {
            call_entry(py, *index, Some((&header.id, &header.name)), intern!(py, "").clone()).map(Bound::into_any)
        }
        Delta::Arguments { index, fragment } => call_entry(py, *index, None, text(fragment)?).map(Bound::into_any),
        Delta::WholeCall { index, call } => {
            call_entry(py, *index, Some((&call.id, &call.name)), py_str(py, &whole_arguments(call))?).map(Bound::into_any)
        }
        Delta::Issue { index, tool_call, issue } => issue_delta(py, *index, *tool_call, issue)?.into_bound_py_any(py),
    }
}
