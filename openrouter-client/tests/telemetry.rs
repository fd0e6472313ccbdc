//! A run is an `invoke_agent` span with one `chat {model}` span per provider request and the
//! tool calls' `execute_tool` spans under it, in the GenAI conventions; with the `otel`
//! feature the request durations and token counts reach the global meter provider.

#[path = "../../tool-context/tests/common/spans.rs"]
mod spans;
mod support;

use openrouter_tool_loop::{RegistryExecutor, RunOptions, RunRequest, ToolExecutor};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use serde_json::{Value, json};
use spans::capture;
use support::{FakeOpenRouter, Reply};
use tool_context::{Tool, ToolInvocation, ToolRegistry};
use tool_protocol::export::OpenAiToolNames;
use tool_protocol::telemetry::{attr, metric};
use tool_protocol::{ToolCallError, ToolDefinition};

fn executor() -> RegistryExecutor {
    let add = Tool::new(
        ToolDefinition::new("notes.add", "Adds.", json!({"type": "object"})),
        |_: Value, _: ToolInvocation| async move { Ok::<_, ToolCallError>(json!({"sum": 3})) },
    )
    .read_only();
    RegistryExecutor::new(ToolRegistry::builder().tool(add).build().unwrap())
}

async fn provider_name(executor: &RegistryExecutor, canonical: &str) -> String {
    let tools = executor.list_tools().await;
    OpenAiToolNames::new(&tools)
        .provider_name(canonical)
        .expect("a listed tool")
        .to_owned()
}

/// A completion that names its model and id and reports usage, with tool calls or text.
fn reply(message: Value, finish: &str) -> Reply {
    reply_from("acme/answerer-1", message, finish)
}

