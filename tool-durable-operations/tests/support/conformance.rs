//! One conformance suite, run against every backend through [`BackendFactory`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tool_durable_operations::record::MAX_STORED_RESULT_BYTES;
use tool_durable_operations::{
    ClaimRequest, ClaimStatus, DurableOperationBackend, DurableOperationError,
    DurableOperationStore, Fence, ManualClock, OperationRecord, OperationState, RecordPage,
    RecoverOutcome, Resolution, Settlement, SideEffectOutcome, SideEffectRequest, SideEffectResult,
    SideEffectRunner, StoreOptions,
};

/// Start of the injected clock.
pub const T0: u64 = 1_700_000_000_000;

/// Opens isolated storage for one test.
#[async_trait]
pub trait BackendFactory: Send + Sync {
    /// A fresh, isolated namespace reached through `connections` independent connections
    /// (separate pools/clients, as separate processes would use).
    async fn open(&self, connections: usize) -> Vec<Arc<dyn DurableOperationBackend>>;
}

/// Generates one `#[tokio::test]` per conformance case for `$factory`.
#[macro_export]
macro_rules! conformance_suite {
    ($factory:expr) => {
        $crate::conformance_suite!(@cases $factory;
            claim_inserts_pending_owner_record,
            claim_reports_pending_replay_unknown_and_conflict,
            terminal_transitions_check_preconditions_in_order,
            explicit_null_result_is_kept_apart_from_absent,
            stored_results_are_bounded_and_rejected_writes_lose_nothing,
            expired_lease_is_reclaimed_with_injected_clock,
            concurrent_writer_wins_and_loser_sees_fence_changed,
            resolve_unknown_is_fenced_and_records_the_reconciler,
            recover_reads_status_first_and_resolves_only_unknown,
            aba_prune_and_recreate_rejects_old_fence,
            prune_pages_while_deleting_and_respects_the_page_limit,
            list_page_is_keyset_ordered_and_cursor_survives_deletes,
            compare_and_set_semantics,
            claim_gives_up_after_max_attempts,
            unusual_keys_round_trip,
            settle_takes_one_round_trip_and_keeps_exact_errors,
            race_each_key_runs_exactly_once,
            slow_effect_keeps_its_lease_and_runs_once,
            renew_lease_is_fenced_and_blocks_a_reclaim,
        );
    };
    (@cases $factory:expr; $($case:ident,)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                $crate::support::conformance::$case(&$factory).await;
            }
        )*
    };
}

fn store_on(
    backend: Arc<dyn DurableOperationBackend>,
    clock: &ManualClock,
) -> DurableOperationStore {
    DurableOperationStore::new(backend).with_clock(Arc::new(clock.clone()))
}

async fn one(factory: &dyn BackendFactory) -> (DurableOperationStore, ManualClock) {
    let clock = ManualClock::new(T0);
    let backend = factory.open(1).await.remove(0);
    (store_on(backend, &clock), clock)
}

fn request<'a>(key: &'a str, owner: &'a str) -> ClaimRequest<'a> {
    ClaimRequest {
        key,
        fingerprint: "fp-1",
        owner_id: owner,
        lease: None,
    }
}

async fn owned(store: &DurableOperationStore, key: &str, owner: &str) -> Fence {
    let claim = store.claim(request(key, owner)).await.unwrap();
    assert_eq!(
        claim.status,
        ClaimStatus::Owner,
        "{key} should be owned by {owner}"
    );
    claim.fence
}

pub async fn claim_inserts_pending_owner_record(factory: &dyn BackendFactory) {
    let (store, _clock) = one(factory).await;
    store.backend().ping().await.unwrap();
    let claim = store.claim(request("op-1", "a")).await.unwrap();
    assert_eq!(claim.status, ClaimStatus::Owner);
    let record = &claim.record;
    assert_eq!(record.state, OperationState::Pending);
    assert_eq!(record.revision, 1);
    assert_eq!(record.owner_id, "a");
    assert_eq!(record.fingerprint, "fp-1");
    assert_eq!(record.created_at, T0);
    assert_eq!(record.lease_expires_at, Some(T0 + 300_000));
    assert_eq!(record.incarnation.len(), 32);
    assert_eq!(claim.fence, record.fence());
    assert_eq!(store.get("op-1").await.unwrap().as_ref(), Some(record));
    assert_eq!(store.get("op-2").await.unwrap(), None);
    let blank = store.claim(request(" ", "a")).await.unwrap_err();
    assert_eq!(blank.code(), "DURABLE_OPERATION_INVALID_INPUT");
    let zero_lease = ClaimRequest {
        lease: Some(Duration::ZERO),
        ..request("op-3", "a")
    };
    assert_eq!(
        store.claim(zero_lease).await.unwrap_err().code(),
        "DURABLE_OPERATION_INVALID_INPUT"
    );
    assert_eq!(
        store.get("op-3").await.unwrap(),
        None,
        "rejected claim wrote nothing"
    );
}

