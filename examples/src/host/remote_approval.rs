//! Approvals asked on another, running studio's page: `studio mcp --approve-with URL`.
//!
//! A headless `studio mcp` has no page, and a stdio client may not support elicitation. With
//! `--approve-with`, each approval is posted to the running studio's [`ASK_PATH`] (with its
//! per-launch token); that studio puts it in its own approval queue, where its page's approval
//! dialog answers it, and the request stays open until the person decides. When the call stops
//! waiting (cancelled, timed out), the request is dropped, and the studio withdraws the
//! approval from its queue.
//!
//! The studio answers `409` (`STUDIO_NO_PAGE_ATTACHED`) when no page is open to ask; that, and
//! an unreachable studio, are interaction errors (retryable `TOOL_POLICY_FAILED` whose message
//! says what to do), never a silent allow.

use std::sync::Arc;

use async_trait::async_trait;
use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tool_context::{
    ApprovalDecision, BoxError, InteractionKind, InteractionOutcome, InteractionRequest,
    ToolInteraction,
};
use tool_protocol::{ToolCallContext, ToolCallMode, ToolCallSource};

use super::StudioState;
use crate::kit::error::StudioError;

/// Where a running studio takes approvals asked by another process.
pub const ASK_PATH: &str = "/api/mcp/approvals";
/// `decision` of an approved request.
pub const APPROVED: &str = "approved";
/// `decision` of a denied request.
pub const DENIED: &str = "denied";

/// The body of an approval asked from another process.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AskBody {
    /// Tool name.
    pub name: String,
    /// Tool description.
    #[serde(default)]
    pub description: Option<String>,
    /// The call's arguments (the queue keeps only names and safe previews).
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// The asking MCP session.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// `POST /api/mcp/approvals`: asks this studio's page and answers `{decision}` once the person
/// decides. `409` when no page is open. Dropping the request withdraws the approval.
pub async fn ask(
    State(state): State<Arc<StudioState>>,
    Json(body): Json<AskBody>,
) -> Result<Json<DecisionView>, StudioError> {
    if state.pages.count() == 0 {
        return Err(StudioError::conflict(
            "STUDIO_NO_PAGE_ATTACHED",
            "No studio page is open to approve this call: open the studio in a browser and retry.",
        )
        .retryable(true));
    }
    let request = InteractionRequest {
        kind: InteractionKind::Approval,
        tool_call_id: None,
        name: body.name,
        description: body.description,
        arguments: body.arguments,
        context: ToolCallContext {
            source: Some(ToolCallSource::Mcp),
            mode: Some(ToolCallMode::Agent),
            session_id: body.session_id,
            ..ToolCallContext::default()
        },
    };
    // Axum drops this future when the asker disconnects; the guard then cancels the wait.
    let cancellation = CancellationToken::new();
    let _withdraw = cancellation.clone().drop_guard();
    // Asked as a plain request: the call runs in the other process, so a narrowed (per-hunk)
    // answer, which this studio cannot hand over, is never offered for it.
    let decision = match state
        .approvals
        .request(request.approval_call(), &cancellation)
        .await
    {
        ApprovalDecision::Allow => APPROVED,
        ApprovalDecision::Deny => DENIED,
    };
    Ok(Json(DecisionView { decision }))
}

/// The person's answer: [`APPROVED`] or [`DENIED`].
#[derive(Debug, Serialize)]
pub struct DecisionView {
    /// [`APPROVED`] or [`DENIED`].
    pub decision: &'static str,
}

/// Asks a running studio's page (see the module docs).
#[derive(Clone)]
pub struct RemoteApprovals {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl std::fmt::Debug for RemoteApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteApprovals")
            .field("base", &self.base)
            .field("token", &"[redacted]")
            .finish()
    }
}

impl RemoteApprovals {
    /// Approvals asked of the studio at `base` (e.g. `http://127.0.0.1:4870`) with its token.
    pub fn new(base: &str, token: impl Into<String>) -> Self {
        Self {
            http: reqwest::Client::new(),
            base: base.trim_end_matches('/').to_owned(),
            token: token.into(),
        }
    }

    /// The studio asked.
    pub fn base(&self) -> &str {
        &self.base
    }

    async fn post(&self, request: &InteractionRequest) -> Result<InteractionOutcome, BoxError> {
        let body = json!({
            "name": request.name,
            "description": request.description,
            "arguments": request.arguments,
            "sessionId": request.context.session_id,
        });
        let answer = self
            .http
            .post(format!("{}{ASK_PATH}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .map_err(|error| {
                format!(
                    "The studio at {} could not be reached to approve \"{}\" ({error}); start it or check --approve-with.",
                    self.base, request.name
                )
            })?;
        let status = answer.status();
        let body: Value = answer.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            let message = body["error"]["message"].as_str().unwrap_or("no message");
            return Err(format!(
                "The studio at {} did not take the approval of \"{}\" (HTTP {status}): {message}",
                self.base, request.name
            )
            .into());
        }
        match body["decision"].as_str() {
            Some(APPROVED) => Ok(InteractionOutcome::Approved),
            Some(DENIED) => Ok(InteractionOutcome::Denied),
            _ => Err(format!("The studio at {} answered without a decision.", self.base).into()),
        }
    }
}

#[async_trait]
impl ToolInteraction for RemoteApprovals {
    async fn interact(
        &self,
        request: &InteractionRequest,
        cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        tokio::select! {
            // Dropping the request closes it; the studio withdraws the approval.
            () = cancellation.cancelled() => Ok(InteractionOutcome::Denied),
            outcome = self.post(request) => outcome,
        }
    }
}
