//! The `tool-context/idempotency` extension with an independent client:
//! `tests/peers/python_idempotency_peer.py` drives a served registry with the Python `mcp` SDK,
//! sending the key in `_meta`: a retry replays without asking or running again, other arguments
//! conflict, bad keys are refused, and an unkeyed call runs as before.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tool_context::{ReadOnlyOrDirectLocal, Tool, ToolInvocation, ToolRegistry};
use tool_context_mcp::McpToolServer;
use tool_protocol::ToolCallError;

mod python_support;

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
    let url = python_support::serve(&McpToolServer::new(registry(&writes))).await;
    let stdout = python_support::run_peer("python_idempotency_peer.py", &url).await;
    assert!(
        stdout.contains("python idempotency peer passed"),
        "{stdout}"
    );
    // The keyed call ran once (its retry replayed); the unkeyed call ran once.
    assert_eq!(writes.load(Ordering::SeqCst), 2);
}
