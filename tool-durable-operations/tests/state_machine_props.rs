//! Property test of the state machine over random operation sequences on the memory backend:
//! every successful write bumps the revision by exactly one, the incarnation only changes
//! across a delete, settled records never change, and only the allowed edges are taken.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::json;
use tool_durable_operations::{
    ClaimRequest, ClaimStatus, DurableOperationStore, ManualClock, MemoryBackend, OperationRecord,
    OperationState, Resolution,
};

#[derive(Debug, Clone)]
enum Op {
    Claim { owner: u8, other_fingerprint: bool },
    Complete { owner: u8 },
    Fail { owner: u8 },
    MarkUnknown { owner: u8 },
    Resolve { completed: bool },
    Advance { ms: u64 },
    Prune,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..3, any::<bool>()).prop_map(|(owner, other_fingerprint)| Op::Claim {
            owner,
            other_fingerprint
        }),
        (0u8..3).prop_map(|owner| Op::Complete { owner }),
        (0u8..3).prop_map(|owner| Op::Fail { owner }),
        (0u8..3).prop_map(|owner| Op::MarkUnknown { owner }),
        any::<bool>().prop_map(|completed| Op::Resolve { completed }),
        (0u64..2_000).prop_map(|ms| Op::Advance { ms }),
        Just(Op::Prune),
    ]
}

const KEY: &str = "k";
const LEASE: Duration = Duration::from_millis(1_000);

fn allowed(before: Option<&OperationRecord>, after: Option<&OperationRecord>) -> bool {
    use OperationState::*;
    match (before, after) {
        (None, None) => true,
        (None, Some(a)) => a.state == Pending && a.revision == 1,
        (Some(b), None) => b.state != Pending,
        (Some(b), Some(a)) if b == a => true,
        (Some(b), Some(a)) if b.incarnation != a.incarnation => false,
        (Some(b), Some(a)) => {
            a.revision == b.revision + 1
                && matches!(
                    (b.state, a.state),
                    (Pending, _) | (Unknown, Completed) | (Unknown, Failed)
                )
        }
    }
}

async fn apply(
    store: &DurableOperationStore,
    clock: &ManualClock,
    fences: &mut [Option<tool_durable_operations::Fence>; 3],
    op: &Op,
) {
    let owner_name = |o: u8| format!("owner-{o}");
    match op {
        Op::Claim {
            owner,
            other_fingerprint,
        } => {
            let name = owner_name(*owner);
            let fingerprint = if *other_fingerprint { "fp-b" } else { "fp-a" };
            let request = ClaimRequest {
                key: KEY,
                fingerprint,
                owner_id: &name,
                lease: Some(LEASE),
            };
            if let Ok(claim) = store.claim(request).await
                && claim.status == ClaimStatus::Owner
            {
                fences[*owner as usize] = Some(claim.fence);
            }
        }
        Op::Complete { owner } | Op::Fail { owner } | Op::MarkUnknown { owner } => {
            let Some(fence) = fences[*owner as usize].clone() else {
                return;
            };
            let name = owner_name(*owner);
            let _ = match op {
                Op::Complete { .. } => store.complete(KEY, &name, json!(1), &fence).await,
                Op::Fail { .. } => store.fail(KEY, &name, "no", None, &fence).await,
                _ => store.mark_unknown(KEY, &name, "?", None, &fence).await,
            };
        }
        Op::Resolve { completed } => {
            if let Ok(Some(record)) = store.get(KEY).await {
                let resolution = if *completed {
                    Resolution::Completed {
                        result: json!(2),
                        reason: None,
                    }
                } else {
                    Resolution::Failed {
                        reason: "confirmed".into(),
                        result: None,
                    }
                };
                let _ = store
                    .resolve_unknown(KEY, "ops", resolution, &record.fence())
                    .await;
            }
        }
        Op::Advance { ms } => clock.advance(Duration::from_millis(*ms)),
        Op::Prune => {
            store.prune_before(store.now_ms()).await.unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_sequences_only_take_allowed_edges(ops in proptest::collection::vec(op(), 1..40)) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let clock = ManualClock::new(1_000);
            let store = DurableOperationStore::new(Arc::new(MemoryBackend::new())).with_clock(Arc::new(clock.clone()));
            let mut fences = [None, None, None];
            let mut before = None;
            for op in &ops {
                apply(&store, &clock, &mut fences, op).await;
                let after = store.get(KEY).await.unwrap();
                prop_assert!(allowed(before.as_ref(), after.as_ref()), "{op:?}: {before:?} -> {after:?}");
                if let Some(record) = &after {
                    prop_assert_eq!(record.lease_expires_at.is_some(), record.state == OperationState::Pending);
                }
                before = after;
            }
            Ok(())
        })?;
    }
}
