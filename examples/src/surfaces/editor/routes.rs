//! The editor's HTTP routes: its preview (the shared
//! [`serving`] routes under `/editor/preview` and
//! `/api/editor/preview`, over the document clock), the page's state snapshot and opening a
//! host folder. Every route sits behind the studio's Host/Origin/token
//! guard. Shapes are documented on the module [`super`].

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use live_code_editor::preview::{IncrementalPreviewCompiler, PreviewOptions};
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewStatus};
use live_code_editor::workspace::{ImportGuard, OsFolder, Workspace};
use serde::Deserialize;
use serde_json::json;
use tool_protocol::ToolCallError;

use super::scenarios::{Scenario, inject_scenario};
use super::state::PreviewDocument;
use super::{EditorRoutes, EditorSurface};
use crate::kit::preview_http::ServedPreview;
use crate::kit::preview_http::serving::{self, AckView, PreviewRoutes, PreviewSurface};
use crate::kit::stylesheet_run::StylesheetRun;

/// Every editor route but the saves' (see [`super::save_routes`]).
pub fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    EditorRoutes: FromRef<S>,
    PreviewRoutes<EditorSurface>: FromRef<S>,
{
    Router::new()
        .route("/api/editor/state", get(editor_state))
        .route("/api/editor/folder/open", post(open_folder))
        .merge(serving::routes::<S, EditorSurface>())
}

fn api_error(status: StatusCode, error: ToolCallError) -> Response {
    (status, Json(json!({"error": error}))).into_response()
}

impl PreviewSurface for EditorSurface {
    const NAME: &'static str = "editor";
    const PAGE: &'static str = "/editor";
    type Document = PreviewDocument;

    async fn document(&self, revision: u64) -> Result<PreviewDocument, u64> {
        self.preview_document(revision).await
    }

    /// Compiles `document` with the editor's incremental compiler and injects its scenario.
    /// The injection touches only `<html>` and the start of `<head>`, never the inlined
    /// stylesheets, so the compiled stylesheets are still what the document holds.
    fn compile(
        document: PreviewDocument,
        compiler: &mut IncrementalPreviewCompiler,
        options: &PreviewOptions,
    ) -> ServedPreview {
        let files: Vec<_> = document.files.iter().map(|file| (**file).clone()).collect();
        let compiled = compiler.compile(&files, options);
        ServedPreview {
            html: inject_scenario(&compiled.html, document.scenario).into(),
            stylesheets: compiled.stylesheets,
        }
    }

    /// The current document revision, and the editor workspace.
    async fn asset_source(&self, revision: u64) -> (u64, Workspace) {
        let current = match self.preview_document(revision).await {
            Ok(_) => revision,
            Err(current) => current,
        };
        (current, self.manager().snapshot().await)
    }

    fn missing_asset() -> Response {
        api_error(
            StatusCode::NOT_FOUND,
            ToolCallError::new("WORKSPACE_FILE_NOT_FOUND", "No editor file at that path."),
        )
    }

    fn stylesheet_run(&self) -> &StylesheetRun {
        EditorSurface::stylesheet_run(self)
    }

    fn preview_acks(&self) -> &PreviewAcks {
        EditorSurface::preview_acks(self)
    }

    /// Stale revisions are ignored (`accepted: false`); the answer carries the preview state.
    async fn acknowledge(&self, revision: u64, status: PreviewStatus) -> AckView {
        let accepted = self.acknowledge_preview(revision, status).await;
        AckView {
            accepted,
            revision,
            preview: Some(EditorSurface::preview_acks(self).current()),
        }
    }
}

/// `GET /api/editor/state`: everything the editor page renders at load.
async fn editor_state(State(state): State<EditorRoutes>) -> Response {
    let editor = &state.editor;
    let status = editor.status().await;
    let files = editor.manager().list_files().await;
    let document = match editor.document().await {
        Ok(document) => json!(document),
        Err(error) => json!({"error": ToolCallError::from(error)}),
    };
    let scenarios: Vec<_> = Scenario::ALL.into_iter().map(Scenario::info).collect();
    let live_since = editor
        .stylesheet_run()
        .reload_boundary(status.context.document_revision);
    Json(json!({
        "liveStylesheetsSince": live_since,
        "status": status,
        "files": files,
        "document": document,
        "scenarios": scenarios,
        "approvals": state.approvals.snapshot(),
    }))
    .into_response()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OpenFolderBody {
    path: String,
    #[serde(default)]
    expected_workspace_revision: Option<u64>,
    #[serde(default)]
    discard_changes: bool,
}

/// `POST /api/editor/folder/open {path, expectedWorkspaceRevision?, discardChanges?}`: imports a
/// writable host folder into the editor (the limits of every folder import) and links it for
/// saving. An empty or unsupported folder is refused and leaves the workspace and link
/// untouched, and so is an open over unsaved edits without `discardChanges: true`.
async fn open_folder(
    State(state): State<EditorRoutes>,
    Json(body): Json<OpenFolderBody>,
) -> Response {
    let adapter = match OsFolder::open(body.path.trim()) {
        Ok(adapter) => Arc::new(adapter),
        Err(error) => return api_error(StatusCode::BAD_REQUEST, error.into()),
    };
    let editor = &state.editor;
    let opened = editor
        .manager()
        .open_folder(
            adapter,
            ImportGuard::at(body.expected_workspace_revision).discarding(body.discard_changes),
        )
        .await;
    match opened {
        Ok(outcome) => {
            editor.publish_change().await;
            Json(json!({
                "import": outcome,
                "context": editor.result_context().await,
            }))
            .into_response()
        }
        Err(error) => api_error(StatusCode::CONFLICT, error.into()),
    }
}
