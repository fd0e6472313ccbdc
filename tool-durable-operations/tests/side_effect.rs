//! The side-effect runner and the queue bridge over a shared in-memory backend.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tool_durable_operations::side_effect::queue::run_queue_side_effect;
use tool_durable_operations::side_effect::{
    CANCELLED_BEFORE_CLAIM, CANCELLED_BEFORE_EXECUTION, CANCELLED_IN_FLIGHT, LEASE_LOST,
    MAX_ADAPTER_REASON_CHARS, THREW_WITHOUT_REASON,
};
use tool_durable_operations::{
    BoxError, DurableOperationBackend, DurableOperationStore, MemoryBackend, OperationState,
    SideEffectOutcome, SideEffectRecovery, SideEffectRequest, SideEffectResolution,
    SideEffectResult, SideEffectRunner,
};

fn runners() -> (SideEffectRunner, SideEffectRunner) {
    let backend: Arc<dyn DurableOperationBackend> = Arc::new(MemoryBackend::new());
    let a =
        SideEffectRunner::new(DurableOperationStore::new(backend.clone()), "process-a").unwrap();
    let b = SideEffectRunner::new(DurableOperationStore::new(backend), "process-b").unwrap();
    (a, b)
}

async fn outcome(value: SideEffectOutcome) -> Result<SideEffectOutcome, BoxError> {
    Ok(value)
}

