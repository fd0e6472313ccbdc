//! Reading a record's files back through the folder adapter and comparing them with its
//! manifest: the only evidence a save record is ever completed on after the fact.

use live_code_editor::workspace::folder::FolderAdapter;
use live_code_editor::workspace::manager::WorkspaceDocumentManager;
use live_code_editor::workspace::{WorkspaceError, WorkspaceErrorCode};
use serde_json::{Value, json};
use tool_protocol::ToolCallError;

use super::codes::{
    EDITOR_SAVE_FILE_MISMATCH, EDITOR_SAVE_FILE_MISSING, EDITOR_SAVE_FILE_UNREADABLE,
};
use super::manifest::{Manifest, ManifestEntry};

/// What the folder holds for one manifest entry.
#[derive(Debug)]
pub(crate) enum Check {
    /// Exactly the manifest's bytes (kept to mark the workspace path clean).
    Matches(Vec<u8>),
    /// No such file.
    Missing,
    /// Other bytes: their length (up to one more than expected) and digest.
    Different(ManifestEntry),
    /// The read failed.
    Unreadable(WorkspaceError),
}

/// One entry and what the folder holds for it.
#[derive(Debug)]
pub(crate) struct FileCheck {
    /// The manifest entry.
    pub entry: ManifestEntry,
    /// The comparison.
    pub check: Check,
}

impl FileCheck {
    /// Whether the folder holds the entry's bytes.
    pub(crate) fn matches(&self) -> bool {
        matches!(self.check, Check::Matches(_))
    }

    /// `matches`, `missing`, `different` or `unreadable`.
    fn state(&self) -> &'static str {
        match self.check {
            Check::Matches(_) => "matches",
            Check::Missing => "missing",
            Check::Different(_) => "different",
            Check::Unreadable(_) => "unreadable",
        }
    }

    /// The bounded JSON view (no contents): path, expected and actual digest/length, state.
    pub(crate) fn to_value(&self) -> Value {
        let mut view = json!({
            "path": self.entry.path,
            "state": self.state(),
            "expected": {"sha256": self.entry.sha256, "length": self.entry.length},
        });
        match &self.check {
            Check::Different(actual) => {
                view["actual"] = json!({"sha256": actual.sha256, "length": actual.length});
            }
            Check::Unreadable(error) => view["cause"] = json!(error.code.as_str()),
            Check::Matches(_) | Check::Missing => {}
        }
        view
    }
}

/// Reads every manifest file back (at most one byte more than expected each) and compares.
pub(crate) async fn read_back(folder: &dyn FolderAdapter, manifest: &Manifest) -> Vec<FileCheck> {
    let mut checks = Vec::with_capacity(manifest.entries().len());
    for entry in manifest.entries() {
        let limit = entry.length.saturating_add(1);
        let check = match folder.read_file(&entry.path, limit).await {
            Ok(bytes) if entry.matches(&bytes) => Check::Matches(bytes),
            Ok(bytes) => Check::Different(ManifestEntry::of(&entry.path, &bytes)),
            Err(error) if error.code == WorkspaceErrorCode::WorkspaceFileNotFound => Check::Missing,
            Err(error) => Check::Unreadable(error),
        };
        checks.push(FileCheck {
            entry: entry.clone(),
            check,
        });
    }
    checks
}

/// Whether every file matched.
pub(crate) fn all_match(checks: &[FileCheck]) -> bool {
    checks.iter().all(FileCheck::matches)
}

/// The coded error of the first file that does not match, naming its path and listing every
/// check; `None` when all match.
pub(crate) fn mismatch_error(checks: &[FileCheck], operation_key: &str) -> Option<ToolCallError> {
    let first = checks.iter().find(|check| !check.matches())?;
    let path = &first.entry.path;
    let (code, message) = match &first.check {
        Check::Missing => (
            EDITOR_SAVE_FILE_MISSING,
            format!("The folder has no file at {path}; the save stays unknown."),
        ),
        Check::Different(_) => (
            EDITOR_SAVE_FILE_MISMATCH,
            format!("The folder holds different bytes at {path}; the save stays unknown."),
        ),
        Check::Unreadable(error) => (
            EDITOR_SAVE_FILE_UNREADABLE,
            format!(
                "{path} could not be read back ({}); the save stays unknown.",
                error.code
            ),
        ),
        Check::Matches(_) => return None,
    };
    Some(ToolCallError {
        code: code.to_owned(),
        message,
        retryable: Some(false),
        details: Some(json!({
            "operationKey": operation_key,
            "state": "unknown",
            "path": path,
            "files": checks.iter().map(FileCheck::to_value).collect::<Vec<_>>(),
        })),
    })
}

/// Marks clean every matching path whose workspace file still holds the confirmed bytes;
/// returns those paths.
pub(crate) async fn confirm_matches(
    manager: &WorkspaceDocumentManager,
    checks: &[FileCheck],
) -> Vec<String> {
    let mut cleaned = Vec::new();
    for check in checks {
        if let Check::Matches(bytes) = &check.check
            && manager.confirm_saved(&check.entry.path, bytes).await
        {
            cleaned.push(check.entry.path.clone());
        }
    }
    cleaned
}
