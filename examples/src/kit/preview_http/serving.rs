//! The one set of preview routes every surface mounts: its documents
//! (`{page}/preview/{revision}`, `410 Gone` once superseded), their keyed assets, the page's
//! forwarded acknowledgements (`/api{page}/preview/ack`) and live stylesheets
//! (`/api{page}/preview/stylesheets/{revision}?from=R`). What differs between surfaces (where
//! a document comes from, how it compiles, how an acknowledgement is taken) is their
//! [`PreviewSurface`] implementation.

use std::future::Future;
use std::sync::Arc;

use axum::extract::{FromRef, Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use live_code_editor::preview::{
    IncrementalPreviewCompiler, PreviewBridgeMessage, PreviewOptions, parse_bridge_message,
    parse_runtime_error_message,
};
use live_code_editor::workspace::Workspace;
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewState, PreviewStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::cache::{PreviewDocuments, ServedPreview};
use super::{
    STUDIO_PREVIEW_RELOAD_REQUIRED, asset, asset_prefix, keyed_asset_path, preview_options,
    superseded, unknown_asset,
};
use crate::kit::error::StudioError;
use crate::kit::security::SecurityPolicy;
use crate::kit::stylesheet_run::StylesheetRun;

/// A surface whose preview the studio serves.
pub trait PreviewSurface: Send + Sync + 'static {
    /// The surface's wire name, also its slot in the [`PreviewDocuments`] cache.
    const NAME: &'static str;
    /// Where its page lives (`""` for the workspace on `/`, `/editor`, `/web`): its documents
    /// are under `{PAGE}/preview/` and its preview API under `/api{PAGE}/preview/`.
    const PAGE: &'static str;
    /// What one preview revision's document is compiled from.
    type Document: Send + 'static;

    /// The document of preview revision `revision`, or the current revision when `revision`
    /// was superseded.
    fn document(&self, revision: u64) -> impl Future<Output = Result<Self::Document, u64>> + Send;

    /// Compiles `document` with `options` into what the cache serves.
    fn compile(
        document: Self::Document,
        compiler: &mut IncrementalPreviewCompiler,
        options: &PreviewOptions,
    ) -> ServedPreview;

    /// The current preview revision (asked for the assets of `revision`) and the workspace
    /// its assets come from.
    fn asset_source(&self, revision: u64) -> impl Future<Output = (u64, Workspace)> + Send;

    /// The `404` answer for an asset path the workspace lacks.
    fn missing_asset() -> StudioError;

    /// The published revisions that differ in stylesheets only.
    fn stylesheet_run(&self) -> &StylesheetRun;

    /// The preview's acknowledgements and runtime error reports.
    fn preview_acks(&self) -> &PreviewAcks;

    /// Takes a page's acknowledgement of `revision` (a stale one is ignored) and answers it.
    fn acknowledge(
        &self,
        revision: u64,
        status: PreviewStatus,
    ) -> impl Future<Output = AckView> + Send;
}

/// The answer to a forwarded bridge message: whether it was taken, and (on surfaces whose page
/// reads it back) the preview state after it.
#[derive(Debug, Serialize)]
pub struct AckView {
    /// Whether the acknowledgement (or runtime error report) was about the current revision.
    pub accepted: bool,
    /// The revision it was about.
    pub revision: u64,
    /// The preview state after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<PreviewState>,
}

/// What the preview routes of surface `P` need from the host that mounts them.
#[derive(Debug)]
pub struct PreviewRoutes<P> {
    /// The surface.
    pub surface: Arc<P>,
    /// The studio's compiled-preview cache (one slot per surface).
    pub previews: Arc<PreviewDocuments>,
    /// The security layer (the preview key in asset URLs).
    pub security: SecurityPolicy,
}

impl<P> Clone for PreviewRoutes<P> {
    fn clone(&self) -> Self {
        Self {
            surface: Arc::clone(&self.surface),
            previews: Arc::clone(&self.previews),
            security: self.security.clone(),
        }
    }
}

/// The preview routes of surface `P`, on any host state its [`PreviewRoutes`] can be taken
/// from.
pub fn routes<S, P>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    P: PreviewSurface,
    PreviewRoutes<P>: FromRef<S>,
{
    let page = P::PAGE;
    Router::new()
        .route(
            &format!("{page}/preview/{{revision}}"),
            get(preview_document::<P>),
        )
        .route(
            &format!("{page}/preview/{{revision}}/assets/{{*path}}"),
            get(preview_asset::<P>),
        )
        .route(&format!("/api{page}/preview/ack"), post(preview_ack::<P>))
        .route(
            &format!("/api{page}/preview/stylesheets/{{revision}}"),
            get(preview_stylesheets::<P>),
        )
}

