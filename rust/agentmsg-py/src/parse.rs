//! Binding of the parsing core: `parse`, `parse_many`, `StreamParser` and its event classes.
//!
//! Results are built as the package's own Python classes (`TextBlock`, `ToolUseBlock`,
//! `Parsed`, `ParseIssue`, all frozen slotted dataclasses). Their values come from the core and
//! are valid by construction, so they are built the way `dataclasses` itself builds frozen
//! instances, minus the lookups: allocation as `object.__new__` does it, then each value
//! stored in its slot at the offset the class's member descriptor gives (what
//! `object.__setattr__` ends up doing), skipping the per-field checks of `__init__` that
//! dominate the cost of small results.

use agentmsg_core::parse::{
    self as core_parse, Block, Document, Event, Folder, Issue, Json, JsonValue, Options, StartThinking, StreamMachine,
    ThinkingMode, ToolCall, ToolFormat,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use pyo3::{ffi, intern, IntoPyObjectExt};
use std::borrow::Cow;

use crate::errors::agentmsg_error;
use crate::pystr::{extract_texts, type_name};

// -- Python classes the results are made of -------------------------------------------------

/// A slotted Python class and the byte offsets of the slots of `N` of its fields.
struct Slotted<const N: usize> {
    cls: Py<PyType>,
    offsets: [ffi::Py_ssize_t; N],
}

static TEXT_BLOCK: PyOnceLock<Slotted<1>> = PyOnceLock::new();
static THINKING_BLOCK: PyOnceLock<Slotted<2>> = PyOnceLock::new();
static TOOL_USE_BLOCK: PyOnceLock<Slotted<5>> = PyOnceLock::new();
static PARSED: PyOnceLock<Slotted<6>> = PyOnceLock::new();
static PARSE_ISSUE: PyOnceLock<Slotted<4>> = PyOnceLock::new();

impl<const N: usize> Slotted<N> {
    /// `module.name`, whose `fields` must each be a writable object slot.
    fn load(py: Python<'_>, module: &str, name: &str, fields: [&str; N]) -> PyResult<Self> {
        let cls = py.import(module)?.getattr(name)?.cast_into::<PyType>().map_err(PyErr::from)?;
        let mut offsets = [0; N];
        for (offset, field) in offsets.iter_mut().zip(fields) {
            let descriptor = cls.getattr(field)?;
            // SAFETY: the type check comes first; a member descriptor's `d_member` points to
            // the static member definition of its slot (the field is declared with another
            // pointer type before 3.11 but points to the same definition).
            let member = unsafe {
                if ffi::PyObject_TypeCheck(descriptor.as_ptr(), &raw mut ffi::PyMemberDescr_Type) == 0 {
                    None
                } else {
                    let member = (*descriptor.as_ptr().cast::<ffi::PyMemberDescrObject>()).d_member;
                    Some(&*member.cast::<ffi::PyMemberDef>())
                }
            };
            match member {
                Some(m) if m.type_code == ffi::Py_T_OBJECT_EX && m.flags & ffi::Py_READONLY == 0 => *offset = m.offset,
                _ => {
                    return Err(agentmsg_error(py, "MessageTypeError", format!("{module}.{name}.{field} is not a slot")))
                }
            }
        }
        Ok(Self { cls: cls.unbind(), offsets })
    }
}

/// An instance of the slotted class in `cell` with each named field set to its value, without
/// running `__init__`.
fn build<'py, const N: usize>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Slotted<N>>,
    (module, name): (&str, &str),
    fields: [(&str, Bound<'py, PyAny>); N],
) -> PyResult<Bound<'py, PyAny>> {
    let class = cell.get_or_try_init(py, || Slotted::load(py, module, name, fields.each_ref().map(|(f, _)| *f)))?;
    // SAFETY: `cls` is a live type object; `tp_alloc` (what `object.__new__` calls for a plain
    // Python class) returns a new, zeroed instance or NULL with an exception set.
    let obj = unsafe {
        let tp = class.cls.as_ptr().cast::<ffi::PyTypeObject>();
        let alloc = (*tp).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        Bound::from_owned_ptr_or_err(py, alloc(tp, 0))?
    };
    for (offset, (_, value)) in class.offsets.iter().zip(fields) {
        // SAFETY: `offset` is a writable object slot of this class (checked in `load`); the
        // slot of a fresh instance is empty, and it takes over the reference `into_ptr` gives.
        unsafe { *obj.as_ptr().cast::<u8>().offset(*offset).cast::<*mut ffi::PyObject>() = value.into_ptr() };
    }
    Ok(obj)
}

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

// -- conversions ----------------------------------------------------------------------------

/// A Python str from core bytes: UTF-8, or the `surrogatepass` encoding of lone surrogates.
pub(crate) fn py_str<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    // SAFETY: the pointer and length describe `bytes`; the error handler name is a C string.
    unsafe {
        let ptr = ffi::PyUnicode_DecodeUTF8(
            bytes.as_ptr().cast(),
            bytes.len() as ffi::Py_ssize_t,
            c"surrogatepass".as_ptr(),
        );
        Ok(Bound::from_owned_ptr_or_err(py, ptr)?.cast_into_unchecked())
    }
}

