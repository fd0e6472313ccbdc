//! Followers of a keyed durable call (same idempotency key, same process) get what the shared
//! execution's durable record says, never the first caller's own interruption (issue 19).
//! Time is paused: the store delays and the handlers' sleeps advance it deterministically.

mod durable_support;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use durable_support::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tool_context::ToolRegistry;
use tool_durable_operations::{DurableOperationStore, OperationState};
use tool_protocol::{ToolCallResult, codes};

/// A handler that signals `started` and then sleeps far past any timeout.
fn slow_tool(runs: &Runs, started: &CancellationToken) -> tool_context::Tool {
    let started = started.clone();
    tool(runs, move |_args, _call| {
        started.cancel();
        async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(ToolCallResult::success(json!("too late")))
        }
    })
}

/// Runs the first call (200 ms timeout) until `joined` fires, then a follower without a timeout
/// on the same key; returns both results.
async fn first_and_follower(
    registry: &ToolRegistry,
    key: &'static str,
    joined: impl Future<Output = ()>,
) -> (ToolCallResult, ToolCallResult) {
    let first = tokio::spawn({
        let registry = registry.clone();
        async move { call_with(&registry, "a-1", 5, options(key).with_timeout_ms(200)).await }
    });
    joined.await;
    let follower = tokio::spawn({
        let registry = registry.clone();
        async move { call(&registry, "a-2", key, 5).await }
    });
    (first.await.unwrap(), follower.await.unwrap())
}

fn assert_unknown(result: &ToolCallResult, reason: &str) {
    let error = result.error.as_ref().expect("an error");
    assert_eq!(
        (error.code.as_str(), error.retryable),
        (codes::TOOL_IDEMPOTENCY_UNKNOWN, Some(false)),
        "{error:?}"
    );
    assert_eq!(
        error.details,
        Some(json!({"state": "unknown", "reason": reason, "automaticRetrySafe": false}))
    );
}

const TIMEOUT_REASON: &str = "Tool execution ended with TOOL_TIMEOUT; reconcile before retrying.";

