//! Coded workspace and preview errors (CONTRACT 2.2), mapped to codes in this one place.
//!
//! Details name the operation and paths involved and never carry file contents or patch text.

use serde::Serialize;
use serde_json::{Value, json};

use super::runtime_report::RuntimeErrorReport;
use crate::path::PathError;

/// Most unsaved paths a [`WorkspaceError::unsaved_changes`] refusal lists in its details.
pub const MAX_DETAIL_UNSAVED_PATHS: usize = 64;

/// Every `WORKSPACE_*` / `PREVIEW_*` code the engine emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WorkspaceErrorCode {
    /// `expected_revision` differs from the current revision, or it moved during a save.
    WorkspaceRevisionConflict,
    /// A text source exceeds [`MAX_TEXT_SOURCE_CHARS`](crate::workspace::MAX_TEXT_SOURCE_CHARS).
    WorkspaceSourceLimit,
    /// A folder import found no supported file.
    WorkspaceNoSupportedFiles,
    /// The operation would remove the only file.
    WorkspaceEmpty,
    /// No active path could be selected after the operation.
    WorkspaceActiveFileNotFound,
    /// The operation would remove or rename away the last HTML entry.
    WorkspacePreviewEntryRequired,
    /// Reset or browser-only checkpoint while a writable folder is linked.
    WorkspaceFolderStateConflict,
    /// The linked folder vanished.
    WorkspaceFolderStale,
    /// A folder operation ran without a linked folder.
    WorkspaceFolderNotConnected,
    /// The path to open does not exist or is not a folder (not in the reference, whose
    /// browser picker only returns existing folders).
    WorkspaceFolderNotFound,
    /// The folder's permission is not `granted`.
    WorkspaceFolderPermissionDenied,
    /// A folder write ended with an ambiguous outcome.
    WorkspaceSideEffectUnknown,
    /// The durable state store cannot be opened.
    WorkspaceDurableStateUnavailable,
    /// A path failed normalization or its length bound.
    WorkspacePathInvalid,
    /// No file at the path.
    WorkspaceFileNotFound,
    /// The target path is taken, or a rename keeps the same path.
    WorkspaceFileConflict,
    /// Text operation on an asset, or a rename across the text/asset class.
    WorkspaceFileTypeConflict,
    /// The patch search text was not found.
    WorkspacePatchNotFound,
    /// Nothing to undo or redo.
    WorkspaceHistoryEmpty,
    /// An argument is outside its documented bounds (patch search/replacement length).
    /// Not in the reference catalog, where tool schemas reject these before the handler runs.
    WorkspaceInputInvalid,
    /// The preview reported a runtime error for the revision.
    PreviewRuntimeError,
    /// The preview did not acknowledge the revision in time.
    PreviewAckTimeout,
    /// The preview moved past the awaited revision.
    PreviewRevisionSuperseded,
    /// A visual tool's target is missing from the workspace.
    PreviewTargetNotFound,
}

