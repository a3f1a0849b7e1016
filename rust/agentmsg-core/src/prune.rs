//! Budget pruning over plain arrays: which messages of a history fit in a token budget.
//!
//! Every message arrives as three numbers: its token count, its role and its *group*, the index
//! of the first message of the tool group it belongs to (an assistant message with tool calls
//! and the results answering them form one group; any other message is its own group, so its
//! group is its own index). Pruning keeps these rules:
//!
//! 1. system messages are kept (unless `keep_system` is off); if they alone exceed the budget,
//!    the oldest go first, the newest always stays, and `system_over_budget` is set;
//! 2. a group is kept or removed whole, so no tool result loses its call and no call its results;
//! 3. the kept non-system messages are a contiguous run ending at the newest one;
//! 4. the newest non-system group is always kept; if it alone is over budget, `over_budget` is
//!    set instead of returning nothing.
//!
//! [`select`] does this for a whole history in one backward pass that stops as soon as the
//! budget is spent; [`RollingBudget`] keeps running totals for a history that grows one message
//! at a time, so each push costs amortized O(1); [`RollingHistory`] adds the pairing of tool
//! results (see [`crate::pairs`]) so a memory keeps all its state but the messages here.

use std::collections::VecDeque;
use std::fmt;

use crate::pairs::{Link, NameScope, Pairer};
use crate::Role;

/// Input arrays that do not describe a history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PruneError {
    /// The arrays have different lengths.
    LengthMismatch { counts: usize, roles: usize, groups: usize },
    /// A message names a group that starts after it (groups start at their first message).
    GroupAfterMessage { index: usize, group: usize },
    /// A pushed message names a group that is not in the window (already pruned or never pushed).
    UnknownGroup { group: u64 },
}

impl fmt::Display for PruneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PruneError::LengthMismatch { counts, roles, groups } => write!(
                f,
                "{counts} counts, {roles} roles and {groups} groups: the arrays must have one entry per message"
            ),
            PruneError::GroupAfterMessage { index, group } => write!(
                f,
                "message {index} names group {group}, which starts after it (a group is the index of its first message)"
            ),
            PruneError::UnknownGroup { group } => {
                write!(f, "group {group} is not in the window (already pruned or never pushed)")
            }
        }
    }
}

impl std::error::Error for PruneError {}

/// What [`select`] keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Indices of the kept messages, ascending.
    pub kept: Vec<usize>,
    /// Sum of the kept messages' counts.
    pub total: u64,
    /// The kept messages exceed the budget (rule 1 or 4 forced it).
    pub over_budget: bool,
    /// The system messages alone exceed the budget; only the newest that fit (at least one) are kept.
    pub system_over_budget: bool,
}

/// Selects the messages to keep within `max_tokens` (see the module rules).
///
/// `start_on` makes the kept run begin at a message of that role; when no run within budget
/// does, the shortest run that does is kept (and `over_budget` set); when no run can begin
/// there at all, `start_on` is ignored. [`select_with`] adds the other [`Rules`].
///
/// ```
/// use agentmsg_core::{prune::select, Role};
/// let roles = [Role::System, Role::User, Role::Assistant, Role::Tool, Role::User];
/// // The assistant (2) called a tool answered by 3: both are group 2.
/// let s = select(&[5, 10, 10, 10, 10], &roles, &[0, 1, 2, 2, 4], 26, true, None).unwrap();
/// assert_eq!(s.kept, vec![0, 4]); // 2 and 3 leave together
/// ```
pub fn select(
    counts: &[u64],
    roles: &[Role],
    groups: &[usize],
    max_tokens: u64,
    keep_system: bool,
    start_on: Option<Role>,
) -> Result<Selection, PruneError> {
    let rules = Rules { keep_system, start_on: start_on.map(RoleSet::of), ..Rules::default() };
    select_with(counts, roles, groups, max_tokens, &rules)
}

/// A set of roles (for `start_on` and `end_on`, which LangChain lets name several types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoleSet(u8);

impl RoleSet {
    /// The set holding only `role`.
    pub fn of(role: Role) -> Self {
        RoleSet(1 << role as u8)
    }

    /// The set of these roles.
    pub fn any_of(roles: impl IntoIterator<Item = Role>) -> Self {
        RoleSet(roles.into_iter().fold(0, |bits, role| bits | 1 << role as u8))
    }

    pub fn contains(self, role: Role) -> bool {
        self.0 & (1 << role as u8) != 0
    }
}

/// Which end of the history the kept run holds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// The newest messages that fit (the run ends at the newest message, rule 3).
    #[default]
    Last,
    /// The oldest messages that fit: the run begins at the oldest non-system message, and the
    /// oldest group is always kept (rule 4 read from the other end).
    First,
}

/// The options of [`select_with`]; the default is [`select`] with `keep_system` off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rules {
    /// Rule 1: system messages are kept apart from the run.
    pub keep_system: bool,
    /// The run begins at one of these roles ([`Strategy::Last`] only; see [`select`]).
    pub start_on: Option<RoleSet>,
    /// The run ends at one of these roles, at a message after which no group continues; when no
    /// message can end it, no non-system message is kept (as LangChain's `end_on`). With
    /// [`Strategy::First`], when no run within budget ends there, the shortest one that does is
    /// kept, over budget.
    pub end_on: Option<RoleSet>,
    pub strategy: Strategy,
}

