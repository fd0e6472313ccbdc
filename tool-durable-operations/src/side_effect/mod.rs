//! The exactly-once side-effect runner: one durable record guards one external write.
//!
//! [`SideEffectRunner::run`] claims the key, runs the adapter once while renewing the lease,
//! and stores its tagged outcome. It never retries: an ambiguous outcome (adapter error,
//! cancellation while the write was in flight, a lost lease, invalid outcome) becomes
//! `unknown`, which blocks the key until [`SideEffectRunner::recover`] records what a status
//! query confirmed.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::error::{BoxError, DurableOperationError};
use crate::lease::{LeaseHeartbeat, LeaseLost, settle_renewing};
use crate::record::{Fence, MAX_OWNER_ID_BYTES, OperationRecord, OperationState, validate_text};
use crate::store::{
    Claim, ClaimRequest, ClaimStatus, DurableOperationStore, RecoverOutcome, Resolution, Settlement,
};

#[cfg(feature = "http")]
pub mod http;
pub mod queue;

/// Maximum characters of a reason derived from an adapter error.
pub const MAX_ADAPTER_REASON_CHARS: usize = 512;
/// Reason of a run cancelled before the claim.
pub const CANCELLED_BEFORE_CLAIM: &str = "side-effect was cancelled before claim";
/// Reason of a run cancelled after the claim but before the adapter started.
pub const CANCELLED_BEFORE_EXECUTION: &str = "side-effect was cancelled before execution";
/// Reason stored when the caller cancels while the adapter is in flight.
pub const CANCELLED_IN_FLIGHT: &str = "side-effect caller cancelled while execution was in flight";
/// Reason (prefix) of the outcome when the lease could not be renewed, or was taken over,
/// while the adapter was in flight or before its outcome was stored.
pub const LEASE_LOST: &str = "side-effect lease was lost while execution was in flight";
/// Reason stored when an adapter error carries no text.
pub const THREW_WITHOUT_REASON: &str = "side-effect adapter threw without a reason";

/// What the adapter reports. Use `Failed` only when the external system confirmed the effect
/// did not happen; anything ambiguous is `Unknown`.
///
/// Build it with [`completed`](Self::completed), [`failed`](Self::failed) or
/// [`unknown`](Self::unknown) and the `with_*` methods: the variants are `#[non_exhaustive]`
/// (a new field is not a breaking change), so match them with `..`.
#[derive(Debug, Clone, PartialEq)]
pub enum SideEffectOutcome {
    /// Authoritatively acknowledged.
    #[non_exhaustive]
    Completed {
        /// Result to replay.
        result: Value,
    },
    /// Confirmed not to have happened.
    #[non_exhaustive]
    Failed {
        /// Why.
        reason: String,
        /// Optional provider response.
        result: Option<Value>,
        /// Optional bounded diagnostic.
        diagnostic: Option<Value>,
    },
    /// May or may not have happened.
    #[non_exhaustive]
    Unknown {
        /// Why the outcome is ambiguous.
        reason: String,
        /// Optional bounded evidence for reconciliation.
        diagnostic: Option<Value>,
    },
}

impl SideEffectOutcome {
    /// A `Completed` outcome replaying `result`.
    pub fn completed(result: Value) -> Self {
        Self::Completed { result }
    }

    /// A `Failed` outcome without provider response or diagnostic.
    pub fn failed(reason: impl Into<String>) -> Self {
        Self::Failed {
            reason: reason.into(),
            result: None,
            diagnostic: None,
        }
    }

    /// An `Unknown` outcome without diagnostic.
    pub fn unknown(reason: impl Into<String>) -> Self {
        Self::Unknown {
            reason: reason.into(),
            diagnostic: None,
        }
    }

    /// Sets the result: the provider response of a `Failed` outcome, the replayed result of a
    /// `Completed` one. An `Unknown` outcome has none and is returned unchanged.
    #[must_use]
    pub fn with_result(mut self, value: Value) -> Self {
        match &mut self {
            Self::Completed { result } => *result = value,
            Self::Failed { result, .. } => *result = Some(value),
            Self::Unknown { .. } => {}
        }
        self
    }

