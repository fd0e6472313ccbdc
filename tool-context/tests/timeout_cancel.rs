//! Timeout, caller cancellation, handlers that ignore their token, and shutdown.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Recorder, request};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_context::{
    AllowAll, CallCancellation, Tool, ToolCallOptions, ToolInvocation, ToolRegistry,
};
use tool_protocol::{ProvenanceState, ToolCallError, ToolDefinition, codes};

/// A handler that sleeps `ms` (ignoring its token when `ignore` is set) and keeps its token.
fn sleeper(tokens: Arc<Mutex<Vec<CallCancellation>>>) -> Tool {
    Tool::new(
        ToolDefinition::new("sleep", "Sleeps.", json!({"type": "object"})),
        move |arguments: Value, call: ToolInvocation| {
            let tokens = tokens.clone();
            async move {
                tokens.lock().unwrap().push(call.cancellation.clone());
                let sleep = tokio::time::sleep(Duration::from_millis(
                    arguments["ms"].as_u64().unwrap_or(0),
                ));
                if arguments["ignore"] == true {
                    sleep.await;
                } else {
                    tokio::select! {
                        () = sleep => {}
                        () = call.cancellation.cancelled() => return Err(ToolCallError::new(codes::TOOL_EXECUTION_ABORTED, "stopped")),
                    }
                }
                Ok::<_, ToolCallError>(json!({"slept": true}))
            }
        },
    )
}

fn registry(tokens: &Arc<Mutex<Vec<CallCancellation>>>, recorder: &Recorder) -> ToolRegistry {
    ToolRegistry::builder()
        .tool(sleeper(tokens.clone()))
        .policy(AllowAll)
        .observer(recorder.clone())
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_timeout_returns_without_waiting_for_a_handler_that_ignores_its_token() {
    let tokens = Arc::default();
    let recorder = Recorder::default();
    let registry = registry(&tokens, &recorder);
    let started = tokio::time::Instant::now();
    let result = registry
        .call_tool(
            request("sleep", json!({"ms": 3_600_000, "ignore": true})),
            ToolCallOptions::default().with_timeout_ms(50),
        )
        .await;
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(50),
        "the registry stopped waiting at the deadline"
    );
    let error = result.error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.retryable),
        (codes::TOOL_TIMEOUT, Some(true))
    );
    assert_eq!(error.message, "Tool call timed out after 50ms.");
    assert_eq!(
        error.details,
        Some(json!({"timeoutMs": 50, "executionState": "detached"}))
    );
    assert!(
        tokens.lock().unwrap()[0].is_cancelled(),
        "the handler's token is cancelled at expiry"
    );
    let finished = recorder.events().pop().unwrap();
    assert_eq!(finished.provenance.state, ProvenanceState::Unknown);
    assert_eq!(finished.provenance.timeout_ms, Some(50));
    assert_eq!(finished.provenance.elapsed_ms, 50);
}

#[tokio::test(start_paused = true)]
async fn the_timeout_is_one_budget_and_fast_calls_finish_inside_it() {
    let tokens = Arc::default();
    let registry = registry(&tokens, &Recorder::default());
    let ok = registry
        .call_tool(
            request("sleep", json!({"ms": 49})),
            ToolCallOptions::default().with_timeout_ms(50),
        )
        .await;
    assert!(!ok.is_error());
    let zero = registry
        .call_tool(
            request("sleep", json!({"ms": 10})),
            ToolCallOptions::default().with_timeout_ms(0),
        )
        .await;
    assert_eq!(
        zero.error_code(),
        Some(codes::TOOL_TIMEOUT),
        "a handler that has to wait is past a zero timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn cancellation_is_distinct_from_timeout() {
    let tokens = Arc::default();
    let recorder = Recorder::default();
    let registry = registry(&tokens, &recorder);
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        canceller.cancel();
    });
    let options = ToolCallOptions::default()
        .with_timeout_ms(1_000)
        .with_cancellation(token);
    let result = registry
        .call_tool(
            request("sleep", json!({"ms": 3_600_000, "ignore": true})),
            options,
        )
        .await;
    let error = result.error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.retryable),
        (codes::TOOL_CANCELLED, Some(true))
    );
    assert_eq!(
        error.message,
        "Tool call cancelled while waiting for the tool handler."
    );
    assert!(tokens.lock().unwrap()[0].is_cancelled());
    assert_eq!(
        recorder.events().pop().unwrap().provenance.state,
        ProvenanceState::Cancelled
    );
    // Already cancelled before the call: the policy stage reports it, the handler never starts.
    let gone = CancellationToken::new();
    gone.cancel();
    let early = registry
        .call_tool(
            request("sleep", json!({})),
            ToolCallOptions::default().with_cancellation(gone),
        )
        .await;
    assert_eq!(
        early.error.unwrap().message,
        "Tool call cancelled while waiting for policy."
    );
    assert_eq!(tokens.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_cooperative_handler_stops_when_its_token_fires() {
    let tokens: Arc<Mutex<Vec<CallCancellation>>> = Arc::default();
    let registry = registry(&tokens, &Recorder::default());
    let result = registry
        .call_tool(
            request("sleep", json!({"ms": 3_600_000})),
            ToolCallOptions::default().with_timeout_ms(5),
        )
        .await;
    assert_eq!(
        result.error_code(),
        Some(codes::TOOL_TIMEOUT),
        "the caller sees the timeout, not the handler's reaction"
    );
}

#[tokio::test]
async fn shutdown_refuses_new_calls_and_aborts_in_flight_ones() {
    let tokens: Arc<Mutex<Vec<CallCancellation>>> = Arc::default();
    let app_shutdown = CancellationToken::new();
    let registry = ToolRegistry::builder()
        .tool(sleeper(tokens.clone()))
        .policy(AllowAll)
        .shutdown_token(app_shutdown.clone())
        .build()
        .unwrap();
    let in_flight = {
        let registry = registry.clone();
        tokio::spawn(async move {
            registry
                .call_tool(
                    request("sleep", json!({"ms": 60_000, "ignore": true})),
                    ToolCallOptions::default(),
                )
                .await
        })
    };
    while tokens.lock().unwrap().is_empty() {
        tokio::task::yield_now().await;
    }
    app_shutdown.cancel();
    assert!(registry.is_shut_down());
    let error = in_flight.await.unwrap().error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.retryable),
        (codes::TOOL_EXECUTION_ABORTED, Some(true))
    );
    assert_eq!(error.details, Some(json!({"executionState": "detached"})));
    assert!(tokens.lock().unwrap()[0].is_cancelled());
    let refused = registry
        .call_tool(request("sleep", json!({})), ToolCallOptions::default())
        .await;
    let refused = refused.error.unwrap();
    assert_eq!(
        (refused.code.as_str(), refused.retryable),
        (codes::TOOL_REGISTRY_NOT_READY, Some(true))
    );
}

