//! The workspace model, history, manager, repository port and folder adapter.
//!
//! Layering: [`model`] is pure state transitions; [`history`] keeps bounded undo/redo; the
//! [`WorkspaceDocumentManager`](manager::WorkspaceDocumentManager) owns I/O ordering through the
//! [`repository`], [`bridge`] and [`folder`] ports.

pub mod error;
pub mod history;
pub mod model;

pub use error::{WorkspaceError, WorkspaceErrorCode, WorkspaceResult};
pub use history::{COALESCE_WINDOW, Clock, History, MAX_HISTORY_ENTRIES, ManualClock, SystemClock};
pub use model::{
    MAX_PATCH_REPLACEMENT_CHARS, MAX_PATCH_SEARCH_CHARS, MAX_PATH_CHARS, MAX_TEXT_SOURCE_CHARS,
    Occurrence, Operation, StoredWorkspace, Workspace, WorkspaceContent,
};