#[tokio::test]
async fn completed_effect_replays_without_running_again() {
    let (a, b) = runners();
    let calls = Arc::new(AtomicUsize::new(0));
    let execute = |calls: Arc<AtomicUsize>| {
        move |ctx: tool_durable_operations::SideEffectContext| {
            calls.fetch_add(1, Ordering::SeqCst);
            assert_eq!(ctx.key, "charge:1");
            outcome(SideEffectOutcome::completed(json!({"charge": "ch_1"})))
        }
    };
    let first = a
        .run(
            SideEffectRequest::new("charge:1", "fp"),
            execute(calls.clone()),
        )
        .await
        .unwrap();
    let SideEffectResult::Completed { operation, result } = first else {
        panic!("{first:?}")
    };
    assert_eq!(result, json!({"charge": "ch_1"}));
    assert_eq!(
        operation.result,
        Some(json!({"result": {"charge": "ch_1"}}))
    );
    let again = b
        .run(
            SideEffectRequest::new("charge:1", "fp"),
            execute(calls.clone()),
        )
        .await
        .unwrap();
    let SideEffectResult::Replayed {
        result, diagnostic, ..
    } = again
    else {
        panic!("{again:?}")
    };
    assert_eq!(
        (result, diagnostic),
        (Some(json!({"charge": "ch_1"})), None)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let conflict = b
        .run(
            SideEffectRequest::new("charge:1", "other"),
            execute(calls.clone()),
        )
        .await
        .unwrap();
    assert!(matches!(conflict, SideEffectResult::Conflict { .. }));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn failed_and_unknown_outcomes_are_stored_with_bounded_payloads() {
    let (a, b) = runners();
    let failed = a
        .run(SideEffectRequest::new("f", "fp"), |_| {
            outcome(
                SideEffectOutcome::failed("card declined before capture")
                    .with_result(json!({"code": "declined"}))
                    .with_diagnostic(Value::Null),
            )
        })
        .await
        .unwrap();
    assert!(
        matches!(failed, SideEffectResult::Failed { ref reason, .. } if reason == "card declined before capture")
    );
    let replay = b
        .run(SideEffectRequest::new("f", "fp"), |_| {
            outcome(SideEffectOutcome::unknown("x"))
        })
        .await
        .unwrap();
    let SideEffectResult::Replayed {
        operation,
        result,
        diagnostic,
        reason,
    } = replay
    else {
        panic!()
    };
    assert_eq!(operation.state, OperationState::Failed);
    assert_eq!(
        (result, diagnostic),
        (Some(json!({"code": "declined"})), Some(Value::Null))
    );
    assert_eq!(reason.as_deref(), Some("card declined before capture"));

    let unknown = a
        .run(SideEffectRequest::new("u", "fp"), |_| {
            outcome(
                SideEffectOutcome::unknown("socket closed").with_diagnostic(json!({"sent": true})),
            )
        })
        .await
        .unwrap();
    assert!(matches!(unknown, SideEffectResult::Unknown { .. }));
    let blocked = b
        .run(SideEffectRequest::new("u", "fp"), |_| {
            outcome(SideEffectOutcome::unknown("x"))
        })
        .await
        .unwrap();
    let SideEffectResult::Unknown {
        reason, diagnostic, ..
    } = blocked
    else {
        panic!("{blocked:?}")
    };
    assert_eq!(
        (reason.as_str(), diagnostic),
        ("socket closed", Some(json!({"sent": true})))
    );

    // An oversized result cannot be stored losslessly: the effect happened, so it is unknown.
    let huge = json!("x".repeat(tool_durable_operations::record::MAX_STORED_RESULT_BYTES));
    let result = a
        .run(SideEffectRequest::new("big", "fp"), move |_| {
            outcome(SideEffectOutcome::completed(huge))
        })
        .await
        .unwrap();
    let SideEffectResult::Unknown {
        reason, operation, ..
    } = result
    else {
        panic!("{result:?}")
    };
    assert!(
        reason.starts_with("side-effect adapter returned an invalid outcome:"),
        "{reason}"
    );
    assert_eq!(operation.state, OperationState::Unknown);
    let blank = a
        .run(SideEffectRequest::new("blank", "fp"), |_| {
            outcome(SideEffectOutcome::unknown("  "))
        })
        .await
        .unwrap();
    assert!(
        matches!(blank, SideEffectResult::Unknown { ref reason, .. } if reason.contains("invalid outcome"))
    );
}

#[tokio::test]
async fn adapter_errors_are_unknown_by_default_or_classified() {
    let (a, _) = runners();
    let long = "e".repeat(MAX_ADAPTER_REASON_CHARS + 1);
    let result = a
        .run(SideEffectRequest::new("err", "fp"), move |_| async move {
            Err::<SideEffectOutcome, BoxError>(format!("  {long} ").into())
        })
        .await
        .unwrap();
    let SideEffectResult::Unknown { reason, .. } = result else {
        panic!("{result:?}")
    };
    assert_eq!(reason, "e".repeat(MAX_ADAPTER_REASON_CHARS));
    let result = a
        .run(SideEffectRequest::new("empty", "fp"), |_| async {
            Err::<SideEffectOutcome, BoxError>(" ".into())
        })
        .await
        .unwrap();
    assert!(
        matches!(result, SideEffectResult::Unknown { ref reason, .. } if reason == THREW_WITHOUT_REASON)
    );
    let classifier: tool_durable_operations::side_effect::ErrorClassifier =
        Arc::new(|error: &BoxError| {
            SideEffectOutcome::failed(format!("rejected before send: {error}"))
        });
    let request = SideEffectRequest::new("classified", "fp").with_error_classifier(classifier);
    let result = a
        .run(request, |_| async {
            Err::<SideEffectOutcome, BoxError>("dns".into())
        })
        .await
        .unwrap();
    assert!(
        matches!(result, SideEffectResult::Failed { ref reason, .. } if reason == "rejected before send: dns")
    );
    let result = a
        .run(SideEffectRequest::new("panics", "fp"), |_| async {
            panic!("adapter bug")
        })
        .await
        .unwrap();
    assert!(
        matches!(result, SideEffectResult::Unknown { ref reason, .. } if reason.contains("panicked"))
    );
}

#[tokio::test]
async fn cancellation_before_claim_and_before_execution_sends_nothing() {
    let (a, _) = runners();
    let token = CancellationToken::new();
    token.cancel();
    let never = |_| async { panic!("must not run") };
    let result = a
        .run(
            SideEffectRequest::new("c", "fp").with_cancellation(token.clone()),
            never,
        )
        .await
        .unwrap();
    assert_eq!(
        result,
        SideEffectResult::Cancelled {
            operation: None,
            reason: CANCELLED_BEFORE_CLAIM.into()
        }
    );
    assert_eq!(a.store().get("c").await.unwrap(), None);

    // Cancelled while the claim is in flight: claimed, but the adapter never starts. The
    // record stays pending until its lease expires, then a retry may reclaim it.
    let token = CancellationToken::new();
    let backend = Arc::new(CancelOnInsert {
        inner: MemoryBackend::new(),
        token: token.clone(),
    });
    let runner = SideEffectRunner::new(DurableOperationStore::new(backend), "process-a").unwrap();
    let result = runner
        .run(
            SideEffectRequest::new("c2", "fp").with_cancellation(token),
            never,
        )
        .await
        .unwrap();
    let SideEffectResult::Cancelled {
        operation: Some(operation),
        reason,
    } = result
    else {
        panic!("{result:?}")
    };
    assert_eq!(reason, CANCELLED_BEFORE_EXECUTION);
    assert_eq!(operation.state, OperationState::Pending);
}

/// Cancels a token right after a record is inserted, as if the caller gave up mid-claim.
struct CancelOnInsert {
    inner: MemoryBackend,
    token: CancellationToken,
}

#[async_trait::async_trait]
impl DurableOperationBackend for CancelOnInsert {
    fn name(&self) -> &'static str {
        "cancel-on-insert"
    }
    async fn ping(&self) -> Result<(), tool_durable_operations::DurableOperationError> {
        self.inner.ping().await
    }
    async fn read(
        &self,
        key: &str,
    ) -> Result<
        Option<tool_durable_operations::OperationRecord>,
        tool_durable_operations::DurableOperationError,
    > {
        self.inner.read(key).await
    }
    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&tool_durable_operations::Fence>,
        next: Option<&tool_durable_operations::OperationRecord>,
    ) -> Result<bool, tool_durable_operations::DurableOperationError> {
        let written = self.inner.compare_and_set(key, expected, next).await?;
        if expected.is_none() {
            self.token.cancel();
        }
        Ok(written)
    }
    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<tool_durable_operations::RecordPage, tool_durable_operations::DurableOperationError>
    {
        self.inner.list_page(cursor, limit).await
    }
}

