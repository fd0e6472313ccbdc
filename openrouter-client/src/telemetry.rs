//! The run's spans in the OpenTelemetry GenAI conventions: `invoke_agent` for a run, and under
//! it one `chat {model}` span (kind CLIENT) per provider request, beside the `execute_tool`
//! spans of the calls the run makes. Names come from [`tool_protocol::telemetry`]; with the
//! `otel` feature the request durations and token counts are also recorded as the
//! conventions' histograms through the global meter provider.
//!
//! Spans never carry prompts, replies or arguments: only names, ids, counts and codes.

use tool_protocol::telemetry::{attr, operation, span_name};
use tracing::Span;
use tracing::field::Empty;

use crate::config::OpenRouterConfig;
use crate::decode::AssistantReply;
use crate::error::OpenRouterError;
use crate::provider::ProviderProfile;

/// `gen_ai.provider.name` of a profile: the conventions' `openai` for OpenAI-compatible
/// endpoints, our own names for the others.
pub(crate) fn provider_name(profile: ProviderProfile) -> &'static str {
    match profile {
        ProviderProfile::OpenRouter => "openrouter",
        ProviderProfile::OpenAiCompatible => "openai",
        ProviderProfile::LlamaCpp => "llama.cpp",
        ProviderProfile::Ollama => "ollama",
    }
}

/// The run's span (`invoke_agent`, INTERNAL: the agent runs in this process).
pub(crate) fn agent_span(config: &OpenRouterConfig, session_id: &str) -> Span {
    tracing::info_span!(
        target: "openrouter_tool_loop",
        "invoke_agent",
        { attr::OTEL_NAME } = operation::INVOKE_AGENT,
        { attr::OTEL_KIND } = "internal",
        { attr::OTEL_STATUS_CODE } = Empty,
        { attr::OTEL_STATUS_DESCRIPTION } = Empty,
        { attr::ERROR_TYPE } = Empty,
        { attr::GEN_AI_OPERATION_NAME } = operation::INVOKE_AGENT,
        { attr::GEN_AI_PROVIDER_NAME } = provider_name(config.provider),
        { attr::GEN_AI_REQUEST_MODEL } = config.model.as_str(),
        { attr::GEN_AI_CONVERSATION_ID } = session_id,
    )
}

/// One provider request's span (`chat {model}`, CLIENT).
pub(crate) fn chat_span(config: &OpenRouterConfig) -> Span {
    let server = reqwest::Url::parse(&config.endpoint).ok();
    tracing::info_span!(
        target: "openrouter_tool_loop",
        "chat",
        { attr::OTEL_NAME } = span_name(operation::CHAT, Some(&config.model)),
        { attr::OTEL_KIND } = "client",
        { attr::OTEL_STATUS_CODE } = Empty,
        { attr::OTEL_STATUS_DESCRIPTION } = Empty,
        { attr::ERROR_TYPE } = Empty,
        { attr::GEN_AI_OPERATION_NAME } = operation::CHAT,
        { attr::GEN_AI_PROVIDER_NAME } = provider_name(config.provider),
        { attr::GEN_AI_REQUEST_MODEL } = config.model.as_str(),
        { attr::SERVER_ADDRESS } = server.as_ref().and_then(reqwest::Url::host_str),
        { attr::SERVER_PORT } = server
            .as_ref()
            .and_then(reqwest::Url::port_or_known_default)
            .map(i64::from),
        { attr::GEN_AI_RESPONSE_MODEL } = Empty,
        { attr::GEN_AI_RESPONSE_ID } = Empty,
        { attr::GEN_AI_RESPONSE_FINISH_REASONS } = Empty,
        { attr::GEN_AI_USAGE_INPUT_TOKENS } = Empty,
        { attr::GEN_AI_USAGE_OUTPUT_TOKENS } = Empty,
        { attr::RESPONSE_TOOL_CALLS } = Empty,
    )
}

