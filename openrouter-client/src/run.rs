//! The bounded tool loop: at most [`MAX_TOOL_TURNS`] provider turns and
//! [`MAX_TOOL_CALLS`](crate::MAX_TOOL_CALLS) tool calls per run, strict argument parsing before
//! anything executes, canonical names, canonical result serialization and a repeated-failure
//! guard.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures::{FutureExt, StreamExt};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tool_protocol::codes::{TOOL_CANCELLED, TOOL_EXECUTION_FAILED, TOOL_NOT_FOUND};
use tool_protocol::schema::arguments_invalid;
use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallError, ToolCallMode, ToolCallResult, ToolCallSource,
};
use tracing::Instrument;

use crate::telemetry;

use crate::client::{ChatClient, abortable};
use crate::codes::{
    OPENROUTER_NO_ASSISTANT_MESSAGE, OPENROUTER_REPEATED_TOOL_FAILURE, OPENROUTER_TOOL_LOOP_LIMIT,
};
use crate::decode::AssistantReply;
use crate::error::OpenRouterError;
use crate::events::{EventCallback, EventRecorder, RunEvent, ToolCallStatus};
use crate::executor::ToolExecutor;
use crate::guard::{FailureGuard, MAX_IDENTICAL_TOOL_FAILURES};
use crate::llama::llama_template_caps;
use crate::provider::{ProviderProfile, base_url_of};
use crate::ready::{ParsedCall, check_call_budget, parse_calls};
use crate::tool_message::{ToolMessage, error_message, tool_message};
use crate::toolset::ProviderToolset;
use crate::wire::{AssistantToolCall, ChatMessage, chat_request_body};

/// Provider turns per run.
pub const MAX_TOOL_TURNS: u32 = 5;
/// Message of a cancelled tool call sent back to the model.
pub const TOOL_CALL_CANCELLED_MESSAGE: &str = "Tool call cancelled.";
/// Message sent to the model when a tool executor panics (the run goes on).
pub const TOOL_PANICKED_MESSAGE: &str = "Tool execution failed unexpectedly.";
/// Message of a call the loop did not execute because the run stopped first.
pub const TOOL_CALL_SKIPPED_MESSAGE: &str = "Tool call was not executed because the run stopped.";

/// What to ask: the prompt, optional instructions, earlier messages and session id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunRequest {
    /// The person's prompt (sent as the last user message).
    pub prompt: String,
    /// System instructions, sent first.
    pub system: Option<String>,
    /// Earlier messages (for example a previous run's [`RunTrace::messages`]), sent between
    /// the instructions and the prompt.
    pub history: Vec<ChatMessage>,
    /// Session id forwarded in every tool call context; a new UUID when `None`.
    pub session_id: Option<String>,
}

impl RunRequest {
    /// A request with only a prompt.
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            prompt: prompt.into(),
            ..Self::default()
        }
    }

    /// Sets the system instructions.
    #[must_use]
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Sets the earlier messages.
    #[must_use]
    pub fn with_history(mut self, history: Vec<ChatMessage>) -> Self {
        self.history = history;
        self
    }

    /// Sets the session id.
    #[must_use]
    pub fn with_session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }
}

/// How to observe and stop a run.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Cancels the HTTP request, the running tool call and any backoff.
    pub cancel: CancellationToken,
    /// Receives every [`RunEvent`] as it happens.
    pub on_event: Option<EventCallback>,
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("cancel", &self.cancel)
            .field("on_event", &self.on_event.is_some())
            .finish()
    }
}

impl RunOptions {
    /// Options with this cancellation token.
    pub fn with_cancel(cancel: CancellationToken) -> Self {
        Self {
            cancel,
            on_event: None,
        }
    }

    /// Sets the event listener.
    #[must_use]
    pub fn on_event(mut self, callback: impl Fn(&RunEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(std::sync::Arc::new(callback));
        self
    }
}

/// What a run did, whether it completed or failed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTrace {
    /// The run's session id.
    pub session_id: String,
    /// The messages the run added after the prompt: each assistant turn and one tool
    /// message per tool call (calls the run did not execute are answered with a coded
    /// error), so they can be appended to the next request as they are.
    pub messages: Vec<ChatMessage>,
    /// Canonical names of the executed tool calls, in order.
    pub tool_names: Vec<String>,
    /// Every event of the run, in order.
    pub transcript: Vec<RunEvent>,
    /// Provider turns used.
    pub turns: u32,
}

