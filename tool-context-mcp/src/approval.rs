//! Approvals for MCP calls: who answers a policy's `ask`.
//!
//! Each call gets its own [`ToolInteraction`] that picks one route when the
//! policy asks, in this order:
//!
//! 1. [`ApprovalRoute::Desk`]: an [`ApprovalDesk`] that is attended right now (for the studio:
//!    a browser page with the approval dialog is open) answers.
//! 2. [`ApprovalRoute::Elicitation`]: the MCP client declared form elicitation, so the person
//!    behind it is asked with a one-field form (`approve: boolean`). Only an `accept` with
//!    `approve: true` approves; `decline`, `cancel`, `approve: false` or missing content deny.
//!    On protocol 2026-07-28 there is no server-to-client request: the route is
//!    [`ApprovalRoute::InputRequired`] instead, an `input_required` round (see
//!    [`crate::input_required`]), when the request's capabilities declare form elicitation.
//! 3. [`ApprovalRoute::Unavailable`]: nobody can be asked, so the call is denied and the error
//!    says why ([`unavailable_denial`]). An approval-required call never runs silently.
//!
//! A failed elicitation (transport closed, client error) is an interaction error, which the
//! registry turns into the retryable `TOOL_POLICY_FAILED`: still no silent allow. When a call
//! stops waiting for its prompt (`notifications/cancelled`, timeout, shutdown), the prompt is
//! withdrawn from the client with `notifications/cancelled` ([`WITHDRAWN_REASON`]).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, Request, RequestId, ServerRequest,
};
use rmcp::service::{ElicitationMode, Peer, PeerRequestOptions, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_context::{BoxError, InteractionOutcome, InteractionRequest, ToolInteraction};
use tool_protocol::{ToolApprovalSnapshot, ToolCallError, ToolCallResult, codes};

use crate::input_required::ClientRound;
use crate::lifecycle::{CallState, McpCall};
use crate::progress::Progress;

/// The elicitation form field a person sets to approve a call.
pub const APPROVE_FIELD: &str = "approve";
/// `reason` of the `notifications/cancelled` that withdraws a prompt whose call stopped waiting.
pub const WITHDRAWN_REASON: &str = "The tool call stopped waiting for this approval.";
/// `details.approvalRoute` value of a denial nobody could be asked about.
pub const ROUTE_UNAVAILABLE: &str = "unavailable";

/// Which way an approval request went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalRoute {
    /// An attended [`ApprovalDesk`] answered.
    Desk,
    /// The MCP client was asked through form elicitation.
    Elicitation,
    /// A 2026-07-28 client was asked with `input_required` (see [`crate::input_required`]).
    InputRequired,
    /// Nobody could be asked; the call was denied.
    Unavailable,
}

impl ApprovalRoute {
    /// The route's name in `details.approvalRoute`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Desk => "desk",
            Self::Elicitation => "elicitation",
            Self::InputRequired => "input_required",
            Self::Unavailable => ROUTE_UNAVAILABLE,
        }
    }
}

/// A person-facing approval handler that is only used while someone is there to answer it
/// (the studio's approval queue while a browser page is attached, say).
#[derive(Clone)]
pub struct ApprovalDesk {
    interaction: Arc<dyn ToolInteraction>,
    attended: Arc<dyn Fn() -> bool + Send + Sync>,
}

impl fmt::Debug for ApprovalDesk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalDesk")
            .field("attended", &(self.attended)())
            .finish_non_exhaustive()
    }
}