/// The bytes the core reads for a Python str: its UTF-8 in place, or, if it holds lone
/// surrogates, its `surrogatepass` encoding.
pub(crate) fn text_bytes<'a>(text: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    match text.to_str() {
        Ok(valid) => Ok(Cow::Borrowed(valid.as_bytes())),
        Err(_) => {
            // The C API, not `text.encode(...)`: a str subclass may override `encode`.
            // SAFETY: `text` is a live str; both names are C strings; the result is owned.
            let encoded = unsafe {
                Bound::from_owned_ptr_or_err(
                    text.py(),
                    ffi::PyUnicode_AsEncodedString(text.as_ptr(), c"utf-8".as_ptr(), c"surrogatepass".as_ptr()),
                )?
            };
            let bytes = encoded.cast::<PyBytes>().map_err(PyErr::from)?;
            Ok(Cow::Owned(bytes.as_bytes().to_vec()))
        }
    }
}

pub(crate) fn as_text<'a, 'py>(py: Python<'py>, value: &'a Bound<'py, PyAny>, what: &str) -> PyResult<&'a Bound<'py, PyString>> {
    value.cast::<PyString>().map_err(|_| {
        agentmsg_error(
            py,
            "MessageTypeError",
            format!("{what} must be a str, not {}", type_name(value)),
        )
    })
}

fn json_to_py<'py>(py: Python<'py>, value: &Json) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        JsonValue::Null => py.None().into_bound(py),
        JsonValue::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        JsonValue::Int(i) => i.into_pyobject(py)?.into_any(),
        JsonValue::BigInt(big) => {
            // Exact, as Python's json.loads reads it: int() of the decimal digits.
            let digits = std::ffi::CString::new(big.to_string()).map_err(|e| agentmsg_error(py, "MessageError", e.to_string()))?;
            // SAFETY: a NUL-terminated decimal string; the result is a new reference or NULL.
            unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromString(digits.as_ptr(), std::ptr::null_mut(), 10))? }
        }
        JsonValue::Float(f) => PyFloat::new(py, *f).into_any(),
        JsonValue::Str(s) => PyString::new(py, s).into_any(),
        JsonValue::Array(items) => {
            let list = PyList::empty(py);
            for item in items.iter() {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        JsonValue::Object(pairs) => object_to_py(py, pairs)?.into_any(),
    })
}

/// A dict of an object's pairs; a repeated key ends with its last value, as in `json.loads`.
fn object_to_py<'py>(py: Python<'py>, pairs: &[(Cow<'static, str>, Json)]) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in pairs {
        dict.set_item(PyString::new(py, key), json_to_py(py, value)?)?;
    }
    Ok(dict)
}

/// The str made last for one field of a run of results, reused while the value repeats: a
/// reply of many calls repeats names, messages and often raw texts, and a str is immutable, so
/// sharing one is invisible except in memory (a str per call would be most of a bad call's cost).
struct Reused<'d, 'py> {
    last: Option<(&'d [u8], Bound<'py, PyString>)>,
}

impl<'d, 'py> Reused<'d, 'py> {
    fn new() -> Self {
        Self { last: None }
    }

