//! [`ToolCallError`]: the one error shape every failure takes at the tool boundary.

use serde::Serialize;
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// Which field of a tool call error [`ToolCallError::try_new`] found blank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BlankErrorField {
    /// The code is empty or whitespace.
    #[error("A tool call error requires a non-empty code.")]
    Code,
    /// The message is empty or whitespace.
    #[error("A tool call error requires a non-empty message.")]
    Message,
}

impl ToolCallError {
    /// An error with a code and message, no retryable flag and no details.
    ///
    /// Never builds an error the deserializer (and `isToolCallResult`) would reject: a blank
    /// code becomes `TOOL_EXECUTION_FAILED` (the default code of a tool call error) and a
    /// blank message becomes `Tool call failed with <code>.`. Use [`Self::try_new`] to refuse
    /// blank input instead.
    ///
    /// ```
    /// use tool_protocol::{ToolCallError, codes};
    /// let error = ToolCallError::new("", "disk full");
    /// assert_eq!(error.code, codes::TOOL_EXECUTION_FAILED);
    /// assert_eq!(ToolCallError::new("APP_BUSY", " ").message, "Tool call failed with APP_BUSY.");
    /// ```
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        let mut code = code.into();
        if code.trim().is_empty() {
            crate::codes::TOOL_EXECUTION_FAILED.clone_into(&mut code);
        }
        let mut message = message.into();
        if message.trim().is_empty() {
            message = format!("Tool call failed with {code}.");
        }
        Self {
            code,
            message,
            retryable: None,
            details: None,
        }
    }

    /// Like [`Self::new`], but refuses a blank code or message instead of defaulting it.
    ///
    /// ```
    /// use tool_protocol::{BlankErrorField, ToolCallError};
    /// assert_eq!(ToolCallError::try_new("X", " "), Err(BlankErrorField::Message));
    /// assert!(ToolCallError::try_new("X", "m").is_ok());
    /// ```
    pub fn try_new(
        code: impl Into<String>,
        message: impl Into<String>,
    ) -> Result<Self, BlankErrorField> {
        let (code, message) = (code.into(), message.into());
        if code.trim().is_empty() {
            return Err(BlankErrorField::Code);
        }
        if message.trim().is_empty() {
            return Err(BlankErrorField::Message);
        }
        Ok(Self::new(code, message))
    }

    /// An error whose `retryable` flag is the one [`crate::codes::TOOL_CALL_ERROR_CODES`] gives
    /// its code (none for domain codes). Blank input is defaulted as in [`Self::new`].
    ///
    /// ```
    /// use tool_protocol::{ToolCallError, codes};
    /// assert_eq!(ToolCallError::canonical(codes::TOOL_TIMEOUT, "Tool call timed out after 5ms.").retryable, Some(true));
    /// assert_eq!(ToolCallError::canonical(codes::TOOL_NOT_FOUND, "missing").retryable, None);
    /// ```
    pub fn canonical(code: &str, message: impl Into<String>) -> Self {
        let mut error = Self::new(code, message);
        error.retryable = crate::codes::error_code_info(&error.code)
            .and_then(crate::codes::ErrorCodeInfo::default_retryable);
        error
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

/// An I/O failure in a handler: `TOOL_EXECUTION_FAILED`, not retryable (a retry rarely fixes a
/// missing file or a permission), with the error kind in `details.ioKind`; so a handler can use
/// `?` on file and socket calls.
///
/// ```
/// use tool_protocol::{ToolCallError, codes};
/// fn read() -> Result<String, ToolCallError> {
///     Ok(std::fs::read_to_string("/no/such/file")?)
/// }
/// let error = read().unwrap_err();
/// assert_eq!(error.code, codes::TOOL_EXECUTION_FAILED);
/// assert_eq!(error.retryable, Some(false));
/// assert_eq!(error.details.unwrap()["ioKind"], "NotFound");
/// ```
impl From<std::io::Error> for ToolCallError {
    fn from(error: std::io::Error) -> Self {
        Self::new(crate::codes::TOOL_EXECUTION_FAILED, error.to_string())
            .with_retryable(false)
            .with_details(serde_json::json!({ "ioKind": format!("{:?}", error.kind()) }))
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
    fn constructors_never_build_what_the_deserializer_rejects() {
        let round_trips = |error: &ToolCallError| {
            serde_json::from_value::<ToolCallError>(serde_json::to_value(error).unwrap()).is_ok()
        };
        for (code, message) in [("", "m"), (" \t", "m"), ("X", ""), ("X", "\n "), ("", "")] {
            for error in [
                ToolCallError::new(code, message),
                ToolCallError::canonical(code, message),
            ] {
                assert!(round_trips(&error), "{code:?} / {message:?} -> {error:?}");
            }
        }
        let defaulted = ToolCallError::new(" ", "disk full");
        assert_eq!(
            (defaulted.code.as_str(), defaulted.message.as_str()),
            (crate::codes::TOOL_EXECUTION_FAILED, "disk full")
        );
        assert_eq!(
            ToolCallError::new("APP_BUSY", " ").message,
            "Tool call failed with APP_BUSY."
        );
        assert_eq!(ToolCallError::try_new(" ", "m"), Err(BlankErrorField::Code));
        assert_eq!(
            ToolCallError::try_new("X", ""),
            Err(BlankErrorField::Message)
        );
        assert_eq!(
            ToolCallError::try_new("X", "m"),
            Ok(ToolCallError::new("X", "m"))
        );
        assert_eq!(
            BlankErrorField::Message.to_string(),
            "A tool call error requires a non-empty message."
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