    /// Sets the diagnostic of a `Failed` or `Unknown` outcome. A `Completed` outcome stores
    /// its result only and is returned unchanged.
    #[must_use]
    pub fn with_diagnostic(mut self, value: Value) -> Self {
        match &mut self {
            Self::Failed { diagnostic, .. } | Self::Unknown { diagnostic, .. } => {
                *diagnostic = Some(value);
            }
            Self::Completed { .. } => {}
        }
        self
    }
}

/// What a reconciliation established after a provider/domain status query.
///
/// Build it with [`completed`](Self::completed) or [`failed`](Self::failed) and the `with_*`
/// methods: the variants are `#[non_exhaustive]` (a new field is not a breaking change), so
/// match them with `..`.
#[derive(Debug, Clone, PartialEq)]
pub enum SideEffectResolution {
    /// The effect happened.
    #[non_exhaustive]
    Completed {
        /// Result to replay.
        result: Value,
        /// Optional note of the reconciler (what the status query found), kept as the
        /// record's reason.
        reason: Option<String>,
        /// Optional bounded evidence, kept next to the result.
        diagnostic: Option<Value>,
    },
    /// The effect did not happen.
    #[non_exhaustive]
    Failed {
        /// Why.
        reason: String,
        /// Optional provider response.
        result: Option<Value>,
        /// Optional diagnostic.
        diagnostic: Option<Value>,
    },
}

impl SideEffectResolution {
    /// A `Completed` resolution without reason or diagnostic.
    pub fn completed(result: Value) -> Self {
        Self::Completed {
            result,
            reason: None,
            diagnostic: None,
        }
    }

    /// A `Failed` resolution without provider response or diagnostic.
    pub fn failed(reason: impl Into<String>) -> Self {
        Self::Failed {
            reason: reason.into(),
            result: None,
            diagnostic: None,
        }
    }

    /// Sets the reason: the reconciler's note of a `Completed` resolution, the cause of a
    /// `Failed` one.
    #[must_use]
    pub fn with_reason(mut self, value: impl Into<String>) -> Self {
        match &mut self {
            Self::Completed { reason, .. } => *reason = Some(value.into()),
            Self::Failed { reason, .. } => *reason = value.into(),
        }
        self
    }

    /// Sets the result: the replayed result of a `Completed` resolution, the provider
    /// response of a `Failed` one.
    #[must_use]
    pub fn with_result(mut self, value: Value) -> Self {
        match &mut self {
            Self::Completed { result, .. } => *result = value,
            Self::Failed { result, .. } => *result = Some(value),
        }
        self
    }

    /// Sets the bounded diagnostic.
    #[must_use]
    pub fn with_diagnostic(mut self, value: Value) -> Self {
        match &mut self {
            Self::Completed { diagnostic, .. } | Self::Failed { diagnostic, .. } => {
                *diagnostic = Some(value);
            }
        }
        self
    }
}

/// Maps an adapter error to an outcome (the default keeps it `unknown`).
pub type ErrorClassifier = Arc<dyn Fn(&BoxError) -> SideEffectOutcome + Send + Sync>;

/// One logical side effect: [`SideEffectRequest::new`] and the `with_*` methods.
#[derive(Clone)]
#[non_exhaustive]
pub struct SideEffectRequest {
    /// Stable operation key (one per logical operation).
    pub key: String,
    /// Fingerprint of the request payload.
    pub fingerprint: String,
    /// Lease; `None` uses the store default.
    pub lease: Option<Duration>,
    /// Caller cancellation (timeout, shutdown, user abort).
    pub cancellation: CancellationToken,
    /// Diagnostic stored when the caller cancels while the adapter is in flight.
    pub abort_diagnostic: Option<Value>,
    /// Classifier of adapter errors; `None` stores them as `unknown`.
    pub on_error: Option<ErrorClassifier>,
}

