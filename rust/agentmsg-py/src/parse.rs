//! Whole-text parsing: `parse` and `parse_many` in Forge's format, and the one way every
//! whole-text parser (Forge's and the dialects') reads its texts and builds its results.

use agentmsg_core::parse::{self as core_parse, Document, StartThinking};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::ffi::GcPause;
use crate::pystr::{as_text, extract_texts, text_bytes};
use crate::results::{parsed, parsed_list};

/// Texts of more bytes than this are parsed with the GIL released.
const DETACH_MIN_BYTES: usize = 1 << 20;

/// The `Parsed` of one text argument, parsed by `parse` (with the GIL released for a long one).
pub(crate) fn parse_one<'py>(
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
pub(crate) fn parse_batch<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    parse_many: impl for<'a> Fn(&'a [std::borrow::Cow<'a, [u8]>]) -> Vec<Document<'a>> + Send + Sync,
) -> PyResult<Bound<'py, PyList>> {
    let strings = extract_texts(py, texts, "texts")?;
    let bytes = strings.iter().map(|s| text_bytes(s)).collect::<PyResult<Vec<_>>>()?;
    let docs = crate::pool::run_detached(py, || parse_many(&bytes))?;
    parsed_list(py, &docs)
}

/// Defines a parser's two whole-text functions, for one text and for a batch, from one list of
/// keyword options (`name` for a required one, `name = None` for an optional one, each a field of
/// [`Keywords`](crate::options::Keywords)): its method `$read` reads them into the core's options
/// (with `start_in_thinking` detected when not given), `$parse` and `$parse_many` are the core's
/// functions.
macro_rules! whole_text_functions {
    (
        $(#[$one_doc:meta])* $one:ident as $one_name:literal,
        $(#[$many_doc:meta])* $many:ident as $many_name:literal,
        options ($($option:ident $(= $default:ident)?),+) => $read:ident,
        core $parse:path, $parse_many:path $(,)?
    ) => {
        $crate::parse::whole_text_functions! {
            @function $(#[$one_doc])* $one as $one_name, text -> PyAny, parse_one,
            options ($($option $(= $default)?),+) => $read, core $parse
        }
        $crate::parse::whole_text_functions! {
            @function $(#[$many_doc])* $many as $many_name, texts -> PyList, parse_batch,
            options ($($option $(= $default)?),+) => $read, core $parse_many
        }
    };
    // One function: its input argument, what it returns and the helper of this module that runs
    // the core's `$core` on the input.
    (
        @function $(#[$doc:meta])* $function:ident as $name:literal, $input:ident -> $output:ident, $run:ident,
        options ($($option:ident $(= $default:ident)?),+) => $read:ident, core $core:path
    ) => {
        $(#[$doc])*
        #[pyfunction(name = $name)]
        #[pyo3(signature = ($input, *, $($option $(= $default)?),+))]
        #[allow(clippy::too_many_arguments)] // the keyword options, passed on
        fn $function<'py>(
            py: Python<'py>,
            $input: &Bound<'py, PyAny>,
            $($option: Option<&Bound<'py, PyAny>>),+
        ) -> PyResult<Bound<'py, $output>> {
            let keywords = $crate::options::Keywords { $($option),+, ..Default::default() };
            let options = keywords.$read(py, StartThinking::Detect)?;
            $crate::parse::$run(py, $input, |input| $core(input, &options))
        }
    };
}
pub(crate) use whole_text_functions;

whole_text_functions! {
    /// Parses one text into a `Parsed` (see `agentmsg.parse` for the rules).
    parse_text as "parse",
    /// Parses many texts in parallel with the GIL released; a list of `Parsed` in input order.
    parse_many as "parse_many",
    options (thinking = None, tool_format = None, code_fences = None, start_in_thinking = None, max_calls = None, tools_json = None) => forge,
    core core_parse::parse, core_parse::parse_many,
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse_many, m)?)?;
    Ok(())
}
