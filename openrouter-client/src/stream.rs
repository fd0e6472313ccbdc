//! A streamed chat completion assembled from its chunks, with every delta style normalised
//! into one event sequence: OpenAI/OpenRouter `delta.tool_calls` by index (id and name first,
//! then argument fragments), llama.cpp's per-token fragments, Ollama's whole call in one chunk,
//! usage in the last chunk, an `error` after HTTP 200, and `[DONE]`.
//!
//! Nothing here runs a tool: the assembled reply goes through the same checks as a
//! non-streamed one. What the stream alone shows to be wrong (a changed id, interleaved
//! indexes, arguments that can never be a valid object) stops it at once.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::chunk::{ChunkError, StreamChunk, StreamDelta, ToolCallDelta, non_blank, parse_chunk};
use crate::codes::{OPENROUTER_INVALID_RESPONSE, OPENROUTER_INVALID_TOOL_CALL};
use crate::decode::{
    AssistantReply, Decoded, IN_BODY_ERROR_FALLBACK_STATUS, ProviderToolCall, body_error, excerpt,
};
use crate::error::OpenRouterError;
use crate::events::{EventRecorder, RunEvent, TokenUsage};
use crate::partial_json::{PartialJson, PartialJsonError};
use crate::ready::check_call_budget;
use crate::sse::SseEvent;
use crate::toolset::ProviderToolset;

/// Arguments shorter than this get a `partial` whenever a top-level field completes.
const PARTIAL_ON_FIELD_MAX_BYTES: usize = 64 * 1024;
/// Growth (bytes) after which a `partial` is sent anyway; it doubles with the text, so the
/// parses of one call cost linear time in total.
const PARTIAL_MIN_GROWTH_BYTES: usize = 256;

/// What one event of the stream means for the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// More to come.
    Continue,
    /// `[DONE]`.
    Done,
    /// The provider reported a failure inside the stream.
    Failure { status: u16, message: String },
}

/// One tool call as its deltas arrive.
#[derive(Debug, Default)]
struct StreamedCall {
    id: Option<String>,
    name: Option<String>,
    announced: bool,
    arguments: PartialJson,
    partial_sent_at: usize,
    /// Completed top-level fields when the last delta was sent.
    fields_seen: usize,
}

/// The turn's text, tool calls and usage, built chunk by chunk.
#[derive(Debug)]
pub(crate) struct StreamAssembler {
    turn: u32,
    /// Calls the run completed before this turn (the call budget counts them).
    calls_done: usize,
    content: Option<String>,
    calls: Vec<StreamedCall>,
    usage: Option<TokenUsage>,
    finished: bool,
    /// The response's model, id and finish reason, for the caller's telemetry.
    model: Option<String>,
    id: Option<String>,
    finish_reason: Option<String>,
}

impl StreamAssembler {
    pub(crate) fn new(turn: u32, calls_done: usize) -> Self {
        Self {
            turn,
            calls_done,
            content: None,
            calls: Vec::new(),
            usage: None,
            finished: false,
            model: None,
            id: None,
            finish_reason: None,
        }
    }

    /// Whether any tool call has been announced: after that, a broken stream is not retried.
    pub(crate) fn announced_tool_call(&self) -> bool {
        self.calls.iter().any(|call| call.announced)
    }