#[tokio::test]
async fn dropping_a_call_cancels_its_handler_token() {
    let tokens: Arc<Mutex<Vec<CallCancellation>>> = Arc::default();
    let registry = registry(&tokens, &Recorder::default());
    let call = {
        let registry = registry.clone();
        tokio::spawn(async move {
            registry
                .call_tool(
                    request("sleep", json!({"ms": 60_000, "ignore": true})),
                    ToolCallOptions::default(),
                )
                .await
        })
    };
    while tokens.lock().unwrap().is_empty() {
        tokio::task::yield_now().await;
    }
    call.abort();
    let token = tokens.lock().unwrap()[0].clone();
    tokio::time::timeout(Duration::from_secs(5), token.cancelled())
        .await
        .expect("the token fires when the call is dropped");
    registry.shutdown();
}

/// A tool that answers at once, or after yielding once to the scheduler when `yield` is set.
fn instant() -> Tool {
    Tool::new(
        ToolDefinition::new("instant", "Answers at once.", json!({"type": "object"})),
        |arguments: Value, _call: ToolInvocation| async move {
            if arguments["yield"] == true {
                tokio::task::yield_now().await;
            }
            Ok::<_, ToolCallError>(json!({"ok": true}))
        },
    )
}

#[tokio::test(start_paused = true)]
async fn a_zero_timeout_runs_what_needs_no_waiting_and_nothing_more() {
    let recorder = Recorder::default();
    let registry = ToolRegistry::builder()
        .tool(instant())
        .policy(AllowAll)
        .observer(recorder.clone())
        .build()
        .unwrap();
    let zero = || ToolCallOptions::default().with_timeout_ms(0);
    let ready = registry
        .call_tool(request("instant", json!({})), zero())
        .await;
    assert!(!ready.is_error(), "{ready:?}");
    assert_eq!(ready.structured_content, Some(json!({"ok": true})));
    assert_eq!(
        recorder.events().pop().unwrap().provenance.timeout_ms,
        Some(0)
    );
    // A keyed call and its replay of the settled outcome need no waiting either.
    for _ in 0..2 {
        let keyed = registry
            .call_tool(
                request("instant", json!({})),
                zero().with_idempotency_key("zero-1"),
            )
            .await;
        assert_eq!(keyed.structured_content, Some(json!({"ok": true})));
    }
    // A handler that has to wait, even one scheduler turn, is past the deadline.
    let waiting = registry
        .call_tool(request("instant", json!({"yield": true})), zero())
        .await;
    assert_eq!(waiting.error_code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(
        waiting.error.unwrap().details,
        Some(json!({"timeoutMs": 0, "executionState": "detached"}))
    );
}

/// Allows every call, shutting the application down as it decides (without waiting).
struct ShutsDownWhileDeciding(CancellationToken);

#[async_trait::async_trait]
impl tool_context::ToolPolicy for ShutsDownWhileDeciding {
    async fn decide(
        &self,
        _: tool_context::PolicyRequest<'_>,
    ) -> Result<tool_context::PolicyDecision, tool_context::BoxError> {
        unreachable!("it decides now")
    }

    fn decide_now(
        &self,
        _: &tool_context::PolicyRequest<'_>,
    ) -> Option<Result<tool_context::PolicyDecision, tool_context::BoxError>> {
        self.0.cancel();
        Some(Ok(tool_context::PolicyDecision::Allow))
    }
}

#[tokio::test]
async fn a_shutdown_during_a_policy_that_decides_now_refuses_the_handler() {
    let tokens: Arc<Mutex<Vec<CallCancellation>>> = Arc::default();
    let app_shutdown = CancellationToken::new();
    let registry = ToolRegistry::builder()
        .tool(sleeper(tokens.clone()))
        .policy(ShutsDownWhileDeciding(app_shutdown.clone()))
        .shutdown_token(app_shutdown)
        .build()
        .unwrap();
    let result = registry
        .call_tool(request("sleep", json!({})), ToolCallOptions::default())
        .await;
    assert_eq!(result.error_code(), Some(codes::TOOL_REGISTRY_NOT_READY));
    assert!(tokens.lock().unwrap().is_empty(), "the handler never ran");
}
