//! The durable diagnostic policy bounds what a failed record keeps, but never its error code:
//! a replay in another process must see a contract code (issue 19).

mod durable_support;

use std::sync::Arc;

use durable_support::*;
use serde_json::json;
use tool_context::{AllowAll, Tool, ToolRegistry};
use tool_durable_operations::{DurableOperationStore, OperationState};
use tool_protocol::ToolCallError;
use tool_protocol::observability::{ObservabilityPolicy, ObservabilityPolicyOptions};

fn tiny_strings_registry(
    store: &Arc<DurableOperationStore>,
    owner: &str,
    tool: Tool,
) -> ToolRegistry {
    let policy = ObservabilityPolicy::new(&ObservabilityPolicyOptions {
        max_string_length: Some(4),
        ..ObservabilityPolicyOptions::default()
    })
    .unwrap();
    ToolRegistry::builder()
        .tool(tool)
        .policy(AllowAll)
        .durable_store(Arc::clone(store))
        .durable_owner_id(owner)
        .durable_diagnostic_policy(policy)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_failed_record_keeps_the_whole_code_under_a_tiny_string_limit() {
    let store = memory_store();
    let runs = Runs::default();
    let failing = || {
        tool(&runs, |_args, _call| async move {
            Err(ToolCallError::new("WORKSPACE_WRITE_FAILED", "disk full")
                .with_retryable(false)
                .with_details(json!({"path": "index.html"})))
        })
    };
    let first = tiny_strings_registry(&store, "worker-a", failing());
    let second = tiny_strings_registry(&store, "worker-b", failing());
    let failed = call(&first, "a-1", "write-1", 5).await;
    assert_eq!(failed.error_code(), Some("WORKSPACE_WRITE_FAILED"));
    let record = status(&first, "write-1").await;
    assert_eq!(record.state, OperationState::Failed);
    let stored = record.result.unwrap();
    assert_eq!(stored["error"]["code"], "WORKSPACE_WRITE_FAILED");
    assert_eq!(stored["error"]["details"]["path"], "inde… [truncated]");
    let replay = call(&second, "b-1", "write-1", 5).await;
    assert_eq!(replay.error_code(), Some("WORKSPACE_WRITE_FAILED"));
    assert_eq!(replay.error.unwrap().retryable, Some(false));
    assert_eq!(runs.get(), 1);
}
