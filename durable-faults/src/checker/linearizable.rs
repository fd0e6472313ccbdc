//! Per-key linearizability of the backend register: a Wing–Gong search with memoization (as
//! Knossos and Porcupine do it), cut into independent segments so every key is decided.
//!
//! The search looks for one total order of the key's backend calls that respects real time and
//! that the register (the private `register` module) accepts. A search state is the set of calls
//! already placed plus the register's value; a state seen once is never expanded again.
//!
//! Three things keep it small enough to finish on every key of a long campaign:
//! - **Windows for indeterminate writes.** A write whose answer was lost may take effect, if at
//!   all, only while the register holds its expected fence. Fences never repeat (a revision only
//!   grows, a new record gets a new incarnation), so such a write is decided by the first
//!   observation that shows its value (it must have applied before that observer completed), or
//!   by the first observation of another record after it (a delete expecting a fence that has
//!   moved on can no longer apply). A write whose value is never seen by anyone never applied:
//!   any later write or read of its record would have shown it.
//! - **Segments.** Once every call that started has ended (its completion, or its window), no
//!   later call can be ordered before them: the history is cut there, and each segment is
//!   searched from the set of values the previous one can end in.
//! - **Observations first.** A read or refused write that fits the current value and may go
//!   next is placed at once: it changes nothing, so no order is lost by placing it early.

use std::collections::HashSet;

use super::register::{Call, CasOutcome, Interner, State};
use crate::history::{OpKind, Operation};

/// Most search states expanded for one segment before the key is inconclusive.
pub const SEGMENT_BUDGET: usize = 2_000_000;

/// The verdict on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Some order explains every observation.
    Linearizable,
    /// No order does; the detail names where the search got stuck, at the invoke of the first
    /// call that could not follow.
    NotLinearizable {
        /// Where the search got stuck.
        detail: String,
        /// When (ms since the epoch).
        at_ms: u64,
    },
    /// The search was too large to finish.
    Inconclusive(String),
}

/// One backend call, timed, with what it did.
#[derive(Debug, Clone, Copy)]
struct Timed<'a> {
    op: &'a Operation,
    call: Call,
    invoked: u64,
    /// Its completion, or the end of its window when indeterminate.
    end: u64,
    /// Whether it must be placed (acknowledged), or may be skipped (indeterminate).
    required: bool,
}

/// Checks the backend calls (`Get`, `Write`) among the ops of one key.
pub(crate) fn check_key(ops: &[&Operation]) -> Verdict {
    let backend: Vec<&Operation> = ops.iter().copied().filter(|op| op.is_backend()).collect();
    let mut interner = Interner::default();
    let calls = timed_calls(&backend, &mut interner);
    let mut states: HashSet<State> = HashSet::from([None]);
    for segment in segments(&calls) {
        match Search::new(segment, &interner, &states).run() {
            Ok(ends) => states = ends,
            Err(verdict) => return verdict,
        }
    }
    Verdict::Linearizable
}

/// The calls with their windows, by invoke time; indeterminate writes nobody saw are dropped.
fn timed_calls<'a>(ops: &[&'a Operation], interner: &mut Interner<'a>) -> Vec<Timed<'a>> {
    let mut calls: Vec<Timed<'a>> = ops
        .iter()
        .filter_map(|&op| {
            let call = interner.call(op)?;
            Some(Timed {
                op,
                call,
                invoked: op.invoked_ms(),
                end: op.done_by_ms(),
                required: op.is_ok(),
            })
        })
        .collect();
    let windows: Vec<Option<u64>> = calls
        .iter()
        .map(|call| {
            (!call.required)
                .then(|| window_end(call, &calls, interner))
                .flatten()
        })
        .collect();
    let mut kept = Vec::with_capacity(calls.len());
    for (mut call, window) in calls.drain(..).zip(windows) {
        if !call.required {
            match window {
                Some(end) => call.end = end,
                None => continue,
            }
        }
        kept.push(call);
    }
    kept.sort_by_key(|call| (call.invoked, call.op.op_ref()));
    kept
}

