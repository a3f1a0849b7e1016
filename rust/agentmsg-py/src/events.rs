//! The event classes of the stream parsers (`TextDelta`, `ThinkingDelta`, `ThinkingEnd`,
//! `ToolCallStart` (also named `ToolCallHeader`), `ToolCallDelta`, `ToolCallEnd`) and the Python event of a
//! core stream event.

use agentmsg_core::parse::Event;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::errors::ErrorClass;
use crate::pystr::{py_str, type_name};
use crate::results::{parse_issue, tool_use_block, CallStrs};

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
            (ErrorClass::Message, "out of range".to_owned())
        } else {
            (ErrorClass::MessageType, format!("a {}", type_name(value)))
        };
        kind.new_err(value.py(), format!("{class}.{field} must be {}, not {what}", T::WANTS))
    })
}

/// An event class: a frozen class with read-only fields, and its `__new__` (typed errors for bad
/// arguments), `__repr__`, `__eq__`, `__reduce__` and `__match_args__`, from its field list.
/// Fields after a `;` are optional: they default to `None`, and `__repr__` leaves out those that
/// are `None`.
macro_rules! event_class {
    ($(#[$doc:meta])* $cls:ident { $($field:ident: $ty:ty),+ $(; $($opt:ident: $oty:ty),+)? $(,)? }) => {
        $(#[$doc])*
        #[pyclass(frozen, get_all, module = "agentmsg")]
        pub struct $cls {
            $(pub(crate) $field: $ty,)+
            $($(pub(crate) $opt: Option<$oty>,)+)?
        }

        #[pymethods]
        impl $cls {
            #[new]
            #[pyo3(signature = ($($field),+ $($(, $opt = None)+)?))]
            fn new($($field: &Bound<'_, PyAny>,)+ $($($opt: Option<&Bound<'_, PyAny>>,)+)?) -> PyResult<Self> {
                Ok(Self {
                    $($field: $crate::events::event_field::<$ty>(stringify!($cls), stringify!($field), $field)?,)+
                    $($($opt: match $opt {
                        Some(value) if !value.is_none() => {
                            Some($crate::events::event_field::<$oty>(stringify!($cls), stringify!($opt), value)?)
                        }
                        _ => None,
                    },)+)?
                })
            }

            #[classattr]
            fn __match_args__(py: Python<'_>) -> PyResult<Py<pyo3::types::PyTuple>> {
                // A tuple: `match` refuses any other sequence.
                let names = [$(stringify!($field),)+ $($(stringify!($opt),)+)?];
                Ok(pyo3::types::PyTuple::new(py, names)?.unbind())
            }

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                #[allow(unused_mut)]
                let mut parts: Vec<String> = vec![$(
                    format!("{}={}", stringify!($field), (&self.$field).into_bound_py_any(py)?.repr()?)
                ),+];
                $($(
                    if let Some(value) = &self.$opt {
                        parts.push(format!("{}={}", stringify!($opt), value.into_bound_py_any(py)?.repr()?));
                    }
                )+)?
                Ok(format!("{}({})", stringify!($cls), parts.join(", ")))
            }

            /// Pickles as a call of the class with the fields (Ray and `datasets` ship events).
            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
                let py = slf.py();
                let this = slf.get();
                let fields = PyTuple::new(
                    py,
                    [$((&this.$field).into_bound_py_any(py)?,)+ $($((&this.$opt).into_bound_py_any(py)?,)+)?],
                )?;
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
                $($(
                    if !(&self.$opt).into_bound_py_any(py)?.eq((&other.$opt).into_bound_py_any(py)?)? {
                        return Ok(false);
                    }
                )+)?
                Ok(true)
            }
        }
    };
}

event_class! {
    /// Visible text as it arrives. Joined, the ``text`` of all ``TextDelta`` events equals
    /// ``parse(whole).text`` (a new text run after an element starts with ``"\n"``).
    ///
    /// >>> TextDelta("Hi").text
    /// 'Hi'
    TextDelta { text: Py<PyString> }
}

event_class! {
    /// Thinking text as it arrives; ``index`` numbers the thinking blocks from 0.
    ///
    /// >>> ThinkingDelta(0, "hmm")
    /// ThinkingDelta(index=0, text='hmm')
    ThinkingDelta { index: usize, text: Py<PyString> }
}

event_class! {
    /// A thinking block ended; ``complete`` is False when the text ended before its closing tag.
    ///
    /// >>> ThinkingEnd(0, True).complete
    /// True
    ThinkingEnd { index: usize, complete: bool }
}

event_class! {
    /// Call number ``index`` started (bad calls are numbered too). Forge's stream sends it when a
    /// ``<tool>`` tag opens, before the name is known (``id`` and ``name`` None); a dialect's
    /// stream sends it as soon as the call's name is complete, with the call's ``id`` and
    /// ``name``. ``ToolCallHeader`` is a deprecated alias of this class.
    ///
    /// >>> ToolCallStart(0)
    /// ToolCallStart(index=0)
    /// >>> ToolCallStart(0, "call_1", "get_weather").name
    /// 'get_weather'
    ToolCallStart { index: usize; id: Py<PyString>, name: Py<PyString> }
}

event_class! {
    /// Raw payload text of call ``index`` as it arrives (tags excluded).
    ///
    /// >>> ToolCallDelta(0, '{"tool_name"').fragment
    /// '{"tool_name"'
    ToolCallDelta { index: usize, fragment: Py<PyString> }
}

event_class! {
    /// Call ``index`` ended: ``call`` is its ``ToolUseBlock``, or ``error`` its ``ParseIssue``.
    ///
    /// >>> ToolCallEnd(0, None, None).call is None
    /// True
    ToolCallEnd { index: usize, call: Py<PyAny>, error: Py<PyAny> }
}

impl ToolCallStart {
    /// The start event of a dialect's call (a dialect announces a call with its id and name).
    pub(crate) fn named<'py>(py: Python<'py>, index: usize, id: &str, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let start = Self { index, id: Some(PyString::new(py, id).unbind()), name: Some(PyString::new(py, name).unbind()) };
        Ok(Bound::new(py, start)?.into_any())
    }
}

/// Whether a stream shows `event` (`event_object` makes a Python event of it): not spans, and
/// not a bare tool start where the caller announces calls its own way (`tool_start` false).
pub(crate) fn is_shown(event: &Event, tool_start: bool) -> bool {
    match event {
        Event::TextSpan { .. } | Event::ThinkingSpan { .. } => false,
        Event::ToolStart { .. } => tool_start,
        _ => true,
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
    if !is_shown(&event, tool_start) {
        return Ok(None);
    }
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
        Event::ToolStart { index } => Bound::new(py, ToolCallStart { index, id: None, name: None })?.into_any(),
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
        Event::TextSpan { .. } | Event::ThinkingSpan { .. } => return Ok(None),
    };
    Ok(Some(obj))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TextDelta>()?;
    m.add_class::<ThinkingDelta>()?;
    m.add_class::<ThinkingEnd>()?;
    m.add_class::<ToolCallStart>()?;
    // The deprecated name of a dialect's start event, from before `ToolCallStart` carried one.
    m.add("ToolCallHeader", m.getattr("ToolCallStart")?)?;
    m.add_class::<ToolCallDelta>()?;
    m.add_class::<ToolCallEnd>()?;
    Ok(())
}
