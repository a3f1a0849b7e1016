//! Binding of open models' tokenizers (`agentmsg_core::tokenizer`): `agentmsg.Tokenizer` wraps
//! this class. Long texts and batches run with the GIL released, batches on the per-process pool.

use std::sync::{Arc, OnceLock};

use agentmsg_core::ids::IdVocabulary;
use agentmsg_core::tokenizer::{Tokenizer as CoreTokenizer, TokenizerError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyInt, PyList, PyString, PyTuple, PyType};

use crate::errors::ErrorClass;
use crate::pool;
use crate::strings::{as_text, extract_texts};
use crate::tokens::DETACH_MIN_CHARS;

/// `agentmsg.errors.TokenizerError` (a file that cannot be used) and `TokenIdError` (an id that
/// is no token), looked up once.
pub(crate) fn raise(py: Python<'_>, error: TokenizerError) -> PyErr {
    static CLASSES: [PyOnceLock<Py<PyType>>; 2] = [PyOnceLock::new(), PyOnceLock::new()];
    let (slot, name) = match error {
        TokenizerError::UnknownId(_) => (0, "TokenIdError"),
        _ => (1, "TokenizerError"),
    };
    let class = CLASSES[slot].get_or_try_init(py, || {
        let class = py.import("agentmsg.errors")?.getattr(name)?;
        Ok::<_, PyErr>(class.cast_into::<PyType>().map_err(PyErr::from)?.unbind())
    });
    match class {
        Ok(class) => PyErr::from_type(class.bind(py).clone(), error.to_string()),
        Err(lookup_error) => lookup_error,
    }
}

/// The UTF-8 of a str argument; a lone surrogate has none.
fn utf8<'a>(py: Python<'_>, text: &'a Bound<'_, PyString>, what: &str) -> PyResult<std::borrow::Cow<'a, str>> {
    text.to_cow().map_err(|_| {
        ErrorClass::Message.new_err(py, format!("{what} holds a lone surrogate, which no tokenizer can encode"))
    })
}

fn texts_utf8<'py>(py: Python<'py>, texts: &Bound<'py, PyAny>) -> PyResult<Vec<String>> {
    let texts = extract_texts(py, texts, "texts")?;
    texts
        .iter()
        .enumerate()
        .map(|(index, text)| utf8(py, text, &format!("texts[{index}]")).map(|text| text.into_owned()))
        .collect()
}

/// A model's tokenizer loaded from its `tokenizer.json`.
#[pyclass(frozen, module = "agentmsg._core")]
pub struct Tokenizer {
    inner: Arc<CoreTokenizer>,
    /// What reading token ids needs, built on first use and shared by the parsers.
    ids: OnceLock<Result<Arc<IdVocabulary>, TokenizerError>>,
}

impl Tokenizer {
    fn new(inner: CoreTokenizer) -> Self {
        Self { inner: Arc::new(inner), ids: OnceLock::new() }
    }

    /// The vocabulary a parser reads this tokenizer's ids with.
    pub(crate) fn id_vocabulary(&self, py: Python<'_>) -> PyResult<Arc<IdVocabulary>> {
        let built = self.ids.get_or_init(|| IdVocabulary::of_tokenizer(Arc::clone(&self.inner)).map(Arc::new));
        built.clone().map_err(|error| raise(py, error))
    }
}

/// The id vocabulary of a `tokenizer=` argument: an `agentmsg.Tokenizer` or `agentmsg.Encoding`
/// (or the core classes they wrap). `callable` names the function in the error.
pub(crate) fn id_vocabulary_of(py: Python<'_>, tokenizer: &Bound<'_, PyAny>, callable: &str) -> PyResult<Arc<IdVocabulary>> {
    // The Python classes hold the core's object in one slot; read it here rather than give
    // them a second, public name for it.
    let core = ["_native", "_encoder"]
        .iter()
        .find_map(|slot| tokenizer.getattr(*slot).ok())
        .unwrap_or_else(|| tokenizer.clone());
    if let Ok(tokenizer) = core.cast::<Tokenizer>() {
        return tokenizer.get().id_vocabulary(py);
    }
    if let Ok(encoder) = core.cast::<crate::encoding::TokenEncoder>() {
        return Ok(encoder.get().id_vocabulary());
    }
    let message = format!(
        "{callable}: tokenizer must be an agentmsg.Tokenizer or an agentmsg.Encoding, not {}",
        crate::errors::type_name(tokenizer)
    );
    Err(ErrorClass::MessageType.new_err(py, message))
}

/// The token ids of an `ids` argument: a list or tuple of ints. An int that is no id of any
/// tokenizer (negative, or past 2**32 - 1) is a `TokenIdError`, as an unknown id is.
pub(crate) fn extract_ids(py: Python<'_>, ids: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u32>> {
    let mut out = Vec::new();
    extract_ids_into(py, ids, what, &mut out)?;
    Ok(out)
}

