//! `LeaseTakeover::MarkUnknown` on every backend (memory, SQLite, Redis, PostgreSQL; real
//! servers from `REDIS_URL` / `DATABASE_URL` or the local defaults, a unique prefix or table per
//! run): a keyed call whose owner died mid-run (a host killed after its write) is pending for the
//! lease, then marked unknown for every registry instead of running the effect a second time; a
//! read-only tool runs again.

mod durable_support;

use std::sync::Arc;
use std::time::Duration;

use durable_support::*;
use tool_context::{AllowAll, LeaseTakeover, Tool, ToolRegistry};
use tool_durable_operations::backend::postgres::PostgresBackend;
use tool_durable_operations::backend::redis::RedisBackend;
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_durable_operations::{
    DurableOperationBackend, DurableOperationStore, ManualClock, MemoryBackend, OperationState,
};
use tool_protocol::codes;

/// One backend of each kind, fresh.
async fn backends(dir: &std::path::Path) -> Vec<(&'static str, Arc<dyn DurableOperationBackend>)> {
    let unique = uuid::Uuid::new_v4().simple().to_string();
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let postgres = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let sqlite = SqliteBackend::open(dir.join("takeover.db")).await.unwrap();
    let redis = RedisBackend::connect(&redis, &format!("takeover-{unique}:"))
        .await
        .expect("Redis answers (REDIS_URL or the local default)");
    let postgres = PostgresBackend::connect(&postgres, &format!("takeover_{unique}"), 4)
        .await
        .expect("PostgreSQL answers (DATABASE_URL or the local default)");
    postgres.apply_schema().await.unwrap();
    vec![
        ("memory", Arc::new(MemoryBackend::new())),
        ("sqlite", Arc::new(sqlite)),
        ("redis", Arc::new(redis)),
        ("postgres", Arc::new(postgres)),
    ]
}

/// A registry on `store` that marks reclaimed records unknown instead of running them again.
fn marking_registry(store: &Arc<DurableOperationStore>, owner: &str, tool: Tool) -> ToolRegistry {
    ToolRegistry::builder()
        .tool(tool)
        .policy(AllowAll)
        .durable_store(Arc::clone(store))
        .durable_owner_id(owner)
        .durable_lease_ms(LEASE_MS)
        .durable_takeover(LeaseTakeover::MarkUnknown)
        .build()
        .expect("a valid durable registry")
}

/// An owner that never finishes (a host killed mid-call) leaves `key` pending until its lease
/// ends.
async fn a_dead_owners_pending_record(store: &Arc<DurableOperationStore>, key: &str) {
    let runs = Runs::default();
    let stuck = tool(&runs, |_args, _call| std::future::pending());
    let dead = registry(store, "worker-dead", stuck);
    let key = key.to_owned();
    let running = tokio::spawn(async move { call(&dead, "dead-1", &key, 5).await });
    while runs.get() == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    running.abort();
}

#[tokio::test]
async fn marking_takeovers_unknown_never_runs_a_dead_owners_call_again() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, storage) in backends(dir.path()).await {
        let clock = ManualClock::new(1_000_000);
        let store =
            Arc::new(DurableOperationStore::new(storage).with_clock(Arc::new(clock.clone())));
        a_dead_owners_pending_record(&store, "charge-dead").await;
        let runs = Runs::default();
        let survivor = marking_registry(&store, "worker-b", charging_tool(&runs));

        let pending = call(&survivor, "b-1", "charge-dead", 5).await;
        assert_eq!(
            pending.error_code(),
            Some(codes::TOOL_IDEMPOTENCY_PENDING),
            "{backend}: {pending:?}"
        );
        clock.advance(Duration::from_millis(LEASE_MS));
        let reclaimed = call(&survivor, "b-2", "charge-dead", 5).await;
        assert_eq!(
            reclaimed.error_code(),
            Some(codes::TOOL_IDEMPOTENCY_UNKNOWN),
            "{backend}: {reclaimed:?}"
        );
        let error = reclaimed.error.as_ref().unwrap();
        assert_eq!(error.retryable, Some(false), "{backend}");
        assert_eq!(
            error.details.as_ref().unwrap()["reason"],
            tool_context::TAKEN_OVER_REASON,
            "{backend}"
        );
        assert_eq!(
            status(&survivor, "charge-dead").await.state,
            OperationState::Unknown,
            "{backend}"
        );
        // Every later retry, on any registry, is told the same until someone reconciles.
        let other = marking_registry(&store, "worker-c", charging_tool(&runs));
        let again = call(&other, "c-1", "charge-dead", 5).await;
        assert_eq!(
            again.error_code(),
            Some(codes::TOOL_IDEMPOTENCY_UNKNOWN),
            "{backend}"
        );
        assert_eq!(
            runs.get(),
            0,
            "{backend}: the effect never ran a second time"
        );
        // A fresh key runs as usual.
        let fresh = call(&survivor, "b-3", "charge-new", 5).await;
        assert!(!fresh.is_error(), "{backend}: {fresh:?}");
        assert_eq!(runs.get(), 1, "{backend}");
    }
}

#[tokio::test]
async fn marking_takeovers_unknown_still_runs_a_read_only_call_again() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, storage) in backends(dir.path()).await {
        let clock = ManualClock::new(1_000_000);
        let store =
            Arc::new(DurableOperationStore::new(storage).with_clock(Arc::new(clock.clone())));
        a_dead_owners_pending_record(&store, "read-dead").await;
        let runs = Runs::default();
        let survivor = marking_registry(&store, "worker-b", charging_tool(&runs).read_only());
        clock.advance(Duration::from_millis(LEASE_MS));
        let reclaimed = call(&survivor, "b-1", "read-dead", 5).await;
        assert!(!reclaimed.is_error(), "{backend}: {reclaimed:?}");
        assert_eq!(runs.get(), 1, "{backend}");
    }
}