pub async fn claim_reports_pending_replay_unknown_and_conflict(factory: &dyn BackendFactory) {
    let (store, _clock) = one(factory).await;
    let fence = owned(&store, "k", "a").await;
    let pending = store.claim(request("k", "b")).await.unwrap();
    assert_eq!(pending.status, ClaimStatus::Pending);
    assert_eq!(pending.fence, fence);
    // The same owner retrying during its own live lease is also pending.
    assert_eq!(
        store.claim(request("k", "a")).await.unwrap().status,
        ClaimStatus::Pending
    );
    let other = ClaimRequest {
        fingerprint: "fp-2",
        ..request("k", "b")
    };
    assert_eq!(
        store.claim(other.clone()).await.unwrap().status,
        ClaimStatus::Conflict
    );

    let done = store
        .complete("k", "a", json!({"ok": 1}), &fence)
        .await
        .unwrap();
    assert_eq!(done.revision, 2);
    assert_eq!(done.lease_expires_at, None);
    let replay = store.claim(request("k", "b")).await.unwrap();
    assert_eq!(replay.status, ClaimStatus::Replay);
    assert_eq!(replay.record.result, Some(json!({"ok": 1})));
    // Fingerprint is compared before state.
    assert_eq!(
        store.claim(other).await.unwrap().status,
        ClaimStatus::Conflict
    );

    let fence = owned(&store, "u", "a").await;
    store
        .mark_unknown("u", "a", "timed out", Some(json!({"d": 1})), &fence)
        .await
        .unwrap();
    let unknown = store.claim(request("u", "b")).await.unwrap();
    assert_eq!(unknown.status, ClaimStatus::Unknown);
    assert_eq!(unknown.record.reason.as_deref(), Some("timed out"));

    let fence = owned(&store, "f", "a").await;
    let failed = store
        .fail("f", "a", "rejected", None, &fence)
        .await
        .unwrap();
    assert_eq!(failed.state, OperationState::Failed);
    assert_eq!(
        store.claim(request("f", "b")).await.unwrap().status,
        ClaimStatus::Replay
    );
}

pub async fn terminal_transitions_check_preconditions_in_order(factory: &dyn BackendFactory) {
    let (store, clock) = one(factory).await;
    let missing = store
        .complete(
            "nope",
            "a",
            json!(1),
            &Fence {
                incarnation: "x".into(),
                revision: 1,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(missing.code(), "DURABLE_OPERATION_MISSING");

    let fence = owned(&store, "k", "a").await;
    let err = store
        .complete("k", "b", json!(1), &fence)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        DurableOperationError::OwnerMismatch {
            key: "k".into(),
            owner_id: "a".into()
        }
    );
    assert_eq!(err.to_string(), "Durable operation \"k\" is owned by \"a\"");
    let stale = Fence {
        revision: 2,
        ..fence.clone()
    };
    let err = store
        .complete("k", "a", json!(1), &stale)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_STALE_FENCE");
    let wrong_incarnation = Fence {
        incarnation: "other".into(),
        ..fence.clone()
    };
    assert_eq!(
        store
            .complete("k", "a", json!(1), &wrong_incarnation)
            .await
            .unwrap_err()
            .code(),
        "DURABLE_OPERATION_STALE_FENCE"
    );
    assert_eq!(
        store.fail("k", "a", "  ", None, &fence).await.unwrap_err(),
        DurableOperationError::ReasonRequired
    );
    assert_eq!(
        store
            .mark_unknown("k", "a", "", None, &fence)
            .await
            .unwrap_err(),
        DurableOperationError::ReasonRequired
    );
    let done = store.complete("k", "a", json!(1), &fence).await.unwrap();
    // The settled record's own fence passes the fence check and hits the state check.
    let err = store
        .fail("k", "a", "late", None, &done.fence())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        DurableOperationError::AlreadySettled {
            key: "k".into(),
            state: OperationState::Completed
        }
    );
    assert_eq!(
        err.to_string(),
        "Durable operation \"k\" is already completed"
    );

    let short = ClaimRequest {
        lease: Some(Duration::from_millis(100)),
        ..request("l", "a")
    };
    let fence = store.claim(short).await.unwrap().fence;
    clock.advance(Duration::from_millis(100));
    let err = store
        .mark_unknown("l", "a", "late", None, &fence)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_LEASE_EXPIRED");
    assert_eq!(
        store.get("l").await.unwrap().unwrap().state,
        OperationState::Pending
    );
}

pub async fn explicit_null_result_is_kept_apart_from_absent(factory: &dyn BackendFactory) {
    let (store, _clock) = one(factory).await;
    let fence = owned(&store, "null", "a").await;
    store
        .complete("null", "a", Value::Null, &fence)
        .await
        .unwrap();
    assert_eq!(
        store.get("null").await.unwrap().unwrap().result,
        Some(Value::Null)
    );
    let fence = owned(&store, "absent", "a").await;
    store.fail("absent", "a", "no", None, &fence).await.unwrap();
    assert_eq!(store.get("absent").await.unwrap().unwrap().result, None);
    let fence = owned(&store, "nested", "a").await;
    let with_nul = json!({"text": "a\u{0}b"});
    let err = store
        .complete("nested", "a", with_nul, &fence)
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        "DURABLE_OPERATION_INVALID_INPUT",
        "U+0000 is refused by every backend"
    );
    let value = json!({"a": null, "list": [null, 1.5, "é\\u0000"], "big": 9007199254740993u64});
    store
        .complete("nested", "a", value.clone(), &fence)
        .await
        .unwrap();
    assert_eq!(
        store.get("nested").await.unwrap().unwrap().result,
        Some(value)
    );
}