    fn get(&mut self, py: Python<'py>, bytes: &'d [u8]) -> PyResult<Bound<'py, PyString>> {
        match &self.last {
            Some((last, s)) if *last == bytes => Ok(s.clone()),
            _ => {
                let s = py_str(py, bytes)?;
                self.last = Some((bytes, s.clone()));
                Ok(s)
            }
        }
    }
}

/// The reused strs of the fields of calls and issues (see [`Reused`]).
pub(crate) struct CallStrs<'d, 'py> {
    name: Reused<'d, 'py>,
    server_name: Reused<'d, 'py>,
    message: Reused<'d, 'py>,
    raw: Reused<'d, 'py>,
}

impl CallStrs<'_, '_> {
    pub(crate) fn new() -> Self {
        Self { name: Reused::new(), server_name: Reused::new(), message: Reused::new(), raw: Reused::new() }
    }
}

pub(crate) fn tool_use_block<'d, 'py>(py: Python<'py>, call: &'d ToolCall, strs: &mut CallStrs<'d, 'py>) -> PyResult<Bound<'py, PyAny>> {
    build(
        py,
        &TOOL_USE_BLOCK,
        ("agentmsg.blocks", "ToolUseBlock"),
        [
            ("id", PyString::new(py, &call.id).into_any()),
            ("name", strs.name.get(py, call.name.as_bytes())?.into_any()),
            ("input", object_to_py(py, &call.input)?.into_any()),
            ("server_name", strs.server_name.get(py, call.server_name.as_bytes())?.into_any()),
            ("metadata", object_to_py(py, &call.metadata)?.into_any()),
        ],
    )
}

pub(crate) fn parse_issue<'d, 'py>(py: Python<'py>, issue: &'d Issue, strs: &mut CallStrs<'d, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let span = PyTuple::new(py, [issue.char_span.0, issue.char_span.1])?;
    build(
        py,
        &PARSE_ISSUE,
        ("agentmsg.parsing", "ParseIssue"),
        [
            ("kind", PyString::intern(py, issue.kind.name()).into_any()),
            ("message", strs.message.get(py, issue.message.as_bytes())?.into_any()),
            ("span", span.into_any()),
            ("raw", strs.raw.get(py, &issue.raw)?.into_any()),
        ],
    )
}

fn text_block<'py>(py: Python<'py>, text: Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    build(py, &TEXT_BLOCK, ("agentmsg.blocks", "TextBlock"), [("text", text.into_any())])
}

fn thinking_block<'py>(py: Python<'py>, thinking: Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    build(
        py,
        &THINKING_BLOCK,
        ("agentmsg.blocks", "ThinkingBlock"),
        [("thinking", thinking.into_any()), ("signature", py.None().into_bound(py))],
    )
}

/// A `Parsed` from a core document.
pub(crate) fn parsed<'py>(py: Python<'py>, doc: &Document) -> PyResult<Bound<'py, PyAny>> {
    let blocks = PyList::empty(py);
    let thinking = PyList::empty(py);
    let tool_calls = PyList::empty(py);
    let text_runs = doc.blocks.iter().filter(|b| matches!(b, Block::Text(_))).count();
    // With one text run (the usual case) the visible text is that run's str, made once.
    let mut text: Option<Bound<'py, PyString>> = None;
    let mut strs = CallStrs::new();
    for block in &doc.blocks {
        match block {
            Block::Text(bytes) => {
                let s = py_str(py, bytes)?;
                if text_runs == 1 {
                    text = Some(s.clone());
                }
                blocks.append(text_block(py, s)?)?;
            }
            Block::Thinking(bytes) => {
                let s = py_str(py, bytes)?;
                thinking.append(&s)?;
                blocks.append(thinking_block(py, s)?)?;
            }
            Block::ToolCall(call) => {
                let b = tool_use_block(py, call, &mut strs)?;
                tool_calls.append(&b)?;
                blocks.append(b)?;
            }
        }
    }
    let text = match text {
        Some(text) => text,
        None if text_runs == 0 => intern!(py, "").clone(),
        None => py_str(py, &doc.text())?,
    };
    let errors = PyList::empty(py);
    for issue in &doc.issues {
        errors.append(parse_issue(py, issue, &mut strs)?)?;
    }
    build(
        py,
        &PARSED,
        ("agentmsg.parsing", "Parsed"),
        [
            ("text", text.into_any()),
            ("thinking", thinking.into_any()),
            ("tool_calls", tool_calls.into_any()),
            ("errors", errors.into_any()),
            ("blocks", blocks.into_any()),
            ("incomplete_thinking", PyBool::new(py, doc.incomplete_thinking).to_owned().into_any()),
        ],
    )
}

