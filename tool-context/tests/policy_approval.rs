//! Policy decisions, interaction handlers and the approval queue.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Counter, Recorder, echo_tool, request};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_context::approval::MAX_PENDING_APPROVALS;
use tool_context::{
    ApprovalDecision, ApprovalQueue, ApprovalQueueConfig, BoxError, FixedPolicy,
    InteractionOutcome, InteractionRequest, PolicyDecision, PolicyRequest, ReadOnlyOrDirectLocal,
    Tool, ToolCallOptions, ToolInteraction, ToolPolicy, ToolRegistry,
};
use tool_durable_operations::ManualClock;
use tool_protocol::approval::ApprovalCall;
use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallMode, ToolCallSource, ToolDefinition, codes,
};

fn writer(counter: &Counter) -> Tool {
    echo_tool("workspace.write", counter).destructive()
}

struct Failing;

#[async_trait::async_trait]
impl ToolPolicy for Failing {
    async fn decide(&self, _request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        Err("policy store unavailable".into())
    }
}

struct Panicking;

#[async_trait::async_trait]
impl ToolPolicy for Panicking {
    async fn decide(&self, _request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        panic!("policy bug")
    }
}

/// Waits for the call's cancellation token and then answers allow (it must never be used).
struct WaitsForCancellation;

#[async_trait::async_trait]
impl ToolPolicy for WaitsForCancellation {
    async fn decide(&self, request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        request.cancellation.cancelled().await;
        Ok(PolicyDecision::Allow)
    }
}

/// Answers every interaction with a fixed outcome and counts the questions.
struct Answer(InteractionOutcome, Counter);

#[async_trait::async_trait]
impl ToolInteraction for Answer {
    async fn interact(
        &self,
        _request: &InteractionRequest,
        _cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        self.1.bump();
        Ok(self.0.clone())
    }
}

