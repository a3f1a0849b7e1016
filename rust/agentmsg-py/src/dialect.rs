//! Binding of the model dialects: `parse_dialect`, `parse_dialect_many`, `DialectStreamParser`.
//! Results, events, options and the stream wrapper are those of the other parsers.

use agentmsg_core::parse::dialect::{self as core_dialect, Dialect, DialectEvent, DialectMachine};
use agentmsg_core::parse::{Event, StartThinking};
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::IntoPyObjectExt;

use crate::events::ToolCallHeader;
use crate::options::dialect_options;
use crate::stream::{Machine, Stream};

crate::parse::whole_text_functions! {
    /// Parses one text in a dialect into a `Parsed` (see `agentmsg.dialects.parse`).
    parse_dialect as "parse_dialect",
    /// Parses many texts in a dialect in parallel with the GIL released.
    parse_dialect_many as "parse_dialect_many",
    options (dialect, start_in_thinking = None, tools_json = None) => dialect_options,
    core core_dialect::parse, core_dialect::parse_many,
}

impl Machine for DialectMachine {
    type Event = DialectEvent;
    const SHOWS_TOOL_START: bool = false;

    fn feed_into(&mut self, chunk: &[u8], events: &mut Vec<DialectEvent>) {
        DialectMachine::feed_into(self, chunk, events);
    }

    fn finish(&mut self) -> Vec<DialectEvent> {
        DialectMachine::finish(self)
    }

    fn split<'py>(py: Python<'py>, event: DialectEvent) -> PyResult<Result<Event, Bound<'py, PyAny>>> {
        Ok(match event {
            DialectEvent::ToolStart { index, id, name } => Err(ToolCallHeader::event(py, index, &id, &name)?),
            DialectEvent::Event(event) => Ok(event),
        })
    }
}

/// Incremental parser of streamed text in one dialect (see `agentmsg.dialects.StreamParser`).
#[pyclass(subclass, module = "agentmsg")]
pub struct DialectStreamParser {
    stream: Stream<DialectMachine>,
}

#[pymethods]
impl DialectStreamParser {
    #[new]
    #[pyo3(signature = (*, dialect, start_in_thinking = None, tools_json = None))]
    fn new(
        py: Python<'_>,
        dialect: Option<&Bound<'_, PyAny>>,
        start_in_thinking: Option<&Bound<'_, PyAny>>,
        tools_json: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let options = dialect_options(py, StartThinking::No, dialect, start_in_thinking, tools_json)?;
        Ok(Self { stream: Stream::new(DialectMachine::new(options)) })
    }

    /// Reads the next chunk; returns the events it completes.
    /// ``None`` is an empty chunk (an SDK delta without content).
    fn feed<'py>(&mut self, py: Python<'py>, chunk: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        self.stream.feed(py, chunk)
    }

    /// Ends the stream; returns the last events.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.stream.finish(py)
    }

    /// The ``Parsed`` of the stream so far (after ``finish()``: of the whole stream).
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.stream.result(py)
    }
}

/// The dialect names with the model families that use them, for `agentmsg.DIALECTS`.
#[pyfunction]
fn dialect_names(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    Dialect::ALL.iter().map(|(name, _)| *name).collect::<Vec<_>>().into_bound_py_any(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_dialect, m)?)?;
    m.add_function(wrap_pyfunction!(parse_dialect_many, m)?)?;
    m.add_function(wrap_pyfunction!(dialect_names, m)?)?;
    m.add_class::<DialectStreamParser>()?;
    Ok(())
}
