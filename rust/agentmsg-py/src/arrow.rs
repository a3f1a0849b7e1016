//! Arrow arrays in and out, through arrow-rs's implementation of the Arrow C data interface and
//! its PyCapsule protocol.
//!
//! Any object with `__arrow_c_array__` (pyarrow, polars, arro3, nanoarrow, ...) hands over a
//! string column as two capsules. The strings are read in place from its buffers with the GIL
//! released, the work runs on the process pool, and the result is an [`ArrowArray`] whose
//! capsules any Arrow library imports without a copy. No Python object is made per string.

mod c_data;

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use agentmsg_core::estimate;
use agentmsg_core::parse::json_text;
use agentmsg_core::parse::{self as core_parse, Block, Document, JsonValue, StartThinking};
use agentmsg_core::tokens::{self, Encoding};
use arrow_array::ffi::to_ffi;
use arrow_array::{
    Array, ArrayRef, GenericListArray, GenericStringArray, LargeStringArray, OffsetSizeTrait, StringArray,
    StringViewArray, StructArray, UInt32Array, UInt64Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};
use rayon::prelude::*;

use crate::errors::{type_name, ErrorClass};
use crate::estimate::role_named;
use crate::options::ParseArgs;
use crate::pool;

use crate::tokens::encoding_from_name;

/// An Arrow array made by agentmsg. ``__arrow_c_array__`` exports it afresh on every call, so
/// any Arrow library imports it, any number of times, without a copy.
///
/// >>> import pyarrow as pa
/// >>> from agentmsg import _core
/// >>> counts = _core.count_tokens_arrow(pa.array(["a b", None]))
/// >>> len(counts), pa.array(counts).to_pylist(), pa.array(counts).type
/// (2, [2, None], DataType(uint64))
#[pyclass(frozen, module = "agentmsg.arrow")]
pub struct ArrowArray {
    array: ArrayRef,
}

#[pymethods]
impl ArrowArray {
    /// The (schema, array) capsules of the C data interface; a requested schema is not cast to.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let (array, schema) = to_ffi(&self.array.to_data())
            .map_err(|error| ErrorClass::AgentMsg.new_err(py, format!("cannot export the Arrow array: {error}")))?;
        // A consumer moves each struct out of its capsule (leaving it released); one that never
        // does leaves it to be released when the capsule is freed.
        let schema = PyCapsule::new_with_value(py, schema, c"arrow_schema")?;
        let array = PyCapsule::new_with_value(py, array, c"arrow_array")?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }

    fn __repr__(&self) -> String {
        format!("ArrowArray({}, length {})", self.array.data_type(), self.array.len())
    }
}

/// The string array an object exports with `__arrow_c_array__`, checked before it is read (see
/// [`c_data`]).
fn import_array(py: Python<'_>, texts: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    let not_arrow = || {
        let message = format!("texts must be an Arrow array (with __arrow_c_array__), not {}", type_name(texts));
        ErrorClass::MessageType.new_err(py, message)
    };
    let method = texts.getattr("__arrow_c_array__").map_err(|_| not_arrow())?;
    let not_capsules = || {
        let message = "texts.__arrow_c_array__() must return a pair of capsules named 'arrow_schema' and 'arrow_array'";
        ErrorClass::MessageType.new_err(py, message)
    };
    let pair = method.call0()?.cast_into::<PyTuple>().map_err(|_| not_capsules())?;
    if pair.len() != 2 {
        return Err(not_capsules());
    }
    let schema = pair.get_item(0)?.cast_into::<PyCapsule>().map_err(|_| not_capsules())?;
    let array = pair.get_item(1)?.cast_into::<PyCapsule>().map_err(|_| not_capsules())?;
    let (schema_name, array_name) = (Some(c"arrow_schema"), Some(c"arrow_array"));
    if !schema.is_valid_checked(schema_name) || !array.is_valid_checked(array_name) {
        if schema.is_valid_checked(array_name) && array.is_valid_checked(schema_name) {
            let message = "texts.__arrow_c_array__() must return the schema capsule first, then the array capsule; \
                           it returned them the other way round";
            return Err(ErrorClass::MessageType.new_err(py, message));
        }
        return Err(not_capsules());
    }
    let (schema, array) = (schema.pointer_checked(schema_name)?, array.pointer_checked(array_name)?);
    // SAFETY: the capsules are named `arrow_schema` and `arrow_array` (checked above), which the
    // PyCapsule interface says hold an `ArrowSchema` and an `ArrowArray`; `pair` keeps both
    // alive for the call.
    unsafe { c_data::import_strings(schema, array) }.map_err(|refused| match refused {
        c_data::Refused::NotStrings(what) => ErrorClass::MessageType
            .new_err(py, format!("texts must be an Arrow string, large_string or string_view array, not {what}")),
        c_data::Refused::Malformed(reason) => ErrorClass::Message.new_err(py, format!("texts: {reason}")),
    })
}

