//! Typed tools close their object schemas by default (issue 39, defect 5): strict validation
//! refuses unknown arguments even without `#[serde(deny_unknown_fields)]`, nested objects
//! included, and a tool can opt out with [`Tool::open_objects`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_context::{AllowAll, Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_protocol::{ToolCallError, ToolCallRequest, ToolCallResult, codes};

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Range {
    start: u32,
    end: u32,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct ReadInput {
    path: String,
    #[serde(default)]
    range: Option<Range>,
    /// A map stays a map: its own `additionalProperties` is kept.
    #[serde(default)]
    labels: BTreeMap<String, String>,
    /// Free-form JSON stays free-form.
    #[serde(default)]
    extra: Option<Value>,
}

#[derive(Serialize, JsonSchema)]
struct ReadOutput {
    path: String,
}

fn read_tool(runs: &Arc<AtomicUsize>) -> Tool {
    let runs = Arc::clone(runs);
    Tool::typed(
        "fs.read",
        "Reads.",
        move |input: ReadInput, _call: ToolInvocation| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ToolCallError>(ReadOutput { path: input.path }) }
        },
    )
}

fn registry(tool: Tool) -> ToolRegistry {
    ToolRegistry::builder()
        .tool(tool)
        .policy(AllowAll)
        .build()
        .unwrap()
}

async fn call(registry: &ToolRegistry, arguments: Value) -> ToolCallResult {
    registry
        .call_tool(
            ToolCallRequest::new("fs.read", arguments.as_object().cloned().unwrap()),
            ToolCallOptions::default(),
        )
        .await
}

#[tokio::test]
async fn strict_validation_refuses_unknown_arguments_of_a_typed_tool() {
    let runs = Arc::default();
    let registry = registry(read_tool(&runs));
    let refused = call(&registry, json!({"path": "a", "x": 1})).await;
    assert_eq!(
        refused.error_code(),
        Some(codes::TOOL_VALIDATION_FAILED),
        "{refused:?}"
    );
    let nested = call(
        &registry,
        json!({"path": "a", "range": {"start": 1, "end": 2, "step": 1}}),
    )
    .await;
    assert_eq!(
        nested.error_code(),
        Some(codes::TOOL_VALIDATION_FAILED),
        "{nested:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // Known arguments, map entries and free-form JSON still pass.
    let accepted = call(
        &registry,
        json!({"path": "a", "range": {"start": 1, "end": 2}, "labels": {"any": "x"}, "extra": {"k": 1}}),
    )
    .await;
    assert!(!accepted.is_error(), "{accepted:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn typed_schemas_close_every_struct_object_and_keep_maps_open() {
    let tool = read_tool(&Arc::default());
    let input = &tool.definition().input_schema;
    assert_eq!(input["additionalProperties"], false, "{input:#}");
    assert_eq!(
        input["definitions"]["Range"]["additionalProperties"], false,
        "{input:#}"
    );
    assert_eq!(
        input["properties"]["labels"]["additionalProperties"],
        json!({"type": "string"}),
        "{input:#}"
    );
    let output = tool.definition().output_schema.as_ref().unwrap();
    assert_eq!(output["additionalProperties"], false, "{output:#}");
}

#[tokio::test]
async fn open_objects_opts_a_typed_tool_out() {
    let runs = Arc::default();
    let tool = read_tool(&runs).open_objects();
    let input = &tool.definition().input_schema;
    assert!(input.get("additionalProperties").is_none(), "{input:#}");
    assert!(
        input["definitions"]["Range"]
            .get("additionalProperties")
            .is_none()
    );
    let registry = registry(tool);
    let accepted = call(&registry, json!({"path": "a", "x": 1})).await;
    assert!(!accepted.is_error(), "{accepted:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}
