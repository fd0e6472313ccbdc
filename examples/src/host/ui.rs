//! The browser UI, embedded in the binary (plain HTML, CSS and JavaScript modules).

use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "ui/"]
struct UiAssets;

/// The bytes of an embedded UI file.
pub(crate) fn asset(path: &str) -> Option<Vec<u8>> {
    UiAssets::get(path).map(|file| file.data.into_owned())
}

/// The content type of a UI file by extension.
pub(crate) fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}
