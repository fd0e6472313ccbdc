//! The exactly-once seam of the pipeline: a *claim* between policy and handler and a
//! *terminal record* after the output checks.
//!
//! Everything the pipeline knows about idempotency goes through [`Ledger`]: the in-memory
//! [`IdempotencyRegistry`] and, when configured, the durable layer under it
//! ([`crate::durable`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::task::JoinHandle;
use tool_durable_operations::{Claim, DurableOperationStore, LeaseHeartbeat};
use tool_protocol::idempotency::{tool_call_fingerprint, tool_operation_key};
use tool_protocol::{ToolCallError, ToolCallResult, codes};

use crate::durable::{ClaimResult, DurableClaim, DurableLedger, is_ambiguous, released_outcome};
use crate::failure::{idempotency_conflict, invalid_options};
use crate::idempotency::{IdempotencyClaim, IdempotencyRegistry, OwnerTicket, ReplayWaiter};
use crate::options::INVALID_IDEMPOTENCY_KEY;
use crate::signal::{CallSignal, WaitStage};

/// Who a logical operation is: its session-scoped key and argument fingerprint, and whether
/// its tool is read-only (an interrupted read-only call releases its durable record instead of
/// leaving it `unknown`: it has no side effect to reconcile).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OperationIdentity {
    pub(crate) key: String,
    pub(crate) fingerprint: String,
    pub(crate) read_only: bool,
}

impl OperationIdentity {
    /// The identity of `tool` called with raw (unvalidated) `arguments` under `key`.
    pub(crate) fn new(
        tool: &str,
        key: &str,
        session_id: Option<&str>,
        arguments: &serde_json::Value,
        read_only: bool,
    ) -> Result<Self, ToolCallError> {
        let key = tool_operation_key(tool, key, session_id)
            .map_err(|_| invalid_options(INVALID_IDEMPOTENCY_KEY))?;
        Ok(Self {
            key,
            fingerprint: tool_call_fingerprint(tool, arguments),
            read_only,
        })
    }
}

/// Where claims and terminal records go: the process-local registry shares one execution per
/// process; with a durable store its owner then claims the shared durable record.
#[derive(Debug, Clone)]
pub(crate) struct Ledger {
    memory: IdempotencyRegistry,
    durable: Option<Arc<DurableLedger>>,
}

/// The outcome of a claim.
#[derive(Debug)]
pub(crate) enum LedgerClaim {
    /// No idempotency key: run without bookkeeping.
    Unguarded,
    /// This call runs the handler and must record the terminal outcome. Boxed like
    /// `Replayed`: the keyed path allocates anyway, the keyed-less one should not carry it.
    Owner(Box<OwnerClaim>),
    /// Another call of this process runs (or ran) it: replay its outcome.
    Replay(ReplayWaiter),
    /// The durable record already holds the outcome (re-stamped by the caller). Boxed so a
    /// claim, held across the handler's await, stays small.
    Replayed(Box<ToolCallResult>),
}

impl LedgerClaim {
    /// What the claim means for the call's span: `claimed` (this call runs the operation) or
    /// `replayed` (another execution's outcome, running or settled); `None` unkeyed.
    pub(crate) fn telemetry_outcome(&self) -> Option<&'static str> {
        match self {
            Self::Unguarded => None,
            Self::Owner(_) => Some("claimed"),
            Self::Replay(_) | Self::Replayed(_) => Some("replayed"),
        }
    }
}

/// The right to run the handler: the in-memory ticket and, with a store, the durable claim
/// (its lease renewed until the terminal record).
pub(crate) struct OwnerClaim {
    ticket: OwnerTicket,
    key: String,
    read_only: bool,
    durable: Option<LeaseHeartbeat>,
}

impl fmt::Debug for OwnerClaim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnerClaim")
            .field("key", &self.key)
            .field(
                "durable",
                &self.durable.as_ref().map(|lease| lease.current().fence),
            )
            .finish_non_exhaustive()
    }
}

impl Ledger {
    /// The durable store behind keyed calls, when one is configured.
    pub(crate) fn durable_store(&self) -> Option<&Arc<DurableOperationStore>> {
        self.durable.as_ref().map(|durable| &durable.store)
    }

    /// The in-memory registry alone, or with a durable layer under it.
    pub(crate) fn new(memory: IdempotencyRegistry, durable: Option<DurableLedger>) -> Self {
        Self {
            memory,
            durable: durable.map(Arc::new),
        }
    }

    /// The durable layer, when configured.
    pub(crate) fn durable(&self) -> Option<&DurableLedger> {
        self.durable.as_deref()
    }

