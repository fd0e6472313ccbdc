//! Against a real llama.cpp `llama-server` with a small model (SmolLM2-135M-Instruct Q4_1):
//! the llama.cpp profile's template check (`/props`), tools reaching the prompt, streamed text
//! and usage, and cancellation mid-stream.
//!
//! `scripts/test.sh` builds llama-server (cached outside the clone) and exports
//! `LLAMA_SERVER_BIN`, `LLAMA_MODEL_GGUF` and `LLAMA_TEMPLATES_DIR`; without them these tests
//! fail, they never skip. Assertions are about structure and behaviour, never the model's
//! wording.
#![allow(missing_docs)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use openrouter_tool_loop::{
    ApiKey, ChatClient, LlamaTemplateCaps, OpenRouterConfig, ProviderProfile, RunEvent, RunOptions,
    RunRequest, ToolExecutor, codes, llama_template_caps,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_protocol::{ModelToolCall, ToolCallContext, ToolCallResult, ToolDefinition};

/// The template of llama.cpp's `models/templates/` that renders tools.
const TOOL_TEMPLATE: &str = "Qwen-Qwen2.5-7B-Instruct.jinja";
/// How long a server may take to load the model and answer `/health`.
const STARTUP_LIMIT: Duration = Duration::from_secs(90);

fn required_env(name: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => value,
        _ => panic!(
            "{name} is not set: run scripts/test.sh, which builds llama-server (cached under \
             ~/.cache/tool-calling-llama) and exports LLAMA_SERVER_BIN, LLAMA_MODEL_GGUF and \
             LLAMA_TEMPLATES_DIR; these tests need a real llama-server and never skip"
        ),
    }
}

/// A llama-server on a free loopback port, killed on drop.
struct LlamaServer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl LlamaServer {
    /// Starts the server with the model's own chat template (`None`) or a template file of
    /// llama.cpp's `models/templates/`, and waits until `/health` answers 200.
    async fn start(template: Option<&str>) -> Self {
        let bin = required_env("LLAMA_SERVER_BIN");
        let model = required_env("LLAMA_MODEL_GGUF");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let log = std::env::temp_dir().join(format!(
            "llama-server-test-{}-{port}.log",
            std::process::id()
        ));
        let log_file = std::fs::File::create(&log).expect("server log file");
        let mut command = Command::new(&bin);
        command
            .args(["-m", &model, "--jinja", "--host", "127.0.0.1"])
            .args([
                "--port",
                &port.to_string(),
                "-c",
                "2048",
                "-t",
                "1",
                "-np",
                "1",
            ])
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("server log file"))
            .stderr(log_file);
        if let Some(template) = template {
            let dir = PathBuf::from(required_env("LLAMA_TEMPLATES_DIR"));
            let file = dir.join(template);
            assert!(file.is_file(), "no chat template at {}", file.display());
            command.arg("--chat-template-file").arg(file);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|error| panic!("could not start {bin}: {error}"));
        let mut server = Self { child, port, log };
        server.wait_healthy().await;
        server
    }

    async fn wait_healthy(&mut self) {
        let http = reqwest::Client::new();
        let url = format!("http://127.0.0.1:{}/health", self.port);
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("server status") {
                panic!(
                    "llama-server exited ({status}) before it was healthy:\n{}",
                    self.log_tail()
                );
            }
            if let Ok(response) = http.get(&url).timeout(Duration::from_secs(2)).send().await
                && response.status().is_success()
            {
                return;
            }
            assert!(
                started.elapsed() < STARTUP_LIMIT,
                "llama-server was not healthy within {STARTUP_LIMIT:?}:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn root(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn base_url(&self) -> String {
        format!("{}/v1", self.root())
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// A non-streamed chat request (plain reqwest, no crate logic); its JSON answer.
    async fn chat(&self, body: Value) -> Value {
        let response = reqwest::Client::new()
            .post(format!("{}/chat/completions", self.base_url()))
            .json(&body)
            .timeout(Duration::from_secs(120))
            .send()
            .await
            .expect("chat request");
        let status = response.status();
        let text = response.text().await.expect("chat body");
        assert!(
            status.is_success(),
            "HTTP {status}: {text}\n{}",
            self.log_tail()
        );
        serde_json::from_str(&text).expect("chat body is JSON")
    }

    /// `usage.prompt_tokens` of a one-token answer to `messages`, with or without `tools`.
    async fn prompt_tokens(&self, tools: Option<Value>) -> u64 {
        let mut body = json!({
            "model": "x",
            "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
            "max_tokens": 1,
            "cache_prompt": false,
        });
        if let Some(tools) = tools {
            body["tools"] = tools;
        }
        let answer = self.chat(body).await;
        answer["usage"]["prompt_tokens"]
            .as_u64()
            .unwrap_or_else(|| panic!("no usage.prompt_tokens in {answer}"))
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn weather_tools() -> Value {
    json!([{
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather of a city, with temperature and conditions.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city name"}},
                "required": ["city"]
            }
        }
    }])
}

/// A run's tools, listed but never called: none for the streaming tests (they are about
/// text), one for the template check (the run stops before asking the model).
struct ListedTools(Vec<ToolDefinition>);

/// No tools.
const NO_TOOLS: ListedTools = ListedTools(Vec::new());

fn weather_tool() -> ListedTools {
    ListedTools(vec![ToolDefinition::new(
        "weather.get",
        "Current weather of a city.",
        serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )])
}

#[async_trait]
impl ToolExecutor for ListedTools {
    async fn list_tools(&self) -> Vec<ToolDefinition> {
        self.0.clone()
    }

    async fn call_tool(
        &self,
        call: ModelToolCall,
        _context: ToolCallContext,
        _cancel: CancellationToken,
    ) -> ToolCallResult {
        panic!(
            "{} was called; these tests never expect a tool call",
            call.name
        )
    }
}

fn streaming_client(server: &LlamaServer, max_tokens: u32) -> ChatClient {
    let mut config = OpenRouterConfig::for_provider(
        ProviderProfile::LlamaCpp,
        server.base_url(),
        ApiKey::default(),
    )
    .with_model("x")
    .with_streaming(true);
    config.max_tokens = max_tokens;
    ChatClient::new(config).expect("client")
}

/// Every event of a run, in order.
fn recorder() -> (
    Arc<Mutex<Vec<RunEvent>>>,
    impl Fn(&RunEvent) + Send + Sync + 'static,
) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    (events, move |event: &RunEvent| {
        sink.lock().unwrap().push(event.clone())
    })
}

