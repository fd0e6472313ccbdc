//! The run transcript: events emitted live to an optional callback and kept for the caller.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

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

/// Tokens a provider turn used, as the provider reported them (`usage` of the response or of
/// a stream's last chunk).
/// More counts may follow (cached or reasoning tokens): build one with [`TokenUsage::new`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TokenUsage {
    /// `prompt_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// `completion_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// `total_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
}

impl TokenUsage {
    /// The input, output and total counts a provider reported (each `None` when it did not).
    pub fn new(
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        total_tokens: Option<u64>,
    ) -> Self {
        Self {
            input_tokens,
            output_tokens,
            total_tokens,
        }
    }
}

/// One step of a run, in order. Serializes as `{"type": "requestSent", ...}`.
///
/// A turn's response arrives as [`TextDelta`](Self::TextDelta)s and, per tool call,
/// [`ToolCallStreamStarted`](Self::ToolCallStreamStarted), then
/// [`ToolCallArgumentsDelta`](Self::ToolCallArgumentsDelta)s, then
/// [`ToolCallReady`](Self::ToolCallReady); a non-streamed response emits the same events
/// (one delta each), so a UI has one path. A [`RetryScheduled`](Self::RetryScheduled) voids
/// the deltas of its turn so far: the retried request streams the turn again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
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
    /// A piece of the assistant's text.
    TextDelta {
        /// Provider turn, from 1.
        turn: u32,
        /// The new text.
        text: String,
    },
    /// The provider began a tool call: its id and name are known, its arguments follow.
    ToolCallStreamStarted {
        /// Provider turn, from 1.
        turn: u32,
        /// Position of the call in the response, from 0.
        index: usize,
        /// Provider correlation id.
        tool_call_id: String,
        /// Canonical tool name (the provider's name when it maps to no tool).
        name: String,
    },
    /// More argument text of a tool call.
    ToolCallArgumentsDelta {
        /// Provider turn, from 1.
        turn: u32,
        /// Position of the call in the response, from 0.
        index: usize,
        /// Provider correlation id.
        tool_call_id: String,
        /// The new argument text.
        delta: String,
        /// The arguments so far, with open strings, arrays and objects closed (fields appear
        /// as they arrive); sent when a top-level field completes and as the text grows.
        #[serde(skip_serializing_if = "Option::is_none")]
        partial: Option<Map<String, Value>>,
    },
    /// A tool call's arguments are complete, parsed and checked against the tool's input
    /// schema; nothing of the response runs before every call of it is ready.
    ToolCallReady {
        /// Provider turn, from 1.
        turn: u32,
        /// Position of the call in the response, from 0.
        index: usize,
        /// Provider correlation id.
        tool_call_id: String,
        /// Canonical tool name (the provider's name when it maps to no tool).
        name: String,
        /// The arguments that will run.
        arguments: Map<String, Value>,
        /// SHA-256 (hex) of the arguments' canonical JSON text (keys sorted), so an approval
        /// can be bound to exactly what was shown.
        digest: String,
        /// Schema violations; a call with any is answered with `TOOL_INVALID_ARGUMENTS` and
        /// never executed.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        issues: Vec<String>,
    },
    /// Tokens used by a turn.
    Usage {
        /// Provider turn, from 1.
        turn: u32,
        /// The counts.
        #[serde(flatten)]
        usage: TokenUsage,
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

impl RunEvent {
    /// The event with its turn moved `offset` turns on: a host that continues one
    /// conversation over several runs (a follow-up that asks the model to fix what broke)
    /// numbers the turns of the later runs after the earlier ones', so a UI keyed by turn
    /// gives each its own place.
    #[must_use]
    pub fn with_turn_offset(mut self, offset: u32) -> Self {
        match &mut self {
            Self::RequestSent { turn, .. }
            | Self::RetryScheduled { turn, .. }
            | Self::TextDelta { turn, .. }
            | Self::ToolCallStreamStarted { turn, .. }
            | Self::ToolCallArgumentsDelta { turn, .. }
            | Self::ToolCallReady { turn, .. }
            | Self::Usage { turn, .. }
            | Self::ResponseReceived { turn, .. }
            | Self::ToolCallStarted { turn, .. }
            | Self::ToolCallFinished { turn, .. } => *turn = turn.saturating_add(offset),
            Self::RunStarted { .. }
            | Self::ToolsListed { .. }
            | Self::RunCompleted { .. }
            | Self::RunFailed { .. } => {}
        }
        self
    }
}

/// A live listener for run events (for a UI status line or trace).
pub type EventCallback = Arc<dyn Fn(&RunEvent) + Send + Sync>;

/// Collects the transcript and forwards each event to the callback as it happens. Shared by
/// the concurrent calls of one response, so it records through a lock.
#[derive(Default)]
pub(crate) struct EventRecorder {
    callback: Option<EventCallback>,
    transcript: std::sync::Mutex<Vec<RunEvent>>,
}

impl fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventRecorder")
            .field("events", &self.lock().len())
            .finish()
    }
}

impl EventRecorder {
    pub(crate) fn new(callback: Option<EventCallback>) -> Self {
        Self {
            callback,
            transcript: std::sync::Mutex::default(),
        }
    }

    /// Records an event; the lock is held while the callback runs, so listeners see events
    /// in transcript order.
    pub(crate) fn emit(&self, event: RunEvent) {
        tracing::debug!(?event, "openrouter run event");
        let mut transcript = self.lock();
        if let Some(callback) = &self.callback {
            callback(&event);
        }
        transcript.push(event);
    }

    /// The events so far, leaving none.
    pub(crate) fn take(&self) -> Vec<RunEvent> {
        std::mem::take(&mut *self.lock())
    }

    pub(crate) fn into_transcript(self) -> Vec<RunEvent> {
        self.transcript
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RunEvent>> {
        self.transcript
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
    fn a_turn_offset_moves_turns_and_leaves_run_events_alone() {
        let delta = RunEvent::TextDelta {
            turn: 2,
            text: "x".into(),
        };
        assert_eq!(
            delta.with_turn_offset(3),
            RunEvent::TextDelta {
                turn: 5,
                text: "x".into()
            }
        );
        let listed = RunEvent::ToolsListed { count: 1 };
        assert_eq!(listed.clone().with_turn_offset(3), listed);
    }

    #[test]
    fn the_callback_sees_every_event_as_it_is_recorded() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let recorder = EventRecorder::new(Some(Arc::new(move |event: &RunEvent| {
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
