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
async fn a_database_in_a_missing_folder_gets_its_folder_or_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("new/deeper/operations.db");
    SqliteBackend::open(&nested).await.unwrap();
    assert!(nested.exists());
    // A folder that cannot exist (a file stands where it would be) is named.
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "x").unwrap();
    let error = SqliteBackend::open(blocked.join("sub/operations.db"))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains(&blocked.join("sub").display().to_string()),
        "{error}"
    );
}

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

/// Binds the 14 record columns of `insert_sql` / `update_sql` in table order.
fn bind_columns<'q>(
    query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments>,
    key: &str,
    incarnation: &str,
    revision: i64,
    state: &str,
    result: Option<&str>,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    query
        .bind(key.to_owned())
        .bind("fp".to_owned())
        .bind("owner".to_owned())
        .bind(incarnation.to_owned())
        .bind(revision)
        .bind(state.to_owned())
        .bind(result.map(str::to_owned))
        .bind(result.is_some())
        .bind(None::<String>)
        .bind(1_i64)
        .bind(1_i64)
        .bind(None::<i64>)
        .bind(None::<String>)
        .bind(None::<i64>)
}

#[tokio::test]
async fn exposed_statements_are_the_ones_the_store_runs() {
    use sqlx::{AssertSqlSafe, SqlSafeStr};
    use tool_durable_operations::{DurableOperationStore, OperationState};

    let dir = tempfile::tempdir().unwrap();
    let backend = SqliteBackend::open(dir.path().join("raw.db"))
        .await
        .unwrap();
    let pool = backend.pool().clone();
    let insert = AssertSqlSafe(backend.insert_sql().to_owned()).into_sql_str();
    let update = AssertSqlSafe(backend.update_sql().to_owned()).into_sql_str();
    let store = DurableOperationStore::new(Arc::new(backend));

    // A raw insert is a record the store reads back, and is insert-if-absent.
    let inserted = bind_columns(sqlx::query(insert.clone()), "k", "inc", 1, "pending", None)
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(inserted.rows_affected(), 1);
    let again = bind_columns(sqlx::query(insert), "k", "other", 1, "pending", None)
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(again.rows_affected(), 0);
    let record = store.get("k").await.unwrap().unwrap();
    assert_eq!(
        (record.state, record.incarnation.as_str()),
        (OperationState::Pending, "inc")
    );

    // The raw update is fenced on incarnation and revision: a stale fence writes nothing.
    let completed = |revision: i64| {
        bind_columns(
            sqlx::query(update.clone()),
            "k",
            "inc",
            revision + 1,
            "completed",
            Some("7"),
        )
        .bind("inc".to_owned())
        .bind(revision)
    };
    assert_eq!(
        completed(1).execute(&pool).await.unwrap().rows_affected(),
        1
    );
    assert_eq!(
        completed(1).execute(&pool).await.unwrap().rows_affected(),
        0
    );
    let record = store.get("k").await.unwrap().unwrap();
    assert_eq!(record.state, OperationState::Completed);
    assert_eq!(
        (record.revision, record.result),
        (2, Some(serde_json::json!(7)))
    );
}

#[tokio::test]
async fn a_store_opens_from_its_url_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    support::assert_store_opens_from_url(&format!(
        "sqlite:{}",
        dir.path().join("by-url/ops.db").display()
    ))
    .await;
}
