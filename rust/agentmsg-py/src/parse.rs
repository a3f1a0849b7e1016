//! Whole-text parsing: `parse` of one text, `parse_many` of many, in any dialect.

use agentmsg_core::parse::{self as core_parse, StartThinking};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::ffi::GcPause;
use crate::options::ParseArgs;
use crate::results::{parsed, parsed_list};
use crate::strings::{as_text, extract_texts, text_bytes};

/// Texts of more bytes than this are parsed with the GIL released.
const DETACH_MIN_BYTES: usize = 1 << 20;

/// Parses a text into a `Parsed` (the options are `agentmsg.parse`'s).
#[pyfunction]
#[pyo3(signature = (text, *, dialect=None, thinking=None, tool_format=None, code_fences=None, start_in_thinking=None,
                    max_calls=None, tools=None, **unexpected))]
#[allow(clippy::too_many_arguments)]
fn parse<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    dialect: Option<&Bound<'py, PyAny>>,
    thinking: Option<&Bound<'py, PyAny>>,
    tool_format: Option<&Bound<'py, PyAny>>,
    code_fences: Option<&Bound<'py, PyAny>>,
    start_in_thinking: Option<&Bound<'py, PyAny>>,
    max_calls: Option<&Bound<'py, PyAny>>,
    tools: Option<&Bound<'py, PyAny>>,
    unexpected: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let args = ParseArgs { dialect, thinking, tool_format, code_fences, start_in_thinking, max_calls, tools, unexpected };
    let options = args.options(py, "parse", StartThinking::Detect)?;
    let bytes = text_bytes(as_text(text, "text")?)?;
    let parse = || core_parse::parse(&bytes, &options);
    let doc = if bytes.len() > DETACH_MIN_BYTES { py.detach(parse) } else { parse() };
    // A text with many blocks is many new objects: collections set off while building them
    // would traverse everything again and again (superlinear in the number of blocks).
    let _paused = GcPause::new(py);
    parsed(py, &doc)
}

/// Parses each text of a sequence into a list of `Parsed`, in input order, on the per-process
/// pool with the GIL released (safe after a fork, like every batch function).
#[pyfunction]
#[pyo3(signature = (texts, *, dialect=None, thinking=None, tool_format=None, code_fences=None, start_in_thinking=None,
                    max_calls=None, tools=None, **unexpected))]
#[allow(clippy::too_many_arguments)]
fn parse_many<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    dialect: Option<&Bound<'py, PyAny>>,
    thinking: Option<&Bound<'py, PyAny>>,
    tool_format: Option<&Bound<'py, PyAny>>,
    code_fences: Option<&Bound<'py, PyAny>>,
    start_in_thinking: Option<&Bound<'py, PyAny>>,
    max_calls: Option<&Bound<'py, PyAny>>,
    tools: Option<&Bound<'py, PyAny>>,
    unexpected: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyList>> {
    let args = ParseArgs { dialect, thinking, tool_format, code_fences, start_in_thinking, max_calls, tools, unexpected };
    let options = args.options(py, "parse_many", StartThinking::Detect)?;
    let strings = extract_texts(py, texts, "texts")?;
    let bytes = strings.iter().map(|s| text_bytes(s)).collect::<PyResult<Vec<_>>>()?;
    let docs = crate::pool::run_detached(py, || core_parse::parse_many(&bytes, &options))?;
    parsed_list(py, &docs)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(parse_many, m)?)?;
    Ok(())
}