async fn call_with_policy(policy: impl ToolPolicy + 'static) -> tool_protocol::ToolCallResult {
    let counter = Counter::default();
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .policy(policy)
        .build()
        .unwrap();
    let result = registry
        .call_tool(
            request("workspace.write", json!({"path": "a"})),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(counter.get(), 0);
    result
}

#[tokio::test]
async fn deny_ask_and_policy_failures_have_their_codes() {
    let denied = call_with_policy(FixedPolicy(PolicyDecision::Deny))
        .await
        .error
        .unwrap();
    assert_eq!(
        (denied.code.as_str(), denied.retryable),
        (codes::TOOL_POLICY_DENIED, Some(false))
    );
    assert_eq!(
        denied.message,
        "Tool \"workspace.write\" was denied by policy"
    );
    assert_eq!(denied.details, Some(json!({"decidedBy": "policy"})));
    let ask = call_with_policy(FixedPolicy(PolicyDecision::Ask))
        .await
        .error
        .unwrap();
    assert_eq!(
        (ask.code.as_str(), ask.retryable),
        (codes::TOOL_APPROVAL_REQUIRED, Some(true))
    );
    assert_eq!(
        ask.message,
        "Approval required for tool \"workspace.write\""
    );
    let failed = call_with_policy(Failing).await.error.unwrap();
    assert_eq!(
        (failed.code.as_str(), failed.retryable),
        (codes::TOOL_POLICY_FAILED, Some(true))
    );
    assert_eq!(failed.message, "policy store unavailable");
    assert_eq!(
        call_with_policy(Panicking).await.error_code(),
        Some(codes::TOOL_POLICY_FAILED)
    );
}

#[tokio::test]
async fn interactions_answer_ask_and_call_options_override_the_registry() {
    let counter = Counter::default();
    let asked = Counter::default();
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .policy(FixedPolicy(PolicyDecision::Ask))
        .interaction(Answer(InteractionOutcome::Denied, asked.clone()))
        .build()
        .unwrap();
    let denied = registry
        .call_tool(
            request("workspace.write", json!({"path": "a"})),
            ToolCallOptions::default(),
        )
        .await;
    let person = denied.error.unwrap();
    assert_eq!(person.code, codes::TOOL_POLICY_DENIED);
    assert_eq!(
        person.message,
        "Tool \"workspace.write\" was denied by a person asked for approval"
    );
    assert_eq!(person.details, Some(json!({"decidedBy": "person"})));
    let approve = Arc::new(Answer(InteractionOutcome::Approved, asked.clone()));
    let approved = registry
        .call_tool(
            request("workspace.write", json!({"path": "a"})),
            ToolCallOptions::default().with_interaction(approve),
        )
        .await;
    assert!(!approved.is_error());
    assert_eq!((asked.get(), counter.get()), (2, 1));
    // A denial that says why (the host refusing on a person's behalf) keeps the code and the
    // retryable flag and carries its message and details.
    let details = json!({"reason": "asking page closed", "decidedBy": "host"});
    let explained = Arc::new(Answer(
        InteractionOutcome::DeniedWith(Box::new(tool_context::Denial::new(
            "The approval expired: the page that asked for it closed.",
            details.as_object().unwrap().clone(),
        ))),
        asked.clone(),
    ));
    let refused = registry
        .call_tool(
            request("workspace.write", json!({"path": "a"})),
            ToolCallOptions::default().with_interaction(explained),
        )
        .await
        .error
        .unwrap();
    assert_eq!(
        (refused.code.as_str(), refused.retryable),
        (codes::TOOL_POLICY_DENIED, Some(false))
    );
    assert_eq!(
        refused.message,
        "The approval expired: the page that asked for it closed."
    );
    assert_eq!(refused.details, Some(details));
    assert_eq!(
        (asked.get(), counter.get()),
        (3, 1),
        "the handler never ran"
    );
    // Invalid arguments never reach the interaction (strict validation runs first).
    let invalid = registry
        .call_tool(
            request("workspace.write", json!({"path": 1})),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(invalid.error_code(), Some(codes::TOOL_VALIDATION_FAILED));
    assert_eq!(asked.get(), 3);
    // Allow and deny never ask.
    for decision in [PolicyDecision::Allow, PolicyDecision::Deny] {
        let registry = ToolRegistry::builder()
            .tool(writer(&counter))
            .policy(FixedPolicy(decision))
            .interaction(Answer(InteractionOutcome::Approved, asked.clone()))
            .build()
            .unwrap();
        registry
            .call_tool(
                request("workspace.write", json!({"path": "a"})),
                ToolCallOptions::default(),
            )
            .await;
    }
    assert_eq!(asked.get(), 3);
}

#[tokio::test]
async fn policies_see_the_call_token_and_cancellation_ends_the_wait() {
    let counter = Counter::default();
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .policy(WaitsForCancellation)
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        canceller.cancel();
    });
    let result = registry
        .call_tool(
            request("workspace.write", json!({"path": "a"})),
            ToolCallOptions::default().with_cancellation(token),
        )
        .await;
    let error = result.error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.retryable),
        (codes::TOOL_CANCELLED, Some(true))
    );
    assert_eq!(
        error.message,
        "Tool call cancelled while waiting for policy."
    );
    assert_eq!(counter.get(), 0);
}

