//! The backend operations both SQL dialects run the same way, written once over
//! [`sqlx::Database`]; each dialect only supplies its SQL texts and a few hooks.

use sqlx::{
    AssertSqlSafe, Database, Encode, Executor, FromRow, IntoArguments, Pool, SqlSafeStr, SqlStr,
    Type,
};

use super::{RecordRow, bind_row, decode_rows, fence_revision};
use crate::backend::{RecordPage, check_cas_arguments, check_page_limit, page_from_rows};
use crate::error::DurableOperationError;
use crate::record::{Fence, OperationRecord};

/// What the shared code needs from a dialect beyond [`sqlx::Database`].
pub(crate) trait SqlDialect: Database {
    /// Backend name used in errors (`sqlite`, `postgres`).
    const BACKEND: &'static str;

    /// Rows a statement changed: `sqlx` exposes it per dialect, not on [`Database`].
    fn rows_affected(done: &Self::QueryResult) -> u64;
}

/// Marks SQL built from a validated, quoted table name as safe to run.
pub(crate) fn sql_str(text: String) -> SqlStr {
    AssertSqlSafe(text).into_sql_str()
}

/// The SQL of one table in one dialect, built once when a backend is created.
///
/// `insert` and `update` bind the [`RecordRow`] columns in order (`update` then the fence's
/// incarnation and revision); `delete` binds key, incarnation and revision; `backfill` key and
/// incarnation; `first_page` the fetch size and `next_page` the cursor and fetch size.
#[derive(Debug, Clone)]
pub(crate) struct Statements {
    pub schema: String,
    pub read: SqlStr,
    pub insert: SqlStr,
    pub update: SqlStr,
    pub delete: SqlStr,
    pub backfill: SqlStr,
    pub first_page: SqlStr,
    pub next_page: SqlStr,
}

/// A backend's pool and statements, borrowed to run the shared operations.
pub(crate) struct SqlTable<'a, DB: Database> {
    pub pool: &'a Pool<DB>,
    pub statements: &'a Statements,
}

impl<DB: SqlDialect> SqlTable<'_, DB> {
    pub fn name(&self) -> &'static str {
        DB::BACKEND
    }
}

impl<DB> SqlTable<'_, DB>
where
    DB: SqlDialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: IntoArguments<DB>,
    RecordRow: for<'r> FromRow<'r, DB::Row>,
    String: for<'q> Encode<'q, DB> + Type<DB>,
    Option<String>: for<'q> Encode<'q, DB> + Type<DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    bool: for<'q> Encode<'q, DB> + Type<DB>,
{
    fn backend_error(error: sqlx::Error) -> DurableOperationError {
        DurableOperationError::backend(DB::BACKEND, error)
    }

    /// Runs the table's schema (idempotent).
    pub async fn apply_schema(&self) -> Result<(), DurableOperationError> {
        sqlx::raw_sql(AssertSqlSafe(self.statements.schema.clone()))
            .execute(self.pool)
            .await
            .map_err(Self::backend_error)?;
        Ok(())
    }

    pub async fn ping(&self) -> Result<(), DurableOperationError> {
        sqlx::raw_sql("SELECT 1")
            .execute(self.pool)
            .await
            .map_err(Self::backend_error)?;
        Ok(())
    }

    pub async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        let row: Option<RecordRow> = sqlx::query_as(self.statements.read.clone())
            .bind(key.to_owned())
            .fetch_optional(self.pool)
            .await
            .map_err(Self::backend_error)?;
        row.map(RecordRow::into_record).transpose()
    }

    /// One statement per case: `INSERT` to create, fenced `UPDATE` to transition, fenced
    /// `DELETE` to prune; it applied when it changed exactly one row.
    pub async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        check_cas_arguments(key, next)?;
        let statements = self.statements;
        let query = match (expected, next) {
            (None, None) => return Ok(false),
            (None, Some(next)) => bind_row!(
                sqlx::query(statements.insert.clone()),
                RecordRow::from_record(next)?
            ),
            (Some(fence), Some(next)) => bind_row!(
                sqlx::query(statements.update.clone()),
                RecordRow::from_record(next)?
            )
            .bind(fence.incarnation.clone())
            .bind(fence_revision(fence)?),
            (Some(fence), None) => sqlx::query(statements.delete.clone())
                .bind(key.to_owned())
                .bind(fence.incarnation.clone())
                .bind(fence_revision(fence)?),
        };
        let done = query
            .execute(self.pool)
            .await
            .map_err(Self::backend_error)?;
        Ok(DB::rows_affected(&done) == 1)
    }

    /// One statement: a concurrent backfill waits for the row (PostgreSQL) or the database
    /// (SQLite) write lock, then finds the incarnation set.
    pub async fn backfill_legacy_incarnation(
        &self,
        key: &str,
        incarnation: &str,
    ) -> Result<bool, DurableOperationError> {
        crate::record::validate_key(key)?;
        crate::record::validate_incarnation(incarnation)?;
        let done = sqlx::query(self.statements.backfill.clone())
            .bind(key.to_owned())
            .bind(incarnation.to_owned())
            .execute(self.pool)
            .await
            .map_err(Self::backend_error)?;
        Ok(DB::rows_affected(&done) == 1)
    }

    pub async fn list_page(
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
            .fetch_all(self.pool)
            .await
            .map_err(Self::backend_error)?;
        Ok(page_from_rows(decode_rows(rows), limit))
    }
}

