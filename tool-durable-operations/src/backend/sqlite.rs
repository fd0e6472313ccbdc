//! SQLite backend (feature `sqlite`): the embedded default for one machine.
//!
//! Writes are single statements (`INSERT … ON CONFLICT DO NOTHING`, revision-checked `UPDATE`
//! and `DELETE`), so SQLite's write lock makes every compare-and-set atomic across processes.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{AssertSqlSafe, SqlSafeStr, SqlStr};

use super::sql::{
    COLUMNS, RecordRow, bind_row, decode_rows, fence_revision, index_name, quote_table_name,
};
use super::{
    DurableOperationBackend, RecordPage, check_cas_arguments, check_page_limit, page_from_rows,
};
use crate::error::DurableOperationError;
use crate::record::{Fence, OperationRecord};

/// Default SQLite table name.
pub const SQLITE_DEFAULT_TABLE: &str = "context_action_durable_operations";
/// How long a writer waits for another process's write lock before failing.
pub const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections per pool opened by [`SqliteBackend::open`].
pub const SQLITE_MAX_CONNECTIONS: u32 = 4;

const NAME: &str = "sqlite";

/// The schema of `table` (already validated by the caller).
///
/// SQLite qualifies the index name, not the indexed table, with the schema.
fn schema_sql(table: &str) -> Result<String, DurableOperationError> {
    let quoted = quote_table_name(table)?;
    let index = match table.split_once('.') {
        Some((schema, name)) => format!(
            "{}.{} ON {}",
            quote_table_name(schema)?,
            index_name(table),
            quote_table_name(name)?
        ),
        None => format!("{} ON {quoted}", index_name(table)),
    };
    Ok(format!(
        "CREATE TABLE IF NOT EXISTS {quoted} (\n  operation_key TEXT PRIMARY KEY NOT NULL,\n  fingerprint TEXT NOT NULL,\n  owner_id TEXT NOT NULL,\n  incarnation TEXT NOT NULL,\n  revision INTEGER NOT NULL,\n  state TEXT NOT NULL CHECK (state IN ('pending','completed','failed','unknown')),\n  result TEXT,\n  result_present INTEGER NOT NULL DEFAULT 0,\n  reason TEXT,\n  created_at INTEGER NOT NULL,\n  updated_at INTEGER NOT NULL,\n  lease_expires_at INTEGER,\n  reconciled_by TEXT,\n  reconciled_at INTEGER\n);\nCREATE INDEX IF NOT EXISTS {index} (updated_at);\n"
    ))
}

#[derive(Debug, Clone)]
struct Statements {
    schema: String,
    read: SqlStr,
    insert: SqlStr,
    update: SqlStr,
    delete: SqlStr,
    backfill: SqlStr,
    first_page: SqlStr,
    next_page: SqlStr,
}

impl Statements {
    fn for_table(table: &str) -> Result<Self, DurableOperationError> {
        let t = quote_table_name(table)?;
        let sql = |text: String| AssertSqlSafe(text).into_sql_str();
        Ok(Self {
            schema: schema_sql(table)?,
            read: sql(format!(
                "SELECT {COLUMNS} FROM {t} WHERE operation_key = ?1"
            )),
            insert: sql(format!(
                "INSERT INTO {t} ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
                 ON CONFLICT (operation_key) DO NOTHING"
            )),
            update: sql(format!(
                "UPDATE {t} SET fingerprint = ?2, owner_id = ?3, incarnation = ?4, revision = ?5, state = ?6, \
                 result = ?7, result_present = ?8, reason = ?9, created_at = ?10, updated_at = ?11, \
                 lease_expires_at = ?12, reconciled_by = ?13, reconciled_at = ?14 \
                 WHERE operation_key = ?1 AND incarnation = ?15 AND revision = ?16"
            )),
            delete: sql(format!(
                "DELETE FROM {t} WHERE operation_key = ?1 AND incarnation = ?2 AND revision = ?3"
            )),
            backfill: sql(format!(
                "UPDATE {t} SET incarnation = ?2 WHERE operation_key = ?1 AND incarnation IS NULL"
            )),
            first_page: sql(format!(
                "SELECT {COLUMNS} FROM {t} ORDER BY operation_key ASC LIMIT ?1"
            )),
            next_page: sql(format!(
                "SELECT {COLUMNS} FROM {t} WHERE operation_key > ?1 ORDER BY operation_key ASC LIMIT ?2"
            )),
        })
    }
}

/// Operation records in one SQLite table.
#[derive(Debug, Clone)]
pub struct SqliteBackend {
    pool: SqlitePool,
    statements: Statements,
}

