//! The durable operation state machine, written once above [`DurableOperationBackend`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::backend::{DurableOperationBackend, MAX_PAGE_SIZE};
use crate::clock::{Clock, IncarnationGenerator, SystemClock, duration_ms, random_incarnation};
use crate::error::{BoxError, DurableOperationError};
use crate::record::{
    Fence, MAX_FINGERPRINT_BYTES, MAX_OWNER_ID_BYTES, OperationRecord, OperationState,
    missing_incarnation, validate_incarnation, validate_key, validate_reason, validate_result,
    validate_text,
};

/// Capability string a consumer checks before trusting a store's fences.
pub const FENCING_CAPABILITY: &str =
    "context-action/durable-operation-fencing/incarnation-revision-v1";
/// Default lease of a claimed operation: 5 minutes.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(300);
/// Default retention of terminal records before `prune` removes them: 1 day.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(86_400);
/// Default compare-and-set attempts of one claim.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 8;
/// Default records per prune page.
pub const DEFAULT_PRUNE_PAGE_SIZE: usize = 500;
/// Default maximum prune pages per `prune` call.
pub const DEFAULT_MAX_PRUNE_PAGES: usize = 1_000;
/// Longest accepted lease: 365 days (keeps deadlines far inside every backend's integer range).
pub const MAX_LEASE: Duration = Duration::from_secs(365 * 86_400);
/// Upper bound of `max_attempts`.
pub const MAX_CLAIM_ATTEMPTS: u32 = 1_000;

/// Tunables of a [`DurableOperationStore`].
///
/// Start from [`StoreOptions::default`] and change what you need with the `with_*` methods
/// (the struct is `#[non_exhaustive]`: new tunables are not a breaking change).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreOptions {
    /// Lease used when a claim does not name one, 1 ms..=[`MAX_LEASE`].
    pub default_lease: Duration,
    /// How long terminal and unknown records are kept before `prune` may delete them.
    pub retention: Duration,
    /// Compare-and-set attempts of one claim, `1..=MAX_CLAIM_ATTEMPTS`.
    pub max_attempts: u32,
    /// Records per prune page, `1..=MAX_PAGE_SIZE`.
    pub prune_page_size: usize,
    /// Maximum pages one `prune` call walks (`usize::MAX` for no limit), at least 1.
    pub max_prune_pages: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            default_lease: DEFAULT_LEASE,
            retention: DEFAULT_RETENTION,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            prune_page_size: DEFAULT_PRUNE_PAGE_SIZE,
            max_prune_pages: DEFAULT_MAX_PRUNE_PAGES,
        }
    }
}

impl StoreOptions {
    /// Sets the lease used when a claim does not name one.
    #[must_use]
    pub fn with_default_lease(mut self, default_lease: Duration) -> Self {
        self.default_lease = default_lease;
        self
    }

    /// Sets how long terminal and unknown records are kept before `prune` may delete them.
    #[must_use]
    pub fn with_retention(mut self, retention: Duration) -> Self {
        self.retention = retention;
        self
    }

    /// Sets the compare-and-set attempts of one claim.
    #[must_use]
    pub fn with_max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = max_attempts;
        self
    }

    /// Sets the records per prune page.
    #[must_use]
    pub fn with_prune_page_size(mut self, prune_page_size: usize) -> Self {
        self.prune_page_size = prune_page_size;
        self
    }

    /// Sets the maximum pages one `prune` call walks.
    #[must_use]
    pub fn with_max_prune_pages(mut self, max_prune_pages: usize) -> Self {
        self.max_prune_pages = max_prune_pages;
        self
    }

    fn validate(&self) -> Result<(), DurableOperationError> {
        let bad = |option, message: &str| {
            Err(DurableOperationError::InvalidOptions {
                option,
                message: message.to_owned(),
            })
        };
        if duration_ms(self.default_lease) == 0 || self.default_lease > MAX_LEASE {
            return bad("default_lease", "must be between 1 ms and 365 days");
        }
        if self.max_attempts == 0 || self.max_attempts > MAX_CLAIM_ATTEMPTS {
            return bad("max_attempts", "must be between 1 and 1000");
        }
        if self.prune_page_size == 0 || self.prune_page_size > MAX_PAGE_SIZE {
            return bad("prune_page_size", "must be between 1 and 10000");
        }
        if self.max_prune_pages == 0 {
            return bad("max_prune_pages", "must be at least 1");
        }
        Ok(())
    }
}