impl std::fmt::Debug for SideEffectRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SideEffectRequest")
            .field("key", &self.key)
            .field("fingerprint", &self.fingerprint)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl SideEffectRequest {
    /// A request with the default lease, a fresh cancellation token and no classifier.
    pub fn new(key: impl Into<String>, fingerprint: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            fingerprint: fingerprint.into(),
            lease: None,
            cancellation: CancellationToken::new(),
            abort_diagnostic: None,
            on_error: None,
        }
    }

    /// Sets the cancellation token.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// Sets the lease.
    #[must_use]
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }

    /// Sets the error classifier.
    #[must_use]
    pub fn with_error_classifier(mut self, classifier: ErrorClassifier) -> Self {
        self.on_error = Some(classifier);
        self
    }

    /// Sets the diagnostic stored on in-flight cancellation.
    #[must_use]
    pub fn with_abort_diagnostic(mut self, diagnostic: Value) -> Self {
        self.abort_diagnostic = Some(diagnostic);
        self
    }
}

/// What the adapter receives.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SideEffectContext {
    /// Operation key (send it as the provider's idempotency key).
    pub key: String,
    /// The claim's fence when the adapter started. Lease renewals advance the stored
    /// revision, so it identifies this execution, not the record's current revision.
    pub fence: Fence,
    /// Cancelled when the caller gives up or the lease is lost; the adapter may stop early.
    pub cancellation: CancellationToken,
}

impl SideEffectContext {
    /// The context of the execution of `key` under `fence` (for testing an adapter directly).
    pub fn new(key: impl Into<String>, fence: Fence, cancellation: CancellationToken) -> Self {
        Self {
            key: key.into(),
            fence,
            cancellation,
        }
    }
}

/// The result of [`SideEffectRunner::run`].
#[derive(Debug, Clone, PartialEq)]
pub enum SideEffectResult {
    /// This run performed the effect and it was acknowledged.
    Completed {
        /// The stored record.
        operation: OperationRecord,
        /// The adapter's result.
        result: Value,
    },
    /// This run's adapter confirmed the effect did not happen.
    Failed {
        /// The stored record.
        operation: OperationRecord,
        /// Why.
        reason: String,
        /// Optional provider response.
        result: Option<Value>,
        /// Optional diagnostic.
        diagnostic: Option<Value>,
    },
    /// The outcome is ambiguous (this run's, or a previous one's); reconcile with `recover`.
    Unknown {
        /// The stored record. After a lost lease whose `unknown` could not be stored (another
        /// owner took the record over, or the store failed) it is the last record this runner
        /// held, still `pending`.
        operation: OperationRecord,
        /// Why.
        reason: String,
        /// Optional diagnostic.
        diagnostic: Option<Value>,
    },
    /// The caller cancelled before the adapter started; nothing was sent.
    Cancelled {
        /// The claimed record (still pending until its lease expires), if the claim happened.
        operation: Option<OperationRecord>,
        /// Why.
        reason: String,
    },
    /// A previous run completed or failed; its stored outcome is returned, nothing was sent.
    Replayed {
        /// The stored record.
        operation: OperationRecord,
        /// Stored result.
        result: Option<Value>,
        /// Stored diagnostic.
        diagnostic: Option<Value>,
        /// Stored reason.
        reason: Option<String>,
    },
    /// Another owner holds a live lease.
    Pending {
        /// The stored record.
        operation: OperationRecord,
    },
    /// The key was used with a different fingerprint.
    Conflict {
        /// The stored record.
        operation: OperationRecord,
    },
}

/// The result of [`SideEffectRunner::recover`].
#[derive(Debug, Clone, PartialEq)]
pub enum SideEffectRecovery {
    /// No record under the key.
    Missing,
    /// The record is not `unknown`; returned as is, the resolver did not run.
    NotUnknown {
        /// Its state.
        state: OperationState,
        /// The record.
        operation: OperationRecord,
        /// Stored result.
        result: Option<Value>,
        /// Stored diagnostic.
        diagnostic: Option<Value>,
        /// Stored reason.
        reason: Option<String>,
    },
    /// The resolution was persisted.
    Resolved {
        /// The reconciled record.
        operation: OperationRecord,
        /// Stored result.
        result: Option<Value>,
        /// Stored diagnostic.
        diagnostic: Option<Value>,
        /// Stored reason.
        reason: Option<String>,
    },
}

/// Runs side effects over a [`DurableOperationStore`] as one owner.
#[derive(Debug, Clone)]
pub struct SideEffectRunner {
    store: DurableOperationStore,
    owner_id: String,
}