impl WorkspaceErrorCode {
    /// The stable code string, e.g. `WORKSPACE_REVISION_CONFLICT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WorkspaceRevisionConflict => "WORKSPACE_REVISION_CONFLICT",
            Self::WorkspaceSourceLimit => "WORKSPACE_SOURCE_LIMIT",
            Self::WorkspaceNoSupportedFiles => "WORKSPACE_NO_SUPPORTED_FILES",
            Self::WorkspaceEmpty => "WORKSPACE_EMPTY",
            Self::WorkspaceActiveFileNotFound => "WORKSPACE_ACTIVE_FILE_NOT_FOUND",
            Self::WorkspacePreviewEntryRequired => "WORKSPACE_PREVIEW_ENTRY_REQUIRED",
            Self::WorkspaceFolderStateConflict => "WORKSPACE_FOLDER_STATE_CONFLICT",
            Self::WorkspaceFolderStale => "WORKSPACE_FOLDER_STALE",
            Self::WorkspaceFolderNotConnected => "WORKSPACE_FOLDER_NOT_CONNECTED",
            Self::WorkspaceFolderNotFound => "WORKSPACE_FOLDER_NOT_FOUND",
            Self::WorkspaceFolderPermissionDenied => "WORKSPACE_FOLDER_PERMISSION_DENIED",
            Self::WorkspaceSideEffectUnknown => "WORKSPACE_SIDE_EFFECT_UNKNOWN",
            Self::WorkspaceDurableStateUnavailable => "WORKSPACE_DURABLE_STATE_UNAVAILABLE",
            Self::WorkspacePathInvalid => "WORKSPACE_PATH_INVALID",
            Self::WorkspaceFileNotFound => "WORKSPACE_FILE_NOT_FOUND",
            Self::WorkspaceFileConflict => "WORKSPACE_FILE_CONFLICT",
            Self::WorkspaceFileTypeConflict => "WORKSPACE_FILE_TYPE_CONFLICT",
            Self::WorkspacePatchNotFound => "WORKSPACE_PATCH_NOT_FOUND",
            Self::WorkspaceHistoryEmpty => "WORKSPACE_HISTORY_EMPTY",
            Self::WorkspaceInputInvalid => "WORKSPACE_INPUT_INVALID",
            Self::PreviewRuntimeError => "PREVIEW_RUNTIME_ERROR",
            Self::PreviewAckTimeout => "PREVIEW_ACK_TIMEOUT",
            Self::PreviewRevisionSuperseded => "PREVIEW_REVISION_SUPERSEDED",
            Self::PreviewTargetNotFound => "PREVIEW_TARGET_NOT_FOUND",
        }
    }

    /// Whether retrying (after re-reading or reconnecting) can succeed.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Self::WorkspaceRevisionConflict
                | Self::WorkspaceFolderStale
                | Self::WorkspaceFolderNotConnected
                | Self::WorkspaceFolderPermissionDenied
                | Self::PreviewAckTimeout
                | Self::PreviewRevisionSuperseded
        )
    }
}

impl std::fmt::Display for WorkspaceErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A coded workspace failure: `{code, message, retryable, details}`.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct WorkspaceError {
    /// The stable code.
    pub code: WorkspaceErrorCode,
    /// Human-readable explanation (never file contents).
    pub message: String,
    /// Whether a retry can succeed; always `code.retryable()`.
    pub retryable: bool,
    /// Structured context: operation, paths, revisions, limits.
    pub details: Value,
}

/// Result alias for workspace operations.
pub type WorkspaceResult<T> = Result<T, WorkspaceError>;

/// Most runtime errors a `PREVIEW_RUNTIME_ERROR` lists in its details.
pub const MAX_REPORTED_RUNTIME_ERRORS: usize = 5;

