//! The studio's HTTP API as the API suites call it: a loopback client holding the per-launch
//! token, and readers of the tool results it answers.
//!
//! The API suites share one test binary and each adds helpers of its own (some with the same
//! name and another meaning, such as `get` with or without the token), so each names a marker
//! type and adds its methods to `StudioClient<ItsMarker>`; the methods here serve them all.

use std::marker::PhantomData;

use live_code_studio::host::RunningStudio;
use serde_json::{Value, json};

/// A client of one running studio's API, carrying the helpers of the suite marked `S`.
pub struct StudioClient<S> {
    /// The HTTP client.
    pub http: reqwest::Client,
    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub base: String,
    /// The studio's per-launch token.
    pub token: String,
    suite: PhantomData<S>,
}

impl<S> StudioClient<S> {
    /// A client of `studio`.
    pub fn new(studio: &RunningStudio) -> Self {
        Self {
            http: reqwest::Client::new(),
            base: format!("http://127.0.0.1:{}", studio.addr.port()),
            token: studio.token().to_owned(),
            suite: PhantomData,
        }
    }

    /// `POST`s `body` as JSON with the token, returning the status and the JSON answer
    /// (`null` when the answer is not JSON).
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("x-studio-token", &self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Calls the tool `name` through `POST /api/tools/call`, returning the `ToolCallResult`.
    pub async fn call(&self, name: &str, arguments: Value) -> Value {
        self.post(
            "/api/tools/call",
            json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}}),
        )
        .await
        .1
    }
}

/// The `structuredContent` of a `ToolCallResult` that must have succeeded.
pub fn structured(result: &Value) -> &Value {
    assert!(
        result.get("isError").is_none(),
        "unexpected error: {result}"
    );
    &result["structuredContent"]
}

/// The `error` of a `ToolCallResult` that must have failed.
pub fn error_of(result: &Value) -> &Value {
    assert_eq!(
        result["isError"],
        json!(true),
        "expected an error: {result}"
    );
    &result["error"]
}