impl SideEffectRunner {
    /// A runner claiming as `owner_id` (non-blank, bounded).
    pub fn new(
        store: DurableOperationStore,
        owner_id: impl Into<String>,
    ) -> Result<Self, DurableOperationError> {
        let owner_id = owner_id.into();
        validate_text("owner_id", &owner_id, MAX_OWNER_ID_BYTES)?;
        Ok(Self { store, owner_id })
    }

    /// The store.
    pub fn store(&self) -> &DurableOperationStore {
        &self.store
    }

    /// The owner id.
    pub fn owner_id(&self) -> &str {
        &self.owner_id
    }

    /// Claims the key and, as owner, runs `execute` once and stores its outcome.
    ///
    /// While `execute` runs, a [`LeaseHeartbeat`] renews the lease, so a slow effect is never
    /// taken over and run again by a second runner. Cancellation, or a failed renewal, while
    /// `execute` is in flight returns `Unknown` immediately (after the record is marked unknown,
    /// when it still can be); the adapter future keeps draining on its own task (its context
    /// token is cancelled) and its late outcome is discarded. `Err` means the store itself
    /// failed.
    pub async fn run<F, Fut>(
        &self,
        request: SideEffectRequest,
        execute: F,
    ) -> Result<SideEffectResult, DurableOperationError>
    where
        F: FnOnce(SideEffectContext) -> Fut,
        Fut: Future<Output = Result<SideEffectOutcome, BoxError>> + Send + 'static,
    {
        if request.cancellation.is_cancelled() {
            return Ok(cancelled(None, CANCELLED_BEFORE_CLAIM));
        }
        let claim = self
            .store
            .claim(ClaimRequest {
                key: &request.key,
                fingerprint: &request.fingerprint,
                owner_id: &self.owner_id,
                lease: request.lease,
            })
            .await?;
        if claim.status != ClaimStatus::Owner {
            return Ok(observed(claim.status, claim.record));
        }
        if request.cancellation.is_cancelled() {
            return Ok(cancelled(Some(claim.record), CANCELLED_BEFORE_EXECUTION));
        }
        let stop_adapter = request.cancellation.child_token();
        let context = SideEffectContext {
            key: request.key.clone(),
            fence: claim.fence.clone(),
            cancellation: stop_adapter.clone(),
        };
        let on_loss = Box::new(|error: &DurableOperationError| (lease_lost_reason(error), None));
        let heartbeat = LeaseHeartbeat::start_marking_unknown(
            self.store.clone(),
            claim,
            request.lease,
            on_loss,
        );
        let mut adapter = tokio::spawn(execute(context));
        // On cancellation or a lost lease the adapter task is detached and drains; its outcome
        // can no longer be stored.
        let outcome = tokio::select! {
            biased;
            joined = &mut adapter => adapter_outcome(joined, request.on_error.as_ref()),
            () = request.cancellation.cancelled() => SideEffectOutcome::Unknown {
                reason: CANCELLED_IN_FLIGHT.to_owned(),
                diagnostic: request.abort_diagnostic.clone(),
            },
            // Superseded below: a lost lease always ends the heartbeat with its error.
            () = heartbeat.lost() => SideEffectOutcome::unknown(LEASE_LOST),
        };
        match heartbeat.stop().await {
            Ok(claim) => self.finish(&claim, outcome, request.lease).await,
            Err(lost) => {
                stop_adapter.cancel();
                Ok(lease_lost(lost))
            }
        }
    }

    /// Status-first reconciliation of an `unknown` record: `resolver` (a provider status query)
    /// runs only when the record is `unknown`, and never re-sends the effect.
    pub async fn recover<F, Fut>(
        &self,
        key: &str,
        expected_fence: Option<&Fence>,
        reconciler_id: Option<&str>,
        resolver: F,
    ) -> Result<SideEffectRecovery, DurableOperationError>
    where
        F: FnOnce(OperationRecord) -> Fut,
        Fut: Future<Output = Result<SideEffectResolution, BoxError>>,
    {
        let reconciler = reconciler_id.unwrap_or(&self.owner_id);
        let outcome = self
            .store
            .recover(key, reconciler, expected_fence, |record| {
                let resolution = resolver(record);
                async move { resolution.await.map(to_store_resolution) }
            })
            .await?;
        Ok(match outcome {
            RecoverOutcome::Missing => SideEffectRecovery::Missing,
            RecoverOutcome::Unchanged(operation) => {
                let (result, diagnostic) = split_payload(&operation);
                SideEffectRecovery::NotUnknown {
                    state: operation.state,
                    reason: operation.reason.clone(),
                    operation,
                    result,
                    diagnostic,
                }
            }
            RecoverOutcome::Resolved(operation) => {
                let (result, diagnostic) = split_payload(&operation);
                SideEffectRecovery::Resolved {
                    reason: operation.reason.clone(),
                    operation,
                    result,
                    diagnostic,
                }
            }
        })
    }

