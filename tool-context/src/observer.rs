//! Lifecycle observers and the provenance their events carry.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::Value;
use tool_protocol::codes;
use tool_protocol::{ProvenanceState, ToolCallEvent, ToolCallResult};

/// Receives `started`, then exactly one `completed` or `failed`, for every call that passed
/// request and option validation. A panicking observer is contained: the call and the other
/// observers are unaffected.
///
/// Events carry the canonical request (arguments included): redact before storing them.
pub trait ToolCallObserver: Send + Sync {
    /// Called synchronously on the calling task; keep it quick (hand off to a channel).
    fn on_event(&self, event: &ToolCallEvent);
}

impl<F> ToolCallObserver for F
where
    F: Fn(&ToolCallEvent) + Send + Sync,
{
    fn on_event(&self, event: &ToolCallEvent) {
        self(event);
    }
}

/// Delivers `event` to every observer, swallowing (and logging) panics.
pub(crate) fn notify(observers: &[Arc<dyn ToolCallObserver>], event: &ToolCallEvent) {
    for observer in observers {
        if catch_unwind(AssertUnwindSafe(|| observer.on_event(event))).is_err() {
            tracing::warn!(trace_id = %event.trace_id, "tool call observer panicked; event dropped for it");
        }
    }
}

/// The provenance state of a finished call.
pub(crate) fn final_state(result: &ToolCallResult) -> ProvenanceState {
    match result.error_code() {
        None => ProvenanceState::Completed,
        Some(
            codes::TOOL_TIMEOUT | codes::TOOL_EXECUTION_ABORTED | codes::TOOL_EXECUTION_UNKNOWN,
        ) => ProvenanceState::Unknown,
        Some(codes::TOOL_CANCELLED) => ProvenanceState::Cancelled,
        Some(_) => ProvenanceState::Failed,
    }
}

/// `error.details.usedOutputBytes` when it is a non-negative integer, else the measured bytes.
pub(crate) fn used_output_bytes(result: &ToolCallResult) -> u64 {
    result
        .error
        .as_ref()
        .and_then(|error| error.details.as_ref())
        .and_then(|details| details.get("usedOutputBytes"))
        .and_then(Value::as_u64)
        .unwrap_or_else(|| u64::try_from(result.output_bytes()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_protocol::ToolCallError;

    fn failure(code: &str) -> ToolCallResult {
        ToolCallResult::failure(ToolCallError::new(code, "m"))
    }

    #[test]
    fn states_follow_the_contract_mapping() {
        assert_eq!(
            final_state(&ToolCallResult::empty_success()),
            ProvenanceState::Completed
        );
        for code in [
            codes::TOOL_TIMEOUT,
            codes::TOOL_EXECUTION_ABORTED,
            codes::TOOL_EXECUTION_UNKNOWN,
        ] {
            assert_eq!(final_state(&failure(code)), ProvenanceState::Unknown);
        }
        assert_eq!(
            final_state(&failure(codes::TOOL_CANCELLED)),
            ProvenanceState::Cancelled
        );
        assert_eq!(
            final_state(&failure(codes::TOOL_POLICY_DENIED)),
            ProvenanceState::Failed
        );
        assert_eq!(
            final_state(&failure("WORKSPACE_EMPTY")),
            ProvenanceState::Failed
        );
    }

    #[test]
    fn used_bytes_prefer_the_limit_details() {
        let limited = ToolCallResult::failure(
            ToolCallError::new("X", "m").with_details(json!({"usedOutputBytes": 99})),
        );
        assert_eq!(used_output_bytes(&limited), 99);
        let negative = ToolCallResult::failure(
            ToolCallError::new("X", "m").with_details(json!({"usedOutputBytes": -1})),
        );
        assert_eq!(used_output_bytes(&negative), negative.output_bytes() as u64);
    }

    #[test]
    fn panicking_observers_are_contained() {
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = seen.clone();
        let observers: Vec<Arc<dyn ToolCallObserver>> = vec![
            Arc::new(|_: &ToolCallEvent| panic!("observer bug")),
            Arc::new(move |_: &ToolCallEvent| {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }),
        ];
        let event: ToolCallEvent = serde_json::from_value(json!({
            "type": "started", "traceId": "t", "name": "n",
            "request": {"method": "tools/call", "params": {"name": "n"}},
            "timestamp": 0,
            "provenance": {"schemaVersion": "context-action-tool-execution-provenance.v1", "phase": "tool-call",
                           "ownerId": "o", "state": "pending", "usedOutputBytes": 0, "elapsedMs": 0}
        }))
        .unwrap();
        notify(&observers, &event);
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
