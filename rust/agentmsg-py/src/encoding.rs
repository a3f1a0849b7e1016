//! Binding of the tiktoken-compatible encoder: token ids in and out, the GIL released for long
//! texts and batches.
//!
//! Failures that tiktoken reports with its own messages (a disallowed special token, an id that
//! is no token) come back as values, not exceptions, and `agentmsg.encoding` raises its typed
//! errors from them: the binding stays free of message texts that belong to the Python API.

use std::borrow::Cow;

use agentmsg_core::tokens::encode::{self as core_encode, first_occurrence};
use agentmsg_core::tokens::{models, Encoding, ENCODING_NAMES};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyString};

use crate::errors::{ErrorClass, core_error, describe, type_name};
use crate::strings::{as_text, exact_len, extract_texts, storage, Storage};
use crate::tokens::{run_for_text, DETACH_MIN_CHARS};

/// One of tiktoken's encodings, with ids: `agentmsg.Encoding` wraps it.
#[pyclass(frozen, module = "agentmsg._core")]
pub struct TokenEncoder {
    inner: core_encode::TokenEncoder,
}

impl TokenEncoder {
    /// The vocabulary a parser reads this encoding's ids with: built once per encoding and
    /// process, shared by every parser.
    pub(crate) fn id_vocabulary(&self) -> std::sync::Arc<agentmsg_core::ids::IdVocabulary> {
        use std::sync::{Arc, Mutex};
        static BUILT: Mutex<Vec<(Encoding, Arc<agentmsg_core::ids::IdVocabulary>)>> = Mutex::new(Vec::new());
        let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let encoding = self.inner.encoding();
        if let Some((_, vocabulary)) = built.iter().find(|(known, _)| *known == encoding) {
            return Arc::clone(vocabulary);
        }
        let vocabulary = Arc::new(agentmsg_core::ids::IdVocabulary::of_encoder(self.inner));
        built.push((encoding, Arc::clone(&vocabulary)));
        vocabulary
    }
}

/// A disallowed special token found in a text: `(index of the text, the token)`.
type Disallowed = (usize, String);

impl TokenEncoder {
    /// `encode(texts)`, unless a text holds a string of `disallowed`: then the first one found,
    /// in order, and nothing is encoded (tiktoken checks each text before encoding it, so the
    /// first failing text is the one it reports).
    fn unless_disallowed<T>(
        texts: &[Cow<'_, str>],
        disallowed: &[String],
        encode: impl FnOnce(&[Cow<'_, str>]) -> T,
    ) -> Result<T, Disallowed> {
        if disallowed.is_empty() {
            return Ok(encode(texts));
        }
        let needles: Vec<&str> = disallowed.iter().map(String::as_str).collect();
        let found = texts.iter().enumerate().find_map(|(index, text)| {
            first_occurrence(text, &needles).map(|(_, needle)| (index, disallowed[needle].clone()))
        });
        match found {
            Some(found) => Err(found),
            None => Ok(encode(texts)),
        }
    }
}

#[pymethods]
impl TokenEncoder {
    /// The encoder of tiktoken's encoding `name`; `EncodingError` for any other name.
    #[new]
    fn new(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Self> {
        let Ok(name) = as_text(name, "name")?.to_str() else {
            // Lone surrogates: no encoding's name, described as Python writes it.
            let message = format!("unknown encoding {}; known encodings: {}", describe(name), ENCODING_NAMES.join(", "));
            return Err(ErrorClass::Encoding.new_err(py, message));
        };
        let encoding = Encoding::from_name(name).map_err(|error| core_error(py, error))?;
        let inner = core_encode::TokenEncoder::new(encoding).ok_or_else(|| {
            ErrorClass::Encoding.new_err(
                py,
                format!("encoding {name:?} is an estimate and has no token ids; use o200k_base or cl100k_base"),
            )
        })?;
        // The tables load now, with the GIL held (once per process, tens of milliseconds), so that
        // no fork lands in a half-done load (`tokens::loaded`).
        crate::tokens::loaded(encoding);
        Ok(Self { inner })
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.inner.encoding().name()
    }

    #[getter]
    fn n_vocab(&self) -> u32 {
        self.inner.n_vocab()
    }

    /// The special tokens and their ids, in tiktoken's order.
    #[getter]
    fn special_tokens<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for &(token, id) in self.inner.special_tokens() {
            out.set_item(token, id)?;
        }
        Ok(out)
    }

    fn encode_ordinary(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let storage = storage(as_text(text, "text")?)?;
        // A long text is encoded in chunks on the per-process pool (rayon's own is gone after a fork).
        run_for_text(py, storage.chars(), || self.inner.encode_ordinary(&storage.utf8()))
    }

    /// The ids of `text`, or the first string of `disallowed` found in it (as a str) instead; of
    /// any other sequence, the ids of each text (on the pool, the GIL released), or `(index,
    /// token)` for the first text holding a string of `disallowed` (then nothing is encoded).
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed: Vec<String>,
        disallowed: Vec<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let allowed = as_strs(&allowed);
        let Ok(text) = text.cast::<PyString>() else {
            let texts = extract_texts(py, text, "texts")?;
            let storages: Vec<Storage<'_>> = texts.iter().map(storage).collect::<PyResult<_>>()?;
            let result = crate::pool::run_detached(py, || {
                let valid: Vec<Cow<'_, str>> = storages.iter().map(Storage::utf8).collect();
                Self::unless_disallowed(&valid, &disallowed, |valid| core_encode::encode_batch(&self.inner, valid, &allowed))
            })?;
            return match result {
                Ok(ids) => ids.into_pyobject(py),
                Err(found) => found.into_pyobject(py).map(Bound::into_any),
            };
        };
        let storage = storage(text)?;
        let result = run_for_text(py, storage.chars(), || {
            Self::unless_disallowed(&[storage.utf8()], &disallowed, |text| self.inner.encode(&text[0], &allowed))
        })?;
        match result {
            Ok(ids) => ids.into_pyobject(py),
            Err((_, token)) => Ok(PyString::new(py, &token).into_any()),
        }
    }

    /// The bytes of `tokens`, or the first id that is no token (as an int) instead.
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        tokens: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (tokens, out_of_range) = extract_ids(py, tokens)?;
        // Decoding is not cut into chunks: released, but not handed to the pool.
        let result = if tokens.len() < DETACH_MIN_CHARS {
            self.inner.decode_bytes(&tokens)
        } else {
            py.detach(|| self.inner.decode_bytes(&tokens))
        };
        match (result, out_of_range) {
            (Ok(bytes), None) => Ok(PyBytes::new(py, &bytes).into_any()),
            (Ok(_), Some(int)) => Ok(int),
            (Err(core_encode::InvalidToken(token)), _) => Ok(token.into_pyobject(py)?.into_any()),
        }
    }

    /// The bytes of one token, or `None` if the id is no token.
    fn token_bytes<'py>(
        &self,
        py: Python<'py>,
        token: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let token = match token.extract::<u32>() {
            Ok(token) => token,
            Err(_) if token.is_instance_of::<PyInt>() => return Ok(None),
            Err(_) => return Err(not_an_int(py, "token", token)),
        };
        Ok(self.inner.token_bytes(token).map(|bytes| PyBytes::new(py, bytes)))
    }