#[tokio::test]
async fn model_and_mcp_mutations_never_pass_without_an_explicit_answer() {
    let counter = Counter::default();
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .tool(echo_tool("workspace.read", &counter).read_only())
        .tool(echo_tool("workspace.rename", &counter))
        .build()
        .unwrap();
    let contexts = [
        ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Agent),
        ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Direct),
        ToolCallContext::new(ToolCallSource::Mcp, ToolCallMode::Direct),
        ToolCallContext::new(ToolCallSource::Iframe, ToolCallMode::Direct),
        ToolCallContext::new(ToolCallSource::Local, ToolCallMode::Agent),
        ToolCallContext::default(),
    ];
    for tool in ["workspace.write", "workspace.rename"] {
        for context in &contexts {
            let options = ToolCallOptions::default().with_context(context.clone());
            let result = registry
                .call_tool(request(tool, json!({"path": "a"})), options)
                .await;
            assert_eq!(
                result.error_code(),
                Some(codes::TOOL_APPROVAL_REQUIRED),
                "{tool} {context:?}"
            );
        }
        let model = ModelToolCall {
            id: None,
            name: tool.into(),
            arguments: Some(common::object(json!({"path": "a"}))),
        };
        let result = registry
            .execute_model_tool_call(model, ToolCallOptions::default())
            .await;
        assert_eq!(result.error_code(), Some(codes::TOOL_APPROVAL_REQUIRED));
    }
    assert_eq!(counter.get(), 0);
    let local = ToolCallOptions::default().with_context(ToolCallContext::new(
        ToolCallSource::Local,
        ToolCallMode::Direct,
    ));
    assert!(
        !registry
            .call_tool(request("workspace.write", json!({"path": "a"})), local)
            .await
            .is_error()
    );
    let read = registry
        .call_tool(
            request("workspace.read", json!({"path": "a"})),
            ToolCallOptions::default(),
        )
        .await;
    assert!(!read.is_error());
    assert_eq!(counter.get(), 2);
    // A tool may declare a stricter default, which the standard policy honours even for local calls.
    let locked = ToolRegistry::builder()
        .tool(echo_tool("t", &counter).default_policy(PolicyDecision::Deny))
        .build()
        .unwrap();
    let local = ToolCallOptions::default().with_context(ToolCallContext::new(
        ToolCallSource::Local,
        ToolCallMode::Direct,
    ));
    assert_eq!(
        locked
            .call_tool(request("t", json!({"path": "a"})), local)
            .await
            .error_code(),
        Some(codes::TOOL_POLICY_DENIED)
    );
}

async fn next_pending(queue: &ApprovalQueue, count: usize) -> tool_context::ApprovalSnapshot {
    let mut updates = queue.subscribe();
    updates
        .wait_for(|pending| pending.len() >= count)
        .await
        .unwrap()
        .clone()
}

#[tokio::test]
async fn an_ask_policy_call_is_approved_from_another_task() {
    let counter = Counter::default();
    let queue = ApprovalQueue::with_config(ApprovalQueueConfig {
        safe_argument_names: vec!["path".into()],
        ..ApprovalQueueConfig::default()
    });
    let write_file = Tool::new(
        ToolDefinition::new(
            "workspace.write",
            "Writes a file.",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "source": {"type": "string"}}}),
        ),
        {
            let counter = counter.clone();
            move |_: Value, _: tool_context::ToolInvocation| {
                let counter = counter.clone();
                async move {
                    counter.bump();
                    Ok::<_, tool_protocol::ToolCallError>(())
                }
            }
        },
    );
    let registry = ToolRegistry::builder()
        .tool(write_file)
        .policy(ReadOnlyOrDirectLocal)
        .interaction(queue.clone())
        .build()
        .unwrap();
    let call = {
        let registry = registry.clone();
        tokio::spawn(async move {
            let model = ModelToolCall {
                id: Some("call_9".into()),
                name: "workspace.write".into(),
                arguments: Some(common::object(
                    json!({"path": "index.html", "source": "SECRET"}),
                )),
            };
            registry
                .execute_model_tool_call(model, ToolCallOptions::default())
                .await
        })
    };
    let pending = next_pending(&queue, 1).await;
    let snapshot = &pending[0];
    assert_eq!(snapshot.id, "call_9-0");
    assert_eq!(snapshot.argument_keys, ["path", "source"]);
    assert_eq!(
        snapshot.safe_argument_preview.as_deref(),
        Some("path: index.html")
    );
    assert_eq!(snapshot.source, ToolCallSource::Model);
    assert_eq!(snapshot.mode, Some(ToolCallMode::Agent));
    assert_eq!(snapshot.description, "Writes a file.");
    assert!(
        !serde_json::to_string(&*pending).unwrap().contains("SECRET"),
        "the queue never stores raw arguments"
    );
    assert!(queue.resolve("call_9-0", ApprovalDecision::Allow));
    assert!(
        !queue.resolve("call_9-0", ApprovalDecision::Deny),
        "a settled id is a no-op"
    );
    let result = call.await.unwrap();
    assert!(!result.is_error());
    assert_eq!(counter.get(), 1);
    assert!(queue.snapshot().is_empty());
}