pub async fn stored_results_are_bounded_and_rejected_writes_lose_nothing(
    factory: &dyn BackendFactory,
) {
    let (store, _clock) = one(factory).await;
    let fence = owned(&store, "big", "a").await;
    let over = json!("x".repeat(MAX_STORED_RESULT_BYTES - 1));
    let err = store.complete("big", "a", over, &fence).await.unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_PAYLOAD_TOO_LARGE");
    let record = store.get("big").await.unwrap().unwrap();
    assert_eq!(
        (record.state, record.revision),
        (OperationState::Pending, 1)
    );
    let at_limit = json!("x".repeat(MAX_STORED_RESULT_BYTES - 2));
    let done = store
        .complete("big", "a", at_limit.clone(), &fence)
        .await
        .unwrap();
    assert_eq!(done.revision, 2);
    assert_eq!(
        store.get("big").await.unwrap().unwrap().result,
        Some(at_limit)
    );
}

pub async fn expired_lease_is_reclaimed_with_injected_clock(factory: &dyn BackendFactory) {
    let clock = ManualClock::new(T0);
    let backends = factory.open(2).await;
    let a = store_on(backends[0].clone(), &clock);
    let b = store_on(backends[1].clone(), &clock);
    let lease = Some(Duration::from_millis(1_000));
    let first = a
        .claim(ClaimRequest {
            lease,
            ..request("k", "a")
        })
        .await
        .unwrap();
    clock.advance(Duration::from_millis(999));
    assert_eq!(
        b.claim(ClaimRequest {
            lease,
            ..request("k", "b")
        })
        .await
        .unwrap()
        .status,
        ClaimStatus::Pending
    );
    clock.advance(Duration::from_millis(1));
    let second = b
        .claim(ClaimRequest {
            lease,
            ..request("k", "b")
        })
        .await
        .unwrap();
    assert_eq!(second.status, ClaimStatus::Owner);
    assert_eq!(second.record.incarnation, first.record.incarnation);
    assert_eq!(second.record.revision, 2);
    assert_eq!(second.record.owner_id, "b");
    assert_eq!(second.record.lease_expires_at, Some(T0 + 2_000));
    // The first owner's fence is stale now.
    assert_eq!(
        a.complete("k", "a", json!(1), &first.fence)
            .await
            .unwrap_err()
            .code(),
        "DURABLE_OPERATION_OWNER_MISMATCH"
    );
    b.complete("k", "b", json!(2), &second.fence).await.unwrap();
    // The same owner may reclaim its own expired lease too.
    let own = a
        .claim(ClaimRequest {
            lease,
            ..request("self", "a")
        })
        .await
        .unwrap();
    clock.advance(Duration::from_millis(1_000));
    let again = a
        .claim(ClaimRequest {
            lease,
            ..request("self", "a")
        })
        .await
        .unwrap();
    assert_eq!(again.status, ClaimStatus::Owner);
    assert_eq!(again.fence.revision, own.fence.revision + 1);
    assert_eq!(
        a.complete("self", "a", json!(1), &own.fence)
            .await
            .unwrap_err()
            .code(),
        "DURABLE_OPERATION_STALE_FENCE"
    );
}

/// Wraps a backend and performs one competing write right before the next compare-and-set.
struct Interfering {
    inner: Arc<dyn DurableOperationBackend>,
    armed: AtomicBool,
}

#[async_trait]
impl DurableOperationBackend for Interfering {
    fn name(&self) -> &'static str {
        "interfering"
    }
    async fn ping(&self) -> Result<(), DurableOperationError> {
        self.inner.ping().await
    }
    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        self.inner.read(key).await
    }
    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        if self.armed.swap(false, Ordering::SeqCst) {
            let mut current = self
                .inner
                .read(key)
                .await?
                .expect("record to interfere with");
            let fence = current.fence();
            current.revision += 1;
            assert!(
                self.inner
                    .compare_and_set(key, Some(&fence), Some(&current))
                    .await?
            );
        }
        self.inner.compare_and_set(key, expected, next).await
    }
    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError> {
        self.inner.list_page(cursor, limit).await
    }
}

pub async fn concurrent_writer_wins_and_loser_sees_fence_changed(factory: &dyn BackendFactory) {
    let clock = ManualClock::new(T0);
    let interfering = Arc::new(Interfering {
        inner: factory.open(1).await.remove(0),
        armed: AtomicBool::new(false),
    });
    let store = store_on(interfering.clone(), &clock);
    let fence = owned(&store, "k", "a").await;
    interfering.armed.store(true, Ordering::SeqCst);
    let err = store
        .complete("k", "a", json!(1), &fence)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_FENCE_CHANGED");
    assert!(!err.is_retryable());
    let record = store.get("k").await.unwrap().unwrap();
    assert_eq!(
        (record.state, record.revision),
        (OperationState::Pending, 2)
    );

    let fence = owned(&store, "u", "a").await;
    let unknown = store
        .mark_unknown("u", "a", "ambiguous", None, &fence)
        .await
        .unwrap();
    interfering.armed.store(true, Ordering::SeqCst);
    let resolution = Resolution::Completed {
        result: json!(1),
        reason: None,
    };
    let err = store
        .resolve_unknown("u", "ops", resolution, &unknown.fence())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_RECONCILIATION_FENCE_CHANGED");
}

