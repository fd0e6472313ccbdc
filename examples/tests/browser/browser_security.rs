//! Another origin attacks a running studio in a real headless Chromium: it frames the studio
//! page (clickjacking) and loads a workspace file as a script (cross-origin read). Both are
//! blocked, while the studio's own sandboxed preview still loads its assets.

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};

use crate::support::browser::{Browser, browser_slot};

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x56, 0xd3, 0x5d, 0x5a, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

async fn studio_with_site(data: &std::path::Path) -> (RunningStudio, tempfile::TempDir) {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(
        folder.path().join("index.html"),
        "<h1>Site</h1><img id=logo src=logo.png><script src=app.js></script>",
    )
    .unwrap();
    std::fs::write(
        folder.path().join("app.js"),
        "var secretValue = 'from the workspace';",
    )
    .unwrap();
    std::fs::write(folder.path().join("logo.png"), PNG).unwrap();
    let studio = host::start(StudioOptions::ephemeral(data).with_folder(folder.path().to_owned()))
        .await
        .expect("studio starts");
    (studio, folder)
}

/// Serves `html` at `/` on another loopback port: another origin, as an attacker's page is.
async fn attacker_page(html: String) -> String {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Router::new().route("/", get(move || async move { Html(html) }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/")
}

async fn revision(studio: &RunningStudio) -> u64 {
    let state: Value = reqwest::get(format!("{}api/state", studio.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    state["status"]["revision"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_origin_can_neither_frame_the_studio_nor_run_its_files() {
    let _slot = browser_slot().await;
    let data = tempfile::tempdir().unwrap();
    let (studio, _folder) = studio_with_site(data.path()).await;
    let base = studio.url();
    let rev = revision(&studio).await;
    let attacker = attacker_page(format!(
        "<iframe id=framed src=\"{base}\" width=800 height=600></iframe>\
         <iframe id=preview src=\"{base}preview/{rev}\"></iframe>\
         <script>window.loaded = []; window.failed = [];</script>\
         <script src=\"{base}preview/{rev}/assets/app.js\" onload=\"loaded.push('app.js')\" onerror=\"failed.push('app.js')\"></script>"
    ))
    .await;
    let browser = Browser::launch(1280, 800).await;
    browser.goto(&attacker).await;
    browser
        .wait_for(
            "the script attempt to settle",
            "return window.loaded.length + window.failed.length;",
        )
        .await;
    assert_eq!(
        browser
            .eval("return typeof window.secretValue;", json!([]))
            .await,
        "undefined",
        "the workspace file did not run on another origin"
    );
    assert_eq!(
        browser.eval("return window.failed;", json!([])).await,
        json!(["app.js"])
    );
    // Give both frames time to load, then count what they rendered: a blocked frame holds an
    // error page with no frames of its own, the studio page would hold its preview iframe.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let framed_children = browser
        .eval(
            "return document.getElementById('framed').contentWindow.length;",
            json!([]),
        )
        .await;
    assert_eq!(
        framed_children, 0,
        "the studio page is not framed elsewhere"
    );
    browser.screenshot("security-01-framing-refused").await;
    browser.close().await;
    studio.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studios_own_sandboxed_preview_still_loads_its_assets() {
    let _slot = browser_slot().await;
    let data = tempfile::tempdir().unwrap();
    let (studio, _folder) = studio_with_site(data.path()).await;
    let browser = Browser::launch(1280, 800).await;
    browser.goto(&studio.url()).await;
    let rev = revision(&studio).await;
    browser
        .wait_for(
            "the preview to acknowledge",
            &format!(
                "return document.getElementById('preview-status').textContent === 'revision {rev} ready';"
            ),
        )
        .await;
    browser.enter_frame("#preview").await;
    let loaded = browser
        .wait_for(
            "the image asset",
            "const logo = document.getElementById('logo'); return logo && logo.complete && logo.naturalWidth;",
        )
        .await;
    assert_eq!(loaded, 1);
    assert_eq!(
        browser
            .eval("return typeof window.secretValue;", json!([]))
            .await,
        "string",
        "the preview's own script ran"
    );
    browser.leave_frame().await;
    browser.close().await;
    studio.shutdown().await;
}