#[tokio::test(start_paused = true)]
async fn cancellation_in_flight_returns_unknown_immediately_while_the_adapter_drains() {
    let (a, b) = runners();
    let token = CancellationToken::new();
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let drained = Arc::new(AtomicUsize::new(0));
    let drained_in_task = drained.clone();
    let request = SideEffectRequest::new("slow", "fp")
        .with_cancellation(token.clone())
        .with_abort_diagnostic(json!({"attempt": 1}));
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        canceller.cancel();
    });
    let result = a
        .run(request, move |_| async move {
            // Ignores cancellation on purpose, like a provider SDK that cannot abort.
            release_rx.await.ok();
            drained_in_task.fetch_add(1, Ordering::SeqCst);
            Ok(SideEffectOutcome::completed(json!("late")))
        })
        .await
        .unwrap();
    let SideEffectResult::Unknown {
        reason,
        diagnostic,
        operation,
    } = result
    else {
        panic!("{result:?}")
    };
    assert_eq!(reason, CANCELLED_IN_FLIGHT);
    assert_eq!(diagnostic, Some(json!({"attempt": 1})));
    assert_eq!(operation.state, OperationState::Unknown);
    assert_eq!(
        drained.load(Ordering::SeqCst),
        0,
        "returned before the adapter finished"
    );
    release_tx.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        drained.load(Ordering::SeqCst),
        1,
        "the adapter future drained"
    );
    // Its late completion is not stored, and the key stays blocked for everyone.
    assert_eq!(
        a.store().get("slow").await.unwrap().unwrap().state,
        OperationState::Unknown
    );
    let blocked = b
        .run(SideEffectRequest::new("slow", "fp"), |_| async {
            panic!("blocked")
        })
        .await
        .unwrap();
    assert!(matches!(blocked, SideEffectResult::Unknown { .. }));
}

