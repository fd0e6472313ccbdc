//! Protocol revisions served, and how a request says which lifecycle it uses.
//!
//! Two lifecycles are served side by side, both by rmcp:
//!
//! - **2025-11-25 and older**: `initialize` negotiates a session (an `Mcp-Session-Id` over
//!   HTTP); approvals are asked with server-initiated `elicitation/create`.
//! - **2026-07-28**: no handshake and no session. `server/discover` reports the supported
//!   versions, capabilities (tools, and the Tasks extension `io.modelcontextprotocol/tasks`)
//!   and server info; every request carries its protocol version, client info and client
//!   capabilities in `_meta` (`io.modelcontextprotocol/protocolVersion`, …); over HTTP each
//!   request is served on its own, without a session. Approvals use `input_required`
//!   ([`crate::input_required`]) and long calls may become tasks ([`crate::tasks`]).
//!
//! `initialize` never negotiates 2026-07-28 (that revision has no `initialize`): a client that
//! asks for it there gets 2025-11-25, the newest revision with a handshake.

use rmcp::model::ProtocolVersion;
use rmcp::service::{RequestContext, RoleServer};

/// The newest revision served; [`supported_protocol_versions`] lists every one.
pub const MAX_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2026_07_28;
/// The revision `initialize` answers with when a client asks for one it cannot negotiate.
pub const MAX_PROTOCOL_VERSION_WITH_INITIALIZE: ProtocolVersion =
    ProtocolVersion::LATEST_WITH_INITIALIZE;

/// Every protocol revision served, oldest first.
pub fn supported_protocol_versions() -> &'static [ProtocolVersion] {
    ProtocolVersion::known_up_to(&MAX_PROTOCOL_VERSION)
}

/// Whether `context` is a request of the 2026-07-28 lifecycle (self-contained `_meta`, no
/// session to send requests back on).
pub(crate) fn uses_request_lifecycle(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_lifecycles_are_served() {
        let versions = supported_protocol_versions();
        assert_eq!(versions.last(), Some(&ProtocolVersion::V_2026_07_28));
        assert!(versions.contains(&ProtocolVersion::V_2025_11_25));
        assert!(MAX_PROTOCOL_VERSION_WITH_INITIALIZE.has_initialize());
        assert!(!MAX_PROTOCOL_VERSION.has_initialize());
    }
}
