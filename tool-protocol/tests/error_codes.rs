//! One test per canonical `TOOL_*` code: its string, its row in `TOOL_CALL_ERROR_CODES`, its
//! retryable rule (CONTRACT 2.1) and the situation its row documents.

use tool_protocol::ToolCallError;
use tool_protocol::codes::{self, RetryableRule, TOOL_CALL_ERROR_CODES, error_code_info};

fn assert_row(code: &str, expected: &str, retryable: RetryableRule, fires_when_mentions: &str) {
    assert_eq!(code, expected);
    let rows: Vec<_> = TOOL_CALL_ERROR_CODES
        .iter()
        .filter(|row| row.code == code)
        .collect();
    assert_eq!(rows.len(), 1, "{code} must be listed exactly once");
    let row = error_code_info(code).unwrap();
    assert_eq!(row.retryable, retryable, "{code}");
    assert!(
        row.fires_when.contains(fires_when_mentions),
        "{code}: {:?} should mention {fires_when_mentions:?}",
        row.fires_when
    );
    let error = ToolCallError::canonical(code, "m");
    assert_eq!(error.retryable, row.default_retryable());
}

macro_rules! code_rows {
    ($($test:ident: $constant:ident, $retryable:expr, $mentions:literal;)*) => {
        $(
            #[test]
            fn $test() {
                assert_row(codes::$constant, stringify!($constant), $retryable, $mentions);
            }
        )*

        #[test]
        fn the_table_lists_exactly_these_codes() {
            let expected = [$(codes::$constant),*];
            let listed: Vec<&str> = TOOL_CALL_ERROR_CODES.iter().map(|row| row.code).collect();
            assert_eq!(listed, expected);
        }
    };
}

use RetryableRule::{Fixed, FromHandler, Omitted};

code_rows! {
    not_found: TOOL_NOT_FOUND, Omitted, "not a tool";
    not_allowed: TOOL_NOT_ALLOWED, Omitted, "allowlist";
    validation_failed: TOOL_VALIDATION_FAILED, Omitted, "Invalid tools/call request";
    output_validation_failed: TOOL_OUTPUT_VALIDATION_FAILED, Omitted, "output schema";
    output_limit_exceeded: TOOL_OUTPUT_LIMIT_EXCEEDED, Fixed(false), "maxOutputBytes";
    result_validation_failed: TOOL_RESULT_VALIDATION_FAILED, Omitted, "result contract";
    result_serialization_failed: TOOL_RESULT_SERIALIZATION_FAILED, Omitted, "serialize";
    policy_failed: TOOL_POLICY_FAILED, Fixed(true), "policy";
    policy_denied: TOOL_POLICY_DENIED, Fixed(false), "deny";
    approval_required: TOOL_APPROVAL_REQUIRED, Fixed(true), "ask";
    approval_timeout: TOOL_APPROVAL_TIMEOUT, Fixed(true), "approval timeout";
    cancelled: TOOL_CANCELLED, Fixed(true), "cancellation";
    timeout: TOOL_TIMEOUT, Fixed(true), "timeout";
    invalid_options: TOOL_INVALID_OPTIONS, Fixed(false), "idempotency key";
    idempotency_conflict: TOOL_IDEMPOTENCY_CONFLICT, Fixed(false), "different argument fingerprint";
    idempotency_pending: TOOL_IDEMPOTENCY_PENDING, Fixed(true), "lease";
    idempotency_unknown: TOOL_IDEMPOTENCY_UNKNOWN, Fixed(false), "unknown";
    idempotency_store_failed: TOOL_IDEMPOTENCY_STORE_FAILED, Fixed(true), "uncertain";
    execution_aborted: TOOL_EXECUTION_ABORTED, FromHandler(true), "aborted";
    execution_unknown: TOOL_EXECUTION_UNKNOWN, FromHandler(false), "partial external effect";
    execution_failed: TOOL_EXECUTION_FAILED, FromHandler(false), "handler errors";
    registry_not_ready: TOOL_REGISTRY_NOT_READY, Fixed(true), "shut down";
}

#[test]
fn domain_codes_pass_through_without_a_row() {
    for code in [
        "WORKSPACE_REVISION_CONFLICT",
        "PREVIEW_TIMEOUT",
        "OPENROUTER_RATE_LIMITED",
    ] {
        assert!(error_code_info(code).is_none());
        let error = ToolCallError::canonical(code, "m");
        assert_eq!((error.code.as_str(), error.retryable), (code, None));
    }
}
