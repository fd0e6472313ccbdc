//! Conformance of the SQLite backend: every connection is its own pool on one database file.
#![cfg(feature = "sqlite")]

mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use support::conformance::BackendFactory;
use tool_durable_operations::DurableOperationBackend;
use tool_durable_operations::backend::sqlite::SqliteBackend;

#[derive(Default)]
struct Sqlite {
    dirs: Mutex<Vec<tempfile::TempDir>>,
}

#[async_trait]
impl BackendFactory for Sqlite {
    async fn open(&self, connections: usize) -> Vec<Arc<dyn DurableOperationBackend>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("operations.db");
        self.dirs.lock().unwrap().push(dir);
        let mut backends: Vec<Arc<dyn DurableOperationBackend>> = Vec::new();
        for _ in 0..connections {
            backends.push(Arc::new(SqliteBackend::open(&path).await.unwrap()));
        }
        backends
    }
}

conformance_suite!(Sqlite::default());

#[tokio::test]
async fn custom_table_names_are_validated_and_schema_is_explicit() {
    let dir = tempfile::tempdir().unwrap();
    let first = SqliteBackend::open(dir.path().join("a.db")).await.unwrap();
    let pool = first.pool().clone();
    let err = SqliteBackend::new(pool.clone(), "bad;name").unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_INVALID_INPUT");
    let custom = SqliteBackend::new(pool, "main.custom_ops").unwrap();
    assert!(
        custom
            .schema_sql()
            .contains("CREATE TABLE IF NOT EXISTS \"main\".\"custom_ops\"")
    );
    // Not applied implicitly: reading before apply_schema is a backend error, not an empty answer.
    let err = custom.read("k").await.unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_BACKEND_FAILED");
    custom.apply_schema().await.unwrap();
    custom.apply_schema().await.unwrap();
    assert_eq!(custom.read("k").await.unwrap(), None);
}

#[tokio::test]
async fn prune_skips_and_reports_a_row_whose_result_is_not_json() {
    let factory = Sqlite::default();
    let backend = factory.open(1).await.remove(0);
    let clock = tool_durable_operations::ManualClock::new(support::conformance::T0);
    let store = support::conformance::pruning_store(backend, &clock);
    support::conformance::settle_good_records_and_age_them(&store, &clock).await;
    let dir = factory.dirs.lock().unwrap()[0].path().join("operations.db");
    let pool = SqliteBackend::open(&dir).await.unwrap().pool().clone();
    sqlx::query(
        "INSERT INTO context_action_durable_operations (operation_key, fingerprint, owner_id, \
         incarnation, revision, state, result, result_present, created_at, updated_at) \
         VALUES ('m-corrupt', 'fp-1', 'o', 'i', 2, 'completed', '{not json', 1, ?1, ?1)",
    )
    .bind(support::conformance::T0 as i64)
    .execute(&pool)
    .await
    .unwrap();
    support::conformance::prune_skips_and_reports_the_corrupt_record(&store, "m-corrupt").await;
}

#[tokio::test]
async fn concurrent_backfills_of_a_null_incarnation_agree_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("legacy.db");
    let mut backends: Vec<Arc<dyn DurableOperationBackend>> = Vec::new();
    for _ in 0..2 {
        let pool = SqliteBackend::open(&path).await.unwrap().pool().clone();
        backends.push(Arc::new(SqliteBackend::new(pool, "legacy_ops").unwrap()));
    }
    let pool = SqliteBackend::open(&path).await.unwrap().pool().clone();
    let schema = SqliteBackend::new(pool.clone(), "legacy_ops")
        .unwrap()
        .schema_sql()
        .replace("incarnation TEXT NOT NULL", "incarnation TEXT");
    sqlx::raw_sql(sqlx::AssertSqlSafe(schema))
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO legacy_ops (operation_key, fingerprint, owner_id, incarnation, revision, \
         state, result_present, created_at, updated_at) \
         VALUES ('legacy-1', 'fp-1', 'reference', NULL, 2, 'failed', 0, 1, 1)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let stores = support::conformance::backfilling_stores(backends);
    support::conformance::concurrent_backfills_agree_on_one_incarnation(&stores, "legacy-1").await;
}
