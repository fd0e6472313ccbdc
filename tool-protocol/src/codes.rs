//! The canonical `TOOL_*` error codes, each with when it fires and its retryable flag.
//!
//! Codes are stable SCREAMING_SNAKE strings shared with the reference implementation. Domain
//! codes (`WORKSPACE_*`, `PREVIEW_*`, `OPENROUTER_*`) travel in the same
//! [`ToolCallError::code`](crate::ToolCallError) field and are passed through unchanged.

/// Name is not a tool of the registry snapshot (including names such as `toString`).
pub const TOOL_NOT_FOUND: &str = "TOOL_NOT_FOUND";
/// The tool exists but the registry's allowlist excludes it.
pub const TOOL_NOT_ALLOWED: &str = "TOOL_NOT_ALLOWED";
/// The request is not a valid tools/call request, or strict argument validation failed.
pub const TOOL_VALIDATION_FAILED: &str = "TOOL_VALIDATION_FAILED";
/// The handler's output does not match the tool's output schema.
pub const TOOL_OUTPUT_VALIDATION_FAILED: &str = "TOOL_OUTPUT_VALIDATION_FAILED";
/// The UTF-8 JSON size of `{content, structuredContent}` exceeds `maxOutputBytes`.
pub const TOOL_OUTPUT_LIMIT_EXCEEDED: &str = "TOOL_OUTPUT_LIMIT_EXCEEDED";
/// A handler result does not satisfy the canonical result contract.
pub const TOOL_RESULT_VALIDATION_FAILED: &str = "TOOL_RESULT_VALIDATION_FAILED";
/// A handler result could not be serialized for a provider.
pub const TOOL_RESULT_SERIALIZATION_FAILED: &str = "TOOL_RESULT_SERIALIZATION_FAILED";
/// The policy (or interaction handler) failed for a reason other than timeout or cancellation.
pub const TOOL_POLICY_FAILED: &str = "TOOL_POLICY_FAILED";
/// The policy (or a person) denied the call.
pub const TOOL_POLICY_DENIED: &str = "TOOL_POLICY_DENIED";
/// The policy asked for approval and no interaction handler was supplied.
pub const TOOL_APPROVAL_REQUIRED: &str = "TOOL_APPROVAL_REQUIRED";
/// A person was asked for approval and did not answer within the call's approval timeout;
/// the handler never started.
pub const TOOL_APPROVAL_TIMEOUT: &str = "TOOL_APPROVAL_TIMEOUT";
/// The caller cancelled the call.
pub const TOOL_CANCELLED: &str = "TOOL_CANCELLED";
/// The call's timeout elapsed (policy, interaction or execution); the handler may still drain.
pub const TOOL_TIMEOUT: &str = "TOOL_TIMEOUT";
/// A per-call option is invalid; returned before any event or timer.
pub const TOOL_INVALID_OPTIONS: &str = "TOOL_INVALID_OPTIONS";
/// An idempotency key was reused with different arguments.
pub const TOOL_IDEMPOTENCY_CONFLICT: &str = "TOOL_IDEMPOTENCY_CONFLICT";
/// Another owner holds an unexpired lease on the durable operation.
pub const TOOL_IDEMPOTENCY_PENDING: &str = "TOOL_IDEMPOTENCY_PENDING";
/// The durable operation's outcome is unknown and must be reconciled before any retry.
pub const TOOL_IDEMPOTENCY_UNKNOWN: &str = "TOOL_IDEMPOTENCY_UNKNOWN";
/// Durable operation state could not be read or persisted.
pub const TOOL_IDEMPOTENCY_STORE_FAILED: &str = "TOOL_IDEMPOTENCY_STORE_FAILED";
/// Execution was aborted (registry shut down, or a shared execution aborted by its timeout).
pub const TOOL_EXECUTION_ABORTED: &str = "TOOL_EXECUTION_ABORTED";
/// A handler reports that a partial external effect may exist.
pub const TOOL_EXECUTION_UNKNOWN: &str = "TOOL_EXECUTION_UNKNOWN";
/// Default code for handler errors.
pub const TOOL_EXECUTION_FAILED: &str = "TOOL_EXECUTION_FAILED";
/// The registry has been shut down.
pub const TOOL_REGISTRY_NOT_READY: &str = "TOOL_REGISTRY_NOT_READY";

