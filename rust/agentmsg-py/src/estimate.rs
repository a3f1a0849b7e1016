//! Binding of Forge's token estimate.

use agentmsg_core::estimate;
use agentmsg_core::Role;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::columns::Messages;
use crate::errors::{ErrorClass, describe, type_name};
use crate::strings::{as_text, estimate_text};

/// The role a role argument names: a `MessageTypeError` for a value that is not a str, a
/// `MessageError` describing it briefly for a str that names no role.
pub(crate) fn role_named(value: &Bound<'_, PyAny>) -> PyResult<Role> {
    let py = value.py();
    let Ok(name) = value.cast::<PyString>() else {
        return Err(ErrorClass::MessageType.new_err(py, format!("role must be a str, not {}", type_name(value))));
    };
    name.to_str().ok().and_then(Role::from_name).ok_or_else(|| {
        let message = format!("unknown role {}; valid roles: system, user, assistant, tool", describe(value));
        ErrorClass::Message.new_err(py, message)
    })
}

/// The estimate of one Python string, read in place (a lone surrogate counts the 3 bytes of its
/// `surrogatepass` encoding).
fn estimate_str(text: &Bound<'_, PyString>, role: Role) -> PyResult<usize> {
    Ok(estimate_text(text)? + estimate::role_overhead(role))
}

/// Estimates the tokens of `text` written by `role` (Forge's heuristic).
#[pyfunction]
#[pyo3(signature = (text, role = None))]
fn estimate_tokens(text: &Bound<'_, PyAny>, role: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    let role = role.map_or(Ok(Role::User), role_named)?;
    estimate_str(as_text(text, "text")?, role)
}

/// Estimates many messages at once: `texts[i]` written by the role with code `roles[i]`
/// (0 system, 1 user, 2 assistant, 3 tool).
#[pyfunction]
fn estimate_tokens_many(
    py: Python<'_>,
    texts: Vec<Bound<'_, PyString>>,
    roles: Vec<u8>,
) -> PyResult<Vec<usize>> {
    if texts.len() != roles.len() {
        return Err(ErrorClass::Message.new_err(py, format!("{} texts but {} roles", texts.len(), roles.len())));
    }
    texts
        .iter()
        .zip(roles)
        .enumerate()
        .map(|(index, (text, code))| {
            let role = Role::from_code(code).ok_or_else(|| {
                ErrorClass::Message.new_err(py, format!("unknown role code {code} at index {index}"))
            })?;
            estimate_str(text, role)
        })
        .collect()
}

/// Forge's estimate of each message of a list of `agentmsg.Message`, read from their slots (the
/// measured text of `agentmsg.counting.tokens.measured_text`, measured without being built).
#[pyfunction]
fn estimate_messages(messages: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let messages = Messages::read(messages)?;
    (0..messages.len()).map(|index| messages.estimate(index)).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(estimate_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_messages, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_tokens_many, m)?)?;
    Ok(())
}
