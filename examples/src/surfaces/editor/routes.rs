//! The editor's HTTP routes: its preview (the shared
//! [`serving`] routes under `/editor/preview` and
//! `/api/editor/preview`, over the document clock), the page's state snapshot and opening a
//! host folder. Every route sits behind the studio's Host/Origin/token
//! guard. Shapes are documented on the module [`super`].

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{FromRef, State};
use axum::routing::{get, post};
use live_code_editor::preview::{IncrementalPreviewCompiler, PreviewOptions};
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewStatus};
use live_code_editor::workspace::{FileSummary, ImportOutcome};
use live_code_editor::workspace::{ImportGuard, OsFolder, Workspace};
use serde::{Deserialize, Serialize};
use tool_context::ApprovalSnapshot;
use tool_protocol::ToolCallError;

use super::scenarios::{Scenario, ScenarioInfo, inject_scenario};
use super::state::{EditorContext, EditorDocument, EditorStatus, PreviewDocument};
use super::{EditorRoutes, EditorSurface};
use crate::kit::error::StudioError;
use crate::kit::preview_http::ServedPreview;
use crate::kit::preview_http::serving::{self, AckView, PreviewRoutes, PreviewSurface};
use crate::kit::stylesheet_run::StylesheetRun;

/// Every editor route but the saves' (see [`super::save_routes`]).
pub(crate) fn routes<S>() -> Router<S>
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

    fn missing_asset() -> StudioError {
        StudioError::not_found("WORKSPACE_FILE_NOT_FOUND", "No editor file at that path.")
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
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EditorStateView {
    live_stylesheets_since: u64,
    status: EditorStatus,
    files: Vec<FileSummary>,
    document: DocumentView,
    scenarios: Vec<ScenarioInfo>,
    approvals: ApprovalSnapshot,
}

/// The open document, or why there is none.
#[derive(Serialize)]
#[serde(untagged)]
enum DocumentView {
    Document(EditorDocument),
    Error { error: ToolCallError },
}

async fn editor_state(State(state): State<EditorRoutes>) -> Json<EditorStateView> {
    let editor = &state.editor;
    let status = editor.status().await;
    let document = match editor.document().await {
        Ok(document) => DocumentView::Document(document),
        Err(error) => DocumentView::Error {
            error: error.into(),
        },
    };
    Json(EditorStateView {
        live_stylesheets_since: editor
            .stylesheet_run()
            .reload_boundary(status.context.document_revision),
        files: editor.manager().list_files().await,
        status,
        document,
        scenarios: Scenario::ALL.into_iter().map(Scenario::info).collect(),
        approvals: state.approvals.snapshot(),
    })
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
) -> Result<Json<OpenedView>, StudioError> {
    let adapter =
        OsFolder::open(body.path.trim()).map_err(|error| StudioError::BadRequest(error.into()))?;
    let editor = &state.editor;
    let guard = ImportGuard::at(body.expected_workspace_revision).discarding(body.discard_changes);
    let outcome = editor
        .manager()
        .open_folder(Arc::new(adapter), guard)
        .await
        .map_err(|error| StudioError::Conflict(error.into()))?;
    editor.publish_change().await;
    Ok(Json(OpenedView {
        import: outcome,
        context: editor.result_context().await,
    }))
}

/// An opened folder: the import and the editor's context after it.
#[derive(Serialize)]
struct OpenedView {
    import: ImportOutcome,
    context: EditorContext,
}
