//! The in-memory idempotency registry: a bounded map from operation key to one shared
//! execution.
//!
//! The first claim of a key becomes the *owner* and runs the handler; later claims with the
//! same argument fingerprint *replay* the owner's outcome (waiting for it while it runs), and a
//! different fingerprint is a *conflict*. An owner that goes away without recording an outcome
//! (timeout, cancellation, shutdown, a dropped future) settles the entry as
//! `TOOL_EXECUTION_ABORTED`, so a retry never mistakes an interrupted execution for success.
//!
//! Settled entries are kept for `retention_ms` and at most `max_entries` of them are kept
//! (least recently accessed evicted first); pending entries are never evicted.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;
use tool_durable_operations::{Clock, SystemClock};
use tool_protocol::ToolCallResult;

use crate::failure::aborted;

/// Default time a settled outcome stays replayable: 5 minutes.
pub const DEFAULT_IDEMPOTENCY_RETENTION_MS: u64 = 300_000;
/// Default bound on retained settled entries.
pub const DEFAULT_IDEMPOTENCY_MAX_ENTRIES: usize = 1_000;
/// What a replay of an interrupted execution reports.
pub const INTERRUPTED_EXECUTION_MESSAGE: &str =
    "The shared tool execution was interrupted before it finished; its outcome is unknown.";

/// Limits and clock of an [`IdempotencyRegistry`].
#[derive(Clone)]
pub struct IdempotencyConfig {
    /// How long a settled outcome stays replayable, in ms.
    pub retention_ms: u64,
    /// Most settled entries kept (must be at least 1).
    pub max_entries: usize,
    /// Time source for retention.
    pub clock: Arc<dyn Clock>,
}

impl Default for IdempotencyConfig {
    fn default() -> Self {
        Self {
            retention_ms: DEFAULT_IDEMPOTENCY_RETENTION_MS,
            max_entries: DEFAULT_IDEMPOTENCY_MAX_ENTRIES,
            clock: Arc::new(SystemClock),
        }
    }
}

impl fmt::Debug for IdempotencyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdempotencyConfig")
            .field("retention_ms", &self.retention_ms)
            .field("max_entries", &self.max_entries)
            .finish_non_exhaustive()
    }
}

/// The configuration is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdempotencyConfigError {
    /// `max_entries` is zero.
    #[error("Idempotency maxEntries must be a positive integer.")]
    ZeroMaxEntries,
}

/// A claim [`IdempotencyRegistry::claim`] refuses (nothing is registered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdempotencyClaimError {
    /// The key is empty or whitespace.
    #[error("Idempotency key must be a non-empty string.")]
    BlankKey,
    /// The fingerprint is empty or whitespace.
    #[error("Idempotency fingerprint must be a non-empty string.")]
    BlankFingerprint,
}

type Outcome = Option<Arc<ToolCallResult>>;

/// A bounded registry of in-flight and recently settled executions. Cheap to clone; clones
/// share one registry.
#[derive(Clone)]
pub struct IdempotencyRegistry {
    inner: Arc<RegistryInner>,
}

struct RegistryInner {
    config: IdempotencyConfig,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_key: HashMap<String, Entry>,
    /// Settled entries by last access (least recent first).
    by_access: BTreeMap<u64, String>,
    /// Settled entries by settle time.
    by_settled_at: BTreeMap<(u64, u64), String>,
    next_sequence: u64,
}

struct Entry {
    fingerprint: String,
    outcome: watch::Receiver<Outcome>,
    generation: u64,
    accessed: u64,
    /// `(settled_at, sequence)`: the entry's key in `by_settled_at` once settled.
    settled: Option<(u64, u64)>,
}

/// The result of [`IdempotencyRegistry::claim`].
#[derive(Debug)]
pub enum IdempotencyClaim {
    /// First claim: run the execution, then [`OwnerTicket::settle`] it.
    Owner(OwnerTicket),
    /// Same key and fingerprint: wait for the shared outcome.
    Replay(ReplayWaiter),
    /// Same key, different fingerprint.
    Conflict,
}

/// The right (and duty) to settle one entry. Dropping it unsettled settles the entry as
/// `TOOL_EXECUTION_ABORTED`.
pub struct OwnerTicket {
    registry: IdempotencyRegistry,
    key: String,
    generation: u64,
    outcome: watch::Sender<Outcome>,
    settled: bool,
}

/// Waits for the owner's outcome.
#[derive(Debug)]
pub struct ReplayWaiter {
    outcome: watch::Receiver<Outcome>,
}

impl fmt::Debug for OwnerTicket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnerTicket")
            .field("key", &self.key)
            .field("settled", &self.settled)
            .finish()
    }
}

impl fmt::Debug for IdempotencyRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdempotencyRegistry")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Default for IdempotencyRegistry {
    fn default() -> Self {
        Self::new(IdempotencyConfig::default()).expect("the default configuration is valid")
    }
}

impl IdempotencyRegistry {
    /// A registry with `config`.
    pub fn new(config: IdempotencyConfig) -> Result<Self, IdempotencyConfigError> {
        if config.max_entries == 0 {
            return Err(IdempotencyConfigError::ZeroMaxEntries);
        }
        Ok(Self {
            inner: Arc::new(RegistryInner {
                config,
                entries: Mutex::new(Entries::default()),
            }),
        })
    }

