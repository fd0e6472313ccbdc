//! Hand-made histories: each anomaly caught with exactly its kind, and a correct concurrent
//! history (with indeterminate ops, a takeover and a reconciliation) that passes.

use super::*;
use crate::history::{ClaimView, Effect, Event, FenceView, OpKind, OpRef, Phase, StateView};

use ClaimView as C;
use StateView as S;

/// One store call before it is timed: who, what, and what it saw.
#[derive(Debug, Clone)]
struct Spec {
    worker: u32,
    kind: OpKind,
    key: &'static str,
    fingerprint: &'static str,
    input_fence: Option<FenceView>,
    settle_to: Option<StateView>,
    fence: Option<FenceView>,
    observed: Option<StateView>,
    claim: Option<ClaimView>,
}

fn fence(incarnation: &str, revision: u64) -> FenceView {
    FenceView {
        incarnation: incarnation.into(),
        revision,
    }
}

fn spec(worker: u32, kind: OpKind, key: &'static str, fingerprint: &'static str) -> Spec {
    Spec {
        worker,
        kind,
        key,
        fingerprint,
        input_fence: None,
        settle_to: None,
        fence: None,
        observed: None,
        claim: None,
    }
}

fn claim(worker: u32, key: &'static str, fingerprint: &'static str) -> Spec {
    spec(worker, OpKind::Claim, key, fingerprint)
}

fn settle(worker: u32, key: &'static str, to: StateView, with: FenceView) -> Spec {
    Spec {
        settle_to: Some(to),
        input_fence: Some(with),
        ..spec(worker, OpKind::Settle, key, "fp")
    }
}

fn reconcile(worker: u32, key: &'static str, to: StateView, with: FenceView) -> Spec {
    Spec {
        settle_to: Some(to),
        input_fence: Some(with),
        ..spec(worker, OpKind::Reconcile, key, "fp")
    }
}

fn read(worker: u32, key: &'static str) -> Spec {
    spec(worker, OpKind::Read, key, "fp")
}

fn prune_all(worker: u32) -> Spec {
    spec(worker, OpKind::Prune, "", "fp")
}

impl Spec {
    /// A claim that returned `status` on a record in `state` with `fence`.
    fn saw(self, status: ClaimView, state: StateView, fence: FenceView) -> Self {
        Self {
            claim: Some(status),
            ..self.found(state, Some(fence))
        }
    }

    /// A claim that became the owner of a pending record with `fence`.
    fn owner(self, fence: FenceView) -> Self {
        self.saw(C::Owner, S::Pending, fence)
    }

    /// A read (or any op) that found `state` with `fence`.
    fn found(self, state: StateView, fence: Option<FenceView>) -> Self {
        Self {
            observed: Some(state),
            fence,
            ..self
        }
    }

    fn event(&self, op_id: u64, phase: Phase, time_ms: u64) -> Event {
        Event {
            time_ms,
            worker: self.worker,
            process: 0,
            op_id,
            phase,
            op: self.kind,
            key: self.key.into(),
            fingerprint: self.fingerprint.into(),
            fence: self.input_fence.clone(),
            observed: None,
            claim: None,
            settle_to: self.settle_to,
            error: None,
        }
    }

    fn completion(&self, op_id: u64, time_ms: u64) -> Event {
        Event {
            fence: self.fence.clone().or_else(|| self.input_fence.clone()),
            observed: self.observed.or(self.settle_to),
            claim: self.claim,
            ..self.event(op_id, Phase::Ok, time_ms)
        }
    }
}

/// Collects events and effects, numbering ops.
#[derive(Default)]
struct Builder {
    events: Vec<Event>,
    effects: Vec<Effect>,
    next_op: u64,
}

impl Builder {
    fn invoke(&mut self, spec: &Spec, at: u64) -> OpRef {
        self.next_op += 1;
        let event = spec.event(self.next_op, Phase::Invoke, at);
        let op = event.op_ref();
        self.events.push(event);
        op
    }

    /// An op acknowledged between `from` and `to`.
    fn ok(&mut self, spec: Spec, from: u64, to: u64) -> OpRef {
        let op = self.invoke(&spec, from);
        self.events.push(spec.completion(op.op_id, to));
        op
    }

    /// An op that definitely did not take effect.
    fn fail(&mut self, spec: Spec, from: u64, to: u64, code: &str) -> OpRef {
        let op = self.invoke(&spec, from);
        self.events.push(Event {
            error: Some(code.into()),
            ..spec.event(op.op_id, Phase::Fail, to)
        });
        op
    }

