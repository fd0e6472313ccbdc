//! PostgreSQL backend (feature `postgres`).
//!
//! Every compare-and-set is one parameterized statement under the default READ COMMITTED
//! isolation: `INSERT … ON CONFLICT DO NOTHING` to create, `UPDATE … WHERE incarnation = … AND
//! revision = …` to transition and `DELETE` with the same fence to prune. The schema is an
//! explicit, application-owned migration ([`POSTGRES_DURABLE_OPERATION_SCHEMA_SQL`],
//! [`postgres_migrator`] or [`postgres_schema_sql`] for another table); this backend never
//! creates or alters tables on its own.

use sqlx::postgres::PgPool;

use super::sql::{
    COLUMNS, SqlDialect, Statements, impl_sql_backend, index_name, quote_table_name, sql_str,
};
use crate::error::DurableOperationError;

/// How long [`PostgresBackend::connect`] and later pool checkouts wait for a connection.
pub const POSTGRES_ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Default table name.
pub const POSTGRES_DEFAULT_TABLE: &str = "context_action_durable_operations";

/// The migration for [`POSTGRES_DEFAULT_TABLE`] (also shipped as a sqlx migration file).
///
/// `operation_key` uses the `"C"` collation so keyset pages follow byte order, the order every
/// other backend uses.
pub const POSTGRES_DURABLE_OPERATION_SCHEMA_SQL: &str =
    include_str!("../../migrations/postgres/20261130000000_context_action_durable_operations.sql");

/// The sqlx migrator of the default table. Run it yourself (`postgres_migrator().run(&pool)`);
/// it records itself in `_sqlx_migrations` of the connection's `search_path` schema.
pub fn postgres_migrator() -> sqlx::migrate::Migrator {
    sqlx::migrate!("./migrations/postgres")
}

/// The migration for `table` (`ident` or `schema.ident`, validated before any SQL is built).
pub fn postgres_schema_sql(table: &str) -> Result<String, DurableOperationError> {
    let t = quote_table_name(table)?;
    let index = index_name(table);
    Ok(format!(
        "CREATE TABLE IF NOT EXISTS {t} (\n  operation_key text COLLATE \"C\" PRIMARY KEY,\n  fingerprint text NOT NULL,\n  owner_id text NOT NULL,\n  incarnation text NOT NULL,\n  revision integer NOT NULL,\n  state text NOT NULL CHECK (state IN ('pending','completed','failed','unknown')),\n  result jsonb,\n  result_present boolean NOT NULL DEFAULT false,\n  reason text,\n  created_at bigint NOT NULL,\n  updated_at bigint NOT NULL,\n  lease_expires_at bigint,\n  reconciled_by text,\n  reconciled_at bigint\n);\nCREATE INDEX IF NOT EXISTS {index} ON {t} (updated_at);\n"
    ))
}

/// The explicit migration of a `table` the reference created before fencing (no
/// `incarnation` column): adds the column, backfills every row with
/// `legacy:<md5 of key, revision and updated_at>` (the reference's formula, so every host
/// computes the same value) and sets it NOT NULL, in one transaction. Idempotent; run it
/// yourself, this backend never does.
pub fn postgres_legacy_incarnation_migration_sql(
    table: &str,
) -> Result<String, DurableOperationError> {
    let t = quote_table_name(table)?;
    Ok(format!(
        "BEGIN;
ALTER TABLE {t} ADD COLUMN IF NOT EXISTS incarnation text;
UPDATE {t} SET incarnation = 'legacy:' || md5(operation_key || ':' || revision::text || ':' || updated_at::text) WHERE incarnation IS NULL;
ALTER TABLE {t} ALTER COLUMN incarnation SET NOT NULL;
COMMIT;
"
    ))
}

const NAME: &str = "postgres";

/// Columns as read back: integer revision widened, jsonb as text (decoded by serde_json).
const SELECT_COLUMNS: &str = "operation_key, fingerprint, owner_id, incarnation, revision::bigint AS revision, \
     state, result::text AS result, result_present, reason, created_at, updated_at, lease_expires_at, \
     reconciled_by, reconciled_at";

/// The statements of `table` in PostgreSQL's dialect (`$n` parameters, casts to the column types).
fn statements(table: &str) -> Result<Statements, DurableOperationError> {
    let t = quote_table_name(table)?;
    Ok(Statements {
        schema: postgres_schema_sql(table)?,
        read: sql_str(format!(
            "SELECT {SELECT_COLUMNS} FROM {t} WHERE operation_key = $1"
        )),
        insert: sql_str(format!(
            "INSERT INTO {t} ({COLUMNS}) VALUES ($1, $2, $3, $4, $5::integer, $6, $7::jsonb, $8, $9, $10, $11, \
             $12, $13, $14) ON CONFLICT (operation_key) DO NOTHING"
        )),
        update: sql_str(format!(
            "UPDATE {t} SET fingerprint = $2, owner_id = $3, incarnation = $4, revision = $5::integer, \
             state = $6, result = $7::jsonb, result_present = $8, reason = $9, created_at = $10, \
             updated_at = $11, lease_expires_at = $12, reconciled_by = $13, reconciled_at = $14 \
             WHERE operation_key = $1 AND incarnation = $15 AND revision = $16"
        )),
        delete: sql_str(format!(
            "DELETE FROM {t} WHERE operation_key = $1 AND incarnation = $2 AND revision = $3"
        )),
        backfill: sql_str(format!(
            "UPDATE {t} SET incarnation = $2 WHERE operation_key = $1 AND incarnation IS NULL"
        )),
        first_page: sql_str(format!(
            "SELECT {SELECT_COLUMNS} FROM {t} ORDER BY operation_key COLLATE \"C\" ASC LIMIT $1"
        )),
        next_page: sql_str(format!(
            "SELECT {SELECT_COLUMNS} FROM {t} WHERE operation_key COLLATE \"C\" > $1 \
             ORDER BY operation_key COLLATE \"C\" ASC LIMIT $2"
        )),
    })
}

/// Operation records in one PostgreSQL table.
#[derive(Debug, Clone)]
pub struct PostgresBackend {
    pool: PgPool,
    statements: Statements,
}

impl PostgresBackend {
    /// Wraps a pool and a table (`ident` or `schema.ident`, validated). Does not touch the schema.
    pub fn new(pool: PgPool, table: &str) -> Result<Self, DurableOperationError> {
        Ok(Self {
            pool,
            statements: statements(table)?,
        })
    }

    /// Connects a pool of up to `max_connections` to `url` for `table`. Does not touch the schema.
    pub async fn connect(
        url: &str,
        table: &str,
        max_connections: u32,
    ) -> Result<Self, DurableOperationError> {
        let statements = statements(table)?;
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(max_connections.max(1))
            .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT)
            .connect(url)
            .await
            .map_err(|e| DurableOperationError::backend(NAME, e))?;
        Ok(Self { pool, statements })
    }

    /// The migration of this backend's table.
    pub fn schema_sql(&self) -> &str {
        &self.statements.schema
    }

    /// Applies [`schema_sql`](Self::schema_sql) when the application decides to (idempotent).
    pub async fn apply_schema(&self) -> Result<(), DurableOperationError> {
        self.table().apply_schema().await
    }
}

impl SqlDialect for sqlx::Postgres {
    const BACKEND: &'static str = NAME;

    fn rows_affected(done: &Self::QueryResult) -> u64 {
        done.rows_affected()
    }
}

impl_sql_backend!(PostgresBackend, sqlx::Postgres);
