//! HTTP routes of the standalone workspace: its preview (the shared
//! [`serving`] routes under `/preview` and `/api/preview`),
//! the preview compiler's diagnostics, the standalone export and opening a host folder.

use std::sync::Arc;

use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{IncrementalPreviewCompiler, PreviewOptions, compile_preview};
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewStatus};
use live_code_editor::workspace::{ImportGuard, Workspace, WorkspaceErrorCode};
use serde::Deserialize;
use serde_json::json;

use super::WorkspaceSurface;
use super::preview_tools::workspace_diagnostics;
use crate::kit::events::StudioEvent;
use crate::kit::preview_http::serving::{self, AckView, PreviewRoutes, PreviewSurface};
use crate::kit::preview_http::{ServedPreview, export, export_options};
use crate::kit::responses::api_error;
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

    fn missing_asset() -> Response {
        api_error(
            StatusCode::NOT_FOUND,
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
async fn preview_diagnostics(State(routes): State<WorkspaceRoutes>) -> Response {
    let workspace = routes.workspace.manager.snapshot().await;
    match workspace_diagnostics(&workspace).await {
        Ok(diagnostics) => {
            Json(json!({"revision": workspace.revision(), "diagnostics": diagnostics}))
                .into_response()
        }
        Err(error) => api_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            &error.code,
            &error.message,
        ),
    }
}

/// `GET /api/export`: the workspace as one standalone HTML file.
async fn export_html(State(routes): State<WorkspaceRoutes>) -> Response {
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
) -> Response {
    let workspace = &routes.workspace;
    let adapter = match workspace.saves.open_folder(body.path.trim()) {
        Ok(adapter) => Arc::new(adapter),
        Err(error) => {
            let status = if error.code == WorkspaceErrorCode::WorkspaceFolderNotFound {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::BAD_REQUEST
            };
            return (
                status,
                Json(json!({"error": tool_protocol::ToolCallError::from(error)})),
            )
                .into_response();
        }
    };
    match workspace
        .manager
        .open_folder(
            adapter,
            ImportGuard::at(body.expected_revision).discarding(body.discard_changes),
        )
        .await
    {
        Ok(outcome) => Json(json!(outcome)).into_response(),
        Err(error) => (
            StatusCode::CONFLICT,
            Json(json!({"error": tool_protocol::ToolCallError::from(error)})),
        )
            .into_response(),
    }
}
