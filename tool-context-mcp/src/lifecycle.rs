//! The observable lifecycle of each MCP `tools/call`.
//!
//! A call is `started`, may wait on the host (`waiting`: a preview acknowledgement, say) or on a
//! person (`approval`), and ends `completed`, `denied`, `failed` or `cancelled`. Each change is
//! reported once, in order:
//!
//! - to the client as a progress notification whose message is `<state>: <detail>` (for example
//!   `approval: waiting on a person for workspace.writeFile`), when it sent a `progressToken`;
//! - to the host's [`CallObserver`], which may keep the [`McpCall`] handle to report its own
//!   transitions ([`McpCall::transition`]) or cancel the call ([`McpCall::cancel`]).

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use tokio_util::sync::CancellationToken;
use tool_protocol::{ToolCallError, ToolCallId, ToolCallResult, codes};

use crate::progress::Progress;

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallState {
    /// Accepted and running (validation, policy, the handler).
    Started,
    /// Waiting on the host (a preview acknowledgement, a provider).
    Waiting,
    /// Waiting on a person to approve or deny it.
    Approval,
    /// Finished successfully.
    Completed,
    /// A person or the policy denied it.
    Denied,
    /// Finished with an error.
    Failed,
    /// Cancelled by the client, the host or a shutdown.
    Cancelled,
}

impl CallState {
    /// The lowercase name used in progress messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "started",
            Self::Waiting => "waiting",
            Self::Approval => "approval",
            Self::Completed => "completed",
            Self::Denied => "denied",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Whether the call has ended.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Denied | Self::Failed | Self::Cancelled
        )
    }

    /// The final state a result stands for.
    ///
    /// ```
    /// use tool_context_mcp::CallState;
    /// use tool_protocol::{ToolCallError, ToolCallResult, codes};
    /// let denied = ToolCallResult::failure(ToolCallError::new(codes::TOOL_POLICY_DENIED, "no"));
    /// assert_eq!(CallState::of_result(&denied), CallState::Denied);
    /// ```
    pub fn of_result(result: &ToolCallResult) -> Self {
        match result.error_code() {
            None => Self::Completed,
            Some(codes::TOOL_POLICY_DENIED) => Self::Denied,
            Some(codes::TOOL_CANCELLED) => Self::Cancelled,
            Some(_) => Self::Failed,
        }
    }
}

impl fmt::Display for CallState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The host's view of MCP calls (the studio registers each call as an agent run).
///
/// Called synchronously on the call's task: keep the methods quick.
pub trait CallObserver: Send + Sync {
    /// A call started (its state is [`CallState::Started`]). `call` may be kept until
    /// [`CallObserver::call_finished`].
    fn call_started(&self, call: &McpCall);

    /// A running call moved to a non-final `state`; `detail` is the text after `<state>: `.
    fn call_transition(&self, call: &McpCall, state: CallState, detail: &str);

    /// The call ended in the final `state` with `result` (the one the client receives).
    fn call_finished(&self, call: &McpCall, state: CallState, result: &ToolCallResult);
}

/// One MCP `tools/call` in flight. Cheap to clone.
#[derive(Clone)]
pub struct McpCall {
    inner: Arc<CallInner>,
}

struct CallInner {
    session_id: String,
    client_name: Option<String>,
    tool: String,
    tool_call_id: ToolCallId,
    cancellation: CancellationToken,
    state: Mutex<CallState>,
    progress: Progress,
    observer: Option<Arc<dyn CallObserver>>,
}

impl fmt::Debug for McpCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpCall")
            .field("session_id", &self.inner.session_id)
            .field("tool", &self.inner.tool)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

/// Which call an [`McpCall`] is: its session, tool and request id, named so the session id
/// and the tool name (both text) cannot be swapped.
pub(crate) struct CallIdentity {
    pub(crate) session_id: String,
    pub(crate) tool: String,
    pub(crate) tool_call_id: ToolCallId,
}

impl McpCall {
    /// A started call; reports `started: <tool>` and tells the observer.
    pub(crate) fn start(
        CallIdentity {
            session_id,
            tool,
            tool_call_id,
        }: CallIdentity,
        client_name: Option<String>,
        cancellation: CancellationToken,
        progress: Progress,
        observer: Option<Arc<dyn CallObserver>>,
    ) -> Self {
        let call = Self {
            inner: Arc::new(CallInner {
                session_id,
                client_name,
                tool,
                tool_call_id,
                cancellation,
                state: Mutex::new(CallState::Started),
                progress,
                observer,
            }),
        };
        call.note(CallState::Started, &call.inner.tool);
        if let Some(observer) = &call.inner.observer {
            observer.call_started(&call);
        }
        call
    }

    /// The MCP session the call belongs to (its calls' `sessionId`).
    pub fn session_id(&self) -> &str {
        &self.inner.session_id
    }

    /// The name the client gave in `initialize` (`clientInfo.name`), when it gave one.
    pub fn client_name(&self) -> Option<&str> {
        self.inner.client_name.as_deref()
    }

    /// The called tool.
    pub fn tool(&self) -> &str {
        &self.inner.tool
    }

    /// The JSON-RPC request id, which is also the call's `toolCallId`.
    pub fn tool_call_id(&self) -> &ToolCallId {
        &self.inner.tool_call_id
    }

