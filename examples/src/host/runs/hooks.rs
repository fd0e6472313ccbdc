//! The hooks that move runs from inside the call pipeline: the approval queue and the preview
//! bridge, each wrapped to tell [`AgentRuns`] first.

use async_trait::async_trait;
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewBridge, PreviewSnapshot};
use tokio_util::sync::CancellationToken;
use tool_context::{
    ApprovalQueue, BoxError, InteractionOutcome, InteractionRequest, ToolInteraction,
};

use super::AgentRuns;

/// The approval queue as the registry's interaction, moving the asking run to `approval` and,
/// once approved, back to `started`.
#[derive(Debug, Clone)]
pub struct RunApprovals {
    queue: ApprovalQueue,
    runs: AgentRuns,
}

impl RunApprovals {
    /// Wraps `queue`, reporting to `runs`.
    pub fn new(queue: ApprovalQueue, runs: AgentRuns) -> Self {
        Self { queue, runs }
    }
}

#[async_trait]
impl ToolInteraction for RunApprovals {
    async fn interact(
        &self,
        request: &InteractionRequest,
        cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        let session = request.context.session_id.clone().unwrap_or_default();
        self.runs.awaiting_approval(&session, &request.name);
        let outcome = self.queue.interact(request, cancellation).await;
        if matches!(outcome, Ok(InteractionOutcome::Approved)) {
            self.runs.approved(&session, &request.name);
        }
        outcome
    }
}

/// A preview bridge that first moves runs with a call in flight to `waiting` for the published
/// revision's acknowledgement.
pub struct RunPreviewBridge<B> {
    inner: B,
    runs: AgentRuns,
}

impl<B> std::fmt::Debug for RunPreviewBridge<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunPreviewBridge").finish_non_exhaustive()
    }
}

impl<B: PreviewBridge> RunPreviewBridge<B> {
    /// Wraps `inner`, reporting to `runs`.
    pub fn new(inner: B, runs: AgentRuns) -> Self {
        Self { inner, runs }
    }
}

impl<B: PreviewBridge> PreviewBridge for RunPreviewBridge<B> {
    fn publish(&self, snapshot: PreviewSnapshot, acks: &PreviewAcks) {
        self.runs.preview_published(snapshot.revision);
        self.inner.publish(snapshot, acks);
    }
}
