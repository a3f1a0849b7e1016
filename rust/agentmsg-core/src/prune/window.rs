//! The selection driver: [`select`](super::select) on a history read through a [`Source`],
//! counting only the messages that can be kept.
//!
//! Counting is the cost of a selection (an exact count encodes the text, a user counter runs
//! Python), and a budget usually keeps a small newest part of a long history. So the driver
//! reads a window of the newest messages, doubling it (32, 64, 128, ... messages) until its
//! counts exceed what the budget leaves after the system messages and it holds a run that splits
//! no tool group ([`window_decides`](super::window_decides)) and no result whose call lies
//! before it; the selection over that window is the selection over the whole history. With
//! [`Strategy::First`] the kept run starts at the oldest message, so the counts grow forward
//! instead, until they exceed the budget (roles and groups are read whole: the run's end depends
//! on every group opened before it). Every system message is counted when `keep_system` (rule 1
//! needs them all).
//!
//! With `allow_partial`, the driver also names the one message a caller may cut to fill the
//! budget ([`Partial`]): the message just past the longest run the budget allows (before it; after
//! it for [`Strategy::First`]), or the newest group when it alone is over budget and is one
//! message; only a message that is a group of its own, of a role the run may begin (end) with.
//! Cutting it is the caller's job (it knows the message's text and its counter).

use super::{saturate, system_share, window_decides, PruneError, RoleSet, Rules, Selection, Strategy};
use crate::Role;

/// A history as the driver reads it. Positions are indices into the history, `0..len()`.
pub trait Source {
    /// A failure of the source (a counter that raised, a message that cannot be read).
    type Error;

    /// The number of messages.
    fn len(&self) -> usize;

    /// Whether the history has no message.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The roles of messages `start..stop`.
    fn roles(&mut self, start: usize, stop: usize) -> Result<Vec<Role>, Self::Error>;

    /// The token counts of the messages at `positions` (ascending), one per position.
    fn counts(&mut self, positions: &[usize]) -> Result<Vec<u64>, Self::Error>;

    /// The tool groups of messages `start..stop`, whose roles are `roles`, relative to `start`
    /// (each message's group is the index of the message whose call it answers, else its own),
    /// and whether some result there answers no call in the range.
    fn groups(&mut self, start: usize, stop: usize, roles: &[Role]) -> Result<(Vec<usize>, bool), Self::Error>;
}

/// Why [`select`](self::select) failed: the source failed, or it returned columns that do not
/// describe the messages asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowError<E> {
    Source(E),
    Columns(PruneError),
}

impl<E> From<PruneError> for WindowError<E> {
    fn from(error: PruneError) -> Self {
        WindowError::Columns(error)
    }
}

/// The message `allow_partial` may cut, and what the selection becomes with its cut copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partial {
    /// The message to cut.
    pub index: usize,
    /// The tokens its cut copy may take: the budget minus `others` (at least 1).
    pub allowance: u64,
    /// Keep its newest part ([`Strategy::Last`]) rather than its oldest.
    pub keep_end: bool,
    /// The kept messages with the cut one among them, ascending.
    pub kept: Vec<usize>,
    /// The tokens of the kept messages but the cut one.
    pub others: u64,
}

/// What [`select`](self::select) chose: the selection, and with `allow_partial` the message to
/// cut, if any (when the cut fails, the selection stands as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub selection: Selection,
    pub partial: Option<Partial>,
}

impl Choice {
    /// The selection once the partial message is cut to a copy of `count` tokens.
    pub fn with_cut(&self, count: u64, max_tokens: u64) -> Option<Selection> {
        let partial = self.partial.as_ref()?;
        let total = u128::from(partial.others) + u128::from(count);
        Some(Selection {
            kept: partial.kept.clone(),
            total: saturate(total),
            over_budget: total > u128::from(max_tokens),
            system_over_budget: self.selection.system_over_budget,
        })
    }
}

/// The first window, in messages; it doubles at every step.
const FIRST_STEP: usize = 32;

/// The count the selection sees for a message not counted yet: no run holding it fits a budget.
const UNCOUNTED: u64 = u64::MAX;