#[tokio::test]
async fn pending_lease_blocks_a_second_runner() {
    let (a, b) = runners();
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let first = tokio::spawn({
        let a = a.clone();
        async move {
            a.run(SideEffectRequest::new("p", "fp"), move |_| async move {
                started_tx.send(()).ok();
                release_rx.await.ok();
                Ok(SideEffectOutcome::completed(json!(1)))
            })
            .await
        }
    });
    started_rx.await.unwrap();
    let second = b
        .run(SideEffectRequest::new("p", "fp"), |_| async {
            panic!("must not run")
        })
        .await
        .unwrap();
    assert!(
        matches!(second, SideEffectResult::Pending { ref operation } if operation.owner_id == "process-a")
    );
    release_tx.send(()).unwrap();
    assert!(matches!(
        first.await.unwrap().unwrap(),
        SideEffectResult::Completed { .. }
    ));
}

#[tokio::test]
async fn recover_is_status_first_and_resolves_only_unknown() {
    let (a, b) = runners();
    let resolver_calls = Arc::new(AtomicUsize::new(0));
    let resolver = |calls: Arc<AtomicUsize>| {
        move |record: tool_durable_operations::OperationRecord| async move {
            calls.fetch_add(1, Ordering::SeqCst);
            assert_eq!(record.state, OperationState::Unknown);
            Ok::<_, BoxError>(SideEffectResolution::completed(json!({"charge": "ch_9"})))
        }
    };
    assert_eq!(
        a.recover("none", None, None, resolver(resolver_calls.clone()))
            .await
            .unwrap(),
        SideEffectRecovery::Missing
    );
    a.run(SideEffectRequest::new("done", "fp"), |_| {
        outcome(SideEffectOutcome::completed(json!(1)))
    })
    .await
    .unwrap();
    let settled = a
        .recover("done", None, None, resolver(resolver_calls.clone()))
        .await
        .unwrap();
    assert!(
        matches!(settled, SideEffectRecovery::NotUnknown { state: OperationState::Completed, result: Some(ref r), .. } if *r == json!(1))
    );
    assert_eq!(resolver_calls.load(Ordering::SeqCst), 0);

    let unknown = a
        .run(SideEffectRequest::new("u", "fp"), |_| {
            outcome(SideEffectOutcome::unknown("timeout"))
        })
        .await
        .unwrap();
    let SideEffectResult::Unknown { operation, .. } = unknown else {
        panic!()
    };
    let stale = tool_durable_operations::Fence {
        revision: 1,
        ..operation.fence()
    };
    let err = b
        .recover("u", Some(&stale), None, resolver(resolver_calls.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Durable operation \"u\" fence is stale");
    let recovered = b
        .recover(
            "u",
            Some(&operation.fence()),
            Some("operator-1"),
            resolver(resolver_calls.clone()),
        )
        .await
        .unwrap();
    let SideEffectRecovery::Resolved {
        operation, result, ..
    } = recovered
    else {
        panic!()
    };
    assert_eq!(result, Some(json!({"charge": "ch_9"})));
    assert_eq!(operation.reconciled_by.as_deref(), Some("operator-1"));
    assert_eq!(resolver_calls.load(Ordering::SeqCst), 1);
    let replay = a
        .run(SideEffectRequest::new("u", "fp"), |_| async {
            panic!("no re-send")
        })
        .await
        .unwrap();
    assert!(matches!(
        replay,
        SideEffectResult::Replayed {
            result: Some(_),
            ..
        }
    ));

    let unknown = a
        .run(SideEffectRequest::new("u2", "fp"), |_| {
            outcome(SideEffectOutcome::unknown("timeout"))
        })
        .await
        .unwrap();
    assert!(matches!(unknown, SideEffectResult::Unknown { .. }));
    let failed = a
        .recover("u2", None, None, |_| async {
            Ok(SideEffectResolution::failed("provider has no such charge")
                .with_diagnostic(json!({"checked": true})))
        })
        .await
        .unwrap();
    let SideEffectRecovery::Resolved {
        operation,
        diagnostic,
        reason,
        ..
    } = failed
    else {
        panic!()
    };
    assert_eq!(operation.reconciled_by.as_deref(), Some("process-a"));
    assert_eq!(
        (diagnostic, reason.as_deref()),
        (
            Some(json!({"checked": true})),
            Some("provider has no such charge")
        )
    );
}

/// An in-process publisher whose acknowledgement can be lost after the publish.
#[derive(Default)]
struct Publisher {
    published: Mutex<Vec<(String, Value)>>,
    lose_next_ack: std::sync::atomic::AtomicBool,
}

impl Publisher {
    async fn enqueue(self: Arc<Self>, message: Value, key: String) -> Result<String, BoxError> {
        let receipt = {
            let mut published = self.published.lock().unwrap();
            published.push((key, message));
            format!("receipt-{}", published.len())
        };
        if self.lose_next_ack.swap(false, Ordering::SeqCst) {
            return Err("acknowledgement timed out after publish".into());
        }
        Ok(receipt)
    }

    fn status(&self, key: &str) -> Option<Value> {
        self.published
            .lock()
            .unwrap()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, m)| m.clone())
    }
}

