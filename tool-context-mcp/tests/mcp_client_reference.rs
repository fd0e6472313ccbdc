//! The MCP client against the official reference servers from npm, pinned in
//! `examples/tests/mcp_node/package-lock.json` and installed by `scripts/test.sh` (or `npm ci`
//! in that folder): `@modelcontextprotocol/server-everything` over stdio and streamable HTTP,
//! and `@modelcontextprotocol/server-filesystem` on a temporary folder. Every remote tool runs
//! through the registry's pipeline: untrusted hints dropped and approvals asked, strict input
//! validation, the output schema checked, coded remote errors, timeouts that cancel.
//!
//! `MCP_NODE` names the Node binary (default `node`; both servers run on Node 20).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;
use tool_context::{
    BoxError, InteractionOutcome, InteractionRequest, ToolCallOptions, ToolInteraction,
    ToolRegistry,
};
use tool_context_mcp::client::codes::MCP_REMOTE_TOOL_ERROR;
use tool_context_mcp::client::{
    ClientLimits, McpMounts, McpServersConfig, ServerState, ServerStatus,
};
use tool_protocol::{ModelToolCall, ToolCallResult, ToolContent, codes};

/// The revision server-everything 2026.8.31 speaks: our client probes `server/discover`
/// (2026-07-28) first and falls back to `initialize`.
const EVERYTHING_REVISION: &str = "2025-11-25";

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tests/mcp_node")
}

fn node() -> String {
    std::env::var("MCP_NODE").unwrap_or_else(|_| "node".into())
}

/// The entry point of an installed reference server; fails the test (never skips it) when the
/// npm peers are missing.
fn server_script(package: &str) -> String {
    let script = peers_dir()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(
        script.exists(),
        "the npm reference server @modelcontextprotocol/{package} is not installed ({} is missing): \
         run `npm ci` in {} (scripts/test.sh does)",
        script.display(),
        peers_dir().display()
    );
    script.to_string_lossy().into_owned()
}

/// Generous handshakes (Node starts in well under a second, but CI machines are slow); fast
/// reconnects.
fn limits() -> ClientLimits {
    let mut limits = ClientLimits::default();
    limits.connect_timeout = Duration::from_secs(20);
    limits.reconnect_initial = Duration::from_millis(200);
    limits.reconnect_max = Duration::from_secs(1);
    limits
}

fn everything_stdio(extra: Value) -> Value {
    let mut server = json!({
        "command": node(),
        "args": [server_script("server-everything"), "stdio"],
    });
    merge(&mut server, extra);
    json!({"mcpServers": {"everything": server}})
}

fn filesystem_stdio(folder: &Path, extra: Value) -> Value {
    let mut server = json!({
        "command": node(),
        "args": [server_script("server-filesystem"), folder.to_string_lossy()],
    });
    merge(&mut server, extra);
    json!({"mcpServers": {"fs": server}})
}

fn merge(target: &mut Value, extra: Value) {
    if let (Value::Object(target), Value::Object(extra)) = (target, extra) {
        target.extend(extra);
    }
}

fn registry() -> ToolRegistry {
    ToolRegistry::builder().build().unwrap()
}

/// Mounts the one server in `config` and waits until it is ready.
async fn mount(registry: &ToolRegistry, config: Value) -> (McpMounts, ServerStatus) {
    let config = McpServersConfig::from_json(&config).unwrap();
    let name = config.servers[0].name.clone();
    let mounts = McpMounts::new(registry, limits());
    mounts.apply(&config);
    let status = mounts
        .wait_until_settled(&name, Duration::from_secs(40))
        .await
        .unwrap();
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    (mounts, status)
}

/// Answers every approval with a fixed outcome and remembers what it was asked.
#[derive(Clone)]
struct Person(InteractionOutcome, Arc<std::sync::Mutex<Vec<String>>>);

impl Person {
    fn approving() -> Self {
        Self(InteractionOutcome::Approved, Arc::default())
    }