    /// An op that timed out.
    fn info(&mut self, spec: Spec, from: u64, to: u64) -> OpRef {
        let op = self.invoke(&spec, from);
        self.events.push(spec.event(op.op_id, Phase::Info, to));
        op
    }

    /// An op whose worker was killed before it completed.
    fn crashed(&mut self, spec: Spec, from: u64) -> OpRef {
        self.invoke(&spec, from)
    }

    /// The ledger line of an effect run by claim `op`.
    fn effect(&mut self, op: OpRef, key: &str, fingerprint: &str, fence: FenceView, at: u64) {
        self.effects.push(Effect {
            time_ms: at,
            worker: op.worker,
            process: op.process,
            op_id: op.op_id,
            key: key.into(),
            fingerprint: fingerprint.into(),
            fence,
        });
    }

    fn check(self) -> Report {
        let history = History::from_events(self.events, self.effects).unwrap();
        check(&history)
    }
}

/// Asserts the report holds violations of `kind` and of no other kind.
fn assert_only(report: &Report, kind: ViolationKind) {
    assert!(
        !report.violations.is_empty() && report.violations.iter().all(|v| v.kind == kind),
        "expected only {kind:?}, got {:#?}",
        report.violations
    );
}

/// A claim by worker 1 that owns `key` under `a@1`, and its effect.
fn owned_and_executed(h: &mut Builder, key: &'static str) -> OpRef {
    let owner = h.ok(claim(1, key, "fp").owner(fence("a", 1)), 0, 10);
    h.effect(owner, key, "fp", fence("a", 1), 12);
    owner
}

#[test]
fn effect_after_acknowledged_completion_is_a_double_execution() {
    let mut h = Builder::default();
    let owner = owned_and_executed(&mut h, "k");
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 20, 30);
    h.ok(
        claim(2, "k", "fp").saw(C::Replay, S::Completed, fence("a", 2)),
        35,
        38,
    );
    h.effect(owner, "k", "fp", fence("a", 1), 40);
    let report = h.check();
    assert_only(&report, ViolationKind::DoubleExecution);
    assert_eq!(report.violations[0].key, "k");
}

#[test]
fn settlement_read_back_as_absent_is_a_lost_write() {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 20, 30);
    h.ok(read(2, "k").found(S::Absent, None), 40, 50);
    assert_only(&h.check(), ViolationKind::LostWrite);
}

#[test]
fn settlement_reclaimed_as_owner_is_a_lost_write() {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(settle(1, "k", S::Failed, fence("a", 1)), 20, 30);
    h.ok(claim(2, "k", "fp").owner(fence("b", 1)), 40, 50);
    assert_only(&h.check(), ViolationKind::LostWrite);
}

#[test]
fn absent_after_a_possible_prune_is_not_a_lost_write() {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 20, 30);
    h.info(prune_all(3), 32, 34);
    h.ok(read(2, "k").found(S::Absent, None), 40, 50);
    assert!(h.check().is_valid());
}

#[test]
fn settle_with_a_superseded_fence_is_a_stale_fence() {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(claim(2, "k", "fp").owner(fence("a", 2)), 100, 110);
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 120, 130);
    assert_only(&h.check(), ViolationKind::StaleFence);
}

#[test]
fn effect_of_a_conflicting_claim_is_conflict_executed() {
    let mut h = Builder::default();
    h.ok(claim(1, "k", "fp").owner(fence("a", 1)), 0, 10);
    let rival = h.ok(
        claim(2, "k", "other").saw(C::Conflict, S::Pending, fence("a", 1)),
        20,
        30,
    );
    h.effect(rival, "k", "other", fence("a", 1), 35);
    let report = h.check();
    assert_only(&report, ViolationKind::ConflictExecuted);
    assert_eq!(report.violations.len(), 1);
}

#[test]
fn unknown_turning_completed_without_reconcile_is_silent() {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(settle(1, "k", S::Unknown, fence("a", 1)), 20, 30);
    h.ok(
        read(2, "k").found(S::Completed, Some(fence("a", 2))),
        40,
        50,
    );
    assert_only(&h.check(), ViolationKind::SilentUnknownResolution);
}