fn ack_classifier(receipt: String) -> SideEffectOutcome {
    SideEffectOutcome::completed(json!({"receipt": receipt}))
}

#[tokio::test]
async fn queue_bridge_acknowledges_replays_and_keeps_a_lost_ack_unknown() {
    let (a, b) = runners();
    let publisher = Arc::new(Publisher::default());
    let enqueue = |publisher: &Arc<Publisher>| {
        let publisher = publisher.clone();
        move |message: Value, ctx: tool_durable_operations::SideEffectContext| {
            publisher.enqueue(message, ctx.key)
        }
    };
    let sent = run_queue_side_effect(
        &a,
        SideEffectRequest::new("q1", "fp"),
        json!({"n": 1}),
        enqueue(&publisher),
        ack_classifier,
    )
    .await
    .unwrap();
    assert!(
        matches!(sent, SideEffectResult::Completed { ref result, .. } if *result == json!({"receipt": "receipt-1"}))
    );
    let replay = run_queue_side_effect(
        &b,
        SideEffectRequest::new("q1", "fp"),
        json!({"n": 1}),
        enqueue(&publisher),
        ack_classifier,
    )
    .await
    .unwrap();
    assert!(matches!(replay, SideEffectResult::Replayed { .. }));
    assert_eq!(
        publisher.published.lock().unwrap().len(),
        1,
        "no second publish"
    );

    publisher.lose_next_ack.store(true, Ordering::SeqCst);
    let lost = run_queue_side_effect(
        &a,
        SideEffectRequest::new("q2", "fp"),
        json!({"n": 2}),
        enqueue(&publisher),
        ack_classifier,
    )
    .await
    .unwrap();
    let SideEffectResult::Unknown { reason, .. } = lost else {
        panic!("{lost:?}")
    };
    assert_eq!(reason, "acknowledgement timed out after publish");
    let blocked = run_queue_side_effect(
        &b,
        SideEffectRequest::new("q2", "fp"),
        json!({"n": 2}),
        enqueue(&publisher),
        ack_classifier,
    )
    .await
    .unwrap();
    assert!(matches!(blocked, SideEffectResult::Unknown { .. }));
    assert_eq!(
        publisher.published.lock().unwrap().len(),
        2,
        "the blocked retry did not publish"
    );

    let status = publisher.clone();
    let recovered = b
        .recover("q2", None, None, move |_| async move {
            match status.status("q2") {
                Some(message) => Ok(SideEffectResolution::completed(
                    json!({"published": message}),
                )),
                None => Ok(SideEffectResolution::failed("not published")),
            }
        })
        .await
        .unwrap();
    assert!(
        matches!(recovered, SideEffectRecovery::Resolved { result: Some(ref r), .. } if *r == json!({"published": {"n": 2}}))
    );
    assert_eq!(publisher.published.lock().unwrap().len(), 2);
}

