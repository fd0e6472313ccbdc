//! `WorkspaceDocumentManager`: owns the workspace state, its history and the ordering of
//! persistence, folder I/O and preview acknowledgement.
//!
//! Every mutation runs under one lock: revision guard, pure transition, history record,
//! repository write, preview publication. The lock is released before waiting for the preview
//! acknowledgement, so readers are never blocked by a slow preview. Folder operations are
//! serialized by a second lock and do their I/O without holding the state lock; they
//! re-check the revision they captured, so edits made during a save or reload are never lost.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::Mutex;

use super::bridge::{
    DEFAULT_PREVIEW_ACK_TIMEOUT, PreviewAcks, PreviewBridge, PreviewSnapshot, PreviewState,
    PreviewStatus,
};
use super::error::{MAX_DETAIL_UNSAVED_PATHS, WorkspaceError, WorkspaceErrorCode, WorkspaceResult};
use super::folder::{FolderAdapter, FolderImport, FolderPermission, MAX_LISTED_SKIPS};
use super::history::{Clock, History, RecordKind, SystemClock};
use super::model::{Occurrence, Operation, StoredWorkspace, Workspace, validate_path};
use super::repository::{WorkspaceDelta, WorkspaceRepository};
use crate::file::{FileContent, Language, WorkspaceFile};

/// Longest `storage_error` reported, in characters.
pub const MAX_STORAGE_ERROR_CHARS: usize = 240;
/// Storage mode before [`WorkspaceDocumentManager::hydrate`] ran.
pub const STORAGE_MODE_LOADING: &str = "loading";
/// Storage mode after a storage failure: the workspace lives in process memory only.
pub const STORAGE_MODE_MEMORY: &str = "memory";

/// Manager settings.
#[derive(Clone)]
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

impl std::fmt::Debug for ManagerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerOptions")
            .field("ack_timeout", &self.ack_timeout)
            .finish_non_exhaustive()
    }
}

/// Where the workspace is persisted, carried by every result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct StorageStatus {
    /// `"loading"`, the repository's mode (`"sqlite"`, ...) or `"memory"` after a failure.
    pub storage_mode: String,
    /// Why storage fell back to memory (at most [`MAX_STORAGE_ERROR_CHARS`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_error: Option<String>,
}

/// Linked-folder capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FolderStatus {
    /// Whether a folder is linked.
    pub connected: bool,
    /// Its display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its write permission (`disconnected` without a folder).
    pub permission: FolderPermission,
    /// Whether `save_all` can run now.
    pub save_all_available: bool,
    /// Whether `reload_folder` can run now.
    pub reload_available: bool,
}

/// The result of a content mutation, undo/redo, reset or preview refresh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct MutationOutcome {
    /// Operation name (`create`, `write`, `patch`, `rename`, `delete`, `revert`, `open`,
    /// `undo`, `redo`, `reset`, `refresh`).
    pub operation: &'static str,
    /// The path the operation addressed (normalized), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Workspace revision after the operation.
    pub revision: u64,
    /// Active editor path.
    pub active_path: String,
    /// Dirty paths after the operation.
    pub dirty_paths: Vec<String>,
    /// Pending folder deletions after the operation.
    pub pending_deletions: Vec<String>,
    /// The acknowledged preview state of `revision`.
    pub preview: PreviewState,
    /// Persistence status.
    #[serde(flatten)]
    pub storage: StorageStatus,
}

/// The result of replacing the workspace from a folder, an upload list or the seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ImportOutcome {
    /// `open`, `import`, `reload` or `reset`.
    pub operation: &'static str,
    /// Revision after the import.
    pub revision: u64,
    /// Active path chosen for the new file set.
    pub active_path: String,
    /// Imported file count.
    pub file_count: usize,
    /// Skipped entries and reached limits (at most [`MAX_LISTED_SKIPS`] lines).
    pub skipped: Vec<String>,
    /// How many entries were skipped in all.
    pub skipped_count: usize,
    /// Skipped entries per reason (`unsupported`, `binary`, `tooLarge`, `fileLimit`, `symlink`, ...).
    pub skipped_by_reason: BTreeMap<&'static str, usize>,
    /// The folder link after the import.
    pub folder: FolderStatus,
    /// Acknowledged preview state.
    pub preview: PreviewState,
    /// Persistence status.
    #[serde(flatten)]
    pub storage: StorageStatus,
}

