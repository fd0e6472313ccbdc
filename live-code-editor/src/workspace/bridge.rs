//! Preview acknowledgement: the host owns state, the preview only acknowledges revisions.
//!
//! The manager publishes each new revision to a [`PreviewBridge`] and waits on [`PreviewAcks`]
//! until the bridge reports the same revision as ready (browser), compiled (headless) or failed.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;

use super::error::{WorkspaceError, WorkspaceResult};
pub use super::runtime_report::RuntimeErrorReport;
use crate::file::WorkspaceFile;
use crate::preview::PreviewRuntimeError;

/// The report behind `mutex`, even if a holder panicked (it only ever holds plain data).
fn lock(mutex: &Mutex<RuntimeErrorReport>) -> MutexGuard<'_, RuntimeErrorReport> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How long a mutation waits for the preview to acknowledge its revision by default.
pub const DEFAULT_PREVIEW_ACK_TIMEOUT: Duration = Duration::from_millis(2_500);

/// Where the preview stands for a revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum PreviewStatus {
    /// Published, not yet acknowledged.
    Waiting,
    /// A browser rendered the revision.
    Ready,
    /// A headless bridge compiled the revision (nothing was rendered).
    Compiled,
    /// The preview reported an error for the revision.
    Error {
        /// The reported message (bounded by the bridge).
        message: String,
    },
}

/// The preview's revision and status, as reported in every manager result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct PreviewState {
    /// The revision the preview is showing or about to show.
    pub revision: u64,
    /// Its status.
    #[serde(flatten)]
    pub status: PreviewStatus,
}

/// Most runtime errors [`PreviewAcks`] keeps for the current revision (the latest ones).
pub const MAX_KEPT_RUNTIME_ERRORS: usize = 20;

/// The acknowledgement channel shared by the manager and its bridge.
///
/// Acknowledgements for any revision other than the current one are stale and ignored.
#[derive(Debug, Clone)]
pub struct PreviewAcks {
    state: Arc<watch::Sender<PreviewState>>,
    /// The current revision's runtime errors (see [`PreviewAcks::record_runtime_error`]).
    runtime_errors: Arc<Mutex<RuntimeErrorReport>>,
}

impl PreviewAcks {
    /// A channel waiting for `revision`.
    pub fn new(revision: u64) -> Self {
        let (state, _) = watch::channel(PreviewState {
            revision,
            status: PreviewStatus::Waiting,
        });
        Self {
            state: Arc::new(state),
            runtime_errors: Arc::default(),
        }
    }

    /// Keeps a runtime error the preview reported for the current revision (the latest
    /// [`MAX_KEPT_RUNTIME_ERRORS`]); `false`, keeping nothing, for any other revision.
    pub fn record_runtime_error(&self, error: PreviewRuntimeError) -> bool {
        if error.revision != self.state.borrow().revision {
            return false;
        }
        let mut report = lock(&self.runtime_errors);
        if report.revision != error.revision {
            *report = RuntimeErrorReport {
                revision: error.revision,
                ..RuntimeErrorReport::default()
            };
        }
        report.omitted += u64::from(error.dropped);
        report.errors.push(error);
        if report.errors.len() > MAX_KEPT_RUNTIME_ERRORS {
            report.errors.remove(0);
            report.omitted += 1;
        }
        true
    }

    /// The runtime errors reported for the current revision (none yet: an empty report).
    pub fn runtime_errors(&self) -> RuntimeErrorReport {
        let revision = self.state.borrow().revision;
        let report = lock(&self.runtime_errors);
        if report.revision == revision {
            report.clone()
        } else {
            RuntimeErrorReport {
                revision,
                ..RuntimeErrorReport::default()
            }
        }
    }

    /// The current preview state.
    pub fn current(&self) -> PreviewState {
        self.state.borrow().clone()
    }

    /// Reports the outcome for `revision`; returns `false` (and changes nothing) when the
    /// revision is not the current one or the status is `Waiting`.
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

