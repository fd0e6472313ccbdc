//! Schema issues in the registry's error details and logs; the compiled schemas themselves
//! are `tool_protocol::schema::CompiledSchema` (compiled once, at registry build time).

use serde_json::Value;
pub(crate) use tool_protocol::schema::CompiledSchema;
use tool_protocol::validate::ValidationIssue;

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
    use tool_protocol::validate::MAX_ISSUES;

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
