//! Hand-made histories: each anomaly caught with exactly its kind, and a correct concurrent
//! history (with indeterminate ops, a takeover and a reconciliation) that passes. Backend
//! histories (`get`, `write`) exercise the register search.

use super::*;
use crate::history::{
    ClaimView, Effect, Event, FenceView, OpKind, OpRef, Phase, RecordValue, StateView,
};

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
    value: Option<RecordValue>,
    applied: Option<bool>,
    skew_ms: Option<i64>,
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
        value: None,
        applied: None,
        skew_ms: None,
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

/// A stored record: `owner`'s, in `state`, with lease deadline `lease` when pending.
fn val(fence: FenceView, state: StateView, owner: &str, lease: Option<u64>) -> RecordValue {
    RecordValue {
        fence,
        state,
        owner: owner.into(),
        fingerprint: "fp".into(),
        updated_at: 0,
        lease_expires_at: lease,
    }
}

/// A backend read of `key` that returned `value`.
fn get(worker: u32, key: &'static str, value: Option<RecordValue>) -> Spec {
    Spec {
        value,
        ..spec(worker, OpKind::Get, key, "")
    }
}

/// A backend compare-and-set of `key` expecting `expected`, writing `next`, answered `applied`
/// (`None`: unanswered).
fn write(
    worker: u32,
    key: &'static str,
    expected: Option<FenceView>,
    next: Option<RecordValue>,
    applied: Option<bool>,
) -> Spec {
    Spec {
        input_fence: expected,
        value: next,
        applied,
        skew_ms: Some(0),
        ..spec(worker, OpKind::Write, key, "")
    }
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
        let op = OpRef {
            worker: self.worker,
            process: 0,
            op_id,
        };
        let writes = self.kind == OpKind::Write;
        Event {
            phase,
            fence: self.input_fence.clone(),
            settle_to: self.settle_to,
            value: self.value.clone().filter(|_| writes),
            skew_ms: self.skew_ms,
            ..Event::invoke(op, time_ms, self.kind, self.key, self.fingerprint)
        }
    }

    fn completion(&self, op_id: u64, time_ms: u64) -> Event {
        let reads = self.kind == OpKind::Get;
        Event {
            fence: self.fence.clone().or_else(|| self.input_fence.clone()),
            observed: self.observed.or(self.settle_to),
            claim: self.claim,
            applied: self.applied,
            value: if reads {
                self.value.clone()
            } else {
                self.value.clone().filter(|_| self.kind == OpKind::Write)
            },
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
fn absent_after_a_possible_delete_of_that_record_is_not_a_lost_write() {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 20, 30);
    h.info(prune_all(3), 32, 40);
    h.info(write(3, "k", Some(fence("a", 2)), None, None), 33, 34);
    h.ok(read(2, "k").found(S::Absent, None), 40, 50);
    assert!(h.check().is_valid());
}

#[test]
fn a_prune_that_removed_another_record_excuses_nothing() {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 20, 30);
    // A store-wide prune overlaps, but it deleted (maybe) another key's record and tried an
    // older lifetime of this key: neither is the completed record that vanished.
    h.ok(prune_all(3), 31, 45);
    h.info(write(3, "other", Some(fence("o", 2)), None, None), 32, 33);
    h.ok(
        write(3, "k", Some(fence("old", 2)), None, Some(false)),
        34,
        35,
    );
    h.ok(read(2, "k").found(S::Absent, None), 40, 50);
    assert_only(&h.check(), ViolationKind::LostWrite);
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

/// The search's own verdict on one key, without the properties.
fn verdict(h: Builder, key: &str) -> Verdict {
    let history = History::from_events(h.events, h.effects).unwrap();
    let views = key_views(&history);
    linearizable::check_key(&views[key].ops)
}

/// Backend calls of one owner: insert `a@1` pending (lease until 1000), then `calls`.
fn owner_inserted(h: &mut Builder) -> RecordValue {
    let mine = val(fence("a", 1), S::Pending, "w1", Some(1_000));
    h.ok(write(1, "k", None, Some(mine.clone()), Some(true)), 0, 5);
    mine
}

#[test]
fn a_renewal_is_a_recorded_write_and_explains_the_settle_revision() {
    // The PostgreSQL history of the issue: the owner's settle answered revision 3 while a claim
    // in between saw the record pending at revision 2. Beneath the store, the runner's lease
    // renewal is the write that made revision 2.
    let renewal = |h: &mut Builder| {
        let renewed = val(fence("a", 2), S::Pending, "w1", Some(1_300));
        h.ok(
            write(1, "k", Some(fence("a", 1)), Some(renewed), Some(true)),
            300,
            305,
        );
    };
    let rest = |h: &mut Builder| {
        let renewed = val(fence("a", 2), S::Pending, "w1", Some(1_300));
        h.ok(get(2, "k", Some(renewed)), 306, 310);
        let done = val(fence("a", 3), S::Completed, "w1", None);
        h.ok(
            write(1, "k", Some(fence("a", 2)), Some(done.clone()), Some(true)),
            311,
            315,
        );
        h.ok(get(3, "k", Some(done)), 320, 325);
    };
    let mut h = Builder::default();
    owner_inserted(&mut h);
    renewal(&mut h);
    rest(&mut h);
    assert_eq!(verdict(h, "k"), Verdict::Linearizable);

    let mut h = Builder::default();
    owner_inserted(&mut h);
    rest(&mut h);
    match verdict(h, "k") {
        Verdict::NotLinearizable { detail, .. } => {
            assert!(detail.contains("fits the register"), "{detail}")
        }
        other => panic!("a write nobody recorded must not fit: {other:?}"),
    }
}

#[test]
fn an_acknowledged_write_read_back_as_the_old_value_is_not_linearizable() {
    let mut h = Builder::default();
    let mine = owner_inserted(&mut h);
    let done = val(fence("a", 2), S::Completed, "w1", None);
    h.ok(
        write(1, "k", Some(fence("a", 1)), Some(done), Some(true)),
        10,
        20,
    );
    h.ok(get(2, "k", Some(mine)), 30, 40);
    let report = h.check();
    assert_only(&report, ViolationKind::NotLinearizable);
}

#[test]
fn crashed_write_may_have_taken_effect() {
    // Worker 1 crashed mid-settle: a later read of its record shows it applied.
    let mut h = Builder::default();
    owner_inserted(&mut h);
    let done = val(fence("a", 2), S::Completed, "w1", None);
    h.crashed(
        write(1, "k", Some(fence("a", 1)), Some(done.clone()), None),
        20,
    );
    h.ok(get(2, "k", Some(done)), 40, 50);
    assert_eq!(verdict(h, "k"), Verdict::Linearizable);
}

#[test]
fn an_unanswered_delete_explains_a_later_absence() {
    let mut h = Builder::default();
    owner_inserted(&mut h);
    let done = val(fence("a", 2), S::Completed, "w1", None);
    h.ok(
        write(1, "k", Some(fence("a", 1)), Some(done.clone()), Some(true)),
        10,
        20,
    );
    h.info(write(3, "k", Some(fence("a", 2)), None, None), 30, 35);
    h.ok(get(2, "k", Some(done)), 31, 32);
    h.ok(get(2, "k", None), 40, 50);
    let fresh = val(fence("b", 1), S::Pending, "w2", Some(2_000));
    h.ok(write(2, "k", None, Some(fresh.clone()), Some(true)), 60, 70);
    h.ok(get(4, "k", Some(fresh)), 80, 90);
    assert_eq!(verdict(h, "k"), Verdict::Linearizable);
}

#[test]
fn a_re_execution_after_a_lost_record_is_a_double_execution() {
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 20, 30);
    // The completed record vanished (no delete of it) and a new lifetime ran the effect again.
    let again = h.ok(claim(2, "k", "fp").owner(fence("b", 1)), 40, 50);
    h.effect(again, "k", "fp", fence("b", 1), 55);
    let report = h.check();
    assert!(
        report.of_kind(ViolationKind::DoubleExecution).count() == 1,
        "{report:#?}"
    );

    // After a prune deleted that completed record, the second effect is legitimate.
    let mut h = Builder::default();
    owned_and_executed(&mut h, "k");
    h.ok(settle(1, "k", S::Completed, fence("a", 1)), 20, 30);
    h.ok(write(3, "k", Some(fence("a", 2)), None, Some(true)), 32, 34);
    let again = h.ok(claim(2, "k", "fp").owner(fence("b", 1)), 40, 50);
    h.effect(again, "k", "fp", fence("b", 1), 55);
    assert_eq!(h.check().of_kind(ViolationKind::DoubleExecution).count(), 0);
}

