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
//! `/mcp` sits behind the studio's Host/Origin guard and needs the per-launch token in the
//! `x-studio-token` header on every request, reads included (the SSE stream of a session
//! carries approval prompts and results).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tool_context_mcp::rmcp::transport::StreamableHttpServerConfig;
use tool_context_mcp::{
    ApprovalDesk, McpToolServer, ServeError, serve_stdio, streamable_http_service,
};

use super::StudioState;
use super::security::SecurityPolicy;
use crate::catalog::SAFE_ARGUMENT_NAMES;

/// Path of the streamable HTTP endpoint.
pub const MCP_PATH: &str = "/mcp";
/// How often the HTTP endpoint checks whether the studio is shutting down (open MCP event
/// streams are closed then, so the server can stop).
pub const SHUTDOWN_POLL_INTERVAL: Duration = Duration::from_millis(200);
/// Name reported to MCP clients in `initialize`.
pub const MCP_SERVER_NAME: &str = "live-code-studio";

const INSTRUCTIONS: &str = "Live Code Studio workspace tools. Read with workspace.readFile / \
workspace.listFiles / workspace.getStatus; mutations take the expectedRevision you last read and \
need a person's approval (studio page, or this client's elicitation prompt).";

/// The studio's MCP server over `state`'s registry: approvals go to the studio's queue while a
/// browser page is attached.
pub fn mcp_server(state: &Arc<StudioState>) -> McpToolServer {
    let viewers = state.pages.clone();
    let desk = ApprovalDesk::new(state.approvals.clone(), move || viewers.count() > 0);
    McpToolServer::new(state.registry.clone())
        .with_approval_desk(desk)
        .with_safe_argument_names(SAFE_ARGUMENT_NAMES.iter().copied())
        .with_implementation(MCP_SERVER_NAME, env!("CARGO_PKG_VERSION"))
        .with_instructions(INSTRUCTIONS)
}

/// `/mcp`: the streamable HTTP transport behind the token check (the studio's guard, applied
/// by the caller, checks Host and Origin first).
pub fn router(state: &Arc<StudioState>) -> Router {
    let stop = CancellationToken::new();
    close_on_shutdown(state, stop.clone());
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop);
    let service = streamable_http_service(&mcp_server(state), config);
    Router::new()
        .nest_service(MCP_PATH, service)
        .layer(middleware::from_fn_with_state(
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
        Ok(()) => next.run(request).await,
        Err(_) => {
            let body = json!({"error": {
                "code": "STUDIO_TOKEN_REQUIRED",
                "message": "MCP requests need the studio's per-launch token in the x-studio-token header.",
                "retryable": false
            }});
            (StatusCode::FORBIDDEN, axum::Json(body)).into_response()
        }
    }
}

/// `studio mcp`: one MCP session over stdin/stdout until stdin closes, then shuts the studio
/// state down (pending approvals are denied, running calls aborted).
pub async fn serve_stdio_session(state: &Arc<StudioState>) -> Result<(), ServeError> {
    let served = serve_stdio(&mcp_server(state)).await;
    state.runs.cancel_all();
    state.approvals.close();
    state.registry.shutdown();
    served
}
