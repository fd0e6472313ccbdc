//! One mounted tool's handler: forwards the validated (and approved) arguments to the server
//! and turns every answer into a coded result.
//!
//! - `isError: true` is `MCP_REMOTE_TOOL_ERROR`; a JSON-RPC error or a non-result answer is
//!   `MCP_REMOTE_PROTOCOL_ERROR`; an answer over the message limit is
//!   `MCP_REMOTE_RESULT_TOO_LARGE`; a server that is down is `MCP_REMOTE_UNAVAILABLE`
//!   (retryable: nothing was sent).
//! - A connection lost after the request was sent is `TOOL_EXECUTION_UNKNOWN`: the server may
//!   have acted, so a durable record asks for reconciliation instead of a silent retry. On a
//!   server that honours idempotency keys, a call of a tool that is not read-only carries a key
//!   and is resent with it instead ([`super::retry`]), so it runs once.
//! - A server's question during the call (a 2026-07-28 `input_required` round, a 2025-11-25
//!   elicitation) goes to the person when the mounts have someone to ask
//!   ([`super::McpMounts::answer_questions_with`]); the call is resent with the answers, under
//!   the same idempotency key. Without anyone to ask it is declined, and the result says so.
//! - Cancellation, timeout and shutdown drop the request, which sends
//!   `notifications/cancelled` to the server.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::Peer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    InputRequest, InputRequiredResult, InputResponses,
};
use rmcp::service::{RoleClient, ServiceError};
use serde_json::{Value, json};
use tool_context::questions::QuestionAnswer;
use tool_context::{HandlerOutput, ToolHandler, ToolInvocation};
use tool_protocol::{ToolCallError, ToolCallResult, ToolContent, codes};

use super::codes::{
    MCP_REMOTE_INPUT_DECLINED, MCP_REMOTE_PROTOCOL_ERROR, MCP_REMOTE_RESULT_TOO_LARGE,
    MCP_REMOTE_TOOL_ERROR, MCP_REMOTE_UNAVAILABLE, call_error,
};
use super::connect::elicit_result;
use super::line_cap::TOO_LARGE_MARKER;
use super::link::{CallAsker, InFlightCall, LinkKind, ServerLink};
use super::retry;

/// The longest remote error text kept in a message.
const MAX_ERROR_TEXT_CHARS: usize = 1000;

/// Calls one remote tool on whatever connection its server has now.
pub(crate) struct RemoteToolHandler {
    link: Arc<ServerLink>,
    remote_name: Arc<str>,
    /// The server says the tool only reads: nothing to protect from a second run.
    read_only: bool,
}

impl RemoteToolHandler {
    pub(crate) fn new(link: Arc<ServerLink>, remote_name: &str, read_only: bool) -> Self {
        Self {
            link,
            remote_name: Arc::from(remote_name),
            read_only,
        }
    }

    fn error(&self, code: &str, retryable: bool, message: impl Into<String>) -> ToolCallError {
        call_error(
            code,
            retryable,
            message,
            &self.link.server,
            &self.remote_name,
            None,
        )
    }
}

#[async_trait]
impl ToolHandler for RemoteToolHandler {
    async fn call(
        &self,
        arguments: Value,
        invocation: ToolInvocation,
    ) -> Result<HandlerOutput, ToolCallError> {
        let server = &self.link.server;
        let Some(mut peer) = self.link.peer() else {
            return Err(self.error(
                MCP_REMOTE_UNAVAILABLE,
                true,
                format!("MCP server \"{server}\" is not connected; nothing was sent. Try again when it is back."),
            ));
        };
        let mut params = CallToolRequestParams::new(self.remote_name.to_string());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        #[cfg(feature = "otel")]
        carry_trace_context(&mut params);
        // One key for the whole logical call: its resends and its input rounds.
        let keyed = !self.read_only && retry::advertises(&peer);
        if keyed {
            params.meta = Some(retry::with_key(params.meta.take(), &retry::new_key()));
        }
        let running = self.link.in_flight.enter(CallAsker {
            server: Arc::clone(server),
            tool_name: invocation.tool_name.clone(),
            tool_call_id: invocation.tool_call_id.clone(),
            session_id: invocation.context.session_id.clone(),
            cancellation: invocation.cancellation.token().clone(),
        });
        let mut round = 0;
        let answered = loop {
            let answer = self.send(&mut peer, &params, &invocation, keyed).await?;
            match answer {
                Ok(CallToolResponse::InputRequired(asked)) if round < MAX_INPUT_ROUNDS => {
                    round += 1;
                    let (responses, state) = self.answer_round(asked, &running, &invocation).await?;
                    params.input_responses = Some(responses);
                    params.request_state = state;
                }
                Ok(CallToolResponse::Complete(result)) => break self.completed(result),
                Ok(CallToolResponse::InputRequired(_)) => break Err(self.error(
                    MCP_REMOTE_PROTOCOL_ERROR,
                    false,
                    format!("MCP server \"{server}\" kept asking for input: {MAX_INPUT_ROUNDS} rounds were answered and it asked again, so the call was given up."),
                )),
                Ok(_) => break Err(self.error(
                    MCP_REMOTE_PROTOCOL_ERROR,
                    false,
                    format!("MCP server \"{server}\" answered tools/call with something other than a tool result."),
                )),
                Err(error) => break Err(self.failed(&error)),
            }
        };
        with_declined_note(answered, &running.declined(), server)
    }
}

