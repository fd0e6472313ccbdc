//! A scripted fake OpenRouter server on loopback and a fake tool executor.
#![allow(dead_code, missing_docs)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use openrouter_tool_loop::{OpenRouterClient, OpenRouterConfig, RetryPolicy, ToolExecutor};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tool_protocol::export::{OpenAiExportOptions, OpenAiToolNames, to_openai_tool_definitions};
use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallError, ToolCallResult, ToolDefinition,
};

/// The key the tests configure; the fake checks it arrives as a bearer header.
pub const TEST_KEY: &str = "test-key-not-a-secret";

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A JSON body with a status.
    Json(u16, Value),
    /// A raw body with a status, content type and extra headers.
    Raw {
        status: u16,
        content_type: &'static str,
        body: String,
        headers: Vec<(&'static str, String)>,
    },
    /// Never answers within the test's timeouts.
    Hang,
    /// A `text/event-stream` body sent chunk by chunk, `gap` apart; with `then_hang`, the
    /// body stays open (silent) after the last chunk.
    Stream {
        chunks: Vec<String>,
        gap: Duration,
        then_hang: bool,
    },
}

impl Reply {
    pub fn status(status: u16, body: Value) -> Self {
        Self::Json(status, body)
    }

    pub fn text(content: &str) -> Self {
        Self::Json(
            200,
            json!({"choices": [{"message": {"role": "assistant", "content": content}}]}),
        )
    }

    /// An assistant message with tool calls `(id, provider name, arguments text)`.
    pub fn calls(calls: &[(&str, &str, &str)]) -> Self {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, arguments)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}))
            .collect();
        Self::Json(
            200,
            json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": calls}}]}),
        )
    }

    pub fn rate_limited(retry_after: Option<&str>) -> Self {
        Self::Raw {
            status: 429,
            content_type: "application/json",
            body: json!({"error": {"code": 429, "message": "Rate limit exceeded"}}).to_string(),
            headers: retry_after
                .map(|value| vec![("retry-after", value.to_owned())])
                .unwrap_or_default(),
        }
    }

    /// Server-sent events, one `data:` payload per chunk (`[DONE]` appended), sent at once.
    pub fn sse(payloads: &[Value]) -> Self {
        let mut chunks: Vec<String> = payloads
            .iter()
            .map(|payload| format!("data: {payload}\n\n"))
            .collect();
        chunks.push("data: [DONE]\n\n".into());
        Self::Stream {
            chunks,
            gap: Duration::ZERO,
            then_hang: false,
        }
    }

    /// Raw chunks, `gap` apart.
    pub fn chunks(chunks: Vec<String>, gap: Duration, then_hang: bool) -> Self {
        Self::Stream {
            chunks,
            gap,
            then_hang,
        }
    }

    pub fn raw(status: u16, content_type: &'static str, body: &str) -> Self {
        Self::Raw {
            status,
            content_type,
            body: body.to_owned(),
            headers: Vec::new(),
        }
    }
}

/// A request the fake received.
#[derive(Clone, Debug)]
pub struct Received {
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Default)]
struct FakeState {
    script: VecDeque<Reply>,
    received: Vec<Received>,
    /// Ollama's `/api/show` answers by model name (`capabilities` and all), outside the script.
    shows: std::collections::HashMap<String, Value>,
    show_requests: Vec<String>,
}

/// The fake server.
#[derive(Clone)]
pub struct FakeOpenRouter {
    state: Arc<Mutex<FakeState>>,
    /// Notified (one permit) whenever a `Hang` reply starts hanging.
    pub hanging: Arc<Notify>,
    pub base: String,
}

impl FakeOpenRouter {
    pub async fn start(script: Vec<Reply>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let fake = Self {
            state: Arc::new(Mutex::new(FakeState {
                script: script.into(),
                ..FakeState::default()
            })),
            hanging: Arc::new(Notify::new()),
            base,
        };
        let app = Router::new()
            .route("/api/v1/chat/completions", post(answer))
            .route("/api/v1/models", get(answer_get))
            .route("/v1/chat/completions", post(answer))
            .route("/v1/models", get(answer_get))
            .route("/api/show", post(answer_show))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        fake
    }

    pub fn chat_url(&self) -> String {
        format!("{}/api/v1/chat/completions", self.base)
    }

    pub fn models_url(&self) -> String {
        format!("{}/api/v1/models", self.base)
    }