/// What a claim found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimStatus {
    /// The caller now owns a pending record and must finish it.
    Owner,
    /// Another owner holds a live lease.
    Pending,
    /// The operation already completed or failed; replay the stored record.
    Replay,
    /// The outcome is ambiguous; reconcile before retrying.
    Unknown,
    /// The key was used with a different fingerprint.
    Conflict,
}

/// The result of [`DurableOperationStore::claim`].
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// What the claim found.
    pub status: ClaimStatus,
    /// The record as observed (or as written, for `Owner`).
    pub record: OperationRecord,
    /// The record's fence; the owner passes it to its terminal transition.
    pub fence: Fence,
}

/// A claim request: [`ClaimRequest::new`], then [`with_lease`](ClaimRequest::with_lease) to
/// name a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRequest<'a> {
    /// Operation key.
    pub key: &'a str,
    /// Request fingerprint; a different fingerprint under the same key is a conflict.
    pub fingerprint: &'a str,
    /// The claiming owner.
    pub owner_id: &'a str,
    /// Lease; `None` uses the store default.
    pub lease: Option<Duration>,
}

impl<'a> ClaimRequest<'a> {
    /// A claim of `key` for `fingerprint` by `owner_id`, with the store's default lease.
    pub fn new(key: &'a str, fingerprint: &'a str, owner_id: &'a str) -> Self {
        Self {
            key,
            fingerprint,
            owner_id,
            lease: None,
        }
    }

    /// Sets the lease.
    #[must_use]
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }
}

/// How an `unknown` record is reconciled.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// The effect is confirmed to have happened.
    Completed {
        /// Result to replay.
        result: Value,
        /// Optional note.
        reason: Option<String>,
    },
    /// The effect is confirmed not to have happened.
    Failed {
        /// Why it failed.
        reason: String,
        /// Optional evidence.
        result: Option<Value>,
    },
}

/// The outcome of [`DurableOperationStore::recover`].
#[derive(Debug, Clone, PartialEq)]
pub enum RecoverOutcome {
    /// No record exists under the key.
    Missing,
    /// The record was not `unknown`; it is returned unchanged and no resolver ran.
    Unchanged(OperationRecord),
    /// The resolver's decision was persisted.
    Resolved(OperationRecord),
}

/// Most corrupt keys one [`PruneReport`] lists (the count stays exact).
pub const MAX_REPORTED_CORRUPT_KEYS: usize = 100;

/// Totals of one [`DurableOperationStore::prune`] call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PruneReport {
    /// Records deleted.
    pub deleted: usize,
    /// Records inspected (decoded ones; corrupt ones are counted in `corrupt`).
    pub scanned: usize,
    /// Pages read.
    pub pages: usize,
    /// Stored records that could not be decoded: skipped and kept, for an operator (or the
    /// legacy incarnation backfill) to repair.
    pub corrupt: usize,
    /// The first [`MAX_REPORTED_CORRUPT_KEYS`] of their keys, in key order.
    pub corrupt_keys: Vec<String>,
}

/// Totals of one [`DurableOperationStore::backfill_legacy_incarnations`] call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackfillReport {
    /// Records that got an incarnation from this call.
    pub backfilled: usize,
    /// Records without an incarnation that another store backfilled first (or that vanished).
    pub raced: usize,
    /// Records still undecodable for another reason, left as they are.
    pub corrupt: usize,
    /// Pages read.
    pub pages: usize,
}

/// The terminal outcome of [`DurableOperationStore::settle`].
#[derive(Debug, Clone, PartialEq)]
pub enum Settlement {
    /// Completed with a replayable result.
    Completed {
        /// Result to replay.
        result: Value,
    },
    /// Failed; the reason is required.
    Failed {
        /// Why.
        reason: String,
        /// Optional evidence.
        result: Option<Value>,
    },
    /// Ambiguous; the reason is required.
    Unknown {
        /// Why.
        reason: String,
        /// Optional bounded diagnostic.
        diagnostic: Option<Value>,
    },
}

