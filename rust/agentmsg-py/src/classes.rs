//! Every Python class the binding builds without `__init__`, with the fields it fills: the
//! parse results (`TextBlock`, `ThinkingBlock`, `ToolUseBlock`, `ParseIssue`, `Parsed`) and the
//! stream events (`TextDelta`, …, `ToolCallEnd`), all frozen slotted dataclasses of
//! `agentmsg.model`.
//!
//! Their values come from the core and are valid by construction, so they are built the way
//! `dataclasses` itself builds frozen instances, minus the lookups: allocation as
//! `object.__new__` does it, then each value stored in its slot (what `object.__setattr__` ends
//! up doing), skipping the per-field checks of `__init__` that dominate the cost of small
//! results. What keeps this from drifting from the Python classes: each class's fields are
//! listed once, in this table, and `tests/test_result_classes.py` checks them (through
//! `result_classes()`) against the dataclasses' fields, and that a result equals the same values
//! passed through the class's constructor (its `__post_init__` checks included).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use crate::errors::ErrorClass;
use crate::ffi::SlottedClass;

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

pub(crate) static TEXT_BLOCK: ResultClass<1> = ResultClass::new("agentmsg.model.blocks", "TextBlock", ["text"]);
pub(crate) static THINKING_BLOCK: ResultClass<2> = ResultClass::new("agentmsg.model.blocks", "ThinkingBlock", ["thinking", "signature"]);
pub(crate) static TOOL_USE_BLOCK: ResultClass<5> =
    ResultClass::new("agentmsg.model.blocks", "ToolUseBlock", ["id", "name", "input", "server_name", "metadata"]);
pub(crate) static PARSE_ISSUE: ResultClass<4> = ResultClass::new("agentmsg.model.results", "ParseIssue", ["kind", "message", "span", "raw"]);
pub(crate) static PARSED: ResultClass<6> = ResultClass::new(
    "agentmsg.model.results",
    "Parsed",
    ["text", "thinking", "tool_calls", "errors", "blocks", "incomplete_thinking"],
);

pub(crate) static TEXT_DELTA: ResultClass<1> = ResultClass::new("agentmsg.model.results", "TextDelta", ["text"]);
pub(crate) static THINKING_DELTA: ResultClass<2> = ResultClass::new("agentmsg.model.results", "ThinkingDelta", ["index", "text"]);
pub(crate) static THINKING_END: ResultClass<2> = ResultClass::new("agentmsg.model.results", "ThinkingEnd", ["index", "complete"]);
pub(crate) static TOOL_CALL_START: ResultClass<3> =
    ResultClass::new("agentmsg.model.results", "ToolCallStart", ["index", "id", "name"]);
pub(crate) static TOOL_CALL_DELTA: ResultClass<2> =
    ResultClass::new("agentmsg.model.results", "ToolCallDelta", ["index", "fragment"]);
pub(crate) static TOOL_CALL_END: ResultClass<3> = ResultClass::new("agentmsg.model.results", "ToolCallEnd", ["index", "call", "error"]);

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
        TEXT_DELTA.describe(),
        THINKING_DELTA.describe(),
        THINKING_END.describe(),
        TOOL_CALL_START.describe(),
        TOOL_CALL_DELTA.describe(),
        TOOL_CALL_END.describe(),
    ]
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(result_classes, m)?)?;
    Ok(())
}
