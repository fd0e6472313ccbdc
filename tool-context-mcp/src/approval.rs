//! Approvals for MCP calls: who answers a policy's `ask`.
//!
//! Each call gets its own [`ToolInteraction`] that picks one route when the
//! policy asks, in this order:
//!
//! 1. [`ApprovalRoute::Desk`]: an [`ApprovalDesk`] that is attended right now (for the studio:
//!    a browser page with the approval dialog is open) answers.
//! 2. [`ApprovalRoute::Elicitation`]: the MCP client declared form elicitation, so the person
//!    behind it is asked with an explicit confirmation: a form with no field, whose message
//!    says what the call will change (`confirmation_prompt`). `accept` (with `{}`, any
//!    defaults, or no content) approves; `decline` and `cancel` deny (`approves`).
//!    On protocol 2026-07-28 there is no server-to-client request: the route is
//!    [`ApprovalRoute::InputRequired`] instead, an `input_required` round (see
//!    [`crate::input_required`]) with the same confirmation, when the request's capabilities
//!    declare form elicitation.
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
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;
use tool_context::{BoxError, InteractionOutcome, InteractionRequest, ToolInteraction};
use tool_protocol::observability::ObservabilityPolicy;
use tool_protocol::{ToolApprovalSnapshot, ToolCallError, ToolCallResult, codes};

use crate::change_preview::{ChangePreview, with_change};
use crate::lifecycle::{CallState, McpCall};
use crate::progress::Progress;

/// Title of the confirmation form.
pub const CONFIRMATION_TITLE: &str = "Approve this tool call";
/// Most argument lines the confirmation message lists; further ones are counted, not shown.
pub const MAX_SUMMARY_LINES: usize = 12;
/// Longest value shown as is in the confirmation message, in characters; longer or multi-line
/// text is summarized by size and digest.
pub const MAX_SHOWN_VALUE_CHARS: usize = 80;
/// Hex digits of the SHA-256 digest that stand for a summarized text.
pub const DIGEST_HEX_CHARS: usize = 12;
/// Arguments that carry file or patch content: always summarized (bytes, lines, digest), never
/// shown, whatever their length.
pub const CONTENT_ARGUMENT_NAMES: &[&str] = &[
    "source", "content", "contents", "replace", "search", "text", "patch", "diff", "body", "data",
    "code", "html", "css", "script",
];
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

/// How the MCP client of one call can be asked for an approval.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClientRound {
    /// A 2025-11-25 session: ask with `elicitation/create` when the client declared it.
    Session,
    /// A 2026-07-28 request from a client that answers forms: ask with `input_required`
    /// ([`crate::input_required`]).
    Ask,
    /// A 2026-07-28 retry that carries the answer.
    Answered(InteractionOutcome),
    /// A 2026-07-28 client that cannot be asked.
    Unreachable,
}

/// The interaction of one MCP call (see the module docs for the route order).
pub(crate) struct McpApproval {
    desk: Option<ApprovalDesk>,
    peer: Peer<RoleServer>,
    progress: Progress,
    call: McpCall,
    safe_argument_names: Arc<[String]>,
    change_preview: Option<Arc<dyn ChangePreview>>,
    route: Mutex<Option<ApprovalRoute>>,
    round: ClientRound,
    asked_client: AtomicBool,
}

impl McpApproval {
    pub(crate) fn new(
        desk: Option<ApprovalDesk>,
        peer: Peer<RoleServer>,
        progress: Progress,
        call: McpCall,
        safe_argument_names: Arc<[String]>,
    ) -> Self {
        Self {
            desk,
            peer,
            progress,
            call,
            safe_argument_names,
            change_preview: None,
            route: Mutex::new(None),
            round: ClientRound::Session,
            asked_client: AtomicBool::new(false),
        }
    }

