#![doc = include_str!("../README.md")]
//!
//! ## In this crate
//!
//! Every MCP call goes through the registry's one pipeline (validation, allowlist, policy,
//! approvals, timeout, cancellation, output budget, idempotency, events) with context
//! `{source: "mcp", mode: "agent", sessionId: "mcp-<uuid>"}`, one session id per MCP session.
//!
//! - `tools/list`: the canonical definitions (`title`, `description`, `inputSchema`,
//!   `outputSchema`, `annotations`) with schemas in JSON Schema 2020-12 ([`schema`]), paged with
//!   the registry's opaque offset cursors.
//! - `tools/call`: an unknown tool or a malformed request is a JSON-RPC `-32602` error; every
//!   other failure is `isError: true` without `structuredContent` (clients check that against
//!   the success-only `outputSchema`), the coded error `{code, message, retryable?, details?}`
//!   in `_meta["tool-context/error"]` and as JSON text content ([`convert`]).
//! - Approvals ([`approval`]): an attended [`ApprovalDesk`], else MCP elicitation with an
//!   explicit confirmation form (no field; accept approves, decline/cancel deny; the message
//!   summarizes the change without raw content or secrets), else an explicit
//!   `TOOL_POLICY_DENIED` that names the ways to approve — never a silent allow.
//! - Streamable HTTP sessions stay alive while any of their streams is open (a call waiting on
//!   an approval, the GET stream) and close after an idle timeout otherwise ([`sessions`]).
//! - `notifications/cancelled` cancels the call; a client that sends a `progressToken` gets
//!   every lifecycle transition as progress (`started: …`, `approval: …`, `waiting: …`, then
//!   `completed: …`, `denied: …`, `failed: …` or `cancelled: …`, see [`lifecycle`]), the
//!   approval route, and a heartbeat while it runs ([`progress`]).
//! - Protocol 2026-07-28 next to 2025-11-25 ([`discovery`]): approvals as `input_required`
//!   rounds with a sealed single-use `requestState` ([`input_required`], [`request_state`]),
//!   long calls as durable tasks ([`tasks`]).
//! - The other direction ([`client`], feature `client`): MCP servers mounted into a registry,
//!   their tools run through the same pipeline as `<server>.<tool>`.
//! - A host [`CallObserver`] sees each call's lifecycle and may add its own transitions or
//!   cancel the call (the studio shows MCP calls as agent runs this way).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod approval;
pub mod change_preview;
#[cfg(feature = "client")]
pub mod client;
pub mod convert;
pub mod discovery;
pub mod idempotency;
pub mod input_required;
pub mod lifecycle;
mod list_changes;
#[cfg(feature = "oauth")]
pub mod oauth;
pub mod principal;
pub mod progress;
pub mod request_state;
pub mod result_links;
pub mod schema;
pub mod server;
#[cfg(feature = "http")]
pub mod sessions;
pub mod tasks;
mod telemetry;
pub mod transport;

pub use approval::{ApprovalDesk, ApprovalRoute, unavailable_denial};
pub use change_preview::ChangePreview;
pub use discovery::{MAX_PROTOCOL_VERSION, supported_protocol_versions};
pub use lifecycle::{CallObserver, CallState, McpCall};
pub use principal::Principal;
pub use request_state::{KeyTooShort, RequestStateKey};
pub use result_links::ResultLinks;
pub use rmcp;
pub use server::{DEFAULT_PAGE_SIZE, DEFAULT_REQUEST_OWNER, McpToolServer};
#[cfg(feature = "http")]
pub use sessions::ActiveSessions;
#[cfg(feature = "stdio")]
pub use transport::serve_stdio;
pub use transport::{ServeError, serve_transport};
#[cfg(feature = "http")]
pub use transport::{streamable_http_service, streamable_http_service_with_idle_timeout};
