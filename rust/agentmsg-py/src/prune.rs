//! Binding of budget pruning: `select_messages` (what `trim` keeps, one call) and `select_source`
//! (the same over a Python source, for LangChain), `valid_cuts` for compaction, `RollingHistory`
//! for a memory.

use agentmsg_core::pairs::Link;
use agentmsg_core::pairs::NameScope;
use agentmsg_core::prune::window::{self, Source, WindowError};
use agentmsg_core::prune::{self, Pushed, RoleSet, Rules, Strategy};
use agentmsg_core::Role;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};


use crate::columns::Messages;
use crate::errors::{ErrorClass, core_error, describe, type_name};

pub(crate) fn role_codes(py: Python<'_>, codes: &[u8]) -> PyResult<Vec<Role>> {
    codes
        .iter()
        .enumerate()
        .map(|(index, &code)| {
            Role::from_code(code).ok_or_else(|| {
                ErrorClass::Message.new_err(py, format!("unknown role code {code} at index {index}"))
            })
        })
        .collect()
}

/// For each message of a list of `agentmsg.Message` (read from their slots), whether a kept run
/// may start there without splitting a tool group: where compaction may end a summarized span.
#[pyfunction]
#[pyo3(signature = (messages, keep_system = true))]
fn valid_cuts(messages: &Bound<'_, PyAny>, keep_system: bool) -> PyResult<Vec<bool>> {
    let messages = Messages::read(messages)?;
    let (pairing, _) = messages.pair(0, messages.len(), NameScope::LatestTurn, false)?;
    Ok(prune::valid_cuts(messages.roles(), &pairing.groups(), keep_system))
}

/// The rules of a selection from the binding's arguments (role codes for `start_on`/`end_on`).
fn rules_of(py: Python<'_>, keep_system: bool, start_on: Option<Vec<u8>>, end_on: Option<Vec<u8>>, first: bool) -> PyResult<Rules> {
    let role_set = |codes: Option<Vec<u8>>| -> PyResult<Option<RoleSet>> {
        codes.map(|codes| role_codes(py, &codes).map(RoleSet::any_of)).transpose()
    };
    let strategy = if first { Strategy::First } else { Strategy::Last };
    Ok(Rules { keep_system, start_on: role_set(start_on)?, end_on: role_set(end_on)?, strategy })
}

/// What `select_messages` and `select_source` return: `(kept, total, over_budget,
/// system_over_budget, partial)`, `partial` being `(index, allowance, kept with it, others)`.
type Chosen = (Vec<usize>, u64, bool, bool, Option<(usize, u64, bool, Vec<usize>, u64)>);

fn chosen(py: Python<'_>, choice: Result<window::Choice, WindowError<PyErr>>) -> PyResult<Chosen> {
    let choice = choice.map_err(|error| match error {
        WindowError::Source(error) => error, // a callback's exception, unchanged
        WindowError::Columns(error) => core_error(py, error),
    })?;
    let selection = choice.selection;
    let partial = choice.partial.map(|p| (p.index, p.allowance, p.keep_end, p.kept, p.others));
    Ok((selection.kept, selection.total, selection.over_budget, selection.system_over_budget, partial))
}

/// Token counts read back from a Python callable (`what` names it for the error).
fn counts_from(value: Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u64>> {
    let py = value.py();
    let mut counts = Vec::with_capacity(crate::strings::exact_len(&value));
    let items = value.try_iter().map_err(|_| {
        ErrorClass::MessageType.new_err(py, format!("{what} must return a list of ints, not {}", type_name(&value)))
    })?;
    for (index, item) in items.enumerate() {
        let item = item?;
        if !item.is_instance_of::<PyInt>() || item.is_instance_of::<PyBool>() {
            let message = format!("{what} returned {} at index {index}; it must return ints", type_name(&item));
            return Err(ErrorClass::MessageType.new_err(py, message));
        }
        counts.push(item.extract::<u64>().map_err(|_| {
            let message = format!("{what} returned {} at index {index}; counts must be in [0, 2**64)", describe(&item));
            ErrorClass::Message.new_err(py, message)
        })?);
    }
    Ok(counts)
}

/// How `select_messages` counts: Forge's estimate read from the slots, or a Python callable
/// `counts(positions) -> counts`.
enum Counts<'py> {
    Estimate,
    Callback(Bound<'py, PyAny>),
}

/// A list of `agentmsg.Message` as the selection driver reads it.
struct MessageSource<'py> {
    messages: Messages<'py>,
    counts: Counts<'py>,
}

