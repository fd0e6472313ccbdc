//! The live connection to one server as its mounted tools see it: the current peer, or none
//! while the server is down, so a call fails fast instead of waiting for a reconnect.

use std::sync::{Arc, RwLock};

use rmcp::Peer;
use rmcp::service::RoleClient;

/// How a connection reaches its server; decides what a failed send means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkKind {
    /// A child process: a failed write never reached it.
    Stdio,
    /// Streamable HTTP: a failed POST may or may not have reached it.
    Http,
}

/// One server's current peer, shared by its mounted tools and its supervisor.
pub(crate) struct ServerLink {
    pub(crate) server: Arc<str>,
    pub(crate) kind: LinkKind,
    peer: RwLock<Option<Peer<RoleClient>>>,
}

impl ServerLink {
    pub(crate) fn new(server: &str, kind: LinkKind) -> Arc<Self> {
        Arc::new(Self {
            server: Arc::from(server),
            kind,
            peer: RwLock::new(None),
        })
    }

    /// The connected peer, `None` while the server is down.
    pub(crate) fn peer(&self) -> Option<Peer<RoleClient>> {
        self.peer
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    pub(crate) fn set_peer(&self, peer: Option<Peer<RoleClient>>) {
        *self
            .peer
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = peer;
    }
}
