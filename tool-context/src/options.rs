//! Per-call options and their validation, which runs before any event or timer.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tool_protocol::idempotency::is_valid_idempotency_key;
use tool_protocol::{ToolCallContext, ToolCallError};

use crate::allowlist::ToolNamePatterns;
use crate::failure::invalid_options;
use crate::interaction::ToolInteraction;

/// Largest accepted timeout in milliseconds (the largest 32-bit signed timer delay).
pub const MAX_TIMEOUT_MS: i64 = 2_147_483_647;
/// Largest accepted output budget: the largest integer a JSON number holds exactly (2^53 - 1).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;
/// Longest execution owner id, in characters.
pub const MAX_OWNER_ID_CHARS: usize = 256;

pub(crate) const INVALID_IDEMPOTENCY_KEY: &str =
    "Tool call idempotencyKey must be a non-empty string of at most 256 characters.";
pub(crate) const INVALID_TIMEOUT: &str =
    "Tool call timeout must be an integer number of milliseconds between 0 and 2147483647.";
pub(crate) const INVALID_APPROVAL_TIMEOUT: &str =
    "Tool call approvalTimeout must be an integer number of milliseconds between 0 and 2147483647.";
pub(crate) const INVALID_MAX_OUTPUT_BYTES: &str =
    "Tool call maxOutputBytes must be a positive safe integer.";
pub(crate) const INVALID_OWNER_ID: &str =
    "Tool call executionOwnerId must be non-blank text of at most 256 characters without NUL.";

/// Options of one tool call. Everything is optional; invalid values make the call return
/// `TOOL_INVALID_OPTIONS` before any event is emitted or any timer armed.
///
/// Numbers are signed so that values taken from untrusted JSON (a negative timeout, say) reach
/// validation and get a coded error instead of being clamped.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ToolCallOptions {
    /// Call context; `call_tool` defaults it to `{source: mcp}`.
    pub context: Option<ToolCallContext>,
    /// One wall-clock budget for policy, interaction and handler, in ms (`0..=2147483647`).
    ///
    /// The deadline stops only work that is still waiting when it passes: a stage whose work
    /// is ready when polled completes. So `0` is valid and means "no time beyond what is
    /// already ready": a call whose policy and handler finish without waiting succeeds, while
    /// one that has to wait (a timer, I/O, a durable store round trip, even one scheduler turn)
    /// ends with `TOOL_TIMEOUT`. Cancellation and shutdown, in contrast, win even over ready
    /// work.
    pub timeout_ms: Option<i64>,
    /// A separate bound, in ms (`0..=2147483647`), for waiting on a person's approval when
    /// the policy asks. Set, it replaces [`Self::timeout_ms`] while the person is asked: the
    /// wait ends with the retryable `TOOL_APPROVAL_TIMEOUT` (the handler never started), and
    /// the call's own deadline is pushed back by the time the person took, so `timeout_ms`
    /// bounds the policy and the handler, not the person. Unset, the call's timeout covers the
    /// wait as well (the contract's behaviour). Defaults to the registry's
    /// [`approval_timeout`](crate::ToolRegistryBuilder::approval_timeout).
    pub approval_timeout_ms: Option<i64>,
    /// Caller cancellation; firing it ends the call with `TOOL_CANCELLED`.
    pub cancellation: Option<CancellationToken>,
    /// Budget for the UTF-8 bytes of `{content, structuredContent}` (positive).
    pub max_output_bytes: Option<i64>,
    /// Stable key of one logical operation: retries with the same key share one execution.
    ///
    /// Keys are scoped by session and tool: the operation is
    /// `[context.session_id (or "default"), tool name, key]`, so the same key in another session
    /// or for another tool is another operation. Pass the same context (its `session_id`) to
    /// [`ToolRegistry::get_operation_status`](crate::ToolRegistry::get_operation_status),
    /// `reconcile_operation` and `recover_operation` to reach the record. A settled operation
    /// (completed or failed, including one reconciled as failed) replays under its key: a new
    /// attempt needs a new key.
    pub idempotency_key: Option<String>,
    /// Logical owner recorded in provenance (overrides the registry's owner id).
    pub execution_owner_id: Option<String>,
    /// Who answers an `ask` decision for this call (overrides the registry's interaction).
    pub interaction: Option<Arc<dyn ToolInteraction>>,
    /// The span this call records into instead of opening its own `execute_tool` span: a
    /// caller that already traces the call (an MCP server's `tools/call` span) opens it with
    /// [`tool_call_span!`](crate::tool_call_span), so one call is one span.
    pub span: Option<tracing::Span>,
    /// Narrows the registry's allowlist for this call: a tool whose name does not match is
    /// `TOOL_NOT_ALLOWED`, as if the registry did not allow it (an MCP client's OAuth scopes
    /// map to this, see [`crate::allowlist`]).
    pub allowed_tools: Option<ToolNamePatterns>,
}

