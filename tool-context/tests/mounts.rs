//! Tools mounted after the build: one pipeline, whole-group swaps, the allowlist, name clashes.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::Notify;
use tool_context::{AllowAll, Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_protocol::{ToolCallError, ToolCallRequest, ToolDefinition, ToolListRequest, codes};

fn tool(name: &str, answer: &'static str) -> Tool {
    Tool::new(
        ToolDefinition::new(
            name,
            "t",
            json!({"type": "object", "additionalProperties": false}),
        ),
        move |_: Value, _: ToolInvocation| async move { Ok::<_, ToolCallError>(json!(answer)) },
    )
}

fn request(name: &str, arguments: Value) -> ToolCallRequest {
    serde_json::from_value(
        json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}}),
    )
    .unwrap()
}

async fn answer(registry: &ToolRegistry, name: &str) -> Result<Value, String> {
    let result = registry
        .call_tool(request(name, json!({})), ToolCallOptions::default())
        .await;
    match result.error {
        None => Ok(result.structured_content.unwrap()),
        Some(error) => Err(error.code),
    }
}

fn registry() -> ToolRegistry {
    ToolRegistry::builder()
        .tool(tool("local", "built"))
        .policy(AllowAll)
        .page_size(2)
        .build()
        .unwrap()
}

#[tokio::test]
async fn mounted_tools_are_listed_after_built_ones_paged_and_called_through_the_pipeline() {
    let registry = registry();
    let report = registry.mount("srv", vec![tool("srv.a", "a1"), tool("srv.b", "b1")]);
    assert_eq!(report.mounted, ["srv.a", "srv.b"]);
    assert_eq!(registry.tool_names(), ["local", "srv.a", "srv.b"]);
    let first = registry
        .list_tools(Some(ToolListRequest::default()))
        .unwrap();
    let rest = registry
        .list_tools(Some(ToolListRequest::after(first.next_cursor.unwrap())))
        .unwrap();
    assert_eq!(rest.tools[0].name, "srv.b");
    assert_eq!(answer(&registry, "srv.a").await, Ok(json!("a1")));
    // Strict validation applies to a mounted tool's schema like any other.
    let invalid = registry
        .call_tool(
            request("srv.a", json!({"extra": 1})),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(invalid.error.unwrap().code, codes::TOOL_VALIDATION_FAILED);
    assert!(registry.tool_definition("srv.b").is_some());
    assert_eq!(registry.to_openai_tools(&Default::default()).len(), 3);
}

#[tokio::test]
async fn a_remount_replaces_the_whole_group_and_an_unmount_removes_it() {
    let registry = registry();
    registry.mount("srv", vec![tool("srv.a", "a1"), tool("srv.b", "b1")]);
    let mut changes = registry.catalog_changes();
    registry.mount("srv", vec![tool("srv.a", "a2"), tool("srv.c", "c2")]);
    assert!(changes.has_changed().unwrap());
    changes.mark_unchanged();
    assert_eq!(registry.tool_names(), ["local", "srv.a", "srv.c"]);
    assert_eq!(answer(&registry, "srv.a").await, Ok(json!("a2")));
    assert_eq!(
        answer(&registry, "srv.b").await,
        Err(codes::TOOL_NOT_FOUND.into())
    );
    assert!(registry.unmount("srv"));
    assert!(changes.has_changed().unwrap());
    assert!(!registry.unmount("srv"));
    assert_eq!(registry.tool_names(), ["local"]);
    assert_eq!(
        answer(&registry, "srv.a").await,
        Err(codes::TOOL_NOT_FOUND.into())
    );
}

#[tokio::test]
async fn names_taken_by_built_tools_other_groups_or_earlier_tools_are_skipped() {
    let registry = registry();
    registry.mount("one", vec![tool("shared", "one")]);
    let report = registry.mount(
        "two",
        vec![
            tool("local", "x"),
            tool("shared", "x"),
            tool("two.t", "x"),
            tool("two.t", "y"),
            tool(" ", "x"),
        ],
    );
    assert_eq!(report.mounted, ["two.t"]);
    let skipped: Vec<&str> = report.skipped.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(skipped, ["local", "shared", "two.t", " "]);
    assert_eq!(answer(&registry, "local").await, Ok(json!("built")));
    assert_eq!(answer(&registry, "shared").await, Ok(json!("one")));
}

#[tokio::test]
async fn the_allowlist_hides_and_refuses_mounted_tools_it_does_not_name() {
    let registry = ToolRegistry::builder()
        .allowed_tool_names(["srv.allowed"])
        .policy(AllowAll)
        .build()
        .unwrap();
    registry.mount(
        "srv",
        vec![tool("srv.allowed", "ok"), tool("srv.hidden", "no")],
    );
    assert_eq!(registry.tool_names(), ["srv.allowed"]);
    assert!(registry.tool_definition("srv.hidden").is_none());
    assert_eq!(
        answer(&registry, "srv.hidden").await,
        Err(codes::TOOL_NOT_ALLOWED.into())
    );
    assert_eq!(
        registry.mounted_tool_names("srv"),
        ["srv.allowed", "srv.hidden"]
    );
}

#[tokio::test]
async fn a_call_running_on_a_replaced_tool_finishes_on_it() {
    let registry = registry();
    let gate = Arc::new(Notify::new());
    let started = Arc::new(Notify::new());
    let (held, begun) = (Arc::clone(&gate), Arc::clone(&started));
    let waiting = Tool::new(
        ToolDefinition::new("srv.wait", "t", json!({"type": "object"})),
        move |_: Value, _: ToolInvocation| {
            let (held, begun) = (Arc::clone(&held), Arc::clone(&begun));
            async move {
                begun.notify_one();
                held.notified().await;
                Ok::<_, ToolCallError>(json!("old"))
            }
        },
    );
    registry.mount("srv", vec![waiting]);
    let call = {
        let registry = registry.clone();
        tokio::spawn(async move { answer(&registry, "srv.wait").await })
    };
    started.notified().await;
    registry.mount("srv", vec![tool("srv.wait", "new")]);
    assert_eq!(answer(&registry, "srv.wait").await, Ok(json!("new")));
    gate.notify_one();
    assert_eq!(call.await.unwrap(), Ok(json!("old")));
}
