//! The durable layer under the in-memory idempotency registry (contract 2.12): an owner of the
//! in-memory entry claims the shared durable record before the handler runs and writes the
//! terminal outcome after the output checks, so a retry on any process sharing the store
//! replays, waits or asks for reconciliation instead of repeating the effect.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::Value;
use tokio::task::JoinHandle;
use tool_durable_operations::{
    Claim, ClaimRequest, ClaimStatus, DurableOperationError, DurableOperationStore, Fence,
    LeaseHeartbeat, LeaseLost, OperationRecord, OperationState, Settlement,
};
use tool_protocol::observability::{
    ObservabilityPolicy, sanitize_tool_call_diagnostic, sanitize_tool_call_diagnostic_reason,
};
use tool_protocol::{ToolCallError, ToolCallResult, codes};

use crate::failure::{
    SettledFailure, aborted, idempotency_conflict, idempotency_failed, idempotency_pending,
    idempotency_store_failed, idempotency_store_uncertain, idempotency_unknown,
};
use crate::idempotency::INTERRUPTED_EXECUTION_MESSAGE;

/// Default lease of a durable claim: 5 minutes.
pub const DEFAULT_DURABLE_LEASE_MS: u64 = 300_000;
/// Longest wait for an abort transition to `unknown`, when the lease is longer: 1 s.
pub const MAX_ABORT_TRANSITION_WAIT_MS: u64 = 1_000;

/// A store write running on its own task, so a caller that stops waiting never cancels it.
type StoreWrite = JoinHandle<Result<OperationRecord, DurableOperationError>>;

/// What a registry does with a keyed call whose record it reclaims after another owner's lease
/// expired (that owner died or stalled mid-run, so its effect may or may not have happened).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LeaseTakeover {
    /// Run the handler again under the new fence (contract 2.12's reclaim; the default). Safe
    /// when the effect checks its fence or is idempotent by itself.
    #[default]
    RunAgain,
    /// Mark the record `unknown` and answer `TOOL_IDEMPOTENCY_UNKNOWN` (reconcile before
    /// retrying) instead, unless the tool is read-only. For effects that cannot tell whether
    /// they already happened: a fleet host killed after its write never leads to a second one.
    MarkUnknown,
}

/// Reason stored when a reclaimed record is marked unknown ([`LeaseTakeover::MarkUnknown`]).
pub const TAKEN_OVER_REASON: &str = "the lease of the owner running this operation expired before it finished; its effect may or may not have happened";

/// The durable store, owner and lease a registry claims operations with.
#[derive(Debug, Clone)]
pub(crate) struct DurableLedger {
    pub(crate) store: Arc<DurableOperationStore>,
    pub(crate) owner_id: String,
    pub(crate) lease_ms: u64,
    pub(crate) diagnostics: ObservabilityPolicy,
    pub(crate) takeover: LeaseTakeover,
}

/// What a durable claim means for the call.
pub(crate) enum DurableClaim {
    /// This call owns the record: run the handler, then [`DurableLedger::settle`].
    Owner(Claim),
    /// The stored outcome to return instead of running the handler.
    Replayed(ToolCallResult),
}

impl DurableLedger {
    /// Claims `key` on its own task (the claim keeps running if the caller stops waiting).
    pub(crate) fn spawn_claim(&self, key: &str, fingerprint: &str) -> JoinHandle<ClaimResult> {
        let store = Arc::clone(&self.store);
        let (key, fingerprint, owner_id) = (
            key.to_owned(),
            fingerprint.to_owned(),
            self.owner_id.clone(),
        );
        let lease = Some(Duration::from_millis(self.lease_ms));
        tokio::spawn(async move {
            store
                .claim(ClaimRequest {
                    key: &key,
                    fingerprint: &fingerprint,
                    owner_id: &owner_id,
                    lease,
                })
                .await
        })
    }

    /// Maps a finished claim to the owner's claim, a replay or the coded error.
    pub(crate) fn interpret_claim(
        &self,
        key: &str,
        tool: &str,
        claimed: Result<ClaimResult, tokio::task::JoinError>,
    ) -> Result<DurableClaim, ToolCallError> {
        let claim = match claimed {
            Ok(Ok(claim)) => claim,
            Ok(Err(error)) => return Err(idempotency_store_failed(key, &error.to_string())),
            Err(_) => return Err(idempotency_store_failed(key, "the claim task panicked")),
        };
        match claim.status {
            ClaimStatus::Owner => Ok(DurableClaim::Owner(claim)),
            ClaimStatus::Pending => Err(idempotency_pending(
                &claim.record.owner_id,
                claim.record.lease_expires_at,
            )),
            ClaimStatus::Unknown => Err(idempotency_unknown(claim.record.reason.as_deref())),
            ClaimStatus::Conflict => Err(idempotency_conflict(tool)),
            ClaimStatus::Replay => self.replay(&claim.record).map(DurableClaim::Replayed),
        }
    }