/// The result of `save_all` or `save_checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SaveOutcome {
    /// `save` (`save_all`, `save_file`) or `checkpoint`.
    pub operation: &'static str,
    /// Revision the save was based on (unchanged by saving).
    pub revision: u64,
    /// Active path.
    pub active_path: String,
    /// Files written (or marked clean), sorted.
    pub saved_paths: Vec<String>,
    /// Deletions performed (or marked done), sorted.
    pub deleted_paths: Vec<String>,
    /// Whether the whole workspace is clean afterwards.
    pub clean: bool,
    /// Persistence status.
    #[serde(flatten)]
    pub storage: StorageStatus,
}

/// Read-only status (`workspace.getStatus`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct WorkspaceStatus {
    /// Current revision.
    pub revision: u64,
    /// Active editor path.
    pub active_path: String,
    /// Number of files.
    pub file_count: usize,
    /// Dirty paths.
    pub dirty_paths: Vec<String>,
    /// Pending folder deletions.
    pub pending_deletions: Vec<String>,
    /// Dirty files or pending deletions exist.
    pub is_dirty: bool,
    /// Undo has a target.
    pub can_undo: bool,
    /// Redo has a target.
    pub can_redo: bool,
    /// Preview state.
    pub preview: PreviewState,
    /// Folder capabilities.
    pub folder: FolderStatus,
    /// Unsaved work kept from the stored workspace when its folder was linked again (see
    /// [`WorkspaceDocumentManager::resume_folder`]); cleared by the next import or reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed: Option<ResumedWork>,
    /// Persistence status.
    #[serde(flatten)]
    pub storage: StorageStatus,
}

/// Unsaved work a restart kept instead of importing the folder over it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ResumedWork {
    /// The folder's display name.
    pub folder_name: String,
    /// Unsaved paths kept (dirty files and pending deletions, at most [`MAX_DETAIL_UNSAVED_PATHS`]).
    pub unsaved_paths: Vec<String>,
    /// How many unsaved paths were kept in all.
    pub unsaved_count: usize,
}

/// The guard of an operation that replaces the whole workspace (folder open, reload, upload,
/// reset): the revision it was based on, and whether unsaved work may be discarded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportGuard {
    /// Reject the operation unless the workspace is at this revision.
    pub expected_revision: Option<u64>,
    /// Replace dirty files and pending deletions. Without it such an operation fails with
    /// `WORKSPACE_FOLDER_STATE_CONFLICT` and changes nothing.
    pub discard_changes: bool,
}

impl ImportGuard {
    /// Guarded by `expected_revision`, keeping unsaved work (the refusal names it).
    pub fn at(expected_revision: Option<u64>) -> Self {
        Self {
            expected_revision,
            discard_changes: false,
        }
    }

    /// The same guard, allowed (or not) to discard unsaved work.
    pub fn discarding(self, discard_changes: bool) -> Self {
        Self {
            discard_changes,
            ..self
        }
    }
}

/// One file in a listing (no contents).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileSummary {
    /// Normalized path.
    pub path: String,
    /// Language (assets report `text`).
    pub language: Language,
    /// `text` or `asset`.
    pub kind: &'static str,
    /// MIME type.
    pub mime_type: String,
    /// Size in bytes.
    pub size_bytes: usize,
    /// Differs from the checkpoint.
    pub dirty: bool,
}

