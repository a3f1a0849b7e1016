//! The one place where core failures become Python exceptions.
//!
//! The exception classes live in `agentmsg.errors` (they subclass both `AgentMsgError` and a
//! builtin such as `ValueError`, which is natural in Python), so the binding looks them up there.

use pyo3::prelude::*;
use pyo3::types::PyType;

/// Builds an instance of `agentmsg.errors.<class_name>` carrying `message`.
///
/// If the class cannot be found (a broken install), the lookup error is returned instead, so
/// the caller still gets an exception and never a panic.
pub fn agentmsg_error(py: Python<'_>, class_name: &str, message: impl Into<String>) -> PyErr {
    let message = message.into();
    let class = py
        .import("agentmsg.errors")
        .and_then(|module| module.getattr(class_name))
        .and_then(|class| class.cast_into::<PyType>().map_err(PyErr::from));
    match class {
        Ok(class) => PyErr::from_type(class, message),
        Err(lookup_error) => lookup_error,
    }
}
