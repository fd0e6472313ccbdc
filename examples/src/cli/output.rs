//! What `studio tools` prints on stdout.

use serde_json::Value;
use tool_protocol::{ToolCallResult, ToolDefinition, ToolListResult, stringify_tool_content};

/// Tag of a tool that runs without asking.
const READ_ONLY_TAG: &str = "[read-only]";
/// Tag of a tool the policy asks a person about.
const APPROVAL_TAG: &str = "[approval]";

/// One `name  [read-only|approval]  description` line per tool, names padded to one column.
pub(super) fn list_lines(tools: &[ToolDefinition]) -> String {
    let width = tools.iter().map(|tool| tool.name.len()).max().unwrap_or(0);
    let tag_width = READ_ONLY_TAG.len().max(APPROVAL_TAG.len());
    tools
        .iter()
        .map(|tool| {
            let tag = if tool.is_read_only() {
                READ_ONLY_TAG
            } else {
                APPROVAL_TAG
            };
            let description = tool
                .description
                .as_deref()
                .and_then(|text| text.lines().next())
                .unwrap_or("");
            format!("{:width$}  {tag:tag_width$}  {description}", tool.name)
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The canonical tools/list result, pretty-printed.
pub(super) fn list_json(tools: Vec<ToolDefinition>) -> String {
    let listing = ToolListResult {
        tools,
        next_cursor: None,
    };
    serde_json::to_string_pretty(&listing).unwrap_or_else(|_| "null".to_owned())
}

/// A successful result's structured content, pretty-printed (its text content when it has none).
pub(super) fn result_json(result: &ToolCallResult) -> String {
    match &result.structured_content {
        Some(value) => pretty(value),
        None => stringify_tool_content(&result.content),
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_protocol::ToolAnnotations;

    fn tool(name: &str, read_only: bool) -> ToolDefinition {
        let mut definition =
            ToolDefinition::new(name, "Does it.\nMore.", json!({"type": "object"}));
        definition.annotations = Some(ToolAnnotations {
            read_only_hint: Some(read_only),
            ..ToolAnnotations::default()
        });
        definition
    }

    #[test]
    fn lines_tag_read_only_and_approval_tools_in_aligned_columns() {
        let text = list_lines(&[tool("a.read", true), tool("a.write.long", false)]);
        assert_eq!(
            text,
            "a.read        [read-only]  Does it.\na.write.long  [approval]   Does it."
        );
    }

    #[test]
    fn results_print_structured_content_or_text() {
        let result = ToolCallResult::success(json!({"revision": 3}));
        assert_eq!(result_json(&result), "{\n  \"revision\": 3\n}");
        let text = ToolCallResult::success(json!("plain"));
        assert_eq!(
            result_json(&ToolCallResult {
                structured_content: None,
                ..text
            }),
            "plain"
        );
    }
}
