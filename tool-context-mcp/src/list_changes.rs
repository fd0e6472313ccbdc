//! `notifications/tools/list_changed` for the served registry: when tools are mounted or
//! unmounted (an MCP server mounted into the registry reconnects or changes its list), every
//! connected client hears it and lists again, on either revision: unasked after `initialize`
//! on 2025-11-25, on a `subscriptions/listen` stream that asked for it on 2026-07-28.

use std::time::Duration;

use rmcp::Peer;
use rmcp::service::{RoleServer, SubscriptionSink};
use tokio::sync::watch;

/// How often a session with no catalog change checks that its client is still there, so a
/// closed session's watcher ends.
const CLOSED_CHECK: Duration = Duration::from_secs(30);

/// Tells a 2025-11-25 session's client about every catalog change until its transport closes.
pub(crate) fn notify_session(peer: Peer<RoleServer>, mut changes: watch::Receiver<u64>) {
    changes.mark_unchanged();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() || peer.notify_tool_list_changed().await.is_err() {
                        return;
                    }
                }
                () = tokio::time::sleep(CLOSED_CHECK) => {
                    if peer.is_transport_closed() {
                        return;
                    }
                }
            }
        }
    });
}

/// Sends every catalog change on a 2026-07-28 subscription until it ends.
pub(crate) async fn notify_subscription(
    sink: &SubscriptionSink,
    mut changes: watch::Receiver<u64>,
    cancelled: impl std::future::Future<Output = ()>,
) {
    changes.mark_unchanged();
    tokio::pin!(cancelled);
    loop {
        tokio::select! {
            () = &mut cancelled => return,
            changed = changes.changed() => {
                if changed.is_err() || sink.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        }
    }
}
