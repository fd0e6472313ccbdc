//! What a run streamed: the assistant text and the tool calls assembling, kept exactly (within a
//! bound) for `GET /api/agent/runs/{id}`, and forwarded to the pages as coalesced `agentStream`
//! events so a long stream never floods the socket.
//!
//! `streamedText` accumulates across turns (turns joined by a blank line); a `RetryScheduled`
//! of a turn cuts the text and calls of that turn (the retried request streams it again).

use std::time::{Duration, Instant};

use openrouter_tool_loop::{MAX_RESPONSE_BODY_BYTES, RunEvent, ToolCallStatus};
use serde::Serialize;

/// Most bytes of streamed text plus argument text a run keeps (and forwards): one provider
/// response's worth.
pub const MAX_STREAMED_BYTES: usize = MAX_RESPONSE_BODY_BYTES;
/// Most tool calls a run's stream lists.
pub(super) const MAX_STREAMED_CALLS: usize = 64;
/// Deltas are forwarded at most this often per run...
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(16);
/// ...unless this many bytes are waiting.
pub const FLUSH_BYTES: usize = 8 * 1024;

/// The streamed part of a run's view.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStream {
    /// The assistant text so far, every turn's.
    pub streamed_text: String,
    /// The bound ([`MAX_STREAMED_BYTES`]) cut the text or arguments short.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub streamed_truncated: bool,
    /// The tool calls streamed so far, in order.
    pub tool_calls: Vec<StreamedCall>,
    /// Turn of the last text delta, and where its text starts (a retry cuts back to it).
    #[serde(skip)]
    text_turn: Option<(u32, usize)>,
    #[serde(skip)]
    bytes: usize,
}

/// A tool call as it assembles, then runs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamedCall {
    /// Provider turn, from 1.
    pub turn: u32,
    /// Position in its response.
    pub index: usize,
    /// Provider correlation id.
    pub tool_call_id: String,
    /// Canonical tool name.
    pub name: String,
    /// The argument text so far.
    pub arguments_text: String,
    /// `assembling`, `ready`, `running`, `completed`, `failed` or `cancelled`.
    pub status: &'static str,
    /// Fingerprint of the complete arguments, once ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Why the ready call will not run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<String>,
}

impl RunStream {
    /// Applies `event` to the view; returns the part of it to forward (a delta cut to what was
    /// kept), or `None` for events the stream does not show.
    pub fn apply(&mut self, event: &RunEvent) -> Option<RunEvent> {
        match event {
            RunEvent::TextDelta { turn, text } => self.text(*turn, text),
            RunEvent::ToolCallStreamStarted {
                turn,
                index,
                tool_call_id,
                name,
            } => {
                if self.tool_calls.len() >= MAX_STREAMED_CALLS {
                    self.streamed_truncated = true;
                    return None;
                }
                self.tool_calls.push(StreamedCall {
                    turn: *turn,
                    index: *index,
                    tool_call_id: tool_call_id.clone(),
                    name: name.clone(),
                    arguments_text: String::new(),
                    status: "assembling",
                    digest: None,
                    issues: Vec::new(),
                });
                Some(event.clone())
            }
            RunEvent::ToolCallArgumentsDelta {
                turn,
                index,
                tool_call_id,
                delta,
                partial,
            } => {
                let kept = self.kept(delta);
                let call = self.call(tool_call_id)?;
                call.arguments_text.push_str(kept);
                (!kept.is_empty()).then(|| RunEvent::ToolCallArgumentsDelta {
                    turn: *turn,
                    index: *index,
                    tool_call_id: tool_call_id.clone(),
                    delta: kept.to_owned(),
                    partial: partial.clone(),
                })
            }
            RunEvent::ToolCallReady {
                tool_call_id,
                digest,
                issues,
                ..
            } => {
                let call = self.call(tool_call_id)?;
                call.status = "ready";
                call.digest = Some(digest.clone());
                call.issues.clone_from(issues);
                Some(event.clone())
            }
            RunEvent::ToolCallStarted { tool_call_id, .. } => {
                self.call(tool_call_id)?.status = "running";
                Some(event.clone())
            }
            RunEvent::ToolCallFinished {
                tool_call_id,
                status,
                ..
            } => {
                self.call(tool_call_id)?.status = match status {
                    ToolCallStatus::Completed => "completed",
                    ToolCallStatus::Failed => "failed",
                    ToolCallStatus::Cancelled => "cancelled",
                };
                Some(event.clone())
            }
            RunEvent::RetryScheduled { turn, .. } => self.void_turn(*turn).then(|| event.clone()),
            RunEvent::Usage { .. } => Some(event.clone()),
            _ => None,
        }
    }

