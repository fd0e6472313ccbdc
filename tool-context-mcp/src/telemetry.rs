//! MCP server spans in the OpenTelemetry conventions: one `{mcp.method.name} {target}` span
//! (kind SERVER) per request, continuing the client's trace from `params._meta`
//! (`traceparent`/`tracestate`, feature `otel`).
//!
//! A `tools/call` span *is* the call's `execute_tool` span: it is opened with
//! [`tool_context::tool_call_span!`] and handed to the pipeline, which records the tool's
//! attributes into it, so one call is one span. With the `otel` feature each request's
//! duration is also recorded as `mcp.server.operation.duration` through the global meter
//! provider.

use rmcp::ErrorData as McpError;
use rmcp::model::NumberOrString;
use rmcp::service::{RequestContext, RoleServer};
use tool_protocol::telemetry::{attr, span_name};
use tracing::Span;
use tracing::field::Empty;

/// One request being served: its span and what its metric needs.
pub(crate) struct ServerRequest {
    span: Span,
    #[cfg(feature = "otel")]
    metric: metrics::Request,
}

impl ServerRequest {
    /// Opens the span of `method` (`tools/call`, `tools/list`, ...) on `target` (a tool name),
    /// parented to the trace the client sent in `_meta`.
    pub(crate) fn start(
        method: &'static str,
        target: Option<&str>,
        context: &RequestContext<RoleServer>,
        session_id: &str,
    ) -> Self {
        let name = span_name(method, target);
        let protocol = context
            .protocol_version()
            .map(|version| version.to_string());
        let transport = transport(context);
        let request_id = request_id(&context.id);
        let span = if method == "tools/call" {
            tool_context::tool_call_span!(
                name,
                "server",
                { attr::MCP_METHOD_NAME } = method,
                { attr::MCP_SESSION_ID } = session_id,
                { attr::MCP_PROTOCOL_VERSION } = protocol.as_deref(),
                { attr::JSONRPC_REQUEST_ID } = request_id.as_str(),
                { attr::NETWORK_TRANSPORT } = transport,
                { attr::RPC_RESPONSE_STATUS_CODE } = Empty,
            )
        } else {
            tracing::info_span!(
                target: "tool_context_mcp",
                "mcp_request",
                { attr::OTEL_NAME } = name,
                { attr::OTEL_KIND } = "server",
                { attr::OTEL_STATUS_CODE } = Empty,
                { attr::OTEL_STATUS_DESCRIPTION } = Empty,
                { attr::ERROR_TYPE } = Empty,
                { attr::MCP_METHOD_NAME } = method,
                { attr::MCP_SESSION_ID } = session_id,
                { attr::MCP_PROTOCOL_VERSION } = protocol.as_deref(),
                { attr::JSONRPC_REQUEST_ID } = request_id.as_str(),
                { attr::NETWORK_TRANSPORT } = transport,
                { attr::RPC_RESPONSE_STATUS_CODE } = Empty,
            )
        };
        #[cfg(feature = "otel")]
        propagation::continue_client_trace(&span, context);
        Self {
            span,
            #[cfg(feature = "otel")]
            metric: metrics::Request::new(method, target, protocol, transport),
        }
    }

    /// The request's span (for a `tools/call`, the call's span the pipeline records into).
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Records how the request ended: a JSON-RPC error's code as `error.type` and
    /// `rpc.response.status_code`; `tool_error` says the call answered with `isError`.
    pub(crate) fn finish<T>(self, outcome: &Result<T, McpError>, tool_error: bool) {
        let error_type = match outcome {
            Err(error) => {
                let code = error.code.0.to_string();
                if !self.span.is_disabled() {
                    self.span
                        .record(attr::RPC_RESPONSE_STATUS_CODE, code.as_str());
                    self.span.record(attr::ERROR_TYPE, code.as_str());
                    self.span.record(attr::OTEL_STATUS_CODE, "error");
                    self.span
                        .record(attr::OTEL_STATUS_DESCRIPTION, error.message.as_ref());
                }
                Some(code)
            }
            // The pipeline recorded the tool's own code and status on the span.
            Ok(_) if tool_error => Some("tool_error".to_owned()),
            Ok(_) => {
                if !self.span.is_disabled() {
                    self.span.record(attr::OTEL_STATUS_CODE, "ok");
                }
                None
            }
        };
        #[cfg(feature = "otel")]
        self.metric.record(error_type.as_deref());
        #[cfg(not(feature = "otel"))]
        drop(error_type);
    }
}

/// `tcp` for streamable HTTP (the request carries its HTTP parts), else `pipe` (stdio).
fn transport(context: &RequestContext<RoleServer>) -> &'static str {
    #[cfg(feature = "http")]
    if context.extensions.get::<http::request::Parts>().is_some() {
        return "tcp";
    }
    let _ = context;
    "pipe"
}

fn request_id(id: &NumberOrString) -> String {
    match id {
        NumberOrString::Number(number) => number.to_string(),
        NumberOrString::String(text) => text.to_string(),
    }
}