    /// The text of the first `max_tokens` tokens of `text`, ending on a character boundary;
    /// with `keep_end`, of the last ones, starting on a character boundary.
    #[pyo3(signature = (text, max_tokens, keep_end = false))]
    fn truncate(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        max_tokens: usize,
        keep_end: bool,
    ) -> PyResult<Py<PyString>> {
        let text = as_text(text, "text")?;
        let storage = storage(text)?;
        if let Storage::Ascii(ascii) = storage {
            if max_tokens >= ascii.len() {
                return Ok(text.clone().unbind()); // the whole text: no copy
            }
        }
        let cut = run_for_text(py, storage.chars(), || {
            let utf8 = storage.utf8();
            self.inner.truncate(&utf8, max_tokens, keep_end).to_owned()
        })?;
        Ok(PyString::new(py, &cut).unbind())
    }
}

fn as_strs(strings: &[String]) -> Vec<&str> {
    strings.iter().map(String::as_str).collect()
}

fn not_an_int(py: Python<'_>, what: &str, value: &Bound<'_, PyAny>) -> PyErr {
    ErrorClass::MessageType.new_err(py, format!("{what} must be an int, not {}", type_name(value)))
}

/// A sequence of token ids, read up to the first int that is no id of any encoding (negative,
/// or 2**32 or more), which is returned with them: decoding stops there.
fn extract_ids<'py>(
    py: Python<'py>,
    tokens: &Bound<'py, PyAny>,
) -> PyResult<(Vec<u32>, Option<Bound<'py, PyAny>>)> {
    let not_a_sequence = |tokens: &Bound<'py, PyAny>| {
        ErrorClass::MessageType.new_err(py, format!("tokens must be a sequence of int, not {}", type_name(tokens)))
    };
    if tokens.is_instance_of::<PyString>() {
        return Err(not_a_sequence(tokens));
    }
    let items = tokens.try_iter().map_err(|_| not_a_sequence(tokens))?;
    let mut out = Vec::with_capacity(exact_len(tokens));
    for (index, item) in items.enumerate() {
        let item = item?;
        match item.extract::<u32>() {
            Ok(id) => out.push(id),
            Err(_) if item.is_instance_of::<PyInt>() => return Ok((out, Some(item))),
            Err(_) => return Err(not_an_int(py, &format!("tokens[{index}]"), &item)),
        }
    }
    Ok((out, None))
}

/// The encoding `model` uses (tiktoken's tables, in `agentmsg_core::tokens::models`), or None
/// for a model they do not know.
#[pyfunction]
fn encoding_name_for_model(model: &Bound<'_, PyString>) -> Option<&'static str> {
    // A name holding a lone surrogate is in no table.
    models::encoding_name_for_model(model.to_str().ok()?)
}

/// The tables themselves: (model -> encoding, model prefix -> encoding), in lookup order.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn model_encodings() -> (Vec<(&'static str, &'static str)>, Vec<(&'static str, &'static str)>) {
    (models::MODEL_TO_ENCODING.to_vec(), models::MODEL_PREFIX_TO_ENCODING.to_vec())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encoding_name_for_model, m)?)?;
    m.add_function(wrap_pyfunction!(model_encodings, m)?)?;
    m.add_class::<TokenEncoder>()
}
