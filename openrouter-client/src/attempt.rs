//! What one request attempt gives, shared by the client and the stream reader: a checked
//! reply, or a failure that may be retried.

use std::time::Duration;

use crate::codes::{OPENROUTER_NETWORK_ERROR, OPENROUTER_TIMEOUT, OPENROUTER_TOOLS_UNSUPPORTED};
use crate::decode::AssistantReply;
use crate::error::{OpenRouterError, is_transient_status};
use crate::events::RetryReason;
use crate::retry::RetryAfter;

/// Longest network error description kept in a message.
const NETWORK_MESSAGE_MAX_CHARS: usize = 300;

/// Why a request produced no response.
pub(crate) enum TransportFailure {
    Timeout,
    Network(String),
}

impl TransportFailure {
    /// The failure as a retryable one; a timeout names the per-request `request_timeout`.
    pub(crate) fn into_transient(self, request_timeout: Duration) -> Transient {
        match self {
            Self::Timeout => Transient {
                reason: RetryReason::Timeout,
                error: OpenRouterError::new(
                    OPENROUTER_TIMEOUT,
                    format!("Request timed out after {}ms.", request_timeout.as_millis()),
                ),
                retry_after: None,
            },
            Self::Network(message) => Transient {
                reason: RetryReason::Network,
                error: OpenRouterError::new(
                    OPENROUTER_NETWORK_ERROR,
                    format!("Network request failed: {message}"),
                ),
                retry_after: None,
            },
        }
    }
}

/// A failure that may be retried, with the error it becomes when retries run out.
pub(crate) struct Transient {
    pub(crate) reason: RetryReason,
    pub(crate) error: OpenRouterError,
    pub(crate) retry_after: Option<RetryAfter>,
}

/// A checked assistant message and whether it arrived as a stream (a non-streamed one has
/// not emitted its deltas yet).
#[derive(Debug)]
pub(crate) struct TurnReply {
    pub(crate) reply: AssistantReply,
    pub(crate) streamed: bool,
}

/// What one attempt gives: a reply (`None` without an assistant message) or a failure that
/// may be retried.
pub(crate) type Attempt = Result<Option<TurnReply>, Transient>;

/// A provider's failure: retryable when its status is (429, 5xx) and `retry_allowed` (a
/// stream that announced a tool call is not replayed), else final.
pub(crate) fn provider_failure(
    status: u16,
    message: String,
    retry_after: Option<RetryAfter>,
    retry_allowed: bool,
) -> Result<Attempt, OpenRouterError> {
    let error = OpenRouterError::from_provider_failure(status, message);
    if retry_allowed && is_transient_status(status) && error.code != OPENROUTER_TOOLS_UNSUPPORTED {
        Ok(Err(Transient {
            reason: RetryReason::Provider,
            error,
            retry_after,
        }))
    } else {
        Err(error)
    }
}

/// A network error with its source chain, bounded.
pub(crate) fn network_failure(error: reqwest::Error) -> TransportFailure {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    TransportFailure::Network(message.chars().take(NETWORK_MESSAGE_MAX_CHARS).collect())
}
