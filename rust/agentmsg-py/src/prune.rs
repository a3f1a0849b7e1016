//! Binding of budget pruning: `select_kept` for a whole history, `RollingBudget` for a memory.

use agentmsg_core::prune::{self, PruneError};
use agentmsg_core::Role;
use pyo3::prelude::*;

use crate::errors::agentmsg_error;

fn role_codes(py: Python<'_>, codes: &[u8]) -> PyResult<Vec<Role>> {
    codes
        .iter()
        .enumerate()
        .map(|(index, &code)| {
            Role::from_code(code).ok_or_else(|| {
                agentmsg_error(py, "MessageError", format!("unknown role code {code} at index {index}"))
            })
        })
        .collect()
}

fn prune_error(py: Python<'_>, error: PruneError) -> PyErr {
    agentmsg_error(py, "MessageError", error.to_string())
}

/// Indices to keep within `max_tokens`, plus (total, over_budget, system_over_budget).
#[pyfunction]
#[pyo3(signature = (counts, roles, groups, max_tokens, keep_system = true, start_on = None))]
fn select_kept(
    py: Python<'_>,
    counts: Vec<u64>,
    roles: Vec<u8>,
    groups: Vec<usize>,
    max_tokens: u64,
    keep_system: bool,
    start_on: Option<u8>,
) -> PyResult<(Vec<usize>, u64, bool, bool)> {
    let roles = role_codes(py, &roles)?;
    let start_on = match start_on {
        Some(code) => Some(role_codes(py, &[code])?[0]),
        None => None,
    };
    let selection = py
        .detach(|| prune::select(&counts, &roles, &groups, max_tokens, keep_system, start_on))
        .map_err(|error| prune_error(py, error))?;
    Ok((selection.kept, selection.total, selection.over_budget, selection.system_over_budget))
}

/// Running token totals of a growing history (see `agentmsg_core::prune::RollingBudget`).
#[pyclass(module = "agentmsg._core")]
struct RollingBudget {
    inner: prune::RollingBudget,
}

#[pymethods]
impl RollingBudget {
    #[new]
    #[pyo3(signature = (max_tokens, keep_system = true))]
    fn new(max_tokens: u64, keep_system: bool) -> Self {
        RollingBudget { inner: prune::RollingBudget::new(max_tokens, keep_system) }
    }

    /// Adds a message; returns how many (system, non-system) messages to remove from the front
    /// (none when `prune` is false: call `prune()` later).
    #[pyo3(signature = (count, role, group = None, prune = true))]
    fn push(
        &mut self,
        py: Python<'_>,
        count: u64,
        role: u8,
        group: Option<u64>,
        prune: bool,
    ) -> PyResult<(usize, usize)> {
        let role = role_codes(py, &[role])?[0];
        self.inner.push_unpruned(count, role, group).map_err(|error| prune_error(py, error))?;
        Ok(if prune { self.prune() } else { (0, 0) })
    }

    /// Removes the oldest messages while over budget; returns (system, non-system) counts.
    fn prune(&mut self) -> (usize, usize) {
        let pruned = self.inner.prune();
        (pruned.systems, pruned.messages)
    }

    fn clear(&mut self) {
        self.inner.clear();
    }

    #[getter]
    fn max_tokens(&self) -> u64 {
        self.inner.max_tokens()
    }

    #[getter]
    fn total(&self) -> u64 {
        self.inner.total()
    }

    #[getter]
    fn next_seq(&self) -> u64 {
        self.inner.next_seq()
    }

    #[getter]
    fn front_seq(&self) -> u64 {
        self.inner.front_seq()
    }

    #[getter]
    fn over_budget(&self) -> bool {
        self.inner.over_budget()
    }

    #[getter]
    fn system_over_budget(&self) -> bool {
        self.inner.system_over_budget()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(select_kept, m)?)?;
    m.add_class::<RollingBudget>()?;
    Ok(())
}
