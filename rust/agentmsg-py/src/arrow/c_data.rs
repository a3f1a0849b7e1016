//! The structs of the Arrow C data interface that a producer hands over in its capsules, checked
//! before anything reads through them, then imported by arrow-rs.
//!
//! The interface carries no buffer sizes: an array gives its length and offset, a string array
//! the positions of its strings in the data, and the consumer reads that far. A producer whose
//! numbers exceed its buffers makes any consumer read outside them. So everything the numbers
//! must satisfy is checked first, and a struct that fails a check is left in its capsule (the
//! capsule releases it) with the reason:
//!
//! - the format is `u`, `U` or `vu` (string, large_string, string_view), with no children and
//!   no dictionary, and the array has the buffers of that format, no children, no dictionary;
//! - the length and offset are at least 0, the null count is -1 (unknown) or from 0 to the
//!   length, and, when there is no validity bitmap, 0; with a bitmap, it is the number of zero
//!   bits the bitmap has in the array's rows;
//! - the offsets run forward from at least 0: the first and the last are read once the offsets
//!   buffer is known to be there (each row's are checked against them as the row is read);
//! - the extent each buffer must have (the validity bitmap and the offsets or views from the
//!   length and offset, the data from the first to the last offset, a view's data buffer from
//!   its declared size) fits in `isize`, does not wrap past the end of the address space, and,
//!   on Linux, macOS and FreeBSD, lies in memory mapped into this process (`mincore`): lengths or
//!   offsets past the end of the producer's memory are an error, not a crash;
//! - the offsets and the declared sizes of a view array's data buffers are aligned to their
//!   type, as arrow-rs reads them.
//!
//! What stays trusted to the producer: the pointers themselves, and that the mapped memory each
//! extent spans is its buffer. Offsets that stay inside some other mapped memory read bytes that
//! are not the array's (pyarrow arrays are validated by pyarrow before export, which knows their
//! sizes: see `agentmsg.arrow`).

use std::ffi::{c_char, c_void};
use std::mem::{align_of, size_of};
use std::panic::AssertUnwindSafe;
use std::ptr::NonNull;

use arrow_array::ffi::{from_ffi_and_data_type, FFI_ArrowArray};
use arrow_array::ArrayRef;
use arrow_buffer::bit_chunk_iterator::UnalignedBitChunk;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::DataType;

/// `ArrowSchema` as the C data interface defines it: read here field by field, where arrow-rs's
/// accessors would assert.
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

/// `ArrowArray` as the C data interface defines it.
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

// The same structs arrow-rs imports.
const _: () = assert!(size_of::<ArrowSchema>() == size_of::<FFI_ArrowSchema>());
const _: () = assert!(size_of::<ArrowArray>() == size_of::<FFI_ArrowArray>());

/// Why an array was not imported.
pub(super) enum Refused {
    /// Not a string array: the type, described.
    NotStrings(String),
    /// A struct that breaks the interface, or numbers that exceed the memory they point into.
    Malformed(String),
}

/// The string layouts read.
#[derive(Clone, Copy)]
enum Layout {
    /// `string` (`i32` offsets) and `large_string` (`i64` offsets): validity, offsets, data.
    Offsets { large: bool },
    /// `string_view`: validity, views, data buffers, their sizes.
    Views,
}

impl Layout {
    /// The layout's type as Arrow names it.
    fn name(self) -> &'static str {
        match self {
            Layout::Offsets { large: false } => "string",
            Layout::Offsets { large: true } => "large_string",
            Layout::Views => "string_view",
        }
    }

    /// The bytes of the buffer that grows with the rows: an offset, or a view.
    fn row_bytes(self) -> usize {
        match self {
            Layout::Offsets { large: false } => size_of::<i32>(),
            Layout::Offsets { large: true } => size_of::<i64>(),
            Layout::Views => 16,
        }
    }

    fn data_type(self) -> DataType {
        match self {
            Layout::Offsets { large: false } => DataType::Utf8,
            Layout::Offsets { large: true } => DataType::LargeUtf8,
            Layout::Views => DataType::Utf8View,
        }
    }
}

/// A format string longer than this is no format this module reads or names.
const MAX_FORMAT_BYTES: usize = 256;