/// A completed run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCompletion {
    /// The final answer (trimmed), or `OpenRouter completed N tool call(s).` when the model
    /// said nothing.
    pub text: String,
    /// What the run did.
    pub trace: RunTrace,
}

/// A failed run: the error and what happened before it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error}")]
pub struct RunFailure {
    /// The coded failure.
    #[source]
    pub error: OpenRouterError,
    /// What the run did before it failed (boxed to keep the `Err` variant small).
    pub trace: Box<RunTrace>,
}

/// State of one run.
struct Run<'a, E: ?Sized> {
    client: &'a ChatClient,
    executor: &'a E,
    cancel: CancellationToken,
    session_id: String,
    prefix: Vec<ChatMessage>,
    messages: Vec<ChatMessage>,
    tool_names: Vec<String>,
    events: EventRecorder,
    guard: FailureGuard,
    turns: u32,
    completed_calls: usize,
}

impl ChatClient {
    /// Runs the bounded tool loop for one prompt.
    ///
    /// Lists the executor's tools once, sends them through `tool-protocol`'s OpenAI export,
    /// and repeats *request -> check -> execute calls -> tool messages* until the model
    /// answers without tool calls, for at most [`MAX_TOOL_TURNS`] turns and
    /// [`MAX_TOOL_CALLS`](crate::MAX_TOOL_CALLS) calls. Every failure is an
    /// [`OpenRouterError`] inside [`RunFailure`], together with the messages and transcript so
    /// far.
    pub async fn run<E: ToolExecutor + ?Sized>(
        &self,
        executor: &E,
        request: RunRequest,
        options: RunOptions,
    ) -> Result<RunCompletion, RunFailure> {
        let mut run = Run::new(self, executor, request, options);
        let span = telemetry::agent_span(self.config(), &run.session_id);
        let outcome = run.drive().instrument(span.clone()).await;
        telemetry::record_run_end(&span, &outcome);
        run.finish(outcome)
    }
}

impl<'a, E: ToolExecutor + ?Sized> Run<'a, E> {
    fn new(
        client: &'a ChatClient,
        executor: &'a E,
        request: RunRequest,
        options: RunOptions,
    ) -> Self {
        let session_id = request
            .session_id
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let mut prefix: Vec<ChatMessage> = request
            .system
            .map(ChatMessage::system)
            .into_iter()
            .collect();
        prefix.extend(request.history);
        prefix.push(ChatMessage::user(request.prompt));
        Self {
            client,
            executor,
            cancel: options.cancel,
            session_id,
            prefix,
            messages: Vec::new(),
            tool_names: Vec::new(),
            events: EventRecorder::new(options.on_event),
            guard: FailureGuard::default(),
            turns: 0,
            completed_calls: 0,
        }
    }

    async fn drive(&mut self) -> Result<String, OpenRouterError> {
        self.events.emit(RunEvent::RunStarted {
            session_id: self.session_id.clone(),
            model: self.client.config().model.clone(),
        });
        self.client.check_ready()?;
        let definitions = abortable(&self.cancel, self.executor.list_tools()).await?;
        let toolset = ProviderToolset::new(&definitions);
        self.events.emit(RunEvent::ToolsListed {
            count: toolset.tools().len(),
        });
        if !definitions.is_empty() {
            abortable(&self.cancel, self.check_template_takes_tools()).await??;
        }
        while self.turns < MAX_TOOL_TURNS {
            self.turns += 1;
            let reply = self.request_turn(&toolset).await?;
            if reply.tool_calls.is_empty() {
                return Ok(self.final_answer(reply));
            }
            check_call_budget(self.completed_calls, reply.tool_calls.len())?;
            let calls = parse_calls(&reply.tool_calls, &toolset)?;
            self.messages.push(assistant_message(&reply));
            self.announce_ready(&calls);
            self.execute_calls(&toolset, calls).await?;
        }
        Err(OpenRouterError::new(
            OPENROUTER_TOOL_LOOP_LIMIT,
            format!("Tool loop reached the {MAX_TOOL_TURNS}-turn limit."),
        ))
    }

