//! What an agent needs, in one import, whichever crate of the family it comes from:
//!
//! ```
//! use tool_context::prelude::*;
//!
//! let registry = ToolRegistry::builder().policy(StandardPolicy).build().unwrap();
//! let arguments = serde_json::from_str(r#"{"path":"todo.md"}"#).unwrap();
//! let call = ModelToolCall::new("call-1", "notes.read", arguments);
//! let options = ToolCallOptions::default().with_idempotency_key("read-todo");
//! # let _ = (registry, call, options);
//! ```
//!
//! From this crate: the registry and its builder, tools and their invocation, call options,
//! policies, interactions and the approval queue. From `tool-protocol` (re-exported here, so a
//! user crate needs no direct dependency on it): requests, results, errors and their
//! [`codes`], contexts and definitions. From `tool-durable-operations`: the durable store a
//! registry records keyed calls in. With the `macros` feature: [`tool`](macro@crate::tool) and
//! [`tools`](macro@crate::tools).

pub use crate::{
    AllowAll, ApprovalDecision, ApprovalQueue, ApprovalQueueConfig, FixedPolicy,
    InteractionOutcome, InteractionRequest, PolicyDecision, StandardPolicy, Tool, ToolCallOptions,
    ToolInteraction, ToolInvocation, ToolPolicy, ToolRegistry, ToolRegistryBuilder, ValidationMode,
};
pub use tool_durable_operations::DurableOperationStore;
pub use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallError, ToolCallMode, ToolCallRequest, ToolCallResult,
    ToolCallSource, ToolContent, ToolDefinition, codes,
};

#[cfg(feature = "macros")]
pub use crate::{tool, tools};
