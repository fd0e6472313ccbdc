//! The Changes panel: the workspace's changes as a diff against the folder on disk when one is
//! linked (read now), else against its checkpoint (the last import or save), and reverting one
//! hunk to that base, which is a direct `workspace.writeFile` through the registry like every
//! other page action.
//!
//! Both routes show or take file source, so both need the studio token.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::Response;
use live_code_editor::diff::{TextDiff, WorkspaceDiff, narrow};
use live_code_editor::workspace::manager::WorkspaceDocumentManager;
use live_code_editor::workspace::{Workspace, WorkspaceErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::StudioState;
use super::page_calls::call_as_page;
use crate::kit::error::StudioError;
use crate::kit::responses::no_store_json;

/// `GET /api/changes`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChangesView {
    /// The revision the diff was computed at.
    pub revision: u64,
    /// What the files are compared with: `folder` (read now) or `checkpoint`.
    pub base: &'static str,
    /// Why a linked folder is not the base (it could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The changes.
    pub diff: WorkspaceDiff,
}

/// The workspace and what its changes are measured against.
struct Changes {
    current: Workspace,
    /// The linked folder as it is on disk, when one is linked and readable.
    folder: Option<Workspace>,
    note: Option<String>,
}

impl Changes {
    /// Reads the base now: the linked folder, else the checkpoint.
    async fn read(manager: &WorkspaceDocumentManager) -> Self {
        match manager.preview_reload_folder().await {
            Ok((current, folder)) => Self {
                current,
                folder: Some(folder),
                note: None,
            },
            Err(error) => Self {
                current: manager.snapshot().await,
                folder: None,
                note: (error.code != WorkspaceErrorCode::WorkspaceFolderNotConnected).then(|| {
                    format!(
                        "The linked folder could not be read ({}), so the changes are shown against the last import or save.",
                        error.code.as_str()
                    )
                }),
            },
        }
    }

    fn diff(&self) -> WorkspaceDiff {
        match &self.folder {
            Some(folder) => WorkspaceDiff::between(folder, &self.current),
            None => WorkspaceDiff::unsaved(&self.current),
        }
    }

    /// The base's text of the file now at `path`.
    fn base_source(&self, path: &str) -> Option<&str> {
        match &self.folder {
            Some(folder) => folder.file(path)?.source(),
            None => {
                let origin = self.current.origin_of(path).unwrap_or(path);
                self.current.checkpoint().get(origin)?.source()
            }
        }
    }
}

/// `GET /api/changes`: every change of the workspace against its base.
pub(crate) async fn unsaved_changes(State(state): State<Arc<StudioState>>) -> Response {
    let changes = Changes::read(state.workspace.manager()).await;
    let view = ChangesView {
        revision: changes.current.revision(),
        base: if changes.folder.is_some() {
            "folder"
        } else {
            "checkpoint"
        },
        diff: changes.diff(),
        note: changes.note,
    };
    no_store_json(&view)
}

/// The body of `POST /api/changes/revert-hunk`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RevertHunk {
    /// The file (its current path).
    pub path: String,
    /// The hunk to revert, as `GET /api/changes` numbered it.
    pub hunk: usize,
    /// The digest of the changes the hunk was chosen from.
    pub digest: String,
}

/// `POST /api/changes/revert-hunk`: restores one hunk of a modified text file to its saved
/// lines with `workspace.writeFile` (guarded by the revision the diff was computed at) and
/// answers with that call's result. `409 STUDIO_DIFF_CHANGED` when the changes moved on since
/// they were shown; `422 STUDIO_UNKNOWN_HUNK` for a hunk or file that has none to revert.
pub(crate) async fn revert_hunk(
    State(state): State<Arc<StudioState>>,
    Json(body): Json<RevertHunk>,
) -> Result<Json<Value>, StudioError> {
    let changes = Changes::read(state.workspace.manager()).await;
    if changes.diff().digest != body.digest {
        return Err(StudioError::conflict(
            "STUDIO_DIFF_CHANGED",
            "The unsaved changes moved on since they were shown; review them again.",
        ));
    }
    let source = reverted_source(&changes, &body.path, body.hunk).ok_or_else(|| {
        StudioError::unprocessable(
            "STUDIO_UNKNOWN_HUNK",
            "That file has no such hunk to revert (only modified text files revert hunk by hunk; revert the whole file instead).",
        )
    })?;
    let arguments = json!({"path": body.path, "source": source, "expectedRevision": changes.current.revision()});
    let request = json!({"method": "tools/call", "params": {"name": "workspace.writeFile", "arguments": arguments}});
    Ok(Json(call_as_page(&state, &request).await))
}

/// The source of `path` with hunk `hunk` of its diff restored to the base's lines.
fn reverted_source(changes: &Changes, path: &str, hunk: usize) -> Option<String> {
    let current = changes.current.file(path)?.source()?;
    let saved = changes.base_source(path)?;
    let count = TextDiff::new(saved, current).hunk_count;
    if hunk >= count {
        return None;
    }
    let kept: Vec<usize> = (0..count).filter(|&index| index != hunk).collect();
    narrow(saved, current, &kept).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use live_code_editor::WorkspaceFile;
    use live_code_editor::workspace::Operation;

    #[test]
    fn reverting_a_hunk_restores_only_its_saved_lines() {
        let saved: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let workspace = Workspace::new(vec![
            WorkspaceFile::text("index.html", "<p>x</p>\n"),
            WorkspaceFile::text("notes.txt", saved.clone()),
        ])
        .unwrap();
        let edited = saved
            .replace("line 2\n", "line two\n")
            .replace("line 19\n", "line nineteen\n");
        let workspace = workspace
            .apply(&Operation::Write {
                path: "notes.txt".into(),
                source: edited,
            })
            .unwrap();
        let changes = Changes {
            current: workspace,
            folder: None,
            note: None,
        };
        assert_eq!(
            reverted_source(&changes, "notes.txt", 0).unwrap(),
            saved.replace("line 19\n", "line nineteen\n")
        );
        assert_eq!(reverted_source(&changes, "notes.txt", 2), None);
        assert_eq!(reverted_source(&changes, "index.html", 0), None);
    }
}