/// The compile of `document`, surface `P`'s preview revision `revision`, its assets under the
/// `key`ed asset route.
pub fn compile_for<P: PreviewSurface>(
    document: P::Document,
    revision: u64,
    key: &str,
) -> impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview + Send + 'static + use<P> {
    let assets = asset_prefix(&format!("{}/preview", P::PAGE), revision, key);
    let options = preview_options(Some(revision), assets);
    move |compiler| P::compile(document, compiler, &options)
}

/// `GET {page}/preview/{revision}`: the compiled document of the current revision (compiled
/// once, then served from the cache); `410 Gone` once it was superseded.
async fn preview_document<P: PreviewSurface>(
    State(routes): State<PreviewRoutes<P>>,
    Path(revision): Path<u64>,
) -> Result<Response, StudioError> {
    let document = match routes.surface.document(revision).await {
        Ok(document) => document,
        Err(current) => return Ok(superseded(revision, current)),
    };
    let compile = compile_for::<P>(document, revision, routes.security.preview_key());
    let served = routes
        .previews
        .get_or_compile(P::NAME, revision, compile)
        .await
        .ok_or_else(compiler_failed)?;
    Ok(super::document(served.html.clone()))
}

/// The query of the stylesheet route: `?from=R`, the revision the asking preview shows.
#[derive(Debug, Deserialize)]
struct StylesheetsQuery {
    from: u64,
}

/// The stylesheets a preview showing revision `from` swaps in to show revision `to`.
#[derive(Debug, Serialize)]
struct StylesheetsView<'a> {
    revision: u64,
    from: u64,
    stylesheets: &'a [Arc<str>],
}

/// `GET /api{page}/preview/stylesheets/{revision}?from=R`: the current revision's stylesheets
/// for a preview showing revision R that can swap them in; `409` when it must reload, `410`
/// once the revision was superseded.
async fn preview_stylesheets<P: PreviewSurface>(
    State(routes): State<PreviewRoutes<P>>,
    Path(revision): Path<u64>,
    Query(query): Query<StylesheetsQuery>,
) -> Result<Response, StudioError> {
    let document = match routes.surface.document(revision).await {
        Ok(document) => document,
        Err(current) => return Ok(superseded(revision, current)),
    };
    let compile = compile_for::<P>(document, revision, routes.security.preview_key());
    live_stylesheets(
        &routes.previews,
        P::NAME,
        routes.surface.stylesheet_run(),
        (query.from, revision),
        compile,
    )
    .await
}

/// The stylesheets of `surface`'s revision `to` for a preview that shows revision `from`, as
/// `{revision, from, stylesheets}`, compiled (once, into the same cache slot as the document)
/// by `compile`. `409` [`STUDIO_PREVIEW_RELOAD_REQUIRED`] when something other than
/// stylesheets changed since `from` (per `run`) or the revision's styles need a reload.
async fn live_stylesheets(
    previews: &PreviewDocuments,
    surface: &'static str,
    run: &StylesheetRun,
    (from, to): (u64, u64),
    compile: impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview + Send + 'static,
) -> Result<Response, StudioError> {
    if !run.live_from(from, to) {
        return Err(reload_required(from, to));
    }
    let served = previews
        .get_or_compile(surface, to, compile)
        .await
        .ok_or_else(compiler_failed)?;
    let stylesheets = served
        .stylesheets
        .as_deref()
        .ok_or_else(|| reload_required(from, to))?;
    let view = StylesheetsView {
        revision: to,
        from,
        stylesheets,
    };
    Ok(Json(view).into_response())
}

fn reload_required(from: u64, to: u64) -> StudioError {
    StudioError::conflict(
        STUDIO_PREVIEW_RELOAD_REQUIRED,
        format!(
            "Revision {to} changed more than stylesheets since revision {from}; reload the preview."
        ),
    )
}

fn compiler_failed() -> StudioError {
    StudioError::internal(
        "STUDIO_PREVIEW_FAILED",
        "The preview compiler stopped unexpectedly.",
    )
}

