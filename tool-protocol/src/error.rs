//! [`ToolCallError`]: the one error shape every failure takes at the tool boundary.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A coded tool-call failure: `{ code, message, retryable?, details? }`.
///
/// `code` is a canonical `TOOL_*` code (see [`crate::codes`]) or a domain code such as
/// `WORKSPACE_REVISION_CONFLICT`; it is the contract, `message` is for people.
///
/// ```
/// use tool_protocol::{ToolCallError, codes};
/// let error = ToolCallError::new(codes::TOOL_POLICY_DENIED, "Tool \"x\" was denied by policy")
///     .with_retryable(false);
/// assert_eq!(error.code, "TOOL_POLICY_DENIED");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("[{code}] {message}")]
pub struct ToolCallError {
    /// Stable SCREAMING_SNAKE code.
    pub code: String,
    /// Human-readable message.
    pub message: String,
    /// Whether retrying the same call may succeed; omitted when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// Structured details; an explicit JSON `null` is kept apart from no details.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_util::present"
    )]
    pub details: Option<Value>,
}

impl ToolCallError {
    /// An error with a code and message, no retryable flag and no details.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            retryable: None,
            details: None,
        }
    }

    /// An error whose `retryable` flag is the one [`crate::codes::TOOL_CALL_ERROR_CODES`] gives
    /// its code (none for domain codes).
    ///
    /// ```
    /// use tool_protocol::{ToolCallError, codes};
    /// assert_eq!(ToolCallError::canonical(codes::TOOL_TIMEOUT, "Tool call timed out after 5ms.").retryable, Some(true));
    /// assert_eq!(ToolCallError::canonical(codes::TOOL_NOT_FOUND, "missing").retryable, None);
    /// ```
    pub fn canonical(code: &str, message: impl Into<String>) -> Self {
        let retryable = crate::codes::error_code_info(code)
            .and_then(crate::codes::ErrorCodeInfo::default_retryable);
        Self {
            code: code.to_owned(),
            message: message.into(),
            retryable,
            details: None,
        }
    }

    /// Sets the retryable flag.
    #[must_use]
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = Some(retryable);
        self
    }

    /// Sets the details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Whether the error says a retry may succeed (absent counts as no).
    pub fn is_retryable(&self) -> bool {
        self.retryable == Some(true)
    }
}
