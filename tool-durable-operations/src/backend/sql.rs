//! What the SQLite and PostgreSQL backends share: table-name validation, the row mapping and
//! (in `table`) the backend operations themselves; each backend keeps only its dialect's SQL.

use crate::error::DurableOperationError;
use crate::record::{Fence, OperationRecord, OperationState, missing_incarnation};

mod table;

pub(crate) use table::{SqlDialect, SqlTable, Statements, impl_sql_backend, sql_str};

/// Validates `ident` or `schema.ident` (`^[A-Za-z_][A-Za-z0-9_]*$` parts) and returns it
/// double-quoted, ready to splice into SQL.
pub fn quote_table_name(table: &str) -> Result<String, DurableOperationError> {
    let parts: Vec<&str> = table.split('.').collect();
    let valid_part = |part: &str| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && part.len() <= 63
    };
    if parts.len() > 2 || !parts.iter().all(|p| valid_part(p)) {
        return Err(DurableOperationError::invalid(
            "table_name",
            "must be `ident` or `schema.ident` with parts matching ^[A-Za-z_][A-Za-z0-9_]*$ (at most 63 bytes)",
        ));
    }
    Ok(parts
        .iter()
        .map(|p| format!("\"{p}\""))
        .collect::<Vec<_>>()
        .join("."))
}

/// The name of the `updated_at` index of a table (`.` replaced by `_`).
pub(crate) fn index_name(table: &str) -> String {
    format!("\"{}_updated_at_idx\"", table.replace('.', "_"))
}

/// Column list in binding order; both dialects bind [`RecordRow`] fields in this order.
pub(crate) const COLUMNS: &str = "operation_key, fingerprint, owner_id, incarnation, revision, state, result, \
     result_present, reason, created_at, updated_at, lease_expires_at, reconciled_by, reconciled_at";

/// One table row, with SQL-friendly types.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct RecordRow {
    pub operation_key: String,
    pub fingerprint: String,
    pub owner_id: String,
    /// `NULL` only in a table the reference created before fencing (not yet backfilled).
    pub incarnation: Option<String>,
    pub revision: i64,
    pub state: String,
    pub result: Option<String>,
    pub result_present: bool,
    pub reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub lease_expires_at: Option<i64>,
    pub reconciled_by: Option<String>,
    pub reconciled_at: Option<i64>,
}

fn to_i64(field: &str, value: u64) -> Result<i64, DurableOperationError> {
    i64::try_from(value)
        .map_err(|_| DurableOperationError::invalid("record", format!("{field} exceeds i64")))
}

fn to_u64(field: &str, value: i64) -> Result<u64, DurableOperationError> {
    u64::try_from(value)
        .map_err(|_| DurableOperationError::CorruptRecord(format!("{field} is negative")))
}

impl RecordRow {
    /// Encodes a record; `result_present` keeps an explicit JSON `null` apart from no result.
    pub fn from_record(record: &OperationRecord) -> Result<Self, DurableOperationError> {
        let result = record
            .result
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| DurableOperationError::invalid("result", e.to_string()))?;
        Ok(Self {
            operation_key: record.key.clone(),
            fingerprint: record.fingerprint.clone(),
            owner_id: record.owner_id.clone(),
            incarnation: Some(record.incarnation.clone()),
            revision: to_i64("revision", record.revision)?,
            state: record.state.as_str().to_owned(),
            result_present: result.is_some(),
            result,
            reason: record.reason.clone(),
            created_at: to_i64("created_at", record.created_at)?,
            updated_at: to_i64("updated_at", record.updated_at)?,
            lease_expires_at: record
                .lease_expires_at
                .map(|v| to_i64("lease_expires_at", v))
                .transpose()?,
            reconciled_by: record.reconciled_by.clone(),
            reconciled_at: record
                .reconciled_at
                .map(|v| to_i64("reconciled_at", v))
                .transpose()?,
        })
    }

    /// Decodes and validates a row.
    pub fn into_record(self) -> Result<OperationRecord, DurableOperationError> {
        let state = OperationState::parse(&self.state).ok_or_else(|| {
            DurableOperationError::CorruptRecord(format!("unknown state {:?}", self.state))
        })?;
        let result = match (self.result_present, self.result) {
            (false, _) => None,
            (true, None) => Some(serde_json::Value::Null),
            (true, Some(text)) => Some(serde_json::from_str(&text).map_err(|e| {
                DurableOperationError::CorruptRecord(format!("result is not JSON: {e}"))
            })?),
        };
        let record = OperationRecord {
            key: self.operation_key,
            fingerprint: self.fingerprint,
            owner_id: self.owner_id,
            incarnation: self.incarnation.ok_or_else(missing_incarnation)?,
            revision: to_u64("revision", self.revision)?,
            state,
            result,
            reason: self.reason,
            created_at: to_u64("created_at", self.created_at)?,
            updated_at: to_u64("updated_at", self.updated_at)?,
            lease_expires_at: self
                .lease_expires_at
                .map(|v| to_u64("lease_expires_at", v))
                .transpose()?,
            reconciled_by: self.reconciled_by,
            reconciled_at: self
                .reconciled_at
                .map(|v| to_u64("reconciled_at", v))
                .transpose()?,
        };
        record.check_invariants()?;
        Ok(record)
    }
}

/// Decodes fetched rows, keeping each row's key so a corrupt one is reported, not fatal.
pub(crate) fn decode_rows(rows: Vec<RecordRow>) -> Vec<super::DecodedRow> {
    rows.into_iter()
        .map(|row| (row.operation_key.clone(), row.into_record()))
        .collect()
}

/// A fence revision as a SQL integer; revisions beyond `i64` can never match a stored row.
pub(crate) fn fence_revision(fence: &Fence) -> Result<i64, DurableOperationError> {
    i64::try_from(fence.revision)
        .map_err(|_| DurableOperationError::invalid("fence", "revision exceeds i64"))
}

/// Binds every [`RecordRow`] field, in [`COLUMNS`] order, to a sqlx query.
macro_rules! bind_row {
    ($query:expr, $row:expr) => {{
        let row = $row;
        $query
            .bind(row.operation_key)
            .bind(row.fingerprint)
            .bind(row.owner_id)
            .bind(row.incarnation)
            .bind(row.revision)
            .bind(row.state)
            .bind(row.result)
            .bind(row.result_present)
            .bind(row.reason)
            .bind(row.created_at)
            .bind(row.updated_at)
            .bind(row.lease_expires_at)
            .bind(row.reconciled_by)
            .bind(row.reconciled_at)
    }};
}
pub(crate) use bind_row;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_are_validated_before_any_sql() {
        assert_eq!(quote_table_name("ops").unwrap(), "\"ops\"");
        assert_eq!(quote_table_name("s_1.ops").unwrap(), "\"s_1\".\"ops\"");
        assert_eq!(quote_table_name(&"a".repeat(63)).unwrap().len(), 65);
        for bad in [
            "",
            "1ops",
            "a.b.c",
            "ops;drop",
            "o\"ps",
            "a.",
            &"a".repeat(64),
        ] {
            let err = quote_table_name(bad).unwrap_err();
            assert_eq!(err.code(), "DURABLE_OPERATION_INVALID_INPUT", "{bad}");
        }
        assert_eq!(index_name("s.ops"), "\"s_ops_updated_at_idx\"");
    }
}