    /// Describes the change in the elicitation message (see [`crate::change_preview`]).
    pub(crate) fn with_change_preview(mut self, preview: Option<Arc<dyn ChangePreview>>) -> Self {
        self.change_preview = preview;
        self
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
        let prompt = request_prompt(request, &self.safe_argument_names);
        let change = match &self.change_preview {
            Some(preview) => preview.describe(&request.name, &request.arguments).await,
            None => None,
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: with_change(prompt.message, change),
            requested_schema: prompt.requested_schema,
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
        Ok(if approves(answer.action, answer.content.as_ref()) {
            InteractionOutcome::Approved
        } else {
            InteractionOutcome::Denied
        })
    }
}

impl McpApproval {
    /// A retry's answer, or (first round) a note that the client must be asked, which ends
    /// this request without running the call.
    fn input_required(&self) -> InteractionOutcome {
        match &self.round {
            ClientRound::Answered(outcome) => outcome.clone(),
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
        // The route is a note of its own: which way the question went. The notes so far reach
        // the wire before the question does: queued behind it, they could go out only at the
        // end, right before the result, and a client that handles notifications after responses
        // (the TypeScript SDK) drops progress that arrives with its response.
        self.progress.report(format!(
            "Waiting for approval of \"{}\" ({}).",
            request.name,
            route.as_str()
        ));
        self.progress.flush().await;
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

/// What an MCP client shows to ask for a confirmation: the message and the form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConfirmationPrompt {
    /// What the call will change, in plain text (bounded, secrets redacted).
    pub(crate) message: String,
    /// The form: an object with no field, so a client's "accept" answers it as is.
    pub(crate) requested_schema: ElicitationSchema,
}

/// The explicit confirmation of one call of `tool_name` with `arguments`: a form with no field
/// (nothing to fill in, so `accept` with `{}` or the defaults is a valid answer) and a message
/// that says what the call will change — each argument on a line, short scalars as they are,
/// content (`source`, `replace`, …) and long text only as byte count, line count and a SHA-256
/// digest prefix, redacted keys (`apiKey`, `token`, …) hidden — at most [`MAX_SUMMARY_LINES`]
/// lines.
pub(crate) fn confirmation_prompt(tool_name: &str, arguments: &Value) -> ConfirmationPrompt {
    let mut schema = ElicitationSchema::new(std::collections::BTreeMap::new());
    schema.title = Some(CONFIRMATION_TITLE.into());
    schema.description =
        Some("Accept to run this call once; decline or cancel to refuse it.".into());
    ConfirmationPrompt {
        message: change_summary(tool_name, arguments),
        requested_schema: schema,
    }
}

/// Whether a person's answer to the confirmation approves the call: `accept` does (the form
/// has no field, so its content does not matter); `decline` and `cancel` deny.
pub(crate) fn approves(action: ElicitationAction, _content: Option<&Value>) -> bool {
    action == ElicitationAction::Accept
}

/// The confirmation of a registry interaction: [`confirmation_prompt`] with the tool's
/// description (the one the studio's approval dialog shows) as the message's second line.
fn request_prompt(
    request: &InteractionRequest,
    safe_argument_names: &[String],
) -> ConfirmationPrompt {
    let arguments = Value::Object(request.arguments.clone());
    let mut prompt = confirmation_prompt(&request.name, &arguments);
    let snapshot = ToolApprovalSnapshot::new(
        String::new(),
        request.approval_call(),
        safe_argument_names,
        0,
    );
    if let Some((first, rest)) = prompt.message.split_once('\n') {
        prompt.message = format!("{first}\n{}\n{rest}", snapshot.description);
    }
    prompt
}

fn change_summary(tool_name: &str, arguments: &Value) -> String {
    let policy = ObservabilityPolicy::default();
    let mut lines = Vec::new();
    summarize_value("", arguments, &policy, &mut lines);
    let mut message = format!("Approve the tool call \"{tool_name}\"?\nIt runs once with:");
    if lines.is_empty() {
        message.push_str("\n(no arguments)");
    }
    let hidden = lines.len().saturating_sub(MAX_SUMMARY_LINES);
    for line in lines.iter().take(MAX_SUMMARY_LINES) {
        message.push('\n');
        message.push_str(line);
    }
    if hidden > 0 {
        message.push_str(&format!("\n… and {hidden} more argument value(s)"));
    }
    message
}

/// One line per scalar leaf (`edits[0].path: a.html`), depth-first, in argument order; stops
/// collecting past one line more than is shown.
fn summarize_value(
    path: &str,
    value: &Value,
    policy: &ObservabilityPolicy,
    lines: &mut Vec<String>,
) {
    if lines.len() > MAX_SUMMARY_LINES * 4 {
        return;
    }
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                // Content first: the redaction policy also hides `source`/`search`/`replace`,
                // but a digest of them tells nothing and lets the person tell changes apart.
                if let Some(text) = item.as_str().filter(|_| is_content_argument(key)) {
                    lines.push(format!("{child}: {}", text_digest(text)));
                } else if policy.is_redacted_key(key) {
                    lines.push(format!("{child}: [{key} redacted]"));
                } else {
                    summarize_value(&child, item, policy, lines);
                }
            }
        }
        Value::Array(items) if items.is_empty() => lines.push(format!("{path}: (empty list)")),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                summarize_value(&format!("{path}[{index}]"), item, policy, lines);
            }
        }
        Value::String(text) => {
            let shown = text.chars().count() <= MAX_SHOWN_VALUE_CHARS && !text.contains('\n');
            if shown {
                lines.push(format!("{path}: {text}"));
            } else {
                lines.push(format!("{path}: {}", text_digest(text)));
            }
        }
        scalar => lines.push(format!("{path}: {scalar}")),
    }
}

