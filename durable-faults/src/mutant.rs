//! Deliberately broken builds: each [`Mutant`] breaks one exactly-once guarantee on purpose, so
//! a campaign can show that the checker catches it (Jepsen's rule: a checker counts only once it
//! has failed on a known-bad system).
//!
//! The mutants live here, in the harness, never in the published crates: a backend wrapper
//! beneath the recording (so the history shows what the store was told, not what it did), a
//! worker clock, the worker's settle path, or the Redis server's persistence.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use clap::ValueEnum;
use tool_durable_operations::backend::{DurableOperationBackend, RecordPage};
use tool_durable_operations::{DurableOperationError, Fence, OperationRecord, OperationState};

use crate::backend::Backend;

/// A known way to break exactly-once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ValueEnum)]
pub enum Mutant {
    /// Redis keeps nothing across a restart: acknowledged records are lost.
    RedisNoPersistence,
    /// A stale owner's settle is accepted: an owner whose lease lapsed and was taken over
    /// overwrites the record anyway.
    SettleIgnoresFence,
    /// Odd workers' lease clocks run ten leases ahead, so they take over live leases.
    LeaseIgnoresClock,
    /// A claim's insert overwrites an existing record instead of failing: two owners at once.
    ClaimWithoutCas,
    /// The store acknowledges one settlement in eight without writing it.
    LostAck,
}

impl Mutant {
    /// Every mutant, in the order the README's table lists them.
    pub const ALL: [Mutant; 5] = [
        Self::RedisNoPersistence,
        Self::SettleIgnoresFence,
        Self::LeaseIgnoresClock,
        Self::ClaimWithoutCas,
        Self::LostAck,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::RedisNoPersistence => "redis-no-persistence",
            Self::SettleIgnoresFence => "settle-ignores-fence",
            Self::LeaseIgnoresClock => "lease-ignores-clock",
            Self::ClaimWithoutCas => "claim-without-cas",
            Self::LostAck => "lost-ack",
        }
    }

    /// Whether the mutant means anything on `backend`.
    pub fn applies_to(self, backend: Backend) -> bool {
        self != Self::RedisNoPersistence || backend == Backend::Redis
    }

    /// Whether the mutant breaks the backend itself (and needs [`MutantBackend`]).
    fn breaks_backend(self) -> bool {
        matches!(self, Self::ClaimWithoutCas | Self::LostAck)
    }

    /// How far ahead worker `worker`'s lease clock runs, beyond its configured skew (ms).
    pub fn hidden_skew_ms(self, worker: u32, lease_ms: u64) -> i64 {
        let ahead = self == Self::LeaseIgnoresClock && worker % 2 == 1;
        if ahead {
            i64::try_from(lease_ms.saturating_mul(10)).unwrap_or(i64::MAX)
        } else {
            0
        }
    }
}

/// Wraps `backend` in the mutant's broken backend, when the mutant breaks the backend.
pub fn wrap(
    backend: Arc<dyn DurableOperationBackend>,
    mutant: Option<Mutant>,
) -> Arc<dyn DurableOperationBackend> {
    match mutant.filter(|m| m.breaks_backend()) {
        Some(mutant) => Arc::new(MutantBackend {
            inner: backend,
            mutant,
            writes: AtomicU64::new(0),
        }),
        None => backend,
    }
}

/// A backend that breaks compare-and-set the way its mutant says.
struct MutantBackend {
    inner: Arc<dyn DurableOperationBackend>,
    mutant: Mutant,
    writes: AtomicU64,
}

fn is_settlement(next: Option<&OperationRecord>) -> bool {
    next.is_some_and(|record| record.state != OperationState::Pending)
}

impl MutantBackend {
    /// `claim-without-cas`: an insert replaces whatever record is there.
    async fn insert_over(
        &self,
        key: &str,
        next: &OperationRecord,
    ) -> Result<bool, DurableOperationError> {
        let current = self.inner.read(key).await?;
        let fence = current.map(|record| record.fence());
        self.inner
            .compare_and_set(key, fence.as_ref(), Some(next))
            .await
    }
}

#[async_trait]
impl DurableOperationBackend for MutantBackend {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    async fn ping(&self) -> Result<(), DurableOperationError> {
        self.inner.ping().await
    }

    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        self.inner.read(key).await
    }

    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        match (self.mutant, expected, next) {
            (Mutant::ClaimWithoutCas, None, Some(next)) => self.insert_over(key, next).await,
            (Mutant::LostAck, _, _)
                if is_settlement(next) && self.writes.fetch_add(1, Ordering::Relaxed) % 8 == 7 =>
            {
                Ok(true)
            }
            _ => self.inner.compare_and_set(key, expected, next).await,
        }
    }

    async fn backfill_legacy_incarnation(
        &self,
        key: &str,
        incarnation: &str,
    ) -> Result<bool, DurableOperationError> {
        self.inner
            .backfill_legacy_incarnation(key, incarnation)
            .await
    }

    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError> {
        self.inner.list_page(cursor, limit).await
    }
}