impl fmt::Debug for ToolCallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCallOptions")
            .field("context", &self.context)
            .field("timeout_ms", &self.timeout_ms)
            .field("approval_timeout_ms", &self.approval_timeout_ms)
            .field("cancellation", &self.cancellation.is_some())
            .field("max_output_bytes", &self.max_output_bytes)
            .field("idempotency_key", &self.idempotency_key)
            .field("execution_owner_id", &self.execution_owner_id)
            .field("interaction", &self.interaction.is_some())
            .field("span", &self.span)
            .field("allowed_tools", &self.allowed_tools)
            .finish()
    }
}

impl ToolCallOptions {
    /// Options with a context.
    pub fn with_context(mut self, context: ToolCallContext) -> Self {
        self.context = Some(context);
        self
    }

    /// Sets the timeout in milliseconds (`0` allows only work that needs no waiting; see
    /// [`Self::timeout_ms`]).
    pub fn with_timeout_ms(mut self, timeout_ms: i64) -> Self {
        self.timeout_ms = Some(timeout_ms);
        self
    }

    /// Bounds the wait for a person's approval separately from the call's timeout (see
    /// [`Self::approval_timeout_ms`]); durations beyond the limit are refused as invalid.
    pub fn with_approval_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.approval_timeout_ms = Some(i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX));
        self
    }

    /// Records the call into `span` (made with [`tool_call_span!`](crate::tool_call_span))
    /// instead of a new `execute_tool` span.
    pub fn with_span(mut self, span: tracing::Span) -> Self {
        self.span = Some(span);
        self
    }

    /// Lets this call reach only tools matching `patterns` (see [`Self::allowed_tools`]).
    pub fn with_allowed_tools(mut self, patterns: ToolNamePatterns) -> Self {
        self.allowed_tools = Some(patterns);
        self
    }

    /// Sets the caller's cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Sets the output budget in bytes.
    pub fn with_max_output_bytes(mut self, max_output_bytes: i64) -> Self {
        self.max_output_bytes = Some(max_output_bytes);
        self
    }

    /// Sets the idempotency key, scoped by session and tool (see
    /// [`ToolCallOptions::idempotency_key`]).
    pub fn with_idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// Sets the execution owner id.
    pub fn with_execution_owner_id(mut self, owner_id: impl Into<String>) -> Self {
        self.execution_owner_id = Some(owner_id.into());
        self
    }

    /// Sets the interaction handler for `ask` decisions.
    pub fn with_interaction(mut self, interaction: Arc<dyn ToolInteraction>) -> Self {
        self.interaction = Some(interaction);
        self
    }

    /// Reads the JSON-shaped options `{context?, timeout?, approvalTimeout?, maxOutputBytes?,
    /// idempotencyKey?, executionOwnerId?}` (as an MCP or HTTP host receives them). A field of the wrong type,
    /// or a number that is not an integer (`0.5`, `1e300`), is `TOOL_INVALID_OPTIONS`;
    /// range checks happen when the call validates the options.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_context::ToolCallOptions;
    /// let options = ToolCallOptions::from_json(&json!({"timeout": 500, "idempotencyKey": "save-1"})).unwrap();
    /// assert_eq!(options.timeout_ms, Some(500));
    /// assert!(ToolCallOptions::from_json(&json!({"timeout": 0.5})).is_err());
    /// ```
    pub fn from_json(value: &Value) -> Result<Self, ToolCallError> {
        let Some(object) = value.as_object() else {
            return Err(invalid_options("Tool call options must be a JSON object."));
        };
        let context = match object.get("context") {
            None => None,
            Some(raw) => Some(serde_json::from_value(raw.clone()).map_err(|_| {
                invalid_options("Tool call context is not a valid context object.")
            })?),
        };
        Ok(Self {
            context,
            timeout_ms: json_integer(object.get("timeout"), INVALID_TIMEOUT)?,
            approval_timeout_ms: json_integer(
                object.get("approvalTimeout"),
                INVALID_APPROVAL_TIMEOUT,
            )?,
            max_output_bytes: json_integer(object.get("maxOutputBytes"), INVALID_MAX_OUTPUT_BYTES)?,
            idempotency_key: json_string(object.get("idempotencyKey"), INVALID_IDEMPOTENCY_KEY)?,
            execution_owner_id: json_string(object.get("executionOwnerId"), INVALID_OWNER_ID)?,
            ..Self::default()
        })
    }
}