#[test]
fn a_takeover_before_the_lease_ended_is_early() {
    let takeover = |at: u64| {
        let mut h = Builder::default();
        owner_inserted(&mut h);
        let taken = val(fence("a", 2), S::Pending, "w2", Some(at + 1_000));
        h.ok(
            write(2, "k", Some(fence("a", 1)), Some(taken), Some(true)),
            at,
            at + 5,
        );
        h.check()
    };
    assert_only(&takeover(400), ViolationKind::EarlyTakeover);
    assert!(takeover(1_000).is_valid(), "{:#?}", takeover(1_000));
}

#[test]
fn wide_concurrency_and_long_histories_are_decided() {
    let mut h = Builder::default();
    let mine = owner_inserted(&mut h);
    for worker in 0..70 {
        h.ok(get(worker, "k", Some(mine.clone())), 20, 100);
    }
    let mut current = fence("a", 1);
    for step in 0..5_000_u64 {
        let next = val(fence("a", step + 2), S::Pending, "w1", Some(1_000));
        let at = 200 + step * 10;
        h.ok(
            write(1, "k", Some(current), Some(next.clone()), Some(true)),
            at,
            at + 6,
        );
        h.ok(get(2, "k", Some(next.clone())), at + 3, at + 9);
        h.info(
            write(3, "k", Some(fence("a", step + 1)), None, None),
            at + 1,
            at + 2,
        );
        current = next.fence;
    }
    let report = h.check();
    assert!(report.is_valid(), "{:#?}", report.violations);
    assert_eq!(report.inconclusive_keys, 0);
}
