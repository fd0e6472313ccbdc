//! A small notes registry, an rmcp test client and both transports.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::Notify;
use tool_context::{ApprovalQueue, ReadOnlyOrDirectLocal, Tool, ToolInvocation, ToolRegistry};
use tool_context_mcp::{ApprovalDesk, McpToolServer, serve_transport, streamable_http_service};
use tool_protocol::ToolCallError;

#[derive(Deserialize, JsonSchema)]
pub struct ReadInput {
    pub name: String,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    pub name: String,
    pub text: String,
    pub revision: u64,
    pub kind: Kind,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Plain,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WriteInput {
    #[schemars(length(min = 1))]
    pub name: String,
    pub text: String,
    pub expected_revision: u64,
}

#[derive(Deserialize, JsonSchema)]
pub struct NoInput {}

/// The shared state the tools touch.
#[derive(Default)]
pub struct Notes {
    pub revision: AtomicU64,
    pub text: Mutex<String>,
    pub slow_started: Notify,
    pub slow_cancelled: AtomicBool,
    pub slow_cancel_seen: Notify,
}

pub fn registry(notes: &Arc<Notes>) -> ToolRegistry {
    let read = {
        let notes = notes.clone();
        Tool::typed(
            "notes.read",
            "Reads the note.",
            move |input: ReadInput, _call: ToolInvocation| {
                let notes = notes.clone();
                async move {
                    let text = notes.text.lock().unwrap().clone();
                    Ok::<_, ToolCallError>(Note {
                        name: input.name,
                        text,
                        revision: notes.revision.load(Ordering::SeqCst),
                        kind: Kind::Plain,
                    })
                }
            },
        )
        .read_only()
    };
    let write = {
        let notes = notes.clone();
        Tool::typed(
            "notes.write",
            "Writes the note.",
            move |input: WriteInput, _call: ToolInvocation| {
                let notes = notes.clone();
                async move {
                    let current = notes.revision.load(Ordering::SeqCst);
                    if current != input.expected_revision {
                        return Err(ToolCallError::new("NOTES_REVISION_CONFLICT", "The note moved on.")
                        .with_retryable(true)
                        .with_details(json!({"expectedRevision": input.expected_revision, "currentRevision": current})));
                    }
                    *notes.text.lock().unwrap() = input.text;
                    notes.revision.fetch_add(1, Ordering::SeqCst);
                    Ok(json!({"revision": current + 1}))
                }
            },
        )
    };
    let delete = {
        let notes = notes.clone();
        Tool::typed(
            "notes.delete",
            "Deletes the note.",
            move |_input: NoInput, _call: ToolInvocation| {
                let notes = notes.clone();
                async move {
                    notes.text.lock().unwrap().clear();
                    Ok::<_, ToolCallError>(())
                }
            },
        )
        .destructive()
    };
    let slow = {
        let notes = notes.clone();
        Tool::typed(
            "notes.slow",
            "Waits until cancelled.",
            move |_input: NoInput, call: ToolInvocation| {
                let notes = notes.clone();
                async move {
                    notes.slow_started.notify_one();
                    call.cancellation.cancelled().await;
                    notes.slow_cancelled.store(true, Ordering::SeqCst);
                    notes.slow_cancel_seen.notify_one();
                    Ok::<_, ToolCallError>(())
                }
            },
        )
        .read_only()
    };
    let whoami = Tool::typed(
        "session.whoami",
        "Reports the call context.",
        |_input: NoInput, call: ToolInvocation| async move {
            Ok::<_, ToolCallError>(json!({
                "sessionId": call.context.session_id,
                "source": call.context.source.map(|source| source.as_str()),
            }))
        },
    )
    .read_only();
    ToolRegistry::builder()
        .tools([read, write, delete, slow, whoami])
        .policy(ReadOnlyOrDirectLocal)
        // A registry-level approver that nobody answers: MCP calls must never fall back to it.
        .interaction(ApprovalQueue::new())
        .build()
        .unwrap()
}

/// How the test client answers elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The client does not declare elicitation.
    Unsupported,
    /// Accept with `{}` (the confirmation form has no field).
    Approve,
    /// Decline.
    Decline,
    /// Never answer; record when the server withdraws the prompt.
    Wait,
}