/// Selects the messages of `source` to keep within `max_tokens` by `rules` (as
/// [`super::select`] on the whole history, fully counted), counting only what can be kept; with
/// `allow_partial`, also the message to cut (see the module text).
///
/// ```
/// use agentmsg_core::prune::{window::{select, Source}, Rules};
/// use agentmsg_core::Role;
/// struct Chat(Vec<u64>);
/// impl Source for Chat {
///     type Error = ();
///     fn len(&self) -> usize { self.0.len() }
///     fn roles(&mut self, start: usize, stop: usize) -> Result<Vec<Role>, ()> { Ok(vec![Role::User; stop - start]) }
///     fn counts(&mut self, positions: &[usize]) -> Result<Vec<u64>, ()> { Ok(positions.iter().map(|&i| self.0[i]).collect()) }
///     fn groups(&mut self, start: usize, stop: usize, _: &[Role]) -> Result<(Vec<usize>, bool), ()> { Ok(((0..stop - start).collect(), false)) }
/// }
/// let choice = select(&mut Chat(vec![5; 1000]), 12, &Rules::default(), false).unwrap();
/// assert_eq!(choice.selection.kept, vec![998, 999]);
/// ```
pub fn select<S: Source>(source: &mut S, max_tokens: u64, rules: &Rules, allow_partial: bool) -> Result<Choice, WindowError<S::Error>> {
    let n = source.len();
    let mut reader = Reader { source, n, all_roles: None };
    let keep_system = rules.keep_system;
    let first = rules.strategy == Strategy::First;
    // Rule 1 needs every system message: their roles are read once, for the whole history.
    let systems: Vec<usize> = if keep_system {
        let roles = reader.roles(0, n)?;
        let systems = (0..n).filter(|&i| roles[i] == Role::System).collect();
        reader.all_roles = Some(roles);
        systems
    } else {
        Vec::new()
    };
    let system_counts = reader.counts(&systems)?;
    let share = system_share(system_counts.iter().copied(), max_tokens);
    let remaining = Remaining(i128::from(max_tokens) - i128::try_from(share.used).unwrap_or(i128::MAX));

    let window = if first {
        let roles = reader.roles(0, n)?;
        let counts = count_forward(&mut reader, &roles, keep_system, remaining)?;
        let groups = reader.groups(0, n, &roles)?.0;
        Window { start: 0, roles, counts, groups }
    } else {
        newest_window(&mut reader, rules, remaining)?
    };

    // The columns the selection reads: the system messages before the window, then the window.
    let start = window.start;
    let offset = systems.iter().take_while(|&&i| i < start).count();
    let mut columns = Columns {
        positions: systems[..offset].iter().copied().chain(start..n).collect(),
        known: system_counts[..offset].iter().map(|&c| Some(c)).collect(),
        roles: vec![Role::System; offset],
        groups: (0..offset).collect(),
    };
    let system_count = |i: usize| systems.binary_search(&i).ok().map(|k| system_counts[k]);
    for (j, i) in (start..n).enumerate() {
        // The window holds 0 for a system message: its count is the one rule 1 read.
        columns.known.push(system_count(i).or(window.counts[j]));
    }
    columns.roles.extend_from_slice(&window.roles);
    columns.groups.extend(window.groups.iter().map(|&g| g + offset));

    let base_rules = |start_on: Option<RoleSet>, end_on: Option<RoleSet>| Rules { start_on, end_on, ..*rules };
    let selection = columns.select(&mut reader, max_tokens, &base_rules(rules.start_on, rules.end_on))?;
    let mut partial = None;
    if allow_partial {
        // The cut message goes just past the longest run the budget allows, whatever its role;
        // it must have a role the run may begin (strategy last) or end (first) with. So the run
        // is chosen again without that role rule.
        let rule = if first { rules.end_on } else { rules.start_on };
        let base = match rule {
            Some(_) => columns.select(&mut reader, max_tokens, &base_rules(None, if first { None } else { rules.end_on }))?,
            None => selection.clone(),
        };
        let target = PartialTarget { window: &window, keep_system, first, rule }.find(&base, |i| columns.count_at(i, start, offset));
        if let Some((index, others)) = target {
            if let Some(allowance) = max_tokens.checked_sub(others).filter(|&a| a > 0) {
                let mut kept = base.kept;
                if let Err(at) = kept.binary_search(&index) {
                    kept.insert(at, index);
                }
                partial = Some(Partial { index, allowance, keep_end: !first, kept, others });
            }
        }
    }
    Ok(Choice { selection, partial })
}