    /// A llama.cpp server whose chat template cannot take tools drops them from the prompt
    /// silently; its `/props` says so, and the run stops with `OPENROUTER_TOOLS_UNSUPPORTED`
    /// instead of getting prose back. A server without `/props` (or an older one) goes on: the
    /// chat request decides.
    async fn check_template_takes_tools(&self) -> Result<(), OpenRouterError> {
        let config = self.client.config();
        if config.provider != ProviderProfile::LlamaCpp {
            return Ok(());
        }
        let base = base_url_of(&config.endpoint);
        match llama_template_caps(self.client.http(), &base).await {
            Ok(caps) => caps.require_tools(),
            Err(error) => {
                tracing::debug!(%error, "llama.cpp /props unreadable; the chat request decides");
                Ok(())
            }
        }
    }

    async fn request_turn(
        &mut self,
        toolset: &ProviderToolset,
    ) -> Result<AssistantReply, OpenRouterError> {
        let conversation: Vec<ChatMessage> =
            self.prefix.iter().chain(&self.messages).cloned().collect();
        let body = chat_request_body(self.client.config(), &conversation, toolset.tools());
        let turn = self
            .client
            .complete_turn(
                &body,
                self.turns,
                self.completed_calls,
                toolset,
                &self.cancel,
                &self.events,
            )
            .await?;
        let turn = turn.ok_or_else(|| {
            OpenRouterError::new(
                OPENROUTER_NO_ASSISTANT_MESSAGE,
                "Provider response did not include an assistant message.",
            )
        })?;
        if !turn.streamed {
            self.emit_as_deltas(&turn.reply, toolset);
        }
        let reply = turn.reply;
        if let Some(usage) = reply.usage {
            self.events.emit(RunEvent::Usage {
                turn: self.turns,
                usage,
            });
        }
        self.events.emit(RunEvent::ResponseReceived {
            turn: self.turns,
            tool_calls: reply.tool_calls.len(),
        });
        Ok(reply)
    }

    fn final_answer(&mut self, reply: AssistantReply) -> String {
        let text = reply
            .content
            .as_deref()
            .map(str::trim)
            .unwrap_or_default()
            .to_owned();
        self.messages.push(ChatMessage::Assistant {
            content: reply.content,
            tool_calls: Vec::new(),
        });
        self.events.emit(RunEvent::RunCompleted {
            turns: self.turns,
            tool_calls: self.completed_calls,
        });
        if text.is_empty() {
            format!(
                "OpenRouter completed {} tool call(s).",
                self.completed_calls
            )
        } else {
            text
        }
    }

    /// The events a stream would have sent, for a reply that arrived whole (one delta each),
    /// so listeners have one path.
    fn emit_as_deltas(&self, reply: &AssistantReply, toolset: &ProviderToolset) {
        let turn = self.turns;
        if let Some(text) = reply.content.as_deref().filter(|text| !text.is_empty()) {
            self.events.emit(RunEvent::TextDelta {
                turn,
                text: text.to_owned(),
            });
        }
        for (index, call) in reply.tool_calls.iter().enumerate() {
            self.events.emit(RunEvent::ToolCallStreamStarted {
                turn,
                index,
                tool_call_id: call.id.clone(),
                name: toolset.display_name(&call.name).to_owned(),
            });
            self.events.emit(RunEvent::ToolCallArgumentsDelta {
                turn,
                index,
                tool_call_id: call.id.clone(),
                delta: call.arguments.clone(),
                partial: None,
            });
        }
    }

    /// Every call of the response is ready (parsed and checked) before any of them runs.
    fn announce_ready(&self, calls: &[ParsedCall]) {
        for (index, parsed) in calls.iter().enumerate() {
            self.events.emit(parsed.ready_event(self.turns, index));
        }
    }

