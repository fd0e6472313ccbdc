//! The response-dropping proxy between the clients and the balancer: it forwards every request,
//! reads the whole answer and, when the nemesis armed it, cuts the client's connection instead
//! of answering. The host committed; the client never hears. What it swallowed is written to
//! `dropped.jsonl`, so the checker can compare the lost first answer with the replays.
//!
//! The `key-ignored` mutant is applied here too: the proxy deletes the idempotency key from
//! every `tools/call` before forwarding it, which is exactly a server that ignores the key.

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::client::KEY_META;
use crate::history::now_ms;

/// One swallowed answer.
#[derive(Debug, Serialize, Deserialize)]
pub struct DroppedAnswer {
    /// When (unix ms).
    pub time_ms: u64,
    /// The call's idempotency key as the client sent it.
    pub key: String,
    /// The HTTP status the balancer answered with.
    pub status: u16,
    /// The body the client never received (JSON or an SSE stream).
    pub body: String,
}

/// Headers an MCP request carries that the hosts read.
const FORWARDED: [&str; 6] = [
    "content-type",
    "accept",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-session-id",
];

struct Shared {
    upstream: String,
    http: reqwest::Client,
    armed: AtomicU32,
    dropped: AtomicU32,
    strip_key: bool,
    log: Mutex<std::fs::File>,
}

/// A running proxy; stops with the campaign's runtime.
#[derive(Clone)]
pub struct DropProxy {
    shared: Arc<Shared>,
    addr: SocketAddr,
}

impl DropProxy {
    /// Listens on a free loopback port and forwards to `upstream`, logging to `log`.
    pub async fn start(
        upstream: String,
        log: &std::path::Path,
        strip_key: bool,
    ) -> Result<Self, String> {
        let file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let shared = Arc::new(Shared {
            upstream,
            http: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(60))
                .build()
                .map_err(|e| e.to_string())?,
            armed: AtomicU32::new(0),
            dropped: AtomicU32::new(0),
            strip_key,
            log: Mutex::new(file),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(Arc::clone(&shared));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(Self { shared, addr })
    }

    /// The URL clients send to.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The next `tools/call` answer is swallowed.
    pub fn arm(&self) {
        self.shared.armed.fetch_add(1, Ordering::SeqCst);
    }

    /// Answers swallowed so far.
    pub fn dropped(&self) -> u32 {
        self.shared.dropped.load(Ordering::SeqCst)
    }
}

async fn forward(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let mut request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let is_call = request["method"] == "tools/call";
    let key = request["params"]["_meta"][KEY_META]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let body = if shared.strip_key && is_call {
        if let Some(meta) = request["params"]["_meta"].as_object_mut() {
            meta.remove(KEY_META);
        }
        Bytes::from(serde_json::to_vec(&request).unwrap_or_default())
    } else {
        body
    };
    let mut upstream = shared.http.post(&shared.upstream).body(body);
    for name in FORWARDED {
        if let Some(value) = headers.get(name) {
            upstream = upstream.header(name, value);
        }
    }
    let Ok(answer) = upstream.send().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let status = answer.status();
    let content_type = answer.headers().get(header::CONTENT_TYPE).cloned();
    let Ok(bytes) = answer.bytes().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    if is_call && take_armed(&shared.armed) {
        shared.dropped.fetch_add(1, Ordering::SeqCst);
        record(&shared, key, status.as_u16(), &bytes);
        return cut_connection();
    }
    let mut response = (status, bytes).into_response();
    if let Some(content_type) = content_type {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, content_type);
    }
    response
}

fn take_armed(armed: &AtomicU32) -> bool {
    armed
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

fn record(shared: &Shared, key: String, status: u16, bytes: &[u8]) {
    let line = DroppedAnswer {
        time_ms: now_ms(),
        key,
        status,
        body: String::from_utf8_lossy(bytes).into_owned(),
    };
    if let (Ok(text), Ok(mut file)) = (serde_json::to_string(&line), shared.log.lock()) {
        let _ = writeln!(file, "{text}");
    }
}

/// A response whose body fails at once: the server closes the connection without an answer.
fn cut_connection() -> Response {
    let failing = futures::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::other("response dropped by the nemesis"))
    });
    Response::new(Body::from_stream(failing))
}

/// Reads `dropped.jsonl`.
pub fn read_dropped(path: &std::path::Path) -> Result<Vec<DroppedAnswer>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).map_err(|e| format!("dropped.jsonl: {e}")))
        .collect()
}
