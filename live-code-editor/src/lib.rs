#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod diff;
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
