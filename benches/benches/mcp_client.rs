//! The MCP client (issue 36): one remote tool call through our registry, the server mounted by
//! `tool_context_mcp::client::McpMounts` (trusted, so no approval: validation, policy, the
//! remote handler, the result contract and the conversion back all run), against the same
//! call through rmcp's bare client, in the same process and run.
//!
//! The server is one in-process `McpToolServer` with a trivial `echo` tool, served over
//! streamable HTTP on a loopback port; every client reaches it over its own HTTP connections
//! and negotiates the same revision (the mount's own lifecycle: `server/discover` first, else
//! `initialize`). Two rmcp baselines:
//! - `rmcp_bare_client`: `StreamableHttpClientTransport::from_uri`, rmcp's default, which
//!   keeps no idle connection (`pool_max_idle_per_host(0)`), like the mount's own HTTP client:
//!   the like-for-like baseline, whose gap to the mount is our pipeline (validation, policy,
//!   handler, result conversion);
//! - `rmcp_bare_client_pooled`: the same transport on a plain `reqwest::Client` that reuses
//!   keep-alive connections: faster against a server that sets `TCP_NODELAY`, stalled against
//!   one that does not.
//!
//! The server is served twice: with `TCP_NODELAY` on its accepted sockets (as the studio
//! serves), and as plain `axum::serve` leaves them (as the tests and rmcp's examples serve).
//! On the second, a response written in more than one segment waits for the client's delayed
//! ACK (~40 ms) on a reused keep-alive connection: every client that reuses connections stalls
//! there, which is why rmcp's default keeps none.
//!
//! Each ratio is printed before criterion runs, from the medians of interleaved rounds
//! (`workspace_benches::interleaved`). Goal: ≤ 1.2×.
//!
//! `cargo bench -p workspace-benches --bench mcp_client`

use std::hint::black_box;
use std::time::Duration;

use axum::serve::ListenerExt;
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, StreamableHttpServerConfig};
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Map, Value, json};
use tool_context::{Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_context_mcp::client::{ClientLimits, McpMounts, McpServersConfig, ServerState};
use tool_context_mcp::{McpToolServer, streamable_http_service};
use tool_protocol::{ModelToolCall, ToolCallError, ToolDefinition};

/// Interleaved rounds of each printed ratio (one call of each per round).
const RATIO_ROUNDS: usize = 400;
/// Calls of each before the ratio rounds (connections, allocator and caches settle).
const WARM_UP_CALLS: usize = 200;

/// The server's registry: `echo` returns its text.
fn server_registry() -> ToolRegistry {
    let definition = ToolDefinition::new(
        "echo",
        "Echoes its text.",
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false
        }),
    );
    let echo = Tool::new(
        definition,
        |arguments: Value, _: ToolInvocation| async move {
            Ok::<_, ToolCallError>(json!({"text": arguments["text"]}))
        },
    )
    .read_only();
    ToolRegistry::builder()
        .tool(echo)
        .build()
        .expect("a valid registry")
}

