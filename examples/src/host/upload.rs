//! Folder upload for a browser that cannot name a host path: the files of a directory-upload
//! input (`<input type=file webkitdirectory multiple>`) replace the workspace under the same
//! limits as every folder import, and leave it with no linked folder (saving then writes the
//! browser-only checkpoint).
//!
//! `POST /api/folder/upload` takes JSON:
//! `{rootName, expectedRevision?, files: [{path, size, data?}]}` where `path` is relative to the
//! uploaded folder (its first segment already stripped), `size` the file's size in bytes and
//! `data` its bytes in standard base64. The page attaches `data` while the attached total stays
//! within [`MAX_IMPORT_TOTAL_BYTES`] and each file within [`MAX_ASSET_FILE_BYTES`] (the largest
//! per-file limit); a file listed without data is judged on its `size` alone. Every decision
//! (count, scan, per-file and total limits, invalid paths, unsupported or binary files) is the
//! library's [`ImportBuilder`]; the manager's [`import_files`] replaces the workspace, so an
//! empty or unsupported upload is rejected without touching it.
//!
//! `GET /api/folder/upload` reports the limits the page needs to build the request.
//!
//! [`import_files`]: live_code_editor::workspace::manager::WorkspaceDocumentManager::import_files

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::routing::get;
use base64::Engine;
use live_code_editor::workspace::folder::Admission;
use live_code_editor::workspace::{
    FolderImport, ImportBuilder, ImportGuard, ImportOutcome, MAX_ASSET_FILE_BYTES,
    MAX_IMPORT_FILES, MAX_IMPORT_TOTAL_BYTES, MAX_SCANNED_ENTRIES, MAX_TEXT_FILE_BYTES, SkipReason,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_protocol::ToolCallError;

use super::StudioState;
use crate::kit::error::StudioError;

/// Route of the upload.
pub const UPLOAD_PATH: &str = "/api/folder/upload";
/// Entries one upload may list: one past the scan limit, so the import can report
/// `scan limit reached` for a folder with more files.
pub const MAX_UPLOAD_ENTRIES: usize = MAX_SCANNED_ENTRIES + 1;
/// JSON bytes budgeted per entry besides its base64 data: the path (at most 160 characters,
/// escaped), the size and the punctuation.
pub const MAX_ENTRY_OVERHEAD_BYTES: usize = 1_024;
/// Bytes budgeted for the envelope (`rootName`, `expectedRevision`, brackets).
pub const MAX_ENVELOPE_BYTES: usize = 1_024;
/// Longest accepted `rootName`, in characters (a folder name, never a path).
pub const MAX_ROOT_NAME_CHARS: usize = 255;
/// Name used when the page sends no usable `rootName`.
pub const DEFAULT_ROOT_NAME: &str = "upload";

/// Largest accepted request body: the base64 of the whole import budget (each file padded to
/// whole base64 quanta) plus the per-entry and envelope overhead. Larger bodies are refused
/// with `STUDIO_UPLOAD_TOO_LARGE` before anything is decoded.
pub const MAX_UPLOAD_BODY_BYTES: usize = base64_len(byte_budget())
    + MAX_UPLOAD_ENTRIES * (MAX_ENTRY_OVERHEAD_BYTES + 4)
    + MAX_ENVELOPE_BYTES;

const fn byte_budget() -> usize {
    // 12 MiB fits in usize on every supported target.
    MAX_IMPORT_TOTAL_BYTES as usize
}

/// Length of the standard (padded) base64 encoding of `bytes` bytes.
pub const fn base64_len(bytes: usize) -> usize {
    bytes.div_ceil(3) * 4
}

/// The upload route, with the raised body limit on this route only.
pub fn routes() -> Router<Arc<StudioState>> {
    Router::new().route(
        UPLOAD_PATH,
        get(limits)
            .post(upload)
            .layer(DefaultBodyLimit::max(MAX_UPLOAD_BODY_BYTES)),
    )
}

/// One file of the upload list.
#[derive(Debug, Deserialize)]
struct UploadEntry {
    path: String,
    size: u64,
    #[serde(default)]
    data: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UploadBody {
    #[serde(default)]
    root_name: Option<String>,
    #[serde(default)]
    expected_revision: Option<u64>,
    /// Replace unsaved edits (the page asks the person first).
    #[serde(default)]
    discard_changes: bool,
    files: Vec<UploadEntry>,
}

/// `GET /api/folder/upload`: the limits the page builds its request with.
async fn limits() -> Json<UploadLimits> {
    Json(UploadLimits {
        max_entries: MAX_UPLOAD_ENTRIES,
        max_files: MAX_IMPORT_FILES,
        max_text_file_bytes: MAX_TEXT_FILE_BYTES,
        max_file_bytes: MAX_ASSET_FILE_BYTES,
        max_total_bytes: MAX_IMPORT_TOTAL_BYTES,
        max_body_bytes: MAX_UPLOAD_BODY_BYTES,
    })
}

/// The folder import limits, as the page builds its upload with them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UploadLimits {
    max_entries: usize,
    max_files: usize,
    max_text_file_bytes: u64,
    max_file_bytes: u64,
    max_total_bytes: u64,
    max_body_bytes: usize,
}

/// `POST /api/folder/upload`: imports the listed files and unlinks any folder.
async fn upload(
    State(state): State<Arc<StudioState>>,
    body: Result<Json<UploadBody>, JsonRejection>,
) -> Result<Json<ImportOutcome>, StudioError> {
    let Json(body) = body.map_err(|rejection| rejected(&rejection))?;
    if body.files.len() > MAX_UPLOAD_ENTRIES {
        return Err(StudioError::too_large(
            "STUDIO_UPLOAD_TOO_LARGE",
            format!("An upload lists at most {MAX_UPLOAD_ENTRIES} files."),
        )
        .with_details(json!({"maxEntries": MAX_UPLOAD_ENTRIES, "entries": body.files.len()})));
    }
    let guard = ImportGuard::at(body.expected_revision).discarding(body.discard_changes);
    let import = build_import(root_name(body.root_name.as_deref()), body.files);
    let outcome = state
        .workspace
        .manager()
        .import_files(import, guard)
        .await
        .map_err(|error| StudioError::Conflict(ToolCallError::from(error)))?;
    Ok(Json(outcome))
}

/// The folder name shown for the import: the page's `rootName` when it is a plain name.
fn root_name(raw: Option<&str>) -> String {
    match raw.map(str::trim) {
        Some(name)
            if !name.is_empty()
                && name.chars().count() <= MAX_ROOT_NAME_CHARS
                && !name.contains(['/', '\\', '\0']) =>
        {
            name.to_owned()
        }
        _ => DEFAULT_ROOT_NAME.to_owned(),
    }
}

/// Runs the upload list through the library's import rules, in the order the page sent it.
fn build_import(root_name: String, entries: Vec<UploadEntry>) -> FolderImport {
    let mut builder = ImportBuilder::new(root_name);
    for entry in entries {
        if !builder.count_entry(parent_of(&entry.path)) || !admit(&mut builder, entry) {
            break;
        }
    }
    builder.finish()
}

/// Offers one entry to the import; `false` once a limit stopped it.
fn admit(builder: &mut ImportBuilder, entry: UploadEntry) -> bool {
    let (path, kind) = match builder.admit(&entry.path, entry.size) {
        Admission::Read { path, kind, .. } => (path, kind),
        Admission::Stop => return false,
        Admission::Added | Admission::Skipped => return true,
    };
    let Some(data) = entry.data else {
        // The page stops attaching data once the total budget is spent: the import ends here
        // as the total limit would have ended it.
        builder.skip(&path, SkipReason::WorkspaceLimit);
        return false;
    };
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
        builder.skip(&path, SkipReason::Unreadable);
        return true;
    };
    builder.accept(path, kind, bytes) != Admission::Stop
}

