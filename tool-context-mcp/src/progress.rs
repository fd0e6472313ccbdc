//! Progress notifications for a call whose client sent a `progressToken`.
//!
//! A call reports each lifecycle transition (`started: …`, `approval: …`, `waiting: …`, then
//! `completed: …` / `denied: …` / `failed: …` / `cancelled: …`, see [`crate::lifecycle`]), which
//! approval route it took, and a heartbeat every [`PROGRESS_INTERVAL`] while the call is still
//! running (a write waiting for the preview to acknowledge its revision, a long handler), so
//! clients that reset their request timeout on progress keep waiting. Progress values only
//! increase, as MCP requires.
//!
//! Notes are queued and sent by one task per call, so synchronous code (a registry observer, a
//! preview bridge) can report a transition and the notes still reach the wire in order.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Time between heartbeat notifications of a running call.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);
/// Notes queued per call before further notes are dropped (only a client that stopped reading
/// its stream fills the queue; a dropped note never fails the call).
pub const MAX_QUEUED_PROGRESS: usize = 64;

enum Item {
    Note(String),
    Flush(oneshot::Sender<()>),
}

/// Sends progress for one call; a no-op when the client sent no token.
#[derive(Clone)]
pub(crate) struct Progress {
    queue: Option<mpsc::Sender<Item>>,
}

impl Progress {
    /// Starts the sender task when the client asked for progress.
    pub(crate) fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        let Some(token) = token else {
            return Self::disabled();
        };
        let (queue, items) = mpsc::channel(MAX_QUEUED_PROGRESS);
        tokio::spawn(send_notes(peer, token, items));
        Self { queue: Some(queue) }
    }

    /// Progress for a client that sent no token (nothing is sent).
    pub(crate) fn disabled() -> Self {
        Self { queue: None }
    }

    /// Queues `message` with the next progress value. Delivery is best effort: a note that
    /// cannot be sent never fails the call.
    pub(crate) fn report(&self, message: String) {
        let Some(queue) = &self.queue else {
            return;
        };
        if queue.try_send(Item::Note(message)).is_err() {
            tracing::debug!("progress note dropped: the client is not reading its stream");
        }
    }

    /// Waits until every note queued so far has been handed to the transport, so the final
    /// transition goes out before the call's result.
    pub(crate) async fn flush(&self) {
        let Some(queue) = &self.queue else {
            return;
        };
        let (done, flushed) = oneshot::channel();
        if queue.send(Item::Flush(done)).await.is_ok() {
            let _ = flushed.await;
        }
    }

    /// Reports `message` every `interval` until `done` fires.
    pub(crate) fn heartbeat(&self, message: String, interval: Duration, done: CancellationToken) {
        if self.queue.is_none() {
            return;
        }
        let progress = self.clone();
        tokio::spawn(async move {
            let mut ticks =
                tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
            loop {
                tokio::select! {
                    () = done.cancelled() => break,
                    _ = ticks.tick() => progress.report(message.clone()),
                }
            }
        });
    }
}

/// Sends the queued notes in order until every [`Progress`] of the call is dropped.
async fn send_notes(peer: Peer<RoleServer>, token: ProgressToken, mut items: mpsc::Receiver<Item>) {
    let mut step: u64 = 0;
    while let Some(item) = items.recv().await {
        match item {
            Item::Note(message) => {
                step += 1;
                // Progress values are small step counters; f64 holds them exactly up to 2^53.
                #[allow(clippy::cast_precision_loss)]
                let param = ProgressNotificationParam::new(token.clone(), step as f64)
                    .with_message(message);
                if let Err(error) = peer.notify_progress(param).await {
                    tracing::debug!(%error, "progress notification not delivered");
                }
            }
            Item::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}
