//! The durable operation record, its fence and the bounds every stored field obeys.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::DurableOperationError;
pub use crate::state::OperationState;

/// Maximum UTF-8 bytes of an operation key.
pub const MAX_OPERATION_KEY_BYTES: usize = 4_096;
/// Maximum UTF-8 bytes of a request fingerprint.
pub const MAX_FINGERPRINT_BYTES: usize = 1_024;
/// Maximum UTF-8 bytes of an owner or reconciler id.
pub const MAX_OWNER_ID_BYTES: usize = 512;
/// Maximum characters of an incarnation (reference: at most 256 visible characters, no NUL).
pub const MAX_INCARNATION_CHARS: usize = 256;
/// Maximum UTF-8 bytes of a failure / unknown reason.
pub const MAX_REASON_BYTES: usize = 2_048;
/// Maximum compact-JSON bytes of a stored result or diagnostic.
pub const MAX_STORED_RESULT_BYTES: usize = 1_048_576;
/// Why a record written before fencing (no `incarnation`) is corrupt until it is backfilled.
pub const MISSING_INCARNATION: &str =
    "record has no incarnation (written before fencing); backfill it before use";

/// Optimistic-concurrency token: a record is only written when both parts still match.
///
/// The incarnation changes when a key is pruned and re-created, so a fence from before the
/// prune is rejected even if the new record reaches the same revision (ABA).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fence {
    /// Opaque identity of one lifetime of the key.
    pub incarnation: String,
    /// Write counter, starting at 1.
    pub revision: u64,
}

/// One durable operation, as every backend stores it (camelCase JSON on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationRecord {
    /// Operation key (the primary key).
    pub key: String,
    /// Fingerprint of the request that created the record.
    pub fingerprint: String,
    /// Current (or last) owner.
    pub owner_id: String,
    /// Opaque identity of this lifetime of the key.
    pub incarnation: String,
    /// Write counter, `>= 1`, +1 on every write.
    pub revision: u64,
    /// Lifecycle state.
    pub state: OperationState,
    /// Stored result or diagnostic. `Some(Value::Null)` is an explicit JSON `null`, kept apart
    /// from `None` (no result).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub result: Option<Value>,
    /// Failure / unknown / reconciliation reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Creation time, ms since the Unix epoch.
    pub created_at: u64,
    /// Last write time, ms since the Unix epoch.
    pub updated_at: u64,
    /// Lease deadline of a pending record; `None` means it is never treated as abandoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_expires_at: Option<u64>,
    /// Who reconciled an unknown record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled_by: Option<String>,
    /// When an unknown record was reconciled, ms since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled_at: Option<u64>,
}

/// A present JSON field (even `null`) deserializes to `Some`.
fn deserialize_present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl OperationRecord {
    /// The record's current fence.
    pub fn fence(&self) -> Fence {
        Fence {
            incarnation: self.incarnation.clone(),
            revision: self.revision,
        }
    }

    /// Whether `fence` matches this record exactly.
    pub fn matches(&self, fence: &Fence) -> bool {
        self.incarnation == fence.incarnation && self.revision == fence.revision
    }

    /// Whether a pending record's lease deadline has passed at `now_ms`.
    pub fn lease_expired(&self, now_ms: u64) -> bool {
        self.lease_expires_at
            .is_some_and(|deadline| deadline <= now_ms)
    }

    /// Encodes the record as compact JSON (the Redis value and the debug form).
    pub fn to_json(&self) -> Result<String, DurableOperationError> {
        serde_json::to_string(self).map_err(|e| DurableOperationError::CorruptRecord(e.to_string()))
    }

    /// Decodes and validates a record from JSON. A record without `incarnation` is reported
    /// as [`MISSING_INCARNATION`], the same error every backend gives for it.
    pub fn from_json(text: &str) -> Result<Self, DurableOperationError> {
        let invalid = |e: serde_json::Error| {
            DurableOperationError::CorruptRecord(format!("invalid JSON: {e}"))
        };
        let value: Value = serde_json::from_str(text).map_err(invalid)?;
        if value.is_object() && value.get("incarnation").is_none() {
            return Err(missing_incarnation());
        }
        let record: Self = serde_json::from_value(value).map_err(invalid)?;
        record.check_invariants()?;
        Ok(record)
    }

    /// Rejects records a backend must never hold (revision 0, bad incarnation, blank key).
    pub fn check_invariants(&self) -> Result<(), DurableOperationError> {
        let corrupt = |m: &str| Err(DurableOperationError::CorruptRecord(m.to_owned()));
        if self.key.is_empty() {
            return corrupt("record key is empty");
        }
        if self.revision == 0 {
            return corrupt("record revision must be at least 1");
        }
        if validate_incarnation(&self.incarnation).is_err() {
            return corrupt("record incarnation is invalid");
        }
        Ok(())
    }
}