#[derive(Clone)]
pub struct TestClient {
    pub answer: Answer,
    pub elicitations: Arc<Mutex<Vec<String>>>,
    pub progress: Arc<Mutex<Vec<String>>>,
    /// The progress notes received when each elicitation arrived.
    pub progress_when_asked: Arc<Mutex<Vec<Vec<String>>>>,
    pub withdrawn: Arc<Notify>,
    pub list_changed: Arc<Notify>,
}

impl TestClient {
    pub fn new(answer: Answer) -> Self {
        Self {
            answer,
            elicitations: Arc::default(),
            progress: Arc::default(),
            progress_when_asked: Arc::default(),
            withdrawn: Arc::default(),
            list_changed: Arc::default(),
        }
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = match self.answer {
            Answer::Unsupported => ClientCapabilities::default(),
            _ => ClientCapabilities::builder().enable_elicitation().build(),
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("tool-context-mcp-tests", "0.0.0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.elicitations.lock().unwrap().push(message.clone());
        }
        let received = self.progress.lock().unwrap().clone();
        self.progress_when_asked.lock().unwrap().push(received);
        if self.answer == Answer::Wait {
            context.ct.cancelled().await;
            self.withdrawn.notify_one();
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        }
        Ok(match self.answer {
            Answer::Approve => {
                let mut result = ElicitResult::new(ElicitationAction::Accept);
                result.content = Some(json!({}));
                result
            }
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }
}

/// Which transport a test runs over.
#[derive(Clone, Copy, Debug)]
pub enum Transport {
    /// Newline-delimited JSON-RPC over a byte stream (what stdio carries).
    Stream,
    /// Streamable HTTP on a loopback port.
    Http,
}

pub const TRANSPORTS: [Transport; 2] = [Transport::Stream, Transport::Http];

pub type Client = RunningService<RoleClient, TestClient>;

/// Connects `client` to `server` over `transport`.
pub async fn connect(transport: Transport, server: &McpToolServer, client: TestClient) -> Client {
    match transport {
        Transport::Stream => {
            let (client_io, server_io) = tokio::io::duplex(64 * 1024);
            let server = server.clone();
            tokio::spawn(async move {
                let (read, write) = tokio::io::split(server_io);
                let _ = serve_transport(&server, (read, write)).await;
            });
            let (read, write) = tokio::io::split(client_io);
            client.serve((read, write)).await.unwrap()
        }
        Transport::Http => {
            let url = http_server(server).await;
            let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
            client.serve(transport).await.unwrap()
        }
    }
}

/// Serves `server` at `http://127.0.0.1:<port>/mcp`; returns that URL.
pub async fn http_server(server: &McpToolServer) -> String {
    let service = streamable_http_service(server, StreamableHttpServerConfig::default());
    serve_http(service).await
}

/// [`http_server`] whose unused sessions close after `idle`.
pub async fn http_server_with_idle_timeout(
    server: &McpToolServer,
    idle: std::time::Duration,
) -> String {
    let service = tool_context_mcp::streamable_http_service_with_idle_timeout(
        server,
        StreamableHttpServerConfig::default(),
        idle,
    );
    serve_http(service).await
}

async fn serve_http(
    service: rmcp::transport::StreamableHttpService<
        McpToolServer,
        tool_context_mcp::ActiveSessions,
    >,
) -> String {
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/mcp")
}

/// A desk over `queue` that is attended while `attended` is true.
pub fn desk(queue: &ApprovalQueue, attended: &Arc<AtomicBool>) -> ApprovalDesk {
    let attended = attended.clone();
    ApprovalDesk::new(queue.clone(), move || attended.load(Ordering::SeqCst))
}