/// [`select`] with every rule: `strategy`, `start_on` and `end_on` as role sets.
///
/// ```
/// use agentmsg_core::{prune::{select_with, RoleSet, Rules, Strategy}, Role};
/// let roles = [Role::User, Role::Assistant, Role::User, Role::Assistant];
/// let first = Rules { strategy: Strategy::First, ..Rules::default() };
/// assert_eq!(select_with(&[1, 1, 1, 1], &roles, &[0, 1, 2, 3], 3, &first).unwrap().kept, vec![0, 1, 2]);
/// let ends_on_user = Rules { end_on: Some(RoleSet::of(Role::User)), ..Rules::default() };
/// assert_eq!(select_with(&[1, 1, 1, 1], &roles, &[0, 1, 2, 3], 2, &ends_on_user).unwrap().kept, vec![1, 2]);
/// ```
pub fn select_with(
    counts: &[u64],
    roles: &[Role],
    groups: &[usize],
    max_tokens: u64,
    rules: &Rules,
) -> Result<Selection, PruneError> {
    let n = counts.len();
    if roles.len() != n || groups.len() != n {
        return Err(PruneError::LengthMismatch { counts: n, roles: roles.len(), groups: groups.len() });
    }
    if let Some(index) = (0..n).find(|&i| groups[i] > i) {
        return Err(PruneError::GroupAfterMessage { index, group: groups[index] });
    }
    let keep_system = rules.keep_system;
    let is_system = |i: usize| keep_system && roles[i] == Role::System;
    let budget = u128::from(max_tokens);
    let systems: Vec<usize> = (0..n).filter(|&i| is_system(i)).collect();
    let share = system_share(systems.iter().map(|&i| counts[i]), max_tokens);
    let first_kept_system = systems.get(share.first_kept).copied().unwrap_or(0);
    let system_over_budget = share.over_budget;
    // None when the kept systems alone are over: then no run fits and only the newest is kept.
    let remaining = budget.checked_sub(share.used);

    let run = History { counts, roles, groups }.choose_run(&is_system, remaining, rules);
    let mut kept = Vec::new();
    let mut total = 0u128;
    for (i, &count) in counts.iter().enumerate() {
        let keep = if is_system(i) {
            i >= first_kept_system
        } else {
            run.is_some_and(|(first, last)| (first..=last).contains(&i))
        };
        if keep {
            kept.push(i);
            total += u128::from(count);
        }
    }
    Ok(Selection { kept, total: saturate(total), over_budget: total > budget, system_over_budget })
}

/// A history's columns, one entry per message: token counts, roles, and tool groups (the index
/// of each message's group start).
struct History<'a> {
    counts: &'a [u64],
    roles: &'a [Role],
    groups: &'a [usize],
}

impl History<'_> {
    /// The kept run of non-system messages, `(first, last)` inclusive, or None for an empty one.
    fn choose_run(&self, is_system: &dyn Fn(usize) -> bool, remaining: Option<u128>, rules: &Rules) -> Option<(usize, usize)> {
        match rules.strategy {
            Strategy::Last => {
                let last = self.last_candidate(is_system, rules.end_on)?;
                let in_run = |i: usize| i <= last && !is_system(i);
                let start_on = rules.start_on;
                let first = self
                    .choose_cut(&in_run, remaining, start_on)
                    .or_else(|| start_on.and_then(|_| self.choose_cut(&in_run, remaining, None)))?;
                Some((first, last))
            }
            Strategy::First => {
                let first = (0..self.counts.len()).find(|&i| !is_system(i))?;
                let last = self.choose_end(is_system, remaining, rules.end_on)?;
                Some((first, last))
            }
        }
    }

    /// [`Strategy::Last`]'s end: the newest candidate, or with `end_on` the newest clean end of
    /// one of its roles (see [`History::newest_end`]).
    fn last_candidate(&self, is_system: &dyn Fn(usize) -> bool, end_on: Option<RoleSet>) -> Option<usize> {
        match end_on {
            None => (0..self.roles.len()).rev().find(|&i| !is_system(i)),
            Some(end_on) => self.newest_end(is_system, end_on),
        }
    }

    /// The newest candidate of a role in `end_on` that no group continues past.
    fn newest_end(&self, is_system: &dyn Fn(usize) -> bool, end_on: RoleSet) -> Option<usize> {
        // min_group: the oldest group a candidate after `j` belongs to; `j` ends a run cleanly
        // when that group starts after it.
        let mut min_group = usize::MAX;
        for j in (0..self.roles.len()).rev() {
            if is_system(j) {
                continue;
            }
            if min_group > j && end_on.contains(self.roles[j]) {
                return Some(j);
            }
            min_group = min_group.min(self.groups[j]);
        }
        None
    }

    /// [`Strategy::First`]'s end: the newest clean end (see [`History::newest_end`]) whose run
    /// from the oldest candidate fits in `remaining`, else the oldest clean end (over budget).
    /// Without `end_on`, a history whose groups never close keeps every candidate.
    fn choose_end(&self, is_system: &dyn Fn(usize) -> bool, remaining: Option<u128>, end_on: Option<RoleSet>) -> Option<usize> {
        let n = self.counts.len();
        // The newest member of each group, so a forward walk knows when the groups it opened close.
        let mut group_end: Vec<usize> = (0..n).collect();
        for j in (0..n).filter(|&j| !is_system(j)) {
            group_end[self.groups[j]] = j;
        }
        let mut reach = 0usize; // the newest member of any group a candidate so far belongs to
        let ends = (0..n).filter(|&j| !is_system(j)).map(|j| {
            reach = reach.max(group_end[self.groups[j]]);
            (j, reach <= j && end_on.is_none_or(|roles_ok| roles_ok.contains(self.roles[j])))
        });
        self.farthest_fitting(ends, remaining).or_else(|| {
            if end_on.is_some() {
                return None;
            }
            (0..n).rev().find(|&j| !is_system(j))
        })
    }

    /// [`Strategy::Last`]'s start: the smallest valid cut whose run fits in `remaining`, else the
    /// largest valid cut (the newest group alone, rule 4). `None` if there is no candidate or,
    /// with `start_on`, no valid cut begins at that role.
    fn choose_cut(&self, is_candidate: &dyn Fn(usize) -> bool, remaining: Option<u128>, start_on: Option<RoleSet>) -> Option<usize> {
        let starts_on = |j: usize| start_on.is_none_or(|set| set.contains(self.roles[j]));
        let cuts = Cuts::new(self.groups, is_candidate).map(|(j, splits_nothing)| (j, splits_nothing && starts_on(j)));
        // A group whose start is not a candidate (a malformed group pointing at a system message)
        // cannot be cut; keeping every candidate is then the only valid run.
        self.farthest_fitting(cuts, remaining).or_else(|| {
            let first = (0..self.counts.len()).find(|&j| is_candidate(j))?;
            starts_on(first).then_some(first)
        })
    }

    /// Walking a run's possible bounds from its fixed end outward, `(index, valid)`: the farthest
    /// valid bound whose run fits in `remaining`, else the nearest valid one (over budget).
    fn farthest_fitting(&self, bounds: impl Iterator<Item = (usize, bool)>, remaining: Option<u128>) -> Option<usize> {
        let mut total = 0u128;
        let mut nearest_valid = None;
        let mut farthest_fitting = None;
        for (j, valid) in bounds {
            total += u128::from(self.counts[j]);
            let fits = remaining.is_some_and(|r| total <= r);
            if !fits && nearest_valid.is_some() {
                break; // runs only grow from here
            }
            if valid {
                nearest_valid.get_or_insert(j);
                if fits {
                    farthest_fitting = Some(j);
                }
            }
        }
        farthest_fitting.or(nearest_valid)
    }
}

