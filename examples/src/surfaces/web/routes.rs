//! HTTP routes of the web-coding surface: its sandboxed preview (the shared
//! [`serving`] routes under `/web/preview` and
//! `/api/web/preview`), a state read for the page and the page's drafts.

use axum::extract::{FromRef, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{IncrementalPreviewCompiler, PreviewOptions};
use live_code_editor::workspace::Workspace;
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewStatus};
use serde::Deserialize;
use serde_json::{Value, json};

use super::drafts::WebDraft;
use super::tools::workspace_view;
use super::{WEB_SURFACE, WebRoutes, WebSurface};
use crate::kit::preview_http::ServedPreview;
use crate::kit::preview_http::serving::{self, AckView, PreviewRoutes, PreviewSurface};
use crate::kit::responses::api_error;
use crate::kit::stylesheet_run::StylesheetRun;

/// The surface's routes.
pub fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    WebRoutes: FromRef<S>,
    PreviewRoutes<WebSurface>: FromRef<S>,
{
    Router::new()
        .route("/api/web/state", get(web_state))
        .route("/api/web/drafts", get(list_drafts))
        .route(
            "/api/web/drafts/{*path}",
            put(put_draft).delete(delete_draft),
        )
        .merge(serving::routes::<S, WebSurface>())
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

impl PreviewSurface for WebSurface {
    const NAME: &'static str = WEB_SURFACE;
    const PAGE: &'static str = "/web";
    type Document = Vec<WorkspaceFile>;

    async fn document(&self, revision: u64) -> Result<Vec<WorkspaceFile>, u64> {
        let workspace = self.manager().snapshot().await;
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
        let workspace = self.manager().snapshot().await;
        (workspace.revision(), workspace)
    }

    fn missing_asset() -> Response {
        api_error(
            StatusCode::NOT_FOUND,
            "WORKSPACE_FILE_NOT_FOUND",
            "No web workspace file at that path.",
        )
    }

    fn stylesheet_run(&self) -> &StylesheetRun {
        WebSurface::stylesheet_run(self)
    }

    fn preview_acks(&self) -> &PreviewAcks {
        self.manager().preview_acks()
    }

    /// Acknowledgements of any revision but the current one are ignored; the surface's pages
    /// hear of the preview state.
    async fn acknowledge(&self, revision: u64, status: PreviewStatus) -> AckView {
        let manager = self.manager();
        let accepted = manager.acknowledge_preview(revision, status);
        let preview = manager.preview_acks().current();
        self.publish(json!({"revision": preview.revision, "preview": preview}));
        AckView {
            accepted,
            revision,
            preview: None,
        }
    }
}
