//! Every error the pipeline emits, built in one place so codes, retryable flags, messages and
//! detail keys stay exactly as the contract fixes them.

use serde_json::{Value, json};
use tool_protocol::ToolCallError;
use tool_protocol::codes;

use tool_protocol::validate::ValidationIssue;

use crate::schema::issues_json;

/// `details.executionState` of a call whose handler may still be draining.
pub const EXECUTION_STATE_DETACHED: &str = "detached";
/// `details.executionState` of a call that stopped before its handler was started (while the
/// policy decided, a person was asked for approval, or the durable claim was in flight): no
/// handler runs or drains for it.
pub const EXECUTION_STATE_NOT_STARTED: &str = "not-started";

pub(crate) fn invalid_request(issues: Option<Value>) -> ToolCallError {
    let error = ToolCallError::new(codes::TOOL_VALIDATION_FAILED, "Invalid tools/call request.");
    match issues {
        Some(issues) => error.with_details(json!({ "issues": issues })),
        None => error,
    }
}

pub(crate) fn invalid_options(message: &str) -> ToolCallError {
    ToolCallError::new(codes::TOOL_INVALID_OPTIONS, message).with_retryable(false)
}

pub(crate) fn registry_not_ready() -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_REGISTRY_NOT_READY,
        "Tool registry has been shut down.",
    )
    .with_retryable(true)
}

pub(crate) fn not_found(name: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_NOT_FOUND,
        format!("Tool \"{name}\" not found in registry"),
    )
}

pub(crate) fn not_allowed(name: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_NOT_ALLOWED,
        format!("Tool \"{name}\" is not allowed in this registry"),
    )
}

pub(crate) use tool_protocol::schema::arguments_invalid;

pub(crate) fn output_invalid(name: &str, issues: &[ValidationIssue]) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_OUTPUT_VALIDATION_FAILED,
        format!("Tool \"{name}\" returned an invalid result"),
    )
    .with_details(json!({ "issues": issues_json(issues) }))
}

pub(crate) fn output_limit(max_output_bytes: u64, used_output_bytes: u64) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_OUTPUT_LIMIT_EXCEEDED,
        format!("Tool call output exceeded the {max_output_bytes}-byte limit."),
    )
    .with_retryable(false)
    .with_details(json!({
        "maxOutputBytes": max_output_bytes,
        "usedOutputBytes": used_output_bytes,
    }))
}

pub(crate) fn result_invalid(name: &str, reason: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_RESULT_VALIDATION_FAILED,
        format!("Tool \"{name}\" returned a result that breaks the result contract: {reason}"),
    )
}

pub(crate) fn result_unserializable(name: &str, reason: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_RESULT_SERIALIZATION_FAILED,
        format!("Tool \"{name}\" returned a result that could not be serialized: {reason}"),
    )
}

pub(crate) fn policy_failed(message: &str) -> ToolCallError {
    let message = if message.trim().is_empty() {
        "Tool policy failed."
    } else {
        message
    };
    ToolCallError::new(codes::TOOL_POLICY_FAILED, message).with_retryable(true)
}

/// `details.decidedBy` of a `TOOL_POLICY_DENIED` the registry's policy decided.
pub const DECIDED_BY_POLICY: &str = "policy";
/// `details.decidedBy` of a `TOOL_POLICY_DENIED` a person decided when asked for approval.
pub const DECIDED_BY_PERSON: &str = "person";
/// `details.decidedBy` of a `TOOL_POLICY_DENIED` the host decided for a person who can no
/// longer answer (for example the page that asked is gone).
pub const DECIDED_BY_HOST: &str = "host";
/// The `details` key saying who refused a call: [`DECIDED_BY_POLICY`], [`DECIDED_BY_PERSON`]
/// or [`DECIDED_BY_HOST`].
pub const DECIDED_BY_KEY: &str = "decidedBy";

/// The policy refused the call.
pub(crate) fn policy_denied(name: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_POLICY_DENIED,
        format!("Tool \"{name}\" was denied by policy"),
    )
    .with_retryable(false)
    .with_details(json!({ DECIDED_BY_KEY: DECIDED_BY_POLICY }))
}

/// The person asked for approval refused the call.
pub(crate) fn person_denied(name: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_POLICY_DENIED,
        format!("Tool \"{name}\" was denied by a person asked for approval"),
    )
    .with_retryable(false)
    .with_details(json!({ DECIDED_BY_KEY: DECIDED_BY_PERSON }))
}

/// The refusal an interaction explained ([`crate::InteractionOutcome::DeniedWith`]): a
/// person's unless its details name someone else.
pub(crate) fn denied_with(denial: &crate::interaction::Denial) -> ToolCallError {
    let mut details = denial.details.clone();
    details
        .entry(DECIDED_BY_KEY)
        .or_insert_with(|| Value::from(DECIDED_BY_PERSON));
    ToolCallError::new(codes::TOOL_POLICY_DENIED, denial.message.clone())
        .with_retryable(false)
        .with_details(Value::Object(details))
}

