//! `WorkspaceDocumentManager`: owns the workspace state, its history and the ordering of
//! persistence, folder I/O and preview acknowledgement.
//!
//! Every mutation runs under one lock: revision guard, pure transition, history record,
//! repository write, preview publication. The lock is released before waiting for the preview
//! acknowledgement, so readers are never blocked by a slow preview. Folder operations are
//! serialized by a second lock and do their I/O without holding the state lock; they
//! re-check the revision they captured, so edits made during a save or reload are never lost.
//! The folder operations live in `folders`, the reported status and outcome types in `outcome`.

mod folders;
mod outcome;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;

use super::bridge::{
    DEFAULT_PREVIEW_ACK_TIMEOUT, PreviewAcks, PreviewBridge, PreviewSnapshot, PreviewState,
    PreviewStatus,
};
use super::error::{WorkspaceError, WorkspaceResult};
use super::folder::FolderAdapter;
use super::history::{Clock, History, RecordKind, SystemClock};
use super::model::{Occurrence, Operation, StoredWorkspace, Workspace, validate_path};
use super::repository::{WorkspaceDelta, WorkspaceRepository};
use crate::file::{FileContent, WorkspaceFile};
use outcome::{disconnected_folder, folder_status};

pub use outcome::{
    FileRead, FileSummary, FolderStatus, ImportGuard, ImportOutcome, MutationOutcome, ResumedWork,
    SaveOutcome, StorageStatus, WorkspaceStatus, WriteOptions,
};

/// Longest `storage_error` reported, in characters.
pub const MAX_STORAGE_ERROR_CHARS: usize = 240;
/// Storage mode before [`WorkspaceDocumentManager::hydrate`] ran.
pub const STORAGE_MODE_LOADING: &str = "loading";
/// Storage mode after a storage failure: the workspace lives in process memory only.
pub const STORAGE_MODE_MEMORY: &str = "memory";

/// Manager settings.
#[derive(Clone)]
#[non_exhaustive]
pub struct ManagerOptions {
    /// How long mutations wait for the preview acknowledgement.
    pub ack_timeout: Duration,
    /// The clock used for history coalescing.
    pub clock: Arc<dyn Clock>,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        Self {
            ack_timeout: DEFAULT_PREVIEW_ACK_TIMEOUT,
            clock: Arc::new(SystemClock::default()),
        }
    }
}

impl ManagerOptions {
    /// Sets how long mutations wait for the preview acknowledgement.
    #[must_use]
    pub fn with_ack_timeout(mut self, ack_timeout: Duration) -> Self {
        self.ack_timeout = ack_timeout;
        self
    }

    /// Sets the clock used for history coalescing.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

impl std::fmt::Debug for ManagerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerOptions")
            .field("ack_timeout", &self.ack_timeout)
            .finish_non_exhaustive()
    }
}

struct State {
    workspace: Workspace,
    history: History,
    storage: StorageStatus,
    persisting: bool,
    folder: Option<Arc<dyn FolderAdapter>>,
    /// The scope of the folder the checkpoint was imported from (persisted on replace).
    folder_scope: Option<String>,
    resumed: Option<ResumedWork>,
}

enum Persist {
    Delta,
    Replace,
}

/// The stateful workspace engine. See the module docs.
pub struct WorkspaceDocumentManager {
    state: Mutex<State>,
    folder_ops: Mutex<()>,
    repository: Arc<dyn WorkspaceRepository>,
    bridge: Arc<dyn PreviewBridge>,
    acks: PreviewAcks,
    clock: Arc<dyn Clock>,
    ack_timeout: Duration,
    seed: Vec<WorkspaceFile>,
}

impl std::fmt::Debug for WorkspaceDocumentManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceDocumentManager")
            .field("ack_timeout", &self.ack_timeout)
            .finish_non_exhaustive()
    }
}