impl ApprovalDesk {
    /// A desk that asks `interaction` whenever `attended()` is true at the moment a call asks.
    ///
    /// ```
    /// use tool_context::ApprovalQueue;
    /// use tool_context_mcp::ApprovalDesk;
    /// let queue = ApprovalQueue::new();
    /// let desk = ApprovalDesk::new(queue.clone(), || false);
    /// assert!(!desk.is_attended());
    /// ```
    pub fn new(
        interaction: impl ToolInteraction + 'static,
        attended: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Self {
        Self {
            interaction: Arc::new(interaction),
            attended: Arc::new(attended),
        }
    }

    /// Whether someone is there to answer right now.
    pub fn is_attended(&self) -> bool {
        (self.attended)()
    }
}

/// The interaction of one MCP call (see the module docs for the route order).
pub(crate) struct McpApproval {
    desk: Option<ApprovalDesk>,
    peer: Peer<RoleServer>,
    progress: Progress,
    call: McpCall,
    safe_argument_names: Arc<[String]>,
    route: Mutex<Option<ApprovalRoute>>,
    round: ClientRound,
    asked_client: AtomicBool,
}

impl McpApproval {
    pub(crate) fn new(
        desk: Option<ApprovalDesk>,
        peer: Peer<RoleServer>,
        (progress, call): (Progress, McpCall),
        safe_argument_names: Arc<[String]>,
    ) -> Self {
        Self {
            desk,
            peer,
            progress,
            call,
            safe_argument_names,
            route: Mutex::new(None),
            round: ClientRound::Session,
            asked_client: AtomicBool::new(false),
        }
    }

    /// How this call's client can be asked (default: the session's elicitation).
    pub(crate) fn with_client_round(mut self, round: ClientRound) -> Self {
        self.round = round;
        self
    }

    /// Whether the policy asked and the question went back to a 2026-07-28 client, so the
    /// call's answer is `input_required`, not its denial.
    pub(crate) fn asked_client(&self) -> bool {
        self.asked_client.load(Ordering::SeqCst)
    }

    /// The route taken, once the policy asked.
    pub(crate) fn route(&self) -> Option<ApprovalRoute> {
        *self.route.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn choose_route(&self) -> ApprovalRoute {
        // A retry carries the person's answer already: nobody is asked twice.
        if matches!(self.round, ClientRound::Answered(_)) {
            ApprovalRoute::InputRequired
        } else if self.desk.as_ref().is_some_and(ApprovalDesk::is_attended) {
            ApprovalRoute::Desk
        } else if self.round == ClientRound::Ask {
            ApprovalRoute::InputRequired
        } else if self.round == ClientRound::Session
            && self
                .peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
        {
            ApprovalRoute::Elicitation
        } else {
            ApprovalRoute::Unavailable
        }
    }

    async fn elicit(
        &self,
        request: &InteractionRequest,
        cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: approval_message(request, &self.safe_argument_names),
            requested_schema: approval_form()?,
        };
        let request = ServerRequest::ElicitRequest(Request::new(params));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        let mut prompt = OpenPrompt {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let answer = tokio::select! {
            // The registry reports the cancellation or timeout itself; dropping `prompt`
            // withdraws the question from the client.
            () = cancellation.cancelled() => return Ok(InteractionOutcome::Denied),
            answer = handle.await_response() => answer,
        };
        prompt.answered();
        let answer = answer?;
        let ClientResult::ElicitResult(answer) = answer else {
            return Err("the MCP client answered the elicitation with another result type".into());
        };
        Ok(outcome_of(answer.action, answer.content.as_ref()))
    }
}

impl McpApproval {
    /// A retry's answer, or (first round) a note that the client must be asked, which ends
    /// this request without running the call.
    fn input_required(&self) -> InteractionOutcome {
        match self.round {
            ClientRound::Answered(outcome) => outcome,
            _ => {
                self.asked_client.store(true, Ordering::SeqCst);
                InteractionOutcome::Denied
            }
        }
    }
}

/// An elicitation the client has not answered yet. If the call stops waiting first (it is
/// cancelled, times out, or the registry drops the interaction), the prompt is withdrawn with
/// `notifications/cancelled`, so the person is not left answering a call that no longer waits.
struct OpenPrompt {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl OpenPrompt {
    fn answered(&mut self) {
        self.id = None;
    }
}

impl Drop for OpenPrompt {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let withdrawn =
                CancelledNotificationParam::new(Some(id), Some(WITHDRAWN_REASON.to_owned()));
            if let Err(error) = peer.notify_cancelled(withdrawn).await {
                tracing::debug!(%error, "elicitation withdrawal not delivered");
            }
        });
    }
}