#[tokio::test]
async fn own_template_reports_tools_unsupported_and_drops_them() {
    let server = LlamaServer::start(None).await;
    let http = reqwest::Client::new();
    let props: Value = http
        .get(format!("{}/props", server.root()))
        .send()
        .await
        .expect("/props")
        .json()
        .await
        .expect("/props JSON");
    assert!(
        props["chat_template_caps"].is_object(),
        "/props has chat_template_caps: {props}"
    );

    // Through the base URL the profile is configured with (/props is at the root).
    let caps: LlamaTemplateCaps = llama_template_caps(&http, &server.base_url())
        .await
        .expect("template caps");
    assert_eq!(caps.supports_tools, Some(false), "{caps:?}");
    assert!(!caps.tools_supported(), "{caps:?}");
    let error = caps.require_tools().expect_err("tools are not supported");
    assert_eq!(error.code, codes::OPENROUTER_TOOLS_UNSUPPORTED);
    assert!(!error.retryable);
    assert!(
        error.message.contains("--jinja") && error.message.contains("--chat-template-file"),
        "{}",
        error.message
    );

    // What the check guards against: the server accepts the tools and leaves them out.
    let without = server.prompt_tokens(None).await;
    let with = server.prompt_tokens(Some(weather_tools())).await;
    assert_eq!(with, without, "the model's own template rendered the tools");

    // A run with tools stops before its first chat request instead of getting prose back.
    let (events, on_event) = recorder();
    let failure = streaming_client(&server, 16)
        .run(
            &weather_tool(),
            RunRequest::new("What is the weather in Paris?"),
            RunOptions::default().on_event(on_event),
        )
        .await
        .expect_err("the template cannot take tools");
    assert_eq!(failure.error.code, codes::OPENROUTER_TOOLS_UNSUPPORTED);
    let requests = events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| matches!(event, RunEvent::RequestSent { .. }))
        .count();
    assert_eq!(requests, 0, "no chat request was sent");
}

#[tokio::test]
async fn tool_template_reports_tools_supported_and_renders_them() {
    let server = LlamaServer::start(Some(TOOL_TEMPLATE)).await;
    let caps = llama_template_caps(&reqwest::Client::new(), &server.base_url())
        .await
        .expect("template caps");
    assert_eq!(caps.supports_tools, Some(true), "{caps:?}");
    assert_eq!(caps.supports_tool_calls, Some(true), "{caps:?}");
    assert!(caps.tools_supported());
    caps.require_tools().expect("tools are supported");

    let without = server.prompt_tokens(None).await;
    let with = server.prompt_tokens(Some(weather_tools())).await;
    assert!(
        with > without + 20,
        "the tool definitions did not reach the prompt: {with} tokens with tools, {without} without"
    );
}