    /// Claims `identity` before the handler runs; the durable claim races `signal`.
    pub(crate) async fn claim(
        &self,
        identity: Option<&OperationIdentity>,
        tool: &str,
        signal: &CallSignal<'_>,
    ) -> Result<LedgerClaim, ToolCallError> {
        let Some(identity) = identity else {
            return Ok(LedgerClaim::Unguarded);
        };
        // An operation key is JSON text and a fingerprint a digest, neither ever blank.
        let claimed = self
            .memory
            .claim(&identity.key, &identity.fingerprint)
            .map_err(|_| invalid_options(INVALID_IDEMPOTENCY_KEY))?;
        let ticket = match claimed {
            IdempotencyClaim::Owner(ticket) => ticket,
            IdempotencyClaim::Replay(waiter) => return Ok(LedgerClaim::Replay(waiter)),
            IdempotencyClaim::Conflict => return Err(idempotency_conflict(tool)),
        };
        let key = identity.key.clone();
        let Some(durable) = &self.durable else {
            return Ok(LedgerClaim::Owner(Box::new(OwnerClaim {
                ticket,
                key,
                read_only: identity.read_only,
                durable: None,
            })));
        };
        // Boxed: the durable claim's future is large, and a call future is as large as its
        // largest await; keyed-less and in-memory calls should not carry (and move) it.
        Box::pin(self.claim_durable(durable, ticket, identity, key, tool, signal)).await
    }

    /// The durable half of [`Self::claim`], once the in-memory ticket is owned.
    async fn claim_durable(
        &self,
        durable: &DurableLedger,
        ticket: OwnerTicket,
        identity: &OperationIdentity,
        key: String,
        tool: &str,
        signal: &CallSignal<'_>,
    ) -> Result<LedgerClaim, ToolCallError> {
        let mut claim = durable.spawn_claim(&identity.key, &identity.fingerprint);
        let claimed = match signal.race(WaitStage::DurableClaim, &mut claim).await {
            Ok(claimed) => claimed,
            Err(interrupted) => {
                let abandoned = AbandonedClaim {
                    key: &key,
                    tool,
                    claim,
                    shut_down: signal.is_shut_down(),
                    read_only: identity.read_only,
                };
                return Err(self.abandoned_claim(ticket, abandoned, interrupted).await);
            }
        };
        match durable.interpret_claim(&key, tool, claimed) {
            Ok(DurableClaim::Owner(claim))
                if durable.refuses_takeover(&claim, identity.read_only) =>
            {
                let error = durable.mark_taken_over(&key, &claim).await;
                self.settle_memory(ticket, &key, &error, true);
                Err(error)
            }
            Ok(DurableClaim::Owner(claim)) => Ok(LedgerClaim::Owner(Box::new(OwnerClaim {
                ticket,
                key,
                read_only: identity.read_only,
                durable: Some(durable.keep_lease(claim)),
            }))),
            Ok(DurableClaim::Replayed(result)) => {
                ticket.settle(result.clone());
                Ok(LedgerClaim::Replayed(Box::new(result)))
            }
            Err(error) => {
                let forget = error.code != codes::TOOL_IDEMPOTENCY_CONFLICT;
                self.settle_memory(ticket, &key, &error, forget);
                Err(error)
            }
        }
    }

