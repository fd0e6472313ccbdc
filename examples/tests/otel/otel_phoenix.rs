//! The studio binary's OpenTelemetry export, read back from a real Arize Phoenix
//! (`scripts/test.sh` starts one and exports `PHOENIX_URL`; without it these tests fail).
//!
//! Each test runs the real `studio` binary with `--otlp-endpoint`, `OTEL_METRICS_EXPORTER=none`
//! (Phoenix keeps traces only) and a Phoenix project of its own (`OTEL_RESOURCE_ATTRIBUTES`), a
//! temp data directory and a temp folder holding a small site.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use live_code_studio::host::TOKEN_FILE;
use serde_json::{Value, json};
use tool_protocol::telemetry::{attr, operation, tool_type};

use crate::support;
use crate::support::otel::Span;
use crate::support::process::wait_for_url;

/// The model the scripted provider is configured with: chat spans are `chat smol`.
const MODEL: &str = "smol";
/// The approval-gated tool the scripted model calls, and its name in the registry.
const WRITE_TOOL: &str = "writeFile";
const WRITE_TOOL_NAME: &str = "workspace.writeFile";
/// How long a provider run (two scripted turns and one approval) may take on a busy machine.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// The studio binary serving the UI on a free port, exporting to `otlp_endpoint`.
struct ChildStudio {
    child: Child,
    client: Client,
    /// Keeps the stdout reader's channel open.
    _stdout: std::sync::mpsc::Receiver<String>,
}

impl ChildStudio {
    fn spawn(data: &Path, folder: &Path, otlp_endpoint: &str, project: &str) -> Self {
        let stderr = std::fs::File::create(data.join("studio-stderr.log")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_studio"))
            .args([
                "--port",
                "0",
                "--otlp-endpoint",
                otlp_endpoint,
                "--data-dir",
            ])
            .arg(data)
            .arg("--folder")
            .arg(folder)
            .env("RUST_LOG", "warn")
            .env("OTEL_METRICS_EXPORTER", "none")
            .env(
                "OTEL_RESOURCE_ATTRIBUTES",
                format!("openinference.project.name={project}"),
            )
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_SERVICE_NAME")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("studio binary starts");
        let (base, stdout) = wait_for_url(&mut child);
        let token = std::fs::read_to_string(data.join(TOKEN_FILE)).expect("token file");
        Self {
            child,
            client: Client::new(base, token),
            _stdout: stdout,
        }
    }

    /// Stops the studio the way ctrl-c does (SIGTERM): it flushes the spans it queued.
    fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        self.child.wait().unwrap()
    }
}

impl Drop for ChildStudio {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The studio's HTTP API with its token.
struct Client {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Client {
    fn new(base: String, token: String) -> Self {
        Self {
            http: reqwest::Client::new(),
            base,
            token,
        }
    }