    fn asked(&self) -> Vec<String> {
        self.1.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl ToolInteraction for Person {
    async fn interact(
        &self,
        request: &InteractionRequest,
        _cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        self.1.lock().unwrap().push(request.name.clone());
        Ok(self.0.clone())
    }
}

async fn call(
    registry: &ToolRegistry,
    name: &str,
    arguments: Value,
    options: ToolCallOptions,
) -> ToolCallResult {
    let call: ModelToolCall =
        serde_json::from_value(json!({"id": "c1", "name": name, "arguments": arguments})).unwrap();
    registry.execute_model_tool_call(call, options).await
}

fn approved(person: &Person) -> ToolCallOptions {
    ToolCallOptions::default().with_interaction(Arc::new(person.clone()))
}

fn code(result: &ToolCallResult) -> &str {
    result
        .error
        .as_ref()
        .map_or("", |error| error.code.as_str())
}

fn text(result: &ToolCallResult) -> String {
    tool_protocol::stringify_tool_content(&result.content)
}

fn has_tool(registry: &ToolRegistry, name: &str) -> bool {
    registry.tool_names().iter().any(|listed| listed == name)
}

#[tokio::test]
async fn everything_over_stdio_mounts_untrusted_and_asks_before_echo() {
    let registry = registry();
    let (_mounts, status) = mount(&registry, everything_stdio(json!({}))).await;
    assert_eq!(
        status.protocol_version.as_deref(),
        Some(EVERYTHING_REVISION),
        "{status:?}"
    );
    assert!(
        status
            .server_info
            .as_deref()
            .is_some_and(|info| info.contains("everything")),
        "{status:?}"
    );
    for name in [
        "everything.echo",
        "everything.get-sum",
        "everything.get-structured-content",
        "everything.get-tiny-image",
        "everything.trigger-long-running-operation",
    ] {
        assert!(has_tool(&registry, name), "{name} in {:?}", status.tools);
    }
    // The server offers elicitation tools only to clients that declare the capability; ours
    // does not (it would have to answer a server's questions mid-call).
    assert!(
        !has_tool(&registry, "everything.trigger-elicitation-request"),
        "{:?}",
        status.tools
    );
    assert!(status.skipped.is_empty(), "{:?}", status.skipped);

    // The server claims echo is read-only; an untrusted server's claim is dropped.
    let echo = registry.tool_definition("everything.echo").unwrap();
    let hints = echo.annotations.clone().unwrap();
    assert_eq!(hints.read_only_hint, None, "{echo:?}");
    assert_eq!(hints.idempotent_hint, None, "{echo:?}");
    assert_eq!(hints.untrusted_content_hint, Some(true), "{echo:?}");

    // A model's call with no person to ask is not run.
    let unasked = call(
        &registry,
        "everything.echo",
        json!({"message": "hi"}),
        ToolCallOptions::default(),
    )
    .await;
    assert_eq!(code(&unasked), codes::TOOL_APPROVAL_REQUIRED, "{unasked:?}");

    // With a person who approves, it runs and the server answers.
    let person = Person::approving();
    let echoed = call(
        &registry,
        "everything.echo",
        json!({"message": "hello reference"}),
        approved(&person),
    )
    .await;
    assert!(echoed.error.is_none(), "{echoed:?}");
    assert_eq!(text(&echoed), "Echo: hello reference");
    assert_eq!(person.asked(), ["everything.echo"]);

    // Strict validation runs on the remote schema before anything is sent or asked.
    let invalid = call(
        &registry,
        "everything.echo",
        json!({"message": 7}),
        approved(&person),
    )
    .await;
    assert_eq!(code(&invalid), codes::TOOL_VALIDATION_FAILED, "{invalid:?}");
    assert_eq!(person.asked().len(), 1);
}

#[tokio::test]
async fn everything_over_stdio_trusted_keeps_hints_and_its_tools_answer() {
    let registry = registry();
    let (_mounts, _) = mount(&registry, everything_stdio(json!({"trusted": true}))).await;
    let echo = registry.tool_definition("everything.echo").unwrap();
    assert_eq!(
        echo.annotations.as_ref().unwrap().read_only_hint,
        Some(true),
        "{echo:?}"
    );
    let none = ToolCallOptions::default;

    let echoed = call(
        &registry,
        "everything.echo",
        json!({"message": "trusted"}),
        none(),
    )
    .await;
    assert!(echoed.error.is_none(), "{echoed:?}");
    assert_eq!(text(&echoed), "Echo: trusted");

    let sum = call(
        &registry,
        "everything.get-sum",
        json!({"a": 2, "b": 40}),
        none(),
    )
    .await;
    assert!(sum.error.is_none(), "{sum:?}");
    assert!(text(&sum).contains("42"), "{sum:?}");

    // The output schema the server declares is checked by our pipeline on the way back.
    let structured = registry
        .tool_definition("everything.get-structured-content")
        .unwrap();
    assert!(structured.output_schema.is_some(), "{structured:?}");
    let weather = call(
        &registry,
        "everything.get-structured-content",
        json!({"location": "Chicago"}),
        none(),
    )
    .await;
    assert!(weather.error.is_none(), "{weather:?}");
    assert_eq!(
        weather.structured_content,
        Some(json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}))
    );
    // The input schema's enum is enforced before anything is sent.
    let nowhere = call(
        &registry,
        "everything.get-structured-content",
        json!({"location": "Atlantis"}),
        none(),
    )
    .await;
    assert_eq!(code(&nowhere), codes::TOOL_VALIDATION_FAILED, "{nowhere:?}");

