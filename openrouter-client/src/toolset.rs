//! The provider's view of the tools, derived from the canonical listing through
//! `tool-protocol` (never a second list), and the canonical result check.

use serde_json::{Value, json};
use tool_protocol::{ToolCallResult, ToolDefinition};

/// The tools array sent to the provider and the map from provider names back to canonical
/// names.
#[derive(Debug, Clone)]
pub(crate) struct ProviderToolset {
    tools: Vec<Value>,
    names: Vec<String>,
}

impl ProviderToolset {
    // GAP (pending tool-protocol `export`): replace with
    // `to_openai_tool_definitions(definitions, &OpenAiExportOptions::default())` and
    // `OpenAiToolNames::new(definitions)`.
    pub(crate) fn new(definitions: &[ToolDefinition]) -> Self {
        let tools = definitions
            .iter()
            .map(|d| json!({"type": "function", "function": {"name": d.name, "description": d.description, "parameters": d.input_schema}}))
            .collect();
        Self {
            tools,
            names: definitions.iter().map(|d| d.name.clone()).collect(),
        }
    }

    /// The `tools` array of a chat request.
    pub(crate) fn tools(&self) -> &[Value] {
        &self.tools
    }

    /// The canonical name of a provider-facing name; `None` when no tool has it.
    pub(crate) fn canonical_name(&self, provider_name: &str) -> Option<&str> {
        self.names
            .iter()
            .find(|name| *name == provider_name)
            .map(String::as_str)
    }
}

// GAP (pending tool-protocol `validate`): replace with `parse_tool_call_result`.
/// The result re-read through the canonical result contract; `None` when it fails it.
pub(crate) fn validate_result(result: &ToolCallResult) -> Option<ToolCallResult> {
    let value = serde_json::to_value(result).ok()?;
    serde_json::from_value(value).ok()
}
