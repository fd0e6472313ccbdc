//! Reading one streamed response: bytes to server-sent events to the assembled turn, within
//! an idle timeout between chunks, an overall cap and the response size limit.

use tokio::time::Instant;

use crate::attempt::{
    Attempt, Transient, TransportFailure, TurnReply, network_failure, provider_failure,
};
use crate::codes::{OPENROUTER_INVALID_RESPONSE, OPENROUTER_TIMEOUT};
use crate::config::OpenRouterConfig;
use crate::error::OpenRouterError;
use crate::events::{EventRecorder, RetryReason};
use crate::sse::{SseDecoder, SseEvent};
use crate::stream::{Chunk, StreamAssembler, not_utf8};
use crate::toolset::ProviderToolset;

/// The state of one streamed attempt.
pub(crate) struct StreamReader<'a> {
    config: &'a OpenRouterConfig,
    toolset: &'a ProviderToolset,
    assembler: StreamAssembler,
    decoder: SseDecoder,
    read: usize,
}

/// What the events read so far say.
enum Progress {
    More,
    /// `[DONE]`: the turn is assembled.
    Done,
    Finished(Result<Attempt, OpenRouterError>),
}

impl<'a> StreamReader<'a> {
    pub(crate) fn new(
        config: &'a OpenRouterConfig,
        assembler: StreamAssembler,
        toolset: &'a ProviderToolset,
    ) -> Self {
        Self {
            config,
            toolset,
            assembler,
            decoder: SseDecoder::default(),
            read: 0,
        }
    }

    /// Reads the stream to its end, emitting deltas as they arrive.
    pub(crate) async fn read(
        mut self,
        mut response: reqwest::Response,
        events: &EventRecorder,
    ) -> Result<Attempt, OpenRouterError> {
        let config = self.config;
        let deadline = Instant::now() + config.stream_timeout;
        let mut pending = Vec::new();
        loop {
            let idle = config
                .request_timeout
                .min(deadline.saturating_duration_since(Instant::now()));
            let chunk = match tokio::time::timeout(idle, response.chunk()).await {
                Err(_) => return self.timed_out(Instant::now() >= deadline),
                Ok(Err(error)) => {
                    let failure = network_failure(error).into_transient(config.request_timeout);
                    return self.broken(failure);
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            self.read += chunk.len();
            if self.read > config.max_response_bytes {
                return Err(invalid(format!(
                    "Endpoint response exceeded the {}-byte limit.",
                    config.max_response_bytes
                )));
            }
            self.decoder
                .push(&chunk, &mut pending)
                .map_err(|_| not_utf8())?;
            match self.take(&mut pending, events)? {
                Progress::More => {}
                Progress::Done => return self.done(),
                Progress::Finished(outcome) => return outcome,
            }
        }
        self.decoder.finish(&mut pending).map_err(|_| not_utf8())?;
        match self.take(&mut pending, events)? {
            Progress::More => {}
            Progress::Done => return self.done(),
            Progress::Finished(outcome) => return outcome,
        }
        let retry = self.retry_allowed();
        match self.assembler.finish() {
            Ok(reply) => Ok(Ok(Some(streamed(reply)))),
            Err(error) => broken_with(retry, RetryReason::Network, error),
        }
    }

    fn done(self) -> Result<Attempt, OpenRouterError> {
        self.assembler
            .finish()
            .map(|reply| Ok(Some(streamed(reply))))
    }

    fn take(
        &mut self,
        pending: &mut Vec<SseEvent>,
        events: &EventRecorder,
    ) -> Result<Progress, OpenRouterError> {
        for event in pending.drain(..) {
            match self.assembler.event(&event, self.toolset, events)? {
                Chunk::Continue => {}
                Chunk::Done => return Ok(Progress::Done),
                Chunk::Failure { status, message } => {
                    let retry = self.retry_allowed();
                    return Ok(Progress::Finished(provider_failure(
                        status, message, None, retry,
                    )));
                }
            }
        }
        Ok(Progress::More)
    }

    /// A stream is replayed only while none of its tool calls has been announced.
    fn retry_allowed(&self) -> bool {
        !self.assembler.announced_tool_call()
    }

    fn timed_out(&self, overall: bool) -> Result<Attempt, OpenRouterError> {
        let config = self.config;
        if overall {
            let message = format!(
                "Streamed response exceeded the {}ms overall limit.",
                config.stream_timeout.as_millis()
            );
            return Err(OpenRouterError::new(OPENROUTER_TIMEOUT, message));
        }
        let mut failure = TransportFailure::Timeout.into_transient(config.request_timeout);
        failure.error.message = format!(
            "Provider sent nothing for {}ms mid-stream.",
            config.request_timeout.as_millis()
        );
        self.broken(failure)
    }

    fn broken(&self, failure: Transient) -> Result<Attempt, OpenRouterError> {
        broken_with(self.retry_allowed(), failure.reason, failure.error)
    }
}

/// A stream that broke: retried when allowed, else a final error saying a tool call had
/// already been announced.
fn broken_with(
    retry_allowed: bool,
    reason: RetryReason,
    error: OpenRouterError,
) -> Result<Attempt, OpenRouterError> {
    if retry_allowed {
        return Ok(Err(Transient {
            reason,
            error,
            retry_after: None,
        }));
    }
    let message = format!(
        "{} The stream had announced a tool call, so it is not retried.",
        error.message
    );
    Err(OpenRouterError { message, ..error })
}

fn streamed(reply: crate::decode::AssistantReply) -> TurnReply {
    TurnReply {
        reply,
        streamed: true,
    }
}

fn invalid(message: impl Into<String>) -> OpenRouterError {
    OpenRouterError::new(OPENROUTER_INVALID_RESPONSE, message)
}