    /// Records the owner's terminal outcome (output checks applied) and returns what the
    /// caller gets: the result itself, or the error of a write that failed or was interrupted.
    ///
    /// Settles in place unless a durable record has to be written: only that write is a
    /// (boxed) future, so the call future carries no copy of the claim and result for it.
    pub(crate) fn record_terminal<'l>(
        &'l self,
        claim: LedgerClaim,
        result: ToolCallResult,
        signal: &'l CallSignal<'_>,
    ) -> Recorded<'l, Result<ToolCallResult, ToolCallError>> {
        let LedgerClaim::Owner(mut owner) = claim else {
            return Recorded::Now(Ok(result));
        };
        let (Some(durable), Some(lease)) = (&self.durable, owner.durable.take()) else {
            owner.ticket.settle(result.clone());
            return Recorded::Now(Ok(result));
        };
        Recorded::Writing(Box::pin(
            self.record_durable_terminal(durable, *owner, lease, result, signal),
        ))
    }

    /// The durable half of [`Self::record_terminal`] (boxed like [`Self::claim_durable`]).
    async fn record_durable_terminal(
        &self,
        durable: &DurableLedger,
        owner: OwnerClaim,
        lease: LeaseHeartbeat,
        result: ToolCallResult,
        signal: &CallSignal<'_>,
    ) -> Result<ToolCallResult, ToolCallError> {
        let claim = match durable.stop_lease(lease).await {
            Ok(claim) => claim,
            Err(lost) => {
                let error = durable.lease_lost(&owner.key, lost);
                self.settle_memory(owner.ticket, &owner.key, &error, true);
                return Err(error);
            }
        };
        let claim = &claim;
        let mut write = durable.spawn_settle(claim, &result);
        let (error, shared) = match signal.race(WaitStage::DurableRecord, &mut write).await {
            Ok(Ok(Ok(record))) => {
                // An ambiguous outcome left the record unknown: followers see that, as a
                // later retry does, and the in-memory entry defers to the record.
                let shared = if is_ambiguous(&result) {
                    self.memory.clear(&owner.key);
                    durable.record_outcome(&record)
                } else {
                    result.clone()
                };
                owner.ticket.settle(shared);
                return Ok(result);
            }
            Ok(Ok(Err(error))) => {
                let message = error.to_string();
                Self::abort_failed_write(durable, claim, &owner, &message).await
            }
            Ok(Err(_)) => {
                Self::abort_failed_write(durable, claim, &owner, WRITE_TASK_PANICKED).await
            }
            Err(interrupted) => {
                // The write runs on: it competes with the abort transition for the fence.
                let persisted = durable
                    .persist_abort(claim, &interrupted, Some(write), owner.read_only)
                    .await;
                interrupted_outcome(&owner.key, interrupted, persisted, owner.read_only)
            }
        };
        self.settle_shared(owner.ticket, &owner.key, shared);
        Err(error)
    }

    /// Records that the owner stopped waiting (timeout, cancellation, shutdown) while the
    /// handler may still be running: its outcome is unknown, so replays must never see success.
    /// A read-only tool has no side effect: its record is released instead, so the same key
    /// runs again without reconciliation.
    /// Returns the caller's error: `interrupted`, or an uncertain store failure when the
    /// durable `unknown` transition did not persist in time. Followers get what the persisted
    /// record says, never the caller's own interruption.
    pub(crate) fn record_interrupted(
        &self,
        claim: LedgerClaim,
        interrupted: ToolCallError,
    ) -> Recorded<'_, ToolCallError> {
        let LedgerClaim::Owner(mut owner) = claim else {
            return Recorded::Now(interrupted);
        };
        let (Some(durable), Some(lease)) = (&self.durable, owner.durable.take()) else {
            // Dropping an unsettled ticket settles it as TOOL_EXECUTION_ABORTED (this also
            // covers a call future dropped mid-flight, which never reaches this function).
            drop(owner);
            return Recorded::Now(interrupted);
        };
        Recorded::Writing(Box::pin(self.record_durable_interrupted(
            durable,
            *owner,
            lease,
            interrupted,
        )))
    }

    /// Gives back an owner claim whose handler never started (the person asked refused, or
    /// the wait for them ended): nothing ran, so the claim is released as a read-only tool's
    /// would be, and a later call with the key runs (and asks) again. Returns `error` (or
    /// the store's uncertainty when the release could not be written).
    pub(crate) fn release_unstarted(
        &self,
        claim: LedgerClaim,
        error: ToolCallError,
    ) -> Recorded<'_, ToolCallError> {
        let LedgerClaim::Owner(mut owner) = claim else {
            return Recorded::Now(error);
        };
        owner.read_only = true;
        let (Some(durable), Some(lease)) = (&self.durable, owner.durable.take()) else {
            let owner = *owner;
            self.settle_memory(owner.ticket, &owner.key, &error, true);
            return Recorded::Now(error);
        };
        Recorded::Writing(Box::pin(
            self.record_durable_interrupted(durable, *owner, lease, error),
        ))
    }

    /// The durable half of [`Self::record_interrupted`] (boxed like [`Self::claim_durable`]).
    async fn record_durable_interrupted(
        &self,
        durable: &DurableLedger,
        owner: OwnerClaim,
        lease: LeaseHeartbeat,
        interrupted: ToolCallError,
    ) -> ToolCallError {
        let read_only = owner.read_only;
        let persisted = match durable.stop_lease(lease).await {
            Ok(claim) => {
                durable
                    .persist_abort(&claim, &interrupted, None, read_only)
                    .await
            }
            // The heartbeat already stored `unknown` (a read-only tool releases it); otherwise
            // the stale fence makes the abort fail, reported as uncertain.
            Err(lost) => match lost.unknown {
                Some(record) if read_only => durable.release_record(&record).await,
                Some(record) => Some(durable.record_outcome(&record)),
                None => {
                    durable
                        .persist_abort(&lost.claim, &interrupted, None, read_only)
                        .await
                }
            },
        };
        let (error, shared) = interrupted_outcome(&owner.key, interrupted, persisted, read_only);
        self.settle_shared(owner.ticket, &owner.key, shared);
        error
    }

    /// The terminal write failed: the record may still be pending, and a reclaim after the
    /// lease would run the effect again, so try to leave it `unknown`. The caller's outcome was
    /// not persisted either way.
    async fn abort_failed_write(
        durable: &DurableLedger,
        claim: &Claim,
        owner: &OwnerClaim,
        message: &str,
    ) -> (ToolCallError, ToolCallResult) {
        let error = DurableLedger::uncertain(&owner.key, message);
        durable
            .persist_abort(claim, &error, None, owner.read_only)
            .await;
        (error.clone(), ToolCallResult::failure(error))
    }

    /// The caller aborted while the durable claim was in flight: an owner claim is marked
    /// unknown within the bounded wait, and the handler never runs. Followers get what the
    /// record then says. On shutdown nobody waits: the registry is going away, so the caller
    /// gets its `TOOL_EXECUTION_ABORTED` at once while the late claim is still marked unknown.
    async fn abandoned_claim(
        &self,
        ticket: OwnerTicket,
        abandoned: AbandonedClaim<'_>,
        interrupted: ToolCallError,
    ) -> ToolCallError {
        let key = abandoned.key;
        let Some(durable) = &self.durable else {
            self.settle_memory(ticket, key, &interrupted, true);
            return interrupted;
        };
        let read_only = abandoned.read_only;
        let settled = durable.spawn_abandoned_claim(
            abandoned.claim,
            key,
            abandoned.tool,
            &interrupted,
            read_only,
        );
        if abandoned.shut_down {
            self.settle_memory(ticket, key, &interrupted, true);
            return interrupted;
        }
        let persisted = durable.await_abandoned_claim(settled).await;
        let (error, shared) = interrupted_outcome(key, interrupted, persisted, read_only);
        self.settle_shared(ticket, key, shared);
        error
    }

    /// Settles the in-memory entry with `error` for waiters; `forget` clears it so later
    /// retries consult the durable record.
    fn settle_memory(&self, ticket: OwnerTicket, key: &str, error: &ToolCallError, forget: bool) {
        ticket.settle(ToolCallResult::failure(error.clone()));
        if forget {
            self.memory.clear(key);
        }
    }

    /// Gives the waiters the `shared` outcome and clears the entry so later retries consult
    /// the durable record.
    fn settle_shared(&self, ticket: OwnerTicket, key: &str, shared: ToolCallResult) {
        ticket.settle(shared);
        self.memory.clear(key);
    }
}

