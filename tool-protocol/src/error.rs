//! [`ToolCallError`]: the one error shape every failure takes at the tool boundary.

use serde::{Deserialize, Deserializer, Serialize};
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
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
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

impl<'de> Deserialize<'de> for ToolCallError {
    /// Accepts exactly what [`crate::validate::parse_tool_call_error`] accepts.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::serde_util::deserialize_validated(
            deserializer,
            crate::validate::parse_tool_call_error,
        )
    }
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

    /// Whether the call's change was applied although the call failed afterwards
    /// (`details.committed: true`, e.g. a workspace mutation whose preview confirmation
    /// failed): the change must be treated as done and the call never repeated.
    pub fn is_committed(&self) -> bool {
        self.details
            .as_ref()
            .and_then(|details| details.get("committed"))
            == Some(&Value::Bool(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serde_follows_the_error_guard() {
        let kept: ToolCallError =
            serde_json::from_value(json!({"code": "X", "message": "m", "details": null})).unwrap();
        assert_eq!(kept.details, Some(Value::Null));
        let absent: ToolCallError =
            serde_json::from_value(json!({"code": "X", "message": "m"})).unwrap();
        assert_eq!(absent.details, None);
        assert_eq!(
            serde_json::to_value(&kept).unwrap(),
            json!({"code": "X", "message": "m", "details": null})
        );
        assert!(
            serde_json::from_value::<ToolCallError>(json!({"code": " ", "message": "m"})).is_err()
        );
        assert!(
            serde_json::from_value::<ToolCallError>(
                json!({"code": "X", "message": "m", "retryable": "no"})
            )
            .is_err()
        );
    }

    #[test]
    fn committed_means_details_committed_true() {
        let base = ToolCallError::new("PREVIEW_ACK_TIMEOUT", "m").with_retryable(true);
        assert!(!base.is_committed());
        assert!(
            !base
                .clone()
                .with_details(json!({"committed": "yes"}))
                .is_committed()
        );
        assert!(
            base.with_details(json!({"committed": true, "revision": 4}))
                .is_committed()
        );
    }
}