/// The budget left to the non-system run after rule 1 (negative when the system messages kept
/// alone exceed it).
#[derive(Debug, Clone, Copy)]
struct Remaining(i128);

impl Remaining {
    /// Whether `counted` tokens exceed it.
    fn exceeded_by(self, counted: u128) -> bool {
        u128::try_from(self.0).map_or(true, |remaining| counted > remaining)
    }
}

/// The source, with its answers checked, and the whole history's roles once they were read.
struct Reader<'s, S> {
    source: &'s mut S,
    n: usize,
    all_roles: Option<Vec<Role>>,
}

impl<S: Source> Reader<'_, S> {
    fn roles(&mut self, start: usize, stop: usize) -> Result<Vec<Role>, WindowError<S::Error>> {
        if let Some(roles) = &self.all_roles {
            return Ok(roles[start..stop].to_vec());
        }
        let roles = self.source.roles(start, stop).map_err(WindowError::Source)?;
        check_len("roles", stop - start, roles.len())?;
        Ok(roles)
    }

    fn counts(&mut self, positions: &[usize]) -> Result<Vec<u64>, WindowError<S::Error>> {
        if positions.is_empty() {
            return Ok(Vec::new());
        }
        let counts = self.source.counts(positions).map_err(WindowError::Source)?;
        check_len("counts", positions.len(), counts.len())?;
        Ok(counts)
    }

    fn groups(&mut self, start: usize, stop: usize, roles: &[Role]) -> Result<(Vec<usize>, bool), WindowError<S::Error>> {
        let (groups, orphans) = self.source.groups(start, stop, roles).map_err(WindowError::Source)?;
        check_len("groups", stop - start, groups.len())?;
        if let Some(j) = (0..groups.len()).find(|&j| groups[j] > j) {
            return Err(PruneError::GroupAfterMessage { index: start + j, group: start + groups[j] }.into());
        }
        Ok((groups, orphans))
    }
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), PruneError> {
    if expected == got {
        Ok(())
    } else {
        Err(PruneError::SourceLength { what, expected, got })
    }
}

/// The messages `start..` of a history as the selection needs them: roles, counts (`None` for
/// a message not counted; 0 for a system message when `keep_system`) and groups relative to
/// `start`.
struct Window {
    start: usize,
    roles: Vec<Role>,
    counts: Vec<Option<u64>>,
    groups: Vec<usize>,
}

/// The shortest window of the newest messages that decides the selection, grown by doubling.
fn newest_window<S: Source>(reader: &mut Reader<'_, S>, rules: &Rules, remaining: Remaining) -> Result<Window, WindowError<S::Error>> {
    let n = reader.n;
    let keep_system = rules.keep_system;
    let decides = Rules { strategy: Strategy::Last, ..*rules };
    let mut roles: Vec<Role> = Vec::new();
    let mut counts: Vec<u64> = Vec::new();
    let mut counted = 0u128; // the window's non-system counts
    let mut start = n;
    let mut step = FIRST_STEP;
    while start > 0 {
        let new_start = start.saturating_sub(step);
        step = step.saturating_mul(2);
        let chunk = reader.roles(new_start, start)?;
        let fresh: Vec<usize> = (new_start..start).filter(|&i| !(keep_system && chunk[i - new_start] == Role::System)).collect();
        let fresh_counts = reader.counts(&fresh)?;
        counted += fresh_counts.iter().map(|&c| u128::from(c)).sum::<u128>();
        let mut chunk_counts = vec![0u64; start - new_start];
        for (&i, &count) in fresh.iter().zip(&fresh_counts) {
            chunk_counts[i - new_start] = count;
        }
        roles.splice(0..0, chunk);
        counts.splice(0..0, chunk_counts);
        start = new_start;
        if remaining.exceeded_by(counted) {
            let (groups, orphans) = reader.groups(start, n, &roles)?;
            let left = u128::try_from(remaining.0).unwrap_or(0);
            if !orphans && window_decides(&counts, &roles, &groups, left, &decides) {
                return Ok(Window { start, roles, counts: counts.into_iter().map(Some).collect(), groups });
            }
        }
    }
    let groups = reader.groups(start, n, &roles)?.0;
    Ok(Window { start, roles, counts: counts.into_iter().map(Some).collect(), groups })
}