/// Imports the string array of a pair of capsules, checked as the module says.
///
/// # Safety
///
/// `schema` and `array` point at the `ArrowSchema` and `ArrowArray` structs of live capsules
/// named `arrow_schema` and `arrow_array` (the PyCapsule interface), which the caller keeps
/// alive for the call. The array struct is moved out (leaving a released one for the capsule's
/// destructor) only once every check passed.
pub(super) unsafe fn import_strings(schema: NonNull<c_void>, array: NonNull<c_void>) -> Result<ArrayRef, Refused> {
    // SAFETY: the caller's contract; a struct of the interface is plain data, read in place.
    let (schema, raw) = unsafe { (schema.cast::<ArrowSchema>().as_ref(), array.cast::<ArrowArray>().as_ref()) };
    if schema.release.is_none() {
        return Err(Refused::Malformed("the Arrow schema was already released".into()));
    }
    let layout = string_layout(schema)?;
    if raw.release.is_none() {
        return Err(Refused::Malformed("the Arrow array was already imported".into()));
    }
    // SAFETY: `raw` is a live, unreleased array struct of the interface.
    unsafe { check_array(raw, layout) }.map_err(Refused::Malformed)?;
    // SAFETY: the checks leave arrow-rs's import nothing to read outside the extents checked
    // above; `from_raw` moves the struct out of the capsule, and the imported data keeps the
    // producer's buffers alive (releasing them when dropped).
    let imported = std::panic::catch_unwind(AssertUnwindSafe(|| unsafe {
        let array = FFI_ArrowArray::from_raw(array.cast::<FFI_ArrowArray>().as_ptr());
        from_ffi_and_data_type(array, layout.data_type())
    }));
    match imported {
        Ok(Ok(data)) => Ok(arrow_array::make_array(data)),
        Ok(Err(error)) => Err(Refused::Malformed(error.to_string())),
        // The checks leave arrow-rs nothing to assert on; should an assertion still fire, it is a
        // typed error rather than a `PanicException`.
        Err(_) => Err(Refused::Malformed("a malformed Arrow array".into())),
    }
}

/// The layout `schema` declares, or the type it declares described.
fn string_layout(schema: &ArrowSchema) -> Result<Layout, Refused> {
    if schema.format.is_null() {
        return Err(Refused::Malformed("the Arrow schema has no format".into()));
    }
    // SAFETY: a live schema's `format` is a NUL-terminated string; it is read a byte at a time
    // up to its NUL, and no further than MAX_FORMAT_BYTES.
    let format: Vec<u8> = unsafe {
        let mut bytes = Vec::new();
        while bytes.len() <= MAX_FORMAT_BYTES {
            match *schema.format.add(bytes.len()) as u8 {
                0 => break,
                byte => bytes.push(byte),
            }
        }
        bytes
    };
    let layout = match format.as_slice() {
        b"u" => Layout::Offsets { large: false },
        b"U" => Layout::Offsets { large: true },
        b"vu" => Layout::Views,
        _ => return Err(Refused::NotStrings(type_described(schema, &format))),
    };
    if schema.n_children != 0 {
        let message = format!("the Arrow schema of a {} array has no children, not {}", layout.name(), schema.n_children);
        return Err(Refused::Malformed(message));
    }
    Ok(layout)
}

/// The type of a schema that is not a string type, as arrow-rs names it where that reads nothing
/// but the format (no children, no dictionary), else by its format string.
fn type_described(schema: &ArrowSchema, format: &[u8]) -> String {
    if !schema.dictionary.is_null() {
        return "a dictionary-encoded array (decode it first)".into();
    }
    if format.len() > MAX_FORMAT_BYTES {
        return format!("an array of an Arrow format longer than {MAX_FORMAT_BYTES} bytes");
    }
    let Ok(text) = std::str::from_utf8(format) else {
        return "an array whose Arrow format is not UTF-8".into();
    };
    if schema.n_children == 0 && !text.starts_with('+') {
        // SAFETY: the struct is arrow-rs's (same layout, asserted above); its format was read to
        // its NUL as UTF-8, and with no children nor dictionary nothing else is read.
        let schema = unsafe { &*(schema as *const ArrowSchema).cast::<FFI_ArrowSchema>() };
        if let Ok(data_type) = DataType::try_from(schema) {
            return data_type.to_string();
        }
    }
    format!("an array of Arrow format {text:?}")
}