/// A string column read in place: `string`, `large_string` or `string_view`.
enum TextColumn {
    Utf8(StringArray),
    LargeUtf8(LargeStringArray),
    Utf8View(StringViewArray),
}

impl TextColumn {
    /// The column of `array`, checked as far as it can be without reading every string (the
    /// strings of `string` and `large_string` are checked as they are read, in parallel).
    fn new(py: Python<'_>, array: ArrayRef) -> PyResult<Self> {
        let malformed = |error: arrow_schema::ArrowError| ErrorClass::Message.new_err(py, format!("texts: {error}"));
        let data = array.to_data();
        match array.data_type() {
            DataType::Utf8 | DataType::LargeUtf8 => data.validate().map_err(malformed)?,
            DataType::Utf8View => data.validate_full().map_err(malformed)?,
            other => {
                let message = format!("texts must be an Arrow string, large_string or string_view array, not {other}");
                return Err(ErrorClass::MessageType.new_err(py, message));
            }
        }
        Ok(match array.data_type() {
            DataType::Utf8 => Self::Utf8(StringArray::from(data)),
            DataType::LargeUtf8 => Self::LargeUtf8(LargeStringArray::from(data)),
            _ => Self::Utf8View(StringViewArray::from(data)),
        })
    }

    fn len(&self) -> usize {
        match self {
            Self::Utf8(array) => array.len(),
            Self::LargeUtf8(array) => array.len(),
            Self::Utf8View(array) => array.len(),
        }
    }

    fn nulls(&self) -> Option<&NullBuffer> {
        match self {
            Self::Utf8(array) => array.nulls(),
            Self::LargeUtf8(array) => array.nulls(),
            Self::Utf8View(array) => array.nulls(),
        }
    }

    /// String `index`, None if null, or why it cannot be read.
    fn text(&self, index: usize) -> Result<Option<&str>, String> {
        match self {
            Self::Utf8(array) => offset_text(array, index),
            Self::LargeUtf8(array) => offset_text(array, index),
            // Validated in full on import.
            Self::Utf8View(array) => Ok(array.is_valid(index).then(|| array.value(index))),
        }
    }
}

/// String `index` of an offsets-and-data array whose offsets and UTF-8 are not yet checked.
/// Only the data from the array's first offset to its last is known to be there (`c_data`
/// checked that much), so a row's offsets must lie within those, in order.
fn offset_text<O: OffsetSizeTrait>(array: &GenericStringArray<O>, index: usize) -> Result<Option<&str>, String> {
    if array.is_null(index) {
        return Ok(None);
    }
    let offsets = array.value_offsets();
    let (first, last) = (offsets[0], offsets[offsets.len() - 1]);
    let (start, end) = (offsets[index], offsets[index + 1]);
    if start > end {
        return Err(format!("offsets {start:?}..{end:?} run backwards"));
    }
    let bytes = (first <= start && end <= last)
        .then(|| array.value_data().get(start.as_usize()..end.as_usize()))
        .flatten()
        .ok_or_else(|| format!("offsets {start:?}..{end:?} outside the data (bytes {first:?}..{last:?})"))?;
    std::str::from_utf8(bytes).map(Some).map_err(|error| format!("invalid UTF-8: {error}"))
}

/// `each` of every string of `column`, on the pool with the GIL released; a null row gets
/// `T::default()`. A string that cannot be read is an error naming the first such index.
fn map_texts<'c, T: Send + Default>(
    py: Python<'_>,
    column: &'c TextColumn,
    each: impl Fn(&'c str) -> T + Sync + Send,
) -> PyResult<Vec<T>> {
    let first_bad = AtomicUsize::new(usize::MAX);
    let out = pool::run_detached(py, || {
        let mut out = Vec::with_capacity(column.len());
        (0..column.len())
            .into_par_iter()
            .map(|index| match column.text(index) {
                Ok(Some(text)) => each(text),
                Ok(None) => T::default(),
                Err(_) => {
                    first_bad.fetch_min(index, Ordering::Relaxed);
                    T::default()
                }
            })
            .collect_into_vec(&mut out);
        out
    })?;
    let bad = first_bad.into_inner();
    if bad != usize::MAX {
        let reason = column.text(bad).err().unwrap_or_default();
        return Err(ErrorClass::Message.new_err(py, format!("texts[{bad}]: {reason}")));
    }
    Ok(out)
}

