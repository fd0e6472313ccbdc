//! JSON Schemas compiled once and reused for every check: the registry's input and output
//! schemas, and the provider loop's check of streamed arguments, use this one validator.
//!
//! Compilation is offline: a `$ref` that points outside the schema (HTTP or file URI) is a
//! compile error, never a network or file-system fetch, whatever features other crates enable
//! on `jsonschema`.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::codes::TOOL_VALIDATION_FAILED;
use crate::error::ToolCallError;
use crate::validate::{MAX_ISSUES, ValidationIssue};

/// The error of a call whose arguments fail the tool's input schema: `TOOL_VALIDATION_FAILED`
/// with `details.issues` (pointers and masked messages, never argument values).
pub fn arguments_invalid(name: &str, issues: &[ValidationIssue]) -> ToolCallError {
    ToolCallError::new(
        TOOL_VALIDATION_FAILED,
        format!("Tool \"{name}\" arguments failed validation"),
    )
    .with_details(serde_json::json!({ "issues": issues }))
}

/// A schema compiled into a reusable validator.
#[derive(Clone)]
pub struct CompiledSchema {
    validator: Arc<jsonschema::Validator>,
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledSchema").finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Compiles `schema` without any external reference retrieval.
    pub fn compile(schema: &Value) -> Result<Self, String> {
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
    pub fn check(&self, instance: &Value) -> Result<(), Vec<ValidationIssue>> {
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
}
