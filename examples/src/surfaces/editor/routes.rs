//! The editor's HTTP routes: its preview documents, their acknowledgements, the page's state
//! snapshot and opening a host folder. Every route sits behind the studio's Host/Origin/token
//! guard. Shapes are documented on the module [`super`].

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{FromRef, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use live_code_editor::preview::IncrementalPreviewCompiler;
use live_code_editor::workspace::{ImportGuard, OsFolder};
use serde::Deserialize;
use serde_json::{Value, json};
use tool_protocol::ToolCallError;

use super::scenarios::{Scenario, inject_scenario};
use super::state::PreviewDocument;
use crate::kit::preview_http::ServedPreview;
use crate::surfaces::editor::EditorRoutes;

/// Every editor route.
pub fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    EditorRoutes: FromRef<S>,
{
    Router::new()
        .route("/editor/preview/{revision}", get(preview_document))
        .route(
            "/editor/preview/{revision}/assets/{*path}",
            get(preview_asset),
        )
        .route("/api/editor/preview/ack", post(preview_ack))
        .route(
            "/api/editor/preview/stylesheets/{revision}",
            get(preview_stylesheets),
        )
        .route("/api/editor/state", get(editor_state))
        .route("/api/editor/folder/open", post(open_folder))
}

fn api_error(status: StatusCode, error: ToolCallError) -> Response {
    (status, Json(json!({"error": error}))).into_response()
}

/// `GET /editor/preview/{documentRevision}`: the compiled document of the current document
/// revision with its scenario injected as data; `410 Gone` once it was superseded.
async fn preview_document(
    State(state): State<EditorRoutes>,
    Path(revision): Path<u64>,
) -> Response {
    let document = match state.editor.preview_document(revision).await {
        Ok(document) => document,
        Err(current) => {
            return crate::kit::preview_http::superseded(revision, current);
        }
    };
    let compile = compile_document(&state, document);
    crate::kit::preview_http::cached_document(&state.previews, "editor", revision, compile).await
}

/// Compiles `document` with the editor's incremental compiler and injects its scenario. The
/// injection touches only `<html>` and the start of `<head>`, never the inlined stylesheets,
/// so the compiled stylesheets are still what the document holds.
fn compile_document(
    state: &EditorRoutes,
    document: PreviewDocument,
) -> impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview + Send + 'static {
    let key = state.security.preview_key();
    let revision = document.revision;
    let assets = crate::kit::preview_http::asset_prefix("/editor/preview", revision, key);
    move |compiler| {
        let files: Vec<_> = document.files.iter().map(|file| (**file).clone()).collect();
        let options = crate::kit::preview_http::preview_options(Some(revision), assets);
        let compiled = compiler.compile(&files, &options);
        ServedPreview {
            html: inject_scenario(&compiled.html, document.scenario).into(),
            stylesheets: compiled.stylesheets,
        }
    }
}

/// `GET /api/editor/preview/stylesheets/{documentRevision}?from=R`: the current document
/// revision's stylesheets for a preview showing revision R that can swap them in (only
/// stylesheets changed since, and not the scenario); `409` when it must reload, `410` once the
/// revision was superseded.
async fn preview_stylesheets(
    State(state): State<EditorRoutes>,
    Path(revision): Path<u64>,
    Query(query): Query<crate::kit::preview_http::StylesheetsQuery>,
) -> Response {
    let document = match state.editor.preview_document(revision).await {
        Ok(document) => document,
        Err(current) => return crate::kit::preview_http::superseded(revision, current),
    };
    let compile = compile_document(&state, document);
    crate::kit::preview_http::live_stylesheets(
        &state.previews,
        "editor",
        state.editor.stylesheet_run(),
        (query.from, revision),
        compile,
    )
    .await
}

/// `GET /editor/preview/{documentRevision}/assets/{key}/{path}`: a file of the current document;
/// `410 Gone` once that document revision was superseded.
async fn preview_asset(
    State(state): State<EditorRoutes>,
    Path((revision, path)): Path<(u64, String)>,
) -> Response {
    let Some(path) =
        crate::kit::preview_http::keyed_asset_path(&path, state.security.preview_key())
    else {
        return crate::kit::preview_http::unknown_asset();
    };
    // A document that took newer stylesheets in place still loads its own revision's assets,
    // and no asset changed since.
    if let Err(current) = state.editor.preview_document(revision).await
        && !state
            .editor
            .stylesheet_run()
            .serves_assets_of(revision, current)
    {
        return crate::kit::preview_http::superseded(revision, current);
    }
    let workspace = state.editor.manager().snapshot().await;
    let Some(file) = workspace.file(path) else {
        return api_error(
            StatusCode::NOT_FOUND,
            ToolCallError::new("WORKSPACE_FILE_NOT_FOUND", "No editor file at that path."),
        );
    };
    crate::kit::preview_http::asset(file)
}

/// `POST /api/editor/preview/ack`: the editor page forwards its iframe's bridge message
/// (`{type: "context-action.preview.ready"|"context-action.preview.error", revision, message?}`,
/// `revision` being a document revision, or a runtime error report); stale revisions are
/// ignored (`accepted: false`).
async fn preview_ack(State(state): State<EditorRoutes>, Json(message): Json<Value>) -> Response {
    if let Some(response) =
        crate::kit::preview_http::runtime_error(state.editor.preview_acks(), &message)
    {
        return response;
    }
    let (revision, status) = match crate::kit::preview_http::acknowledgement(&message) {
        Ok(acknowledgement) => acknowledgement,
        Err(response) => return response,
    };
    let accepted = state.editor.acknowledge_preview(revision, status).await;
    Json(json!({
        "accepted": accepted,
        "revision": revision,
        "preview": state.editor.preview_acks().current(),
    }))
    .into_response()
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