/// A u128 sum as u64, saturating (only sums past 2^64 tokens differ).
fn saturate(sum: u128) -> u64 {
    u64::try_from(sum).unwrap_or(u64::MAX)
}

/// Rule 1 for a list of system message counts (oldest first): how many of the oldest go and
/// how many tokens the kept ones take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SystemShare {
    /// Index (in the given list) of the oldest kept system message.
    pub first_kept: usize,
    /// Tokens of the kept ones (may exceed the budget: the newest always stays).
    pub used: u128,
    /// The system messages together exceed the budget, so the oldest were removed.
    pub over_budget: bool,
}

/// Rule 1: every system message is kept when they fit together; else the newest that fit, and
/// always at least the newest one.
///
/// ```
/// use agentmsg_core::prune::system_share;
/// let share = system_share([6, 3, 3], 10);
/// assert_eq!((share.first_kept, share.used, share.over_budget), (1, 6, true));
/// ```
pub fn system_share(counts: impl IntoIterator<Item = u64>, max_tokens: u64) -> SystemShare {
    // Sums are u128: no sum of u64 counts can overflow it.
    let counts: Vec<u64> = counts.into_iter().collect();
    let budget = u128::from(max_tokens);
    let total: u128 = counts.iter().map(|&c| u128::from(c)).sum();
    if total <= budget {
        return SystemShare { first_kept: 0, used: total, over_budget: false };
    }
    let mut first_kept = counts.len();
    let mut used = 0u128;
    for (i, &count) in counts.iter().enumerate().rev() {
        if first_kept < counts.len() && used + u128::from(count) > budget {
            break;
        }
        used += u128::from(count);
        first_kept = i;
    }
    SystemShare { first_kept, used, over_budget: true }
}

/// The cut check: walking the candidates (non-system messages) from the newest back, whether a
/// kept run starting at each splits no tool group. A cut at `j` is valid exactly when no
/// candidate at or after `j` belongs to a group that starts before `j`.
struct Cuts<'a> {
    groups: &'a [usize],
    is_candidate: &'a dyn Fn(usize) -> bool,
    next: usize,
    min_group: usize,
}

impl<'a> Cuts<'a> {
    fn new(groups: &'a [usize], is_candidate: &'a dyn Fn(usize) -> bool) -> Self {
        Cuts { groups, is_candidate, next: groups.len(), min_group: usize::MAX }
    }
}

impl Iterator for Cuts<'_> {
    /// (candidate index, a run starting there splits no group)
    type Item = (usize, bool);

    fn next(&mut self) -> Option<(usize, bool)> {
        while self.next > 0 {
            self.next -= 1;
            let j = self.next;
            if (self.is_candidate)(j) {
                self.min_group = self.min_group.min(self.groups[j]);
                return Some((j, self.min_group >= j));
            }
        }
        None
    }
}

/// For each message, whether a kept run of non-system messages may start there without
/// splitting a tool group (`false` for system messages when `keep_system`). The check
/// compaction uses to place the end of a summarized span.
///
/// ```
/// use agentmsg_core::{prune::valid_cuts, Role};
/// // An assistant call at 1 answered at 3, a user between: no run may start at 2 or 3.
/// let roles = [Role::User, Role::Assistant, Role::User, Role::Tool];
/// assert_eq!(valid_cuts(&roles, &[0, 1, 2, 1], true), vec![true, true, false, false]);
/// ```
pub fn valid_cuts(roles: &[Role], groups: &[usize], keep_system: bool) -> Vec<bool> {
    let is_candidate = |i: usize| !(keep_system && roles.get(i) == Some(&Role::System));
    let mut valid = vec![false; groups.len()];
    for (j, ok) in Cuts::new(groups, &is_candidate) {
        valid[j] = ok;
    }
    valid
}

/// Whether a window of the newest messages already decides [`select_with`] (with
/// [`Strategy::Last`]): the run's end is in it, its candidates up to that end exceed
/// `remaining`, and some run in it splits no group (and begins at `start_on`). `trim` grows its
/// window until this holds (and no result in it lacks its call).
pub fn window_decides(
    counts: &[u64],
    roles: &[Role],
    groups: &[usize],
    remaining: u128,
    rules: &Rules,
) -> bool {
    let keep_system = rules.keep_system;
    let is_system = |i: usize| keep_system && roles.get(i) == Some(&Role::System);
    let Some(last) = (History { counts, roles, groups }).last_candidate(&is_system, rules.end_on) else { return false };
    let in_run = |i: usize| i <= last && !is_system(i);
    let counted: u128 = (0..=last).filter(|&i| in_run(i)).map(|i| u128::from(counts[i])).sum();
    counted > remaining
        && Cuts::new(groups, &in_run)
            .any(|(j, ok)| ok && rules.start_on.is_none_or(|set| set.contains(roles[j])))
}

/// What one [`RollingBudget::push`] removed, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    /// How many of the oldest kept system messages to remove.
    pub systems: usize,
    /// How many of the oldest kept non-system messages to remove.
    pub messages: usize,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    count: u64,
    /// Sequence number of the first message of this message's group.
    group: u64,
    /// For a group's first message: the sequence number of the group's newest member.
    last: u64,
}

