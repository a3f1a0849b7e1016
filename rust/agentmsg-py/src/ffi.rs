//! Every `unsafe` block of the binding (but the Arrow import in `arrow/c_data.rs`), each with the
//! argument for why it is sound. The rest of the binding calls these safe functions.

use pyo3::prelude::*;
use pyo3::types::string::PyStringData;
use pyo3::exceptions::PySystemError;
use pyo3::types::{PyBytes, PyList, PyString, PyType};
use pyo3::ffi;

// -- slotted classes ------------------------------------------------------------------------

/// A Python class and the byte offsets of `N` of its writable object slots (what a `__slots__`
/// entry, or a field of a dataclass with `slots=True`, has). The only way to make one is
/// [`SlottedClass::new`], which checks every slot, so [`SlottedClass::instance`] may fill them.
pub(crate) struct SlottedClass<const N: usize> {
    cls: Py<PyType>,
    offsets: [ffi::Py_ssize_t; N],
}

impl<const N: usize> SlottedClass<N> {
    /// `cls` with the slots named `fields`, or `Err(field)` for the first that is not a writable
    /// object slot of its instances.
    pub(crate) fn new(cls: &Bound<'_, PyType>, fields: [&'static str; N]) -> PyResult<Result<Self, &'static str>> {
        let mut offsets = [0; N];
        for (offset, field) in offsets.iter_mut().zip(fields) {
            match slot_offset(cls, &cls.getattr(field)?) {
                Some(found) => *offset = found,
                None => return Ok(Err(field)),
            }
        }
        Ok(Ok(Self { cls: cls.clone().unbind(), offsets }))
    }

    /// A new instance with `values` in the slots, in the order of the fields, without running
    /// `__init__` (what `object.__new__` then `object.__setattr__` on each slot do, minus the
    /// lookups).
    pub(crate) fn instance<'py>(&self, py: Python<'py>, values: [Bound<'py, PyAny>; N]) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: `cls` is a live type object; `tp_alloc` (what `object.__new__` calls) returns
        // a new instance with every slot NULL, or NULL with an exception set.
        let obj = unsafe {
            let tp = self.cls.as_ptr().cast::<ffi::PyTypeObject>();
            let alloc = (*tp).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
            Bound::from_owned_ptr_or_err(py, alloc(tp, 0))?
        };
        for (offset, value) in self.offsets.iter().zip(values) {
            // SAFETY: `offset` is a writable object slot of instances of `cls` (checked in
            // `new`), so it lies inside the instance; the slot of a fresh instance is NULL
            // (nothing to release), and it takes over the reference `into_ptr` gives.
            unsafe { *obj.as_ptr().cast::<u8>().offset(*offset).cast::<*mut ffi::PyObject>() = value.into_ptr() };
        }
        Ok(obj)
    }

    /// Which of `values` slot `field` of `obj` holds (by identity), read without taking a
    /// reference; None when `obj`'s type is not exactly this class, the slot is empty or it holds
    /// none of them (the caller then asks Python).
    pub(crate) fn slot_among(&self, obj: &Bound<'_, PyAny>, field: usize, values: &[Py<PyAny>]) -> Option<usize> {
        if !self.is_exact(obj) {
            return None;
        }
        // SAFETY: `obj` is an instance of exactly `cls`, so the slot's offset (checked in `new`)
        // lies inside it; the slot holds a pointer or NULL, only compared here, never
        // dereferenced or released.
        let held = unsafe { *obj.as_ptr().cast::<u8>().offset(self.offsets[field]).cast::<*mut ffi::PyObject>() };
        values.iter().position(|value| value.as_ptr() == held)
    }

    /// Whether `obj`'s type is exactly this class (so its slots may be read).
    pub(crate) fn is_exact(&self, obj: &Bound<'_, PyAny>) -> bool {
        obj.get_type().is(self.cls.bind(obj.py()))
    }

    /// The value in slot `field` of `obj`, read without the attribute lookup; None when `obj`'s
    /// type is not exactly this class or the slot is empty (the caller then asks Python).
    pub(crate) fn slot<'py>(&self, obj: &Bound<'py, PyAny>, field: usize) -> Option<Bound<'py, PyAny>> {
        if !self.is_exact(obj) {
            return None;
        }
        // SAFETY: as in `slot_among`; a non-NULL slot holds a live object that `obj` owns a
        // reference to, and `from_borrowed_ptr_or_opt` takes a new one for the caller.
        unsafe {
            let held = *obj.as_ptr().cast::<u8>().offset(self.offsets[field]).cast::<*mut ffi::PyObject>();
            Bound::from_borrowed_ptr_or_opt(obj.py(), held)
        }
    }
}

/// The offset of the slot `descriptor` describes, if it is a member descriptor of a writable
/// object slot defined by `cls` or one of its bases (so the offset lies in `cls`'s instances).
fn slot_offset(cls: &Bound<'_, PyType>, descriptor: &Bound<'_, PyAny>) -> Option<ffi::Py_ssize_t> {
    // SAFETY: the type check comes first; a member descriptor holds its defining class
    // (`d_common.d_type`, a live type while the descriptor lives) and `d_member`, which points
    // to the static member definition of its slot (declared with another pointer type before
    // 3.11, but pointing to the same definition), alive as long as that class.
    let (owner, member) = unsafe {
        if ffi::PyObject_TypeCheck(descriptor.as_ptr(), &raw mut ffi::PyMemberDescr_Type) == 0 {
            return None;
        }
        let descr = &*descriptor.as_ptr().cast::<ffi::PyMemberDescrObject>();
        (descr.d_common.d_type, &*descr.d_member.cast::<ffi::PyMemberDef>())
    };
    // SAFETY: both are live type objects.
    let inherited = unsafe { ffi::PyType_IsSubtype(cls.as_ptr().cast(), owner) } != 0;
    let writable_object = member.type_code == ffi::Py_T_OBJECT_EX && member.flags & ffi::Py_READONLY == 0;
    (inherited && writable_object).then_some(member.offset)
}

