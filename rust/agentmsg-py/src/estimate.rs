//! Binding of the seed-000 token estimate.

use agentmsg_core::estimate;
use agentmsg_core::Role;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::errors::agentmsg_error;

fn role_from_name(py: Python<'_>, name: &str) -> PyResult<Role> {
    Role::from_name(name).ok_or_else(|| {
        agentmsg_error(
            py,
            "MessageError",
            format!("unknown role '{name}'; valid roles: system, user, assistant, tool"),
        )
    })
}

/// The estimate of one Python string. Valid UTF-8 is read in place; a string with lone
/// surrogates is measured through its `surrogatepass` encoding (3 bytes each), as Python's
/// `len(text.encode("utf-8", "surrogatepass"))` would.
fn estimate_str(text: &Bound<'_, PyString>, role: Role) -> PyResult<usize> {
    match text.to_str() {
        Ok(valid) => Ok(estimate::estimate_tokens(valid, role)),
        Err(_) => {
            let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
            let bytes = encoded.cast::<PyBytes>().map_err(PyErr::from)?;
            Ok(estimate::estimate_tokens_bytes(bytes.as_bytes(), role))
        }
    }
}

/// Estimates the tokens of `text` written by `role` (seed 000's heuristic).
#[pyfunction]
#[pyo3(signature = (text, role = "user"))]
fn estimate_tokens(py: Python<'_>, text: &Bound<'_, PyString>, role: &str) -> PyResult<usize> {
    estimate_str(text, role_from_name(py, role)?)
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
        return Err(agentmsg_error(
            py,
            "MessageError",
            format!("{} texts but {} roles", texts.len(), roles.len()),
        ));
    }
    texts
        .iter()
        .zip(roles)
        .enumerate()
        .map(|(index, (text, code))| {
            let role = Role::from_code(code).ok_or_else(|| {
                agentmsg_error(py, "MessageError", format!("unknown role code {code} at index {index}"))
            })?;
            estimate_str(text, role)
        })
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(estimate_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_tokens_many, m)?)?;
    Ok(())
}
