//! Binding of the model dialects: `parse_dialect`, `parse_dialect_many`, `DialectStreamParser`
//! and the `ToolCallHeader` event. Results and the other events are the classes of `parse`.

use std::sync::Arc;

use agentmsg_core::parse::dialect::{
    self as core_dialect, CustomDialect, Dialect, DialectEvent, DialectMachine, DialectOptions, Tools,
};
use agentmsg_core::parse::{Folder, StartThinking};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::errors::agentmsg_error;
use crate::parse::{as_text, event_object, fold_event, option, parsed, parsed_list, py_str, text_bytes};
use crate::pystr::{extract_texts, type_name};

/// The options from the keyword arguments; `start_in_thinking` None means "detect" for whole
/// text and "no" for a stream (`start_default`).
fn dialect_options(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    start_in_thinking: Option<&Bound<'_, PyAny>>,
    tools_json: Option<&Bound<'_, PyAny>>,
    start_default: StartThinking,
) -> PyResult<DialectOptions> {
    let mut options = if dialect.is_instance_of::<PyString>() {
        let name: String = option(py, Some(dialect), "dialect", "a str", String::new())?;
        let dialect = Dialect::from_name(&name).ok_or_else(|| {
            let valid: Vec<&str> = Dialect::ALL.iter().map(|(n, _)| *n).collect();
            agentmsg_error(py, "MessageError", format!("unknown dialect '{name}'; valid: {}", valid.join(", ")))
        })?;
        DialectOptions::new(dialect)
    } else {
        custom_options(dialect)?
    };
    let start_in_thinking = match start_in_thinking {
        Some(value) if !value.is_none() => {
            if option(py, Some(value), "start_in_thinking", "a bool or None", false)? {
                StartThinking::Yes
            } else {
                StartThinking::No
            }
        }
        _ => start_default,
    };
    let tools = match tools_json {
        Some(value) if !value.is_none() => {
            let text: String = option(py, Some(value), "tools_json", "a str", String::new())?;
            let tools = Tools::from_json(text.as_bytes())
                .map_err(|e| agentmsg_error(py, "MessageError", format!("invalid tools: {e}")))?;
            Some(Arc::new(tools))
        }
        _ => None,
    };
    options.start_in_thinking = start_in_thinking;
    options.tools = tools;
    Ok(options)
}

