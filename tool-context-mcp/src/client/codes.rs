//! The `MCP_REMOTE_*` codes: what can go wrong with a mounted server, each with its retryable
//! flag. Every error carries the server's name (and the remote tool's, for a call) in its
//! details, so a person and a model can tell which server failed.

use serde_json::{Value, json};
use tool_protocol::ToolCallError;

/// The server is not connected (starting, down, reconnecting or disabled): nothing was sent.
/// Retryable.
pub const MCP_REMOTE_UNAVAILABLE: &str = "MCP_REMOTE_UNAVAILABLE";
/// The server answered the call with `isError: true`. Not retryable.
pub const MCP_REMOTE_TOOL_ERROR: &str = "MCP_REMOTE_TOOL_ERROR";
/// The server answered with a JSON-RPC error or a response that is not a tool result. Not
/// retryable.
pub const MCP_REMOTE_PROTOCOL_ERROR: &str = "MCP_REMOTE_PROTOCOL_ERROR";
/// The server's answer was larger than one message may be ([`super::ClientLimits::max_message_bytes`]);
/// it was discarded unread. The tool may have acted. Not retryable.
pub const MCP_REMOTE_RESULT_TOO_LARGE: &str = "MCP_REMOTE_RESULT_TOO_LARGE";
/// The server asked for input during the call and no person could answer it. Not retryable.
pub const MCP_REMOTE_INPUT_DECLINED: &str = "MCP_REMOTE_INPUT_DECLINED";
/// Connecting to a server over HTTP (request, handshake) failed or timed out. Status only;
/// calls see [`MCP_REMOTE_UNAVAILABLE`].
pub const MCP_REMOTE_CONNECT_FAILED: &str = "MCP_REMOTE_CONNECT_FAILED";
/// A local server's command could not be started, exited, or did not complete the handshake
/// in time (stdio). Status only; calls see [`MCP_REMOTE_UNAVAILABLE`].
pub const MCP_SERVER_START_FAILED: &str = "MCP_SERVER_START_FAILED";
/// Listing the server's tools failed or exceeded a bound. Status only.
pub const MCP_REMOTE_LIST_FAILED: &str = "MCP_REMOTE_LIST_FAILED";
/// A remote tool was not mounted: its name or schema is unusable. Skip reasons only.
pub const MCP_REMOTE_TOOL_SKIPPED: &str = "MCP_REMOTE_TOOL_SKIPPED";

/// Every `MCP_REMOTE_*` code that can reach a tool call, with its retryable flag.
pub const CALL_ERROR_CODES: &[(&str, bool)] = &[
    (MCP_REMOTE_UNAVAILABLE, true),
    (MCP_REMOTE_TOOL_ERROR, false),
    (MCP_REMOTE_PROTOCOL_ERROR, false),
    (MCP_REMOTE_RESULT_TOO_LARGE, false),
    (MCP_REMOTE_INPUT_DECLINED, false),
];

/// An error about `server`'s remote tool `tool`.
pub(crate) fn call_error(
    code: &str,
    retryable: bool,
    message: impl Into<String>,
    server: &str,
    tool: &str,
    extra: Option<(&str, Value)>,
) -> ToolCallError {
    let mut details = json!({"server": server, "tool": tool});
    if let Some((key, value)) = extra {
        details[key] = value;
    }
    ToolCallError::new(code, message)
        .with_retryable(retryable)
        .with_details(details)
}