#[async_trait]
impl ToolInteraction for McpApproval {
    async fn interact(
        &self,
        request: &InteractionRequest,
        cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        let route = self.choose_route();
        *self.route.lock().unwrap_or_else(PoisonError::into_inner) = Some(route);
        if route != ApprovalRoute::Unavailable {
            self.call.transition(
                CallState::Approval,
                &format!("waiting on a person for {}", request.name),
            );
        }
        // The route is a note of its own: which way the question went.
        self.progress.report(format!(
            "Waiting for approval of \"{}\" ({}).",
            request.name,
            route.as_str()
        ));
        let outcome = match (route, &self.desk) {
            (ApprovalRoute::Desk, Some(desk)) => {
                desk.interaction.interact(request, cancellation).await
            }
            (ApprovalRoute::Elicitation, _) => self.elicit(request, cancellation).await,
            (ApprovalRoute::InputRequired, _) => Ok(self.input_required()),
            _ => Ok(InteractionOutcome::Denied),
        };
        if matches!(outcome, Ok(InteractionOutcome::Approved)) {
            self.call.transition(
                CallState::Started,
                &format!("approved; running {}", request.name),
            );
        }
        outcome
    }
}

/// The one-field form an MCP client shows.
fn approval_form() -> Result<ElicitationSchema, BoxError> {
    let schema = json!({
        "type": "object",
        "properties": {
            APPROVE_FIELD: {
                "type": "boolean",
                "title": "Approve this tool call",
                "description": "Run the call once. Leave unset or decline to refuse it.",
                "default": false
            }
        },
        "required": [APPROVE_FIELD]
    });
    let object = schema.as_object().cloned().unwrap_or_default();
    Ok(ElicitationSchema::from_json_schema(object)?)
}

/// Only an explicit `accept` with `approve: true` approves.
fn outcome_of(action: ElicitationAction, content: Option<&Value>) -> InteractionOutcome {
    let approved = action == ElicitationAction::Accept
        && content
            .and_then(|content| content.get(APPROVE_FIELD))
            .and_then(Value::as_bool)
            == Some(true);
    if approved {
        InteractionOutcome::Approved
    } else {
        InteractionOutcome::Denied
    }
}

/// What the person reads: tool, description, argument names and the safe argument preview —
/// the same facts the studio's approval dialog shows, never raw argument values.
fn approval_message(request: &InteractionRequest, safe_argument_names: &[String]) -> String {
    let snapshot = ToolApprovalSnapshot::new(
        String::new(),
        request.approval_call(),
        safe_argument_names,
        0,
    );
    let mut message = format!(
        "Approve the tool call \"{}\"?\n{}",
        snapshot.name, snapshot.description
    );
    if !snapshot.argument_keys.is_empty() {
        message.push_str(&format!(
            "\nArguments: {}",
            snapshot.argument_keys.join(", ")
        ));
    }
    if let Some(preview) = &snapshot.safe_argument_preview {
        message.push_str(&format!("\n{preview}"));
    }
    message
}

/// What a person is asked to confirm: the message and a form that needs no field, so `accept`
/// alone approves.
///
/// Minimal stand-in until the confirmation form of issue 18 item 2 lands here (same signature);
/// the `input_required` approvals of protocol 2026-07-28 ask with it.
#[derive(Debug, Clone)]
pub(crate) struct ConfirmationPrompt {
    pub(crate) message: String,
    pub(crate) requested_schema: ElicitationSchema,
}