/// Lease of the renewal-failure cases; the adapter would outlast it ten times over.
const SHORT_LEASE: Duration = Duration::from_millis(30);

/// An adapter that runs until its context is cancelled (or ten leases pass) and reports which.
fn until_cancelled(
    ran: Arc<AtomicUsize>,
    saw_cancel: oneshot::Sender<bool>,
) -> impl FnOnce(
    tool_durable_operations::SideEffectContext,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<SideEffectOutcome, BoxError>> + Send>,
> {
    move |ctx| {
        Box::pin(async move {
            ran.fetch_add(1, Ordering::SeqCst);
            let cancelled = tokio::select! {
                () = ctx.cancellation.cancelled() => true,
                () = tokio::time::sleep(SHORT_LEASE * 10) => false,
            };
            saw_cancel.send(cancelled).ok();
            Ok(SideEffectOutcome::completed(json!("late")))
        })
    }
}

/// Fails the first lease renewal (a pending -> pending update) with a backend error.
struct FailFirstRenewal {
    inner: MemoryBackend,
    armed: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl DurableOperationBackend for FailFirstRenewal {
    fn name(&self) -> &'static str {
        "fail-first-renewal"
    }
    async fn ping(&self) -> Result<(), tool_durable_operations::DurableOperationError> {
        self.inner.ping().await
    }
    async fn read(
        &self,
        key: &str,
    ) -> Result<
        Option<tool_durable_operations::OperationRecord>,
        tool_durable_operations::DurableOperationError,
    > {
        self.inner.read(key).await
    }
    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&tool_durable_operations::Fence>,
        next: Option<&tool_durable_operations::OperationRecord>,
    ) -> Result<bool, tool_durable_operations::DurableOperationError> {
        let renewal =
            expected.is_some() && next.is_some_and(|n| n.state == OperationState::Pending);
        if renewal && self.armed.swap(false, Ordering::SeqCst) {
            return Err(tool_durable_operations::DurableOperationError::Backend {
                backend: "memory",
                message: "connection reset".into(),
            });
        }
        self.inner.compare_and_set(key, expected, next).await
    }
    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<tool_durable_operations::RecordPage, tool_durable_operations::DurableOperationError>
    {
        self.inner.list_page(cursor, limit).await
    }
}

#[tokio::test]
async fn failed_lease_renewal_makes_the_outcome_unknown_and_blocks_a_second_runner() {
    let backend = Arc::new(FailFirstRenewal {
        inner: MemoryBackend::new(),
        armed: true.into(),
    });
    let store = DurableOperationStore::new(backend);
    let a = SideEffectRunner::new(store.clone(), "process-a").unwrap();
    let b = SideEffectRunner::new(store, "process-b").unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let (saw_cancel_tx, saw_cancel_rx) = oneshot::channel();
    let request = || SideEffectRequest::new("renew", "fp").with_lease(SHORT_LEASE);
    let result = a
        .run(request(), until_cancelled(ran.clone(), saw_cancel_tx))
        .await;
    let Ok(SideEffectResult::Unknown {
        operation, reason, ..
    }) = result
    else {
        panic!("a failed renewal must make the outcome unknown: {result:?}")
    };
    assert!(reason.starts_with(LEASE_LOST), "{reason}");
    assert!(reason.contains("connection reset"), "{reason}");
    assert_eq!(
        operation.state,
        OperationState::Unknown,
        "stored as unknown"
    );
    assert!(saw_cancel_rx.await.unwrap(), "the adapter was told to stop");
    let (unused_tx, _) = oneshot::channel();
    let blocked = b
        .run(request(), until_cancelled(ran.clone(), unused_tx))
        .await
        .unwrap();
    assert!(
        matches!(blocked, SideEffectResult::Unknown { .. }),
        "{blocked:?}"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 1, "never a second execution");
}