impl Source for MessageSource<'_> {
    type Error = PyErr;

    fn len(&self) -> usize {
        self.messages.len()
    }

    fn roles(&mut self, start: usize, stop: usize) -> PyResult<Vec<Role>> {
        Ok(self.messages.roles()[start..stop].to_vec())
    }

    fn counts(&mut self, positions: &[usize]) -> PyResult<Vec<u64>> {
        match &self.counts {
            Counts::Estimate => positions.iter().map(|&i| self.messages.estimate(i)).collect(),
            Counts::Callback(counts) => counts_from(counts.call1((positions.to_vec(),))?, "counts"),
        }
    }

    fn groups(&mut self, start: usize, stop: usize, _: &[Role]) -> PyResult<(Vec<usize>, bool)> {
        let (pairing, _) = self.messages.pair(start, stop, NameScope::LatestTurn, false)?;
        Ok((pairing.groups(), !pairing.orphans.is_empty()))
    }
}

/// The messages `trim` keeps of a list of `agentmsg.Message` (read from their slots) within
/// `max_tokens`: one call for the whole selection (see `agentmsg_core::prune::window`).
/// `counts` is `"estimate"` (counted here) or a callable `counts(positions) -> counts`.
#[pyfunction]
#[pyo3(signature = (messages, max_tokens, counts, *, keep_system = true, start_on = None, end_on = None, first = false, allow_partial = false))]
#[allow(clippy::too_many_arguments)]
fn select_messages(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    max_tokens: u64,
    counts: &Bound<'_, PyAny>,
    keep_system: bool,
    start_on: Option<Vec<u8>>,
    end_on: Option<Vec<u8>>,
    first: bool,
    allow_partial: bool,
) -> PyResult<Chosen> {
    let rules = rules_of(py, keep_system, start_on, end_on, first)?;
    let counts = if counts.is_callable() {
        Counts::Callback(counts.clone())
    } else if counts.cast::<PyString>().is_ok_and(|name| name.to_str().is_ok_and(|name| name == "estimate")) {
        Counts::Estimate
    } else {
        let message = format!("counts must be 'estimate' or a callable, not {}", describe(counts));
        return Err(ErrorClass::MessageType.new_err(py, message));
    };
    let mut source = MessageSource { messages: Messages::read(messages)?, counts };
    chosen(py, window::select(&mut source, max_tokens, &rules, allow_partial))
}

/// A history read through a Python object with `__len__`, `role_codes(start, stop)`,
/// `counts(positions)` and `groups(start, stop, codes) -> (groups, orphans)`, each called back.
struct PySource<'py> {
    source: Bound<'py, PyAny>,
    len: usize,
}

impl Source for PySource<'_> {
    type Error = PyErr;

    fn len(&self) -> usize {
        self.len
    }

    fn roles(&mut self, start: usize, stop: usize) -> PyResult<Vec<Role>> {
        let codes: Vec<u8> = self.source.call_method1(intern!(self.source.py(), "role_codes"), (start, stop))?.extract()?;
        role_codes(self.source.py(), &codes)
    }

    fn counts(&mut self, positions: &[usize]) -> PyResult<Vec<u64>> {
        counts_from(self.source.call_method1(intern!(self.source.py(), "counts"), (positions.to_vec(),))?, "source.counts")
    }

    fn groups(&mut self, start: usize, stop: usize, roles: &[Role]) -> PyResult<(Vec<usize>, bool)> {
        let codes: Vec<u8> = roles.iter().map(|&role| role as u8).collect();
        self.source.call_method1(intern!(self.source.py(), "groups"), (start, stop, codes))?.extract()
    }
}

/// `select_messages` over any history, read through a Python `source` object (see `PySource`):
/// what `agentmsg.langchain.trim_messages` uses for LangChain messages.
#[pyfunction]
#[pyo3(signature = (source, max_tokens, *, keep_system = false, start_on = None, end_on = None, first = false, allow_partial = false))]
#[allow(clippy::too_many_arguments)]
fn select_source(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    max_tokens: u64,
    keep_system: bool,
    start_on: Option<Vec<u8>>,
    end_on: Option<Vec<u8>>,
    first: bool,
    allow_partial: bool,
) -> PyResult<Chosen> {
    let rules = rules_of(py, keep_system, start_on, end_on, first)?;
    let mut source = PySource { len: source.len()?, source: source.clone() };
    chosen(py, window::select(&mut source, max_tokens, &rules, allow_partial))
}

