//! The one tool-call pipeline: registry, allowlist, validation, policy and approvals,
//! timeout, cancellation, output budget, idempotency and lifecycle events.
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
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//! use tool_context::{Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
//! use tool_protocol::{ModelToolCall, ToolCallError, codes};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct ReadInput { path: String }
//! #[derive(Serialize, JsonSchema)]
//! struct ReadOutput { path: String, bytes: usize }
//!
//! async fn read(input: ReadInput, _call: ToolInvocation) -> Result<ReadOutput, ToolCallError> {
//!     Ok(ReadOutput { bytes: 42, path: input.path })
//! }
//! async fn delete(_input: ReadInput, _call: ToolInvocation) -> Result<(), ToolCallError> {
//!     Ok(())
//! }
//!
//! let registry = ToolRegistry::builder()
//!     .tool(Tool::typed("fs.read", "Reads a file.", read).read_only())
//!     .tool(Tool::typed("fs.delete", "Deletes a file.", delete).destructive())
//!     .build()
//!     .unwrap();
//!
//! let call = |name: &str| ModelToolCall {
//!     id: Some("call_1".into()), name: name.into(),
//!     arguments: json!({"path": "a.txt"}).as_object().cloned(),
//! };
//! let read = registry.execute_model_tool_call(call("fs.read"), ToolCallOptions::default()).await;
//! assert_eq!(read.structured_content, Some(json!({"path": "a.txt", "bytes": 42})));
//! // The default policy never lets a model-originated mutation run without an approval.
//! let delete = registry.execute_model_tool_call(call("fs.delete"), ToolCallOptions::default()).await;
//! assert_eq!(delete.error_code(), Some(codes::TOOL_APPROVAL_REQUIRED));
//! # });
//! ```

pub mod approval;
mod catalog;
pub mod durable;
mod failure;
pub mod idempotency;
pub mod interaction;
mod ledger;
pub mod observer;
pub mod operations;
pub mod options;
mod pipeline;
pub mod policy;
pub mod registry;
mod schema;
mod signal;
pub mod tool;

pub use approval::{ApprovalDecision, ApprovalQueue, ApprovalQueueConfig, ApprovalSnapshot};
pub use catalog::ListToolsError;
pub use durable::{DEFAULT_DURABLE_LEASE_MS, MAX_ABORT_TRANSITION_WAIT_MS};
pub use failure::{EXECUTION_STATE_DETACHED, PERSISTENCE_STATE_UNCERTAIN};
pub use idempotency::{
    IdempotencyClaim, IdempotencyClaimError, IdempotencyConfig, IdempotencyRegistry,
};
pub use interaction::{InteractionKind, InteractionOutcome, InteractionRequest, ToolInteraction};
pub use observer::ToolCallObserver;
pub use operations::OperationError;
pub use options::ToolCallOptions;
pub use policy::{
    AllowAll, BoxError, FixedPolicy, FnPolicy, PolicyCall, PolicyDecision, PolicyRequest,
    ReadOnlyOrDirectLocal, StandardPolicy, ToolPolicy, policy_fn,
};
pub use registry::{BuildError, ToolRegistry, ToolRegistryBuilder, ValidationMode};
pub use tool::{HandlerOutput, Tool, ToolHandler, ToolInvocation};
