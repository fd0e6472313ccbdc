//! An independent 2026-07-28 peer: `tests/peers/python_2026_peer.py` drives a served registry
//! with the Python `mcp` SDK (discover, list, call, `input_required` approvals accepted and
//! declined, altered and replayed `requestState` refused) and raw JSON-RPC for a task polled to
//! completion. `scripts/test.sh` installs the package.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tool_context::{ReadOnlyOrDirectLocal, Tool, ToolInvocation, ToolRegistry};
use tool_context_mcp::McpToolServer;
use tool_protocol::ToolCallError;

mod python_support;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

#[derive(Deserialize, JsonSchema)]
struct Write {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Sleep {
    ms: u64,
}

fn registry(writes: &Arc<AtomicU64>) -> ToolRegistry {
    let read = Tool::typed(
        "work.read",
        "Reads.",
        |_input: Empty, _call: ToolInvocation| async {
            Ok::<_, ToolCallError>(json!({"ok": true}))
        },
    )
    .read_only();
    let write = {
        let writes = writes.clone();
        Tool::typed(
            "work.write",
            "Writes.",
            move |input: Write, _call: ToolInvocation| {
                let writes = writes.clone();
                async move {
                    writes.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, ToolCallError>(json!({"text": input.text}))
                }
            },
        )
    };
    let sleep = Tool::typed(
        "work.sleep",
        "Sleeps.",
        |input: Sleep, _call: ToolInvocation| async move {
            tokio::time::sleep(Duration::from_millis(input.ms)).await;
            Ok::<_, ToolCallError>(json!({"slept": input.ms}))
        },
    )
    .read_only();
    ToolRegistry::builder()
        .tools([read, write, sleep])
        .policy(ReadOnlyOrDirectLocal)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_peer_speaks_2026_07_28_with_approvals_and_tasks() {
    let writes = Arc::new(AtomicU64::new(0));
    let server = McpToolServer::new(registry(&writes)).with_task_after(Duration::from_millis(100));
    let url = python_support::serve(&server).await;
    let stdout = python_support::run_peer("python_2026_peer.py", &url).await;
    assert!(stdout.contains("python 2026-07-28 peer passed"), "{stdout}");
    // Two approved writes ran (the SDK's round and the manual one); declined and refused ones
    // never did.
    assert_eq!(writes.load(Ordering::SeqCst), 2);
}
