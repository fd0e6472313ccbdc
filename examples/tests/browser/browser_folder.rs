//! Folder work in a real headless Chromium: the page asks before an open would discard unsaved
//! edits (and only then lets the host discard them), says what an import skipped, and tells the
//! person when a restart kept the last session's unsaved edits. Screenshots land in
//! `$TEST_OUTPUT_DIR/browser`.

use std::path::Path;

use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};

use crate::support;
use crate::support::browser::{Browser, browser_slot};

async fn start(data: &Path, folder: Option<&Path>) -> RunningStudio {
    host::start(StudioOptions::ephemeral(data).with_folder(folder.map(Path::to_path_buf)))
        .await
        .expect("studio starts")
}

async fn page(studio: &RunningStudio) -> Browser {
    let browser = Browser::launch(1280, 800).await;
    browser.goto(&studio.url()).await;
    browser
        .wait_for(
            "the page to load",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    browser
}

async fn call(studio: &RunningStudio, name: &str, arguments: Value) -> Value {
    support::browser::studio::call_tool(&reqwest::Client::new(), studio, name, arguments).await
}

async fn source(studio: &RunningStudio, path: &str) -> String {
    let read = call(studio, "workspace.readFile", json!({"path": path})).await;
    read["structuredContent"]["source"]
        .as_str()
        .unwrap_or_else(|| panic!("readFile failed: {read}"))
        .to_owned()
}

fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "<h1>From disk</h1>").unwrap();
    std::fs::write(dir.path().join("setup.exe"), "MZ").unwrap();
    std::fs::write(dir.path().join("data.json"), "\0\0").unwrap();
    dir
}

async fn chat_text(browser: &Browser, needle: &str) -> String {
    browser
        .wait_for(
            &format!("a chat entry with {needle:?}"),
            &format!(
                "const texts = [...document.querySelectorAll('#chat-log .entry-text')].map((e) => e.textContent); return texts.find((t) => t.includes({needle:?})) ?? '';"
            ),
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_folder_over_unsaved_edits_asks_first_and_reports_what_it_skipped() {
    let _slot = browser_slot().await;
    let (data, folder) = (tempfile::tempdir().unwrap(), site());
    let studio = start(data.path(), None).await;
    let written = call(
        &studio,
        "workspace.writeFile",
        json!({"path": "README.md", "source": "# mine"}),
    )
    .await;
    assert!(written.get("isError").is_none(), "{written}");
    let browser = page(&studio).await;
    browser
        .type_into("#folder-path", &folder.path().display().to_string())
        .await;

    browser.click("#open-folder-button").await;
    browser
        .wait_for(
            "the replace confirmation",
            "return document.getElementById('confirm-dialog').open;",
        )
        .await;
    let message = browser.text("#confirm-message").await;
    assert!(message.contains("discards 1 unsaved file"), "{message}");
    browser.click("#confirm-cancel").await;
    assert_eq!(source(&studio, "README.md").await, "# mine", "cancel keeps");

    browser.click("#open-folder-button").await;
    browser
        .wait_for(
            "the replace confirmation",
            "return document.getElementById('confirm-dialog').open;",
        )
        .await;
    browser.click("#confirm-accept").await;
    browser
        .wait_for(
            "the folder link",
            "return document.getElementById('folder-badge').textContent.startsWith('folder');",
        )
        .await;
    // The badge can follow the host's event before the open's own answer sets the status line.
    let status = browser
        .wait_for(
            "the open's status line",
            "const text = document.getElementById('status-message').textContent; return text.startsWith('Opened') ? text : '';",
        )
        .await;
    let status = status.as_str().unwrap_or_default();
    assert!(
        status.contains("skipped 1 binary, 1 unsupported"),
        "{status}"
    );
    let report = chat_text(&browser, "skipped 2 entries").await;
    assert!(
        report.contains("setup.exe · unsupported file type"),
        "{report}"
    );
    assert!(report.contains("data.json · binary file"), "{report}");
    assert_eq!(source(&studio, "index.html").await, "<h1>From disk</h1>");
    browser.screenshot("folder-01-open-skipped").await;
    browser.close().await;
    studio.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_says_when_a_restart_kept_the_last_sessions_unsaved_edits() {
    let _slot = browser_slot().await;
    let (data, folder) = (tempfile::tempdir().unwrap(), site());
    let first = start(data.path(), Some(folder.path())).await;
    let written = call(
        &first,
        "workspace.writeFile",
        json!({"path": "index.html", "source": "<h1>Unsaved</h1>"}),
    )
    .await;
    assert!(written.get("isError").is_none(), "{written}");
    first.shutdown().await;

    let second = start(data.path(), Some(folder.path())).await;
    let browser = page(&second).await;
    let notice = chat_text(&browser, "unsaved change").await;
    assert!(
        notice.contains("Kept 1 unsaved change(s) from your last session (index.html)"),
        "{notice}"
    );
    let badge = browser.text("#revision-badge").await;
    assert!(badge.contains("unsaved"), "{badge}");
    browser.screenshot("folder-02-resumed").await;
    browser.close().await;
    second.shutdown().await;
}
