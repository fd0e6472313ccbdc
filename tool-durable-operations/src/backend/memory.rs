//! In-process backend for tests and single-process use.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Mutex;

use async_trait::async_trait;

use super::{
    DurableOperationBackend, RecordPage, check_cas_arguments, check_page_limit, page_from_rows,
};
use crate::error::DurableOperationError;
use crate::record::{Fence, OperationRecord};

/// A `BTreeMap` behind a mutex; share one instance (in an `Arc`) between stores to model
/// several processes over one database.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    records: Mutex<BTreeMap<String, OperationRecord>>,
}

impl MemoryBackend {
    /// An empty backend.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, OperationRecord>> {
        // A panic while holding the lock cannot leave a half-written record (single insert/remove).
        self.records
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

#[async_trait]
impl DurableOperationBackend for MemoryBackend {
    fn name(&self) -> &'static str {
        "memory"
    }

    async fn ping(&self) -> Result<(), DurableOperationError> {
        drop(self.lock());
        Ok(())
    }

    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        Ok(self.lock().get(key).cloned())
    }

    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        check_cas_arguments(key, next)?;
        let mut records = self.lock();
        let current = records.get(key);
        let holds = match (expected, current) {
            (None, None) => next.is_some(),
            (Some(fence), Some(current)) => current.matches(fence),
            _ => false,
        };
        if !holds {
            return Ok(false);
        }
        match next {
            Some(next) => records.insert(key.to_owned(), next.clone()),
            None => records.remove(key),
        };
        Ok(true)
    }

    /// Memory only holds records written through the store, which all have an incarnation.
    async fn backfill_legacy_incarnation(
        &self,
        key: &str,
        _incarnation: &str,
    ) -> Result<bool, DurableOperationError> {
        crate::record::validate_key(key)?;
        Ok(false)
    }

    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError> {
        check_page_limit(limit)?;
        let lower = cursor.map_or(Bound::Unbounded, |c| Bound::Excluded(c.to_owned()));
        let rows = self
            .lock()
            .range((lower, Bound::Unbounded))
            .take(limit + 1)
            .map(|(key, r)| (key.clone(), Ok(r.clone())))
            .collect();
        Ok(page_from_rows(rows, limit))
    }
}
