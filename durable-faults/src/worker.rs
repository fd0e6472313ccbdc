//! One worker process: random claim / effect / settle, reconcile, read and prune operations on
//! a small key space through the public [`DurableOperationStore`], each recorded in the
//! process's own history file before and after the call (see [`crate::history`]).
//!
//! Its side effect appends to the shared ledger (fsynced) under the claim's fence, so the
//! ledger tells what ran whatever the worker believed. A reconcile asks the ledger (the
//! effect's own status query) whether an `unknown` record's effect happened. The worker runs
//! until it is killed (the nemesis does that) or its time is up; its clock may be skewed.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tool_durable_operations::backend::postgres::PostgresBackend;
use tool_durable_operations::backend::redis::RedisBackend;
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_durable_operations::{
    BoxError, Claim, ClaimRequest, ClaimStatus, Clock, DurableOperationBackend,
    DurableOperationError, DurableOperationStore, OperationRecord, OperationState, RecoverOutcome,
    Resolution, Settlement, SideEffectContext, SideEffectOutcome, SideEffectRequest,
    SideEffectResult, SideEffectRunner, StoreOptions,
};

pub use crate::backend::Backend;
use crate::history::{
    ClaimView, Effect, Event, FenceView, HistoryWriter, LedgerWriter, OpKind, Phase, StateView,
    now_ms, read_json_lines,
};
use crate::mutant::{self, Mutant};
use crate::recording::{Recorder, RecordingBackend};

/// The fingerprint of the operation every key stands for.
pub const FINGERPRINT: &str = "fp-main";
/// The fingerprint of an occasional conflicting request.
pub const CONFLICTING_FINGERPRINT: &str = "fp-other";

/// What one worker process does.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The backend.
    pub backend: Backend,
    /// Where it is.
    pub url: String,
    /// Table (SQL) or key prefix (Redis) of this campaign.
    pub namespace: String,
    /// This worker's number.
    pub worker: u32,
    /// Which incarnation of this worker this process is.
    pub process: u32,
    /// The history file of this process.
    pub history: PathBuf,
    /// The shared effect ledger.
    pub ledger: PathBuf,
    /// Keys `k0..k{keys}`.
    pub keys: u32,
    /// Seed of this process's choices.
    pub seed: u64,
    /// Added to the wall clock the store reads (ms, may be negative).
    pub clock_skew_ms: i64,
    /// Lease of a claim.
    pub lease: Duration,
    /// Retention of settled records before a prune may delete them.
    pub retention: Duration,
    /// The guarantee this process breaks on purpose, if any.
    pub mutant: Option<Mutant>,
}

/// The wall clock moved by a fixed skew.
#[derive(Debug)]
struct SkewedClock(i64);

impl Clock for SkewedClock {
    fn now_ms(&self) -> u64 {
        now_ms().saturating_add_signed(self.0)
    }
}

/// A small deterministic generator (xorshift64*), enough to pick operations.
struct Choices(u64);