#[tokio::test]
async fn a_lease_taken_over_mid_effect_is_reported_unknown() {
    let backend: Arc<dyn DurableOperationBackend> = Arc::new(MemoryBackend::new());
    let a =
        SideEffectRunner::new(DurableOperationStore::new(backend.clone()), "process-a").unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let (saw_cancel_tx, saw_cancel_rx) = oneshot::channel();
    let run = tokio::spawn({
        let (a, ran) = (a.clone(), ran.clone());
        async move {
            let request = SideEffectRequest::new("taken", "fp").with_lease(SHORT_LEASE);
            a.run(request, until_cancelled(ran, saw_cancel_tx)).await
        }
    });
    // Another owner takes the record over, as after a heartbeat stalled for a whole lease.
    let intruder = loop {
        tokio::task::yield_now().await;
        let Some(current) = backend.read("taken").await.unwrap() else {
            continue;
        };
        let next = tool_durable_operations::OperationRecord {
            owner_id: "intruder".into(),
            revision: current.revision + 1,
            ..current.clone()
        };
        if backend
            .compare_and_set("taken", Some(&current.fence()), Some(&next))
            .await
            .unwrap()
        {
            break next;
        }
    };
    let result = run.await.unwrap();
    let Ok(SideEffectResult::Unknown {
        operation, reason, ..
    }) = result
    else {
        panic!("a lost lease must make the outcome unknown: {result:?}")
    };
    assert!(reason.starts_with(LEASE_LOST), "{reason}");
    assert_eq!(
        operation.state,
        OperationState::Pending,
        "not this runner's to store"
    );
    assert!(saw_cancel_rx.await.unwrap(), "the adapter was told to stop");
    assert_eq!(backend.read("taken").await.unwrap(), Some(intruder));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_completed_resolution_keeps_the_reconcilers_reason_and_diagnostic() {
    let (a, b) = runners();
    a.run(SideEffectRequest::new("why", "fp"), |_| {
        outcome(SideEffectOutcome::unknown("socket closed after send"))
    })
    .await
    .unwrap();
    let resolved = a
        .recover("why", None, Some("operator-1"), |_| async {
            Ok::<_, BoxError>(
                SideEffectResolution::completed(json!({"charge": "ch_7"}))
                    .with_reason("provider status query found ch_7")
                    .with_diagnostic(json!({"queriedAt": 42})),
            )
        })
        .await
        .unwrap();
    let SideEffectRecovery::Resolved {
        operation,
        result,
        diagnostic,
        reason,
    } = resolved
    else {
        panic!("{resolved:?}")
    };
    assert_eq!(operation.state, OperationState::Completed);
    assert_eq!(operation.reconciled_by.as_deref(), Some("operator-1"));
    assert_eq!(
        (result, diagnostic, reason.as_deref()),
        (
            Some(json!({"charge": "ch_7"})),
            Some(json!({"queriedAt": 42})),
            Some("provider status query found ch_7")
        )
    );
    let replay = b
        .run(SideEffectRequest::new("why", "fp"), |_| async {
            panic!("reconciled: must not run")
        })
        .await
        .unwrap();
    assert!(
        matches!(&replay, SideEffectResult::Replayed { reason: Some(r), diagnostic: Some(_), .. } if r == "provider status query found ch_7"),
        "{replay:?}"
    );
}