#[tokio::test]
async fn approvals_cancelled_or_timed_out_while_pending_deny_and_leave_the_queue() {
    let counter = Counter::default();
    let queue = ApprovalQueue::new();
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .interaction(queue.clone())
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let cancelled = {
        let registry = registry.clone();
        let token = token.clone();
        tokio::spawn(async move {
            registry
                .call_tool(
                    request("workspace.write", json!({"path": "a"})),
                    ToolCallOptions::default().with_cancellation(token),
                )
                .await
        })
    };
    next_pending(&queue, 1).await;
    token.cancel();
    let error = cancelled.await.unwrap().error.unwrap();
    assert_eq!(error.code, codes::TOOL_CANCELLED);
    assert_eq!(
        error.message,
        "Tool call cancelled while waiting for interaction."
    );
    assert!(queue.snapshot().is_empty());
    let timed_out = registry
        .call_tool(
            request("workspace.write", json!({"path": "a"})),
            ToolCallOptions::default().with_timeout_ms(30),
        )
        .await;
    assert_eq!(timed_out.error_code(), Some(codes::TOOL_TIMEOUT));
    assert!(queue.snapshot().is_empty());
    // Dropping a waiting call removes its entry too.
    let dropped = {
        let registry = registry.clone();
        tokio::spawn(async move {
            registry
                .call_tool(
                    request("workspace.write", json!({"path": "a"})),
                    ToolCallOptions::default(),
                )
                .await
        })
    };
    next_pending(&queue, 1).await;
    dropped.abort();
    let mut updates = queue.subscribe();
    updates
        .wait_for(|pending| pending.is_empty())
        .await
        .unwrap();
    assert_eq!(counter.get(), 0);
}

#[tokio::test]
async fn deny_all_denies_every_pending_call() {
    let counter = Counter::default();
    let queue = ApprovalQueue::new();
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .interaction(queue.clone())
        .build()
        .unwrap();
    let calls: Vec<_> = (0..3)
        .map(|n| {
            let registry = registry.clone();
            tokio::spawn(async move {
                registry
                    .call_tool(
                        request("workspace.write", json!({"path": "a"})).with_id(format!("c{n}")),
                        ToolCallOptions::default(),
                    )
                    .await
            })
        })
        .collect();
    next_pending(&queue, 3).await;
    assert_eq!(queue.deny_all(), 3);
    for call in calls {
        assert_eq!(
            call.await.unwrap().error_code(),
            Some(codes::TOOL_POLICY_DENIED)
        );
    }
    assert!(queue.snapshot().is_empty());
    assert_eq!(counter.get(), 0);
}

fn approval_call(id: Option<tool_protocol::ToolCallId>, arguments: &Value) -> ApprovalCall<'_> {
    ApprovalCall {
        tool_call_id: id,
        name: "t",
        arguments: arguments.as_object(),
        ..ApprovalCall::default()
    }
}

