//! The results of parsing as the package's own Python classes (`TextBlock`, `ThinkingBlock`,
//! `ToolUseBlock`, `Parsed`, `ParseIssue`, and the stream events of `agentmsg.model.results`: frozen
//! slotted dataclasses).
//!
//! Their values come from the core and are valid by construction, so they are built the way
//! `dataclasses` itself builds frozen instances, minus the lookups: allocation as
//! `object.__new__` does it, then each value stored in its slot (what `object.__setattr__` ends
//! up doing), skipping the per-field checks of `__init__` that dominate the cost of small
//! results. What keeps this from drifting from the Python classes: each class's fields are
//! listed once, in [`RESULT_CLASSES`]' entries, and `tests/test_result_classes.py` checks them
//! against the dataclasses' fields, and that a result equals the same values passed through the
//! class's constructor (its `__post_init__` checks included).

use agentmsg_core::parse::{Block, Document, Issue, ToolCall};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyList, PyString, PyTuple, PyType};
use pyo3::intern;

use crate::errors::ErrorClass;
use crate::events;
use crate::ffi::{GcPause, SlottedClass};
use crate::json::object_to_py;
use crate::pystr::py_str;

/// A Python class the binding builds results of, with the fields it fills (all of them, in the
/// dataclass's order), and, once loaded, the class and its slots.
pub(crate) struct ResultClass<const N: usize> {
    module: &'static str,
    name: &'static str,
    fields: [&'static str; N],
    loaded: PyOnceLock<SlottedClass<N>>,
}

impl<const N: usize> ResultClass<N> {
    pub(crate) const fn new(module: &'static str, name: &'static str, fields: [&'static str; N]) -> Self {
        Self { module, name, fields, loaded: PyOnceLock::new() }
    }

    /// `module.name` and its slots; a `MessageTypeError` if a field is no writable slot (the
    /// class changed without this table).
    fn load(&self, py: Python<'_>) -> PyResult<SlottedClass<N>> {
        let cls = py.import(self.module)?.getattr(self.name)?.cast_into::<PyType>().map_err(PyErr::from)?;
        SlottedClass::new(&cls, self.fields)?.map_err(|field| {
            ErrorClass::MessageType.new_err(py, format!("{}.{}.{field} is not a slot", self.module, self.name))
        })
    }

    /// An instance with `values` in the fields, in the order of `fields`, without `__init__`.
    pub(crate) fn build<'py>(&self, py: Python<'py>, values: [Bound<'py, PyAny>; N]) -> PyResult<Bound<'py, PyAny>> {
        self.loaded.get_or_try_init(py, || self.load(py))?.instance(py, values)
    }

    fn describe(&self) -> (&'static str, &'static str, Vec<&'static str>) {
        (self.module, self.name, self.fields.to_vec())
    }
}

static TEXT_BLOCK: ResultClass<1> = ResultClass::new("agentmsg.model.blocks", "TextBlock", ["text"]);
static THINKING_BLOCK: ResultClass<2> = ResultClass::new("agentmsg.model.blocks", "ThinkingBlock", ["thinking", "signature"]);
static TOOL_USE_BLOCK: ResultClass<5> =
    ResultClass::new("agentmsg.model.blocks", "ToolUseBlock", ["id", "name", "input", "server_name", "metadata"]);
static PARSE_ISSUE: ResultClass<4> = ResultClass::new("agentmsg.model.results", "ParseIssue", ["kind", "message", "span", "raw"]);
static PARSED: ResultClass<6> = ResultClass::new(
    "agentmsg.model.results",
    "Parsed",
    ["text", "thinking", "tool_calls", "errors", "blocks", "incomplete_thinking"],
);

/// `(module, class, fields)` of every class the binding builds without `__init__`, for the test
/// that holds them to the dataclasses.
#[pyfunction]
fn result_classes() -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    vec![
        TEXT_BLOCK.describe(),
        THINKING_BLOCK.describe(),
        TOOL_USE_BLOCK.describe(),
        PARSE_ISSUE.describe(),
        PARSED.describe(),
        events::TEXT_DELTA.describe(),
        events::THINKING_DELTA.describe(),
        events::THINKING_END.describe(),
        events::TOOL_CALL_START.describe(),
        events::TOOL_CALL_DELTA.describe(),
        events::TOOL_CALL_END.describe(),
    ]
}

/// The str made last for one field of a run of results, reused while the value repeats: a
/// reply of many calls repeats names, messages and often raw texts, and a str is immutable, so
/// sharing one is invisible except in memory (a str per call would be most of a bad call's cost).
struct Reused<'d, 'py> {
    last: Option<(&'d [u8], Bound<'py, PyString>)>,
}

impl<'d, 'py> Reused<'d, 'py> {
    fn new() -> Self {
        Self { last: None }
    }

