//! Conformance of the PostgreSQL backend against a real server (DATABASE_URL, default local).
//! Each test applies the migration explicitly to its own schema and drops it afterwards.
#![cfg(feature = "postgres")]

mod support;

use std::str::FromStr;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use support::conformance::BackendFactory;
use tool_durable_operations::DurableOperationBackend;
use tool_durable_operations::backend::postgres::{
    POSTGRES_DEFAULT_TABLE, POSTGRES_DURABLE_OPERATION_SCHEMA_SQL, PostgresBackend,
    postgres_legacy_incarnation_migration_sql, postgres_migrator, postgres_schema_sql,
};

async fn pool(connections: u32) -> PgPool {
    PgPoolOptions::new()
        .max_connections(connections)
        .connect(&support::database_url())
        .await
        .unwrap()
}

/// Creates unique schemas and drops them (with CASCADE) when dropped.
#[derive(Default)]
struct Schemas(Mutex<Vec<String>>);

impl Schemas {
    async fn fresh(&self) -> String {
        let schema = format!("durable_test_{}", support::unique_suffix());
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\"")))
            .execute(&pool(1).await)
            .await
            .unwrap();
        self.0.lock().unwrap().push(schema.clone());
        schema
    }
}

impl Drop for Schemas {
    fn drop(&mut self) {
        let schemas = std::mem::take(&mut *self.0.lock().unwrap());
        // Drop runs inside the test's runtime; clean up on a thread with its own runtime.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let pool = pool(1).await;
                for schema in schemas {
                    let sql = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
                    let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&pool).await;
                }
            });
        })
        .join();
    }
}

#[derive(Default)]
struct Postgres(Schemas);

#[async_trait]
impl BackendFactory for Postgres {
    async fn open(&self, connections: usize) -> Vec<Arc<dyn DurableOperationBackend>> {
        let table = format!("{}.operations", self.0.fresh().await);
        let mut backends: Vec<Arc<dyn DurableOperationBackend>> = Vec::new();
        for index in 0..connections {
            let backend = PostgresBackend::new(pool(2).await, &table).unwrap();
            if index == 0 {
                backend.apply_schema().await.unwrap();
            }
            backends.push(Arc::new(backend));
        }
        backends
    }
}

conformance_suite!(Postgres::default());

#[test]
fn exported_migration_matches_the_generated_schema() {
    assert_eq!(
        postgres_schema_sql(POSTGRES_DEFAULT_TABLE).unwrap(),
        POSTGRES_DURABLE_OPERATION_SCHEMA_SQL
    );
    let custom = postgres_schema_sql("tenant_1.ops").unwrap();
    assert!(custom.starts_with("CREATE TABLE IF NOT EXISTS \"tenant_1\".\"ops\" ("));
    assert!(custom.contains(
        "CREATE INDEX IF NOT EXISTS \"tenant_1_ops_updated_at_idx\" ON \"tenant_1\".\"ops\""
    ));
    for bad in ["ops; DROP TABLE x", "a.b.c", "\"ops\"", ""] {
        assert_eq!(
            postgres_schema_sql(bad).unwrap_err().code(),
            "DURABLE_OPERATION_INVALID_INPUT"
        );
    }
}

#[tokio::test]
async fn schema_is_never_applied_implicitly_and_the_sqlx_migration_runs_explicitly() {
    let schemas = Schemas::default();
    let schema = schemas.fresh().await;
    let options = PgConnectOptions::from_str(&support::database_url())
        .unwrap()
        .options([("search_path", schema.as_str())]);
    let scoped = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap();
    let backend = PostgresBackend::new(scoped.clone(), POSTGRES_DEFAULT_TABLE).unwrap();
    let err = backend.read("k").await.unwrap_err();
    assert_eq!(
        err.code(),
        "DURABLE_OPERATION_BACKEND_FAILED",
        "missing table must not look like a missing record"
    );
    postgres_migrator().run(&scoped).await.unwrap();
    assert_eq!(backend.read("k").await.unwrap(), None);
    let store = tool_durable_operations::DurableOperationStore::new(Arc::new(backend));
    let request = tool_durable_operations::ClaimRequest {
        key: "k",
        fingerprint: "f",
        owner_id: "o",
        lease: None,
    };
    let claim = store.claim(request).await.unwrap();
    store
        .complete("k", "o", serde_json::Value::Null, &claim.fence)
        .await
        .unwrap();
    let (present, is_null): (bool, bool) = sqlx::query_as(
        "SELECT result_present, result = 'null'::jsonb FROM context_action_durable_operations",
    )
    .fetch_one(&scoped)
    .await
    .unwrap();
    assert!(
        present && is_null,
        "explicit null is stored as jsonb null with result_present"
    );
}

#[tokio::test]
async fn connect_validates_the_table_before_connecting_and_reports_backend_errors() {
    let err = PostgresBackend::connect(&support::database_url(), "bad name", 1)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_INVALID_INPUT");
    let err = PostgresBackend::connect("postgres://postgres@127.0.0.1:1/test", "ops", 1)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_BACKEND_FAILED");
    let backend = PostgresBackend::connect(&support::database_url(), "ops", 1)
        .await
        .unwrap();
    backend.ping().await.unwrap();
}

