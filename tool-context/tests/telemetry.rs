//! Each call is exactly one `execute_tool {name}` span carrying the GenAI attributes and our own
//! decisions (policy, approval, idempotency, state, output bytes), under the names pinned in
//! `tool_protocol::telemetry`; arguments and results only when the registry opts in, redacted.

mod common;
#[path = "common/spans.rs"]
mod spans;

use std::sync::Arc;

use common::{Counter, echo_tool, request};
use serde_json::json;
use spans::capture;
use tokio_util::sync::CancellationToken;
use tool_context::{
    BoxError, FixedPolicy, InteractionOutcome, InteractionRequest, PolicyDecision, ToolCallOptions,
    ToolInteraction, ToolRegistry, tool_call_span,
};
use tool_protocol::observability::ObservabilityPolicy;
use tool_protocol::telemetry::attr;
use tool_protocol::{ToolCallId, codes};

fn registry(policy: PolicyDecision) -> ToolRegistry {
    ToolRegistry::builder()
        .tool(echo_tool("echo", &Counter::default()))
        .policy(FixedPolicy(policy))
        .build()
        .unwrap()
}

struct Approve;

#[async_trait::async_trait]
impl ToolInteraction for Approve {
    async fn interact(
        &self,
        _request: &InteractionRequest,
        _cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        Ok(InteractionOutcome::Approved)
    }
}

#[tokio::test]
async fn an_allowed_call_is_one_execute_tool_span_with_the_genai_attributes() {
    let (capture, _guard) = capture();
    let registry = registry(PolicyDecision::Allow);
    let mut call = request("echo", json!({"path": "index.html"}));
    call.id = Some(ToolCallId::from("call-1"));
    let options = ToolCallOptions::default().with_timeout_ms(5_000);
    let result = registry.call_tool(call, options).await;
    assert!(!result.is_error());

    let span = capture.only();
    assert_eq!(span.name, "execute_tool");
    assert_eq!(span.get(attr::OTEL_NAME), Some("execute_tool echo"));
    assert_eq!(span.get(attr::OTEL_KIND), Some("internal"));
    assert_eq!(span.get(attr::GEN_AI_OPERATION_NAME), Some("execute_tool"));
    assert_eq!(span.get(attr::GEN_AI_TOOL_NAME), Some("echo"));
    assert_eq!(span.get(attr::GEN_AI_TOOL_CALL_ID), Some("call-1"));
    assert_eq!(span.get(attr::GEN_AI_TOOL_TYPE), Some("function"));
    assert_eq!(span.get(attr::POLICY_DECISION), Some("allow"));
    assert_eq!(span.get(attr::CALL_STATE), Some("completed"));
    assert_eq!(span.get(attr::TIMEOUT_MS), Some("5000"));
    assert_eq!(span.get(attr::CALL_SOURCE), Some("mcp"));
    assert_eq!(span.get(attr::OTEL_STATUS_CODE), Some("ok"));
    assert_eq!(
        span.get(attr::OUTPUT_BYTES),
        Some(result.output_bytes().to_string().as_str())
    );
    assert!(
        span.get(attr::TRACE_ID)
            .is_some_and(|id| id.len() > 17 && id.as_bytes()[16] == b'-')
    );
    for absent in [
        attr::ERROR_TYPE,
        attr::APPROVAL_OUTCOME,
        attr::IDEMPOTENCY_OUTCOME,
        attr::GEN_AI_TOOL_CALL_ARGUMENTS,
        attr::GEN_AI_TOOL_CALL_RESULT,
    ] {
        assert_eq!(span.get(absent), None, "{absent} is not recorded");
    }
    let text = format!("{:?}", span.fields);
    assert!(
        !text.contains("index.html"),
        "no argument reaches the span: {text}"
    );
}

