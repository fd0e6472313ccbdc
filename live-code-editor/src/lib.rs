//! Live web-coding engine: a revisioned workspace model, its document manager and folder adapter,
//! and a preview compiler that turns a multi-file HTML/CSS/JS workspace into one document.
//!
//! The crate is framework-neutral: it knows nothing about tool registries. Hosts wire its
//! operations to tools (see the studio in `examples/`).

pub mod file;
pub mod path;
pub mod preview;
pub mod workspace;

pub use file::{FileContent, Language, WorkspaceFile};
pub use path::{PathError, normalize_workspace_path};
pub use preview::{
    CompiledPreview, PreviewDiagnostic, PreviewOptions, PreviewTarget, compile_preview,
    export_standalone_html,
};
pub use workspace::{
    OsFolder, Workspace, WorkspaceDocumentManager, WorkspaceError, WorkspaceErrorCode,
};
