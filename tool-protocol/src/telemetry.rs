//! The OpenTelemetry names our spans and metrics use, pinned in one place.
//!
//! The GenAI and MCP semantic conventions (`gen-ai/1.42.0`, status Development) name the
//! `execute_tool`, `chat` and `invoke_agent` spans, the MCP server spans and their metrics.
//! What the conventions have no name for (the policy decision, the approval wait, idempotency,
//! the durable record, the output budget) is recorded under our own `tool_context.*`
//! namespace. The spans are plain [`tracing`](https://docs.rs/tracing) spans whose fields carry
//! these names; `tracing-opentelemetry` maps them, and its `otel.*` fields set the span's
//! name, kind and status.
//!
//! Arguments and results ([`attr::GEN_AI_TOOL_CALL_ARGUMENTS`], [`attr::GEN_AI_TOOL_CALL_RESULT`])
//! are opt-in and always pass through an
//! [`ObservabilityPolicy`](crate::observability::ObservabilityPolicy) first.

/// Attribute (span field) names.
pub mod attr {
    // ---- tracing-opentelemetry's special fields
    /// Overrides the exported span name (`execute_tool write_file`).
    pub const OTEL_NAME: &str = "otel.name";
    /// The span kind: `client`, `server`, `internal`, `producer`, `consumer`.
    pub const OTEL_KIND: &str = "otel.kind";
    /// The span status: `ok` or `error`.
    pub const OTEL_STATUS_CODE: &str = "otel.status_code";
    /// The status description of an error span.
    pub const OTEL_STATUS_DESCRIPTION: &str = "otel.status_description";

    // ---- General
    /// The class of error an operation ended with: our stable code (`TOOL_TIMEOUT`).
    pub const ERROR_TYPE: &str = "error.type";
    /// The server's host name (a provider endpoint).
    pub const SERVER_ADDRESS: &str = "server.address";
    /// The server's port.
    pub const SERVER_PORT: &str = "server.port";
    /// `tcp` (streamable HTTP) or `pipe` (stdio).
    pub const NETWORK_TRANSPORT: &str = "network.transport";
    /// `http` when MCP runs over HTTP.
    pub const NETWORK_PROTOCOL_NAME: &str = "network.protocol.name";

    // ---- GenAI
    /// `execute_tool`, `chat` or `invoke_agent`.
    pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
    /// The provider: `openrouter`, `openai`, `llama.cpp`, `ollama`.
    pub const GEN_AI_PROVIDER_NAME: &str = "gen_ai.provider.name";
    /// The model a request asked for.
    pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai.request.model";
    /// The model that answered.
    pub const GEN_AI_RESPONSE_MODEL: &str = "gen_ai.response.model";
    /// The provider's id of the completion.
    pub const GEN_AI_RESPONSE_ID: &str = "gen_ai.response.id";
    /// Why the model stopped, one per choice (`["tool_calls"]`).
    pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
    /// Prompt tokens.
    pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    /// Completion tokens.
    pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    /// The conversation (our run's session id).
    pub const GEN_AI_CONVERSATION_ID: &str = "gen_ai.conversation.id";
    /// The agent's name.
    pub const GEN_AI_AGENT_NAME: &str = "gen_ai.agent.name";
    /// The tool's name.
    pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
    /// The tool call's id.
    pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    /// `function` (a registry tool) or `extension` (a mounted MCP server's tool).
    pub const GEN_AI_TOOL_TYPE: &str = "gen_ai.tool.type";
    /// The tool's description.
    pub const GEN_AI_TOOL_DESCRIPTION: &str = "gen_ai.tool.description";
    /// Opt-in: the call's arguments, redacted, as JSON text.
    pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    /// Opt-in: the call's result, redacted, as JSON text.
    pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";

    // ---- MCP and JSON-RPC
    /// The MCP method (`tools/call`).
    pub const MCP_METHOD_NAME: &str = "mcp.method.name";
    /// The MCP session.
    pub const MCP_SESSION_ID: &str = "mcp.session.id";
    /// The MCP protocol revision of the request (`2026-07-28`).
    pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
    /// The JSON-RPC request id as text.
    pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
    /// The JSON-RPC error code of a failed request (`-32602`).
    pub const RPC_RESPONSE_STATUS_CODE: &str = "rpc.response.status_code";

