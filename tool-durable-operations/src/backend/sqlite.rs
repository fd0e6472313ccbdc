//! SQLite backend (feature `sqlite`): the embedded default for one machine.
//!
//! Writes are single statements (`INSERT … ON CONFLICT DO NOTHING`, revision-checked `UPDATE`
//! and `DELETE`), so SQLite's write lock makes every compare-and-set atomic across processes.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

use super::sql::{
    COLUMNS, SqlDialect, Statements, impl_sql_backend, index_name, quote_table_name, sql_str,
};
use crate::error::DurableOperationError;

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

/// The statements of `table` in SQLite's dialect (`?n` parameters).
fn statements(table: &str) -> Result<Statements, DurableOperationError> {
    let t = quote_table_name(table)?;
    Ok(Statements {
        schema: schema_sql(table)?,
        read: sql_str(format!(
            "SELECT {COLUMNS} FROM {t} WHERE operation_key = ?1"
        )),
        insert: sql_str(format!(
            "INSERT INTO {t} ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
             ON CONFLICT (operation_key) DO NOTHING"
        )),
        update: sql_str(format!(
            "UPDATE {t} SET fingerprint = ?2, owner_id = ?3, incarnation = ?4, revision = ?5, state = ?6, \
             result = ?7, result_present = ?8, reason = ?9, created_at = ?10, updated_at = ?11, \
             lease_expires_at = ?12, reconciled_by = ?13, reconciled_at = ?14 \
             WHERE operation_key = ?1 AND incarnation = ?15 AND revision = ?16"
        )),
        delete: sql_str(format!(
            "DELETE FROM {t} WHERE operation_key = ?1 AND incarnation = ?2 AND revision = ?3"
        )),
        backfill: sql_str(format!(
            "UPDATE {t} SET incarnation = ?2 WHERE operation_key = ?1 AND incarnation IS NULL"
        )),
        first_page: sql_str(format!(
            "SELECT {COLUMNS} FROM {t} ORDER BY operation_key ASC LIMIT ?1"
        )),
        next_page: sql_str(format!(
            "SELECT {COLUMNS} FROM {t} WHERE operation_key > ?1 ORDER BY operation_key ASC LIMIT ?2"
        )),
    })
}

/// Creates the folder `path` lives in, when it has one that is missing: SQLite creates the
/// file but not its folder, and says only "unable to open database file" (code 14).
async fn create_folder_of(path: &Path) -> Result<(), DurableOperationError> {
    let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    else {
        return Ok(());
    };
    tokio::fs::create_dir_all(folder).await.map_err(|error| {
        DurableOperationError::backend(
            NAME,
            format!(
                "cannot create the folder {} for the database: {error}",
                folder.display()
            ),
        )
    })
}

/// Operation records in one SQLite table.
#[derive(Debug, Clone)]
pub struct SqliteBackend {
    pool: SqlitePool,
    statements: Statements,
}

impl SqliteBackend {
    /// Opens (creating if missing, with its folder) the database file at `path` in WAL mode with
    /// [`SQLITE_BUSY_TIMEOUT`], and applies the schema of the default table. A folder that
    /// cannot be created is named in the error.
    ///
    /// An embedded file belongs to the application, so creating its table here is the
    /// convenient default; use [`SqliteBackend::new`] to manage the schema yourself.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, DurableOperationError> {
        let path = path.as_ref();
        create_folder_of(path).await?;
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
            statements: statements(table)?,
        })
    }

    /// The `CREATE TABLE` / `CREATE INDEX` statements of this backend's table.
    pub fn schema_sql(&self) -> &str {
        &self.statements.schema
    }

    /// Applies [`schema_sql`](Self::schema_sql) (idempotent).
    pub async fn apply_schema(&self) -> Result<(), DurableOperationError> {
        self.table().apply_schema().await
    }
}

impl SqlDialect for sqlx::Sqlite {
    const BACKEND: &'static str = NAME;

    fn rows_affected(done: &Self::QueryResult) -> u64 {
        done.rows_affected()
    }
}

impl_sql_backend!(SqliteBackend, sqlx::Sqlite);