pub(crate) fn approval_required(name: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_APPROVAL_REQUIRED,
        format!("Approval required for tool \"{name}\""),
    )
    .with_retryable(true)
}

pub(crate) fn cancelled(waiting_for: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_CANCELLED,
        format!("Tool call cancelled while waiting for {waiting_for}."),
    )
    .with_retryable(true)
}

/// The deadline passed; `handler_started` says whether a handler may still be draining
/// ([`EXECUTION_STATE_DETACHED`]) or never started ([`EXECUTION_STATE_NOT_STARTED`]).
pub(crate) fn timed_out(timeout_ms: u64, handler_started: bool) -> ToolCallError {
    let execution_state = if handler_started {
        EXECUTION_STATE_DETACHED
    } else {
        EXECUTION_STATE_NOT_STARTED
    };
    ToolCallError::new(
        codes::TOOL_TIMEOUT,
        format!("Tool call timed out after {timeout_ms}ms."),
    )
    .with_retryable(true)
    .with_details(json!({ "timeoutMs": timeout_ms, "executionState": execution_state }))
}

/// Nobody answered an approval within the call's approval timeout: the handler never started.
pub(crate) fn approval_timed_out(approval_timeout_ms: u64) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_APPROVAL_TIMEOUT,
        format!("Nobody answered the approval within {approval_timeout_ms}ms."),
    )
    .with_retryable(true)
    .with_details(json!({
        "approvalTimeoutMs": approval_timeout_ms,
        "executionState": EXECUTION_STATE_NOT_STARTED,
    }))
}

pub(crate) fn aborted(message: &str) -> ToolCallError {
    ToolCallError::new(codes::TOOL_EXECUTION_ABORTED, message)
        .with_retryable(true)
        .with_details(json!({ "executionState": EXECUTION_STATE_DETACHED }))
}

pub(crate) fn idempotency_conflict(name: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_IDEMPOTENCY_CONFLICT,
        format!("Idempotency key was already used for a different \"{name}\" operation."),
    )
    .with_retryable(false)
}

/// `details.persistenceState` of a durable transition that may or may not have been written.
pub const PERSISTENCE_STATE_UNCERTAIN: &str = "uncertain";

/// Another owner holds a live lease on the durable record.
pub(crate) fn idempotency_pending(owner_id: &str, lease_expires_at: Option<u64>) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_IDEMPOTENCY_PENDING,
        "Tool operation is already running under another owner; retry after its lease ends.",
    )
    .with_retryable(true)
    .with_details(json!({
        "state": "pending",
        "ownerId": owner_id,
        "leaseExpiresAt": lease_expires_at,
    }))
}

/// The durable record's outcome is ambiguous and needs reconciliation before any retry.
pub(crate) fn idempotency_unknown(reason: Option<&str>) -> ToolCallError {
    let mut details = json!({ "state": "unknown", "automaticRetrySafe": false });
    if let Some(reason) = reason {
        details["reason"] = Value::String(reason.to_owned());
    }
    ToolCallError::new(
        codes::TOOL_IDEMPOTENCY_UNKNOWN,
        "Tool operation outcome is unknown; reconcile it before retrying.",
    )
    .with_retryable(false)
    .with_details(details)
}

/// `details.keyScope` of idempotency errors: what besides the key names the operation. The
/// operation key is `[sessionId or "default", tool, idempotencyKey]`, so the same key in another
/// session or for another tool is another operation.
pub const IDEMPOTENCY_KEY_SCOPE: [&str; 2] = ["sessionId", "tool"];

/// Who settled a durable record as `failed` without a replayable tool result, and when.
pub(crate) struct SettledFailure<'a> {
    pub(crate) operation_key: &'a str,
    pub(crate) reason: Option<&'a str>,
    pub(crate) reconciled_by: Option<&'a str>,
    pub(crate) reconciled_at: Option<u64>,
}

/// The durable record is settled as `failed` (typically reconciled so by an operator) and holds
/// no replayable tool result: the failure replays; a new attempt needs a new key. The code is
/// the contract's for a replay without a stored result; the details say the state is `failed`.
pub(crate) fn idempotency_failed(failure: &SettledFailure<'_>) -> ToolCallError {
    let message = match (failure.reconciled_by, failure.reconciled_at) {
        (Some(by), Some(at)) => format!(
            "Tool operation was reconciled as failed by \"{by}\" at {at} (ms since the Unix \
             epoch); a retry needs a new idempotency key."
        ),
        (Some(by), None) => format!(
            "Tool operation was reconciled as failed by \"{by}\"; a retry needs a new \
             idempotency key."
        ),
        _ => "Tool operation failed; a retry needs a new idempotency key.".to_owned(),
    };
    let mut details = json!({
        "state": "failed",
        "automaticRetrySafe": false,
        "operationKey": failure.operation_key,
        "keyScope": IDEMPOTENCY_KEY_SCOPE,
    });
    if let Some(reason) = failure.reason {
        details["reason"] = Value::String(reason.to_owned());
    }
    if let Some(by) = failure.reconciled_by {
        details["reconciledBy"] = Value::String(by.to_owned());
    }
    if let Some(at) = failure.reconciled_at {
        details["reconciledAt"] = json!(at);
    }
    ToolCallError::new(codes::TOOL_IDEMPOTENCY_UNKNOWN, message)
        .with_retryable(false)
        .with_details(details)
}