fn json_integer(value: Option<&Value>, message: &str) -> Result<Option<i64>, ToolCallError> {
    match value {
        None => Ok(None),
        Some(Value::Number(number)) => number
            .as_i64()
            .map(Some)
            .ok_or_else(|| invalid_options(message)),
        Some(_) => Err(invalid_options(message)),
    }
}

fn json_string(value: Option<&Value>, message: &str) -> Result<Option<String>, ToolCallError> {
    match value {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(invalid_options(message)),
    }
}

/// Options after validation: numbers in range, owner id canonical.
#[derive(Debug, Clone)]
pub(crate) struct ValidatedOptions {
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) approval_timeout_ms: Option<u64>,
    pub(crate) max_output_bytes: Option<u64>,
    pub(crate) idempotency_key: Option<String>,
    pub(crate) execution_owner_id: Option<String>,
}

/// Validates in the contract's order: idempotency key, timeout, output budget, owner id.
pub(crate) fn validate_options(
    options: &ToolCallOptions,
) -> Result<ValidatedOptions, ToolCallError> {
    let idempotency_key = options
        .idempotency_key
        .as_deref()
        .map(validate_idempotency_key)
        .transpose()?;
    let timeout_ms = options.timeout_ms.map(validate_timeout).transpose()?;
    let approval_timeout_ms = options
        .approval_timeout_ms
        .map(validate_approval_timeout)
        .transpose()?;
    let max_output_bytes = options
        .max_output_bytes
        .map(validate_max_output_bytes)
        .transpose()?;
    let execution_owner_id = options
        .execution_owner_id
        .as_deref()
        .map(canonical_owner_id)
        .transpose()?;
    Ok(ValidatedOptions {
        timeout_ms,
        approval_timeout_ms,
        max_output_bytes,
        idempotency_key,
        execution_owner_id,
    })
}

fn validate_idempotency_key(key: &str) -> Result<String, ToolCallError> {
    if is_valid_idempotency_key(key) {
        Ok(key.to_owned())
    } else {
        Err(invalid_options(INVALID_IDEMPOTENCY_KEY))
    }
}

fn validate_timeout(timeout_ms: i64) -> Result<u64, ToolCallError> {
    u64::try_from(timeout_ms)
        .ok()
        .filter(|_| timeout_ms <= MAX_TIMEOUT_MS)
        .ok_or_else(|| invalid_options(INVALID_TIMEOUT))
}

fn validate_approval_timeout(timeout_ms: i64) -> Result<u64, ToolCallError> {
    validate_timeout(timeout_ms).map_err(|_| invalid_options(INVALID_APPROVAL_TIMEOUT))
}

fn validate_max_output_bytes(max_output_bytes: i64) -> Result<u64, ToolCallError> {
    u64::try_from(max_output_bytes)
        .ok()
        .filter(|bytes| *bytes > 0 && max_output_bytes <= MAX_SAFE_INTEGER)
        .ok_or_else(|| invalid_options(INVALID_MAX_OUTPUT_BYTES))
}

