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

use std::fmt;

use crate::Role;

mod rolling;
pub mod window;

pub use rolling::{Pruned, Pushed, RollingBudget, RollingHistory};

/// Input arrays that do not describe a history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PruneError {
    /// The arrays have different lengths.
    LengthMismatch { counts: usize, roles: usize, groups: usize },
    /// A message names a group that starts after it (groups start at their first message).
    GroupAfterMessage { index: usize, group: usize },
    /// A pushed message names a group that is not in the window (already pruned or never pushed).
    UnknownGroup { group: u64 },
    /// A [`window::Source`] gave `got` entries of `what` where `expected` were asked for.
    SourceLength { what: &'static str, expected: usize, got: usize },
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
            PruneError::SourceLength { what, expected, got } => {
                write!(f, "{got} {what} for {expected} messages: one entry per message asked for")
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

/// The options of [`select`]; the default is [`select`] with `keep_system` off.
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

/// Selects the messages to keep within `max_tokens` by the module rules and `rules`.
///
/// `start_on` makes the kept run begin at a message of that role; when no run within budget
/// does, the shortest run that does is kept (and `over_budget` set); when no run can begin
/// there at all, `start_on` is ignored.
///
/// ```
/// use agentmsg_core::{prune::{select, RoleSet, Rules, Strategy}, Role};
/// let roles = [Role::System, Role::User, Role::Assistant, Role::Tool, Role::User];
/// // The assistant (2) called a tool answered by 3: both are group 2.
/// let keep_system = Rules { keep_system: true, ..Rules::default() };
/// assert_eq!(select(&[5, 10, 10, 10, 10], &roles, &[0, 1, 2, 2, 4], 26, &keep_system).unwrap().kept, vec![0, 4]);
/// let roles = [Role::User, Role::Assistant, Role::User, Role::Assistant];
/// let first = Rules { strategy: Strategy::First, ..Rules::default() };
/// assert_eq!(select(&[1, 1, 1, 1], &roles, &[0, 1, 2, 3], 3, &first).unwrap().kept, vec![0, 1, 2]);
/// let ends_on_user = Rules { end_on: Some(RoleSet::of(Role::User)), ..Rules::default() };
/// assert_eq!(select(&[1, 1, 1, 1], &roles, &[0, 1, 2, 3], 2, &ends_on_user).unwrap().kept, vec![1, 2]);
/// ```
pub fn select(
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

/// Whether a window of the newest messages already decides [`select`] (with
/// [`Strategy::Last`]): the run's end is in it, its candidates up to that end exceed
/// `remaining`, and some run in it splits no group (and begins at `start_on`). `trim` grows its
/// window until this holds (and no result in it lacks its call).
pub(crate) fn window_decides(
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

#[cfg(test)]
mod tests {
    use super::*;
    use Role::{Assistant as A, System as S, Tool as T, User as U};

    /// The rules of the old two-option `select`: `keep_system` and one `start_on` role.
    pub(crate) fn rules(keep_system: bool, start_on: Option<Role>) -> Rules {
        Rules { keep_system, start_on: start_on.map(RoleSet::of), ..Rules::default() }
    }

    fn kept(counts: &[u64], roles: &[Role], groups: &[usize], max: u64) -> Selection {
        select(counts, roles, groups, max, &rules(true, None)).unwrap()
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
        let s = select(&[6, 1, 1], &[S, U, A], &[0, 1, 2], 3, &rules(false, None)).unwrap();
        assert_eq!(s.kept, vec![1, 2]);
    }

    #[test]
    fn start_on_user() {
        let roles = [S, U, A, T, A, U, A];
        let groups = [0, 1, 2, 2, 4, 5, 6];
        let counts = [1, 1, 1, 1, 1, 1, 1];
        let s = select(&counts, &roles, &groups, 5, &rules(true, Some(U))).unwrap();
        assert_eq!(s.kept, vec![0, 5, 6]);
        // Budget for 2 non-system messages starting at a user: [5, 6].
        let s = select(&counts, &roles, &groups, 3, &rules(true, Some(U))).unwrap();
        assert_eq!(s.kept, vec![0, 5, 6]);
        // Only one fits; the shortest run starting at a user is kept, over budget.
        let s = select(&counts, &roles, &groups, 2, &rules(true, Some(U))).unwrap();
        assert_eq!(s.kept, vec![0, 5, 6]);
        assert!(s.over_budget);
        // No user at all: start_on is ignored.
        let s = select(&[1, 1], &[A, A], &[0, 1], 1, &rules(true, Some(U))).unwrap();
        assert_eq!(s.kept, vec![1]);
    }

    fn with(counts: &[u64], roles: &[Role], groups: &[usize], max: u64, rules: Rules) -> Vec<usize> {
        select(counts, roles, groups, max, &rules).unwrap().kept
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
        let s = select(&[1, 9, 1], &[S, U, U], &[0, 1, 2], 5, &first).unwrap();
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
        let s = select(&[5, 1, 1], &[A, U, U], &[0, 1, 2], 3, &first).unwrap();
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

    /// `select` matches a brute force over every run: the best run is the longest (or, for
    /// no fitting run, the shortest) that splits no group and meets the role rules.
    #[test]
    fn select_matches_brute_force() {
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
            let got = select(&counts, &roles, &groups, max, &rules).unwrap().kept;
            prop_assert_eq!(got, brute_force(&counts, &roles, &groups, max, &rules));
        });
    }

    /// Roles and groups of a generated history: results follow their call; a result joins the
    /// newest call when asked to, and one that does not closes the group.
    pub(crate) fn shape(raw: &[(u64, u8, bool)]) -> (Vec<Role>, Vec<usize>) {
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
            select(&[1], &[U, U], &[0], 1, &rules(true, None)),
            Err(PruneError::LengthMismatch { .. })
        ));
        assert_eq!(
            select(&[1, 1], &[U, U], &[0, 5], 1, &rules(true, None)),
            Err(PruneError::GroupAfterMessage { index: 1, group: 5 })
        );
        assert_eq!(select(&[], &[], &[], 0, &rules(true, None)).unwrap().kept, Vec::<usize>::new());
    }

    #[test]
    fn huge_counts_saturate_instead_of_overflowing() {
        let s = select(&[u64::MAX, u64::MAX], &[S, U], &[0, 1], 10, &rules(true, None)).unwrap();
        assert_eq!(s.kept, vec![0, 1]);
        assert!(s.over_budget && s.system_over_budget && s.total == u64::MAX);
        let mut b = RollingBudget::new(10, true);
        b.push(u64::MAX, U, None).unwrap();
        assert_eq!(b.push(u64::MAX, U, None).unwrap(), Pruned { systems: 0, messages: 1 });
        assert_eq!(b.total(), u64::MAX);
    }

}