// -- lists ------------------------------------------------------------------------------------

/// A list of the `len` items `items` yields, built in place (what `PyList::new` does, minus its
/// iterator adapters: a stream builds one small list per chunk). An item that fails is the
/// error; `items` yielding another number of items than `len` is a `SystemError` (a bug).
pub(crate) fn list_of_len<'py>(
    py: Python<'py>,
    len: usize,
    items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: a new list of `len` NULL slots, or NULL with an exception set. Until every slot is
    // set it is never handed out; dropped early, it releases the items set so far and skips the
    // NULL slots (`list_dealloc` uses `Py_XDECREF`), as the collector's traversal does.
    let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len as ffi::Py_ssize_t))? };
    let mut at = 0;
    for item in items {
        let item = item?;
        if at == len {
            return Err(PySystemError::new_err("a list got more items than counted"));
        }
        // SAFETY: `at < len`, and slot `at` is still NULL; SET_ITEM takes over the reference
        // `into_ptr` gives.
        unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), at as ffi::Py_ssize_t, item.into_ptr()) };
        at += 1;
    }
    if at < len {
        return Err(PySystemError::new_err("a list got fewer items than counted"));
    }
    // SAFETY: PyList_New made a list.
    Ok(unsafe { list.cast_into_unchecked() })
}

// -- the cyclic garbage collector -----------------------------------------------------------

/// Pauses Python's cyclic garbage collector while a batch of results is built: they are trees
/// of new objects, so no collection can find garbage among them, yet thousands of them set off
/// collections that traverse everything (a seventh of `parse_many`'s time). Whatever the
/// collector would have done it does at its next turn after the pause.
pub(crate) struct GcPause<'py> {
    /// Ties the pause to an attached thread: the collector's flag is only touched under the GIL.
    _attached: Python<'py>,
    was_enabled: bool,
}

impl<'py> GcPause<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        // SAFETY: attached to the interpreter (`py`); the call only flips the collector's flag.
        let was_enabled = unsafe { ffi::PyGC_Disable() } != 0;
        Self { _attached: py, was_enabled }
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if self.was_enabled {
            // SAFETY: as in `new`; the collector is on again only if it was on before.
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

// -- str and int ----------------------------------------------------------------------------

/// A Python str from UTF-8, or from the `surrogatepass` encoding of lone surrogates (what the
/// core reads from a str that holds them).
pub(crate) fn decode_surrogatepass<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    // SAFETY: the pointer and length describe `bytes`; the error handler name is a C string; the
    // result is a new reference to a str, or NULL with an exception set.
    unsafe {
        let ptr = ffi::PyUnicode_DecodeUTF8(bytes.as_ptr().cast(), bytes.len() as ffi::Py_ssize_t, c"surrogatepass".as_ptr());
        Ok(Bound::from_owned_ptr_or_err(py, ptr)?.cast_into_unchecked())
    }
}

/// The `surrogatepass` UTF-8 encoding of a str, through the C API rather than `text.encode(...)`
/// (a str subclass may override `encode`).
pub(crate) fn encode_surrogatepass<'py>(text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyBytes>> {
    // SAFETY: `text` is a live str; both names are C strings; the result is a new reference to
    // a bytes object (what the "utf-8" codec returns), or NULL with an exception set.
    unsafe {
        let ptr = ffi::PyUnicode_AsEncodedString(text.as_ptr(), c"utf-8".as_ptr(), c"surrogatepass".as_ptr());
        Ok(Bound::from_owned_ptr_or_err(text.py(), ptr)?.cast_into_unchecked())
    }
}

/// A str's characters as CPython stores them (Latin-1, UCS-2 or UCS-4), borrowed for as long as
/// the caller holds the str, and readable without the GIL.
pub(crate) fn str_storage<'a>(text: &'a Bound<'_, PyString>) -> PyResult<PyStringData<'a>> {
    // SAFETY: a str is immutable and `text` keeps it alive for 'a; PyO3 tests this reading of a
    // str's storage on x86_64 and aarch64 (the only layouts it is built for here).
    unsafe { text.data() }
}

/// The int whose decimal digits are `digits`, exactly (as `int(digits)` reads them).
pub(crate) fn int_from_decimal<'py>(py: Python<'py>, digits: &std::ffi::CStr) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: a NUL-terminated string; the end pointer may be NULL; the result is a new
    // reference or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromString(digits.as_ptr(), std::ptr::null_mut(), 10)) }
}

// -- the allocator --------------------------------------------------------------------------

/// Returns the allocator's free pages to the system (after a load that freed tens of megabytes
/// of temporary buffers, which mimalloc would otherwise keep resident).
pub(crate) fn release_free_pages() {
    // SAFETY: mimalloc is this library's global allocator (`lib.rs`); a forced collection only
    // gives free pages back and touches no live allocation.
    unsafe { libmimalloc_sys::mi_collect(true) };
}