    /// Reads one server-sent event; `toolset` names the calls.
    pub(crate) fn event(
        &mut self,
        event: &SseEvent,
        toolset: &ProviderToolset,
        events: &EventRecorder,
    ) -> Result<Chunk, OpenRouterError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finished = true;
            return Ok(Chunk::Done);
        }
        let chunk = match parse_chunk(data) {
            Ok(chunk) => chunk,
            Err(_) if event.is_error_field => {
                return Ok(Chunk::Failure {
                    status: IN_BODY_ERROR_FALLBACK_STATUS,
                    message: excerpt(data),
                });
            }
            Err(ChunkError::NotAnObject) => {
                return Err(invalid(
                    "Provider streamed a data line that is not a JSON object.",
                ));
            }
            Err(ChunkError::Shape(why)) => {
                return Err(invalid(format!(
                    "Provider streamed a chunk that is not a chat-completion chunk: {why}."
                )));
            }
        };
        if let Some(failure) = stream_error(&chunk, data, event.is_error_field) {
            return Ok(failure);
        }
        if let Some(usage) = &chunk.usage {
            self.usage = Some(TokenUsage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
                total_tokens: usage.total_tokens,
            });
        }
        self.note_response(&chunk);
        let Some(choice) = chunk.choices.as_deref().and_then(<[_]>::first) else {
            return Ok(Chunk::Continue);
        };
        if let Some(reason) = &choice.finish_reason {
            self.finished = true;
            self.finish_reason = reason.to_owned_text();
        }
        if let Some(delta) = &choice.delta {
            self.delta(delta, toolset, events)?;
        }
        Ok(Chunk::Continue)
    }

    fn delta(
        &mut self,
        delta: &StreamDelta<'_>,
        toolset: &ProviderToolset,
        events: &EventRecorder,
    ) -> Result<(), OpenRouterError> {
        if delta
            .role
            .as_deref()
            .is_some_and(|role| role != "assistant")
        {
            return Err(invalid(
                "Provider streamed a delta without the assistant role.",
            ));
        }
        if let Some(text) = &delta.content {
            self.text(text, events);
        }
        delta
            .tool_calls
            .iter()
            .flatten()
            .try_for_each(|call| self.tool_call_delta(call, toolset, events))
    }

    fn text(&mut self, text: &str, events: &EventRecorder) {
        let content = self.content.get_or_insert_with(String::new);
        if text.is_empty() {
            return;
        }
        content.push_str(text);
        events.emit(RunEvent::TextDelta {
            turn: self.turn,
            text: text.to_owned(),
        });
    }

    fn tool_call_delta(
        &mut self,
        delta: &ToolCallDelta<'_>,
        toolset: &ProviderToolset,
        events: &EventRecorder,
    ) -> Result<(), OpenRouterError> {
        let id = non_blank(delta.id.as_ref());
        let index = self.index_of(delta.index, id.as_deref())?;
        if index == self.calls.len() {
            // A response over the call budget runs none of its calls: stop reading it now.
            check_call_budget(self.calls_done, index + 1)?;
            self.calls.push(StreamedCall::default());
        }
        if delta.kind.as_deref().is_some_and(|kind| kind != "function") {
            return Err(invalid(format!(
                "Provider returned a non-function tool call at index {index}."
            )));
        }
        if let Some(id) = id {
            self.set_id(index, id)?;
        }
        let function = delta.function.as_ref();
        if let Some(name) = non_blank(function.and_then(|function| function.name.as_ref())) {
            self.set_name(index, name)?;
        }
        let fragment = function
            .and_then(|function| function.arguments.as_deref())
            .unwrap_or_default();
        self.arguments(index, fragment, toolset, events)
    }

    /// The index a delta is for: its `index`, or (a provider that sends none) the next call
    /// when the delta carries a new id, else the current one. Indexes only move forward.
    fn index_of(&self, index: Option<u64>, id: Option<&str>) -> Result<usize, OpenRouterError> {
        let count = self.calls.len();
        let index = match index {
            Some(index) => usize::try_from(index)
                .map_err(|_| invalid("Provider streamed a tool call with an invalid index."))?,
            None => {
                let current = self.calls.last().and_then(|call| call.id.as_deref());
                if count == 0 || (id.is_some() && id != current) {
                    count
                } else {
                    count - 1
                }
            }
        };
        if index > count {
            return Err(invalid(format!(
                "Provider streamed tool call index {index} before index {count}."
            )));
        }
        if index + 1 < count {
            return Err(invalid(format!(
                "Provider streamed tool call index {index} again after index {} began (interleaved tool calls).",
                count - 1
            )));
        }
        Ok(index)
    }

    fn set_id(&mut self, index: usize, id: String) -> Result<(), OpenRouterError> {
        match &self.calls[index].id {
            Some(known) if *known == id => Ok(()),
            Some(known) => Err(invalid(format!(
                "Provider changed the id of tool call {index} from \"{known}\" to \"{id}\" mid-stream."
            ))),
            None if self.calls.iter().any(|call| call.id.as_ref() == Some(&id)) => Err(invalid(
                format!("Provider returned duplicate tool call id \"{id}\"."),
            )),
            None => {
                self.calls[index].id = Some(id);
                Ok(())
            }
        }
    }

    fn set_name(&mut self, index: usize, name: String) -> Result<(), OpenRouterError> {
        match &self.calls[index].name {
            Some(known) if *known == name => Ok(()),
            Some(known) => Err(invalid(format!(
                "Provider changed the name of tool call {index} from \"{known}\" to \"{name}\" mid-stream."
            ))),
            None => {
                self.calls[index].name = Some(name);
                Ok(())
            }
        }
    }

    /// Feeds argument text, announcing the call once its id and name are known and checking
    /// the arguments against the tool's top-level shape as they arrive.
    fn arguments(
        &mut self,
        index: usize,
        fragment: &str,
        toolset: &ProviderToolset,
        events: &EventRecorder,
    ) -> Result<(), OpenRouterError> {
        let turn = self.turn;
        let call = &mut self.calls[index];
        if let Err(error) = call.arguments.push(fragment) {
            let name = call.name.clone().unwrap_or_default();
            return Err(arguments_error(&name, error));
        }
        let (Some(id), Some(name)) = (call.id.clone(), call.name.clone()) else {
            return Ok(());
        };
        let fields = call.arguments.fields_completed();
        let field_completed = fields > call.fields_seen;
        call.fields_seen = fields;
        let canonical = toolset.display_name(&name).to_owned();
        let delta = if call.announced {
            fragment.to_owned()
        } else {
            call.announced = true;
            events.emit(RunEvent::ToolCallStreamStarted {
                turn,
                index,
                tool_call_id: id.clone(),
                name: canonical,
            });
            call.arguments.text().to_owned()
        };
        if delta.is_empty() {
            return Ok(());
        }
        let length = call.arguments.text().len();
        let grown =
            length - call.partial_sent_at >= PARTIAL_MIN_GROWTH_BYTES.max(call.partial_sent_at);
        let partial = if grown || (field_completed && length < PARTIAL_ON_FIELD_MAX_BYTES) {
            call.partial_sent_at = length;
            call.arguments.partial()
        } else {
            None
        };
        events.emit(RunEvent::ToolCallArgumentsDelta {
            turn,
            index,
            tool_call_id: id,
            delta,
            partial,
        });
        Ok(())
    }

    /// The assembled reply. A stream that ended without `[DONE]` or a finish reason was cut
    /// short; a call without an id or name is refused as in a non-streamed response.
    pub(crate) fn finish(self) -> Result<AssistantReply, OpenRouterError> {
        if !self.finished {
            return Err(invalid(
                "Provider stream ended before the response was complete (no [DONE] and no finish reason).",
            ));
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        let mut seen = HashSet::new();
        for (index, call) in self.calls.into_iter().enumerate() {
            let id = call.id.ok_or_else(|| {
                invalid(format!(
                    "Provider returned a tool call without a valid id at index {index}."
                ))
            })?;
            let name = call.name.ok_or_else(|| {
                invalid(format!(
                    "Provider returned a tool call without a function name at index {index}."
                ))
            })?;
            if !seen.insert(id.clone()) {
                return Err(invalid(format!(
                    "Provider returned duplicate tool call id \"{id}\"."
                )));
            }
            tool_calls.push(ProviderToolCall {
                id,
                name,
                arguments: call.arguments.text().to_owned(),
            });
        }
        Ok(AssistantReply {
            content: self.content,
            tool_calls,
            usage: self.usage,
            model: self.model,
            id: self.id,
            finish_reason: self.finish_reason,
        })
    }

    /// Keeps the first model and id the stream names.
    fn note_response(&mut self, chunk: &StreamChunk<'_>) {
        if self.model.is_none() {
            self.model = chunk.model.to_owned_text();
        }
        if self.id.is_none() {
            self.id = chunk.id.to_owned_text();
        }
    }
}