#[tokio::test]
async fn prune_skips_and_reports_a_row_with_a_null_incarnation() {
    let postgres = Postgres::default();
    let backend = postgres.open(1).await.remove(0);
    let clock = tool_durable_operations::ManualClock::new(support::conformance::T0);
    let store = support::conformance::pruning_store(backend, &clock);
    support::conformance::settle_good_records_and_age_them(&store, &clock).await;
    let schema = postgres.0.0.lock().unwrap()[0].clone();
    let table = format!("\"{schema}\".\"operations\"");
    // As a table the reference created before fencing, then migrated halfway.
    let sql = format!(
        "ALTER TABLE {table} ALTER COLUMN incarnation DROP NOT NULL;\n\
         INSERT INTO {table} (operation_key, fingerprint, owner_id, incarnation, revision, state, \
         result, result_present, created_at, updated_at) VALUES ('m-legacy', 'fp-1', 'reference', \
         NULL, 2, 'completed', '{{\"ok\": true}}', true, {t0}, {t0})",
        t0 = support::conformance::T0
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&pool(1).await)
        .await
        .unwrap();
    support::conformance::prune_skips_and_reports_the_corrupt_record(&store, "m-legacy").await;
    // The same error as on every other backend.
    assert_eq!(
        store.get("m-legacy").await.unwrap_err(),
        tool_durable_operations::DurableOperationError::CorruptRecord(
            tool_durable_operations::record::MISSING_INCARNATION.into()
        )
    );
}

/// Runs `sql` on a fresh pool.
async fn execute(sql: String) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&pool(1).await)
        .await
        .unwrap();
}

#[tokio::test]
async fn concurrent_backfills_of_a_null_incarnation_agree() {
    let postgres = Postgres::default();
    let backends = postgres.open(2).await;
    let schema = postgres.0.0.lock().unwrap()[0].clone();
    let table = format!("\"{schema}\".\"operations\"");
    execute(format!(
        "ALTER TABLE {table} ALTER COLUMN incarnation DROP NOT NULL;\n\
         INSERT INTO {table} (operation_key, fingerprint, owner_id, incarnation, revision, state, \
         result, result_present, created_at, updated_at) VALUES ('legacy-1', 'fp-1', 'reference', \
         NULL, 2, 'completed', '{{\"ok\": true}}', true, 1, 1)"
    ))
    .await;
    let stores = support::conformance::backfilling_stores(backends);
    let record =
        support::conformance::concurrent_backfills_agree_on_one_incarnation(&stores, "legacy-1")
            .await;
    assert_eq!(record.result, Some(serde_json::json!({"ok": true})));
}

#[tokio::test]
async fn legacy_migration_adds_backfills_and_requires_the_incarnation_column() {
    let schemas = Schemas::default();
    let schema = schemas.fresh().await;
    let table = format!("{schema}.operations");
    let quoted = format!("\"{schema}\".\"operations\"");
    // The table as the reference created it before fencing: no incarnation column.
    execute(format!(
        "{}\nALTER TABLE {quoted} DROP COLUMN incarnation;\n\
         INSERT INTO {quoted} (operation_key, fingerprint, owner_id, revision, state, result, \
         result_present, created_at, updated_at) VALUES \
         ('legacy-a', 'fp-1', 'reference', 2, 'completed', '1', true, 10, 20), \
         ('legacy-b', 'fp-1', 'reference', 3, 'failed', NULL, false, 10, 30)",
        postgres_schema_sql(&table).unwrap()
    ))
    .await;
    let backend = PostgresBackend::new(pool(1).await, &table).unwrap();
    let store = tool_durable_operations::DurableOperationStore::new(Arc::new(backend));
    assert_eq!(
        store.get("legacy-a").await.unwrap_err().code(),
        "DURABLE_OPERATION_BACKEND_FAILED",
        "the column is missing until the migration runs"
    );
    let migration = postgres_legacy_incarnation_migration_sql(&table).unwrap();
    execute(migration.clone()).await;
    execute(migration).await; // idempotent
    let (matching, nullable): (i64, String) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT (SELECT count(*) FROM {quoted} WHERE incarnation = 'legacy:' || md5(operation_key \
         || ':' || revision::text || ':' || updated_at::text)), (SELECT is_nullable FROM \
         information_schema.columns WHERE table_schema = '{schema}' AND table_name = 'operations' \
         AND column_name = 'incarnation')"
    )))
    .fetch_one(&pool(1).await)
    .await
    .unwrap();
    assert_eq!((matching, nullable.as_str()), (2, "NO"));
    let record = store.get("legacy-b").await.unwrap().unwrap();
    assert!(
        record.incarnation.starts_with("legacy:"),
        "{}",
        record.incarnation
    );
    assert_eq!(record.incarnation.len(), "legacy:".len() + 32);
    let report = store.backfill_legacy_incarnations().await.unwrap();
    assert_eq!((report.backfilled, report.corrupt), (0, 0));
}

#[tokio::test]
async fn a_store_opens_from_its_url_in_one_call() {
    support::assert_store_opens_from_url(&support::database_url()).await;
}
