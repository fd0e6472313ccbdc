//! One MCP client process of the fleet campaign: keyed `ledger.append` calls over raw 2026-07-28
//! JSON-RPC (every request stands alone, so the balancer may send each to any host), each retried
//! with its key until it gets an answer it can act on. Every attempt is a JSON line in the
//! client's history file, written before the next attempt starts.
//!
//! Retry rule (what a careful client does): no answer (a cut connection, a 5xx from the balancer,
//! a timeout) or a retryable coded error → the same request again after a bounded backoff; a
//! success, a replayed answer or a non-retryable error → done. A quarter of the successes are
//! sent once more on purpose (a duplicate retry), whose answer must be the first one, replayed.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::history::now_ms;

/// Where a `tools/call` carries its idempotency key.
pub const KEY_META: &str = "tool-context/idempotency-key";
/// Where an answer says it is a replay.
pub const REPLAY_META: &str = "tool-context/replay";
const VERSION: &str = "2026-07-28";

/// What one client process does.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The URL it sends to (the dropping proxy).
    pub url: String,
    /// Its number (keys are `c<client>-<n>`).
    pub client: u32,
    /// Its history file.
    pub history: PathBuf,
    /// How long it starts new calls.
    pub run_for: Duration,
    /// How long after that it keeps retrying its last call (the faults have stopped by then).
    pub grace: Duration,
    /// Seed of its choices.
    pub seed: u64,
}

/// What one attempt got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A success.
    Ok,
    /// A coded error (`code`, `retryable`).
    Error,
    /// No answer: the connection was cut, the balancer failed or the request timed out.
    Lost,
}

/// One attempt, as a history line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attempt {
    /// The call's key (also its ledger entry).
    pub key: String,
    /// 1 for the first send.
    pub attempt: u32,
    /// Sent on purpose after a success (must replay it).
    pub duplicate: bool,
    /// When it was answered (unix ms).
    pub time_ms: u64,
    /// What it got.
    pub outcome: Outcome,
    /// The error code, for `error`.
    pub code: Option<String>,
    /// Whether the error said a retry may succeed.
    pub retryable: bool,
    /// Whether the answer was marked a replay.
    pub replayed: bool,
    /// `structuredContent` of a success.
    pub answer: Option<Value>,
    /// Why nothing came back, for `lost`.
    pub detail: Option<String>,
}

impl Attempt {
    /// Whether the client stops retrying after this attempt.
    pub fn is_final(&self) -> bool {
        match self.outcome {
            Outcome::Ok => true,
            Outcome::Error => self.replayed || !self.retryable,
            Outcome::Lost => false,
        }
    }
}

/// Runs the client until `run_for` and its grace period pass.
pub async fn run(config: ClientConfig) -> Result<(), String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| e.to_string())?;
    let mut file = std::fs::File::create(&config.history)
        .map_err(|e| format!("{}: {e}", config.history.display()))?;
    let started = Instant::now();
    let (stop_new, give_up) = (
        started + config.run_for,
        started + config.run_for + config.grace,
    );
    let mut choices = config.seed | 1;
    let mut n = 0u64;
    while Instant::now() < stop_new {
        n += 1;
        let key = format!("c{}-{n}", config.client);
        let mut sender = Sender {
            http: &http,
            url: &config.url,
            key: &key,
            file: &mut file,
            id: n * 1_000,
        };
        let done = sender.until_final(give_up).await?;
        if done.outcome == Outcome::Ok && super::pick(&mut choices, 4) == 0 {
            sender.send(done.attempt + 1, true).await?;
        }
    }
    Ok(())
}

/// Sends one key's call and writes each attempt.
struct Sender<'a> {
    http: &'a reqwest::Client,
    url: &'a str,
    key: &'a str,
    file: &'a mut std::fs::File,
    id: u64,
}

impl Sender<'_> {
    /// Retries until an attempt is final or `give_up` passes; the last attempt.
    async fn until_final(&mut self, give_up: Instant) -> Result<Attempt, String> {
        let mut attempt = 1;
        loop {
            let got = self.send(attempt, false).await?;
            if got.is_final() || Instant::now() >= give_up {
                return Ok(got);
            }
            let backoff = 50u64 << attempt.min(5);
            tokio::time::sleep(Duration::from_millis(backoff)).await;
            attempt += 1;
        }
    }

    async fn send(&mut self, attempt: u32, duplicate: bool) -> Result<Attempt, String> {
        self.id += 1;
        let got = match self.post().await {
            Ok(message) => interpret(self.key, &message),
            Err(detail) => Attempt::lost(self.key, detail),
        };
        let got = Attempt {
            attempt,
            duplicate,
            ..got
        };
        let line = serde_json::to_string(&got).map_err(|e| e.to_string())?;
        writeln!(self.file, "{line}").map_err(|e| e.to_string())?;
        Ok(got)
    }

    /// The JSON-RPC response to this attempt, or why none came.
    async fn post(&self) -> Result<Value, String> {
        let body = json!({
            "jsonrpc": "2.0", "id": self.id, "method": "tools/call",
            "params": {
                "name": "ledger.append",
                "arguments": {"entry": self.key},
                "_meta": {
                    KEY_META: self.key,
                    "io.modelcontextprotocol/protocolVersion": VERSION,
                    "io.modelcontextprotocol/clientInfo": {"name": "durable-faults", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            }
        });
        let response = self
            .http
            .post(self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", VERSION)
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "ledger.append")
            .json(&body)
            .send()
            .await
            .map_err(|e| format!("send: {e}"))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| format!("body: {e}"))?;
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        response_with_id(&text, self.id).ok_or_else(|| format!("no response in: {text:.200}"))
    }
}

impl Attempt {
    fn lost(key: &str, detail: String) -> Self {
        Self {
            key: key.to_owned(),
            attempt: 0,
            duplicate: false,
            time_ms: now_ms(),
            outcome: Outcome::Lost,
            code: None,
            retryable: true,
            replayed: false,
            answer: None,
            detail: Some(detail),
        }
    }
}

/// What a JSON-RPC response means for the call.
pub fn interpret(key: &str, message: &Value) -> Attempt {
    let result = &message["result"];
    let mut got = Attempt::lost(key, String::new());
    got.detail = None;
    if result.is_null() {
        // A JSON-RPC error: the request was refused before the tool (retry like a lost one).
        got.detail = Some(message["error"].to_string());
        return got;
    }
    let meta = &result["_meta"];
    got.replayed = meta[REPLAY_META]["replayed"] == true;
    if result["isError"] == true {
        let error = &meta["tool-context/error"];
        got.outcome = Outcome::Error;
        got.code = error["code"].as_str().map(str::to_owned);
        got.retryable = error["retryable"] == true;
    } else {
        got.outcome = Outcome::Ok;
        got.retryable = false;
        got.answer = Some(result["structuredContent"].clone());
    }
    got
}

/// The JSON-RPC message with `id` in a JSON body or an SSE stream.
pub fn response_with_id(text: &str, id: u64) -> Option<Value> {
    messages_in(text)
        .into_iter()
        .find(|message| message["id"] == json!(id))
}

/// The JSON-RPC messages of an answer: one JSON body, or an SSE stream's `data:` lines.
pub fn messages_in(text: &str) -> Vec<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(message) => vec![message],
        Err(_) => text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect(),
    }
}