impl WorkspaceDocumentManager {
    /// A manager over `seed` at revision 1 with storage mode `loading`; call
    /// [`hydrate`](Self::hydrate) to load the repository.
    pub fn new(
        seed: Vec<WorkspaceFile>,
        repository: Arc<dyn WorkspaceRepository>,
        bridge: Arc<dyn PreviewBridge>,
        options: ManagerOptions,
    ) -> WorkspaceResult<Self> {
        let workspace = Workspace::new(seed.clone())?;
        let acks = PreviewAcks::new(workspace.revision());
        Ok(Self {
            state: Mutex::new(State {
                workspace,
                history: History::new(),
                storage: StorageStatus {
                    storage_mode: STORAGE_MODE_LOADING.to_owned(),
                    storage_error: None,
                },
                persisting: false,
                folder: None,
                folder_scope: None,
                resumed: None,
            }),
            folder_ops: Mutex::new(()),
            repository,
            bridge,
            acks,
            clock: options.clock,
            ack_timeout: options.ack_timeout,
            seed,
        })
    }

    /// [`new`](Self::new) followed by [`hydrate`](Self::hydrate).
    pub async fn open(
        seed: Vec<WorkspaceFile>,
        repository: Arc<dyn WorkspaceRepository>,
        bridge: Arc<dyn PreviewBridge>,
        options: ManagerOptions,
    ) -> WorkspaceResult<Self> {
        let manager = Self::new(seed, repository, bridge, options)?;
        manager.hydrate().await;
        Ok(manager)
    }

    /// Loads the stored workspace (repairing it) or stores the seed, and advances the revision.
    /// A storage failure keeps the in-memory workspace and switches to memory mode.
    pub async fn hydrate(&self) -> StorageStatus {
        let mut state = self.state.lock().await;
        let (loaded, load_error) = match self.repository.load().await {
            Ok(Some(mut stored)) => {
                let scope = stored.folder_scope.take();
                match Workspace::restore(stored) {
                    Ok(workspace) => (Some((workspace, scope)), None),
                    Err(error) => (
                        None,
                        Some(format!(
                            "stored workspace could not be restored: {}",
                            error.message
                        )),
                    ),
                }
            }
            Ok(None) => (None, None),
            Err(error) => (None, Some(error.to_string())),
        };
        let base = match loaded {
            Some((workspace, scope)) => {
                state.folder_scope = scope;
                workspace
            }
            None => state.workspace.clone(),
        };
        let revision = base.revision().max(state.workspace.revision()) + 1;
        state.workspace = base.with_revision(revision);
        state.history.clear();
        match load_error {
            Some(error) => self.fall_back_to_memory(&mut state, &error),
            None => match self.repository.replace(&stored_form(&state)).await {
                Ok(()) => {
                    state.persisting = true;
                    state.storage = StorageStatus {
                        storage_mode: self.repository.storage_mode().to_owned(),
                        storage_error: None,
                    };
                }
                Err(error) => self.fall_back_to_memory(&mut state, &error.to_string()),
            },
        }
        self.publish(&state.workspace);
        state.storage.clone()
    }

    /// The acknowledgement channel (hosts forward browser `ready`/`error` messages here).
    pub fn preview_acks(&self) -> &PreviewAcks {
        &self.acks
    }

    /// Reports a preview outcome for `revision`; stale revisions are ignored (`false`).
    pub fn acknowledge_preview(&self, revision: u64, status: PreviewStatus) -> bool {
        self.acks.acknowledge(revision, status)
    }

    /// A snapshot of the current workspace.
    pub async fn snapshot(&self) -> Workspace {
        self.state.lock().await.workspace.clone()
    }

    /// The current revision.
    pub async fn revision(&self) -> u64 {
        self.state.lock().await.workspace.revision()
    }

    /// Status: revision, dirty state, history, preview, folder and storage.
    pub async fn status(&self) -> WorkspaceStatus {
        let (mut status, folder) = {
            let state = self.state.lock().await;
            let ws = &state.workspace;
            let dirty_paths = ws.dirty_paths();
            let pending_deletions = ws.pending_deletions();
            let status = WorkspaceStatus {
                revision: ws.revision(),
                active_path: ws.active_path().to_owned(),
                file_count: ws.files().len(),
                is_dirty: !dirty_paths.is_empty() || !pending_deletions.is_empty(),
                dirty_paths,
                pending_deletions,
                can_undo: state.history.can_undo(),
                can_redo: state.history.can_redo(),
                preview: self.acks.current(),
                folder: disconnected_folder(),
                resumed: state.resumed.clone(),
                storage: state.storage.clone(),
            };
            (status, state.folder.clone())
        };
        status.folder = folder_status(folder.as_deref()).await;
        status
    }