/// One keyword option: its default when not given, a `MessageTypeError` naming it when given
/// with the wrong type.
pub(crate) fn option<'py, T: FromPyObjectOwned<'py>>(
    py: Python<'py>,
    value: Option<&Bound<'py, PyAny>>,
    name: &str,
    expected: &str,
    default: T,
) -> PyResult<T> {
    match value {
        None => Ok(default),
        Some(value) => value.extract::<T>().map_err(|_| {
            agentmsg_error(py, "MessageTypeError", format!("{name} must be {expected}, not {}", type_name(value)))
        }),
    }
}

/// The parser options from the keyword arguments; `start_in_thinking` given as None means
/// "detect" for whole text.
fn options(
    py: Python<'_>,
    thinking: Option<&Bound<'_, PyAny>>,
    tool_format: Option<&Bound<'_, PyAny>>,
    code_fences: Option<&Bound<'_, PyAny>>,
    start_in_thinking: Option<&Bound<'_, PyAny>>,
    start_default: Option<bool>,
    max_calls: Option<&Bound<'_, PyAny>>,
) -> PyResult<Options> {
    let max_calls = match max_calls {
        Some(value) if !value.is_none() => {
            let count = value.cast::<pyo3::types::PyInt>().ok().filter(|_| !value.is_instance_of::<PyBool>());
            let count = count.ok_or_else(|| {
                agentmsg_error(py, "MessageTypeError", format!("max_calls must be an int or None, not {}", type_name(value)))
            })?;
            // The bad value is not shown: a huge int's digits are unbounded.
            Some(count.extract::<usize>().map_err(|_| {
                let sign = if count.lt(0).unwrap_or(false) { "negative" } else { "too large" };
                agentmsg_error(py, "MessageError", format!("max_calls must be from 0 to {} (this one is {sign})", usize::MAX))
            })?)
        }
        _ => None,
    };
    let thinking: String = option(py, thinking, "thinking", "a str", "auto".to_owned())?;
    let tool_format: String = option(py, tool_format, "tool_format", "a str", "auto".to_owned())?;
    let code_fences: bool = option(py, code_fences, "code_fences", "a bool", true)?;
    let start_in_thinking: Option<bool> = match start_in_thinking {
        Some(value) if value.is_none() => None,
        value => option(py, value, "start_in_thinking", "a bool or None", start_default)?,
    };
    let thinking = thinking.as_str();
    let tool_format = tool_format.as_str();
    let thinking = ThinkingMode::from_name(thinking).ok_or_else(|| {
        agentmsg_error(
            py,
            "MessageError",
            format!("unknown thinking mode '{thinking}'; valid: auto, tags, brackets, none"),
        )
    })?;
    let tool_format = ToolFormat::from_name(tool_format).ok_or_else(|| {
        agentmsg_error(
            py,
            "MessageError",
            format!("unknown tool_format '{tool_format}'; valid: auto, json, xml"),
        )
    })?;
    let start_in_thinking = match start_in_thinking {
        None => StartThinking::Detect,
        Some(true) => StartThinking::Yes,
        Some(false) => StartThinking::No,
    };
    Ok(Options { thinking, tool_format, code_fences, start_in_thinking, max_calls })
}

// -- whole text -----------------------------------------------------------------------------

