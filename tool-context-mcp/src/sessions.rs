//! HTTP sessions that stay alive while they are in use.
//!
//! rmcp's [`LocalSessionManager`] closes a session after a stretch without session events
//! (5 minutes by default), and an open response stream does not count: a `tools/call` waiting
//! on a person's approval without a `progressToken`, or a client that only listens on its GET
//! stream, lost its session mid-wait. [`ActiveSessions`] wraps it and decides idleness itself:
//! a session is idle only while none of its streams is open (a call's POST stream, the GET
//! stream, a resumed stream) and no request arrived for the idle timeout; only then is it
//! closed. Abandoned sessions are still cleaned up, one idle timeout after their last stream
//! closed.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use tokio::time::Instant;

/// Idle time after which an unused session is closed, unless configured otherwise.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug)]
struct Activity {
    open_streams: usize,
    last_used: Instant,
}

type Activities = Arc<Mutex<HashMap<SessionId, Activity>>>;

/// A [`SessionManager`] that never closes a session while one of its streams is open (see the
/// module docs).
#[derive(Debug)]
pub struct ActiveSessions {
    inner: Arc<LocalSessionManager>,
    idle_timeout: Duration,
    activities: Activities,
    reaper_started: AtomicBool,
}

impl Default for ActiveSessions {
    fn default() -> Self {
        Self::new(DEFAULT_IDLE_TIMEOUT)
    }
}

impl ActiveSessions {
    /// Sessions closed after `idle_timeout` without a request and without an open stream.
    pub fn new(idle_timeout: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        // Idleness is decided here, with open streams counted.
        inner.session_config.keep_alive = None;
        Self {
            inner: Arc::new(inner),
            idle_timeout: idle_timeout.max(Duration::from_millis(1)),
            activities: Arc::default(),
            reaper_started: AtomicBool::new(false),
        }
    }

    /// The configured idle timeout.
    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Activity>> {
        self.activities
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn touch(&self, id: &SessionId) {
        if let Some(activity) = self.lock().get_mut(id) {
            activity.last_used = Instant::now();
        }
    }

    fn tracked<S>(&self, id: &SessionId, stream: S) -> Tracked<S> {
        if let Some(activity) = self.lock().get_mut(id) {
            activity.open_streams += 1;
            activity.last_used = Instant::now();
        }
        Tracked {
            stream: Box::pin(stream),
            id: id.clone(),
            activities: Arc::downgrade(&self.activities),
        }
    }

    fn start_reaper(&self) {
        if self.reaper_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let inner = Arc::downgrade(&self.inner);
        let activities = Arc::downgrade(&self.activities);
        let idle = self.idle_timeout;
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval((idle / 4).max(Duration::from_millis(5)));
            loop {
                ticks.tick().await;
                let (Some(inner), Some(activities)) = (inner.upgrade(), activities.upgrade())
                else {
                    return;
                };
                let idle_ids: Vec<SessionId> = {
                    let mut map = activities.lock().unwrap_or_else(PoisonError::into_inner);
                    let ids: Vec<SessionId> = map
                        .iter()
                        .filter(|(_, a)| a.open_streams == 0 && a.last_used.elapsed() >= idle)
                        .map(|(id, _)| id.clone())
                        .collect();
                    for id in &ids {
                        map.remove(id);
                    }
                    ids
                };
                for id in idle_ids {
                    tracing::debug!(session = %id, "closing idle MCP session");
                    let _ = inner.close_session(&id).await;
                }
            }
        });
    }
}

/// A session stream that counts as activity until it ends.
struct Tracked<S> {
    stream: Pin<Box<S>>,
    id: SessionId,
    activities: Weak<Mutex<HashMap<SessionId, Activity>>>,
}

impl<S: Stream> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.stream.as_mut().poll_next(cx)
    }
}

impl<S> Drop for Tracked<S> {
    fn drop(&mut self) {
        let Some(activities) = self.activities.upgrade() else {
            return;
        };
        let mut map = activities.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(activity) = map.get_mut(&self.id) {
            activity.open_streams = activity.open_streams.saturating_sub(1);
            activity.last_used = Instant::now();
        }
    }
}

impl SessionManager for ActiveSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.start_reaper();
        let (id, transport) = self.inner.create_session().await?;
        let activity = Activity {
            open_streams: 0,
            last_used: Instant::now(),
        };
        self.lock().insert(id.clone(), activity);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(self.tracked(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(self.tracked(id, stream))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(self.tracked(id, stream))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.start_reaper();
        let restored = self.inner.restore_session(id.clone()).await?;
        let activity = Activity {
            open_streams: 0,
            last_used: Instant::now(),
        };
        self.lock().entry(id).or_insert(activity);
        Ok(restored)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
