//! The provider's view of the tools, derived from the canonical listing through
//! `tool-protocol`'s OpenAI export (never a second list), and the canonical result check.

use std::collections::HashMap;
use tool_protocol::export::{
    OpenAiExportOptions, OpenAiToolDefinition, OpenAiToolNames, to_openai_tool_definitions,
};

use serde_json::Value;
use tool_protocol::schema::CompiledSchema;
use tool_protocol::validate::{ValidationIssue, parse_tool_call_result};
use tool_protocol::{ToolCallResult, ToolDefinition};

/// What the loop knows of one listed tool besides its provider-facing definition.
#[derive(Debug, Clone)]
struct ToolFacts {
    /// The input schema, compiled; `None` when it does not compile (the executor decides).
    input: Option<CompiledSchema>,
    /// Read-only tools of one response may run concurrently.
    read_only: bool,
}

/// The tools array sent to the provider and the map from provider names back to canonical
/// names, both built from the same complete listing.
#[derive(Debug, Clone)]
pub(crate) struct ProviderToolset {
    tools: Vec<OpenAiToolDefinition>,
    names: OpenAiToolNames,
    facts: HashMap<String, ToolFacts>,
}

impl ProviderToolset {
    pub(crate) fn new(definitions: &[ToolDefinition]) -> Self {
        let tools = to_openai_tool_definitions(definitions, &OpenAiExportOptions::default());
        let facts = definitions
            .iter()
            .map(|definition| {
                let facts = ToolFacts {
                    input: CompiledSchema::compile(&definition.input_schema).ok(),
                    read_only: definition
                        .annotations
                        .as_ref()
                        .and_then(|annotations| annotations.read_only_hint)
                        .unwrap_or(false),
                };
                (definition.name.clone(), facts)
            })
            .collect();
        Self {
            tools,
            names: OpenAiToolNames::new(definitions),
            facts,
        }
    }

    /// The input-schema issues of a call's arguments (none for an unknown tool: the executor
    /// answers that one).
    pub(crate) fn check_arguments(
        &self,
        canonical: &str,
        arguments: &Value,
    ) -> Vec<ValidationIssue> {
        let Some(schema) = self
            .facts
            .get(canonical)
            .and_then(|facts| facts.input.as_ref())
        else {
            return Vec::new();
        };
        schema.check(arguments).err().unwrap_or_default()
    }

    /// Whether the tool says it only reads.
    pub(crate) fn is_read_only(&self, canonical: &str) -> bool {
        self.facts
            .get(canonical)
            .is_some_and(|facts| facts.read_only)
    }

    /// The `tools` array of a chat request.
    pub(crate) fn tools(&self) -> &[OpenAiToolDefinition] {
        &self.tools
    }

    /// The canonical name of a provider-facing name, or the provider's name when no listed
    /// tool has it (what events and messages call the tool).
    pub(crate) fn display_name<'n>(&'n self, provider_name: &'n str) -> &'n str {
        self.canonical_name(provider_name).unwrap_or(provider_name)
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
