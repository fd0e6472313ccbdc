//! The durable layer of the pipeline on the memory backend (contract 2.12): two registries
//! sharing one store behave like two processes.

mod durable_support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use durable_support::*;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tool_context::{AllowAll, BuildError, OperationError, ToolRegistry};
use tool_durable_operations::{
    DurableOperationStore, ManualClock, MemoryBackend, OperationState, RecoverOutcome, Resolution,
    store::MAX_LEASE,
};
use tool_protocol::{ToolCallError, ToolCallResult, codes};

fn error_details(result: &ToolCallResult) -> Value {
    result
        .error
        .as_ref()
        .and_then(|error| error.details.clone())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_second_owner_waits_for_the_lease_then_reclaims_it() {
    let clock = ManualClock::new(1_000_000);
    let store = Arc::new(
        DurableOperationStore::new(Arc::new(MemoryBackend::new()))
            .with_clock(Arc::new(clock.clone())),
    );
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let runs = Runs::default();
    let (s, r) = (Arc::clone(&started), Arc::clone(&release));
    let blocking = tool(&runs, move |_args, _call| {
        let (s, r) = (Arc::clone(&s), Arc::clone(&r));
        async move {
            s.notify_one();
            r.notified().await;
            Ok(ToolCallResult::success(json!("late")))
        }
    });
    let first = registry(&store, "worker-a", blocking);
    let second = registry(&store, "worker-b", charging_tool(&runs));

    let running = tokio::spawn({
        let first = first.clone();
        async move { call(&first, "a-1", "charge-1", 5).await }
    });
    started.notified().await;

    let pending = call(&second, "b-1", "charge-1", 5).await;
    assert_eq!(pending.error_code(), Some(codes::TOOL_IDEMPOTENCY_PENDING));
    assert_eq!(pending.error.as_ref().unwrap().retryable, Some(true));
    assert_eq!(
        error_details(&pending),
        json!({"state": "pending", "ownerId": "worker-a", "leaseExpiresAt": 1_000_000 + LEASE_MS})
    );
    assert_eq!(runs.get(), 1, "the pending call never runs the handler");

    // One millisecond before the deadline the lease is still live; at the deadline it is not.
    clock.advance(Duration::from_millis(LEASE_MS - 1));
    let still = call(&second, "b-2", "charge-1", 5).await;
    assert_eq!(still.error_code(), Some(codes::TOOL_IDEMPOTENCY_PENDING));
    clock.advance(Duration::from_millis(1));
    let reclaimed = call(&second, "b-3", "charge-1", 5).await;
    assert!(!reclaimed.is_error(), "{reclaimed:?}");
    assert_eq!(runs.get(), 2);
    assert_eq!(status(&second, "charge-1").await.owner_id, "worker-b");

    // The first owner's late terminal write loses the fence: its caller is told the outcome
    // was not persisted, and the reclaimed record stays completed.
    release.notify_one();
    let late = running.await.unwrap();
    assert_eq!(
        late.error_code(),
        Some(codes::TOOL_IDEMPOTENCY_STORE_FAILED)
    );
    assert_eq!(error_details(&late)["persistenceState"], "uncertain");
    assert_eq!(error_details(&late)["automaticRetrySafe"], false);
    assert_eq!(
        status(&second, "charge-1").await.state,
        OperationState::Completed
    );
}

#[tokio::test]
async fn a_completed_result_replays_losslessly_on_another_registry() {
    let store = memory_store();
    let runs = Runs::default();
    let first = registry(&store, "worker-a", charging_tool(&runs));
    let second = registry(&store, "worker-b", charging_tool(&runs));

    let original = call(&first, "a-1", "charge-2", 700).await;
    assert!(!original.is_error());
    let replayed = call(&second, "b-1", "charge-2", 700).await;
    assert_eq!(runs.get(), 1);
    assert_eq!(replayed.tool_call_id, Some("b-1".into()));
    assert_eq!(without_id(&replayed), without_id(&original));
    assert_eq!(
        replayed.structured_content.as_ref().unwrap()["nested"]["null"],
        Value::Null
    );

    let record = status(&first, "charge-2").await;
    assert_eq!(record.state, OperationState::Completed);
    assert!(record.result.as_ref().unwrap().get("toolCallId").is_none());

    let conflict = call(&second, "b-2", "charge-2", 1).await;
    assert_eq!(
        conflict.error_code(),
        Some(codes::TOOL_IDEMPOTENCY_CONFLICT)
    );
    assert_eq!(conflict.error.as_ref().unwrap().retryable, Some(false));
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn an_execution_unknown_handler_error_needs_reconciliation() {
    let store = memory_store();
    let runs = Runs::default();
    let unknown = tool(&runs, |_args, _call| async move {
        Err(
            ToolCallError::new(codes::TOOL_EXECUTION_UNKNOWN, "gateway said sk-live-secret")
                .with_details(json!({"token": "sk-live-secret", "attempt": 1})),
        )
    });
    let first = registry(&store, "worker-a", unknown);
    let second = registry(&store, "worker-b", charging_tool(&runs));

    let result = call(&first, "a-1", "charge-3", 5).await;
    assert_eq!(result.error_code(), Some(codes::TOOL_EXECUTION_UNKNOWN));
    let record = status(&first, "charge-3").await;
    assert_eq!(record.state, OperationState::Unknown);
    let reason = "Tool execution ended with TOOL_EXECUTION_UNKNOWN; reconcile before retrying.";
    assert_eq!(record.reason.as_deref(), Some(reason));
    let stored = serde_json::to_string(&record.result).unwrap();
    assert!(!stored.contains("sk-live-secret"), "{stored}");
    assert!(stored.contains("\"attempt\":1"));

    // Both the same registry (its in-memory entry was cleared) and another one consult the
    // durable record: non-retryable UNKNOWN, handler not run again.
    for (registry, id) in [(&first, "a-2"), (&second, "b-1")] {
        let retry = call(registry, id, "charge-3", 5).await;
        assert_eq!(retry.error_code(), Some(codes::TOOL_IDEMPOTENCY_UNKNOWN));
        assert_eq!(retry.error.as_ref().unwrap().retryable, Some(false));
        assert_eq!(
            error_details(&retry),
            json!({"state": "unknown", "reason": reason, "automaticRetrySafe": false})
        );
    }
    assert_eq!(runs.get(), 1);

    let stale = tool_durable_operations::Fence {
        revision: record.revision - 1,
        ..record.fence()
    };
    let refused = second
        .reconcile_operation(TOOL, "charge-3", completed(), &context(), &stale)
        .await
        .unwrap_err();
    assert!(matches!(refused, OperationError::Store(_)), "{refused:?}");
    let reconciled = second
        .reconcile_operation(TOOL, "charge-3", completed(), &context(), &record.fence())
        .await
        .unwrap();
    assert_eq!(reconciled.state, OperationState::Completed);
    assert_eq!(reconciled.reconciled_by.as_deref(), Some("worker-b"));
    let replay = call(&first, "a-3", "charge-3", 5).await;
    assert_eq!(
        replay.structured_content,
        Some(json!({"charged": 5, "confirmed": true}))
    );
    assert_eq!(replay.tool_call_id, Some("a-3".into()));
    assert_eq!(runs.get(), 1);
}

fn completed() -> Resolution {
    Resolution::Completed {
        result: json!({"charged": 5, "confirmed": true}),
        reason: Some("provider status query confirmed the charge".into()),
    }
}

#[tokio::test]
async fn recovery_reads_status_first_and_resolves_only_unknown_records() {
    let store = memory_store();
    let runs = Runs::default();
    let timed_out = tool(&runs, |_args, call| async move {
        call.cancellation.cancelled().await;
        Err(ToolCallError::new(codes::TOOL_EXECUTION_ABORTED, "stopped"))
    });
    let registry = registry(&store, "worker-a", timed_out);

    let missing = registry
        .recover_operation(
            TOOL,
            "charge-4",
            |_, _| async { panic!("no record, no resolver") },
            &context(),
        )
        .await
        .unwrap();
    assert_eq!(missing, RecoverOutcome::Missing);

    let result = call_with(&registry, "a-1", 5, options("charge-4").with_timeout_ms(20)).await;
    assert_eq!(result.error_code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(
        status(&registry, "charge-4").await.state,
        OperationState::Unknown
    );

    let resolved = registry
        .recover_operation(
            TOOL,
            "charge-4",
            |record, context| async move {
                assert_eq!(record.state, OperationState::Unknown);
                assert_eq!(context.session_id.as_deref(), Some("session-1"));
                let failure = ToolCallResult::failure(
                    ToolCallError::new("PAYMENT_DECLINED", "card 4242 declined")
                        .with_retryable(false),
                );
                Ok(Resolution::Failed {
                    reason: "provider reports no charge".into(),
                    result: Some(serde_json::to_value(failure).unwrap()),
                })
            },
            &context(),
        )
        .await
        .unwrap();
    let RecoverOutcome::Resolved(record) = resolved else {
        panic!("{resolved:?}")
    };
    assert_eq!(record.state, OperationState::Failed);

    // Settled now: the resolver is never called again, and a retry replays the failure in its
    // sanitized form only.
    let unchanged = registry
        .recover_operation(
            TOOL,
            "charge-4",
            |_, _| async { panic!("settled records are not resolved") },
            &context(),
        )
        .await
        .unwrap();
    assert!(matches!(unchanged, RecoverOutcome::Unchanged(_)));
    let replay = call(&registry, "a-2", "charge-4", 5).await;
    assert_eq!(replay.error_code(), Some("PAYMENT_DECLINED"));
    assert!(!serde_json::to_string(&replay).unwrap().contains("4242"));
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_store_failure_never_falls_through_to_the_handler() {
    let backend = Arc::new(ScriptedBackend::default());
    backend.fail_all.store(true, Ordering::SeqCst);
    let store = Arc::new(DurableOperationStore::new(backend));
    let runs = Runs::default();
    let registry = registry(&store, "worker-a", charging_tool(&runs));

    for id in ["a-1", "a-2"] {
        let result = call(&registry, id, "charge-5", 5).await;
        assert_eq!(
            result.error_code(),
            Some(codes::TOOL_IDEMPOTENCY_STORE_FAILED)
        );
        assert_eq!(result.error.as_ref().unwrap().retryable, Some(true));
        let key = error_details(&result)["operationKey"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(key, r#"["session-1","payments.charge","charge-5"]"#);
        assert!(
            result
                .error
                .as_ref()
                .unwrap()
                .message
                .starts_with("Durable operation state could not be persisted: ")
        );
    }
    assert_eq!(runs.get(), 0);
    assert!(
        registry.idempotency().is_empty(),
        "failed claims leave no in-memory entry"
    );
    // Calls without a key stay unguarded and run.
    let unkeyed = call_with(
        &registry,
        "a-3",
        5,
        tool_context::ToolCallOptions::default(),
    )
    .await;
    assert!(!unkeyed.is_error());
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_timeout_during_execution_leaves_an_unknown_record() {
    let store = memory_store();
    let runs = Runs::default();
    let slow = tool(&runs, |_args, _call| async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(ToolCallResult::success(json!("too late")))
    });
    let registry = registry(&store, "worker-a", slow);
    let result = call_with(&registry, "a-1", 5, options("charge-6").with_timeout_ms(20)).await;
    assert_eq!(result.error_code(), Some(codes::TOOL_TIMEOUT));
    let record = status(&registry, "charge-6").await;
    assert_eq!(record.state, OperationState::Unknown);
    assert_eq!(
        record.reason.as_deref(),
        Some("Tool execution ended with TOOL_TIMEOUT; reconcile before retrying.")
    );
    let retry = call(&registry, "a-2", "charge-6", 5).await;
    assert_eq!(retry.error_code(), Some(codes::TOOL_IDEMPOTENCY_UNKNOWN));
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_hung_store_during_the_abort_reports_an_uncertain_persistence_state() {
    let backend = Arc::new(ScriptedBackend::default());
    let store = Arc::new(DurableOperationStore::new(Arc::clone(&backend) as _));
    let runs = Runs::default();
    let hang = Arc::clone(&backend);
    let slow = tool(&runs, move |_args, _call| {
        // The claim went through; from now on every write hangs.
        hang.hang_writes.store(true, Ordering::SeqCst);
        async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(ToolCallResult::success(json!("too late")))
        }
    });
    // A 200 ms lease bounds the abort wait to 200 ms (min(lease, 1 s)).
    let registry = registry_with_lease(&store, "worker-a", slow, 200);
    let result = call_with(&registry, "a-1", 5, options("charge-7").with_timeout_ms(20)).await;
    assert_eq!(
        result.error_code(),
        Some(codes::TOOL_IDEMPOTENCY_STORE_FAILED)
    );
    assert_eq!(
        error_details(&result),
        json!({
            "operationKey": r#"["session-1","payments.charge","charge-7"]"#,
            "persistenceState": "uncertain",
            "automaticRetrySafe": false
        })
    );
    assert!(registry.idempotency().is_empty());
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_timeout_while_claiming_marks_the_claim_unknown_and_never_runs_the_handler() {
    let backend = Arc::new(ScriptedBackend::default());
    backend.delay_write(1, Duration::from_millis(150));
    let store = Arc::new(DurableOperationStore::new(Arc::clone(&backend) as _));
    let runs = Runs::default();
    let registry = registry(&store, "worker-a", charging_tool(&runs));
    let result = call_with(&registry, "a-1", 5, options("charge-8").with_timeout_ms(20)).await;
    assert_eq!(result.error_code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(
        status(&registry, "charge-8").await.state,
        OperationState::Unknown
    );
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn a_cancellation_during_the_terminal_write_still_persists_one_outcome() {
    let backend = Arc::new(ScriptedBackend::default());
    // Write 1 is the claim, write 2 the completion: the caller cancels as it starts, and it
    // is held back until after the abort transition (write 3).
    backend.delay_write(2, Duration::from_millis(300));
    let store = Arc::new(DurableOperationStore::new(Arc::clone(&backend) as _));
    let runs = Runs::default();
    let registry = registry(&store, "worker-a", charging_tool(&runs));
    let token = CancellationToken::new();
    backend.cancel_on_write(2, token.clone());
    let result = call_with(
        &registry,
        "a-1",
        5,
        options("charge-9").with_cancellation(token),
    )
    .await;
    assert_eq!(result.error_code(), Some(codes::TOOL_CANCELLED));
    // The abort transition ran while the completion was held back, so it won the fence.
    let record = status(&registry, "charge-9").await;
    assert_eq!(record.state, OperationState::Unknown);
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn an_output_limit_failure_is_recorded_as_failed_in_sanitized_form() {
    let store = memory_store();
    let runs = Runs::default();
    let first = registry(&store, "worker-a", charging_tool(&runs));
    let second = registry(&store, "worker-b", charging_tool(&runs));
    let over = call_with(
        &first,
        "a-1",
        5,
        options("charge-10").with_max_output_bytes(10),
    )
    .await;
    assert_eq!(over.error_code(), Some(codes::TOOL_OUTPUT_LIMIT_EXCEEDED));
    let record = status(&first, "charge-10").await;
    assert_eq!(record.state, OperationState::Failed);
    assert_eq!(
        record.reason.as_deref(),
        Some("Tool execution ended with TOOL_OUTPUT_LIMIT_EXCEEDED; reconcile before retrying.")
    );
    let stored = record.result.unwrap();
    assert_eq!(
        stored["content"][0]["text"],
        "Tool execution diagnostic retained in redacted form."
    );
    assert_eq!(stored["error"]["code"], codes::TOOL_OUTPUT_LIMIT_EXCEEDED);
    assert_eq!(stored["error"]["details"]["maxOutputBytes"], 10);
    assert!(stored.get("structuredContent").is_none());

    let replay = call(&second, "b-1", "charge-10", 5).await;
    assert_eq!(replay.error_code(), Some(codes::TOOL_OUTPUT_LIMIT_EXCEEDED));
    assert_eq!(replay.tool_call_id, Some("b-1".into()));
    assert_eq!(
        replay.error.as_ref().unwrap().message,
        "Tool execution diagnostic retained in redacted form."
    );
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn the_builder_checks_the_durable_options() {
    let build = |lease: Option<u64>, owner: Option<&str>, with_store: bool| {
        let mut builder = ToolRegistry::builder().policy(AllowAll);
        if with_store {
            builder = builder.durable_store(memory_store());
        }
        if let Some(lease) = lease {
            builder = builder.durable_lease_ms(lease);
        }
        if let Some(owner) = owner {
            builder = builder.durable_owner_id(owner);
        }
        builder.build().map(|_| ())
    };
    let max_ms = u64::try_from(MAX_LEASE.as_millis()).unwrap();
    assert_eq!(
        build(Some(0), None, true),
        Err(BuildError::InvalidDurableLease)
    );
    assert_eq!(build(Some(1), None, true), Ok(()));
    assert_eq!(build(Some(max_ms), None, true), Ok(()));
    assert_eq!(
        build(Some(max_ms + 1), None, true),
        Err(BuildError::InvalidDurableLease)
    );
    assert_eq!(
        build(None, Some("  "), true),
        Err(BuildError::InvalidDurableOwnerId)
    );
    assert_eq!(
        build(None, Some(&"o".repeat(257)), true),
        Err(BuildError::InvalidDurableOwnerId)
    );
    assert_eq!(build(None, Some(&"o".repeat(256)), true), Ok(()));
    assert_eq!(
        build(Some(5), None, false),
        Err(BuildError::DurableOptionWithoutStore)
    );
    assert_eq!(build(None, None, true), Ok(()));
}

#[tokio::test]
async fn the_operation_api_needs_a_store_and_a_visible_tool() {
    let runs = Runs::default();
    let plain = ToolRegistry::builder()
        .tool(charging_tool(&runs))
        .build()
        .unwrap();
    assert!(matches!(
        plain.get_operation_status(TOOL, "k", &context()).await,
        Err(OperationError::NotConfigured)
    ));
    let registry = registry(&memory_store(), "worker-a", charging_tool(&runs));
    assert_eq!(
        registry
            .get_operation_status("hidden", "k", &context())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        registry
            .get_operation_status(TOOL, "never-used", &context())
            .await
            .unwrap(),
        None
    );
    assert!(matches!(
        registry.get_operation_status(TOOL, " ", &context()).await,
        Err(OperationError::InvalidKey)
    ));
    let fence = tool_durable_operations::Fence {
        incarnation: "i".into(),
        revision: 1,
    };
    assert!(matches!(
        registry
            .reconcile_operation("hidden", "k", completed(), &context(), &fence)
            .await,
        Err(OperationError::ToolNotFound(_))
    ));
}

#[tokio::test]
async fn a_competing_terminal_write_that_lands_first_is_accepted() {
    let backend = Arc::new(ScriptedBackend::default());
    // Write 1 is the claim, write 2 the completion: the caller cancels as it starts, and it
    // lands before the abort transition (write 3, held back).
    backend.delay_write(2, Duration::from_millis(20));
    backend.delay_write(3, Duration::from_millis(400));
    let store = Arc::new(DurableOperationStore::new(Arc::clone(&backend) as _));
    let runs = Runs::default();
    let registry = registry(&store, "worker-a", charging_tool(&runs));
    let token = CancellationToken::new();
    backend.cancel_on_write(2, token.clone());
    let result = call_with(
        &registry,
        "a-1",
        5,
        options("charge-11").with_cancellation(token),
    )
    .await;
    assert_eq!(result.error_code(), Some(codes::TOOL_CANCELLED));
    assert_eq!(
        status(&registry, "charge-11").await.state,
        OperationState::Completed
    );
    // A retry replays the persisted winner instead of running again.
    let replay = call(&registry, "a-2", "charge-11", 5).await;
    assert_eq!(replay.structured_content.as_ref().unwrap()["charged"], 5);
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_result_too_large_to_store_leaves_an_unknown_record_not_a_pending_one() {
    let store = memory_store();
    let runs = Runs::default();
    let huge = tool(&runs, |_args, _call| async move {
        Ok(ToolCallResult::success(json!("x".repeat(1_100_000))))
    });
    let registry = registry(&store, "worker-a", huge);
    let result = call(&registry, "a-1", "charge-12", 5).await;
    assert_eq!(
        result.error_code(),
        Some(codes::TOOL_IDEMPOTENCY_STORE_FAILED)
    );
    assert_eq!(error_details(&result)["persistenceState"], "uncertain");
    assert_eq!(error_details(&result)["automaticRetrySafe"], false);
    // Not left pending (a reclaim after the lease would run the effect again).
    assert_eq!(
        status(&registry, "charge-12").await.state,
        OperationState::Unknown
    );
    let retry = call(&registry, "a-2", "charge-12", 5).await;
    assert_eq!(retry.error_code(), Some(codes::TOOL_IDEMPOTENCY_UNKNOWN));
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_shutdown_during_execution_leaves_an_unknown_record() {
    let store = memory_store();
    let runs = Runs::default();
    let started = Arc::new(Notify::new());
    let signal = Arc::clone(&started);
    let waiting = tool(&runs, move |_args, _call| {
        let signal = Arc::clone(&signal);
        async move {
            signal.notify_one();
            std::future::pending::<()>().await;
            Ok(ToolCallResult::empty_success())
        }
    });
    let registry = registry(&store, "worker-a", waiting);
    let running = tokio::spawn({
        let registry = registry.clone();
        async move { call(&registry, "a-1", "charge-13", 5).await }
    });
    started.notified().await;
    registry.shutdown();
    let result = running.await.unwrap();
    assert_eq!(result.error_code(), Some(codes::TOOL_EXECUTION_ABORTED));
    let record = status(&registry, "charge-13").await;
    assert_eq!(record.state, OperationState::Unknown);
    assert_eq!(
        record.reason.as_deref(),
        Some("Tool execution ended with TOOL_EXECUTION_ABORTED; reconcile before retrying.")
    );
}

/// Issue 39, defect 1: a failure reconciled without a replayable tool result replays as that
/// settled failure (who reconciled it and when, and that a retry needs a new key), never as an
/// outcome still waiting for reconciliation.
#[tokio::test]
async fn a_failure_reconciled_without_a_result_replays_as_reconciled_failed() {
    let store = memory_store();
    let runs = Runs::default();
    let timed_out = tool(&runs, |_args, call| async move {
        call.cancellation.cancelled().await;
        Err(ToolCallError::new(codes::TOOL_EXECUTION_ABORTED, "stopped"))
    });
    let registry = registry(&store, "worker-a", timed_out);
    let result = call_with(&registry, "a-1", 5, options("charge-9").with_timeout_ms(20)).await;
    assert_eq!(result.error_code(), Some(codes::TOOL_TIMEOUT));

    let resolved = registry
        .recover_operation(
            TOOL,
            "charge-9",
            |_, _| async {
                Ok(Resolution::Failed {
                    reason: "provider reports no charge".into(),
                    result: None,
                })
            },
            &context(),
        )
        .await
        .unwrap();
    let RecoverOutcome::Resolved(record) = resolved else {
        panic!("{resolved:?}")
    };
    assert_eq!(record.state, OperationState::Failed);
    let reconciled_at = record.reconciled_at.unwrap();

    let replay = call(&registry, "a-2", "charge-9", 5).await;
    assert_eq!(
        runs.get(),
        1,
        "a settled failure never runs the handler again"
    );
    let error = replay.error.clone().unwrap();
    // The code of a replay without a stored tool result stays the contract's.
    assert_eq!(error.code, codes::TOOL_IDEMPOTENCY_UNKNOWN);
    assert_eq!(error.retryable, Some(false));
    assert_eq!(
        error.message,
        format!(
            "Tool operation was reconciled as failed by \"worker-a\" at {reconciled_at} \
             (ms since the Unix epoch); a retry needs a new idempotency key."
        )
    );
    assert!(!error.message.contains("reconcile it before retrying"));
    assert_eq!(
        error_details(&replay),
        json!({
            "state": "failed",
            "reason": "provider reports no charge",
            "reconciledBy": "worker-a",
            "reconciledAt": reconciled_at,
            "automaticRetrySafe": false,
            "operationKey": r#"["session-1","payments.charge","charge-9"]"#,
            "keyScope": ["sessionId", "tool"],
        })
    );
    // Evidence that is not a tool result replays the same way.
    assert_eq!(
        status(&registry, "charge-9").await.state,
        OperationState::Failed
    );
}

/// A read-only tool with the deadline as its only exit.
fn slow_read(runs: &Runs) -> tool_context::Tool {
    tool(runs, |_args, call| async move {
        call.cancellation.cancelled().await;
        Err(ToolCallError::new(codes::TOOL_EXECUTION_ABORTED, "stopped"))
    })
    .read_only()
}

/// Issue 39, defect 2: a read-only tool has no side effect, so its timeout needs no
/// reconciliation: the record is released and the same key runs again.
#[tokio::test]
async fn a_read_only_tool_that_times_out_releases_its_key() {
    let store = memory_store();
    let runs = Runs::default();
    let registry = registry(&store, "worker-a", slow_read(&runs));

    let first = call_with(&registry, "a-1", 5, options("read-1").with_timeout_ms(20)).await;
    assert_eq!(first.error_code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(first.error.as_ref().unwrap().retryable, Some(true));
    assert!(
        registry
            .get_operation_status(TOOL, "read-1", &context())
            .await
            .unwrap()
            .is_none(),
        "a read-only timeout leaves no record to reconcile"
    );

    // The same key runs again (on this registry and on another one sharing the store).
    let again = call_with(&registry, "a-2", 5, options("read-1").with_timeout_ms(20)).await;
    assert_eq!(again.error_code(), Some(codes::TOOL_TIMEOUT), "{again:?}");
    assert_eq!(runs.get(), 2);
    let other = registry_with_lease(
        &store,
        "worker-b",
        charging_tool(&runs).read_only(),
        LEASE_MS,
    );
    let answered = call(&other, "b-1", "read-1", 5).await;
    assert!(!answered.is_error(), "{answered:?}");
    assert_eq!(runs.get(), 3);
    assert_eq!(
        status(&other, "read-1").await.state,
        OperationState::Completed
    );
}