/// One change to undo (see [`RollingBudget::begin`]).
#[derive(Debug, Clone)]
enum Undo {
    PushedSystem,
    /// An entry pushed at the back; when it joined a group, the head's sequence number and
    /// its previous `last`.
    PushedEntry { joined: Option<(u64, u64)> },
    PoppedSystem(u64),
    PoppedEntry(Entry),
    Cleared { systems: VecDeque<u64>, entries: VecDeque<Entry>, front_seq: u64 },
}

/// The scalars restored by a rollback.
#[derive(Debug, Clone, Copy)]
struct Totals {
    system_total: u128,
    systems_pushed: u128,
    front_seq: u64,
    total: u128,
}

/// Running totals of a history that grows at the end and is pruned at the front.
///
/// Non-system messages get sequence numbers 0, 1, 2, ... in push order; a message joins a group
/// by naming the sequence number of the group's first message. Each push returns how many
/// messages to remove from the front; every message is pushed and removed once, so a push is
/// amortized O(1). Between [`begin`](Self::begin) and [`commit`](Self::commit) every change is
/// journaled, so [`rollback`](Self::rollback) restores the state in time proportional to the
/// changes (an all-or-nothing add costs no copy of the history).
#[derive(Debug, Clone)]
pub struct RollingBudget {
    max_tokens: u64,
    keep_system: bool,
    systems: VecDeque<u64>,
    system_total: u128,
    /// Sum of every system message pushed since the last clear, kept or not.
    systems_pushed: u128,
    entries: VecDeque<Entry>,
    front_seq: u64,
    total: u128,
    journal: Option<(Totals, Vec<Undo>)>,
}

impl RollingBudget {
    /// An empty history with a budget of `max_tokens`.
    pub fn new(max_tokens: u64, keep_system: bool) -> Self {
        RollingBudget {
            max_tokens,
            keep_system,
            systems: VecDeque::new(),
            system_total: 0,
            systems_pushed: 0,
            entries: VecDeque::new(),
            front_seq: 0,
            total: 0,
            journal: None,
        }
    }

    /// The budget.
    pub fn max_tokens(&self) -> u64 {
        self.max_tokens
    }

    /// Sequence number the next non-system message will get.
    pub fn next_seq(&self) -> u64 {
        self.front_seq + self.entries.len() as u64
    }

    /// Sequence number of the oldest kept non-system message (== `next_seq` when none).
    pub fn front_seq(&self) -> u64 {
        self.front_seq
    }

    /// Sum of the kept messages' counts.
    pub fn total(&self) -> u64 {
        saturate(self.sum())
    }

    fn sum(&self) -> u128 {
        self.system_total + self.total
    }

    /// The kept system messages' counts, oldest first.
    pub fn system_counts(&self) -> impl Iterator<Item = u64> + '_ {
        self.systems.iter().copied()
    }

    /// The kept non-system messages' counts, oldest first.
    pub fn counts(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().map(|entry| entry.count)
    }

    /// The kept messages exceed the budget.
    pub fn over_budget(&self) -> bool {
        self.sum() > u128::from(self.max_tokens)
    }

    /// The system messages pushed since the last clear exceed the budget by themselves, so the
    /// oldest of them were removed (what [`select`] reports for the same history).
    pub fn system_over_budget(&self) -> bool {
        self.systems_pushed > u128::from(self.max_tokens)
    }

    fn totals(&self) -> Totals {
        Totals {
            system_total: self.system_total,
            systems_pushed: self.systems_pushed,
            front_seq: self.front_seq,
            total: self.total,
        }
    }

    fn record(&mut self, undo: impl FnOnce() -> Undo) {
        if let Some((_, journal)) = &mut self.journal {
            journal.push(undo());
        }
    }

    /// Starts journaling changes, so [`rollback`](Self::rollback) can restore this state.
    pub fn begin(&mut self) {
        self.journal = Some((self.totals(), Vec::new()));
    }

    /// Keeps the changes since [`begin`](Self::begin) and stops journaling.
    pub fn commit(&mut self) {
        self.journal = None;
    }

    /// Undoes every change since [`begin`](Self::begin) (nothing if not journaling).
    pub fn rollback(&mut self) {
        let Some((totals, journal)) = self.journal.take() else { return };
        for undo in journal.into_iter().rev() {
            match undo {
                Undo::PushedSystem => {
                    self.systems.pop_back();
                }
                Undo::PushedEntry { joined } => {
                    self.entries.pop_back();
                    if let Some((head, last)) = joined {
                        if let Some(entry) = self.entries.get_mut((head - self.front_seq) as usize) {
                            entry.last = last;
                        }
                    }
                }
                Undo::PoppedSystem(count) => self.systems.push_front(count),
                Undo::PoppedEntry(entry) => {
                    self.entries.push_front(entry);
                    self.front_seq -= 1;
                }
                Undo::Cleared { systems, entries, front_seq } => {
                    self.systems = systems;
                    self.entries = entries;
                    self.front_seq = front_seq;
                }
            }
        }
        let Totals { system_total, systems_pushed, front_seq, total } = totals;
        (self.system_total, self.systems_pushed, self.front_seq, self.total) = (system_total, systems_pushed, front_seq, total);
    }

    /// Forgets everything (sequence numbers keep counting up).
    pub fn clear(&mut self) {
        let next_seq = self.next_seq();
        let systems = std::mem::take(&mut self.systems);
        let entries = std::mem::take(&mut self.entries);
        let front_seq = self.front_seq;
        self.record(|| Undo::Cleared { systems, entries, front_seq });
        self.front_seq = next_seq;
        self.system_total = 0;
        self.systems_pushed = 0;
        self.total = 0;
    }

    /// Adds a message and prunes; `group` is the sequence number of the first message of the
    /// tool group it joins (`None`: it starts its own group). System messages take no group.
    pub fn push(&mut self, count: u64, role: Role, group: Option<u64>) -> Result<Pruned, PruneError> {
        self.push_unpruned(count, role, group)?;
        Ok(self.prune())
    }

    /// [`push`](Self::push) without pruning, for a caller that may shrink the history some other
    /// way first (compaction) and then calls [`prune`](Self::prune).
    pub fn push_unpruned(&mut self, count: u64, role: Role, group: Option<u64>) -> Result<(), PruneError> {
        if self.keep_system && role == Role::System {
            self.systems.push_back(count);
            self.system_total += u128::from(count);
            self.systems_pushed += u128::from(count);
            self.record(|| Undo::PushedSystem);
            return Ok(());
        }
        let seq = self.next_seq();
        let (group, joined) = match group {
            None => (seq, None),
            Some(g) if g == seq => (seq, None),
            Some(g) => {
                let head = g
                    .checked_sub(self.front_seq)
                    .filter(|&offset| offset < self.entries.len() as u64)
                    .ok_or(PruneError::UnknownGroup { group: g })?;
                // Only a group's first message leads it; joining a member would chain groups.
                let head_entry = &mut self.entries[head as usize];
                if head_entry.group != g {
                    return Err(PruneError::UnknownGroup { group: g });
                }
                let previous_last = head_entry.last;
                head_entry.last = seq;
                (g, Some((g, previous_last)))
            }
        };
        self.entries.push_back(Entry { count, group, last: seq });
        self.total += u128::from(count);
        self.record(|| Undo::PushedEntry { joined });
        Ok(())
    }

    /// Removes the oldest messages while over budget, by the module rules.
    pub fn prune(&mut self) -> Pruned {
        let mut pruned = Pruned::default();
        // Rule 1: while the systems alone are over, the oldest go (the newest always stays).
        while self.system_total > u128::from(self.max_tokens) && self.systems.len() > 1 {
            let Some(count) = self.systems.pop_front() else { break };
            self.system_total -= u128::from(count);
            self.record(|| Undo::PoppedSystem(count));
            pruned.systems += 1;
        }
        while self.over_budget() {
            let Some(end) = self.front_group_end() else { break };
            while self.front_seq < end {
                let Some(entry) = self.entries.pop_front() else { break };
                self.total -= u128::from(entry.count);
                self.front_seq += 1;
                pruned.messages += 1;
                self.record(|| Undo::PoppedEntry(entry));
            }
        }
        pruned
    }

    /// The sequence number just past the front group (and every group interleaved with it), or
    /// `None` when that would remove the newest message (rule 4).
    fn front_group_end(&self) -> Option<u64> {
        let newest = self.next_seq().checked_sub(1)?;
        if self.entries.is_empty() {
            return None;
        }
        let mut end = self.front_seq; // last seq to remove, inclusive
        let mut seq = self.front_seq;
        while seq <= end {
            let entry = &self.entries[(seq - self.front_seq) as usize];
            let head = &self.entries[(entry.group - self.front_seq) as usize];
            end = end.max(head.last);
            seq += 1;
        }
        (end < newest).then_some(end + 1)
    }
}

