//! [`ToolApprovalSnapshot`]: what a person sees when a call waits for approval. It never holds
//! raw argument values, only argument names and a bounded preview of explicitly safe ones.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::context::{ToolCallMode, ToolCallSource};
use crate::request::{TOOLS_CALL_METHOD, ToolCallId};
use crate::validate::{
    Issues, ValidationIssue, as_object, non_blank_string, optional_string, optional_tool_call_id,
    pointer_child,
};

/// Description shown when a tool has none.
pub const DEFAULT_APPROVAL_DESCRIPTION: &str = "No description provided.";
/// Longest preview of one safe argument value, in characters.
pub const SAFE_ARGUMENT_PREVIEW_CHARS: usize = 120;
/// Separator between previewed arguments.
pub const SAFE_ARGUMENT_PREVIEW_SEPARATOR: &str = " · ";

/// A pending approval as shown to a person.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolApprovalSnapshot {
    /// Queue-assigned id, unique per queue.
    pub id: String,
    /// Always `tools/call`.
    pub method: String,
    /// Provider correlation id of the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<ToolCallId>,
    /// Session of the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Tool description.
    pub description: String,
    /// Origin of the call (`model` when unknown).
    pub source: ToolCallSource,
    /// Agent or direct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolCallMode>,
    /// Names of the arguments, in request order.
    pub argument_keys: Vec<String>,
    /// `name: value` of safe scalar arguments, joined by ` · `; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safe_argument_preview: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
}

/// The call facts an approval snapshot is built from.
#[derive(Debug, Clone, Default)]
pub struct ApprovalCall<'a> {
    /// Provider correlation id.
    pub tool_call_id: Option<ToolCallId>,
    /// Session of the call.
    pub session_id: Option<String>,
    /// Tool name.
    pub name: &'a str,
    /// Tool description.
    pub description: Option<&'a str>,
    /// Origin of the call.
    pub source: Option<ToolCallSource>,
    /// Agent or direct.
    pub mode: Option<ToolCallMode>,
    /// Raw arguments (only names and safe values are kept).
    pub arguments: Option<&'a Map<String, Value>>,
}

impl ToolApprovalSnapshot {
    /// Builds the snapshot for queue id `id`, keeping only argument names and a preview of
    /// arguments named in `safe_argument_names` whose values are strings, numbers or booleans.
    pub fn new(
        id: String,
        call: ApprovalCall<'_>,
        safe_argument_names: &[String],
        created_at: u64,
    ) -> Self {
        let empty = Map::new();
        let arguments = call.arguments.unwrap_or(&empty);
        Self {
            id,
            method: TOOLS_CALL_METHOD.to_owned(),
            tool_call_id: call.tool_call_id,
            session_id: call.session_id,
            name: call.name.to_owned(),
            description: call
                .description
                .unwrap_or(DEFAULT_APPROVAL_DESCRIPTION)
                .to_owned(),
            source: call.source.unwrap_or(ToolCallSource::Model),
            mode: call.mode,
            argument_keys: arguments.keys().cloned().collect(),
            safe_argument_preview: safe_argument_preview(arguments, safe_argument_names),
            created_at,
        }
    }
}

impl<'de> Deserialize<'de> for ToolApprovalSnapshot {
    /// Accepts exactly what [`parse_tool_approval_snapshot`] accepts.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::validate::deserialize_validated(deserializer, parse_tool_approval_snapshot)
    }
}

/// Validates an untrusted approval snapshot (CONTRACT 2.4 `isToolApprovalSnapshot`): non-blank
/// `id` and `name`, `method: "tools/call"`, string `description`, `source` one of `model`, `mcp`,
/// `iframe`, `local`, `argumentKeys` an array of non-blank strings, `createdAt` a non-negative
/// integer (milliseconds; the reference allows any finite number, a typed snapshot needs an
/// integer), and when present a valid `toolCallId`, string `sessionId`, `mode` of `agent` or
/// `direct` and string `safeArgumentPreview`.
pub fn parse_tool_approval_snapshot(
    value: &Value,
) -> Result<ToolApprovalSnapshot, Vec<ValidationIssue>> {
    let mut issues = Issues::default();
    let snapshot = approval_snapshot(value, &mut issues);
    issues.finish(snapshot)
}