    fn get(&mut self, py: Python<'py>, bytes: &'d [u8]) -> PyResult<Bound<'py, PyString>> {
        match &self.last {
            Some((last, s)) if *last == bytes => Ok(s.clone()),
            _ => {
                let s = py_str(py, bytes)?;
                self.last = Some((bytes, s.clone()));
                Ok(s)
            }
        }
    }
}

/// The reused strs of the fields of calls and issues (see [`Reused`]).
pub(crate) struct CallStrs<'d, 'py> {
    name: Reused<'d, 'py>,
    server_name: Reused<'d, 'py>,
    message: Reused<'d, 'py>,
    raw: Reused<'d, 'py>,
}

impl CallStrs<'_, '_> {
    pub(crate) fn new() -> Self {
        Self { name: Reused::new(), server_name: Reused::new(), message: Reused::new(), raw: Reused::new() }
    }
}

pub(crate) fn tool_use_block<'d, 'py>(py: Python<'py>, call: &'d ToolCall, strs: &mut CallStrs<'d, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let id = PyString::new(py, &call.id).into_any();
    let name = strs.name.get(py, call.name.as_bytes())?.into_any();
    let input = object_to_py(py, &call.input)?.into_any();
    let server_name = strs.server_name.get(py, call.server_name.as_bytes())?.into_any();
    let metadata = object_to_py(py, &call.metadata)?.into_any();
    TOOL_USE_BLOCK.build(py, [id, name, input, server_name, metadata])
}

pub(crate) fn parse_issue<'d, 'py>(py: Python<'py>, issue: &'d Issue, strs: &mut CallStrs<'d, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let kind = PyString::intern(py, issue.kind.name()).into_any();
    let message = strs.message.get(py, issue.message.as_bytes())?.into_any();
    let span = PyTuple::new(py, [issue.char_span.0, issue.char_span.1])?.into_any();
    let raw = strs.raw.get(py, &issue.raw)?.into_any();
    PARSE_ISSUE.build(py, [kind, message, span, raw])
}

fn text_block<'py>(py: Python<'py>, text: Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    TEXT_BLOCK.build(py, [text.into_any()])
}

fn thinking_block<'py>(py: Python<'py>, thinking: Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    let signature = py.None().into_bound(py);
    THINKING_BLOCK.build(py, [thinking.into_any(), signature])
}

/// A `Parsed` from a core document.
pub(crate) fn parsed<'py>(py: Python<'py>, doc: &Document) -> PyResult<Bound<'py, PyAny>> {
    let blocks = PyList::empty(py);
    let thinking = PyList::empty(py);
    let tool_calls = PyList::empty(py);
    let text_runs = doc.blocks.iter().filter(|b| matches!(b, Block::Text(_))).count();
    // With one text run (the usual case) the visible text is that run's str, made once.
    let mut text: Option<Bound<'py, PyString>> = None;
    let mut strs = CallStrs::new();
    for block in &doc.blocks {
        match block {
            Block::Text(bytes) => {
                let s = py_str(py, bytes)?;
                if text_runs == 1 {
                    text = Some(s.clone());
                }
                blocks.append(text_block(py, s)?)?;
            }
            Block::Thinking(bytes) => {
                let s = py_str(py, bytes)?;
                thinking.append(&s)?;
                blocks.append(thinking_block(py, s)?)?;
            }
            Block::ToolCall(call) => {
                let b = tool_use_block(py, call, &mut strs)?;
                tool_calls.append(&b)?;
                blocks.append(b)?;
            }
        }
    }
    let text = match text {
        Some(text) => text,
        None if text_runs == 0 => intern!(py, "").clone(),
        None => py_str(py, &doc.text())?,
    };
    let errors = PyList::empty(py);
    for issue in &doc.issues {
        errors.append(parse_issue(py, issue, &mut strs)?)?;
    }
    let incomplete_thinking = PyBool::new(py, doc.incomplete_thinking).to_owned().into_any();
    PARSED.build(
        py,
        [text.into_any(), thinking.into_any(), tool_calls.into_any(), errors.into_any(), blocks.into_any(), incomplete_thinking],
    )
}

/// The `Parsed` of each document, built with the cyclic GC paused (a batch makes many objects).
pub(crate) fn parsed_list<'py>(py: Python<'py>, docs: &[Document]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    let _paused = GcPause::new(py);
    for doc in docs {
        out.append(parsed(py, doc)?)?;
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(result_classes, m)?)?;
    Ok(())
}
