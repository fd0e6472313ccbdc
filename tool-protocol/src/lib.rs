#![doc = include_str!("../README.md")]
//!
//! ## In this crate
//!
//! | Module | What it holds |
//! |---|---|
//! | [`request`], [`result`], [`content`], [`error`], [`context`], [`definition`] | The wire types; their `Deserialize` impls go through the validators. |
//! | [`codes`] | Every canonical `TOOL_*` code with when it fires and its retryable rule. |
//! | [`validate`] | `parse_*` for untrusted JSON, issues located by JSON pointer, depth and issue bounds. |
//! | [`export`] | MCP, OpenAI (optionally strict) and Anthropic tool lists; reversible provider names. |
//! | [`paging`] | [`paging::list_all_tools`] over `nextCursor` with loop and page-limit guards; offset cursors. |
//! | [`event`] | Lifecycle events and `context-action-tool-execution-provenance.v1` with its JSON Schema. |
//! | [`observability`] | Redaction policy, byte-bounded serialization, observation projection, sanitized diagnostics. |
//! | [`approval`] | What a person sees for a pending approval, and its guard. |
//! | [`idempotency`] | Key validation, session-scoped operation keys, canonical-JSON fingerprints. |
//! | [`telemetry`] | The OpenTelemetry span, attribute and metric names (GenAI and MCP conventions, and ours). |
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod approval;
pub mod codes;
pub mod content;
pub mod context;
pub mod definition;
pub mod error;
pub mod event;
pub mod export;
pub mod idempotency;
pub mod observability;
pub mod paging;
pub mod request;
pub mod result;
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub mod schema;
pub mod telemetry;
pub mod validate;

pub use approval::{ToolApprovalSnapshot, parse_tool_approval_snapshot};
pub use codes::TOOL_CALL_ERROR_CODES;
pub use content::{ToolContent, stringify_tool_content, stringify_tool_content_block};
pub use context::{ToolCallContext, ToolCallMode, ToolCallSource};
pub use definition::{ToolAnnotations, ToolDefinition};
pub use error::{BlankErrorField, ToolCallError};
pub use event::{ProvenanceState, ToolCallEvent, ToolCallEventType, ToolExecutionProvenance};
pub use request::{
    ModelToolCall, StringOrNumber, ToolCallId, ToolCallRequest, ToolListRequest, ToolListResult,
};
pub use result::{Replay, ToolCallResult};
pub use validate::{
    ValidationIssue, parse_tool_call_request, parse_tool_call_result, parse_tool_list_request,
    parse_tool_list_result,
};
