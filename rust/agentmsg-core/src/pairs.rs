//! Tool pairing: which call each tool result answers, over plain arrays.
//!
//! The one pairing rule of the library:
//!
//! * a result that carries a call id answers the **latest unanswered call with that id** made
//!   before it (ids can be reused; an empty id never links);
//! * a result that carries only a tool name (Forge-style text results, `Tool: name`) answers
//!   the **first unanswered call of that name in the latest assistant message that made tool
//!   calls** ([`NameScope::LatestTurn`]). Forge's own reader looks further back, to the earliest
//!   unanswered call of that name anywhere ([`NameScope::AnyTurn`]); both scopes live here;
//! * a result that answers no call is an *orphan*; a call no result answers is *unanswered*.
//!
//! Ids and names are compared as bytes: the binding hands over the `surrogatepass` encoding of a
//! Python str, so an id holding a lone surrogate pairs like any other.
//!
//! [`first_interjection`] finds the first message between a call and one of its results (what
//! providers refuse and converters move).
//!
//! [`Pairer`] applies the rule one message at a time (for a history that grows, such as a
//! memory), with an optional journal so a caller can undo everything since a checkpoint;
//! [`pair`] applies it to a whole history given as arrays. Every step is O(1) amortized (hash
//! lookups and stacks with lazy removal), so pairing n messages is O(n) however ids repeat.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use crate::Role;

/// Where a name-only result looks for its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameScope {
    /// The calls of the latest assistant message that made tool calls (the library's rule).
    #[default]
    LatestTurn,
    /// Every earlier call, earliest unanswered first (Forge's reader).
    AnyTurn,
}

/// How a tool result names the call it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link<'a> {
    /// By call id (OpenAI style).
    Id(&'a [u8]),
    /// By tool name only (Forge style).
    Name(&'a [u8]),
    /// Neither: always an orphan.
    Nothing,
}

impl<'a> Link<'a> {
    /// The link of a result with these fields: a non-empty id wins, else a non-empty name.
    pub fn of(id: Option<&'a [u8]>, name: Option<&'a [u8]>) -> Self {
        match (id.filter(|s| !s.is_empty()), name.filter(|s| !s.is_empty())) {
            (Some(id), _) => Link::Id(id),
            (None, Some(name)) => Link::Name(name),
            (None, None) => Link::Nothing,
        }
    }
}

/// A call that a result answered: its number (calls are numbered 0, 1, 2, ... in the order they
/// were opened) and the key of the message that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answered {
    pub call: u64,
    pub message: u64,
}

#[derive(Debug, Clone)]
struct OpenCall {
    message: u64,
    id: Vec<u8>,
    name: Vec<u8>,
}

/// One change to undo (see [`Pairer::begin`]).
#[derive(Debug)]
enum Undo {
    Opened { call: u64 },
    TurnStarted { previous: HashMap<Vec<u8>, VecDeque<u64>> },
    Answered { call: u64, open: OpenCall },
    Popped { index: Index, key: Vec<u8>, call: u64 },
}

/// Which lookup a popped call came from.
#[derive(Debug, Clone, Copy)]
enum Index {
    Id,
    Name,
}

/// The pairing rule applied one message at a time; message keys are the caller's (an index, a
/// sequence number), only compared for equality.
#[derive(Debug, Default)]
pub struct Pairer {
    scope: NameScope,
    next_call: u64,
    /// The unanswered calls; a call leaves when answered, so stacks below hold stale numbers
    /// that are skipped (and dropped) when reached.
    open: HashMap<u64, OpenCall>,
    /// Calls by id, latest last.
    by_id: HashMap<Vec<u8>, VecDeque<u64>>,
    /// LatestTurn: the open turn's calls by name; AnyTurn: every call by name. Oldest first.
    by_name: HashMap<Vec<u8>, VecDeque<u64>>,
    journal: Option<Vec<Undo>>,
}

impl Pairer {
    /// An empty pairer with the given name scope.
    pub fn new(scope: NameScope) -> Self {
        Pairer { scope, ..Pairer::default() }
    }