/// Checks the numbers of `array`, an array of `layout`, against each other and the memory they
/// point into, reading only what is checked to be there first.
///
/// # Safety
///
/// `array` is a live, unreleased `ArrowArray`.
unsafe fn check_array(array: &ArrowArray, layout: Layout) -> Result<(), String> {
    let what = layout.name();
    if array.n_children != 0 {
        return Err(format!("a {what} array has no children, not {}", array.n_children));
    }
    if !array.dictionary.is_null() {
        return Err(format!("a {what} array has no dictionary"));
    }
    let (Ok(length), Ok(offset)) = (usize::try_from(array.length), usize::try_from(array.offset)) else {
        return Err(format!("length ({}) and offset ({}) must be at least 0", array.length, array.offset));
    };
    // Rows `offset..rows` are the array's; the buffers hold them from row 0. With at most this
    // many, no size computed below overflows.
    let max_rows = isize::MAX as usize / layout.row_bytes() - 1;
    let rows = offset.checked_add(length).filter(|&rows| rows <= max_rows).ok_or_else(|| {
        format!("offset ({offset}) + length ({length}) is more rows than memory can hold")
    })?;
    if array.null_count < -1 || array.null_count > array.length {
        return Err(format!("null_count ({}) must be -1 (unknown) or from 0 to the length ({length})", array.null_count));
    }
    let n_buffers = usize::try_from(array.n_buffers).unwrap_or(usize::MAX);
    let buffers_ok = match layout {
        Layout::Offsets { .. } => n_buffers == 3,
        Layout::Views => (3..isize::MAX as usize / size_of::<usize>()).contains(&n_buffers),
    };
    if !buffers_ok {
        let expected = if matches!(layout, Layout::Views) { "3 or more" } else { "3" };
        return Err(format!("a {what} array has {expected} buffers, not {}", array.n_buffers));
    }
    if array.buffers.is_null() {
        return Err("the buffers pointer is null".into());
    }
    if n_buffers > 3 {
        // Three pointers any string array has; more are a count the producer gives.
        check_extent("buffer pointers", array.buffers as usize, n_buffers * size_of::<usize>())?;
    }
    // SAFETY: `buffers` holds `n_buffers` pointers, checked to be mapped just above.
    let buffer = |index: usize| unsafe { array.buffers.add(index).read_unaligned() as usize };

    let validity = buffer(0);
    if validity == 0 {
        if array.null_count > 0 {
            return Err(format!("null_count is {} but there is no validity bitmap", array.null_count));
        }
    } else {
        check_extent("validity bitmap", validity, rows.div_ceil(8))?;
        if array.null_count >= 0 {
            // SAFETY: the bitmap's bytes for rows `0..rows` are mapped (checked above).
            let bitmap = unsafe { std::slice::from_raw_parts(validity as *const u8, rows.div_ceil(8)) };
            let nulls = length - UnalignedBitChunk::new(bitmap, offset, length).count_ones();
            if nulls as i64 != array.null_count {
                let message = format!("null_count is {} but the validity bitmap marks {nulls} of the {length} rows null", array.null_count);
                return Err(message);
            }
        }
    }
    match layout {
        // SAFETY: the caller's contract, and the buffer count checked above.
        Layout::Offsets { large: false } => unsafe { check_offsets::<i32>(&buffer, offset, rows) },
        Layout::Offsets { large: true } => unsafe { check_offsets::<i64>(&buffer, offset, rows) },
        // SAFETY: as above.
        Layout::Views => unsafe { check_views(&buffer, n_buffers, rows) },
    }
}

/// Checks the offsets and data buffers (1 and 2) of an array of rows `offset..rows`.
///
/// # Safety
///
/// `buffer(i)` is the address of buffer `i` of a live array of 3 buffers.
unsafe fn check_offsets<O: Offset>(buffer: &impl Fn(usize) -> usize, offset: usize, rows: usize) -> Result<(), String> {
    let (offsets, data) = (buffer(1), buffer(2));
    if offsets == 0 {
        return Err("the offsets buffer is null".into());
    }
    if !offsets.is_multiple_of(align_of::<O>()) {
        return Err(format!("the offsets buffer is not aligned to {} bytes", size_of::<O>()));
    }
    check_extent("offsets", offsets, (rows + 1) * size_of::<O>())?;
    // SAFETY: aligned, and the `rows + 1` offsets are mapped (checked above).
    let (first, last) = unsafe {
        let offsets = offsets as *const O;
        (offsets.add(offset).read().as_i64(), offsets.add(rows).read().as_i64())
    };
    if first < 0 || last < first {
        return Err(format!("the offsets must run forward from at least 0, not from {first} to {last}"));
    }
    // arrow-rs takes the data buffer to span up to the last offset; rows read only from the first.
    let (first, last) = (first as usize, last as usize);
    if data == 0 {
        return if last == 0 { Ok(()) } else { Err("the data buffer is null".into()) };
    }
    if data.checked_add(last).is_none_or(|end| end > isize::MAX as usize) {
        return Err(format!("the data would end {last} bytes past its start, past the end of memory"));
    }
    check_extent("data", data + first, last - first)
}