pub async fn resolve_unknown_is_fenced_and_records_the_reconciler(factory: &dyn BackendFactory) {
    let (store, clock) = one(factory).await;
    let fence = owned(&store, "k", "a").await;
    let completed = Resolution::Completed {
        result: json!({"id": 7}),
        reason: None,
    };
    let err = store
        .resolve_unknown("k", "ops", completed.clone(), &fence)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        DurableOperationError::CannotResolve {
            key: "k".into(),
            state: OperationState::Pending
        }
    );
    let unknown = store
        .mark_unknown("k", "a", "ambiguous", Some(json!({"d": 1})), &fence)
        .await
        .unwrap();
    assert_eq!(unknown.result, Some(json!({"d": 1})));
    assert_eq!(
        store
            .resolve_unknown("k", "ops", completed.clone(), &fence)
            .await
            .unwrap_err()
            .code(),
        "DURABLE_OPERATION_STALE_FENCE"
    );
    let bad = Resolution::Failed {
        reason: " ".into(),
        result: None,
    };
    assert_eq!(
        store
            .resolve_unknown("k", "ops", bad, &unknown.fence())
            .await
            .unwrap_err(),
        DurableOperationError::ReasonRequired
    );
    clock.advance(Duration::from_millis(5));
    let resolved = store
        .resolve_unknown("k", "ops", completed.clone(), &unknown.fence())
        .await
        .unwrap();
    assert_eq!(resolved.state, OperationState::Completed);
    assert_eq!(resolved.revision, unknown.revision + 1);
    assert_eq!(resolved.reconciled_by.as_deref(), Some("ops"));
    assert_eq!(resolved.reconciled_at, Some(T0 + 5));
    assert_eq!(resolved.owner_id, "a", "reconciliation keeps the owner");
    assert_eq!(store.get("k").await.unwrap().unwrap(), resolved);
    assert_eq!(
        store
            .resolve_unknown("k", "ops", completed, &resolved.fence())
            .await
            .unwrap_err()
            .code(),
        "DURABLE_OPERATION_CANNOT_RESOLVE"
    );
    let fence = owned(&store, "f", "a").await;
    let unknown = store
        .mark_unknown("f", "a", "ambiguous", None, &fence)
        .await
        .unwrap();
    let failed = Resolution::Failed {
        reason: "provider says no".into(),
        result: Some(Value::Null),
    };
    let resolved = store
        .resolve_unknown("f", "ops", failed, &unknown.fence())
        .await
        .unwrap();
    assert_eq!(resolved.state, OperationState::Failed);
    assert_eq!(
        store.get("f").await.unwrap().unwrap().result,
        Some(Value::Null)
    );
}

pub async fn recover_reads_status_first_and_resolves_only_unknown(factory: &dyn BackendFactory) {
    let (store, _clock) = one(factory).await;
    let calls = AtomicUsize::new(0);
    let resolver = |record: OperationRecord| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            assert_eq!(record.state, OperationState::Unknown);
            Ok(Resolution::Completed {
                result: json!("confirmed"),
                reason: None,
            })
        }
    };
    assert_eq!(
        store.recover("none", "ops", None, resolver).await.unwrap(),
        RecoverOutcome::Missing
    );
    let fence = owned(&store, "k", "a").await;
    let outcome = store.recover("k", "ops", None, resolver).await.unwrap();
    assert!(matches!(outcome, RecoverOutcome::Unchanged(r) if r.state == OperationState::Pending));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "resolver never runs for non-unknown records"
    );

    let unknown = store
        .mark_unknown("k", "a", "ambiguous", None, &fence)
        .await
        .unwrap();
    let failing = |_record: OperationRecord| async { Err("status endpoint down".into()) };
    let err = store.recover("k", "ops", None, failing).await.unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_RESOLVER_FAILED");
    assert_eq!(
        store.get("k").await.unwrap().unwrap().state,
        OperationState::Unknown
    );
    let stale = Fence {
        revision: 1,
        ..unknown.fence()
    };
    assert_eq!(
        store
            .recover("k", "ops", Some(&stale), resolver)
            .await
            .unwrap_err()
            .code(),
        "DURABLE_OPERATION_STALE_FENCE"
    );
    let outcome = store
        .recover("k", "ops", Some(&unknown.fence()), resolver)
        .await
        .unwrap();
    let RecoverOutcome::Resolved(record) = outcome else {
        panic!("expected resolved")
    };
    assert_eq!(record.result, Some(json!("confirmed")));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

pub async fn aba_prune_and_recreate_rejects_old_fence(factory: &dyn BackendFactory) {
    let (store, clock) = one(factory).await;
    let old = owned(&store, "k", "a").await;
    store
        .mark_unknown("k", "a", "ambiguous", None, &old)
        .await
        .unwrap();
    let old_unknown = Fence {
        revision: 2,
        ..old.clone()
    };
    clock.advance(store.options().retention + Duration::from_millis(1));
    assert_eq!(store.prune().await.unwrap().deleted, 1);
    assert_eq!(store.get("k").await.unwrap(), None);
    let new = owned(&store, "k", "a").await;
    assert_eq!(new.revision, old.revision);
    assert_ne!(new.incarnation, old.incarnation);
    assert_eq!(
        store
            .complete("k", "a", json!(1), &old)
            .await
            .unwrap_err()
            .code(),
        "DURABLE_OPERATION_STALE_FENCE"
    );
    assert!(
        !store
            .backend()
            .compare_and_set("k", Some(&old), None)
            .await
            .unwrap()
    );
    let unknown = store
        .mark_unknown("k", "a", "again", None, &new)
        .await
        .unwrap();
    assert_eq!(unknown.revision, old_unknown.revision);
    let resolution = Resolution::Completed {
        result: json!(1),
        reason: None,
    };
    assert_eq!(
        store
            .resolve_unknown("k", "ops", resolution, &old_unknown)
            .await
            .unwrap_err()
            .code(),
        "DURABLE_OPERATION_STALE_FENCE"
    );
}