#[tokio::test]
async fn queue_ids_are_always_suffixed_and_the_list_is_newest_first() {
    let clock = ManualClock::new(1_700);
    let queue = ApprovalQueue::with_config(ApprovalQueueConfig {
        id_prefix: "ask".into(),
        clock: Arc::new(clock),
        ..ApprovalQueueConfig::default()
    });
    let arguments = json!({});
    let ids: Vec<Option<tool_protocol::ToolCallId>> = vec![
        Some("x-0".into()),
        Some("x".into()),
        Some("x".into()),
        Some(7u64.into()),
        None,
    ];
    let token = CancellationToken::new();
    let waiters: Vec<_> = ids
        .into_iter()
        .map(|id| {
            let queue = queue.clone();
            let token = token.clone();
            let arguments = arguments.clone();
            tokio::spawn(async move { queue.request(approval_call(id, &arguments), &token).await })
        })
        .collect();
    let snapshot = next_pending(&queue, 5).await;
    let sorted: Vec<String> = snapshot.iter().map(|entry| entry.id.clone()).collect();
    // Spawned requests may enqueue in any order, but every id is `<call id or prefix-ms>-<seq>`.
    let mut bases: Vec<String> = sorted
        .iter()
        .map(|id| id.rsplit_once('-').unwrap().0.to_owned())
        .collect();
    bases.sort();
    assert_eq!(bases, ["7", "ask-1700", "x", "x", "x-0"]);
    let mut sequences: Vec<u64> = sorted
        .iter()
        .map(|id| id.rsplit_once('-').unwrap().1.parse().unwrap())
        .collect();
    sequences.sort_unstable();
    assert_eq!(sequences, [0, 1, 2, 3, 4]);
    assert!(snapshot[0].id.ends_with("-4"), "newest first");
    assert_eq!(snapshot[0].created_at, 1_700);
    assert_eq!(queue.close(), 5);
    for waiter in waiters {
        assert_eq!(waiter.await.unwrap(), ApprovalDecision::Deny);
    }
    assert_eq!(
        queue
            .request(approval_call(None, &arguments), &CancellationToken::new())
            .await,
        ApprovalDecision::Deny,
        "closed queues deny"
    );
}

#[tokio::test]
async fn already_cancelled_requests_are_denied_without_queueing() {
    let queue = ApprovalQueue::new();
    let updates = queue.subscribe();
    let token = CancellationToken::new();
    token.cancel();
    let arguments = json!({"path": "a"});
    assert_eq!(
        queue
            .request(approval_call(Some("a".into()), &arguments), &token)
            .await,
        ApprovalDecision::Deny
    );
    assert!(!updates.has_changed().unwrap());
    assert!(queue.snapshot().is_empty());
    assert!(!queue.resolve("a-0", ApprovalDecision::Allow));
}

#[tokio::test]
async fn the_pending_list_is_bounded() {
    let queue = ApprovalQueue::new();
    let token = CancellationToken::new();
    let arguments = json!({});
    let waiters: Vec<_> = (0..MAX_PENDING_APPROVALS)
        .map(|_| {
            let queue = queue.clone();
            let token = token.clone();
            let arguments = arguments.clone();
            tokio::spawn(
                async move { queue.request(approval_call(None, &arguments), &token).await },
            )
        })
        .collect();
    next_pending(&queue, MAX_PENDING_APPROVALS).await;
    assert_eq!(
        queue.request(approval_call(None, &arguments), &token).await,
        ApprovalDecision::Deny,
        "one over the bound is denied"
    );
    assert_eq!(queue.snapshot().len(), MAX_PENDING_APPROVALS);
    let first = queue.snapshot().last().unwrap().id.clone();
    assert!(queue.resolve(&first, ApprovalDecision::Allow));
    assert_eq!(queue.deny_all(), MAX_PENDING_APPROVALS - 1);
    let decisions: Vec<_> = futures::future::join_all(waiters)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        decisions
            .iter()
            .filter(|decision| **decision == ApprovalDecision::Allow)
            .count(),
        1
    );
    assert!(queue.snapshot().is_empty());
}

#[tokio::test]
async fn an_approval_recorder_sees_the_ask_before_the_handler() {
    let recorder = Recorder::default();
    let counter = Counter::default();
    let queue = ApprovalQueue::new();
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .interaction(queue.clone())
        .observer(recorder.clone())
        .build()
        .unwrap();
    let call = {
        let registry = registry.clone();
        tokio::spawn(async move {
            registry
                .call_tool(
                    request("workspace.write", json!({"path": "a"})),
                    ToolCallOptions::default(),
                )
                .await
        })
    };
    let pending = next_pending(&queue, 1).await;
    assert_eq!(recorder.events().len(), 1, "started, still waiting");
    assert_eq!(counter.get(), 0);
    queue.resolve(&pending[0].id, ApprovalDecision::Deny);
    assert_eq!(
        call.await.unwrap().error_code(),
        Some(codes::TOOL_POLICY_DENIED)
    );
}

