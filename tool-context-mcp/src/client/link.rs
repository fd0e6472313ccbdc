//! The live connection to one server as its mounted tools see it: the current peer, or none
//! while the server is down, so a call fails fast instead of waiting for a reconnect; and the
//! calls in flight, so what the server asks of us during a call can be reported on it.

use std::sync::{Arc, Mutex, RwLock};

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
    pub(crate) in_flight: Arc<InFlight>,
    peer: RwLock<Option<Peer<RoleClient>>>,
}

impl ServerLink {
    pub(crate) fn new(server: &str, kind: LinkKind, in_flight: Arc<InFlight>) -> Arc<Self> {
        Arc::new(Self {
            server: Arc::from(server),
            kind,
            in_flight,
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

/// The calls running on one server. A 2025-11-25 server's `elicitation/create` names no call,
/// so what it asked is noted on every call in flight when it asked.
#[derive(Default)]
pub(crate) struct InFlight {
    calls: Mutex<Vec<Arc<CallNotes>>>,
}

/// What happened during one call besides its answer.
#[derive(Default)]
pub(crate) struct CallNotes {
    declined: Mutex<Vec<String>>,
}

impl InFlight {
    /// Registers a call until the returned guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>) -> InFlightCall {
        let notes = Arc::new(CallNotes::default());
        self.lock().push(Arc::clone(&notes));
        InFlightCall {
            in_flight: Arc::clone(self),
            notes,
        }
    }

    /// Notes on every running call that the server asked for input and was declined.
    pub(crate) fn note_declined(&self, message: &str) {
        let message: String = message.chars().take(300).collect();
        for call in self.lock().iter() {
            call.declined
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .push(message.clone());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<CallNotes>>> {
        self.calls
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// A registered call; leaves the in-flight set when dropped.
pub(crate) struct InFlightCall {
    in_flight: Arc<InFlight>,
    notes: Arc<CallNotes>,
}

impl InFlightCall {
    /// The questions the server asked during this call that were declined.
    pub(crate) fn declined(&self) -> Vec<String> {
        self.notes
            .declined
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }
}

impl Drop for InFlightCall {
    fn drop(&mut self) {
        self.in_flight
            .lock()
            .retain(|call| !Arc::ptr_eq(call, &self.notes));
    }
}
