//! The handler is polled in place on the calling task (no task spawned while the call waits
//! for it) and handed to a task of its own only when the call stops waiting, so it still
//! drains to completion after a timeout, a cancellation, a shutdown or a dropped call.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::request;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tool_context::{
    AllowAll, CallCancellation, HandlerOutput, Tool, ToolCallOptions, ToolHandler, ToolInvocation,
    ToolRegistry,
};
use tool_protocol::{ToolCallError, ToolCallResult, ToolDefinition, codes};

/// What a handler saw: the task it ran on before and after waiting, and its token.
#[derive(Debug, Clone)]
struct Seen {
    first_task: Option<tokio::task::Id>,
    later_task: Option<tokio::task::Id>,
    token: CallCancellation,
}

type Started = Arc<Mutex<Option<oneshot::Sender<CallCancellation>>>>;
type Finished = Arc<Mutex<Option<oneshot::Sender<Seen>>>>;

/// A handler that reports its token once started, waits `ms` ignoring it (a timer, or one
/// scheduler turn when `ms` is 0) and reports the tasks it ran on when it finishes.
fn waiter(started: Started, finished: Finished) -> Tool {
    Tool::new(
        ToolDefinition::new("wait", "Waits.", json!({"type": "object"})),
        move |arguments: Value, call: ToolInvocation| {
            let started = started.clone();
            let finished = finished.clone();
            async move {
                let first_task = tokio::task::try_id();
                if let Some(sender) = started.lock().unwrap().take() {
                    let _ = sender.send(call.cancellation.clone());
                }
                match arguments["ms"].as_u64().unwrap_or(0) {
                    0 => tokio::task::yield_now().await,
                    ms => tokio::time::sleep(Duration::from_millis(ms)).await,
                }
                if arguments["panic"] == true {
                    panic!("a handler bug after its first wait");
                }
                let seen = Seen {
                    first_task,
                    later_task: tokio::task::try_id(),
                    token: call.cancellation.clone(),
                };
                if let Some(sender) = finished.lock().unwrap().take() {
                    let _ = sender.send(seen);
                }
                Ok::<_, ToolCallError>(json!({"waited": true}))
            }
        },
    )
}

struct Harness {
    registry: ToolRegistry,
    started: oneshot::Receiver<CallCancellation>,
    finished: oneshot::Receiver<Seen>,
}

fn harness(shutdown: Option<CancellationToken>) -> Harness {
    let (started_tx, started) = oneshot::channel();
    let (finished_tx, finished) = oneshot::channel();
    let tool = waiter(
        Arc::new(Mutex::new(Some(started_tx))),
        Arc::new(Mutex::new(Some(finished_tx))),
    );
    let builder = ToolRegistry::builder().tool(tool).policy(AllowAll);
    let builder = match shutdown {
        Some(token) => builder.shutdown_token(token),
        None => builder,
    };
    Harness {
        registry: builder.build().unwrap(),
        started,
        finished,
    }
}

/// Runs one call on a task of its own; returns that task's id with the result.
async fn call_on_a_task(
    registry: &ToolRegistry,
    arguments: Value,
    options: ToolCallOptions,
) -> (tokio::task::Id, ToolCallResult) {
    let registry = registry.clone();
    tokio::spawn(async move {
        let result = registry
            .call_tool(request("wait", arguments), options)
            .await;
        (tokio::task::id(), result)
    })
    .await
    .expect("the calling task ends")
}

/// Waits (in virtual time when paused) for the handler to report that it finished.
async fn drained(finished: oneshot::Receiver<Seen>) -> Seen {
    tokio::time::timeout(Duration::from_secs(3_600), finished)
        .await
        .expect("the handler drains to completion")
        .expect("the handler reports before it ends")
}

