//! The exactly-once properties, each a direct look at one key's ops and effects.
//!
//! These are cheap and name the anomaly, where linearizability only says "no order fits". They
//! are also the only checks that see the effect ledger: the store can be perfectly
//! linearizable while a runner still executes an effect twice.

use std::collections::HashMap;

use super::{KeyView, Violation, ViolationKind};
use crate::history::{ClaimView, Effect, FenceView, OpKind, Operation, StateView};

/// Runs every property on one key.
pub fn check_key(view: &KeyView<'_>, out: &mut Vec<Violation>) {
    double_execution(view, out);
    lost_write(view, out);
    stale_fence(view, out);
    conflict_executed(view, out);
    silent_unknown_resolution(view, out);
    early_takeover(view, out);
}

fn violation(kind: ViolationKind, view: &KeyView<'_>, time_ms: u64, detail: String) -> Violation {
    Violation {
        kind,
        key: view.key.to_owned(),
        time_ms,
        detail,
    }
}

fn describe_effect(effect: &Effect) -> String {
    format!(
        "effect of {} at {} fp={:?} fence={}",
        effect.op_ref(),
        effect.time_ms,
        effect.fingerprint,
        effect.fence
    )
}

/// The state an acknowledged op left the record in (`None` for prunes and unacknowledged ops).
fn state_after(op: &Operation) -> Option<StateView> {
    if !op.is_ok() {
        return None;
    }
    match op.kind() {
        OpKind::Claim if op.claim_status() == Some(ClaimView::Owner) => Some(StateView::Pending),
        OpKind::Claim | OpKind::Read => op.observed(),
        OpKind::Settle | OpKind::Reconcile => op.observed().or(op.settle_to()),
        OpKind::Prune | OpKind::Get | OpKind::Write => None,
    }
}

/// The state an acknowledged op found: a settle or an owner claim needs a pending (or absent)
/// record, whatever it leaves behind.
fn state_before(op: &Operation) -> Option<StateView> {
    let writes_from_pending = op.kind() == OpKind::Settle
        || (op.kind() == OpKind::Claim && op.claim_status() == Some(ClaimView::Owner));
    if op.is_ok() && writes_from_pending {
        return Some(StateView::Pending);
    }
    state_after(op)
}

/// A backend delete that may have applied (not refused): what a prune removed.
fn is_delete(op: &Operation) -> bool {
    op.kind() == OpKind::Write && op.value().is_none() && op.applied() != Some(false)
}

/// Operations (not known to have failed) as time windows, to ask in O(log n) whether one of
/// them may have run between two instants: sorted by invoke, with the latest completion among
/// each prefix.
struct Windows {
    invoked: Vec<u64>,
    latest_done: Vec<u64>,
}

impl Windows {
    fn of<'a>(ops: impl Iterator<Item = &'a Operation>) -> Self {
        let mut spans: Vec<(u64, u64)> = ops
            .filter(|op| !op.is_fail())
            .map(|op| (op.invoked_ms(), op.done_by_ms()))
            .collect();
        spans.sort_unstable();
        let mut latest = 0;
        let latest_done = spans
            .iter()
            .map(|&(_, done)| {
                latest = latest.max(done);
                latest
            })
            .collect();
        Self {
            invoked: spans.iter().map(|&(invoked, _)| invoked).collect(),
            latest_done,
        }
    }

    /// Whether one of them may have taken effect between `after_ms` and `to`'s completion.
    /// Times are whole milliseconds, so an op ending in the millisecond another starts may
    /// still have taken effect after it: the bounds are inclusive.
    fn between(&self, after_ms: u64, to: &Operation) -> bool {
        let started = self.invoked.partition_point(|&at| at <= to.done_by_ms());
        started > 0 && self.latest_done[started - 1] >= after_ms
    }
}

fn double_execution(view: &KeyView<'_>, out: &mut Vec<Violation>) {
    effects_under_one_fence(view, out);
    effects_after_completion(view, out);
}

/// The key's deletes (what prunes removed), by the record lifetime they deleted.
struct Deletes<'a> {
    all: Vec<&'a Operation>,
    by_incarnation: HashMap<&'a str, Vec<&'a Operation>>,
}

impl<'a> Deletes<'a> {
    fn of(view: &KeyView<'a>) -> Self {
        let all: Vec<&Operation> = view
            .ops
            .iter()
            .copied()
            .filter(|op| is_delete(op))
            .collect();
        let mut by_incarnation: HashMap<&str, Vec<&Operation>> = HashMap::new();
        for op in &all {
            if let Some(fence) = op.input_fence() {
                by_incarnation
                    .entry(fence.incarnation.as_str())
                    .or_default()
                    .push(op);
            }
        }
        Self {
            all,
            by_incarnation,
        }
    }