impl Choices {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

/// Runs operations until the process is killed or `run_for` passes.
pub async fn run(config: WorkerConfig, run_for: Duration) -> Result<(), String> {
    let mut worker = Worker::open(config).await?;
    let deadline = tokio::time::Instant::now() + run_for;
    while tokio::time::Instant::now() < deadline {
        worker.step().await?;
    }
    Ok(())
}

/// Creates what the workers' store needs before any worker starts (the PostgreSQL table).
pub async fn prepare(config: &WorkerConfig) -> Result<(), String> {
    if config.backend == Backend::Postgres {
        let backend = PostgresBackend::connect(&config.url, &config.namespace, 1)
            .await
            .map_err(|e| e.to_string())?;
        backend.apply_schema().await.map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The effect run by the side-effect runner, recording itself as it goes.
struct RunnerEffect {
    claim_op: Event,
    settle_op: Event,
    recorder: Recorder,
    ledger: PathBuf,
    reached: Arc<AtomicBool>,
}

impl RunnerEffect {
    async fn run(
        self,
        context: SideEffectContext,
        outcome: SideEffectOutcome,
    ) -> Result<SideEffectOutcome, BoxError> {
        self.reached.store(true, Ordering::SeqCst);
        let fence = FenceView::from(&context.fence);
        let mut claimed = self.claim_op.clone();
        claimed.time_ms = now_ms();
        claimed.phase = Phase::Ok;
        claimed.claim = Some(ClaimView::Owner);
        claimed.observed = Some(StateView::Pending);
        claimed.fence = Some(fence.clone());
        self.recorder.record(&claimed)?;
        LedgerWriter::open(&self.ledger)?.append(&Effect {
            time_ms: now_ms(),
            worker: claimed.worker,
            process: claimed.process,
            op_id: claimed.op_id,
            key: claimed.key.clone(),
            fingerprint: claimed.fingerprint.clone(),
            fence: fence.clone(),
        })?;
        let mut settling = self.settle_op;
        settling.time_ms = now_ms();
        settling.fence = Some(fence);
        self.recorder.record(&settling)?;
        Ok(outcome)
    }
}

/// How a run that reached the effect ended: the state it stored, or indeterminate when it
/// stored something else (a lost lease) or the store failed.
fn settled_by_runner(
    ran: &Result<SideEffectResult, DurableOperationError>,
    asked: StateView,
) -> Completion {
    let stored = match ran {
        Ok(SideEffectResult::Completed { operation, .. })
        | Ok(SideEffectResult::Failed { operation, .. })
        | Ok(SideEffectResult::Unknown { operation, .. }) => Some(operation),
        _ => None,
    };
    match stored {
        Some(record) if StateView::from(record.state) == asked => {
            Completion::of_record(Some(record))
        }
        _ => Completion {
            phase: Phase::Info,
            observed: None,
            fence: None,
            claim: None,
            error: None,
        },
    }
}

/// How a run that never reached the effect ended: what its claim found.
fn claimed_by_runner(ran: &Result<SideEffectResult, DurableOperationError>) -> Completion {
    let (claim, record) = match ran {
        Ok(SideEffectResult::Replayed { operation, .. }) => (ClaimView::Replay, operation),
        Ok(SideEffectResult::Pending { operation }) => (ClaimView::Pending, operation),
        Ok(SideEffectResult::Conflict { operation }) => (ClaimView::Conflict, operation),
        Ok(SideEffectResult::Unknown { operation, .. }) => (ClaimView::Unknown, operation),
        Err(error) => return Completion::of_error(error),
        Ok(_) => {
            return Completion {
                phase: Phase::Info,
                observed: None,
                fence: None,
                claim: None,
                error: None,
            };
        }
    };
    let mut done = Completion::of_record(Some(record));
    done.claim = Some(claim);
    done
}

/// After the faults: reads every key and reconciles each `unknown` record from the ledger, so
/// the history ends with what the store holds.
pub async fn final_pass(config: WorkerConfig) -> Result<(), String> {
    let mut worker = Worker::open(config).await?;
    for key in (0..worker.config.keys).map(|index| format!("k{index}")) {
        worker.reconcile(&key).await?;
        worker.read(&key).await?;
    }
    Ok(())
}

/// The store of this process: the real backend, broken by the mutant (if any), beneath the
/// recording, so the history holds what the store was told.
async fn connect(
    config: &WorkerConfig,
    recorder: &Recorder,
) -> Result<DurableOperationStore, String> {
    let backend: Arc<dyn DurableOperationBackend> = match config.backend {
        Backend::Redis => Arc::new(
            RedisBackend::connect(&config.url, &config.namespace)
                .await
                .map_err(|e| e.to_string())?,
        ),
        // The campaign created the table once ([`prepare`]): concurrent `CREATE TABLE IF NOT
        // EXISTS` of several workers race in PostgreSQL's catalog.
        Backend::Postgres => Arc::new(
            PostgresBackend::connect(&config.url, &config.namespace, 2)
                .await
                .map_err(|e| e.to_string())?,
        ),
        Backend::Sqlite => {
            let backend = SqliteBackend::open(&config.url)
                .await
                .map_err(|e| e.to_string())?;
            Arc::new(backend)
        }
    };
    let backend = mutant::wrap(backend, config.mutant);
    let backend = RecordingBackend::new(backend, recorder.clone(), config.clock_skew_ms);
    let options = StoreOptions::default()
        .with_default_lease(config.lease)
        .with_retention(config.retention);
    let store = DurableOperationStore::with_options(Arc::new(backend), options)
        .map_err(|e| e.to_string())?;
    let lease_ms = u64::try_from(config.lease.as_millis()).unwrap_or(u64::MAX);
    let hidden = config
        .mutant
        .map_or(0, |m| m.hidden_skew_ms(config.worker, lease_ms));
    let skew = config.clock_skew_ms.saturating_add(hidden);
    Ok(store.with_clock(Arc::new(SkewedClock(skew))))
}

struct Worker {
    config: WorkerConfig,
    store: DurableOperationStore,
    recorder: Recorder,
    ledger: LedgerWriter,
    choices: Choices,
}

/// How a store call ended, as the history records it.
struct Completion {
    phase: Phase,
    observed: Option<StateView>,
    fence: Option<FenceView>,
    claim: Option<ClaimView>,
    error: Option<String>,
}

impl Completion {
    fn of_record(record: Option<&OperationRecord>) -> Self {
        Self {
            phase: Phase::Ok,
            observed: Some(record.map_or(StateView::Absent, |r| r.state.into())),
            fence: record.map(|r| FenceView::from(&r.fence())),
            claim: None,
            error: None,
        }
    }

    /// A refusal the store decided (nothing written) is `Fail`; anything else (a dropped
    /// connection, a timeout) may or may not have taken effect: `Info`.
    fn of_error(error: &DurableOperationError) -> Self {
        let definite = matches!(
            error,
            DurableOperationError::StaleFence { .. }
                | DurableOperationError::AlreadySettled { .. }
                | DurableOperationError::OwnerMismatch { .. }
                | DurableOperationError::LeaseExpired { .. }
                | DurableOperationError::Missing { .. }
                | DurableOperationError::CannotResolve { .. }
                | DurableOperationError::ClaimContended { .. }
        );
        Self {
            phase: if definite { Phase::Fail } else { Phase::Info },
            observed: None,
            fence: None,
            claim: None,
            error: Some(error.code().to_owned()),
        }
    }
}

impl Worker {
    /// Connects to the store and opens this process's history and the ledger.
    async fn open(config: WorkerConfig) -> Result<Self, String> {
        let history = HistoryWriter::open(&config.history).map_err(|e| e.to_string())?;
        let recorder = Recorder::new(history, config.worker, config.process);
        Ok(Self {
            store: connect(&config, &recorder).await?,
            recorder,
            ledger: LedgerWriter::open(&config.ledger).map_err(|e| e.to_string())?,
            choices: Choices(config.seed | 1),
            config,
        })
    }

    async fn step(&mut self) -> Result<(), String> {
        let key = format!("k{}", self.choices.below(u64::from(self.config.keys)));
        match self.choices.below(100) {
            0..=39 => self.claim_and_run(&key).await,
            40..=54 => self.run_through_runner(&key).await,
            55..=74 => self.read(&key).await,
            75..=94 => self.reconcile(&key).await,
            _ => self.prune().await,
        }
    }

    fn event(&mut self, op: OpKind, key: &str, fingerprint: &str) -> Event {
        self.recorder.invoke(op, key, fingerprint)
    }

    fn record(&mut self, event: &Event) -> Result<(), String> {
        self.recorder.record(event)
    }

    fn complete(&mut self, invoke: &Event, done: Completion) -> Result<(), String> {
        complete(&self.recorder, invoke, done)
    }

    /// Claims `key`; as its owner, runs the effect and settles (or, now and then, walks away
    /// without settling, as a crashed owner would, leaving the lease to lapse).
    async fn claim_and_run(&mut self, key: &str) -> Result<(), String> {
        let fingerprint = if self.choices.below(100) < 3 {
            CONFLICTING_FINGERPRINT
        } else {
            FINGERPRINT
        };
        let invoke = self.event(OpKind::Claim, key, fingerprint);
        self.record(&invoke)?;
        let owner = format!("w{}p{}", self.config.worker, self.config.process);
        let request = ClaimRequest::new(key, fingerprint, &owner);
        let claim = match self.store.claim(request).await {
            Ok(claim) => claim,
            Err(error) => return self.complete(&invoke, Completion::of_error(&error)),
        };
        let mut done = Completion::of_record(Some(&claim.record));
        done.claim = Some(claim.status.into());
        self.complete(&invoke, done)?;
        if claim.status != ClaimStatus::Owner {
            return Ok(());
        }
        self.run_effect(&invoke, &claim)?;
        // Now and then the owner walks away (a crash) or stalls past its lease and settles late
        // (a long GC pause, a slow effect): the fence must refuse that settle once another owner
        // took over.
        match self.choices.below(200) {
            0..=4 => Ok(()),
            5..=39 => {
                self.settle_late(key, claim);
                Ok(())
            }
            _ => self.settle(key, &claim).await,
        }
    }

    /// The side effect: one fsynced ledger line under the claim's fence.
    fn run_effect(&mut self, claim_op: &Event, claim: &Claim) -> Result<(), String> {
        let effect = Effect {
            time_ms: now_ms(),
            worker: claim_op.worker,
            process: claim_op.process,
            op_id: claim_op.op_id,
            key: claim_op.key.clone(),
            fingerprint: claim_op.fingerprint.clone(),
            fence: FenceView::from(&claim.fence),
        };
        self.ledger.append(&effect).map_err(|e| e.to_string())
    }

    async fn settle(&mut self, key: &str, claim: &Claim) -> Result<(), String> {
        let (settlement, to) = self.pick_settlement(key);
        let settle = Settle {
            store: self.store.clone(),
            recorder: self.recorder.clone(),
            ignore_fence: self.config.mutant == Some(Mutant::SettleIgnoresFence),
        };
        settle.run(key, claim, settlement, to).await
    }

    /// An owner that stalls past its lease, then settles: the fence must refuse it once
    /// another owner took over. Runs on its own task, so the worker goes on meanwhile.
    fn settle_late(&mut self, key: &str, claim: Claim) {
        let (settlement, to) = self.pick_settlement(key);
        let settle = Settle {
            store: self.store.clone(),
            recorder: self.recorder.clone(),
            ignore_fence: self.config.mutant == Some(Mutant::SettleIgnoresFence),
        };
        let (key, stall) = (key.to_owned(), self.config.lease + self.config.lease / 5);
        tokio::spawn(async move {
            tokio::time::sleep(stall).await;
            // A history that cannot be written ends this task only; the worker stops on its
            // own next write.
            let _ = settle.run(&key, &claim, settlement, to).await;
        });
    }

    /// A settlement to ask for: mostly completed, sometimes failed or unknown.
    fn pick_settlement(&mut self, key: &str) -> (Settlement, StateView) {
        match self.choices.below(100) {
            0..=79 => (
                Settlement::Completed {
                    result: json!({"done": key}),
                },
                StateView::Completed,
            ),
            80..=89 => (
                Settlement::Failed {
                    reason: "the effect reported a failure".into(),
                    result: None,
                },
                StateView::Failed,
            ),
            _ => (
                Settlement::Unknown {
                    reason: "the effect's outcome was not confirmed".into(),
                    diagnostic: None,
                },
                StateView::Unknown,
            ),
        }
    }

    /// The same operation through the side-effect runner, which claims, keeps the lease and
    /// settles by itself. The effect records, from inside the runner, the claim it got (before
    /// it runs), its ledger line, and the settlement it asks for; the worker records how the run
    /// ended. A run that never reached the effect records what the claim found instead.
    async fn run_through_runner(&mut self, key: &str) -> Result<(), String> {
        let claim_op = self.event(OpKind::Claim, key, FINGERPRINT);
        self.record(&claim_op)?;
        let mut settle_op = self.event(OpKind::Settle, key, FINGERPRINT);
        let (outcome, to) = self.pick_outcome(key);
        settle_op.settle_to = Some(to);
        let owner = format!("w{}p{}", self.config.worker, self.config.process);
        let runner = SideEffectRunner::new(self.store.clone(), owner).map_err(|e| e.to_string())?;
        let reached = Arc::new(AtomicBool::new(false));
        let effect = RunnerEffect {
            claim_op: claim_op.clone(),
            settle_op: settle_op.clone(),
            recorder: self.recorder.clone(),
            ledger: self.config.ledger.clone(),
            reached: reached.clone(),
        };
        let request = SideEffectRequest::new(key, FINGERPRINT).with_lease(self.config.lease);
        let ran = runner
            .run(request, move |context| effect.run(context, outcome))
            .await;
        if reached.load(Ordering::SeqCst) {
            settle_op.fence = None;
            self.complete(&settle_op, settled_by_runner(&ran, to))
        } else {
            self.complete(&claim_op, claimed_by_runner(&ran))
        }
    }

    /// A settlement to ask for: mostly completed, sometimes failed or unknown.
    fn pick_outcome(&mut self, key: &str) -> (SideEffectOutcome, StateView) {
        match self.choices.below(100) {
            0..=79 => (
                SideEffectOutcome::completed(json!({"done": key})),
                StateView::Completed,
            ),
            80..=89 => (
                SideEffectOutcome::failed("the effect reported a failure"),
                StateView::Failed,
            ),
            _ => (
                SideEffectOutcome::unknown("the effect's outcome was not confirmed"),
                StateView::Unknown,
            ),
        }
    }

    async fn read(&mut self, key: &str) -> Result<(), String> {
        let invoke = self.event(OpKind::Read, key, FINGERPRINT);
        self.record(&invoke)?;
        let done = match self.store.get(key).await {
            Ok(record) => Completion::of_record(record.as_ref()),
            Err(error) => Completion::of_error(&error),
        };
        self.complete(&invoke, done)
    }

    /// Resolves an `unknown` record from the ledger: the effect happened iff a ledger line for
    /// that record's incarnation exists.
    async fn reconcile(&mut self, key: &str) -> Result<(), String> {
        let record = match self.store.get(key).await {
            Ok(Some(record)) if record.state == OperationState::Unknown => record,
            _ => return Ok(()),
        };
        let fence = record.fence();
        let happened = self.effect_happened(key, &fence.incarnation)?;
        let (resolution, to) = if happened {
            let result = json!({"done": key, "reconciled": true});
            (
                Resolution::Completed {
                    result,
                    reason: None,
                },
                StateView::Completed,
            )
        } else {
            let reason = "the ledger has no such effect".to_owned();
            (
                Resolution::Failed {
                    reason,
                    result: None,
                },
                StateView::Failed,
            )
        };
        let mut invoke = self.event(OpKind::Reconcile, key, &record.fingerprint);
        invoke.fence = Some(FenceView::from(&fence));
        invoke.settle_to = Some(to);
        self.record(&invoke)?;
        let reconciler = format!("w{}p{}", self.config.worker, self.config.process);
        // Half through `resolve_unknown`, half through `recover` (status first, then the
        // resolver, here answering what the ledger said).
        let done = if self.choices.below(2) == 0 {
            match self
                .store
                .resolve_unknown(key, &reconciler, resolution, &fence)
                .await
            {
                Ok(record) => Completion::of_record(Some(&record)),
                Err(error) => Completion::of_error(&error),
            }
        } else {
            let resolver = |_record| async move { Ok::<_, BoxError>(resolution) };
            match self
                .store
                .recover(key, &reconciler, Some(&fence), resolver)
                .await
            {
                Ok(RecoverOutcome::Resolved(record) | RecoverOutcome::Unchanged(record)) => {
                    Completion::of_record(Some(&record))
                }
                Ok(RecoverOutcome::Missing) => Completion::of_record(None),
                Err(error) => Completion::of_error(&error),
            }
        };
        self.complete(&invoke, done)
    }

    fn effect_happened(&self, key: &str, incarnation: &str) -> Result<bool, String> {
        let effects: Vec<Effect> =
            read_json_lines(&self.config.ledger).map_err(|e| e.to_string())?;
        Ok(effects
            .iter()
            .any(|effect| effect.key == key && effect.fence.incarnation == incarnation))
    }

    async fn prune(&mut self) -> Result<(), String> {
        let invoke = self.event(OpKind::Prune, "", "");
        self.record(&invoke)?;
        let done = match self.store.prune().await {
            Ok(_) => Completion {
                phase: Phase::Ok,
                observed: None,
                fence: None,
                claim: None,
                error: None,
            },
            Err(error) => Completion::of_error(&error),
        };
        self.complete(&invoke, done)
    }
}

/// Writes `invoke`'s completion as `done` says.
fn complete(recorder: &Recorder, invoke: &Event, done: Completion) -> Result<(), String> {
    let mut event = invoke.clone();
    event.time_ms = now_ms();
    event.phase = done.phase;
    event.observed = done.observed;
    event.fence = done.fence.or(event.fence);
    event.claim = done.claim;
    event.error = done.error;
    recorder.record(&event)
}

/// One recorded settle of an owner claim.
struct Settle {
    store: DurableOperationStore,
    recorder: Recorder,
    /// The `settle-ignores-fence` mutant: a refused settle is written over the record anyway.
    ignore_fence: bool,
}

impl Settle {
    async fn run(
        &self,
        key: &str,
        claim: &Claim,
        settlement: Settlement,
        to: StateView,
    ) -> Result<(), String> {
        let mut invoke = self
            .recorder
            .invoke(OpKind::Settle, key, &claim.record.fingerprint);
        invoke.fence = Some(FenceView::from(&claim.fence));
        invoke.settle_to = Some(to);
        self.recorder.record(&invoke)?;
        let settled = match self.store.settle(claim, settlement.clone()).await {
            Err(error) if self.ignore_fence && is_refusal(&error) => {
                self.overwrite(key, settlement).await
            }
            other => other,
        };
        let done = match settled {
            Ok(record) => Completion::of_record(Some(&record)),
            Err(error) => Completion::of_error(&error),
        };
        complete(&self.recorder, &invoke, done)
    }

    /// The mutant's settle: whatever record is there now gets the settlement, fence or not.
    async fn overwrite(
        &self,
        key: &str,
        settlement: Settlement,
    ) -> Result<OperationRecord, DurableOperationError> {
        let backend = self.store.backend();
        let current = backend
            .read(key)
            .await?
            .ok_or_else(|| DurableOperationError::Missing { key: key.into() })?;
        let (state, result, reason) = match settlement {
            Settlement::Completed { result } => (OperationState::Completed, Some(result), None),
            Settlement::Failed { reason, result } => (OperationState::Failed, result, Some(reason)),
            Settlement::Unknown { reason, .. } => (OperationState::Unknown, None, Some(reason)),
        };
        let next = OperationRecord {
            revision: current.revision + 1,
            state,
            result,
            reason,
            updated_at: self.store.now_ms(),
            lease_expires_at: None,
            ..current.clone()
        };
        if backend
            .compare_and_set(key, Some(&current.fence()), Some(&next))
            .await?
        {
            Ok(next)
        } else {
            Err(DurableOperationError::FenceChangedDuringTransition { key: key.into() })
        }
    }
}

/// The store refused a settle because the claim no longer holds the record.
fn is_refusal(error: &DurableOperationError) -> bool {
    matches!(
        error,
        DurableOperationError::StaleFence { .. }
            | DurableOperationError::LeaseExpired { .. }
            | DurableOperationError::OwnerMismatch { .. }
            | DurableOperationError::AlreadySettled { .. }
    )
}
