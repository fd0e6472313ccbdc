//! The provider's view of the tools, derived from the canonical listing through
//! `tool-protocol`'s OpenAI export (never a second list), and the canonical result check.

use tool_protocol::export::{
    OpenAiExportOptions, OpenAiToolDefinition, OpenAiToolNames, to_openai_tool_definitions,
};
use tool_protocol::validate::parse_tool_call_result;
use tool_protocol::{ToolCallResult, ToolDefinition};

/// The tools array sent to the provider and the map from provider names back to canonical
/// names, both built from the same complete listing.
#[derive(Debug, Clone)]
pub(crate) struct ProviderToolset {
    tools: Vec<OpenAiToolDefinition>,
    names: OpenAiToolNames,
}

impl ProviderToolset {
    pub(crate) fn new(definitions: &[ToolDefinition]) -> Self {
        let tools = to_openai_tool_definitions(definitions, &OpenAiExportOptions::default());
        Self {
            tools,
            names: OpenAiToolNames::new(definitions),
        }
    }

    /// The `tools` array of a chat request.
    pub(crate) fn tools(&self) -> &[OpenAiToolDefinition] {
        &self.tools
    }

    /// The canonical name of a provider-facing name; `None` when no listed tool has it.
    pub(crate) fn canonical_name(&self, provider_name: &str) -> Option<&str> {
        self.names.canonical_name(provider_name)
    }
}

/// The result re-read through `tool-protocol`'s `isToolCallResult` validator; `None` when it
/// fails the canonical result contract.
pub(crate) fn validate_result(result: &ToolCallResult) -> Option<ToolCallResult> {
    let value = serde_json::to_value(result).ok()?;
    parse_tool_call_result(&value).ok()
}