/// A failure inside the stream: an `error:` field, a top-level `error`, or a choice that
/// finished with one (OpenRouter, when the upstream fails after the response began). Rare,
/// so it is read again as JSON and classified like a non-streamed body.
fn stream_error(chunk: &StreamChunk<'_>, data: &str, is_error_field: bool) -> Option<Chunk> {
    let choice_error = chunk
        .choices
        .as_deref()
        .and_then(<[_]>::first)
        .is_some_and(|choice| choice.error.as_ref().is_some_and(|error| !error.is_null()));
    let has_error = chunk.error.as_ref().is_some_and(|error| !error.is_null());
    if !has_error && !choice_error && !is_error_field {
        return None;
    }
    let payload: Map<String, Value> = serde_json::from_str(data).unwrap_or_default();
    let failure = match body_error(&payload, 200) {
        Some(Decoded::Failure { status, message }) => (status, message),
        _ => (
            IN_BODY_ERROR_FALLBACK_STATUS,
            payload
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("Provider reported an error in the stream.")
                .to_owned(),
        ),
    };
    Some(Chunk::Failure {
        status: failure.0,
        message: failure.1,
    })
}

fn arguments_error(name: &str, error: PartialJsonError) -> OpenRouterError {
    let what = match error {
        PartialJsonError::NotObject => "non-object JSON",
        PartialJsonError::Syntax(_) => "invalid JSON",
    };
    OpenRouterError::new(
        OPENROUTER_INVALID_TOOL_CALL,
        format!("Provider returned {what} arguments for tool \"{name}\"."),
    )
}

/// A line of the stream is not UTF-8.
pub(crate) fn not_utf8() -> OpenRouterError {
    invalid("Provider streamed a line that is not UTF-8.")
}

fn invalid(message: impl Into<String>) -> OpenRouterError {
    OpenRouterError::new(OPENROUTER_INVALID_RESPONSE, message)
}