    fn text(&mut self, turn: u32, text: &str) -> Option<RunEvent> {
        let separator = match self.text_turn {
            Some((last, _)) if last == turn => "",
            _ if self.streamed_text.is_empty() => "",
            _ => "\n\n",
        };
        if self.text_turn.is_none_or(|(last, _)| last != turn) {
            self.text_turn = Some((turn, self.streamed_text.len()));
        }
        let piece = format!("{separator}{text}");
        let kept = self.kept(&piece).to_owned();
        self.streamed_text.push_str(&kept);
        (!kept.is_empty()).then_some(RunEvent::TextDelta { turn, text: kept })
    }

    /// The part of `piece` that fits the bound, counted against it.
    fn kept<'a>(&mut self, piece: &'a str) -> &'a str {
        let room = MAX_STREAMED_BYTES.saturating_sub(self.bytes);
        let mut end = piece.len().min(room);
        while !piece.is_char_boundary(end) {
            end -= 1;
        }
        if end < piece.len() {
            self.streamed_truncated = true;
        }
        self.bytes += end;
        &piece[..end]
    }

    fn call(&mut self, tool_call_id: &str) -> Option<&mut StreamedCall> {
        self.tool_calls
            .iter_mut()
            .rev()
            .find(|call| call.tool_call_id == tool_call_id)
    }

    /// Drops what `turn` streamed; whether there was anything.
    fn void_turn(&mut self, turn: u32) -> bool {
        let mut voided = false;
        if let Some((_, start)) = self.text_turn.filter(|(last, _)| *last == turn) {
            self.bytes -= self.streamed_text.len() - start;
            self.streamed_text.truncate(start);
            self.text_turn = None;
            voided = true;
        }
        let before = self.tool_calls.len();
        let dropped: usize = self
            .tool_calls
            .iter()
            .filter(|call| call.turn == turn)
            .map(|call| call.arguments_text.len())
            .sum();
        self.tool_calls.retain(|call| call.turn != turn);
        self.bytes -= dropped;
        voided || self.tool_calls.len() != before
    }
}

/// Coalesces a run's deltas: consecutive text (or one call's argument) deltas merge into one
/// event, sent at most every [`FLUSH_INTERVAL`] (or at [`FLUSH_BYTES`]); any other event sends
/// what waits first, so order is kept.
#[derive(Debug)]
pub(super) struct Outbox {
    pending: Option<RunEvent>,
    last_flush: Instant,
    /// A timer will flush the pending delta.
    pub scheduled: bool,
}

impl Default for Outbox {
    fn default() -> Self {
        Self {
            pending: None,
            last_flush: Instant::now() - FLUSH_INTERVAL,
            scheduled: false,
        }
    }
}

/// What to do after [`Outbox::push`]: send these events now, and maybe flush after a delay.
#[derive(Debug, Default)]
pub(super) struct Push {
    /// Events to publish now, in order.
    pub send: Vec<RunEvent>,
    /// Flush the pending delta after this long.
    pub flush_in: Option<Duration>,
}

impl Outbox {
    /// Queues `event` (already cut to what the view kept).
    pub(super) fn push(&mut self, event: RunEvent) -> Push {
        let mut push = Push::default();
        let event = match self.pending.take() {
            Some(mut waiting) => {
                if extend(&mut waiting, &event) {
                    waiting
                } else {
                    push.send.push(waiting);
                    event
                }
            }
            None => event,
        };
        if !is_delta(&event) {
            push.send.push(event);
            self.last_flush = Instant::now();
            return push;
        }
        let since = self.last_flush.elapsed();
        if since >= FLUSH_INTERVAL && !self.scheduled || delta_len(&event) >= FLUSH_BYTES {
            push.send.push(event);
            self.last_flush = Instant::now();
        } else {
            self.pending = Some(event);
            if !self.scheduled {
                self.scheduled = true;
                push.flush_in = Some(FLUSH_INTERVAL.saturating_sub(since));
            }
        }
        push
    }

