//! HTTP responses of preview documents and their assets, shared by the three surfaces' preview
//! routes (`/preview/…`, `/editor/preview/…`, `/web/preview/…`), and of the standalone export.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use live_code_editor::WorkspaceFile;
use live_code_editor::file::FileContent;
use live_code_editor::preview::{
    CompiledPreview, IncrementalPreviewCompiler, PreviewBridgeMessage, PreviewOptions,
    parse_bridge_message, parse_runtime_error_message,
};
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewStatus};
use serde_json::{Value, json};
use tokio::sync::OnceCell;

use super::bridge::StylesheetRun;
use super::responses::api_error;

/// A compiled preview revision as the cache keeps it: the document, and the stylesheets a
/// running preview of an earlier revision swaps in (`None`: only a reload shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedPreview {
    /// The document (shared bytes: serving it again copies nothing).
    pub html: Bytes,
    /// [`CompiledPreview::stylesheets`] of the compile.
    pub stylesheets: Option<Vec<Arc<str>>>,
}

impl ServedPreview {
    /// A document that can only be reloaded (for example one the host rewrote after compiling).
    pub fn reload_only(html: String) -> Self {
        Self {
            html: Bytes::from(html),
            stylesheets: None,
        }
    }
}

impl From<CompiledPreview> for ServedPreview {
    fn from(compiled: CompiledPreview) -> Self {
        Self {
            html: Bytes::from(compiled.html),
            stylesheets: compiled.stylesheets,
        }
    }
}

/// Import edges the studio's previews follow. The reference's 32 stop a TypeScript/JSX app at
/// about a dozen components (each module's JSX runtime import counts too); the workspace's own
/// bounds (its files and bytes, the output budget) bound the work instead.
pub const STUDIO_MAX_MODULE_IMPORT_EDGES: usize = 4_096;

/// A studio preview of `revision` with assets under `asset_base`.
pub fn preview_options(revision: Option<u64>, asset_base: impl Into<String>) -> PreviewOptions {
    PreviewOptions::preview(revision, asset_base)
        .with_max_module_import_edges(STUDIO_MAX_MODULE_IMPORT_EDGES)
}

/// The studio's standalone export.
pub fn export_options() -> PreviewOptions {
    PreviewOptions::export().with_max_module_import_edges(STUDIO_MAX_MODULE_IMPORT_EDGES)
}

/// The error code of a stylesheet request the preview can only answer by reloading.
pub const STUDIO_PREVIEW_RELOAD_REQUIRED: &str = "STUDIO_PREVIEW_RELOAD_REQUIRED";

/// Content-Security-Policy header of preview documents: always sandboxed (even when opened
/// directly), framed only by the studio itself, scripts only inline or from the bootstrap's
/// Blob URLs, no network.
pub const PREVIEW_CSP: &str = "sandbox allow-scripts; frame-ancestors 'self'; default-src 'none'; script-src 'unsafe-inline' blob:; style-src 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'none'; form-action 'none'; base-uri 'none'";

/// The revision and status a page's forwarded iframe bridge message reports, or the coded
/// `400` answer when it is not a bridge message.
pub fn acknowledgement(message: &Value) -> Result<(u64, PreviewStatus), Response> {
    match parse_bridge_message(message) {
        Some(PreviewBridgeMessage::Ready { revision }) => Ok((revision, PreviewStatus::Ready)),
        Some(PreviewBridgeMessage::Error { revision, message }) => {
            Ok((revision, PreviewStatus::Error { message }))
        }
        None => Err(api_error(
            StatusCode::BAD_REQUEST,
            "STUDIO_INVALID_PREVIEW_MESSAGE",
            "Not a preview bridge message.",
        )),
    }
}

/// The answer to a page's forwarded runtime error report (kept by `acks` when it is about the
/// current revision), or `None` when `message` is not one.
pub fn runtime_error(acks: &PreviewAcks, message: &Value) -> Option<Response> {
    let error = parse_runtime_error_message(message)?;
    let revision = error.revision;
    let accepted = acks.record_runtime_error(error);
    Some(Json(json!({"accepted": accepted, "revision": revision})).into_response())
}

