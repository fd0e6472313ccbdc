//! Deliberately broken builds: each [`Mutant`] breaks one exactly-once guarantee on purpose, so
//! a campaign can show that the checker catches it (Jepsen's rule: a checker counts only once it
//! has failed on a known-bad system).
//!
//! The mutants live here, in the harness, never in the published crates: a backend wrapper
//! beneath the recording (so the history shows what the store was told, not what it did), a
//! worker clock, the worker's settle path, or the Redis server's persistence.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

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
    /// The store acknowledges one settlement in eight without writing it (chosen by the
    /// settlement's key and revision, so a worker restarted after every few settlements drops
    /// its share too).
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
        }),
        None => backend,
    }
}

/// A backend that breaks compare-and-set the way its mutant says.
struct MutantBackend {
    inner: Arc<dyn DurableOperationBackend>,
    mutant: Mutant,
}

/// Whether `lost-ack` drops this write: one settlement in eight, by a hash of its key, lifetime
/// and revision. Not a counter of the process's writes: workers are killed and restarted every
/// few seconds, and a campaign whose processes each settled fewer than eight times dropped
/// nothing at all (2 of 15 SQLite campaigns passed that way).
fn is_dropped_settlement(next: &OperationRecord) -> bool {
    let mut hasher = std::hash::DefaultHasher::new();
    (&next.key, &next.incarnation, next.revision).hash(&mut hasher);
    next.state != OperationState::Pending && hasher.finish() % 8 == 7
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
            (Mutant::LostAck, _, Some(next)) if is_dropped_settlement(next) => Ok(true),
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

#[cfg(test)]
mod tests {
    use super::*;
    use tool_durable_operations::MemoryBackend;

    fn settled(key: &str) -> OperationRecord {
        OperationRecord {
            key: key.into(),
            fingerprint: "fp".into(),
            owner_id: "owner".into(),
            incarnation: "i".into(),
            revision: 2,
            state: OperationState::Completed,
            result: None,
            reason: None,
            created_at: 1,
            updated_at: 1,
            lease_expires_at: None,
            reconciled_by: None,
            reconciled_at: None,
        }
    }

    /// A fresh backend per settlement, as when every worker process is killed after one: about
    /// one settlement in eight is still acknowledged and dropped.
    #[tokio::test]
    async fn lost_ack_drops_one_settlement_in_eight_however_short_the_processes_live() {
        let mut dropped = 0;
        for index in 0..800 {
            let inner: Arc<dyn DurableOperationBackend> = Arc::new(MemoryBackend::new());
            let backend = wrap(inner.clone(), Some(Mutant::LostAck));
            let record = settled(&format!("k{index}"));
            assert!(
                backend
                    .compare_and_set(&record.key, None, Some(&record))
                    .await
                    .unwrap()
            );
            if inner.read(&record.key).await.unwrap().is_none() {
                dropped += 1;
            }
        }
        assert!((60..=140).contains(&dropped), "dropped {dropped} of 800");
    }
}