/// Checks the views and data buffers of a `string_view` array of rows `0..rows`: buffer 1 the
/// views, buffers `2..n_buffers - 1` the data, and the last their sizes (as `i64`).
///
/// # Safety
///
/// `buffer(i)` is the address of buffer `i` of a live array of `n_buffers` buffers.
unsafe fn check_views(buffer: &impl Fn(usize) -> usize, n_buffers: usize, rows: usize) -> Result<(), String> {
    let views = buffer(1);
    if views == 0 {
        if rows > 0 {
            return Err("the views buffer is null".into());
        }
    } else {
        check_extent("views", views, rows * 16)?;
    }
    let count = n_buffers - 3;
    if count == 0 {
        return Ok(());
    }
    let sizes = buffer(n_buffers - 1);
    if sizes == 0 || !sizes.is_multiple_of(align_of::<i64>()) {
        return Err("the buffer of data buffer sizes is null or not aligned to 8 bytes".into());
    }
    check_extent("data buffer sizes", sizes, count * size_of::<i64>())?;
    for index in 0..count {
        // SAFETY: aligned, and the `count` sizes are mapped (checked above).
        let size = unsafe { (sizes as *const i64).add(index).read() };
        let data = buffer(2 + index);
        match usize::try_from(size) {
            Err(_) => return Err(format!("data buffer {index} has a negative size ({size})")),
            Ok(0) => {}
            Ok(_) if data == 0 => return Err(format!("data buffer {index} is null")),
            Ok(size) => check_extent(&format!("data buffer {index}"), data, size)?,
        }
    }
    Ok(())
}

/// An offset type of the interface.
trait Offset: Copy {
    fn as_i64(self) -> i64;
}

impl Offset for i32 {
    fn as_i64(self) -> i64 {
        self.into()
    }
}

impl Offset for i64 {
    fn as_i64(self) -> i64 {
        self
    }
}

/// Checks that the `len` bytes a buffer must have at `start` can be there: within `isize`, not
/// wrapping past the end of the address space, and in memory mapped into this process.
fn check_extent(what: &str, start: usize, len: usize) -> Result<(), String> {
    if len == 0 {
        return Ok(());
    }
    if len > isize::MAX as usize || start.checked_add(len).is_none() {
        return Err(format!("the {what} would take {len} bytes, past the end of memory"));
    }
    if !is_mapped(start, len) {
        return Err(format!(
            "the {what} would take {len} bytes, more than the producer's memory holds there: the array's length, \
             offset or offsets exceed its buffers"
        ));
    }
    Ok(())
}

/// Whether the `len` bytes at `start` are all in pages mapped into this process, as `mincore`
/// tells (an unmapped page makes it fail with `ENOMEM`; it reads and changes nothing). A page
/// mapped without read access still passes; where the check cannot be made, everything passes.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos", target_os = "ios", target_os = "freebsd"))]
fn is_mapped(start: usize, len: usize) -> bool {
    extern "C" {
        fn mincore(addr: *mut c_void, len: usize, vec: *mut c_char) -> std::ffi::c_int;
        fn getpagesize() -> std::ffi::c_int;
    }
    // Pages asked about per call: one residency byte each.
    const PAGES_PER_CALL: usize = 4096;
    // SAFETY: no preconditions.
    let page = usize::try_from(unsafe { getpagesize() }).unwrap_or(4096).max(1);
    let end = start + len;
    let mut at = start - start % page;
    let mut residency = [0 as c_char; PAGES_PER_CALL];
    while at < end {
        let chunk = (end - at).min(PAGES_PER_CALL * page);
        // SAFETY: `at` is page-aligned and `residency` has room for the flag of every page of
        // `chunk`; mincore only reports on the range, it reads and changes nothing there.
        if unsafe { mincore(at as *mut c_void, chunk, residency.as_mut_ptr()) } != 0 {
            // ENOMEM: a page of the range is not mapped. Any other failure: the check cannot be
            // made here.
            return std::io::Error::last_os_error().kind() != std::io::ErrorKind::OutOfMemory;
        }
        at += chunk;
    }
    true
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos", target_os = "ios", target_os = "freebsd")))]
fn is_mapped(_start: usize, _len: usize) -> bool {
    true
}