/// One value per row as a `uint64` array, null where the input string is null.
fn uint64_result(column: &TextColumn, values: Vec<u64>) -> ArrowArray {
    ArrowArray { array: Arc::new(UInt64Array::new(values.into(), column.nulls().cloned())) }
}

/// Counts the tokens of each string of an Arrow string array: a `uint64` `ArrowArray`, null
/// where the string is null.
#[pyfunction]
#[pyo3(signature = (texts, encoding = None))]
fn count_tokens_arrow<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    encoding: Option<&Bound<'py, PyAny>>,
) -> PyResult<ArrowArray> {
    let encoding: Encoding = encoding_from_name(py, encoding)?;
    let column = TextColumn::new(py, import_array(py, texts)?)?;
    let counts = map_texts(py, &column, |text| tokens::count_tokens(text, encoding) as u64)?;
    Ok(uint64_result(&column, counts))
}

/// Forge's estimate of each string of an Arrow string array written by `role`: a `uint64`
/// `ArrowArray`, null where the string is null.
#[pyfunction]
#[pyo3(signature = (texts, role))]
fn estimate_tokens_arrow<'py>(py: Python<'py>, texts: &Bound<'py, PyAny>, role: &Bound<'py, PyAny>) -> PyResult<ArrowArray> {
    let role = role_named(role)?;
    let column = TextColumn::new(py, import_array(py, texts)?)?;
    let estimates = map_texts(py, &column, |text| estimate::estimate_tokens(text, role) as u64)?;
    Ok(uint64_result(&column, estimates))
}

/// One parse result, flattened to the columns of the struct array; built on the pool.
#[derive(Default)]
struct ParsedRow<'a> {
    text: Vec<u8>,
    thinking: Vec<Cow<'a, [u8]>>,
    /// Each good call's name and its arguments as compact JSON.
    calls: Vec<(String, Vec<u8>)>,
    errors: usize,
}

impl<'a> ParsedRow<'a> {
    fn new(doc: Document<'a>) -> Self {
        let text = doc.text();
        let mut row = ParsedRow { text, errors: doc.issues.len(), ..Self::default() };
        for block in doc.blocks {
            match block {
                Block::Text(_) => {}
                Block::Thinking(thinking) => row.thinking.push(thinking),
                Block::ToolCall(call) => {
                    let mut arguments = Vec::new();
                    json_text::value_into(&JsonValue::Object(call.input), &mut arguments);
                    row.calls.push((call.name, arguments));
                }
            }
        }
        row
    }
}

/// A string array of `values`, with offsets of type `O`.
fn string_array<'v, O: OffsetSizeTrait>(values: impl Iterator<Item = &'v [u8]>) -> Result<ArrayRef, String> {
    let mut offsets = vec![O::usize_as(0)];
    let mut data = Vec::new();
    for value in values {
        data.extend_from_slice(value);
        offsets.push(O::from_usize(data.len()).ok_or("a parse result column is too large for its offsets")?);
    }
    // `try_new` checks the offsets and that the data is UTF-8.
    let offsets = OffsetBuffer::new(offsets.into());
    Ok(Arc::new(GenericStringArray::<O>::try_new(offsets, data.into(), None).map_err(|error| error.to_string())?))
}

/// Offsets of lists of the given lengths.
fn list_offsets<O: OffsetSizeTrait>(lengths: impl Iterator<Item = usize>) -> Result<OffsetBuffer<O>, String> {
    let mut offsets = vec![O::usize_as(0)];
    let mut total = 0usize;
    for length in lengths {
        total += length;
        offsets.push(O::from_usize(total).ok_or("a parse result list column is too large for its offsets")?);
    }
    Ok(OffsetBuffer::new(offsets.into()))
}

fn string_type<O: OffsetSizeTrait>() -> DataType {
    if O::IS_LARGE {
        DataType::LargeUtf8
    } else {
        DataType::Utf8
    }
}