    // ---- Ours: what the conventions have no name for
    /// `allow`, `ask` or `deny`.
    pub const POLICY_DECISION: &str = "tool_context.policy.decision";
    /// `approved`, `approved_with_changes`, `denied` (a person) or `unanswered` (the wait ended).
    pub const APPROVAL_OUTCOME: &str = "tool_context.approval.outcome";
    /// How long the person took, in ms.
    pub const APPROVAL_WAIT_MS: &str = "tool_context.approval.wait_ms";
    /// `claimed` (this call runs the operation) or `replayed` (another execution's outcome,
    /// running or settled: the handler does not run); absent without an idempotency key.
    pub const IDEMPOTENCY_OUTCOME: &str = "tool_context.idempotency.outcome";
    /// The operation's provenance state: `completed`, `failed`, `cancelled`, `unknown`.
    pub const CALL_STATE: &str = "tool_context.call.state";
    /// UTF-8 bytes of the result's content and structured content.
    pub const OUTPUT_BYTES: &str = "tool_context.output.bytes";
    /// The call's output budget in bytes, when set.
    pub const OUTPUT_BUDGET_BYTES: &str = "tool_context.output.budget_bytes";
    /// The call's timeout in ms, when set.
    pub const TIMEOUT_MS: &str = "tool_context.timeout_ms";
    /// The call's trace id in the lifecycle events (`trace-7`).
    pub const TRACE_ID: &str = "tool_context.trace_id";
    /// Where the call came from: `model`, `mcp`, `iframe`, `local`.
    pub const CALL_SOURCE: &str = "tool_context.call.source";
    /// The number of tool calls a provider response asked for.
    pub const RESPONSE_TOOL_CALLS: &str = "tool_context.response.tool_calls";
}

/// `gen_ai.operation.name` values.
pub mod operation {
    /// A tool call.
    pub const EXECUTE_TOOL: &str = "execute_tool";
    /// A chat completion request.
    pub const CHAT: &str = "chat";
    /// An agent run.
    pub const INVOKE_AGENT: &str = "invoke_agent";
}

/// `gen_ai.tool.type` values.
pub mod tool_type {
    /// A tool the registry's own handler runs.
    pub const FUNCTION: &str = "function";
    /// A mounted MCP server's tool: the call goes out to that server.
    pub const EXTENSION: &str = "extension";
}

/// Metric names (histograms, in seconds or tokens).
pub mod metric {
    /// Server-side duration of an MCP request, in s.
    pub const MCP_SERVER_OPERATION_DURATION: &str = "mcp.server.operation.duration";
    /// Duration of a provider request, in s.
    pub const GEN_AI_CLIENT_OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
    /// Tokens of a provider request, by `gen_ai.token.type`.
    pub const GEN_AI_CLIENT_TOKEN_USAGE: &str = "gen_ai.client.token.usage";
    /// `input` or `output`, on [`GEN_AI_CLIENT_TOKEN_USAGE`].
    pub const GEN_AI_TOKEN_TYPE: &str = "gen_ai.token.type";
    /// The bucket boundaries the MCP conventions advise for operation durations, in s.
    pub const MCP_DURATION_BUCKETS_S: [f64; 14] = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];
    /// The bucket boundaries the GenAI conventions advise for operation durations, in s.
    pub const DURATION_BUCKETS_S: [f64; 14] = [
        0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ];
    /// The bucket boundaries the conventions advise for token counts.
    pub const TOKEN_BUCKETS: [f64; 14] = [
        1.0,
        4.0,
        16.0,
        64.0,
        256.0,
        1024.0,
        4096.0,
        16384.0,
        65536.0,
        262_144.0,
        1_048_576.0,
        4_194_304.0,
        16_777_216.0,
        67_108_864.0,
    ];
}

/// The span name `{operation} {target}` (`execute_tool write_file`, `chat gpt-4o`,
/// `tools/call write_file`), or the operation alone without a target.
pub fn span_name(operation: &str, target: Option<&str>) -> String {
    match target {
        Some(target) if !target.is_empty() => format!("{operation} {target}"),
        _ => operation.to_owned(),
    }
}

