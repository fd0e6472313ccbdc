//! HTTP routes of the web-coding surface: its sandboxed preview documents (410 once superseded),
//! their assets, the page's acknowledgement forwarding and a state read for the page.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use live_code_editor::preview::PreviewOptions;
use serde_json::{Value, json};

use super::WEB_PREVIEW_PREFIX;
use super::tools::workspace_view;
use crate::host::StudioState;
use crate::host::server::api_error;

/// The surface's routes.
pub fn routes() -> Router<Arc<StudioState>> {
    Router::new()
        .route("/web/preview/{revision}", get(preview_document))
        .route("/web/preview/{revision}/assets/{*path}", get(preview_asset))
        .route("/api/web/preview/ack", post(preview_ack))
        .route("/api/web/state", get(web_state))
}

/// `GET /api/web/state`: what `web.getWorkspace` reports, read without a trace row (the page
/// polls it on every revision event).
async fn web_state(State(state): State<Arc<StudioState>>) -> Json<Value> {
    Json(serde_json::to_value(workspace_view(&state.web).await).unwrap_or(Value::Null))
}

/// `POST /api/web/preview/ack`: the page forwards its iframe's bridge message; acknowledgements
/// of any revision but the current one are ignored.
async fn preview_ack(
    State(state): State<Arc<StudioState>>,
    Json(message): Json<Value>,
) -> Response {
    let (revision, status) = match crate::host::preview_http::acknowledgement(&message) {
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

async fn preview_document(
    State(state): State<Arc<StudioState>>,
    Path(revision): Path<u64>,
) -> Response {
    let workspace = state.web.manager().snapshot().await;
    if workspace.revision() != revision {
        return crate::host::preview_http::superseded(revision, workspace.revision());
    }
    let files: Vec<_> = workspace.files().cloned().collect();
    let key = state.security.preview_key();
    let assets = crate::host::preview_http::asset_prefix(WEB_PREVIEW_PREFIX, revision, key);
    let options = PreviewOptions::preview(Some(revision), assets);
    crate::host::preview_http::cached_document(&state.previews, "web", revision, move |compiler| {
        compiler.compile(&files, &options).html
    })
    .await
}

async fn preview_asset(
    State(state): State<Arc<StudioState>>,
    Path((revision, path)): Path<(u64, String)>,
) -> Response {
    let Some(path) =
        crate::host::preview_http::keyed_asset_path(&path, state.security.preview_key())
    else {
        return crate::host::preview_http::unknown_asset();
    };
    let workspace = state.web.manager().snapshot().await;
    if workspace.revision() != revision {
        return crate::host::preview_http::superseded(revision, workspace.revision());
    }
    let Some(file) = workspace.file(path) else {
        return api_error(
            StatusCode::NOT_FOUND,
            "WORKSPACE_FILE_NOT_FOUND",
            "No web workspace file at that path.",
        );
    };
    crate::host::preview_http::asset(file)
}
