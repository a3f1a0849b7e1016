//! Budgets for a history that grows one message at a time: [`RollingBudget`] keeps running
//! totals, [`RollingHistory`] adds the pairing of tool results, each under one journal.

use std::collections::VecDeque;

use super::{saturate, PruneError};
use crate::pairs::{Link, NameScope, Pairer};
use crate::Role;

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
        calls: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
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
    use crate::prune::select;
    use crate::prune::tests::{rules, shape};
    use Role::{Assistant as A, System as S, Tool as T, User as U};
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
                let selection = select(&counts, &roles, &groups, max, &rules(true, None)).unwrap();
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
                        2 => h.push(count, Role::Assistant, [(id.as_bytes(), &b"f"[..])], Link::Nothing, count % 2 == 0),
                        3 => h.push(count, Role::Tool, [], Link::Id(id.as_bytes()), true),
                        4 => h.push(count, Role::Tool, [], Link::Name(b"f"), true),
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