/// The options of an `agentmsg.Dialect` (a dialect from parts): its attributes are read and
/// checked by the core; an error names the dialect and the part.
fn custom_options(dialect: &Bound<'_, PyAny>) -> PyResult<DialectOptions> {
    let py = dialect.py();
    let text = |field: &str| -> PyResult<Option<String>> {
        let value = dialect.getattr(field).map_err(|_| {
            agentmsg_error(py, "MessageTypeError", format!("dialect must be a str or an agentmsg.Dialect, not {}", type_name(dialect)))
        })?;
        if value.is_none() {
            return Ok(None);
        }
        if let Ok(text) = value.cast::<PyString>() {
            let text = text.to_str().map_err(|_| {
                agentmsg_error(py, "MessageError", format!("Dialect.{field} must be valid text, not hold a lone surrogate"))
            })?;
            return Ok(Some(text.to_owned()));
        }
        let what = format!("Dialect.{field}");
        option(py, Some(&value), &what, "a str", String::new()).map(Some)
    };
    let required = |field: &str| -> PyResult<String> {
        text(field)?.ok_or_else(|| agentmsg_error(py, "MessageTypeError", format!("Dialect.{field} must be a str, not NoneType")))
    };
    let name = required("name")?;
    let think = match (text("think_start")?, text("think_end")?) {
        (Some(start), Some(end)) => Some((start, end)),
        (None, None) => None,
        _ => {
            let name = core_dialect::quoted(&name);
            return Err(agentmsg_error(py, "MessageError", format!("dialect {name}: think_start and think_end go together")))
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
    DialectOptions::custom(&parts).map_err(|error| {
        agentmsg_error(py, "MessageError", format!("dialect {}: {error}", core_dialect::quoted(&name)))
    })
}

/// Checks the parts of an `agentmsg.Dialect` (its constructor calls this).
#[pyfunction]
fn check_dialect(dialect: &Bound<'_, PyAny>) -> PyResult<()> {
    custom_options(dialect).map(|_| ())
}

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
    let text = as_text(py, text, "text")?;
    let bytes = text_bytes(text)?;
    let doc = if bytes.len() > 1 << 20 {
        py.detach(|| core_dialect::parse(&bytes, &options))
    } else {
        core_dialect::parse(&bytes, &options)
    };
    parsed(py, &doc)
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
    let strings = extract_texts(py, texts, "texts")?;
    let bytes = strings.iter().map(|s| text_bytes(s)).collect::<PyResult<Vec<_>>>()?;
    // On the per-process pool, like every batch function: safe after a fork.
    let docs = crate::pool::run_detached(py, || core_dialect::parse_many(&bytes, &options))?;
    parsed_list(py, &docs)
}

/// A tool call's name is complete: call ``index`` has this ``id`` and ``name``; its arguments
/// follow as ``ToolCallDelta`` fragments, and ``ToolCallEnd`` closes it.
///
/// >>> ToolCallHeader(0, "call_1", "get_weather").name
/// 'get_weather'
#[pyclass(frozen, get_all, module = "agentmsg")]
pub struct ToolCallHeader {
    index: usize,
    id: Py<PyString>,
    name: Py<PyString>,
}

crate::parse::event_methods!(ToolCallHeader, index: usize, id: Py<PyString>, name: Py<PyString>);

/// Incremental parser of streamed text in one dialect (see `agentmsg.dialects.StreamParser`).
#[pyclass(subclass, module = "agentmsg")]
pub struct DialectStreamParser {
    machine: DialectMachine,
    /// The text run the last text delta belonged to.
    text_block: Option<usize>,
    buffer: Vec<DialectEvent>,
    /// Every event of the current stream, adjacent text pieces merged, for `result()`.
    folder: Folder<'static>,
    /// The last stream finished: the next `feed` starts a new one.
    finished: bool,
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
        Ok(Self {
            machine: DialectMachine::new(options),
            text_block: None,
            buffer: Vec::new(),
            folder: Folder::for_stream(),
            finished: false,
        })
    }

    /// Reads the next chunk; returns the events it completes.
    /// ``None`` is an empty chunk (an SDK delta without content).
    fn feed<'py>(&mut self, py: Python<'py>, chunk: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        if chunk.is_none() {
            return Ok(PyList::empty(py));
        }
        let chunk = as_text(py, chunk, "chunk")?;
        let bytes = text_bytes(chunk)?;
        if std::mem::take(&mut self.finished) {
            self.folder = Folder::for_stream();
        }
        let mut events = std::mem::take(&mut self.buffer);
        self.machine.feed_into(&bytes, &mut events);
        let list = self.events(py, &mut events, Some((chunk, &bytes)));
        self.buffer = events;
        list
    }

    /// Ends the stream; returns the last events.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut events = self.machine.finish();
        let list = self.events(py, &mut events, None);
        self.text_block = None;
        self.finished = true;
        list
    }

    /// The ``Parsed`` of the stream so far (after ``finish()``: of the whole stream).
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        parsed(py, self.folder.document())
    }
}

impl DialectStreamParser {
    /// The Python events for `events` (left empty). A piece equal to the whole chunk is that str.
    fn events<'py>(
        &mut self,
        py: Python<'py>,
        events: &mut Vec<DialectEvent>,
        chunk: Option<(&Bound<'py, PyString>, &[u8])>,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = |bytes: &[u8]| -> PyResult<Py<PyString>> {
            match chunk {
                Some((chunk, chunk_bytes)) if chunk_bytes == bytes => Ok(chunk.clone().unbind()),
                _ => Ok(py_str(py, bytes)?.unbind()),
            }
        };
        let list = PyList::empty(py);
        for event in events.drain(..) {
            let event = match event {
                DialectEvent::ToolStart { index, id, name } => {
                    let header = ToolCallHeader {
                        index,
                        id: PyString::new(py, &id).unbind(),
                        name: PyString::new(py, &name).unbind(),
                    };
                    list.append(Bound::new(py, header)?)?;
                    continue;
                }
                DialectEvent::Event(event) => event,
            };
            fold_event(&mut self.folder, &event);
            // A dialect announces a call with its header (above), not a bare start.
            let Some(obj) = event_object(py, event, &mut self.text_block, &text, false)? else { continue };
            list.append(obj)?;
        }
        Ok(list)
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
    m.add_function(wrap_pyfunction!(check_dialect, m)?)?;
    m.add_class::<DialectStreamParser>()?;
    m.add_class::<ToolCallHeader>()?;
    Ok(())
}
