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
//! One departure from the reference order (CONTRACT 2.7 steps 8–11): when the policy answers
//! `ask` for a call with an idempotency key, the claim (steps 10–11, and the durable claim of
//! step 12) comes *before* the approval. An operation that already ran, or is running, then
//! replays its outcome without asking the person again (a replay executes nothing; `deny`
//! still refuses it, since the policy decides first), and one answer serves concurrent retries
//! of one operation. A refusal, or an approval wait that ends, releases the claim unstarted, so
//! the key asks again on its next attempt. The approval wait can have its own bound
//! ([`ToolRegistryBuilder::approval_timeout`], `TOOL_APPROVAL_TIMEOUT`).
//!
//! Every failure is a [`ToolCallResult`](tool_protocol::ToolCallResult) carrying a stable
//! [`ToolCallError`](tool_protocol::ToolCallError) code from [`tool_protocol::codes`].
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod allowlist;
pub mod approval;
mod build_error;
pub mod cancellation;
mod catalog;
pub mod durable;
mod failure;
mod frozen;
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
pub mod prelude;
pub mod questions;
mod registered;
pub mod registry;
mod schema;
mod shutdown;
mod signal;
mod telemetry;
pub mod tool;
mod trace;
mod validation;

pub use allowlist::ToolNamePatterns;
pub use approval::{
    ApprovalDecision, ApprovalQueue, ApprovalQueueConfig, ApprovalSnapshot, PendingCall,
};
pub use cancellation::CallCancellation;
pub use catalog::ListToolsError;
pub use durable::{
    DEFAULT_DURABLE_LEASE_MS, LeaseTakeover, MAX_ABORT_TRANSITION_WAIT_MS, TAKEN_OVER_REASON,
};
pub use failure::{
    DECIDED_BY_HOST, DECIDED_BY_KEY, DECIDED_BY_PERSON, DECIDED_BY_POLICY,
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
pub use questions::{QuestionAnswer, QuestionQueue, ToolQuestion, ToolQuestions};
pub use registry::{BuildError, ToolRegistry, ToolRegistryBuilder, ValidationMode};
pub use tool::{HandlerOutput, Tool, ToolHandler, ToolInvocation};
/// The durable operation store and its backends, for [`ToolRegistryBuilder::durable_store`].
pub use tool_durable_operations;
/// The shared protocol types (requests, results, coded errors), so a crate built on this one
/// needs no direct dependency on `tool-protocol`.
pub use tool_protocol;
pub use trace::TraceId;

/// `#[tool]` on an `async fn` makes a typed [`Tool`]: the doc comment is its description, the
/// parameters are its arguments (their doc comments describe them in the input schema) and a
/// module named after the function holds the arguments struct (`Args`) and `tool()`.
///
/// ```
/// use serde_json::json;
/// use tool_context::{AllowAll, ToolCallOptions, ToolInvocation, ToolRegistry};
/// use tool_protocol::{ToolCallError, ToolCallRequest};
///
/// /// Adds two integers.
/// #[tool_context::tool(read_only, name = "math.add")]
/// async fn add(
///     /// The first addend.
///     a: i64,
///     /// The second addend.
///     b: i64,
///     call: ToolInvocation,
/// ) -> Result<i64, ToolCallError> {
///     assert_eq!(call.tool_name, "math.add");
///     Ok(a + b)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let tool = add::tool();
/// assert_eq!(tool.definition().description.as_deref(), Some("Adds two integers."));
/// assert_eq!(tool.definition().input_schema["required"], json!(["a", "b"]));
/// assert!(tool.definition().is_read_only());
///
/// let registry = ToolRegistry::builder().tool(tool).policy(AllowAll).build().unwrap();
/// let arguments = json!({"a": 2, "b": 3}).as_object().cloned().unwrap();
/// let result = registry
///     .call_tool(ToolCallRequest::new("math.add", arguments), ToolCallOptions::default())
///     .await;
/// assert_eq!(result.structured_content, Some(json!(5)));
/// # }
/// ```
///
/// The function must be declared at module level (not inside another function's body), with
/// a literal doc comment, no generics and no `self`; it returns `Result<T, E>` where `T` is
/// `Serialize + JsonSchema` (`()` is an empty success) and `E: Into<ToolCallError>`. A
/// parameter whose type is `ToolInvocation` receives the call instead of being an argument.
/// Options: `name = "..."` (default: the function's name), `title = "..."`, `read_only`,
/// `destructive`, `idempotent`, `open_world` (or `open_world = false`).
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use tool_context_macros::{tool, tools};

/// What the code `#[tool]` generates refers to, so a crate using it needs no direct
/// dependency on these. Not a public API.
#[cfg(feature = "macros")]
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use tool_protocol::ToolCallError;
}

/// What [`tool_call_span!`] expands to needs. Not a public API.
#[doc(hidden)]
pub mod __telemetry {
    pub use tool_protocol::telemetry::{attr, operation};
    pub use tracing;
}