/// The confirmation form for a call of `tool_name` with `arguments` (argument names only, never
/// their values).
pub(crate) fn confirmation_prompt(tool_name: &str, arguments: &Value) -> ConfirmationPrompt {
    let mut message = format!("Approve the tool call \"{tool_name}\"?");
    if let Some(arguments) = arguments
        .as_object()
        .filter(|arguments| !arguments.is_empty())
    {
        let names: Vec<&str> = arguments.keys().map(String::as_str).collect();
        message.push_str(&format!("\nArguments: {}", names.join(", ")));
    }
    let requested_schema = ElicitationSchema::from_json_schema(
        json!({"type": "object", "properties": {}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
    .expect("an empty object form is a valid elicitation schema");
    ConfirmationPrompt {
        message,
        requested_schema,
    }
}

/// Whether an answer to [`confirmation_prompt`] approves: `accept` does, `decline` and `cancel`
/// do not.
pub(crate) fn approves(action: ElicitationAction, _content: Option<&Value>) -> bool {
    action == ElicitationAction::Accept
}

/// The error of a call that needed approval nobody could give: `TOOL_POLICY_DENIED` (not
/// retryable as is) with a message that says how to get an approval, and
/// `details: {approvalRoute: "unavailable"}`.
pub fn unavailable_denial(tool: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_POLICY_DENIED,
        format!(
            "Tool \"{tool}\" needs a person's approval, but nobody could be asked: no approval desk is attended \
             (open the studio page) and this MCP client does not support form elicitation. The call was denied."
        ),
    )
    .with_retryable(false)
    .with_details(json!({ "approvalRoute": ROUTE_UNAVAILABLE }))
}

/// Explains a policy denial that came from the unavailable route; other results pass unchanged.
pub(crate) fn explain_denial(
    result: ToolCallResult,
    route: Option<ApprovalRoute>,
    tool: &str,
) -> ToolCallResult {
    let denied = result.error_code() == Some(codes::TOOL_POLICY_DENIED);
    if denied && route == Some(ApprovalRoute::Unavailable) {
        ToolCallResult::failure(unavailable_denial(tool)).with_tool_call_id(result.tool_call_id)
    } else {
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_context::InteractionKind;
    use tool_protocol::{ToolCallContext, ToolCallSource};

    #[test]
    fn only_an_explicit_accept_with_approve_true_approves() {
        let yes = json!({APPROVE_FIELD: true});
        let no = json!({APPROVE_FIELD: false});
        assert_eq!(
            outcome_of(ElicitationAction::Accept, Some(&yes)),
            InteractionOutcome::Approved
        );
        assert_eq!(
            outcome_of(ElicitationAction::Accept, Some(&no)),
            InteractionOutcome::Denied
        );
        assert_eq!(
            outcome_of(
                ElicitationAction::Accept,
                Some(&json!({APPROVE_FIELD: "true"}))
            ),
            InteractionOutcome::Denied
        );
        assert_eq!(
            outcome_of(ElicitationAction::Accept, None),
            InteractionOutcome::Denied
        );
        assert_eq!(
            outcome_of(ElicitationAction::Decline, Some(&yes)),
            InteractionOutcome::Denied
        );
        assert_eq!(
            outcome_of(ElicitationAction::Cancel, Some(&yes)),
            InteractionOutcome::Denied
        );
    }

    #[test]
    fn the_message_previews_only_safe_arguments() {
        let arguments = json!({"path": "index.html", "source": "<secret>"})
            .as_object()
            .cloned()
            .unwrap();
        let request = InteractionRequest {
            kind: InteractionKind::Approval,
            tool_call_id: None,
            name: "workspace.writeFile".into(),
            description: Some("Writes a file.".into()),
            arguments,
            context: ToolCallContext {
                source: Some(ToolCallSource::Mcp),
                ..ToolCallContext::default()
            },
        };
        let message = approval_message(&request, &["path".to_owned()]);
        assert!(message.contains("\"workspace.writeFile\""));
        assert!(message.contains("Arguments: path, source"));
        assert!(message.contains("index.html"));
        assert!(!message.contains("<secret>"));
    }

    #[test]
    fn the_form_is_a_valid_elicitation_schema() {
        let form = serde_json::to_value(approval_form().unwrap()).unwrap();
        assert_eq!(form["required"], json!([APPROVE_FIELD]));
        assert_eq!(form["properties"][APPROVE_FIELD]["type"], "boolean");
    }

    #[test]
    fn only_unavailable_denials_are_explained() {
        let denied = ToolCallResult::failure(ToolCallError::new(
            codes::TOOL_POLICY_DENIED,
            "Tool \"t\" was denied by policy",
        ));
        let explained = explain_denial(denied.clone(), Some(ApprovalRoute::Unavailable), "t");
        assert_eq!(explained.error_code(), Some(codes::TOOL_POLICY_DENIED));
        assert_eq!(
            explained.error.unwrap().details,
            Some(json!({"approvalRoute": "unavailable"}))
        );
        assert_eq!(
            explain_denial(denied.clone(), Some(ApprovalRoute::Elicitation), "t"),
            denied
        );
        assert_eq!(explain_denial(denied.clone(), None, "t"), denied);
    }
}