fn reply_from(model: &str, message: Value, finish: &str) -> Reply {
    Reply::status(
        200,
        json!({
            "id": "gen-1", "model": model,
            "choices": [{"message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        }),
    )
}

#[tokio::test]
async fn a_run_is_an_agent_span_with_chat_and_tool_spans_under_it() {
    let (capture, _guard) = capture();
    let executor = executor();
    let add = provider_name(&executor, "notes.add").await;
    let call = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": add, "arguments": "{}"}}
    ]});
    let fake = FakeOpenRouter::start(vec![
        reply(call, "tool_calls"),
        reply(json!({"role": "assistant", "content": "3"}), "stop"),
    ])
    .await;
    let request = RunRequest::new("add").with_session_id("session-otel");
    let done = fake
        .client()
        .run(&executor, request, RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "3");

    let model = fake.config().model;
    let agent = capture.named("invoke_agent");
    assert_eq!(agent.len(), 1, "one agent span per run");
    let agent = &agent[0];
    assert_eq!(agent.parent, None);
    assert_eq!(agent.get(attr::GEN_AI_OPERATION_NAME), Some("invoke_agent"));
    assert_eq!(
        agent.get(attr::GEN_AI_CONVERSATION_ID),
        Some("session-otel")
    );
    assert_eq!(agent.get(attr::GEN_AI_PROVIDER_NAME), Some("openrouter"));
    assert_eq!(agent.get(attr::OTEL_STATUS_CODE), Some("ok"));

    let chats = capture.named(&format!("chat {model}"));
    assert_eq!(chats.len(), 2, "one chat span per provider request");
    for chat in &chats {
        assert_eq!(chat.parent, Some("invoke_agent"));
        assert_eq!(chat.get(attr::OTEL_KIND), Some("client"));
        assert_eq!(chat.get(attr::GEN_AI_OPERATION_NAME), Some("chat"));
        assert_eq!(chat.get(attr::GEN_AI_REQUEST_MODEL), Some(model.as_str()));
        assert_eq!(
            chat.get(attr::GEN_AI_RESPONSE_MODEL),
            Some("acme/answerer-1")
        );
        assert_eq!(chat.get(attr::GEN_AI_RESPONSE_ID), Some("gen-1"));
        assert_eq!(chat.get(attr::GEN_AI_USAGE_INPUT_TOKENS), Some("11"));
        assert_eq!(chat.get(attr::GEN_AI_USAGE_OUTPUT_TOKENS), Some("7"));
        assert_eq!(chat.get(attr::SERVER_ADDRESS), Some("127.0.0.1"));
    }
    assert_eq!(
        chats[0].get(attr::GEN_AI_RESPONSE_FINISH_REASONS),
        Some("tool_calls")
    );
    assert_eq!(chats[0].get(attr::RESPONSE_TOOL_CALLS), Some("1"));
    assert_eq!(
        chats[1].get(attr::GEN_AI_RESPONSE_FINISH_REASONS),
        Some("stop")
    );

    let tool = capture.named("execute_tool notes.add");
    assert_eq!(tool.len(), 1);
    assert_eq!(tool[0].parent, Some("invoke_agent"));
    assert_eq!(tool[0].get(attr::GEN_AI_TOOL_CALL_ID), Some("call_1"));
    assert_eq!(tool[0].get(attr::CALL_SOURCE), Some("model"));
    let every = format!("{:?}", capture.closed());
    assert!(
        !every.contains("\"add\""),
        "no prompt text in any span: {every}"
    );
}

#[tokio::test]
async fn a_failed_request_records_its_code_on_the_chat_and_agent_spans() {
    let (capture, _guard) = capture();
    let executor = executor();
    let fake = FakeOpenRouter::start(vec![Reply::status(
        400,
        json!({"error": {"message": "bad request"}}),
    )])
    .await;
    let failure = fake
        .client()
        .run(&executor, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap_err();
    let code = failure.error.code;

    let model = fake.config().model;
    let chat = &capture.named(&format!("chat {model}"))[0];
    assert_eq!(chat.get(attr::ERROR_TYPE), Some(code));
    assert_eq!(chat.get(attr::OTEL_STATUS_CODE), Some("error"));
    let agent = &capture.named("invoke_agent")[0];
    assert_eq!(agent.get(attr::ERROR_TYPE), Some(code));
}

#[tokio::test]
async fn request_durations_and_token_counts_reach_the_meter_provider() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(provider.clone());
    let executor = executor();
    // The tests of this binary share the global provider: this one's points are the ones
    // answered by its own model.
    let fake = FakeOpenRouter::start(vec![reply_from(
        "acme/metrics-1",
        json!({"role": "assistant", "content": "hi"}),
        "stop",
    )])
    .await;
    fake.client()
        .run(&executor, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap();
    provider.force_flush().unwrap();

    let metrics = exporter.get_finished_metrics().unwrap();
    let found = |name: &str| {
        metrics
            .iter()
            .flat_map(|resource| resource.scope_metrics())
            .flat_map(|scope| scope.metrics())
            .find(|metric| metric.name() == name)
            .map(|metric| (metric.unit().to_owned(), metric.data()))
    };
    let (unit, duration) = found(metric::GEN_AI_CLIENT_OPERATION_DURATION).expect("duration");
    assert_eq!(unit, "s");
    let AggregatedMetrics::F64(MetricData::Histogram(duration)) = duration else {
        panic!("a histogram of seconds: {duration:?}");
    };
    let ours = |attributes: Vec<String>| {
        attributes.contains(&"gen_ai.response.model=acme/metrics-1".to_owned())
    };
    let text = |kv: &opentelemetry::KeyValue| format!("{}={}", kv.key, kv.value);
    let point = duration
        .data_points()
        .find(|point| ours(point.attributes().map(text).collect()))
        .expect("this test's request");
    assert_eq!(point.count(), 1);
    let attributes: Vec<String> = point
        .attributes()
        .map(|kv| format!("{}={}", kv.key, kv.value))
        .collect();
    assert!(
        attributes.contains(&"gen_ai.operation.name=chat".to_owned()),
        "{attributes:?}"
    );
    assert!(
        attributes.contains(&"gen_ai.provider.name=openrouter".to_owned()),
        "{attributes:?}"
    );

    let (_, tokens) = found(metric::GEN_AI_CLIENT_TOKEN_USAGE).expect("token usage");
    let AggregatedMetrics::U64(MetricData::Histogram(tokens)) = tokens else {
        panic!("a histogram of tokens: {tokens:?}");
    };
    let sums: Vec<(String, u64)> = tokens
        .data_points()
        .filter(|point| ours(point.attributes().map(text).collect()))
        .map(|point| {
            let kind = point
                .attributes()
                .find(|kv| kv.key.as_str() == metric::GEN_AI_TOKEN_TYPE)
                .map(|kv| kv.value.to_string())
                .unwrap_or_default();
            (kind, point.sum())
        })
        .collect();
    assert!(sums.contains(&("input".to_owned(), 11)), "{sums:?}");
    assert!(sums.contains(&("output".to_owned(), 7)), "{sums:?}");
}
