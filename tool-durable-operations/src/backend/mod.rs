//! The storage port every backend implements, and the backends themselves.

use async_trait::async_trait;

use crate::error::DurableOperationError;
use crate::record::{Fence, OperationRecord};

pub mod memory;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod sql;
#[cfg(feature = "sqlite")]
pub mod sqlite;

/// Default `list_page` size when a caller does not choose one.
pub const DEFAULT_PAGE_SIZE: usize = 500;
/// Largest page a backend will return from one `list_page` call.
pub const MAX_PAGE_SIZE: usize = 10_000;
/// Largest store the compatibility [`DurableOperationBackend::list_all`] scan will read.
pub const MAX_LIST_ALL_RECORDS: usize = 10_000;

/// A stored record a backend could not decode (corrupt, or written before fencing).
#[derive(Debug, Clone, PartialEq)]
pub struct CorruptEntry {
    /// Its operation key.
    pub key: String,
    /// The non-retryable [`DurableOperationError::CorruptRecord`] reading it gives.
    pub error: DurableOperationError,
}

/// One keyset page of records, ordered by key.
///
/// A backend builds it with [`RecordPage::new`] and [`with_corrupt`](RecordPage::with_corrupt).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RecordPage {
    /// Records with keys strictly after the request cursor, ascending.
    pub records: Vec<OperationRecord>,
    /// Stored records of this page that could not be decoded, ascending. They are left out of
    /// `records` so one bad record never stops a scan; the cursor still moves past them.
    pub corrupt: Vec<CorruptEntry>,
    /// Cursor for the next page, present only when more records follow.
    pub next_cursor: Option<String>,
}

impl RecordPage {
    /// A page of decoded `records`, followed by more when `next_cursor` is `Some`.
    pub fn new(records: Vec<OperationRecord>, next_cursor: Option<String>) -> Self {
        Self {
            records,
            corrupt: Vec::new(),
            next_cursor,
        }
    }

    /// Sets the page's undecodable records.
    #[must_use]
    pub fn with_corrupt(mut self, corrupt: Vec<CorruptEntry>) -> Self {
        self.corrupt = corrupt;
        self
    }
}

/// Atomic storage for operation records. The state machine lives above it, in
/// [`DurableOperationStore`](crate::DurableOperationStore).
#[async_trait]
pub trait DurableOperationBackend: Send + Sync {
    /// Short backend name used in errors (`memory`, `sqlite`, `redis`, `postgres`).
    fn name(&self) -> &'static str;

    /// One minimal round trip to the storage (Redis `PING`, SQL `SELECT 1`): a readiness probe.
    async fn ping(&self) -> Result<(), DurableOperationError>;

    /// Reads the record stored under `key`.
    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError>;

    /// Atomically replaces the record under `key` when it still matches `expected`.
    ///
    /// `expected = None` inserts only if no record exists; `next = None` deletes. Returns
    /// `Ok(false)` when the precondition did not hold (nothing was written). A `next` whose key
    /// differs from `key` is rejected with [`DurableOperationError::MismatchedRecordKey`].
    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError>;

    /// Gives the record under `key`, written before fencing (no incarnation), `incarnation`,
    /// in one atomic step that only applies while it has none: of concurrent backfills exactly
    /// one wins and the others return `Ok(false)`, so every store then reads the same one.
    ///
    /// Only ever called by
    /// [`DurableOperationStore::backfill_legacy_incarnation`](crate::DurableOperationStore::backfill_legacy_incarnation)
    /// and its bulk form, never implicitly. The default refuses with [`DurableOperationError::BackfillUnsupported`].
    async fn backfill_legacy_incarnation(
        &self,
        key: &str,
        incarnation: &str,
    ) -> Result<bool, DurableOperationError> {
        let _ = (key, incarnation);
        Err(DurableOperationError::BackfillUnsupported {
            backend: self.name(),
        })
    }

    /// Lists up to `limit` records with keys strictly after `cursor`, ascending.
    ///
    /// The cursor is a position in key order, so deleting earlier records never invalidates it.
    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError>;

    /// Compatibility full scan for tiny stores; fails once more than
    /// [`MAX_LIST_ALL_RECORDS`] records exist, and on the first corrupt record.
    async fn list_all(&self) -> Result<Vec<OperationRecord>, DurableOperationError> {
        let mut records = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.list_page(cursor.as_deref(), DEFAULT_PAGE_SIZE).await?;
            if let Some(corrupt) = page.corrupt.into_iter().next() {
                return Err(corrupt.error);
            }
            records.extend(page.records);
            if records.len() > MAX_LIST_ALL_RECORDS {
                return Err(DurableOperationError::invalid(
                    "list_all",
                    format!("store holds more than {MAX_LIST_ALL_RECORDS} records; use list_page"),
                ));
            }
            match page.next_cursor {
                Some(next) if cursor.as_deref().is_none_or(|c| next.as_str() > c) => {
                    cursor = Some(next)
                }
                Some(_) => return Err(DurableOperationError::CursorDidNotAdvance),
                None => return Ok(records),
            }
        }
    }
}

/// Checks the arguments every `compare_and_set` implementation shares.
pub(crate) fn check_cas_arguments(
    key: &str,
    next: Option<&OperationRecord>,
) -> Result<(), DurableOperationError> {
    crate::record::validate_key(key)?;
    if let Some(next) = next {
        if next.key != key {
            return Err(DurableOperationError::MismatchedRecordKey);
        }
        next.check_invariants()?;
    }
    Ok(())
}

/// Checks a `list_page` limit.
pub(crate) fn check_page_limit(limit: usize) -> Result<(), DurableOperationError> {
    if limit == 0 || limit > MAX_PAGE_SIZE {
        return Err(DurableOperationError::invalid(
            "limit",
            format!("must be between 1 and {MAX_PAGE_SIZE}"),
        ));
    }
    Ok(())
}

/// A fetched row: its key and the record, or why it could not be decoded.
pub(crate) type DecodedRow = (String, Result<OperationRecord, DurableOperationError>);

/// Splits `limit + 1` fetched rows into a page: the extra row only signals that more follow.
/// The cursor is the last row's key, decoded or not, so a corrupt row is never read twice.
pub(crate) fn page_from_rows(mut rows: Vec<DecodedRow>, limit: usize) -> RecordPage {
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = if more {
        rows.last().map(|(key, _)| key.clone())
    } else {
        None
    };
    let mut page = RecordPage {
        next_cursor,
        ..RecordPage::default()
    };
    for (key, decoded) in rows {
        match decoded {
            Ok(record) => page.records.push(record),
            Err(error) => page.corrupt.push(CorruptEntry { key, error }),
        }
    }
    page
}
