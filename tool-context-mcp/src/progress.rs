//! Progress notifications for a call whose client sent a `progressToken`.
//!
//! A call reports when it starts waiting for an approval, and a heartbeat reports every
//! [`PROGRESS_INTERVAL`] while the call is still running (a write waiting for the preview to
//! acknowledge its revision, a long handler), so clients that reset their request timeout on
//! progress keep waiting. Progress values only increase, as MCP requires.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

/// Time between heartbeat notifications of a running call.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// Sends progress for one call; a no-op when the client sent no token.
#[derive(Clone)]
pub(crate) struct Progress {
    target: Option<(Peer<RoleServer>, ProgressToken)>,
    /// The last progress value sent; held across the send so values reach the wire in order.
    step: Arc<tokio::sync::Mutex<u64>>,
}

impl Progress {
    pub(crate) fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        Self {
            target: token.map(|token| (peer, token)),
            step: Arc::new(tokio::sync::Mutex::new(0)),
        }
    }

    /// Sends `message` with the next progress value. Delivery is best effort: a notification
    /// that cannot be sent never fails the call.
    pub(crate) async fn report(&self, message: String) {
        let Some((peer, token)) = &self.target else {
            return;
        };
        let mut step = self.step.lock().await;
        *step += 1;
        // Progress values are small step counters; f64 holds them exactly up to 2^53.
        #[allow(clippy::cast_precision_loss)]
        let param =
            ProgressNotificationParam::new(token.clone(), *step as f64).with_message(message);
        if let Err(error) = peer.notify_progress(param).await {
            tracing::debug!(%error, "progress notification not delivered");
        }
    }

    /// Reports `message` every `interval` until `done` fires.
    pub(crate) fn heartbeat(&self, message: String, interval: Duration, done: CancellationToken) {
        if self.target.is_none() {
            return;
        }
        let progress = self.clone();
        tokio::spawn(async move {
            let mut ticks =
                tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
            loop {
                tokio::select! {
                    () = done.cancelled() => break,
                    _ = ticks.tick() => progress.report(message.clone()).await,
                }
            }
        });
    }
}