#[tokio::test(start_paused = true)]
async fn a_waiting_handler_runs_on_the_calling_task() {
    let harness = harness(None);
    let (caller, result) = call_on_a_task(
        &harness.registry,
        json!({"ms": 20}),
        ToolCallOptions::default(),
    )
    .await;
    assert_eq!(result.structured_content, Some(json!({"waited": true})));
    let seen = drained(harness.finished).await;
    let caller = Some(caller);
    assert_eq!(seen.first_task, caller, "first poll on the calling task");
    assert_eq!(
        seen.later_task, caller,
        "after waiting, still polled on the calling task: no task was spawned"
    );
}

#[tokio::test(start_paused = true)]
async fn a_handler_that_outlives_its_timeout_drains_to_completion_on_its_own_task() {
    let harness = harness(None);
    let started = tokio::time::Instant::now();
    let (caller, result) = call_on_a_task(
        &harness.registry,
        json!({"ms": 500}),
        ToolCallOptions::default().with_timeout_ms(50),
    )
    .await;
    let caller = Some(caller);
    assert_eq!(started.elapsed(), Duration::from_millis(50));
    let error = result.error.unwrap();
    assert_eq!(error.code, codes::TOOL_TIMEOUT);
    assert_eq!(
        error.details,
        Some(json!({"timeoutMs": 50, "executionState": "detached"}))
    );
    let seen = drained(harness.finished).await;
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(500),
        "it ran its full wait"
    );
    assert_eq!(seen.first_task, caller, "it started in place");
    assert!(seen.later_task.is_some());
    assert_ne!(seen.later_task, caller, "it drained on a task of its own");
    assert!(seen.token.is_cancelled(), "its token fired at the deadline");
}

#[tokio::test(start_paused = true)]
async fn a_handler_cancelled_while_polled_in_place_drains_to_completion() {
    let harness = harness(None);
    let token = CancellationToken::new();
    let canceller = token.clone();
    let started = harness.started;
    tokio::spawn(async move {
        started.await.expect("the handler started");
        tokio::time::sleep(Duration::from_millis(10)).await;
        canceller.cancel();
    });
    let (caller, result) = call_on_a_task(
        &harness.registry,
        json!({"ms": 200}),
        ToolCallOptions::default().with_cancellation(token),
    )
    .await;
    let error = result.error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.message.as_str()),
        (
            codes::TOOL_CANCELLED,
            "Tool call cancelled while waiting for the tool handler."
        )
    );
    let seen = drained(harness.finished).await;
    assert_eq!(seen.first_task, Some(caller), "it started in place");
    assert!(seen.later_task.is_some());
    assert_ne!(
        seen.later_task,
        Some(caller),
        "it drained on a task of its own"
    );
    assert!(seen.token.is_cancelled());
}

#[tokio::test(start_paused = true)]
async fn a_handler_in_flight_at_shutdown_drains_to_completion() {
    let shutdown = CancellationToken::new();
    let harness = harness(Some(shutdown.clone()));
    let started = harness.started;
    tokio::spawn(async move {
        started.await.expect("the handler started");
        shutdown.cancel();
    });
    let result = harness
        .registry
        .call_tool(
            request("wait", json!({"ms": 200})),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(result.error_code(), Some(codes::TOOL_EXECUTION_ABORTED));
    let seen = drained(harness.finished).await;
    assert!(seen.token.is_cancelled());
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_leaves_its_started_handler_draining() {
    let harness = harness(None);
    let registry = harness.registry.clone();
    let call = tokio::spawn(async move {
        registry
            .call_tool(
                request("wait", json!({"ms": 200})),
                ToolCallOptions::default(),
            )
            .await
    });
    harness.started.await.expect("the handler started");
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    let seen = drained(harness.finished).await;
    assert!(
        seen.token.is_cancelled(),
        "dropping the call cancels the token"
    );
}

#[tokio::test(start_paused = true)]
async fn a_handler_panicking_after_it_waited_in_place_is_a_coded_failure() {
    let harness = harness(None);
    let result = harness
        .registry
        .call_tool(
            request("wait", json!({"ms": 5, "panic": true})),
            ToolCallOptions::default(),
        )
        .await;
    let error = result.error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.message.as_str()),
        (codes::TOOL_EXECUTION_FAILED, "Tool handler panicked.")
    );
    assert_eq!(
        error.details,
        Some(json!({"handlerId": "wait", "message": "Tool handler panicked."}))
    );
}