    /// Number the next opened call will get.
    pub fn next_call(&self) -> u64 {
        self.next_call
    }

    /// Starts recording changes, so [`rollback`](Self::rollback) can restore this state.
    pub fn begin(&mut self) {
        self.journal = Some(Vec::new());
    }

    /// Keeps the changes since [`begin`](Self::begin) and stops recording.
    pub fn commit(&mut self) {
        self.journal = None;
    }

    /// Undoes every change since [`begin`](Self::begin) (nothing if not recording).
    pub fn rollback(&mut self) {
        let Some(journal) = self.journal.take() else { return };
        for undo in journal.into_iter().rev() {
            match undo {
                Undo::Opened { call } => {
                    if let Some(open) = self.open.remove(&call) {
                        if !open.id.is_empty() {
                            pop_back_key(&mut self.by_id, &open.id);
                        }
                        pop_back_key(&mut self.by_name, &open.name);
                    }
                    self.next_call = call;
                }
                Undo::TurnStarted { previous } => self.by_name = previous,
                Undo::Answered { call, open } => {
                    self.open.insert(call, open);
                }
                // Ids pop from the back and names from the front: each goes back where it was.
                Undo::Popped { index: Index::Id, key, call } => self.by_id.entry(key).or_default().push_back(call),
                Undo::Popped { index: Index::Name, key, call } => self.by_name.entry(key).or_default().push_front(call),
            }
        }
    }

    fn record(&mut self, undo: impl FnOnce() -> Undo) {
        if let Some(journal) = &mut self.journal {
            journal.push(undo());
        }
    }

    /// Registers the tool calls of the message `message`, as `(id, name)` pairs in order. A
    /// message without calls changes nothing (it does not close the open turn).
    pub fn open_turn<'a>(&mut self, message: u64, calls: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) {
        let mut calls = calls.into_iter().peekable();
        if calls.peek().is_none() {
            return;
        }
        if self.scope == NameScope::LatestTurn {
            let previous = std::mem::take(&mut self.by_name);
            self.record(|| Undo::TurnStarted { previous });
        }
        for (id, name) in calls {
            let call = self.next_call;
            self.next_call += 1;
            if !id.is_empty() {
                self.by_id.entry(id.to_owned()).or_default().push_back(call);
            }
            self.by_name.entry(name.to_owned()).or_default().push_back(call);
            self.open.insert(call, OpenCall { message, id: id.to_owned(), name: name.to_owned() });
            self.record(|| Undo::Opened { call });
        }
    }

    /// The call a result with `link` answers (marked answered), or `None` for an orphan.
    pub fn answer(&mut self, link: Link<'_>) -> Option<Answered> {
        let call = match link {
            Link::Id(id) => self.pop_live_id(id)?,
            Link::Name(name) => self.pop_live_name(name)?,
            Link::Nothing => return None,
        };
        let open = self.open.remove(&call)?;
        let message = open.message;
        self.record(|| Undo::Answered { call, open });
        Some(Answered { call, message })
    }

    /// Pops the latest unanswered call with this id, dropping stale numbers on the way.
    fn pop_live_id(&mut self, id: &[u8]) -> Option<u64> {
        let found = pop_live(&mut self.by_id, &self.open, id, VecDeque::pop_back);
        self.record_pops(Index::Id, id, found)
    }

    /// Pops the first unanswered call of this name in scope, dropping stale numbers on the way.
    fn pop_live_name(&mut self, name: &[u8]) -> Option<u64> {
        let found = pop_live(&mut self.by_name, &self.open, name, VecDeque::pop_front);
        self.record_pops(Index::Name, name, found)
    }

    fn record_pops(&mut self, index: Index, key: &[u8], (popped, found): (Vec<u64>, Option<u64>)) -> Option<u64> {
        for call in popped {
            self.record(|| Undo::Popped { index, key: key.to_owned(), call });
        }
        found
    }

    /// The unanswered calls' numbers, ascending.
    pub fn unanswered(&self) -> Vec<u64> {
        let mut calls: Vec<u64> = self.open.keys().copied().collect();
        calls.sort_unstable();
        calls
    }
}