impl Settlement {
    fn into_transition(self) -> Result<Transition, DurableOperationError> {
        Ok(match self {
            Self::Completed { result } => Transition {
                state: OperationState::Completed,
                result: Some(result),
                reason: None,
            },
            Self::Failed { reason, result } => {
                validate_reason(&reason)?;
                Transition {
                    state: OperationState::Failed,
                    result,
                    reason: Some(reason),
                }
            }
            Self::Unknown { reason, diagnostic } => {
                validate_reason(&reason)?;
                Transition {
                    state: OperationState::Unknown,
                    result: diagnostic,
                    reason: Some(reason),
                }
            }
        })
    }
}

/// A terminal transition from `pending`.
struct Transition {
    state: OperationState,
    result: Option<Value>,
    reason: Option<String>,
}

/// Durable operation records with fenced transitions over any backend.
///
/// Cheap to clone; clones share the backend, clock and options.
#[derive(Clone)]
pub struct DurableOperationStore {
    backend: Arc<dyn DurableOperationBackend>,
    options: StoreOptions,
    clock: Arc<dyn Clock>,
    incarnations: IncarnationGenerator,
}

impl std::fmt::Debug for DurableOperationStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableOperationStore")
            .field("backend", &self.backend.name())
            .field("options", &self.options)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl DurableOperationStore {
    /// A store with default options, the system clock and random incarnations.
    pub fn new(backend: Arc<dyn DurableOperationBackend>) -> Self {
        Self {
            backend,
            options: StoreOptions::default(),
            clock: Arc::new(SystemClock),
            incarnations: Arc::new(random_incarnation),
        }
    }

    /// A store with the given options (validated).
    pub fn with_options(
        backend: Arc<dyn DurableOperationBackend>,
        options: StoreOptions,
    ) -> Result<Self, DurableOperationError> {
        options.validate()?;
        Ok(Self {
            options,
            ..Self::new(backend)
        })
    }

    /// Replaces the clock (tests inject a [`ManualClock`](crate::ManualClock)).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Replaces the incarnation generator.
    pub fn with_incarnation_generator(mut self, generator: IncarnationGenerator) -> Self {
        self.incarnations = generator;
        self
    }

    /// The fencing capability this store implements ([`FENCING_CAPABILITY`]).
    pub fn fencing_capability(&self) -> &'static str {
        FENCING_CAPABILITY
    }

    /// The store's options.
    pub fn options(&self) -> &StoreOptions {
        &self.options
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn DurableOperationBackend> {
        &self.backend
    }

    /// The current time of the store's clock.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Reads the record under `key`.
    pub async fn get(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        validate_key(key)?;
        self.read(key).await
    }

    /// Claims `key`: inserts a pending record, reclaims an expired lease, or reports what
    /// another owner left (pending / replay / unknown / conflict).
    ///
    /// The first attempt inserts without reading, so a new key costs one round trip; an
    /// existing key costs that failed insert plus a read. Gives up with
    /// [`DurableOperationError::ClaimContended`] after `max_attempts` lost writes.
    pub async fn claim(&self, request: ClaimRequest<'_>) -> Result<Claim, DurableOperationError> {
        validate_key(request.key)?;
        validate_text("fingerprint", request.fingerprint, MAX_FINGERPRINT_BYTES)?;
        validate_text("owner_id", request.owner_id, MAX_OWNER_ID_BYTES)?;
        let lease_ms = self.lease_ms(request.lease)?;
        for attempt in 0..self.options.max_attempts {
            let now = self.clock.now_ms();
            // First attempt: assume the key is new and insert without reading (one round trip
            // on the common path); a lost insert falls through to read-then-decide.
            let current = if attempt == 0 {
                None
            } else {
                self.read(request.key).await?
            };
            let (expected, next) = match current {
                None => (None, self.new_record(&request, now, lease_ms)?),
                Some(current) => match observed_status(&current, request.fingerprint, now) {
                    Some(status) => return Ok(claim_of(status, current)),
                    None => {
                        let fence = current.fence();
                        (
                            Some(fence),
                            reclaimed(current, request.owner_id, now, lease_ms),
                        )
                    }
                },
            };
            if self
                .backend
                .compare_and_set(request.key, expected.as_ref(), Some(&next))
                .await?
            {
                return Ok(claim_of(ClaimStatus::Owner, next));
            }
        }
        Err(DurableOperationError::ClaimContended {
            key: request.key.to_owned(),
        })
    }

    /// Settles this store's own `Owner` claim in one round trip (no read on the happy path),
    /// with the same preconditions and errors as [`complete`](Self::complete),
    /// [`fail`](Self::fail) and [`mark_unknown`](Self::mark_unknown).
    pub async fn settle(
        &self,
        claim: &Claim,
        settlement: Settlement,
    ) -> Result<OperationRecord, DurableOperationError> {
        if claim.status != ClaimStatus::Owner {
            return Err(DurableOperationError::invalid(
                "claim",
                "only an owner claim can be settled",
            ));
        }
        let transition = settlement.into_transition()?;
        let record = &claim.record;
        self.finish(
            &record.key,
            &record.owner_id,
            &claim.fence,
            transition,
            Some(record),
        )
        .await
    }

    /// Extends the lease of this store's own `Owner` claim: a fenced heartbeat that writes
    /// revision + 1 with the deadline now + `lease` (`None`: the store default), so a reclaim
    /// racing it on the old fence loses. Returns the claim to use from now on.
    ///
    /// Unlike the terminal transitions, a deadline that already passed is accepted while the
    /// fence still matches: a matching fence proves nobody reclaimed the record. Otherwise the
    /// error names the precondition that failed (`Missing`, `OwnerMismatch`, `StaleFence`,
    /// `AlreadySettled`), as [`settle`](Self::settle) does.
    pub async fn renew_lease(
        &self,
        claim: &Claim,
        lease: Option<Duration>,
    ) -> Result<Claim, DurableOperationError> {
        if claim.status != ClaimStatus::Owner {
            return Err(DurableOperationError::invalid(
                "claim",
                "only an owner claim can renew its lease",
            ));
        }
        let lease_ms = self.lease_ms(lease)?;
        let (known, fence) = (&claim.record, &claim.fence);
        let (key, owner_id) = (known.key.as_str(), known.owner_id.as_str());
        validate_key(key)?;
        // As in `finish`: a record that matches the fence is exactly the stored one, so the
        // first try skips the read; anything else reads and names the failed precondition.
        if known.matches(fence) && check_owner_holds(known, owner_id, fence).is_ok() {
            let next = reclaimed(known.clone(), owner_id, self.clock.now_ms(), lease_ms);
            if self
                .backend
                .compare_and_set(key, Some(fence), Some(&next))
                .await?
            {
                return Ok(claim_of(ClaimStatus::Owner, next));
            }
        }
        let current = self.require(key).await?;
        check_owner_holds(&current, owner_id, fence)?;
        let next = reclaimed(current, owner_id, self.clock.now_ms(), lease_ms);
        if self
            .backend
            .compare_and_set(key, Some(fence), Some(&next))
            .await?
        {
            Ok(claim_of(ClaimStatus::Owner, next))
        } else {
            Err(DurableOperationError::FenceChangedDuringTransition {
                key: key.to_owned(),
            })
        }
    }

    /// Completes the owner's pending record with a replayable `result`.
    pub async fn complete(
        &self,
        key: &str,
        owner_id: &str,
        result: Value,
        fence: &Fence,
    ) -> Result<OperationRecord, DurableOperationError> {
        let transition = Settlement::Completed { result }.into_transition()?;
        self.finish(key, owner_id, fence, transition, None).await
    }

    /// Fails the owner's pending record; `reason` is required, `result` is optional evidence.
    pub async fn fail(
        &self,
        key: &str,
        owner_id: &str,
        reason: &str,
        result: Option<Value>,
        fence: &Fence,
    ) -> Result<OperationRecord, DurableOperationError> {
        let reason = reason.to_owned();
        let transition = Settlement::Failed { reason, result }.into_transition()?;
        self.finish(key, owner_id, fence, transition, None).await
    }

    /// Marks the owner's pending record `unknown` with a reason and optional bounded diagnostic.
    pub async fn mark_unknown(
        &self,
        key: &str,
        owner_id: &str,
        reason: &str,
        diagnostic: Option<Value>,
        fence: &Fence,
    ) -> Result<OperationRecord, DurableOperationError> {
        let reason = reason.to_owned();
        let transition = Settlement::Unknown { reason, diagnostic }.into_transition()?;
        self.finish(key, owner_id, fence, transition, None).await
    }

    /// Reconciles an `unknown` record as completed or failed. Never runs a handler; any actor
    /// holding the current fence may do it.
    pub async fn resolve_unknown(
        &self,
        key: &str,
        reconciler_id: &str,
        resolution: Resolution,
        fence: &Fence,
    ) -> Result<OperationRecord, DurableOperationError> {
        validate_key(key)?;
        validate_text("reconciler_id", reconciler_id, MAX_OWNER_ID_BYTES)?;
        let (state, result, reason) = match resolution {
            Resolution::Completed { result, reason } => {
                (OperationState::Completed, Some(result), reason)
            }
            Resolution::Failed { reason, result } => {
                validate_reason(&reason)?;
                (OperationState::Failed, result, Some(reason))
            }
        };
        if let Some(reason) = &reason {
            validate_reason(reason)?;
        }
        validate_result(result.as_ref())?;
        let current = self.require(key).await?;
        if current.state != OperationState::Unknown {
            return Err(DurableOperationError::CannotResolve {
                key: key.to_owned(),
                state: current.state,
            });
        }
        if !current.matches(fence) {
            return Err(DurableOperationError::StaleFence {
                key: key.to_owned(),
            });
        }
        let now = self.clock.now_ms();
        let next = OperationRecord {
            revision: current.revision + 1,
            state,
            result,
            reason,
            updated_at: now,
            lease_expires_at: None,
            reconciled_by: Some(reconciler_id.to_owned()),
            reconciled_at: Some(now),
            ..current
        };
        if self
            .backend
            .compare_and_set(key, Some(fence), Some(&next))
            .await?
        {
            Ok(next)
        } else {
            Err(DurableOperationError::FenceChangedDuringReconciliation {
                key: key.to_owned(),
            })
        }
    }

    /// Status-first recovery: reads the record and calls `resolver` only when it is `unknown`,
    /// then persists the resolution fenced by the observed (or `expected_fence`) revision.
    pub async fn recover<F, Fut>(
        &self,
        key: &str,
        reconciler_id: &str,
        expected_fence: Option<&Fence>,
        resolver: F,
    ) -> Result<RecoverOutcome, DurableOperationError>
    where
        F: FnOnce(OperationRecord) -> Fut,
        Fut: Future<Output = Result<Resolution, BoxError>>,
    {
        validate_text("reconciler_id", reconciler_id, MAX_OWNER_ID_BYTES)?;
        let Some(current) = self.get(key).await? else {
            return Ok(RecoverOutcome::Missing);
        };
        if current.state != OperationState::Unknown {
            return Ok(RecoverOutcome::Unchanged(current));
        }
        let fence = match expected_fence {
            Some(expected) if !current.matches(expected) => {
                return Err(DurableOperationError::StaleFence {
                    key: key.to_owned(),
                });
            }
            Some(expected) => expected.clone(),
            None => current.fence(),
        };
        let resolution =
            resolver(current)
                .await
                .map_err(|e| DurableOperationError::ResolverFailed {
                    key: key.to_owned(),
                    message: e.to_string(),
                })?;
        let record = self
            .resolve_unknown(key, reconciler_id, resolution, &fence)
            .await?;
        Ok(RecoverOutcome::Resolved(record))
    }

    /// Gives the record under `key`, written by the reference before fencing (no incarnation),
    /// a fresh incarnation, and returns the record as stored afterwards. Atomic in the backend:
    /// when stores race, one incarnation wins and every one of them returns it. A record that
    /// already has an incarnation is returned unchanged. Never run implicitly: a legacy record
    /// reads as [`MISSING_INCARNATION`](crate::record::MISSING_INCARNATION) until this is called.
    pub async fn backfill_legacy_incarnation(
        &self,
        key: &str,
    ) -> Result<OperationRecord, DurableOperationError> {
        validate_key(key)?;
        let incarnation = (self.incarnations)();
        validate_incarnation(&incarnation)?;
        self.backend
            .backfill_legacy_incarnation(key, &incarnation)
            .await?;
        // Won or lost, the record now holds exactly one incarnation.
        self.require(key).await
    }

    /// Walks every page (bounded like `prune`) and backfills each record the backend reports
    /// as missing its incarnation; other corrupt records are counted and left alone.
    pub async fn backfill_legacy_incarnations(
        &self,
    ) -> Result<BackfillReport, DurableOperationError> {
        let mut report = BackfillReport::default();
        let mut cursor: Option<String> = None;
        loop {
            if report.pages == self.options.max_prune_pages {
                return Err(DurableOperationError::PrunePageLimitExceeded);
            }
            let page = self
                .backend
                .list_page(cursor.as_deref(), self.options.prune_page_size)
                .await?;
            report.pages += 1;
            for corrupt in page.corrupt {
                if corrupt.error != missing_incarnation() {
                    report.corrupt += 1;
                    continue;
                }
                let incarnation = (self.incarnations)();
                validate_incarnation(&incarnation)?;
                if self
                    .backend
                    .backfill_legacy_incarnation(&corrupt.key, &incarnation)
                    .await?
                {
                    report.backfilled += 1;
                } else {
                    report.raced += 1;
                }
            }
            match page.next_cursor {
                None => return Ok(report),
                Some(next) if cursor.as_deref().is_some_and(|c| next.as_str() <= c) => {
                    return Err(DurableOperationError::CursorDidNotAdvance);
                }
                Some(next) => cursor = Some(next),
            }
        }
    }

    /// Deletes completed, failed and unknown records last written before now − retention.
    pub async fn prune(&self) -> Result<PruneReport, DurableOperationError> {
        let before = self
            .clock
            .now_ms()
            .saturating_sub(duration_ms(self.options.retention));
        self.prune_before(before).await
    }

    /// Deletes non-pending records with `updated_at < before_ms`, page by page. Records the
    /// backend cannot decode are skipped and reported, so one bad record never stops it.
    pub async fn prune_before(&self, before_ms: u64) -> Result<PruneReport, DurableOperationError> {
        let mut report = PruneReport::default();
        let mut cursor: Option<String> = None;
        loop {
            if report.pages == self.options.max_prune_pages {
                return Err(DurableOperationError::PrunePageLimitExceeded);
            }
            let page = self
                .backend
                .list_page(cursor.as_deref(), self.options.prune_page_size)
                .await?;
            report.pages += 1;
            for corrupt in page.corrupt {
                report.corrupt += 1;
                if report.corrupt_keys.len() < MAX_REPORTED_CORRUPT_KEYS {
                    report.corrupt_keys.push(corrupt.key);
                }
            }
            for record in page.records {
                report.scanned += 1;
                if record.state != OperationState::Pending && record.updated_at < before_ms {
                    let fence = record.fence();
                    // A lost CAS means someone rewrote the record meanwhile: keep it.
                    if self
                        .backend
                        .compare_and_set(&record.key, Some(&fence), None)
                        .await?
                    {
                        report.deleted += 1;
                    }
                }
            }
            match page.next_cursor {
                None => return Ok(report),
                Some(next) if cursor.as_deref().is_some_and(|c| next.as_str() <= c) => {
                    return Err(DurableOperationError::CursorDidNotAdvance);
                }
                Some(next) => cursor = Some(next),
            }
        }
    }

    /// Writes a terminal transition. With `known` (the owner's claimed record) the first try
    /// skips the read: a matching fence proves the stored record is exactly `known`. Any failed
    /// precondition or lost compare-and-set then falls back to the authoritative path, which
    /// reads the stored record so the error names the precondition that really failed.
    async fn finish(
        &self,
        key: &str,
        owner_id: &str,
        fence: &Fence,
        mut transition: Transition,
        known: Option<&OperationRecord>,
    ) -> Result<OperationRecord, DurableOperationError> {
        validate_key(key)?;
        validate_text("owner_id", owner_id, MAX_OWNER_ID_BYTES)?;
        validate_result(transition.result.as_ref())?;
        let now = self.clock.now_ms();
        let fast = known.filter(|record| {
            record.key == key
                && record.matches(fence)
                && check_owner_may_finish(record, owner_id, fence, now).is_ok()
        });
        if let Some(record) = fast {
            let next = settled(record.clone(), transition, now);
            if self
                .backend
                .compare_and_set(key, Some(fence), Some(&next))
                .await?
            {
                return Ok(next);
            }
            transition = Transition {
                state: next.state,
                result: next.result,
                reason: next.reason,
            };
        }
        let current = self.require(key).await?;
        check_owner_may_finish(&current, owner_id, fence, now)?;
        let next = settled(current, transition, now);
        if self
            .backend
            .compare_and_set(key, Some(fence), Some(&next))
            .await?
        {
            Ok(next)
        } else {
            Err(DurableOperationError::FenceChangedDuringTransition {
                key: key.to_owned(),
            })
        }
    }

    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        let record = self.backend.read(key).await?;
        if let Some(record) = &record {
            if record.key != key {
                return Err(DurableOperationError::MismatchedRecordKey);
            }
            record.check_invariants()?;
        }
        Ok(record)
    }

    async fn require(&self, key: &str) -> Result<OperationRecord, DurableOperationError> {
        self.read(key)
            .await?
            .ok_or_else(|| DurableOperationError::Missing {
                key: key.to_owned(),
            })
    }

    pub(crate) fn lease_ms(&self, lease: Option<Duration>) -> Result<u64, DurableOperationError> {
        let lease = lease.unwrap_or(self.options.default_lease);
        let ms = duration_ms(lease);
        if ms == 0 || lease > MAX_LEASE {
            return Err(DurableOperationError::invalid(
                "lease",
                "must be between 1 ms and 365 days",
            ));
        }
        Ok(ms)
    }

    fn new_record(
        &self,
        request: &ClaimRequest<'_>,
        now: u64,
        lease_ms: u64,
    ) -> Result<OperationRecord, DurableOperationError> {
        let incarnation = (self.incarnations)();
        validate_incarnation(&incarnation)?;
        Ok(OperationRecord {
            key: request.key.to_owned(),
            fingerprint: request.fingerprint.to_owned(),
            owner_id: request.owner_id.to_owned(),
            incarnation,
            revision: 1,
            state: OperationState::Pending,
            result: None,
            reason: None,
            created_at: now,
            updated_at: now,
            lease_expires_at: Some(now.saturating_add(lease_ms)),
            reconciled_by: None,
            reconciled_at: None,
        })
    }
}