    /// Publishes a newer `revision` as waiting, for a host that advances its own revision clock
    /// (such as a document clock beside the workspace's); an older or equal revision changes
    /// nothing, so revisions never go back.
    pub fn publish(&self, revision: u64) {
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

    /// Marks `revision` as published and waiting (manager only).
    pub(crate) fn reset(&self, revision: u64) {
        self.state.send_replace(PreviewState {
            revision,
            status: PreviewStatus::Waiting,
        });
    }

    /// Waits until `revision` is acknowledged. Fails with `PREVIEW_RUNTIME_ERROR` when it
    /// reported an error, `PREVIEW_REVISION_SUPERSEDED` once a newer revision is published,
    /// and `PREVIEW_ACK_TIMEOUT` after `timeout`.
    pub async fn wait_for(
        &self,
        revision: u64,
        timeout: Duration,
    ) -> WorkspaceResult<PreviewState> {
        let mut receiver = self.state.subscribe();
        let outcome = tokio::time::timeout(timeout, async {
            loop {
                let state = receiver.borrow_and_update().clone();
                if let Some(outcome) = settle(revision, state, || self.runtime_errors()) {
                    return outcome;
                }
                if receiver.changed().await.is_err() {
                    return Err(WorkspaceError::preview_ack_timeout(
                        revision,
                        millis(timeout),
                    ));
                }
            }
        })
        .await;
        outcome.unwrap_or_else(|_| {
            Err(WorkspaceError::preview_ack_timeout(
                revision,
                millis(timeout),
            ))
        })
    }

    /// [`wait_for`](Self::wait_for) after a mutation committed `revision`: a failed wait is
    /// reported as [committed](WorkspaceError::committed), because the change is applied and
    /// only its preview confirmation is missing.
    pub async fn wait_for_committed(
        &self,
        revision: u64,
        timeout: Duration,
    ) -> WorkspaceResult<PreviewState> {
        self.wait_for(revision, timeout)
            .await
            .map_err(|error| error.committed(revision))
    }
}

/// `Some` once the wait for `revision` is decided by `state`; a failed revision's error
/// carries what the preview reported (`runtime_errors`, read only then).
fn settle(
    revision: u64,
    state: PreviewState,
    runtime_errors: impl FnOnce() -> RuntimeErrorReport,
) -> Option<WorkspaceResult<PreviewState>> {
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
        PreviewStatus::Error { message } => Some(Err(
            WorkspaceError::preview_runtime_error_reported(revision, &message, &runtime_errors()),
        )),
        PreviewStatus::Ready | PreviewStatus::Compiled => Some(Ok(state)),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// One published revision: the files the preview should show.
#[derive(Debug, Clone)]
pub struct PreviewSnapshot {
    /// The workspace revision.
    pub revision: u64,
    /// Files in canonical order, shared with the workspace.
    pub files: Vec<Arc<WorkspaceFile>>,
}

/// Delivers revisions to a preview. Implementations answer later through [`PreviewAcks`]
/// (a browser forwards its `ready`/`error` message; a test double answers directly).
pub trait PreviewBridge: Send + Sync {
    /// `snapshot` is now the current revision; arrange for an acknowledgement on `acks`.
    /// Must not block: do slow work on a task.
    fn publish(&self, snapshot: PreviewSnapshot, acks: &PreviewAcks);
}

/// Compiles a workspace snapshot for a headless preview.
pub trait PreviewCompiler: Send + Sync + 'static {
    /// `Ok` when the files compile into a preview document; `Err` carries a short message.
    fn compile(&self, files: &[WorkspaceFile]) -> Result<(), String>;
}

impl<F> PreviewCompiler for F
where
    F: Fn(&[WorkspaceFile]) -> Result<(), String> + Send + Sync + 'static,
{
    fn compile(&self, files: &[WorkspaceFile]) -> Result<(), String> {
        self(files)
    }
}

/// Longest preview error message kept in the state.
pub const MAX_PREVIEW_ERROR_CHARS: usize = 240;

/// A bridge for hosts without a browser: acknowledges each revision as `compiled` by running
/// an injected compiler on a blocking task, or as `error` when compilation fails.
pub struct HeadlessPreviewBridge {
    compiler: Arc<dyn PreviewCompiler>,
}

impl HeadlessPreviewBridge {
    /// A bridge that runs `compiler` for each revision.
    pub fn new(compiler: impl PreviewCompiler) -> Self {
        Self {
            compiler: Arc::new(compiler),
        }
    }