pub async fn prune_pages_while_deleting_and_respects_the_page_limit(factory: &dyn BackendFactory) {
    let clock = ManualClock::new(T0);
    let backend = factory.open(1).await.remove(0);
    let options = StoreOptions::default().with_prune_page_size(3);
    let store = DurableOperationStore::with_options(backend.clone(), options)
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
    for i in 0..10 {
        let key = format!("old-{i:02}");
        let fence = owned(&store, &key, "a").await;
        match i % 3 {
            0 => drop(store.complete(&key, "a", json!(i), &fence).await.unwrap()),
            1 => drop(store.fail(&key, "a", "no", None, &fence).await.unwrap()),
            _ => drop(
                store
                    .mark_unknown(&key, "a", "?", None, &fence)
                    .await
                    .unwrap(),
            ),
        }
    }
    owned(&store, "pending-1", "a").await;
    owned(&store, "pending-2", "a").await;
    clock.advance(store.options().retention);
    let fence = owned(&store, "recent", "a").await;
    store
        .complete("recent", "a", json!(0), &fence)
        .await
        .unwrap();
    clock.advance(Duration::from_millis(1));
    // updated_at < now - retention: the ten old records, not "recent" (exactly at the edge).
    let report = store.prune().await.unwrap();
    assert_eq!(
        (
            report.deleted,
            report.scanned,
            report.pages,
            report.corrupt,
            report.corrupt_keys.len()
        ),
        (10, 13, 5, 0, 0)
    );
    let left: Vec<String> = backend
        .list_all()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(left, ["pending-1", "pending-2", "recent"]);

    let limited = StoreOptions::default()
        .with_prune_page_size(1)
        .with_max_prune_pages(2);
    let limited = DurableOperationStore::with_options(backend.clone(), limited)
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
    assert_eq!(
        limited.prune().await.unwrap_err(),
        DurableOperationError::PrunePageLimitExceeded
    );
    let exact = StoreOptions::default()
        .with_prune_page_size(1)
        .with_max_prune_pages(3);
    let exact = DurableOperationStore::with_options(backend, exact)
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
    assert_eq!(exact.prune().await.unwrap().pages, 3);
}

pub async fn list_page_is_keyset_ordered_and_cursor_survives_deletes(factory: &dyn BackendFactory) {
    let (store, _clock) = one(factory).await;
    let keys = ["b", "a", "d", "c", "e"];
    for key in keys {
        owned(&store, key, "a").await;
    }
    let backend = store.backend();
    let first = backend.list_page(None, 2).await.unwrap();
    let names = |p: &RecordPage| p.records.iter().map(|r| r.key.clone()).collect::<Vec<_>>();
    assert_eq!(names(&first), ["a", "b"]);
    let cursor = first.next_cursor.clone().expect("more pages");
    // Delete the records of the first page and the next one: the cursor stays valid.
    for key in ["a", "b", "c"] {
        let fence = store.get(key).await.unwrap().unwrap().fence();
        assert!(
            backend
                .compare_and_set(key, Some(&fence), None)
                .await
                .unwrap()
        );
    }
    let second = backend.list_page(Some(&cursor), 2).await.unwrap();
    assert_eq!(names(&second), ["d", "e"]);
    assert_eq!(second.next_cursor, None);
    assert_eq!(
        backend.list_page(None, 0).await.unwrap_err().code(),
        "DURABLE_OPERATION_INVALID_INPUT"
    );
}

pub async fn compare_and_set_semantics(factory: &dyn BackendFactory) {
    let (store, _clock) = one(factory).await;
    let backend = store.backend();
    let claim = store.claim(request("k", "a")).await.unwrap();
    let record = claim.record.clone();
    assert!(
        !backend
            .compare_and_set("k", None, Some(&record))
            .await
            .unwrap(),
        "insert only if absent"
    );
    assert!(
        !backend
            .compare_and_set("absent", Some(&claim.fence), None)
            .await
            .unwrap()
    );
    assert!(!backend.compare_and_set("absent", None, None).await.unwrap());
    let mut next = record.clone();
    next.key = "other".into();
    assert_eq!(
        backend
            .compare_and_set("k", Some(&claim.fence), Some(&next))
            .await
            .unwrap_err(),
        DurableOperationError::MismatchedRecordKey
    );
    let mut next = record.clone();
    next.revision = 2;
    assert!(
        backend
            .compare_and_set("k", Some(&claim.fence), Some(&next))
            .await
            .unwrap()
    );
    assert!(
        !backend
            .compare_and_set("k", Some(&claim.fence), Some(&next))
            .await
            .unwrap(),
        "stale revision"
    );
    assert!(
        backend
            .compare_and_set("k", Some(&next.fence()), None)
            .await
            .unwrap()
    );
    assert_eq!(backend.read("k").await.unwrap(), None);
}

