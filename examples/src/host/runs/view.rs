//! What a run is as the API and the event hub report it: its state, its view, a provider retry,
//! and the description of a run started outside the studio's agents.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::outcome::RunOutcome;

/// Lifecycle state of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Accepted, planning or calling tools.
    Started,
    /// Waiting for the provider or a preview acknowledgement.
    Waiting,
    /// Waiting on a person to approve or deny a call.
    Approval,
    /// Finished successfully.
    Completed,
    /// The local agent did not act on the prompt (see [`RunOutcome::NotUnderstood`]).
    #[serde(rename = "not-understood")]
    NotUnderstood,
    /// A person or policy denied a call.
    Denied,
    /// Finished with an error.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl RunState {
    /// Whether the run has ended.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::NotUnderstood | Self::Denied | Self::Failed | Self::Cancelled
        )
    }

    pub(super) fn of(outcome: &RunOutcome) -> Self {
        match outcome {
            RunOutcome::Completed { .. } => Self::Completed,
            RunOutcome::NotUnderstood { .. } => Self::NotUnderstood,
            RunOutcome::Denied { .. } => Self::Denied,
            RunOutcome::Cancelled { .. } => Self::Cancelled,
            RunOutcome::Failed { .. } => Self::Failed,
        }
    }
}

/// A run as the API reports it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    /// Run id.
    pub run_id: String,
    /// Session id forwarded in every call context of the run.
    pub session_id: String,
    /// `local`, `openrouter` or `mcp`.
    pub agent: String,
    /// Lifecycle state.
    pub state: RunState,
    /// What the state is about (`waiting on a person for workspace.writeFile`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The provider retry the run is backing off for, while it waits for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<RunRetry>,
    /// Final report once finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Value>,
    /// What the run streamed (`streamedText`, `toolCalls`): in `GET /api/agent/runs/{id}`
    /// only, never in the lifecycle events (the pages get it as `agentStream` deltas).
    #[serde(flatten)]
    pub stream: Option<super::RunStream>,
}

/// A provider retry being waited for: retry `attempt` of `max_attempts` after `delay_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRetry {
    /// Retry number within the provider turn, from 1.
    pub attempt: u32,
    /// Retries allowed per turn.
    pub max_attempts: u32,
    /// The backoff before the retry is sent.
    pub delay_ms: u64,
    /// The code the failure would have had (for example `OPENROUTER_RATE_LIMITED`).
    pub code: String,
}

impl RunRetry {
    /// `retry 1 of 2 in 4s`, as the run's detail says it.
    pub fn describe(&self) -> String {
        let seconds = self.delay_ms.div_ceil(1000);
        format!(
            "{}: retry {} of {} in {seconds}s",
            self.code, self.attempt, self.max_attempts
        )
    }
}

/// Forwards a run's transitions to whoever started it (an MCP call's progress notifications).
pub type Relay = Arc<dyn Fn(RunState, &str) + Send + Sync>;

/// A run started outside the studio's agents: one MCP `tools/call`.
pub struct ExternalRun {
    /// Agent label (`mcp`).
    pub agent: &'static str,
    /// The caller's session id (its calls carry it).
    pub session_id: String,
    /// What the trace calls the session (the MCP client's name).
    pub session_label: String,
    /// The call's `toolCallId`, so only this call's registry events move the run.
    pub call_id: String,
    /// What is running (the tool name).
    pub detail: String,
    /// Cancels the call.
    pub cancellation: CancellationToken,
    /// Receives the run's transitions.
    pub relay: Relay,
}
