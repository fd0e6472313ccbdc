//! Conformance of the in-memory backend, plus store-level checks that need no real server.

mod support;

use std::sync::Arc;

use async_trait::async_trait;
use support::conformance::BackendFactory;
use tool_durable_operations::{
    DurableOperationBackend, DurableOperationStore, MemoryBackend, StoreOptions,
};

struct Memory;

#[async_trait]
impl BackendFactory for Memory {
    async fn open(&self, connections: usize) -> Vec<Arc<dyn DurableOperationBackend>> {
        let shared: Arc<dyn DurableOperationBackend> = Arc::new(MemoryBackend::new());
        vec![shared; connections]
    }
}

conformance_suite!(Memory);

#[test]
fn store_options_are_validated_at_their_edges() {
    let backend: Arc<dyn DurableOperationBackend> = Arc::new(MemoryBackend::new());
    let with =
        |options: StoreOptions| DurableOperationStore::with_options(backend.clone(), options);
    let defaults = StoreOptions::default();
    assert_eq!(defaults.default_lease.as_millis(), 300_000);
    assert_eq!(defaults.retention.as_millis(), 86_400_000);
    assert_eq!(
        (
            defaults.max_attempts,
            defaults.prune_page_size,
            defaults.max_prune_pages
        ),
        (8, 500, 1_000)
    );
    assert!(with(defaults.clone().with_max_attempts(1_000)).is_ok());
    let err = with(defaults.clone().with_max_attempts(1_001)).unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_INVALID_OPTIONS");
    assert!(with(defaults.clone().with_max_attempts(0)).is_err());
    assert!(with(defaults.clone().with_prune_page_size(10_000)).is_ok());
    assert!(with(defaults.clone().with_prune_page_size(10_001)).is_err());
    assert!(with(defaults.clone().with_prune_page_size(0)).is_err());
    assert!(with(defaults.clone().with_max_prune_pages(0)).is_err());
    assert!(
        with(
            defaults
                .clone()
                .with_default_lease(std::time::Duration::from_micros(999))
        )
        .is_err()
    );
    assert!(with(defaults.with_default_lease(std::time::Duration::from_millis(1))).is_ok());
}

#[tokio::test]
async fn invalid_incarnations_are_rejected_before_any_write() {
    let backend: Arc<dyn DurableOperationBackend> = Arc::new(MemoryBackend::new());
    for bad in ["", "a\0b", &"x".repeat(257)] {
        let bad = bad.to_owned();
        let store = DurableOperationStore::new(backend.clone())
            .with_incarnation_generator(Arc::new(move || bad.clone()));
        let request = tool_durable_operations::ClaimRequest {
            key: "k",
            fingerprint: "f",
            owner_id: "o",
            lease: None,
        };
        let err = store.claim(request).await.unwrap_err();
        assert_eq!(err.code(), "DURABLE_OPERATION_INVALID_INCARNATION");
        assert_eq!(store.get("k").await.unwrap(), None);
    }
    let store = DurableOperationStore::new(backend)
        .with_incarnation_generator(Arc::new(|| "x".repeat(256)));
    assert_eq!(
        store.fencing_capability(),
        tool_durable_operations::FENCING_CAPABILITY
    );
    let request = tool_durable_operations::ClaimRequest {
        key: "k",
        fingerprint: "f",
        owner_id: "o",
        lease: None,
    };
    assert_eq!(
        store.claim(request).await.unwrap().record.incarnation.len(),
        256
    );
}

#[tokio::test]
async fn lease_is_bounded_at_max_lease() {
    use tool_durable_operations::store::MAX_LEASE;
    let store = DurableOperationStore::new(Arc::new(MemoryBackend::new()));
    let claim = |key: &'static str, lease| tool_durable_operations::ClaimRequest {
        key,
        fingerprint: "f",
        owner_id: "o",
        lease: Some(lease),
    };
    let at = store.claim(claim("at", MAX_LEASE)).await.unwrap();
    assert_eq!(
        at.record.lease_expires_at,
        Some(at.record.created_at + 365 * 86_400_000)
    );
    let over = MAX_LEASE + std::time::Duration::from_millis(1);
    let err = store.claim(claim("over", over)).await.unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_INVALID_INPUT");
    let options = StoreOptions::default().with_default_lease(over);
    assert!(DurableOperationStore::with_options(Arc::new(MemoryBackend::new()), options).is_err());
}

#[tokio::test]
async fn memory_records_never_need_a_backfill() {
    let store = DurableOperationStore::new(Arc::new(MemoryBackend::new()));
    let err = store
        .backfill_legacy_incarnation("absent")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_MISSING");
    let request = tool_durable_operations::ClaimRequest {
        key: "k",
        fingerprint: "f",
        owner_id: "o",
        lease: None,
    };
    let claim = store.claim(request).await.unwrap();
    assert_eq!(
        store.backfill_legacy_incarnation("k").await.unwrap(),
        claim.record
    );
    let report = store.backfill_legacy_incarnations().await.unwrap();
    assert_eq!((report.backfilled, report.corrupt, report.pages), (0, 0, 1));
}

/// A backend that implements only the required methods.
struct Minimal(MemoryBackend);

#[async_trait]
impl DurableOperationBackend for Minimal {
    fn name(&self) -> &'static str {
        "minimal"
    }
    async fn ping(&self) -> Result<(), tool_durable_operations::DurableOperationError> {
        self.0.ping().await
    }
    async fn read(
        &self,
        key: &str,
    ) -> Result<
        Option<tool_durable_operations::OperationRecord>,
        tool_durable_operations::DurableOperationError,
    > {
        self.0.read(key).await
    }
    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&tool_durable_operations::Fence>,
        next: Option<&tool_durable_operations::OperationRecord>,
    ) -> Result<bool, tool_durable_operations::DurableOperationError> {
        self.0.compare_and_set(key, expected, next).await
    }
    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<tool_durable_operations::RecordPage, tool_durable_operations::DurableOperationError>
    {
        self.0.list_page(cursor, limit).await
    }
}

#[tokio::test]
async fn a_backend_without_backfill_support_refuses_it_explicitly() {
    let store = DurableOperationStore::new(Arc::new(Minimal(MemoryBackend::new())));
    let err = store.backfill_legacy_incarnation("k").await.unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_BACKFILL_UNSUPPORTED");
    assert!(!err.is_retryable());
}
