#![doc = include_str!("../README.md")]
//!
//! ## In this crate
//!
//! An owner that holds its [`Claim`] can [`settle`](DurableOperationStore::settle) it in one
//! round trip; `complete` / `fail` / `mark_unknown` take the key, owner and fence instead.
//! Ambiguous outcomes are `unknown` until [`recover`](DurableOperationStore::recover) (status
//! first, resolver only for unknown) or [`resolve_unknown`](DurableOperationStore::resolve_unknown)
//! records what a status query confirmed; [`prune`](DurableOperationStore::prune) removes
//! settled and unknown records after the retention window. An effect that may outlive its
//! lease keeps it with a [`LeaseHeartbeat`] (the side-effect runner always does).
//!
//! Backends: [`MemoryBackend`] always; SQLite, Redis and PostgreSQL behind the `sqlite`,
//! `redis` and `postgres` features (see [`backend`]). The side-effect runner lives in
//! [`side_effect`], with the HTTP bridge behind the `http` feature. Every error carries a
//! stable [`code`](DurableOperationError::code).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod backend;
pub mod clock;
mod connect;
pub mod error;
pub mod lease;
pub mod record;
pub mod side_effect;
mod state;
pub mod store;

pub use backend::memory::MemoryBackend;
pub use backend::{CorruptEntry, DurableOperationBackend, RecordPage};
pub use clock::{Clock, IncarnationGenerator, ManualClock, SystemClock};
#[cfg(feature = "postgres")]
pub use connect::CONNECT_POSTGRES_MAX_CONNECTIONS;
pub use error::{BoxError, DurableOperationError};
pub use lease::{LeaseHeartbeat, LeaseLost, OnLeaseLoss};
pub use record::{Fence, OperationRecord, OperationState};
pub use side_effect::{
    SideEffectContext, SideEffectOutcome, SideEffectRecovery, SideEffectRequest,
    SideEffectResolution, SideEffectResult, SideEffectRunner,
};
pub use store::{
    BackfillReport, Claim, ClaimRequest, ClaimStatus, DurableOperationStore, FENCING_CAPABILITY,
    PruneReport, RecoverOutcome, Resolution, Settlement, StoreOptions,
};
