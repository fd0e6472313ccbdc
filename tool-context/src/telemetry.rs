//! The call's one span: `execute_tool {name}` in the OpenTelemetry GenAI conventions.
//!
//! Every call runs in exactly one span. By default the pipeline opens it (kind INTERNAL); a
//! caller that already traces the call (the MCP server's `tools/call {name}` span) opens it with
//! [`tool_call_span!`](crate::tool_call_span) and hands it over with
//! [`ToolCallOptions::with_span`](crate::ToolCallOptions::with_span), so the pipeline enriches
//! that span instead of adding a second one. The names come from
//! [`tool_protocol::telemetry`]; `tracing-opentelemetry` exports the fields as attributes.
//!
//! Nothing here costs anything without a subscriber that enables the span: the fields are
//! evaluated only for an enabled span, and every recorder returns at once for a disabled one.
//! Arguments and results are recorded only when the registry was built with
//! [`record_call_content`](crate::ToolRegistryBuilder::record_call_content), and then through
//! its redaction policy.

use serde_json::Value;
use tool_protocol::observability::{ObservabilityPolicy, serialize_redacted};
use tool_protocol::telemetry::{attr, tool_type};
use tool_protocol::{ToolCallContext, ToolCallResult};
use tracing::Span;

use crate::observer::final_state;
use crate::policy::PolicyDecision;

/// Opens a tool call's span with every field the pipeline records declared (a `tracing` span
/// records only the fields it was opened with), plus the caller's own fields.
///
/// `$name` is the exported span name, `$kind` its OpenTelemetry kind (`"internal"`,
/// `"server"`), then any further `tracing` fields:
///
/// ```
/// use tool_context::tool_call_span;
/// let span = tool_call_span!("tools/call write_file", "server", "mcp.method.name" = "tools/call");
/// # drop(span);
/// ```
#[macro_export]
macro_rules! tool_call_span {
    ($name:expr, $kind:expr $(, $($fields:tt)*)?) => {
        $crate::__telemetry::tracing::info_span!(
            target: "tool_context",
            "execute_tool",
            { $crate::__telemetry::attr::OTEL_NAME } = %$name,
            { $crate::__telemetry::attr::OTEL_KIND } = $kind,
            { $crate::__telemetry::attr::OTEL_STATUS_CODE } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::OTEL_STATUS_DESCRIPTION } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::ERROR_TYPE } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::GEN_AI_OPERATION_NAME } = $crate::__telemetry::operation::EXECUTE_TOOL,
            { $crate::__telemetry::attr::GEN_AI_TOOL_NAME } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::GEN_AI_TOOL_CALL_ID } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::GEN_AI_TOOL_TYPE } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::GEN_AI_TOOL_CALL_ARGUMENTS } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::GEN_AI_TOOL_CALL_RESULT } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::TRACE_ID } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::CALL_SOURCE } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::TIMEOUT_MS } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::OUTPUT_BUDGET_BYTES } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::POLICY_DECISION } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::APPROVAL_OUTCOME } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::APPROVAL_WAIT_MS } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::IDEMPOTENCY_OUTCOME } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::CALL_STATE } = $crate::__telemetry::tracing::field::Empty,
            { $crate::__telemetry::attr::OUTPUT_BYTES } = $crate::__telemetry::tracing::field::Empty
            $(, $($fields)*)?
        )
    };
}

/// The span a call records into: the caller's, else a new `execute_tool {name}` one.
pub(crate) fn open(caller: Option<Span>, name: &str) -> Span {
    caller.unwrap_or_else(|| {
        tool_call_span!(
            tool_protocol::telemetry::span_name(
                tool_protocol::telemetry::operation::EXECUTE_TOOL,
                Some(name)
            ),
            "internal"
        )
    })
}

/// What is known when the call starts.
pub(crate) struct CallStart<'a> {
    pub(crate) name: &'a str,
    pub(crate) tool_call_id: Option<&'a tool_protocol::ToolCallId>,
    pub(crate) context: &'a ToolCallContext,
    pub(crate) trace_id: crate::TraceId,
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) max_output_bytes: Option<u64>,
}