/// Serves `server` at `http://127.0.0.1:<port>/mcp`, its accepted sockets with `TCP_NODELAY`
/// when `nodelay`.
async fn serve(server: &McpToolServer, nodelay: bool) -> String {
    let service = streamable_http_service(server, StreamableHttpServerConfig::default());
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let listener = listener.tap_io(move |tcp| {
        if nodelay {
            tcp.set_nodelay(true).expect("TCP_NODELAY");
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/mcp")
}

/// Our registry with the server mounted as `bench`, trusted; returns the negotiated revision.
async fn mounted(url: &str) -> (ToolRegistry, McpMounts, String) {
    let registry = ToolRegistry::builder().build().expect("a valid registry");
    let mounts = McpMounts::new(&registry, ClientLimits::default());
    let config = json!({"mcpServers": {"bench": {"url": url, "trusted": true}}});
    mounts.apply(&McpServersConfig::from_json(&config).expect("a valid configuration"));
    let status = mounts
        .wait_until_settled("bench", Duration::from_secs(30))
        .await
        .expect("a configured server");
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    let version = status.protocol_version.unwrap_or_default();
    (registry, mounts, version)
}

/// rmcp's bare client with the mount's lifecycle: on rmcp's default transport (`pooled`
/// false), or on a plain `reqwest::Client` that reuses keep-alive connections.
async fn bare(url: &str, pooled: bool) -> (RunningService<RoleClient, ()>, String) {
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    let transport = if pooled {
        let http = reqwest::Client::builder().build().expect("an HTTP client");
        StreamableHttpClientTransport::with_client(
            http,
            StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
        )
    } else {
        StreamableHttpClientTransport::from_uri(url)
    };
    let client =
        ().serve_with_lifecycle(transport, lifecycle)
            .await
            .expect("the bare client connects");
    let version = client
        .peer_info()
        .map(|info| info.protocol_version.to_string())
        .unwrap_or_default();
    (client, version)
}

fn arguments() -> Map<String, Value> {
    json!({"text": "hello"})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

async fn through_registry(registry: &ToolRegistry) {
    let call = ModelToolCall {
        id: None,
        name: "bench.echo".into(),
        arguments: Some(arguments()),
    };
    let result = registry
        .execute_model_tool_call(call, ToolCallOptions::default())
        .await;
    assert!(result.error.is_none(), "{result:?}");
    black_box(result);
}

async fn through_rmcp(client: &RunningService<RoleClient, ()>) {
    let params = CallToolRequestParams::new("echo").with_arguments(arguments());
    let result = client.call_tool(params).await.expect("the call answers");
    assert_eq!(result.is_error, Some(false), "{result:?}");
    black_box(result);
}

/// One server and its three clients.
struct Arms {
    registry: ToolRegistry,
    mounts: McpMounts,
    fresh: RunningService<RoleClient, ()>,
    pooled: RunningService<RoleClient, ()>,
    revision: String,
}

async fn arms(nodelay: bool) -> Arms {
    let url = serve(&McpToolServer::new(server_registry()), nodelay).await;
    let (registry, mounts, revision) = mounted(&url).await;
    let (fresh, theirs) = bare(&url, false).await;
    let (pooled, pooled_revision) = bare(&url, true).await;
    assert_eq!(revision, theirs, "both clients speak the same revision");
    assert_eq!(
        revision, pooled_revision,
        "both clients speak the same revision"
    );
    for _ in 0..WARM_UP_CALLS {
        through_registry(&registry).await;
        through_rmcp(&fresh).await;
        through_rmcp(&pooled).await;
    }
    Arms {
        registry,
        mounts,
        fresh,
        pooled,
        revision,
    }
}

fn remote_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    for (server, nodelay) in [("nodelay_server", true), ("default_axum_server", false)] {
        let arms = runtime.block_on(arms(nodelay));
        let Arms {
            registry,
            fresh,
            pooled,
            ..
        } = &arms;
        for (baseline, client) in [
            ("rmcp_bare_client", fresh),
            ("rmcp_bare_client_pooled", pooled),
        ] {
            let ratio = workspace_benches::interleaved(
                RATIO_ROUNDS,
                || runtime.block_on(through_registry(registry)),
                || runtime.block_on(through_rmcp(client)),
            );
            println!(
                "mcp_client_call/{server} (revision {}, streamable HTTP on loopback): through the registry (mounted, trusted) {:?}, {baseline} {:?}, ratio {:.2}x (goal <= 1.2x; medians of {RATIO_ROUNDS} interleaved rounds)",
                arms.revision,
                ratio.subject,
                ratio.baseline,
                ratio.times()
            );
        }
        let mut group = c.benchmark_group(format!("mcp_client_call/{server}"));
        group.bench_function("baseline_rmcp_bare_client", |b| {
            b.to_async(&runtime).iter(|| through_rmcp(fresh))
        });
        group.bench_function("baseline_rmcp_bare_client_pooled", |b| {
            b.to_async(&runtime).iter(|| through_rmcp(pooled))
        });
        group.bench_function("registry_mounted_trusted", |b| {
            b.to_async(&runtime).iter(|| through_registry(registry))
        });
        group.finish();
        runtime.block_on(async {
            arms.mounts.shutdown().await;
            let _ = arms.fresh.cancel().await;
            let _ = arms.pooled.cancel().await;
        });
    }
}

criterion_group!(benches, remote_call);
criterion_main!(benches);
