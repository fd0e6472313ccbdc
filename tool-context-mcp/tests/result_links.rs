//! Large results over the wire (2026-07-28): a result past the inline size is its start plus a
//! `resource_link` that `resources/read` resolves to the whole text; a tool announced with
//! `_meta["anthropic/maxResultSizeChars"]` is sent whole up to that size; a result over the
//! stored bound still fails with `TOOL_OUTPUT_LIMIT_EXCEEDED`; other owners cannot read a link.

mod wire;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_context::{ReadOnlyOrDirectLocal, Tool, ToolInvocation, ToolNamePatterns, ToolRegistry};
use tool_context_mcp::result_links::{MAX_RESULT_SIZE_META_KEY, RESULT_URI_PREFIX};
use tool_context_mcp::{McpToolServer, ResultLinks};
use tool_protocol::ToolCallError;
use wire::{Wire, serve};

#[derive(Deserialize, JsonSchema)]
struct Size {
    chars: usize,
}

/// `text.make` and `logs.make` return `chars` characters (`é`, two bytes each).
fn registry() -> ToolRegistry {
    let maker = |name: &str| {
        Tool::typed(
            name,
            "Makes text.",
            |size: Size, _: ToolInvocation| async move {
                Ok::<_, ToolCallError>(Value::String("é".repeat(size.chars)))
            },
        )
        .read_only()
    };
    ToolRegistry::builder()
        .tools([maker("text.make"), maker("logs.make")])
        .policy(ReadOnlyOrDirectLocal)
        .build()
        .unwrap()
}

fn server() -> McpToolServer {
    McpToolServer::new(registry())
        .with_result_links(ResultLinks::new(1_000).with_max_stored_bytes(100_000))
        .with_max_result_size_chars(ToolNamePatterns::new(["logs.*"]), 5_000)
}

fn call(tool: &str, chars: usize) -> Value {
    json!({"name": tool, "arguments": {"chars": chars}})
}

fn blocks_of_type<'a>(result: &'a Value, kind: &str) -> Vec<&'a Value> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|block| block["type"] == kind)
        .collect()
}

#[tokio::test]
async fn a_long_result_is_cut_and_linked_and_the_link_reads_whole() {
    let url = serve(&server()).await;
    let wire = Wire::new(&url, json!({}));
    let result = wire.result("tools/call", call("text.make", 20_000)).await;
    assert_ne!(result["isError"], true, "{result}");
    let text = blocks_of_type(&result, "text")[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&"é".repeat(1_000)),
        "the first 1,000 characters are inline"
    );
    assert!(text.contains("1000 of 20000 characters"), "{text}");
    let links = blocks_of_type(&result, "resource_link");
    assert_eq!(links.len(), 1, "{result}");
    let uri = links[0]["uri"].as_str().unwrap();
    assert!(uri.starts_with(RESULT_URI_PREFIX));
    assert_eq!(links[0]["size"], 40_000);
    assert!(
        result.get("structuredContent").is_none(),
        "a 20,000-character value is not inline"
    );
    let read = wire.result("resources/read", json!({"uri": uri})).await;
    assert_eq!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        20_000
    );
    assert_eq!(read["contents"][0]["uri"], uri);
}

#[tokio::test]
async fn a_result_of_exactly_the_inline_size_is_whole_and_not_linked() {
    let url = serve(&server()).await;
    let wire = Wire::new(&url, json!({}));
    let result = wire.result("tools/call", call("text.make", 1_000)).await;
    assert!(
        blocks_of_type(&result, "resource_link").is_empty(),
        "{result}"
    );
    let linked = wire.result("tools/call", call("text.make", 1_001)).await;
    assert_eq!(blocks_of_type(&linked, "resource_link").len(), 1);
}

#[tokio::test]
async fn an_announced_tool_is_sent_whole_up_to_its_size() {
    let url = serve(&server()).await;
    let wire = Wire::new(&url, json!({}));
    let list = wire.result("tools/list", json!({})).await;
    let meta_of = |name: &str| {
        list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap()["_meta"][MAX_RESULT_SIZE_META_KEY]
            .clone()
    };
    assert_eq!(meta_of("logs.make"), 5_000);
    assert_eq!(meta_of("text.make"), Value::Null);
    let whole = wire.result("tools/call", call("logs.make", 5_000)).await;
    assert!(blocks_of_type(&whole, "resource_link").is_empty());
    let linked = wire.result("tools/call", call("logs.make", 5_001)).await;
    assert_eq!(blocks_of_type(&linked, "resource_link").len(), 1);
}

#[tokio::test]
async fn a_result_over_the_stored_bound_still_fails_as_too_large() {
    let url = serve(&server()).await;
    let wire = Wire::new(&url, json!({}));
    // 60,000 two-byte characters: 120,000 bytes of text (and as much structured), over 100,000.
    let result = wire.result("tools/call", call("text.make", 60_000)).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["_meta"]["tool-context/error"]["code"],
        "TOOL_OUTPUT_LIMIT_EXCEEDED"
    );
}

#[tokio::test]
async fn another_owner_and_an_unknown_uri_are_resource_not_found() {
    // 2026-07-28 answers an unknown resource with -32602 (rmcp maps -32002 to it on the wire).
    let shared = tool_context_mcp::rmcp::model::ErrorCode::INVALID_PARAMS.0;
    let store = std::sync::Arc::new(tool_durable_operations::DurableOperationStore::new(
        std::sync::Arc::new(tool_durable_operations::MemoryBackend::new()),
    ));
    let alice = serve(
        &server()
            .with_durable_store(store.clone())
            .with_request_owner("alice"),
    )
    .await;
    let mallory = serve(
        &server()
            .with_durable_store(store)
            .with_request_owner("mallory"),
    )
    .await;
    let result = Wire::new(&alice, json!({}))
        .result("tools/call", call("text.make", 2_000))
        .await;
    let uri = blocks_of_type(&result, "resource_link")[0]["uri"]
        .as_str()
        .unwrap()
        .to_owned();
    let foreign = Wire::new(&mallory, json!({}))
        .send("resources/read", json!({"uri": uri}))
        .await;
    assert_eq!(foreign["error"]["code"], shared, "{foreign}");
    assert_eq!(foreign["error"]["data"]["uri"], uri.as_str());
    let unknown = Wire::new(&alice, json!({}))
        .send(
            "resources/read",
            json!({"uri": format!("{RESULT_URI_PREFIX}{}", uuid::Uuid::new_v4())}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], shared, "{unknown}");
    let own = Wire::new(&alice, json!({}))
        .result("resources/read", json!({"uri": uri}))
        .await;
    assert_eq!(
        own["contents"][0]["text"].as_str().unwrap().chars().count(),
        2_000
    );
}
