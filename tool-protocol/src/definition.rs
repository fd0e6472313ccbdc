//! [`ToolDefinition`] in MCP shape, with its annotations.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Behaviour hints of a tool. Metadata only: authorization is enforced by policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating the call with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches beyond a closed domain (network, external systems).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// The tool returns content from untrusted sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted_content_hint: Option<bool>,
}

/// A tool definition in MCP shape: `{ name, title?, description?, inputSchema, outputSchema?, annotations? }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// Canonical tool name (may contain dots, e.g. `workspace.readFile`).
    pub name: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for models and people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments object.
    pub input_schema: Value,
    /// JSON Schema of the structured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

impl ToolDefinition {
    /// A definition with a name, description and input schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema,
            output_schema: None,
            annotations: None,
        }
    }

    /// Whether the tool declares itself read-only.
    pub fn is_read_only(&self) -> bool {
        self.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true)
    }
}
