//! Whole-text parsing: `parse`, of one text or many, by Forge's parser or a dialect's.

use agentmsg_core::parse::StartThinking;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::ffi::GcPause;
use crate::options::Keywords;
use crate::pystr::{extract_texts, text_bytes};
use crate::results::{parsed, parsed_list};

/// Texts of more bytes than this are parsed with the GIL released.
const DETACH_MIN_BYTES: usize = 1 << 20;

/// Parses a text into a `Parsed`, or each text of any other sequence into a list of them, in
/// input order, on the per-process pool with the GIL released (safe after a fork, like every
/// batch function). The options are `agentmsg.parse`'s: a `dialect` other than "forge" picks
/// that dialect's parser. `agentmsg.parse` and `agentmsg.parse_many` check which they were given.
#[pyfunction(signature = (text, **options))]
fn parse<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let parser = Keywords::read("parse", options)?.parser(py, StartThinking::Detect)?;
    let Ok(text) = text.cast::<PyString>() else {
        let strings = extract_texts(py, text, "texts")?;
        let bytes = strings.iter().map(|s| text_bytes(s)).collect::<PyResult<Vec<_>>>()?;
        let docs = crate::pool::run_detached(py, || parser.parse_many(&bytes))?;
        return parsed_list(py, &docs).map(Bound::into_any);
    };
    let bytes = text_bytes(text)?;
    let parse = || parser.parse(&bytes);
    let doc = if bytes.len() > DETACH_MIN_BYTES { py.detach(parse) } else { parse() };
    // A text with many blocks is many new objects: collections set off while building them
    // would traverse everything again and again (superlinear in the number of blocks).
    let _paused = GcPause::new(py);
    parsed(py, &doc)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    Ok(())
}