/// A backend whose compare-and-set always loses, counting attempts.
struct AlwaysLoses {
    inner: Arc<dyn DurableOperationBackend>,
    attempts: AtomicUsize,
}

#[async_trait]
impl DurableOperationBackend for AlwaysLoses {
    fn name(&self) -> &'static str {
        "always-loses"
    }
    async fn ping(&self) -> Result<(), DurableOperationError> {
        self.inner.ping().await
    }
    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        self.inner.read(key).await
    }
    async fn compare_and_set(
        &self,
        _key: &str,
        _expected: Option<&Fence>,
        _next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        Ok(false)
    }
    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError> {
        self.inner.list_page(cursor, limit).await
    }
}

pub async fn claim_gives_up_after_max_attempts(factory: &dyn BackendFactory) {
    let losing = Arc::new(AlwaysLoses {
        inner: factory.open(1).await.remove(0),
        attempts: AtomicUsize::new(0),
    });
    let store = DurableOperationStore::new(losing.clone());
    let err = store.claim(request("k", "a")).await.unwrap_err();
    assert_eq!(
        err,
        DurableOperationError::ClaimContended { key: "k".into() }
    );
    assert!(err.is_retryable());
    assert_eq!(losing.attempts.load(Ordering::SeqCst), 8);
}

pub async fn unusual_keys_round_trip(factory: &dyn BackendFactory) {
    let (store, _clock) = one(factory).await;
    let keys = [
        "[\"default\",\"fs.write\",\"k\"]",
        "ключ:é:😀",
        "a b\tc",
        "x'); DROP TABLE t;--",
    ];
    for key in keys {
        let fence = owned(&store, key, "a").await;
        store.complete(key, "a", json!(key), &fence).await.unwrap();
        assert_eq!(
            store.get(key).await.unwrap().unwrap().result,
            Some(json!(key))
        );
    }
    let all = store.backend().list_all().await.unwrap();
    let mut expected: Vec<&str> = keys.to_vec();
    expected.sort();
    assert_eq!(
        all.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(),
        expected
    );
}

/// Store instances in the race.
pub const RACE_STORES: usize = 8;
/// Tasks per race.
pub const RACE_TASKS: usize = 200;
/// Keys contended by the race.
pub const RACE_KEYS: usize = 10;

