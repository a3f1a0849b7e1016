//! The one place where failures become Python exceptions.
//!
//! The exception classes live in `agentmsg.errors` (they subclass both `AgentMsgError` and a
//! builtin such as `ValueError`, which is natural in Python); each is looked up once per
//! interpreter and cached. Core errors convert through [`CoreError`]: the class each raises is
//! said once, here. A message shows a caller's value through [`describe`], never whole.

use agentmsg_core::pairs::PairError;
use agentmsg_core::parse::{DialectError, ToolsError};
use agentmsg_core::prune::PruneError;
use agentmsg_core::tokens::UnknownEncoding;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::False;
use pyo3::PyClass;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The classes of `agentmsg.errors` the binding raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    /// `AgentMsgError` itself: a failure that is no fault of the input (threads cannot start).
    AgentMsg,
    /// `MessageError` (a `ValueError`): a value of the right type that is invalid.
    Message,
    /// `MessageTypeError` (a `TypeError`): a value of the wrong type.
    MessageType,
    /// `EncodingError` (a `ValueError`): an unknown token encoding.
    Encoding,
}

static CLASSES: [PyOnceLock<Py<PyType>>; 4] = [PyOnceLock::new(), PyOnceLock::new(), PyOnceLock::new(), PyOnceLock::new()];

impl ErrorClass {
    fn name(self) -> &'static str {
        match self {
            Self::AgentMsg => "AgentMsgError",
            Self::Message => "MessageError",
            Self::MessageType => "MessageTypeError",
            Self::Encoding => "EncodingError",
        }
    }

    /// The Python class, looked up in `agentmsg.errors` on first use.
    fn class<'py>(self, py: Python<'py>) -> PyResult<&'py Bound<'py, PyType>> {
        let cell = &CLASSES[self as usize];
        let class = cell.get_or_try_init(py, || {
            let class = py.import("agentmsg.errors")?.getattr(self.name())?;
            Ok::<_, PyErr>(class.cast_into::<PyType>().map_err(PyErr::from)?.unbind())
        })?;
        Ok(class.bind(py))
    }

    /// An exception of this class carrying `message`. If the class cannot be found (a broken
    /// install), the lookup error is returned instead, so the caller still gets an exception.
    pub(crate) fn new_err(self, py: Python<'_>, message: impl Into<String>) -> PyErr {
        match self.class(py) {
            Ok(class) => PyErr::from_type(class.clone(), message.into()),
            Err(lookup_error) => lookup_error,
        }
    }
}

/// A failure of the core and the class of `agentmsg.errors` it raises.
pub(crate) trait CoreError: std::fmt::Display {
    const CLASS: ErrorClass;
}

impl CoreError for PruneError {
    const CLASS: ErrorClass = ErrorClass::Message;
}

impl CoreError for PairError {
    const CLASS: ErrorClass = ErrorClass::Message;
}

impl CoreError for UnknownEncoding {
    const CLASS: ErrorClass = ErrorClass::Encoding;
}

impl CoreError for DialectError {
    const CLASS: ErrorClass = ErrorClass::Message;
}

impl CoreError for ToolsError {
    const CLASS: ErrorClass = ErrorClass::Message;
}

/// The Python exception for a core error, its message the error's own.
pub(crate) fn core_error<E: CoreError>(py: Python<'_>, error: E) -> PyErr {
    E::CLASS.new_err(py, error.to_string())
}

/// The Python exception for a core error about `what` (the message says what it was about).
pub(crate) fn core_error_in<E: CoreError>(py: Python<'_>, what: &str, error: E) -> PyErr {
    E::CLASS.new_err(py, format!("{what}: {error}"))
}

/// The name of a value's type, for error messages.
pub(crate) fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map(|name| name.to_string()).unwrap_or_else(|_| "?".to_owned())
}

/// `value` described for an error message by `agentmsg._checks.describe`, the package's one
/// describer: a str as a bounded excerpt (lone surrogates escaped), a huge int by its size,
/// anything else by its type. A message never quotes a caller's value whole.
pub(crate) fn describe(value: &Bound<'_, PyAny>) -> String {
    static DESCRIBE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = value.py();
    DESCRIBE
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("agentmsg._checks")?.getattr("describe")?.unbind()))
        .and_then(|describe| describe.bind(py).call1((value,))?.extract::<String>())
        .unwrap_or_else(|_| format!("a {}", type_name(value)))
}

/// The message when a parser (`StreamParser`, `StreamBatch`) is called while another call
/// holds it: PyO3's own is a bare `RuntimeError('Already borrowed')`.
fn in_use_error(py: Python<'_>, class: &str) -> PyErr {
    ErrorClass::Message.new_err(py, format!("this {class} is in use by another call: a parser is used by one thread at a time"))
}

/// `slf` borrowed for a call that changes it, or the in-use `MessageError`.
pub(crate) fn borrow_parser_mut<'py, T: PyClass<Frozen = False>>(
    slf: &Bound<'py, T>,
    class: &str,
) -> PyResult<PyRefMut<'py, T>> {
    slf.try_borrow_mut().map_err(|_| in_use_error(slf.py(), class))
}

/// `slf` borrowed for a call that reads it, or the in-use `MessageError`.
pub(crate) fn borrow_parser<'py, T: PyClass>(slf: &Bound<'py, T>, class: &str) -> PyResult<PyRef<'py, T>> {
    slf.try_borrow().map_err(|_| in_use_error(slf.py(), class))
}
