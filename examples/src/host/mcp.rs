//! The studio's MCP server: the one registry served over MCP, as `/mcp` (streamable HTTP, on
//! the running studio) and over stdio (`studio mcp`, headless).
//!
//! Calls carry `source: mcp` and one session id per MCP session, so they pass the same policy
//! boundary as the agent: read-only tools run, everything else needs a person's approval. The
//! approval goes to the studio's approval queue while a browser page is attached (it renders
//! the preview and shows the approval dialog); otherwise the MCP client is asked through
//! elicitation; otherwise the call is denied with `TOOL_POLICY_DENIED` and
//! `details.approvalRoute: "unavailable"`.
//!
//! Each `tools/call` is also an agent run (agent `mcp`, the MCP session's id as its session), so
//! the page shows it in the run badge and the trace, can cancel it, and its lifecycle
//! transitions (`started`, `approval`, `waiting`, then `completed`, `denied`, `failed` or
//! `cancelled`) reach the client as progress notifications when it sent a `progressToken`.
//!
//! Clients on protocol 2026-07-28 are served too: their approvals are `input_required` rounds
//! whose sealed `requestState` uses the key in `<data-dir>/mcp-request-state.key`, and their long
//! calls become tasks recorded in the studio's durable store (`durable-operations.sqlite`).
//!
//! `studio mcp --approve-with URL` asks a running studio's page instead (see
//! [`super::remote_approval`]); when nobody can be asked, the denial names these options.
//!
//! `/mcp` sits behind the studio's Host/Origin guard and needs the per-launch token on every
//! request, reads included (the SSE stream of a session carries approval prompts and results):
//! `Authorization: Bearer <token>` or `x-studio-token: <token>`. Without it the answer is `401`
//! with a `WWW-Authenticate: Bearer` challenge; paths outside `/mcp` (OAuth discovery such as
//! `/.well-known/oauth-protected-resource` included) are the studio's `404`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tool_context_mcp::rmcp::transport::StreamableHttpServerConfig;
use tool_context_mcp::{
    ApprovalDesk, CallObserver, CallState, McpCall, McpToolServer, ServeError, serve_stdio,
    streamable_http_service,
};
use tool_protocol::ToolCallResult;

use super::StudioState;
use super::remote_approval::{self, ASK_PATH, RemoteApprovals};
use super::runs::{AgentRuns, ExternalRun, RunState, call_id_text};
use super::trace::mcp_session_label;
use crate::agent::outcome::RunOutcome;
use crate::kit::security::SecurityPolicy;
use crate::surfaces::SAFE_ARGUMENT_NAMES;

/// Path of the streamable HTTP endpoint.
pub const MCP_PATH: &str = "/mcp";
/// How often the HTTP endpoint checks whether the studio is shutting down (open MCP event
/// streams are closed then, so the server can stop).
pub const SHUTDOWN_POLL_INTERVAL: Duration = Duration::from_millis(200);
/// Name reported to MCP clients in `initialize`.
pub const MCP_SERVER_NAME: &str = "live-code-studio";

const INSTRUCTIONS: &str = "Live Code Studio tools, in three catalogs. workspace.* and \
preview.*: the studio workspace (read with workspace.getStatus / workspace.listFiles / \
workspace.readFile; preview.* changes the live preview). editor.*: the Live Code Editor \
document. web.*: the realtime web-coding workspace (web.getWorkspace / web.readFile, bounded \
web.applyPatch). Mutations take the expectedRevision (or documentRevision / workspaceRevision) \
you last read and need a person's approval (studio page, or this client's elicitation prompt). \
Send a progressToken to follow each call: started, approval, waiting, then completed, denied, \
failed or cancelled. Other tools are named <server>.<tool>: they come from MCP servers the studio \
mounts, and run on that server after a person's approval unless the person trusts the server.";

/// How a person can approve calls when neither a page nor the client can be asked.
const APPROVAL_HELP: &str = "run `studio mcp --approve-with http://127.0.0.1:<port>` to ask a running \
studio's page, or connect to a running studio's /mcp while its page is open";

/// The studio's MCP server over `state`'s registry: approvals go to the studio's queue while a
/// browser page is attached.
pub fn mcp_server(state: &Arc<StudioState>) -> McpToolServer {
    let viewers = state.pages.clone();
    let desk = ApprovalDesk::new(state.approvals.clone(), move || viewers.count() > 0);
    server_with_desk(state, desk)
}

fn server_with_desk(state: &Arc<StudioState>, desk: ApprovalDesk) -> McpToolServer {
    McpToolServer::new(state.registry.clone())
        .with_approval_desk(desk)
        .with_approval_help(APPROVAL_HELP)
        .with_safe_argument_names(SAFE_ARGUMENT_NAMES.iter().copied())
        .with_change_preview(super::review::McpChangePreview(Arc::downgrade(state)))
        .with_implementation(MCP_SERVER_NAME, env!("CARGO_PKG_VERSION"))
        .with_instructions(INSTRUCTIONS)
        .with_call_observer(StudioCalls(state.runs.clone()))
        // Protocol 2026-07-28: approval states sealed with the data directory's key, and tasks
        // and the replay guard in the studio's durable store, so both survive a restart.
        .with_request_state_key(state.mcp_state_key.clone())
        .with_durable_store(Arc::new(state.saves.store().clone()))
}

/// Registers each MCP call as an agent run and keeps the two lifecycles in step: the call's
/// transitions move the run, and the run's own (a preview wait, an approval in the studio)
/// go back to the call, which reports them to the client.
struct StudioCalls(AgentRuns);

impl StudioCalls {
    fn run_of(&self, call: &McpCall) -> Option<String> {
        self.0
            .find_external(call.session_id(), &call_id_text(call.tool_call_id()))
    }
}