    /// Whether an owner claim must not run: it reclaimed an expired lease (a fresh record has
    /// revision 1), the registry marks such records unknown, and the tool has an effect.
    pub(crate) fn refuses_takeover(&self, claim: &Claim, read_only: bool) -> bool {
        self.takeover == LeaseTakeover::MarkUnknown && claim.record.revision > 1 && !read_only
    }

    /// Marks a reclaimed record unknown (see [`LeaseTakeover::MarkUnknown`]) and returns what
    /// the caller and every later retry get: the coded unknown, or the store's failure.
    pub(crate) async fn mark_taken_over(&self, key: &str, claim: &Claim) -> ToolCallError {
        let settlement = Settlement::Unknown {
            reason: TAKEN_OVER_REASON.to_owned(),
            diagnostic: None,
        };
        match self.spawn_write(claim, settlement).await {
            Ok(Ok(_)) => idempotency_unknown(Some(TAKEN_OVER_REASON)),
            Ok(Err(error)) => idempotency_store_failed(key, &error.to_string()),
            Err(_) => idempotency_store_failed(key, "the settle task panicked"),
        }
    }

    /// Renews the owner's lease while the handler runs, so a handler that outlives one lease
    /// is not reclaimed and run again by another registry. A failed renewal marks the record
    /// unknown at once (the handler may still be running), with the sanitized diagnostic.
    pub(crate) fn keep_lease(&self, claim: Claim) -> LeaseHeartbeat {
        let lease = Some(Duration::from_millis(self.lease_ms));
        let (reason, diagnostic) = self.diagnostic(&ToolCallResult::failure(lease_lost_error()));
        let on_loss =
            Box::new(move |_: &DurableOperationError| (reason.clone(), diagnostic.clone()));
        LeaseHeartbeat::start_marking_unknown((*self.store).clone(), claim, lease, on_loss)
    }

    /// Stops the renewals and returns the claim to write with, waiting at most
    /// [`Self::abort_wait`] for a renewal in flight (a hung one counts as a lost lease).
    pub(crate) async fn stop_lease(&self, heartbeat: LeaseHeartbeat) -> Result<Claim, LeaseLost> {
        let latest = heartbeat.current();
        match tokio::time::timeout(self.abort_wait(), heartbeat.stop()).await {
            Ok(kept) => kept,
            Err(_) => Err(LeaseLost {
                claim: latest,
                error: DurableOperationError::Backend {
                    backend: self.store.backend().name(),
                    message: "the lease renewal did not finish in time".into(),
                },
                unknown: None,
            }),
        }
    }

    /// The lease could not be renewed while the handler ran: its outcome is unknown, whatever
    /// it returned; uncertain when the heartbeat could not store that either.
    pub(crate) fn lease_lost(&self, key: &str, lost: LeaseLost) -> ToolCallError {
        match lost.unknown {
            Some(record) => idempotency_unknown(record.reason.as_deref()),
            None => {
                let message = format!(
                    "the durable lease was lost while the tool ran: {}",
                    lost.error
                );
                idempotency_store_uncertain(key, &message)
            }
        }
    }

    /// The stored outcome of a completed or failed record: a completed result losslessly, a
    /// failure only as its sanitized projection. A completed record without a result is
    /// `unknown`; a failed one without a replayable failure (reconciled as failed with no
    /// evidence, or with evidence that is not a tool result) replays as that settled failure,
    /// saying who reconciled it and when, and that a retry needs a new key.
    fn replay(&self, record: &OperationRecord) -> Result<ToolCallResult, ToolCallError> {
        let unknown = || idempotency_unknown(record.reason.as_deref());
        let replayed = match record.state {
            OperationState::Completed => record
                .result
                .clone()
                .map(completed_result)
                .ok_or_else(unknown),
            OperationState::Failed => record
                .result
                .clone()
                .and_then(|stored| serde_json::from_value::<ToolCallResult>(stored).ok())
                .filter(ToolCallResult::is_error)
                .map(|failure| sanitize_tool_call_diagnostic(&failure, &self.diagnostics))
                .ok_or_else(|| {
                    idempotency_failed(&SettledFailure {
                        operation_key: &record.key,
                        reason: record.reason.as_deref(),
                        reconciled_by: record.reconciled_by.as_deref(),
                        reconciled_at: record.reconciled_at,
                    })
                }),
            OperationState::Pending | OperationState::Unknown => Err(unknown()),
        };
        replayed.map(|result| result.replayed(Some(record.updated_at)))
    }

