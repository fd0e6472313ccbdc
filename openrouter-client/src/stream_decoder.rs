//! [`ChatStreamDecoder`]: the loop's stream decoding for code that does its own HTTP.

use tool_protocol::ToolDefinition;

use crate::decode::AssistantReply;
use crate::error::OpenRouterError;
use crate::events::{EventRecorder, RunEvent};
use crate::ready::parse_calls;
use crate::sse::{SseDecoder, SseEvent};
use crate::stream::{Chunk, StreamAssembler};
use crate::toolset::ProviderToolset;

/// Decodes one streamed chat completion (`text/event-stream` bytes, in chunks of any size)
/// into the run's events, exactly as [`ChatClient::run`](crate::ChatClient::run) does: text
/// and argument deltas while the bytes arrive, then each call's
/// [`RunEvent::ToolCallReady`] when the stream ends. Events carry turn 1.
///
/// ```
/// use openrouter_tool_loop::{ChatStreamDecoder, RunEvent};
/// use serde_json::json;
/// use tool_protocol::ToolDefinition;
///
/// let tools = [ToolDefinition::new("math.add", "Adds.", json!({"type": "object"}))];
/// let mut decoder = ChatStreamDecoder::new(&tools);
/// let start = json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
///     "function": {"name": "math_add", "arguments": "{\"a\":"}}]}}]});
/// let more = json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": " 2}"}}]},
///     "finish_reason": "tool_calls"}]});
/// let bytes = format!("data: {start}\n\ndata: {more}\n\ndata: [DONE]\n\n");
/// let (first, second) = bytes.as_bytes().split_at(40);
/// let mut events = decoder.push(first).unwrap();
/// events.extend(decoder.push(second).unwrap());
/// assert!(matches!(&events[0], RunEvent::ToolCallStreamStarted { name, .. } if name == "math.add"));
/// let (reply, ready) = decoder.finish().unwrap();
/// assert_eq!(reply.tool_calls[0].arguments, "{\"a\": 2}");
/// assert!(matches!(&ready[0], RunEvent::ToolCallReady { arguments, .. } if arguments["a"] == 2));
/// ```
#[derive(Debug)]
pub struct ChatStreamDecoder {
    toolset: ProviderToolset,
    sse: SseDecoder,
    assembler: StreamAssembler,
    events: EventRecorder,
    pending: Vec<SseEvent>,
    done: bool,
}

impl ChatStreamDecoder {
    /// A decoder for a response to a request that offered `tools` (provider names are mapped
    /// back to these canonical names, and arguments checked against their schemas).
    pub fn new(tools: &[ToolDefinition]) -> Self {
        Self {
            toolset: ProviderToolset::new(tools),
            sse: SseDecoder::default(),
            assembler: StreamAssembler::new(1, 0),
            events: EventRecorder::default(),
            pending: Vec::new(),
            done: false,
        }
    }

    /// Reads more bytes and returns the events they complete. Bytes after `[DONE]` are
    /// ignored. A provider's in-stream error is an `Err` with its coded failure.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<RunEvent>, OpenRouterError> {
        if !self.done {
            self.sse
                .push(bytes, &mut self.pending)
                .map_err(|_| crate::stream::not_utf8())?;
            self.take()?;
        }
        Ok(self.events.take())
    }

    /// Ends the stream: the assembled reply and one [`RunEvent::ToolCallReady`] per call. A
    /// stream cut short, or a call whose arguments are not a JSON object, is an `Err`.
    pub fn finish(mut self) -> Result<(AssistantReply, Vec<RunEvent>), OpenRouterError> {
        if !self.done {
            self.sse
                .finish(&mut self.pending)
                .map_err(|_| crate::stream::not_utf8())?;
            self.take()?;
        }
        let reply = self.assembler.finish()?;
        let ready = parse_calls(&reply.tool_calls, &self.toolset)?
            .iter()
            .enumerate()
            .map(|(index, parsed)| parsed.ready_event(1, index))
            .collect();
        Ok((reply, ready))
    }

    fn take(&mut self) -> Result<(), OpenRouterError> {
        for event in self.pending.drain(..) {
            match self.assembler.event(&event, &self.toolset, &self.events)? {
                Chunk::Continue => {}
                Chunk::Done => {
                    self.done = true;
                    break;
                }
                Chunk::Failure { status, message } => {
                    return Err(OpenRouterError::from_provider_failure(status, message));
                }
            }
        }
        self.pending.clear();
        Ok(())
    }
}