#[tokio::test]
async fn a_streamed_run_emits_text_deltas_and_usage() {
    let server = LlamaServer::start(None).await;
    let client = streaming_client(&server, 48);
    let (events, on_event) = recorder();
    let completion = client
        .run(
            &NO_TOOLS,
            RunRequest::new("Say hello"),
            RunOptions::default().on_event(on_event),
        )
        .await
        .unwrap_or_else(|failure| panic!("run failed: {}\n{}", failure.error, server.log_tail()));

    let events = events.lock().unwrap().clone();
    let completed_at = events
        .iter()
        .position(|event| matches!(event, RunEvent::RunCompleted { .. }))
        .expect("a RunCompleted event");
    let deltas: Vec<(u32, &str)> = events[..completed_at]
        .iter()
        .filter_map(|event| match event {
            RunEvent::TextDelta { turn, text } => Some((*turn, text.as_str())),
            _ => None,
        })
        .collect();
    assert!(
        deltas.len() >= 2,
        "expected the answer in several deltas, got {deltas:?}"
    );
    assert!(deltas.iter().all(|(turn, _)| *turn == 1), "{deltas:?}");
    let streamed: String = deltas.iter().map(|(_, text)| *text).collect();
    assert!(!completion.text.trim().is_empty());
    assert_eq!(streamed.trim(), completion.text.trim());

    let usage = events
        .iter()
        .find_map(|event| match event {
            RunEvent::Usage { turn: 1, usage } => Some(*usage),
            _ => None,
        })
        .expect("a Usage event for turn 1");
    assert!(usage.output_tokens.unwrap_or(0) > 0, "{usage:?}");
    assert!(usage.output_tokens.unwrap_or(0) <= 48, "{usage:?}");
    assert!(usage.input_tokens.unwrap_or(0) > 0, "{usage:?}");
}

#[tokio::test]
async fn cancelling_mid_stream_ends_the_run_promptly() {
    let server = LlamaServer::start(None).await;
    let client = streaming_client(&server, 400);
    let cancel = CancellationToken::new();
    let deltas = Arc::new(Mutex::new(0usize));
    let cancelled_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let on_event = {
        let cancel = cancel.clone();
        let deltas = Arc::clone(&deltas);
        let cancelled_at = Arc::clone(&cancelled_at);
        move |event: &RunEvent| {
            if let RunEvent::TextDelta { .. } = event {
                *deltas.lock().unwrap() += 1;
                let mut at = cancelled_at.lock().unwrap();
                if at.is_none() {
                    *at = Some(Instant::now());
                    cancel.cancel();
                }
            }
        }
    };
    let started = Instant::now();
    let failure = client
        .run(
            &NO_TOOLS,
            RunRequest::new(
                "Write a long story about a dragon who learns to bake bread, \
                 at least three hundred words.",
            ),
            RunOptions::with_cancel(cancel.clone()).on_event(on_event),
        )
        .await
        .expect_err("the run was cancelled");
    let ended = Instant::now();

    assert_eq!(
        failure.error.code,
        codes::OPENROUTER_CANCELLED,
        "{}",
        failure.error
    );
    assert!(failure.error.is_cancelled());
    let cancelled_at = cancelled_at
        .lock()
        .unwrap()
        .expect("cancelled after the first text delta");
    let after_cancel = ended.duration_since(cancelled_at);
    assert!(
        after_cancel < Duration::from_secs(2),
        "the run ended {after_cancel:?} after the cancellation (whole run {:?})",
        ended.duration_since(started)
    );
    // A full answer is 400 tokens (about 7 s on one thread); the cancellation lands on the
    // first delta, so only what was already read may follow it.
    let deltas = *deltas.lock().unwrap();
    assert!(
        (1..=20).contains(&deltas),
        "{deltas} text deltas arrived: the stream was not stopped at the cancellation"
    );

    // The server is still usable afterwards (the cancelled stream freed its slot).
    let after = streaming_client(&server, 8)
        .run(&NO_TOOLS, RunRequest::new("Say hi"), RunOptions::default())
        .await;
    assert!(
        after.is_ok(),
        "a run after the cancelled one failed: {:?}",
        after.err()
    );
}