/// The role of one role code.
fn role_code(py: Python<'_>, code: u8) -> PyResult<Role> {
    Ok(role_codes(py, &[code])?[0])
}

/// A memory's state but its messages (see `agentmsg_core::prune::RollingHistory`).
#[pyclass(module = "agentmsg._core")]
struct RollingHistory {
    inner: prune::RollingHistory,
}

#[pymethods]
impl RollingHistory {
    #[new]
    #[pyo3(signature = (max_tokens, keep_system = true))]
    fn new(max_tokens: u64, keep_system: bool) -> Self {
        Self { inner: prune::RollingHistory::new(max_tokens, keep_system) }
    }

    /// Adds a message; returns how many (system, non-system) messages to remove from the front,
    /// or None when it is a tool result whose call was already pruned (it is not added).
    #[pyo3(signature = (count, role, calls = None, result_id = None, result_name = None, prune = true))]
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        py: Python<'_>,
        count: u64,
        role: u8,
        calls: Option<Vec<(Bound<'_, PyString>, Bound<'_, PyString>)>>,
        result_id: Option<Bound<'_, PyString>>,
        result_name: Option<Bound<'_, PyString>>,
        prune: bool,
    ) -> PyResult<Option<(usize, usize)>> {
        let role = role_code(py, role)?;
        // A memory refuses an id or name with a lone surrogate (the message is not added).
        let text = |text: &Bound<'_, PyString>, what: &str| -> PyResult<Vec<u8>> {
            match text.to_str() {
                Ok(valid) => Ok(valid.as_bytes().to_vec()),
                Err(_) => Err(ErrorClass::Message.new_err(py, format!("{what} is not valid Unicode (a lone surrogate)"))),
            }
        };
        let calls = calls.unwrap_or_default();
        let calls: Vec<(Vec<u8>, Vec<u8>)> = calls
            .iter()
            .map(|(id, name)| Ok((text(id, "a tool call's id")?, text(name, "a tool call's name")?)))
            .collect::<PyResult<_>>()?;
        let result_id = result_id.as_ref().map(|id| text(id, "tool_id")).transpose()?;
        let result_name = result_name.as_ref().map(|name| text(name, "name")).transpose()?;
        let pushed = self
            .inner
            .push(count, role, calls.iter().map(|(id, name)| (&id[..], &name[..])), Link::of(result_id.as_deref(), result_name.as_deref()), prune)
            .map_err(|error| core_error(py, error))?;
        Ok(match pushed {
            Pushed::Added(pruned) => Some((pruned.systems, pruned.messages)),
            Pushed::LateResult => None,
        })
    }

    /// Removes the oldest messages while over budget; returns (system, non-system) counts.
    fn prune(&mut self) -> (usize, usize) {
        let pruned = self.inner.prune();
        (pruned.systems, pruned.messages)
    }

    /// Forgets every message and pairing.
    fn clear(&mut self) {
        self.inner.clear();
    }

    /// Starts a transaction (`rollback` restores this state).
    fn begin(&mut self) {
        self.inner.begin();
    }

    fn commit(&mut self) {
        self.inner.commit();
    }

    fn rollback(&mut self) {
        self.inner.rollback();
    }

    /// The kept system messages' counts, oldest first.
    fn system_counts(&self) -> Vec<u64> {
        self.inner.budget().system_counts().collect()
    }

    /// The kept non-system messages' counts, oldest first.
    fn counts(&self) -> Vec<u64> {
        self.inner.budget().counts().collect()
    }

    #[getter]
    fn total(&self) -> u64 {
        self.inner.budget().total()
    }

    #[getter]
    fn over_budget(&self) -> bool {
        self.inner.budget().over_budget()
    }

    #[getter]
    fn system_over_budget(&self) -> bool {
        self.inner.budget().system_over_budget()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(select_messages, m)?)?;
    m.add_function(wrap_pyfunction!(select_source, m)?)?;
    m.add_function(wrap_pyfunction!(valid_cuts, m)?)?;
    m.add_class::<RollingHistory>()?;
    Ok(())
}