    /// Files with kind, size and dirty flag (no contents).
    pub async fn list_files(&self) -> Vec<FileSummary> {
        let state = self.state.lock().await;
        let ws = &state.workspace;
        ws.files()
            .map(|file| {
                let (kind, mime_type, size_bytes) = match &file.content {
                    FileContent::Text { source } => {
                        ("text", file.language.mime_type().to_owned(), source.len())
                    }
                    FileContent::Asset { bytes, mime_type } => {
                        ("asset", mime_type.clone(), bytes.len())
                    }
                };
                FileSummary {
                    path: file.path.clone(),
                    language: file.language,
                    kind,
                    mime_type,
                    size_bytes,
                    dirty: ws.is_path_dirty(&file.path),
                }
            })
            .collect()
    }

    /// Reads one text file with the current revision.
    pub async fn read_file(&self, raw_path: &str) -> WorkspaceResult<FileRead> {
        let path = validate_path(raw_path)?;
        let state = self.state.lock().await;
        let ws = &state.workspace;
        let file = ws
            .file(&path)
            .ok_or_else(|| WorkspaceError::file_not_found(&path, "read"))?;
        let source = file
            .source()
            .ok_or_else(|| WorkspaceError::file_type_conflict(&path, "read", "asset", "text"))?
            .to_owned();
        Ok(FileRead {
            dirty: ws.is_path_dirty(&path),
            language: file.language,
            path,
            source,
            revision: ws.revision(),
        })
    }

