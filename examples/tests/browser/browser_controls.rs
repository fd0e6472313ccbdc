//! Controls that guard work in a real headless Chromium (through ChromeDriver): destructive tools
//! in the Tools tabs of `/` and `/editor` ask in the page's dialog first. Screenshots land in `$TEST_OUTPUT_DIR/browser`.

use serde_json::{Value, json};

use crate::support::browser::{keys, suite::SuitePage};

/// A running studio, its data directory and a browser on its page.
type Session = SuitePage<Suite>;
/// Marks this suite's helpers on [`SuitePage`].
enum Suite {}

impl Session {
    /// Opens the page at `path` (`""` for `/`, `"editor"` for `/editor`).
    async fn open(width: u32, height: u32, path: &str) -> Self {
        Self::start(width, height, path).await
    }

    /// The workspace's file paths, read through the registry.
    async fn paths(&self) -> Vec<String> {
        let result = self.call_tool("workspace.listFiles", json!({})).await;
        result["structuredContent"]["files"]
            .as_array()
            .unwrap_or_else(|| panic!("listFiles failed: {result}"))
            .iter()
            .map(|file| file["path"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    async fn dialog_open(&self, open: bool) {
        self.browser
            .wait_for(
                &format!("the confirmation dialog open={open}"),
                &format!("return document.getElementById('confirm-dialog').open === {open};"),
            )
            .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_destructive_tool_runs_from_the_tools_tab_only_after_confirmation() {
    let session = Session::open(1280, 800, "").await;
    let browser = &session.browser;
    let created = session
        .call_tool(
            "workspace.createFile",
            json!({"path": "extra.txt", "source": "keep me"}),
        )
        .await;
    assert!(created["isError"] != json!(true), "{created}");
    browser.click(".tabs [data-tab=\"catalog\"]").await;

    // A delete says what the Explorer and the approval card say: undo brings the file back.
    browser
        .click("#catalog-list [data-tool=\"workspace.deleteFile\"]")
        .await;
    browser.click("#run-sample").await;
    session.dialog_open(true).await;
    let message = browser.text("#confirm-message").await;
    assert!(
        message.contains("Undo brings it back") && !message.contains("cannot be undone"),
        "{message}"
    );
    browser.click("#confirm-cancel").await;
    session.dialog_open(false).await;

    browser
        .click("#catalog-list [data-tool=\"workspace.reset\"]")
        .await;

    // Cancelling leaves the workspace as it was.
    browser.click("#run-sample").await;
    session.dialog_open(true).await;
    let message = browser.text("#confirm-message").await;
    assert!(message.to_lowercase().contains("unsaved"), "{message}");
    browser.screenshot("controls-confirm-reset").await;
    browser.click("#confirm-cancel").await;
    session.dialog_open(false).await;
    assert!(session.paths().await.contains(&"extra.txt".to_owned()));
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('sample-result');",
                json!([])
            )
            .await,
        Value::Null,
        "nothing ran"
    );

    // Confirming runs it with discardChanges, so the unsaved file is gone.
    browser.click("#run-sample").await;
    session.dialog_open(true).await;
    browser.click("#confirm-accept").await;
    browser
        .wait_for(
            "the reset result",
            "return document.querySelector('#sample-result .result-head')?.textContent === 'Succeeded';",
        )
        .await;
    assert!(!session.paths().await.contains(&"extra.txt".to_owned()));
    browser.screenshot("controls-reset-confirmed").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_editor_palette_resets_the_document_only_after_confirmation() {
    let session = Session::open(1280, 800, "editor").await;
    let browser = &session.browser;
    browser.click("#editor-tab-tools").await;
    browser
        .click("#editor-palette [data-tool=\"editor.resetDocument\"]")
        .await;
    browser.click("#editor-tool-run").await;
    session.dialog_open(true).await;
    browser.click("#confirm-cancel").await;
    session.dialog_open(false).await;
    assert_eq!(browser.text("#editor-tool-output").await, "", "nothing ran");

    browser.click("#editor-tool-run").await;
    session.dialog_open(true).await;
    browser.click("#confirm-accept").await;
    browser
        .wait_for(
            "the reset result",
            "const state = document.getElementById('editor-tool-output').dataset.state; return state === 'ok' || state === 'applied';",
        )
        .await;
    browser.screenshot("controls-editor-reset-confirmed").await;
    session.close().await;
}

/// Links a folder holding one `index.html` to `/editor`, confirming a replacement if asked.
async fn link_editor_folder(session: &Session) -> tempfile::TempDir {
    let browser = &session.browser;
    let folder = tempfile::tempdir().expect("folder");
    std::fs::write(
        folder.path().join("index.html"),
        "<!doctype html><html><body><h1>Disk</h1></body></html>\n",
    )
    .expect("write index.html");
    browser
        .type_into("#editor-folder-path", &folder.path().display().to_string())
        .await;
    browser.click("#editor-folder-open").await;
    let asked = browser
        .wait_for(
            "the folder to link or a confirmation",
            "const open = document.getElementById('confirm-dialog').open; return open ? 'ask' : (document.getElementById('editor-folder').textContent.includes('granted') ? 'linked' : '');",
        )
        .await;
    if asked == json!("ask") {
        browser.click("#confirm-accept").await;
    }
    browser
        .wait_for(
            "the folder to be linked with index.html open",
            "return document.getElementById('editor-folder').textContent.includes('granted') && !document.getElementById('editor-document').disabled && document.getElementById('editor-document').value.includes('Disk');",
        )
        .await;
    folder
}

#[tokio::test(flavor = "multi_thread")]
async fn editor_ctrl_s_saves_in_one_press_right_after_typing_and_from_outside_the_document() {
    let session = Session::open(1280, 800, "editor").await;
    let browser = &session.browser;
    let folder = link_editor_folder(&session).await;
    let on_disk = || std::fs::read_to_string(folder.path().join("index.html")).expect("read");

    // One press right after typing: the draft is flushed, then saved.
    browser.type_into("#editor-document", "<p>one</p>").await;
    browser.chord(&[keys::CONTROL, "s"]).await;
    browser
        .wait_for(
            "the first save",
            "return document.getElementById('editor-save-status').textContent.startsWith('Saved index.html');",
        )
        .await;
    assert!(on_disk().contains("<p>one</p>"), "{}", on_disk());

    // With the focus outside the document (on the Tools tab) Ctrl+S still saves.
    browser.type_into("#editor-document", "<p>two</p>").await;
    browser
        .wait_for(
            "the second edit to reach the host",
            "return document.getElementById('editor-dirty').textContent.startsWith('unsaved');",
        )
        .await;
    browser.click("#editor-tab-tools").await;
    assert_eq!(browser.active_id().await, "editor-tab-tools");
    browser.chord(&[keys::CONTROL, "s"]).await;
    browser
        .wait_for(
            "the second save",
            "return document.getElementById('editor-dirty').textContent === 'all saved';",
        )
        .await;
    let saved = on_disk();
    assert!(
        saved.contains("<p>one</p>") && saved.contains("<p>two</p>"),
        "{saved}"
    );
    browser.screenshot("controls-editor-ctrl-s").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_editor_reverts_a_dirty_file_after_confirmation() {
    let session = Session::open(1280, 800, "editor").await;
    let browser = &session.browser;
    let _folder = link_editor_folder(&session).await;
    let revert_shown = "const button = document.getElementById('editor-revert'); return Boolean(button) && !button.hidden && !button.disabled;";
    assert_eq!(
        browser.eval(revert_shown, json!([])).await,
        json!(false),
        "a clean file has nothing to revert"
    );

    browser.type_into("#editor-document", "<p>draft</p>").await;
    browser
        .wait_for("Revert file for the dirty file", revert_shown)
        .await;
    browser.click("#editor-revert").await;
    session.dialog_open(true).await;
    browser.screenshot("controls-editor-revert-confirm").await;
    browser.click("#confirm-cancel").await;
    session.dialog_open(false).await;
    assert!(browser.text("#editor-dirty").await.starts_with("unsaved"));

    browser.click("#editor-revert").await;
    session.dialog_open(true).await;
    browser.click("#confirm-accept").await;
    browser
        .wait_for(
            "the file to be reverted",
            "return document.getElementById('editor-dirty').textContent === 'all saved' && !document.getElementById('editor-document').value.includes('draft');",
        )
        .await;
    assert_eq!(
        browser.eval(revert_shown, json!([])).await,
        json!(false),
        "a reverted file is clean again"
    );
    browser.screenshot("controls-editor-reverted").await;
    session.close().await;
}

/// Fires a synthetic `beforeunload` and returns whether the page asked to stay.
const BEFOREUNLOAD_ASKS: &str = "const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented;";

#[tokio::test(flavor = "multi_thread")]
async fn leaving_the_workspace_page_guards_a_draft_until_the_host_stores_it() {
    let session = Session::open(1280, 800, "").await;
    let browser = &session.browser;
    assert_eq!(
        browser.eval(BEFOREUNLOAD_ASKS, json!([])).await,
        json!(false),
        "nothing to lose yet"
    );
    // The idle flush is widened so the draft is surely still the page's when the guard is asked.
    browser
        .eval_async(
            "const done = arguments[arguments.length - 1]; import('/ui/lib/store.js').then((store) => { store.typing.draftIdleMs = 60000; done(true); });",
            json!([]),
        )
        .await;
    browser.type_into("#editor", "<!-- last words -->").await;
    assert_eq!(
        browser.eval(BEFOREUNLOAD_ASKS, json!([])).await,
        json!(true),
        "a draft the host has not stored"
    );
    // pagehide sends the draft at once (the idle flush is a minute away now).
    browser
        .eval("window.dispatchEvent(new Event('pagehide'));", json!([]))
        .await;
    browser
        .wait_for(
            "the draft to reach the host",
            &BEFOREUNLOAD_ASKS.replace("return event", "return !event"),
        )
        .await;
    let stored = session
        .call_tool("workspace.readFile", json!({"path": "index.html"}))
        .await;
    assert!(
        stored["structuredContent"]["source"]
            .as_str()
            .unwrap_or_default()
            .contains("<!-- last words -->"),
        "{stored}"
    );
    session.close().await;
}