    // A non-text block comes back whole as a JSON content block.
    let image = call(&registry, "everything.get-tiny-image", json!({}), none()).await;
    assert!(image.error.is_none(), "{image:?}");
    let blocks: Vec<&Value> = image
        .content
        .iter()
        .filter_map(|block| match block {
            ToolContent::Json { json } => Some(json),
            ToolContent::Text { .. } => None,
        })
        .collect();
    assert_eq!(blocks.len(), 1, "{:?}", image.content);
    assert_eq!(blocks[0]["type"], "image");
    assert_eq!(blocks[0]["mimeType"], "image/png");
    assert!(
        blocks[0]["data"]
            .as_str()
            .is_some_and(|data| data.starts_with("iVBORw0KGgo")),
        "a base64 PNG: {}",
        blocks[0]
    );
    assert!(
        matches!(&image.content[0], ToolContent::Text { text } if text.contains("image")),
        "{:?}",
        image.content
    );
}

#[tokio::test]
async fn everything_over_stdio_a_timeout_ends_a_long_operation_quickly() {
    let registry = registry();
    let (_mounts, _) = mount(&registry, everything_stdio(json!({"trusted": true}))).await;
    let options = ToolCallOptions::default().with_timeout_ms(300);
    let started = Instant::now();
    let slow = call(
        &registry,
        "everything.trigger-long-running-operation",
        json!({"duration": 30, "steps": 3}),
        options,
    )
    .await;
    let took = started.elapsed();
    assert_eq!(code(&slow), codes::TOOL_TIMEOUT, "{slow:?}");
    assert!(
        took < Duration::from_secs(3),
        "a 300 ms timeout took {took:?}"
    );
    // The connection is intact: the next call is answered at once.
    let started = Instant::now();
    let echoed = call(
        &registry,
        "everything.echo",
        json!({"message": "after"}),
        ToolCallOptions::default(),
    )
    .await;
    assert!(echoed.error.is_none(), "{echoed:?}");
    assert_eq!(text(&echoed), "Echo: after");
    assert!(started.elapsed() < Duration::from_secs(3));
}

/// server-everything over streamable HTTP on `port`; ready once it logs that it listens.
async fn everything_http(port: u16) -> tokio::process::Child {
    let mut child = tokio::process::Command::new(node())
        .arg(server_script("server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start node (set MCP_NODE to its path)");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let listening = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            let ready = line.contains("listening on port");
            seen.push(line);
            if ready {
                return true;
            }
        }
        false
    })
    .await;
    assert!(
        matches!(listening, Ok(true)),
        "server-everything did not start listening on port {port}: {seen:?}"
    );
    // Keep draining its log so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    child
}

