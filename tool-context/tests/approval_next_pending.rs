//! `ApprovalQueue::next_pending`: a CLI-style loop takes approvals one at a time, in arrival
//! order, each once, without missing one that arrives while it starts waiting.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{Counter, echo_tool, object};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tool_context::{
    ApprovalDecision, ApprovalQueue, ReadOnlyOrDirectLocal, ToolCallOptions, ToolRegistry,
};
use tool_protocol::approval::ApprovalCall;
use tool_protocol::{ModelToolCall, ToolCallResult, codes};

/// Long enough for any scheduling, short enough to fail a hung test quickly.
const WAIT: Duration = Duration::from_secs(10);

async fn take(queue: &ApprovalQueue) -> tool_protocol::ToolApprovalSnapshot {
    tokio::time::timeout(WAIT, queue.next_pending())
        .await
        .expect("an approval within the wait")
        .expect("the queue is open")
}

fn registry(queue: &ApprovalQueue, counter: &Counter) -> ToolRegistry {
    // A destructive tool called by a model asks first (ReadOnlyOrDirectLocal).
    ToolRegistry::builder()
        .tool(echo_tool("workspace.write", counter).destructive())
        .policy(ReadOnlyOrDirectLocal)
        .interaction(queue.clone())
        .build()
        .unwrap()
}

fn spawn_call(registry: &ToolRegistry, id: &str) -> tokio::task::JoinHandle<ToolCallResult> {
    let registry = registry.clone();
    let call = ModelToolCall::new(id, "workspace.write", object(json!({"path": id})));
    tokio::spawn(async move {
        registry
            .execute_model_tool_call(call, ToolCallOptions::default())
            .await
    })
}

#[tokio::test]
async fn a_waiting_call_is_yielded_answered_and_runs_then_the_next_call_is_yielded() {
    let counter = Counter::default();
    let queue = ApprovalQueue::new();
    let registry = registry(&queue, &counter);

    let first = spawn_call(&registry, "call_1");
    let approval = take(&queue).await;
    assert_eq!(
        (approval.id.as_str(), approval.name.as_str()),
        ("call_1-0", "workspace.write")
    );
    assert_eq!(counter.get(), 0, "nothing runs before the answer");

    // A second call arrives while the first is still pending (taken, not answered).
    let second = spawn_call(&registry, "call_2");
    let next = take(&queue).await;
    assert_eq!(
        next.id, "call_2-1",
        "the taken approval is not handed out again"
    );
    assert_eq!(queue.snapshot().len(), 2, "taking is not answering");

    assert!(queue.resolve(&approval.id, ApprovalDecision::Allow));
    let result = first.await.unwrap();
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(counter.get(), 1, "the approved call ran");

    assert!(queue.resolve(&next.id, ApprovalDecision::Deny));
    let refused = second.await.unwrap();
    assert_eq!(refused.error_code(), Some(codes::TOOL_POLICY_DENIED));
    assert_eq!(counter.get(), 1, "the denied call did not run");
    assert!(queue.snapshot().is_empty());
}

#[tokio::test]
async fn a_loop_answers_concurrent_calls_in_arrival_order() {
    let counter = Counter::default();
    let queue = ApprovalQueue::new();
    let registry = registry(&queue, &counter);
    // Three concurrent calls, each queued before the next starts.
    let mut calls = Vec::new();
    let mut updates = queue.subscribe();
    for (index, id) in ["a", "b", "c"].into_iter().enumerate() {
        calls.push(spawn_call(&registry, id));
        tokio::time::timeout(WAIT, updates.wait_for(|pending| pending.len() == index + 1))
            .await
            .unwrap()
            .unwrap();
    }
    let answering = {
        let queue = queue.clone();
        tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(approval) = queue.next_pending().await {
                seen.push(approval.tool_call_id.map(|id| id.to_string()));
                queue.resolve(&approval.id, ApprovalDecision::Allow);
            }
            seen
        })
    };
    for call in calls {
        assert!(!call.await.unwrap().is_error());
    }
    assert_eq!(counter.get(), 3);
    queue.close();
    let seen = answering.await.unwrap();
    assert_eq!(
        seen,
        [
            Some("a".to_owned()),
            Some("b".to_owned()),
            Some("c".to_owned())
        ]
    );
}