/// Whether the registry sets `retryable` when it emits a code, and to what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryableRule {
    /// Always emitted with this flag.
    Fixed(bool),
    /// The field is omitted by the registry.
    Omitted,
    /// Taken from the handler's error (default given).
    FromHandler(bool),
}

/// One row of [`TOOL_CALL_ERROR_CODES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCodeInfo {
    /// The stable code string.
    pub code: &'static str,
    /// How the registry sets `retryable` for this code.
    pub retryable: RetryableRule,
    /// When the code fires.
    pub fires_when: &'static str,
}

/// Every canonical `TOOL_*` code with its retryable rule and when it fires.
pub const TOOL_CALL_ERROR_CODES: &[ErrorCodeInfo] = &[
    info(
        TOOL_NOT_FOUND,
        RetryableRule::Omitted,
        "The name is not a tool of the registry snapshot; prototype-like names such as `toString` included.",
    ),
    info(
        TOOL_NOT_ALLOWED,
        RetryableRule::Omitted,
        "The tool exists but the allowlist excludes it.",
    ),
    info(
        TOOL_VALIDATION_FAILED,
        RetryableRule::Omitted,
        "Invalid tools/call request (no lifecycle events), or strict-mode argument validation failed (details.issues).",
    ),
    info(
        TOOL_OUTPUT_VALIDATION_FAILED,
        RetryableRule::Omitted,
        "The handler output fails the tool's output schema (details.issues).",
    ),
    info(
        TOOL_OUTPUT_LIMIT_EXCEEDED,
        RetryableRule::Fixed(false),
        "maxOutputBytes is set and the UTF-8 JSON size of {content, structuredContent} is larger (details maxOutputBytes, usedOutputBytes).",
    ),
    info(
        TOOL_RESULT_VALIDATION_FAILED,
        RetryableRule::Omitted,
        "A provider bridge found a handler result that fails the canonical result contract.",
    ),
    info(
        TOOL_RESULT_SERIALIZATION_FAILED,
        RetryableRule::Omitted,
        "A provider bridge could not serialize a result for the provider.",
    ),
    info(
        TOOL_POLICY_FAILED,
        RetryableRule::Fixed(true),
        "The policy or interaction handler failed for a reason other than timeout or cancellation.",
    ),
    info(
        TOOL_POLICY_DENIED,
        RetryableRule::Fixed(false),
        "The policy returned deny, or the interaction handler answered denied.",
    ),
    info(
        TOOL_APPROVAL_REQUIRED,
        RetryableRule::Fixed(true),
        "The policy returned ask and no interaction handler was supplied.",
    ),
    info(
        TOOL_APPROVAL_TIMEOUT,
        RetryableRule::Fixed(true),
        "A person asked for approval did not answer within the approval timeout.",
    ),
    info(
        TOOL_CANCELLED,
        RetryableRule::Fixed(true),
        "The caller's cancellation fired while waiting for policy, interaction or the handler.",
    ),
    info(
        TOOL_TIMEOUT,
        RetryableRule::Fixed(true),
        "The call's timeout elapsed (details timeoutMs; executionState: detached when the handler had started and may go on, not-started when it never ran).",
    ),
    info(
        TOOL_INVALID_OPTIONS,
        RetryableRule::Fixed(false),
        "Invalid idempotency key, timeout, maxOutputBytes or execution owner id; returned before any event or timer.",
    ),
    info(
        TOOL_IDEMPOTENCY_CONFLICT,
        RetryableRule::Fixed(false),
        "The idempotency key was already used with a different argument fingerprint.",
    ),
    info(
        TOOL_IDEMPOTENCY_PENDING,
        RetryableRule::Fixed(true),
        "The durable claim found another owner's unexpired lease (details state, ownerId, leaseExpiresAt).",
    ),
    info(
        TOOL_IDEMPOTENCY_UNKNOWN,
        RetryableRule::Fixed(false),
        "The durable record is unknown (or a replay has no stored result); reconcile before retrying.",
    ),
    info(
        TOOL_IDEMPOTENCY_STORE_FAILED,
        RetryableRule::Fixed(true),
        "The durable claim failed, or a terminal/abort transition failed or hung (persistenceState: uncertain).",
    ),
    info(
        TOOL_EXECUTION_ABORTED,
        RetryableRule::FromHandler(true),
        "The execution was aborted by registry shutdown, or an idempotent retry joined an execution aborted by its timeout.",
    ),
    info(
        TOOL_EXECUTION_UNKNOWN,
        RetryableRule::FromHandler(false),
        "A handler reports a possible partial external effect; the durable record becomes unknown.",
    ),
    info(
        TOOL_EXECUTION_FAILED,
        RetryableRule::FromHandler(false),
        "Default code of handler errors; retryable only when the handler says so.",
    ),
    info(
        TOOL_REGISTRY_NOT_READY,
        RetryableRule::Fixed(true),
        "The registry has been shut down.",
    ),
];