fn narrowed(arguments: Value) -> InteractionOutcome {
    InteractionOutcome::ApprovedWithChanges(Box::new(tool_context::ApprovedChanges {
        arguments: arguments.as_object().unwrap().clone(),
        note: "Approved with changes: 1 of 2 hunks applied.".into(),
    }))
}

fn model_options(key: Option<&str>) -> ToolCallOptions {
    let options = ToolCallOptions::default().with_context(ToolCallContext::new(
        ToolCallSource::Model,
        ToolCallMode::Agent,
    ));
    match key {
        Some(key) => options.with_idempotency_key(key),
        None => options,
    }
}

#[tokio::test]
async fn a_narrowed_approval_runs_the_approved_arguments_and_says_so() {
    let (counter, asked) = (Counter::default(), Counter::default());
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .policy(ReadOnlyOrDirectLocal)
        .interaction(Answer(narrowed(json!({"path": "narrowed"})), asked.clone()))
        .build()
        .unwrap();
    let sent = || request("workspace.write", json!({"path": "as sent"}));
    let result = registry
        .call_tool(sent(), model_options(Some("op-1")))
        .await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.structured_content, Some(json!({"path": "narrowed"})));
    let text = tool_protocol::stringify_tool_content(&result.content);
    assert!(text.contains("1 of 2 hunks applied"), "{text}");
    // The operation is the request as sent: its retry replays the narrowed result without
    // asking again (the handler ran once, and the replay executes nothing).
    let replay = registry
        .call_tool(sent(), model_options(Some("op-1")))
        .await;
    assert_eq!(replay.structured_content, Some(json!({"path": "narrowed"})));
    assert!(replay.is_replay());
    assert_eq!((counter.get(), asked.get()), (1, 1));
}

#[tokio::test]
async fn narrowed_arguments_that_break_the_schema_never_reach_the_handler() {
    let counter = Counter::default();
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .policy(ReadOnlyOrDirectLocal)
        .interaction(Answer(narrowed(json!({"path": ""})), Counter::default()))
        .build()
        .unwrap();
    let result = registry
        .call_tool(
            request("workspace.write", json!({"path": "a"})),
            model_options(None),
        )
        .await;
    assert_eq!(
        result.error.as_ref().map(|e| e.code.as_str()),
        Some(codes::TOOL_VALIDATION_FAILED),
        "{result:?}"
    );
    assert_eq!(counter.get(), 0);
}

/// Issue 39, defect 3: a call that times out while a person has not answered yet never started
/// its handler, and says so (a timeout after the handler started still says `detached`, see
/// `timeout_cancel.rs`).
#[tokio::test]
async fn a_timeout_while_waiting_for_approval_reports_that_the_handler_never_started() {
    let counter = Counter::default();
    let queue = ApprovalQueue::new();
    let registry = ToolRegistry::builder()
        .tool(writer(&counter))
        .interaction(queue.clone())
        .build()
        .unwrap();
    let timed_out = registry
        .call_tool(
            request("workspace.write", json!({"path": "a"})),
            ToolCallOptions::default().with_timeout_ms(30),
        )
        .await;
    let error = timed_out.error.unwrap();
    assert_eq!(error.code, codes::TOOL_TIMEOUT);
    assert_eq!(error.retryable, Some(true));
    assert_eq!(
        error.details,
        Some(json!({"timeoutMs": 30, "executionState": "not-started"}))
    );
    assert_eq!(counter.get(), 0);

    // The same for a policy that is still deciding.
    let deciding = ToolRegistry::builder()
        .tool(writer(&counter))
        .policy(WaitsForCancellation)
        .build()
        .unwrap();
    let timed_out = deciding
        .call_tool(
            request("workspace.write", json!({"path": "a"})),
            ToolCallOptions::default().with_timeout_ms(10),
        )
        .await;
    assert_eq!(
        timed_out.error.unwrap().details,
        Some(json!({"timeoutMs": 10, "executionState": "not-started"}))
    );
    assert_eq!(counter.get(), 0);
}
