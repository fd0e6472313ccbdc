//! The `tool-context/idempotency` extension with an independent client:
//! `tests/peers/python_idempotency_peer.py` drives a served registry with the Python `mcp` SDK,
//! sending the key in `_meta`: a retry replays without asking or running again, other arguments
//! conflict, bad keys are refused, and an unkeyed call runs as before.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::transport::StreamableHttpServerConfig;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tool_context::{ReadOnlyOrDirectLocal, Tool, ToolInvocation, ToolRegistry};
use tool_context_mcp::{McpToolServer, streamable_http_service};
use tool_protocol::ToolCallError;

#[derive(Deserialize, JsonSchema)]
struct Write {
    text: String,
}

fn registry(writes: &Arc<AtomicU64>) -> ToolRegistry {
    let writes = writes.clone();
    let write = Tool::typed(
        "work.write",
        "Writes.",
        move |input: Write, _call: ToolInvocation| {
            let writes = writes.clone();
            async move {
                let run = writes.fetch_add(1, Ordering::SeqCst) + 1;
                Ok::<_, ToolCallError>(json!({"text": input.text, "run": run}))
            }
        },
    );
    ToolRegistry::builder()
        .tools([write])
        .policy(ReadOnlyOrDirectLocal)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_client_retries_a_keyed_call_and_it_runs_once() {
    let writes = Arc::new(AtomicU64::new(0));
    let server = McpToolServer::new(registry(&writes));
    let service = streamable_http_service(&server, StreamableHttpServerConfig::default());
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/python_idempotency_peer.py"
    );
    let output = tokio::process::Command::new("python3")
        .arg(script)
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .output()
        .await
        .expect("python3 runs (install the client with `pip install mcp`)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python peer failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains("python idempotency peer passed"),
        "{stdout}"
    );
    // The keyed call ran once (its retry replayed); the unkeyed call ran once.
    assert_eq!(writes.load(Ordering::SeqCst), 2);
}