impl WorkspaceError {
    /// An error whose `retryable` flag follows its code.
    pub fn new(code: WorkspaceErrorCode, message: impl Into<String>, details: Value) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: code.retryable(),
            details,
        }
    }

    /// The expected revision is not the current one.
    pub fn revision_conflict(expected: u64, current: u64, operation: Option<&str>) -> Self {
        let mut details = json!({ "expectedRevision": expected, "currentRevision": current });
        if let Some(operation) = operation {
            details["operation"] = json!(operation);
        }
        Self::new(
            WorkspaceErrorCode::WorkspaceRevisionConflict,
            format!(
                "Workspace revision mismatch: expected {expected}, current {current}. \
                 Re-read the workspace before applying the mutation."
            ),
            details,
        )
    }

    /// A text exceeds its character limit; `label` names the text ("Source of app.js").
    pub fn source_limit(label: &str, limit: usize) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceSourceLimit,
            format!(
                "{label} exceeds the {} character limit.",
                group_thousands(limit)
            ),
            json!({ "limit": limit }),
        )
    }

    /// A raw path failed normalization.
    pub fn path_invalid(raw: &str, reason: PathError) -> Self {
        Self::path_invalid_reason(raw, reason.reason(), &reason.to_string())
    }

    /// A raw path is invalid for a reason the normalizer does not cover (e.g. `too-long`).
    pub fn path_invalid_reason(raw: &str, reason: &str, explanation: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspacePathInvalid,
            format!("Invalid workspace path: {explanation}."),
            json!({ "path": bounded_path(raw), "reason": reason }),
        )
    }

    /// No file at `path`.
    pub fn file_not_found(path: &str, operation: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFileNotFound,
            format!("Workspace file not found: {path}"),
            json!({ "path": path, "operation": operation }),
        )
    }

    /// `path` already exists.
    pub fn file_exists(path: &str, operation: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFileConflict,
            format!("A workspace file already exists at {path}."),
            json!({ "path": path, "operation": operation }),
        )
    }

    /// A new file at `path` differs from `existing` only in case: one file on case-insensitive
    /// disks (Windows, macOS), so a save would write one over the other.
    pub fn case_clash(path: &str, existing: &str, operation: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFileConflict,
            format!(
                "{path} differs from the existing {existing} only in case: on Windows and macOS they are one file. Choose another name, or rename {existing}."
            ),
            json!({ "path": path, "existing": existing, "operation": operation, "reason": "case" }),
        )
    }

    /// A new file at `path` would clash with `existing`: one of them would have to be a
    /// folder of the other's name.
    pub fn folder_clash(path: &str, existing: &str, operation: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFileConflict,
            format!(
                "{path} cannot be a file while {existing} exists: a folder cannot also be a file."
            ),
            json!({ "path": path, "conflictingPath": existing, "operation": operation }),
        )
    }

    /// A rename names the same path or an existing one.
    pub fn rename_conflict(from: &str, to: &str, same_path: bool) -> Self {
        let message = if same_path {
            "The new workspace path must be different.".to_owned()
        } else {
            format!("A workspace file already exists at {to}.")
        };
        Self::new(
            WorkspaceErrorCode::WorkspaceFileConflict,
            message,
            json!({ "fromPath": from, "toPath": to, "operation": "rename" }),
        )
    }

    /// A text operation met an asset, or a path's extension class does not fit.
    pub fn file_type_conflict(path: &str, operation: &str, actual: &str, expected: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFileTypeConflict,
            format!("{operation} expects a {expected} file, but {path} is a {actual} file."),
            json!({ "path": path, "operation": operation, "actualKind": actual, "expectedKind": expected }),
        )
    }

    /// A patch search missed. Reports only path, mode and search length.
    pub fn patch_not_found(path: &str, occurrence: &str, search_length: usize) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspacePatchNotFound,
            format!(
                "Patch search text was not found in {path} using {occurrence} occurrence mode. \
                 Re-read the file before retrying the patch."
            ),
            json!({ "path": path, "occurrence": occurrence, "searchLength": search_length }),
        )
    }

    /// A bounded argument is out of range.
    pub fn input_invalid(
        operation: &str,
        field: &str,
        min: usize,
        max: usize,
        length: usize,
    ) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceInputInvalid,
            format!(
                "{field} must be {min} to {} characters long (got {length}).",
                group_thousands(max)
            ),
            json!({ "operation": operation, "field": field, "min": min, "max": max, "length": length }),
        )
    }

    /// Deleting the only file.
    pub fn workspace_empty(path: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceEmpty,
            format!("Cannot remove {path}: a workspace must keep at least one file."),
            json!({ "operation": "delete", "path": path }),
        )
    }

    /// Removing or renaming away the last HTML entry.
    pub fn preview_entry_required(path: &str, operation: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspacePreviewEntryRequired,
            format!("Cannot {operation} {path}: the preview needs at least one HTML entry file."),
            json!({ "operation": operation, "path": path }),
        )
    }

    /// No active path remains.
    pub fn active_file_not_found(path: &str, operation: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceActiveFileNotFound,
            format!("No active file remains after {operation} of {path}."),
            json!({ "operation": operation, "path": path }),
        )
    }

    /// Reset or browser-only checkpoint while a writable folder is linked.
    pub fn folder_state_conflict(operation: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFolderStateConflict,
            format!(
                "Cannot {operation} while a writable folder is linked; save to or disconnect the folder first."
            ),
            json!({ "operation": operation, "folderLinked": true }),
        )
    }

    /// `operation` would replace unsaved work (dirty files or pending deletions) and the caller
    /// did not pass an explicit discard. `unsaved` lists them; details carry at most
    /// [`MAX_DETAIL_UNSAVED_PATHS`] of them and the full count.
    pub fn unsaved_changes(operation: &str, unsaved: &[String]) -> Self {
        let listed: Vec<&str> = unsaved
            .iter()
            .take(MAX_DETAIL_UNSAVED_PATHS)
            .map(String::as_str)
            .collect();
        let shown = listed
            .iter()
            .take(3)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        let more = unsaved.len().saturating_sub(3);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        Self::new(
            WorkspaceErrorCode::WorkspaceFolderStateConflict,
            format!(
                "Cannot {operation}: it would discard {} unsaved change(s) ({shown}{more}). Save them first, or repeat with discardChanges: true to replace them.",
                unsaved.len()
            ),
            json!({
                "operation": operation,
                "unsavedChanges": true,
                "dirtyPaths": listed,
                "dirtyCount": unsaved.len(),
            }),
        )
    }

    /// Nothing to undo or redo.
    pub fn history_empty(direction: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceHistoryEmpty,
            format!("There is nothing to {direction}."),
            json!({ "direction": direction }),
        )
    }

    /// A folder import found nothing supported.
    pub fn no_supported_files(root_name: &str, skipped_count: usize) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceNoSupportedFiles,
            "No supported HTML, CSS, JS, text, or preview asset files were found.",
            json!({ "operation": "import", "rootName": root_name, "skippedCount": skipped_count }),
        )
    }

    /// The linked folder vanished during `operation`.
    pub fn folder_stale(operation: &str, folder_name: &str, cause: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFolderStale,
            "The connected folder is no longer available. Open the folder again to continue saving.",
            json!({ "operation": operation, "folderName": folder_name, "cause": bounded_text(cause) }),
        )
    }

    /// A folder operation without a linked folder.
    pub fn folder_not_connected(operation: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFolderNotConnected,
            "No writable folder is connected. Open a folder first.",
            json!({ "operation": operation, "permission": "disconnected" }),
        )
    }

    /// The path given to open a folder does not exist or is not a directory.
    pub fn folder_not_found(path: &str, reason: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFolderNotFound,
            format!("Cannot open {}: {reason}.", bounded_text(path)),
            json!({ "operation": "open", "path": bounded_text(path), "reason": reason }),
        )
    }

    /// The folder's permission is not `granted`.
    pub fn folder_permission_denied(operation: &str, permission: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceFolderPermissionDenied,
            format!("The connected folder does not allow {operation} (permission: {permission})."),
            json!({ "operation": operation, "permission": permission }),
        )
    }

    /// A folder write or delete failed for another reason (disk full, I/O error): the
    /// folder may differ from the workspace for `path` until it is reloaded.
    pub fn folder_io_failed(operation: &str, path: &str, cause: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceSideEffectUnknown,
            format!(
                "The folder {operation} of {path} failed; reload the folder to check its state."
            ),
            json!({ "operation": operation, "path": path, "cause": bounded_text(cause) }),
        )
    }

    /// The preview reported an error for `revision`.
    pub fn preview_runtime_error(revision: u64) -> Self {
        Self::new(
            WorkspaceErrorCode::PreviewRuntimeError,
            format!("Preview revision {revision} reported a runtime error."),
            json!({ "revision": revision }),
        )
    }

    /// [`Self::preview_runtime_error`] with what the preview reported: its first failure
    /// (`details.message`, naming the file position when a module's stack had one) and the
    /// revision's runtime errors so far (`details.runtimeErrors`, at most
    /// [`MAX_REPORTED_RUNTIME_ERRORS`] as `path:line:column: message`), so whoever made the
    /// change can fix it.
    pub fn preview_runtime_error_reported(
        revision: u64,
        message: &str,
        runtime_errors: &RuntimeErrorReport,
    ) -> Self {
        let error = Self::preview_runtime_error(revision).with_detail("message", json!(message));
        let described: Vec<String> = runtime_errors
            .errors
            .iter()
            .filter(|reported| reported.revision == revision)
            .take(MAX_REPORTED_RUNTIME_ERRORS)
            .map(crate::preview::PreviewRuntimeError::describe)
            .collect();
        if described.is_empty() {
            return error;
        }
        error.with_detail("runtimeErrors", json!(described))
    }

    /// No acknowledgement of `revision` within `timeout_ms`.
    pub fn preview_ack_timeout(revision: u64, timeout_ms: u64) -> Self {
        Self::new(
            WorkspaceErrorCode::PreviewAckTimeout,
            format!("Preview revision {revision} was not acknowledged within {timeout_ms}ms."),
            json!({ "revision": revision, "timeoutMs": timeout_ms }),
        )
    }

    /// The preview moved past `requested`.
    pub fn preview_superseded(requested: u64, actual: u64) -> Self {
        Self::new(
            WorkspaceErrorCode::PreviewRevisionSuperseded,
            format!("Preview revision {requested} was superseded by revision {actual}."),
            json!({ "requestedRevision": requested, "actualRevision": actual }),
        )
    }

    /// A visual preview tool found no `target` (e.g. `stylesheet`, `hero-title`) in `path`.
    pub fn preview_target_not_found(target: &str, path: Option<&str>) -> Self {
        let mut details = json!({ "target": target });
        if let Some(path) = path {
            details["path"] = json!(path);
        }
        Self::new(
            WorkspaceErrorCode::PreviewTargetNotFound,
            format!("The preview target {target} was not found in the workspace."),
            details,
        )
    }

    /// The durable state store behind folder writes cannot be opened.
    pub fn durable_state_unavailable(cause: &str) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspaceDurableStateUnavailable,
            "The durable workspace state store is unavailable.",
            json!({ "cause": bounded_text(cause) }),
        )
    }

    /// Marks the preview failure of a mutation already committed as `revision`. The code stays
    /// (it says what failed: the confirmation), but the result is **not retryable**: the change
    /// is applied, so repeating the call would apply it twice. `details.committed: true`,
    /// `details.revision` and `details.previewAction: "refresh"` (what may still help: refreshing
    /// the preview, which `retryable` on the bare confirmation wait covers) tell every caller so.
    /// A deliberate difference from the contract, which keeps the code's retryable flag.
    pub fn committed(self, revision: u64) -> Self {
        let message = format!(
            "The change was applied as revision {revision}; only the preview confirmation \
             failed: {}",
            self.message
        );
        let mut error = self
            .with_detail("committed", json!(true))
            .with_detail("revision", json!(revision))
            .with_detail("previewAction", json!("refresh"));
        error.message = message;
        error.retryable = false;
        error
    }

    /// Whether the mutation this error reports was applied (see [`Self::committed`]).
    pub fn is_committed(&self) -> bool {
        self.details.get("committed") == Some(&Value::Bool(true))
    }

    /// Adds one detail key, keeping the rest.
    pub fn with_detail(mut self, key: &str, value: Value) -> Self {
        if !self.details.is_object() {
            self.details = json!({});
        }
        self.details[key] = value;
        self
    }
}