fn approval_snapshot(value: &Value, issues: &mut Issues) -> Option<ToolApprovalSnapshot> {
    let map = as_object(value, "", issues)?;
    let id = non_blank_string(map, "id", "", issues);
    let name = non_blank_string(map, "name", "", issues);
    if map.get("method").and_then(Value::as_str) != Some(TOOLS_CALL_METHOD) {
        issues.push("/method", format!("must be \"{TOOLS_CALL_METHOD}\""));
    }
    let description = match map.get("description") {
        Some(Value::String(text)) => Some(text.clone()),
        _ => {
            issues.push("/description", "must be a string");
            None
        }
    };
    let source = enum_field(
        map.get("source"),
        "/source",
        issues,
        "must be one of model, mcp, iframe, local",
    );
    let mode = match map.get("mode") {
        None => Ok(None),
        present => enum_field(
            present,
            "/mode",
            issues,
            "must be agent or direct when present",
        )
        .map(Some)
        .ok_or(()),
    };
    let tool_call_id = optional_tool_call_id(map, "toolCallId", "", issues);
    let session_id = optional_string(map, "sessionId", "", issues);
    let safe_argument_preview = optional_string(map, "safeArgumentPreview", "", issues);
    let argument_keys = argument_keys(map.get("argumentKeys"), issues);
    let created_at = match map.get("createdAt").and_then(crate::event::safe_integer) {
        Some(created_at) => Some(created_at),
        None => {
            issues.push("/createdAt", "must be a non-negative integer");
            None
        }
    };
    Some(ToolApprovalSnapshot {
        id: id?,
        method: TOOLS_CALL_METHOD.to_owned(),
        tool_call_id: tool_call_id.ok()?,
        session_id: session_id.ok()?,
        name: name?,
        description: description?,
        source: source?,
        mode: mode.ok()?,
        argument_keys: argument_keys?,
        safe_argument_preview: safe_argument_preview.ok()?,
        created_at: created_at?,
    })
}

/// A unit enum (source or mode) from its wire name.
fn enum_field<T: serde::de::DeserializeOwned>(
    value: Option<&Value>,
    pointer: &str,
    issues: &mut Issues,
    message: &str,
) -> Option<T> {
    let parsed = value
        .filter(|value| value.is_string())
        .and_then(|value| T::deserialize(value).ok());
    if parsed.is_none() {
        issues.push(pointer, message);
    }
    parsed
}

fn argument_keys(value: Option<&Value>, issues: &mut Issues) -> Option<Vec<String>> {
    let Some(items) = value.and_then(Value::as_array) else {
        issues.push("/argumentKeys", "must be an array of non-blank strings");
        return None;
    };
    let mut keys = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        if issues.is_full() {
            return None;
        }
        match item.as_str() {
            Some(key) if !key.trim().is_empty() => keys.push(key.to_owned()),
            _ => issues.push(
                &pointer_child("/argumentKeys", &index.to_string()),
                "must be a non-blank string",
            ),
        }
    }
    (keys.len() == items.len()).then_some(keys)
}