    /// Stores the outcome of the execution this runner still holds the lease of. If the record
    /// turns out to belong to someone else by now, the lease was lost: the outcome is `unknown`.
    async fn finish(
        &self,
        claim: &Claim,
        outcome: SideEffectOutcome,
        lease: Option<Duration>,
    ) -> Result<SideEffectResult, DurableOperationError> {
        match self.store_outcome(claim, outcome, lease).await {
            Err(error) if is_lost_ownership(&error) => Ok(lost_lease_result(claim, &error)),
            other => other,
        }
    }

    /// Writes the outcome; an outcome the store refuses (blank reason, oversized payload) is
    /// stored as `unknown`, because the effect may already have happened.
    async fn store_outcome(
        &self,
        claim: &Claim,
        outcome: SideEffectOutcome,
        lease: Option<Duration>,
    ) -> Result<SideEffectResult, DurableOperationError> {
        match self.write_outcome(claim, outcome, lease).await {
            Err(error) if is_invalid_outcome(&error) => {
                let reason = truncate_reason(&format!(
                    "side-effect adapter returned an invalid outcome: {error}"
                ));
                self.write_outcome(claim, SideEffectOutcome::unknown(reason), lease)
                    .await
            }
            other => other,
        }
    }

    /// Settles the claim and shapes the caller's result.
    async fn write_outcome(
        &self,
        claim: &Claim,
        outcome: SideEffectOutcome,
        lease: Option<Duration>,
    ) -> Result<SideEffectResult, DurableOperationError> {
        Ok(match outcome {
            SideEffectOutcome::Completed { result } => {
                let stored = payload(Some(result.clone()), None);
                let settlement = Settlement::Completed { result: stored };
                let operation = settle_renewing(&self.store, claim, settlement, lease).await?;
                SideEffectResult::Completed { operation, result }
            }
            SideEffectOutcome::Failed {
                reason,
                result,
                diagnostic,
            } => {
                let settlement = Settlement::Failed {
                    reason: reason.clone(),
                    result: optional_payload(result.clone(), diagnostic.clone()),
                };
                let operation = settle_renewing(&self.store, claim, settlement, lease).await?;
                SideEffectResult::Failed {
                    operation,
                    reason,
                    result,
                    diagnostic,
                }
            }
            SideEffectOutcome::Unknown { reason, diagnostic } => {
                let settlement = Settlement::Unknown {
                    reason: reason.clone(),
                    diagnostic: optional_payload(None, diagnostic.clone()),
                };
                let operation = settle_renewing(&self.store, claim, settlement, lease).await?;
                SideEffectResult::Unknown {
                    operation,
                    reason,
                    diagnostic,
                }
            }
        })
    }
}

fn is_invalid_outcome(error: &DurableOperationError) -> bool {
    matches!(
        error,
        DurableOperationError::InvalidInput { .. }
            | DurableOperationError::PayloadTooLarge { .. }
            | DurableOperationError::ReasonRequired
    )
}

/// Errors meaning the record is no longer this runner's pending claim.
fn is_lost_ownership(error: &DurableOperationError) -> bool {
    matches!(
        error,
        DurableOperationError::StaleFence { .. }
            | DurableOperationError::OwnerMismatch { .. }
            | DurableOperationError::AlreadySettled { .. }
            | DurableOperationError::FenceChangedDuringTransition { .. }
            | DurableOperationError::Missing { .. }
    )
}

fn lease_lost_reason(error: &DurableOperationError) -> String {
    truncate_reason(&format!("{LEASE_LOST}: {error}"))
}