impl ErrorCodeInfo {
    /// The `retryable` flag to set when the registry emits this code without handler input:
    /// the fixed flag, the handler default, or `None` when the field is omitted.
    pub fn default_retryable(&self) -> Option<bool> {
        match self.retryable {
            RetryableRule::Fixed(flag) | RetryableRule::FromHandler(flag) => Some(flag),
            RetryableRule::Omitted => None,
        }
    }
}

const fn info(
    code: &'static str,
    retryable: RetryableRule,
    fires_when: &'static str,
) -> ErrorCodeInfo {
    ErrorCodeInfo {
        code,
        retryable,
        fires_when,
    }
}

/// Looks up a canonical code; `None` for domain codes and unknown strings.
pub fn error_code_info(code: &str) -> Option<&'static ErrorCodeInfo> {
    TOOL_CALL_ERROR_CODES.iter().find(|row| row.code == code)
}

/// Whether a string is safe to expose as an error code in audit data:
/// 1 to 128 characters from `[A-Za-z0-9._:-]`.
pub fn is_audit_safe_error_code(code: &str) -> bool {
    (1..=128).contains(&code.len())
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_code_is_listed_once_and_is_its_own_name() {
        let codes: HashSet<_> = TOOL_CALL_ERROR_CODES.iter().map(|row| row.code).collect();
        assert_eq!(codes.len(), TOOL_CALL_ERROR_CODES.len());
        assert_eq!(codes.len(), 22);
        for row in TOOL_CALL_ERROR_CODES {
            assert!(row.code.starts_with("TOOL_"));
            assert!(is_audit_safe_error_code(row.code));
            assert!(!row.fires_when.is_empty());
        }
    }

    #[test]
    fn retryable_flags_match_the_contract() {
        let fixed = |code| error_code_info(code).unwrap().retryable;
        assert_eq!(
            fixed(TOOL_OUTPUT_LIMIT_EXCEEDED),
            RetryableRule::Fixed(false)
        );
        assert_eq!(fixed(TOOL_POLICY_FAILED), RetryableRule::Fixed(true));
        assert_eq!(fixed(TOOL_POLICY_DENIED), RetryableRule::Fixed(false));
        assert_eq!(fixed(TOOL_APPROVAL_REQUIRED), RetryableRule::Fixed(true));
        assert_eq!(fixed(TOOL_APPROVAL_TIMEOUT), RetryableRule::Fixed(true));
        assert_eq!(fixed(TOOL_CANCELLED), RetryableRule::Fixed(true));
        assert_eq!(fixed(TOOL_TIMEOUT), RetryableRule::Fixed(true));
        assert_eq!(fixed(TOOL_INVALID_OPTIONS), RetryableRule::Fixed(false));
        assert_eq!(
            fixed(TOOL_IDEMPOTENCY_CONFLICT),
            RetryableRule::Fixed(false)
        );
        assert_eq!(fixed(TOOL_IDEMPOTENCY_PENDING), RetryableRule::Fixed(true));
        assert_eq!(fixed(TOOL_IDEMPOTENCY_UNKNOWN), RetryableRule::Fixed(false));
        assert_eq!(
            fixed(TOOL_IDEMPOTENCY_STORE_FAILED),
            RetryableRule::Fixed(true)
        );
        assert_eq!(fixed(TOOL_REGISTRY_NOT_READY), RetryableRule::Fixed(true));
        assert_eq!(fixed(TOOL_NOT_FOUND), RetryableRule::Omitted);
        assert!(error_code_info("WORKSPACE_EMPTY").is_none());
    }

    #[test]
    fn audit_safe_codes_are_bounded() {
        assert!(is_audit_safe_error_code("WORKSPACE_REVISION_CONFLICT"));
        assert!(!is_audit_safe_error_code(""));
        assert!(!is_audit_safe_error_code("has space"));
        assert!(is_audit_safe_error_code(&"A".repeat(128)));
        assert!(!is_audit_safe_error_code(&"A".repeat(129)));
    }
}