    /// Writes the owner's terminal outcome on its own task.
    pub(crate) fn spawn_settle(&self, claim: &Claim, result: &ToolCallResult) -> StoreWrite {
        self.spawn_write(claim, self.settlement(result))
    }

    fn spawn_write(&self, claim: &Claim, settlement: Settlement) -> StoreWrite {
        let (store, claim) = (Arc::clone(&self.store), claim.clone());
        tokio::spawn(async move { store.settle(&claim, settlement).await })
    }

    /// Success completes with the result (no `toolCallId`); an ambiguous error marks the
    /// record unknown and any other error fails it, both keeping only the sanitized diagnostic.
    fn settlement(&self, result: &ToolCallResult) -> Settlement {
        if !result.is_error() {
            let mut stored = result.clone();
            stored.tool_call_id = None;
            // A result is strings, numbers and JSON values only: serializing it cannot fail.
            let result = serde_json::to_value(&stored).unwrap_or(Value::Null);
            return Settlement::Completed { result };
        }
        let (reason, diagnostic) = self.diagnostic(result);
        if is_ambiguous(result) {
            Settlement::Unknown { reason, diagnostic }
        } else {
            Settlement::Failed {
                reason,
                result: diagnostic,
            }
        }
    }

    /// The audit-safe reason and the sanitized diagnostic of a failed result.
    fn diagnostic(&self, result: &ToolCallResult) -> (String, Option<Value>) {
        let reason = sanitize_tool_call_diagnostic_reason(result);
        let diagnostic =
            serde_json::to_value(sanitize_tool_call_diagnostic(result, &self.diagnostics)).ok();
        (reason, diagnostic)
    }

    /// Starts the abort transition of `claim` (because of `reason`) and waits at most
    /// [`Self::abort_wait`] for it or for a `competing` terminal write to persist. Returns what
    /// the record that persisted first says (see [`Self::record_outcome`]), if one did; either
    /// way the writes keep running on their tasks.
    ///
    /// The abort transition marks the record `unknown`, except for a `read_only` tool: it has
    /// no side effect to reconcile, so its record is *released* (a fenced delete) and the same
    /// key runs again; followers then get the in-memory interruption
    /// (`TOOL_EXECUTION_ABORTED`, retryable).
    pub(crate) async fn persist_abort(
        &self,
        claim: &Claim,
        reason: &ToolCallError,
        competing: Option<StoreWrite>,
        read_only: bool,
    ) -> Option<ToolCallResult> {
        let abort: PersistedWrite = if read_only {
            let release = self.spawn_release(&claim.record.key, &claim.fence);
            Box::pin(
                async move { matches!(release.await, Ok(Ok(true))).then_some(Persisted::Released) },
            )
        } else {
            let (reason, diagnostic) = self.diagnostic(&ToolCallResult::failure(reason.clone()));
            Box::pin(persisted_record(
                self.spawn_write(claim, Settlement::Unknown { reason, diagnostic }),
            ))
        };
        let competing =
            competing.map(|write| -> PersistedWrite { Box::pin(persisted_record(write)) });
        let mut writes: FuturesUnordered<PersistedWrite> =
            std::iter::once(abort).chain(competing).collect();
        let first_persisted = async move {
            while let Some(persisted) = writes.next().await {
                if persisted.is_some() {
                    return persisted;
                }
            }
            None
        };
        let persisted = tokio::time::timeout(self.abort_wait(), first_persisted)
            .await
            .unwrap_or(None)?;
        Some(match persisted {
            Persisted::Record(record) => self.record_outcome(&record),
            Persisted::Released => released_outcome(),
        })
    }

    /// Deletes the record of `key` if it still has `fence`, on its own task: `Ok(true)` when
    /// it did.
    pub(crate) fn spawn_release(
        &self,
        key: &str,
        fence: &Fence,
    ) -> JoinHandle<Result<bool, DurableOperationError>> {
        let (store, key, fence) = (Arc::clone(&self.store), key.to_owned(), fence.clone());
        tokio::spawn(async move {
            store
                .backend()
                .compare_and_set(&key, Some(&fence), None)
                .await
        })
    }

    /// [`Self::persist_abort`] of a read-only tool whose heartbeat already stored `unknown`
    /// (`record`): releases that record instead, within the bounded wait.
    pub(crate) async fn release_record(&self, record: &OperationRecord) -> Option<ToolCallResult> {
        let release = self.spawn_release(&record.key, &record.fence());
        match tokio::time::timeout(self.abort_wait(), release).await {
            Ok(Ok(Ok(true))) => Some(released_outcome()),
            _ => None,
        }
    }

