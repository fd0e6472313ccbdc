//! What a person (or a host) sees of each mounted server: its state, its tools, what was left
//! out and why. Never carries a secret: the configuration's env and header values stay out.

use serde::Serialize;
use tool_context::SkippedTool;

/// One server's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum ServerState {
    /// Starting, or handshaking.
    Connecting,
    /// Connected, its tools mounted.
    Ready,
    /// Never got ready: the reason, and the next attempt.
    Failed {
        /// An `MCP_REMOTE_*` code.
        code: String,
        /// What happened.
        message: String,
        /// When the next attempt starts.
        #[serde(rename = "retryInMs")]
        retry_in_ms: u64,
    },
    /// Was ready and lost its connection; its tools stay listed and fail fast with
    /// `MCP_REMOTE_UNAVAILABLE` until it is back.
    Unavailable {
        /// An `MCP_REMOTE_*` code.
        code: String,
        /// What happened.
        message: String,
        /// When the next attempt starts.
        #[serde(rename = "retryInMs")]
        retry_in_ms: u64,
    },
    /// Disabled in the configuration.
    Disabled,
}

/// A tool a server offered that was not mounted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedView {
    /// The remote name (control characters escaped).
    pub name: String,
    /// Why.
    pub reason: String,
}

impl From<SkippedTool> for SkippedView {
    fn from(skipped: SkippedTool) -> Self {
        Self {
            name: skipped.name,
            reason: skipped.reason,
        }
    }
}

/// One server as a settings page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerStatus {
    /// The configured name (the tools' prefix).
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// The state.
    #[serde(flatten)]
    pub state: ServerState,
    /// The negotiated protocol revision, once connected.
    pub protocol_version: Option<String>,
    /// The server's own name and version, once connected.
    pub server_info: Option<String>,
    /// Mounted registry names (`<server>.<tool>`).
    pub tools: Vec<String>,
    /// Offered tools that were not mounted.
    pub skipped: Vec<SkippedView>,
}

impl ServerStatus {
    pub(crate) fn new(name: &str, transport: &'static str, state: ServerState) -> Self {
        Self {
            name: name.to_owned(),
            transport,
            state,
            protocol_version: None,
            server_info: None,
            tools: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// Whether it is connected with its tools mounted.
    pub fn is_ready(&self) -> bool {
        self.state == ServerState::Ready
    }

    /// Whether connecting has come to an end for now: ready, failed, unavailable or disabled.
    pub fn is_settled(&self) -> bool {
        self.state != ServerState::Connecting
    }
}