/// A compiled preview document: sandboxed by its CSP even when opened directly, never cached.
pub fn document(html: impl Into<Body>) -> Response {
    let mut response = (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        html.into(),
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PREVIEW_CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::X_FRAME_OPTIONS,
        HeaderValue::from_static("SAMEORIGIN"),
    );
    headers.insert(
        CROSS_ORIGIN_RESOURCE_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

/// No other site may load a preview document or asset (`<script src>` of a workspace file on
/// another origin would run it and expose its top-level values).
const CROSS_ORIGIN_RESOURCE_POLICY: &str = "cross-origin-resource-policy";

/// The document of `surface` at `revision` from `previews` (compiled by `compile` with the
/// surface's incremental compiler the first time), or the coded `500` when the compiler
/// panicked.
pub async fn cached_document(
    previews: &PreviewDocuments,
    surface: &'static str,
    revision: u64,
    compile: impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview + Send + 'static,
) -> Response {
    match previews.get_or_compile(surface, revision, compile).await {
        Some(served) => document(served.html.clone()),
        None => compiler_failed(),
    }
}

fn compiler_failed() -> Response {
    api_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "STUDIO_PREVIEW_FAILED",
        "The preview compiler stopped unexpectedly.",
    )
}

/// The query of every surface's stylesheet route: `?from=R`, the revision the asking preview
/// shows.
#[derive(Debug, serde::Deserialize)]
pub struct StylesheetsQuery {
    /// The revision the preview shows.
    pub from: u64,
}

/// The stylesheets of `surface`'s revision `to` for a preview that shows revision `from`, as
/// `{revision, from, stylesheets}`, compiled (once, into the same cache slot as the document)
/// by `compile`. `409` [`STUDIO_PREVIEW_RELOAD_REQUIRED`] when something other than
/// stylesheets changed since `from` (per `run`) or the revision's styles need a reload.
pub async fn live_stylesheets(
    previews: &PreviewDocuments,
    surface: &'static str,
    run: &StylesheetRun,
    (from, to): (u64, u64),
    compile: impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview + Send + 'static,
) -> Response {
    if !run.live_from(from, to) {
        return reload_required(from, to);
    }
    match previews.get_or_compile(surface, to, compile).await {
        Some(served) => match &served.stylesheets {
            Some(stylesheets) => {
                Json(json!({"revision": to, "from": from, "stylesheets": stylesheets}))
                    .into_response()
            }
            None => reload_required(from, to),
        },
        None => compiler_failed(),
    }
}

fn reload_required(from: u64, to: u64) -> Response {
    api_error(
        StatusCode::CONFLICT,
        STUDIO_PREVIEW_RELOAD_REQUIRED,
        &format!(
            "Revision {to} changed more than stylesheets since revision {from}; reload the preview."
        ),
    )
}

/// `410 Gone` for a preview revision a newer one replaced.
pub fn superseded(revision: u64, current: u64) -> Response {
    let body = format!("Preview revision {revision} was superseded by revision {current}.");
    (
        StatusCode::GONE,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Where the document of `revision` under `preview_path` (`/preview`, `/editor/preview`,
/// `/web/preview`) finds its assets: `<preview_path>/<revision>/assets/<key>/`.
pub fn asset_prefix(preview_path: &str, revision: u64, key: &str) -> String {
    format!("{preview_path}/{revision}/assets/{key}/")
}

/// The workspace path of an asset request (`<key>/<path>`), or `None` without the key.
pub fn keyed_asset_path<'a>(requested: &'a str, key: &str) -> Option<&'a str> {
    requested
        .strip_prefix(key)
        .and_then(|rest| rest.strip_prefix('/'))
}

/// `404` for an asset request without the preview key: it says nothing about what exists.
pub fn unknown_asset() -> Response {
    api_error(
        StatusCode::NOT_FOUND,
        "STUDIO_NOT_FOUND",
        "Nothing is served at this path.",
    )
}

/// One workspace file as a preview asset, with its own MIME type and the preview's CSP.
pub fn asset(file: &WorkspaceFile) -> Response {
    let (content_type, bytes) = match &file.content {
        FileContent::Asset { bytes, mime_type } => (mime_type.clone(), bytes.clone()),
        FileContent::Text { source } => (
            file.language.mime_type().to_owned(),
            source.as_bytes().to_vec(),
        ),
    };
    Response::builder()
        .header(header::CONTENT_TYPE, content_type)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CONTENT_SECURITY_POLICY, PREVIEW_CSP)
        // The sandboxed preview's requests come from an opaque origin, which `same-origin`
        // would refuse; the preview key in the URL keeps other sites out instead.
        .header(CROSS_ORIGIN_RESOURCE_POLICY, "cross-origin")
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from(bytes))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Compiled preview documents, the latest revision of each surface only, so a document is
/// compiled once per revision however often (or however many tabs) request it: an
/// unauthenticated `GET /preview/{rev}` must not be a way to make the host compile again. The
/// cache holds one document per surface (a new revision replaces the old one), and each
/// surface keeps one [`IncrementalPreviewCompiler`], so a revision that changed one file
/// parses only that file again.
#[derive(Debug, Default)]
pub struct PreviewDocuments {
    slots: Mutex<HashMap<&'static str, DocumentSlot>>,
    compilers: Mutex<HashMap<&'static str, SharedCompiler>>,
    compiles: AtomicU64,
}

/// One surface's cached revision and its document (filled by the first request).
type DocumentSlot = (u64, Arc<OnceCell<Arc<ServedPreview>>>);

/// A surface's incremental compiler, used by one blocking compile at a time.
type SharedCompiler = Arc<Mutex<IncrementalPreviewCompiler>>;

impl PreviewDocuments {
    /// The document of `surface` at `revision`, compiled by `compile` with the surface's
    /// incremental compiler on a blocking thread the first time it is asked for; concurrent
    /// requests wait for that one compile. `None` when the compiler panicked (the next request
    /// tries again, with a fresh compiler).
    pub async fn get_or_compile(
        &self,
        surface: &'static str,
        revision: u64,
        compile: impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview + Send + 'static,
    ) -> Option<Arc<ServedPreview>> {
        let cell = self.slot(surface, revision);
        let compiler = self.compiler(surface);
        cell.get_or_try_init(|| async {
            self.compiles.fetch_add(1, Ordering::Relaxed);
            tokio::task::spawn_blocking(move || compile(&mut lock_compiler(&compiler)))
                .await
                .map(Arc::new)
        })
        .await
        .ok()
        .cloned()
    }

    /// [`Self::get_or_compile`] on the calling thread, for a caller that cannot wait (the
    /// preview bridge compiles a stylesheet-only revision while announcing it): the result
    /// fills the same cache slot, so serving the revision afterwards compiles nothing.
    pub fn compile_now(
        &self,
        surface: &'static str,
        revision: u64,
        compile: impl FnOnce(&mut IncrementalPreviewCompiler) -> ServedPreview,
    ) -> Option<Arc<ServedPreview>> {
        let cell = self.slot(surface, revision);
        if let Some(served) = cell.get() {
            return Some(Arc::clone(served));
        }
        let compiler = self.compiler(surface);
        self.compiles.fetch_add(1, Ordering::Relaxed);
        // A panicking compile poisons the compiler's lock, so the next one starts afresh.
        let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            compile(&mut lock_compiler(&compiler))
        }))
        .ok()?;
        let served = Arc::new(compiled);
        // A request compiling the same revision meanwhile produced the same document.
        let _ = cell.set(Arc::clone(&served));
        Some(served)
    }

    fn compiler(&self, surface: &'static str) -> SharedCompiler {
        let mut compilers = self
            .compilers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Arc::clone(compilers.entry(surface).or_default())
    }

    /// How many compiles ran (tests and diagnostics).
    pub fn compiles(&self) -> u64 {
        self.compiles.load(Ordering::Relaxed)
    }

    fn slot(&self, surface: &'static str, revision: u64) -> Arc<OnceCell<Arc<ServedPreview>>> {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let slot = slots
            .entry(surface)
            .or_insert_with(|| (revision, Arc::default()));
        if slot.0 != revision {
            *slot = (revision, Arc::default());
        }
        Arc::clone(&slot.1)
    }
}

