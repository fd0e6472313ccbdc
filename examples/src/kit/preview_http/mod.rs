//! HTTP responses of preview documents and their assets, shared by the three surfaces' preview
//! routes (`/preview/…`, `/editor/preview/…`, `/web/preview/…`), and of the standalone export.
//! [`serving`] is the one set of preview routes every surface mounts; `cache` compiles each
//! surface's latest revision once.

pub(crate) mod cache;
pub mod serving;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use live_code_editor::WorkspaceFile;
use live_code_editor::file::FileContent;
use live_code_editor::preview::{CompiledPreview, PreviewOptions};

use super::error::StudioError;

pub use cache::{PreviewDocuments, ServedPreview, lock_compiler};
pub use serving::PreviewRoutes;

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
/// directly), framed only by the studio itself, scripts only inline, from the bootstrap's Blob
/// URLs or the compiler's `data:` modules (a blocked or missing import is such a module that
/// throws its explanation; blocking it too would only say "Script failed to load"), no network.
/// `data:` adds nothing inline scripts cannot already do.
pub const PREVIEW_CSP: &str = "sandbox allow-scripts; frame-ancestors 'self'; default-src 'none'; script-src 'unsafe-inline' blob: data:; style-src 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'none'; form-action 'none'; base-uri 'none'";

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
pub fn unknown_asset() -> StudioError {
    StudioError::not_found("STUDIO_NOT_FOUND", "Nothing is served at this path.")
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

/// The error code of an export the output limit cut short.
pub const STUDIO_EXPORT_OUTPUT_LIMIT: &str = "STUDIO_EXPORT_OUTPUT_LIMIT";

/// The standalone export as a download, or a coded `422` when the output limit left content
/// out: the file would look complete while missing stylesheets, scripts or assets.
pub fn export(compiled: CompiledPreview) -> Result<Response, StudioError> {
    if compiled.output_limited() {
        return Err(StudioError::unprocessable(
            STUDIO_EXPORT_OUTPUT_LIMIT,
            "The export exceeds the output limit; content was left out.",
        ));
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
    Ok(response)
}

#[cfg(test)]
mod tests {
    use live_code_editor::preview::compile_preview;
    use serde_json::Value;

    use super::*;

    async fn exported(max_output_bytes: usize) -> (StatusCode, String) {
        let files = [
            WorkspaceFile::text("index.html", "<script src=a.js></script>"),
            WorkspaceFile::text("a.js", "12345"),
        ];
        let mut options = PreviewOptions::export();
        options.max_output_bytes = max_output_bytes;
        let response = export(compile_preview(&files, &options)).into_response();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
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
