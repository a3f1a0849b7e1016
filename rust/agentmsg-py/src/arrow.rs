//! Arrow arrays in and out, through the Arrow C data interface and its PyCapsule protocol.
//!
//! Any object with `__arrow_c_array__` (pyarrow, polars, arro3, nanoarrow, ...) hands over its
//! string column as two capsules; the strings are read in place, counted on the pool with the
//! GIL released, and the counts go back as an Arrow `uint64` array in capsules any Arrow library
//! imports without a copy. The two C structs are the interface's stable ABI, written out here
//! rather than pulling in arrow-rs for a few dozen lines of it.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;

use agentmsg_core::tokens::{self, Encoding};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};
use rayon::prelude::*;

use crate::errors::agentmsg_error;
use crate::pool;
use crate::pystr::type_name;
use crate::tokens::encoding_from_name;

/// `struct ArrowSchema` of the C data interface.
#[repr(C)]
struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

/// `struct ArrowArray` of the C data interface.
#[repr(C)]
struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

// SAFETY: an exported struct owns its buffers (through `private_data`) and may be released from
// any thread, as the C data interface requires of every producer.
unsafe impl Send for ArrowSchema {}
unsafe impl Send for ArrowArray {}

impl Drop for ArrowSchema {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: a struct not moved out by a consumer is still ours to release.
            unsafe { release(self) };
        }
    }
}

impl Drop for ArrowArray {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: as for the schema.
            unsafe { release(self) };
        }
    }
}

/// The offsets of a string array: `utf8` has 32-bit ones, `large_utf8` 64-bit ones.
enum Offsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
}

/// A borrowed Arrow string column: `len` strings from `offset`, readable without the GIL while
/// the capsule that owns it is alive.
struct StringColumn<'a> {
    len: usize,
    offset: usize,
    validity: Option<&'a [u8]>,
    offsets: Offsets<'a>,
    data: &'a [u8],
}

impl<'a> StringColumn<'a> {
    fn is_valid(&self, index: usize) -> bool {
        let bit = self.offset + index;
        self.validity.is_none_or(|bits| bits[bit / 8] & (1 << (bit % 8)) != 0)
    }

    /// String `index` (0-based from the array's offset), or the reason it is not UTF-8 or its
    /// offsets are out of bounds.
    fn get(&self, index: usize) -> Result<&'a str, String> {
        let at = self.offset + index;
        let (start, end) = match self.offsets {
            Offsets::Small(offsets) => (i64::from(offsets[at]), i64::from(offsets[at + 1])),
            Offsets::Large(offsets) => (offsets[at], offsets[at + 1]),
        };
        let (Ok(start), Ok(end)) = (usize::try_from(start), usize::try_from(end)) else {
            return Err(format!("negative offsets {start}..{end}"));
        };
        let bytes = self
            .data
            .get(start..end)
            .ok_or_else(|| format!("offsets {start}..{end} outside the {} data bytes", self.data.len()))?;
        std::str::from_utf8(bytes).map_err(|error| format!("invalid UTF-8: {error}"))
    }
}

/// Reads a column from the capsules of `__arrow_c_array__`, checking what the format allows to
/// be checked without reading every string.
fn string_column<'a>(
    py: Python<'_>,
    schema: &'a ArrowSchema,
    array: &'a ArrowArray,
) -> PyResult<StringColumn<'a>> {
    let invalid = |message: String| agentmsg_error(py, "MessageError", message);
    if schema.format.is_null() || array.release.is_none() {
        return Err(invalid("the Arrow array was already released".to_owned()));
    }
    // SAFETY: a live schema's format is a NUL-terminated string.
    let format = unsafe { CStr::from_ptr(schema.format) }.to_bytes();
    let large = match format {
        b"u" => false,
        b"U" => true,
        other => {
            return Err(agentmsg_error(
                py,
                "MessageTypeError",
                format!(
                    "texts must be an Arrow string or large_string array, not format {:?}",
                    String::from_utf8_lossy(other)
                ),
            ))
        }
    };
    let (Ok(len), Ok(offset)) = (usize::try_from(array.length), usize::try_from(array.offset)) else {
        return Err(invalid(format!("negative Arrow length {} or offset {}", array.length, array.offset)));
    };
    if array.n_buffers != 3 || array.buffers.is_null() {
        return Err(invalid(format!("a string array has 3 buffers, not {}", array.n_buffers)));
    }
    let count = offset + len;
    // SAFETY: a live string array has 3 buffers: validity (may be null), `count + 1` offsets and
    // the data, whose size is the last offset.
    unsafe {
        let buffers = std::slice::from_raw_parts(array.buffers, 3);
        let validity = (!buffers[0].is_null() && array.null_count != 0)
            .then(|| std::slice::from_raw_parts(buffers[0].cast::<u8>(), count.div_ceil(8)));
        if buffers[1].is_null() {
            return Err(invalid("the Arrow offsets buffer is null".to_owned()));
        }
        let (offsets, data_len) = if large {
            let offsets = std::slice::from_raw_parts(buffers[1].cast::<i64>(), count + 1);
            (Offsets::Large(offsets), offsets[count])
        } else {
            let offsets = std::slice::from_raw_parts(buffers[1].cast::<i32>(), count + 1);
            (Offsets::Small(offsets), i64::from(offsets[count]))
        };
        let data_len = usize::try_from(data_len)
            .map_err(|_| invalid(format!("negative Arrow data length {data_len}")))?;
        let data = if data_len == 0 {
            &[][..]
        } else if buffers[2].is_null() {
            return Err(invalid("the Arrow data buffer is null".to_owned()));
        } else {
            std::slice::from_raw_parts(buffers[2].cast::<u8>(), data_len)
        };
        Ok(StringColumn { len, offset, validity, offsets, data })
    }
}