    /// Creates a text file and makes it active.
    pub async fn create_file(
        &self,
        path: &str,
        source: &str,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<MutationOutcome> {
        self.apply(
            Operation::Create {
                path: path.into(),
                source: source.into(),
            },
            expected_revision,
            true,
        )
        .await
    }

    /// Replaces a text file's source (coalescing same-path edits unless told not to).
    pub async fn write_file(
        &self,
        path: &str,
        source: &str,
        options: WriteOptions,
    ) -> WorkspaceResult<MutationOutcome> {
        let operation = Operation::Write {
            path: path.into(),
            source: source.into(),
        };
        self.apply(operation, options.expected_revision, options.coalesce)
            .await
    }

    /// Literal search/replace in a text file.
    pub async fn apply_patch(
        &self,
        path: &str,
        search: &str,
        replace: &str,
        occurrence: Occurrence,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<MutationOutcome> {
        let operation = Operation::Patch {
            path: path.into(),
            search: search.into(),
            replace: replace.into(),
            occurrence,
        };
        self.apply(operation, expected_revision, false).await
    }

    /// Renames a file within its kind.
    pub async fn rename_file(
        &self,
        from: &str,
        to: &str,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<MutationOutcome> {
        self.apply(
            Operation::Rename {
                from: from.into(),
                to: to.into(),
            },
            expected_revision,
            false,
        )
        .await
    }

    /// Deletes a file (a saved one stays a pending folder deletion).
    pub async fn delete_file(
        &self,
        path: &str,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<MutationOutcome> {
        self.apply(
            Operation::Delete { path: path.into() },
            expected_revision,
            false,
        )
        .await
    }

    /// Restores a file to its checkpoint, its renamed origin, or removes an unsaved new file.
    pub async fn revert_file(
        &self,
        path: &str,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<MutationOutcome> {
        self.apply(
            Operation::Revert { path: path.into() },
            expected_revision,
            false,
        )
        .await
    }

    /// Applies any [`Operation`]; `coalesce` only matters for writes.
    pub async fn apply(
        &self,
        operation: Operation,
        expected_revision: Option<u64>,
        coalesce: bool,
    ) -> WorkspaceResult<MutationOutcome> {
        let path = match &operation {
            Operation::Rename { to, .. } => validate_path(to).ok(),
            Operation::Create { path, .. }
            | Operation::Write { path, .. }
            | Operation::Patch { path, .. }
            | Operation::Delete { path }
            | Operation::Revert { path } => validate_path(path).ok(),
        };
        let name = operation.name();
        self.mutate(name, path, expected_revision, move |ws, history, now| {
            let next = ws.apply(&operation)?;
            let edited = match &operation {
                Operation::Write { path, .. } => Some(validate_path(path)?),
                _ => None,
            };
            let kind = match &edited {
                Some(path) => RecordKind::SourceEdit { path, coalesce },
                None => RecordKind::Checkpoint,
            };
            history.record(ws.content(), kind, now);
            Ok(next)
        })
        .await
    }

    /// Selects the active file. Keeps the revision (selection is not content) and does not
    /// wait for the preview.
    pub async fn open_file(
        &self,
        raw_path: &str,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<MutationOutcome> {
        let mut state = self.state.lock().await;
        check_expected(expected_revision, &state.workspace, None)?;
        let next = state.workspace.open(raw_path)?;
        self.commit(&mut state, next, Persist::Delta).await;
        let path = Some(state.workspace.active_path().to_owned());
        Ok(self.outcome(&state, "open", path, self.acks.current()))
    }

    /// The current workspace and what one undo (`undo = true`) or redo step would make of it,
    /// read under one lock without changing anything (`None` when there is no such step), so a
    /// person can see the step before it is taken.
    pub async fn preview_history_step(&self, undo: bool) -> (Workspace, Option<Workspace>) {
        let state = self.state.lock().await;
        let target = if undo {
            state.history.peek_undo()
        } else {
            state.history.peek_redo()
        };
        let after = target.and_then(|target| state.workspace.restore_content(target).ok());
        (state.workspace.clone(), after)
    }

    /// Moves one step back in history.
    pub async fn undo(&self, expected_revision: Option<u64>) -> WorkspaceResult<MutationOutcome> {
        self.mutate("undo", None, expected_revision, |ws, history, _| {
            let target = history
                .undo(ws.content())
                .ok_or_else(|| WorkspaceError::history_empty("undo"))?;
            ws.restore_content(&target)
                .inspect_err(|_| history.cancel_undo(target.clone()))
        })
        .await
    }

    /// Moves one step forward in history.
    pub async fn redo(&self, expected_revision: Option<u64>) -> WorkspaceResult<MutationOutcome> {
        self.mutate("redo", None, expected_revision, |ws, history, _| {
            let target = history
                .redo(ws.content())
                .ok_or_else(|| WorkspaceError::history_empty("redo"))?;
            ws.restore_content(&target)
                .inspect_err(|_| history.cancel_redo(target.clone()))
        })
        .await
    }

    /// Republishes the current revision and waits for it to be acknowledged again. Nothing is
    /// committed, so a failed wait is a plain preview failure (retrying it is harmless).
    pub async fn refresh_preview(&self) -> WorkspaceResult<MutationOutcome> {
        let mut outcome = {
            let state = self.state.lock().await;
            self.publish(&state.workspace);
            self.outcome(&state, "refresh", None, self.acks.current())
        };
        outcome.preview = self
            .acks
            .wait_for(outcome.revision, self.ack_timeout)
            .await?;
        Ok(outcome)
    }

    /// Restores the seed workspace. Refused while a folder is linked, and over unsaved work
    /// unless the guard discards it.
    pub async fn reset(&self, guard: ImportGuard) -> WorkspaceResult<MutationOutcome> {
        let outcome = {
            let mut state = self.state.lock().await;
            check_expected(guard.expected_revision, &state.workspace, None)?;
            if state.folder.is_some() {
                return Err(WorkspaceError::folder_state_conflict("reset"));
            }
            check_unsaved(&state.workspace, "reset", guard)?;
            let next = state.workspace.replaced_by(self.seed.clone())?;
            state.history.clear();
            state.folder_scope = None;
            state.resumed = None;
            self.commit(&mut state, next, Persist::Replace).await;
            self.outcome(&state, "reset", None, self.acks.current())
        };
        self.finish(outcome).await
    }

    // ---- internals ----

    async fn mutate<F>(
        &self,
        operation: &'static str,
        path: Option<String>,
        expected_revision: Option<u64>,
        change: F,
    ) -> WorkspaceResult<MutationOutcome>
    where
        F: FnOnce(&Workspace, &mut History, u64) -> WorkspaceResult<Workspace>,
    {
        let outcome = {
            let mut state = self.state.lock().await;
            check_expected(expected_revision, &state.workspace, None)?;
            let State {
                workspace, history, ..
            } = &mut *state;
            let next = change(workspace, history, self.clock.now_ms())?;
            self.commit(&mut state, next, Persist::Delta).await;
            self.outcome(&state, operation, path, self.acks.current())
        };
        self.finish(outcome).await
    }

    /// Waits for the preview to acknowledge the committed outcome's revision.
    async fn finish(&self, mut outcome: MutationOutcome) -> WorkspaceResult<MutationOutcome> {
        outcome.preview = self
            .acks
            .wait_for_committed(outcome.revision, self.ack_timeout)
            .await?;
        Ok(outcome)
    }

    /// Installs `next`, persists it, and publishes it when the revision moved.
    async fn commit(&self, state: &mut State, next: Workspace, persist: Persist) {
        let previous = std::mem::replace(&mut state.workspace, next);
        if state.persisting {
            let written = match persist {
                Persist::Delta => {
                    self.repository
                        .apply(&WorkspaceDelta::between(&previous, &state.workspace))
                        .await
                }
                Persist::Replace => self.repository.replace(&stored_form(state)).await,
            };
            if let Err(error) = written {
                self.fall_back_to_memory(state, &error.to_string());
            }
        }
        if state.workspace.revision() != previous.revision() {
            self.publish(&state.workspace);
        }
    }

    fn publish(&self, workspace: &Workspace) {
        self.acks.reset(workspace.revision());
        let snapshot = PreviewSnapshot {
            revision: workspace.revision(),
            files: workspace.shared_files().to_vec(),
        };
        self.bridge.publish(snapshot, &self.acks);
    }

    fn fall_back_to_memory(&self, state: &mut State, error: &str) {
        tracing::warn!(storage_error = %error, "workspace storage failed; continuing in memory");
        state.persisting = false;
        state.storage = StorageStatus {
            storage_mode: STORAGE_MODE_MEMORY.to_owned(),
            storage_error: Some(error.chars().take(MAX_STORAGE_ERROR_CHARS).collect()),
        };
    }

    fn outcome(
        &self,
        state: &State,
        operation: &'static str,
        path: Option<String>,
        preview: PreviewState,
    ) -> MutationOutcome {
        let ws = &state.workspace;
        MutationOutcome {
            operation,
            path,
            revision: ws.revision(),
            active_path: ws.active_path().to_owned(),
            dirty_paths: ws.dirty_paths(),
            pending_deletions: ws.pending_deletions(),
            preview,
            storage: state.storage.clone(),
        }
    }
}

fn check_expected(
    expected: Option<u64>,
    workspace: &Workspace,
    operation: Option<&str>,
) -> WorkspaceResult<()> {
    match expected {
        Some(expected) if expected != workspace.revision() => Err(
            WorkspaceError::revision_conflict(expected, workspace.revision(), operation),
        ),
        _ => Ok(()),
    }
}

/// Dirty files and pending deletions: the work an import or reset would discard.
fn unsaved_paths(workspace: &Workspace) -> Vec<String> {
    let mut paths = workspace.dirty_paths();
    paths.extend(workspace.pending_deletions());
    paths.sort();
    paths.dedup();
    paths
}

/// Refuses `operation` over unsaved work unless `guard` discards it.
fn check_unsaved(
    workspace: &Workspace,
    operation: &str,
    guard: ImportGuard,
) -> WorkspaceResult<()> {
    if guard.discard_changes {
        return Ok(());
    }
    let unsaved = unsaved_paths(workspace);
    if unsaved.is_empty() {
        return Ok(());
    }
    Err(WorkspaceError::unsaved_changes(operation, &unsaved))
}

/// The persisted form of the state, with the folder the checkpoint came from.
fn stored_form(state: &State) -> StoredWorkspace {
    StoredWorkspace {
        folder_scope: state.folder_scope.clone(),
        ..state.workspace.to_stored()
    }
}