/// `"<name>: <value>"` for each safe scalar argument (value cut to 120 characters), joined by
/// `" · "`; `None` when no argument qualifies.
///
/// ```
/// use serde_json::json;
/// use tool_protocol::approval::safe_argument_preview;
/// let args = json!({"path": "index.html", "source": "<secret>", "theme": "rose"});
/// let preview = safe_argument_preview(args.as_object().unwrap(), &["path".into(), "theme".into()]);
/// assert_eq!(preview.as_deref(), Some("path: index.html · theme: rose"));
/// ```
pub fn safe_argument_preview(
    arguments: &Map<String, Value>,
    safe_argument_names: &[String],
) -> Option<String> {
    let parts: Vec<String> = arguments
        .iter()
        .filter(|(name, _)| safe_argument_names.iter().any(|safe| safe == *name))
        .filter_map(|(name, value)| {
            scalar_text(value).map(|text| {
                format!(
                    "{name}: {}",
                    truncate_chars(&text, SAFE_ARGUMENT_PREVIEW_CHARS)
                )
            })
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(SAFE_ARGUMENT_PREVIEW_SEPARATOR))
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

fn truncate_chars(text: &str, max: usize) -> &str {
    text.char_indices()
        .nth(max)
        .map_or(text, |(end, _)| &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snapshot_keeps_names_and_safe_scalars_only() {
        let args = json!({"path": "a.html", "source": "SECRET", "count": 2, "nested": {"path": "x"}, "flag": true});
        let call = ApprovalCall {
            name: "workspace.writeFile",
            arguments: args.as_object(),
            mode: Some(ToolCallMode::Agent),
            ..ApprovalCall::default()
        };
        let safe = vec![
            "path".to_owned(),
            "count".to_owned(),
            "nested".to_owned(),
            "flag".to_owned(),
        ];
        let snapshot = ToolApprovalSnapshot::new("approval-0".into(), call, &safe, 5);
        assert_eq!(
            snapshot.argument_keys,
            ["path", "source", "count", "nested", "flag"]
        );
        assert_eq!(
            snapshot.safe_argument_preview.as_deref(),
            Some("path: a.html · count: 2 · flag: true")
        );
        assert_eq!(snapshot.description, DEFAULT_APPROVAL_DESCRIPTION);
        assert_eq!(snapshot.source, ToolCallSource::Model);
        assert!(!serde_json::to_string(&snapshot).unwrap().contains("SECRET"));
    }

    #[test]
    fn preview_values_are_cut_at_120_characters() {
        let long = "é".repeat(121);
        let args = json!({"path": long});
        let preview = safe_argument_preview(args.as_object().unwrap(), &["path".into()]).unwrap();
        assert_eq!(preview.chars().count(), "path: ".len() + 120);
        let exact = json!({"path": "x".repeat(120)});
        assert_eq!(
            safe_argument_preview(exact.as_object().unwrap(), &["path".into()])
                .unwrap()
                .len(),
            126
        );
        assert_eq!(safe_argument_preview(&Map::new(), &["path".into()]), None);
    }

    fn valid() -> Value {
        json!({"id": "approval-0", "method": "tools/call", "name": "workspace.writeFile", "description": "Write", "source": "model", "argumentKeys": ["path"], "createdAt": 5})
    }

    fn pointers_with(key: &str, value: Value) -> Vec<String> {
        let mut snapshot = valid();
        snapshot[key] = value;
        parse_tool_approval_snapshot(&snapshot)
            .unwrap_err()
            .into_iter()
            .map(|issue| issue.pointer)
            .collect()
    }

    #[test]
    fn guard_accepts_built_snapshots_and_round_trips() {
        let args = json!({"path": "a.html"});
        let call = ApprovalCall {
            tool_call_id: Some(3u64.into()),
            session_id: Some("s".into()),
            name: "workspace.writeFile",
            mode: Some(ToolCallMode::Direct),
            arguments: args.as_object(),
            ..ApprovalCall::default()
        };
        let snapshot = ToolApprovalSnapshot::new("x-0".into(), call, &["path".into()], 9);
        let wire = serde_json::to_value(&snapshot).unwrap();
        assert_eq!(parse_tool_approval_snapshot(&wire).unwrap(), snapshot);
        assert_eq!(
            serde_json::from_value::<ToolApprovalSnapshot>(wire).unwrap(),
            snapshot
        );
        assert!(parse_tool_approval_snapshot(&valid()).is_ok());
    }

    #[test]
    fn guard_rejects_each_rule() {
        assert_eq!(pointers_with("id", json!(" ")), ["/id"]);
        assert_eq!(pointers_with("name", json!("")), ["/name"]);
        assert_eq!(pointers_with("method", json!("tools/list")), ["/method"]);
        assert_eq!(pointers_with("description", json!(null)), ["/description"]);
        assert_eq!(pointers_with("source", json!("browser")), ["/source"]);
        assert_eq!(pointers_with("source", json!(1)), ["/source"]);
        assert_eq!(pointers_with("mode", json!("auto")), ["/mode"]);
        assert_eq!(pointers_with("toolCallId", json!(null)), ["/toolCallId"]);
        assert_eq!(pointers_with("sessionId", json!(1)), ["/sessionId"]);
        assert_eq!(
            pointers_with("safeArgumentPreview", json!([])),
            ["/safeArgumentPreview"]
        );
        assert_eq!(
            pointers_with("argumentKeys", json!("path")),
            ["/argumentKeys"]
        );
        assert_eq!(
            pointers_with("argumentKeys", json!(["ok", " ", 1])),
            ["/argumentKeys/1", "/argumentKeys/2"]
        );
        assert_eq!(pointers_with("createdAt", json!(-1)), ["/createdAt"]);
        assert_eq!(pointers_with("createdAt", json!("5")), ["/createdAt"]);
        assert_eq!(
            parse_tool_approval_snapshot(&json!(null)).unwrap_err()[0].pointer,
            ""
        );
        let mut no_created = valid();
        no_created.as_object_mut().unwrap().remove("createdAt");
        assert!(parse_tool_approval_snapshot(&no_created).is_err());
    }
}