pub async fn race_each_key_runs_exactly_once(factory: &dyn BackendFactory) {
    let backends = factory.open(RACE_STORES).await;
    let stores: Vec<DurableOperationStore> = backends
        .into_iter()
        .map(DurableOperationStore::new)
        .collect();
    let runs: Arc<Vec<AtomicUsize>> =
        Arc::new((0..RACE_KEYS).map(|_| AtomicUsize::new(0)).collect());
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..RACE_TASKS {
        let store = stores[task % RACE_STORES].clone();
        let runs = runs.clone();
        tasks.spawn(async move {
            let index = task % RACE_KEYS;
            let key = format!("race-{index}");
            let owner = format!("owner-{task}");
            let claim = store.claim(request(&key, &owner)).await.unwrap();
            if claim.status == ClaimStatus::Owner {
                runs[index].fetch_add(1, Ordering::SeqCst);
                let settlement = Settlement::Completed {
                    result: json!(task),
                };
                store.settle(&claim, settlement).await.unwrap();
            } else {
                assert!(matches!(
                    claim.status,
                    ClaimStatus::Pending | ClaimStatus::Replay
                ));
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.unwrap();
    }
    for (index, count) in runs.iter().enumerate() {
        assert_eq!(
            count.load(Ordering::SeqCst),
            1,
            "key race-{index} ran {count:?} times"
        );
        let record = stores[0]
            .get(&format!("race-{index}"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (record.state, record.revision),
            (OperationState::Completed, 2)
        );
    }
}

/// Counts reads and compare-and-sets reaching the real backend.
struct Counting {
    inner: Arc<dyn DurableOperationBackend>,
    reads: AtomicUsize,
    writes: AtomicUsize,
}

impl Counting {
    fn take(&self) -> (usize, usize) {
        (
            self.reads.swap(0, Ordering::SeqCst),
            self.writes.swap(0, Ordering::SeqCst),
        )
    }
}

#[async_trait]
impl DurableOperationBackend for Counting {
    fn name(&self) -> &'static str {
        "counting"
    }
    async fn ping(&self) -> Result<(), DurableOperationError> {
        self.inner.ping().await
    }
    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.read(key).await
    }
    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.compare_and_set(key, expected, next).await
    }
    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError> {
        self.inner.list_page(cursor, limit).await
    }
}

pub async fn settle_takes_one_round_trip_and_keeps_exact_errors(factory: &dyn BackendFactory) {
    let clock = ManualClock::new(T0);
    let counting = Arc::new(Counting {
        inner: factory.open(1).await.remove(0),
        reads: AtomicUsize::new(0),
        writes: AtomicUsize::new(0),
    });
    let store = store_on(counting.clone(), &clock);
    let claim = store.claim(request("k", "a")).await.unwrap();
    assert_eq!(
        counting.take(),
        (0, 1),
        "a new key is claimed with one insert"
    );
    let done = store
        .settle(&claim, Settlement::Completed { result: json!(1) })
        .await
        .unwrap();
    assert_eq!(
        counting.take(),
        (0, 1),
        "settling the own claim skips the read"
    );
    assert_eq!(store.get("k").await.unwrap(), Some(done));
    let replay = store.claim(request("k", "b")).await.unwrap();
    assert_eq!(replay.status, ClaimStatus::Replay);
    let err = store
        .settle(&replay, Settlement::Completed { result: json!(2) })
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        "DURABLE_OPERATION_INVALID_INPUT",
        "only owners settle"
    );
    // The stale claim reports the precise precondition after its lost CAS.
    let err = store
        .settle(
            &claim,
            Settlement::Failed {
                reason: "x".into(),
                result: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_STALE_FENCE");
    let err = store
        .settle(
            &claim,
            Settlement::Unknown {
                reason: " ".into(),
                diagnostic: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err, DurableOperationError::ReasonRequired);

    let lease = Some(Duration::from_millis(10));
    let first = store
        .claim(ClaimRequest {
            lease,
            ..request("r", "a")
        })
        .await
        .unwrap();
    clock.advance(Duration::from_millis(10));
    let err = store
        .settle(&first, Settlement::Completed { result: json!(1) })
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_LEASE_EXPIRED");
    let second = store
        .claim(ClaimRequest {
            lease,
            ..request("r", "b")
        })
        .await
        .unwrap();
    assert_eq!(second.status, ClaimStatus::Owner);
    let err = store
        .settle(&first, Settlement::Completed { result: json!(1) })
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_OWNER_MISMATCH");
}

/// Lease of the slow-effect case, far shorter than the effect: only renewal keeps it.
pub const SLOW_EFFECT_LEASE: Duration = Duration::from_millis(300);

/// A 60 ms effect under a 20 ms lease, with a second runner (its own connection) trying the
/// same key after twice the lease: the first runner's heartbeat keeps the record pending, so
/// the second one waits, the effect runs once and the first runner completes it.
pub async fn slow_effect_keeps_its_lease_and_runs_once(factory: &dyn BackendFactory) {
    let mut backends = factory.open(2).await;
    let runner =
        |backend, owner| SideEffectRunner::new(DurableOperationStore::new(backend), owner).unwrap();
    let second = runner(backends.pop().unwrap(), "runner-b");
    let first = runner(backends.pop().unwrap(), "runner-a");
    let runs = Arc::new(AtomicUsize::new(0));
    let request = || SideEffectRequest::new("slow-effect", "fp").with_lease(SLOW_EFFECT_LEASE);
    let (past_lease_tx, past_lease_rx) = oneshot::channel();
    let (resume_tx, resume_rx) = oneshot::channel::<()>();
    let slow = tokio::spawn({
        let (runs, request) = (runs.clone(), request());
        async move {
            first
                .run(request, move |_| async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(SLOW_EFFECT_LEASE * 2).await;
                    past_lease_tx.send(()).ok();
                    resume_rx.await.ok();
                    tokio::time::sleep(SLOW_EFFECT_LEASE).await;
                    Ok(SideEffectOutcome::completed(json!("written")))
                })
                .await
        }
    });
    past_lease_rx.await.unwrap();
    let again = |runs: Arc<AtomicUsize>| {
        move |_| async move {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(SideEffectOutcome::completed(json!("written again")))
        }
    };
    let during = second.run(request(), again(runs.clone())).await.unwrap();
    resume_tx.send(()).ok();
    let outcome = slow.await.unwrap();
    assert!(
        matches!(&during, SideEffectResult::Pending { operation } if operation.owner_id == "runner-a"),
        "the live heartbeat must block the second runner: {during:?}"
    );
    let Ok(SideEffectResult::Completed { operation, result }) = outcome else {
        panic!("the first runner must complete its own effect: {outcome:?}")
    };
    assert_eq!(
        (operation.state, operation.owner_id.as_str(), result),
        (OperationState::Completed, "runner-a", json!("written"))
    );
    let after = second.run(request(), again(runs.clone())).await.unwrap();
    assert!(
        matches!(&after, SideEffectResult::Replayed { result: Some(r), .. } if *r == json!("written")),
        "{after:?}"
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the effect ran exactly once"
    );
}

pub async fn renew_lease_is_fenced_and_blocks_a_reclaim(factory: &dyn BackendFactory) {
    let (store, clock) = one(factory).await;
    let lease = Some(Duration::from_millis(10));
    let claim_with = |owner| ClaimRequest {
        lease,
        ..request("k", owner)
    };
    let claim = store.claim(claim_with("a")).await.unwrap();
    clock.advance(Duration::from_millis(8));
    let renewed = store.renew_lease(&claim, lease).await.unwrap();
    assert_eq!(renewed.status, ClaimStatus::Owner);
    assert_eq!(renewed.fence.revision, 2);
    assert_eq!(renewed.record.lease_expires_at, Some(T0 + 18));
    assert_eq!(
        store.get("k").await.unwrap().as_ref(),
        Some(&renewed.record)
    );
    // Past the first deadline, inside the renewed one: nobody may take over.
    clock.advance(Duration::from_millis(8));
    let other = store.claim(claim_with("b")).await.unwrap();
    assert_eq!(other.status, ClaimStatus::Pending);
    let err = store.renew_lease(&claim, lease).await.unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_STALE_FENCE");
    let err = store.renew_lease(&other, lease).await.unwrap_err();
    assert_eq!(
        err.code(),
        "DURABLE_OPERATION_INVALID_INPUT",
        "only owners renew"
    );
    // Expired but not reclaimed: the matching fence proves the record is still a's.
    clock.advance(Duration::from_millis(20));
    let kept = store.renew_lease(&renewed, lease).await.unwrap();
    assert_eq!(kept.fence.revision, 3);
    clock.advance(Duration::from_millis(20));
    let taken = store.claim(claim_with("b")).await.unwrap();
    assert_eq!(taken.status, ClaimStatus::Owner);
    let err = store.renew_lease(&kept, lease).await.unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_OWNER_MISMATCH");
    let settled = store
        .settle(&taken, Settlement::Completed { result: json!(1) })
        .await
        .unwrap();
    let mut stale_owner = taken.clone();
    stale_owner.fence = settled.fence();
    stale_owner.record = settled;
    let err = store.renew_lease(&stale_owner, lease).await.unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_ALREADY_SETTLED");
}

/// Keys of the good records around the corrupt one, so it sits mid-scan.
pub const GOOD_KEYS: [&str; 2] = ["a-good", "z-good"];

/// A store over `backend` with one-record prune pages (the corrupt record ends its page).
pub fn pruning_store(
    backend: Arc<dyn DurableOperationBackend>,
    clock: &ManualClock,
) -> DurableOperationStore {
    let options = StoreOptions::default().with_prune_page_size(1);
    DurableOperationStore::with_options(backend, options)
        .unwrap()
        .with_clock(Arc::new(clock.clone()))
}

/// Completes [`GOOD_KEYS`] at [`T0`], then lets them age past the retention.
pub async fn settle_good_records_and_age_them(store: &DurableOperationStore, clock: &ManualClock) {
    for key in GOOD_KEYS {
        let fence = owned(store, key, "a").await;
        store.complete(key, "a", json!(key), &fence).await.unwrap();
    }
    clock.advance(store.options().retention + Duration::from_millis(1));
}

/// One record the backend cannot decode (`corrupt_key`, already written) neither stops the
/// prune nor hides: the good records are deleted, the corrupt one is reported and kept, and
/// reading it is the non-retryable corrupt-record error.
pub async fn prune_skips_and_reports_the_corrupt_record(
    store: &DurableOperationStore,
    corrupt_key: &str,
) {
    let report = store.prune().await;
    let err = store.get(corrupt_key).await.unwrap_err();
    assert_eq!(
        (err.code(), err.is_retryable()),
        ("DURABLE_OPERATION_CORRUPT_RECORD", false),
        "{err}"
    );
    let report = report.expect("one corrupt record must not stop the prune");
    assert_eq!((report.deleted, report.corrupt), (GOOD_KEYS.len(), 1));
    assert_eq!(report.corrupt_keys, [corrupt_key]);
    for key in GOOD_KEYS {
        assert_eq!(store.get(key).await.unwrap(), None, "{key} was pruned");
    }
    let again = store.prune().await.unwrap();
    assert_eq!((again.deleted, again.corrupt), (0, 1), "still reported");
}

/// Backfills per store in [`concurrent_backfills_agree_on_one_incarnation`].
pub const BACKFILLS_PER_STORE: usize = 4;

/// Stores whose incarnations name them (`<name>-<n>`), each on its own backend connection.
pub fn backfilling_stores(
    backends: Vec<Arc<dyn DurableOperationBackend>>,
) -> Vec<DurableOperationStore> {
    backends
        .into_iter()
        .enumerate()
        .map(|(index, backend)| {
            let counter = Arc::new(AtomicUsize::new(0));
            DurableOperationStore::new(backend).with_incarnation_generator(Arc::new(move || {
                format!("store{index}-{}", counter.fetch_add(1, Ordering::SeqCst))
            }))
        })
        .collect()
}

/// The legacy record under `key` (already written, without incarnation) is backfilled by
/// every store at once: all of them return the one incarnation that won, the record is usable
/// afterwards, and a later backfill changes nothing.
pub async fn concurrent_backfills_agree_on_one_incarnation(
    stores: &[DurableOperationStore],
    key: &str,
) -> OperationRecord {
    let err = stores[0].get(key).await.unwrap_err();
    assert_eq!(
        err,
        DurableOperationError::CorruptRecord(
            tool_durable_operations::record::MISSING_INCARNATION.into()
        ),
        "never backfilled implicitly"
    );
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..BACKFILLS_PER_STORE {
        for store in stores {
            let (store, key) = (store.clone(), key.to_owned());
            tasks.spawn(async move { store.backfill_legacy_incarnation(&key).await });
        }
    }
    let mut incarnations = std::collections::BTreeSet::new();
    while let Some(joined) = tasks.join_next().await {
        incarnations.insert(joined.unwrap().unwrap().incarnation);
    }
    assert_eq!(
        incarnations.len(),
        1,
        "every store agrees: {incarnations:?}"
    );
    let record = stores[1].get(key).await.unwrap().expect("still stored");
    assert!(incarnations.contains(&record.incarnation));
    assert!(
        record.incarnation.starts_with("store"),
        "{}",
        record.incarnation
    );
    let again = stores[0].backfill_legacy_incarnation(key).await.unwrap();
    assert_eq!(again, record, "a backfilled record is left as it is");
    record
}
