//! Interaction handlers: who answers a policy's `ask`.

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tool_protocol::approval::ApprovalCall;
use tool_protocol::{ToolCallContext, ToolCallId};

use crate::policy::BoxError;

/// Why a person is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InteractionKind {
    /// Approve or deny a call the policy would not allow on its own.
    Approval,
}

/// A person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InteractionOutcome {
    /// Run the call.
    Approved,
    /// Refuse the call (`TOOL_POLICY_DENIED`).
    Denied,
}

/// What an interaction handler is asked about: the validated call and where it came from.
#[derive(Debug, Clone)]
pub struct InteractionRequest {
    /// Why the person is asked.
    pub kind: InteractionKind,
    /// Provider correlation id of the call.
    pub tool_call_id: Option<ToolCallId>,
    /// Tool name.
    pub name: String,
    /// Tool description.
    pub description: Option<String>,
    /// The call's arguments. Handlers that store or display requests must not keep them
    /// (the [`ApprovalQueue`](crate::ApprovalQueue) keeps only names and safe previews).
    pub arguments: Map<String, Value>,
    /// The call context.
    pub context: ToolCallContext,
}

impl InteractionRequest {
    /// The call facts an approval snapshot is built from.
    pub fn approval_call(&self) -> ApprovalCall<'_> {
        ApprovalCall {
            tool_call_id: self.tool_call_id.clone(),
            session_id: self.context.session_id.clone(),
            name: &self.name,
            description: self.description.as_deref(),
            source: self.context.source,
            mode: self.context.mode,
            arguments: Some(&self.arguments),
        }
    }
}

/// Answers `ask` decisions: a dialog, an MCP elicitation, an approval queue or a test double.
/// Errors (and panics) become the retryable `TOOL_POLICY_FAILED`.
#[async_trait]
pub trait ToolInteraction: Send + Sync {
    /// Asks about `request`; `cancellation` fires when the call is cancelled, times out or the
    /// registry shuts down.
    async fn interact(
        &self,
        request: &InteractionRequest,
        cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError>;
}
