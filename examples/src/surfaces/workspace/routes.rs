//! HTTP routes of the standalone workspace: its preview (the shared
//! [`serving`] routes under `/preview` and `/api/preview`),
//! the preview compiler's diagnostics, the standalone export and opening a host folder.

use std::sync::Arc;

use axum::extract::{FromRef, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{
    IncrementalPreviewCompiler, PreviewDiagnostic, PreviewOptions, compile_preview,
};
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewStatus};
use live_code_editor::workspace::{ImportGuard, ImportOutcome, Workspace, WorkspaceErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_protocol::ToolCallError;

use super::WorkspaceSurface;
use super::preview_tools::workspace_diagnostics;
use crate::kit::error::StudioError;
use crate::kit::events::StudioEvent;
use crate::kit::preview_http::serving::{self, AckView, PreviewRoutes, PreviewSurface};
use crate::kit::preview_http::{ServedPreview, export, export_options};
use crate::kit::stylesheet_run::StylesheetRun;

/// What the workspace's routes need from the host that mounts them.
#[derive(Debug, Clone)]
pub struct WorkspaceRoutes {
    /// The surface itself.
    pub workspace: Arc<WorkspaceSurface>,
}

/// Every workspace route.
pub fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    WorkspaceRoutes: FromRef<S>,
    PreviewRoutes<WorkspaceSurface>: FromRef<S>,
{
    Router::new()
        .route("/api/preview/diagnostics", get(preview_diagnostics))
        .route("/api/export", get(export_html))
        .route("/api/folder/open", post(open_folder))
        .merge(serving::routes::<S, WorkspaceSurface>())
}

impl PreviewSurface for WorkspaceSurface {
    const NAME: &'static str = "workspace";
    const PAGE: &'static str = "";
    type Document = Vec<WorkspaceFile>;

    async fn document(&self, revision: u64) -> Result<Vec<WorkspaceFile>, u64> {
        let workspace = self.manager.snapshot().await;
        if workspace.revision() == revision {
            Ok(workspace.files().cloned().collect())
        } else {
            Err(workspace.revision())
        }
    }

    fn compile(
        files: Vec<WorkspaceFile>,
        compiler: &mut IncrementalPreviewCompiler,
        options: &PreviewOptions,
    ) -> ServedPreview {
        compiler.compile(&files, options).into()
    }

    async fn asset_source(&self, _revision: u64) -> (u64, Workspace) {
        let workspace = self.manager.snapshot().await;
        (workspace.revision(), workspace)
    }

    fn missing_asset() -> StudioError {
        StudioError::not_found(
            "WORKSPACE_FILE_NOT_FOUND",
            "No workspace file at that path.",
        )
    }

    fn stylesheet_run(&self) -> &StylesheetRun {
        &self.stylesheet_run
    }

    fn preview_acks(&self) -> &PreviewAcks {
        self.manager.preview_acks()
    }

    async fn acknowledge(&self, revision: u64, status: PreviewStatus) -> AckView {
        let accepted = self.manager.acknowledge_preview(revision, status);
        self.hub.publish(StudioEvent::Preview {
            state: json!(self.manager.preview_acks().current()),
        });
        AckView {
            accepted,
            revision,
            preview: None,
        }
    }
}

/// `GET /api/preview/diagnostics`: the preview compiler's diagnostics (unresolved references,
/// budget notes) for the current revision, so the page can list them beside the preview.
async fn preview_diagnostics(
    State(routes): State<WorkspaceRoutes>,
) -> Result<Json<DiagnosticsView>, StudioError> {
    let workspace = routes.workspace.manager.snapshot().await;
    let diagnostics = workspace_diagnostics(&workspace)
        .await
        .map_err(|error| StudioError::internal(&error.code, error.message))?;
    Ok(Json(DiagnosticsView {
        revision: workspace.revision(),
        diagnostics,
    }))
}

/// The preview compiler's diagnostics of one revision.
#[derive(Serialize)]
struct DiagnosticsView {
    revision: u64,
    diagnostics: Vec<PreviewDiagnostic>,
}

/// `GET /api/export`: the workspace as one standalone HTML file.
async fn export_html(State(routes): State<WorkspaceRoutes>) -> Result<Response, StudioError> {
    let workspace = routes.workspace.manager.snapshot().await;
    let files: Vec<_> = workspace.files().cloned().collect();
    export(compile_preview(&files, &export_options()))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OpenFolderBody {
    path: String,
    #[serde(default)]
    expected_revision: Option<u64>,
    #[serde(default)]
    discard_changes: bool,
}

/// `POST /api/folder/open {path, expectedRevision?, discardChanges?}`: imports a host folder
/// (same limits as every folder import) and links it for save and reload. An empty or
/// unsupported folder leaves the workspace untouched, and so does any open over unsaved edits
/// without `discardChanges: true` (`WORKSPACE_FOLDER_STATE_CONFLICT`, listing them).
async fn open_folder(
    State(routes): State<WorkspaceRoutes>,
    Json(body): Json<OpenFolderBody>,
) -> Result<Json<ImportOutcome>, StudioError> {
    let workspace = &routes.workspace;
    let adapter = workspace
        .saves
        .open_folder(body.path.trim())
        .map_err(|error| {
            let not_found = error.code == WorkspaceErrorCode::WorkspaceFolderNotFound;
            let error = ToolCallError::from(error);
            if not_found {
                StudioError::NotFound(error)
            } else {
                StudioError::BadRequest(error)
            }
        })?;
    let guard = ImportGuard::at(body.expected_revision).discarding(body.discard_changes);
    let outcome = workspace
        .manager
        .open_folder(Arc::new(adapter), guard)
        .await
        .map_err(|error| StudioError::Conflict(error.into()))?;
    Ok(Json(outcome))
}