fn list_type<O: OffsetSizeTrait>(item: DataType) -> DataType {
    let field = Arc::new(Field::new("item", item, true));
    if O::IS_LARGE {
        DataType::LargeList(field)
    } else {
        DataType::List(field)
    }
}

/// The struct array of the parse results: `string` and `list` columns (`large_string` and
/// `large_list` with `O = i64`), null rows where `nulls` says.
fn parsed_array<O: OffsetSizeTrait>(rows: &[ParsedRow<'_>], nulls: Option<NullBuffer>) -> Result<ArrayRef, String> {
    let call_fields = Fields::from(vec![
        Field::new("name", string_type::<O>(), true),
        Field::new("arguments", string_type::<O>(), true),
    ]);
    let calls = || rows.iter().flat_map(|row| &row.calls);
    let call_struct = StructArray::try_new(
        call_fields.clone(),
        vec![
            string_array::<O>(calls().map(|(name, _)| name.as_bytes()))?,
            string_array::<O>(calls().map(|(_, arguments)| arguments.as_slice()))?,
        ],
        None,
    )
    .map_err(|error| error.to_string())?;
    let tool_calls = GenericListArray::<O>::try_new(
        Arc::new(Field::new("item", DataType::Struct(call_fields), true)),
        list_offsets(rows.iter().map(|row| row.calls.len()))?,
        Arc::new(call_struct),
        None,
    )
    .map_err(|error| error.to_string())?;
    let thinking = GenericListArray::<O>::try_new(
        Arc::new(Field::new("item", string_type::<O>(), true)),
        list_offsets(rows.iter().map(|row| row.thinking.len()))?,
        string_array::<O>(rows.iter().flat_map(|row| row.thinking.iter().map(|t| t.as_ref())))?,
        None,
    )
    .map_err(|error| error.to_string())?;
    let errors: Vec<u32> = rows
        .iter()
        .map(|row| u32::try_from(row.errors).map_err(|_| "more than 2**32 bad tool calls in one text".to_owned()))
        .collect::<Result<_, _>>()?;
    let fields = Fields::from(vec![
        Field::new("text", string_type::<O>(), true),
        Field::new("thinking", list_type::<O>(string_type::<O>()), true),
        Field::new("tool_calls", tool_calls.data_type().clone(), true),
        Field::new("errors", DataType::UInt32, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        string_array::<O>(rows.iter().map(|row| row.text.as_slice()))?,
        Arc::new(thinking),
        Arc::new(tool_calls),
        Arc::new(UInt32Array::from(errors)),
    ];
    Ok(Arc::new(StructArray::try_new(fields, columns, nulls).map_err(|error| error.to_string())?))
}

/// Parses each string of an Arrow string array: a struct `ArrowArray` of `text`, `thinking`
/// (list of strings), `tool_calls` (list of structs of `name` and `arguments` as JSON) and
/// `errors` (the number of bad tool calls), null where the string is null. `dialect` is a
/// dialect's name ("forge" for Forge's parser) or an `agentmsg.dialects.Dialect`.
#[pyfunction]
#[pyo3(signature = (texts, *, dialect=None, thinking=None, tool_format=None, code_fences=None, start_in_thinking=None,
                    max_calls=None, tools=None, strict=None, **unexpected))]
#[allow(clippy::too_many_arguments)]
fn parse_arrow<'py>(
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
) -> PyResult<ArrowArray> {
    // The options are read as `parse` reads them.
    let args = ParseArgs { dialect, thinking, tool_format, code_fences, start_in_thinking, max_calls, tools, strict, unexpected };
    let options = args.options(py, "parse_arrow", StartThinking::Detect)?;
    let column = TextColumn::new(py, import_array(py, texts)?)?;
    let rows = map_texts(py, &column, |text| ParsedRow::new(core_parse::parse(text.as_bytes(), &options)))?;
    let nulls = column.nulls();
    // `string` and `list` columns, as pyarrow makes them, unless a column holds more than their
    // 32-bit offsets reach: then `large_string` and `large_list`.
    let array = py.detach(|| {
        parsed_array::<i32>(&rows, nulls.cloned()).or_else(|_| parsed_array::<i64>(&rows, nulls.cloned()))
    });
    let array = array.map_err(|reason| ErrorClass::Message.new_err(py, format!("texts: {reason}")))?;
    Ok(ArrowArray { array })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArrowArray>()?;
    m.add_function(wrap_pyfunction!(count_tokens_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_tokens_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(parse_arrow, m)?)?;
    Ok(())
}