    /// Resolves a claim the caller stopped waiting for, on its own task: an owner claim is
    /// marked unknown, or released for a `read_only` tool (the handler never runs). The task yields what the shared execution's
    /// record then says (see [`Self::record_outcome`]), `None` when the claim failed.
    pub(crate) fn spawn_abandoned_claim(
        self: &Arc<Self>,
        claim: JoinHandle<ClaimResult>,
        key: &str,
        tool: &str,
        reason: &ToolCallError,
        read_only: bool,
    ) -> JoinHandle<Option<ToolCallResult>> {
        let (key, tool, reason) = (key.to_owned(), tool.to_owned(), reason.clone());
        let ledger = Arc::clone(self);
        tokio::spawn(async move {
            let Ok(Ok(claim)) = claim.await else {
                return None;
            };
            match ledger.interpret_claim(&key, &tool, Ok(Ok(claim))) {
                Ok(DurableClaim::Owner(claim)) => {
                    ledger.persist_abort(&claim, &reason, None, read_only).await
                }
                // Someone else's record: this call wrote nothing; it says what a retry sees.
                Ok(DurableClaim::Replayed(result)) => Some(result),
                Err(error) => Some(ToolCallResult::failure(error)),
            }
        })
    }

    /// Waits at most [`Self::abort_wait`] for an abandoned claim's outcome; `None` when it is
    /// not settled by then (the task runs on).
    pub(crate) async fn await_abandoned_claim(
        &self,
        settled: JoinHandle<Option<ToolCallResult>>,
    ) -> Option<ToolCallResult> {
        tokio::time::timeout(self.abort_wait(), settled)
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
    }

    /// What a persisted record says about the shared execution, exactly as a later retry's
    /// claim would read it: a settled record replays, an unknown one needs reconciliation.
    pub(crate) fn record_outcome(&self, record: &OperationRecord) -> ToolCallResult {
        match record.state {
            OperationState::Completed | OperationState::Failed => {
                self.replay(record).unwrap_or_else(ToolCallResult::failure)
            }
            OperationState::Pending | OperationState::Unknown => {
                ToolCallResult::failure(idempotency_unknown(record.reason.as_deref()))
            }
        }
    }

    /// `min(lease, 1 s)`, at least 1 ms.
    pub(crate) fn abort_wait(&self) -> Duration {
        Duration::from_millis(self.lease_ms.clamp(1, MAX_ABORT_TRANSITION_WAIT_MS))
    }

    /// The error of a transition that may not have persisted.
    pub(crate) fn uncertain(key: &str, message: &str) -> ToolCallError {
        idempotency_store_uncertain(key, message)
    }
}

/// What a lost lease leaves in the record: the effect may or may not have happened.
fn lease_lost_error() -> ToolCallError {
    ToolCallError::new(
        codes::TOOL_EXECUTION_UNKNOWN,
        "The durable lease could not be renewed while the tool ran.",
    )
    .with_retryable(false)
}

/// What an abort transition or a competing terminal write persisted.
enum Persisted {
    /// The record as written (boxed: the release carries nothing).
    Record(Box<OperationRecord>),
    /// The record was deleted (a read-only tool's abort).
    Released,
}

/// One write of [`DurableLedger::persist_abort`]: `None` when it did not persist.
type PersistedWrite =
    std::pin::Pin<Box<dyn std::future::Future<Output = Option<Persisted>> + Send>>;

async fn persisted_record(write: StoreWrite) -> Option<Persisted> {
    match write.await {
        Ok(Ok(record)) => Some(Persisted::Record(Box::new(record))),
        _ => None,
    }
}

/// What followers of an interrupted read-only call get once its record is released: the
/// interruption, retryable, as without a durable store.
pub(crate) fn released_outcome() -> ToolCallResult {
    ToolCallResult::failure(aborted(INTERRUPTED_EXECUTION_MESSAGE))
}

/// The outcome of one durable claim.
pub(crate) type ClaimResult = Result<Claim, DurableOperationError>;

/// A stored completed result: a tool call result as written by a registry, or (reconciled by
/// an operator) any JSON value, which replays as a success carrying it.
fn completed_result(stored: Value) -> ToolCallResult {
    match serde_json::from_value::<ToolCallResult>(stored.clone()) {
        Ok(result) if !result.is_error() => result,
        _ => ToolCallResult::success(stored),
    }
}

/// Codes after which the effect may or may not have happened.
pub(crate) fn is_ambiguous(result: &ToolCallResult) -> bool {
    matches!(
        result.error_code(),
        Some(
            codes::TOOL_TIMEOUT
                | codes::TOOL_CANCELLED
                | codes::TOOL_EXECUTION_ABORTED
                | codes::TOOL_EXECUTION_UNKNOWN
        )
    )
}