#[tokio::test]
async fn a_failed_call_records_its_stable_code_as_error_type_and_an_error_status() {
    let (capture, _guard) = capture();
    let registry = registry(PolicyDecision::Deny);
    let result = registry
        .call_tool(
            request("echo", json!({"path": "a"})),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(result.error_code(), Some(codes::TOOL_POLICY_DENIED));

    let span = capture.only();
    assert_eq!(span.get(attr::POLICY_DECISION), Some("deny"));
    assert_eq!(span.get(attr::ERROR_TYPE), Some(codes::TOOL_POLICY_DENIED));
    assert_eq!(span.get(attr::OTEL_STATUS_CODE), Some("error"));
    assert_eq!(span.get(attr::CALL_STATE), Some("failed"));
    assert!(span.get(attr::OTEL_STATUS_DESCRIPTION).is_some());
}

#[tokio::test]
async fn an_approved_call_records_the_ask_the_answer_and_the_wait() {
    let (capture, _guard) = capture();
    let registry = registry(PolicyDecision::Ask);
    let options = ToolCallOptions::default().with_interaction(Arc::new(Approve));
    let result = registry
        .call_tool(request("echo", json!({"path": "a"})), options)
        .await;
    assert!(!result.is_error());

    let span = capture.only();
    assert_eq!(span.get(attr::POLICY_DECISION), Some("ask"));
    assert_eq!(span.get(attr::APPROVAL_OUTCOME), Some("approved"));
    assert!(
        span.get(attr::APPROVAL_WAIT_MS)
            .is_some_and(|ms| ms.parse::<u64>().is_ok())
    );
}

#[tokio::test]
async fn a_keyed_call_claims_and_its_retry_replays() {
    let (capture, _guard) = capture();
    let registry = registry(PolicyDecision::Allow);
    for _ in 0..2 {
        let options = ToolCallOptions::default().with_idempotency_key("op-1");
        let result = registry
            .call_tool(request("echo", json!({"path": "a"})), options)
            .await;
        assert!(!result.is_error());
    }
    let outcomes: Vec<_> = capture
        .closed()
        .iter()
        .map(|span| span.get(attr::IDEMPOTENCY_OUTCOME).map(str::to_owned))
        .collect();
    assert_eq!(
        outcomes,
        [Some("claimed".to_owned()), Some("replayed".to_owned())],
        "the retry runs nothing: it replays the first call's outcome"
    );
}

#[tokio::test]
async fn content_is_recorded_only_by_opt_in_and_through_the_redaction_policy() {
    let (capture, _guard) = capture();
    let echo = tool_context::Tool::new(
        tool_protocol::ToolDefinition::new("echo", "Echoes.", json!({"type": "object"})),
        |arguments: serde_json::Value, _: tool_context::ToolInvocation| async move {
            Ok::<_, tool_protocol::ToolCallError>(arguments)
        },
    );
    let registry = ToolRegistry::builder()
        .tool(echo)
        .policy(FixedPolicy(PolicyDecision::Allow))
        .record_call_content(ObservabilityPolicy::default())
        .build()
        .unwrap();
    let arguments = json!({"path": "a.html", "access_token": "abc123", "source": "<h1>"});
    let result = registry
        .call_tool(request("echo", arguments), ToolCallOptions::default())
        .await;
    assert!(!result.is_error());

    let span = capture.only();
    let recorded = span.get(attr::GEN_AI_TOOL_CALL_ARGUMENTS).unwrap();
    assert!(recorded.contains("a.html"), "{recorded}");
    for secret in ["abc123", "<h1>"] {
        assert!(
            !recorded.contains(secret),
            "{secret} is redacted: {recorded}"
        );
        let result = span.get(attr::GEN_AI_TOOL_CALL_RESULT).unwrap();
        assert!(!result.contains(secret), "{secret} is redacted: {result}");
    }
}

#[tokio::test]
async fn a_caller_span_is_enriched_instead_of_a_second_span() {
    let (capture, _guard) = capture();
    let registry = registry(PolicyDecision::Allow);
    let span = tool_call_span!(
        "tools/call echo",
        "server",
        "mcp.method.name" = "tools/call"
    );
    let options = ToolCallOptions::default().with_span(span);
    let result = registry
        .call_tool(request("echo", json!({"path": "a"})), options)
        .await;
    assert!(!result.is_error());

    let span = capture.only();
    assert_eq!(span.get(attr::OTEL_NAME), Some("tools/call echo"));
    assert_eq!(span.get(attr::OTEL_KIND), Some("server"));
    assert_eq!(span.get(attr::MCP_METHOD_NAME), Some("tools/call"));
    assert_eq!(span.get(attr::GEN_AI_TOOL_NAME), Some("echo"));
    assert_eq!(span.get(attr::CALL_STATE), Some("completed"));
}

#[tokio::test]
async fn a_handler_span_is_a_child_of_the_call_span() {
    let (capture, _guard) = capture();
    let tool = tool_context::Tool::new(
        tool_protocol::ToolDefinition::new("inner", "Opens a span.", json!({"type": "object"})),
        |_: serde_json::Value, _: tool_context::ToolInvocation| async move {
            tracing::info_span!("handler_work").in_scope(|| ());
            Ok::<_, tool_protocol::ToolCallError>(json!({}))
        },
    );
    let registry = ToolRegistry::builder()
        .tool(tool)
        .policy(FixedPolicy(PolicyDecision::Allow))
        .build()
        .unwrap();
    let result = registry
        .call_tool(request("inner", json!({})), ToolCallOptions::default())
        .await;
    assert!(!result.is_error());
    let spans: Vec<_> = capture
        .closed()
        .iter()
        .map(|span| (span.name, span.parent))
        .collect();
    assert_eq!(
        spans,
        [
            ("handler_work", Some("execute_tool")),
            ("execute_tool", None)
        ]
    );
}
