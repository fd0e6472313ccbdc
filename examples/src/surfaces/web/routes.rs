//! HTTP routes of the web-coding surface: its sandboxed preview (the shared
//! [`serving`] routes under `/web/preview` and
//! `/api/web/preview`), a state read for the page and the page's drafts.

use axum::extract::{FromRef, Path, State};
use axum::routing::{get, put};
use axum::{Json, Router};
use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{IncrementalPreviewCompiler, PreviewOptions};
use live_code_editor::workspace::Workspace;
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::drafts::WebDraft;
use super::tools::{WebWorkspace, workspace_view};
use super::{WEB_SURFACE, WebRoutes, WebSurface};
use crate::kit::error::StudioError;
use crate::kit::preview_http::ServedPreview;
use crate::kit::preview_http::serving::{self, AckView, PreviewRoutes, PreviewSurface};
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
async fn list_drafts(State(state): State<WebRoutes>) -> Json<DraftsView> {
    Json(DraftsView {
        drafts: state.web.drafts().list(),
    })
}

#[derive(Serialize)]
struct DraftsView {
    drafts: Vec<WebDraft>,
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
) -> Result<Json<StoredView>, StudioError> {
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
    let stored = StoredView {
        stored: draft.path.clone(),
        base: body.base,
    };
    state
        .web
        .drafts()
        .put(draft, &files)
        .map_err(|error| StudioError::BadRequest(error.into()))?;
    Ok(Json(stored))
}

#[derive(Serialize)]
struct StoredView {
    stored: String,
    base: u64,
}

#[derive(Serialize)]
struct RemovedView {
    removed: bool,
}

/// `DELETE /api/web/drafts/{path}`: the draft was saved or discarded.
async fn delete_draft(
    State(state): State<WebRoutes>,
    Path(path): Path<String>,
) -> Json<RemovedView> {
    Json(RemovedView {
        removed: state.web.drafts().remove(&path),
    })
}

/// What `web.getWorkspace` reports, with the revision live stylesheets start from.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WebStateView {
    #[serde(flatten)]
    workspace: WebWorkspace,
    live_stylesheets_since: u64,
}

/// `GET /api/web/state`: what `web.getWorkspace` reports, read without a trace row (the page
/// polls it on every revision event).
async fn web_state(State(state): State<WebRoutes>) -> Json<WebStateView> {
    let workspace = workspace_view(&state.web).await;
    let live_stylesheets_since = state
        .web
        .stylesheet_run()
        .reload_boundary(workspace.revision);
    Json(WebStateView {
        workspace,
        live_stylesheets_since,
    })
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

    fn missing_asset() -> StudioError {
        StudioError::not_found(
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