/// `GET {page}/preview/{revision}/assets/{key}/{path}`: a workspace file, also for a
/// superseded revision whose document took newer stylesheets in place (it still loads its own
/// revision's asset URLs, and no asset changed since); `410 Gone` otherwise.
async fn preview_asset<P: PreviewSurface>(
    State(routes): State<PreviewRoutes<P>>,
    Path((revision, path)): Path<(u64, String)>,
) -> Result<Response, StudioError> {
    let path = keyed_asset_path(&path, routes.security.preview_key()).ok_or_else(unknown_asset)?;
    let (current, workspace) = routes.surface.asset_source(revision).await;
    if !routes
        .surface
        .stylesheet_run()
        .serves_assets_of(revision, current)
    {
        return Ok(superseded(revision, current));
    }
    let file = workspace.file(path).ok_or_else(P::missing_asset)?;
    Ok(asset(file))
}

/// `POST /api{page}/preview/ack`: the page forwards its iframe's bridge message (an
/// acknowledgement or a runtime error report); stale revisions are ignored
/// (`accepted: false`), and a body that is no bridge message is a coded `400`.
async fn preview_ack<P: PreviewSurface>(
    State(routes): State<PreviewRoutes<P>>,
    Json(message): Json<Value>,
) -> Result<Json<AckView>, StudioError> {
    if let Some(error) = parse_runtime_error_message(&message) {
        let revision = error.revision;
        let accepted = routes.surface.preview_acks().record_runtime_error(error);
        return Ok(Json(AckView {
            accepted,
            revision,
            preview: None,
        }));
    }
    let (revision, status) = match parse_bridge_message(&message) {
        Some(PreviewBridgeMessage::Ready { revision }) => (revision, PreviewStatus::Ready),
        Some(PreviewBridgeMessage::Error { revision, message }) => {
            (revision, PreviewStatus::Error { message })
        }
        None => {
            return Err(StudioError::bad_request(
                "STUDIO_INVALID_PREVIEW_MESSAGE",
                "Not a preview bridge message.",
            ));
        }
    };
    Ok(Json(routes.surface.acknowledge(revision, status).await))
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use live_code_editor::WorkspaceFile;
    use serde_json::json;

    use super::*;

    fn site(color: &str) -> Vec<WorkspaceFile> {
        vec![
            WorkspaceFile::text("index.html", "<link rel=stylesheet href=a.css><h1>Hi</h1>"),
            WorkspaceFile::text("a.css", format!("h1 {{ color: {color} }}")),
        ]
    }

    async fn stylesheets_of(
        previews: &PreviewDocuments,
        run: &StylesheetRun,
        from: u64,
        to: u64,
    ) -> (StatusCode, Value) {
        let files = site("#00ff00");
        let options = PreviewOptions::preview(Some(to), "/assets/");
        let response = live_stylesheets(previews, "web", run, (from, to), move |compiler| {
            compiler.compile(&files, &options).into()
        })
        .await
        .into_response();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, serde_json::from_slice(&body).unwrap())
    }

    #[tokio::test]
    async fn stylesheets_are_served_only_within_a_stylesheet_run() {
        use live_code_editor::workspace::bridge::PreviewSnapshot;
        let snapshot = |revision, color: &str| PreviewSnapshot {
            revision,
            files: site(color).into_iter().map(Arc::new).collect(),
        };
        let previews = PreviewDocuments::default();
        let run = StylesheetRun::default();
        run.record(&snapshot(1, "#ff0000"));
        run.record(&snapshot(2, "#00ff00"));
        let (status, body) = stylesheets_of(&previews, &run, 1, 2).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            body,
            json!({"revision": 2, "from": 1, "stylesheets": ["h1 { color: #00ff00 }"]})
        );
        let (status, body) = stylesheets_of(&previews, &run, 0, 2).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert_eq!(body["error"]["code"], STUDIO_PREVIEW_RELOAD_REQUIRED);
        let mut html = site("#00ff00");
        html[0] = WorkspaceFile::text("index.html", "<link rel=stylesheet href=a.css><h2>");
        run.record(&PreviewSnapshot {
            revision: 3,
            files: html.into_iter().map(Arc::new).collect(),
        });
        let (status, _) = stylesheets_of(&previews, &run, 2, 3).await;
        assert_eq!(status, StatusCode::CONFLICT, "an HTML edit reloads");
    }
}
