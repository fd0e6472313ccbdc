//! Idempotency: one shared execution per key and fingerprint, conflicts, interrupted owners,
//! retention and the entry bound.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Counter, request};
use serde_json::{Value, json};
use tool_context::idempotency::{
    DEFAULT_IDEMPOTENCY_MAX_ENTRIES, DEFAULT_IDEMPOTENCY_RETENTION_MS,
};
use tool_context::{
    AllowAll, IdempotencyClaim, IdempotencyClaimError, IdempotencyConfig, IdempotencyRegistry,
    Tool, ToolCallOptions, ToolInvocation, ToolRegistry,
};
use tool_durable_operations::ManualClock;
use tool_protocol::{ToolCallContext, ToolCallError, ToolCallResult, ToolDefinition, codes};

/// A mutation that counts its runs and sleeps `ms` (ignoring cancellation).
fn charge(counter: &Counter) -> Tool {
    let counter = counter.clone();
    Tool::new(
        ToolDefinition::new("charge", "Charges.", json!({"type": "object"})),
        move |arguments: Value, _call: ToolInvocation| {
            let counter = counter.clone();
            async move {
                let run = counter.bump();
                tokio::time::sleep(Duration::from_millis(arguments["ms"].as_u64().unwrap_or(0)))
                    .await;
                if arguments["fail"] == true {
                    return Err(
                        ToolCallError::new("CARD_DECLINED", "declined").with_retryable(false)
                    );
                }
                Ok::<_, ToolCallError>(json!({"run": run, "amount": arguments["amount"]}))
            }
        },
    )
}

fn registry(counter: &Counter, config: IdempotencyConfig) -> ToolRegistry {
    ToolRegistry::builder()
        .tool(charge(counter))
        .policy(AllowAll)
        .idempotency(config)
        .build()
        .unwrap()
}

fn keyed(key: &str) -> ToolCallOptions {
    ToolCallOptions::default().with_idempotency_key(key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_with_one_key_run_the_handler_once() {
    let counter = Counter::default();
    let registry = registry(&counter, IdempotencyConfig::default());
    let calls: Vec<_> = (0..1_000)
        .map(|n| {
            let registry = registry.clone();
            tokio::spawn(async move {
                registry
                    .call_tool(
                        request("charge", json!({"amount": 5, "ms": 20})).with_id(format!("c{n}")),
                        keyed("pay-1"),
                    )
                    .await
            })
        })
        .collect();
    for (n, call) in futures::future::join_all(calls)
        .await
        .into_iter()
        .enumerate()
    {
        let result = call.unwrap();
        assert_eq!(
            result.structured_content,
            Some(json!({"run": 1, "amount": 5})),
            "call {n}"
        );
        assert_eq!(
            result.tool_call_id,
            Some(format!("c{n}").into()),
            "each replay answers its own call id"
        );
    }
    assert_eq!(counter.get(), 1);
    assert_eq!(registry.idempotency().len(), 1);
}

#[tokio::test]
async fn a_different_fingerprint_is_a_conflict_and_key_order_is_not() {
    let counter = Counter::default();
    let registry = registry(&counter, IdempotencyConfig::default());
    let first = registry
        .call_tool(
            request("charge", json!({"amount": 5, "currency": "EUR"})),
            keyed("k"),
        )
        .await;
    assert!(!first.is_error());
    let reordered = registry
        .call_tool(
            request("charge", json!({"currency": "EUR", "amount": 5})),
            keyed("k"),
        )
        .await;
    assert_eq!(reordered.structured_content, first.structured_content);
    let conflict = registry
        .call_tool(
            request("charge", json!({"amount": 6, "currency": "EUR"})),
            keyed("k"),
        )
        .await;
    let error = conflict.error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.retryable),
        (codes::TOOL_IDEMPOTENCY_CONFLICT, Some(false))
    );
    assert_eq!(
        error.message,
        "Idempotency key was already used for a different \"charge\" operation."
    );
    assert_eq!(counter.get(), 1);
}

