//! The studio's live event stream: every browser tab (over the WebSocket) and every test sees
//! trace rows, approval changes, workspace revisions, preview acknowledgements and agent
//! lifecycle transitions in the order the host produced them.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

/// The stylesheets of an announced revision, for a preview showing any revision from `since`
/// on (the start of its [`StylesheetRun`](super::stylesheet_run::StylesheetRun)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LiveStylesheets {
    /// The oldest revision a preview may show and still take these stylesheets in place.
    pub since: u64,
    /// The texts of the revision's inlined stylesheets, in document order.
    pub stylesheets: Vec<Arc<str>>,
}

/// Events buffered per subscriber before a slow one starts missing events (it is told so).
pub const EVENT_BUFFER: usize = 512;

/// One event on the stream.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum StudioEvent {
    /// A trace row was added or updated.
    Trace {
        /// The row.
        row: Value,
    },
    /// The pending approvals changed (newest first).
    Approvals {
        /// Pending approval snapshots.
        pending: Value,
    },
    /// The workspace moved to a new revision, or (`refresh`) republished the current one.
    Workspace {
        /// The new revision.
        revision: u64,
        /// The same revision was published again: pages reload their preview of it.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        refresh: bool,
        /// A stylesheet-only revision's stylesheets, which a page showing a revision of the
        /// same run swaps in without asking for them.
        #[serde(skip_serializing_if = "Option::is_none")]
        live: Option<LiveStylesheets>,
    },
    /// The preview acknowledged (or failed) a revision.
    Preview {
        /// The preview state.
        state: Value,
    },
    /// An agent run changed lifecycle state.
    Agent {
        /// The run.
        run: Value,
    },
    /// What an agent run streamed: a run event (`textDelta`, `toolCallStreamStarted`,
    /// `toolCallArgumentsDelta`, `toolCallReady`, `toolCallStarted`, `toolCallFinished`,
    /// `retryScheduled` voiding its turn, `usage`) in the provider loop's own shape, deltas
    /// coalesced (at most one per ~16 ms per run, or per 8 KiB).
    AgentStream {
        /// The run.
        #[serde(rename = "runId")]
        run_id: String,
        /// The event.
        event: Value,
    },
    /// Something changed on the editor or web-coding surface (revisions, preview state).
    Surface {
        /// `editor` or `web`.
        surface: String,
        /// What changed; its shape belongs to the surface.
        data: Value,
    },
    /// Provider settings changed (never carries the key itself).
    Settings {
        /// Public settings.
        settings: Value,
    },
    /// The mounted MCP servers changed: their configuration or a server's state. The same
    /// shape as `GET /api/mcp/servers`; secrets are masked.
    McpServers {
        /// Grows with every change (a page keeps the view with the highest).
        generation: u64,
        /// The configuration with every env and header value masked.
        config: Value,
        /// Each server's status (state, tools, skipped tools).
        servers: Value,
    },
}

/// Fan-out of [`StudioEvent`]s to any number of subscribers.
#[derive(Debug, Clone)]
pub struct EventHub {
    sender: broadcast::Sender<StudioEvent>,
}

impl Default for EventHub {
    fn default() -> Self {
        Self::new()
    }
}

impl EventHub {
    /// A hub with [`EVENT_BUFFER`] events of buffer per subscriber.
    pub fn new() -> Self {
        Self {
            sender: broadcast::channel(EVENT_BUFFER).0,
        }
    }

    /// Sends an event to every current subscriber (none is fine).
    pub fn publish(&self, event: StudioEvent) {
        let _ = self.sender.send(event);
    }

    /// A new subscription starting at the next event.
    pub fn subscribe(&self) -> broadcast::Receiver<StudioEvent> {
        self.sender.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn subscribers_receive_events_in_order() {
        let hub = EventHub::new();
        hub.publish(StudioEvent::Workspace {
            revision: 1,
            refresh: false,
            live: None,
        });
        let mut receiver = hub.subscribe();
        hub.publish(StudioEvent::Workspace {
            revision: 2,
            refresh: false,
            live: None,
        });
        hub.publish(StudioEvent::Preview {
            state: json!({"revision": 2, "status": "ready"}),
        });
        let first = serde_json::to_value(receiver.recv().await.unwrap()).unwrap();
        assert_eq!(first, json!({"type": "workspace", "revision": 2}));
        let second = serde_json::to_value(receiver.recv().await.unwrap()).unwrap();
        assert_eq!(second["type"], "preview");
    }
}
