//! JSON Schemas compiled once at registry build time and reused for every call.
//!
//! Compilation is offline: a `$ref` that points outside the schema (HTTP or file URI) is a
//! build error, never a network or file-system fetch, whatever features other crates enable
//! on `jsonschema`.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use tool_protocol::validate::{MAX_ISSUES, ValidationIssue};

/// A schema compiled into a reusable validator.
#[derive(Clone)]
pub(crate) struct CompiledSchema {
    validator: Arc<jsonschema::Validator>,
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledSchema").finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Compiles `schema` without any external reference retrieval.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::options()
            .offline()
            .build(schema)
            .map(|validator| Self {
                validator: Arc::new(validator),
            })
            .map_err(|error| error.to_string())
    }

    /// `Ok` when `instance` is valid, else at most `MAX_ISSUES` issues (JSON Pointer and a
    /// message that masks the offending value, so argument values never reach errors or traces).
    pub(crate) fn check(&self, instance: &Value) -> Result<(), Vec<ValidationIssue>> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let issues = self
            .validator
            .iter_errors(instance)
            .take(MAX_ISSUES)
            .map(|error| {
                ValidationIssue::new(error.instance_path().as_str(), error.masked().to_string())
            })
            .collect();
        Err(issues)
    }
}

/// The issues as a JSON array for `details.issues`.
pub(crate) fn issues_json(issues: &[ValidationIssue]) -> Value {
    serde_json::to_value(issues).unwrap_or(Value::Array(Vec::new()))
}

/// The issues joined by `"; "` (the warn-mode log form).
pub(crate) fn join_issues(issues: &[ValidationIssue]) -> String {
    issues
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compiles_once_and_reports_masked_issues() {
        let schema = CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
            "required": ["path"]
        }))
        .unwrap();
        assert!(schema.check(&json!({"path": "a"})).is_ok());
        let issues = schema
            .check(&json!({"path": "SECRET-VALUE", "count": 0, "extra": 1}))
            .unwrap_err();
        let issues2 = schema.check(&json!({"path": 7})).unwrap_err();
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].pointer, "/count");
        assert!(!issues[0].message.contains("SECRET"));
        assert_eq!(issues2[0].pointer, "/path");
    }

    #[test]
    fn external_refs_are_compile_errors_not_fetches() {
        for reference in ["https://example.com/schema.json", "file:///etc/passwd"] {
            let error = CompiledSchema::compile(&json!({"$ref": reference})).unwrap_err();
            assert!(!error.is_empty());
        }
        assert!(CompiledSchema::compile(&json!({"type": 12})).is_err());
    }

    #[test]
    fn issue_lists_are_bounded() {
        let properties: serde_json::Map<String, Value> = (0..70)
            .map(|index| (format!("p{index}"), json!({"type": "string"})))
            .collect();
        let schema =
            CompiledSchema::compile(&json!({"type": "object", "properties": properties})).unwrap();
        let instance: serde_json::Map<String, Value> = (0..70)
            .map(|index| (format!("p{index}"), json!(index)))
            .collect();
        assert_eq!(
            schema.check(&Value::Object(instance)).unwrap_err().len(),
            MAX_ISSUES
        );
        let two = [
            ValidationIssue::new("", "m"),
            ValidationIssue::new("/a", "n"),
        ];
        assert_eq!(join_issues(&two), "(root): m; /a: n");
    }
}