/// Locks an incremental compiler; after a compile panicked midway it starts over with a fresh
/// one rather than trust what the interrupted compile left behind.
pub fn lock_compiler(
    compiler: &Mutex<IncrementalPreviewCompiler>,
) -> MutexGuard<'_, IncrementalPreviewCompiler> {
    let guard = compiler.lock().unwrap_or_else(|poisoned| {
        let mut guard = poisoned.into_inner();
        *guard = IncrementalPreviewCompiler::new();
        guard
    });
    compiler.clear_poison();
    guard
}

/// The error code of an export the output limit cut short.
pub const STUDIO_EXPORT_OUTPUT_LIMIT: &str = "STUDIO_EXPORT_OUTPUT_LIMIT";

/// The standalone export as a download, or a coded `422` when the output limit left content
/// out: the file would look complete while missing stylesheets, scripts or assets.
pub fn export(compiled: CompiledPreview) -> Response {
    if compiled.output_limited() {
        return api_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            STUDIO_EXPORT_OUTPUT_LIMIT,
            "The export exceeds the output limit; content was left out.",
        );
    }
    let mut response = (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        compiled.html,
    )
        .into_response();
    response.headers_mut().insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"standalone.html\""),
    );
    response
}

#[cfg(test)]
mod tests {
    use live_code_editor::preview::{PreviewOptions, compile_preview};

