//! Reaching a server: spawning its process or opening its HTTP endpoint, then the handshake on
//! either revision (`server/discover` for 2026-07-28, falling back to `initialize` for
//! 2025-11-25), all under one connect timeout.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};
use tokio::sync::Notify;
use tool_context::questions::QuestionAnswer;

use super::config::{MASK, McpServerConfig, McpTransportConfig, ProtocolRevision};
use super::environment;
use super::limits::ClientLimits;
use super::line_cap::LineCap;
use super::link::InFlight;

/// Lines of a server's stderr kept for its failure reason.
const STDERR_LINES: usize = 8;
/// Characters of one stderr line kept.
const STDERR_LINE_CHARS: usize = 300;

/// What we tell servers about ourselves: elicitation (form) only where a person answers
/// questions. The version is the one `initialize` asks for (only 2025-11-25 servers are
/// initialized; 2026-07-28 ones are discovered).
fn client_info(answers_questions: bool) -> ClientConfig {
    let capabilities = if answers_questions {
        ClientCapabilities::builder().enable_elicitation().build()
    } else {
        ClientCapabilities::default()
    };
    ClientConfig::new(
        capabilities,
        Implementation::new("tool-context-mcp", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

/// Our side of one connection: it passes `notifications/tools/list_changed` to the server's
/// supervisor and puts a form elicitation to the person as the question of the call in flight
/// ([`InFlight::ask_for_the_only_call`]); one nobody can answer (no person here, several
/// calls in flight, a URL elicitation) is declined and noted on the calls in flight, so their
/// results say so.
#[derive(Clone)]
pub(crate) struct ClientSide {
    pub(crate) list_changed: Arc<Notify>,
    pub(crate) in_flight: Arc<InFlight>,
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        client_info(self.in_flight.answers_questions())
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match &request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(requested_schema).unwrap_or_default();
                if let Some(answer) = self.in_flight.ask_for_the_only_call(message, schema).await {
                    return Ok(elicit_result(answer));
                }
                message.as_str()
            }
            ElicitRequestParams::UrlElicitationParams { message, .. } => message.as_str(),
            _ => "a request for input",
        };
        self.in_flight.note_declined(message);
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }
}

/// A person's answer as the server reads it.
pub(crate) fn elicit_result(answer: QuestionAnswer) -> ElicitResult {
    match answer {
        QuestionAnswer::Accept(values) => {
            ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(values))
        }
        QuestionAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
        QuestionAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

/// A connected server: the running service, plus the child process for stdio (killed when
/// this is dropped).
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, ClientSide>,
    pub(crate) child: Option<Child>,
}

/// The last lines a child process wrote to stderr, secrets masked.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    /// The kept lines, or `None` when the server wrote nothing.
    pub(crate) fn text(&self) -> Option<String> {
        let lines = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        (!lines.is_empty()).then(|| lines.iter().cloned().collect::<Vec<_>>().join(" | "))
    }

    fn follow(&self, stderr: ChildStderr, secrets: Vec<String>) {
        let tail = self.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut line: String = line.chars().take(STDERR_LINE_CHARS).collect();
                for secret in &secrets {
                    line = line.replace(secret.as_str(), MASK);
                }
                let mut kept = tail.0.lock().unwrap_or_else(|poison| poison.into_inner());
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
    }
}

/// Connects to `config`'s server and completes the handshake, within the connect timeout.
pub(crate) async fn connect(
    config: &McpServerConfig,
    limits: &ClientLimits,
    side: ClientSide,
    stderr: &StderrTail,
) -> Result<Connection, String> {
    let lifecycle = match config.protocol_version {
        None => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        },
        Some(ProtocolRevision::V2025_11_25) => ClientLifecycleMode::Initialize,
        Some(ProtocolRevision::V2026_07_28) => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    let connecting = async {
        match &config.transport {
            McpTransportConfig::Stdio { .. } => {
                let (mut child, transport) = spawn(config, limits, stderr)?;
                let service = side
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|error| handshake_failed(&error, stderr))?;
                // The pipes live in the transport; the handle only kills the process.
                child.stdin.take();
                Ok(Connection {
                    service,
                    child: Some(child),
                })
            }
            McpTransportConfig::Http { url, headers } => {
                let transport = http_transport(url, headers, limits)?;
                let service = side
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|error| handshake_failed(&error, stderr))?;
                Ok(Connection {
                    service,
                    child: None,
                })
            }
        }
    };
    tokio::time::timeout(limits.connect_timeout, connecting)
        .await
        .unwrap_or_else(|_| {
            Err(with_stderr(
                format!(
                    "no answer to the handshake within {} ms",
                    limits.connect_timeout.as_millis()
                ),
                stderr,
            ))
        })
}

type ChildTransport =
    AsyncRwTransport<RoleClient, LineCap<tokio::process::ChildStdout>, tokio::process::ChildStdin>;

fn spawn(
    config: &McpServerConfig,
    limits: &ClientLimits,
    stderr: &StderrTail,
) -> Result<(Child, ChildTransport), String> {
    let McpTransportConfig::Stdio {
        command,
        args,
        env,
        cwd,
    } = &config.transport
    else {
        unreachable!("spawn is called for stdio servers only");
    };
    let mut process = Command::new(command);
    environment::apply(&mut process, env);
    process
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        process.current_dir(cwd);
    }
    let mut child = process
        .spawn()
        .map_err(|error| format!("could not start {command:?}: {error}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(format!("{command:?} started without its stdio pipes"));
    };
    if let Some(errors) = child.stderr.take() {
        let secrets = env
            .values()
            .filter(|value| value.len() >= 4)
            .cloned()
            .collect();
        stderr.follow(errors, secrets);
    }
    // rmcp's own cap sits a little above ours, so every line over our limit gets an answer
    // from `LineCap` and rmcp drops it (a line just at our limit still reads normally).
    let stdout = LineCap::new(stdout, limits.max_message_bytes);
    let transport = AsyncRwTransport::new_client(stdout, stdin)
        .with_max_line_length(limits.max_message_bytes.saturating_add(64));
    Ok((child, transport))
}

fn http_transport(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    limits: &ClientLimits,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let mut defaults = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header {name:?} is not a valid header name"))?;
        let mut value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header {name} is not valid header text"))?;
        value.set_sensitive(true);
        defaults.insert(name, value);
    }
    let client = reqwest::Client::builder()
        .default_headers(defaults)
        .connect_timeout(limits.connect_timeout)
        // A reused idle connection waits ~40 ms on the server's delayed ACK when a response
        // comes in pieces (servers without TCP_NODELAY): one connection per request instead.
        .pool_max_idle_per_host(0)
        .redirect(same_origin_redirects())
        .build()
        .map_err(|error| format!("could not build the HTTP client: {error}"))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .max_sse_event_size(limits.max_message_bytes)
        .max_json_response_size(limits.max_message_bytes);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// Redirects a request may follow: 307 and 308 within the same origin, at most
/// [`MAX_REDIRECTS`]. A 301/302/303 would turn the POST into a bodyless GET, and another origin
/// would receive the configured headers (a token, an API key): both stop at the redirect.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// The most redirects one request follows.
const MAX_REDIRECTS: usize = 5;

fn handshake_failed(error: &impl std::fmt::Display, stderr: &StderrTail) -> String {
    let text: String = error.to_string().chars().take(500).collect();
    with_stderr(format!("the handshake failed: {text}"), stderr)
}

fn with_stderr(reason: String, stderr: &StderrTail) -> String {
    match stderr.text() {
        Some(tail) => format!("{reason} (stderr: {tail})"),
        None => reason,
    }
}
