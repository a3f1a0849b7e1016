//! Binding of the exact token counters: strings in, counts out, the GIL released while counting.

use std::borrow::Cow;

use agentmsg_core::tokens::{self, Encoding};
use std::sync::Once;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::errors::{ErrorClass, core_error, type_name};
use crate::ffi;
use crate::pool;
use crate::strings::{as_text, estimate_text, extract_texts, storage, Storage};

/// Texts of fewer characters (or token lists of fewer ids) than this are counted, encoded or
/// decoded without releasing the GIL: that takes under about 10 microseconds. Longer ones release
/// it, so that calls from several Python threads run at once (at 4096 characters, half the time
/// of a real transcript's messages was spent holding the GIL, and two threads were no faster
/// than one).
pub(crate) const DETACH_MIN_CHARS: usize = 256;

/// Runs `work` on a text of `chars` characters: with the GIL held for a short text, else with it
/// released, on the per-process pool if the text may be long enough to be cut into chunks (a
/// character takes at most 4 UTF-8 bytes, so a shorter text never needs the pool, nor builds
/// it; handing work to the pool costs a thread wake-up).
pub(crate) fn run_for_text<T: Send>(py: Python<'_>, chars: usize, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    if chars < DETACH_MIN_CHARS {
        Ok(work())
    } else if chars.saturating_mul(4) >= tokens::PARALLEL_MIN_BYTES {
        pool::run_detached(py, work)
    } else {
        Ok(py.detach(work))
    }
}

/// The encoding a Python argument names; `None` means o200k_base.
pub(crate) fn encoding_from_name(py: Python<'_>, name: Option<&Bound<'_, PyAny>>) -> PyResult<Encoding> {
    let Some(name) = name else {
        return Ok(loaded(Encoding::O200kBase));
    };
    let Ok(name) = name.cast::<PyString>() else {
        return Err(ErrorClass::MessageType.new_err(py, format!("encoding must be a str, not {}", type_name(name))));
    };
    let name = name.to_cow()?;
    let encoding = Encoding::from_name(&name).map_err(|error| core_error(py, error))?;
    Ok(loaded(encoding))
}

/// `encoding`, with its tables loaded. Loading frees tens of megabytes of temporary buffers,
/// which mimalloc would keep as resident pages until the thread next allocates; they are given
/// back to the system right after the load instead. They load here, while the caller holds the
/// GIL, not in the detached work: `os.fork` needs the GIL too, so no child is forked while a load
/// is half done (it would wait forever on the load its parent's thread started).
pub(crate) fn loaded(encoding: Encoding) -> Encoding {
    static LOADED: [Once; 2] = [Once::new(), Once::new()];
    let slot = match encoding {
        // o200k_harmony shares o200k_base's tables.
        Encoding::O200kBase | Encoding::O200kHarmony => 0,
        Encoding::Cl100kBase => 1,
        Encoding::Estimate => return encoding,
    };
    LOADED[slot].call_once(|| {
        encoding.load();
        ffi::release_free_pages();
    });
    encoding
}

/// Counts the tokens of one text; with `limit`, the exact count if at most `limit`, else
/// `limit + 1`, stopping early.
#[pyfunction]
#[pyo3(signature = (text, encoding = None, limit = None))]
fn count_tokens(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    encoding: Option<&Bound<'_, PyAny>>,
    limit: Option<usize>,
) -> PyResult<usize> {
    let encoding = encoding_from_name(py, encoding)?;
    let text = as_text(text, "text")?;
    let limit = limit.unwrap_or(usize::MAX);
    if !encoding.is_exact() {
        return Ok(estimate_text(text)?.min(limit.saturating_add(1)));
    }
    let storage = storage(text)?;
    // Transcoding and counting both run where `run_for_text` puts them.
    run_for_text(py, storage.chars(), || tokens::count_tokens_up_to(&storage.utf8(), limit, encoding))
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
        return Err(ErrorClass::Message.new_err(
            py,
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
            ErrorClass::Message.new_err(py, "a group's token count overflows 2**64")
        })?);
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens_batch, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens_grouped, m)?)?;
    m.add("ENCODING_NAMES", tokens::ENCODING_NAMES.to_vec())?;
    Ok(())
}