/// The corrupt-record error of a record without an incarnation.
pub(crate) fn missing_incarnation() -> DurableOperationError {
    DurableOperationError::CorruptRecord(MISSING_INCARNATION.to_owned())
}

/// Why U+0000 is refused everywhere: PostgreSQL `text` and `jsonb` cannot store it, and every
/// backend must accept exactly the same records.
const NUL_MESSAGE: &str = "must not contain U+0000 (not storable by every backend)";

/// Validates a key, fingerprint or id: non-blank and at most `max_bytes` UTF-8 bytes.
pub(crate) fn validate_text(
    field: &'static str,
    value: &str,
    max_bytes: usize,
) -> Result<(), DurableOperationError> {
    if value.trim().is_empty() {
        return Err(DurableOperationError::invalid(
            field,
            "must be a non-empty string",
        ));
    }
    if value.contains('\0') {
        return Err(DurableOperationError::invalid(field, NUL_MESSAGE));
    }
    if value.len() > max_bytes {
        return Err(DurableOperationError::invalid(
            field,
            format!("is {} bytes, over the {max_bytes}-byte limit", value.len()),
        ));
    }
    Ok(())
}

/// Validates an operation key.
pub(crate) fn validate_key(key: &str) -> Result<(), DurableOperationError> {
    validate_text("key", key, MAX_OPERATION_KEY_BYTES)
}

/// Validates an incarnation: non-blank, at most [`MAX_INCARNATION_CHARS`] chars, no NUL.
pub fn validate_incarnation(value: &str) -> Result<(), DurableOperationError> {
    if value.trim().is_empty() {
        return Err(DurableOperationError::InvalidIncarnation(
            "must be non-empty".into(),
        ));
    }
    if value.chars().count() > MAX_INCARNATION_CHARS {
        return Err(DurableOperationError::InvalidIncarnation(format!(
            "longer than {MAX_INCARNATION_CHARS} characters"
        )));
    }
    if value.contains('\0') {
        return Err(DurableOperationError::InvalidIncarnation(
            "contains NUL".into(),
        ));
    }
    Ok(())
}

/// Validates a reason: non-blank and at most [`MAX_REASON_BYTES`].
pub(crate) fn validate_reason(reason: &str) -> Result<(), DurableOperationError> {
    if reason.trim().is_empty() {
        return Err(DurableOperationError::ReasonRequired);
    }
    if reason.contains('\0') {
        return Err(DurableOperationError::invalid("reason", NUL_MESSAGE));
    }
    if reason.len() > MAX_REASON_BYTES {
        return Err(DurableOperationError::PayloadTooLarge {
            field: "reason",
            actual: reason.len(),
            limit: MAX_REASON_BYTES,
        });
    }
    Ok(())
}

/// Validates that a result serializes to at most [`MAX_STORED_RESULT_BYTES`].
pub(crate) fn validate_result(result: Option<&Value>) -> Result<(), DurableOperationError> {
    let Some(value) = result else { return Ok(()) };
    if contains_nul(value) {
        return Err(DurableOperationError::invalid("result", NUL_MESSAGE));
    }
    let actual = serialized_len(value);
    if actual > MAX_STORED_RESULT_BYTES {
        return Err(DurableOperationError::PayloadTooLarge {
            field: "result",
            actual,
            limit: MAX_STORED_RESULT_BYTES,
        });
    }
    Ok(())
}

