//! Server spans in the MCP conventions, exported through `tracing-opentelemetry` to an
//! in-memory OpenTelemetry exporter: a client's `traceparent` in `params._meta` makes the
//! server's spans join its trace; a `tools/call` is one SERVER span that is also the call's
//! `execute_tool` span; `mcp.server.operation.duration` reaches the meter provider. The client
//! is raw JSON-RPC over HTTP (2026-07-28, sessionless), so nothing of ours writes the `_meta`.

use std::collections::HashMap;

use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use rmcp::transport::StreamableHttpServerConfig;
use serde_json::{Value, json};
use tool_context::{AllowAll, Tool, ToolInvocation, ToolRegistry};
use tool_context_mcp::{McpToolServer, streamable_http_service};
use tool_protocol::ToolCallError;
use tool_protocol::telemetry::{attr, metric};
use tracing_subscriber::layer::SubscriberExt;

const VERSION: &str = "2026-07-28";
const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// Exports this thread's spans to memory (the test runtime is current-thread, so the server's
/// tasks run here too).
fn export_spans() -> (
    InMemorySpanExporter,
    SdkTracerProvider,
    tracing::subscriber::DefaultGuard,
) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    (exporter, provider, guard)
}

async fn serve() -> String {
    let read = Tool::new(
        tool_protocol::ToolDefinition::new("work.read", "Reads.", json!({"type": "object"})),
        |_: Value, _: ToolInvocation| async move { Ok::<_, ToolCallError>(json!({"ok": true})) },
    )
    .read_only();
    let registry = ToolRegistry::builder()
        .tool(read)
        .policy(AllowAll)
        .build()
        .unwrap();
    let server = McpToolServer::new(registry);
    let service = streamable_http_service(&server, StreamableHttpServerConfig::default());
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/mcp")
}

/// Sends one 2026-07-28 request with `extra_meta` merged into its `_meta`; returns the response.
async fn send(url: &str, id: u64, method: &str, mut params: Value, extra_meta: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    meta.as_object_mut()
        .unwrap()
        .extend(extra_meta.as_object().cloned().unwrap_or_default());
    params["_meta"] = meta;
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", VERSION)
        .header("Mcp-Method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        request = request.header("Mcp-Name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let text = request
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message["id"] == json!(id))
            .unwrap_or_else(|| panic!("no response to {method}: {text}"))
    })
}

fn attributes(span: &SpanData) -> HashMap<String, String> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.to_string(), kv.value.to_string()))
        .collect()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|span| span.name == name).collect()
}

#[tokio::test]
async fn a_tools_call_joins_the_clients_trace_as_one_server_span() {
    let (exporter, provider, _guard) = export_spans();
    let url = serve().await;
    let traceparent = json!({"traceparent": format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01")});
    let answer = send(
        &url,
        7,
        "tools/call",
        json!({"name": "work.read", "arguments": {}}),
        traceparent,
    )
    .await;
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let calls = named(&spans, "tools/call work.read");
    assert_eq!(calls.len(), 1, "one span for the call: {spans:?}");
    let call = calls[0];
    assert_eq!(call.span_kind, SpanKind::Server);
    assert_eq!(call.span_context.trace_id().to_string(), CLIENT_TRACE);
    assert_eq!(call.parent_span_id.to_string(), CLIENT_SPAN);
    let fields = attributes(call);
    for (name, value) in [
        (attr::MCP_METHOD_NAME, "tools/call"),
        (attr::GEN_AI_OPERATION_NAME, "execute_tool"),
        (attr::GEN_AI_TOOL_NAME, "work.read"),
        (attr::MCP_PROTOCOL_VERSION, VERSION),
        (attr::NETWORK_TRANSPORT, "tcp"),
        (attr::JSONRPC_REQUEST_ID, "7"),
        (attr::POLICY_DECISION, "allow"),
        (attr::CALL_STATE, "completed"),
    ] {
        assert_eq!(
            fields.get(name).map(String::as_str),
            Some(value),
            "{name}: {fields:?}"
        );
    }
    assert!(
        spans
            .iter()
            .all(|span| !span.name.starts_with("execute_tool")),
        "the pipeline enriched the server span instead of opening its own: {spans:?}"
    );
}

#[tokio::test]
async fn other_requests_are_server_spans_and_errors_carry_their_code() {
    let (exporter, provider, _guard) = export_spans();
    let url = serve().await;
    send(&url, 1, "tools/list", json!({}), json!({})).await;
    let unknown = send(
        &url,
        2,
        "tools/call",
        json!({"name": "nope", "arguments": {}}),
        json!({}),
    )
    .await;
    let code = unknown["error"]["code"].as_i64().expect("a JSON-RPC error");
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let list = named(&spans, "tools/list")[0];
    assert_eq!(list.span_kind, SpanKind::Server);
    assert_eq!(
        attributes(list)
            .get(attr::MCP_METHOD_NAME)
            .map(String::as_str),
        Some("tools/list")
    );
    assert_ne!(
        list.span_context.trace_id().to_string(),
        CLIENT_TRACE,
        "without a traceparent a request starts its own trace"
    );
    let failed = attributes(named(&spans, "tools/call nope")[0]);
    assert_eq!(failed.get(attr::ERROR_TYPE), Some(&code.to_string()));
    assert_eq!(
        failed.get(attr::RPC_RESPONSE_STATUS_CODE),
        Some(&code.to_string())
    );
}

#[tokio::test]
async fn a_malformed_traceparent_is_ignored() {
    let (exporter, provider, _guard) = export_spans();
    let url = serve().await;
    let bad = json!({"traceparent": format!("00-{CLIENT_TRACE}-0000000000000000-01")});
    let answer = send(
        &url,
        3,
        "tools/call",
        json!({"name": "work.read", "arguments": {}}),
        bad,
    )
    .await;
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let call = named(&spans, "tools/call work.read")[0];
    assert_ne!(call.span_context.trace_id().to_string(), CLIENT_TRACE);
}

#[tokio::test]
async fn request_durations_reach_the_meter_provider() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(provider.clone());
    let url = serve().await;
    send(
        &url,
        4,
        "tools/call",
        json!({"name": "work.read", "arguments": {}}),
        json!({}),
    )
    .await;
    provider.force_flush().unwrap();

    let metrics = exporter.get_finished_metrics().unwrap();
    let duration = metrics
        .iter()
        .flat_map(|resource| resource.scope_metrics())
        .flat_map(|scope| scope.metrics())
        .find(|metric| metric.name() == metric::MCP_SERVER_OPERATION_DURATION)
        .expect("the duration histogram");
    assert_eq!(duration.unit(), "s");
    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = duration.data() else {
        panic!("a histogram of seconds");
    };
    let point = histogram
        .data_points()
        .find(|point| {
            point.attributes().any(|kv| {
                kv.key.as_str() == attr::GEN_AI_TOOL_NAME && kv.value.as_str() == "work.read"
            })
        })
        .expect("the call's point");
    assert!(point.count() >= 1);
    let names: Vec<String> = point
        .attributes()
        .map(|kv| format!("{}={}", kv.key, kv.value))
        .collect();
    for expected in [
        "mcp.method.name=tools/call",
        "gen_ai.operation.name=execute_tool",
        "network.transport=tcp",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected}: {names:?}"
        );
    }
}