/// The caller's error and the followers' outcome after an interruption: the caller keeps its
/// own `interrupted` error and followers get what the record says (`persisted`); when nothing
/// persisted in time both get the uncertain store failure, except for a `read_only` tool: a
/// record it could not release is at worst still pending under a lease that expires, and a
/// retry after that repeats no side effect, so the caller keeps its error.
fn interrupted_outcome(
    key: &str,
    interrupted: ToolCallError,
    persisted: Option<ToolCallResult>,
    read_only: bool,
) -> (ToolCallError, ToolCallResult) {
    match persisted {
        Some(shared) => (interrupted, shared),
        None if read_only => (interrupted, released_outcome()),
        None => {
            let error = DurableLedger::uncertain(key, ABORT_NOT_PERSISTED);
            (error.clone(), ToolCallResult::failure(error))
        }
    }
}

/// A durable claim still in flight when its caller stopped waiting.
struct AbandonedClaim<'a> {
    key: &'a str,
    tool: &'a str,
    claim: JoinHandle<ClaimResult>,
    /// The registry shut down (rather than a timeout or cancellation).
    shut_down: bool,
    /// The tool is read-only: an owner claim is released rather than marked unknown.
    read_only: bool,
}

/// Why an abort transition is reported as uncertain.
const ABORT_NOT_PERSISTED: &str =
    "the transition to unknown did not persist in time; the record may still be pending";

/// Why a terminal write that never returned is reported as uncertain.
const WRITE_TASK_PANICKED: &str = "the store write task panicked";

/// What recording an outcome gives: the answer now, or the durable write that decides it
/// (matched at the await rather than awaited through a helper, which would hold the answer).
pub(crate) enum Recorded<'l, T> {
    Now(T),
    Writing(Pin<Box<dyn Future<Output = T> + Send + 'l>>),
}
