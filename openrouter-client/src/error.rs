//! [`OpenRouterError`]: every failure of a run, with its code, retryable flag and HTTP status.
//!
//! HTTP statuses and OpenRouter's in-body error codes are classified by [`code_for_status`],
//! the one place that maps a status to a code.

use serde::Serialize;
use serde_json::json;
use tool_protocol::ToolCallError;

use crate::codes::{self, is_retryable_code};

/// A coded failure of a request or run. `Display` is `[CODE] message`.
///
/// ```
/// use openrouter_tool_loop::{OpenRouterError, codes};
/// let error = OpenRouterError::from_status(402, "Insufficient credits");
/// assert_eq!(error.code, codes::OPENROUTER_PAYMENT_REQUIRED);
/// assert!(!error.retryable);
/// assert_eq!(error.to_string(), "[OPENROUTER_PAYMENT_REQUIRED] Insufficient credits");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("[{code}] {message}")]
pub struct OpenRouterError {
    /// One of the `OPENROUTER_*` codes in [`crate::codes`].
    pub code: &'static str,
    /// Human-readable message; never contains the API key.
    pub message: String,
    /// Whether retrying the run may succeed.
    pub retryable: bool,
    /// The HTTP status (or in-body error status) that caused the failure, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

impl OpenRouterError {
    /// An error with the code's retryable flag and no status.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: is_retryable_code(code),
            status: None,
        }
    }

    /// The error of an HTTP (or in-body) status, classified by [`code_for_status`].
    pub fn from_status(status: u16, message: impl Into<String>) -> Self {
        Self {
            status: Some(status),
            ..Self::new(code_for_status(status), message)
        }
    }

    /// The error of a provider's failure answer: [`Self::from_status`], except that a message
    /// saying the model cannot take tools is [`codes::OPENROUTER_TOOLS_UNSUPPORTED`] whatever
    /// the status (llama.cpp answers 500, Ollama 400, OpenRouter 404).
    ///
    /// ```
    /// use openrouter_tool_loop::{OpenRouterError, codes};
    /// let error = OpenRouterError::from_provider_failure(500, "tools param requires --jinja flag");
    /// assert_eq!((error.code, error.retryable), (codes::OPENROUTER_TOOLS_UNSUPPORTED, false));
    /// ```
    pub fn from_provider_failure(status: u16, message: impl Into<String>) -> Self {
        let message = message.into();
        if says_tools_unsupported(&message) {
            return Self {
                status: Some(status),
                ..Self::new(codes::OPENROUTER_TOOLS_UNSUPPORTED, message)
            };
        }
        Self::from_status(status, message)
    }

    /// The error of a user cancellation.
    pub fn cancelled() -> Self {
        Self::new(codes::OPENROUTER_CANCELLED, "The run was cancelled.")
    }

    /// Whether the caller cancelled the run (as opposed to a timeout or failure).
    pub fn is_cancelled(&self) -> bool {
        self.code == codes::OPENROUTER_CANCELLED
    }

    /// The same failure as a tool-boundary [`ToolCallError`] (`details.status` when known).
    pub fn to_tool_call_error(&self) -> ToolCallError {
        let error =
            ToolCallError::new(self.code, self.message.clone()).with_retryable(self.retryable);
        match self.status {
            Some(status) => error.with_details(json!({ "status": status })),
            None => error,
        }
    }
}

/// The code of an HTTP status: 401 authentication, 402 payment, 403 access, 429 rate limit,
/// 5xx provider error, anything else a configuration error (wrong endpoint, bad request).
pub fn code_for_status(status: u16) -> &'static str {
    match status {
        401 => codes::OPENROUTER_AUTHENTICATION_FAILED,
        402 => codes::OPENROUTER_PAYMENT_REQUIRED,
        403 => codes::OPENROUTER_ACCESS_DENIED,
        429 => codes::OPENROUTER_RATE_LIMITED,
        500.. => codes::OPENROUTER_PROVIDER_ERROR,
        _ => codes::OPENROUTER_CONFIGURATION_ERROR,
    }
}

/// Whether a provider's message says the model cannot take tools, in the words OpenRouter,
/// OpenAI, llama.cpp and Ollama use.
fn says_tools_unsupported(message: &str) -> bool {
    const PHRASES: [&str; 5] = [
        "does not support tools",
        "support tool use",
        "tools param requires",
        "unsupported param: tools",
        "'tools' is not supported",
    ];
    let message = message.to_ascii_lowercase();
    PHRASES.iter().any(|phrase| message.contains(phrase))
}

/// Whether a status is worth a transient retry (429 and 5xx).
pub fn is_transient_status(status: u16) -> bool {
    status == 429 || status >= 500
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_codes_and_flags() {
        let cases = [
            (400, codes::OPENROUTER_CONFIGURATION_ERROR, false),
            (401, codes::OPENROUTER_AUTHENTICATION_FAILED, false),
            (402, codes::OPENROUTER_PAYMENT_REQUIRED, false),
            (403, codes::OPENROUTER_ACCESS_DENIED, false),
            (404, codes::OPENROUTER_CONFIGURATION_ERROR, false),
            (429, codes::OPENROUTER_RATE_LIMITED, true),
            (499, codes::OPENROUTER_CONFIGURATION_ERROR, false),
            (500, codes::OPENROUTER_PROVIDER_ERROR, true),
            (503, codes::OPENROUTER_PROVIDER_ERROR, true),
        ];
        for (status, code, retryable) in cases {
            let error = OpenRouterError::from_status(status, "m");
            assert_eq!(
                (error.code, error.retryable, error.status),
                (code, retryable, Some(status)),
                "{status}"
            );
            assert_eq!(is_transient_status(status), retryable, "{status}");
        }
    }

    #[test]
    fn converts_to_a_tool_call_error() {
        let error = OpenRouterError::from_status(429, "slow down").to_tool_call_error();
        assert_eq!(error.code, codes::OPENROUTER_RATE_LIMITED);
        assert_eq!(error.retryable, Some(true));
        assert_eq!(error.details, Some(json!({"status": 429})));
        assert!(
            OpenRouterError::cancelled()
                .to_tool_call_error()
                .details
                .is_none()
        );
        assert!(OpenRouterError::cancelled().is_cancelled());
    }
}
