//! Binding of tool pairing: `pair_tool_results` over plain arrays (see `agentmsg_core::pairs`).

use agentmsg_core::pairs::{self, Calls, NameScope};
use pyo3::prelude::*;

use crate::errors::core_error;
use crate::prune::role_codes;

/// `(call_of, orphans, unanswered)`: for each message the index of the message whose call it
/// answers (-1: none), the orphan results, and the unanswered calls as indices into the calls.
#[pyfunction]
#[pyo3(signature = (roles, result_ids, result_names, call_messages, call_ids, call_names, any_turn = false))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn pair_tool_results(
    py: Python<'_>,
    roles: Vec<u8>,
    result_ids: Vec<Option<String>>,
    result_names: Vec<Option<String>>,
    call_messages: Vec<usize>,
    call_ids: Vec<String>,
    call_names: Vec<String>,
    any_turn: bool,
) -> PyResult<(Vec<i64>, Vec<usize>, Vec<usize>)> {
    let roles = role_codes(py, &roles)?;
    let scope = if any_turn { NameScope::AnyTurn } else { NameScope::LatestTurn };
    let pairing = py
        .detach(|| {
            let calls = Calls { messages: &call_messages, ids: &call_ids, names: &call_names };
            pairs::pair(&roles, &result_ids, &result_names, calls, scope)
        })
        .map_err(|error| core_error(py, error))?;
    let call_of = pairing.call_of.iter().map(|c| c.map_or(-1, |i| i as i64)).collect();
    Ok((call_of, pairing.orphans, pairing.unanswered))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pair_tool_results, m)?)?;
    Ok(())
}