impl SqliteBackend {
    /// Opens (creating if missing) the database file at `path` in WAL mode with
    /// [`SQLITE_BUSY_TIMEOUT`], and applies the schema of the default table.
    ///
    /// An embedded file belongs to the application, so creating its table here is the
    /// convenient default; use [`SqliteBackend::new`] to manage the schema yourself.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, DurableOperationError> {
        let options = SqliteConnectOptions::from_str("sqlite://")
            .map_err(|e| DurableOperationError::backend(NAME, e))?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(SQLITE_BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(SQLITE_MAX_CONNECTIONS)
            .connect_with(options)
            .await
            .map_err(|e| DurableOperationError::backend(NAME, e))?;
        let backend = Self::new(pool, SQLITE_DEFAULT_TABLE)?;
        backend.apply_schema().await?;
        Ok(backend)
    }

    /// Wraps an existing pool and table (validated as `ident` or `schema.ident`); does not
    /// touch the schema.
    pub fn new(pool: SqlitePool, table: &str) -> Result<Self, DurableOperationError> {
        Ok(Self {
            pool,
            statements: Statements::for_table(table)?,
        })
    }

    /// The `CREATE TABLE` / `CREATE INDEX` statements of this backend's table.
    pub fn schema_sql(&self) -> &str {
        &self.statements.schema
    }

    /// Applies [`schema_sql`](Self::schema_sql) (idempotent).
    pub async fn apply_schema(&self) -> Result<(), DurableOperationError> {
        sqlx::raw_sql(AssertSqlSafe(self.statements.schema.clone()))
            .execute(&self.pool)
            .await
            .map_err(|e| DurableOperationError::backend(NAME, e))?;
        Ok(())
    }

    /// The pool.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The `INSERT … ON CONFLICT DO NOTHING` that claims a new key: the 14 record columns as
    /// parameters, in the order of the table's columns. Exposed so audits and benchmarks can
    /// run exactly what the store runs.
    pub fn insert_sql(&self) -> &str {
        self.statements.insert.as_str()
    }

    /// The fenced `UPDATE` of every transition of an existing record: the 14 record columns,
    /// then the expected incarnation and revision. Exposed like [`insert_sql`](Self::insert_sql).
    pub fn update_sql(&self) -> &str {
        self.statements.update.as_str()
    }
}

#[async_trait]
impl DurableOperationBackend for SqliteBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn ping(&self) -> Result<(), DurableOperationError> {
        sqlx::raw_sql("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(|e| DurableOperationError::backend(NAME, e))?;
        Ok(())
    }

    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        let row: Option<RecordRow> = sqlx::query_as(self.statements.read.clone())
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| DurableOperationError::backend(NAME, e))?;
        row.map(RecordRow::into_record).transpose()
    }

    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        check_cas_arguments(key, next)?;
        let query = match (expected, next) {
            (None, None) => return Ok(false),
            (None, Some(next)) => {
                bind_row!(
                    sqlx::query(self.statements.insert.clone()),
                    RecordRow::from_record(next)?
                )
            }
            (Some(fence), Some(next)) => bind_row!(
                sqlx::query(self.statements.update.clone()),
                RecordRow::from_record(next)?
            )
            .bind(fence.incarnation.clone())
            .bind(fence_revision(fence)?),
            (Some(fence), None) => sqlx::query(self.statements.delete.clone())
                .bind(key.to_owned())
                .bind(fence.incarnation.clone())
                .bind(fence_revision(fence)?),
        };
        let done = query
            .execute(&self.pool)
            .await
            .map_err(|e| DurableOperationError::backend(NAME, e))?;
        Ok(done.rows_affected() == 1)
    }

    async fn backfill_legacy_incarnation(
        &self,
        key: &str,
        incarnation: &str,
    ) -> Result<bool, DurableOperationError> {
        crate::record::validate_key(key)?;
        crate::record::validate_incarnation(incarnation)?;
        // One statement under SQLite's write lock: a concurrent backfill then finds it set.
        let done = sqlx::query(self.statements.backfill.clone())
            .bind(key.to_owned())
            .bind(incarnation.to_owned())
            .execute(&self.pool)
            .await
            .map_err(|e| DurableOperationError::backend(NAME, e))?;
        Ok(done.rows_affected() == 1)
    }

    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError> {
        check_page_limit(limit)?;
        let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        let query = match cursor {
            None => sqlx::query_as(self.statements.first_page.clone()).bind(fetch),
            Some(cursor) => sqlx::query_as(self.statements.next_page.clone())
                .bind(cursor.to_owned())
                .bind(fetch),
        };
        let rows: Vec<RecordRow> = query
            .fetch_all(&self.pool)
            .await
            .map_err(|e| DurableOperationError::backend(NAME, e))?;
        Ok(page_from_rows(decode_rows(rows), limit))
    }
}
