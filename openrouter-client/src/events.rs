//! The run transcript: events emitted live to an optional callback and kept for the caller.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

/// Why a request is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RetryReason {
    /// The per-request timeout elapsed.
    Timeout,
    /// The request could not be sent or its body not read.
    Network,
    /// The provider answered 429 or 5xx (or an equivalent in-body error).
    Provider,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallStatus {
    /// The result is a success.
    Completed,
    /// The result is an error (its code is in the event).
    Failed,
    /// The run was cancelled while the call ran.
    Cancelled,
}

/// One step of a run, in order. Serializes as `{"type": "requestSent", ...}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RunEvent {
    /// The run began.
    RunStarted {
        /// The run's session id, forwarded in every tool call context.
        session_id: String,
        /// The model asked.
        model: String,
    },
    /// The executor listed its tools (`tools/list`).
    ToolsListed {
        /// Number of definitions sent to the provider.
        count: usize,
    },
    /// An HTTP request was sent.
    RequestSent {
        /// Provider turn, from 1.
        turn: u32,
        /// Attempt within the turn, from 1.
        attempt: u32,
    },
    /// A transient failure will be retried after a delay.
    RetryScheduled {
        /// Provider turn, from 1.
        turn: u32,
        /// Retry number within the turn, from 1.
        attempt: u32,
        /// Retries allowed per turn.
        max_attempts: u32,
        /// The wait before the retry.
        delay_ms: u64,
        /// Why.
        reason: RetryReason,
        /// The code the failure would have had.
        code: &'static str,
    },
    /// A checked assistant message arrived.
    ResponseReceived {
        /// Provider turn, from 1.
        turn: u32,
        /// Tool calls it asks for.
        tool_calls: usize,
    },
    /// A tool call began.
    ToolCallStarted {
        /// Provider turn, from 1.
        turn: u32,
        /// Provider correlation id.
        tool_call_id: String,
        /// Canonical tool name (the provider's name when it maps to no tool).
        name: String,
        /// The name the provider used.
        provider_name: String,
    },
    /// A tool call ended.
    ToolCallFinished {
        /// Provider turn, from 1.
        turn: u32,
        /// Provider correlation id.
        tool_call_id: String,
        /// Canonical tool name (the provider's name when it maps to no tool).
        name: String,
        /// How it ended.
        status: ToolCallStatus,
        /// Error code of a failed call.
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// Retryable flag of a failed call, when the error gave one.
        #[serde(skip_serializing_if = "Option::is_none")]
        retryable: Option<bool>,
        /// Time spent in the executor.
        duration_ms: u64,
    },
    /// The run ended with a final answer.
    RunCompleted {
        /// Provider turns used.
        turns: u32,
        /// Tool calls executed.
        tool_calls: usize,
    },
    /// The run ended with an error.
    RunFailed {
        /// The `OPENROUTER_*` code.
        code: &'static str,
        /// The message.
        message: String,
        /// Whether a retry of the run may succeed.
        retryable: bool,
    },
}

/// A live listener for run events (for a UI status line or trace).
pub type EventCallback = Arc<dyn Fn(&RunEvent) + Send + Sync>;

/// Collects the transcript and forwards each event to the callback as it happens.
#[derive(Default)]
pub(crate) struct EventRecorder {
    callback: Option<EventCallback>,
    transcript: Vec<RunEvent>,
}

impl fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventRecorder")
            .field("events", &self.transcript.len())
            .finish()
    }
}

impl EventRecorder {
    pub(crate) fn new(callback: Option<EventCallback>) -> Self {
        Self {
            callback,
            transcript: Vec::new(),
        }
    }

    pub(crate) fn emit(&mut self, event: RunEvent) {
        tracing::debug!(?event, "openrouter run event");
        if let Some(callback) = &self.callback {
            callback(&event);
        }
        self.transcript.push(event);
    }

    pub(crate) fn into_transcript(self) -> Vec<RunEvent> {
        self.transcript
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    #[test]
    fn events_serialize_with_camel_case_tags_and_fields() {
        let event = RunEvent::RetryScheduled {
            turn: 1,
            attempt: 2,
            max_attempts: 2,
            delay_ms: 700,
            reason: RetryReason::Provider,
            code: crate::codes::OPENROUTER_RATE_LIMITED,
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "retryScheduled", "turn": 1, "attempt": 2, "maxAttempts": 2, "delayMs": 700, "reason": "provider", "code": "OPENROUTER_RATE_LIMITED"})
        );
    }

    #[test]
    fn the_callback_sees_every_event_as_it_is_recorded() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let mut recorder = EventRecorder::new(Some(Arc::new(move |event: &RunEvent| {
            sink.lock().unwrap().push(event.clone())
        })));
        recorder.emit(RunEvent::ToolsListed { count: 2 });
        recorder.emit(RunEvent::RequestSent {
            turn: 1,
            attempt: 1,
        });
        assert_eq!(seen.lock().unwrap().len(), 2);
        assert_eq!(recorder.into_transcript(), *seen.lock().unwrap());
    }
}
