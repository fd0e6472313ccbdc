//! What a caller sees around approvals and replays: who refused a call, a replay that says so
//! and asks nobody again, a refused keyed call that asks again on retry, and the approval wait's
//! own bound.

mod common;
mod durable_support;

use std::sync::Arc;
use std::time::Duration;

use common::{Counter, Recorder, echo_tool, request};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tool_context::{
    BoxError, FixedPolicy, InteractionOutcome, InteractionRequest, PolicyDecision, Tool,
    ToolCallOptions, ToolInteraction, ToolRegistry,
};
use tool_protocol::{ToolCallContext, ToolCallResult, codes};

/// Answers with the outcomes in turn (the last one repeats) and counts the questions.
struct Answers(std::sync::Mutex<Vec<InteractionOutcome>>, Counter);

impl Answers {
    fn new(outcomes: Vec<InteractionOutcome>, asked: &Counter) -> Self {
        Self(std::sync::Mutex::new(outcomes), asked.clone())
    }
}

#[async_trait::async_trait]
impl ToolInteraction for Answers {
    async fn interact(
        &self,
        _request: &InteractionRequest,
        _cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        self.1.bump();
        let mut outcomes = self.0.lock().unwrap();
        Ok(if outcomes.len() > 1 {
            outcomes.remove(0)
        } else {
            outcomes[0].clone()
        })
    }
}

/// Answers after `delay` (or never, when `None`).
struct SlowPerson(Option<Duration>);

#[async_trait::async_trait]
impl ToolInteraction for SlowPerson {
    async fn interact(
        &self,
        _request: &InteractionRequest,
        _cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        match self.0 {
            Some(delay) => tokio::time::sleep(delay).await,
            None => std::future::pending().await,
        }
        Ok(InteractionOutcome::Approved)
    }
}

fn asking_registry(tool: Tool, interaction: impl ToolInteraction + 'static) -> ToolRegistry {
    ToolRegistry::builder()
        .tool(tool)
        .policy(FixedPolicy(PolicyDecision::Ask))
        .interaction(interaction)
        .build()
        .unwrap()
}

async fn write(registry: &ToolRegistry, options: ToolCallOptions) -> ToolCallResult {
    registry
        .call_tool(request("workspace.write", json!({"path": "a"})), options)
        .await
}

fn keyed(key: &str) -> ToolCallOptions {
    ToolCallOptions::default().with_idempotency_key(key)
}

#[tokio::test]
async fn a_replay_says_so_with_the_original_time_in_the_result_and_the_event() {
    let runs = Counter::default();
    let recorder = Recorder::default();
    let registry = ToolRegistry::builder()
        .tool(echo_tool("workspace.write", &runs))
        .policy(tool_context::AllowAll)
        .observer(recorder.clone())
        .build()
        .unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let first = write(&registry, keyed("k")).await;
    assert!(!first.is_error() && !first.is_replay(), "{first:?}");
    let again = write(&registry, keyed("k")).await;
    assert_eq!(runs.get(), 1, "the retry executed nothing");
    let replay = again.replay.expect("the retry says it is a replay");
    let at = replay.original_at.expect("the original outcome's time");
    assert!(at >= before, "{at} >= {before}");
    assert_eq!(again.structured_content, first.structured_content);
    let wire = serde_json::to_value(&again).unwrap();
    assert_eq!(wire["_meta"]["replayed"], true);
    let finished = recorder.events().pop().unwrap();
    assert!(
        finished.result.unwrap().is_replay(),
        "the event says so too"
    );
}

#[tokio::test]
async fn a_durable_replay_carries_the_records_time() {
    let runs = durable_support::Runs::default();
    let store = durable_support::memory_store();
    let registry = durable_support::registry(&store, "a", durable_support::charging_tool(&runs));
    let first = durable_support::call(&registry, "c1", "pay-1", 5).await;
    assert!(!first.is_replay());
    let other = durable_support::registry(&store, "b", durable_support::charging_tool(&runs));
    let replayed = durable_support::call(&other, "c2", "pay-1", 5).await;
    assert_eq!(runs.get(), 1);
    let record = other
        .get_operation_status(durable_support::TOOL, "pay-1", &durable_support::context())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        replayed.replay.and_then(|replay| replay.original_at),
        Some(record.updated_at)
    );
}

#[tokio::test]
async fn an_approved_keyed_operation_replays_without_asking_again() {
    let (runs, asked) = (Counter::default(), Counter::default());
    let registry = asking_registry(
        echo_tool("workspace.write", &runs),
        Answers::new(vec![InteractionOutcome::Approved], &asked),
    );
    assert!(!write(&registry, keyed("save-1")).await.is_error());
    let retry = write(&registry, keyed("save-1")).await;
    assert!(retry.is_replay() && !retry.is_error(), "{retry:?}");
    assert_eq!((asked.get(), runs.get()), (1, 1), "one question, one run");
    // Another key is another operation: asked again.
    write(&registry, keyed("save-2")).await;
    assert_eq!((asked.get(), runs.get()), (2, 2));
}

