//! [`ToolCallContext`]: who is calling, how, in which session and at which revision.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::request::StringOrNumber;

/// Where a call comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallSource {
    /// A language model's tool call.
    Model,
    /// An MCP client.
    Mcp,
    /// A sandboxed preview iframe.
    Iframe,
    /// The local application: UI buttons, command palette, local agent.
    Local,
}

impl ToolCallSource {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Mcp => "mcp",
            Self::Iframe => "iframe",
            Self::Local => "local",
        }
    }
}

/// How a call was initiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallMode {
    /// Chosen by an agent.
    Agent,
    /// Explicitly invoked by a person (a button or palette entry).
    Direct,
}

impl ToolCallMode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Direct => "direct",
        }
    }
}

/// Runtime scope of a call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallContext {
    /// Origin of the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ToolCallSource>,
    /// Agent-chosen or direct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolCallMode>,
    /// Session (agent run, MCP session) the call belongs to; scopes idempotency keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Revision the caller observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<StringOrNumber>,
    /// Free-form metadata (redacted before it reaches audit data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl ToolCallContext {
    /// A context with a source and mode.
    pub fn new(source: ToolCallSource, mode: ToolCallMode) -> Self {
        Self {
            source: Some(source),
            mode: Some(mode),
            ..Self::default()
        }
    }

    /// The context of a model call: `model` / `agent` unless already set.
    pub fn for_model(mut self) -> Self {
        self.source.get_or_insert(ToolCallSource::Model);
        self.mode.get_or_insert(ToolCallMode::Agent);
        self
    }

    /// Sets the session id.
    #[must_use]
    pub fn with_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }
}
