//! The document clock's preview acknowledgements.
//!
//! Same contract as [`live_code_editor::workspace::bridge::PreviewAcks`] (stale revisions are
//! ignored, a wait ends ready, failed, superseded or timed out), but keyed by the editor's
//! *document* revision, which the editor itself advances: the crate's channel can only be moved
//! to a new revision by its own workspace manager.

use std::sync::Arc;
use std::time::Duration;

use live_code_editor::workspace::WorkspaceError;
use live_code_editor::workspace::bridge::{PreviewState, PreviewStatus};
use tokio::sync::watch;

/// The acknowledgement channel of the editor's document revisions.
#[derive(Debug, Clone)]
pub struct DocumentAcks {
    state: Arc<watch::Sender<PreviewState>>,
}

impl DocumentAcks {
    /// A channel waiting for `revision`.
    pub fn new(revision: u64) -> Self {
        let (state, _) = watch::channel(PreviewState {
            revision,
            status: PreviewStatus::Waiting,
        });
        Self {
            state: Arc::new(state),
        }
    }

    /// The latest preview state.
    pub fn current(&self) -> PreviewState {
        self.state.borrow().clone()
    }

    /// Reports the outcome of `revision`; `false` (nothing changes) when it is not the current
    /// revision or the status is `Waiting`.
    pub fn acknowledge(&self, revision: u64, status: PreviewStatus) -> bool {
        if status == PreviewStatus::Waiting {
            return false;
        }
        self.state.send_if_modified(|state| {
            let current = state.revision == revision;
            if current {
                state.status = status;
            }
            current
        })
    }

    /// Publishes `revision` as waiting (the editor only; revisions never go back).
    pub(super) fn publish(&self, revision: u64) {
        self.state.send_if_modified(|state| {
            let newer = revision > state.revision;
            if newer {
                *state = PreviewState {
                    revision,
                    status: PreviewStatus::Waiting,
                };
            }
            newer
        });
    }

    /// Waits until `revision` is acknowledged: `PREVIEW_RUNTIME_ERROR` when it failed,
    /// `PREVIEW_REVISION_SUPERSEDED` once a newer revision is published, `PREVIEW_ACK_TIMEOUT`
    /// after `timeout`.
    pub async fn wait_for(
        &self,
        revision: u64,
        timeout: Duration,
    ) -> Result<PreviewState, WorkspaceError> {
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let mut receiver = self.state.subscribe();
        let waited = tokio::time::timeout(timeout, async {
            loop {
                let state = receiver.borrow_and_update().clone();
                if let Some(outcome) = settle(revision, state) {
                    return outcome;
                }
                if receiver.changed().await.is_err() {
                    return Err(WorkspaceError::preview_ack_timeout(revision, timeout_ms));
                }
            }
        })
        .await;
        waited.unwrap_or_else(|_| Err(WorkspaceError::preview_ack_timeout(revision, timeout_ms)))
    }
}

/// `Some` once the wait for `revision` is decided by `state`.
fn settle(revision: u64, state: PreviewState) -> Option<Result<PreviewState, WorkspaceError>> {
    if state.revision > revision {
        return Some(Err(WorkspaceError::preview_superseded(
            revision,
            state.revision,
        )));
    }
    if state.revision < revision {
        return None;
    }
    match state.status {
        PreviewStatus::Waiting => None,
        PreviewStatus::Error { .. } => Some(Err(WorkspaceError::preview_runtime_error(revision))),
        PreviewStatus::Ready | PreviewStatus::Compiled => Some(Ok(state)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use live_code_editor::workspace::WorkspaceErrorCode as Code;

    #[tokio::test]
    async fn waits_settle_on_ready_error_supersede_and_timeout() {
        let acks = DocumentAcks::new(1);
        assert!(
            !acks.acknowledge(2, PreviewStatus::Ready),
            "future revision"
        );
        assert!(!acks.acknowledge(1, PreviewStatus::Waiting));
        let waiter = acks.clone();
        let wait = tokio::spawn(async move { waiter.wait_for(1, Duration::from_secs(30)).await });
        tokio::task::yield_now().await;
        assert!(acks.acknowledge(1, PreviewStatus::Ready));
        assert_eq!(wait.await.unwrap().unwrap().status, PreviewStatus::Ready);

        acks.publish(2);
        assert!(!acks.acknowledge(1, PreviewStatus::Ready), "stale revision");
        let waiter = acks.clone();
        let wait = tokio::spawn(async move { waiter.wait_for(2, Duration::from_secs(30)).await });
        tokio::task::yield_now().await;
        acks.publish(3);
        let superseded = wait.await.unwrap().unwrap_err();
        assert_eq!(superseded.code, Code::PreviewRevisionSuperseded);

        acks.publish(2);
        assert_eq!(acks.current().revision, 3, "revisions never go back");
        acks.acknowledge(
            3,
            PreviewStatus::Error {
                message: "boom".into(),
            },
        );
        let failed = acks.wait_for(3, Duration::from_secs(30)).await.unwrap_err();
        assert_eq!(failed.code, Code::PreviewRuntimeError);

        acks.publish(4);
        let timed_out = acks
            .wait_for(4, Duration::from_millis(20))
            .await
            .unwrap_err();
        assert_eq!(timed_out.code, Code::PreviewAckTimeout);
        assert_eq!(
            timed_out.details,
            serde_json::json!({"revision": 4, "timeoutMs": 20})
        );
    }
}