/// What an acknowledged call shows of the register: the value a read returned, or the fence
/// an applied write found.
fn shows(call: &Timed<'_>, interner: &Interner<'_>) -> Option<Option<u32>> {
    match call.call {
        Call::Observe(seen) if call.required => Some(interner.fence_of(seen)),
        Call::Cas {
            expected,
            outcome: CasOutcome::Applied,
            ..
        } => Some(expected),
        _ => None,
    }
}

/// The end of an indeterminate write's window, or `None` when it never applied.
fn window_end(write: &Timed<'_>, calls: &[Timed<'_>], interner: &Interner<'_>) -> Option<u64> {
    let Call::Cas { expected, next, .. } = write.call else {
        return None;
    };
    let later = calls
        .iter()
        .filter(|other| other.required && other.end > write.invoked);
    match next {
        // Applied iff someone saw its record; then before the first such observer completed.
        Some(_) => {
            let fence = interner.fence_of(next);
            later
                .filter(|other| shows(other, interner) == Some(fence))
                .map(|other| other.end)
                .min()
        }
        // A delete: live until a record other than the one it expects is seen after it.
        None => Some(
            later
                .filter(|other| other.invoked > write.invoked)
                .filter(
                    |other| matches!(shows(other, interner), Some(Some(f)) if Some(f) != expected),
                )
                .map(|other| other.end)
                .min()
                .unwrap_or(u64::MAX),
        ),
    }
}

/// Splits the calls where everything started before has ended.
fn segments<'c, 'a>(calls: &'c [Timed<'a>]) -> Vec<&'c [Timed<'a>]> {
    let mut cuts = Vec::new();
    let (mut start, mut reach) = (0, 0);
    for (i, call) in calls.iter().enumerate() {
        if i > start && call.invoked > reach {
            cuts.push(&calls[start..i]);
            start = i;
        }
        reach = reach.max(call.end);
    }
    if start < calls.len() {
        cuts.push(&calls[start..]);
    }
    cuts
}

/// Which calls are placed (linearized, or skipped as never taking effect): every call before
/// `lo`, and the indices in `beyond` (sorted, all above `lo`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Placed {
    lo: usize,
    beyond: Vec<usize>,
}

impl Placed {
    fn has(&self, i: usize) -> bool {
        i < self.lo || self.beyond.binary_search(&i).is_ok()
    }

    /// The same set plus `i`, with the prefix advanced over what became contiguous.
    fn with(&self, i: usize) -> Self {
        let mut next = self.clone();
        if let Err(at) = next.beyond.binary_search(&i) {
            next.beyond.insert(at, i);
        }
        while next.beyond.first() == Some(&next.lo) {
            next.beyond.remove(0);
            next.lo += 1;
        }
        next
    }

    fn count(&self) -> usize {
        self.lo + self.beyond.len()
    }
}

struct Search<'s, 'a> {
    calls: &'s [Timed<'a>],
    interner: &'s Interner<'a>,
    seen: HashSet<(Placed, State)>,
    stack: Vec<(Placed, State)>,
    ends: HashSet<State>,
    deepest: (usize, Placed, State),
}

