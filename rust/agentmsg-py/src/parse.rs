//! Whole-text parsing: `parse` of one text, `parse_many` of many, in any dialect.

use agentmsg_core::parse::{self as core_parse, StartThinking};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::ffi::GcPause;
use crate::options::ParseArgs;
use crate::results::{parsed, parsed_list};
use crate::strings::{as_text, extract_texts, text_bytes};
use crate::tokenizer::{extract_ids, id_vocabulary_of, raise};

/// Texts of more bytes than this are parsed with the GIL released.
const DETACH_MIN_BYTES: usize = 1 << 20;

/// `parse_many` of fewer bytes in all than this parses serially: below it the pool lost to a
/// plain loop of `parse` on a 2-core machine (docs/parsing.md, "Serving: measured").
const PARALLEL_MIN_BYTES: usize = 4 << 20;

/// Parses a text into a `Parsed` (the options are `agentmsg.parse`'s).
#[pyfunction]
#[pyo3(signature = (text, *, dialect=None, thinking=None, tool_format=None, code_fences=None, start_in_thinking=None,
                    max_calls=None, tools=None, strict=None, **unexpected))]
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
    strict: Option<&Bound<'py, PyAny>>,
    unexpected: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let args = ParseArgs { dialect, thinking, tool_format, code_fences, start_in_thinking, max_calls, tools, strict, unexpected };
    let options = args.options(py, "parse", StartThinking::Detect)?;
    let bytes = text_bytes(as_text(text, "text")?)?;
    let parse = || core_parse::parse(&bytes, &options);
    let doc = if bytes.len() > DETACH_MIN_BYTES { py.detach(parse) } else { parse() };
    // A text with many blocks is many new objects: collections set off while building them
    // would traverse everything again and again (superlinear in the number of blocks).
    let _paused = GcPause::new(py);
    parsed(py, &doc)
}

/// Parses a whole reply given as token ids with a tokenizer (`agentmsg.parse_ids`).
#[pyfunction]
#[pyo3(signature = (ids, *, tokenizer, dialect=None, thinking=None, tool_format=None, code_fences=None, start_in_thinking=None,
                    max_calls=None, tools=None, strict=None, **unexpected))]
#[allow(clippy::too_many_arguments)]
fn parse_ids<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    tokenizer: &Bound<'py, PyAny>,
    dialect: Option<&Bound<'py, PyAny>>,
    thinking: Option<&Bound<'py, PyAny>>,
    tool_format: Option<&Bound<'py, PyAny>>,
    code_fences: Option<&Bound<'py, PyAny>>,
    start_in_thinking: Option<&Bound<'py, PyAny>>,
    max_calls: Option<&Bound<'py, PyAny>>,
    tools: Option<&Bound<'py, PyAny>>,
    strict: Option<&Bound<'py, PyAny>>,
    unexpected: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let args = ParseArgs { dialect, thinking, tool_format, code_fences, start_in_thinking, max_calls, tools, strict, unexpected };
    let options = args.options(py, "parse_ids", StartThinking::Detect)?;
    let vocabulary = id_vocabulary_of(py, tokenizer, "parse_ids")?;
    let ids = extract_ids(py, ids, "ids")?;
    let parse = || agentmsg_core::ids::parse_ids(&ids, &vocabulary, &options);
    // About four bytes a token: as long as the texts `parse` reads with the GIL released.
    let doc = if ids.len() > DETACH_MIN_BYTES / 4 { py.detach(parse) } else { parse() };
    let doc = doc.map_err(|error| raise(py, error))?;
    let _paused = GcPause::new(py);
    parsed(py, &doc)
}

/// Parses each text of a sequence into a list of `Parsed`, in input order, on the per-process
/// pool with the GIL released (safe after a fork, like every batch function).
#[pyfunction]
#[pyo3(signature = (texts, *, dialect=None, thinking=None, tool_format=None, code_fences=None, start_in_thinking=None,
                    max_calls=None, tools=None, strict=None, **unexpected))]
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
    strict: Option<&Bound<'py, PyAny>>,
    unexpected: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyList>> {
    let args = ParseArgs { dialect, thinking, tool_format, code_fences, start_in_thinking, max_calls, tools, strict, unexpected };
    let options = args.options(py, "parse_many", StartThinking::Detect)?;
    let strings = extract_texts(py, texts, "texts")?;
    let bytes = strings.iter().map(|s| text_bytes(s)).collect::<PyResult<Vec<_>>>()?;
    let total: usize = bytes.iter().map(|text| text.len()).sum();
    if total < PARALLEL_MIN_BYTES && total > DETACH_MIN_BYTES {
        // Serial, but too long to hold the GIL through (as `parse` of a text this long does
        // not): parsed with it released, then built.
        let docs = py.detach(|| bytes.iter().map(|text| core_parse::parse(text, &options)).collect::<Vec<_>>());
        return parsed_list(py, &docs);
    }
    if total < PARALLEL_MIN_BYTES {
        // Waking the pool's threads costs more than they save on a batch this small (and on a
        // busy machine they may not run at once): each text is parsed and its result built in
        // turn, as a loop of `parse` does (its document is still in cache when built).
        let out = PyList::empty(py);
        let _paused = GcPause::new(py);
        for text in &bytes {
            out.append(parsed(py, &core_parse::parse(text, &options))?)?;
        }
        return Ok(out);
    }
    let docs = crate::pool::run_detached(py, || core_parse::parse_many(&bytes, &options))?;
    parsed_list(py, &docs)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(parse_many, m)?)?;
    m.add_function(wrap_pyfunction!(parse_ids, m)?)?;
    Ok(())
}