/// The lease could not be renewed: the heartbeat already marked the record `unknown` when
/// the fence still allowed it, so no second runner takes it over; either way this run's
/// outcome is `unknown`.
fn lease_lost(lost: LeaseLost) -> SideEffectResult {
    match lost.unknown {
        Some(operation) => SideEffectResult::Unknown {
            reason: lease_lost_reason(&lost.error),
            operation,
            diagnostic: None,
        },
        None => lost_lease_result(&lost.claim, &lost.error),
    }
}

/// `unknown` for a run whose outcome could not be stored after its lease was lost.
fn lost_lease_result(claim: &Claim, error: &DurableOperationError) -> SideEffectResult {
    SideEffectResult::Unknown {
        operation: claim.record.clone(),
        reason: lease_lost_reason(error),
        diagnostic: None,
    }
}

fn cancelled(operation: Option<OperationRecord>, reason: &str) -> SideEffectResult {
    SideEffectResult::Cancelled {
        operation,
        reason: reason.to_owned(),
    }
}

/// The result of a claim this runner does not own.
fn observed(status: ClaimStatus, operation: OperationRecord) -> SideEffectResult {
    let (result, diagnostic) = split_payload(&operation);
    match status {
        ClaimStatus::Pending | ClaimStatus::Owner => SideEffectResult::Pending { operation },
        ClaimStatus::Conflict => SideEffectResult::Conflict { operation },
        ClaimStatus::Unknown => SideEffectResult::Unknown {
            reason: operation.reason.clone().unwrap_or_default(),
            operation,
            diagnostic,
        },
        ClaimStatus::Replay => SideEffectResult::Replayed {
            reason: operation.reason.clone(),
            operation,
            result,
            diagnostic,
        },
    }
}

/// The outcome of a finished adapter task.
fn adapter_outcome(
    joined: Result<Result<SideEffectOutcome, BoxError>, tokio::task::JoinError>,
    classifier: Option<&ErrorClassifier>,
) -> SideEffectOutcome {
    match joined {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(error)) => match classifier {
            Some(classify) => classify(&error),
            None => SideEffectOutcome::unknown(reason_from_error(&error)),
        },
        Err(join) => SideEffectOutcome::unknown(truncate_reason(&format!(
            "side-effect adapter panicked or was aborted: {join}"
        ))),
    }
}

/// The default reason of an adapter error: its trimmed text, bounded.
pub fn reason_from_error(error: &BoxError) -> String {
    let text = error.to_string();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        THREW_WITHOUT_REASON.to_owned()
    } else {
        truncate_reason(trimmed)
    }
}

/// The first [`MAX_ADAPTER_REASON_CHARS`] characters of `reason`.
fn truncate_reason(reason: &str) -> String {
    reason.chars().take(MAX_ADAPTER_REASON_CHARS).collect()
}

fn to_store_resolution(resolution: SideEffectResolution) -> Resolution {
    match resolution {
        SideEffectResolution::Completed {
            result,
            reason,
            diagnostic,
        } => Resolution::Completed {
            result: payload(Some(result), diagnostic),
            reason,
        },
        SideEffectResolution::Failed {
            reason,
            result,
            diagnostic,
        } => Resolution::Failed {
            reason,
            result: optional_payload(result, diagnostic),
        },
    }
}

/// The stored payload `{result?, diagnostic?}`.
fn payload(result: Option<Value>, diagnostic: Option<Value>) -> Value {
    let mut map = Map::new();
    if let Some(result) = result {
        map.insert("result".into(), result);
    }
    if let Some(diagnostic) = diagnostic {
        map.insert("diagnostic".into(), diagnostic);
    }
    Value::Object(map)
}

fn optional_payload(result: Option<Value>, diagnostic: Option<Value>) -> Option<Value> {
    (result.is_some() || diagnostic.is_some()).then(|| payload(result, diagnostic))
}

/// Splits a stored payload into `(result, diagnostic)`; explicit nulls stay `Some(Null)`.
fn split_payload(record: &OperationRecord) -> (Option<Value>, Option<Value>) {
    match &record.result {
        Some(Value::Object(map)) => (map.get("result").cloned(), map.get("diagnostic").cloned()),
        _ => (None, None),
    }
}