/// `normalize_workspace_path(raw)?` in workspace code: the coded `WORKSPACE_PATH_INVALID`
/// with details `{reason}`. The conversion never sees the raw path; use
/// [`WorkspaceError::path_invalid`] where it should be echoed as `details.path`.
impl From<PathError> for WorkspaceError {
    fn from(reason: PathError) -> Self {
        Self::new(
            WorkspaceErrorCode::WorkspacePathInvalid,
            format!("Invalid workspace path: {reason}."),
            json!({ "reason": reason.reason() }),
        )
    }
}

/// `normalize_workspace_path(raw)?` in a tool handler: the coded `WORKSPACE_PATH_INVALID`
/// (non-retryable, details `{reason}`), as the conversion into [`WorkspaceError`] builds it.
impl From<PathError> for tool_protocol::ToolCallError {
    fn from(reason: PathError) -> Self {
        WorkspaceError::from(reason).into()
    }
}

impl From<WorkspaceError> for tool_protocol::ToolCallError {
    fn from(error: WorkspaceError) -> Self {
        Self {
            code: error.code.as_str().to_owned(),
            message: error.message,
            retryable: Some(error.retryable),
            details: Some(error.details),
        }
    }
}

/// Longest path echoed in details; longer inputs are cut so an error stays small.
const MAX_DETAIL_PATH_CHARS: usize = 240;