/// Counts of the oldest non-system messages, grown by doubling until they exceed `remaining`
/// (no longer run fits); `None` for the rest, and 0 for system messages.
fn count_forward<S: Source>(reader: &mut Reader<'_, S>, roles: &[Role], keep_system: bool, remaining: Remaining) -> Result<Vec<Option<u64>>, WindowError<S::Error>> {
    let n = roles.len();
    let mut counts = vec![None; n];
    let mut counted = 0u128;
    let mut stop = 0;
    let mut step = FIRST_STEP;
    while stop < n && !remaining.exceeded_by(counted) {
        let new_stop = n.min(stop.saturating_add(step));
        step = step.saturating_mul(2);
        let fresh: Vec<usize> = (stop..new_stop).filter(|&i| !(keep_system && roles[i] == Role::System)).collect();
        counts[stop..new_stop].fill(Some(0));
        for (&i, count) in fresh.iter().zip(reader.counts(&fresh)?) {
            counts[i] = Some(count);
            counted += u128::from(count);
        }
        stop = new_stop;
    }
    Ok(counts)
}

/// The arrays [`super::select`] reads: the history's `positions` it covers (the system messages
/// before the window, then the window), their counts as far as known, roles and groups.
struct Columns {
    positions: Vec<usize>,
    known: Vec<Option<u64>>,
    roles: Vec<Role>,
    groups: Vec<usize>,
}

impl Columns {
    /// The selection by `rules`, in history positions. A kept message not counted yet (the oldest
    /// group alone over budget, strategy first, reaching past the counted ones) is counted now.
    fn select<S: Source>(&mut self, reader: &mut Reader<'_, S>, max_tokens: u64, rules: &Rules) -> Result<Selection, WindowError<S::Error>> {
        let counts: Vec<u64> = self.known.iter().map(|c| c.unwrap_or(UNCOUNTED)).collect();
        let chosen = super::select(&counts, &self.roles, &self.groups, max_tokens, rules)?;
        let uncounted: Vec<usize> = chosen.kept.iter().copied().filter(|&p| self.known[p].is_none()).collect();
        let mut selection = Selection { kept: chosen.kept.iter().map(|&p| self.positions[p]).collect(), ..chosen.clone() };
        if !uncounted.is_empty() {
            let positions: Vec<usize> = uncounted.iter().map(|&p| self.positions[p]).collect();
            for (&p, count) in uncounted.iter().zip(reader.counts(&positions)?) {
                self.known[p] = Some(count);
            }
            let total: u128 = chosen.kept.iter().map(|&p| u128::from(self.known[p].unwrap_or(0))).sum();
            selection.total = saturate(total);
            selection.over_budget = total > u128::from(max_tokens);
        }
        Ok(selection)
    }

    /// The count of history message `i` of the window starting at `start`, once known.
    fn count_at(&self, i: usize, start: usize, offset: usize) -> u64 {
        self.known[offset + i - start].unwrap_or(0)
    }
}

/// Where `allow_partial` cuts (see the module text).
struct PartialTarget<'a> {
    window: &'a Window,
    keep_system: bool,
    first: bool,
    /// The role rule the cut message must meet: `start_on` (strategy last) or `end_on` (first).
    rule: Option<RoleSet>,
}