/// Pops calls from `map[key]` (with `pop`) until an unanswered one; returns every popped call
/// (for the journal) and the unanswered one. Empty queues leave the map.
fn pop_live(
    map: &mut HashMap<Vec<u8>, VecDeque<u64>>,
    open: &HashMap<u64, OpenCall>,
    key: &[u8],
    pop: fn(&mut VecDeque<u64>) -> Option<u64>,
) -> (Vec<u64>, Option<u64>) {
    let Some(queue) = map.get_mut(key) else { return (Vec::new(), None) };
    let mut popped = Vec::new();
    let mut found = None;
    while let Some(call) = pop(queue) {
        popped.push(call);
        if open.contains_key(&call) {
            found = Some(call);
            break;
        }
    }
    if queue.is_empty() {
        map.remove(key);
    }
    (popped, found)
}

fn pop_back_key(map: &mut HashMap<Vec<u8>, VecDeque<u64>>, key: &[u8]) {
    if let Some(queue) = map.get_mut(key) {
        queue.pop_back();
        if queue.is_empty() {
            map.remove(key);
        }
    }
}

/// Arrays that do not describe a history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairError {
    /// The per-message arrays have different lengths.
    LengthMismatch { roles: usize, result_ids: usize, result_names: usize },
    /// The per-call arrays have different lengths.
    CallsMismatch { messages: usize, ids: usize, names: usize },
    /// A call names a message that is not an assistant message, or calls are out of order.
    BadCallMessage { call: usize, message: usize },
}

impl fmt::Display for PairError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PairError::LengthMismatch { roles, result_ids, result_names } => write!(
                f,
                "{roles} roles, {result_ids} result ids and {result_names} result names: the arrays must have one entry per message"
            ),
            PairError::CallsMismatch { messages, ids, names } => write!(
                f,
                "{messages} call messages, {ids} call ids and {names} call names: the arrays must have one entry per call"
            ),
            PairError::BadCallMessage { call, message } => write!(
                f,
                "call {call} names message {message}, which is not an assistant message at or after the previous call's"
            ),
        }
    }
}

impl std::error::Error for PairError {}

/// A history's tool calls, flattened in order: call `k` was made by message `messages[k]`.
#[derive(Debug, Clone, Copy)]
pub struct Calls<'a, S: AsRef<[u8]>> {
    pub messages: &'a [usize],
    pub ids: &'a [S],
    pub names: &'a [S],
}

/// How a history pairs, as [`pair`] finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    /// For each message: the index of the message whose call it answers (results only).
    pub call_of: Vec<Option<usize>>,
    /// For each message: the call it answers, as an index into the flattened calls.
    pub answered: Vec<Option<usize>>,
    /// The results that answer no call, ascending.
    pub orphans: Vec<usize>,
    /// The calls no result answers, as indices into the flattened calls, ascending.
    pub unanswered: Vec<usize>,
}

impl Pairing {
    /// For each message, the index of the first message of its tool group: a result's group is
    /// its call's message; every other message is its own group (what `prune::select` takes).
    pub fn groups(&self) -> Vec<usize> {
        self.call_of.iter().enumerate().map(|(i, call)| call.unwrap_or(i)).collect()
    }
}