/// Parses one text into a `Parsed` (see `agentmsg.parse` for the rules).
#[pyfunction(name = "parse")]
#[pyo3(signature = (text, *, thinking = None, tool_format = None, code_fences = None, start_in_thinking = None, max_calls = None))]
fn parse_text<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    thinking: Option<&Bound<'py, PyAny>>,
    tool_format: Option<&Bound<'py, PyAny>>,
    code_fences: Option<&Bound<'py, PyAny>>,
    start_in_thinking: Option<&Bound<'py, PyAny>>,
    max_calls: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = options(py, thinking, tool_format, code_fences, start_in_thinking, None, max_calls)?;
    let text = as_text(py, text, "text")?;
    let bytes = text_bytes(text)?;
    let doc = if bytes.len() > 1 << 20 {
        py.detach(|| core_parse::parse(&bytes, &options))
    } else {
        core_parse::parse(&bytes, &options)
    };
    // A text with many blocks is many new objects: collections set off while building them
    // would traverse everything again and again (superlinear in the number of blocks).
    let _paused = GcPause::new(py);
    parsed(py, &doc)
}

/// Parses many texts in parallel with the GIL released; a list of `Parsed` in input order.
#[pyfunction]
#[pyo3(signature = (texts, *, thinking = None, tool_format = None, code_fences = None, start_in_thinking = None, max_calls = None))]
fn parse_many<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    thinking: Option<&Bound<'py, PyAny>>,
    tool_format: Option<&Bound<'py, PyAny>>,
    code_fences: Option<&Bound<'py, PyAny>>,
    start_in_thinking: Option<&Bound<'py, PyAny>>,
    max_calls: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let options = options(py, thinking, tool_format, code_fences, start_in_thinking, None, max_calls)?;
    let strings = extract_texts(py, texts, "texts")?;
    let bytes = strings.iter().map(|s| text_bytes(s)).collect::<PyResult<Vec<_>>>()?;
    let docs = crate::pool::run_detached(py, || core_parse::parse_many(&bytes, &options))?;
    parsed_list(py, &docs)
}

/// The `Parsed` of each document, built with the cyclic GC paused (a batch makes many objects).
pub(crate) fn parsed_list<'py>(py: Python<'py>, docs: &[Document]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    let _paused = GcPause::new(py);
    for doc in docs {
        out.append(parsed(py, doc)?)?;
    }
    Ok(out)
}

// -- streaming ------------------------------------------------------------------------------

/// Visible text as it arrives. Joined, the ``text`` of all ``TextDelta`` events equals
/// ``parse(whole).text`` (a new text run after an element starts with ``"\n"``).
///
/// >>> TextDelta("Hi").text
/// 'Hi'
#[pyclass(frozen, get_all, module = "agentmsg")]
pub struct TextDelta {
    pub(crate) text: Py<PyString>,
}

/// Thinking text as it arrives; ``index`` numbers the thinking blocks from 0.
///
/// >>> ThinkingDelta(0, "hmm")
/// ThinkingDelta(index=0, text='hmm')
#[pyclass(frozen, get_all, module = "agentmsg")]
pub struct ThinkingDelta {
    pub(crate) index: usize,
    pub(crate) text: Py<PyString>,
}

/// A thinking block ended; ``complete`` is False when the text ended before its closing tag.
///
/// >>> ThinkingEnd(0, True).complete
/// True
#[pyclass(frozen, get_all, module = "agentmsg")]
pub struct ThinkingEnd {
    pub(crate) index: usize,
    pub(crate) complete: bool,
}

/// A ``<tool>`` tag opened call number ``index`` (bad calls are numbered too).
///
/// >>> ToolCallStart(0)
/// ToolCallStart(index=0)
#[pyclass(frozen, get_all, module = "agentmsg")]
pub struct ToolCallStart {
    index: usize,
}

/// Raw payload text of call ``index`` as it arrives (tags excluded).
///
/// >>> ToolCallDelta(0, '{"tool_name"').fragment
/// '{"tool_name"'
#[pyclass(frozen, get_all, module = "agentmsg")]
pub struct ToolCallDelta {
    pub(crate) index: usize,
    pub(crate) fragment: Py<PyString>,
}

/// Call ``index`` ended: ``call`` is its ``ToolUseBlock``, or ``error`` its ``ParseIssue``.
///
/// >>> ToolCallEnd(0, None, None).call is None
/// True
#[pyclass(frozen, get_all, module = "agentmsg")]
pub struct ToolCallEnd {
    pub(crate) index: usize,
    pub(crate) call: Py<PyAny>,
    pub(crate) error: Py<PyAny>,
}