/// The claim status an existing record yields, or `None` when its expired lease may be reclaimed.
fn observed_status(current: &OperationRecord, fingerprint: &str, now: u64) -> Option<ClaimStatus> {
    if current.fingerprint != fingerprint {
        return Some(ClaimStatus::Conflict);
    }
    match current.state {
        OperationState::Unknown => Some(ClaimStatus::Unknown),
        OperationState::Completed | OperationState::Failed => Some(ClaimStatus::Replay),
        OperationState::Pending if current.lease_expired(now) => None,
        OperationState::Pending => Some(ClaimStatus::Pending),
    }
}

/// The pending record after a new owner takes over an expired lease, or its owner renews it
/// (same incarnation, revision + 1, new deadline).
fn reclaimed(current: OperationRecord, owner_id: &str, now: u64, lease_ms: u64) -> OperationRecord {
    OperationRecord {
        owner_id: owner_id.to_owned(),
        revision: current.revision + 1,
        updated_at: now,
        lease_expires_at: Some(now.saturating_add(lease_ms)),
        ..current
    }
}

/// The record after a terminal transition: revision +1, lease cleared.
fn settled(current: OperationRecord, transition: Transition, now: u64) -> OperationRecord {
    OperationRecord {
        revision: current.revision + 1,
        state: transition.state,
        result: transition.result,
        reason: transition.reason,
        updated_at: now,
        lease_expires_at: None,
        ..current
    }
}