impl PartialTarget<'_> {
    fn is_candidate(&self, j: usize) -> bool {
        !(self.keep_system && self.window.roles[j] == Role::System)
    }

    /// The message to cut for the run `base` keeps, and the tokens of the other kept messages.
    fn find(&self, base: &Selection, count_of: impl Fn(usize) -> u64) -> Option<(usize, u64)> {
        let window = self.window;
        let start = window.start;
        let run: Vec<usize> = base.kept.iter().copied().filter(|&i| i >= start && self.is_candidate(i - start)).collect();
        let (&oldest, &newest) = (run.first()?, run.last()?);
        let (j, others) = if base.over_budget {
            if run.len() != 1 {
                return None;
            }
            (oldest - start, base.total.saturating_sub(count_of(oldest)))
        } else {
            // Just past the run, skipping system messages.
            let mut j = if self.first { (newest - start).checked_add(1)? } else { (oldest - start).checked_sub(1)? };
            while j < window.roles.len() && !self.is_candidate(j) {
                j = if self.first { j + 1 } else { j.checked_sub(1)? };
            }
            if j >= window.roles.len() {
                return None;
            }
            (j, base.total)
        };
        let alone = window.groups[j] == j && window.groups.iter().filter(|&&g| g == j).count() == 1;
        let role_ok = self.rule.is_none_or(|set| set.contains(window.roles[j]));
        (alone && role_ok).then_some((j + start, others))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::tests::shape;
    use crate::prune::Strategy;
    use Role::{Assistant as A, System as S, Tool as T, User as U};

    /// A history of plain arrays whose groups come from `shape` (a result whose call lies before
    /// the range asked for is an orphan there, as pairing finds), recording what was counted.
    struct Arrays {
        counts: Vec<u64>,
        roles: Vec<Role>,
        groups: Vec<usize>,
        counted: Vec<usize>,
    }

    impl Arrays {
        fn new(counts: Vec<u64>, roles: Vec<Role>, groups: Vec<usize>) -> Self {
            Arrays { counts, roles, groups, counted: Vec::new() }
        }
    }

    impl Source for Arrays {
        type Error = &'static str;
        fn len(&self) -> usize {
            self.counts.len()
        }
        fn roles(&mut self, start: usize, stop: usize) -> Result<Vec<Role>, Self::Error> {
            Ok(self.roles[start..stop].to_vec())
        }
        fn counts(&mut self, positions: &[usize]) -> Result<Vec<u64>, Self::Error> {
            self.counted.extend_from_slice(positions);
            Ok(positions.iter().map(|&i| self.counts[i]).collect())
        }
        fn groups(&mut self, start: usize, stop: usize, _: &[Role]) -> Result<(Vec<usize>, bool), Self::Error> {
            let mut orphans = false;
            let groups = (start..stop)
                .map(|i| match self.groups[i] {
                    g if g >= start => g - start,
                    _ => {
                        orphans = true;
                        i - start
                    }
                })
                .collect();
            Ok((groups, orphans))
        }
    }

    fn rules(keep_system: bool, first: bool, start_on: Option<Role>, end_on: Option<Role>) -> Rules {
        let strategy = if first { Strategy::First } else { Strategy::Last };
        Rules { keep_system, start_on: start_on.map(RoleSet::of), end_on: end_on.map(RoleSet::of), strategy }
    }

    #[test]
    fn a_small_budget_counts_a_small_window() {
        let n = 10_000;
        let mut source = Arrays::new(vec![3; n], vec![U; n], (0..n).collect());
        let choice = select(&mut source, 30, &Rules::default(), false).unwrap();
        assert_eq!(choice.selection.kept, (n - 10..n).collect::<Vec<_>>());
        assert_eq!(source.counted.len(), 32); // the first window already decides
        let mut source = Arrays::new(vec![3; n], vec![U; n], (0..n).collect());
        let choice = select(&mut source, 30, &rules(false, true, None, None), false).unwrap();
        assert_eq!(choice.selection.kept, (0..10).collect::<Vec<_>>());
        assert_eq!(source.counted.len(), 32);
    }

    #[test]
    fn a_window_grows_past_a_tool_group_it_splits() {
        // 100 results of one call at 0, then a user message: the window must reach the call.
        let n = 102;
        let mut roles = vec![A];
        roles.extend(vec![T; 100]);
        roles.push(U);
        let mut groups = vec![0; 101];
        groups.push(101);
        let mut source = Arrays::new(vec![1; n], roles, groups);
        let choice = select(&mut source, 5, &Rules::default(), false).unwrap();
        assert_eq!(choice.selection.kept, vec![101]);
        let choice = select(&mut source, 200, &Rules::default(), false).unwrap();
        assert_eq!(choice.selection.kept, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn strategy_first_counts_an_oldest_group_over_budget_late() {
        // The oldest message alone is over budget, and the forward count stops at once when no
        // budget is left: it is counted when kept.
        let mut source = Arrays::new(vec![9, 50, 1, 1], vec![S, U, U, U], vec![0, 1, 2, 3]);
        let choice = select(&mut source, 5, &rules(true, true, None, None), false).unwrap();
        assert_eq!(choice.selection, Selection { kept: vec![0, 1], total: 59, over_budget: true, system_over_budget: true });
    }

    #[test]
    fn partial_names_the_message_just_past_the_run() {
        let counts = vec![2, 10, 3, 3];
        let (roles, groups) = (vec![S, U, A, U], vec![0, 1, 2, 3]);
        let mut source = Arrays::new(counts.clone(), roles.clone(), groups.clone());
        let choice = select(&mut source, 12, &rules(true, false, None, None), true).unwrap();
        assert_eq!(choice.selection.kept, vec![0, 2, 3]);
        let partial = Partial { index: 1, allowance: 4, keep_end: true, kept: vec![0, 1, 2, 3], others: 8 };
        assert_eq!(choice.partial, Some(partial));
        assert_eq!(choice.with_cut(4, 12).unwrap().total, 12);
        // start_on=assistant: the run [2, 3] is chosen again without it, and the user message
        // before it may not begin a run.
        let mut source = Arrays::new(counts.clone(), roles.clone(), groups.clone());
        assert_eq!(select(&mut source, 12, &rules(true, false, Some(A), None), true).unwrap().partial, None);
        // Strategy first: the message after the run, its oldest part.
        let mut source = Arrays::new(vec![3, 3, 10], vec![U, A, U], vec![0, 1, 2]);
        let partial = select(&mut source, 8, &rules(true, true, None, None), true).unwrap().partial.unwrap();
        assert_eq!((partial.index, partial.allowance, partial.keep_end), (2, 2, false));
        // The newest message alone over budget is cut; one of a tool group never is.
        let mut source = Arrays::new(vec![50], vec![U], vec![0]);
        let partial = select(&mut source, 8, &Rules::default(), true).unwrap().partial.unwrap();
        assert_eq!((partial.index, partial.allowance, partial.others), (0, 8, 0));
        let mut source = Arrays::new(vec![1, 50], vec![A, T], vec![0, 0]);
        assert_eq!(select(&mut source, 8, &Rules::default(), true).unwrap().partial, None);
    }

    #[test]
    fn bad_source_columns_are_errors() {
        struct Short;
        impl Source for Short {
            type Error = ();
            fn len(&self) -> usize {
                3
            }
            fn roles(&mut self, start: usize, stop: usize) -> Result<Vec<Role>, ()> {
                Ok(vec![U; stop - start])
            }
            fn counts(&mut self, _: &[usize]) -> Result<Vec<u64>, ()> {
                Ok(vec![1])
            }
            fn groups(&mut self, start: usize, stop: usize, _: &[Role]) -> Result<(Vec<usize>, bool), ()> {
                Ok(((start..stop).map(|_| 0).collect(), false))
            }
        }
        let error = select(&mut Short, 10, &Rules::default(), false).unwrap_err();
        assert_eq!(error, WindowError::Columns(PruneError::SourceLength { what: "counts", expected: 3, got: 1 }));
    }

    /// The driver keeps exactly what the selection over the whole history, fully counted, keeps.
    #[test]
    fn window_matches_the_whole_history() {
        use proptest::prelude::*;
        let history = prop::collection::vec((0u64..8, 0u8..4, any::<bool>()), 0..300);
        proptest!(ProptestConfig::with_cases(400), |(raw in history, max in 0u64..200, keep_system: bool, first: bool,
                    start in prop::option::of(0u8..4), end in prop::option::of(0u8..4), partial: bool)| {
            let (roles, groups) = shape(&raw);
            let counts: Vec<u64> = raw.iter().map(|r| r.0).collect();
            let role = |code: Option<u8>| code.and_then(Role::from_code);
            let rules = rules(keep_system, first, if first { None } else { role(start) }, role(end));
            let whole = select_whole(&counts, &roles, &groups, max, &rules);
            let mut source = Arrays::new(counts.clone(), roles.clone(), groups.clone());
            let choice = select(&mut source, max, &rules, partial).unwrap();
            prop_assert_eq!(&choice.selection, &whole);
            if let Some(p) = &choice.partial {
                // The cut message is a group of its own just outside the kept run (or the newest alone).
                prop_assert!(p.allowance > 0 && p.others + p.allowance == max);
                prop_assert!(groups[p.index] == p.index && groups.iter().filter(|&&g| g == p.index).count() == 1);
            }
        });
    }

    fn select_whole(counts: &[u64], roles: &[Role], groups: &[usize], max: u64, rules: &Rules) -> Selection {
        super::super::select(counts, roles, groups, max, rules).unwrap()
    }
}