/// One text file read with the revision to pass back as `expected_revision`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct FileRead {
    /// Normalized path.
    pub path: String,
    /// Language.
    pub language: Language,
    /// The source text.
    pub source: String,
    /// Current revision.
    pub revision: u64,
    /// Differs from the checkpoint.
    pub dirty: bool,
}

/// Options of [`WorkspaceDocumentManager::write_file`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Reject the write unless the workspace is at this revision.
    pub expected_revision: Option<u64>,
    /// Join the previous undo checkpoint when the same path was edited within the window.
    pub coalesce: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            expected_revision: None,
            coalesce: true,
        }
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

    /// Imports a folder and links it for saving. An empty or unsupported folder is rejected
    /// without touching the workspace or the current link, and so is any open over unsaved
    /// work unless the guard discards it (checked before the folder is read, and again before
    /// the replacement).
    pub async fn open_folder(
        &self,
        folder: Arc<dyn FolderAdapter>,
        guard: ImportGuard,
    ) -> WorkspaceResult<ImportOutcome> {
        let _folder_ops = self.folder_ops.lock().await;
        let captured = self.captured_revision("open", guard).await?;
        let import = folder.read().await?;
        self.replace_from_import("open", import, captured, Some(folder))
            .await
    }

    /// Links `folder` for saving *without* importing it, when the workspace's checkpoint was
    /// imported from that same folder ([`FolderAdapter::scope`]) and it holds unsaved work:
    /// a restart then keeps the edits (still dirty) instead of replacing them with the
    /// folder's content. Returns what was kept, or `None` (nothing linked) when there is
    /// nothing to resume; the caller then opens the folder as usual.
    ///
    /// The folder is read once (and the result dropped): that proves it is readable, and tells
    /// an adapter that tracks ambiguous writes that the disk was seen after the restart.
    pub async fn resume_folder(
        &self,
        folder: Arc<dyn FolderAdapter>,
    ) -> WorkspaceResult<Option<ResumedWork>> {
        let _folder_ops = self.folder_ops.lock().await;
        if !resumable(&*self.state.lock().await, folder.as_ref()) {
            return Ok(None);
        }
        folder.read().await?;
        let mut state = self.state.lock().await;
        // A reset may have run during the read (it does not take the folder lock).
        if !resumable(&state, folder.as_ref()) {
            return Ok(None);
        }
        let unsaved = unsaved_paths(&state.workspace);
        let resumed = ResumedWork {
            folder_name: folder.name().to_owned(),
            unsaved_count: unsaved.len(),
            unsaved_paths: unsaved.into_iter().take(MAX_DETAIL_UNSAVED_PATHS).collect(),
        };
        state.folder = Some(folder);
        state.resumed = Some(resumed.clone());
        Ok(Some(resumed))
    }

    /// Imports files read elsewhere (an upload list); unlinks any folder. Refused over unsaved
    /// work unless the guard discards it.
    pub async fn import_files(
        &self,
        import: FolderImport,
        guard: ImportGuard,
    ) -> WorkspaceResult<ImportOutcome> {
        let _folder_ops = self.folder_ops.lock().await;
        let captured = self.captured_revision("import", guard).await?;
        self.replace_from_import("import", import, captured, None)
            .await
    }

    /// Re-reads the linked folder and replaces the workspace; the revision captured before
    /// the read must still be current afterwards. Refused over unsaved work unless the guard
    /// discards it.
    pub async fn reload_folder(&self, guard: ImportGuard) -> WorkspaceResult<ImportOutcome> {
        let _folder_ops = self.folder_ops.lock().await;
        let captured = self.captured_revision("reload", guard).await?;
        let folder = self.linked_folder("reload").await?;
        self.require_granted(&folder, "reload").await?;
        let import = match folder.read().await {
            Ok(import) => import,
            Err(error) => return Err(self.folder_failed(&folder, error).await),
        };
        self.replace_from_import("reload", import, captured, Some(folder))
            .await
    }

    /// Unlinks the folder and keeps the workspace.
    pub async fn disconnect_folder(&self) -> FolderStatus {
        self.state.lock().await.folder = None;
        disconnected_folder()
    }

    /// Writes dirty files, then pending deletions, in path order to the linked folder. Each
    /// path is marked saved right after its write; the workspace is clean only when all
    /// succeed and no edit happened meanwhile (else `WORKSPACE_REVISION_CONFLICT`). A failure
    /// lists the completed paths so a retry can be scoped.
    pub async fn save_all(&self, expected_revision: Option<u64>) -> WorkspaceResult<SaveOutcome> {
        let _folder_ops = self.folder_ops.lock().await;
        let (folder, revision, writes, deletions) = {
            let state = self.state.lock().await;
            let ws = &state.workspace;
            check_expected(expected_revision, ws, Some("save"))?;
            let folder = state
                .folder
                .clone()
                .ok_or_else(|| WorkspaceError::folder_not_connected("save"))?;
            let dirty = ws.dirty_paths();
            let writes: Vec<Arc<WorkspaceFile>> = ws
                .shared_files()
                .iter()
                .filter(|file| dirty.contains(&file.path))
                .cloned()
                .collect();
            (
                folder,
                ws.revision(),
                sorted_by_path(writes),
                ws.pending_deletions(),
            )
        };
        self.require_granted(&folder, "save").await?;
        let mut completed = Completed::default();
        for file in writes {
            if let Err(error) = folder.write_file(&file).await {
                return Err(self.save_failed(&folder, error, &completed).await);
            }
            self.mark_saved(&file.path.clone(), Some(file), &mut completed.saved)
                .await;
        }
        for path in deletions {
            if let Err(error) = folder.remove_file(&path).await {
                return Err(self.save_failed(&folder, error, &completed).await);
            }
            self.mark_saved(&path, None, &mut completed.deleted).await;
        }
        let state = self.state.lock().await;
        let current = state.workspace.revision();
        if current != revision {
            return Err(
                WorkspaceError::revision_conflict(revision, current, Some("save"))
                    .with_detail("completedPaths", completed.paths().into()),
            );
        }
        Ok(self.save_outcome(&state, "save", completed))
    }

    /// Writes one text file to the linked folder and marks only that path saved once the write
    /// succeeded. It follows [`save_all`](Self::save_all)'s rules: the revision guard, a
    /// granted folder, the written content becomes the path's checkpoint (an edit made during
    /// the write stays dirty) and the revision does not move. An explicit save of one file
    /// writes it even when it is clean, so a file changed or removed outside is restored.
    pub async fn save_file(
        &self,
        raw_path: &str,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<SaveOutcome> {
        let path = validate_path(raw_path)?;
        let _folder_ops = self.folder_ops.lock().await;
        let (folder, file) = {
            let state = self.state.lock().await;
            let ws = &state.workspace;
            check_expected(expected_revision, ws, Some("save"))?;
            let folder = state
                .folder
                .clone()
                .ok_or_else(|| WorkspaceError::folder_not_connected("save"))?;
            (folder, text_file(ws, &path, "save")?)
        };
        self.require_granted(&folder, "save").await?;
        let mut completed = Completed::default();
        if let Err(error) = folder.write_file(&file).await {
            return Err(self.save_failed(&folder, error, &completed).await);
        }
        self.mark_saved(&path, Some(file), &mut completed.saved)
            .await;
        let state = self.state.lock().await;
        Ok(self.save_outcome(&state, "save", completed))
    }

    /// Marks `path` saved when the workspace file there holds exactly `bytes`, which a folder
    /// read-back confirmed are on disk (reconciling a save whose outcome was unknown); returns
    /// whether it did. A file edited since keeps its dirty state. The revision does not move.
    pub async fn confirm_saved(&self, path: &str, bytes: &[u8]) -> bool {
        let mut state = self.state.lock().await;
        let held = state
            .workspace
            .shared_files()
            .iter()
            .find(|file| file.path == path && file_bytes(file) == bytes)
            .cloned();
        let Some(file) = held else {
            return false;
        };
        let next = state.workspace.mark_path_saved(path, Some(file));
        self.commit(&mut state, next, Persist::Delta).await;
        true
    }

    /// The linked folder, if any (to read a file back through the same adapter saves use).
    pub async fn folder_adapter(&self) -> Option<Arc<dyn FolderAdapter>> {
        self.state.lock().await.folder.clone()
    }

    /// Marks the current state clean without writing a folder. Refused while a folder is linked.
    pub async fn save_checkpoint(
        &self,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<SaveOutcome> {
        let mut state = self.state.lock().await;
        check_expected(expected_revision, &state.workspace, Some("checkpoint"))?;
        if state.folder.is_some() {
            return Err(WorkspaceError::folder_state_conflict("checkpoint"));
        }
        let completed = Completed {
            saved: state.workspace.dirty_paths(),
            deleted: state.workspace.pending_deletions(),
        };
        let next = state.workspace.mark_all_saved();
        self.commit(&mut state, next, Persist::Delta).await;
        Ok(self.save_outcome(&state, "checkpoint", completed))
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

    fn save_outcome(
        &self,
        state: &State,
        operation: &'static str,
        completed: Completed,
    ) -> SaveOutcome {
        let ws = &state.workspace;
        SaveOutcome {
            operation,
            revision: ws.revision(),
            active_path: ws.active_path().to_owned(),
            saved_paths: completed.saved,
            deleted_paths: completed.deleted,
            clean: !ws.is_dirty(),
            storage: state.storage.clone(),
        }
    }

    /// The revision an import is based on, after its guard's revision and unsaved-work checks.
    async fn captured_revision(
        &self,
        operation: &str,
        guard: ImportGuard,
    ) -> WorkspaceResult<Captured> {
        let state = self.state.lock().await;
        check_expected(guard.expected_revision, &state.workspace, None)?;
        check_unsaved(&state.workspace, operation, guard)?;
        Ok(Captured {
            revision: state.workspace.revision(),
            discard_changes: guard.discard_changes,
        })
    }

    async fn linked_folder(&self, operation: &str) -> WorkspaceResult<Arc<dyn FolderAdapter>> {
        self.state
            .lock()
            .await
            .folder
            .clone()
            .ok_or_else(|| WorkspaceError::folder_not_connected(operation))
    }

    /// Fails unless the folder grants writes; a vanished folder is stale and gets unlinked.
    async fn require_granted(
        &self,
        folder: &Arc<dyn FolderAdapter>,
        operation: &str,
    ) -> WorkspaceResult<()> {
        match folder.permission().await {
            FolderPermission::Granted => Ok(()),
            FolderPermission::Disconnected => {
                let error = WorkspaceError::folder_stale(
                    operation,
                    folder.name(),
                    "the folder no longer exists",
                );
                Err(self.folder_failed(folder, error).await)
            }
            other => Err(WorkspaceError::folder_permission_denied(
                operation,
                other.as_str(),
            )),
        }
    }

    /// Unlinks `folder` when the error says it vanished; returns the error.
    async fn folder_failed(
        &self,
        folder: &Arc<dyn FolderAdapter>,
        error: WorkspaceError,
    ) -> WorkspaceError {
        if error.code == WorkspaceErrorCode::WorkspaceFolderStale {
            let mut state = self.state.lock().await;
            if state
                .folder
                .as_ref()
                .is_some_and(|linked| Arc::ptr_eq(linked, folder))
            {
                state.folder = None;
            }
        }
        error
    }

    async fn save_failed(
        &self,
        folder: &Arc<dyn FolderAdapter>,
        error: WorkspaceError,
        completed: &Completed,
    ) -> WorkspaceError {
        let mut error = self
            .folder_failed(folder, error)
            .await
            .with_detail("completedPaths", completed.paths().into());
        if !completed.is_empty() {
            error.message = format!(
                "{} Completed before the failure: {}.",
                error.message,
                completed.paths().join(", ")
            );
        }
        error
    }

    async fn mark_saved(
        &self,
        path: &str,
        written: Option<Arc<WorkspaceFile>>,
        into: &mut Vec<String>,
    ) {
        let mut state = self.state.lock().await;
        let next = state.workspace.mark_path_saved(path, written);
        self.commit(&mut state, next, Persist::Delta).await;
        into.push(path.to_owned());
    }

    async fn replace_from_import(
        &self,
        operation: &'static str,
        import: FolderImport,
        captured: Captured,
        link: Option<Arc<dyn FolderAdapter>>,
    ) -> WorkspaceResult<ImportOutcome> {
        if import.files.is_empty() {
            return Err(WorkspaceError::no_supported_files(
                &import.root_name,
                import.skipped.len(),
            ));
        }
        let (outcome, folder) = {
            let mut state = self.state.lock().await;
            let current = state.workspace.revision();
            if current != captured.revision {
                return Err(WorkspaceError::revision_conflict(
                    captured.revision,
                    current,
                    Some(operation),
                ));
            }
            // Marks (saves) never move the revision, so the dirty state is checked again.
            check_unsaved(
                &state.workspace,
                operation,
                ImportGuard::default().discarding(captured.discard_changes),
            )?;
            let next = state.workspace.replaced_by(import.files)?;
            state.history.clear();
            state.folder_scope = link.as_ref().map(|folder| folder.scope());
            state.folder = link;
            state.resumed = None;
            self.commit(&mut state, next, Persist::Replace).await;
            let ws = &state.workspace;
            let skipped_count = import.skipped.len();
            let mut skipped = import.skipped;
            skipped.truncate(MAX_LISTED_SKIPS);
            let outcome = ImportOutcome {
                operation,
                revision: ws.revision(),
                active_path: ws.active_path().to_owned(),
                file_count: ws.files().len(),
                skipped,
                skipped_count,
                skipped_by_reason: import.skip_counts,
                folder: disconnected_folder(),
                preview: self.acks.current(),
                storage: state.storage.clone(),
            };
            (outcome, state.folder.clone())
        };
        let mut outcome = outcome;
        outcome.folder = folder_status(folder.as_deref()).await;
        outcome.preview = self
            .acks
            .wait_for_committed(outcome.revision, self.ack_timeout)
            .await?;
        Ok(outcome)
    }
}

/// What an import captured before its I/O: the revision it must still find, and whether it
/// may discard unsaved work.
#[derive(Debug, Clone, Copy)]
struct Captured {
    revision: u64,
    discard_changes: bool,
}

#[derive(Debug, Default)]
struct Completed {
    saved: Vec<String>,
    deleted: Vec<String>,
}

impl Completed {
    fn paths(&self) -> Vec<String> {
        self.saved.iter().chain(&self.deleted).cloned().collect()
    }

    fn is_empty(&self) -> bool {
        self.saved.is_empty() && self.deleted.is_empty()
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

/// Whether the workspace holds unsaved work whose checkpoint came from `folder`.
fn resumable(state: &State, folder: &dyn FolderAdapter) -> bool {
    state.folder_scope.as_deref() == Some(folder.scope().as_str())
        && !unsaved_paths(&state.workspace).is_empty()
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

/// The text file at `path` (an asset is a type conflict).
fn text_file(
    workspace: &Workspace,
    path: &str,
    operation: &str,
) -> WorkspaceResult<Arc<WorkspaceFile>> {
    let file = workspace
        .shared_files()
        .iter()
        .find(|file| file.path == path)
        .ok_or_else(|| WorkspaceError::file_not_found(path, operation))?;
    if file.is_asset() {
        return Err(WorkspaceError::file_type_conflict(
            path, operation, "asset", "text",
        ));
    }
    Ok(Arc::clone(file))
}

/// The bytes a folder write of `file` puts on disk.
fn file_bytes(file: &WorkspaceFile) -> &[u8] {
    match &file.content {
        FileContent::Text { source } => source.as_bytes(),
        FileContent::Asset { bytes, .. } => bytes,
    }
}

fn sorted_by_path(mut files: Vec<Arc<WorkspaceFile>>) -> Vec<Arc<WorkspaceFile>> {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

fn disconnected_folder() -> FolderStatus {
    FolderStatus {
        connected: false,
        name: None,
        permission: FolderPermission::Disconnected,
        save_all_available: false,
        reload_available: false,
    }
}

async fn folder_status(folder: Option<&dyn FolderAdapter>) -> FolderStatus {
    let Some(folder) = folder else {
        return disconnected_folder();
    };
    let permission = folder.permission().await;
    let granted = permission == FolderPermission::Granted;
    FolderStatus {
        connected: true,
        name: Some(folder.name().to_owned()),
        permission,
        save_all_available: granted,
        reload_available: granted,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex as StdMutex;

    use async_trait::async_trait;

    use super::*;
    use crate::workspace::bridge::HeadlessPreviewBridge;
    use crate::workspace::repository::MemoryWorkspaceRepository;

    /// A folder in memory that records writes and refuses the paths in `fail`.
    #[derive(Default)]
    struct MemoryFolder {
        written: StdMutex<Vec<String>>,
        fail: StdMutex<Vec<String>>,
    }

    impl MemoryFolder {
        fn written(&self) -> Vec<String> {
            self.written.lock().unwrap().clone()
        }
    }

    #[async_trait]
    impl FolderAdapter for MemoryFolder {
        fn name(&self) -> &str {
            "memory"
        }

        async fn permission(&self) -> FolderPermission {
            FolderPermission::Granted
        }

        async fn read(&self) -> WorkspaceResult<FolderImport> {
            Ok(FolderImport {
                root_name: "memory".to_owned(),
                files: vec![
                    WorkspaceFile::text("index.html", "<p>one</p>"),
                    WorkspaceFile::text("app.js", "let a = 1;"),
                    WorkspaceFile::asset("logo.png", vec![1, 2, 3]),
                ],
                ..FolderImport::default()
            })
        }

        async fn write_file(&self, file: &WorkspaceFile) -> WorkspaceResult<()> {
            if self.fail.lock().unwrap().contains(&file.path) {
                return Err(WorkspaceError::folder_io_failed(
                    "write", &file.path, "injected",
                ));
            }
            self.written.lock().unwrap().push(file.path.clone());
            Ok(())
        }

        async fn remove_file(&self, _path: &str) -> WorkspaceResult<()> {
            Ok(())
        }
    }

    async fn linked() -> (WorkspaceDocumentManager, Arc<MemoryFolder>) {
        let manager = WorkspaceDocumentManager::open(
            vec![WorkspaceFile::text("index.html", "<p>seed</p>")],
            Arc::new(MemoryWorkspaceRepository::new()),
            Arc::new(HeadlessPreviewBridge::accept_all()),
            ManagerOptions::default(),
        )
        .await
        .unwrap();
        let folder = Arc::new(MemoryFolder::default());
        let adapter: Arc<dyn FolderAdapter> = folder.clone();
        manager
            .open_folder(adapter, ImportGuard::default())
            .await
            .unwrap();
        (manager, folder)
    }

    async fn edit(manager: &WorkspaceDocumentManager, path: &str, source: &str) {
        manager
            .write_file(path, source, WriteOptions::default())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn save_file_writes_one_path_and_marks_only_it_clean() {
        let (manager, folder) = linked().await;
        edit(&manager, "index.html", "<p>two</p>").await;
        edit(&manager, "app.js", "let a = 2;").await;
        let revision = manager.revision().await;
        let saved = manager.save_file("./app.js", Some(revision)).await.unwrap();
        assert_eq!(saved.operation, "save");
        assert_eq!(saved.saved_paths, ["app.js"]);
        assert_eq!(
            saved.revision, revision,
            "saving does not move the revision"
        );
        assert!(!saved.clean);
        assert_eq!(folder.written(), ["app.js"]);
        assert_eq!(manager.status().await.dirty_paths, ["index.html"]);
    }

    #[tokio::test]
    async fn save_file_writes_a_clean_file_again() {
        let (manager, folder) = linked().await;
        let saved = manager.save_file("index.html", None).await.unwrap();
        assert_eq!(saved.saved_paths, ["index.html"]);
        assert!(saved.clean);
        assert_eq!(folder.written(), ["index.html"]);
    }

    #[tokio::test]
    async fn save_file_refuses_before_writing() {
        let (manager, folder) = linked().await;
        edit(&manager, "index.html", "<p>two</p>").await;
        let revision = manager.revision().await;
        let stale = manager.save_file("index.html", Some(revision - 1)).await;
        assert_eq!(
            stale.unwrap_err().code,
            WorkspaceErrorCode::WorkspaceRevisionConflict
        );
        let asset = manager.save_file("logo.png", None).await.unwrap_err();
        assert_eq!(asset.code, WorkspaceErrorCode::WorkspaceFileTypeConflict);
        let missing = manager.save_file("gone.css", None).await.unwrap_err();
        assert_eq!(missing.code, WorkspaceErrorCode::WorkspaceFileNotFound);
        let invalid = manager.save_file("../x.css", None).await.unwrap_err();
        assert_eq!(invalid.code, WorkspaceErrorCode::WorkspacePathInvalid);
        assert!(folder.written().is_empty());
        manager.disconnect_folder().await;
        let unlinked = manager.save_file("index.html", None).await.unwrap_err();
        assert_eq!(
            unlinked.code,
            WorkspaceErrorCode::WorkspaceFolderNotConnected
        );
        assert_eq!(manager.status().await.dirty_paths, ["index.html"]);
    }

    #[tokio::test]
    async fn a_failed_save_file_keeps_the_path_dirty() {
        let (manager, folder) = linked().await;
        edit(&manager, "app.js", "let a = 3;").await;
        folder.fail.lock().unwrap().push("app.js".to_owned());
        let error = manager.save_file("app.js", None).await.unwrap_err();
        assert_eq!(error.code, WorkspaceErrorCode::WorkspaceSideEffectUnknown);
        assert_eq!(error.details["completedPaths"], serde_json::json!([]));
        assert_eq!(manager.status().await.dirty_paths, ["app.js"]);
    }

    #[tokio::test]
    async fn confirm_saved_marks_clean_only_the_bytes_the_workspace_holds() {
        let (manager, _folder) = linked().await;
        edit(&manager, "app.js", "let a = 4;").await;
        let revision = manager.revision().await;
        assert!(!manager.confirm_saved("app.js", b"let a = 1;").await);
        assert!(!manager.confirm_saved("other.js", b"let a = 4;").await);
        assert_eq!(manager.status().await.dirty_paths, ["app.js"]);
        assert!(manager.confirm_saved("app.js", b"let a = 4;").await);
        let status = manager.status().await;
        assert!(status.dirty_paths.is_empty());
        assert_eq!(status.revision, revision);
    }

    #[tokio::test]
    async fn folder_adapter_is_the_linked_folder() {
        let (manager, _folder) = linked().await;
        let adapter = manager.folder_adapter().await.expect("linked");
        assert_eq!(adapter.scope(), "memory");
        let bytes = adapter.read_file("app.js", 100).await.unwrap();
        assert_eq!(bytes, b"let a = 1;");
        let cut = adapter.read_file("app.js", 3).await.unwrap();
        assert_eq!(cut, b"let");
        let missing = adapter.read_file("nope.js", 10).await.unwrap_err();
        assert_eq!(missing.code, WorkspaceErrorCode::WorkspaceFileNotFound);
        manager.disconnect_folder().await;
        assert!(manager.folder_adapter().await.is_none());
    }
}