/// Input rounds one call may take (rmcp's own bound for its high-level helpers).
const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

impl RemoteToolHandler {
    /// Sends one round of the call; on a server that honours idempotency keys, resends it with
    /// the same key after a lost connection (bounded), so it runs once.
    async fn send(
        &self,
        peer: &mut Peer<RoleClient>,
        params: &CallToolRequestParams,
        invocation: &ToolInvocation,
        keyed: bool,
    ) -> Result<Result<CallToolResponse, ServiceError>, ToolCallError> {
        let mut resends = 0;
        loop {
            // Dropping the request (cancelled, timed out, shut down) sends notifications/cancelled.
            let answer = tokio::select! {
                answer = peer.call_tool_once(params.clone()) => answer,
                () = invocation.cancellation.cancelled() => return Err(self.cancelled()),
            };
            let lost = matches!(&answer, Err(error) if self.lost_after_send(error));
            if !(keyed && lost && resends < retry::MAX_RESENDS) {
                return Ok(answer);
            }
            resends += 1;
            match retry::reconnected(&self.link, resends, invocation.cancellation.token()).await {
                Some(next) => *peer = next,
                None => return Ok(answer),
            }
        }
    }

    fn cancelled(&self) -> ToolCallError {
        ToolCallError::new(
            codes::TOOL_CANCELLED,
            format!(
                "The call to MCP server \"{}\" was cancelled; the server was told.",
                self.link.server
            ),
        )
    }

    /// Answers a 2026-07-28 `input_required` round: each form elicitation is put to the person
    /// (a URL elicitation is declined: nothing here opens pages for a server). Without a person
    /// to ask, or when the server asks for what this client does not offer (sampling, roots),
    /// the call ends with `MCP_REMOTE_INPUT_DECLINED`.
    async fn answer_round(
        &self,
        asked: InputRequiredResult,
        running: &InFlightCall,
        invocation: &ToolInvocation,
    ) -> Result<(InputResponses, Option<String>), ToolCallError> {
        let server = &self.link.server;
        let mut responses = InputResponses::new();
        for (key, request) in asked.input_requests.unwrap_or_default() {
            let InputRequest::Elicitation(elicitation) = request else {
                return Err(self.error(
                    MCP_REMOTE_INPUT_DECLINED,
                    false,
                    format!("MCP server \"{server}\" asked for sampling or roots during the call, which this client does not offer, so it was declined."),
                ));
            };
            let answer = match elicitation.params {
                ElicitRequestParams::FormElicitationParams {
                    message,
                    requested_schema,
                    ..
                } => {
                    let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
                    running.ask(&message, schema).await.ok_or_else(|| self.error(
                        MCP_REMOTE_INPUT_DECLINED,
                        false,
                        format!("MCP server \"{server}\" asked for more input during the call (\"{}\"); no person answers a server's questions here, so it was declined.", message.chars().take(300).collect::<String>()),
                    ))?
                }
                _ => QuestionAnswer::Decline,
            };
            if answer == QuestionAnswer::Cancel && invocation.cancellation.is_cancelled() {
                return Err(self.cancelled());
            }
            let result = serde_json::to_value(elicit_result(answer)).unwrap_or_default();
            responses.insert(key, result);
        }
        Ok((responses, asked.request_state))
    }
}