fn is_content_argument(key: &str) -> bool {
    CONTENT_ARGUMENT_NAMES.contains(&key)
}

/// `1234 bytes, 40 lines, sha256 0123456789ab`: enough to tell two contents apart, nothing of
/// the text itself.
fn text_digest(text: &str) -> String {
    let digest = hex::encode(Sha256::digest(text.as_bytes()));
    let lines = text.lines().count();
    let bytes = text.len();
    format!(
        "{bytes} byte{}, {lines} line{}, sha256 {}",
        plural(bytes),
        plural(lines),
        &digest[..DIGEST_HEX_CHARS]
    )
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// The error of a call that needed approval nobody could give: `TOOL_POLICY_DENIED` (not
/// retryable as is) with a message that names the ways to get an approval, and
/// `details: {approvalRoute: "unavailable"}`. `help` is the host's own way, if it has one (the
/// studio: `studio mcp --approve-with URL`), see [`McpToolServer::with_approval_help`].
///
/// [`McpToolServer::with_approval_help`]: crate::McpToolServer::with_approval_help
pub fn unavailable_denial(tool: &str, help: Option<&str>) -> ToolCallError {
    let mut message = format!(
        "Tool \"{tool}\" needs a person's approval, but nobody could be asked, so the call was denied: \
         this MCP client does not support form elicitation and no approval desk is attended. \
         To approve calls, use an MCP client that supports elicitation"
    );
    match help {
        Some(help) => message.push_str(&format!(", or {help}.")),
        None => message.push('.'),
    }
    ToolCallError::new(codes::TOOL_POLICY_DENIED, message)
        .with_retryable(false)
        .with_details(json!({
            "approvalRoute": ROUTE_UNAVAILABLE,
            tool_context::DECIDED_BY_KEY: tool_context::DECIDED_BY_HOST,
        }))
}

/// Explains a policy denial that came from the unavailable route; other results pass unchanged.
pub(crate) fn explain_denial(
    result: ToolCallResult,
    route: Option<ApprovalRoute>,
    tool: &str,
    help: Option<&str>,
) -> ToolCallResult {
    let denied = result.error_code() == Some(codes::TOOL_POLICY_DENIED);
    if denied && route == Some(ApprovalRoute::Unavailable) {
        ToolCallResult::failure(unavailable_denial(tool, help))
            .with_tool_call_id(result.tool_call_id)
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
    fn accept_approves_with_any_content_and_decline_or_cancel_deny() {
        for content in [None, Some(json!({})), Some(json!({"approve": true}))] {
            assert!(approves(ElicitationAction::Accept, content.as_ref()));
        }
        assert!(!approves(ElicitationAction::Decline, Some(&json!({}))));
        assert!(!approves(ElicitationAction::Cancel, None));
    }

    #[test]
    fn the_form_has_no_field_so_an_empty_accept_is_valid() {
        let prompt = confirmation_prompt("t", &json!({}));
        let form = serde_json::to_value(&prompt.requested_schema).unwrap();
        assert_eq!(form["type"], "object");
        assert_eq!(form["properties"], json!({}));
        assert!(form.get("required").is_none());
        assert_eq!(form["title"], CONFIRMATION_TITLE);
        assert!(prompt.message.contains("(no arguments)"));
    }

    #[test]
    fn the_message_summarizes_content_and_hides_secrets() {
        let source = "<h1>Hello</h1>\n<p>world</p>\n";
        let arguments = json!({
            "path": "index.html", "source": source, "expectedRevision": 3,
            "apiKey": "sk-live-123", "edits": [{"search": "a", "replace": "SECRET-REPLACEMENT"}]
        });
        let message = confirmation_prompt("workspace.writeFile", &arguments).message;
        assert!(message.starts_with("Approve the tool call \"workspace.writeFile\"?"));
        assert!(message.contains("path: index.html"), "{message}");
        assert!(message.contains("expectedRevision: 3"));
        let digest = hex::encode(Sha256::digest(source.as_bytes()));
        assert!(
            message.contains(&format!(
                "source: 28 bytes, 2 lines, sha256 {}",
                &digest[..12]
            )),
            "{message}"
        );
        assert!(message.contains("edits[0].replace: 18 bytes, 1 line, sha256 "));
        assert!(message.contains("edits[0].search: 1 byte, 1 line, sha256 "));
        assert!(message.contains("apiKey: [apiKey redacted]"));
        for raw in ["<h1>", "sk-live-123", "SECRET-REPLACEMENT"] {
            assert!(!message.contains(raw), "{raw} leaked: {message}");
        }
    }

    #[test]
    fn long_text_is_digested_and_the_line_count_is_bounded() {
        let long = "x".repeat(MAX_SHOWN_VALUE_CHARS + 1);
        let exact = "y".repeat(MAX_SHOWN_VALUE_CHARS);
        let message = confirmation_prompt("t", &json!({"note": long, "label": exact})).message;
        assert!(message.contains(&format!("label: {exact}")));
        assert!(message.contains("note: 81 bytes, 1 line, sha256 "));
        let many: serde_json::Map<String, Value> = (0..MAX_SUMMARY_LINES + 3)
            .map(|index| (format!("k{index:02}"), json!(index)))
            .collect();
        let message = confirmation_prompt("t", &Value::Object(many)).message;
        assert_eq!(message.lines().count(), 2 + MAX_SUMMARY_LINES + 1);
        assert!(message.ends_with("… and 3 more argument value(s)"));
    }

    #[test]
    fn the_message_adds_the_tool_description() {
        let arguments = json!({"path": "index.html"}).as_object().cloned().unwrap();
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
        let prompt = request_prompt(&request, &["path".to_owned()]);
        let lines: Vec<&str> = prompt.message.lines().collect();
        assert_eq!(lines[0], "Approve the tool call \"workspace.writeFile\"?");
        assert_eq!(lines[1], "Writes a file.");
        assert_eq!(lines[3], "path: index.html");
    }

    #[test]
    fn only_unavailable_denials_are_explained() {
        let denied = ToolCallResult::failure(ToolCallError::new(
            codes::TOOL_POLICY_DENIED,
            "Tool \"t\" was denied by policy",
        ));
        let explained = explain_denial(
            denied.clone(),
            Some(ApprovalRoute::Unavailable),
            "t",
            Some("ask the host"),
        );
        assert_eq!(explained.error_code(), Some(codes::TOOL_POLICY_DENIED));
        let error = explained.error.unwrap();
        assert_eq!(
            error.details,
            Some(json!({"approvalRoute": "unavailable", "decidedBy": "host"}))
        );
        assert!(
            error
                .message
                .ends_with("supports elicitation, or ask the host."),
            "{}",
            error.message
        );
        let generic = unavailable_denial("t", None).message;
        assert!(generic.ends_with("supports elicitation."), "{generic}");
        assert_eq!(
            explain_denial(denied.clone(), Some(ApprovalRoute::Elicitation), "t", None),
            denied
        );
        assert_eq!(explain_denial(denied.clone(), None, "t", None), denied);
    }
}