/// What the provider answered. The finish reason is recorded as text (`tool_calls`): a
/// `tracing` field holds no array, and the loop reads the first choice only.
pub(crate) fn record_reply(span: &Span, reply: &AssistantReply) {
    if span.is_disabled() {
        return;
    }
    if let Some(model) = &reply.model {
        span.record(attr::GEN_AI_RESPONSE_MODEL, model.as_str());
    }
    if let Some(id) = &reply.id {
        span.record(attr::GEN_AI_RESPONSE_ID, id.as_str());
    }
    if let Some(reason) = &reply.finish_reason {
        span.record(attr::GEN_AI_RESPONSE_FINISH_REASONS, reason.as_str());
    }
    if let Some(usage) = &reply.usage {
        if let Some(input) = usage.input_tokens {
            span.record(attr::GEN_AI_USAGE_INPUT_TOKENS, int(input));
        }
        if let Some(output) = usage.output_tokens {
            span.record(attr::GEN_AI_USAGE_OUTPUT_TOKENS, int(output));
        }
    }
    span.record(
        attr::RESPONSE_TOOL_CALLS,
        int(u64::try_from(reply.tool_calls.len()).unwrap_or(u64::MAX)),
    );
    span.record(attr::OTEL_STATUS_CODE, "ok");
}

/// A count as a signed integer: `tracing-opentelemetry` exports unsigned fields as text.
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A failed request or run: its stable code as `error.type` and an error status.
pub(crate) fn record_failure(span: &Span, error: &OpenRouterError) {
    if span.is_disabled() {
        return;
    }
    span.record(attr::ERROR_TYPE, error.code);
    span.record(attr::OTEL_STATUS_CODE, "error");
    span.record(attr::OTEL_STATUS_DESCRIPTION, error.message.as_str());
}

/// The run's end on its span.
pub(crate) fn record_run_end(span: &Span, outcome: &Result<String, OpenRouterError>) {
    match outcome {
        Ok(_) => {
            span.record(attr::OTEL_STATUS_CODE, "ok");
        }
        Err(error) => record_failure(span, error),
    }
}

/// The conventions' client metrics, through the global meter provider (a no-op until the
/// application installs one).
#[cfg(feature = "otel")]
pub(crate) mod metrics {
    use std::time::Duration;

    use opentelemetry::KeyValue;
    use opentelemetry::metrics::Histogram;
    use tool_protocol::telemetry::{attr, metric, operation};

    use crate::config::OpenRouterConfig;
    use crate::decode::AssistantReply;
    use crate::error::OpenRouterError;

    struct Instruments {
        duration: Histogram<f64>,
        tokens: Histogram<u64>,
    }

    /// Looked up per request, not cached: the application may install its meter provider after
    /// the first request, and the SDK returns the same instrument for the same name.
    fn instruments() -> Instruments {
        let meter = opentelemetry::global::meter("openrouter-tool-loop");
        Instruments {
            duration: meter
                .f64_histogram(metric::GEN_AI_CLIENT_OPERATION_DURATION)
                .with_unit("s")
                .with_description("GenAI operation duration.")
                .with_boundaries(metric::DURATION_BUCKETS_S.to_vec())
                .build(),
            tokens: meter
                .u64_histogram(metric::GEN_AI_CLIENT_TOKEN_USAGE)
                .with_unit("{token}")
                .with_description("Number of input and output tokens used.")
                .with_boundaries(metric::TOKEN_BUCKETS.to_vec())
                .build(),
        }
    }

    /// One provider request: its duration, and its token counts when it answered.
    pub(crate) fn record_chat(
        config: &OpenRouterConfig,
        elapsed: Duration,
        outcome: Result<Option<&AssistantReply>, &OpenRouterError>,
    ) {
        let mut attributes = vec![
            KeyValue::new(attr::GEN_AI_OPERATION_NAME, operation::CHAT),
            KeyValue::new(
                attr::GEN_AI_PROVIDER_NAME,
                super::provider_name(config.provider),
            ),
            KeyValue::new(attr::GEN_AI_REQUEST_MODEL, config.model.clone()),
        ];
        let reply = match outcome {
            Ok(reply) => reply,
            Err(error) => {
                attributes.push(KeyValue::new(attr::ERROR_TYPE, error.code));
                None
            }
        };
        if let Some(model) = reply.and_then(|reply| reply.model.clone()) {
            attributes.push(KeyValue::new(attr::GEN_AI_RESPONSE_MODEL, model));
        }
        let instruments = instruments();
        instruments
            .duration
            .record(elapsed.as_secs_f64(), &attributes);
        let Some(usage) = reply.and_then(|reply| reply.usage.as_ref()) else {
            return;
        };
        for (kind, count) in [
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
        ] {
            if let Some(count) = count {
                let mut attributes = attributes.clone();
                attributes.push(KeyValue::new(metric::GEN_AI_TOKEN_TYPE, kind));
                instruments.tokens.record(count, &attributes);
            }
        }
    }
}
