//! A loopback chat-completions endpoint for the MCP-server, quick-start and streaming tests: its
//! first turn calls the offered tool whose provider name contains `echo` (or another fragment)
//! with `{"text": <text>}` (or a [`Script`]'s arguments), its second answers `reply` in plain
//! text. Every request it got is kept for the test to read.
//!
//! A script with `stream_delay` answers a `stream: true` request as server-sent events the
//! OpenAI way (`delta.content` pieces; the tool call's id and name first, then its argument
//! text in pieces; `[DONE]`), one chunk every `stream_delay`, so a test can watch it grow.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

/// What the fake answers.
#[derive(Clone)]
pub struct Script {
    /// A fragment of the provider name of the tool its first turn calls.
    pub tool: &'static str,
    /// The call's arguments.
    pub arguments: Value,
    /// The second turn's text.
    pub reply: String,
    /// Streams (when asked to) with this pause between chunks.
    pub stream_delay: Option<Duration>,
    /// Characters of text or argument per chunk.
    pub chunk_chars: usize,
    /// A second call, made by the turn after the reply (a follow-up run's first turn), then
    /// the reply again: `(tool fragment, arguments)`.
    pub follow_up: Option<(&'static str, Value)>,
}

impl Script {
    /// Calls the `tool` with `arguments`, then answers `reply`; not streamed.
    pub fn new(tool: &'static str, arguments: Value, reply: &str) -> Self {
        Self {
            tool,
            arguments,
            reply: reply.to_owned(),
            stream_delay: None,
            chunk_chars: 8,
            follow_up: None,
        }
    }

    /// After the reply, calls `tool` with `arguments` once more (then replies again).
    pub fn then_calling(mut self, tool: &'static str, arguments: Value) -> Self {
        self.follow_up = Some((tool, arguments));
        self
    }

    /// Streams `chunk_chars` characters every `delay`.
    pub fn streamed(mut self, delay: Duration, chunk_chars: usize) -> Self {
        self.stream_delay = Some(delay);
        self.chunk_chars = chunk_chars.max(1);
        self
    }
}

/// Serves the endpoint; returns its base URL (`http://127.0.0.1:<port>/v1`) and the requests.
pub async fn serve(text: &'static str, reply: &'static str) -> (String, Arc<Mutex<Vec<Value>>>) {
    serve_calling("echo", text, reply).await
}

/// [`serve`] calling the offered tool whose provider name contains `tool` instead.
pub async fn serve_calling(
    tool: &'static str,
    text: &'static str,
    reply: &'static str,
) -> (String, Arc<Mutex<Vec<Value>>>) {
    serve_script(Script::new(tool, json!({ "text": text }), reply)).await
}

/// Serves `script`; returns its base URL (`http://127.0.0.1:<port>/v1`) and the requests.
pub async fn serve_script(script: Script) -> (String, Arc<Mutex<Vec<Value>>>) {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(request): axum::Json<Value>| {
            let turn = {
                let mut seen = seen.lock().unwrap();
                seen.push(request.clone());
                seen.len() - 1
            };
            let script = script.clone();
            async move { respond(&request, turn, &script) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!(
        "http://127.0.0.1:{}/v1",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, requests)
}

fn respond(request: &Value, turn: usize, script: &Script) -> axum::response::Response {
    use axum::response::IntoResponse;
    let message = answer(request, turn, script);
    match script.stream_delay {
        Some(delay) if request["stream"] == true => sse(&message, script.chunk_chars, delay),
        _ => axum::Json(json!({"choices": [{"message": message}]})).into_response(),
    }
}

/// `message` as a stream of `data:` chunks, one every `delay`.
fn sse(message: &Value, chunk_chars: usize, delay: Duration) -> axum::response::Response {
    let mut chunks: Vec<Value> = Vec::new();
    if let Some(text) = message["content"].as_str() {
        chunks.extend(
            pieces(text, chunk_chars)
                .into_iter()
                .map(|piece| json!({"content": piece})),
        );
    }
    for (index, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let function = &call["function"];
        chunks.push(
            json!({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
            "function": {"name": function["name"], "arguments": ""}}]}),
        );
        let arguments = function["arguments"].as_str().unwrap_or_default();
        chunks.extend(pieces(arguments, chunk_chars).into_iter().map(
            |piece| json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
        ));
    }
    let finish = if message["tool_calls"].is_array() {
        "tool_calls"
    } else {
        "stop"
    };
    let mut lines: Vec<String> = chunks
        .into_iter()
        .map(|delta| json!({"choices": [{"index": 0, "delta": delta}]}).to_string())
        .collect();
    lines.push(
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        .to_string(),
    );
    lines.push("[DONE]".to_owned());
    let body = futures::stream::iter(lines).then(move |line| async move {
        tokio::time::sleep(delay).await;
        Ok::<_, std::convert::Infallible>(format!("data: {line}\n\n"))
    });
    axum::response::Response::builder()
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from_stream(body))
        .unwrap()
}

fn pieces(text: &str, chars: usize) -> Vec<String> {
    let characters: Vec<char> = text.chars().collect();
    characters
        .chunks(chars)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

/// The assistant message of `turn`: the call, the reply, then the follow-up call and the
/// reply again when there is one.
fn answer(request: &Value, turn: usize, script: &Script) -> Value {
    match (turn, &script.follow_up) {
        (0, _) => call(request, script.tool, &script.arguments, "call-echo"),
        (2, Some((tool, arguments))) => call(request, tool, arguments, "call-echo-2"),
        _ => json!({"role": "assistant", "content": script.reply}),
    }
}

fn call(request: &Value, fragment: &str, arguments: &Value, id: &str) -> Value {
    let tool = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .find(|name| name.contains(fragment))
        .expect("the tool to call is offered");
    let call = json!({"id": id, "type": "function",
        "function": {"name": tool, "arguments": arguments.to_string()}});
    json!({"role": "assistant", "content": null, "tool_calls": [call]})
}