/// A handler object with state, through the trait's default `call_owned`: it counts its calls,
/// waits `ms`, and reports what it saw when it waited 100 ms or more.
struct Counting {
    calls: Arc<Mutex<u32>>,
    finished: Finished,
}

#[async_trait::async_trait]
impl ToolHandler for Counting {
    async fn call(
        &self,
        arguments: Value,
        invocation: ToolInvocation,
    ) -> Result<HandlerOutput, ToolCallError> {
        let first_task = tokio::task::try_id();
        *self.calls.lock().unwrap() += 1;
        let ms = arguments["ms"].as_u64().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        if ms >= 100 {
            let seen = Seen {
                first_task,
                later_task: tokio::task::try_id(),
                token: invocation.cancellation.clone(),
            };
            if let Some(sender) = self.finished.lock().unwrap().take() {
                let _ = sender.send(seen);
            }
        }
        Ok(HandlerOutput::Value(
            json!({"calls": *self.calls.lock().unwrap()}),
        ))
    }
}

#[tokio::test(start_paused = true)]
async fn a_handler_object_runs_in_place_and_drains_detached_like_a_closure() {
    let calls = Arc::new(Mutex::new(0));
    let (finished_tx, finished) = oneshot::channel();
    let handler = Counting {
        calls: calls.clone(),
        finished: Arc::new(Mutex::new(Some(finished_tx))),
    };
    let tool = Tool::from_handler(
        ToolDefinition::new("wait", "Waits.", json!({"type": "object"})),
        handler,
    );
    let registry = ToolRegistry::builder()
        .tool(tool)
        .policy(AllowAll)
        .build()
        .unwrap();
    let (caller, result) =
        call_on_a_task(&registry, json!({"ms": 5}), ToolCallOptions::default()).await;
    assert_eq!(result.structured_content, Some(json!({"calls": 1})));
    let (late_caller, late) = call_on_a_task(
        &registry,
        json!({"ms": 500}),
        ToolCallOptions::default().with_timeout_ms(50),
    )
    .await;
    assert_eq!(late.error_code(), Some(codes::TOOL_TIMEOUT));
    let seen = drained(finished).await;
    assert_ne!(caller, late_caller);
    assert_eq!(seen.first_task, Some(late_caller), "it started in place");
    assert_ne!(
        seen.later_task,
        Some(late_caller),
        "it drained on its own task"
    );
    assert!(seen.token.is_cancelled());
    assert_eq!(*calls.lock().unwrap(), 2);
}

#[tokio::test]
async fn a_token_a_handler_leaves_behind_fires_when_the_call_ends() {
    let left: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
    let keep = left.clone();
    let tool = Tool::new(
        ToolDefinition::new("leave", "Leaves a watcher.", json!({"type": "object"})),
        move |_: Value, call: ToolInvocation| {
            *keep.lock().unwrap() = Some(call.cancellation.child_token());
            async move {
                assert!(!call.cancellation.is_cancelled(), "not while it runs");
                Ok::<_, ToolCallError>(json!({}))
            }
        },
    );
    let registry = ToolRegistry::builder()
        .tool(tool)
        .policy(AllowAll)
        .build()
        .unwrap();
    let result = registry
        .call_tool(request("leave", json!({})), ToolCallOptions::default())
        .await;
    assert!(!result.is_error(), "{result:?}");
    let token = left.lock().unwrap().take().expect("the handler ran");
    assert!(token.is_cancelled(), "the call ended, so its watchers stop");
}