    /// Executes the calls of one response: consecutive read-only calls run together (at most
    /// `max_parallel_tool_calls` at once), every other call alone, in the provider's order, so
    /// approvals are asked one by one. Results are recorded in the provider's order. When the
    /// run stops part-way, every remaining call still gets a tool message so the messages
    /// stay a valid continuation.
    async fn execute_calls(
        &mut self,
        toolset: &ProviderToolset,
        calls: Vec<ParsedCall>,
    ) -> Result<(), OpenRouterError> {
        let mut pending = calls.into_iter().peekable();
        while pending.peek().is_some() {
            if self.cancel.is_cancelled() {
                self.skip_calls(pending, &OpenRouterError::cancelled());
                return Err(OpenRouterError::cancelled());
            }
            let group = next_group(&mut pending, toolset);
            if let Err(error) = self.execute_group(toolset, group).await {
                self.skip_calls(pending, &error);
                return Err(error);
            }
        }
        Ok(())
    }

    /// Answers calls the run will not execute with the run's error code.
    fn skip_calls(&mut self, calls: impl Iterator<Item = ParsedCall>, error: &OpenRouterError) {
        for skipped in calls {
            let skipped_error = ToolCallError::new(error.code, TOOL_CALL_SKIPPED_MESSAGE)
                .with_retryable(error.retryable);
            self.messages.push(ChatMessage::tool(
                skipped.call.id,
                error_message(skipped_error).content,
            ));
        }
    }