    /// The deletes of `incarnation` (every delete when it is not known).
    fn of_lifetime(&self, incarnation: Option<&str>) -> &[&'a Operation] {
        match incarnation {
            None => &self.all,
            Some(mine) => self.by_incarnation.get(mine).map_or(&[], Vec::as_slice),
        }
    }

    /// Whether a delete of a record of `incarnation` may have applied before `before_ms`.
    fn before(&self, incarnation: &str, before_ms: u64) -> bool {
        self.of_lifetime(Some(incarnation))
            .iter()
            .any(|op| op.invoked_ms() < before_ms)
    }
}

/// Two effects under the same fence: one ownership ran the effect twice.
fn effects_under_one_fence(view: &KeyView<'_>, out: &mut Vec<Violation>) {
    let mut by_fence: HashMap<&FenceView, Vec<&Effect>> = HashMap::new();
    for effect in &view.effects {
        by_fence.entry(&effect.fence).or_default().push(effect);
    }
    let mut repeated: Vec<_> = by_fence.into_iter().filter(|(_, e)| e.len() > 1).collect();
    repeated.sort_by(|a, b| a.0.cmp(b.0));
    for (fence, effects) in repeated {
        let list: Vec<String> = effects.iter().map(|e| describe_effect(e)).collect();
        let detail = format!(
            "{} effects under fence {fence}: {}",
            effects.len(),
            list.join("; ")
        );
        let at = effects.iter().map(|e| e.time_ms).max().unwrap_or(0);
        out.push(violation(ViolationKind::DoubleExecution, view, at, detail));
    }
}

/// An effect that started after a completed record was acknowledged: in the same record
/// lifetime, or in a new one although nobody deleted the completed record (it was lost, and the
/// operation ran again). A second effect after a delete of that record (a prune past
/// retention), or after a failed outcome, is legitimate.
fn effects_after_completion(view: &KeyView<'_>, out: &mut Vec<Violation>) {
    let deletes = Deletes::of(view);
    let acks: Vec<&Operation> = view
        .ops
        .iter()
        .copied()
        .filter(|op| state_after(op) == Some(StateView::Completed))
        .collect();
    for effect in &view.effects {
        let rerun = |op: &&&Operation| match op.fence() {
            None => true,
            Some(f) if f.incarnation == effect.fence.incarnation => true,
            Some(f) => !deletes.before(&f.incarnation, effect.time_ms),
        };
        let earlier = acks
            .iter()
            .filter(|op| op.done_by_ms() < effect.time_ms)
            .find(rerun);
        if let Some(ack) = earlier {
            let lifetime = if ack
                .fence()
                .is_some_and(|f| f.incarnation != effect.fence.incarnation)
            {
                " (a new record lifetime, and no delete of the completed record)"
            } else {
                ""
            };
            let detail = format!(
                "{} ran after completion was acknowledged by {}{lifetime}",
                describe_effect(effect),
                ack.describe()
            );
            out.push(violation(
                ViolationKind::DoubleExecution,
                view,
                effect.time_ms,
                detail,
            ));
        }
    }
}

// --- LostWrite -------------------------------------------------------------------------------

/// An acknowledged settle to `S`, or reconcile that resolved to `S`.
fn acknowledged_write(op: &Operation) -> Option<StateView> {
    let to = op.settle_to()?;
    let wrote = match op.kind() {
        OpKind::Settle => true,
        OpKind::Reconcile => op.observed().is_none_or(|seen| seen == to),
        _ => false,
    };
    (op.is_ok() && wrote).then_some(to)
}

/// What a later op may find after `written` was acknowledged (absent any prune).
fn may_follow(written: StateView, found: StateView) -> bool {
    match written {
        StateView::Unknown => matches!(
            found,
            StateView::Unknown | StateView::Completed | StateView::Failed
        ),
        settled => found == settled,
    }
}

fn lost_write(view: &KeyView<'_>, out: &mut Vec<Violation>) {
    let all_deletes = Deletes::of(view);
    for ack in &view.ops {
        let Some(written) = acknowledged_write(ack) else {
            continue;
        };
        // Only a delete of this very record lifetime excuses its disappearance.
        let incarnation = ack.fence().map(|f| f.incarnation.as_str());
        let deletes = Windows::of(all_deletes.of_lifetime(incarnation).iter().copied());
        if let Some((at, detail)) = first_contradiction(view, &deletes, ack, written) {
            out.push(violation(ViolationKind::LostWrite, view, at, detail));
        }
    }
}

