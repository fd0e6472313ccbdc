//! The workspace model, history, manager, repository port and folder adapter.
//!
//! Layering: [`model`] is pure state transitions; [`history`] keeps bounded undo/redo; the
//! [`WorkspaceDocumentManager`] owns I/O ordering through the [`repository`], [`bridge`] and
//! [`folder`] ports ([`os_folder`] is the filesystem implementation).

pub mod bridge;
pub mod error;
pub mod folder;
pub mod history;
pub mod manager;
pub mod model;
pub mod os_folder;
pub mod repository;
mod runtime_report;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use bridge::{
    DEFAULT_PREVIEW_ACK_TIMEOUT, HeadlessPreviewBridge, ManualPreviewBridge, PreviewAcks,
    PreviewBridge, PreviewCompiler, PreviewSnapshot, PreviewState, PreviewStatus,
};
pub use error::{
    MAX_DETAIL_UNSAVED_PATHS, MAX_REPORTED_RUNTIME_ERRORS, WorkspaceError, WorkspaceErrorCode,
    WorkspaceResult,
};
pub use folder::{
    FolderAdapter, FolderImport, FolderPermission, ImportBuilder, MAX_ASSET_FILE_BYTES,
    MAX_IMPORT_FILES, MAX_IMPORT_TOTAL_BYTES, MAX_LISTED_SKIPS, MAX_SCANNED_ENTRIES,
    MAX_TEXT_FILE_BYTES, SkipReason,
};
pub use history::{COALESCE_WINDOW, Clock, History, MAX_HISTORY_ENTRIES, ManualClock, SystemClock};
pub use manager::{
    FileRead, FileSummary, FolderStatus, ImportGuard, ImportOutcome, MAX_STORAGE_ERROR_CHARS,
    ManagerOptions, MutationOutcome, ResumedWork, SaveOutcome, StorageStatus,
    WorkspaceDocumentManager, WorkspaceStatus, WriteOptions,
};
pub use model::{
    MAX_PATCH_REPLACEMENT_CHARS, MAX_PATCH_SEARCH_CHARS, MAX_PATH_CHARS, MAX_TEXT_SOURCE_CHARS,
    Occurrence, Operation, StoredWorkspace, Workspace, WorkspaceContent,
};
pub use os_folder::{FolderFs, OsFolder, OsFs};
pub use repository::{
    MemoryWorkspaceRepository, RepositoryError, WorkspaceDelta, WorkspaceRepository,
};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteWorkspaceRepository;
