//! Judges a [`History`]: the exactly-once promises, then per-key linearizability.
//!
//! Why two layers: linearizability of the backend register (every read and write the store made,
//! recorded beneath it) is the complete correctness criterion for what was stored, but "not
//! linearizable" says little about what went wrong, and says nothing about the store's own
//! decisions (a takeover before the lease ended writes a perfectly linearizable value). The
//! [`properties`] name the anomalies that matter to a user (an effect ran twice, a settlement
//! vanished, a stale owner won, a conflicting request ran, an `unknown` turned terminal with
//! nobody reconciling it) and look at the effect ledger, which the model never sees. A key with
//! a named anomaly is not reported a second time as [`ViolationKind::NotLinearizable`]: that
//! kind is kept for anomalies no property names.
//!
//! Real time: op A precedes op B when A completed strictly before B was invoked; equal times
//! count as concurrent. Indeterminate ops (`Info`, or an invoke without completion) never
//! complete, so they may take effect at any time after their invoke.

pub mod linearizable;
pub mod properties;
mod register;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::history::{Effect, History, OpKind, Operation, StateView};
use linearizable::Verdict;

/// The kinds of violation the checker reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ViolationKind {
    /// An effect ran after a completed record was acknowledged (in its lifetime, or in a new
    /// one while nobody deleted the completed record), or twice under one fence.
    DoubleExecution,
    /// An acknowledged settlement or reconciliation later read as absent, pending or another
    /// state, with no delete of that record that could explain it.
    LostWrite,
    /// A settle with a superseded fence was acknowledged, or two settles with different fences.
    StaleFence,
    /// An effect ran for a claim that returned `Conflict`, or for another fingerprint.
    ConflictExecuted,
    /// An `unknown` record later read as completed/failed without any reconcile in between.
    SilentUnknownResolution,
    /// A pending record was taken over before its lease ended, in the taker's own clock.
    EarlyTakeover,
    /// No order of the key's operations fits the sequential record model.
    NotLinearizable,
}

/// One violation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// What kind.
    pub kind: ViolationKind,
    /// The key.
    pub key: String,
    /// When it happened: the time of the op or effect that makes it one (ms since the epoch).
    pub time_ms: u64,
    /// The operations and effects involved.
    pub detail: String,
}

/// A key whose linearizability search was too large to finish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inconclusive {
    /// The key.
    pub key: String,
    /// Why the search stopped.
    pub reason: String,
}

/// What the checker found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Operations in the history.
    pub ops: usize,
    /// Effects in the ledger.
    pub effects: usize,
    /// Every violation found.
    pub violations: Vec<Violation>,
    /// Operations whose outcome is indeterminate.
    pub indeterminate: usize,
    /// Acknowledged reconciliations that resolved an `unknown` record.
    pub unknowns_reconciled: usize,
    /// Keys whose linearizability could not be decided (`inconclusive.len()`).
    pub inconclusive_keys: usize,
    /// Those keys and why.
    pub inconclusive: Vec<Inconclusive>,
}

impl Report {
    /// Whether nothing was violated (inconclusive keys are not violations).
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }

    /// The violations of one kind.
    pub fn of_kind(&self, kind: ViolationKind) -> impl Iterator<Item = &Violation> {
        self.violations.iter().filter(move |v| v.kind == kind)
    }
}

/// Everything about one key: its ops (the store's calls and the backend calls beneath them) and
/// its effects, in time order.
#[derive(Debug, Default)]
pub struct KeyView<'a> {
    /// The key.
    pub key: &'a str,
    /// Its operations, by invoke time.
    pub ops: Vec<&'a Operation>,
    /// Its effects, by time.
    pub effects: Vec<&'a Effect>,
}

/// Checks a whole history.
pub fn check(history: &History) -> Report {
    let mut report = Report {
        ops: history.ops.len(),
        effects: history.effects.len(),
        indeterminate: history
            .ops
            .iter()
            .filter(|op| op.is_indeterminate())
            .count(),
        unknowns_reconciled: history.ops.iter().filter(|op| resolves_unknown(op)).count(),
        ..Report::default()
    };
    for view in key_views(history).values() {
        check_view(view, &mut report);
    }
    report.inconclusive_keys = report.inconclusive.len();
    report
}

/// The properties of one key, then its linearizability unless a property already explains it.
fn check_view(view: &KeyView<'_>, report: &mut Report) {
    let before = report.violations.len();
    properties::check_key(view, &mut report.violations);
    let explained = report.violations.len() > before;
    match linearizable::check_key(&view.ops) {
        Verdict::Linearizable => {}
        Verdict::NotLinearizable { .. } if explained => {}
        Verdict::NotLinearizable { detail, at_ms } => report.violations.push(Violation {
            kind: ViolationKind::NotLinearizable,
            key: view.key.to_owned(),
            time_ms: at_ms,
            detail,
        }),
        Verdict::Inconclusive(reason) => report.inconclusive.push(Inconclusive {
            key: view.key.to_owned(),
            reason,
        }),
    }
}

/// An acknowledged reconcile that wrote the state it asked for.
fn resolves_unknown(op: &Operation) -> bool {
    let to = op.settle_to();
    op.is_ok()
        && op.kind() == OpKind::Reconcile
        && to.is_some_and(StateView::is_settled)
        && op.observed().is_none_or(|seen| Some(seen) == to)
}

/// Groups ops and effects by key. A store-wide prune joins no key: what it removed is in its
/// backend deletes, each under its key.
pub fn key_views(history: &History) -> BTreeMap<&str, KeyView<'_>> {
    let mut views: BTreeMap<&str, KeyView<'_>> = BTreeMap::new();
    for op in history.ops.iter().filter(|op| op.kind() != OpKind::Prune) {
        view_of(&mut views, op.key()).ops.push(op);
    }
    for effect in &history.effects {
        view_of(&mut views, &effect.key).effects.push(effect);
    }
    views
}

/// The view of `key`, created empty on first use.
fn view_of<'a, 'm>(
    views: &'m mut BTreeMap<&'a str, KeyView<'a>>,
    key: &'a str,
) -> &'m mut KeyView<'a> {
    views.entry(key).or_insert_with(|| KeyView {
        key,
        ..KeyView::default()
    })
}