/// The first acknowledged op invoked after `ack` completed that finds something `written`
/// cannot have become, unless a prune may have run in between.
fn first_contradiction(
    view: &KeyView<'_>,
    prunes: &Windows,
    ack: &Operation,
    written: StateView,
) -> Option<(u64, String)> {
    let acked_ms = ack.completed_ms()?;
    let incarnation = ack.fence().map(|f| f.incarnation.as_str());
    for later in view.ops.iter().filter(|op| op.invoked_ms() > acked_ms) {
        let Some(found) = state_before(later) else {
            continue;
        };
        if prunes.between(acked_ms, later) {
            return None;
        }
        let other_lifetime = matches!(
            (incarnation, later.fence()),
            (Some(mine), Some(theirs)) if mine != theirs.incarnation
        );
        if !may_follow(written, found) || other_lifetime {
            let detail = format!(
                "{} was acknowledged as {written:?}, then {} found {found:?}",
                ack.describe(),
                later.describe()
            );
            return Some((later.invoked_ms(), detail));
        }
    }
    None
}

// --- StaleFence ------------------------------------------------------------------------------

fn stale_fence(view: &KeyView<'_>, out: &mut Vec<Violation>) {
    let owners: Vec<&Operation> = view
        .ops
        .iter()
        .copied()
        .filter(|op| is_owner_claim(op))
        .collect();
    let settles: Vec<&Operation> = view
        .ops
        .iter()
        .copied()
        .filter(|op| op.is_ok() && op.kind() == OpKind::Settle && op.input_fence().is_some())
        .collect();
    for settle in &settles {
        if let Some(newer) = superseding_grant(&owners, settle) {
            let detail = format!(
                "{} was acknowledged although {} had already granted a newer fence",
                settle.describe(),
                newer.describe()
            );
            out.push(violation(
                ViolationKind::StaleFence,
                view,
                settle.invoked_ms(),
                detail,
            ));
        }
    }
    rival_settles(view, &settles, out);
}

fn is_owner_claim(op: &Operation) -> bool {
    op.kind() == OpKind::Claim
        && op.claim_status() == Some(ClaimView::Owner)
        && op.fence().is_some()
}

/// An owner claim completed before `settle` was invoked whose fence supersedes the settle's.
fn superseding_grant<'a>(owners: &[&'a Operation], settle: &Operation) -> Option<&'a Operation> {
    let fence = settle.input_fence()?;
    let own_grant = owners.iter().find(|op| op.fence() == Some(fence));
    owners.iter().copied().find(|grant| {
        let Some(granted) = grant.fence() else {
            return false;
        };
        let newer = if granted.incarnation == fence.incarnation {
            granted.revision > fence.revision
        } else {
            own_grant.is_some_and(|own| own.done_by_ms() < grant.invoked_ms())
        };
        grant.done_by_ms() < settle.invoked_ms() && newer
    })
}

/// Two acknowledged settles of one record lifetime under different fences: only one owner may
/// ever settle a pending record.
fn rival_settles(view: &KeyView<'_>, settles: &[&Operation], out: &mut Vec<Violation>) {
    for (i, first) in settles.iter().enumerate() {
        let (Some(a), rest) = (first.input_fence(), &settles[i + 1..]) else {
            continue;
        };
        let rival = rest.iter().find(|op| {
            op.input_fence()
                .is_some_and(|b| b.incarnation == a.incarnation && b != a)
        });
        if let Some(rival) = rival {
            let detail = format!(
                "two settles acknowledged under different fences: {} and {}",
                first.describe(),
                rival.describe()
            );
            out.push(violation(
                ViolationKind::StaleFence,
                view,
                rival.invoked_ms(),
                detail,
            ));
        }
    }
}

// --- ConflictExecuted ------------------------------------------------------------------------

fn conflict_executed(view: &KeyView<'_>, out: &mut Vec<Violation>) {
    for effect in &view.effects {
        if let Some(detail) = conflict_of(view, effect) {
            out.push(violation(
                ViolationKind::ConflictExecuted,
                view,
                effect.time_ms,
                detail,
            ));
        }
    }
}

