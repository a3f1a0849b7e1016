//! Binding of the exact token counters: strings in, counts out, the GIL released while counting.

use std::borrow::Cow;

use agentmsg_core::tokens::{self, Encoding};
use std::sync::Once;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::errors::agentmsg_error;
use crate::pool;
use crate::pystr::{estimate_text, extract_texts, storage, type_name, Storage};

/// Texts of fewer characters than this are counted without releasing the GIL: counting them
/// takes under about 10 microseconds. Longer ones release it, so that calls from several Python
/// threads count at once (at 4096 characters, half the time of a real transcript's messages was
/// spent holding the GIL, and two threads were no faster than one).
const DETACH_MIN_CHARS: usize = 256;

/// The encoding a Python argument names; `None` means o200k_base.
pub(crate) fn encoding_from_name(py: Python<'_>, name: Option<&Bound<'_, PyAny>>) -> PyResult<Encoding> {
    let Some(name) = name else {
        return Ok(loaded(Encoding::O200kBase));
    };
    let Ok(name) = name.cast::<PyString>() else {
        return Err(agentmsg_error(
            py,
            "MessageTypeError",
            format!("encoding must be a str, not {}", type_name(name)),
        ));
    };
    let name = name.to_cow()?;
    let encoding = Encoding::from_name(&name)
        .map_err(|error| agentmsg_error(py, "EncodingError", error.to_string()))?;
    Ok(loaded(encoding))
}

/// `encoding`, with its tables loaded. Loading frees tens of megabytes of temporary buffers,
/// which mimalloc would keep as resident pages until the thread next allocates; they are given
/// back to the system right after the load instead.
fn loaded(encoding: Encoding) -> Encoding {
    static LOADED: [Once; 2] = [Once::new(), Once::new()];
    let slot = match encoding {
        Encoding::O200kBase => 0,
        Encoding::Cl100kBase => 1,
        Encoding::Estimate => return encoding,
    };
    LOADED[slot].call_once(|| {
        encoding.load();
        // SAFETY: mimalloc is this library's allocator; a forced collection only returns free
        // pages to the system.
        unsafe { libmimalloc_sys::mi_collect(true) };
    });
    encoding
}

fn extract_text<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
    text.cast::<PyString>().cloned().map_err(|_| {
        agentmsg_error(
            py,
            "MessageTypeError",
            format!("text must be a str, not {}", type_name(text)),
        )
    })
}

/// Counts the tokens of one text.
#[pyfunction]
#[pyo3(signature = (text, encoding = None))]
fn count_tokens(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    encoding: Option<&Bound<'_, PyAny>>,
) -> PyResult<usize> {
    count_tokens_up_to(py, text, usize::MAX, encoding)
}

/// The exact count if at most `limit`, else `limit + 1`; stops early.
#[pyfunction]
#[pyo3(signature = (text, limit, encoding = None))]
fn count_tokens_up_to(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    limit: usize,
    encoding: Option<&Bound<'_, PyAny>>,
) -> PyResult<usize> {
    let encoding = encoding_from_name(py, encoding)?;
    let text = extract_text(py, text)?;
    if !encoding.is_exact() {
        return Ok(estimate_text(&text)?.min(limit.saturating_add(1)));
    }
    let storage = storage(&text)?;
    if storage.chars() < DETACH_MIN_CHARS {
        return Ok(tokens::count_tokens_up_to(&storage.utf8(), limit, encoding));
    }
    // Transcoding and counting both run without the GIL; only a text long enough to be cut into
    // chunks goes to the pool (handing work to it costs a thread wake-up). A character takes at
    // most 4 UTF-8 bytes, so a shorter text never needs the pool, nor builds it.
    let pool = if storage.chars().saturating_mul(4) >= tokens::PARALLEL_MIN_BYTES {
        Some(pool::current(py)?)
    } else {
        None
    };
    Ok(py.detach(|| {
        let utf8 = storage.utf8();
        let count = || tokens::count_tokens_up_to(&utf8, limit, encoding);
        match &pool {
            Some(pool) if utf8.len() >= tokens::PARALLEL_MIN_BYTES => pool.install(count),
            _ => count(),
        }
    }))
}

fn count_all(
    py: Python<'_>,
    texts: &[Bound<'_, PyString>],
    encoding: Encoding,
) -> PyResult<Vec<usize>> {
    if !encoding.is_exact() {
        // The estimate is a length and a substring search: cheaper than releasing the GIL.
        return texts.iter().map(estimate_text).collect();
    }
    let storages: Vec<Storage<'_>> = texts.iter().map(storage).collect::<PyResult<_>>()?;
    pool::run_detached(py, || {
        let valid: Vec<Cow<'_, str>> = storages.iter().map(Storage::utf8).collect();
        tokens::count_tokens_batch(&valid, encoding)
    })
}

/// Counts each text in one call, the GIL released and the work spread over the cores.
#[pyfunction]
#[pyo3(signature = (texts, encoding = None))]
fn count_tokens_batch(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    encoding: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<usize>> {
    let encoding = encoding_from_name(py, encoding)?;
    let texts = extract_texts(py, texts, "texts")?;
    count_all(py, &texts, encoding)
}

/// Sums the counts of `texts` in consecutive groups: group `i` holds `sizes[i]` texts and its
/// result is `base[i]` plus their counts. One call for the parts of a whole conversation.
#[pyfunction]
#[pyo3(signature = (texts, sizes, base, encoding = None))]
fn count_tokens_grouped(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    sizes: Vec<usize>,
    base: Vec<usize>,
    encoding: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<usize>> {
    let encoding = encoding_from_name(py, encoding)?;
    let texts = extract_texts(py, texts, "texts")?;
    // Checked: the sizes come from Python, and a wrapped sum would pass the length check.
    let total = sizes.iter().try_fold(0usize, |sum, &size| sum.checked_add(size));
    if total != Some(texts.len()) || sizes.len() != base.len() {
        let total = total.map_or_else(|| "more than 2**64".to_owned(), |t| t.to_string());
        return Err(agentmsg_error(
            py,
            "AgentMsgError",
            format!(
                "group sizes sum to {total} for {} texts, with {} sizes and {} bases",
                texts.len(),
                sizes.len(),
                base.len()
            ),
        ));
    }
    let counts = count_all(py, &texts, encoding)?;
    let mut rest = counts.as_slice();
    let mut out = Vec::with_capacity(sizes.len());
    for (&size, base) in sizes.iter().zip(base) {
        // `size` fits: the sizes were checked to sum to `counts.len()`.
        let (group, tail) = rest.split_at(size);
        rest = tail;
        let sum = group.iter().try_fold(base, |sum, &count| sum.checked_add(count));
        out.push(sum.ok_or_else(|| {
            agentmsg_error(py, "AgentMsgError", "a group's token count overflows 2**64".to_owned())
        })?);
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens_up_to, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens_batch, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens_grouped, m)?)?;
    m.add("ENCODING_NAMES", tokens::ENCODING_NAMES.to_vec())?;
    Ok(())
}