#[test]
fn read_of_completed_before_any_claim_is_not_linearizable() {
    let mut h = Builder::default();
    h.ok(read(2, "k").found(S::Completed, Some(fence("a", 2))), 0, 5);
    h.ok(claim(1, "k", "fp").owner(fence("a", 1)), 10, 20);
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 30, 40);
    let report = h.check();
    assert_only(&report, ViolationKind::NotLinearizable);
    assert!(
        report.violations[0].detail.contains("no order"),
        "{report:#?}"
    );
}

/// Key `k`: worker 1 owns it and crashes mid-settle; worker 2 claims concurrently (pending),
/// then takes over after the lease expired and completes; worker 1's restarted process finds
/// its old fence refused. Key `u`: an unknown outcome reconciled as completed. A store-wide
/// prune times out.
fn correct_concurrent_history() -> Builder {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(
        claim(2, "k", "fp").saw(C::Pending, S::Pending, fence("a", 1)),
        5,
        15,
    );
    h.crashed(settle(1, "k", S::Completed, fence("a", 1)), 20);
    let takeover = h.ok(claim(2, "k", "fp").owner(fence("a", 2)), 100, 110);
    h.effect(takeover, "k", "fp", fence("a", 2), 112);
    h.ok(settle(2, "k", S::Completed, fence("a", 2)), 115, 120);
    h.fail(
        settle(1, "k", S::Completed, fence("a", 1)),
        125,
        126,
        "DURABLE_OPERATION_STALE_FENCE",
    );
    h.ok(
        read(3, "k").found(S::Completed, Some(fence("a", 3))),
        118,
        130,
    );
    h.info(read(3, "k"), 131, 140);

    let owner = h.ok(claim(4, "u", "fp").owner(fence("u", 1)), 0, 10);
    h.effect(owner, "u", "fp", fence("u", 1), 11);
    h.ok(settle(4, "u", S::Unknown, fence("u", 1)), 12, 20);
    h.ok(
        claim(5, "u", "fp").saw(C::Unknown, S::Unknown, fence("u", 2)),
        25,
        30,
    );
    h.ok(reconcile(5, "u", S::Completed, fence("u", 2)), 35, 40);
    h.ok(
        read(5, "u").found(S::Completed, Some(fence("u", 3))),
        45,
        50,
    );
    h.info(prune_all(6), 60, 70);
    h
}

#[test]
fn correct_concurrent_history_with_indeterminate_ops_passes() {
    let report = correct_concurrent_history().check();
    assert!(report.is_valid(), "{:#?}", report.violations);
    assert_eq!(report.inconclusive_keys, 0);
    assert_eq!(report.indeterminate, 3);
    assert_eq!(report.unknowns_reconciled, 1);
    assert_eq!(report.effects, 3);
}

#[test]
fn crashed_settle_may_have_taken_effect() {
    // Worker 1 crashed mid-settle and nobody else claimed: a later read of completed is
    // explained by the crashed settle taking effect.
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.crashed(settle(1, "k", S::Completed, fence("a", 1)), 20);
    h.ok(
        read(2, "k").found(S::Completed, Some(fence("a", 2))),
        40,
        50,
    );
    assert!(h.check().is_valid());
}

#[test]
fn too_many_concurrent_ops_are_inconclusive_not_hung() {
    let mut h = Builder::default();
    h.ok(claim(1, "k", "fp").owner(fence("a", 1)), 0, 10);
    for worker in 0..70 {
        h.ok(
            read(worker, "k").found(S::Pending, Some(fence("a", 1))),
            20,
            100,
        );
    }
    let report = h.check();
    assert!(report.is_valid(), "{:#?}", report.violations);
    assert_eq!(report.inconclusive_keys, 1);
    assert_eq!(report.inconclusive[0].key, "k");
}

/// The search's own verdict on one key, without the properties.
fn verdict(h: Builder, key: &str) -> Verdict {
    let history = History::from_events(h.events, h.effects).unwrap();
    let views = key_views(&history);
    linearizable::check_key(&views[key].ops)
}

#[test]
fn named_anomalies_are_also_not_linearizable_but_reported_once() {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(claim(2, "k", "fp").owner(fence("a", 2)), 100, 110);
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 120, 130);
    assert!(matches!(verdict(h, "k"), Verdict::NotLinearizable(_)));
    assert_eq!(
        verdict(correct_concurrent_history(), "k"),
        Verdict::Linearizable
    );
    assert_eq!(
        verdict(correct_concurrent_history(), "u"),
        Verdict::Linearizable
    );
}
