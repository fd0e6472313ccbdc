//! What the manager reports: storage, folder and workspace status, mutation, import and save
//! outcomes, and the small option types its calls take.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::file::Language;
use crate::workspace::bridge::PreviewState;
use crate::workspace::folder::{FolderAdapter, FolderPermission};

/// Where the workspace is persisted, carried by every result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct StorageStatus {
    /// `"loading"`, the repository's mode (`"sqlite"`, ...) or `"memory"` after a failure.
    pub storage_mode: String,
    /// Why storage fell back to memory (at most [`MAX_STORAGE_ERROR_CHARS`](super::MAX_STORAGE_ERROR_CHARS)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_error: Option<String>,
}

/// Linked-folder capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
pub struct ImportOutcome {
    /// `open`, `import`, `reload` or `reset`.
    pub operation: &'static str,
    /// Revision after the import.
    pub revision: u64,
    /// Active path chosen for the new file set.
    pub active_path: String,
    /// Imported file count.
    pub file_count: usize,
    /// Skipped entries and reached limits (at most [`MAX_LISTED_SKIPS`](crate::workspace::folder::MAX_LISTED_SKIPS) lines).
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
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// [`WorkspaceDocumentManager::resume_folder`](super::WorkspaceDocumentManager::resume_folder)); cleared by the next import or reset.
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
#[non_exhaustive]
pub struct ResumedWork {
    /// The folder's display name.
    pub folder_name: String,
    /// Unsaved paths kept (dirty files and pending deletions, at most [`MAX_DETAIL_UNSAVED_PATHS`](crate::workspace::error::MAX_DETAIL_UNSAVED_PATHS)).
    pub unsaved_paths: Vec<String>,
    /// How many unsaved paths were kept in all.
    pub unsaved_count: usize,
}

/// The guard of an operation that replaces the whole workspace (folder open, reload, upload,
/// reset): the revision it was based on, and whether unsaved work may be discarded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
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
    #[must_use]
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
#[non_exhaustive]
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
#[non_exhaustive]
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

/// Options of [`WorkspaceDocumentManager::write_file`](super::WorkspaceDocumentManager::write_file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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

impl WriteOptions {
    /// Rejects the write unless the workspace is at `expected_revision` (`None`: any revision).
    #[must_use]
    pub fn with_expected_revision(mut self, expected_revision: impl Into<Option<u64>>) -> Self {
        self.expected_revision = expected_revision.into();
        self
    }

    /// Joins (or not) the previous undo checkpoint when the same path was edited within the
    /// window (default `true`).
    #[must_use]
    pub fn with_coalesce(mut self, coalesce: bool) -> Self {
        self.coalesce = coalesce;
        self
    }
}

pub(super) fn disconnected_folder() -> FolderStatus {
    FolderStatus {
        connected: false,
        name: None,
        permission: FolderPermission::Disconnected,
        save_all_available: false,
        reload_available: false,
    }
}

pub(super) async fn folder_status(folder: Option<&dyn FolderAdapter>) -> FolderStatus {
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