/// Pairs every tool result of a history with the call it answers, in one pass (module rule).
///
/// Per message: its role, and for a tool result the id and name it carries (`None` or empty
/// when absent); the calls come flattened, in order, each naming its (assistant) message.
///
/// ```
/// use agentmsg_core::{pairs::{pair, Calls, NameScope}, Role};
/// let roles = [Role::Assistant, Role::Tool, Role::Tool];
/// let calls = Calls { messages: &[0, 0], ids: &["a", ""], names: &["calc", "search"] };
/// let p = pair(&roles, &[None, Some("a"), None], &[None, None, Some("search")], calls, NameScope::LatestTurn).unwrap();
/// assert_eq!(p.call_of, vec![None, Some(0), Some(0)]);
/// assert!(p.orphans.is_empty() && p.unanswered.is_empty());
/// ```
pub fn pair<S: AsRef<[u8]>>(
    roles: &[Role],
    result_ids: &[Option<S>],
    result_names: &[Option<S>],
    calls: Calls<'_, S>,
    scope: NameScope,
) -> Result<Pairing, PairError> {
    let n = roles.len();
    if result_ids.len() != n || result_names.len() != n {
        return Err(PairError::LengthMismatch { roles: n, result_ids: result_ids.len(), result_names: result_names.len() });
    }
    let k = calls.messages.len();
    if calls.ids.len() != k || calls.names.len() != k {
        return Err(PairError::CallsMismatch { messages: k, ids: calls.ids.len(), names: calls.names.len() });
    }
    let mut previous = 0;
    for (call, &message) in calls.messages.iter().enumerate() {
        if message < previous || roles.get(message) != Some(&Role::Assistant) {
            return Err(PairError::BadCallMessage { call, message });
        }
        previous = message;
    }

    let mut pairer = Pairer::new(scope);
    let mut call_of = vec![None; n];
    let mut answered = vec![None; n];
    let mut orphans = Vec::new();
    let mut next = 0; // the first call not yet opened
    for (index, role) in roles.iter().enumerate() {
        match role {
            Role::Assistant => {
                let end = next + calls.messages[next..].iter().take_while(|&&m| m == index).count();
                pairer.open_turn(
                    index as u64,
                    (next..end).map(|c| (calls.ids[c].as_ref(), calls.names[c].as_ref())),
                );
                next = end;
            }
            Role::Tool => {
                let link = Link::of(
                    result_ids[index].as_ref().map(AsRef::as_ref),
                    result_names[index].as_ref().map(AsRef::as_ref),
                );
                match pairer.answer(link) {
                    Some(found) => {
                        call_of[index] = Some(found.message as usize);
                        answered[index] = Some(found.call as usize); // calls are numbered in order
                    }
                    None => orphans.push(index),
                }
            }
            Role::System | Role::User => {}
        }
    }
    let unanswered = pairer.unanswered().into_iter().map(|c| c as usize).collect();
    Ok(Pairing { call_of, answered, orphans, unanswered })
}

/// A message between a tool call and one of its results: providers want the results right after
/// their call, so a converter moves such a message after them (and strict checking refuses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interjection {
    /// The message in between (the first non-tool message after the call).
    pub message: usize,
    /// The assistant message that made the call.
    pub call: usize,
    /// The result that comes after `message`.
    pub result: usize,
}

/// The first interjection of a paired history (`call_of` as [`Pairing::call_of`]): the earliest
/// non-tool message that follows a call and precedes one of its results; among results behind
/// that same message, the earliest. `None` when every result follows its call with only results
/// between.
///
/// ```
/// use agentmsg_core::{pairs::{first_interjection, Interjection}, Role};
/// let roles = [Role::Assistant, Role::User, Role::Tool];
/// let found = first_interjection(&roles, &[None, None, Some(0)]);
/// assert_eq!(found, Some(Interjection { message: 1, call: 0, result: 2 }));
/// ```
pub fn first_interjection(roles: &[Role], call_of: &[Option<usize>]) -> Option<Interjection> {
    // next_other[i]: the first non-tool message after i (len() when none).
    let mut next_other = vec![0; roles.len()];
    let mut following = roles.len();
    for index in (0..roles.len()).rev() {
        next_other[index] = following;
        if roles[index] != Role::Tool {
            following = index;
        }
    }
    let mut found: Option<Interjection> = None;
    for (result, &call) in call_of.iter().enumerate() {
        let Some(call) = call.filter(|_| roles.get(result) == Some(&Role::Tool)) else { continue };
        let between = next_other[call];
        if between < result && found.is_none_or(|f| between < f.message) {
            found = Some(Interjection { message: between, call, result });
        }
    }
    found
}

/// Whether some tool result directly follows a user or system message: only then can a message
/// sit between a call and its result (the common history has none and needs no pairing for
/// [`results_first`]).
pub fn may_interject(roles: &[Role]) -> bool {
    roles.windows(2).any(|pair| pair[1] == Role::Tool && matches!(pair[0], Role::User | Role::System))
}