    /// A bridge that acknowledges every revision without compiling.
    pub fn accept_all() -> Self {
        Self::new(|_: &[WorkspaceFile]| Ok(()))
    }
}

impl std::fmt::Debug for HeadlessPreviewBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeadlessPreviewBridge")
            .finish_non_exhaustive()
    }
}

impl PreviewBridge for HeadlessPreviewBridge {
    fn publish(&self, snapshot: PreviewSnapshot, acks: &PreviewAcks) {
        let compiler = Arc::clone(&self.compiler);
        let acks = acks.clone();
        tokio::task::spawn_blocking(move || {
            let files: Vec<WorkspaceFile> =
                snapshot.files.iter().map(|file| (**file).clone()).collect();
            let status = match compiler.compile(&files) {
                Ok(()) => PreviewStatus::Compiled,
                Err(message) => PreviewStatus::Error {
                    message: message.chars().take(MAX_PREVIEW_ERROR_CHARS).collect(),
                },
            };
            acks.acknowledge(snapshot.revision, status);
        });
    }
}

/// A bridge that never answers by itself: the host (or a test) acknowledges through
/// [`PreviewAcks`]. Useful when acknowledgements arrive over a socket.
#[derive(Debug, Default)]
pub struct ManualPreviewBridge {
    published: std::sync::Mutex<Vec<u64>>,
}

impl ManualPreviewBridge {
    /// Revisions published so far, oldest first.
    pub fn published(&self) -> Vec<u64> {
        self.published
            .lock()
            .map(|list| list.clone())
            .unwrap_or_default()
    }
}