/// What an event field accepts: read from a constructor argument, or `None` for a value the
/// field cannot hold (the constructor then raises a typed error naming the field).
pub(crate) trait EventField: Sized {
    /// What the field wants, for the error message.
    const WANTS: &'static str;
    /// An int is the right type (so a refused int is out of range).
    const IS_INT: bool = false;
    fn read(value: &Bound<'_, PyAny>) -> Option<Self>;
}

impl EventField for usize {
    const WANTS: &'static str = "a non-negative int below 2**64";
    const IS_INT: bool = true;
    fn read(value: &Bound<'_, PyAny>) -> Option<Self> {
        if value.is_instance_of::<PyBool>() {
            return None;
        }
        value.extract().ok()
    }
}

impl EventField for bool {
    const WANTS: &'static str = "a bool";
    fn read(value: &Bound<'_, PyAny>) -> Option<Self> {
        value.cast::<PyBool>().ok().map(|flag| flag.is_true())
    }
}

impl EventField for Py<PyString> {
    const WANTS: &'static str = "a str";
    fn read(value: &Bound<'_, PyAny>) -> Option<Self> {
        value.cast::<PyString>().ok().map(|text| text.clone().unbind())
    }
}

impl EventField for Py<PyAny> {
    const WANTS: &'static str = "any object";
    fn read(value: &Bound<'_, PyAny>) -> Option<Self> {
        Some(value.clone().unbind())
    }
}

/// Reads constructor argument `field` of event class `class`: a wrong type is a
/// `MessageTypeError`, an int out of range a `MessageError`; neither shows the value.
pub(crate) fn event_field<T: EventField>(class: &str, field: &str, value: &Bound<'_, PyAny>) -> PyResult<T> {
    T::read(value).ok_or_else(|| {
        let (kind, what) = if T::IS_INT && value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
            ("MessageError", "out of range".to_owned())
        } else {
            ("MessageTypeError", format!("a {}", type_name(value)))
        };
        agentmsg_error(value.py(), kind, format!("{class}.{field} must be {}, not {what}", T::WANTS))
    })
}

/// Implements `__new__` (typed errors for bad arguments), `__repr__`, `__eq__`, `__reduce__`
/// and `__match_args__` for an event class from its field list.
macro_rules! event_methods {
    ($cls:ident, $($field:ident: $ty:ty),+) => {
        #[pymethods]
        impl $cls {
            #[new]
            fn new($($field: &Bound<'_, PyAny>),+) -> PyResult<Self> {
                Ok(Self { $($field: $crate::parse::event_field::<$ty>(stringify!($cls), stringify!($field), $field)?),+ })
            }

            #[classattr]
            fn __match_args__() -> Vec<&'static str> {
                vec![$(stringify!($field)),+]
            }

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                let parts: Vec<String> = vec![$(
                    format!("{}={}", stringify!($field), (&self.$field).into_bound_py_any(py)?.repr()?)
                ),+];
                Ok(format!("{}({})", stringify!($cls), parts.join(", ")))
            }

            /// Pickles as a call of the class with the fields (Ray and `datasets` ship events).
            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
                let py = slf.py();
                let this = slf.get();
                let fields = PyTuple::new(py, [$((&this.$field).into_bound_py_any(py)?),+])?;
                Ok((slf.get_type().into_any(), fields))
            }

            fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
                let Ok(other) = other.cast::<$cls>() else { return Ok(false) };
                let other = other.get();
                $(
                    if !(&self.$field).into_bound_py_any(py)?.eq((&other.$field).into_bound_py_any(py)?)? {
                        return Ok(false);
                    }
                )+
                Ok(true)
            }
        }
    };
}

event_methods!(TextDelta, text: Py<PyString>);
event_methods!(ThinkingDelta, index: usize, text: Py<PyString>);
event_methods!(ThinkingEnd, index: usize, complete: bool);
event_methods!(ToolCallStart, index: usize);
event_methods!(ToolCallDelta, index: usize, fragment: Py<PyString>);
event_methods!(ToolCallEnd, index: usize, call: Py<PyAny>, error: Py<PyAny>);
pub(crate) use event_methods;