impl CallObserver for StudioCalls {
    fn call_started(&self, call: &McpCall) {
        let relayed = call.clone();
        self.0.begin_external(ExternalRun {
            agent: "mcp",
            session_id: call.session_id().to_owned(),
            session_label: mcp_session_label(call.client_name()),
            call_id: call_id_text(call.tool_call_id()),
            detail: call.tool().to_owned(),
            cancellation: call.cancellation().clone(),
            relay: Arc::new(move |state, detail| {
                relayed.transition(call_state(state), detail);
            }),
        });
    }

    fn call_transition(&self, call: &McpCall, state: CallState, detail: &str) {
        if let Some(run_id) = self.run_of(call) {
            self.0
                .transition(&run_id, run_state(state), Some(detail.to_owned()));
        }
    }

    fn call_finished(&self, call: &McpCall, _state: CallState, result: &ToolCallResult) {
        let Some(run_id) = self.run_of(call) else {
            return;
        };
        let outcome = match &result.error {
            None => RunOutcome::completed(format!("{} completed.", call.tool())),
            Some(error) => RunOutcome::from_error(call.tool(), error, false),
        };
        let report = json!({"outcome": outcome, "toolNames": [call.tool()]});
        self.0.finish(&run_id, &outcome, report);
    }
}

fn run_state(state: CallState) -> RunState {
    match state {
        CallState::Started => RunState::Started,
        CallState::Waiting => RunState::Waiting,
        CallState::Approval => RunState::Approval,
        CallState::Completed => RunState::Completed,
        CallState::Denied => RunState::Denied,
        CallState::Failed => RunState::Failed,
        CallState::Cancelled => RunState::Cancelled,
    }
}

fn call_state(state: RunState) -> CallState {
    match state {
        RunState::Started => CallState::Started,
        RunState::Waiting => CallState::Waiting,
        RunState::Approval => CallState::Approval,
        RunState::Completed => CallState::Completed,
        RunState::Denied => CallState::Denied,
        RunState::Failed => CallState::Failed,
        RunState::Cancelled => CallState::Cancelled,
        // Never relayed (final states are not, and only local runs end not understood); a
        // call that was not acted on is never reported as a success.
        RunState::NotUnderstood => CallState::Failed,
    }
}

/// `/mcp`: the streamable HTTP transport behind the token check (the studio's guard, applied
/// by the caller, checks Host and Origin first).
pub fn router(state: &Arc<StudioState>) -> Router {
    let stop = CancellationToken::new();
    close_on_shutdown(state, stop.clone());
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop);
    let service = streamable_http_service(&mcp_server(state), config);
    // A route layer: only `/mcp` itself needs the token; other paths fall through to the
    // studio's own routes (and its 404), never to an MCP token refusal.
    Router::new()
        .nest_service(MCP_PATH, service)
        .route(ASK_PATH, post(remote_approval::ask))
        .with_state(state.clone())
        .route_layer(middleware::from_fn_with_state(
            state.security.clone(),
            require_token,
        ))
}

/// Cancels `stop` once the registry shuts down, which ends every MCP session and stream.
fn close_on_shutdown(state: &Arc<StudioState>, stop: CancellationToken) {
    let registry = state.registry.clone();
    tokio::spawn(async move {
        while !registry.is_shut_down() {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(SHUTDOWN_POLL_INTERVAL) => {}
            }
        }
        stop.cancel();
    });
}

/// Every `/mcp` request (GET and DELETE too) needs the token header.
async fn require_token(
    State(policy): State<SecurityPolicy>,
    request: Request,
    next: Next,
) -> Response {
    // Checked as a state-changing request without a query string, so only the header counts.
    let checked = policy.check(&Method::POST, request.uri().path(), None, request.headers());
    match checked {
        Ok(()) => ended_sessions_as_no_content(request.method().clone(), next.run(request).await),
        Err(refusal) => refusal.into_response_with(
            "MCP requests need the studio's per-launch token: Authorization: Bearer <token> or the x-studio-token header.",
        ),
    }
}

/// rmcp answers a session's DELETE with `202 Accepted`, but the session is already gone: say
/// so with `204 No Content`, which clients (and the MCP spec's examples) expect.
fn ended_sessions_as_no_content(method: Method, response: Response) -> Response {
    if method == Method::DELETE && response.status() == axum::http::StatusCode::ACCEPTED {
        let mut ended = Response::new(axum::body::Body::empty());
        *ended.status_mut() = axum::http::StatusCode::NO_CONTENT;
        return ended;
    }
    response
}

/// `studio mcp`: one MCP session over stdin/stdout until stdin closes, then shuts the studio
/// state down (pending approvals are denied, running calls aborted, mounted MCP servers
/// stopped). With `approve_with`, approvals go to that running studio's page
/// (`--approve-with`), else to the client by elicitation.
///
/// Tools mounted from the configured MCP servers are served too (a gateway: each still asks
/// for approval unless its server is trusted); the caller waits for those servers to settle
/// first (see [`super::mcp_servers::GATEWAY_SETTLE_TIMEOUT`]) so the first `tools/list` has them.
pub async fn serve_stdio_session(
    state: &Arc<StudioState>,
    approve_with: Option<RemoteApprovals>,
) -> Result<(), ServeError> {
    let server = match approve_with {
        Some(remote) => server_with_desk(state, ApprovalDesk::new(remote, || true)),
        None => mcp_server(state),
    };
    let served = serve_stdio(&server).await;
    state.runs.cancel_all();
    state.approvals.close();
    state.mcp_servers.shutdown().await;
    state.registry.shutdown();
    state.stopping.cancel();
    served
}