/// The directory part of a relative path ("" for a file at the root).
fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(parent, _)| parent)
}

fn rejected(rejection: &JsonRejection) -> StudioError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return StudioError::too_large(
            "STUDIO_UPLOAD_TOO_LARGE",
            format!(
                "The upload is larger than {MAX_UPLOAD_BODY_BYTES} bytes (the folder import limits plus encoding)."
            ),
        )
        .with_details(json!({"maxBodyBytes": MAX_UPLOAD_BODY_BYTES}));
    }
    StudioError::bad_request(
        "STUDIO_INVALID_UPLOAD",
        format!(
            "The upload must be JSON {{rootName, expectedRevision?, files: [{{path, size, data?}}]}}: {}",
            rejection.body_text()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, bytes: &[u8]) -> UploadEntry {
        UploadEntry {
            path: path.to_owned(),
            size: bytes.len() as u64,
            data: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        }
    }

    #[test]
    fn the_body_limit_covers_the_whole_import_budget_in_base64() {
        assert!(MAX_UPLOAD_BODY_BYTES > base64_len(byte_budget()));
        assert_eq!(base64_len(3), 4);
        assert_eq!(base64_len(4), 8);
    }

    #[test]
    fn entries_go_through_the_library_rules() {
        let mut listed_only = entry("big.png", b"");
        listed_only.size = MAX_ASSET_FILE_BYTES + 1;
        listed_only.data = None;
        let mut garbled = entry("broken.css", b"x");
        garbled.data = Some("***".into());
        let import = build_import(
            "site".into(),
            vec![
                entry("index.html", b"<p>hi</p>"),
                entry("../escape.js", b"x"),
                entry("a\0b.js", b"x"),
                entry("tool.exe", b"x"),
                listed_only,
                garbled,
            ],
        );
        assert_eq!(import.root_name, "site");
        assert_eq!(import.files.len(), 1);
        assert_eq!(
            import.skipped,
            [
                "../escape.js · invalid workspace path",
                "a\0b.js · invalid workspace path",
                "tool.exe · unsupported file type",
                "big.png · larger than 4 MB",
                "broken.css · unreadable entry",
            ]
        );
    }

    #[test]
    fn an_admitted_file_without_data_ends_the_import_at_the_total_limit() {
        let mut unsent = entry("late.css", b"");
        unsent.size = 10;
        unsent.data = None;
        let import = build_import(
            "site".into(),
            vec![entry("index.html", b"x"), unsent, entry("after.js", b"y")],
        );
        assert_eq!(import.files.len(), 1);
        assert_eq!(import.skipped, ["late.css · workspace limit reached"]);
    }

    #[test]
    fn root_names_are_plain_folder_names() {
        assert_eq!(root_name(Some(" site ")), "site");
        assert_eq!(root_name(Some("a/b")), DEFAULT_ROOT_NAME);
        assert_eq!(root_name(Some("")), DEFAULT_ROOT_NAME);
        assert_eq!(root_name(None), DEFAULT_ROOT_NAME);
        let long = "n".repeat(MAX_ROOT_NAME_CHARS);
        assert_eq!(root_name(Some(&long)), long);
        assert_eq!(root_name(Some(&format!("{long}n"))), DEFAULT_ROOT_NAME);
    }
}