pub(crate) fn record_start(span: &Span, start: &CallStart<'_>) {
    if span.is_disabled() {
        return;
    }
    span.record(attr::GEN_AI_TOOL_NAME, start.name);
    if let Some(id) = start.tool_call_id {
        span.record(attr::GEN_AI_TOOL_CALL_ID, tracing::field::display(id));
    }
    span.record(attr::TRACE_ID, tracing::field::display(start.trace_id));
    if let Some(source) = start.context.source {
        span.record(attr::CALL_SOURCE, source.as_str());
    }
    if let Some(timeout) = start.timeout_ms {
        span.record(attr::TIMEOUT_MS, int(timeout));
    }
    if let Some(budget) = start.max_output_bytes {
        span.record(attr::OUTPUT_BUDGET_BYTES, int(budget));
    }
}

/// The tool found: a registry tool runs its handler (`function`), a mounted one goes out to its
/// MCP server (`extension`).
pub(crate) fn record_tool_type(span: &Span, mounted: bool) {
    if span.is_disabled() {
        return;
    }
    let kind = if mounted {
        tool_type::EXTENSION
    } else {
        tool_type::FUNCTION
    };
    span.record(attr::GEN_AI_TOOL_TYPE, kind);
}

pub(crate) fn record_policy(span: &Span, decision: PolicyDecision) {
    if span.is_disabled() {
        return;
    }
    let decision = match decision {
        PolicyDecision::Allow => "allow",
        PolicyDecision::Ask => "ask",
        PolicyDecision::Deny => "deny",
    };
    span.record(attr::POLICY_DECISION, decision);
}

/// How a person answered, and how long they took.
pub(crate) fn record_approval(span: &Span, outcome: &'static str, waited_ms: u64) {
    if span.is_disabled() {
        return;
    }
    span.record(attr::APPROVAL_OUTCOME, outcome);
    span.record(attr::APPROVAL_WAIT_MS, int(waited_ms));
}

/// `claimed`, `replayed` or `shared`: what the ledger did with a keyed call.
pub(crate) fn record_idempotency(span: &Span, outcome: Option<&'static str>) {
    if let Some(outcome) = outcome.filter(|_| !span.is_disabled()) {
        span.record(attr::IDEMPOTENCY_OUTCOME, outcome);
    }
}

/// The arguments, redacted and bounded by the policy, when the registry records content.
pub(crate) fn record_arguments(
    span: &Span,
    policy: Option<&ObservabilityPolicy>,
    arguments: Option<&serde_json::Map<String, Value>>,
) {
    let Some(policy) = policy.filter(|_| !span.is_disabled()) else {
        return;
    };
    let arguments = Value::Object(arguments.cloned().unwrap_or_default());
    span.record(
        attr::GEN_AI_TOOL_CALL_ARGUMENTS,
        serialize_redacted(&arguments, policy),
    );
}

/// The outcome: state, output bytes, and for a failure its stable code as `error.type` and
/// the span's error status; for a success the (opt-in, redacted) result.
pub(crate) fn record_end(
    span: &Span,
    policy: Option<&ObservabilityPolicy>,
    result: &ToolCallResult,
) {
    if span.is_disabled() {
        return;
    }
    span.record(attr::CALL_STATE, final_state(result).as_str());
    span.record(
        attr::OUTPUT_BYTES,
        int(crate::observer::used_output_bytes(result)),
    );
    match &result.error {
        Some(error) => {
            span.record(attr::ERROR_TYPE, error.code.as_str());
            span.record(attr::OTEL_STATUS_CODE, "error");
            span.record(attr::OTEL_STATUS_DESCRIPTION, error.message.as_str());
        }
        None => {
            span.record(attr::OTEL_STATUS_CODE, "ok");
            if let Some(policy) = policy {
                span.record(
                    attr::GEN_AI_TOOL_CALL_RESULT,
                    serialize_redacted(&redactable_output(result), policy),
                );
            }
        }
    }
}

/// A count as a signed integer: `tracing-opentelemetry` exports unsigned fields as text.
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The result as the redaction policy can see it: the structured content when there is one
/// (the text blocks then repeat it), else the content with each text block that holds JSON
/// parsed, so its keys are redacted like any other (a JSON text block is opaque otherwise).
fn redactable_output(result: &ToolCallResult) -> Value {
    if let Some(structured) = &result.structured_content {
        return structured.clone();
    }
    let blocks = result.content.iter().map(|block| match block {
        tool_protocol::ToolContent::Text { text } => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    });
    Value::Array(blocks.collect())
}
