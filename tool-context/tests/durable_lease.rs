//! Lease renewal of the registry's durable calls: a handler that outlives its lease keeps the
//! record, so a second registry sharing the store waits instead of running it again.

mod durable_support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use durable_support::*;
use serde_json::json;
use tokio::sync::oneshot;
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_durable_operations::{DurableOperationStore, OperationState};
use tool_protocol::{ToolCallResult, codes};

/// Far shorter than the handler: only renewal keeps the lease. Long enough that a renewal
/// (every third of it) delayed by a loaded two-core machine's scheduling or an SQLite write
/// behind other tests' I/O still lands in time: at 250 ms one CI run lost the lease.
const SHORT_LEASE_MS: u64 = 900;

/// A handler of three leases on `first`, and a call of the same key on `second` after
/// twice the lease: it must wait (pending), the handler runs once and `first` completes.
async fn slow_handler_keeps_its_lease(
    first: Arc<DurableOperationStore>,
    second: Arc<DurableOperationStore>,
) {
    let runs = Runs::default();
    let (past_lease_tx, past_lease_rx) = oneshot::channel::<()>();
    let (resume_tx, resume_rx) = oneshot::channel::<()>();
    let signals = Arc::new(std::sync::Mutex::new(Some((past_lease_tx, resume_rx))));
    let slow = tool(&runs, move |_args, _call| {
        let signals = signals.lock().unwrap().take();
        async move {
            let (past_lease, resume) = signals.expect("the handler runs once");
            tokio::time::sleep(Duration::from_millis(SHORT_LEASE_MS * 2)).await;
            past_lease.send(()).ok();
            resume.await.ok();
            tokio::time::sleep(Duration::from_millis(SHORT_LEASE_MS)).await;
            Ok(ToolCallResult::success(json!("charged once")))
        }
    });
    let first = registry_with_lease(&first, "worker-a", slow, SHORT_LEASE_MS);
    let second = registry_with_lease(&second, "worker-b", charging_tool(&runs), SHORT_LEASE_MS);
    let running = tokio::spawn({
        let first = first.clone();
        async move { call(&first, "a-1", "slow-charge", 5).await }
    });
    past_lease_rx.await.unwrap();
    let during = call(&second, "b-1", "slow-charge", 5).await;
    resume_tx.send(()).ok();
    let done = running.await.unwrap();
    assert_eq!(
        during.error_code(),
        Some(codes::TOOL_IDEMPOTENCY_PENDING),
        "the renewed lease must block the second registry: {during:?}"
    );
    assert!(!done.is_error(), "the first registry completes: {done:?}");
    let record = status(&second, "slow-charge").await;
    assert_eq!(
        (record.state, record.owner_id.as_str()),
        (OperationState::Completed, "worker-a")
    );
    let replay = call(&second, "b-2", "slow-charge", 5).await;
    assert!(replay.is_replay() && !done.is_replay());
    assert_eq!(without_id(&replay), without_id(&done));
    assert_eq!(runs.get(), 1, "the handler ran exactly once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_handler_keeps_its_lease_on_memory() {
    let store = memory_store();
    slow_handler_keeps_its_lease(Arc::clone(&store), store).await;
}

async fn sqlite_store(path: &Path) -> Arc<DurableOperationStore> {
    let backend = SqliteBackend::open(path)
        .await
        .expect("open the SQLite file");
    Arc::new(DurableOperationStore::new(Arc::new(backend)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_handler_keeps_its_lease_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("operations.sqlite");
    slow_handler_keeps_its_lease(sqlite_store(&path).await, sqlite_store(&path).await).await;
}

/// Fails the first lease renewal (a pending -> pending update) with a backend error.
struct FailFirstRenewal {
    inner: tool_durable_operations::MemoryBackend,
    armed: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl tool_durable_operations::DurableOperationBackend for FailFirstRenewal {
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
        if renewal && self.armed.swap(false, std::sync::atomic::Ordering::SeqCst) {
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
async fn a_failed_renewal_makes_the_call_unknown_and_blocks_a_second_registry() {
    let backend = Arc::new(FailFirstRenewal {
        inner: tool_durable_operations::MemoryBackend::new(),
        armed: true.into(),
    });
    let store = Arc::new(DurableOperationStore::new(backend));
    let runs = Runs::default();
    let slow = tool(&runs, |_args, _call| async {
        tokio::time::sleep(Duration::from_millis(SHORT_LEASE_MS * 3)).await;
        Ok(ToolCallResult::success(json!("charged")))
    });
    let first = registry_with_lease(&store, "worker-a", slow, SHORT_LEASE_MS);
    let second = registry_with_lease(&store, "worker-b", charging_tool(&runs), SHORT_LEASE_MS);
    let result = call(&first, "a-1", "renew-fail", 5).await;
    assert_eq!(
        result.error_code(),
        Some(codes::TOOL_IDEMPOTENCY_UNKNOWN),
        "{result:?}"
    );
    assert_eq!(
        status(&first, "renew-fail").await.state,
        OperationState::Unknown
    );
    let blocked = call(&second, "b-1", "renew-fail", 5).await;
    assert_eq!(blocked.error_code(), Some(codes::TOOL_IDEMPOTENCY_UNKNOWN));
    assert_eq!(runs.get(), 1, "never a second execution");
}

#[tokio::test]
async fn a_timeout_after_a_failed_renewal_reports_the_timeout_of_the_stored_unknown() {
    let backend = Arc::new(FailFirstRenewal {
        inner: tool_durable_operations::MemoryBackend::new(),
        armed: true.into(),
    });
    let store = Arc::new(DurableOperationStore::new(backend));
    let runs = Runs::default();
    let hanging = tool(&runs, |_args, _call| async {
        std::future::pending::<()>().await;
        Ok(ToolCallResult::success(json!("never")))
    });
    let registry = registry_with_lease(&store, "worker-a", hanging, SHORT_LEASE_MS);
    // The first renewal (a third of the lease in) fails well before the timeout.
    let options = options("renew-then-timeout").with_timeout_ms(SHORT_LEASE_MS as i64 * 3);
    let result = call_with(&registry, "a-1", 5, options).await;
    assert_eq!(result.error_code(), Some(codes::TOOL_TIMEOUT), "{result:?}");
    assert_eq!(
        status(&registry, "renew-then-timeout").await.state,
        OperationState::Unknown
    );
}
