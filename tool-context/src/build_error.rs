//! [`BuildError`]: why a registry, or a tool mounted on one, cannot be built. Its own module
//! so the registration of one tool ([`crate::registered`]) reports it without the registry.

use crate::idempotency::IdempotencyConfigError;

/// A registry cannot be built from this configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A tool name is empty or whitespace.
    #[error("Tool names must be non-empty.")]
    BlankToolName,
    /// Two tools share a name.
    #[error("Tool \"{0}\" is registered more than once.")]
    DuplicateTool(String),
    /// An input schema is not a JSON object schema, or does not compile.
    #[error("Tool \"{tool}\" has an invalid input schema: {reason}")]
    InvalidInputSchema {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// An output schema does not compile.
    #[error("Tool \"{tool}\" has an invalid output schema: {reason}")]
    InvalidOutputSchema {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// The page size is zero.
    #[error("toolListPageSize must be a positive integer.")]
    ZeroPageSize,
    /// The execution owner id is blank, longer than 256 characters or contains NUL.
    #[error("executionOwnerId must be non-blank text of at most 256 characters without NUL.")]
    InvalidOwnerId,
    /// The idempotency configuration is unusable.
    #[error(transparent)]
    Idempotency(#[from] IdempotencyConfigError),
    /// The durable store does not declare the incarnation-revision fencing capability.
    #[error("durableOperationStore must declare incarnation-revision fencing capability.")]
    DurableFencingCapability,
    /// The durable lease is zero or longer than the store accepts.
    #[error(
        "durableOperationLeaseMs must be a positive number of milliseconds of at most 365 days."
    )]
    InvalidDurableLease,
    /// The durable owner id is blank, longer than 256 characters or contains NUL.
    #[error(
        "durableOperationOwnerId must be non-blank text of at most 256 characters without NUL."
    )]
    InvalidDurableOwnerId,
    /// A durable owner id or lease was set without a durable store.
    #[error("durableOperationOwnerId and durableOperationLeaseMs require a durableOperationStore.")]
    DurableOptionWithoutStore,
}
