//! Tool content blocks and their human-readable text form.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of a tool result: text, or a JSON value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ToolContent {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A JSON value (may be `null`, but the property must exist).
    Json {
        /// The value.
        json: Value,
    },
}

impl ToolContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// A JSON block.
    pub fn json(json: Value) -> Self {
        Self::Json { json }
    }
}

/// The text of one block: text as is, JSON serialized compactly.
pub fn stringify_tool_content_block(block: &ToolContent) -> String {
    match block {
        ToolContent::Text { text } => text.clone(),
        ToolContent::Json { json } => json.to_string(),
    }
}

/// All blocks as one human-readable string joined by newlines. Unlike a text-only mapper, it
/// never drops a JSON block.
///
/// ```
/// use serde_json::json;
/// use tool_protocol::{ToolContent, stringify_tool_content};
/// let blocks = [ToolContent::text("saved"), ToolContent::json(json!({"revision": 3}))];
/// assert_eq!(stringify_tool_content(&blocks), "saved\n{\"revision\":3}");
/// ```
pub fn stringify_tool_content(blocks: &[ToolContent]) -> String {
    blocks
        .iter()
        .map(stringify_tool_content_block)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_blocks_are_never_dropped() {
        let blocks = vec![
            ToolContent::json(Value::Null),
            ToolContent::text("a"),
            ToolContent::json(json!([1, "x"])),
        ];
        assert_eq!(stringify_tool_content(&blocks), "null\na\n[1,\"x\"]");
        assert_eq!(stringify_tool_content(&[]), "");
    }

    #[test]
    fn a_json_block_requires_its_json_property() {
        assert!(serde_json::from_value::<ToolContent>(json!({"type": "json"})).is_err());
        let null_block: ToolContent =
            serde_json::from_value(json!({"type": "json", "json": null})).unwrap();
        assert_eq!(null_block, ToolContent::json(Value::Null));
    }
}