/// The two capsules of `__arrow_c_array__()`.
fn capsules<'py>(py: Python<'py>, texts: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
    let not_arrow = || {
        agentmsg_error(
            py,
            "MessageTypeError",
            format!("texts must be an Arrow array (with __arrow_c_array__), not {}", type_name(texts)),
        )
    };
    let method = texts.getattr("__arrow_c_array__").map_err(|_| not_arrow())?;
    let pair = method.call0()?;
    let pair = pair.cast_into::<PyTuple>().map_err(|_| not_arrow())?;
    if pair.len() != 2 {
        return Err(not_arrow());
    }
    let schema = pair.get_item(0)?.cast_into::<PyCapsule>().map_err(|_| not_arrow())?;
    let array = pair.get_item(1)?.cast_into::<PyCapsule>().map_err(|_| not_arrow())?;
    Ok((schema, array))
}

/// Counts each string of an Arrow string array; null strings give null counts.
fn count_column(column: &StringColumn<'_>, encoding: Encoding) -> Result<Vec<Option<u64>>, (usize, String)> {
    (0..column.len)
        .into_par_iter()
        .map(|index| {
            if !column.is_valid(index) {
                return Ok(None);
            }
            let text = column.get(index).map_err(|reason| (index, reason))?;
            Ok(Some(tokens::count_tokens(text, encoding) as u64))
        })
        .collect()
}

/// The buffers an exported `uint64` array owns.
struct ExportedBuffers {
    values: Vec<u64>,
    validity: Option<Vec<u8>>,
    pointers: [*const c_void; 2],
}

unsafe extern "C" fn release_array(array: *mut ArrowArray) {
    // SAFETY: `private_data` is the box `export_counts` leaked, freed exactly once here.
    unsafe {
        drop(Box::from_raw((*array).private_data.cast::<ExportedBuffers>()));
        (*array).release = None;
    }
}

unsafe extern "C" fn release_schema(schema: *mut ArrowSchema) {
    // SAFETY: the exported schema points only to static strings.
    unsafe { (*schema).release = None };
}

/// The counts as a `uint64` Arrow array: (schema capsule, array capsule).
fn export_counts<'py>(py: Python<'py>, counts: Vec<Option<u64>>) -> PyResult<Bound<'py, PyTuple>> {
    let len = counts.len();
    let null_count = counts.iter().filter(|count| count.is_none()).count();
    let validity = (null_count > 0).then(|| {
        let mut bits = vec![0u8; len.div_ceil(8)];
        for (index, count) in counts.iter().enumerate() {
            if count.is_some() {
                bits[index / 8] |= 1 << (index % 8);
            }
        }
        bits
    });
    let values: Vec<u64> = counts.into_iter().map(Option::unwrap_or_default).collect();
    let mut buffers = Box::new(ExportedBuffers { values, validity, pointers: [ptr::null(); 2] });
    buffers.pointers = [
        buffers.validity.as_ref().map_or(ptr::null(), |bits| bits.as_ptr().cast()),
        buffers.values.as_ptr().cast(),
    ];
    let buffers = Box::into_raw(buffers);
    let array = ArrowArray {
        length: len as i64,
        null_count: null_count as i64,
        offset: 0,
        n_buffers: 2,
        n_children: 0,
        // SAFETY: `buffers` stays alive until `release_array` frees it.
        buffers: unsafe { (*buffers).pointers.as_mut_ptr() },
        children: ptr::null_mut(),
        dictionary: ptr::null_mut(),
        release: Some(release_array),
        private_data: buffers.cast(),
    };
    let schema = ArrowSchema {
        format: c"L".as_ptr(),
        name: c"".as_ptr(),
        metadata: ptr::null(),
        flags: if null_count > 0 { 2 } else { 0 }, // ARROW_FLAG_NULLABLE
        n_children: 0,
        children: ptr::null_mut(),
        dictionary: ptr::null_mut(),
        release: Some(release_schema),
        private_data: ptr::null_mut(),
    };
    // A consumer moves the struct out of the capsule (leaving `release` null); one that never
    // does leaves it to be released when the capsule is freed.
    let schema = PyCapsule::new_with_value_and_destructor(py, schema, c"arrow_schema", |s, _| drop(s))?;
    let array = PyCapsule::new_with_value_and_destructor(py, array, c"arrow_array", |a, _| drop(a))?;
    PyTuple::new(py, [schema.into_any(), array.into_any()])
}

/// Counts the tokens of each string of an Arrow string array; returns the `(schema, array)`
/// capsules of a `uint64` array (null where the string is null).
#[pyfunction]
#[pyo3(signature = (texts, encoding = None))]
fn count_tokens_arrow<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    encoding: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let encoding = encoding_from_name(py, encoding)?;
    let (schema, array) = capsules(py, texts)?;
    let schema_ptr = schema.pointer_checked(Some(c"arrow_schema"))?;
    let array_ptr = array.pointer_checked(Some(c"arrow_array"))?;
    // SAFETY: the capsules hold live structs (checked by name) for as long as they are borrowed
    // here; the producer releases them when the capsules are freed.
    let (schema_ref, array_ref) =
        unsafe { (&*schema_ptr.as_ptr().cast::<ArrowSchema>(), &*array_ptr.as_ptr().cast::<ArrowArray>()) };
    let column = string_column(py, schema_ref, array_ref)?;
    let counts = pool::run_detached(py, || count_column(&column, encoding))?;
    let counts = counts.map_err(|(index, reason)| {
        agentmsg_error(py, "MessageError", format!("texts[{index}]: {reason}"))
    })?;
    export_counts(py, counts)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(count_tokens_arrow, m)?)?;
    Ok(())
}
