//! [`ChatClient`]: one chat-completions turn with bounded, abortable transient retries.

use std::future::Future;
use std::time::SystemTime;

use reqwest::header::{
    AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::attempt::{Attempt, TransportFailure, TurnReply, network_failure, provider_failure};
use crate::codes::OPENROUTER_CONFIGURATION_ERROR;
use crate::config::OpenRouterConfig;
use crate::decode::{Decoded, decode_response};
use crate::endpoint::check_endpoint;
use crate::error::OpenRouterError;
use crate::events::{EventRecorder, RunEvent};
use crate::retry::{RetryAfter, parse_retry_after};
use crate::stream::StreamAssembler;
use crate::stream_reader::StreamReader;
use crate::telemetry;
use crate::toolset::ProviderToolset;

/// A client of an OpenAI-compatible Chat Completions server: OpenRouter, llama.cpp's
/// `llama-server`, vLLM, Ollama, OpenAI, LM Studio, ... (the [`ProviderProfile`] in its
/// configuration says which parts differ). Configuration plus a pooled HTTP client; cheap to
/// clone. Failures carry `OPENROUTER_*` codes whichever server answers.
///
/// ```
/// use openrouter_tool_loop::{ApiKey, ChatClient, OpenRouterConfig, ProviderProfile};
/// // OpenRouter, with its defaults.
/// let client = ChatClient::new(OpenRouterConfig::new(ApiKey::new("sk-or-..."))).unwrap();
/// assert_eq!(client.config().model, "openai/gpt-4o-mini");
/// // Any OpenAI-compatible server at a base URL (here a local vLLM; no key on loopback).
/// let config = OpenRouterConfig::for_provider(ProviderProfile::OpenAiCompatible, "http://127.0.0.1:8000/v1", ApiKey::default())
///     .with_model("Qwen/Qwen3-8B");
/// let local = ChatClient::new(config).unwrap();
/// assert_eq!(local.config().endpoint, "http://127.0.0.1:8000/v1/chat/completions");
/// ```
///
/// [`ProviderProfile`]: crate::ProviderProfile
#[derive(Debug, Clone)]
pub struct ChatClient {
    config: OpenRouterConfig,
    http: reqwest::Client,
}

/// The name [`ChatClient`] had before it served every OpenAI-compatible server; kept so
/// existing code compiles. Same type, same behaviour.
pub type OpenRouterClient = ChatClient;

/// A response read within the timeout and size limit.
pub(crate) struct RawResponse {
    pub(crate) status: u16,
    pub(crate) retry_after: Option<RetryAfter>,
    pub(crate) body: String,
    pub(crate) truncated: bool,
}

/// Whether a response is a server-sent event stream.
fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

impl ChatClient {
    /// A client with its own HTTP connection pool.
    pub fn new(config: OpenRouterConfig) -> Result<Self, OpenRouterError> {
        let http = reqwest::Client::builder().build().map_err(|error| {
            OpenRouterError::new(
                OPENROUTER_CONFIGURATION_ERROR,
                format!("HTTP client could not be built: {error}"),
            )
        })?;
        Ok(Self::with_http_client(config, http))
    }

    /// A client sharing an existing HTTP client (its own timeouts should be unset or longer
    /// than [`OpenRouterConfig::request_timeout`]).
    pub fn with_http_client(config: OpenRouterConfig, http: reqwest::Client) -> Self {
        Self { config, http }
    }

    /// The configuration.
    pub fn config(&self) -> &OpenRouterConfig {
        &self.config
    }

    /// Fails unless the request may go out: a key where the profile needs one, a model, a
    /// valid URL, and a key only ever bound for `https://` or a loopback host.
    pub(crate) fn check_ready(&self) -> Result<(), OpenRouterError> {
        let config = &self.config;
        if config.api_key.is_empty() && config.provider.needs_key(&config.endpoint) {
            return Err(OpenRouterError::new(
                OPENROUTER_CONFIGURATION_ERROR,
                "API key is not configured.",
            ));
        }
        if config.model.trim().is_empty() {
            return Err(OpenRouterError::new(
                OPENROUTER_CONFIGURATION_ERROR,
                "Model is not configured.",
            ));
        }
        if let Err(error) = reqwest::Url::parse(&config.endpoint) {
            let message = format!("Chat-completions endpoint is not a valid URL: {error}");
            return Err(OpenRouterError::new(
                OPENROUTER_CONFIGURATION_ERROR,
                message,
            ));
        }
        self.check_key_destination(&config.endpoint)
    }

    /// A configured key may only travel to `https://` or a loopback host ([`check_endpoint`]).
    pub(crate) fn check_key_destination(&self, url: &str) -> Result<(), OpenRouterError> {
        if self.config.api_key.is_empty() {
            return Ok(());
        }
        check_endpoint(url).map(drop).map_err(|error| {
            OpenRouterError::new(
                error.code,
                format!("The API key is not sent to {url}: {}", error.message),
            )
        })
    }

    /// Headers of every request: bearer key (marked sensitive) and, for OpenRouter, attribution.
    pub(crate) fn headers(&self, with_key: bool) -> Result<HeaderMap, OpenRouterError> {
        let mut headers = HeaderMap::new();
        if with_key && !self.config.api_key.is_empty() {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", self.config.api_key.expose()))
                    .map_err(|_| {
                        OpenRouterError::new(
                            OPENROUTER_CONFIGURATION_ERROR,
                            "API key contains characters that cannot be sent in a header.",
                        )
                    })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        if !self.config.provider.is_openrouter() {
            return Ok(headers);
        }
        let attribution = [
            ("http-referer", &self.config.attribution.referer),
            ("x-title", &self.config.attribution.title),
        ];
        for (name, value) in attribution {
            if let Some(value) = value {
                let value = HeaderValue::from_str(value).map_err(|_| {
                    OpenRouterError::new(
                        OPENROUTER_CONFIGURATION_ERROR,
                        format!("Attribution header {name} is not a valid header value."),
                    )
                })?;
                headers.insert(HeaderName::from_static(name), value);
            }
        }
        Ok(headers)
    }

    /// One provider turn: posts `body`, retrying transient failures at most
    /// `retry.max_retries` times, and decodes the assistant message, streamed or not.
    ///
    /// A failure before the response's first byte is retried; a stream that breaks later is
    /// retried only while none of its tool calls has been announced (the retry's
    /// [`RunEvent::RetryScheduled`] voids the text streamed so far).
    pub(crate) async fn complete_turn(
        &self,
        body: &Value,
        turn: u32,
        calls_done: usize,
        toolset: &ProviderToolset,
        cancel: &CancellationToken,
        events: &EventRecorder,
    ) -> Result<Option<TurnReply>, OpenRouterError> {
        let headers = self.headers(true)?;
        let policy = self.config.retry;
        let mut retry_index = 0;
        loop {
            events.emit(RunEvent::RequestSent {
                turn,
                attempt: retry_index + 1,
            });
            let request = self
                .http
                .post(&self.config.endpoint)
                .headers(headers.clone())
                .json(body);
            let attempt = self.attempt(
                request,
                StreamAssembler::new(turn, calls_done),
                toolset,
                events,
            );
            let transient = match self.traced(abortable(cancel, attempt)).await? {
                Ok(reply) => return Ok(reply),
                Err(transient) => transient,
            };
            if retry_index >= policy.max_retries {
                return Err(transient.error);
            }
            let delay = policy.delay(retry_index, transient.retry_after, SystemTime::now());
            retry_index += 1;
            events.emit(RunEvent::RetryScheduled {
                turn,
                attempt: retry_index,
                max_attempts: policy.max_retries,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason: transient.reason,
                code: transient.error.code,
            });
            abortable(cancel, tokio::time::sleep(delay)).await?;
        }
    }

    /// One provider request in its `chat {model}` span, its outcome recorded there (and, with
    /// the `otel` feature, in the duration and token histograms).
    async fn traced(
        &self,
        attempt: impl Future<Output = Result<Result<Attempt, OpenRouterError>, OpenRouterError>>,
    ) -> Result<Attempt, OpenRouterError> {
        let span = telemetry::chat_span(&self.config);
        #[cfg(feature = "otel")]
        let started = std::time::Instant::now();
        let outcome = attempt
            .instrument(span.clone())
            .await
            .and_then(|attempt| attempt);
        let observed = match &outcome {
            Ok(Ok(reply)) => Ok(reply.as_ref().map(|turn| &turn.reply)),
            Ok(Err(transient)) => Err(&transient.error),
            Err(error) => Err(error),
        };
        match observed {
            Ok(Some(reply)) => telemetry::record_reply(&span, reply),
            Ok(None) => {}
            Err(error) => telemetry::record_failure(&span, error),
        }
        #[cfg(feature = "otel")]
        telemetry::metrics::record_chat(&self.config, started.elapsed(), observed);
        outcome
    }

    /// One request: an event stream is read as it arrives, anything else as one body (a
    /// provider that does not stream is read the same way whatever was asked).
    async fn attempt(
        &self,
        request: reqwest::RequestBuilder,
        assembler: StreamAssembler,
        toolset: &ProviderToolset,
        events: &EventRecorder,
    ) -> Result<Attempt, OpenRouterError> {
        let started = tokio::time::Instant::now();
        let sent = tokio::time::timeout(self.config.request_timeout, request.send()).await;
        let response = match sent {
            Err(_) => return self.classify(Err(TransportFailure::Timeout)),
            Ok(Err(error)) => return self.classify(Err(network_failure(error))),
            Ok(Ok(response)) => response,
        };
        if response.status().is_success() && is_event_stream(&response) {
            let reader = StreamReader::new(&self.config, assembler, toolset);
            return reader.read(response, events).await;
        }
        let left = self
            .config
            .request_timeout
            .saturating_sub(started.elapsed());
        let body = tokio::time::timeout(left, self.read_body(response))
            .await
            .unwrap_or(Err(TransportFailure::Timeout));
        self.classify(body)
    }

    /// Sorts one non-streamed attempt into a reply, a retryable failure, or a final error.
    fn classify(
        &self,
        response: Result<RawResponse, TransportFailure>,
    ) -> Result<Attempt, OpenRouterError> {
        let response = match response {
            Ok(response) => response,
            Err(failure) => return Ok(Err(failure.into_transient(self.config.request_timeout))),
        };
        match decode_response(
            response.status,
            &response.body,
            response.truncated,
            self.config.max_response_bytes,
        )? {
            Decoded::Completion(reply) => Ok(Ok(reply.map(|reply| TurnReply {
                reply,
                streamed: false,
            }))),
            Decoded::Failure { status, message } => {
                provider_failure(status, message, response.retry_after, true)
            }
        }
    }
    /// Sends a request and reads its body within the per-request timeout and size limit.
    pub(crate) async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<RawResponse, TransportFailure> {
        let exchange = async {
            let response = request.send().await.map_err(network_failure)?;
            self.read_body(response).await
        };
        tokio::time::timeout(self.config.request_timeout, exchange)
            .await
            .unwrap_or(Err(TransportFailure::Timeout))
    }

    /// Reads a whole body, up to the size limit.
    async fn read_body(
        &self,
        mut response: reqwest::Response,
    ) -> Result<RawResponse, TransportFailure> {
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        let limit = self.config.max_response_bytes;
        let mut bytes = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(network_failure)? {
            if bytes.len() + chunk.len() > limit {
                bytes.extend_from_slice(&chunk[..limit - bytes.len()]);
                truncated = true;
                break;
            }
            bytes.extend_from_slice(&chunk);
        }
        let body = String::from_utf8_lossy(&bytes).into_owned();
        Ok(RawResponse {
            status,
            retry_after,
            body,
            truncated,
        })
    }

    /// The HTTP client.
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }
}

/// Runs `work` unless `cancel` fires first; cancellation drops (aborts) the work.
pub(crate) async fn abortable<T>(
    cancel: &CancellationToken,
    work: impl Future<Output = T>,
) -> Result<T, OpenRouterError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(OpenRouterError::cancelled()),
        output = work => Ok(output),
    }
}
