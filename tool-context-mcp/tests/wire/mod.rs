//! A 2026-07-28 client on the wire, shared by the protocol and OAuth tests.

use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use serde_json::{Value, json};

pub const VERSION: &str = "2026-07-28";

/// Serves `server` over streamable HTTP at `/mcp` on a free loopback port; its URL.
#[allow(dead_code)]
pub async fn serve(server: &tool_context_mcp::McpToolServer) -> String {
    let config = rmcp::transport::StreamableHttpServerConfig::default();
    let service = tool_context_mcp::streamable_http_service(server, config);
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/mcp")
}

/// A 2026-07-28 client speaking raw JSON-RPC: every request self-contained, no session.
pub struct Wire {
    http: reqwest::Client,
    pub url: String,
    capabilities: Value,
    next_id: AtomicU64,
    bearer: Option<String>,
}

impl Wire {
    pub fn new(url: &str, capabilities: Value) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: url.to_owned(),
            capabilities,
            next_id: AtomicU64::new(1),
            bearer: None,
        }
    }

    /// The same client sending `Authorization: Bearer <token>` on every request.
    #[allow(dead_code)]
    pub fn with_bearer(mut self, token: &str) -> Self {
        self.bearer = Some(token.to_owned());
        self
    }

    /// Sends `method` and returns the JSON-RPC response object (with `result` or `error`).
    /// The request's `_meta` gets the revision's entries beside any the caller put there.
    pub async fn send(&self, method: &str, mut params: Value) -> Value {
        let meta = &mut params["_meta"];
        if !meta.is_object() {
            *meta = json!({});
        }
        meta["io.modelcontextprotocol/protocolVersion"] = json!(VERSION);
        meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "wire-test", "version": "0"});
        meta["io.modelcontextprotocol/clientCapabilities"] = self.capabilities.clone();
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let mut request = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", VERSION)
            .header("Mcp-Method", method);
        let name = params
            .get("name")
            .or(params.get("taskId"))
            .or(params.get("uri"))
            .and_then(Value::as_str);
        if let Some(name) = name {
            request = request.header("Mcp-Name", name);
        }
        if let Some(token) = &self.bearer {
            request = request.bearer_auth(token);
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = request.json(&body).send().await.unwrap();
        assert!(
            response.headers().get("mcp-session-id").is_none(),
            "2026-07-28 is sessionless"
        );
        let text = response.text().await.unwrap();
        response_with_id(&text, id).unwrap_or_else(|| panic!("no response to {method}: {text}"))
    }

    pub async fn result(&self, method: &str, params: Value) -> Value {
        let response = self.send(method, params).await;
        response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{method} failed: {response}"))
    }

    #[allow(dead_code)]
    pub async fn error_code(&self, method: &str, params: Value) -> String {
        let response = self.send(method, params).await;
        response["error"]["data"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} did not fail with a coded error: {response}"))
            .to_owned()
    }
}

/// The JSON-RPC message with `id` in a JSON body or an SSE stream.
pub fn response_with_id(text: &str, id: u64) -> Option<Value> {
    let messages: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(message) => vec![message],
        Err(_) => text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect(),
    };
    messages
        .into_iter()
        .find(|message| message["id"] == json!(id))
}

/// Capabilities of a client that answers forms (so approvals are asked of it).
#[allow(dead_code)]
pub fn elicitation_client() -> Value {
    json!({"elicitation": {"form": {}}})
}

/// Capabilities of a client that also takes tasks.
#[allow(dead_code)]
pub fn task_client() -> Value {
    json!({"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// `call` again with the sealed `state` and the approval answered `action`.
#[allow(dead_code)]
pub fn retry(call: &Value, state: &Value, action: &str) -> Value {
    let mut retry = call.clone();
    retry["requestState"] = state.clone();
    retry["inputResponses"] = json!({"approval": {"action": action, "content": {}}});
    retry
}

/// Polls `tasks/get` until the task is no longer `working` (bounded); its last view.
#[allow(dead_code)]
pub async fn poll_until_terminal(wire: &Wire, task_id: &str) -> Value {
    for _ in 0..200 {
        let task = wire.result("tasks/get", json!({"taskId": task_id})).await;
        if task["status"] != "working" {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {task_id} never ended");
}
