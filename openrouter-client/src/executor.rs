//! [`ToolExecutor`]: what the loop needs from a tool registry.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use tool_protocol::{ModelToolCall, ToolCallContext, ToolCallResult, ToolDefinition};

/// The tools a run may call. A registry (or anything else) is adapted to this trait so the
/// loop does not depend on it.
///
/// ```
/// use async_trait::async_trait;
/// use openrouter_tool_loop::ToolExecutor;
/// use serde_json::json;
/// use tokio_util::sync::CancellationToken;
/// use tool_protocol::{ModelToolCall, ToolCallContext, ToolCallResult, ToolDefinition};
///
/// struct Clock;
///
/// #[async_trait]
/// impl ToolExecutor for Clock {
///     async fn list_tools(&self) -> Vec<ToolDefinition> {
///         vec![ToolDefinition::new("clock.now", "Current time", json!({"type": "object"}))]
///     }
///     async fn call_tool(&self, call: ModelToolCall, _: ToolCallContext, _: CancellationToken) -> ToolCallResult {
///         ToolCallResult::success(json!({"tool": call.name, "time": "12:00"}))
///     }
/// }
/// ```
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// The complete, canonical tool listing (all pages). It is sent to the provider through
    /// `tool-protocol`'s OpenAI export, once per run.
    async fn list_tools(&self) -> Vec<ToolDefinition>;

    /// Executes one call. `call.name` is the canonical name and `call.arguments` a parsed JSON
    /// object; `context` carries source `model`, mode `agent` and the run's session id.
    /// Failures are returned as error results, never panics. The token fires when the run is
    /// cancelled; the loop also stops waiting for the future at that moment.
    async fn call_tool(
        &self,
        call: ModelToolCall,
        context: ToolCallContext,
        cancel: CancellationToken,
    ) -> ToolCallResult;
}