fn claim_of(status: ClaimStatus, record: OperationRecord) -> Claim {
    Claim {
        status,
        fence: record.fence(),
        record,
    }
}

/// The terminal-transition preconditions, in the reference's order.
fn check_owner_may_finish(
    current: &OperationRecord,
    owner_id: &str,
    fence: &Fence,
    now: u64,
) -> Result<(), DurableOperationError> {
    check_owner_holds(current, owner_id, fence)?;
    if current.lease_expired(now) {
        return Err(DurableOperationError::LeaseExpired {
            key: current.key.clone(),
        });
    }
    Ok(())
}

/// `owner_id` still holds `current` under `fence`, and it is pending (the lease aside).
fn check_owner_holds(
    current: &OperationRecord,
    owner_id: &str,
    fence: &Fence,
) -> Result<(), DurableOperationError> {
    let key = || current.key.clone();
    if current.owner_id != owner_id {
        return Err(DurableOperationError::OwnerMismatch {
            key: key(),
            owner_id: current.owner_id.clone(),
        });
    }
    if !current.matches(fence) {
        return Err(DurableOperationError::StaleFence { key: key() });
    }
    if current.state != OperationState::Pending {
        return Err(DurableOperationError::AlreadySettled {
            key: key(),
            state: current.state,
        });
    }
    Ok(())
}