    /// Runs one group concurrently and records every outcome in order; the first error
    /// (cancellation, repeated failure) ends the run after all are recorded.
    async fn execute_group(
        &mut self,
        toolset: &ProviderToolset,
        group: Vec<ParsedCall>,
    ) -> Result<(), OpenRouterError> {
        self.completed_calls += group.len();
        let cap = self.client.config().max_parallel_tool_calls.max(1);
        let this = &*self;
        let outcomes: Vec<_> = futures::stream::iter(group)
            .map(|parsed| async move {
                let (outcome, duration_ms) = this.invoke(toolset, &parsed).await;
                (parsed, outcome, duration_ms)
            })
            .buffered(cap)
            .collect()
            .await;
        let mut first_error = None;
        for (parsed, outcome, duration_ms) in outcomes {
            let settled = self.settle(toolset, parsed, outcome, duration_ms);
            if let Err(error) = settled {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Runs one call: an unknown tool or arguments that fail its schema are answered without
    /// the executor. `None` when the run was cancelled first.
    async fn invoke(
        &self,
        toolset: &ProviderToolset,
        parsed: &ParsedCall,
    ) -> (Option<ToolCallResult>, u64) {
        let call = &parsed.call;
        self.events.emit(RunEvent::ToolCallStarted {
            turn: self.turns,
            tool_call_id: call.id.clone(),
            name: parsed.name.clone(),
            provider_name: call.name.clone(),
        });
        let started = Instant::now();
        let outcome = if toolset.canonical_name(&call.name).is_none() {
            Some(ToolCallResult::failure(ToolCallError::new(
                TOOL_NOT_FOUND,
                format!("Tool \"{}\" not found in registry", call.name),
            )))
        } else if !parsed.issues.is_empty() {
            Some(ToolCallResult::failure(arguments_invalid(
                &parsed.name,
                &parsed.issues,
            )))
        } else {
            self.call_executor(&call.id, &parsed.name, parsed.arguments.clone())
                .await
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        (outcome, duration_ms)
    }

    /// Records a call's outcome: its tool message, its finish event and the failure guard.
    fn settle(
        &mut self,
        toolset: &ProviderToolset,
        parsed: ParsedCall,
        outcome: Option<ToolCallResult>,
        duration_ms: u64,
    ) -> Result<(), OpenRouterError> {
        let ParsedCall {
            call,
            name,
            arguments,
            ..
        } = parsed;
        let Some(result) = outcome else {
            let cancelled = ToolCallError::new(TOOL_CANCELLED, TOOL_CALL_CANCELLED_MESSAGE)
                .with_retryable(true);
            self.messages.push(ChatMessage::tool(
                call.id.clone(),
                error_message(cancelled).content,
            ));
            self.finished(
                &call.id,
                &name,
                ToolCallStatus::Cancelled,
                None,
                duration_ms,
            );
            return Err(OpenRouterError::cancelled());
        };
        if toolset.canonical_name(&call.name).is_some() {
            self.tool_names.push(name.clone());
        }
        let message = tool_message(&result);
        self.messages
            .push(ChatMessage::tool(call.id.clone(), message.content.clone()));
        self.record_outcome(&call.id, &name, &arguments, message, duration_ms)
    }

    /// Runs the executor unless the run is cancelled first (`None`).
    async fn call_executor(
        &self,
        id: &str,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Option<ToolCallResult> {
        let call = ModelToolCall::new(id, name, arguments);
        let context = ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Agent)
            .with_session(self.session_id.clone());
        let execution = AssertUnwindSafe(self.executor.call_tool(
            call,
            context,
            self.cancel.child_token(),
        ))
        .catch_unwind();
        let outcome = abortable(&self.cancel, execution).await.ok()?;
        Some(outcome.unwrap_or_else(|_| {
            tracing::error!(tool = name, "tool executor panicked");
            ToolCallResult::failure(
                ToolCallError::new(TOOL_EXECUTION_FAILED, TOOL_PANICKED_MESSAGE)
                    .with_retryable(false),
            )
        }))
    }

    fn record_outcome(
        &mut self,
        id: &str,
        name: &str,
        arguments: &Map<String, Value>,
        message: ToolMessage,
        duration_ms: u64,
    ) -> Result<(), OpenRouterError> {
        let Some(error) = message.error else {
            self.finished(id, name, ToolCallStatus::Completed, None, duration_ms);
            return Ok(());
        };
        if error.is_committed() {
            // Applied: a completed call (code kept for the trace), never a repeated failure.
            self.finished(
                id,
                name,
                ToolCallStatus::Completed,
                Some(&error),
                duration_ms,
            );
            return Ok(());
        }
        self.finished(id, name, ToolCallStatus::Failed, Some(&error), duration_ms);
        if self.guard.record(name, arguments, &error.code) >= MAX_IDENTICAL_TOOL_FAILURES {
            return Err(OpenRouterError::new(
                OPENROUTER_REPEATED_TOOL_FAILURE,
                format!(
                    "Tool \"{name}\" failed {MAX_IDENTICAL_TOOL_FAILURES} times with the same arguments and error code {}; the run stopped.",
                    error.code
                ),
            ));
        }
        Ok(())
    }

    fn finished(
        &self,
        id: &str,
        name: &str,
        status: ToolCallStatus,
        error: Option<&ToolCallError>,
        duration_ms: u64,
    ) {
        self.events.emit(RunEvent::ToolCallFinished {
            turn: self.turns,
            tool_call_id: id.to_owned(),
            name: name.to_owned(),
            status,
            code: error.map(|error| error.code.clone()),
            retryable: error
                .filter(|error| !error.is_committed())
                .and_then(|error| error.retryable),
            duration_ms,
        });
    }

    fn finish(self, outcome: Result<String, OpenRouterError>) -> Result<RunCompletion, RunFailure> {
        if let Err(error) = &outcome {
            self.events.emit(RunEvent::RunFailed {
                code: error.code,
                message: error.message.clone(),
                retryable: error.retryable,
            });
        }
        let trace = RunTrace {
            session_id: self.session_id,
            messages: self.messages,
            tool_names: self.tool_names,
            transcript: self.events.into_transcript(),
            turns: self.turns,
        };
        match outcome {
            Ok(text) => Ok(RunCompletion { text, trace }),
            Err(error) => Err(RunFailure {
                error,
                trace: Box::new(trace),
            }),
        }
    }
}

/// The next calls to run together: consecutive read-only calls, or one other call.
fn next_group(
    pending: &mut std::iter::Peekable<impl Iterator<Item = ParsedCall>>,
    toolset: &ProviderToolset,
) -> Vec<ParsedCall> {
    let read_only = |parsed: &ParsedCall| toolset.is_read_only(&parsed.name);
    let mut group: Vec<ParsedCall> = pending.next().into_iter().collect();
    if group.first().is_some_and(read_only) {
        while let Some(parsed) = pending.next_if(read_only) {
            group.push(parsed);
        }
    }
    group
}

/// The assistant message as the provider sent it (provider-facing names), for the next turn.
fn assistant_message(reply: &AssistantReply) -> ChatMessage {
    ChatMessage::Assistant {
        content: reply.content.clone(),
        tool_calls: reply
            .tool_calls
            .iter()
            .map(|call| AssistantToolCall::function(&call.id, &call.name, &call.arguments))
            .collect(),
    }
}