/// Incremental parser of streamed model text; same rules and options as ``parse``, except
/// ``start_in_thinking`` is explicit (default False: a stream cannot look ahead).
///
/// ``feed(chunk)`` returns the events the chunk completes; ``finish()`` flushes what was held
/// back (a possible partial tag, an undecided bracket line) and reports an unclosed call or
/// thinking block. After ``finish()`` the parser is ready for a new stream.
///
/// >>> p = StreamParser()
/// >>> p.feed("Hi <thi") + p.feed("nk>hmm</think>")
/// [TextDelta(text='Hi'), ThinkingDelta(index=0, text='hmm'), ThinkingEnd(index=0, complete=True)]
/// >>> p.finish()
/// []
// `subclass`: `agentmsg.StreamParser` is a Python subclass that picks the dialect's parser.
#[pyclass(subclass, module = "agentmsg._core")]
pub struct StreamParser {
    machine: StreamMachine,
    /// The result of the stream so far, for `result()`.
    folder: Folder<'static>,
    /// The last stream finished: the next `feed` starts a new one.
    finished: bool,
    /// The text run the last text delta belonged to.
    text_block: Option<usize>,
    /// Event buffer reused across `feed` calls.
    buffer: Vec<Event>,
}

#[pymethods]
impl StreamParser {
    #[new]
    #[pyo3(signature = (*, thinking = None, tool_format = None, code_fences = None, start_in_thinking = None, max_calls = None))]
    fn new(
        py: Python<'_>,
        thinking: Option<&Bound<'_, PyAny>>,
        tool_format: Option<&Bound<'_, PyAny>>,
        code_fences: Option<&Bound<'_, PyAny>>,
        start_in_thinking: Option<&Bound<'_, PyAny>>,
        max_calls: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        // A stream cannot look ahead to detect a leading thought: None means "no".
        let start = match start_in_thinking {
            Some(value) if value.is_none() => None,
            value => value,
        };
        let options = options(py, thinking, tool_format, code_fences, start, Some(false), max_calls)?;
        Ok(Self {
            machine: StreamMachine::new(options),
            folder: Folder::for_stream(),
            finished: false,
            text_block: None,
            buffer: Vec::new(),
        })
    }

    /// Reads the next chunk; returns the events it completes.
    /// ``None`` is an empty chunk (an SDK delta without content).
    fn feed<'py>(&mut self, py: Python<'py>, chunk: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        if chunk.is_none() {
            return Ok(PyList::empty(py));
        }
        let chunk = as_text(py, chunk, "chunk")?;
        let bytes = text_bytes(chunk)?;
        if std::mem::take(&mut self.finished) {
            self.folder = Folder::for_stream();
        }
        let mut events = std::mem::take(&mut self.buffer);
        self.machine.feed_into(&bytes, &mut events);
        let list = self.events(py, &mut events, Some((chunk, &bytes)));
        self.buffer = events;
        list
    }

    /// A stream in progress is not pickled: it belongs to one connection, and a worker that
    /// receives text starts its own parser with the same options.
    fn __reduce__(&self, py: Python<'_>) -> PyResult<()> {
        Err(agentmsg_error(
            py,
            "MessageTypeError",
            "a StreamParser cannot be pickled: it holds a stream in progress; create a StreamParser \
             with the same options in the process that reads the stream",
        ))
    }

    /// Ends the stream; returns the last events.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut events = self.machine.finish();
        let list = self.events(py, &mut events, None);
        self.text_block = None;
        self.finished = true;
        list
    }

    /// The ``Parsed`` of the stream so far (after ``finish()``: of the whole stream, equal to
    /// ``parse`` of the text fed with the same options).
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        parsed(py, self.folder.document())
    }
}

/// Adds an event to a stream's result (argument fragments are not needed there: the call
/// arrives whole with its end).
pub(crate) fn fold_event(folder: &mut Folder<'static>, event: &Event) {
    if !matches!(event, Event::ToolDelta { .. } | Event::ToolStart { .. }) {
        folder.push(event.clone());
    }
}