    /// The current state.
    pub fn state(&self) -> CallState {
        *self
            .inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The token that cancels the call (fired by the client's `notifications/cancelled` too).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancellation
    }

    /// Cancels the call; it ends `cancelled` with `TOOL_CANCELLED`.
    pub fn cancel(&self) {
        self.inner.cancellation.cancel();
    }

    /// Moves a running call to the non-final `state` and reports `<state>: <detail>`.
    /// Returns `false` (and reports nothing) when `state` is final, is the current state, or
    /// the call has ended.
    pub fn transition(&self, state: CallState, detail: &str) -> bool {
        if state.is_final() || !self.swap(state) {
            return false;
        }
        self.note(state, detail);
        if let Some(observer) = &self.inner.observer {
            observer.call_transition(self, state, detail);
        }
        true
    }

    /// Ends the call with `result` and waits until its progress has been sent.
    pub(crate) async fn finish(&self, result: &ToolCallResult) {
        self.end(result);
        self.inner.progress.flush().await;
    }

    /// Ends the call with `result` (once; later calls do nothing).
    fn end(&self, result: &ToolCallResult) {
        let state = CallState::of_result(result);
        if self.swap(state) {
            let detail = match result.error_code() {
                Some(code) => format!("{} ({code})", self.inner.tool),
                None => self.inner.tool.clone(),
            };
            self.note(state, &detail);
            if let Some(observer) = &self.inner.observer {
                observer.call_finished(self, state, result);
            }
        }
    }

    /// Sets `state` unless it is current or the call already ended.
    fn swap(&self, state: CallState) -> bool {
        let mut current = self
            .inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if current.is_final() || *current == state {
            return false;
        }
        *current = state;
        true
    }

    fn note(&self, state: CallState, detail: &str) {
        self.inner.progress.report(format!("{state}: {detail}"));
    }
}

/// Ends its call as `cancelled` if the call's task is dropped before it finished (the client
/// went away mid-call), so the host never keeps a run that looks alive forever.
pub(crate) struct FinishGuard(pub(crate) McpCall);

impl Drop for FinishGuard {
    fn drop(&mut self) {
        if !self.0.state().is_final() {
            let error = ToolCallError::new(
                codes::TOOL_CANCELLED,
                "The MCP request ended before the tool call finished.",
            )
            .with_retryable(true);
            self.0.end(&ToolCallResult::failure(error));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl CallObserver for Recorder {
        fn call_started(&self, call: &McpCall) {
            self.0
                .lock()
                .unwrap()
                .push(format!("begin {}", call.tool()));
        }
        fn call_transition(&self, _call: &McpCall, state: CallState, detail: &str) {
            self.0.lock().unwrap().push(format!("{state}: {detail}"));
        }
        fn call_finished(&self, _call: &McpCall, state: CallState, _result: &ToolCallResult) {
            self.0.lock().unwrap().push(format!("end {state}"));
        }
    }

    fn call(observer: &Arc<Recorder>) -> McpCall {
        McpCall::start(
            CallIdentity {
                session_id: "mcp-1".into(),
                tool: "t".into(),
                tool_call_id: ToolCallId::String("1".into()),
            },
            Some("test client".into()),
            CancellationToken::new(),
            Progress::disabled(),
            Some(observer.clone()),
        )
    }

    #[tokio::test]
    async fn transitions_are_reported_once_and_never_after_the_end() {
        let observer = Arc::new(Recorder::default());
        let call = call(&observer);
        assert!(call.transition(CallState::Approval, "waiting on a person for t"));
        assert!(!call.transition(CallState::Approval, "again"), "no repeat");
        assert!(
            !call.transition(CallState::Completed, "t"),
            "final states come from the result"
        );
        assert!(call.transition(CallState::Started, "t"));
        call.finish(&ToolCallResult::failure(ToolCallError::new(
            codes::TOOL_CANCELLED,
            "stop",
        )))
        .await;
        assert!(!call.transition(CallState::Waiting, "late"));
        assert_eq!(call.state(), CallState::Cancelled);
        assert_eq!(
            *observer.0.lock().unwrap(),
            [
                "begin t",
                "approval: waiting on a person for t",
                "started: t",
                "end cancelled"
            ]
        );
    }

    #[test]
    fn a_dropped_call_task_ends_the_call_cancelled() {
        let observer = Arc::new(Recorder::default());
        let guard = FinishGuard(call(&observer));
        let handle = guard.0.clone();
        drop(guard);
        assert_eq!(handle.state(), CallState::Cancelled);
        assert_eq!(*observer.0.lock().unwrap(), ["begin t", "end cancelled"]);
    }

    #[test]
    fn results_map_to_final_states() {
        let failure = |code: &str| ToolCallResult::failure(ToolCallError::new(code, "x"));
        assert_eq!(
            CallState::of_result(&ToolCallResult::success(serde_json::json!({}))),
            CallState::Completed
        );
        assert_eq!(
            CallState::of_result(&failure(codes::TOOL_POLICY_DENIED)),
            CallState::Denied
        );
        assert_eq!(
            CallState::of_result(&failure(codes::TOOL_CANCELLED)),
            CallState::Cancelled
        );
        assert_eq!(
            CallState::of_result(&failure(codes::TOOL_TIMEOUT)),
            CallState::Failed
        );
        assert!(CallState::Denied.is_final() && !CallState::Waiting.is_final());
    }
}