impl PreviewBridge for ManualPreviewBridge {
    fn publish(&self, snapshot: PreviewSnapshot, _acks: &PreviewAcks) {
        if let Ok(mut list) = self.published.lock() {
            list.push(snapshot.revision);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::error::WorkspaceErrorCode as Code;

    fn runtime_error(revision: u64, message: &str, dropped: u32) -> PreviewRuntimeError {
        crate::preview::parse_runtime_error_message(&serde_json::json!({
            "type": crate::preview::PREVIEW_RUNTIME_ERROR_MESSAGE,
            "revision": revision, "kind": "error", "message": message, "dropped": dropped,
        }))
        .unwrap()
    }

    #[test]
    fn runtime_errors_are_kept_for_the_current_revision_only_and_bounded() {
        let acks = PreviewAcks::new(4);
        assert!(!acks.record_runtime_error(runtime_error(3, "stale", 0)));
        assert!(!acks.record_runtime_error(runtime_error(5, "future", 0)));
        assert_eq!(
            acks.runtime_errors(),
            RuntimeErrorReport {
                revision: 4,
                ..Default::default()
            }
        );
        for index in 0..=MAX_KEPT_RUNTIME_ERRORS {
            assert!(acks.record_runtime_error(runtime_error(4, &format!("e{index}"), 0)));
        }
        assert!(acks.record_runtime_error(runtime_error(4, "last", 3)));
        let report = acks.runtime_errors();
        assert_eq!(report.errors.len(), MAX_KEPT_RUNTIME_ERRORS);
        assert_eq!(report.errors[0].message, "e2", "the oldest were pushed out");
        assert_eq!(report.errors.last().unwrap().message, "last");
        assert_eq!(
            report.omitted,
            2 + 3,
            "two pushed out, three dropped by the document"
        );
        acks.publish(5);
        assert!(
            acks.runtime_errors().errors.is_empty(),
            "a new revision starts clean"
        );
        assert_eq!(acks.runtime_errors().revision, 5);
    }

    #[tokio::test]
    async fn a_host_clock_publishes_newer_revisions_only() {
        let acks = PreviewAcks::new(1);
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

    #[tokio::test(start_paused = true)]
    async fn times_out_with_the_revision_and_timeout() {
        let acks = PreviewAcks::new(3);
        let error = acks
            .wait_for(3, DEFAULT_PREVIEW_ACK_TIMEOUT)
            .await
            .unwrap_err();
        assert_eq!(error.code, Code::PreviewAckTimeout);
        assert_eq!(
            error.message,
            "Preview revision 3 was not acknowledged within 2500ms."
        );
        assert_eq!(
            error.details,
            serde_json::json!({"revision": 3, "timeoutMs": 2500})
        );
    }

    #[tokio::test(start_paused = true)]
    async fn stale_acknowledgements_are_ignored() {
        let acks = PreviewAcks::new(5);
        assert!(!acks.acknowledge(4, PreviewStatus::Ready), "older revision");
        assert!(
            !acks.acknowledge(6, PreviewStatus::Ready),
            "unknown future revision"
        );
        assert!(!acks.acknowledge(5, PreviewStatus::Waiting));
        assert_eq!(acks.current().status, PreviewStatus::Waiting);
        let waiter = acks.clone();
        let wait = tokio::spawn(async move { waiter.wait_for(5, Duration::from_secs(1)).await });
        tokio::task::yield_now().await;
        assert!(acks.acknowledge(5, PreviewStatus::Ready));
        assert_eq!(wait.await.unwrap().unwrap().status, PreviewStatus::Ready);
    }

    #[tokio::test(start_paused = true)]
    async fn newer_revision_supersedes_and_errors_are_coded() {
        let acks = PreviewAcks::new(2);
        let waiter = acks.clone();
        let wait = tokio::spawn(async move { waiter.wait_for(2, Duration::from_secs(1)).await });
        tokio::task::yield_now().await;
        acks.reset(3);
        let error = wait.await.unwrap().unwrap_err();
        assert_eq!(error.code, Code::PreviewRevisionSuperseded);
        assert_eq!(
            error.details,
            serde_json::json!({"requestedRevision": 2, "actualRevision": 3})
        );
        assert!(error.retryable);

        acks.acknowledge(
            3,
            PreviewStatus::Error {
                message: "boom".into(),
            },
        );
        let error = acks.wait_for(3, Duration::from_secs(1)).await.unwrap_err();
        assert_eq!(error.code, Code::PreviewRuntimeError);
        assert_eq!(
            error.details,
            serde_json::json!({"revision": 3, "message": "boom"}),
            "the contract's revision, and what the preview reported"
        );
    }

    #[tokio::test]
    async fn headless_bridge_compiles_and_reports() {
        let acks = PreviewAcks::new(1);
        let ok = HeadlessPreviewBridge::accept_all();
        ok.publish(
            PreviewSnapshot {
                revision: 1,
                files: vec![],
            },
            &acks,
        );
        let state = acks.wait_for(1, Duration::from_secs(5)).await.unwrap();
        assert_eq!(state.status, PreviewStatus::Compiled);
        assert_eq!(
            serde_json::to_value(&state).unwrap(),
            serde_json::json!({"revision": 1, "status": "compiled"})
        );

        acks.reset(2);
        let failing = HeadlessPreviewBridge::new(|files: &[WorkspaceFile]| {
            if files.iter().any(|file| file.path == "index.html") {
                Ok(())
            } else {
                Err("no entry".to_owned())
            }
        });
        failing.publish(
            PreviewSnapshot {
                revision: 2,
                files: vec![],
            },
            &acks,
        );
        let error = acks.wait_for(2, Duration::from_secs(5)).await.unwrap_err();
        assert_eq!(error.code, Code::PreviewRuntimeError);
        assert_eq!(
            acks.current().status,
            PreviewStatus::Error {
                message: "no entry".into()
            }
        );
    }
}