    async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.base))
            .header("x-studio-token", &self.token)
            .send()
            .await
            .expect("the studio answers")
            .json()
            .await
            .expect("the studio answers JSON")
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("x-studio-token", &self.token)
            .json(&body)
            .send()
            .await
            .expect("the studio answers");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, body).await
    }

    async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::PUT, path, body).await
    }

    /// `POST /api/tools/call`: the status and the tools/call result.
    async fn call(&self, name: &str, arguments: Value) -> (u16, Value) {
        let request =
            json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}});
        self.post("/api/tools/call", request).await
    }

    async fn wait_approval(&self) -> Value {
        let started = std::time::Instant::now();
        loop {
            let pending = self.get("/api/approvals").await;
            if let Some(first) = pending.as_array().and_then(|list| list.first()) {
                return first.clone();
            }
            assert!(started.elapsed() < RUN_TIMEOUT, "no approval appeared");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    async fn wait_run(&self, run_id: &str) -> Value {
        let started = std::time::Instant::now();
        loop {
            let run = self.get(&format!("/api/agent/runs/{run_id}")).await;
            if run.get("report").is_some() {
                return run;
            }
            assert!(
                started.elapsed() < RUN_TIMEOUT,
                "run {run_id} did not finish: {run}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// A temp folder with a small site.
fn small_site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("index.html"),
        "<!doctype html><link rel=stylesheet href=styles.css><h1>Traced</h1>",
    )
    .unwrap();
    std::fs::write(dir.path().join("styles.css"), "h1 { color: navy; }\n").unwrap();
    dir
}

/// What one approved provider run left in its Phoenix project.
struct ApprovedRun {
    project: String,
    marker: String,
    spans: Vec<Span>,
}

fn operation_of(span: &Span) -> Option<&str> {
    span.attr_str(attr::GEN_AI_OPERATION_NAME)
}

fn with_operation<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|span| operation_of(span) == Some(name))
        .collect()
}

/// Every span as Phoenix shows it (name, ids, parent, kind, status, attributes), for messages.
fn describe(spans: &[Span]) -> String {
    spans
        .iter()
        .map(|span| {
            let attributes: Vec<String> = span
                .attributes
                .iter()
                .map(|(key, value)| format!("    {key} = {value}"))
                .collect();
            format!(
                "- {:?} span={} parent={:?} trace={} kind={} status={} {:?}\n{}",
                span.name,
                span.span_id,
                span.parent_span_id,
                span.trace_id,
                span.span_kind,
                span.status_code,
                span.status_message,
                attributes.join("\n")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the studio with a scripted provider whose model writes `styles.css` (content holding a
/// unique marker) with the approval-gated `workspace.writeFile`; approves the call with the
/// digest of the arguments shown, waits for the run to complete, stops the studio (which
/// flushes) and reads the run's spans back from Phoenix.
async fn approved_provider_run(prefix: &str) -> ApprovedRun {
    let project = support::otel::unique_project(prefix);
    let marker = format!("PHOENIX-SECRET-MARKER-{}", uuid::Uuid::new_v4());
    let (data, folder) = (tempfile::tempdir().unwrap(), small_site());
    let mut studio = ChildStudio::spawn(
        data.path(),
        folder.path(),
        &support::otel::phoenix_url(),
        &project,
    );
    let client = &studio.client;

    let source = format!("/* {marker} */\nh1 {{ color: teal; }}\n");
    let script = support::echo_provider::Script::new(
        WRITE_TOOL,
        json!({"path": "styles.css", "source": source}),
        "The heading is teal now.",
    );
    let (base, requests) = support::echo_provider::serve_script(script).await;
    let (status, settings) = client
        .put(
            "/api/settings",
            json!({"provider": "llamacpp", "baseUrl": base, "model": MODEL}),
        )
        .await;
    assert_eq!(status, 200, "{settings}");
    let (status, run) = client
        .post(
            "/api/agent/runs",
            json!({"prompt": "make the heading teal", "agent": "openrouter"}),
        )
        .await;
    assert_eq!(status, 200, "{run}");
    let run_id = run["runId"].as_str().unwrap().to_owned();

    let approval = client.wait_approval().await;
    assert_eq!(approval["name"], WRITE_TOOL_NAME, "{approval}");
    let id = approval["id"].as_str().unwrap();
    let review = client.get(&format!("/api/approvals/{id}/diff")).await;
    assert_eq!(review["arguments"]["source"], source, "{review}");
    let (status, decided) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "argumentsDigest": review["argumentsDigest"]}),
        )
        .await;
    assert_eq!(status, 200, "{decided}");

    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "completed", "{run}");
    assert_eq!(run["toolCalls"][0]["name"], WRITE_TOOL_NAME, "{run}");
    assert_eq!(run["toolCalls"][0]["status"], "completed", "{run}");
    let (status, read) = client
        .call("workspace.readFile", json!({"path": "styles.css"}))
        .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["structuredContent"]["source"], source, "the write ran");
    let sent = requests.lock().unwrap().clone();
    assert_eq!(sent.len(), 2, "the call turn and the reply turn");
    assert!(
        sent[1].to_string().contains(&marker),
        "the marker went through the run (the model saw its own call)"
    );

    let exit = studio.terminate();
    assert!(exit.success(), "SIGTERM is a clean stop: {exit}");
    drop(studio);

    let spans = support::otel::wait_for_spans(
        &project,
        |spans| {
            !with_operation(spans, operation::INVOKE_AGENT).is_empty()
                && !with_operation(spans, operation::EXECUTE_TOOL).is_empty()
                && with_operation(spans, operation::CHAT).len() >= 2
        },
        support::otel::SPAN_TIMEOUT,
    )
    .await;
    ApprovedRun {
        project,
        marker,
        spans,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_provider_run_reaches_phoenix_as_one_trace_with_the_expected_tree() {
    let ApprovedRun {
        project,
        marker,
        spans,
    } = approved_provider_run("otel-approved-run").await;
    let shown = describe(&spans);
    println!("Phoenix project {project}:\n{shown}");

    let agents = with_operation(&spans, operation::INVOKE_AGENT);
    assert_eq!(agents.len(), 1, "one invoke_agent span:\n{shown}");
    let agent = agents[0];
    assert!(agent.is_root(), "invoke_agent is the root:\n{shown}");
    assert!(
        agent.name.starts_with(operation::INVOKE_AGENT),
        "invoke_agent span name:\n{shown}"
    );
    let agent_roots = spans
        .iter()
        .filter(|span| span.is_root() && span.name.starts_with(operation::INVOKE_AGENT))
        .count();
    assert_eq!(agent_roots, 1, "exactly one invoke_agent root:\n{shown}");

    let chats = with_operation(&spans, operation::CHAT);
    assert!(chats.len() >= 2, "a chat span per request:\n{shown}");
    for chat in &chats {
        assert_eq!(chat.name, format!("chat {MODEL}"), "{shown}");
        assert_eq!(
            chat.parent_span_id.as_deref(),
            Some(agent.span_id.as_str()),
            "chat's parent is invoke_agent:\n{shown}"
        );
        assert_eq!(chat.trace_id, agent.trace_id, "{shown}");
        assert_eq!(chat.attr_str(attr::GEN_AI_REQUEST_MODEL), Some(MODEL));
    }

    // The test's own `workspace.readFile` check (a direct call, no agent) is a trace of its own.
    let tools: Vec<&Span> = with_operation(&spans, operation::EXECUTE_TOOL)
        .into_iter()
        .filter(|span| span.trace_id == agent.trace_id)
        .collect();
    assert_eq!(
        tools.len(),
        1,
        "one execute_tool span in the run's trace:\n{shown}"
    );
    let tool = tools[0];
    assert_eq!(
        tool.name,
        format!("{} {WRITE_TOOL_NAME}", operation::EXECUTE_TOOL),
        "{shown}"
    );
    assert_eq!(
        tool.parent_span_id.as_deref(),
        Some(agent.span_id.as_str()),
        "execute_tool's parent is invoke_agent:\n{shown}"
    );
    assert_eq!(tool.trace_id, agent.trace_id, "one trace:\n{shown}");
    let tool_attr = |key: &str| tool.attr_str(key).unwrap_or_default();
    assert_eq!(
        tool_attr(attr::GEN_AI_OPERATION_NAME),
        operation::EXECUTE_TOOL
    );
    assert_eq!(
        tool_attr(attr::GEN_AI_TOOL_NAME),
        WRITE_TOOL_NAME,
        "{shown}"
    );
    assert!(!tool_attr(attr::GEN_AI_TOOL_CALL_ID).is_empty(), "{shown}");
    assert_eq!(
        tool_attr(attr::GEN_AI_TOOL_TYPE),
        tool_type::FUNCTION,
        "{shown}"
    );
    assert_eq!(tool_attr(attr::POLICY_DECISION), "ask", "{shown}");
    assert_eq!(tool_attr(attr::APPROVAL_OUTCOME), "approved", "{shown}");
    assert!(
        tool.attributes.contains_key(attr::APPROVAL_WAIT_MS),
        "{shown}"
    );
    // Counts arrive as integers, not as text.
    for count in [attr::APPROVAL_WAIT_MS, attr::OUTPUT_BYTES] {
        assert!(
            tool.attributes[count].is_i64(),
            "{count} is an integer: {shown}"
        );
    }
    assert_eq!(tool_attr(attr::CALL_STATE), "completed", "{shown}");
    assert!(
        !tool.attributes.contains_key(attr::ERROR_TYPE),
        "no error:\n{shown}"
    );

    // The run's trace holds exactly these spans, and none of them failed.
    let in_trace = spans
        .iter()
        .filter(|span| span.trace_id == agent.trace_id)
        .count();
    assert_eq!(in_trace, 1 + chats.len() + 1, "{shown}");
    for span in [agent].into_iter().chain(chats).chain(tools) {
        assert_eq!(span.trace_id, agent.trace_id, "{shown}");
        assert_ne!(span.status_code, "ERROR", "{shown}");
    }

    // No file content anywhere: not in a name, a status or any attribute of any span.
    for span in &spans {
        assert!(!span.name.contains(&marker), "{shown}");
        assert!(!span.status_message.contains(&marker), "{shown}");
        for (key, value) in &span.attributes {
            assert!(
                !value.to_string().contains(&marker) && !key.contains(&marker),
                "span {:?} attribute {key} holds the file content: {value}",
                span.name
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_view_renders_in_phoenix() {
    let run = approved_provider_run("otel-trace-view").await;
    let agent = with_operation(&run.spans, operation::INVOKE_AGENT)[0];
    let url = support::otel::trace_view_url(&run.project, &agent.trace_id).await;
    let tool_span = format!("{} {WRITE_TOOL_NAME}", operation::EXECUTE_TOOL);

    let _slot = support::browser::browser_slot().await;
    let browser = support::browser::Browser::launch(1400, 900).await;
    browser.goto(&url).await;
    browser
        .wait_for(
            "the tool span in Phoenix's trace tree",
            &format!(
                "return document.body?.innerText.includes({}) \
                 && document.body.innerText.includes({}) || false;",
                serde_json::to_string(&tool_span).unwrap(),
                serde_json::to_string(&format!("chat {MODEL}")).unwrap(),
            ),
        )
        .await;
    browser.screenshot("phoenix-trace-tree").await;

    // Select the tool span in the tree, then show its attributes.
    let click_text = |css: &str, text: &str| {
        format!(
            "const el = [...document.querySelectorAll({})]\
               .find(e => e.textContent.trim().startsWith({})); \
             if (!el) return false; el.click(); return true;",
            serde_json::to_string(css).unwrap(),
            serde_json::to_string(text).unwrap(),
        )
    };
    browser
        .wait_for(
            "the tool span's node in the tree",
            &click_text(".span-node__heading span", &tool_span),
        )
        .await;
    browser
        .wait_for(
            "the span details' Attributes tab",
            &click_text("[role=tab]", "Attributes"),
        )
        .await;
    browser
        .wait_for(
            "the tool span's policy decision and approval outcome",
            "const text = document.body?.innerText ?? ''; \
             return text.includes('decision') && text.includes('approved');",
        )
        .await;
    let shot = browser.screenshot("phoenix-trace-view").await;
    println!("Phoenix trace view {url}: {}", shot.display());
    assert!(std::fs::metadata(&shot).unwrap().len() > 0);
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_endpoint_never_fails_or_slows_a_tool_call() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (data, folder) = (tempfile::tempdir().unwrap(), small_site());
    let mut studio = ChildStudio::spawn(
        data.path(),
        folder.path(),
        &format!("http://127.0.0.1:{port}"),
        &support::otel::unique_project("otel-unreachable"),
    );
    let client = &studio.client;
    for attempt in 0..5 {
        let (status, read) = client
            .call("workspace.readFile", json!({"path": "index.html"}))
            .await;
        assert_eq!(status, 200, "call {attempt}: {read}");
        assert!(
            read.get("isError").is_none_or(|error| error == false),
            "call {attempt}: {read}"
        );
        assert!(
            read["structuredContent"]["source"]
                .as_str()
                .is_some_and(|source| source.contains("<h1>Traced</h1>")),
            "call {attempt}: {read}"
        );
        let (status, listed) = client.call("workspace.getStatus", json!({})).await;
        assert_eq!(status, 200, "status {attempt}: {listed}");
        assert!(
            listed.get("isError").is_none(),
            "status {attempt}: {listed}"
        );
        // Let a batch (every ≤ 1 s) try to go out between calls.
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let exit = studio.terminate();
    assert!(
        exit.success(),
        "a clean stop despite the unreachable endpoint: {exit}"
    );
}