    /// Claims `key` for an execution whose arguments have `fingerprint`. A blank key or
    /// fingerprint is refused before anything is registered: it would make unrelated calls
    /// share (or conflict over) one entry.
    pub fn claim(
        &self,
        key: &str,
        fingerprint: &str,
    ) -> Result<IdempotencyClaim, IdempotencyClaimError> {
        if key.trim().is_empty() {
            return Err(IdempotencyClaimError::BlankKey);
        }
        if fingerprint.trim().is_empty() {
            return Err(IdempotencyClaimError::BlankFingerprint);
        }
        Ok(self.claim_checked(key, fingerprint))
    }

    fn claim_checked(&self, key: &str, fingerprint: &str) -> IdempotencyClaim {
        let now = self.inner.config.clock.now_ms();
        let mut entries = self.lock();
        entries.purge_expired(now, self.inner.config.retention_ms);
        let sequence = entries.next();
        if let Some(entry) = entries.by_key.get_mut(key) {
            if entry.fingerprint != fingerprint {
                return IdempotencyClaim::Conflict;
            }
            let previous = std::mem::replace(&mut entry.accessed, sequence);
            let outcome = entry.outcome.clone();
            if entry.settled.is_some() {
                entries.by_access.remove(&previous);
                entries.by_access.insert(sequence, key.to_owned());
            }
            return IdempotencyClaim::Replay(ReplayWaiter { outcome });
        }
        let (sender, receiver) = watch::channel(None);
        let entry = Entry {
            fingerprint: fingerprint.to_owned(),
            outcome: receiver,
            generation: sequence,
            accessed: sequence,
            settled: None,
        };
        entries.by_key.insert(key.to_owned(), entry);
        IdempotencyClaim::Owner(OwnerTicket {
            registry: self.clone(),
            key: key.to_owned(),
            generation: sequence,
            outcome: sender,
            settled: false,
        })
    }

    /// Entries held now (pending and retained), after dropping expired ones.
    pub fn len(&self) -> usize {
        let now = self.inner.config.clock.now_ms();
        let mut entries = self.lock();
        entries.purge_expired(now, self.inner.config.retention_ms);
        entries.by_key.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets `key` (a pending owner can still settle its waiters, but not a new entry).
    pub fn clear(&self, key: &str) {
        let mut entries = self.lock();
        if let Some(entry) = entries.by_key.remove(key) {
            entries.forget_settled(&entry);
        }
    }

    fn settle(&self, key: &str, generation: u64, now: u64) {
        let mut entries = self.lock();
        let sequence = entries.next();
        let Some(entry) = entries
            .by_key
            .get_mut(key)
            .filter(|entry| entry.generation == generation)
        else {
            return;
        };
        entry.settled = Some((now, sequence));
        let accessed = entry.accessed;
        entries.by_access.insert(accessed, key.to_owned());
        entries
            .by_settled_at
            .insert((now, sequence), key.to_owned());
        entries.evict_over(self.inner.config.max_entries);
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        // Every edit keeps the three maps consistent before it can panic, so a poisoned lock
        // still guards usable state.
        self.inner
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Entries {
    fn next(&mut self) -> u64 {
        self.next_sequence += 1;
        self.next_sequence
    }

    fn purge_expired(&mut self, now: u64, retention_ms: u64) {
        while let Some((&(settled_at, sequence), _)) = self.by_settled_at.first_key_value() {
            if now.saturating_sub(settled_at) < retention_ms {
                break;
            }
            if let Some(key) = self.by_settled_at.remove(&(settled_at, sequence))
                && let Some(entry) = self.by_key.remove(&key)
            {
                self.by_access.remove(&entry.accessed);
            }
        }
    }

    fn evict_over(&mut self, max_entries: usize) {
        while self.by_key.len() > max_entries {
            let Some((_, key)) = self.by_access.pop_first() else {
                break; // only pending entries are left; they are never evicted
            };
            if let Some(settled) = self.by_key.remove(&key).and_then(|entry| entry.settled) {
                self.by_settled_at.remove(&settled);
            }
        }
    }

    fn forget_settled(&mut self, entry: &Entry) {
        if let Some(settled) = entry.settled {
            self.by_access.remove(&entry.accessed);
            self.by_settled_at.remove(&settled);
        }
    }
}

impl OwnerTicket {
    /// Publishes the execution's outcome to every waiter and retains it for replays.
    pub fn settle(mut self, result: ToolCallResult) {
        self.publish(result);
    }

    /// Waiters and later replays get the outcome marked as a replay of this settlement
    /// (unless it already replays an older one, such as a durable record's).
    fn publish(&mut self, result: ToolCallResult) {
        self.settled = true;
        let now = self.registry.inner.config.clock.now_ms();
        let mut result = result;
        result.tool_call_id = None;
        if result.replay.is_none() {
            result = result.replayed(Some(now));
        }
        self.outcome.send_replace(Some(Arc::new(result)));
        self.registry.settle(&self.key, self.generation, now);
    }
}

impl Drop for OwnerTicket {
    fn drop(&mut self) {
        if !self.settled {
            self.publish(ToolCallResult::failure(aborted(
                INTERRUPTED_EXECUTION_MESSAGE,
            )));
        }
    }
}

impl ReplayWaiter {
    /// The owner's outcome (without a `toolCallId`), once it is settled.
    pub async fn wait(mut self) -> ToolCallResult {
        match self.outcome.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.as_deref().cloned().unwrap_or_else(interrupted),
            Err(_) => interrupted(),
        }
    }
}

fn interrupted() -> ToolCallResult {
    ToolCallResult::failure(aborted(INTERRUPTED_EXECUTION_MESSAGE))
}
