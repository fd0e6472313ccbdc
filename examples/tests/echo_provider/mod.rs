//! A loopback chat-completions endpoint for the MCP-server and quick-start tests: its first turn
//! calls the offered tool whose provider name contains `echo` (or another fragment) with
//! `{"text": <text>}`, its second answers `reply` in plain text. Every request it got is kept for the test to read.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

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
            async move { axum::Json(answer(&request, turn, tool, text, reply)) }
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

fn answer(request: &Value, turn: usize, tool: &str, text: &str, reply: &str) -> Value {
    if turn > 0 {
        let message = json!({"role": "assistant", "content": reply});
        return json!({"choices": [{"message": message}]});
    }
    let echo = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .find(|name| name.contains(tool))
        .expect("the tool to call is offered");
    let arguments = json!({ "text": text }).to_string();
    let call = json!({"id": "call-echo", "type": "function",
        "function": {"name": echo, "arguments": arguments}});
    let message = json!({"role": "assistant", "content": null, "tool_calls": [call]});
    json!({"choices": [{"message": message}]})
}