/// The W3C trace context keys a client carries in an MCP request's `params._meta`.
pub mod propagation {
    /// `00-<trace id>-<parent span id>-<flags>`.
    pub const TRACEPARENT: &str = "traceparent";
    /// Vendor trace state.
    pub const TRACESTATE: &str = "tracestate";
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test per name: each constant keeps the spelling of the conventions (or of our
    /// namespace), so a rename is a deliberate, visible change.
    macro_rules! pinned {
        ($($test:ident: $constant:path => $name:literal;)*) => {
            $(#[test]
            fn $test() {
                assert_eq!($constant, $name);
            })*
        };
    }

    pinned! {
        otel_name: attr::OTEL_NAME => "otel.name";
        otel_kind: attr::OTEL_KIND => "otel.kind";
        otel_status_code: attr::OTEL_STATUS_CODE => "otel.status_code";
        otel_status_description: attr::OTEL_STATUS_DESCRIPTION => "otel.status_description";
        error_type: attr::ERROR_TYPE => "error.type";
        server_address: attr::SERVER_ADDRESS => "server.address";
        server_port: attr::SERVER_PORT => "server.port";
        network_transport: attr::NETWORK_TRANSPORT => "network.transport";
        network_protocol_name: attr::NETWORK_PROTOCOL_NAME => "network.protocol.name";
        gen_ai_operation_name: attr::GEN_AI_OPERATION_NAME => "gen_ai.operation.name";
        gen_ai_provider_name: attr::GEN_AI_PROVIDER_NAME => "gen_ai.provider.name";
        gen_ai_request_model: attr::GEN_AI_REQUEST_MODEL => "gen_ai.request.model";
        gen_ai_response_model: attr::GEN_AI_RESPONSE_MODEL => "gen_ai.response.model";
        gen_ai_response_id: attr::GEN_AI_RESPONSE_ID => "gen_ai.response.id";
        gen_ai_response_finish_reasons: attr::GEN_AI_RESPONSE_FINISH_REASONS => "gen_ai.response.finish_reasons";
        gen_ai_usage_input_tokens: attr::GEN_AI_USAGE_INPUT_TOKENS => "gen_ai.usage.input_tokens";
        gen_ai_usage_output_tokens: attr::GEN_AI_USAGE_OUTPUT_TOKENS => "gen_ai.usage.output_tokens";
        gen_ai_conversation_id: attr::GEN_AI_CONVERSATION_ID => "gen_ai.conversation.id";
        gen_ai_agent_name: attr::GEN_AI_AGENT_NAME => "gen_ai.agent.name";
        gen_ai_tool_name: attr::GEN_AI_TOOL_NAME => "gen_ai.tool.name";
        gen_ai_tool_call_id: attr::GEN_AI_TOOL_CALL_ID => "gen_ai.tool.call.id";
        gen_ai_tool_type: attr::GEN_AI_TOOL_TYPE => "gen_ai.tool.type";
        gen_ai_tool_description: attr::GEN_AI_TOOL_DESCRIPTION => "gen_ai.tool.description";
        gen_ai_tool_call_arguments: attr::GEN_AI_TOOL_CALL_ARGUMENTS => "gen_ai.tool.call.arguments";
        gen_ai_tool_call_result: attr::GEN_AI_TOOL_CALL_RESULT => "gen_ai.tool.call.result";
        mcp_method_name: attr::MCP_METHOD_NAME => "mcp.method.name";
        mcp_session_id: attr::MCP_SESSION_ID => "mcp.session.id";
        mcp_protocol_version: attr::MCP_PROTOCOL_VERSION => "mcp.protocol.version";
        jsonrpc_request_id: attr::JSONRPC_REQUEST_ID => "jsonrpc.request.id";
        rpc_response_status_code: attr::RPC_RESPONSE_STATUS_CODE => "rpc.response.status_code";
        policy_decision: attr::POLICY_DECISION => "tool_context.policy.decision";
        approval_outcome: attr::APPROVAL_OUTCOME => "tool_context.approval.outcome";
        approval_wait_ms: attr::APPROVAL_WAIT_MS => "tool_context.approval.wait_ms";
        idempotency_outcome: attr::IDEMPOTENCY_OUTCOME => "tool_context.idempotency.outcome";
        call_state: attr::CALL_STATE => "tool_context.call.state";
        output_bytes: attr::OUTPUT_BYTES => "tool_context.output.bytes";
        output_budget_bytes: attr::OUTPUT_BUDGET_BYTES => "tool_context.output.budget_bytes";
        timeout_ms: attr::TIMEOUT_MS => "tool_context.timeout_ms";
        trace_id: attr::TRACE_ID => "tool_context.trace_id";
        call_source: attr::CALL_SOURCE => "tool_context.call.source";
        response_tool_calls: attr::RESPONSE_TOOL_CALLS => "tool_context.response.tool_calls";
        operation_execute_tool: operation::EXECUTE_TOOL => "execute_tool";
        operation_chat: operation::CHAT => "chat";
        operation_invoke_agent: operation::INVOKE_AGENT => "invoke_agent";
        tool_type_function: tool_type::FUNCTION => "function";
        tool_type_extension: tool_type::EXTENSION => "extension";
        metric_mcp_server_operation_duration: metric::MCP_SERVER_OPERATION_DURATION => "mcp.server.operation.duration";
        metric_gen_ai_client_operation_duration: metric::GEN_AI_CLIENT_OPERATION_DURATION => "gen_ai.client.operation.duration";
        metric_gen_ai_client_token_usage: metric::GEN_AI_CLIENT_TOKEN_USAGE => "gen_ai.client.token.usage";
        metric_gen_ai_token_type: metric::GEN_AI_TOKEN_TYPE => "gen_ai.token.type";
        traceparent: propagation::TRACEPARENT => "traceparent";
        tracestate: propagation::TRACESTATE => "tracestate";
    }

    #[test]
    fn span_names_join_operation_and_target() {
        assert_eq!(
            span_name(operation::EXECUTE_TOOL, Some("write_file")),
            "execute_tool write_file"
        );
        assert_eq!(span_name("tools/list", None), "tools/list");
        assert_eq!(span_name("tools/list", Some("")), "tools/list");
    }

    #[test]
    fn bucket_boundaries_increase() {
        for buckets in [
            metric::MCP_DURATION_BUCKETS_S,
            metric::DURATION_BUCKETS_S,
            metric::TOKEN_BUCKETS,
        ] {
            assert!(buckets.windows(2).all(|pair| pair[0] < pair[1]));
        }
    }
}