/// The trimmed owner id, when it is 1..=256 characters without NUL.
pub(crate) fn canonical_owner_id(owner_id: &str) -> Result<String, ToolCallError> {
    let trimmed = owner_id.trim();
    let length = trimmed.chars().count();
    if (1..=MAX_OWNER_ID_CHARS).contains(&length) && !trimmed.contains('\0') {
        Ok(trimmed.to_owned())
    } else {
        Err(invalid_options(INVALID_OWNER_ID))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_protocol::codes;

    fn check(options: ToolCallOptions) -> Result<ValidatedOptions, ToolCallError> {
        validate_options(&options)
    }

    #[test]
    fn timeouts_are_bounded_at_both_edges() {
        assert_eq!(
            check(ToolCallOptions::default().with_timeout_ms(0))
                .unwrap()
                .timeout_ms,
            Some(0)
        );
        assert_eq!(
            check(ToolCallOptions::default().with_timeout_ms(MAX_TIMEOUT_MS))
                .unwrap()
                .timeout_ms,
            Some(2_147_483_647)
        );
        for bad in [-1, MAX_TIMEOUT_MS + 1, MAX_SAFE_INTEGER + 1, i64::MIN] {
            let error = check(ToolCallOptions::default().with_timeout_ms(bad)).unwrap_err();
            assert_eq!(error.code, codes::TOOL_INVALID_OPTIONS);
            assert_eq!(error.retryable, Some(false));
        }
    }

    #[test]
    fn output_budgets_are_positive_safe_integers() {
        assert_eq!(
            check(ToolCallOptions::default().with_max_output_bytes(1))
                .unwrap()
                .max_output_bytes,
            Some(1)
        );
        assert!(check(ToolCallOptions::default().with_max_output_bytes(MAX_SAFE_INTEGER)).is_ok());
        for bad in [0, -1, MAX_SAFE_INTEGER + 1] {
            assert!(check(ToolCallOptions::default().with_max_output_bytes(bad)).is_err());
        }
    }

    #[test]
    fn idempotency_keys_and_owner_ids_are_bounded_text() {
        assert!(check(ToolCallOptions::default().with_idempotency_key("k".repeat(256))).is_ok());
        for bad in [String::new(), "  ".into(), "k".repeat(257)] {
            let error = check(ToolCallOptions::default().with_idempotency_key(bad)).unwrap_err();
            assert_eq!(error.message, INVALID_IDEMPOTENCY_KEY);
        }
        let owner =
            check(ToolCallOptions::default().with_execution_owner_id("  worker-1 ")).unwrap();
        assert_eq!(owner.execution_owner_id.as_deref(), Some("worker-1"));
        assert!(check(ToolCallOptions::default().with_execution_owner_id("é".repeat(256))).is_ok());
        for bad in [" ".to_owned(), "a\0b".into(), "é".repeat(257)] {
            assert_eq!(
                check(ToolCallOptions::default().with_execution_owner_id(bad))
                    .unwrap_err()
                    .message,
                INVALID_OWNER_ID
            );
        }
    }

    #[test]
    fn idempotency_key_is_checked_before_timeout() {
        let options = ToolCallOptions::default()
            .with_idempotency_key("")
            .with_timeout_ms(-1);
        assert_eq!(check(options).unwrap_err().message, INVALID_IDEMPOTENCY_KEY);
    }

    #[test]
    fn json_options_reject_non_integers_and_wrong_types() {
        let parsed = ToolCallOptions::from_json(&json!({
            "timeout": -5, "maxOutputBytes": 10, "executionOwnerId": "o",
            "context": {"source": "local", "mode": "direct"}
        }))
        .unwrap();
        assert_eq!(parsed.timeout_ms, Some(-5));
        assert!(check(parsed).is_err());
        for bad in [
            json!({"timeout": 0.5}),
            json!({"timeout": 9_007_199_254_740_993.0_f64}),
            json!({"timeout": 18_446_744_073_709_551_615_u64}),
            json!({"maxOutputBytes": "10"}),
            json!({"idempotencyKey": 3}),
            json!({"context": {"source": "browser"}}),
            json!([]),
        ] {
            let error = ToolCallOptions::from_json(&bad).unwrap_err();
            assert_eq!(error.code, codes::TOOL_INVALID_OPTIONS, "{bad}");
        }
    }
}