    /// A client with fast retries (1 ms base, 20 ms cap) and a 2 s timeout.
    pub fn client(&self) -> OpenRouterClient {
        OpenRouterClient::new(self.config()).unwrap()
    }

    pub fn config(&self) -> OpenRouterConfig {
        OpenRouterConfig::new(openrouter_tool_loop::ApiKey::new(TEST_KEY))
            .with_endpoint(self.chat_url())
            .with_models_endpoint(self.models_url())
            .with_request_timeout(Duration::from_secs(2))
            .with_retry(RetryPolicy {
                max_retries: 2,
                base_delay: Duration::from_millis(1),
                max_delay: Duration::from_millis(20),
            })
    }

    /// The base URL of a local server's OpenAI-compatible API (`{base}/v1`).
    pub fn local_base(&self) -> String {
        format!("{}/v1", self.base)
    }

    /// A profile's client at `{base}/v1` with fast retries and a 2 s timeout.
    pub fn profile_client(
        &self,
        profile: openrouter_tool_loop::ProviderProfile,
        key: &str,
    ) -> OpenRouterClient {
        let config = OpenRouterConfig::for_provider(
            profile,
            self.local_base(),
            openrouter_tool_loop::ApiKey::new(key),
        )
        .with_model("local-model")
        .with_request_timeout(Duration::from_secs(2))
        .with_retry(RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(20),
        });
        OpenRouterClient::new(config).unwrap()
    }

    /// Sets Ollama's `/api/show` answer for a model.
    pub fn set_show(&self, model: &str, body: Value) {
        self.state.lock().unwrap().shows.insert(model.into(), body);
    }

    /// The model names `/api/show` was asked about, sorted.
    pub fn show_requests(&self) -> Vec<String> {
        let mut names = self.state.lock().unwrap().show_requests.clone();
        names.sort();
        names
    }

    pub fn requests(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }

    pub fn request_count(&self) -> usize {
        self.state.lock().unwrap().received.len()
    }

    pub fn unused_replies(&self) -> usize {
        self.state.lock().unwrap().script.len()
    }
}

async fn answer_get(state: State<FakeOpenRouter>, uri: Uri, headers: HeaderMap) -> Response {
    answer(state, uri, headers, Bytes::new()).await
}

/// Ollama's `POST /api/show {"model"}`: the configured body, or Ollama's 404 for an unknown model.
async fn answer_show(State(fake): State<FakeOpenRouter>, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let model = request["model"].as_str().unwrap_or_default().to_owned();
    let mut state = fake.state.lock().unwrap();
    state.show_requests.push(model.clone());
    match state.shows.get(&model) {
        Some(show) => respond(200, "application/json", show.to_string(), Vec::new()),
        None => respond(
            404,
            "application/json",
            json!({"error": format!("model '{model}' not found")}).to_string(),
            Vec::new(),
        ),
    }
}

async fn answer(
    State(fake): State<FakeOpenRouter>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut state = fake.state.lock().unwrap();
        let body = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body).unwrap()
        };
        state.received.push(Received { uri, headers, body });
        state.script.pop_front()
    };
    match reply {
        Some(Reply::Json(status, body)) => {
            respond(status, "application/json", body.to_string(), Vec::new())
        }
        Some(Reply::Raw {
            status,
            content_type,
            body,
            headers,
        }) => respond(status, content_type, body, headers),
        Some(Reply::Hang) => {
            fake.hanging.notify_one();
            tokio::time::sleep(Duration::from_secs(60)).await;
            respond(200, "application/json", "{}".into(), Vec::new())
        }
        Some(Reply::Stream {
            chunks,
            gap,
            then_hang,
        }) => stream_response(chunks, gap, then_hang),
        None => respond(418, "text/plain", "script exhausted".into(), Vec::new()),
    }
}

fn stream_response(chunks: Vec<String>, gap: Duration, then_hang: bool) -> Response {
    let body = futures::stream::unfold(
        (chunks.into_iter(), true),
        move |(mut rest, first)| async move {
            if !first && !gap.is_zero() {
                tokio::time::sleep(gap).await;
            }
            match rest.next() {
                Some(chunk) => Some((Ok::<_, std::io::Error>(Bytes::from(chunk)), (rest, false))),
                None if then_hang => {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    None
                }
                None => None,
            }
        },
    );
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .unwrap()
}