#[tokio::test]
async fn a_deny_policy_refuses_even_a_recorded_operation() {
    let runs = Counter::default();
    let store = durable_support::memory_store();
    let allowing = ToolRegistry::builder()
        .tool(echo_tool("workspace.write", &runs))
        .policy(tool_context::AllowAll)
        .durable_store(Arc::clone(&store))
        .build()
        .unwrap();
    assert!(!write(&allowing, keyed("k")).await.is_error());
    let denying = ToolRegistry::builder()
        .tool(echo_tool("workspace.write", &runs))
        .policy(FixedPolicy(PolicyDecision::Deny))
        .durable_store(store)
        .build()
        .unwrap();
    let refused = write(&denying, keyed("k")).await;
    assert_eq!(refused.error_code(), Some(codes::TOOL_POLICY_DENIED));
    assert!(!refused.is_replay());
}

#[tokio::test]
async fn a_refused_keyed_call_asks_again_on_retry_in_memory_and_durably() {
    for durable in [false, true] {
        let (runs, asked) = (Counter::default(), Counter::default());
        let store = durable_support::memory_store();
        let mut builder = ToolRegistry::builder()
            .tool(echo_tool("workspace.write", &runs))
            .policy(FixedPolicy(PolicyDecision::Ask))
            .interaction(Answers::new(
                vec![InteractionOutcome::Denied, InteractionOutcome::Approved],
                &asked,
            ));
        if durable {
            builder = builder.durable_store(Arc::clone(&store));
        }
        let registry = builder.build().unwrap();
        let denied = write(&registry, keyed("k")).await;
        let error = denied.error.unwrap();
        assert_eq!(error.code, codes::TOOL_POLICY_DENIED);
        assert_eq!(error.details, Some(json!({"decidedBy": "person"})));
        if durable {
            let record = registry
                .get_operation_status("workspace.write", "k", &ToolCallContext::default())
                .await
                .unwrap();
            assert!(
                record.is_none(),
                "the unstarted claim was released: {record:?}"
            );
        }
        let approved = write(&registry, keyed("k")).await;
        assert!(
            !approved.is_error() && !approved.is_replay(),
            "{approved:?}"
        );
        assert_eq!(
            (asked.get(), runs.get()),
            (2, 1),
            "asked again, ran once (durable: {durable})"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_approval_ends_with_its_own_code_and_never_starts_the_handler() {
    let runs = Counter::default();
    let registry = asking_registry(echo_tool("workspace.write", &runs), SlowPerson(None));
    let options = keyed("k")
        .with_timeout_ms(60_000)
        .with_approval_timeout(Duration::from_millis(250));
    let started = tokio::time::Instant::now();
    let result = write(&registry, options).await;
    assert_eq!(started.elapsed(), Duration::from_millis(250));
    let error = result.error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.retryable),
        (codes::TOOL_APPROVAL_TIMEOUT, Some(true))
    );
    assert_eq!(
        error.details,
        Some(json!({"approvalTimeoutMs": 250, "executionState": "not-started"}))
    );
    assert_eq!(runs.get(), 0);
    // The unstarted claim was released: the key is asked (and times out) again, not replayed.
    let again = write(
        &registry,
        keyed("k").with_approval_timeout(Duration::from_millis(10)),
    )
    .await;
    assert_eq!(again.error_code(), Some(codes::TOOL_APPROVAL_TIMEOUT));
}

#[tokio::test(start_paused = true)]
async fn the_persons_time_does_not_count_against_the_calls_timeout() {
    let runs = Counter::default();
    // The person takes 5 s; the call's own budget is 1 s: under the approval bound the call
    // runs, and without it the call's timeout covers the wait (the contract's behaviour).
    let slow = || SlowPerson(Some(Duration::from_secs(5)));
    let bounded = ToolRegistry::builder()
        .tool(echo_tool("workspace.write", &runs))
        .policy(FixedPolicy(PolicyDecision::Ask))
        .interaction(slow())
        .approval_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let ran = write(&bounded, ToolCallOptions::default().with_timeout_ms(1_000)).await;
    assert!(!ran.is_error(), "{ran:?}");
    assert_eq!(runs.get(), 1);
    let unbounded = asking_registry(echo_tool("workspace.write", &runs), slow());
    let timed_out = write(
        &unbounded,
        ToolCallOptions::default().with_timeout_ms(1_000),
    )
    .await;
    let error = timed_out.error.unwrap();
    assert_eq!(error.code, codes::TOOL_TIMEOUT);
    assert_eq!(error.details.unwrap()["executionState"], "not-started");
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn an_approval_timeout_out_of_range_is_an_invalid_option() {
    let runs = Counter::default();
    let registry = asking_registry(echo_tool("workspace.write", &runs), SlowPerson(None));
    for bad in [-1_i64, 2_147_483_648] {
        let options = ToolCallOptions::from_json(&json!({ "approvalTimeout": bad })).unwrap();
        let result = write(&registry, options).await;
        assert_eq!(result.error_code(), Some(codes::TOOL_INVALID_OPTIONS));
    }
    let longest = Duration::from_millis(2_147_483_647);
    let result = write(
        &registry,
        ToolCallOptions::default().with_approval_timeout(longest + Duration::from_millis(1)),
    )
    .await;
    assert_eq!(result.error_code(), Some(codes::TOOL_INVALID_OPTIONS));
}
