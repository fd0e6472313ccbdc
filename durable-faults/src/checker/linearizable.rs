//! Per-key linearizability: a Wing–Gong search with memoization, as Knossos does it.
//!
//! The search looks for one total order of the key's operations that respects real time and
//! that the sequential record model (`checker::model`) accepts. A search state is the set of ops
//! already linearized plus the model state they left; a state seen once is never expanded
//! again, which turns the exponential search into one bounded by the distinct (set, model)
//! pairs. `Ok` ops must all be linearized, each between its invoke and its completion; `Fail`
//! ops are dropped (they did not take effect); indeterminate ops may be linearized anywhere
//! after their invoke, or never.
//!
//! Why bounded: the number of distinct sets grows with the number of ops open at once. A key
//! with more than [`MAX_CONCURRENT_OPS`] ops open at one instant, or a search longer than
//! [`STEP_BUDGET`] states, is reported as inconclusive instead of hanging the checker.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use super::model::{self, Model};
use crate::history::{OpKind, Operation, Outcome};

/// Most ops that may be open at one instant on one key before the key is inconclusive.
pub const MAX_CONCURRENT_OPS: usize = 64;
/// Most search states expanded for one key before it is inconclusive.
pub const STEP_BUDGET: usize = 200_000;

/// The verdict on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Some order explains every observation.
    Linearizable,
    /// No order does; the detail names where the search got stuck.
    NotLinearizable(String),
    /// The search was too large to finish.
    Inconclusive(String),
}

/// Checks the ops of one key (in invoke order).
pub(crate) fn check_key(ops: &[&Operation]) -> Verdict {
    let ops: Vec<&Operation> = ops.iter().copied().filter(|op| can_matter(op)).collect();
    let width = max_open_ops(&ops);
    if width > MAX_CONCURRENT_OPS {
        return Verdict::Inconclusive(format!(
            "{width} ops open at once (more than {MAX_CONCURRENT_OPS})"
        ));
    }
    Search::new(ops).run()
}

/// `Fail` ops had no effect, and an indeterminate read neither changed nor reported anything.
fn can_matter(op: &Operation) -> bool {
    match op.outcome() {
        Outcome::Ok => true,
        Outcome::Fail => false,
        Outcome::Indeterminate => op.kind() != OpKind::Read,
    }
}

/// The most `Ok` ops open at any invoke instant.
fn max_open_ops(ops: &[&Operation]) -> usize {
    let mut open: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut widest = 0;
    for op in ops {
        while open
            .peek()
            .is_some_and(|Reverse(end)| *end < op.invoked_ms())
        {
            open.pop();
        }
        // An indeterminate op can be placed (or skipped) any time later, so it does not keep
        // the window open: it counts at its invoke.
        let closes = if op.is_ok() {
            op.done_by_ms()
        } else {
            op.invoked_ms()
        };
        open.push(Reverse(closes));
        widest = widest.max(open.len());
    }
    widest
}

/// Which ops are placed (linearized, or skipped as never taking effect): every op before `lo`,
/// and the indices in `beyond` (sorted, all above `lo`). Keeping the placed prefix as one
/// number keeps states small and every scan within the window of open ops, not the history.
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

/// The deepest point a failed search reached, for the report.
struct Deepest {
    linearized: usize,
    done: Placed,
    model: Model,
}

struct Search<'a> {
    ops: Vec<&'a Operation>,
    seen: HashSet<(Placed, Model)>,
    stack: Vec<(Placed, Model)>,
    deepest: Deepest,
}

impl<'a> Search<'a> {
    fn new(ops: Vec<&'a Operation>) -> Self {
        let start = (
            Placed {
                lo: 0,
                beyond: Vec::new(),
            },
            None,
        );
        Self {
            deepest: Deepest {
                linearized: 0,
                done: start.0.clone(),
                model: None,
            },
            seen: HashSet::from([start.clone()]),
            stack: vec![start],
            ops,
        }
    }

    fn run(mut self) -> Verdict {
        let mut steps = 0;
        while let Some((done, model)) = self.stack.pop() {
            steps += 1;
            if steps > STEP_BUDGET {
                return Verdict::Inconclusive(format!(
                    "search exceeded {STEP_BUDGET} states over {} ops",
                    self.ops.len()
                ));
            }
            // Indeterminate ops may be skipped, so everything placed means every `Ok` op is.
            if done.lo == self.ops.len() {
                return Verdict::Linearizable;
            }
            self.note_depth(&done, &model);
            self.expand(&done, &model);
        }
        Verdict::NotLinearizable(self.explain())
    }

    /// The earliest completion of an `Ok` op not yet placed: no op invoked after it may go
    /// next, or real time would be violated. Ops are in invoke order, so the scan stops once
    /// an invoke passes the earliest completion seen.
    fn horizon(&self, done: &Placed) -> u64 {
        let mut horizon = u64::MAX;
        for i in done.lo..self.ops.len() {
            let op = self.ops[i];
            if op.invoked_ms() > horizon {
                break;
            }
            if !done.has(i) && op.is_ok() {
                horizon = horizon.min(op.done_by_ms());
            }
        }
        horizon
    }

    /// Pushes every state reachable by placing one more op: linearizing it, or, for an
    /// indeterminate op, deciding it never took effect. The earliest op is tried first (and an
    /// indeterminate op's effect before its absence), so a history that is linearizable is
    /// usually walked in order with few placed ops beyond the prefix.
    fn expand(&mut self, done: &Placed, model: &Model) {
        let horizon = self.horizon(done);
        let mut next_states = Vec::new();
        for i in done.lo..self.ops.len() {
            if self.ops[i].invoked_ms() > horizon {
                break;
            }
            if done.has(i) {
                continue;
            }
            let placed = done.with(i);
            for next in model::step(model, self.ops[i]) {
                next_states.push((placed.clone(), next));
            }
            if !self.ops[i].is_ok() {
                next_states.push((placed, model.clone()));
            }
        }
        // The stack pops the last pushed first.
        for (placed, next) in next_states.into_iter().rev() {
            self.push(placed, next);
        }
    }

    fn push(&mut self, placed: Placed, model: Model) {
        let state = (placed, model);
        if self.seen.insert(state.clone()) {
            self.stack.push(state);
        }
    }

    fn note_depth(&mut self, done: &Placed, model: &Model) {
        let linearized = done.count();
        if linearized > self.deepest.linearized {
            self.deepest = Deepest {
                linearized,
                done: done.clone(),
                model: model.clone(),
            };
        }
    }

    fn explain(&self) -> String {
        let deepest = &self.deepest;
        let stuck = (0..self.ops.len())
            .find(|&i| !deepest.done.has(i) && self.ops[i].is_ok())
            .map_or_else(|| "none".to_owned(), |i| self.ops[i].describe());
        format!(
            "no order of {} ops fits the record model; at best {} linearized, leaving {:?} \
             (state {:?}), then the first required op that could not follow: {stuck}",
            self.ops.len(),
            deepest.linearized,
            deepest.model,
            model::state_of(&deepest.model),
        )
    }
}
