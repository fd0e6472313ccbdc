//! HTTP routes of the web-coding surface: its sandboxed preview documents (410 once superseded),
//! their assets, the page's acknowledgement forwarding and a state read for the page.

use axum::extract::{FromRef, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use live_code_editor::preview::IncrementalPreviewCompiler;
use live_code_editor::workspace::Workspace;
use serde::Deserialize;
use serde_json::{Value, json};

use super::WEB_PREVIEW_PREFIX;
use super::WebRoutes;
use super::drafts::WebDraft;
use super::tools::workspace_view;
use crate::kit::preview_http::ServedPreview;
use crate::kit::responses::api_error;

/// The surface's routes.
pub fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    WebRoutes: FromRef<S>,
{
    Router::new()
        .route("/web/preview/{revision}", get(preview_document))
        .route("/web/preview/{revision}/assets/{*path}", get(preview_asset))
        .route("/api/web/preview/ack", post(preview_ack))
        .route(
            "/api/web/preview/stylesheets/{revision}",
            get(preview_stylesheets),
        )
        .route("/api/web/state", get(web_state))
        .route("/api/web/drafts", get(list_drafts))
        .route(
            "/api/web/drafts/{*path}",
            put(put_draft).delete(delete_draft),
        )
}

/// `GET /api/web/drafts`: the page's unsaved drafts, read back when it loads.
async fn list_drafts(State(state): State<WebRoutes>) -> Json<Value> {
    Json(json!({"drafts": state.web.drafts().list()}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DraftBody {
    source: String,
    base: u64,
}

/// `PUT /api/web/drafts/{path}`: stores the draft of one workspace file (coded 400 for a path
/// that is not a workspace file or a source over the files' limit).
async fn put_draft(
    State(state): State<WebRoutes>,
    Path(path): Path<String>,
    Json(body): Json<DraftBody>,
) -> Response {
    let files: Vec<String> = state
        .web
        .manager()
        .list_files()
        .await
        .into_iter()
        .map(|file| file.path)
        .collect();
    let draft = WebDraft {
        path,
        source: body.source,
        base: body.base,
    };
    let path = draft.path.clone();
    match state.web.drafts().put(draft, &files) {
        Ok(()) => Json(json!({"stored": path, "base": body.base})).into_response(),
        Err(error) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": tool_protocol::ToolCallError::from(error)})),
        )
            .into_response(),
    }
}

/// `DELETE /api/web/drafts/{path}`: the draft was saved or discarded.
async fn delete_draft(State(state): State<WebRoutes>, Path(path): Path<String>) -> Json<Value> {
    Json(json!({"removed": state.web.drafts().remove(&path)}))
}

/// `GET /api/web/state`: what `web.getWorkspace` reports, read without a trace row (the page
/// polls it on every revision event).
async fn web_state(State(state): State<WebRoutes>) -> Json<Value> {
    let view = workspace_view(&state.web).await;
    let live_since = state.web.stylesheet_run().reload_boundary(view.revision);
    let mut value = serde_json::to_value(view).unwrap_or(Value::Null);
    if let Some(object) = value.as_object_mut() {
        object.insert("liveStylesheetsSince".into(), json!(live_since));
    }
    Json(value)
}

/// `POST /api/web/preview/ack`: the page forwards its iframe's bridge message; acknowledgements
/// of any revision but the current one are ignored.
async fn preview_ack(State(state): State<WebRoutes>, Json(message): Json<Value>) -> Response {
    if let Some(response) =
        crate::kit::preview_http::runtime_error(state.web.manager().preview_acks(), &message)
    {
        return response;
    }
    let (revision, status) = match crate::kit::preview_http::acknowledgement(&message) {
        Ok(acknowledgement) => acknowledgement,
        Err(response) => return response,
    };
    let manager = state.web.manager();
    let accepted = manager.acknowledge_preview(revision, status);
    let preview = manager.preview_acks().current();
    state
        .web
        .publish(json!({"revision": preview.revision, "preview": preview}));
    Json(json!({"accepted": accepted, "revision": revision})).into_response()
}

async fn preview_document(State(state): State<WebRoutes>, Path(revision): Path<u64>) -> Response {
    let workspace = state.web.manager().snapshot().await;
    if workspace.revision() != revision {
        return crate::kit::preview_http::superseded(revision, workspace.revision());
    }
    let compile = compile_revision(&state, &workspace);
    crate::kit::preview_http::cached_document(&state.previews, "web", revision, compile).await
}

/// The compile of `workspace`'s revision that its preview document is.
fn compile_revision(
    state: &WebRoutes,
    workspace: &Workspace,
) -> impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview + Send + 'static {
    let revision = workspace.revision();
    let files: Vec<_> = workspace.files().cloned().collect();
    let key = state.security.preview_key();
    let assets = crate::kit::preview_http::asset_prefix(WEB_PREVIEW_PREFIX, revision, key);
    let options = crate::kit::preview_http::preview_options(Some(revision), assets);
    move |compiler| compiler.compile(&files, &options).into()
}

/// `GET /api/web/preview/stylesheets/{revision}?from=R`: the current revision's stylesheets
/// for a preview showing revision R that can swap them in; `409` when it must reload, `410`
/// once the revision was superseded.
async fn preview_stylesheets(
    State(state): State<WebRoutes>,
    Path(revision): Path<u64>,
    Query(query): Query<crate::kit::preview_http::StylesheetsQuery>,
) -> Response {
    let workspace = state.web.manager().snapshot().await;
    if workspace.revision() != revision {
        return crate::kit::preview_http::superseded(revision, workspace.revision());
    }
    let compile = compile_revision(&state, &workspace);
    crate::kit::preview_http::live_stylesheets(
        &state.previews,
        "web",
        state.web.stylesheet_run(),
        (query.from, revision),
        compile,
    )
    .await
}

async fn preview_asset(
    State(state): State<WebRoutes>,
    Path((revision, path)): Path<(u64, String)>,
) -> Response {
    let Some(path) =
        crate::kit::preview_http::keyed_asset_path(&path, state.security.preview_key())
    else {
        return crate::kit::preview_http::unknown_asset();
    };
    let workspace = state.web.manager().snapshot().await;
    if !state
        .web
        .stylesheet_run()
        .serves_assets_of(revision, workspace.revision())
    {
        return crate::kit::preview_http::superseded(revision, workspace.revision());
    }
    let Some(file) = workspace.file(path) else {
        return api_error(
            StatusCode::NOT_FOUND,
            "WORKSPACE_FILE_NOT_FOUND",
            "No web workspace file at that path.",
        );
    };
    crate::kit::preview_http::asset(file)
}