/// W3C trace context from `params._meta`, as the MCP conventions (and SEP-414) carry it.
#[cfg(feature = "otel")]
pub(crate) mod propagation {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use rmcp::service::{RequestContext, RoleServer};
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// Parents `span` to the client's span named in `_meta.traceparent`, when it is valid.
    pub(crate) fn continue_client_trace(span: &Span, context: &RequestContext<RoleServer>) {
        if span.is_disabled() {
            return;
        }
        let Some(parent) = context
            .meta
            .get_traceparent()
            .and_then(|traceparent| parse(traceparent, context.meta.get_tracestate()))
        else {
            return;
        };
        let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(parent));
    }

    /// A `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`) as a remote span context; `None` when
    /// malformed, of the forbidden version `ff`, or naming the all-zero trace or span.
    pub(crate) fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<SpanContext> {
        let mut parts = traceparent.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex = |text: &str, len: usize| {
            text.len() == len
                && text
                    .bytes()
                    .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
        };
        // Version 00 has exactly four parts; a later version may add more.
        if !hex(version, 2) || version == "ff" || (version == "00" && parts.next().is_some()) {
            return None;
        }
        if !hex(trace, 32) || !hex(span, 16) || !hex(flags, 2) {
            return None;
        }
        let trace_id = TraceId::from_hex(trace).ok()?;
        let span_id = SpanId::from_hex(span).ok()?;
        if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
            return None;
        }
        let flags = TraceFlags::new(u8::from_str_radix(flags, 16).ok()? & 1);
        let state = tracestate
            .and_then(|state| state.parse::<TraceState>().ok())
            .unwrap_or_default();
        Some(SpanContext::new(trace_id, span_id, flags, true, state))
    }

    /// The `traceparent` of the current span's OpenTelemetry context, for a request this
    /// process sends to another MCP server; `None` outside a recorded span.
    #[cfg(feature = "client")]
    pub(crate) fn current_traceparent() -> Option<(String, Option<String>)> {
        let context = Span::current().context();
        let span = context.span();
        let span_context = span.span_context();
        if !span_context.is_valid() {
            return None;
        }
        let traceparent = format!(
            "00-{}-{}-{:02x}",
            span_context.trace_id(),
            span_context.span_id(),
            span_context.trace_flags().to_u8()
        );
        let state = span_context.trace_state().header();
        Some((traceparent, (!state.is_empty()).then_some(state)))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_valid_traceparent_is_a_remote_sampled_parent() {
            let parent = parse(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                Some("rojo=00f067aa0ba902b7"),
            )
            .unwrap();
            assert_eq!(
                parent.trace_id().to_string(),
                "4bf92f3577b34da6a3ce929d0e0e4736"
            );
            assert_eq!(parent.span_id().to_string(), "00f067aa0ba902b7");
            assert!(parent.is_sampled() && parent.is_remote());
            assert_eq!(parent.trace_state().get("rojo"), Some("00f067aa0ba902b7"));
        }

        #[test]
        fn malformed_traceparents_are_ignored() {
            for bad in [
                "",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            ] {
                assert!(parse(bad, None).is_none(), "{bad:?} is refused");
            }
        }
    }
}

/// `mcp.server.operation.duration`, through the global meter provider.
#[cfg(feature = "otel")]
mod metrics {
    use std::time::Instant;

    use opentelemetry::KeyValue;
    use tool_protocol::telemetry::{attr, metric, operation};

    pub(super) struct Request {
        started: Instant,
        attributes: Vec<KeyValue>,
    }

    impl Request {
        pub(super) fn new(
            method: &'static str,
            target: Option<&str>,
            protocol: Option<String>,
            transport: &'static str,
        ) -> Self {
            let mut attributes = vec![
                KeyValue::new(attr::MCP_METHOD_NAME, method),
                KeyValue::new(attr::NETWORK_TRANSPORT, transport),
            ];
            // The conventions map a tool call to GenAI's execute_tool.
            if method == "tools/call" {
                attributes.push(KeyValue::new(
                    attr::GEN_AI_OPERATION_NAME,
                    operation::EXECUTE_TOOL,
                ));
            }
            if let Some(tool) = target {
                attributes.push(KeyValue::new(attr::GEN_AI_TOOL_NAME, tool.to_owned()));
            }
            if let Some(protocol) = protocol {
                attributes.push(KeyValue::new(attr::MCP_PROTOCOL_VERSION, protocol));
            }
            Self {
                started: Instant::now(),
                attributes,
            }
        }

        pub(super) fn record(mut self, error_type: Option<&str>) {
            if let Some(error_type) = error_type {
                self.attributes
                    .push(KeyValue::new(attr::ERROR_TYPE, error_type.to_owned()));
            }
            // Looked up per request: the application may install its provider after start.
            opentelemetry::global::meter("tool-context-mcp")
                .f64_histogram(metric::MCP_SERVER_OPERATION_DURATION)
                .with_unit("s")
                .with_description("MCP request duration as observed on the receiver.")
                .with_boundaries(metric::MCP_DURATION_BUCKETS_S.to_vec())
                .build()
                .record(self.started.elapsed().as_secs_f64(), &self.attributes);
        }
    }
}