/// The Python event for a stream event, or `None` for one a stream does not show (spans, and a
/// bare tool start where the caller announces calls its own way: `tool_start` false).
/// `text_block` is the text run the last text delta belonged to: a new run starts with `"\n"`.
/// `text` makes the str of a piece (the fed chunk itself when the piece is all of it).
pub(crate) fn event_object<'py>(
    py: Python<'py>,
    event: Event,
    text_block: &mut Option<usize>,
    text: &impl Fn(&[u8]) -> PyResult<Py<PyString>>,
    tool_start: bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let obj = match event {
        Event::Text { block, text: bytes } => {
            let s = if block > 0 && *text_block != Some(block) {
                let mut joined = Vec::with_capacity(bytes.len() + 1);
                joined.push(b'\n');
                joined.extend_from_slice(&bytes);
                py_str(py, &joined)?.unbind()
            } else {
                text(&bytes)?
            };
            *text_block = Some(block);
            Bound::new(py, TextDelta { text: s })?.into_any()
        }
        Event::Thinking { index, text: bytes } => Bound::new(py, ThinkingDelta { index, text: text(&bytes)? })?.into_any(),
        Event::ThinkingEnd { index, complete } => Bound::new(py, ThinkingEnd { index, complete })?.into_any(),
        Event::ToolStart { index } if tool_start => Bound::new(py, ToolCallStart { index })?.into_any(),
        Event::ToolDelta { index, fragment } => {
            Bound::new(py, ToolCallDelta { index, fragment: text(&fragment)? })?.into_any()
        }
        Event::ToolEnd { index, result } => {
            let (call, error) = match result {
                Ok(call) => (tool_use_block(py, &call, &mut CallStrs::new())?.unbind(), py.None()),
                Err(issue) => (py.None(), parse_issue(py, &issue, &mut CallStrs::new())?.unbind()),
            };
            Bound::new(py, ToolCallEnd { index, call, error })?.into_any()
        }
        Event::ToolStart { .. } | Event::TextSpan { .. } | Event::ThinkingSpan { .. } => return Ok(None),
    };
    Ok(Some(obj))
}

impl StreamParser {
    /// The Python events for `events`, which is left empty (its allocation is reused). A piece
    /// of text equal to the whole `chunk` fed (the usual case for small chunks) is that same
    /// str, not a copy.
    fn events<'py>(
        &mut self,
        py: Python<'py>,
        events: &mut Vec<Event>,
        chunk: Option<(&Bound<'py, PyString>, &[u8])>,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = |bytes: &[u8]| -> PyResult<Py<PyString>> {
            match chunk {
                Some((chunk, chunk_bytes)) if chunk_bytes == bytes => Ok(chunk.clone().unbind()),
                _ => Ok(py_str(py, bytes)?.unbind()),
            }
        };
        // Only a whole-text machine reports spans; a stream never does.
        let count = events.iter().filter(|e| !matches!(e, Event::TextSpan { .. } | Event::ThinkingSpan { .. })).count();
        // SAFETY: a new list of `count` empty slots (or NULL with an exception set); every slot is
        // set below before the list is handed out, and an error drops the list, which frees the
        // items set so far and skips the empty slots.
        let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(count as ffi::Py_ssize_t))? };
        let mut at = 0;
        for event in events.drain(..) {
            fold_event(&mut self.folder, &event);
            let Some(obj) = event_object(py, event, &mut self.text_block, &text, true)? else { continue };
            // SAFETY: `at < count` (the non-span events were counted above); SET_ITEM steals
            // the reference `into_ptr` hands over.
            unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), at as ffi::Py_ssize_t, obj.into_ptr()) };
            at += 1;
        }
        // SAFETY: PyList_New made a list.
        Ok(unsafe { list.cast_into_unchecked() })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse_many, m)?)?;
    m.add_class::<StreamParser>()?;
    m.add_class::<TextDelta>()?;
    m.add_class::<ThinkingDelta>()?;
    m.add_class::<ThinkingEnd>()?;
    m.add_class::<ToolCallStart>()?;
    m.add_class::<ToolCallDelta>()?;
    m.add_class::<ToolCallEnd>()?;
    Ok(())
}