    use super::*;

    async fn exported(max_output_bytes: usize) -> (StatusCode, String) {
        let files = [
            WorkspaceFile::text("index.html", "<script src=a.js></script>"),
            WorkspaceFile::text("a.js", "12345"),
        ];
        let mut options = PreviewOptions::export();
        options.max_output_bytes = max_output_bytes;
        let response = export(compile_preview(&files, &options));
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    fn site(color: &str) -> Vec<WorkspaceFile> {
        vec![
            WorkspaceFile::text("index.html", "<link rel=stylesheet href=a.css><h1>Hi</h1>"),
            WorkspaceFile::text("a.css", format!("h1 {{ color: {color} }}")),
        ]
    }

    async fn serve(previews: &PreviewDocuments, surface: &'static str, revision: u64) -> String {
        let files = site(&format!("#{revision:06}"));
        let options = PreviewOptions::preview(Some(revision), "/assets/");
        let html = previews
            .get_or_compile(surface, revision, move |compiler| {
                compiler.compile(&files, &options).into()
            })
            .await
            .expect("a document");
        String::from_utf8(html.html.to_vec()).expect("UTF-8 document")
    }

    #[tokio::test]
    async fn a_revision_served_twice_compiles_once_and_each_surface_keeps_one_document() {
        let previews = PreviewDocuments::default();
        let first = serve(&previews, "editor", 1).await;
        assert_eq!(serve(&previews, "editor", 1).await, first);
        assert_eq!(
            previews.compiles(),
            1,
            "the second request is served from the cache"
        );
        serve(&previews, "web", 1).await;
        assert_eq!(previews.compiles(), 2, "surfaces are cached apart");
        let second = serve(&previews, "editor", 2).await;
        let files = site("#000002");
        let full = compile_preview(&files, &PreviewOptions::preview(Some(2), "/assets/"));
        assert_eq!(
            second, full.html,
            "the incremental compile equals a full one"
        );
        assert_eq!(previews.compiles(), 3);
        serve(&previews, "editor", 1).await;
        assert_eq!(
            previews.compiles(),
            4,
            "a surface keeps only its latest revision, so the cache stays bounded"
        );
        assert_eq!(previews.slots.lock().unwrap().len(), 2);
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
        .await;
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

    #[tokio::test]
    async fn a_revision_compiled_now_is_served_from_the_cache() {
        let previews = PreviewDocuments::default();
        let files = site("#000001");
        let options = PreviewOptions::preview(Some(1), "/assets/");
        let now = previews
            .compile_now("editor", 1, move |compiler| {
                compiler.compile(&files, &options).into()
            })
            .expect("a document");
        assert_eq!(
            now.stylesheets,
            Some(vec![Arc::from("h1 { color: #000001 }")])
        );
        assert_eq!(
            serve(&previews, "editor", 1).await.as_bytes(),
            &now.html[..]
        );
        assert_eq!(
            previews.compiles(),
            1,
            "served from the slot compile_now filled"
        );
        assert!(
            previews
                .compile_now("editor", 2, |_| panic!("compiler bug"))
                .is_none()
        );
        assert!(serve(&previews, "editor", 2).await.contains("#000002"));
    }

    #[tokio::test]
    async fn a_panicking_compile_is_retried_with_a_fresh_compiler() {
        let previews = PreviewDocuments::default();
        let failed = previews
            .get_or_compile("editor", 1, |_| panic!("compiler bug"))
            .await;
        assert!(failed.is_none());
        assert!(serve(&previews, "editor", 1).await.contains("#000001"));
    }

    #[tokio::test]
    async fn an_export_the_output_limit_cuts_short_is_a_coded_error() {
        let (status, body) = exported(5).await;
        assert_eq!(status, StatusCode::OK, "the script fits exactly");
        assert!(body.contains("12345"));
        let (status, body) = exported(4).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "one byte over");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["error"]["code"], STUDIO_EXPORT_OUTPUT_LIMIT);
    }
}