/// The server asked for input during the call and got a decline: the result says so, so a
/// person or a model reading it knows the server's answer was made without that input.
fn with_declined_note(
    answered: Result<HandlerOutput, ToolCallError>,
    declined: &[String],
    server: &str,
) -> Result<HandlerOutput, ToolCallError> {
    if declined.is_empty() {
        return answered;
    }
    let asked = declined
        .iter()
        .map(|message| format!("\"{message}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let note = format!(
        "MCP server \"{server}\" asked for input during this call ({asked}); it was declined: no person answers a remote server's questions inside a call here."
    );
    match answered {
        Ok(HandlerOutput::Result(mut result)) => {
            result.content.push(ToolContent::text(note));
            Ok(HandlerOutput::Result(result))
        }
        Ok(other) => Ok(other),
        Err(mut error) => {
            error.message = format!("{} {note}", error.message);
            Err(error)
        }
    }
}

impl RemoteToolHandler {
    fn completed(&self, result: CallToolResult) -> Result<HandlerOutput, ToolCallError> {
        let content: Vec<ToolContent> = result.content.iter().map(content_block).collect();
        if result.is_error == Some(true) {
            let text = tool_protocol::stringify_tool_content(&content);
            let text: String = text.chars().take(MAX_ERROR_TEXT_CHARS).collect();
            let message = if text.trim().is_empty() {
                format!(
                    "MCP server \"{}\" reported that {} failed.",
                    self.link.server, self.remote_name
                )
            } else {
                format!("MCP server \"{}\": {text}", self.link.server)
            };
            return Err(self.error(MCP_REMOTE_TOOL_ERROR, false, message));
        }
        Ok(HandlerOutput::Result(ToolCallResult {
            tool_call_id: None,
            content,
            structured_content: result.structured_content,
            error: None,
            replay: None,
        }))
    }

    fn failed(&self, error: &ServiceError) -> ToolCallError {
        let server = &self.link.server;
        match error {
            ServiceError::McpError(data)
                if data.data.as_ref().and_then(Value::as_str) == Some(TOO_LARGE_MARKER) =>
            {
                self.error(
                    MCP_REMOTE_RESULT_TOO_LARGE,
                    false,
                    format!("MCP server \"{server}\": {}", data.message),
                )
            }
            ServiceError::McpError(data) => call_error(
                MCP_REMOTE_PROTOCOL_ERROR,
                false,
                format!(
                    "MCP server \"{server}\" refused the call: {}",
                    data.message.chars().take(MAX_ERROR_TEXT_CHARS).collect::<String>()
                ),
                server,
                &self.remote_name,
                Some(("jsonrpcCode", json!(data.code.0))),
            ),
            ServiceError::TransportSend(_) if self.never_sent(error) => self.error(
                MCP_REMOTE_UNAVAILABLE,
                true,
                format!("MCP server \"{server}\" could not be reached; nothing was sent. Try again when it is back."),
            ),
            ServiceError::TransportSend(_) | ServiceError::TransportClosed => call_error(
                codes::TOOL_EXECUTION_UNKNOWN,
                false,
                format!("The connection to MCP server \"{server}\" was lost after the call was sent: whether it ran is unknown. Check the server before calling again."),
                server,
                &self.remote_name,
                None,
            ),
            other => self.error(
                MCP_REMOTE_PROTOCOL_ERROR,
                false,
                format!("MCP server \"{server}\": {other}"),
            ),
        }
    }

    /// Whether the connection was lost after the request may have reached the server.
    fn lost_after_send(&self, error: &ServiceError) -> bool {
        match error {
            ServiceError::TransportSend(_) => !self.never_sent(error),
            ServiceError::TransportClosed => true,
            _ => false,
        }
    }

    /// Whether a failed send certainly never reached the server: a child process cannot read
    /// a write that failed; an HTTP request that failed to connect was never received.
    fn never_sent(&self, error: &ServiceError) -> bool {
        match self.link.kind {
            LinkKind::Stdio => true,
            LinkKind::Http => {
                let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
                while let Some(current) = source {
                    if current
                        .downcast_ref::<reqwest::Error>()
                        .is_some_and(reqwest::Error::is_connect)
                    {
                        return true;
                    }
                    source = current.source();
                }
                false
            }
        }
    }
}

/// Text stays text; every other block (image, audio, resource, link) is kept whole as JSON.
fn content_block(block: &ContentBlock) -> ToolContent {
    match block {
        ContentBlock::Text(text) => ToolContent::text(text.text.clone()),
        _ => ToolContent::json(serde_json::to_value(block).unwrap_or(Value::Null)),
    }
}

/// Puts the call's trace context into `params._meta` (`traceparent`, `tracestate`), so the
/// mounted server's spans continue the trace of the `execute_tool` span this call runs in.
#[cfg(feature = "otel")]
fn carry_trace_context(params: &mut CallToolRequestParams) {
    let Some((traceparent, tracestate)) = crate::telemetry::propagation::current_traceparent()
    else {
        return;
    };
    let meta = params.meta.get_or_insert_with(Default::default);
    meta.set_traceparent(traceparent);
    if let Some(tracestate) = tracestate {
        meta.set_tracestate(tracestate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::link::{InFlight, QuestionSlot};
    use tokio_util::sync::CancellationToken;

    fn asker() -> CallAsker {
        CallAsker {
            server: Arc::from("git"),
            tool_name: "git.commit".into(),
            tool_call_id: None,
            session_id: None,
            cancellation: CancellationToken::new(),
        }
    }

    #[test]
    fn a_declined_question_is_noted_on_the_calls_in_flight_and_only_those() {
        let in_flight = Arc::new(InFlight::new(QuestionSlot::default()));
        let running = in_flight.enter(asker());
        in_flight.note_declined("Which branch?");
        let later = in_flight.enter(asker());
        assert_eq!(running.declined(), ["Which branch?"]);
        assert!(later.declined().is_empty());
        let answered = Ok(HandlerOutput::Result(ToolCallResult::success(json!(
            "done"
        ))));
        let Ok(HandlerOutput::Result(result)) =
            with_declined_note(answered, &running.declined(), "git")
        else {
            panic!("a success stays a success");
        };
        let note = tool_protocol::stringify_tool_content(&result.content);
        assert!(
            note.contains("\"Which branch?\"") && note.contains("declined"),
            "{note}"
        );
        drop(running);
        in_flight.note_declined("Again?");
        assert_eq!(later.declined(), ["Again?"]);
    }
}
