//! The coded error type shared by the store, the backends and the side-effect runner.

use crate::state::OperationState;

/// Boxed error returned by application callbacks (resolvers, adapters, classifiers).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Every failure of this crate, with a stable [`code`](DurableOperationError::code).
///
/// Messages follow the reference wording `Durable operation "<key>" …` so logs stay comparable;
/// the codes are the contract.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurableOperationError {
    /// An argument (key, fingerprint, owner, reconciler, cursor, …) is blank or over its limit.
    #[error("Durable operation {field} is invalid: {message}")]
    InvalidInput {
        /// Which argument was rejected.
        field: &'static str,
        /// Why it was rejected.
        message: String,
    },
    /// A failed or unknown transition was requested with a blank reason.
    #[error("Durable operation reason must be a non-empty string.")]
    ReasonRequired,
    /// A stored result, diagnostic or reason exceeds its byte bound.
    #[error("Durable operation {field} is {actual} bytes, over the {limit}-byte limit")]
    PayloadTooLarge {
        /// Which payload was rejected (`result` or `reason`).
        field: &'static str,
        /// Serialized size in bytes.
        actual: usize,
        /// The bound that was exceeded.
        limit: usize,
    },
    /// Store options are out of range.
    #[error("Durable operation store option {option} is invalid: {message}")]
    InvalidOptions {
        /// The option name.
        option: &'static str,
        /// Why it was rejected.
        message: String,
    },
    /// The incarnation generator produced an unusable value.
    #[error("Durable operation incarnation is invalid: {0}")]
    InvalidIncarnation(String),
    /// The claim loop lost every compare-and-set attempt.
    #[error("Durable operation \"{key}\" could not claim after concurrent updates")]
    ClaimContended {
        /// Operation key.
        key: String,
    },
    /// A transition targeted a key without a record.
    #[error("Durable operation \"{key}\" does not exist")]
    Missing {
        /// Operation key.
        key: String,
    },
    /// The caller does not own the pending record.
    #[error("Durable operation \"{key}\" is owned by \"{owner_id}\"")]
    OwnerMismatch {
        /// Operation key.
        key: String,
        /// The record's current owner.
        owner_id: String,
    },
    /// The caller's fence does not match the record's `{incarnation, revision}`.
    #[error("Durable operation \"{key}\" fence is stale")]
    StaleFence {
        /// Operation key.
        key: String,
    },
    /// The record already left `pending`.
    #[error("Durable operation \"{key}\" is already {state}")]
    AlreadySettled {
        /// Operation key.
        key: String,
        /// The record's current state.
        state: OperationState,
    },
    /// The owner's lease passed before its terminal write.
    #[error("Durable operation \"{key}\" lease has expired")]
    LeaseExpired {
        /// Operation key.
        key: String,
    },
    /// A concurrent writer won the compare-and-set of a terminal transition.
    #[error("Durable operation \"{key}\" fence changed during transition")]
    FenceChangedDuringTransition {
        /// Operation key.
        key: String,
    },
    /// Reconciliation targeted a record that is not `unknown`.
    #[error("Durable operation \"{key}\" cannot resolve state {state}")]
    CannotResolve {
        /// Operation key.
        key: String,
        /// The record's current state.
        state: OperationState,
    },
    /// A concurrent writer won the compare-and-set of a reconciliation.
    #[error("Durable operation \"{key}\" fence changed during reconciliation")]
    FenceChangedDuringReconciliation {
        /// Operation key.
        key: String,
    },
    /// A reconciliation resolver failed; the record is left `unknown`.
    #[error("Durable operation \"{key}\" resolver failed: {message}")]
    ResolverFailed {
        /// Operation key.
        key: String,
        /// The resolver's error text.
        message: String,
    },
    /// A backend page cursor did not move forward.
    #[error("Invalid durable operation pagination: cursor did not advance.")]
    CursorDidNotAdvance,
    /// Pruning needed more pages than `max_prune_pages`.
    #[error("Durable operation \"prune\" exceeded the configured page limit.")]
    PrunePageLimitExceeded,
    /// The backend returned a record stored under another key.
    #[error("Durable operation backend returned a mismatched record key.")]
    MismatchedRecordKey,
    /// A stored record could not be decoded or violates the record invariants.
    #[error("Durable operation record is corrupt: {0}")]
    CorruptRecord(String),
    /// The backend cannot backfill the incarnation of records written before fencing.
    #[error("Durable operation backend {backend} does not support legacy incarnation backfill")]
    BackfillUnsupported {
        /// Backend name.
        backend: &'static str,
    },
    /// The backend itself failed (connection, SQL, Lua, …); the outcome of a write is unknown.
    #[error("Durable operation backend {backend} failed: {message}")]
    Backend {
        /// Backend name (`memory`, `sqlite`, `redis`, `postgres`).
        backend: &'static str,
        /// The driver's error text.
        message: String,
    },
}

