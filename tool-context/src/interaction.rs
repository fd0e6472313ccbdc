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
#[derive(Debug, Clone, PartialEq)]
pub enum InteractionOutcome {
    /// Run the call.
    Approved,
    /// Run a narrowed version of the call: the person accepted part of it (for example some
    /// hunks of an edit). The pipeline checks the new arguments against the tool's input
    /// schema (always strictly), keeps the call's idempotency identity on the arguments as
    /// sent, runs the handler with the new ones and appends [`ApprovedChanges::note`] to the
    /// result, so the caller (a model) learns that not all of its change landed.
    ApprovedWithChanges(Box<ApprovedChanges>),
    /// Refuse the call (`TOOL_POLICY_DENIED`).
    Denied,
    /// Refuse the call (`TOOL_POLICY_DENIED`) saying why and who decided: the denial's
    /// message and details are the error's (for example an approval that expired because the
    /// page that asked for it is gone).
    DeniedWith(Box<Denial>),
}

impl InteractionOutcome {
    /// Whether the call may run (as sent or narrowed).
    pub fn is_approved(&self) -> bool {
        !matches!(self, Self::Denied | Self::DeniedWith(_))
    }
}

/// Why a call was refused, as its caller reads it in the `TOOL_POLICY_DENIED` error.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Denial {
    /// The error message.
    pub message: String,
    /// The error details (for example `{"reason": "…", "decidedBy": "host"}`).
    pub details: Map<String, Value>,
}

impl Denial {
    /// A denial reading `message`, with `details`.
    pub fn new(message: impl Into<String>, details: Map<String, Value>) -> Self {
        Self {
            message: message.into(),
            details,
        }
    }
}

/// What a person approved instead of the call as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovedChanges {
    /// The arguments the handler runs with.
    pub arguments: Map<String, Value>,
    /// What was changed, for the result: counts and names, never file source (for example
    /// "Approved with changes: 1 of 2 hunks of index.html applied; hunk 2 rejected.").
    pub note: String,
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
