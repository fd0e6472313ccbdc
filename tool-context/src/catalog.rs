//! Discovery and provider exports. Both read the catalog snapshot with the allowlist applied,
//! so a hidden tool can be neither listed nor exported, filtered or not.

use serde_json::Value;
use tool_protocol::export::{
    AnthropicToolDefinition, ExportError, OpenAiExportOptions, OpenAiToolDefinition,
    ProviderToolNames, to_anthropic_tool_definitions, to_anthropic_tool_definitions_filtered,
    to_mcp_tools, to_mcp_tools_filtered, to_openai_tool_definitions,
    to_openai_tool_definitions_filtered,
};
use tool_protocol::paging::{decode_offset_cursor, encode_offset_cursor};
use tool_protocol::validate::{ValidationIssue, parse_tool_list_request};
use tool_protocol::{ToolDefinition, ToolListRequest, ToolListResult};

use crate::registry::ToolRegistry;

/// A `tools/list` request the registry cannot answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListToolsError {
    /// The raw request is not a valid `tools/list` request (JSON `null` included).
    #[error("Invalid tools/list request.")]
    InvalidRequest(Vec<ValidationIssue>),
    /// The cursor was not issued by this registry for its catalog.
    #[error("Invalid tools/list cursor.")]
    InvalidCursor,
}

impl ToolRegistry {
    /// One `tools/list` page. Without a request, or without a configured page size, the
    /// complete catalog; otherwise the page at the request's opaque cursor, with `nextCursor`
    /// when more tools follow.
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use tool_context::{Tool, ToolInvocation, ToolRegistry};
    /// use tool_protocol::{ToolCallError, ToolDefinition, ToolListRequest};
    /// let tool = |name: &str| Tool::new(
    ///     ToolDefinition::new(name, "t", json!({"type": "object"})),
    ///     |_: Value, _: ToolInvocation| async { Ok::<_, ToolCallError>(()) },
    /// );
    /// let registry = ToolRegistry::builder().tools(["a", "b", "c"].map(tool)).page_size(2).build().unwrap();
    /// let first = registry.list_tools(Some(ToolListRequest::default())).unwrap();
    /// assert_eq!(first.tools.len(), 2);
    /// let rest = registry.list_tools(Some(ToolListRequest::after(first.next_cursor.unwrap()))).unwrap();
    /// assert_eq!((rest.tools.len(), rest.next_cursor), (1, None));
    /// ```
    pub fn list_tools(
        &self,
        request: Option<ToolListRequest>,
    ) -> Result<ToolListResult, ListToolsError> {
        let listed = self.inner.listed();
        let (Some(request), Some(page_size)) = (request, self.inner.page_size) else {
            return Ok(ToolListResult {
                tools: listed.into_owned(),
                next_cursor: None,
            });
        };
        let start = match request.cursor.as_deref() {
            None => 0,
            Some(cursor) => decode_offset_cursor(cursor, listed.len())
                .map_err(|_| ListToolsError::InvalidCursor)?,
        };
        let end = start.saturating_add(page_size).min(listed.len());
        let next_cursor = (end < listed.len()).then(|| encode_offset_cursor(end));
        Ok(ToolListResult {
            tools: listed[start..end].to_vec(),
            next_cursor,
        })
    }

    /// [`Self::list_tools`] for an untrusted JSON request; `None` means no request was sent.
    pub fn list_tools_value(
        &self,
        request: Option<&Value>,
    ) -> Result<ToolListResult, ListToolsError> {
        let request = parse_tool_list_request(request).map_err(ListToolsError::InvalidRequest)?;
        self.list_tools(request)
    }

    /// The MCP `tools/list` view of the complete visible catalog.
    pub fn to_mcp_tools(&self) -> Vec<ToolDefinition> {
        to_mcp_tools(&self.inner.listed())
    }

    /// [`Self::to_mcp_tools`] restricted to `names`; a hidden or unknown name is an error.
    pub fn to_mcp_tools_filtered<S: AsRef<str>>(
        &self,
        names: &[S],
    ) -> Result<Vec<ToolDefinition>, ExportError> {
        to_mcp_tools_filtered(&self.inner.listed(), names)
    }

    /// OpenAI function tools for the complete visible catalog (names made provider-safe; map
    /// them back with [`Self::provider_tool_names`]).
    pub fn to_openai_tools(&self, options: &OpenAiExportOptions) -> Vec<OpenAiToolDefinition> {
        to_openai_tool_definitions(&self.inner.listed(), options)
    }

    /// [`Self::to_openai_tools`] restricted to `names`; a hidden or unknown name is an error.
    pub fn to_openai_tools_filtered<S: AsRef<str>>(
        &self,
        names: &[S],
        options: &OpenAiExportOptions,
    ) -> Result<Vec<OpenAiToolDefinition>, ExportError> {
        to_openai_tool_definitions_filtered(&self.inner.listed(), names, options)
    }

    /// Anthropic tools for the complete visible catalog.
    pub fn to_anthropic_tools(&self) -> Vec<AnthropicToolDefinition> {
        to_anthropic_tool_definitions(&self.inner.listed())
    }

    /// [`Self::to_anthropic_tools`] restricted to `names`; a hidden or unknown name is an error.
    pub fn to_anthropic_tools_filtered<S: AsRef<str>>(
        &self,
        names: &[S],
    ) -> Result<Vec<AnthropicToolDefinition>, ExportError> {
        to_anthropic_tool_definitions_filtered(&self.inner.listed(), names)
    }

    /// The provider-name mapping of the exports (resolve a provider's tool call name with
    /// [`ProviderToolNames::canonical_name`]).
    pub fn provider_tool_names(&self) -> ProviderToolNames {
        ProviderToolNames::new(&self.inner.listed())
    }
}