/// The order to write a paired history in (`call_of` as [`Pairing::call_of`]) so that the
/// results of each assistant turn's calls directly follow it, as OpenAI, Anthropic and Bedrock
/// require, and the messages that moved: a message between a call and a result of it moves
/// after the last result of that turn (a result after the next assistant message is not that
/// turn's); nothing else moves.
///
/// ```
/// use agentmsg_core::{pairs::results_first, Role};
/// let roles = [Role::Assistant, Role::User, Role::Tool, Role::User];
/// assert_eq!(results_first(&roles, &[None, None, Some(0), None]), (vec![0, 2, 1, 3], vec![1]));
/// ```
pub fn results_first(roles: &[Role], call_of: &[Option<usize>]) -> (Vec<usize>, Vec<usize>) {
    let count = roles.len();
    let mut order = Vec::with_capacity(count);
    let mut moved = Vec::new();
    let mut index = 0;
    while index < count {
        order.push(index);
        let mut start = index + 1;
        if roles[index] == Role::Assistant {
            // The turn's last result, before the next assistant message.
            let turn_end = (start..count).find(|&i| roles[i] == Role::Assistant).unwrap_or(count);
            if let Some(last) = (start..turn_end).rev().find(|&i| call_of.get(i).copied().flatten() == Some(index)) {
                let others: Vec<usize> = (start..=last).filter(|&i| roles[i] != Role::Tool).collect();
                if !others.is_empty() {
                    order.extend((start..=last).filter(|&i| roles[i] == Role::Tool));
                    order.extend_from_slice(&others);
                    moved.extend(others);
                    start = last + 1;
                }
            }
        }
        index = start;
    }
    (order, moved)
}

/// The calls of the last turn that no result answers: pending (the model just asked for them),
/// not missing. `call_messages` and `unanswered` as for [`pair`] and [`Pairing::unanswered`];
/// the last turn is the last message that is not a tool result. Returns the unanswered calls
/// split into (pending, missing), each ascending.
///
/// ```
/// use agentmsg_core::{pairs::pending_calls, Role};
/// let roles = [Role::Assistant, Role::User, Role::Assistant, Role::Tool];
/// assert_eq!(pending_calls(&roles, &[0, 2, 2], &[0, 2]), (vec![2], vec![0]));
/// ```
pub fn pending_calls(roles: &[Role], call_messages: &[usize], unanswered: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let last = roles.iter().rposition(|&role| role != Role::Tool);
    unanswered.iter().partition(|&&call| last.is_some() && call_messages.get(call).copied() == last)
}

/// The first way a paired history breaks the order every provider requires: each call answered
/// by tool results right after its assistant message, each such result answering a call of that
/// message (see [`order_problem`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderProblem {
    /// A tool result that answers no open call of the assistant message before it.
    StrayResult { result: usize },
    /// A message that comes while `call` (a flattened call index) of `caller` is unanswered.
    Interrupted { message: usize, caller: usize, call: usize },
    /// A call of the last caller that no result answers.
    NeverAnswered { caller: usize, call: usize },
}

