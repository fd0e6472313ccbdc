#![doc = include_str!("../README.md")]
//!
//! ## In this crate
//!
//! A provider that misbehaves (bad JSON, duplicate ids, 429 storms, slow answers, a model
//! that wants 50 tool calls) never causes an unbounded or ambiguous sequence of tool calls:
//!
//! - at most [`MAX_TOOL_TURNS`] provider turns and [`MAX_TOOL_CALLS`] tool calls per run; a
//!   response that would exceed the call budget runs none of its calls;
//! - responses are decoded from text and checked (assistant role, string-or-null content,
//!   function tool calls with unique non-blank ids, names and string arguments);
//! - arguments must be JSON objects, checked for every call before any call runs;
//! - 429, 5xx, network failures and timeouts are retried at most twice per turn with
//!   exponential backoff capped at 4 s (honouring `Retry-After` within the cap);
//! - the same failing call repeated three times ends the run;
//! - cancellation aborts the HTTP request, the running tool call and any backoff.
//!
//! Tools come from a [`ToolExecutor`] (list and call); every failure is an
//! [`OpenRouterError`] with an `OPENROUTER_*` code from [`codes`].
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

mod attempt;
mod chunk;
mod client;
pub mod codes;
mod config;
mod decode;
mod endpoint;
mod error;
mod events;
mod executor;
mod guard;
mod llama;
mod models;
mod partial_json;
mod provider;
mod ready;
#[cfg(feature = "tool-context")]
mod registry;
mod retry;
mod run;
mod sse;
mod stream;
mod stream_decoder;
mod stream_reader;
mod telemetry;
pub mod tool_message;
mod toolset;
mod wire;

/// Re-exported so a [`ToolExecutor`] can be implemented without adding `async-trait`.
pub use async_trait::async_trait;
pub use client::{ChatClient, OpenRouterClient};
pub use config::{
    API_KEY_ENV, ApiKey, Attribution, DEFAULT_CHAT_COMPLETIONS_URL,
    DEFAULT_MAX_PARALLEL_TOOL_CALLS, DEFAULT_MAX_TOKENS, DEFAULT_MODEL, DEFAULT_MODELS_URL,
    DataPolicy, ENDPOINT_ENV, MAX_RESPONSE_BODY_BYTES, MODEL_ENV, OpenRouterConfig,
    REQUEST_TIMEOUT, STREAM_TIMEOUT, TOOL_CHOICE,
};
pub use decode::{
    AssistantReply, Decoded, ERROR_BODY_EXCERPT_CHARS, IN_BODY_ERROR_FALLBACK_STATUS,
    ProviderToolCall, decode_response,
};
pub use endpoint::{ENDPOINT_RULE, check_endpoint, is_loopback, is_loopback_endpoint};
pub use error::{OpenRouterError, code_for_status, is_transient_status};
pub use events::{EventCallback, RetryReason, RunEvent, TokenUsage, ToolCallStatus};
pub use executor::ToolExecutor;
pub use guard::MAX_IDENTICAL_TOOL_FAILURES;
pub use llama::{
    LLAMA_TOOL_TEMPLATE_EXAMPLE, LlamaTemplateCaps, llama_props_url, llama_template_caps,
};
pub use models::{
    CATALOG_QUERY, MAX_CAPABILITY_LOOKUPS, ModelInfo, free_models, parse_catalog,
    parse_provider_catalog,
};
pub use provider::{ProviderProfile, base_url_of, chat_completions_url, models_url};
pub use ready::MAX_TOOL_CALLS;
#[cfg(feature = "tool-context")]
#[cfg_attr(docsrs, doc(cfg(feature = "tool-context")))]
pub use registry::RegistryExecutor;
pub use retry::{
    MAX_TRANSIENT_RETRIES, RETRY_BASE_DELAY, RETRY_MAX_DELAY, RetryAfter, RetryPolicy,
    parse_retry_after,
};
pub use run::{
    MAX_TOOL_TURNS, RunCompletion, RunFailure, RunOptions, RunRequest, RunTrace,
    TOOL_CALL_CANCELLED_MESSAGE, TOOL_CALL_SKIPPED_MESSAGE, TOOL_PANICKED_MESSAGE,
};
pub use stream_decoder::ChatStreamDecoder;
/// Re-exported so a [`ToolExecutor`] can be implemented without adding `tokio-util` (its
/// `call_tool` takes one).
pub use tokio_util::sync::CancellationToken;
pub use wire::{AssistantToolCall, ChatMessage, FunctionCall, FunctionKind, chat_request_body};