/// [`extract_ids`] appended to `out` (a buffer a stream reuses; on an error, what it holds is
/// of no use).
pub(crate) fn extract_ids_into(py: Python<'_>, ids: &Bound<'_, PyAny>, what: &str, out: &mut Vec<u32>) -> PyResult<()> {
    let read = |item: Bound<'_, PyAny>, index: usize| -> PyResult<u32> {
        if let Ok(id) = item.extract::<u32>() {
            if !item.is_instance_of::<pyo3::types::PyBool>() {
                return Ok(id);
            }
        }
        if item.is_instance_of::<PyInt>() && !item.is_instance_of::<pyo3::types::PyBool>() {
            let message = format!("token id {} is no token: ids are ints from 0 to 2**32 - 1", crate::errors::describe(&item));
            return Err(raise_message(py, message));
        }
        let message = format!("{what}[{index}] must be an int token id, not {}", crate::errors::type_name(&item));
        Err(ErrorClass::MessageType.new_err(py, message))
    };
    if let Ok(list) = ids.cast::<PyList>() {
        out.reserve(list.len());
        for (index, item) in list.iter().enumerate() {
            out.push(read(item, index)?);
        }
        return Ok(());
    }
    if let Ok(tuple) = ids.cast::<PyTuple>() {
        out.reserve(tuple.len());
        for (index, item) in tuple.iter().enumerate() {
            out.push(read(item, index)?);
        }
        return Ok(());
    }
    let message = format!("{what} must be a list or tuple of int token ids, not {}", crate::errors::type_name(ids));
    Err(ErrorClass::MessageType.new_err(py, message))
}

/// A `TokenIdError` with its own message (an int that can be no id).
fn raise_message(py: Python<'_>, message: String) -> PyErr {
    match raise(py, TokenizerError::UnknownId(0)).get_type(py).call1((message,)) {
        Ok(error) => PyErr::from_value(error),
        Err(error) => error,
    }
}

#[pymethods]
impl Tokenizer {
    /// Loads the tokenizer from the bytes of a `tokenizer.json`.
    #[staticmethod]
    fn from_json(py: Python<'_>, json: &Bound<'_, PyBytes>) -> PyResult<Self> {
        let bytes = json.as_bytes();
        let inner = py.detach(|| CoreTokenizer::from_json(bytes)).map_err(|error| raise(py, error))?;
        Ok(Self::new(inner))
    }

    /// Loads a tiktoken rank file's bytes with its split pattern and special tokens.
    #[staticmethod]
    fn from_tiktoken(py: Python<'_>, ranks: &Bound<'_, PyBytes>, pattern: &str, special_tokens: Vec<(String, u32)>) -> PyResult<Self> {
        let bytes = ranks.as_bytes();
        let inner =
            py.detach(|| CoreTokenizer::from_tiktoken(bytes, pattern, special_tokens)).map_err(|error| raise(py, error))?;
        Ok(Self::new(inner))
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn special_tokens(&self) -> Vec<(String, u32)> {
        self.inner.special_tokens().to_vec()
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    fn encode(&self, py: Python<'_>, text: &Bound<'_, PyAny>, add_special_tokens: bool) -> PyResult<Vec<u32>> {
        let text = as_text(text, "text")?;
        let text = utf8(py, text, "text")?;
        let result = if text.len() < DETACH_MIN_CHARS {
            self.inner.encode(&text, add_special_tokens)
        } else {
            py.detach(|| self.inner.encode(&text, add_special_tokens))
        };
        result.map_err(|error| raise(py, error))
    }

    fn count(&self, py: Python<'_>, text: &Bound<'_, PyAny>, add_special_tokens: bool) -> PyResult<usize> {
        let text = as_text(text, "text")?;
        let text = utf8(py, text, "text")?;
        let result = if text.len() < DETACH_MIN_CHARS {
            self.inner.count(&text, add_special_tokens)
        } else {
            py.detach(|| self.inner.count(&text, add_special_tokens))
        };
        result.map_err(|error| raise(py, error))
    }

    fn encode_batch(&self, py: Python<'_>, texts: &Bound<'_, PyAny>, add_special_tokens: bool) -> PyResult<Vec<Vec<u32>>> {
        let texts = texts_utf8(py, texts)?;
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        pool::run_detached(py, || self.inner.encode_batch(&refs, add_special_tokens))?.map_err(|error| raise(py, error))
    }

    fn count_batch(&self, py: Python<'_>, texts: &Bound<'_, PyAny>, add_special_tokens: bool) -> PyResult<Vec<usize>> {
        let texts = texts_utf8(py, texts)?;
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        pool::run_detached(py, || self.inner.count_batch(&refs, add_special_tokens))?.map_err(|error| raise(py, error))
    }

    fn decode(&self, py: Python<'_>, ids: Vec<u32>, skip_special_tokens: bool) -> PyResult<String> {
        self.inner.decode(&ids, skip_special_tokens).map_err(|error| raise(py, error))
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>, skip_special_tokens: bool) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.inner.decode_bytes(&ids, skip_special_tokens).map_err(|error| raise(py, error))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn truncate(&self, py: Python<'_>, text: &Bound<'_, PyAny>, max_tokens: usize) -> PyResult<String> {
        let text = as_text(text, "text")?;
        let text = utf8(py, text, "text")?;
        let end = py.detach(|| self.inner.truncate_len(&text, max_tokens));
        Ok(text[..end].to_owned())
    }

    fn __repr__(&self) -> String {
        format!("<agentmsg._core.Tokenizer of {} ids>", self.inner.vocab_size())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tokenizer>()
}
