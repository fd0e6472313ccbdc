#![doc = include_str!("../README.md")]
//!
//! ## In this crate
//!
//! Every origin — a model's tool call, an MCP client, a UI button, a local agent — goes
//! through [`ToolRegistry`], so a rule enforced once is enforced everywhere:
//!
//! `request check -> option check -> started -> allowlist -> (strict) argument validation ->
//! policy (allow / ask -> approval / deny) -> idempotency claim -> handler (cancellation token,
//! deadline) -> output schema -> output budget -> terminal record -> completed | failed`
//!
//! Every failure is a [`ToolCallResult`](tool_protocol::ToolCallResult) carrying a stable
//! [`ToolCallError`](tool_protocol::ToolCallError) code from [`tool_protocol::codes`].
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod approval;
pub mod cancellation;
mod catalog;
pub mod durable;
mod failure;
mod handler_run;
pub mod idempotency;
pub mod interaction;
mod ledger;
pub mod mounts;
pub mod observer;
pub mod operations;
pub mod options;
mod pipeline;
pub mod policy;
pub mod registry;
mod schema;
mod shutdown;
mod signal;
pub mod tool;
mod trace;

pub use approval::{
    ApprovalDecision, ApprovalQueue, ApprovalQueueConfig, ApprovalSnapshot, PendingCall,
};
pub use cancellation::CallCancellation;
pub use catalog::ListToolsError;
pub use durable::{DEFAULT_DURABLE_LEASE_MS, MAX_ABORT_TRANSITION_WAIT_MS};
pub use failure::{
    EXECUTION_STATE_DETACHED, EXECUTION_STATE_NOT_STARTED, IDEMPOTENCY_KEY_SCOPE,
    PERSISTENCE_STATE_UNCERTAIN,
};
pub use idempotency::{
    IdempotencyClaim, IdempotencyClaimError, IdempotencyConfig, IdempotencyRegistry,
};
pub use interaction::{
    ApprovedChanges, Denial, InteractionKind, InteractionOutcome, InteractionRequest,
    ToolInteraction,
};
pub use mounts::{MountReport, SkippedTool};
pub use observer::ToolCallObserver;
pub use operations::OperationError;
pub use options::ToolCallOptions;
pub use policy::{
    AllowAll, BoxError, FixedPolicy, FnPolicy, PolicyCall, PolicyDecision, PolicyRequest,
    ReadOnlyOrDirectLocal, StandardPolicy, ToolPolicy, policy_fn,
};
pub use registry::{BuildError, ToolRegistry, ToolRegistryBuilder, ValidationMode};
pub use tool::{HandlerOutput, Tool, ToolHandler, ToolInvocation};
pub use trace::TraceId;