#[tokio::test]
async fn everything_over_streamable_http_mounts_by_url() {
    let port = free_port();
    let mut child = everything_http(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let registry = registry();
    let (_mounts, status) = mount(
        &registry,
        json!({"mcpServers": {"web": {"type": "http", "url": url}}}),
    )
    .await;
    assert_eq!(status.transport, "http");
    assert_eq!(
        status.protocol_version.as_deref(),
        Some(EVERYTHING_REVISION),
        "{status:?}"
    );
    assert!(has_tool(&registry, "web.echo"), "{:?}", status.tools);
    assert!(!has_tool(&registry, "web.trigger-elicitation-request"));
    let person = Person::approving();
    let echoed = call(
        &registry,
        "web.echo",
        json!({"message": "over http"}),
        approved(&person),
    )
    .await;
    assert!(echoed.error.is_none(), "{echoed:?}");
    assert_eq!(text(&echoed), "Echo: over http");
    assert_eq!(person.asked(), ["web.echo"]);
    child.kill().await.unwrap();
}

#[tokio::test]
async fn filesystem_on_a_temp_folder_lists_reads_writes_with_approval_and_refuses_outside() {
    let dir = tempfile::tempdir().unwrap();
    // The server resolves symlinks in its allowed folder; use the same resolved path.
    let folder = dir.path().canonicalize().unwrap();
    std::fs::write(folder.join("hello.txt"), "hello from disk\n").unwrap();
    std::fs::create_dir(folder.join("sub")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().canonicalize().unwrap().join("secret.txt");
    std::fs::write(&secret, "not yours\n").unwrap();

    let registry = registry();
    let (_mounts, status) = mount(&registry, filesystem_stdio(&folder, json!({}))).await;
    for name in ["fs.list_directory", "fs.read_text_file", "fs.write_file"] {
        assert!(has_tool(&registry, name), "{name} in {:?}", status.tools);
    }
    let person = Person::approving();
    let path = |name: &str| folder.join(name).to_string_lossy().into_owned();

    let listed = call(
        &registry,
        "fs.list_directory",
        json!({"path": folder.to_string_lossy()}),
        approved(&person),
    )
    .await;
    assert!(listed.error.is_none(), "{listed:?}");
    let listing = text(&listed);
    assert!(
        listing.contains("[FILE] hello.txt") && listing.contains("[DIR] sub"),
        "{listing}"
    );

    let read = call(
        &registry,
        "fs.read_text_file",
        json!({"path": path("hello.txt")}),
        approved(&person),
    )
    .await;
    assert!(read.error.is_none(), "{read:?}");
    assert_eq!(
        read.structured_content,
        Some(json!({"content": "hello from disk\n"}))
    );

    // A destructive tool: no person, no write.
    let target = folder.join("written.txt");
    let unasked = call(
        &registry,
        "fs.write_file",
        json!({"path": path("written.txt"), "content": "x"}),
        ToolCallOptions::default(),
    )
    .await;
    assert_eq!(code(&unasked), codes::TOOL_APPROVAL_REQUIRED, "{unasked:?}");
    assert!(!target.exists());
    let written = call(
        &registry,
        "fs.write_file",
        json!({"path": path("written.txt"), "content": "written through the pipeline\n"}),
        approved(&person),
    )
    .await;
    assert!(written.error.is_none(), "{written:?}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "written through the pipeline\n"
    );
    assert_eq!(
        person.asked(),
        ["fs.list_directory", "fs.read_text_file", "fs.write_file"]
    );

    // Outside the allowed folder the server answers isError: a coded remote tool error.
    let refused = call(
        &registry,
        "fs.read_text_file",
        json!({"path": secret.to_string_lossy()}),
        approved(&person),
    )
    .await;
    let error = refused
        .error
        .clone()
        .expect("outside the folder is refused");
    assert_eq!(error.code, MCP_REMOTE_TOOL_ERROR, "{refused:?}");
    assert_eq!(error.retryable, Some(false));
    let details = error.details.unwrap();
    assert_eq!(details["server"], "fs");
    assert_eq!(details["tool"], "read_text_file");
    assert!(
        error.message.contains("fs") && !error.message.contains("not yours"),
        "{}",
        error.message
    );
    // The server is still there for the next call.
    let again = call(
        &registry,
        "fs.read_text_file",
        json!({"path": path("written.txt")}),
        approved(&person),
    )
    .await;
    assert!(again.error.is_none(), "{again:?}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
