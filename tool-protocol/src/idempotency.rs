//! Idempotency helpers: key validation, session-scoped operation keys and argument fingerprints.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Longest accepted idempotency key, in characters.
pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 256;

/// Session used in operation keys when the call context has none.
pub const DEFAULT_SESSION_ID: &str = "default";

/// Whether `key` is non-blank and at most [`MAX_IDEMPOTENCY_KEY_CHARS`] characters.
pub fn is_valid_idempotency_key(key: &str) -> bool {
    !key.trim().is_empty() && key.chars().count() <= MAX_IDEMPOTENCY_KEY_CHARS
}

/// The key is blank or too long.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Idempotency key must be a non-empty string of at most 256 characters.")]
pub struct InvalidIdempotencyKey;

/// The session-scoped operation key `["<session or default>","<tool>","<key>"]` (a JSON array).
///
/// ```
/// use tool_protocol::idempotency::tool_operation_key;
/// assert_eq!(tool_operation_key("pay", "k1", None).unwrap(), r#"["default","pay","k1"]"#);
/// ```
pub fn tool_operation_key(
    tool_name: &str,
    key: &str,
    session_id: Option<&str>,
) -> Result<String, InvalidIdempotencyKey> {
    if !is_valid_idempotency_key(key) {
        return Err(InvalidIdempotencyKey);
    }
    let parts = [session_id.unwrap_or(DEFAULT_SESSION_ID), tool_name, key];
    Ok(serde_json::to_string(&parts).expect("an array of strings always serializes"))
}

/// Canonical JSON: object keys sorted by code point at every depth, no whitespace.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Fingerprint of a call's arguments: `sha256:<hex>` over `<tool>:<canonical JSON>`, so key
/// order never changes it and any value change does.
pub fn tool_call_fingerprint(tool_name: &str, arguments: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tool_name.as_bytes());
    hasher.update(b":");
    hasher.update(canonical_json(arguments).as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_non_blank_and_bounded() {
        assert!(is_valid_idempotency_key("k"));
        assert!(!is_valid_idempotency_key("   "));
        assert!(!is_valid_idempotency_key(""));
        assert!(is_valid_idempotency_key(&"é".repeat(256)));
        assert!(!is_valid_idempotency_key(&"é".repeat(257)));
    }

    #[test]
    fn operation_keys_are_session_scoped_json() {
        assert_eq!(
            tool_operation_key("t", "k", Some("s\"1")).unwrap(),
            r#"["s\"1","t","k"]"#
        );
        assert_eq!(
            tool_operation_key("t", " ", None),
            Err(InvalidIdempotencyKey)
        );
    }

    #[test]
    fn fingerprints_ignore_key_order_only() {
        let a = tool_call_fingerprint("t", &json!({"b": 1, "a": {"y": [1, 2], "x": null}}));
        let b = tool_call_fingerprint("t", &json!({"a": {"x": null, "y": [1, 2]}, "b": 1}));
        assert_eq!(a, b);
        assert!(a.starts_with("sha256:") && a.len() == 7 + 64);
        assert_ne!(
            a,
            tool_call_fingerprint("u", &json!({"b": 1, "a": {"y": [1, 2], "x": null}}))
        );
        assert_ne!(
            a,
            tool_call_fingerprint("t", &json!({"b": 1, "a": {"y": [2, 1], "x": null}}))
        );
        assert_eq!(
            canonical_json(&json!({"é": "\n", "a": 1.5})),
            r#"{"a":1.5,"é":"\n"}"#
        );
    }
}
