//! Binding of the model dialects: `parse_dialect`, `parse_dialect_many`, `DialectStreamParser`.
//! Results, events, options and the stream wrapper are those of the other parsers.

use agentmsg_core::parse::dialect::{self as core_dialect, Dialect, DialectEvent, DialectMachine};
use agentmsg_core::parse::{Event, StartThinking};
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::IntoPyObjectExt;

use crate::events::ToolCallHeader;
use crate::options::dialect_options;
use crate::parse::{parse_batch, parse_one};
use crate::stream::{Machine, Stream};

/// Parses one text in a dialect into a `Parsed` (see `agentmsg.dialects.parse`).
#[pyfunction]
#[pyo3(signature = (text, *, dialect, start_in_thinking = None, tools_json = None))]
fn parse_dialect<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    dialect: &Bound<'py, PyAny>,
    start_in_thinking: Option<&Bound<'py, PyAny>>,
    tools_json: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = dialect_options(py, dialect, start_in_thinking, tools_json, StartThinking::Detect)?;
    parse_one(py, text, |bytes| core_dialect::parse(bytes, &options))
}

/// Parses many texts in a dialect in parallel with the GIL released.
#[pyfunction]
#[pyo3(signature = (texts, *, dialect, start_in_thinking = None, tools_json = None))]
fn parse_dialect_many<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    dialect: &Bound<'py, PyAny>,
    start_in_thinking: Option<&Bound<'py, PyAny>>,
    tools_json: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let options = dialect_options(py, dialect, start_in_thinking, tools_json, StartThinking::Detect)?;
    parse_batch(py, texts, |bytes| core_dialect::parse_many(bytes, &options))
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
        dialect: &Bound<'_, PyAny>,
        start_in_thinking: Option<&Bound<'_, PyAny>>,
        tools_json: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let options = dialect_options(py, dialect, start_in_thinking, tools_json, StartThinking::No)?;
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
