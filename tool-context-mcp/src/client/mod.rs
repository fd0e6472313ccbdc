//! Mount MCP servers into a registry: every remote tool becomes a registry tool
//! `<server>.<tool>` and runs through the registry's one pipeline (allowlist, strict
//! validation, policy and approval, timeout, cancellation, output budget, idempotency),
//! exactly like a local tool.
//!
//! - **Reaching servers**: stdio (a command, its arguments and environment) or streamable HTTP
//!   (a URL and headers such as `Authorization: Bearer …`), on either protocol revision:
//!   2026-07-28 through `server/discover`, else 2025-11-25 through `initialize`. A stdio server
//!   starts with a minimal environment ([`INHERITED_ENV_VARS`]) plus what its `env` names: a key
//!   in the host's environment reaches no server unless configured for it.
//! - **Untrusted input**: names are checked against the MCP tool-name rules, schemas are
//!   bounded ([`ClientLimits`]) and compiled, the list is bounded in pages and tools; anything
//!   unusable is skipped with its reason ([`ServerStatus::skipped`]), never a panic.
//! - **Untrusted hints**: an untrusted server's `readOnlyHint` and `idempotentHint` are dropped
//!   from its tools' definitions, so the standard policies ask a person before every model,
//!   MCP or agent call of a remote tool (a person's own direct call runs). A server or a tool
//!   the configuration trusts ([`McpServerConfig::trusted`], [`McpServerConfig::trusted_tools`])
//!   keeps its hints and runs without asking.
//! - **Coded failures** ([`codes`]): `MCP_REMOTE_UNAVAILABLE` (retryable, nothing sent) while a
//!   server is down, `MCP_REMOTE_TOOL_ERROR` for `isError` results, `MCP_REMOTE_PROTOCOL_ERROR`
//!   for JSON-RPC errors, `TOOL_EXECUTION_UNKNOWN` when the connection is lost after a call
//!   was sent (a keyed call's durable record then asks for reconciliation).
//! - **Live**: `list_changed` re-lists and swaps the server's tools in one step; a lost
//!   connection reconnects with bounded backoff; cancellation reaches the server.
//!
//! A host that serves its registry over MCP ([`crate::McpToolServer`]) re-exports mounted
//! tools to its own clients: a gateway, still behind approvals.

mod call;
mod catalog;
pub mod codes;
mod config;
mod connect;
mod environment;
mod limits;
mod line_cap;
mod link;
mod mounts;
mod retry;
mod status;
mod supervisor;

pub use catalog::mounted_name;
pub use config::{
    ConfigError, MASK, MAX_SERVER_NAME_CHARS, MAX_SERVERS, McpServerConfig, McpServersConfig,
    McpTransportConfig, ProtocolRevision, valid_server_name,
};
pub use environment::INHERITED_ENV_VARS;
pub use limits::ClientLimits;
pub use mounts::McpMounts;
pub use status::{ServerState, ServerStatus, SkippedView};
