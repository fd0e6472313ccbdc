//! A policy built from an async closure (issue 19).

mod common;

use common::{Counter, echo_tool, request};
use serde_json::json;
use tool_context::{PolicyDecision, ToolCallOptions, ToolRegistry, policy_fn};
use tool_protocol::codes;

#[tokio::test]
async fn an_async_closure_is_a_policy() {
    let counter = Counter::default();
    let decided = Counter::default();
    let seen = decided.clone();
    let registry = ToolRegistry::builder()
        .tool(echo_tool("echo", &counter))
        .policy(policy_fn(move |call| {
            seen.bump();
            async move {
                assert_eq!(call.definition.name, "echo");
                assert!(!call.cancellation.is_cancelled());
                match call.request.arguments.as_ref().and_then(|a| a.get("path")) {
                    Some(path) if path == "allowed.txt" => Ok(PolicyDecision::Allow),
                    Some(path) if path == "broken.txt" => Err("policy backend down".into()),
                    _ => Ok(PolicyDecision::Deny),
                }
            }
        }))
        .build()
        .unwrap();
    let call = |path: &str| {
        registry.call_tool(
            request("echo", json!({"path": path})),
            ToolCallOptions::default(),
        )
    };
    let allowed = call("allowed.txt").await;
    assert_eq!(
        allowed.structured_content,
        Some(json!({"path": "allowed.txt"}))
    );
    assert_eq!(
        call("secret.txt").await.error_code(),
        Some(codes::TOOL_POLICY_DENIED)
    );
    let failed = call("broken.txt").await.error.unwrap();
    assert_eq!(
        (failed.code.as_str(), failed.message.as_str()),
        (codes::TOOL_POLICY_FAILED, "policy backend down")
    );
    assert_eq!(decided.get(), 3);
    assert_eq!(counter.get(), 1);
}