fn respond(
    status: u16,
    content_type: &str,
    body: String,
    headers: Vec<(&'static str, String)>,
) -> Response {
    let mut response = Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", content_type);
    for (name, value) in headers {
        response = response.header(name, value);
    }
    response.body(Body::from(body)).unwrap()
}

/// Tools of the fake executor.
pub fn definitions() -> Vec<ToolDefinition> {
    let object = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
    vec![
        ToolDefinition::new(
            "math.add",
            "Adds two numbers.",
            object(
                json!({"a": {"type": "number"}, "b": {"type": "number"}}),
                json!(["a", "b"]),
            ),
        ),
        ToolDefinition::new(
            "workspace.readFile",
            "Reads a file.",
            object(json!({"path": {"type": "string"}}), json!(["path"])),
        ),
        ToolDefinition::new(
            "fail.always",
            "Always fails.",
            object(json!({"path": {"type": "string"}}), json!([])),
        ),
        ToolDefinition::new(
            "write.unconfirmed",
            "Applies a change whose preview confirmation fails.",
            object(json!({"path": {"type": "string"}}), json!([])),
        ),
        ToolDefinition::new(
            "bad.result",
            "Returns an invalid result.",
            object(json!({}), json!([])),
        ),
        ToolDefinition::new(
            "slow.wait",
            "Waits until cancelled.",
            object(json!({}), json!([])),
        ),
        ToolDefinition::new("panic.now", "Panics.", object(json!({}), json!([]))),
    ]
}

/// A fake executor that records every call.
#[derive(Default)]
pub struct FakeTools {
    pub calls: Mutex<Vec<(ModelToolCall, ToolCallContext)>>,
    /// Notified (one permit) when `slow.wait` starts.
    pub slow_started: Notify,
}

impl FakeTools {
    pub fn executions(&self) -> usize {
        self.calls.lock().unwrap().len()
    }

    pub fn names(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|(call, _)| call.name.clone())
            .collect()
    }
}

#[async_trait]
impl ToolExecutor for FakeTools {
    async fn list_tools(&self) -> Vec<ToolDefinition> {
        definitions()
    }

    async fn call_tool(
        &self,
        call: ModelToolCall,
        context: ToolCallContext,
        cancel: CancellationToken,
    ) -> ToolCallResult {
        self.calls.lock().unwrap().push((call.clone(), context));
        let arguments = call.arguments.clone().unwrap_or_default();
        match call.name.as_str() {
            "math.add" => {
                let sum =
                    arguments["a"].as_f64().unwrap_or(0.0) + arguments["b"].as_f64().unwrap_or(0.0);
                ToolCallResult::success(json!({"sum": sum}))
            }
            "workspace.readFile" => {
                ToolCallResult::success(json!({"path": arguments["path"], "text": "<h1>hi</h1>"}))
            }
            "fail.always" => ToolCallResult::failure(
                ToolCallError::new("WORKSPACE_FILE_NOT_FOUND", "Workspace file not found: x")
                    .with_retryable(false)
                    .with_details(json!({"path": "x"})),
            ),
            "write.unconfirmed" => ToolCallResult::failure(
                ToolCallError::new(
                    "PREVIEW_ACK_TIMEOUT",
                    "The change was applied as revision 4; only the preview confirmation failed.",
                )
                .with_retryable(true)
                .with_details(json!({"revision": 4, "timeoutMs": 2500, "committed": true})),
            ),
            "bad.result" => ToolCallResult::failure(ToolCallError {
                code: " ".into(),
                ..ToolCallError::new("X", "blank code")
            }),
            "slow.wait" => {
                self.slow_started.notify_one();
                cancel.cancelled().await;
                ToolCallResult::failure(ToolCallError::new("TOOL_CANCELLED", "cancelled"))
            }
            "panic.now" => panic!("the panic.now tool panics"),
            other => panic!("unexpected tool {other}"),
        }
    }
}

/// The provider-facing name of a canonical tool name, from `tool-protocol`'s mapping.
pub fn provider_name(canonical: &str) -> String {
    OpenAiToolNames::new(&definitions())
        .provider_name(canonical)
        .expect("a listed tool")
        .to_owned()
}

/// The OpenAI export of the definitions, as JSON.
pub fn exported_tools(definitions: &[ToolDefinition]) -> Vec<Value> {
    to_openai_tool_definitions(definitions, &OpenAiExportOptions::default())
        .iter()
        .map(|tool| json!(tool))
        .collect()
}