impl<'s, 'a> Search<'s, 'a> {
    fn new(calls: &'s [Timed<'a>], interner: &'s Interner<'a>, starts: &HashSet<State>) -> Self {
        let empty = Placed {
            lo: 0,
            beyond: Vec::new(),
        };
        let stack: Vec<(Placed, State)> = starts.iter().map(|&s| (empty.clone(), s)).collect();
        Self {
            calls,
            interner,
            seen: stack.iter().cloned().collect(),
            deepest: (0, empty, starts.iter().next().copied().flatten()),
            stack,
            ends: HashSet::new(),
        }
    }

    /// Every value the segment can end in, or why it cannot be ordered.
    fn run(mut self) -> Result<HashSet<State>, Verdict> {
        let mut steps = 0;
        while let Some((placed, state)) = self.stack.pop() {
            steps += 1;
            if steps > SEGMENT_BUDGET {
                return Err(Verdict::Inconclusive(format!(
                    "a segment of {} calls took more than {SEGMENT_BUDGET} states",
                    self.calls.len()
                )));
            }
            let placed = self.place_observations(placed, state);
            if self.all_required_placed(&placed) {
                self.ends.insert(state);
            }
            self.note_depth(&placed, state);
            self.expand(&placed, state);
        }
        if self.ends.is_empty() {
            return Err(self.explain());
        }
        Ok(self.ends)
    }

    fn all_required_placed(&self, placed: &Placed) -> bool {
        (placed.lo..self.calls.len()).all(|i| placed.has(i) || !self.calls[i].required)
    }

    /// The earliest end of a call not yet placed: no call invoked after it may go next.
    fn horizon(&self, placed: &Placed) -> u64 {
        let mut horizon = u64::MAX;
        for i in placed.lo..self.calls.len() {
            let call = &self.calls[i];
            if call.invoked > horizon {
                break;
            }
            if !placed.has(i) {
                horizon = horizon.min(call.end);
            }
        }
        horizon
    }

    /// The calls that may go next.
    fn candidates(&self, placed: &Placed) -> Vec<usize> {
        let horizon = self.horizon(placed);
        (placed.lo..self.calls.len())
            .take_while(|&i| self.calls[i].invoked <= horizon)
            .filter(|&i| !placed.has(i))
            .collect()
    }

    /// Places, repeatedly, every candidate observation that fits `state`.
    fn place_observations(&self, mut placed: Placed, state: State) -> Placed {
        loop {
            let fitting = self.candidates(&placed).into_iter().find(|&i| {
                let call = self.calls[i];
                call.required
                    && call.call.is_observation()
                    && call.call.step(state, self.interner).is_some()
            });
            match fitting {
                Some(i) => placed = placed.with(i),
                None => return placed,
            }
        }
    }

    /// Pushes every state reachable by placing one more call: taking effect, or, for an
    /// indeterminate call, not taking effect.
    fn expand(&mut self, placed: &Placed, state: State) {
        let mut next_states = Vec::new();
        for i in self.candidates(placed) {
            let call = self.calls[i];
            let with = placed.with(i);
            if let Some(next) = call.call.step(state, self.interner) {
                next_states.push((with.clone(), next));
            }
            if !call.required {
                next_states.push((with, state));
            }
        }
        for next in next_states.into_iter().rev() {
            if self.seen.insert(next.clone()) {
                self.stack.push(next);
            }
        }
    }

    fn note_depth(&mut self, placed: &Placed, state: State) {
        if placed.count() > self.deepest.0 {
            self.deepest = (placed.count(), placed.clone(), state);
        }
    }

    fn explain(&self) -> Verdict {
        let (count, placed, state) = &self.deepest;
        let stuck: Vec<&Timed<'_>> = (0..self.calls.len())
            .filter(|&i| !placed.has(i) && self.calls[i].required)
            .take(3)
            .map(|i| &self.calls[i])
            .collect();
        let at_ms = stuck.first().map_or(0, |call| call.invoked);
        let stuck: Vec<String> = stuck.iter().map(|call| call.op.describe()).collect();
        let kind = |k: OpKind| self.calls.iter().filter(|c| c.op.kind() == k).count();
        let detail = format!(
            "no order of {} backend calls ({} reads, {} writes) fits the register; at best {count} \
             placed, holding {}, then none of these could follow: {}",
            self.calls.len(),
            kind(OpKind::Get),
            kind(OpKind::Write),
            self.interner.show(*state),
            stuck.join(" | ")
        );
        Verdict::NotLinearizable { detail, at_ms }
    }
}
