//! [`ToolApprovalSnapshot`]: what a person sees when a call waits for approval. It never holds
//! raw argument values, only argument names and a bounded preview of explicitly safe ones.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::{ToolCallMode, ToolCallSource};
use crate::request::{TOOLS_CALL_METHOD, ToolCallId};

/// Description shown when a tool has none.
pub const DEFAULT_APPROVAL_DESCRIPTION: &str = "No description provided.";
/// Longest preview of one safe argument value, in characters.
pub const SAFE_ARGUMENT_PREVIEW_CHARS: usize = 120;
/// Separator between previewed arguments.
pub const SAFE_ARGUMENT_PREVIEW_SEPARATOR: &str = " · ";

/// A pending approval as shown to a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}
