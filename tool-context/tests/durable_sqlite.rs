//! The key durable scenarios against the SQLite backend: two registries with their own
//! connection pools on one database file, as two processes on one machine would be.

mod durable_support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use durable_support::*;
use serde_json::json;
use tokio::sync::Notify;
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_durable_operations::{DurableOperationStore, ManualClock, OperationState, Resolution};
use tool_protocol::{ToolCallResult, codes};

async fn sqlite_store(path: &Path, clock: &ManualClock) -> Arc<DurableOperationStore> {
    let backend = SqliteBackend::open(path)
        .await
        .expect("open the SQLite file");
    Arc::new(DurableOperationStore::new(Arc::new(backend)).with_clock(Arc::new(clock.clone())))
}

#[tokio::test]
async fn two_processes_share_leases_replays_and_reconciliation_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("operations.sqlite");
    let clock = ManualClock::new(2_000_000);
    let store_a = sqlite_store(&path, &clock).await;
    let store_b = sqlite_store(&path, &clock).await;
    let runs = Runs::default();

    // Pending during the lease, reclaimed after it.
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (s, r) = (Arc::clone(&started), Arc::clone(&release));
    let blocking = tool(&runs, move |_args, _call| {
        let (s, r) = (Arc::clone(&s), Arc::clone(&r));
        async move {
            s.notify_one();
            r.notified().await;
            Ok(ToolCallResult::success(json!("late")))
        }
    });
    let first = registry(&store_a, "host-a", blocking);
    let second = registry(&store_b, "host-b", charging_tool(&runs));
    let running = tokio::spawn({
        let first = first.clone();
        async move { call(&first, "a-1", "lease", 5).await }
    });
    started.notified().await;
    let pending = call(&second, "b-1", "lease", 5).await;
    assert_eq!(pending.error_code(), Some(codes::TOOL_IDEMPOTENCY_PENDING));
    assert_eq!(
        pending.error.as_ref().unwrap().details,
        Some(
            json!({"state": "pending", "ownerId": "host-a", "leaseExpiresAt": 2_000_000 + LEASE_MS})
        )
    );
    clock.advance(Duration::from_millis(LEASE_MS));
    let reclaimed = call(&second, "b-2", "lease", 5).await;
    assert!(!reclaimed.is_error(), "{reclaimed:?}");
    release.notify_one();
    let late = running.await.unwrap();
    assert_eq!(
        late.error_code(),
        Some(codes::TOOL_IDEMPOTENCY_STORE_FAILED)
    );
    assert_eq!(runs.get(), 2);

    // A completed result replays losslessly on the other host with the new toolCallId.
    let original = call(&second, "b-3", "replay", 9).await;
    let replayed = call(
        &registry(&store_a, "host-a", charging_tool(&runs)),
        "a-2",
        "replay",
        9,
    )
    .await;
    assert_eq!(replayed.tool_call_id, Some("a-2".into()));
    assert_eq!(without_id(&replayed), without_id(&original));
    assert_eq!(runs.get(), 3);

    // A timeout leaves an unknown record that blocks retries until it is reconciled.
    let slow = tool(&runs, |_args, _call| async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(ToolCallResult::success(json!("too late")))
    });
    let timing_out = registry(&store_a, "host-a", slow);
    let timed_out = call_with(
        &timing_out,
        "a-3",
        5,
        options("ambiguous").with_timeout_ms(20),
    )
    .await;
    assert_eq!(timed_out.error_code(), Some(codes::TOOL_TIMEOUT));
    let record = status(&second, "ambiguous").await;
    assert_eq!(record.state, OperationState::Unknown);
    let blocked = call(&second, "b-4", "ambiguous", 5).await;
    assert_eq!(blocked.error_code(), Some(codes::TOOL_IDEMPOTENCY_UNKNOWN));
    second
        .reconcile_operation(
            TOOL,
            "ambiguous",
            Resolution::Completed {
                result: json!({"charged": 5}),
                reason: None,
            },
            &context(),
            &record.fence(),
        )
        .await
        .unwrap();
    // Whether the timed-out handler got to start depends on scheduling; the settled call
    // replays the reconciled result without running the tool at all.
    let ran_before_settle = runs.get();
    let settled = call(&second, "b-5", "ambiguous", 5).await;
    assert_eq!(settled.structured_content, Some(json!({"charged": 5})));
    assert_eq!(runs.get(), ran_before_settle);
}
