//! A running studio reached over loopback HTTP (`GET /api/tools`, `POST /api/tools/call`).
//!
//! The studio runs `/api/tools/call` as a direct local call (a person pressing a button), which
//! its policy allows without asking. So the CLI applies the approval itself before sending a
//! call to a tool that is not read-only: never silently past a person.

use std::time::Duration;

use serde_json::{Value, json};
use tool_protocol::codes::TOOL_POLICY_DENIED;
use tool_protocol::{
    ToolCallError, ToolCallRequest, ToolCallResult, ToolDefinition, ToolListResult,
};

use super::CliError;
use super::approval::ApprovalMode;
use crate::kit::security::TOKEN_HEADER;
use tool_context::InteractionOutcome;

/// Connect timeout for the studio (it is on loopback: a slow connect means it is not there).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// An HTTP client for one running studio.
#[derive(Debug)]
pub struct RemoteStudio {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl RemoteStudio {
    /// A client for `url` (e.g. `http://127.0.0.1:4870/`), sending `token` on every request.
    pub fn new(url: &str, token: Option<String>) -> Result<Self, CliError> {
        let base = url.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(CliError::Usage(format!(
                "--url must start with http:// or https:// (got {url})."
            )));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|error| CliError::Unavailable(format!("HTTP client: {error}")))?;
        Ok(Self { http, base, token })
    }

    /// `GET /api/tools`.
    pub async fn list(&self) -> Result<Vec<ToolDefinition>, CliError> {
        let body = self
            .send(self.http.get(self.endpoint("/api/tools")))
            .await?;
        let listing: ToolListResult = serde_json::from_value(body).map_err(|error| {
            CliError::Unavailable(format!(
                "the studio sent an invalid tools/list result: {error}"
            ))
        })?;
        Ok(listing.tools)
    }

    /// Approves (or refuses) a non-read-only call client-side, then `POST /api/tools/call`.
    pub async fn call(
        &self,
        request: ToolCallRequest,
        mode: ApprovalMode,
    ) -> Result<ToolCallResult, CliError> {
        let definition = self
            .list()
            .await?
            .into_iter()
            .find(|tool| tool.name == request.name);
        if let Some(definition) = definition
            && !definition.is_read_only()
        {
            let names = request
                .arguments
                .iter()
                .flat_map(|arguments| arguments.keys().cloned())
                .collect();
            if mode.decide(&request.name, names).await == InteractionOutcome::Denied {
                return Ok(ToolCallResult::failure(ToolCallError::canonical(
                    TOOL_POLICY_DENIED,
                    format!("{} needs approval and was not approved.", request.name),
                )));
            }
        }
        let body = json!({
            "method": "tools/call",
            "params": {"name": request.name, "arguments": request.arguments.unwrap_or_default()},
        });
        let answer = self
            .send(self.http.post(self.endpoint("/api/tools/call")).json(&body))
            .await?;
        serde_json::from_value(answer).map_err(|error| {
            CliError::Unavailable(format!(
                "the studio sent an invalid tools/call result: {error}"
            ))
        })
    }

    fn endpoint(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends with the token and returns the JSON body; a refused request (bad token, foreign
    /// host) is reported with the studio's code.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Value, CliError> {
        let request = match &self.token {
            Some(token) => request.header(TOKEN_HEADER, token),
            None => request,
        };
        let response = request.send().await.map_err(|error| {
            CliError::Unavailable(format!("cannot reach the studio at {}: {error}", self.base))
        })?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(body);
        }
        let code = body["error"]["code"]
            .as_str()
            .unwrap_or("STUDIO_HTTP_ERROR");
        let message = body["error"]["message"]
            .as_str()
            .map_or_else(|| format!("HTTP {status}"), ToOwned::to_owned);
        Err(CliError::Unavailable(format!("{code}: {message}")))
    }
}