impl DurableOperationError {
    /// The stable SCREAMING_SNAKE code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidInput { .. } => "DURABLE_OPERATION_INVALID_INPUT",
            Self::ReasonRequired => "DURABLE_OPERATION_REASON_REQUIRED",
            Self::PayloadTooLarge { .. } => "DURABLE_OPERATION_PAYLOAD_TOO_LARGE",
            Self::InvalidOptions { .. } => "DURABLE_OPERATION_INVALID_OPTIONS",
            Self::InvalidIncarnation(_) => "DURABLE_OPERATION_INVALID_INCARNATION",
            Self::ClaimContended { .. } => "DURABLE_OPERATION_CLAIM_CONTENDED",
            Self::Missing { .. } => "DURABLE_OPERATION_MISSING",
            Self::OwnerMismatch { .. } => "DURABLE_OPERATION_OWNER_MISMATCH",
            Self::StaleFence { .. } => "DURABLE_OPERATION_STALE_FENCE",
            Self::AlreadySettled { .. } => "DURABLE_OPERATION_ALREADY_SETTLED",
            Self::LeaseExpired { .. } => "DURABLE_OPERATION_LEASE_EXPIRED",
            Self::FenceChangedDuringTransition { .. } => "DURABLE_OPERATION_FENCE_CHANGED",
            Self::CannotResolve { .. } => "DURABLE_OPERATION_CANNOT_RESOLVE",
            Self::FenceChangedDuringReconciliation { .. } => {
                "DURABLE_OPERATION_RECONCILIATION_FENCE_CHANGED"
            }
            Self::ResolverFailed { .. } => "DURABLE_OPERATION_RESOLVER_FAILED",
            Self::CursorDidNotAdvance => "DURABLE_OPERATION_CURSOR_DID_NOT_ADVANCE",
            Self::PrunePageLimitExceeded => "DURABLE_OPERATION_PRUNE_PAGE_LIMIT",
            Self::MismatchedRecordKey => "DURABLE_OPERATION_MISMATCHED_RECORD_KEY",
            Self::CorruptRecord(_) => "DURABLE_OPERATION_CORRUPT_RECORD",
            Self::BackfillUnsupported { .. } => "DURABLE_OPERATION_BACKFILL_UNSUPPORTED",
            Self::Backend { .. } => "DURABLE_OPERATION_BACKEND_FAILED",
        }
    }

    /// Whether retrying the same call later may succeed without operator action.
    ///
    /// Contention, backend failures and a concurrent CAS winner are retryable; invalid input,
    /// stale fences and settled records are not.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::ClaimContended { .. } | Self::Backend { .. } | Self::ResolverFailed { .. }
        )
    }

    #[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
    pub(crate) fn backend(backend: &'static str, error: impl std::fmt::Display) -> Self {
        Self::Backend {
            backend,
            message: error.to_string(),
        }
    }

    pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        Self::InvalidInput {
            field,
            message: message.into(),
        }
    }
}
