//! The `tool-context/idempotency` extension with an independent client:
//! `tests/peers/python_idempotency_peer.py` drives a served registry with the Python `mcp` SDK,
//! sending the key in `_meta`: a retry replays without asking or running again (a retry sent
//! while the first call still runs waits for it), other arguments conflict, bad keys are
//! refused, and an unkeyed call runs as before. The same peer runs against the fleet's store on
//! each backend: memory, SQLite, Redis and PostgreSQL (real servers; a unique table, prefix or
//! file per test, since the servers are shared).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tool_context::{ReadOnlyOrDirectLocal, Tool, ToolInvocation, ToolRegistry};
use tool_context_mcp::McpToolServer;
use tool_durable_operations::backend::postgres::PostgresBackend;
use tool_durable_operations::backend::redis::RedisBackend;
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_durable_operations::{DurableOperationBackend, DurableOperationStore, MemoryBackend};
use tool_protocol::ToolCallError;

mod python_support;

#[derive(Deserialize, JsonSchema)]
struct Write {
    text: String,
}

/// How long `work.slow` takes: long enough for a retry to arrive while it runs.
const SLOW_RUN: std::time::Duration = std::time::Duration::from_millis(1500);

/// A host's registry: its tools over the fleet's shared durable store, as `owner`.
fn registry(
    writes: &Arc<AtomicU64>,
    slow_runs: &Arc<AtomicU64>,
    store: &Arc<DurableOperationStore>,
    owner: &str,
) -> ToolRegistry {
    let writes = writes.clone();
    let slow_runs = slow_runs.clone();
    let slow = Tool::typed(
        "work.slow",
        "Takes a while.",
        move |input: Write, _call: ToolInvocation| {
            let slow_runs = slow_runs.clone();
            async move {
                let run = slow_runs.fetch_add(1, Ordering::SeqCst) + 1;
                tokio::time::sleep(SLOW_RUN).await;
                Ok::<_, ToolCallError>(json!({"text": input.text, "run": run}))
            }
        },
    )
    .read_only();
    let write = Tool::typed(
        "work.write",
        "Writes.",
        move |input: Write, _call: ToolInvocation| {
            let writes = writes.clone();
            async move {
                let run = writes.fetch_add(1, Ordering::SeqCst) + 1;
                Ok::<_, ToolCallError>(json!({"text": input.text, "run": run}))
            }
        },
    );
    ToolRegistry::builder()
        .tools([write, slow])
        .durable_store(Arc::clone(store))
        .durable_owner_id(owner)
        .policy(ReadOnlyOrDirectLocal)
        .build()
        .unwrap()
}

/// Runs the Python peer against two hosts over one store on `backend`: the keyed call ran once
/// (its retry replayed), the unkeyed call once, and the slow call's retry that reached the other
/// host while it ran waited for it there and replayed it.
async fn the_python_client_retries_and_it_runs_once_on(backend: Arc<dyn DurableOperationBackend>) {
    let writes = Arc::new(AtomicU64::new(0));
    let slow_runs = Arc::new(AtomicU64::new(0));
    // Two hosts over one durable store, as behind a load balancer: a retry may reach either.
    let store = Arc::new(DurableOperationStore::new(backend));
    let host = |owner| McpToolServer::new(registry(&writes, &slow_runs, &store, owner));
    let first = python_support::serve(&host("host-a")).await;
    let second = python_support::serve(&host("host-b")).await;
    let stdout =
        python_support::run_peer_with("python_idempotency_peer.py", &[&first, &second]).await;
    assert!(
        stdout.contains("python idempotency peer passed"),
        "{stdout}"
    );
    assert_eq!(writes.load(Ordering::SeqCst), 2);
    assert_eq!(slow_runs.load(Ordering::SeqCst), 1);
}

/// A lowercase name no other test run uses.
fn unique(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_client_retries_a_keyed_call_and_it_runs_once_in_memory() {
    the_python_client_retries_and_it_runs_once_on(Arc::new(MemoryBackend::new())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_client_retries_a_keyed_call_and_it_runs_once_on_sqlite() {
    let folder = tempfile::tempdir().unwrap();
    let backend = SqliteBackend::open(folder.path().join("fleet.db"))
        .await
        .unwrap();
    the_python_client_retries_and_it_runs_once_on(Arc::new(backend)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_client_retries_a_keyed_call_and_it_runs_once_on_redis() {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let backend = RedisBackend::connect(&url, &format!("{}:", unique("mcp-keys")))
        .await
        .unwrap();
    the_python_client_retries_and_it_runs_once_on(Arc::new(backend)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_client_retries_a_keyed_call_and_it_runs_once_on_postgres() {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let table = unique("mcp_keys");
    let backend = PostgresBackend::connect(&url, &table, 5).await.unwrap();
    backend.apply_schema().await.unwrap();
    the_python_client_retries_and_it_runs_once_on(Arc::new(backend)).await;
}