#[tokio::test]
async fn keys_are_scoped_per_session_and_failures_replay_too() {
    let counter = Counter::default();
    let registry = registry(&counter, IdempotencyConfig::default());
    let in_session =
        |session: &str| keyed("k").with_context(ToolCallContext::default().with_session(session));
    registry
        .call_tool(request("charge", json!({"amount": 1})), in_session("a"))
        .await;
    registry
        .call_tool(request("charge", json!({"amount": 1})), in_session("b"))
        .await;
    registry
        .call_tool(request("charge", json!({"amount": 1})), keyed("k"))
        .await;
    assert_eq!(counter.get(), 3);
    let declined = registry
        .call_tool(request("charge", json!({"fail": true})), keyed("decline"))
        .await;
    let replayed = registry
        .call_tool(request("charge", json!({"fail": true})), keyed("decline"))
        .await;
    assert_eq!(declined.error_code(), Some("CARD_DECLINED"));
    assert_eq!(replayed.error, declined.error);
    assert_eq!(counter.get(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_owner_replays_as_aborted_never_as_success() {
    let counter = Counter::default();
    let registry = registry(&counter, IdempotencyConfig::default());
    let arguments = json!({"amount": 9, "ms": 1_000});
    let joiner = {
        let registry = registry.clone();
        let arguments = arguments.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            registry
                .call_tool(request("charge", arguments), keyed("slow"))
                .await
        })
    };
    let owner = registry
        .call_tool(
            request("charge", arguments.clone()),
            keyed("slow").with_timeout_ms(100),
        )
        .await;
    assert_eq!(owner.error_code(), Some(codes::TOOL_TIMEOUT));
    let joined = joiner.await.unwrap().error.unwrap();
    assert_eq!(
        (joined.code.as_str(), joined.retryable),
        (codes::TOOL_EXECUTION_ABORTED, Some(true))
    );
    // Even after the detached handler finishes successfully, a retry never sees success.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let retry = registry
        .call_tool(request("charge", arguments), keyed("slow"))
        .await;
    assert_eq!(retry.error_code(), Some(codes::TOOL_EXECUTION_ABORTED));
    assert_eq!(counter.get(), 1);
    // A joiner's own timeout is its own: the shared execution is not affected.
    let owner = {
        let registry = registry.clone();
        tokio::spawn(async move {
            registry
                .call_tool(request("charge", json!({"ms": 500})), keyed("other"))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(1)).await;
    let impatient = registry
        .call_tool(
            request("charge", json!({"ms": 500})),
            keyed("other").with_timeout_ms(10),
        )
        .await;
    assert_eq!(impatient.error_code(), Some(codes::TOOL_TIMEOUT));
    assert!(!owner.await.unwrap().is_error());
}

#[tokio::test]
async fn settled_entries_expire_after_retention() {
    let counter = Counter::default();
    let clock = ManualClock::new(1_000_000);
    let config = IdempotencyConfig {
        clock: Arc::new(clock.clone()),
        ..IdempotencyConfig::default()
    };
    assert_eq!(config.retention_ms, DEFAULT_IDEMPOTENCY_RETENTION_MS);
    let registry = registry(&counter, config);
    registry
        .call_tool(request("charge", json!({})), keyed("k"))
        .await;
    clock.advance(Duration::from_millis(DEFAULT_IDEMPOTENCY_RETENTION_MS - 1));
    registry
        .call_tool(request("charge", json!({})), keyed("k"))
        .await;
    assert_eq!(
        counter.get(),
        1,
        "still retained one millisecond before expiry"
    );
    clock.advance(Duration::from_millis(1));
    assert_eq!(registry.idempotency().len(), 0);
    registry
        .call_tool(request("charge", json!({})), keyed("k"))
        .await;
    assert_eq!(counter.get(), 2, "expired exactly at the retention edge");
}

#[tokio::test]
async fn settled_entries_are_bounded_and_least_recently_used_go_first() {
    let idempotency = IdempotencyRegistry::default();
    let settle = |key: &str| match idempotency.claim(key, "f").unwrap() {
        IdempotencyClaim::Owner(ticket) => ticket.settle(ToolCallResult::empty_success()),
        other => panic!("expected owner, got {other:?}"),
    };
    for n in 0..DEFAULT_IDEMPOTENCY_MAX_ENTRIES {
        settle(&format!("k{n}"));
    }
    assert_eq!(idempotency.len(), DEFAULT_IDEMPOTENCY_MAX_ENTRIES);
    // Touch k0 so that k1 is the least recently used.
    assert!(matches!(
        idempotency.claim("k0", "f"),
        Ok(IdempotencyClaim::Replay(_))
    ));
    settle("one-over");
    assert_eq!(idempotency.len(), DEFAULT_IDEMPOTENCY_MAX_ENTRIES);
    assert!(matches!(
        idempotency.claim("k0", "f"),
        Ok(IdempotencyClaim::Replay(_))
    ));
    assert!(
        matches!(idempotency.claim("k1", "f"), Ok(IdempotencyClaim::Owner(_))),
        "k1 was evicted"
    );
}

#[tokio::test]
async fn pending_entries_are_never_evicted() {
    let idempotency = IdempotencyRegistry::new(IdempotencyConfig {
        max_entries: 2,
        ..IdempotencyConfig::default()
    })
    .unwrap();
    let tickets: Vec<_> = (0..3)
        .map(
            |n| match idempotency.claim(&format!("p{n}"), "f").unwrap() {
                IdempotencyClaim::Owner(ticket) => ticket,
                other => panic!("{other:?}"),
            },
        )
        .collect();
    assert_eq!(
        idempotency.len(),
        3,
        "three pending entries over a bound of two"
    );
    let Ok(IdempotencyClaim::Replay(waiter)) = idempotency.claim("p0", "f") else {
        panic!("expected replay")
    };
    assert!(matches!(
        idempotency.claim("p0", "g"),
        Ok(IdempotencyClaim::Conflict)
    ));
    let mut tickets = tickets.into_iter();
    drop(tickets.next());
    let replay = waiter.wait().await;
    assert_eq!(
        replay.error_code(),
        Some(codes::TOOL_EXECUTION_ABORTED),
        "a dropped owner settles as aborted"
    );
    for ticket in tickets {
        ticket.settle(ToolCallResult::empty_success());
    }
    assert_eq!(idempotency.len(), 2);
    idempotency.clear("p2");
    assert!(matches!(
        idempotency.claim("p2", "g"),
        Ok(IdempotencyClaim::Owner(_))
    ));
}

#[test]
fn blank_keys_and_fingerprints_are_refused_and_never_registered() {
    let idempotency = IdempotencyRegistry::default();
    for (key, fingerprint, refused) in [
        ("", "f", IdempotencyClaimError::BlankKey),
        (" \t\n", "f", IdempotencyClaimError::BlankKey),
        ("k", "", IdempotencyClaimError::BlankFingerprint),
        ("k", "  ", IdempotencyClaimError::BlankFingerprint),
    ] {
        assert_eq!(
            idempotency.claim(key, fingerprint).unwrap_err(),
            refused,
            "{key:?} / {fingerprint:?}"
        );
    }
    assert!(idempotency.is_empty());
    assert_eq!(
        IdempotencyClaimError::BlankKey.to_string(),
        "Idempotency key must be a non-empty string."
    );
    assert_eq!(
        IdempotencyClaimError::BlankFingerprint.to_string(),
        "Idempotency fingerprint must be a non-empty string."
    );
    assert!(matches!(
        idempotency.claim(" k ", "f"),
        Ok(IdempotencyClaim::Owner(_))
    ));
}
