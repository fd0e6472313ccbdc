//! The Live Code Editor page (`/editor`) in a real headless Chromium (through ChromeDriver):
//! typing in the document, a scenario change, opening a file, an approved local-agent patch
//! and a folder save each reach the sandboxed iframe, which acknowledges the new *document*
//! revision; the page's clocks and the host's state agree. Screenshots land in
//! `$TEST_OUTPUT_DIR/browser`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;
use crate::support::browser::{
    Browser, DELIVER_PREVIEW_ACKS, DROP_PREVIEW_ACKS, WAIT_TIMEOUT, browser_slot, keys,
    suite::SuitePage,
};

/// A running studio, its data directory and a browser on its page.
type Session = SuitePage<Suite>;
/// Marks this suite's helpers on [`SuitePage`].
enum Suite {}

impl Session {
    async fn open(width: u32, height: u32) -> Self {
        let session = Self::start(width, height, "editor").await;
        session.wait_acknowledged(|_| true).await;
        session
    }

    /// `GET /api/editor/state`.
    async fn state(&self) -> Value {
        self.http
            .get(format!("{}api/editor/state", self.studio.url()))
            .send()
            .await
            .expect("state request")
            .json()
            .await
            .expect("state JSON")
    }

    /// Polls the host's editor state until `accept` holds *and* the iframe acknowledged the
    /// current document revision (`ready`, from the browser); then waits until the page's
    /// document-revision badge and its preview status show that same revision. Returns the state.
    async fn wait_acknowledged(&self, accept: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        let state = loop {
            let state = self.state().await;
            let status = &state["status"];
            let acknowledged = status["preview"]["status"] == "ready"
                && status["preview"]["revision"] == status["documentRevision"];
            if acknowledged && accept(&state) {
                break state;
            }
            if started.elapsed() > WAIT_TIMEOUT {
                let shot = self.browser.screenshot("timeout-editor-state").await;
                panic!(
                    "the editor never reached the expected acknowledged state; last {state}; screenshot {}",
                    shot.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let revision = state["status"]["documentRevision"]
            .as_u64()
            .expect("document revision");
        self.browser
            .wait_for(
                &format!("the page to show document revision {revision} acknowledged"),
                &format!(
                    "return document.getElementById('editor-document-revision').dataset.revision === '{revision}'
                        && document.getElementById('editor-preview-status').textContent === 'revision {revision} ready'
                        && document.getElementById('editor-preview-state').dataset.state === 'ready';"
                ),
            )
            .await;
        state
    }

    /// Runs `script` inside the sandboxed preview iframe.
    async fn in_preview(&self, script: &str) -> Value {
        self.browser.enter_frame("#editor-preview").await;
        let value = self.browser.eval(script, json!([])).await;
        self.browser.leave_frame().await;
        value
    }

    /// The text of `css` inside the preview (empty when missing).
    async fn preview_text(&self, css: &str) -> String {
        let script = format!(
            "const node = document.querySelector({}); return node ? node.textContent : '';",
            json!(css)
        );
        self.in_preview(&script)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    async fn document_text(&self) -> String {
        self.browser
            .eval(
                "return document.getElementById('editor-document').value;",
                json!([]),
            )
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    async fn side_tab(&self, name: &str) {
        self.browser
            .click(&format!(".editor-side [data-tab=\"{name}\"]"))
            .await;
    }

    async fn dialog_open(&self) -> bool {
        self.browser
            .eval(
                "return document.getElementById('confirm-dialog').open;",
                json!([]),
            )
            .await
            == Value::Bool(true)
    }
}

fn source(state: &Value) -> &str {
    state["document"]["source"].as_str().unwrap_or_default()
}

fn document_revision(state: &Value) -> u64 {
    state["status"]["documentRevision"]
        .as_u64()
        .expect("document revision")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_in_the_document_is_acknowledged_by_the_iframe_and_reset_asks_first() {
    let session = Session::open(1440, 900).await;
    let browser = &session.browser;
    let first = session.state().await;
    let first_revision = document_revision(&first);
    assert_eq!(first["status"]["activePath"], "index.html");
    assert_eq!(
        browser.text("#editor-workspace-revision").await,
        format!("workspace r{}", first["status"]["workspaceRevision"])
    );
    assert_eq!(session.document_text().await, source(&first));
    assert_eq!(session.preview_text("h1").await, "Counter runner");
    browser.screenshot("editor-01-page-1440x900").await;

    // One edit typed into the document: sent with editor.setDocument after the pause, rendered
    // and acknowledged by the iframe at a new document revision.
    let typed = "<p id=\"typed\">Typed in the editor</p>";
    browser.type_into("#editor-document", typed).await;
    let edited = session
        .wait_acknowledged(|state| source(state).contains(typed))
        .await;
    let revision = document_revision(&edited);
    assert!(revision > first_revision, "the document clock moved");
    assert_eq!(
        edited["status"]["preview"],
        json!({"revision": revision, "status": "ready"}),
        "the host recorded the iframe's acknowledgement of the new document revision"
    );
    assert_eq!(
        browser.text("#editor-document-revision").await,
        format!("document r{revision}")
    );
    assert_eq!(session.preview_text("#typed").await, "Typed in the editor");
    assert!(
        edited["status"]["dirtyPaths"]
            .as_array()
            .expect("dirty paths")
            .contains(&json!("index.html"))
    );
    assert!(browser.text("#editor-dirty").await.contains("index.html"));
    browser.screenshot("editor-02-typed-acknowledged").await;

    // Reset is destructive: it asks in the page first, and Escape keeps the document.
    browser.click("#editor-reset").await;
    assert!(session.dialog_open().await, "the reset confirmation opened");
    assert_eq!(session.browser.active_id().await, "confirm-cancel");
    browser.screenshot("editor-03-reset-confirmation").await;
    browser.press(keys::ESCAPE).await;
    browser
        .wait_for(
            "the confirmation to close",
            "return !document.getElementById('confirm-dialog').open;",
        )
        .await;
    assert_eq!(session.browser.active_id().await, "editor-reset");
    let kept = session.state().await;
    assert_eq!(document_revision(&kept), revision, "Escape changed nothing");
    assert!(source(&kept).contains(typed));

    browser.click("#editor-reset").await;
    browser.click("#confirm-accept").await;
    let reset = session
        .wait_acknowledged(|state| !source(state).contains(typed))
        .await;
    assert!(document_revision(&reset) > revision);
    assert_eq!(source(&reset), source(&first), "the example came back");
    assert_eq!(session.preview_text("#typed").await, "");
    assert_eq!(session.document_text().await, source(&first));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scenario_change_reaches_the_preview_as_data_and_a_file_opens_as_the_document() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let first = session.state().await;
    assert_eq!(first["status"]["scenario"], "counter");
    assert_eq!(
        session
            .in_preview("return document.documentElement.dataset.scenario;")
            .await,
        "counter"
    );
    assert_eq!(session.preview_text("#label").await, "Clicks");

    // The scenario select runs editor.setScenario; the preview receives the new data.
    browser
        .click("#editor-scenario option[value=\"greeting\"]")
        .await;
    let greeting = session
        .wait_acknowledged(|state| state["status"]["scenario"] == "greeting")
        .await;
    assert!(document_revision(&greeting) > document_revision(&first));
    assert_eq!(
        greeting["status"]["workspaceRevision"], first["status"]["workspaceRevision"],
        "a scenario is document data: the files did not change"
    );
    assert_eq!(
        session
            .in_preview("return document.documentElement.dataset.scenario;")
            .await,
        "greeting"
    );
    let data = session
        .in_preview("return JSON.parse(document.getElementById('editor-scenario').textContent);")
        .await;
    assert_eq!(data["name"], "greeting");
    assert_eq!(data["data"]["names"], json!(["Ada", "Grace", "Linus"]));
    assert_eq!(
        session.preview_text("#greetings li").await,
        "Hello, Ada!",
        "the runner re-read its scenario and rendered the greeting UI"
    );
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('editor-scenario').value;",
                json!([])
            )
            .await,
        "greeting"
    );
    browser.screenshot("editor-04-greeting-scenario").await;

    // The palette runs the generated editor.setScenario sample directly (the next scenario,
    // guarded by the current document revision).
    session.side_tab("tools").await;
    browser
        .click("#editor-palette [data-tool=\"editor.setScenario\"]")
        .await;
    let sample: Value = serde_json::from_str(
        browser
            .eval(
                "return document.getElementById('editor-tool-args').value;",
                json!([]),
            )
            .await
            .as_str()
            .expect("sample text"),
    )
    .expect("sample JSON");
    assert_eq!(
        sample,
        json!({"scenario": "todo-list", "expectedDocumentRevision": document_revision(&greeting)})
    );
    browser.click("#editor-tool-run").await;
    let todo = session
        .wait_acknowledged(|state| state["status"]["scenario"] == "todo-list")
        .await;
    assert_eq!(
        session
            .in_preview("return document.documentElement.dataset.scenario;")
            .await,
        "todo-list"
    );
    browser
        .wait_for(
            "the palette result",
            "return document.getElementById('editor-tool-output').dataset.state === 'ok';",
        )
        .await;
    let output: Value =
        serde_json::from_str(&browser.text("#editor-tool-output").await).expect("result JSON");
    assert_eq!(
        output["documentRevision"],
        todo["status"]["documentRevision"]
    );
    assert_eq!(output["preview"]["status"], "ready");
    session.side_tab("chat").await;

    // The asset is listed but is not a control; a text file opens as the document.
    let asset_buttons = browser
        .eval(
            "return document.querySelectorAll('#editor-files li[data-kind=\"asset\"] button').length;",
            json!([]),
        )
        .await;
    assert_eq!(asset_buttons, 0);
    assert!(
        browser
            .text("#editor-files li[data-kind=\"asset\"]")
            .await
            .contains("assets/logo.svg")
    );
    browser
        .click("#editor-files li[data-path=\"app.js\"] button")
        .await;
    let opened = session
        .wait_acknowledged(|state| state["status"]["activePath"] == "app.js")
        .await;
    assert!(document_revision(&opened) > document_revision(&todo));
    assert_eq!(browser.text("#editor-document-path").await, "app.js");
    browser
        .wait_for(
            "app.js in the textarea",
            "return document.getElementById('editor-document').value.includes('Renders the runner scenario');",
        )
        .await;
    assert_eq!(
        browser
            .eval(
                "return document.querySelector('#editor-files li[data-path=\"app.js\"] button').getAttribute('aria-current');",
                json!([])
            )
            .await,
        "true"
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_agent_patch_reaches_the_iframe_and_a_linked_folder_saves_to_disk() {
    let session = Session::open(1440, 900).await;
    let browser = &session.browser;
    let first = session.state().await;

    // The local agent plans editor.applyPatch, which waits for approval.
    browser
        .type_into("#editor-prompt", "replace \"Step\" with \"Next\"")
        .await;
    browser.click("#editor-run").await;
    browser
        .wait_for(
            "an approval card for editor.applyPatch",
            "return [...document.querySelectorAll('#editor-approvals .approval-tool')].some((node) => node.textContent === 'editor.applyPatch');",
        )
        .await;
    let card = browser.text("#editor-approvals .approval").await;
    assert!(card.contains("agent"), "source and mode are shown: {card}");
    assert!(card.contains("search"), "argument names are listed: {card}");
    // The source appears only in the card's diff (issue 34): the added line, numbered.
    browser
        .wait_for(
            "the patch's diff in the card",
            "return [...document.querySelectorAll('#editor-approvals .diff-added .diff-code')].some((cell) => cell.textContent.includes('Next'));",
        )
        .await;
    let values = browser.text("#editor-approvals .safe-preview").await;
    assert!(
        !values.contains("Step"),
        "search and replace are never argument values: {values}"
    );
    browser
        .wait_for(
            "the lifecycle badge to show the approval wait",
            "return document.getElementById('editor-agent-badge').dataset.state === 'approval';",
        )
        .await;
    browser.screenshot("editor-05-approval-card").await;
    browser.click("#editor-approvals .approve").await;
    browser
        .wait_for(
            "the run to complete",
            "return document.querySelectorAll('#editor-chat-log .entry.completed').length === 1;",
        )
        .await;
    let patched = session
        .wait_acknowledged(|state| source(state).contains(">Next</button>"))
        .await;
    assert!(document_revision(&patched) > document_revision(&first));
    assert_eq!(session.preview_text("#step").await, "Next");
    assert!(session.document_text().await.contains(">Next</button>"));

    // The trace shows the run's calls with source and mode.
    session.side_tab("trace").await;
    browser
        .wait_for(
            "the applyPatch trace row",
            "return [...document.querySelectorAll('#editor-trace .trace-row')].some((row) => row.dataset.status === 'completed' && row.textContent.includes('editor.applyPatch') && row.textContent.includes('agent'));",
        )
        .await;
    session.side_tab("chat").await;

    // Open a folder: the unsaved patch is confirmed away first, then the folder's files load.
    let folder = tempfile::tempdir().expect("folder");
    std::fs::write(
        folder.path().join("index.html"),
        "<!doctype html><html><head><title>Disk</title></head><body><h1>From disk</h1></body></html>\n",
    )
    .expect("write index.html");
    std::fs::write(folder.path().join("notes.md"), "# Notes\n").expect("write notes.md");
    browser
        .type_into("#editor-folder-path", &folder.path().display().to_string())
        .await;
    browser.click("#editor-folder-open").await;
    browser
        .wait_for(
            "the replace confirmation",
            "return document.getElementById('confirm-dialog').open;",
        )
        .await;
    assert!(
        browser
            .text("#confirm-message")
            .await
            .contains("index.html")
    );
    browser.click("#confirm-accept").await;
    let linked = session
        .wait_acknowledged(|state| state["status"]["folder"]["connected"] == true)
        .await;
    assert_eq!(linked["status"]["dirtyPaths"], json!([]));
    assert_eq!(session.preview_text("h1").await, "From disk");
    assert!(browser.text("#editor-folder").await.contains("granted"));
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('editor-save').disabled;",
                json!([])
            )
            .await,
        true,
        "nothing to save yet"
    );

    // Edit, then Save writes the open file to the folder (a direct call: no approval).
    // The whole typed text: under load typing spans debounces, and a revision made mid-typing
    // is superseded before the page can be checked for it.
    let typed = "<p id=\"saved\">Saved</p>";
    browser.type_into("#editor-document", typed).await;
    session
        .wait_acknowledged(|state| {
            state["status"]["dirtyPaths"] == json!(["index.html"]) && source(state).contains(typed)
        })
        .await;
    browser
        .wait_for(
            "Save to be enabled",
            "return !document.getElementById('editor-save').disabled;",
        )
        .await;
    browser.click("#editor-save").await;
    browser
        .wait_for(
            "the save to be reported",
            "return document.getElementById('editor-save-status').textContent.startsWith('Saved index.html');",
        )
        .await;
    let on_disk = std::fs::read_to_string(folder.path().join("index.html")).expect("read back");
    assert!(on_disk.contains("<p id=\"saved\">Saved</p>"), "{on_disk}");
    let saved = session.state().await;
    assert_eq!(saved["status"]["dirtyPaths"], json!([]));
    browser
        .wait_for(
            "the header to show everything saved",
            "return document.getElementById('editor-dirty').textContent === 'all saved';",
        )
        .await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('editor-unknown-box').hidden;",
                json!([])
            )
            .await,
        true,
        "no save has an unknown outcome"
    );

    // Direct page calls and the agent run are two sessions: the selector narrows the rows.
    session.side_tab("trace").await;
    browser
        .wait_for(
            "the session selector",
            "return !document.getElementById('editor-trace-session').disabled;",
        )
        .await;
    let agent_session = browser
        .eval(
            "return [...document.getElementById('editor-trace-session').options].map((option) => option.value).find((id) => id && id !== 'studio-ui');",
            json!([]),
        )
        .await;
    let agent_session = agent_session.as_str().expect("an agent session").to_owned();
    browser
        .click(&format!(
            "#editor-trace-session option[value=\"{agent_session}\"]"
        ))
        .await;
    let narrowed = browser
        .eval(
            "const rows = [...document.querySelectorAll('#editor-trace .trace-row')]; return rows.length > 0 && rows.every((row) => row.title.includes(`session ${arguments[0]}`));",
            json!([agent_session]),
        )
        .await;
    assert_eq!(narrowed, true, "only the agent session's rows are shown");
    browser.screenshot("editor-06-saved-to-folder").await;
    session.close().await;
}

/// Writes a small site (one `index.html` with `heading`) into a new temporary folder.
fn site(heading: &str) -> tempfile::TempDir {
    let folder = tempfile::tempdir().expect("folder");
    std::fs::write(
        folder.path().join("index.html"),
        format!("<!doctype html><html><head><title>Site</title></head><body><h1>{heading}</h1></body></html>\n"),
    )
    .expect("write index.html");
    folder
}

/// In one script (so no timer of the page can run in between): replaces the document textarea's
/// text with `text` (a draft that overlaps any change, so it cannot be merged), then moves the
/// document clock by opening `folder` with a synchronous request. Whichever the page sees first,
/// the host's document event or its own write being refused as stale, the draft is based on an
/// older document revision.
const DRAFT_THEN_MOVE: &str = "
    const [text, folder] = arguments;
    const area = document.getElementById('editor-document');
    area.value = text;
    area.dispatchEvent(new Event('input', { bubbles: true }));
    const request = new XMLHttpRequest();
    request.open('POST', '/api/editor/folder/open', false);
    request.setRequestHeader('content-type', 'application/json');
    request.setRequestHeader('x-studio-token', document.querySelector('meta[name=\"studio-token\"]').content);
    request.send(JSON.stringify({ path: folder }));
    return request.status;";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overlapping_draft_on_an_older_document_revision_is_kept_and_never_overwrites() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let first = session.state().await;
    let disk = site("First folder");

    let status = browser
        .eval(
            DRAFT_THEN_MOVE,
            json!(["<!-- stale draft -->", disk.path().display().to_string()]),
        )
        .await;
    assert_eq!(status, 200, "the folder opened");
    browser
        .wait_for(
            "the stale-draft notice",
            "return !document.getElementById('editor-stale').hidden;",
        )
        .await;
    let notice = browser.text("#editor-stale-text").await;
    assert!(
        notice.contains(&format!("document revision {}", document_revision(&first))),
        "{notice}"
    );
    let moved = session
        .wait_acknowledged(|state| source(state).contains("First folder"))
        .await;
    assert!(
        !source(&moved).contains("stale draft"),
        "the stale draft was not written over the newer document"
    );
    assert!(
        session.document_text().await.contains("stale draft"),
        "the draft is kept"
    );
    browser.screenshot("editor-07-stale-draft").await;

    // Discarding shows the current document.
    browser.click("#editor-stale-discard").await;
    browser
        .wait_for(
            "the current document in the textarea",
            "return document.getElementById('editor-stale').hidden && document.getElementById('editor-document').value.includes('First folder');",
        )
        .await;

    // A second stale draft, this time sent over the newer document on purpose.
    let other = site("Second folder");
    browser
        .eval(
            DRAFT_THEN_MOVE,
            json!([KEPT_ON_PURPOSE, other.path().display().to_string()]),
        )
        .await;
    browser
        .wait_for(
            "the second stale-draft notice",
            "return !document.getElementById('editor-stale').hidden;",
        )
        .await;
    session
        .wait_acknowledged(|state| source(state).contains("Second folder"))
        .await;
    browser.click("#editor-stale-overwrite").await;
    let replaced = session
        .wait_acknowledged(|state| source(state) == KEPT_ON_PURPOSE)
        .await;
    assert!(
        !source(&replaced).contains("Second folder"),
        "the draft replaced the document"
    );
    assert!(
        browser
            .eval(
                "return document.getElementById('editor-stale').hidden;",
                json!([])
            )
            .await
            == Value::Bool(true)
    );
    assert_eq!(session.preview_text("h1").await, "Kept on purpose");
    session.close().await;
}

/// The whole document a test's draft replaces another folder's document with.
const KEPT_ON_PURPOSE: &str = "<!doctype html><html><body><h1>Kept on purpose</h1></body></html>\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_editor_cancels_its_run_in_flight() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let first = session.state().await;
    browser
        .type_into("#editor-prompt", "use the greeting scenario")
        .await;
    browser.click("#editor-run").await;
    browser
        .wait_for(
            "the approval card",
            "return document.querySelector('#editor-approvals .approval-tool')?.textContent === 'editor.setScenario';",
        )
        .await;
    browser.goto(&session.studio.url()).await;
    let started = Instant::now();
    loop {
        let trace: Value = session
            .http
            .get(format!("{}api/trace", session.studio.url()))
            .send()
            .await
            .expect("trace request")
            .json()
            .await
            .expect("trace JSON");
        let cancelled = trace["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .any(|row| row["kind"] == "agent.request" && row["status"] == "cancelled");
        if cancelled {
            break;
        }
        assert!(
            started.elapsed() < WAIT_TIMEOUT,
            "the run never ended as cancelled: {trace}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = session.state().await;
    assert_eq!(after["approvals"], json!([]), "no approval is left pending");
    assert_eq!(after["status"]["scenario"], "counter", "nothing changed");
    assert_eq!(
        after["status"]["documentRevision"],
        first["status"]["documentRevision"]
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_applied_without_preview_confirmation_is_the_new_base() {
    let session = Session::open(1440, 900).await;
    let browser = &session.browser;
    let before = document_revision(&session.state().await);
    browser.eval(DROP_PREVIEW_ACKS, json!([])).await;
    browser
        .type_into("#editor-document", "<p id=\"applied\">Applied</p>")
        .await;
    let status = browser
        .wait_for(
            "the write's answer",
            "const text = document.getElementById('editor-document-status').textContent; \
             return /^(Sending|Editing)/.test(text) ? '' : text;",
        )
        .await;
    assert_eq!(
        status,
        json!(format!(
            "Saved to the editor · document revision {} · the preview did not confirm it (PREVIEW_ACK_TIMEOUT)",
            before + 1
        ))
    );
    assert!(source(&session.state().await).contains("id=\"applied\""));
    browser
        .screenshot("editor-applied-preview-unconfirmed")
        .await;

    // A document action applied the same way is reported as done, not as an error.
    browser
        .wait_for(
            "the page to follow the applied revision",
            &format!(
                "return document.getElementById('editor-document-revision').dataset.revision === '{}';",
                before + 1
            ),
        )
        .await;
    browser
        .click("#editor-scenario option[value=\"greeting\"]")
        .await;
    let status = browser
        .wait_for(
            "the scenario change's answer",
            "const text = document.getElementById('editor-status').textContent; \
             return text.endsWith('…') ? '' : text;",
        )
        .await;
    assert_eq!(
        status,
        json!(format!(
            "Scenario greeting: done · document revision {} · the preview did not confirm it (PREVIEW_ACK_TIMEOUT); ⟳ reloads the preview",
            before + 2
        ))
    );
    assert_eq!(session.state().await["status"]["scenario"], "greeting");

    // The applied text is the draft's new base: the next edit is no stale conflict.
    browser.eval(DELIVER_PREVIEW_ACKS, json!([])).await;
    browser.click("#editor-preview-reload").await;
    let typed = "<p id=\"next\">Next</p>";
    browser.type_into("#editor-document", typed).await;
    let next = session
        .wait_acknowledged(|state| source(state).contains(typed))
        .await;
    assert!(document_revision(&next) >= before + 3);
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('editor-stale').hidden;",
                json!([])
            )
            .await,
        Value::Bool(true),
        "no stale-draft conflict"
    );
    assert!(
        browser
            .text("#editor-document-status")
            .await
            .starts_with("Saved to the editor"),
    );
    session.close().await;
}

/// A studio on `port` (0: any free one) keeping its data in `data`.
async fn studio_on(data: &std::path::Path, port: u16) -> live_code_studio::host::RunningStudio {
    live_code_studio::host::start(
        live_code_studio::host::StudioOptions::ephemeral(data).with_port(port),
    )
    .await
    .expect("studio starts")
}

/// A browser on `studio`'s `/`, once the page says it is ready.
async fn workspace_page(studio: &live_code_studio::host::RunningStudio) -> Browser {
    let browser = Browser::launch(1280, 800).await;
    browser.goto(&studio.url()).await;
    browser
        .wait_for(
            "the studio",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    browser
}

async fn editor_source(
    http: &reqwest::Client,
    studio: &live_code_studio::host::RunningStudio,
) -> String {
    support::browser::studio::call_tool(http, studio, "editor.getDocument", json!({})).await
        ["structuredContent"]["source"]
        .as_str()
        .expect("the document source")
        .to_owned()
}

async fn workspace_source(
    http: &reqwest::Client,
    studio: &live_code_studio::host::RunningStudio,
    path: &str,
) -> String {
    support::browser::studio::call_tool(http, studio, "workspace.readFile", json!({"path": path}))
        .await["structuredContent"]["source"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Polls `studio`'s document until `done` holds (20 s at most).
async fn wait_for_source(
    http: &reqwest::Client,
    studio: &live_code_studio::host::RunningStudio,
    what: &str,
    done: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let source = editor_source(http, studio).await;
        if done(&source) {
            return source;
        }
        assert!(Instant::now() < deadline, "{what}: {source}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the page's event socket is down (`reconnecting`) or up (`connected`).
async fn wait_connection(browser: &Browser, state: &str) {
    browser
        .wait_for(
            &format!("the connection to be {state}"),
            &format!(
                "return document.getElementById('editor-connection').dataset.state === '{state}';"
            ),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_tab_keeps_its_draft_across_a_studio_restart_and_shows_a_conflict() {
    let _slot = browser_slot().await;
    let data = tempfile::tempdir().expect("data dir");
    let http = reqwest::Client::new();
    let first = studio_on(data.path(), 0).await;
    let port = first.addr.port();
    let first_token = first.token().to_owned();
    let browser = Browser::launch(1280, 800).await;
    browser.goto(&format!("{}editor", first.url())).await;
    browser
        .wait_for(
            "the editor",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    let original = editor_source(&http, &first).await;

    // The studio stops; the person goes on typing (nothing can reach the host now).
    first.shutdown().await;
    wait_connection(&browser, "reconnecting").await;
    browser
        .type_into(
            "#editor-document",
            "<!-- typed while the studio restarted -->",
        )
        .await;

    // Same port and data directory, a new launch with a new token: the tab notices, reloads
    // itself with the new token and sends the draft it kept.
    let second = studio_on(data.path(), port).await;
    assert_ne!(second.token(), first_token, "a new launch has a new token");
    let expected = format!("{original}<!-- typed while the studio restarted -->");
    wait_for_source(&http, &second, "the kept draft to arrive", |source| {
        source == expected
    })
    .await;
    wait_connection(&browser, "connected").await;
    browser.screenshot("editor-restart-draft-recovered").await;

    // Again, but the document changes on the host, where the person typed, before the tab is
    // back: the draft cannot be merged, so it is shown as a conflict, nothing is overwritten,
    // and sending it over is the person's choice.
    second.shutdown().await;
    wait_connection(&browser, "reconnecting").await;
    browser
        .type_into("#editor-document", " <!-- mine -->")
        .await;
    let third = studio_on(data.path(), port).await;
    let their_source = format!("{expected}<!-- theirs -->");
    let theirs = support::browser::studio::call_tool(
        &http,
        &third,
        "editor.setDocument",
        json!({"source": their_source}),
    )
    .await;
    assert_ne!(theirs["isError"], json!(true), "{theirs}");
    browser
        .wait_for(
            "the restored conflict",
            "return !document.getElementById('editor-stale').hidden && document.getElementById('editor-stale-text').textContent.includes('before the studio restarted');",
        )
        .await;
    let shown = browser
        .eval(
            "return document.getElementById('editor-document').value;",
            json!([]),
        )
        .await;
    assert!(
        shown
            .as_str()
            .unwrap_or_default()
            .ends_with("<!-- mine -->"),
        "the draft stays in the editor: {shown}"
    );
    assert_eq!(editor_source(&http, &third).await, their_source);
    browser.screenshot("editor-restart-draft-conflict").await;
    browser.click("#editor-stale-overwrite").await;
    wait_for_source(&http, &third, "the draft sent over", |source| {
        source.ends_with("<!-- mine -->")
    })
    .await;
    browser.close().await;
    third.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspace_page_reapplies_its_unsent_edit_after_a_studio_restart() {
    let _slot = browser_slot().await;
    let data = tempfile::tempdir().expect("data dir");
    let http = reqwest::Client::new();
    let first = studio_on(data.path(), 0).await;
    let port = first.addr.port();
    let browser = workspace_page(&first).await;
    let path = browser
        .eval(
            "return document.getElementById('editor-path').textContent;",
            json!([]),
        )
        .await;
    let path = path.as_str().expect("the open file").to_owned();
    let original = workspace_source(&http, &first, &path).await;

    first.shutdown().await;
    browser
        .wait_for(
            "the lost connection",
            "return document.getElementById('status-message')?.textContent.includes('reconnecting') ?? true;",
        )
        .await;
    browser
        .type_into("#editor", "<!-- typed while the studio restarted -->")
        .await;
    let second = studio_on(data.path(), port).await;
    let expected = format!("{original}<!-- typed while the studio restarted -->");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let source = workspace_source(&http, &second, &path).await;
        if source == expected {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the kept edit never arrived: {source}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    browser
        .wait_for(
            "the reloaded page",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    browser.close().await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_page_keeps_text_typed_while_the_studio_restarts() {
    let _slot = browser_slot().await;
    let data = tempfile::tempdir().expect("data dir");
    let first = studio_on(data.path(), 0).await;
    let port = first.addr.port();
    let browser = Browser::launch(1280, 800).await;
    browser.goto(&format!("{}web", first.url())).await;
    browser
        .wait_for(
            "the web page with a file open",
            "const editor = document.getElementById('web-editor');
             return document.body.dataset.ready === 'true' && !editor.disabled && editor.value.length > 0;",
        )
        .await;
    browser
        .eval(
            "const editor = document.getElementById('web-editor');
             editor.focus();
             editor.setSelectionRange(editor.value.length, editor.value.length);",
            json!([]),
        )
        .await;
    browser.type_into("#web-editor", "/* before */").await;
    // Long enough for the host to keep the first draft.
    tokio::time::sleep(Duration::from_millis(800)).await;
    first.shutdown().await;
    browser
        .type_into("#web-editor", "/* typed while the studio restarted */")
        .await;
    // Marks this page, so the wait below sees the page the relaunch reloaded, not this one.
    browser
        .eval("window.beforeRestart = true;", json!([]))
        .await;
    let second = studio_on(data.path(), port).await;
    let kept = "return document.body.dataset.ready === 'true' && window.beforeRestart === undefined
                  && document.getElementById('web-editor').value.endsWith('/* before *//* typed while the studio restarted */');";
    browser
        .wait_for("the reloaded page with both drafts' text", kept)
        .await;
    // The host has it now too: another tab (no session storage of its own) shows it.
    tokio::time::sleep(Duration::from_millis(800)).await;
    browser.close().await;
    let other = Browser::launch(1280, 800).await;
    other.goto(&format!("{}web", second.url())).await;
    other.wait_for("the host's copy in another tab", kept).await;
    other.close().await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_during_an_approval_says_so_on_the_card_and_in_the_chat() {
    let _slot = browser_slot().await;
    let data = tempfile::tempdir().expect("data dir");
    let http = reqwest::Client::new();
    let first = studio_on(data.path(), 0).await;
    let port = first.addr.port();
    let browser = workspace_page(&first).await;
    let before = workspace_source(&http, &first, "styles.css").await;
    browser.type_into("#prompt", "make it amber").await;
    browser.click("#send-prompt").await;
    browser
        .wait_for(
            "the approval card",
            "return document.querySelector('#approvals .approval .approve') !== null;",
        )
        .await;
    first.shutdown().await;
    browser.click("#approvals .approval .approve").await;
    browser
        .wait_for(
            "the card to say the answer was not sent",
            "return document.querySelector('#approvals .approval-note')?.textContent.includes('not sent') ?? false;",
        )
        .await;
    let chat = browser.text("#chat-log").await;
    assert!(!chat.contains("undefined"), "{chat}");
    browser.screenshot("approval-restart-card").await;
    let second = studio_on(data.path(), port).await;
    browser
        .wait_for(
            "the chat to say the restart ended the approval",
            "return document.body.dataset.ready === 'true'
               && document.getElementById('chat-log').textContent.includes('restarted while');",
        )
        .await;
    let chat = browser.text("#chat-log").await;
    assert!(chat.contains("nothing was applied"), "{chat}");
    assert_eq!(
        workspace_source(&http, &second, "styles.css").await,
        before,
        "nothing was applied"
    );
    browser.screenshot("approval-restart-chat").await;
    browser.close().await;
    second.shutdown().await;
}