/// Whether any string or object key in `value` contains U+0000.
fn contains_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(contains_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || contains_nul(v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Compact-JSON byte length without allocating the string.
fn serialized_len(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a Value into an infallible sink cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(result: Option<Value>) -> OperationRecord {
        OperationRecord {
            key: "k".into(),
            fingerprint: "f".into(),
            owner_id: "o".into(),
            incarnation: "i".into(),
            revision: 1,
            state: OperationState::Completed,
            result,
            reason: None,
            created_at: 1,
            updated_at: 1,
            lease_expires_at: None,
            reconciled_by: None,
            reconciled_at: None,
        }
    }

    #[test]
    fn explicit_null_round_trips_apart_from_absent() {
        let with_null = record(Some(Value::Null));
        let text = with_null.to_json().unwrap();
        assert!(text.contains("\"result\":null"));
        assert_eq!(
            OperationRecord::from_json(&text).unwrap().result,
            Some(Value::Null)
        );
        let absent = record(None).to_json().unwrap();
        assert!(!absent.contains("result"));
        assert_eq!(OperationRecord::from_json(&absent).unwrap().result, None);
    }

    #[test]
    fn result_bound_is_exact() {
        // A JSON string of n chars serializes to n + 2 bytes.
        let at_limit = json!("x".repeat(MAX_STORED_RESULT_BYTES - 2));
        assert!(validate_result(Some(&at_limit)).is_ok());
        let over = json!("x".repeat(MAX_STORED_RESULT_BYTES - 1));
        let err = validate_result(Some(&over)).unwrap_err();
        assert_eq!(err.code(), "DURABLE_OPERATION_PAYLOAD_TOO_LARGE");
    }

    #[test]
    fn reason_bound_is_exact() {
        assert!(validate_reason(&"r".repeat(MAX_REASON_BYTES)).is_ok());
        let err = validate_reason(&"r".repeat(MAX_REASON_BYTES + 1)).unwrap_err();
        assert_eq!(err.code(), "DURABLE_OPERATION_PAYLOAD_TOO_LARGE");
        assert_eq!(
            validate_reason("  ").unwrap_err(),
            DurableOperationError::ReasonRequired
        );
    }

    #[test]
    fn text_and_incarnation_bounds_are_exact() {
        assert!(validate_key(&"k".repeat(MAX_OPERATION_KEY_BYTES)).is_ok());
        assert!(validate_key(&"k".repeat(MAX_OPERATION_KEY_BYTES + 1)).is_err());
        assert!(validate_key(" ").is_err());
        assert!(validate_key("a\0").is_err());
        assert!(validate_reason("a\0").is_err());
        assert!(validate_result(Some(&json!({"k": ["ok", "a\u{0}"]}))).is_err());
        assert!(validate_result(Some(&json!({"k\u{0}": 1}))).is_err());
        assert!(validate_result(Some(&json!({"k": ["ok", "\\u0000"]}))).is_ok());
        assert!(validate_incarnation(&"é".repeat(MAX_INCARNATION_CHARS)).is_ok());
        assert!(validate_incarnation(&"é".repeat(MAX_INCARNATION_CHARS + 1)).is_err());
        assert!(validate_incarnation("a\0b").is_err());
    }

    #[test]
    fn corrupt_records_are_rejected() {
        let mut bad = record(None);
        bad.revision = 0;
        let text = serde_json::to_string(&bad).unwrap();
        assert_eq!(
            OperationRecord::from_json(&text).unwrap_err().code(),
            "DURABLE_OPERATION_CORRUPT_RECORD"
        );
        assert!(OperationRecord::from_json("[]").is_err());
    }
}