/// Gives a SQL backend struct (fields `pool: Pool<$dialect>` and `statements: Statements`) the
/// accessors both dialects expose and implements
/// [`DurableOperationBackend`](crate::backend::DurableOperationBackend) with the shared
/// operations of [`SqlTable`].
macro_rules! impl_sql_backend {
    ($backend:ty, $dialect:ty) => {
        impl $backend {
            /// The pool.
            pub fn pool(&self) -> &sqlx::Pool<$dialect> {
                &self.pool
            }

            /// The `INSERT … ON CONFLICT DO NOTHING` that claims a new key: the 14 record
            /// columns as parameters, in the order of the table's columns. Exposed so audits
            /// and benchmarks can run exactly what the store runs.
            pub fn insert_sql(&self) -> &str {
                self.statements.insert.as_str()
            }

            /// The fenced `UPDATE` of every transition of an existing record: the 14 record
            /// columns, then the expected incarnation and revision. Exposed like
            /// [`insert_sql`](Self::insert_sql).
            pub fn update_sql(&self) -> &str {
                self.statements.update.as_str()
            }

            fn table(&self) -> $crate::backend::sql::SqlTable<'_, $dialect> {
                $crate::backend::sql::SqlTable {
                    pool: &self.pool,
                    statements: &self.statements,
                }
            }
        }

        #[async_trait::async_trait]
        impl $crate::backend::DurableOperationBackend for $backend {
            fn name(&self) -> &'static str {
                self.table().name()
            }

            async fn ping(&self) -> Result<(), $crate::error::DurableOperationError> {
                self.table().ping().await
            }

            async fn read(
                &self,
                key: &str,
            ) -> Result<Option<$crate::record::OperationRecord>, $crate::error::DurableOperationError> {
                self.table().read(key).await
            }

            async fn compare_and_set(
                &self,
                key: &str,
                expected: Option<&$crate::record::Fence>,
                next: Option<&$crate::record::OperationRecord>,
            ) -> Result<bool, $crate::error::DurableOperationError> {
                self.table().compare_and_set(key, expected, next).await
            }

            async fn backfill_legacy_incarnation(
                &self,
                key: &str,
                incarnation: &str,
            ) -> Result<bool, $crate::error::DurableOperationError> {
                self.table()
                    .backfill_legacy_incarnation(key, incarnation)
                    .await
            }

            async fn list_page(
                &self,
                cursor: Option<&str>,
                limit: usize,
            ) -> Result<$crate::backend::RecordPage, $crate::error::DurableOperationError> {
                self.table().list_page(cursor, limit).await
            }
        }
    };
}
pub(crate) use impl_sql_backend;
