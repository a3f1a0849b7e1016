//! Python strings in and out: reading a str argument (with a typed error naming it), reading
//! its characters for the counters and the parsers, and making a str from core bytes.
//!
//! Two readings, for two needs. The counters see every message of every history, and
//! `PyUnicode_AsUTF8` would cache a UTF-8 copy on each str for as long as it lives (doubling the
//! memory of the history), so they read CPython's own storage ([`storage`]). The parsers need
//! the exact bytes they return spans and pieces of, lone surrogates included ([`text_bytes`]).

use std::borrow::Cow;

use agentmsg_core::estimate;
use pyo3::prelude::*;
use pyo3::types::string::PyStringData;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::errors::{ErrorClass, type_name};
// Re-exported for the modules that still import it from here (see `lib.rs`).
use crate::ffi;

/// `value` as a str, or a `MessageTypeError` saying that `what` must be one.
pub(crate) fn as_text<'a, 'py>(value: &'a Bound<'py, PyAny>, what: &str) -> PyResult<&'a Bound<'py, PyString>> {
    value
        .cast::<PyString>()
        .map_err(|_| ErrorClass::MessageType.new_err(value.py(), format!("{what} must be a str, not {}", type_name(value))))
}

/// A Python str from core bytes: UTF-8, or the `surrogatepass` encoding of lone surrogates.
pub(crate) fn py_str<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    ffi::decode_surrogatepass(py, bytes)
}

/// The bytes the parsers read for a Python str: its UTF-8 in place, or, if it holds lone
/// surrogates, its `surrogatepass` encoding.
pub(crate) fn text_bytes<'a>(text: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    match text.to_str() {
        Ok(valid) => Ok(Cow::Borrowed(valid.as_bytes())),
        Err(_) => Ok(Cow::Owned(ffi::encode_surrogatepass(text)?.as_bytes().to_vec())),
    }
}

/// A str's characters as CPython stores them: borrowed, and readable without the GIL (the str
/// is immutable and the caller's reference keeps it alive).
pub enum Storage<'a> {
    Ascii(&'a str),
    Latin1(&'a [u8]),
    Ucs2(&'a [u16]),
    Ucs4(&'a [u32]),
}

pub fn storage<'a>(text: &'a Bound<'_, PyString>) -> PyResult<Storage<'a>> {
    Ok(match ffi::str_storage(text)? {
        // An ASCII str's UTF-8 form is its storage: CPython hands it out without a copy.
        PyStringData::Ucs1(bytes) if bytes.is_ascii() => Storage::Ascii(text.to_str()?),
        PyStringData::Ucs1(bytes) => Storage::Latin1(bytes),
        PyStringData::Ucs2(units) => Storage::Ucs2(units),
        PyStringData::Ucs4(points) => Storage::Ucs4(points),
    })
}

impl Storage<'_> {
    /// The number of characters: a lower bound of the UTF-8 length.
    pub fn chars(&self) -> usize {
        match self {
            Storage::Ascii(text) => text.len(),
            Storage::Latin1(bytes) => bytes.len(),
            Storage::Ucs2(units) => units.len(),
            Storage::Ucs4(points) => points.len(),
        }
    }

    /// The text an exact count measures, as UTF-8: an ASCII str in place, any other transcoded
    /// into a buffer that lives only while counting. (Asking CPython for UTF-8 instead would
    /// leave a UTF-8 copy cached on the str for as long as it lives, doubling the memory of
    /// every history message counted.)
    ///
    /// Lone surrogates are handled as tiktoken's `encode_ordinary` handles them: it retries the
    /// UTF-16 round trip of the text with `replace`, where a surrogate pair written as two code
    /// points joins into one character and any other surrogate becomes U+FFFD.
    pub fn utf8(&self) -> Cow<'_, str> {
        match self {
            Storage::Ascii(text) => Cow::Borrowed(text),
            Storage::Latin1(bytes) => Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()),
            Storage::Ucs2(units) => Cow::Owned(from_code_points(
                units.iter().map(|&u| u32::from(u)),
                units.len(),
            )),
            Storage::Ucs4(points) => {
                Cow::Owned(from_code_points(points.iter().copied(), points.len()))
            }
        }
    }
}

/// UTF-8 of a sequence of code points, joining surrogate pairs and replacing lone surrogates.
fn from_code_points(points: impl Iterator<Item = u32>, len: usize) -> String {
    let mut out = String::with_capacity(len + len / 2);
    let mut points = points.peekable();
    while let Some(point) = points.next() {
        let ch = match point {
            0xD800..=0xDBFF => match points.peek() {
                Some(&low @ 0xDC00..=0xDFFF) => {
                    points.next();
                    char::from_u32(0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00))
                }
                _ => None,
            },
            _ => char::from_u32(point),
        };
        out.push(ch.unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    out
}

/// Forge's estimate of a text (the core's formula), read from CPython's storage so that no
/// UTF-8 copy gets cached on the str; a lone surrogate counts the 3 bytes of its `surrogatepass`
/// encoding, as `estimate_tokens` measures it.
pub fn estimate_text(text: &Bound<'_, PyString>) -> PyResult<usize> {
    Ok(match storage(text)? {
        Storage::Ascii(ascii) => estimate::estimate_text_bytes(ascii.as_bytes()),
        Storage::Latin1(bytes) => estimate::estimate_text_code_points(bytes),
        Storage::Ucs2(units) => estimate::estimate_text_code_points(units),
        Storage::Ucs4(points) => estimate::estimate_text_code_points(points),
    })
}

/// The number of items of a list or tuple, to reserve room for them; 0 for anything else, whose
/// `__len__` may say anything (a huge one would make the reservation fail): its items are
/// counted as they come.
pub(crate) fn exact_len(items: &Bound<'_, PyAny>) -> usize {
    if items.is_exact_instance_of::<PyList>() || items.is_exact_instance_of::<PyTuple>() {
        items.len().unwrap_or(0)
    } else {
        0
    }
}

/// Reads a sequence of str, naming the first item that is not one.
pub fn extract_texts<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Vec<Bound<'py, PyString>>> {
    if texts.is_instance_of::<PyString>() {
        return Err(ErrorClass::MessageType.new_err(py, format!("{what} must be a sequence of str, not a single str")));
    }
    let mut out = Vec::with_capacity(exact_len(texts));
    let items = texts.try_iter().map_err(|_| {
        ErrorClass::MessageType.new_err(py, format!("{what} must be a sequence of str, not {}", type_name(texts)))
    })?;
    for (index, item) in items.enumerate() {
        let item = item?;
        match item.cast_into::<PyString>() {
            Ok(text) => out.push(text),
            Err(error) => {
                let item = error.into_inner();
                return Err(ErrorClass::MessageType.new_err(py, format!("{what}[{index}] must be a str, not {}", type_name(&item))));
            }
        }
    }
    Ok(out)
}