/// What [`RollingHistory::push`] did with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Added (with the messages the push pruned, none when not pruning).
    Added(Pruned),
    /// A tool result whose call was already pruned: keeping it would orphan it (rule 2), so it
    /// was not added.
    LateResult,
}

/// The whole state of a memory but its messages: the rolling budget (counts, groups, totals)
/// and the pairing of tool results with calls, under one journal.
#[derive(Debug)]
pub struct RollingHistory {
    budget: RollingBudget,
    pairer: Pairer,
    /// Pairers replaced by [`clear`](Self::clear) during a transaction, oldest first.
    cleared_pairers: Vec<Pairer>,
}

impl RollingHistory {
    /// An empty history with a budget of `max_tokens`; results pair by the library's rule.
    pub fn new(max_tokens: u64, keep_system: bool) -> Self {
        RollingHistory {
            budget: RollingBudget::new(max_tokens, keep_system),
            pairer: Pairer::new(NameScope::LatestTurn),
            cleared_pairers: Vec::new(),
        }
    }

    /// The running totals.
    pub fn budget(&self) -> &RollingBudget {
        &self.budget
    }

    /// Adds a message: an assistant's `calls` (`(id, name)`) open a turn, a tool result pairs by
    /// `link` and joins its call's group. `prune: false` leaves pruning to [`prune`](Self::prune).
    pub fn push<'a>(
        &mut self,
        count: u64,
        role: Role,
        calls: impl IntoIterator<Item = (&'a str, &'a str)>,
        link: Link<'_>,
        prune: bool,
    ) -> Result<Pushed, PruneError> {
        let mut group = None;
        match role {
            Role::Tool => {
                if let Some(answered) = self.pairer.answer(link) {
                    if answered.message < self.budget.front_seq() {
                        return Ok(Pushed::LateResult);
                    }
                    group = Some(answered.message);
                }
            }
            Role::Assistant => self.pairer.open_turn(self.budget.next_seq(), calls),
            Role::System | Role::User => {}
        }
        self.budget.push_unpruned(count, role, group)?;
        Ok(Pushed::Added(if prune { self.budget.prune() } else { Pruned::default() }))
    }

    /// Removes the oldest messages while over budget.
    pub fn prune(&mut self) -> Pruned {
        self.budget.prune()
    }

    /// Forgets every message and pairing (for a history rebuilt after compaction).
    pub fn clear(&mut self) {
        self.budget.clear();
        let previous = std::mem::replace(&mut self.pairer, Pairer::new(NameScope::LatestTurn));
        if self.in_transaction() {
            self.cleared_pairers.push(previous);
            self.pairer.begin();
        }
    }

    fn in_transaction(&self) -> bool {
        self.budget.journal.is_some()
    }

    /// Starts a transaction: [`rollback`](Self::rollback) restores this state.
    pub fn begin(&mut self) {
        self.budget.begin();
        self.pairer.begin();
        self.cleared_pairers.clear();
    }

    /// Keeps every change since [`begin`](Self::begin).
    pub fn commit(&mut self) {
        self.budget.commit();
        self.pairer.commit();
        self.cleared_pairers.clear();
    }

    /// Restores the state at [`begin`](Self::begin).
    pub fn rollback(&mut self) {
        self.budget.rollback();
        self.pairer.rollback();
        while let Some(mut previous) = self.cleared_pairers.pop() {
            previous.rollback();
            self.pairer = previous;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Role::{Assistant as A, System as S, Tool as T, User as U};

    fn kept(counts: &[u64], roles: &[Role], groups: &[usize], max: u64) -> Selection {
        select(counts, roles, groups, max, true, None).unwrap()
    }

    #[test]
    fn everything_fits() {
        let s = kept(&[1, 1, 1], &[S, U, A], &[0, 1, 2], 10);
        assert_eq!(s.kept, vec![0, 1, 2]);
        assert_eq!(s.total, 3);
        assert!(!s.over_budget);
    }

    #[test]
    fn oldest_non_system_go_first() {
        let s = kept(&[2, 3, 3, 3], &[S, U, A, U], &[0, 1, 2, 3], 8);
        assert_eq!(s.kept, vec![0, 2, 3]);
        assert_eq!(s.total, 8);
    }

    #[test]
    fn tool_group_leaves_whole() {
        // U, A(call), T, T, U: the budget fits only the last two, but 3 needs 1 and 2.
        let s = kept(&[1, 5, 5, 5, 5], &[U, A, T, T, U], &[0, 1, 1, 1, 4], 10);
        assert_eq!(s.kept, vec![4]);
    }

    #[test]
    fn interleaved_group_keeps_span() {
        // A(call) at 0, a user at 1, its result at 2: a cut at 1 or 2 would split the group.
        let s = kept(&[5, 1, 1], &[A, U, T], &[0, 1, 0], 3);
        assert_eq!(s.kept, vec![0, 1, 2]);
        assert!(s.over_budget);
    }

    #[test]
    fn newest_kept_when_alone_over_budget() {
        let s = kept(&[1, 1, 50], &[S, U, U], &[0, 1, 2], 10);
        assert_eq!(s.kept, vec![0, 2]);
        assert!(s.over_budget);
        assert!(!s.system_over_budget);
    }

    #[test]
    fn systems_over_budget_keep_newest_system() {
        let s = kept(&[6, 6, 1], &[S, S, U], &[0, 1, 2], 10);
        assert_eq!(s.kept, vec![1, 2]);
        assert!(s.system_over_budget && !s.over_budget);
        let s = kept(&[6, 11, 1], &[S, S, U], &[0, 1, 2], 10);
        assert_eq!(s.kept, vec![1, 2]);
        assert!(s.system_over_budget && s.over_budget);
        // The newest systems that fit stay: 6 + 3 + 3 > 10, so the 6 goes.
        let s = kept(&[6, 3, 3], &[S, S, S], &[0, 1, 2], 10);
        assert_eq!(s.kept, vec![1, 2]);
    }

    #[test]
    fn keep_system_off_prunes_systems() {
        let s = select(&[6, 1, 1], &[S, U, A], &[0, 1, 2], 3, false, None).unwrap();
        assert_eq!(s.kept, vec![1, 2]);
    }

    #[test]
    fn start_on_user() {
        let roles = [S, U, A, T, A, U, A];
        let groups = [0, 1, 2, 2, 4, 5, 6];
        let counts = [1, 1, 1, 1, 1, 1, 1];
        let s = select(&counts, &roles, &groups, 5, true, Some(U)).unwrap();
        assert_eq!(s.kept, vec![0, 5, 6]);
        // Budget for 2 non-system messages starting at a user: [5, 6].
        let s = select(&counts, &roles, &groups, 3, true, Some(U)).unwrap();
        assert_eq!(s.kept, vec![0, 5, 6]);
        // Only one fits; the shortest run starting at a user is kept, over budget.
        let s = select(&counts, &roles, &groups, 2, true, Some(U)).unwrap();
        assert_eq!(s.kept, vec![0, 5, 6]);
        assert!(s.over_budget);
        // No user at all: start_on is ignored.
        let s = select(&[1, 1], &[A, A], &[0, 1], 1, true, Some(U)).unwrap();
        assert_eq!(s.kept, vec![1]);
    }

    fn with(counts: &[u64], roles: &[Role], groups: &[usize], max: u64, rules: Rules) -> Vec<usize> {
        select_with(counts, roles, groups, max, &rules).unwrap().kept
    }

    #[test]
    fn strategy_first_keeps_the_oldest_that_fit() {
        let first = Rules { keep_system: true, strategy: Strategy::First, ..Rules::default() };
        // S, U, A(call), T, U: the group 2..=3 leaves whole.
        let roles = [S, U, A, T, U];
        let groups = [0, 1, 2, 2, 4];
        assert_eq!(with(&[1, 1, 1, 1, 1], &roles, &groups, 3, first), vec![0, 1]);
        assert_eq!(with(&[1, 1, 1, 1, 1], &roles, &groups, 4, first), vec![0, 1, 2, 3]);
        // The oldest group alone over budget: kept, reported.
        let s = select_with(&[1, 9, 1], &[S, U, U], &[0, 1, 2], 5, &first).unwrap();
        assert_eq!(s.kept, vec![0, 1]);
        assert!(s.over_budget);
    }

    #[test]
    fn end_on_ends_the_run_at_a_clean_end_of_that_role() {
        let users = Some(RoleSet::of(U));
        let last = Rules { keep_system: true, end_on: users, ..Rules::default() };
        let roles = [S, U, A, U, A, T, A];
        let groups = [0, 1, 2, 3, 4, 4, 6];
        assert_eq!(with(&[1; 7], &roles, &groups, 10, last), vec![0, 1, 2, 3]);
        assert_eq!(with(&[1; 7], &roles, &groups, 2, last), vec![0, 3]);
        // An assistant whose call is answered after it is no clean end.
        let ai = Rules { end_on: Some(RoleSet::of(A)), ..Rules::default() };
        assert_eq!(with(&[1; 4], &[U, A, T, U], &[0, 1, 1, 3], 10, ai), Vec::<usize>::new());
        assert_eq!(with(&[1; 4], &[U, A, T, A], &[0, 1, 1, 3], 10, ai), vec![0, 1, 2, 3]);
        // No message can end the run: only the systems stay.
        assert_eq!(with(&[1; 3], &[S, A, A], &[0, 1, 2], 10, last), vec![0]);
        let first = Rules { strategy: Strategy::First, end_on: users, ..Rules::default() };
        assert_eq!(with(&[1; 4], &[U, A, U, A], &[0, 1, 2, 3], 2, first), vec![0]);
        // None ending at a user fits: the shortest that does is kept, over budget.
        let s = select_with(&[5, 1, 1], &[A, U, U], &[0, 1, 2], 3, &first).unwrap();
        assert_eq!((s.kept, s.over_budget), (vec![0, 1], true));
        // Several roles.
        let either = Rules { end_on: Some(RoleSet::any_of([U, T])), ..Rules::default() };
        assert_eq!(with(&[1; 4], &[U, A, T, A], &[0, 1, 1, 3], 10, either), vec![0, 1, 2]);
    }

    #[test]
    fn window_decides_with_end_on() {
        let rules = Rules { end_on: Some(RoleSet::of(U)), ..Rules::default() };
        // The end (a user) is at 1: only 0..=1 count toward the budget.
        assert!(!window_decides(&[1, 1, 9], &[U, U, A], &[0, 1, 2], 2, &rules));
        assert!(window_decides(&[1, 2, 9], &[U, U, A], &[0, 1, 2], 2, &rules));
        assert!(!window_decides(&[9], &[A], &[0], 2, &rules));
    }

    /// `select_with` matches a brute force over every run: the best run is the longest (or, for
    /// no fitting run, the shortest) that splits no group and meets the role rules.
    #[test]
    fn select_with_matches_brute_force() {
        use proptest::prelude::*;
        let history = prop::collection::vec((0u64..6, 1u8..4, any::<bool>()), 0..14);
        proptest!(|(raw in history, max in 0u64..30, first in any::<bool>(),
                    start in prop::option::of(1u8..4), end in prop::option::of(1u8..4))| {
            let (roles, groups) = shape(&raw);
            let counts: Vec<u64> = raw.iter().map(|r| r.0).collect();
            let strategy = if first { super::Strategy::First } else { super::Strategy::Last };
            let start_on = if first { None } else { start.map(|c| RoleSet::of(Role::from_code(c).unwrap())) };
            let end_on = end.map(|c| RoleSet::of(Role::from_code(c).unwrap()));
            let rules = Rules { keep_system: false, start_on, end_on, strategy };
            let got = select_with(&counts, &roles, &groups, max, &rules).unwrap().kept;
            prop_assert_eq!(got, brute_force(&counts, &roles, &groups, max, &rules));
        });
    }

    /// Roles and groups of a generated history: results follow their call; a result joins the
    /// newest call when asked to, and one that does not closes the group.
    fn shape(raw: &[(u64, u8, bool)]) -> (Vec<Role>, Vec<usize>) {
        let mut roles = Vec::new();
        let mut groups = Vec::new();
        let mut open: Option<usize> = None;
        for (i, &(_, code, joins)) in raw.iter().enumerate() {
            let role = Role::from_code(code).unwrap();
            groups.push(match (role, open) {
                (Role::Tool, Some(g)) if joins => g,
                _ => i,
            });
            open = match role {
                Role::Assistant => Some(i),
                Role::Tool if joins => open,
                _ => None,
            };
            roles.push(role);
        }
        (roles, groups)
    }

    fn brute_force(counts: &[u64], roles: &[Role], groups: &[usize], max: u64, rules: &Rules) -> Vec<usize> {
        let n = counts.len();
        let whole = |a: usize, b: usize| (0..n).all(|k| (a..=b).contains(&k) == (a..=b).contains(&groups[k]));
        let ends_ok = |b: usize| rules.end_on.is_none_or(|set| set.contains(roles[b]));
        let starts_ok = |a: usize| rules.start_on.is_none_or(|set| set.contains(roles[a]));
        let sum = |a: usize, b: usize| counts[a..=b].iter().sum::<u64>();
        let runs: Vec<(usize, usize)> = match rules.strategy {
            Strategy::Last => {
                let Some(b) = (0..n).rev().find(|&b| ends_ok(b) && (b + 1..n).all(|k| groups[k] > b)) else {
                    return vec![];
                };
                let mut runs: Vec<(usize, usize)> = (0..=b).filter(|&a| whole(a, b)).map(|a| (a, b)).collect();
                if runs.iter().any(|&(a, _)| starts_ok(a)) {
                    runs.retain(|&(a, _)| starts_ok(a));
                }
                runs // oldest start first
            }
            Strategy::First => {
                if n == 0 {
                    return vec![];
                }
                let mut runs: Vec<(usize, usize)> =
                    (0..n).rev().filter(|&b| ends_ok(b) && whole(0, b)).map(|b| (0, b)).collect();
                if runs.is_empty() && rules.end_on.is_none() {
                    runs.push((0, n - 1));
                }
                runs // newest end first
            }
        };
        let chosen = runs.iter().find(|&&(a, b)| sum(a, b) <= max).or(runs.last());
        chosen.map(|&(a, b)| (a..=b).collect()).unwrap_or_default()
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            select(&[1], &[U, U], &[0], 1, true, None),
            Err(PruneError::LengthMismatch { .. })
        ));
        assert_eq!(
            select(&[1, 1], &[U, U], &[0, 5], 1, true, None),
            Err(PruneError::GroupAfterMessage { index: 1, group: 5 })
        );
        assert_eq!(select(&[], &[], &[], 0, true, None).unwrap().kept, Vec::<usize>::new());
    }

    #[test]
    fn huge_counts_saturate_instead_of_overflowing() {
        let s = select(&[u64::MAX, u64::MAX], &[S, U], &[0, 1], 10, true, None).unwrap();
        assert_eq!(s.kept, vec![0, 1]);
        assert!(s.over_budget && s.system_over_budget && s.total == u64::MAX);
        let mut b = RollingBudget::new(10, true);
        b.push(u64::MAX, U, None).unwrap();
        assert_eq!(b.push(u64::MAX, U, None).unwrap(), Pruned { systems: 0, messages: 1 });
        assert_eq!(b.total(), u64::MAX);
    }

    #[test]
    fn rolling_prunes_groups_and_keeps_newest() {
        let mut b = RollingBudget::new(10, true);
        assert_eq!(b.push(2, S, None).unwrap(), Pruned::default());
        b.push(3, U, None).unwrap(); // seq 0
        b.push(3, A, None).unwrap(); // seq 1, a call
        assert_eq!(b.push(3, T, Some(1)).unwrap(), Pruned { systems: 0, messages: 1 });
        assert_eq!(b.front_seq(), 1);
        // A 4-token user: the group 1..=2 must leave whole.
        assert_eq!(b.push(4, U, None).unwrap(), Pruned { systems: 0, messages: 2 });
        assert_eq!(b.total(), 6);
        // Newest alone over budget: kept, reported.
        assert_eq!(b.push(50, U, None).unwrap(), Pruned { systems: 0, messages: 1 });
        assert!(b.over_budget());
        assert_eq!(b.push(1, T, Some(0)), Err(PruneError::UnknownGroup { group: 0 }));
    }

    #[test]
    fn rolling_systems_over_budget() {
        let mut b = RollingBudget::new(10, true);
        b.push(8, S, None).unwrap();
        assert_eq!(b.push(8, S, None).unwrap(), Pruned { systems: 1, messages: 0 });
        assert!(b.system_over_budget() && !b.over_budget() && b.total() == 8);
        b.clear();
        assert!(!b.system_over_budget());
    }

    /// The rolling budget's totals are right after every push, and it ends keeping exactly what
    /// `select` keeps on the whole history when no system message had to go.
    #[test]
    fn rolling_matches_select() {
        use proptest::prelude::*;
        let history = prop::collection::vec((0u64..20, 0u8..4, any::<bool>()), 0..40);
        proptest!(|(raw in history, max in 0u64..60)| {
            let (roles, groups) = shape(&raw);
            let counts: Vec<u64> = raw.iter().map(|r| r.0).collect();
            let mut budget = RollingBudget::new(max, true);
            let mut seq_of = vec![0u64; raw.len()];
            let mut kept_systems: VecDeque<usize> = VecDeque::new();
            let mut kept: VecDeque<usize> = VecDeque::new();
            for i in 0..raw.len() {
                let group = (groups[i] != i).then(|| seq_of[groups[i]]);
                if roles[i] != Role::System { seq_of[i] = budget.next_seq(); }
                // A group whose head was pruned is closed: the result starts its own group.
                let group = group.filter(|&g| g >= budget.front_seq());
                let pruned = budget.push(counts[i], roles[i], group).unwrap();
                if roles[i] == Role::System { kept_systems.push_back(i) } else { kept.push_back(i) }
                for _ in 0..pruned.systems { kept_systems.pop_front(); }
                for _ in 0..pruned.messages { kept.pop_front(); }
                let total: u64 = kept.iter().chain(kept_systems.iter()).map(|&k| counts[k]).sum();
                prop_assert_eq!(total, budget.total());
                prop_assert!(budget.total() <= max || budget.over_budget());
            }
            if kept_systems.len() == raw.iter().filter(|r| r.1 == 0).count() {
                let mut merged: Vec<usize> = kept.iter().chain(kept_systems.iter()).copied().collect();
                merged.sort_unstable();
                let selection = select(&counts, &roles, &groups, max, true, None).unwrap();
                prop_assert_eq!(merged, selection.kept);
                prop_assert_eq!(budget.over_budget(), selection.over_budget);
            }
        });
    }

    /// A history rolled back after any mix of pushes, prunes and clears behaves exactly like one
    /// that never saw them: same pushes after, same results, totals and counts.
    #[test]
    fn rolling_history_rollback_restores_everything() {
        use crate::pairs::Link;
        use proptest::prelude::*;
        // (kind, count, id): kind 0 system, 1 user, 2 assistant with a call, 3 result by id,
        // 4 result by name, 5 clear, 6 prune.
        let step = (0u8..7, 0u64..12, 0u8..3);
        proptest!(|(before in prop::collection::vec(step.clone(), 0..25),
                    during in prop::collection::vec(step.clone(), 0..25),
                    after in prop::collection::vec(step, 0..25),
                    max in 0u64..40)| {
            let ids = ["a", "b", "c"];
            let apply = |h: &mut RollingHistory, steps: &[(u8, u64, u8)]| -> Vec<Option<Pushed>> {
                steps.iter().map(|&(kind, count, id)| {
                    let id = ids[id as usize];
                    let pushed = match kind {
                        0 => h.push(count, Role::System, [], Link::Nothing, true),
                        1 => h.push(count, Role::User, [], Link::Nothing, true),
                        2 => h.push(count, Role::Assistant, [(id, "f")], Link::Nothing, count % 2 == 0),
                        3 => h.push(count, Role::Tool, [], Link::Id(id), true),
                        4 => h.push(count, Role::Tool, [], Link::Name("f"), true),
                        5 => { h.clear(); return None; }
                        _ => { h.prune(); return None; }
                    };
                    Some(pushed.unwrap())
                }).collect()
            };
            let snapshot = |h: &RollingHistory| {
                let b = h.budget();
                (b.total(), b.over_budget(), b.system_over_budget(), b.next_seq(), b.front_seq(),
                 b.counts().collect::<Vec<_>>(), b.system_counts().collect::<Vec<_>>())
            };
            let mut reference = RollingHistory::new(max, true);
            let mut tested = RollingHistory::new(max, true);
            apply(&mut reference, &before);
            apply(&mut tested, &before);
            tested.begin();
            apply(&mut tested, &during);
            tested.rollback();
            prop_assert_eq!(snapshot(&reference), snapshot(&tested));
            prop_assert_eq!(apply(&mut reference, &after), apply(&mut tested, &after));
            prop_assert_eq!(snapshot(&reference), snapshot(&tested));
        });
    }
}