/// Why `effect` should never have run: its claim returned `Conflict`, or its fingerprint is
/// not the one its record lifetime was created with.
fn conflict_of(view: &KeyView<'_>, effect: &Effect) -> Option<String> {
    let claim = view
        .ops
        .iter()
        .find(|op| op.kind() == OpKind::Claim && op.op_ref() == effect.op_ref());
    if let Some(claim) = claim.filter(|c| c.claim_status() == Some(ClaimView::Conflict)) {
        return Some(format!(
            "{} ran for {}, which returned Conflict",
            describe_effect(effect),
            claim.describe()
        ));
    }
    let creator = view.ops.iter().find(|op| {
        is_owner_claim(op)
            && op
                .fence()
                .is_some_and(|f| f.incarnation == effect.fence.incarnation)
    })?;
    (creator.fingerprint() != effect.fingerprint).then(|| {
        format!(
            "{} ran for another fingerprint than the record's, created by {}",
            describe_effect(effect),
            creator.describe()
        )
    })
}

// --- SilentUnknownResolution -----------------------------------------------------------------

fn silent_unknown_resolution(view: &KeyView<'_>, out: &mut Vec<Violation>) {
    // Unknown observations by completion time, with the latest invoke among each prefix: the
    // latest one before a settled observation is the hardest to excuse (an intervention that
    // excuses it excuses every earlier one), so it is the only one to test.
    let mut unknowns: Vec<&Operation> = view
        .ops
        .iter()
        .copied()
        .filter(|op| state_after(op) == Some(StateView::Unknown))
        .collect();
    if unknowns.is_empty() {
        return;
    }
    unknowns.sort_by_key(|op| op.done_by_ms());
    let mut latest: Vec<&Operation> = Vec::with_capacity(unknowns.len());
    for op in &unknowns {
        let keep = match latest.last() {
            Some(prev) if prev.invoked_ms() >= op.invoked_ms() => *prev,
            _ => *op,
        };
        latest.push(keep);
    }
    let interventions = Windows::of(
        view.ops
            .iter()
            .copied()
            .filter(|op| op.kind() == OpKind::Reconcile || is_delete(op)),
    );
    let settled_reads = view.ops.iter().filter(|op| {
        op.kind() != OpKind::Reconcile && state_after(op).is_some_and(StateView::is_settled)
    });
    for later in settled_reads {
        let before = unknowns.partition_point(|op| op.done_by_ms() < later.invoked_ms());
        let Some(unknown) = before.checked_sub(1).map(|at| latest[at]) else {
            continue;
        };
        if !interventions.between(unknown.invoked_ms(), later) {
            let detail = format!(
                "{} found unknown, then {} found {:?} with no reconcile in between",
                unknown.describe(),
                later.describe(),
                state_after(later)
            );
            out.push(violation(
                ViolationKind::SilentUnknownResolution,
                view,
                later.invoked_ms(),
                detail,
            ));
        }
    }
}

// --- EarlyTakeover ---------------------------------------------------------------------------

/// A backend write that took a pending record from its owner (same lifetime, another owner,
/// still pending) while the lease it replaced had not ended in the taker's configured clock.
///
/// The store decides a takeover with its clock at some instant before the write is invoked, so
/// `invoked + skew` bounds the taker's clock at that decision from above: a deadline later than
/// that means the lease was still live when it was taken. Exact, so it never cries wolf; a
/// clock the harness did not configure (the `lease-ignores-clock` mutant) shows up here.
fn early_takeover(view: &KeyView<'_>, out: &mut Vec<Violation>) {
    let mut written: HashMap<&FenceView, &crate::history::RecordValue> = HashMap::new();
    for op in &view.ops {
        if let Some(value) = op.value().filter(|_| op.is_backend()) {
            written.insert(&value.fence, value);
        }
    }
    for op in &view.ops {
        let taken = op.kind() == OpKind::Write && op.applied() == Some(true);
        let (Some(next), Some(expected)) = (op.value().filter(|_| taken), op.input_fence()) else {
            continue;
        };
        let Some(previous) = written.get(expected) else {
            continue;
        };
        let takeover = previous.state == StateView::Pending
            && next.state == StateView::Pending
            && next.owner != previous.owner
            && next.fence.incarnation == previous.fence.incarnation;
        let clock = op
            .invoked_ms()
            .saturating_add_signed(op.invoke.skew_ms.unwrap_or(0));
        if let Some(deadline) = previous.lease_expires_at.filter(|&d| takeover && clock < d) {
            let detail = format!(
                "{} took over {previous} whose lease ran until {deadline}, {} ms later than the \
                 taker's clock at its write",
                op.describe(),
                deadline - clock
            );
            out.push(violation(
                ViolationKind::EarlyTakeover,
                view,
                op.invoked_ms(),
                detail,
            ));
        }
    }
}