    /// The waiting delta, if any (the timer fired, or the run changed state).
    pub(super) fn flush(&mut self) -> Option<RunEvent> {
        self.scheduled = false;
        let pending = self.pending.take();
        if pending.is_some() {
            self.last_flush = Instant::now();
        }
        pending
    }
}

fn is_delta(event: &RunEvent) -> bool {
    matches!(
        event,
        RunEvent::TextDelta { .. } | RunEvent::ToolCallArgumentsDelta { .. }
    )
}

fn delta_len(event: &RunEvent) -> usize {
    match event {
        RunEvent::TextDelta { text, .. } => text.len(),
        RunEvent::ToolCallArgumentsDelta { delta, .. } => delta.len(),
        _ => 0,
    }
}

/// Appends `next` to the `waiting` delta when it continues it; whether it did.
fn extend(waiting: &mut RunEvent, next: &RunEvent) -> bool {
    match (waiting, next) {
        (
            RunEvent::TextDelta { turn, text },
            RunEvent::TextDelta {
                turn: next_turn,
                text: more,
            },
        ) if turn == next_turn => {
            text.push_str(more);
            true
        }
        (
            RunEvent::ToolCallArgumentsDelta {
                tool_call_id,
                delta,
                partial,
                ..
            },
            RunEvent::ToolCallArgumentsDelta {
                tool_call_id: next_id,
                delta: more,
                partial: newer,
                ..
            },
        ) if tool_call_id == next_id => {
            delta.push_str(more);
            if newer.is_some() {
                partial.clone_from(newer);
            }
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(turn: u32, text: &str) -> RunEvent {
        RunEvent::TextDelta {
            turn,
            text: text.into(),
        }
    }

    #[test]
    fn turns_join_and_a_retry_voids_its_turn() {
        let mut stream = RunStream::default();
        stream.apply(&text(1, "Hel"));
        stream.apply(&text(1, "lo"));
        stream.apply(&text(2, "Again"));
        assert_eq!(stream.streamed_text, "Hello\n\nAgain");
        let retry = RunEvent::RetryScheduled {
            turn: 2,
            reason: openrouter_tool_loop::RetryReason::Provider,
            attempt: 1,
            max_attempts: 2,
            delay_ms: 10,
            code: "OPENROUTER_RATE_LIMITED",
        };
        assert!(stream.apply(&retry).is_some());
        assert_eq!(stream.streamed_text, "Hello");
        stream.apply(&text(2, "Once more"));
        assert_eq!(stream.streamed_text, "Hello\n\nOnce more");
    }

    #[test]
    fn the_text_is_bounded_on_a_char_boundary() {
        let mut stream = RunStream::default();
        let big = "é".repeat(MAX_STREAMED_BYTES / 2 + 1);
        let forwarded = stream.apply(&text(1, &big)).unwrap();
        assert!(stream.streamed_truncated);
        assert_eq!(stream.streamed_text.len(), MAX_STREAMED_BYTES);
        assert_eq!(forwarded, text(1, &stream.streamed_text.clone()));
        assert!(stream.apply(&text(1, "more")).is_none());
    }

    #[test]
    fn deltas_coalesce_and_other_events_keep_their_order() {
        let mut outbox = Outbox::default();
        let first = outbox.push(text(1, "a"));
        assert_eq!(first.send, [text(1, "a")], "the first delta goes at once");
        let second = outbox.push(text(1, "b"));
        assert!(second.send.is_empty());
        assert!(second.flush_in.is_some());
        assert!(outbox.push(text(1, "c")).flush_in.is_none(), "one timer");
        let usage = RunEvent::Usage {
            turn: 1,
            usage: Default::default(),
        };
        let third = outbox.push(usage.clone());
        assert_eq!(third.send, [text(1, "bc"), usage]);
        assert_eq!(outbox.flush(), None);
    }
}