#[tokio::test(start_paused = true)]
async fn a_follower_of_a_timed_out_execution_sees_the_unknown_record_like_a_retry() {
    let store = memory_store();
    let runs = Runs::default();
    let started = CancellationToken::new();
    let registry = registry(&store, "worker-a", slow_tool(&runs, &started));
    let (first, follower) =
        first_and_follower(&registry, "charge-f1", started.clone().cancelled_owned()).await;
    assert_eq!(first.error_code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(
        status(&registry, "charge-f1").await.state,
        OperationState::Unknown
    );
    assert_unknown(&follower, TIMEOUT_REASON);
    assert_eq!(follower.tool_call_id, Some("a-2".into()));
    let retry = call(&registry, "a-3", "charge-f1", 5).await;
    assert_unknown(&retry, TIMEOUT_REASON);
    assert_eq!(runs.get(), 1);
}

/// A store whose `n`-th write is delayed by `by` and fires `started` when it begins.
fn delayed_store(
    n: usize,
    by: Duration,
    started: &CancellationToken,
) -> Arc<DurableOperationStore> {
    let backend = Arc::new(ScriptedBackend::default());
    backend.delay_write(n, by);
    backend.cancel_on_write(n, started.clone());
    Arc::new(DurableOperationStore::new(backend))
}

#[tokio::test(start_paused = true)]
async fn a_follower_of_a_call_that_timed_out_while_claiming_never_sees_its_timeout() {
    // Write 1 is the claim: it lands at 500 ms, after the first caller's 200 ms timeout, and
    // is then marked unknown.
    let started = CancellationToken::new();
    let store = delayed_store(1, Duration::from_millis(500), &started);
    let runs = Runs::default();
    let registry = registry(&store, "worker-a", charging_tool(&runs));
    let (first, follower) =
        first_and_follower(&registry, "charge-f2", started.clone().cancelled_owned()).await;
    assert_eq!(first.error_code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(
        status(&registry, "charge-f2").await.state,
        OperationState::Unknown
    );
    assert_unknown(&follower, TIMEOUT_REASON);
    assert_eq!(runs.get(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_follower_of_a_call_that_timed_out_during_its_terminal_write_sees_the_record() {
    // Write 2 is the completion: held back past the timeout, it loses the fence to the abort.
    let started = CancellationToken::new();
    let store = delayed_store(2, Duration::from_millis(500), &started);
    let runs = Runs::default();
    let registry = registry(&store, "worker-a", charging_tool(&runs));
    let (first, follower) =
        first_and_follower(&registry, "charge-f3", started.clone().cancelled_owned()).await;
    assert_eq!(first.error_code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(
        status(&registry, "charge-f3").await.state,
        OperationState::Unknown
    );
    assert_unknown(&follower, TIMEOUT_REASON);
    assert_eq!(runs.get(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_follower_of_an_execution_unknown_handler_error_sees_the_unknown_record() {
    let store = memory_store();
    let runs = Runs::default();
    let started = CancellationToken::new();
    let signal = started.clone();
    let unknown = tool(&runs, move |_args, _call| {
        signal.cancel();
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(tool_protocol::ToolCallError::new(
                codes::TOOL_EXECUTION_UNKNOWN,
                "partial write",
            ))
        }
    });
    let registry = registry(&store, "worker-a", unknown);
    let first = tokio::spawn({
        let registry = registry.clone();
        async move { call(&registry, "a-1", "charge-f4", 5).await }
    });
    started.cancelled().await;
    let follower = call(&registry, "a-2", "charge-f4", 5).await;
    assert_eq!(
        first.await.unwrap().error_code(),
        Some(codes::TOOL_EXECUTION_UNKNOWN),
        "the caller that ran the handler gets its error"
    );
    assert_unknown(
        &follower,
        "Tool execution ended with TOOL_EXECUTION_UNKNOWN; reconcile before retrying.",
    );
    let retry = call(&registry, "a-3", "charge-f4", 5).await;
    assert_eq!(
        serde_json::to_value(&retry.error).unwrap(),
        serde_json::to_value(&follower.error).unwrap()
    );
    assert_eq!(runs.get(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_follower_of_a_completed_execution_still_gets_its_result() {
    let store = memory_store();
    let runs = Runs::default();
    let started = CancellationToken::new();
    let signal = started.clone();
    let quick = tool(&runs, move |_args, _call| {
        signal.cancel();
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(ToolCallResult::success(json!({"charged": 5})))
        }
    });
    let registry = registry(&store, "worker-a", quick);
    let (first, follower) =
        first_and_follower(&registry, "charge-f5", started.clone().cancelled_owned()).await;
    assert!(!first.is_error(), "{first:?}");
    assert_eq!(follower.structured_content, Some(json!({"charged": 5})));
    assert_eq!(follower.structured_content, first.structured_content);
    assert_eq!(runs.get(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_while_claiming_answers_at_once_and_still_marks_the_late_claim_unknown() {
    // Write 1 is the claim: it lands 10 s later, long after the shutdown.
    let started = CancellationToken::new();
    let store = delayed_store(1, Duration::from_secs(10), &started);
    let runs = Runs::default();
    let registry = registry(&store, "worker-a", charging_tool(&runs));
    let call = tokio::spawn({
        let registry = registry.clone();
        async move { call(&registry, "a-1", "charge-f6", 5).await }
    });
    started.cancelled().await;
    let shut_down_at = tokio::time::Instant::now();
    registry.shutdown();
    let result = call.await.unwrap();
    assert_eq!(
        shut_down_at.elapsed(),
        Duration::ZERO,
        "no bounded wait for the claim"
    );
    let error = result.error.expect("an error");
    assert_eq!(
        (error.code.as_str(), error.retryable),
        (codes::TOOL_EXECUTION_ABORTED, Some(true))
    );
    assert_eq!(error.details, Some(json!({"executionState": "detached"})));
    tokio::time::sleep(Duration::from_secs(11)).await;
    let record = status(&registry, "charge-f6").await;
    assert_eq!(record.state, OperationState::Unknown);
    assert_eq!(
        record.reason.as_deref(),
        Some("Tool execution ended with TOOL_EXECUTION_ABORTED; reconcile before retrying.")
    );
    assert_eq!(runs.get(), 0);
}
