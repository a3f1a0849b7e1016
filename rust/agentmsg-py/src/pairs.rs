//! Binding of tool pairing (see `agentmsg_core::pairs`): `pair_messages` over a list of
//! `agentmsg.Message` read from their slots, `pair_tool_results` over plain arrays. Ids and
//! names are read as their `surrogatepass` bytes, so a lone surrogate pairs like any character.

use std::borrow::Cow;

use agentmsg_core::pairs::{self, Calls, NameScope, OrderProblem};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::columns::Messages;
use crate::errors::core_error;
use crate::prune::role_codes;
use crate::strings::text_bytes;

fn scope(any_turn: bool) -> NameScope {
    if any_turn { NameScope::AnyTurn } else { NameScope::LatestTurn }
}

/// `(call_of, orphans, unanswered)`: for each message the index of the message whose call it
/// answers (-1: none), the orphan results, and the unanswered calls as indices into the calls.
#[pyfunction]
#[pyo3(signature = (roles, result_ids, result_names, call_messages, call_ids, call_names, any_turn = false))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn pair_tool_results(
    py: Python<'_>,
    roles: Vec<u8>,
    result_ids: Vec<Option<Bound<'_, PyString>>>,
    result_names: Vec<Option<Bound<'_, PyString>>>,
    call_messages: Vec<usize>,
    call_ids: Vec<Bound<'_, PyString>>,
    call_names: Vec<Bound<'_, PyString>>,
    any_turn: bool,
) -> PyResult<(Vec<i64>, Vec<usize>, Vec<usize>)> {
    let roles = role_codes(py, &roles)?;
    let optional = |texts: &[Option<Bound<'_, PyString>>]| -> PyResult<Vec<Option<Vec<u8>>>> {
        texts.iter().map(|text| text.as_ref().map(|t| text_bytes(t).map(Cow::into_owned)).transpose()).collect()
    };
    let (result_ids, result_names) = (optional(&result_ids)?, optional(&result_names)?);
    let required = |texts: &[Bound<'_, PyString>]| -> PyResult<Vec<Vec<u8>>> {
        texts.iter().map(|text| text_bytes(text).map(Cow::into_owned)).collect()
    };
    let (call_ids, call_names) = (required(&call_ids)?, required(&call_names)?);
    let pairing = py
        .detach(|| {
            let calls = Calls { messages: &call_messages, ids: &call_ids, names: &call_names };
            pairs::pair(&roles, &result_ids, &result_names, calls, scope(any_turn))
        })
        .map_err(|error| core_error(py, error))?;
    let call_of = pairing.call_of.iter().map(|c| c.map_or(-1, |i| i as i64)).collect();
    Ok((call_of, pairing.orphans, pairing.unanswered))
}

/// The pairing of a list of `agentmsg.Message`: `(call_of, orphans, unanswered, interjection)`,
/// the first three as `pair_tool_results` gives them but each unanswered call as `(message
/// index, ToolUseBlock)`; the last the first message between a call and one of its results, as
/// `(message, call message, result)`, or None.
/// With `refuse_lone_surrogates`, an id or name holding one is a `MessageError` naming it.
#[pyfunction]
#[pyo3(signature = (messages, any_turn = false, refuse_lone_surrogates = false))]
#[allow(clippy::type_complexity)]
fn pair_messages<'py>(
    messages: &Bound<'py, PyAny>,
    any_turn: bool,
    refuse_lone_surrogates: bool,
) -> PyResult<(Vec<i64>, Vec<usize>, Vec<(usize, Bound<'py, PyAny>)>, Option<(usize, usize, usize)>)> {
    let messages = Messages::read(messages)?;
    let (pairing, calls) = messages.pair(0, messages.len(), scope(any_turn), refuse_lone_surrogates)?;
    let between = pairs::first_interjection(messages.roles(), &pairing.call_of).map(|i| (i.message, i.call, i.result));
    let call_of = pairing.call_of.iter().map(|c| c.map_or(-1, |i| i as i64)).collect();
    let unanswered = pairing.unanswered.iter().map(|&k| (calls[k].0, calls[k].1.clone())).collect();
    Ok((call_of, pairing.orphans, unanswered, between))
}

/// The first way a list of `agentmsg.Message` breaks the order every provider requires (see
/// `agentmsg_core::pairs::order_problem`), as `(kind, message, caller, call)`: `("stray",
/// result, None, None)`, `("interrupted", message, caller, ToolUseBlock)` or `("never", caller,
/// caller, ToolUseBlock)`; None when results always follow their call.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn order_problem<'py>(
    messages: &Bound<'py, PyAny>,
) -> PyResult<Option<(&'static str, usize, Option<usize>, Option<Bound<'py, PyAny>>)>> {
    let messages = Messages::read(messages)?;
    let (pairing, calls) = messages.pair(0, messages.len(), NameScope::LatestTurn, false)?;
    let call_messages: Vec<usize> = calls.iter().map(|(message, _)| *message).collect();
    let block = |call: usize| Some(calls[call].1.clone());
    Ok(pairs::order_problem(messages.roles(), &call_messages, &pairing).map(|problem| match problem {
        OrderProblem::StrayResult { result } => ("stray", result, None, None),
        OrderProblem::Interrupted { message, caller, call } => ("interrupted", message, Some(caller), block(call)),
        OrderProblem::NeverAnswered { caller, call } => ("never", caller, Some(caller), block(call)),
    }))
}

/// The order to write a list of `agentmsg.Message` in so that each turn's results directly follow
/// its call, and the messages that moved (see `agentmsg_core::pairs::results_first`): `(order,
/// moved)`. Pairs only when some result directly follows a user or system message.
#[pyfunction]
fn results_first(messages: &Bound<'_, PyAny>) -> PyResult<(Vec<usize>, Vec<usize>)> {
    let messages = Messages::read(messages)?;
    if !pairs::may_interject(messages.roles()) {
        return Ok(((0..messages.len()).collect(), Vec::new()));
    }
    let (pairing, _) = messages.pair(0, messages.len(), NameScope::LatestTurn, false)?;
    Ok(pairs::results_first(messages.roles(), &pairing.call_of))
}

/// The unanswered calls split into (pending, missing): a call of the last turn (the last message
/// that is not a tool result) is pending, not missing. Arrays as `pair_tool_results` takes and
/// returns them.
#[pyfunction]
fn pending_calls(py: Python<'_>, roles: Vec<u8>, call_messages: Vec<usize>, unanswered: Vec<usize>) -> PyResult<(Vec<usize>, Vec<usize>)> {
    let roles = role_codes(py, &roles)?;
    Ok(pairs::pending_calls(&roles, &call_messages, &unanswered))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(results_first, m)?)?;
    m.add_function(wrap_pyfunction!(pending_calls, m)?)?;
    m.add_function(wrap_pyfunction!(order_problem, m)?)?;
    m.add_function(wrap_pyfunction!(pair_tool_results, m)?)?;
    m.add_function(wrap_pyfunction!(pair_messages, m)?)?;
    Ok(())
}