/// The durable claim failed: nothing ran, a retry is safe.
pub(crate) fn idempotency_store_failed(operation_key: &str, message: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_IDEMPOTENCY_STORE_FAILED,
        format!("Durable operation state could not be persisted: {message}"),
    )
    .with_retryable(true)
    .with_details(json!({ "operationKey": operation_key }))
}

/// A terminal or abort transition failed or hung: the record may still say `pending`, so an
/// automatic retry could repeat the effect.
pub(crate) fn idempotency_store_uncertain(operation_key: &str, message: &str) -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_IDEMPOTENCY_STORE_FAILED,
        format!("Durable operation state could not be persisted: {message}"),
    )
    .with_retryable(true)
    .with_details(json!({
        "operationKey": operation_key,
        "persistenceState": PERSISTENCE_STATE_UNCERTAIN,
        "automaticRetrySafe": false,
    }))
}

pub(crate) fn handler_panicked(handler_id: &str) -> ToolCallError {
    ToolCallError::new(codes::TOOL_EXECUTION_FAILED, "Tool handler panicked.")
        .with_retryable(false)
        .with_details(json!({ "handlerId": handler_id, "message": "Tool handler panicked." }))
}

/// A handler's own error, keeping its code, retryable flag and details; a blank code becomes
/// `TOOL_EXECUTION_FAILED`, missing details become `{handlerId, message}`, and a missing
/// retryable flag follows the code's default.
pub(crate) fn from_handler(mut error: ToolCallError, handler_id: &str) -> ToolCallError {
    if error.code.trim().is_empty() {
        error.code = codes::TOOL_EXECUTION_FAILED.to_owned();
    }
    if error.message.trim().is_empty() {
        error.message = format!("Tool handler \"{handler_id}\" failed.");
    }
    if error.details.is_none() {
        error.details = Some(json!({ "handlerId": handler_id, "message": error.message }));
    }
    if error.retryable.is_none() {
        error.retryable = default_handler_retryable(&error.code);
    }
    error
}

fn default_handler_retryable(code: &str) -> Option<bool> {
    match code {
        codes::TOOL_EXECUTION_ABORTED => Some(true),
        codes::TOOL_EXECUTION_FAILED | codes::TOOL_EXECUTION_UNKNOWN => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_errors_keep_their_metadata() {
        let domain = ToolCallError::new("WORKSPACE_REVISION_CONFLICT", "stale")
            .with_retryable(true)
            .with_details(json!({"expectedRevision": 1}));
        assert_eq!(from_handler(domain.clone(), "h"), domain);
        let bare = from_handler(ToolCallError::new(" ", "boom"), "workspace.write");
        assert_eq!(bare.code, codes::TOOL_EXECUTION_FAILED);
        assert_eq!(bare.retryable, Some(false));
        assert_eq!(
            bare.details,
            Some(json!({"handlerId": "workspace.write", "message": "boom"}))
        );
        let explicit_null =
            from_handler(ToolCallError::new("X", "m").with_details(Value::Null), "h");
        assert_eq!(explicit_null.details, Some(Value::Null));
        assert_eq!(
            from_handler(ToolCallError::new(codes::TOOL_EXECUTION_ABORTED, "a"), "h").retryable,
            Some(true)
        );
    }

    #[test]
    fn timeouts_and_limits_carry_their_details() {
        assert_eq!(
            timed_out(5, true).details,
            Some(json!({"timeoutMs": 5, "executionState": "detached"}))
        );
        assert_eq!(
            timed_out(5, false).details,
            Some(json!({"timeoutMs": 5, "executionState": EXECUTION_STATE_NOT_STARTED}))
        );
        assert_eq!(EXECUTION_STATE_NOT_STARTED, "not-started");
        let limit = output_limit(10, 11);
        assert_eq!(
            limit.message,
            "Tool call output exceeded the 10-byte limit."
        );
        assert_eq!(
            limit.details,
            Some(json!({"maxOutputBytes": 10, "usedOutputBytes": 11}))
        );
        assert_eq!(
            not_found("toString").message,
            "Tool \"toString\" not found in registry"
        );
    }
}