/// The first [`OrderProblem`] of a history: `roles`, the flattened calls' messages (as for
/// [`pair`]) and the history's [`Pairing`]; `None` when results always follow their call.
///
/// ```
/// use agentmsg_core::{pairs::{order_problem, pair, Calls, NameScope, OrderProblem}, Role};
/// let roles = [Role::Assistant, Role::User, Role::Tool];
/// let calls = Calls { messages: &[0], ids: &["a"], names: &["f"] };
/// let pairing = pair(&roles, &[None, None, Some("a")], &[None, None, None], calls, NameScope::LatestTurn).unwrap();
/// assert_eq!(order_problem(&roles, &[0], &pairing), Some(OrderProblem::Interrupted { message: 1, caller: 0, call: 0 }));
/// ```
pub fn order_problem(roles: &[Role], call_messages: &[usize], pairing: &Pairing) -> Option<OrderProblem> {
    let mut caller: Option<usize> = None;
    let mut open: Vec<usize> = Vec::new(); // the caller's unanswered calls, in order
    let mut next_call = 0;
    for (index, &role) in roles.iter().enumerate() {
        if role == Role::Tool {
            let call = pairing.answered.get(index).copied().flatten();
            match call.and_then(|call| open.iter().position(|&c| c == call)) {
                Some(at) if pairing.call_of.get(index).copied().flatten() == caller => {
                    open.remove(at);
                }
                _ => return Some(OrderProblem::StrayResult { result: index }),
            }
            continue;
        }
        if let (Some(caller), Some(&call)) = (caller, open.first()) {
            return Some(OrderProblem::Interrupted { message: index, caller, call });
        }
        let first = next_call;
        while next_call < call_messages.len() && call_messages[next_call] == index {
            next_call += 1;
        }
        if next_call > first {
            caller = Some(index);
            open = (first..next_call).collect();
        } else {
            caller = None;
        }
    }
    match (caller, open.first()) {
        (Some(caller), Some(&call)) => Some(OrderProblem::NeverAnswered { caller, call }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Role::{Assistant as A, Tool as T, User as U};

    /// A history built call by call; `calls` holds (message, id, name) of each call.
    #[derive(Default)]
    struct History {
        roles: Vec<Role>,
        ids: Vec<Option<String>>,
        names: Vec<Option<String>>,
        calls: Vec<(usize, String, String)>,
    }

    impl History {
        fn new() -> Self {
            Self::default()
        }
        fn msg(mut self, role: Role) -> Self {
            self.roles.push(role);
            self.ids.push(None);
            self.names.push(None);
            self
        }
        fn calls(mut self, calls: &[(&str, &str)]) -> Self {
            let index = self.roles.len();
            self = self.msg(A);
            self.calls.extend(calls.iter().map(|(id, name)| (index, id.to_string(), name.to_string())));
            self
        }
        fn result(mut self, id: Option<&str>, name: Option<&str>) -> Self {
            self.roles.push(T);
            self.ids.push(id.map(String::from));
            self.names.push(name.map(String::from));
            self
        }
        fn pair(&self, scope: NameScope) -> Pairing {
            let messages: Vec<usize> = self.calls.iter().map(|call| call.0).collect();
            let ids: Vec<String> = self.calls.iter().map(|call| call.1.clone()).collect();
            let names: Vec<String> = self.calls.iter().map(|call| call.2.clone()).collect();
            let calls = Calls { messages: &messages, ids: &ids, names: &names };
            pair(&self.roles, &self.ids, &self.names, calls, scope).unwrap()
        }
    }

    #[test]
    fn ids_pair_with_the_latest_unanswered_call() {
        let h = History::new().calls(&[("a", "f")]).result(Some("a"), None).calls(&[("a", "f")]).result(Some("a"), None);
        let p = h.pair(NameScope::LatestTurn);
        assert_eq!(p.call_of, vec![None, Some(0), None, Some(2)]);
        // Two open calls with one id: the later answers first.
        let h = History::new().calls(&[("a", "f")]).calls(&[("a", "g")]).result(Some("a"), None);
        let p = h.pair(NameScope::LatestTurn);
        assert_eq!((p.call_of[2], p.unanswered.clone()), (Some(1), vec![0]));
    }

    #[test]
    fn names_pair_within_the_latest_turn_in_order() {
        let h = History::new()
            .calls(&[("", "calc"), ("", "search"), ("", "calc")])
            .result(None, Some("calc"))
            .result(None, Some("search"));
        let p = h.pair(NameScope::LatestTurn);
        assert_eq!(p.call_of, vec![None, Some(0), Some(0)]);
        assert_eq!(p.unanswered, vec![2]); // the second calc
        // An older turn is out of reach for a name...
        let h = History::new().calls(&[("", "calc")]).msg(U).calls(&[("", "search")]).result(None, Some("calc"));
        assert_eq!(h.pair(NameScope::LatestTurn).orphans, vec![3]);
        // ...but not for Forge's reader.
        assert_eq!(h.pair(NameScope::AnyTurn).call_of[3], Some(0));
    }

    #[test]
    fn a_call_answered_by_name_is_not_answered_again_by_id() {
        let h = History::new().calls(&[("a", "calc")]).result(None, Some("calc")).result(Some("a"), None);
        let p = h.pair(NameScope::LatestTurn);
        assert_eq!((p.call_of[1], p.orphans.clone()), (Some(0), vec![2]));
    }

    #[test]
    fn orphans_and_empty_links() {
        let h = History::new().result(Some("x"), None).calls(&[("", "f")]).result(Some(""), None).result(None, None);
        let p = h.pair(NameScope::LatestTurn);
        assert_eq!((p.orphans, p.unanswered), (vec![0, 2, 3], vec![0]));
    }

    #[test]
    fn bad_arrays_are_errors() {
        let calls = Calls { messages: &[1], ids: &["a"], names: &["f"] };
        let none: [Option<&str>; 2] = [None, None];
        assert_eq!(pair(&[U, U], &none, &none, calls, NameScope::LatestTurn), Err(PairError::BadCallMessage { call: 0, message: 1 }));
        let calls = Calls { messages: &[], ids: &["a"], names: &[] };
        assert!(matches!(pair(&[U, U], &none, &none, calls, NameScope::LatestTurn), Err(PairError::CallsMismatch { .. })));
        let calls: Calls<'_, &str> = Calls { messages: &[], ids: &[], names: &[] };
        assert!(matches!(pair(&[U], &none, &none, calls, NameScope::LatestTurn), Err(PairError::LengthMismatch { .. })));
    }

    #[test]
    fn the_first_interjection_is_the_earliest_message_in_between() {
        // 0 calls a and b; 1 answers a; 2 interjects; 3 answers b; 4 calls c; 5, 6 interject; 7 answers c.
        let h = History::new().calls(&[("a", "f"), ("b", "f")]).result(Some("a"), None).msg(U).result(Some("b"), None)
            .calls(&[("c", "f")]).msg(U).msg(U).result(Some("c"), None);
        let p = h.pair(NameScope::LatestTurn);
        assert_eq!(first_interjection(&h.roles, &p.call_of), Some(Interjection { message: 2, call: 0, result: 3 }));
        let clean = History::new().calls(&[("a", "f")]).result(Some("a"), None).msg(U);
        assert_eq!(first_interjection(&clean.roles, &clean.pair(NameScope::LatestTurn).call_of), None);
    }

    #[test]
    fn order_problems_name_the_first_break() {
        let check = |h: &History| {
            let messages: Vec<usize> = h.calls.iter().map(|call| call.0).collect();
            order_problem(&h.roles, &messages, &h.pair(NameScope::LatestTurn))
        };
        let ok = History::new().msg(U).calls(&[("a", "f"), ("", "g")]).result(None, Some("g")).result(Some("a"), None).msg(U);
        assert_eq!(check(&ok), None);
        let late = History::new().calls(&[("a", "f"), ("b", "f")]).result(Some("b"), None).msg(U).result(Some("a"), None);
        assert_eq!(check(&late), Some(OrderProblem::Interrupted { message: 2, caller: 0, call: 0 }));
        let stray = History::new().calls(&[("a", "f")]).result(Some("a"), None).result(Some("a"), None);
        assert_eq!(check(&stray), Some(OrderProblem::StrayResult { result: 2 }));
        // A result for an older turn's call is not this turn's.
        let older = History::new().calls(&[("a", "f")]).calls(&[("b", "f")]).result(Some("a"), None);
        assert_eq!(check(&older), Some(OrderProblem::Interrupted { message: 1, caller: 0, call: 0 }));
        let open = History::new().calls(&[("a", "f")]);
        assert_eq!(check(&open), Some(OrderProblem::NeverAnswered { caller: 0, call: 0 }));
    }

    #[test]
    fn results_move_before_the_messages_that_interrupt_them() {
        // 0 calls a, b; 1 user; 2 answers a; 3 user; 4 answers b; 5 calls c; 6 answers c; 7 user.
        let h = History::new().calls(&[("a", "f"), ("b", "f")]).msg(U).result(Some("a"), None).msg(U)
            .result(Some("b"), None).calls(&[("c", "f")]).result(Some("c"), None).msg(U);
        let p = h.pair(NameScope::LatestTurn);
        assert!(may_interject(&h.roles));
        assert_eq!(results_first(&h.roles, &p.call_of), (vec![0, 2, 4, 1, 3, 5, 6, 7], vec![1, 3]));
        // A result after the next assistant message is not the turn's: nothing moves.
        let late = History::new().calls(&[("a", "f")]).msg(U).msg(A).result(Some("a"), None);
        let p = late.pair(NameScope::LatestTurn);
        assert_eq!(results_first(&late.roles, &p.call_of), ((0..4).collect(), vec![]));
        assert!(!may_interject(&[A, T, T, U]));
    }

    #[test]
    fn calls_of_the_last_turn_are_pending() {
        let h = History::new().calls(&[("a", "f")]).msg(U).calls(&[("b", "f"), ("c", "f")]).result(Some("b"), None);
        let p = h.pair(NameScope::LatestTurn);
        let messages: Vec<usize> = h.calls.iter().map(|call| call.0).collect();
        assert_eq!(pending_calls(&h.roles, &messages, &p.unanswered), (vec![2], vec![0]));
        assert_eq!(pending_calls(&[], &[], &[]), (vec![], vec![]));
    }

    #[test]
    fn ids_with_lone_surrogates_pair_by_their_bytes() {
        // The surrogatepass encoding of "\ud800" is not UTF-8: it pairs like any id.
        let odd: &[u8] = b"\xed\xa0\x80";
        let calls = Calls { messages: &[0], ids: &[odd], names: &[&b"f"[..]] };
        let p = pair(&[A, T], &[None, Some(odd)], &[None, None], calls, NameScope::LatestTurn).unwrap();
        assert_eq!(p.call_of, vec![None, Some(0)]);
    }

    #[test]
    fn many_results_of_one_name_stay_linear() {
        let n = 50_000;
        let mut h = History::new().calls(&vec![("", "f"); n]);
        for _ in 0..n {
            h = h.result(None, Some("f"));
        }
        let p = h.pair(NameScope::LatestTurn);
        assert!(p.orphans.is_empty() && p.unanswered.is_empty());
    }

    /// Rolling back restores exactly the state before `begin`: the same answers follow.
    #[test]
    fn rollback_restores_the_state() {
        use proptest::prelude::*;
        let step = (0u8..3, 0u8..3, 0u8..3);
        proptest!(|(before in prop::collection::vec(step.clone(), 0..30), during in prop::collection::vec(step.clone(), 0..30), after in prop::collection::vec(step, 0..30), any_turn: bool)| {
            let scope = if any_turn { NameScope::AnyTurn } else { NameScope::LatestTurn };
            let ids: [&[u8]; 3] = [b"", b"a", b"b"];
            let names: [&[u8]; 3] = [b"f", b"g", b"h"];
            let apply = |p: &mut Pairer, steps: &[(u8, u8, u8)], key: &mut u64| -> Vec<Option<Answered>> {
                steps.iter().map(|&(kind, x, y)| {
                    *key += 1;
                    match kind {
                        0 => { p.open_turn(*key, [(ids[x as usize], names[y as usize]), (ids[y as usize], names[x as usize])]); None }
                        1 => p.answer(Link::of(Some(ids[x as usize]), None)),
                        _ => p.answer(Link::of(None, Some(names[y as usize]))),
                    }
                }).collect()
            };
            let mut reference = Pairer::new(scope);
            let mut tested = Pairer::new(scope);
            let (mut k1, mut k2) = (0, 0);
            apply(&mut reference, &before, &mut k1);
            apply(&mut tested, &before, &mut k2);
            tested.begin();
            let mut k3 = k2;
            apply(&mut tested, &during, &mut k3);
            tested.rollback();
            prop_assert_eq!(apply(&mut reference, &after, &mut k1), apply(&mut tested, &after, &mut k2));
            prop_assert_eq!(reference.unanswered(), tested.unanswered());
        });
    }
}
