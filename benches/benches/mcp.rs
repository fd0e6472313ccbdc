//! tool-context-mcp costs, each next to a baseline measured in the same process (ratios are
//! printed before criterion runs):
//! - `mcp_tools_list`: exporting a 40-tool catalog as MCP tools (2020-12 schema conversion,
//!   annotations) against cloning the canonical definitions (`list_all_tools`).
//! - `mcp_call`: one `tools/call` of a trivial read-only tool through an rmcp client and the
//!   adapter over an in-memory byte stream (JSON-RPC framing both ways) against calling the
//!   registry directly.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Map, Value, json};
use tool_context::{Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_context_mcp::convert::mcp_tool;
use tool_context_mcp::{McpToolServer, serve_transport};
use tool_protocol::{ToolCallError, ToolCallRequest, ToolDefinition};

const CATALOG_TOOLS: usize = 40;
const LIST_ITERATIONS: u32 = 2_000;
const CALL_ITERATIONS: u32 = 2_000;

fn input_schema() -> Value {
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 160},
            "occurrence": {"$ref": "#/definitions/Occurrence"},
            "expectedRevision": {"type": ["integer", "null"], "minimum": 0}
        },
        "required": ["path"],
        "additionalProperties": false,
        "definitions": {"Occurrence": {"type": "string", "enum": ["first", "all"]}}
    })
}

fn registry() -> ToolRegistry {
    let tools = (0..CATALOG_TOOLS).map(|index| {
        let mut definition = ToolDefinition::new(
            format!("workspace.tool{index}"),
            "Reads a file.",
            input_schema(),
        );
        definition.output_schema =
            Some(json!({"type": "object", "properties": {"path": {"type": "string"}}}));
        Tool::new(
            definition,
            |arguments: Value, _: ToolInvocation| async move {
                Ok::<_, ToolCallError>(json!({"path": arguments["path"]}))
            },
        )
        .read_only()
    });
    ToolRegistry::builder()
        .tools(tools)
        .build()
        .expect("a valid registry")
}

fn arguments() -> Map<String, Value> {
    json!({"path": "src/app.js"})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn average(iterations: u32, mut run: impl FnMut()) -> Duration {
    let started = Instant::now();
    for _ in 0..iterations {
        run();
    }
    started.elapsed() / iterations
}

fn tools_list(c: &mut Criterion) {
    let registry = registry();
    let baseline = average(LIST_ITERATIONS, || {
        black_box(registry.list_all_tools());
    });
    let export = average(LIST_ITERATIONS, || {
        black_box(
            registry
                .list_all_tools()
                .iter()
                .map(mcp_tool)
                .collect::<Vec<_>>(),
        );
    });
    println!(
        "mcp_tools_list ({CATALOG_TOOLS} tools): baseline {baseline:?}, MCP export {export:?}, ratio {:.1}x",
        export.as_secs_f64() / baseline.as_secs_f64()
    );
    let mut group = c.benchmark_group("mcp_tools_list");
    group.bench_function("baseline_list_all_tools", |b| {
        b.iter(|| black_box(registry.list_all_tools()))
    });
    group.bench_function("mcp_export", |b| {
        b.iter(|| {
            black_box(
                registry
                    .list_all_tools()
                    .iter()
                    .map(mcp_tool)
                    .collect::<Vec<_>>(),
            )
        });
    });
    group.finish();
}

async fn connect(server: McpToolServer) -> RunningService<RoleClient, ()> {
    let (client_io, server_io) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_io);
        let _ = serve_transport(&server, (read, write)).await;
    });
    let (read, write) = tokio::io::split(client_io);
    ().serve((read, write)).await.expect("the client connects")
}

async fn mcp_call(client: &RunningService<RoleClient, ()>) {
    let params = CallToolRequestParams::new("workspace.tool0").with_arguments(arguments());
    let result = client.call_tool(params).await.expect("the call answers");
    assert_eq!(result.is_error, Some(false));
}

async fn direct_call(registry: &ToolRegistry) {
    let request = ToolCallRequest::new("workspace.tool0", arguments());
    assert!(
        !registry
            .call_tool(request, ToolCallOptions::default())
            .await
            .is_error()
    );
}

fn call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let registry = registry();
    let client = runtime.block_on(connect(McpToolServer::new(registry.clone())));
    let baseline = average(CALL_ITERATIONS, || runtime.block_on(direct_call(&registry)));
    let over_mcp = average(CALL_ITERATIONS, || runtime.block_on(mcp_call(&client)));
    println!(
        "mcp_call: baseline registry.call_tool {baseline:?}, rmcp client -> adapter {over_mcp:?}, ratio {:.1}x",
        over_mcp.as_secs_f64() / baseline.as_secs_f64()
    );
    let mut group = c.benchmark_group("mcp_call");
    group.bench_function("baseline_registry_call_tool", |b| {
        b.to_async(&runtime).iter(|| direct_call(&registry))
    });
    group.bench_function("rmcp_client_over_stream", |b| {
        b.to_async(&runtime).iter(|| mcp_call(&client))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = tools_list, call
}
criterion_main!(benches);