fn bounded_path(raw: &str) -> String {
    raw.chars()
        .take(MAX_DETAIL_PATH_CHARS)
        .collect::<String>()
        .replace('\0', "\\0")
}

fn bounded_text(text: &str) -> String {
    text.chars().take(MAX_DETAIL_PATH_CHARS).collect()
}

/// `80000` -> `80,000`, as in the reference messages.
pub(crate) fn group_thousands(value: usize) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_error_converts_into_the_coded_path_invalid_error() {
        fn open(raw: &str) -> WorkspaceResult<String> {
            Ok(crate::path::normalize_workspace_path(raw)?)
        }
        fn handler(raw: &str) -> Result<String, tool_protocol::ToolCallError> {
            Ok(crate::path::normalize_workspace_path(raw)?)
        }
        let error = open("a/../b").unwrap_err();
        assert_eq!(error.code, WorkspaceErrorCode::WorkspacePathInvalid);
        assert!(!error.retryable);
        assert_eq!(error.details, json!({"reason": "parent-traversal"}));
        assert_eq!(
            error.message,
            "Invalid workspace path: workspace paths cannot contain '..' segments."
        );
        let coded = handler("").unwrap_err();
        assert_eq!(
            (coded.code.as_str(), coded.retryable),
            ("WORKSPACE_PATH_INVALID", Some(false))
        );
        assert_eq!(coded.details, Some(json!({"reason": "empty"})));
        assert_eq!(open(" src/./a.js ").unwrap(), "src/a.js");
    }

    #[test]
    fn a_committed_preview_failure_keeps_its_code_and_is_never_retryable() {
        let wait = WorkspaceError::new(
            WorkspaceErrorCode::PreviewRevisionSuperseded,
            "superseded",
            json!({}),
        );
        assert!(wait.retryable, "the bare confirmation wait stays retryable");
        let committed = wait.committed(7);
        assert_eq!(
            committed.code,
            WorkspaceErrorCode::PreviewRevisionSuperseded
        );
        assert!(
            !committed.retryable,
            "the applied mutation must not be repeated"
        );
        assert_eq!(
            committed.details,
            json!({"committed": true, "revision": 7, "previewAction": "refresh"})
        );
        assert!(
            committed
                .message
                .starts_with("The change was applied as revision 7")
        );
    }

    #[test]
    fn retryable_only_for_conflict_folder_and_preview_timing_codes() {
        use WorkspaceErrorCode::*;
        let retryable = [
            WorkspaceRevisionConflict,
            WorkspaceFolderStale,
            WorkspaceFolderNotConnected,
            WorkspaceFolderPermissionDenied,
            PreviewAckTimeout,
            PreviewRevisionSuperseded,
        ];
        let fixed = [
            WorkspaceSourceLimit,
            WorkspaceNoSupportedFiles,
            WorkspaceEmpty,
            WorkspaceActiveFileNotFound,
            WorkspacePreviewEntryRequired,
            WorkspaceFolderStateConflict,
            WorkspaceFolderNotFound,
            WorkspaceSideEffectUnknown,
            WorkspaceDurableStateUnavailable,
            WorkspacePathInvalid,
            WorkspaceFileNotFound,
            WorkspaceFileConflict,
            WorkspaceFileTypeConflict,
            WorkspacePatchNotFound,
            WorkspaceHistoryEmpty,
            WorkspaceInputInvalid,
            PreviewRuntimeError,
            PreviewTargetNotFound,
        ];
        for code in retryable {
            assert!(code.retryable(), "{code}");
        }
        for code in fixed {
            assert!(!code.retryable(), "{code}");
        }
        let serialized =
            serde_json::to_value(WorkspaceErrorCode::WorkspaceRevisionConflict).unwrap();
        assert_eq!(serialized, "WORKSPACE_REVISION_CONFLICT");
    }

    #[test]
    fn revision_conflict_message_and_details_match_the_contract() {
        let error = WorkspaceError::revision_conflict(3, 5, Some("save"));
        assert_eq!(
            error.message,
            "Workspace revision mismatch: expected 3, current 5. Re-read the workspace before applying the mutation."
        );
        assert_eq!(
            error.details,
            json!({"expectedRevision": 3, "currentRevision": 5, "operation": "save"})
        );
        assert!(error.retryable);
    }

    #[test]
    fn unsaved_changes_lists_at_most_64_paths_and_the_full_count() {
        let paths = |n: usize| (0..n).map(|i| format!("f{i:03}.js")).collect::<Vec<_>>();
        let at_edge = WorkspaceError::unsaved_changes("open", &paths(64));
        assert_eq!(at_edge.details["dirtyPaths"].as_array().unwrap().len(), 64);
        let over = WorkspaceError::unsaved_changes("reload", &paths(65));
        assert_eq!(over.code, WorkspaceErrorCode::WorkspaceFolderStateConflict);
        assert!(!over.retryable);
        assert_eq!(over.details["dirtyPaths"].as_array().unwrap().len(), 64);
        assert_eq!(over.details["dirtyPaths"][63], "f063.js");
        assert_eq!(over.details["dirtyCount"], 65);
        assert_eq!(over.details["operation"], "reload");
        assert!(
            over.message
                .contains("discard 65 unsaved change(s) (f000.js, f001.js, f002.js and 62 more)"),
            "{}",
            over.message
        );
    }

    #[test]
    fn folder_not_found_is_final_and_names_path_and_reason() {
        let error = WorkspaceError::folder_not_found("/no/such", "no such folder");
        assert_eq!(error.code.as_str(), "WORKSPACE_FOLDER_NOT_FOUND");
        assert!(!error.retryable);
        assert_eq!(
            error.details,
            json!({"operation": "open", "path": "/no/such", "reason": "no such folder"})
        );
    }

    #[test]
    fn source_limit_groups_thousands() {
        let error = WorkspaceError::source_limit("Source of app.js", 80_000);
        assert_eq!(
            error.message,
            "Source of app.js exceeds the 80,000 character limit."
        );
        assert_eq!(error.details, json!({"limit": 80000}));
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1_000), "1,000");
        assert_eq!(group_thousands(12_345_678), "12,345,678");
    }

    #[test]
    fn preview_target_details_name_the_target_and_path() {
        let error = WorkspaceError::preview_target_not_found("hero-title", Some("index.html"));
        assert_eq!(error.code.as_str(), "PREVIEW_TARGET_NOT_FOUND");
        assert_eq!(
            error.details,
            json!({"target": "hero-title", "path": "index.html"})
        );
        assert_eq!(
            WorkspaceError::preview_target_not_found("stylesheet", None).details,
            json!({"target": "stylesheet"})
        );
        assert!(!WorkspaceError::durable_state_unavailable("locked").retryable);
    }

    #[test]
    fn maps_to_a_tool_call_error() {
        let error = WorkspaceError::patch_not_found("app.js", "first", 12);
        let tool: tool_protocol::ToolCallError = error.into();
        assert_eq!(tool.code, "WORKSPACE_PATCH_NOT_FOUND");
        assert_eq!(tool.retryable, Some(false));
        assert_eq!(
            tool.details,
            Some(json!({"path": "app.js", "occurrence": "first", "searchLength": 12}))
        );
    }
}
