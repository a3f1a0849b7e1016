//! Whole-text parsing: `parse` and `parse_many` in Forge's format, and the one way every
//! whole-text parser (Forge's and the dialects') reads its texts and builds its results.

use agentmsg_core::parse::{Document, StartThinking};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::ffi::GcPause;
use crate::options::Keywords;
use crate::pystr::{as_text, extract_texts, text_bytes};
use crate::results::{parsed, parsed_list};

/// Texts of more bytes than this are parsed with the GIL released.
const DETACH_MIN_BYTES: usize = 1 << 20;

/// The `Parsed` of one text argument, parsed by `parse` (with the GIL released for a long one).
fn parse_one<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    parse: impl for<'a> Fn(&'a [u8]) -> Document<'a> + Send + Sync,
) -> PyResult<Bound<'py, PyAny>> {
    let text = as_text(text, "text")?;
    let bytes = text_bytes(text)?;
    let doc = if bytes.len() > DETACH_MIN_BYTES { py.detach(|| parse(&bytes)) } else { parse(&bytes) };
    // A text with many blocks is many new objects: collections set off while building them
    // would traverse everything again and again (superlinear in the number of blocks).
    let _paused = GcPause::new(py);
    parsed(py, &doc)
}

/// The `Parsed` of each text of a sequence argument, in input order, parsed by `parse_many` on
/// the per-process pool with the GIL released (safe after a fork, like every batch function).
fn parse_batch<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    parse_many: impl for<'a> Fn(&'a [std::borrow::Cow<'a, [u8]>]) -> Vec<Document<'a>> + Send + Sync,
) -> PyResult<Bound<'py, PyList>> {
    let strings = extract_texts(py, texts, "texts")?;
    let bytes = strings.iter().map(|s| text_bytes(s)).collect::<PyResult<Vec<_>>>()?;
    let docs = crate::pool::run_detached(py, || parse_many(&bytes))?;
    parsed_list(py, &docs)
}

/// Parses one text into a `Parsed` (see `agentmsg.parse` for the rules and the options; a
/// `dialect` other than "forge" picks that dialect's parser).
#[pyfunction(name = "parse", signature = (text, **options))]
fn parse_text<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let parser = Keywords::read("parse", options)?.parser(py, StartThinking::Detect)?;
    parse_one(py, text, |bytes| parser.parse(bytes))
}

/// Parses many texts in parallel with the GIL released; a list of `Parsed` in input order.
#[pyfunction(signature = (texts, **options))]
fn parse_many<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyList>> {
    let parser = Keywords::read("parse_many", options)?.parser(py, StartThinking::Detect)?;
    parse_batch(py, texts, |bytes| parser.parse_many(bytes))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse_many, m)?)?;
    Ok(())
}