#[tokio::test]
async fn oldest_first_and_approvals_settled_before_being_taken_are_skipped() {
    let queue = ApprovalQueue::new();
    let token = CancellationToken::new();
    let call = |name| ApprovalCall {
        name,
        ..ApprovalCall::default()
    };
    let first = queue.request(call("one"), &token);
    let dropped = queue.request(call("two"), &token);
    let third = queue.request(call("three"), &token);
    drop(dropped);
    assert_eq!(take(&queue).await.name, "one");
    assert_eq!(
        take(&queue).await.name,
        "three",
        "a dropped request is skipped"
    );
    // Both are still pending; nothing is left to hand out, so the next wait blocks.
    assert!(
        tokio::time::timeout(Duration::from_millis(20), queue.next_pending())
            .await
            .is_err()
    );
    assert_eq!(queue.deny_all(), 2);
    assert_eq!(first.await, ApprovalDecision::Deny);
    assert_eq!(third.await, ApprovalDecision::Deny);
}

#[tokio::test]
async fn a_dropped_wait_loses_nothing() {
    let queue = ApprovalQueue::new();
    let token = CancellationToken::new();
    {
        let mut waiting = Box::pin(queue.next_pending());
        assert!(futures::poll!(&mut waiting).is_pending());
    }
    let request = queue.request(
        ApprovalCall {
            name: "fs.delete",
            ..ApprovalCall::default()
        },
        &token,
    );
    // The approval arrived after the abandoned wait; a new wait gets it.
    let approval = take(&queue).await;
    assert_eq!(approval.name, "fs.delete");
    assert!(queue.resolve(&approval.id, ApprovalDecision::Allow));
    assert_eq!(request.await, ApprovalDecision::Allow);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_arriving_while_the_wait_starts_is_never_missed() {
    let queue = ApprovalQueue::new();
    let token = CancellationToken::new();
    for round in 0..300 {
        // Start the wait and the request at the same time on two threads.
        let waiter = {
            let queue = queue.clone();
            tokio::spawn(async move { queue.next_pending().await })
        };
        let requester = {
            let queue = queue.clone();
            let token = token.clone();
            tokio::spawn(async move {
                let call = ApprovalCall {
                    name: "t",
                    ..ApprovalCall::default()
                };
                queue.request(call, &token).await
            })
        };
        let approval = tokio::time::timeout(WAIT, waiter)
            .await
            .unwrap_or_else(|_| panic!("round {round}: the wait missed the approval"))
            .unwrap()
            .unwrap();
        assert!(queue.resolve(&approval.id, ApprovalDecision::Allow));
        assert_eq!(requester.await.unwrap(), ApprovalDecision::Allow);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_consumers_share_the_approvals_each_taken_once() {
    let queue = ApprovalQueue::new();
    let token = CancellationToken::new();
    let (taken_tx, mut taken_rx) = tokio::sync::mpsc::unbounded_channel();
    let consumers: Vec<_> = (0..2)
        .map(|_| {
            let queue = queue.clone();
            let taken = taken_tx.clone();
            tokio::spawn(async move {
                while let Some(approval) = queue.next_pending().await {
                    taken.send(approval.id).unwrap();
                }
            })
        })
        .collect();
    let names: Vec<String> = (0..20).map(|index| format!("tool.{index}")).collect();
    let waiting: Vec<_> = names
        .iter()
        .map(|name| {
            queue.request(
                ApprovalCall {
                    name,
                    ..ApprovalCall::default()
                },
                &token,
            )
        })
        .collect();
    let mut all = HashSet::new();
    for _ in 0..20 {
        let id = tokio::time::timeout(WAIT, taken_rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert!(all.insert(id.clone()), "{id} handed out twice");
    }
    assert_eq!(
        queue.close(),
        20,
        "taken approvals stay pending until answered"
    );
    for consumer in consumers {
        tokio::time::timeout(WAIT, consumer).await.unwrap().unwrap();
    }
    assert!(taken_rx.try_recv().is_err(), "nothing handed out twice");
    for decision in waiting {
        assert_eq!(decision.await, ApprovalDecision::Deny);
    }
}

#[tokio::test]
async fn closing_ends_a_waiting_loop() {
    let queue = ApprovalQueue::new();
    let waiting = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.next_pending().await })
    };
    tokio::task::yield_now().await;
    queue.close();
    assert!(
        tokio::time::timeout(WAIT, waiting)
            .await
            .unwrap()
            .unwrap()
            .is_none()
    );
    assert!(queue.next_pending().await.is_none(), "closed stays closed");
}
