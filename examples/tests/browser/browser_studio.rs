//! The studio page in a real headless Chromium (through ChromeDriver): editing, agent runs with
//! approvals, reload persistence, keyboard-modal dialogs, the tool catalog, the trace, search
//! and the prompt deep link. Screenshots of the main states land in
//! `$TEST_OUTPUT_DIR/browser`.

use serde_json::{Value, json};

use crate::support::browser::{
    Browser, DELIVER_PREVIEW_ACKS, DROP_PREVIEW_ACKS, keys, suite::SuitePage,
};

/// A running studio, its data directory and a browser on its page.
type Session = SuitePage<Suite>;
/// Marks this suite's helpers on [`SuitePage`].
enum Suite {}

impl Session {
    async fn open(width: u32, height: u32) -> Self {
        Self::start(width, height, "").await
    }

    async fn wait_ready(&self) {
        self.browser
            .wait_for(
                "the page to load",
                "return document.body.dataset.ready === 'true';",
            )
            .await;
        self.wait_preview_ready().await;
    }

    /// Waits until the preview iframe acknowledged the workspace's current revision.
    async fn wait_preview_ready(&self) -> u64 {
        let revision = self.revision().await;
        self.browser
            .wait_for(
                &format!("the preview to acknowledge revision {revision}"),
                &format!(
                    "return document.getElementById('preview-status').textContent === 'revision {revision} ready';"
                ),
            )
            .await;
        revision
    }

    async fn revision(&self) -> u64 {
        self.api("/api/state").await["status"]["revision"]
            .as_u64()
            .expect("revision")
    }

    /// The stored source of `path`, read through the registry.
    async fn source(&self, path: &str) -> String {
        let result = self
            .call_tool("workspace.readFile", json!({"path": path}))
            .await;
        result["structuredContent"]["source"]
            .as_str()
            .unwrap_or_else(|| panic!("readFile failed: {result}"))
            .to_owned()
    }

    async fn editor_text(&self) -> String {
        self.browser
            .eval("return document.getElementById('editor').value;", json!([]))
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    async fn open_file(&self, path: &str) {
        self.browser
            .click(&format!("#file-tree [data-path=\"{path}\"]"))
            .await;
        self.browser
            .wait_for(
                &format!("{path} in the editor"),
                &format!(
                    "return document.getElementById('editor-path').textContent === '{path}' && !document.getElementById('editor').disabled;"
                ),
            )
            .await;
    }

    async fn side_tab(&self, name: &str) {
        self.browser
            .click(&format!(".tabs [data-tab=\"{name}\"]"))
            .await;
    }

    async fn submit_prompt(&self, prompt: &str) {
        self.browser.type_into("#prompt", prompt).await;
        self.browser.click("#send-prompt").await;
    }

    async fn wait_approval_card(&self, tool: &str) {
        self.browser
            .wait_for(
                &format!("an approval card for {tool}"),
                &format!(
                    "return [...document.querySelectorAll('#approvals .approval-tool')].some((node) => node.textContent === '{tool}');"
                ),
            )
            .await;
    }

    async fn wait_chat_entry(&self, kind: &str) -> String {
        self.browser
            .wait_for(
                &format!("a {kind} chat entry"),
                &format!(
                    "const entries = document.querySelectorAll('#chat-log .entry.{kind} .entry-text'); return entries.length ? entries[entries.length - 1].textContent : '';"
                ),
            )
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// The accent colour the preview's stylesheet resolves inside the sandboxed iframe.
async fn preview_accent(browser: &Browser) -> String {
    browser.enter_frame("#preview").await;
    let accent = browser
        .eval(
            "return getComputedStyle(document.documentElement).getPropertyValue('--accent').trim();",
            json!([]),
        )
        .await;
    browser.leave_frame().await;
    accent.as_str().unwrap_or_default().to_owned()
}

async fn preview_heading(browser: &Browser) -> String {
    browser.enter_frame("#preview").await;
    let heading = browser
        .eval(
            "return document.querySelector('h1')?.textContent ?? '';",
            json!([]),
        )
        .await;
    browser.leave_frame().await;
    heading.as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_in_the_editor_updates_the_preview_and_survives_a_reload() {
    let session = Session::open(1920, 1080).await;
    let browser = &session.browser;
    session.browser.screenshot("01-studio-1920x1080").await;
    let first = session.revision().await;
    assert!(
        session.editor_text().await.contains("Ship a page"),
        "the active index.html is in the editor"
    );
    assert_eq!(
        preview_heading(browser).await,
        "Ship a page with your agent"
    );

    // Select the heading text with in-file search, then type over it.
    browser.click("#editor").await;
    browser.chord(&[keys::CONTROL, "f"]).await;
    assert_eq!(browser.active_id().await, "find-input");
    browser.type_into("#find-input", "Ship a page").await;
    assert_eq!(browser.text("#find-count").await, "1 of 1");
    browser.press(keys::ESCAPE).await;
    assert_eq!(browser.active_id().await, "editor");
    browser
        .eval(
            "const editor = document.getElementById('editor'); const at = editor.value.indexOf('Ship a page with your agent'); editor.setSelectionRange(at, at + 'Ship a page with your agent'.length);",
            json!([]),
        )
        .await;
    browser.type_into("#editor", "Typed in Chromium").await;

    // The draft is flushed on idle through workspace.writeFile and the preview follows.
    browser
        .wait_for(
            "the revision badge to move on",
            &format!("return !document.getElementById('revision-badge').textContent.startsWith('rev {first}');"),
        )
        .await;
    let revision = session.wait_preview_ready().await;
    assert!(revision > first);
    assert!(
        session
            .source("index.html")
            .await
            .contains("Typed in Chromium")
    );
    assert_eq!(preview_heading(browser).await, "Typed in Chromium");
    assert!(
        browser
            .text("#revision-badge")
            .await
            .starts_with(&format!("rev {revision}"))
    );
    assert!(
        browser
            .text("#code-highlight")
            .await
            .contains("Typed in Chromium")
    );
    let highlighted_tags = browser
        .eval(
            "return document.querySelectorAll('#code-highlight .tok-tag').length;",
            json!([]),
        )
        .await;
    assert!(
        highlighted_tags.as_u64().unwrap_or(0) > 10,
        "HTML tags are highlighted"
    );
    browser.screenshot("02-edited-preview").await;

    // Only the preview iframe's window may acknowledge: the same message from the page itself
    // is ignored and never forwarded to the host.
    let forwarded = browser
        .eval_async(
            "const [revision, done] = arguments; const status = document.getElementById('preview-status');
             status.textContent = 'probe'; let posts = 0; const original = window.fetch;
             window.fetch = (url, init) => { if (String(url).includes('/api/preview/ack')) posts += 1; return original(url, init); };
             window.postMessage({ type: 'context-action.preview.ready', revision }, '*');
             setTimeout(() => { window.fetch = original; done({ status: status.textContent, posts }); }, 300);",
            json!([revision]),
        )
        .await;
    assert_eq!(forwarded, json!({"status": "probe", "posts": 0}));

    // A reload restores the edited source and previews the same revision.
    browser.refresh().await;
    session.wait_ready().await;
    assert!(session.editor_text().await.contains("Typed in Chromium"));
    assert_eq!(session.revision().await, revision);
    assert_eq!(preview_heading(browser).await, "Typed in Chromium");
    assert!(browser.text("#char-count").await.ends_with("/ 80,000"));

    // Other languages highlight too, and opening a file adds an editor tab.
    session.open_file("app.js").await;
    let keywords = browser
        .eval(
            "return document.querySelectorAll('#code-highlight .tok-keyword').length;",
            json!([]),
        )
        .await;
    assert!(
        keywords.as_u64().unwrap_or(0) > 0,
        "JavaScript keywords are highlighted"
    );
    let tabs = browser
        .eval(
            "return [...document.querySelectorAll('#editor-tabs .tab-label')].map((tab) => tab.textContent);",
            json!([]),
        )
        .await;
    assert_eq!(tabs, json!(["index.html", "app.js"]));

    // Scrolled to the end, the gutter and highlight layers stay aligned with the textarea.
    session.open_file("styles.css").await;
    let offsets = browser
        .eval(
            "const editor = document.getElementById('editor'); editor.scrollTop = editor.scrollHeight; editor.dispatchEvent(new Event('scroll'));
             return [editor.scrollTop, document.getElementById('code-highlight').scrollTop, document.getElementById('code-gutter').scrollTop, document.getElementById('code-marks').scrollTop];",
            json!([]),
        )
        .await;
    let offsets: Vec<f64> = offsets
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(offsets[0] > 0.0, "styles.css scrolls: {offsets:?}");
    assert!(
        offsets
            .iter()
            .all(|offset| (offset - offsets[0]).abs() < 1.0),
        "{offsets:?}"
    );
    browser.screenshot("02b-scrolled-styles").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_card_shows_its_diff_and_rejecting_one_hunk_applies_only_the_other() {
    let session = Session::open(1280, 900).await;
    let browser = &session.browser;
    session.wait_ready().await;
    let sheet: String = (1..=20)
        .map(|n| match n {
            2 => ".a { color: blue; }\n".to_owned(),
            19 => ".b { color: blue; }\n".to_owned(),
            n => format!("/* rule {n} */\n"),
        })
        .collect();
    let created = session
        .call_tool(
            "workspace.createFile",
            json!({"path": "theme.css", "source": sheet}),
        )
        .await;
    assert!(created.get("isError").is_none(), "{created}");

    session
        .submit_prompt(r#"replace all "blue" with "green" in theme.css"#)
        .await;
    session.wait_approval_card("workspace.applyPatch").await;
    browser
        .wait_for(
            "two hunk checkboxes in the card's diff",
            "return document.querySelectorAll('#approvals .hunk-accept').length === 2;",
        )
        .await;
    let card = browser.text("#approvals .approval").await;
    assert!(card.contains("path: theme.css"), "values are shown: {card}");
    assert!(card.contains("occurrence: all"), "{card}");
    assert!(card.contains("modified · theme.css · +2 −2"), "{card}");
    browser.screenshot("03c-approval-diff-two-hunks").await;

    // Keyboard review: focus the first hunk header, `]` to the second, Space rejects it.
    browser
        .eval(
            "document.querySelector('#approvals .diff-hunk-head').focus(); return true;",
            json!([]),
        )
        .await;
    browser.press("]").await;
    browser.press(" ").await;
    // Side by side keeps the choice.
    browser.click("#approvals .diff-view-toggle").await;
    browser
        .wait_for(
            "the side-by-side table",
            "return document.querySelector('#approvals .diff-table.side-by-side') !== null;",
        )
        .await;
    browser.screenshot("03d-approval-diff-side-by-side").await;
    assert_eq!(
        browser
            .eval(
                "return document.querySelector('#approvals .hunk-accept[data-hunk=\"1\"]').checked;",
                json!([])
            )
            .await,
        Value::Bool(false),
        "redrawing keeps the unchecked hunk"
    );
    assert_eq!(
        browser.text("#approvals .approve").await,
        "Approve selected hunks"
    );
    browser.click("#approvals .approve").await;

    // The chat tells the truth about a partial approval (not a bare "Done").
    let completed = session.wait_chat_entry("completed").await;
    assert!(
        completed.contains("applied 1 of 2 hunks of theme.css"),
        "{completed}"
    );
    let source = session.source("theme.css").await;
    assert!(source.contains(".a { color: green; }"), "{source}");
    assert!(
        source.contains(".b { color: blue; }"),
        "the rejected hunk stays: {source}"
    );
    let trace = session.api("/api/trace").await;
    let row = trace["rows"]
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .rev()
                .find(|row| row["name"] == "workspace.applyPatch")
        })
        .cloned()
        .unwrap_or_else(|| panic!("{trace}"));
    assert_eq!(row["approval"]["appliedHunks"], 1, "{row}");
    assert_eq!(row["approval"]["rejectedHunks"], 1, "{row}");
    assert!(
        !trace.to_string().contains("green"),
        "the trace holds counts, never text"
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_changes_panel_shows_unsaved_hunks_and_reverts_one() {
    let session = Session::open(1280, 900).await;
    let browser = &session.browser;
    session.wait_ready().await;
    let saved = session.source("styles.css").await;
    let lines: Vec<&str> = saved.lines().collect();
    assert!(
        lines.len() > 12,
        "the seed stylesheet is long enough for two hunks"
    );
    let edited = format!("/* first edit */\n{}\n/* last edit */\n", lines.join("\n"));
    let revision = session.revision().await;
    let written = session
        .call_tool(
            "workspace.writeFile",
            json!({"path": "styles.css", "source": edited, "expectedRevision": revision}),
        )
        .await;
    assert!(written.get("isError").is_none(), "{written}");

    session.side_tab("changes").await;
    browser
        .wait_for(
            "two revertable hunks of styles.css",
            "return document.querySelectorAll('#changes-list .revert-hunk').length === 2;",
        )
        .await;
    let panel = browser.text("#tab-changes").await;
    assert!(panel.contains("modified · styles.css · +2 −0"), "{panel}");
    assert!(panel.contains("/* first edit */"), "{panel}");
    browser.screenshot("08-changes-panel").await;

    browser.click("#changes-list .revert-hunk").await;
    browser
        .wait_for(
            "one hunk left",
            "return document.querySelectorAll('#changes-list .revert-hunk').length === 1;",
        )
        .await;
    let source = session.source("styles.css").await;
    assert!(!source.contains("/* first edit */"), "{source}");
    assert!(
        source.contains("/* last edit */"),
        "the other hunk stays: {source}"
    );
    assert!(
        browser
            .text("#changes-summary")
            .await
            .contains("Reverted hunk 1 of styles.css"),
        "the panel says what it did"
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_agent_run_changes_the_preview_and_a_denied_one_does_not() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let accent_before = preview_accent(browser).await;
    let first = session.revision().await;

    session.submit_prompt("make it rose").await;
    session.wait_approval_card("preview.setTheme").await;
    let card = browser.text("#approvals .approval").await;
    assert!(
        card.contains("Asked by") && card.contains("The agent"),
        "{card}"
    );
    assert!(card.contains("theme"), "argument names are listed: {card}");
    assert!(
        browser
            .eval(
                "return document.getElementById('editor').disabled;",
                json!([])
            )
            .await
            == Value::Bool(false),
        "the editor stays editable while the agent runs"
    );
    browser
        .wait_for(
            "the agent badge to show the approval wait",
            "return document.getElementById('agent-badge').textContent.includes('approval');",
        )
        .await;
    browser.screenshot("03-approval-card-1280x800").await;
    browser.click("#approvals .approve").await;

    let completed = session.wait_chat_entry("completed").await;
    assert!(!completed.is_empty());
    let revision = session.wait_preview_ready().await;
    assert!(revision > first);
    assert!(
        session
            .source("styles.css")
            .await
            .contains("--accent: #f43f5e")
    );
    assert_eq!(accent_before, "#8b5cf6");
    assert_eq!(
        preview_accent(browser).await,
        "#f43f5e",
        "the iframe restyled"
    );
    assert!(
        browser
            .text("#revision-badge")
            .await
            .starts_with(&format!("rev {revision}"))
    );
    browser.screenshot("04-approved-rose").await;

    // A denied run leaves the workspace as it was and says so.
    let styles = session.source("styles.css").await;
    session.submit_prompt("make it emerald").await;
    session.wait_approval_card("preview.setTheme").await;
    browser.click("#approvals .deny").await;
    let denied = session.wait_chat_entry("denied").await;
    assert!(denied.contains("preview.setTheme"), "{denied}");
    assert!(
        denied.contains("(by you)"),
        "the line says who refused: {denied}"
    );
    assert_eq!(session.source("styles.css").await, styles);
    assert_eq!(session.revision().await, revision);

    // Esc denies a pending approval too.
    session.submit_prompt("make it amber").await;
    session.wait_approval_card("preview.setTheme").await;
    browser.click("#chat-log").await;
    browser.press(keys::ESCAPE).await;
    browser
        .wait_for(
            "a second denial",
            "return document.querySelectorAll('#chat-log .entry.denied').length === 2;",
        )
        .await;
    assert_eq!(session.source("styles.css").await, styles);
    browser.screenshot("05-denied").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_are_keyboard_modal_and_destructive_actions_confirm_in_the_page() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    // window.confirm must never be used.
    browser
        .eval(
            "window.__confirmCalls = 0; window.confirm = () => { window.__confirmCalls += 1; return true; };",
            json!([]),
        )
        .await;

    browser.click("#new-file-button").await;
    assert_eq!(browser.active_id().await, "new-file-path");
    assert_eq!(
        browser
            .eval(
                "return document.body.classList.contains('modal-open');",
                json!([])
            )
            .await,
        Value::Bool(true),
        "body scroll is locked"
    );
    // Tab walks the dialog's controls and wraps from the last to the first; Shift+Tab wraps back.
    let mut visited = Vec::new();
    for _ in 0..3 {
        browser.press(keys::TAB).await;
        visited.push(
            browser
                .eval(
                    "return document.activeElement.closest('dialog')?.id ?? 'outside';",
                    json!([]),
                )
                .await,
        );
    }
    assert!(
        visited.iter().all(|id| id == "new-file-dialog"),
        "{visited:?}"
    );
    assert_eq!(
        browser.active_id().await,
        "new-file-path",
        "three controls, three Tabs: wrapped to the first"
    );
    browser.chord(&[keys::SHIFT, keys::TAB]).await;
    assert_eq!(
        browser
            .eval("return document.activeElement.textContent;", json!([]))
            .await,
        "Create"
    );
    // Shortcuts are off while a modal is open.
    browser.chord(&[keys::CONTROL, keys::SHIFT, "f"]).await;
    assert_eq!(browser.text(".tabs [aria-selected=\"true\"]").await, "Chat");
    // Validation stays inside the dialog.
    browser.click("#new-file-form button[type=submit]").await;
    assert!(
        browser
            .text("#new-file-error")
            .await
            .contains("Enter a path")
    );
    browser.type_into("#new-file-path", "../escape.md").await;
    browser.press(keys::ENTER).await;
    browser
        .wait_for("a path error", "return document.getElementById('new-file-error').textContent.length > 0 && !document.getElementById('new-file-error').textContent.startsWith('Enter');")
        .await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('new-file-dialog').open;",
                json!([])
            )
            .await,
        Value::Bool(true)
    );
    browser.screenshot("06-new-file-validation").await;
    // Esc closes and focus returns to the trigger.
    browser.press(keys::ESCAPE).await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('new-file-dialog').open;",
                json!([])
            )
            .await,
        Value::Bool(false)
    );
    assert_eq!(browser.active_id().await, "new-file-button");
    assert_eq!(
        browser
            .eval(
                "return document.body.classList.contains('modal-open');",
                json!([])
            )
            .await,
        Value::Bool(false)
    );

    // Create, rename, then delete with the in-page confirmation.
    browser.click("#new-file-button").await;
    browser.type_into("#new-file-path", "docs/notes.md").await;
    browser.press(keys::ENTER).await;
    browser
        .wait_for(
            "the new file",
            "return document.getElementById('editor-path').textContent === 'docs/notes.md';",
        )
        .await;
    assert!(browser.text("#file-tree").await.contains("docs/"));
    browser.click("#rename-button").await;
    browser
        .eval(
            "document.getElementById('rename-path').value = '';",
            json!([]),
        )
        .await;
    browser.type_into("#rename-path", "docs/guide.md").await;
    browser.press(keys::ENTER).await;
    browser
        .wait_for(
            "the renamed file",
            "return document.getElementById('editor-path').textContent === 'docs/guide.md';",
        )
        .await;
    let files = session.api("/api/state").await["files"].clone();
    assert!(
        files
            .as_array()
            .unwrap()
            .iter()
            .any(|file| file["path"] == "docs/guide.md")
    );

    browser.click("#delete-button").await;
    assert!(
        browser
            .text("#confirm-title")
            .await
            .contains("docs/guide.md")
    );
    assert_eq!(
        browser.active_id().await,
        "confirm-cancel",
        "the safe choice has focus"
    );
    browser.screenshot("07-confirm-delete").await;
    // A backdrop click dismisses without deleting.
    browser
        .eval(
            "const dialog = document.getElementById('confirm-dialog'); dialog.dispatchEvent(new MouseEvent('mousedown', { bubbles: true }));",
            json!([]),
        )
        .await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('confirm-dialog').open;",
                json!([])
            )
            .await,
        Value::Bool(false)
    );
    assert_eq!(browser.active_id().await, "delete-button");
    assert!(
        session.api("/api/state").await["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|file| file["path"] == "docs/guide.md")
    );
    browser.click("#delete-button").await;
    browser.click("#confirm-accept").await;
    browser
        .wait_for(
            "the file to disappear",
            "return !document.querySelector('#file-tree [data-path=\"docs/guide.md\"]');",
        )
        .await;
    assert!(
        !session.api("/api/state").await["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|file| file["path"] == "docs/guide.md")
    );
    assert_eq!(
        browser
            .eval("return window.__confirmCalls;", json!([]))
            .await,
        json!(0)
    );

    // Settings: Esc closes and focus returns.
    browser.click("#settings-button").await;
    browser
        .wait_for(
            "the settings dialog",
            "return document.getElementById('settings-dialog').open;",
        )
        .await;
    // Without a key "Test connection" explains itself inside the dialog.
    browser.click("#settings-test").await;
    browser
        .wait_for(
            "the connection error",
            "return document.getElementById('settings-error').textContent;",
        )
        .await;
    assert_eq!(
        browser.text("#settings-error").await,
        "OpenRouter needs an API key: enter one to test the connection. (OPENROUTER_CONFIGURATION_ERROR)"
    );
    browser.screenshot("08-settings").await;
    browser.press(keys::ESCAPE).await;
    assert_eq!(browser.active_id().await, "settings-button");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_runs_a_sample_and_the_trace_shows_and_copies_it() {
    let session = Session::open(1920, 1080).await;
    let browser = &session.browser;
    browser.grant("clipboard-read").await;
    browser.grant("clipboard-write").await;
    session.side_tab("catalog").await;
    let scopes = browser.text("#catalog-scopes").await;
    assert!(scopes.contains("All 23"), "{scopes}");
    assert!(scopes.contains("Preview 5"), "{scopes}");
    browser
        .click("#catalog-scopes [data-scope=\"preview\"]")
        .await;
    assert_eq!(
        browser
            .eval(
                "return document.querySelectorAll('#catalog-list .tool').length;",
                json!([])
            )
            .await,
        json!(5)
    );
    browser
        .click("#catalog-list [data-tool=\"preview.setTheme\"]")
        .await;
    let revision = session.revision().await;
    let sample: Value = serde_json::from_str(
        browser
            .eval(
                "return document.getElementById('sample-args').value;",
                json!([]),
            )
            .await
            .as_str()
            .unwrap(),
    )
    .expect("the sample is JSON");
    assert_eq!(
        sample,
        json!({"theme": "violet", "expectedRevision": revision})
    );
    assert!(
        browser
            .text("#catalog-detail .policy")
            .await
            .contains("approval")
    );

    // Edit the arguments and run them through the registry.
    browser
        .eval(
            "document.getElementById('sample-args').value = '';",
            json!([]),
        )
        .await;
    browser
        .type_into(
            "#sample-args",
            &format!("{{\"theme\": \"amber\", \"expectedRevision\": {revision}}}"),
        )
        .await;
    browser.click("#run-sample").await;
    browser
        .wait_for(
            "the sample result",
            "return document.querySelector('#sample-result .result-head')?.textContent ?? '';",
        )
        .await;
    assert_eq!(
        browser.text("#sample-result .result-head").await,
        "Succeeded"
    );
    session.wait_preview_ready().await;
    assert!(
        session
            .source("styles.css")
            .await
            .contains("--accent: #f59e0b")
    );
    assert_eq!(preview_accent(browser).await, "#f59e0b");
    // Edited JSON is kept across the revision change.
    let kept = browser
        .eval(
            "return document.getElementById('sample-args').value;",
            json!([]),
        )
        .await;
    assert!(kept.as_str().unwrap().contains("amber"), "{kept}");
    browser.screenshot("09-catalog-run-sample").await;

    // Copy tools/call puts the exact request (with the edited arguments) on the clipboard.
    browser
        .click("#catalog-detail .copy-row button:nth-child(2)")
        .await;
    browser
        .wait_for(
            "the tools/call copy",
            "return document.getElementById('status-message').textContent === 'tools/call JSON copied.';",
        )
        .await;
    let copied = browser
        .eval_async(
            "navigator.clipboard.readText().then(arguments[0], (error) => arguments[0]('ERR ' + error));",
            json!([]),
        )
        .await;
    let copied: Value = serde_json::from_str(copied.as_str().unwrap()).expect("tools/call JSON");
    assert_eq!(copied["method"], "tools/call");
    assert_eq!(copied["params"]["name"], "preview.setTheme");
    assert_eq!(copied["params"]["arguments"]["theme"], "amber");

    // Broken JSON is reported inside the panel and nothing runs.
    let before = session.revision().await;
    browser
        .eval(
            "document.getElementById('sample-args').value = '{broken';",
            json!([]),
        )
        .await;
    browser.click("#run-sample").await;
    assert!(
        browser
            .text("#sample-error")
            .await
            .contains("not valid JSON")
    );
    assert_eq!(session.revision().await, before);

    // The trace lists the call with source · mode, and Copy puts the rows on the clipboard.
    session.side_tab("trace").await;
    browser
        .wait_for("a setTheme trace row", "return [...document.querySelectorAll('#trace-log .trace-row')].some((row) => row.textContent.includes('preview.setTheme') && row.dataset.status === 'completed');")
        .await;
    let row_text = browser
        .eval("return [...document.querySelectorAll('#trace-log .trace-row')].find((row) => row.textContent.includes('preview.setTheme')).textContent;", json!([]))
        .await;
    assert!(
        row_text.as_str().unwrap().contains("local · direct"),
        "{row_text}"
    );
    let sessions = browser
        .eval("return [...document.getElementById('trace-session').options].map((option) => option.value);", json!([]))
        .await;
    assert!(
        sessions
            .as_array()
            .unwrap()
            .iter()
            .any(|id| id == "studio-ui"),
        "{sessions}"
    );
    browser.click("#copy-trace").await;
    browser
        .wait_for(
            "the copy confirmation",
            "return document.getElementById('status-message').textContent.startsWith('Copied');",
        )
        .await;
    let clipboard = browser
        .eval_async("navigator.clipboard.readText().then(arguments[0], (error) => arguments[0]('ERR ' + error));", json!([]))
        .await;
    let copied: Value =
        serde_json::from_str(clipboard.as_str().unwrap()).expect("the copied trace is JSON");
    assert!(
        copied["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["name"] == "preview.setTheme")
    );
    browser.screenshot("10-trace").await;

    // Clear asks first; afterwards the trace is empty.
    browser.click("#clear-trace").await;
    browser.click("#confirm-accept").await;
    browser
        .wait_for(
            "an empty trace",
            "return document.querySelectorAll('#trace-log .trace-row').length === 0;",
        )
        .await;
    assert!(
        session.api("/api/trace").await["rows"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_search_finds_lines_and_a_prompt_deep_link_is_never_run() {
    let session = Session::start(1280, 800, "?prompt=make%20it%20rose").await;
    let browser = &session.browser;
    assert_eq!(
        browser
            .eval("return document.getElementById('prompt').value;", json!([]))
            .await,
        "make it rose"
    );
    assert!(
        !browser.url().await.contains("prompt="),
        "the link is removed from the address"
    );
    // Give a (wrong) auto-run every chance to start, then check nothing ran.
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let trace = session.api("/api/trace").await;
    assert!(
        !trace["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["kind"] == "agent.request"),
        "{trace}"
    );
    assert!(
        session
            .api("/api/approvals")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(browser.text("#chat-log .entry.user").await, "");
    browser.screenshot("11-deep-link").await;

    // The composer takes at most the 4,000 characters a prompt may have.
    for (length, kept) in [(4_000, 4_000), (4_001, 4_000)] {
        browser
            .goto(&format!(
                "{}?prompt={}",
                session.studio.url(),
                "a".repeat(length)
            ))
            .await;
        session.wait_ready().await;
        let value = browser
            .eval(
                "return document.getElementById('prompt').value.length;",
                json!([]),
            )
            .await;
        assert_eq!(value, json!(kept), "a {length}-character link");
    }

    // The explorer tree is keyboard-navigable: Arrow Down moves, Enter opens.
    session.open_file("app.js").await;
    browser
        .eval(
            "document.querySelector('#file-tree [data-path=\"app.js\"]').focus();",
            json!([]),
        )
        .await;
    browser.press(keys::ARROW_DOWN).await;
    assert_eq!(
        browser
            .eval("return document.activeElement.dataset.path;", json!([]))
            .await,
        "index.html"
    );
    browser.press(keys::ENTER).await;
    browser
        .wait_for(
            "index.html from the keyboard",
            "return document.getElementById('editor-path').textContent === 'index.html';",
        )
        .await;

    // Ctrl+Shift+F opens the workspace search.
    browser.click("#file-tree").await;
    browser.chord(&[keys::CONTROL, keys::SHIFT, "f"]).await;
    assert_eq!(browser.active_id().await, "workspace-search");
    browser.type_into("#workspace-search", "feature").await;
    browser
        .wait_for(
            "search results",
            "return document.querySelectorAll('#search-results .search-hit').length > 0;",
        )
        .await;
    let hits = browser
        .eval("return [...document.querySelectorAll('#search-results .where')].map((node) => node.textContent);", json!([]))
        .await;
    let hits: Vec<&str> = hits
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        hits.iter().any(|hit| hit.starts_with("index.html:")),
        "{hits:?}"
    );
    assert!(
        hits.iter().any(|hit| hit.starts_with("styles.css:")),
        "{hits:?}"
    );
    assert!(browser.text("#search-summary").await.contains("match"));
    browser.screenshot("12-workspace-search").await;

    // A hit opens its file at the line.
    browser
        .click("#search-results .search-hit[aria-label^=\"styles.css\"]")
        .await;
    browser
        .wait_for(
            "styles.css in the editor",
            "return document.getElementById('editor-path').textContent === 'styles.css';",
        )
        .await;
    let selected = browser
        .eval("const editor = document.getElementById('editor'); return editor.value.slice(editor.selectionStart, editor.selectionEnd);", json!([]))
        .await;
    assert_eq!(selected.as_str().unwrap().to_lowercase(), "feature");
    assert!(browser.text("#editor-tabs").await.contains("styles.css"));

    // The unsaved draft is searched too.
    browser.click("#editor").await;
    browser.chord(&[keys::CONTROL, "f"]).await;
    browser.type_into("#find-input", "zzz-draft-marker").await;
    assert_eq!(browser.text("#find-count").await, "No results");
    browser.press(keys::ESCAPE).await;
    browser.type_into("#editor", "/* zzz-draft-marker */").await;
    browser.chord(&[keys::CONTROL, keys::SHIFT, "f"]).await;
    browser
        .eval(
            "document.getElementById('workspace-search').value = '';",
            json!([]),
        )
        .await;
    browser
        .type_into("#workspace-search", "zzz-draft-marker")
        .await;
    browser
        .wait_for(
            "the draft hit",
            "return document.querySelectorAll('#search-results .search-hit').length === 1;",
        )
        .await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layout_stays_usable_at_1280_and_1920() {
    for (width, height) in [(1280, 800), (1920, 1080)] {
        let session = Session::open(width, height).await;
        let browser = &session.browser;
        let layout = browser
            .eval(
                "const box = (selector) => { const rect = document.querySelector(selector).getBoundingClientRect(); return { w: rect.width, h: rect.height, bottom: rect.bottom, right: rect.right }; };
                 return { scrollW: document.documentElement.scrollWidth, scrollH: document.documentElement.scrollHeight, innerW: innerWidth, innerH: innerHeight,
                          explorer: box('.explorer'), editor: box('.code-surface'), preview: box('#preview'), side: box('.side'), composer: box('#prompt'), status: box('.statusbar') };",
                json!([]),
            )
            .await;
        let number = |path: &[&str]| -> f64 {
            path.iter()
                .fold(&layout, |node, key| &node[*key])
                .as_f64()
                .unwrap_or(-1.0)
        };
        assert_eq!(number(&["innerW"]), f64::from(width), "{layout}");
        assert!(
            number(&["scrollW"]) <= number(&["innerW"]),
            "no horizontal page scroll: {layout}"
        );
        assert!(
            number(&["scrollH"]) <= number(&["innerH"]),
            "no vertical page scroll: {layout}"
        );
        assert!(
            number(&["editor", "w"]) >= 400.0 && number(&["editor", "h"]) >= 250.0,
            "{layout}"
        );
        assert!(
            number(&["preview", "w"]) >= 400.0 && number(&["preview", "h"]) >= 200.0,
            "{layout}"
        );
        assert!(number(&["side", "w"]) >= 320.0, "{layout}");
        assert!(number(&["explorer", "w"]) >= 180.0, "{layout}");
        assert!(
            number(&["composer", "bottom"]) <= f64::from(height),
            "{layout}"
        );
        assert!(
            number(&["status", "bottom"]) <= f64::from(height) + 0.5,
            "{layout}"
        );
        // Every button has an accessible name.
        let unnamed = browser
            .eval("return [...document.querySelectorAll('button')].filter((node) => !(node.getAttribute('aria-label') || node.textContent.trim())).map((node) => node.outerHTML);", json!([]))
            .await;
        assert_eq!(unnamed, json!([]));
        browser
            .screenshot(&format!("00-layout-{width}x{height}"))
            .await;
        // Full screen preview, Esc back.
        browser.click("#fullscreen-preview").await;
        let full = browser
            .eval(
                "return document.getElementById('preview').getBoundingClientRect().width;",
                json!([]),
            )
            .await;
        assert_eq!(full.as_f64(), Some(f64::from(width)));
        browser.press(keys::ESCAPE).await;
        assert_eq!(
            browser.eval("return document.querySelector('.preview-pane').classList.contains('fullscreen');", json!([])).await,
            Value::Bool(false)
        );
        session.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_save_download_and_export_go_through_the_host() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    assert_eq!(browser.text("#diagnostics-count").await, "0");

    // A broken reference written by another caller shows up in the diagnostics panel.
    let index = session.source("index.html").await;
    let broken = index.replace("</main>", "  <img src=\"missing.png\" alt=\"\">\n  </main>");
    let revision = session.revision().await;
    let written = session
        .call_tool(
            "workspace.writeFile",
            json!({"path": "index.html", "source": broken, "expectedRevision": revision}),
        )
        .await;
    assert!(written.get("isError").is_none(), "{written}");
    session.wait_preview_ready().await;
    browser
        .wait_for(
            "a diagnostic",
            "return document.getElementById('diagnostics-count').textContent !== '0';",
        )
        .await;
    let listed = browser.text("#diagnostics-list").await;
    assert!(listed.contains("missing.png"), "{listed}");
    assert!(listed.contains("index.html:"), "{listed}");
    assert!(
        session.editor_text().await.contains("missing.png"),
        "the editor follows another caller's write"
    );
    browser.screenshot("13-diagnostics").await;

    // Typing marks the file unsaved; Ctrl+S saves a checkpoint through the registry.
    browser.click("#editor").await;
    browser
        .type_into("#editor", "<!-- saved with Ctrl+S -->")
        .await;
    browser
        .wait_for(
            "an unsaved marker",
            "return document.querySelector('#file-tree [data-path=\"index.html\"] .unsaved') !== null;",
        )
        .await;
    browser.chord(&[keys::CONTROL, "s"]).await;
    browser
        .wait_for(
            "the checkpoint",
            "return document.getElementById('status-message').textContent === 'Checkpoint saved.';",
        )
        .await;
    assert!(
        session
            .source("index.html")
            .await
            .contains("saved with Ctrl+S")
    );
    let rows = session.api("/api/trace").await["rows"].clone();
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .any(|row| row["name"] == "workspace.saveCheckpoint" && row["status"] == "completed"),
        "{rows}"
    );

    // Workspace undo and redo go through the registry and bring the editor along.
    browser.click("#undo-button").await;
    browser
        .wait_for(
            "the undo",
            "return !document.getElementById('editor').value.includes('saved with Ctrl+S');",
        )
        .await;
    assert!(
        !session
            .source("index.html")
            .await
            .contains("saved with Ctrl+S")
    );
    browser.click("#redo-button").await;
    browser
        .wait_for(
            "the redo",
            "return document.getElementById('editor').value.includes('saved with Ctrl+S');",
        )
        .await;
    assert!(
        session
            .source("index.html")
            .await
            .contains("saved with Ctrl+S")
    );

    // Per-file download goes through workspace.downloadFile; export through the host.
    browser.click("#download-file-button").await;
    browser
        .wait_for(
            "the download",
            "return document.getElementById('editor-status').textContent.startsWith('Downloaded index.html');",
        )
        .await;
    let rows = session.api("/api/trace").await["rows"].clone();
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .any(|row| row["name"] == "workspace.downloadFile" && row["source"] == "local"),
        "{rows}"
    );
    browser.click("#export-button").await;
    browser
        .wait_for(
            "the export",
            "return document.getElementById('status-message').textContent.startsWith('Exported revision');",
        )
        .await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_helpers_keep_highlight_state_and_the_search_limit() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let report = browser
        .eval_async(
            "const done = arguments[0];
             Promise.all([import('/ui/lib/highlight.js'), import('/ui/lib/search.js')]).then(([hl, search]) => {
               const lines = (html) => html.split('\\n');
               const css = lines(hl.highlight('a { color: red; }\\n/* open\\nstill comment */\\nb { margin: 0; }', 'css'));
               const js = lines(hl.highlight('const a = `x\\ny`;\\nlet b = 1; // c', 'javascript'));
               const html = lines(hl.highlight('<!-- a\\nb -->\\n<p class=\"x\">t</p>', 'html'));
               const md = lines(hl.highlight('# Title\\n```\\nconst x = 1;\\n```\\n**bold**', 'markdown'));
               const json = hl.highlight('{\"k\": [1, true, \"s\"]}', 'json');
               const ts = hl.highlight('interface A { b: string }', 'typescript');
               const escaped = hl.highlight('<script>alert(1)</script>', 'plaintext');
               const many = (count) => new Map([['a.txt', Array.from({ length: count }, () => 'needle').join('\\n')]]);
               done({
                 cssCommentCarried: css[2].includes('tok-comment') && !css[2].includes('tok-property'),
                 cssAfterComment: css[3].includes('tok-property'),
                 jsTemplateCarried: js[1].startsWith('<span class=\"tok-string\">y`'),
                 jsAfterTemplate: js[2].includes('tok-keyword') && js[2].includes('tok-comment'),
                 htmlCommentCarried: html[1].includes('tok-comment'),
                 htmlTagAfter: html[2].includes('tok-tag') && html[2].includes('tok-property'),
                 mdHeading: md[0].includes('tok-keyword'),
                 mdFence: md[2].includes('tok-string') && !md[2].includes('tok-keyword'),
                 mdBold: md[4].includes('tok-strong'),
                 jsonKey: json.includes('tok-property') && json.includes('tok-number'),
                 tsKeyword: ts.includes('tok-keyword\">interface'),
                 escaped: escaped === '&lt;script&gt;alert(1)&lt;/script&gt;',
                 max: search.MAX_SEARCH_RESULTS,
                 atLimit: search.searchSources(many(80), 'needle'),
                 overLimit: search.searchSources(many(81), 'NEEDLE'),
               });
             }, (error) => done({ error: String(error) }));",
            json!([]),
        )
        .await;
    for flag in [
        "cssCommentCarried",
        "cssAfterComment",
        "jsTemplateCarried",
        "jsAfterTemplate",
        "htmlCommentCarried",
        "htmlTagAfter",
        "mdHeading",
        "mdFence",
        "mdBold",
        "jsonKey",
        "tsKeyword",
        "escaped",
    ] {
        assert_eq!(report[flag], Value::Bool(true), "{flag}: {report}");
    }
    assert_eq!(report["max"], json!(80));
    assert_eq!(report["atLimit"]["total"], json!(80));
    assert_eq!(report["atLimit"]["results"].as_array().unwrap().len(), 80);
    assert_eq!(report["overLimit"]["total"], json!(81));
    assert_eq!(report["overLimit"]["results"].as_array().unwrap().len(), 80);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_character_budget_is_marked_at_its_edge_and_an_over_budget_write_keeps_the_text() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    session.open_file("README.md").await;
    let set_length = |length: usize| {
        format!(
            "const editor = document.getElementById('editor'); editor.value = 'x'.repeat({length}); editor.dispatchEvent(new Event('input', {{ bubbles: true }}));"
        )
    };
    browser.eval(&set_length(80_000), json!([])).await;
    assert_eq!(browser.text("#char-count").await, "80,000 / 80,000");
    browser
        .wait_for(
            "the 80,000-character write",
            "return document.getElementById('editor-status').textContent.startsWith('Written');",
        )
        .await;
    assert_eq!(session.source("README.md").await.len(), 80_000);

    browser.eval(&set_length(80_001), json!([])).await;
    assert_eq!(
        browser.text("#char-count").await,
        "80,001 / 80,000 · over budget"
    );
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('code-surface').classList.contains('over-budget');",
                json!([])
            )
            .await,
        Value::Bool(true)
    );
    browser
        .wait_for(
            "the refused write",
            "return document.getElementById('editor-status').textContent.startsWith('TOOL_VALIDATION_FAILED');",
        )
        .await;
    assert_eq!(
        session.source("README.md").await.len(),
        80_000,
        "nothing was written"
    );
    assert_eq!(
        session.editor_text().await.len(),
        80_001,
        "the typed text is kept"
    );
    assert!(
        browser
            .eval("return document.querySelector('#file-tree [data-path=\"README.md\"] .unsaved') !== null;", json!([]))
            .await
            == Value::Bool(true),
        "the kept text is marked unsaved"
    );
    browser.screenshot("14-over-budget").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_folder_saves_to_disk_and_reload_asks_before_discarding() {
    let folder = tempfile::tempdir().expect("folder");
    std::fs::write(
        folder.path().join("index.html"),
        "<!doctype html>\n<html><body><h1>From disk</h1></body></html>\n",
    )
    .unwrap();
    std::fs::write(folder.path().join("styles.css"), "body { margin: 0; }\n").unwrap();
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;

    browser
        .type_into("#folder-path", &folder.path().display().to_string())
        .await;
    browser.click("#open-folder-button").await;
    browser
        .wait_for(
            "the folder link",
            "return document.getElementById('folder-badge').textContent.startsWith('folder');",
        )
        .await;
    session.wait_preview_ready().await;
    assert_eq!(browser.text("#save-button").await, "Save to folder");
    assert_eq!(preview_heading(browser).await, "From disk");
    session.open_file("index.html").await;

    // Edit, then Save to folder writes the file on disk.
    browser.click("#editor").await;
    browser
        .eval(
            "const editor = document.getElementById('editor'); const at = editor.value.indexOf('From disk'); editor.setSelectionRange(at, at + 9);",
            json!([]),
        )
        .await;
    browser.type_into("#editor", "Saved to disk").await;
    browser.click("#save-button").await;
    browser
        .wait_for(
            "the folder save",
            "return document.getElementById('status-message').textContent === 'Saved to the folder.';",
        )
        .await;
    let on_disk = std::fs::read_to_string(folder.path().join("index.html")).unwrap();
    assert!(on_disk.contains("Saved to disk"), "{on_disk}");

    // Unsaved edits make Reload ask first; Cancel keeps them.
    browser.type_into("#editor", " (unsaved)").await;
    browser
        .wait_for(
            "the unsaved write",
            "return document.getElementById('revision-badge').textContent.includes('unsaved');",
        )
        .await;
    browser.click("#reload-folder-button").await;
    browser
        .wait_for(
            "the reload confirmation",
            "return document.getElementById('confirm-dialog').open;",
        )
        .await;
    assert!(
        browser
            .text("#confirm-message")
            .await
            .contains("discards 1 unsaved file")
    );
    browser.screenshot("15-reload-confirm").await;
    browser.click("#confirm-cancel").await;
    assert!(session.source("index.html").await.contains("(unsaved)"));
    browser.click("#reload-folder-button").await;
    browser.click("#confirm-accept").await;
    browser
        .wait_for(
            "the disk version",
            "return !document.getElementById('editor').value.includes('(unsaved)') && document.getElementById('editor').value.includes('Saved to disk');",
        )
        .await;

    // Disconnect unlinks the folder and keeps the workspace.
    browser.click("#disconnect-folder-button").await;
    browser
        .wait_for(
            "the browser workspace",
            "return document.getElementById('folder-badge').textContent.startsWith('browser workspace');",
        )
        .await;
    assert!(session.source("index.html").await.contains("Saved to disk"));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_run_waiting_for_approval_shows_a_cancelled_entry() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let styles = session.source("styles.css").await;
    session.submit_prompt("make it rose").await;
    session.wait_approval_card("preview.setTheme").await;
    browser.click("#cancel-run").await;
    let cancelled = session.wait_chat_entry("cancelled").await;
    assert!(!cancelled.is_empty());
    browser
        .wait_for(
            "the approval card to go",
            "return document.querySelectorAll('#approvals .approval').length === 0;",
        )
        .await;
    assert_eq!(session.source("styles.css").await, styles);
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('editor').disabled;",
                json!([])
            )
            .await,
        Value::Bool(false),
        "the editor unlocks"
    );

    // Without a key, OpenRouter fails with a coded entry that offers the local agent instead.
    browser
        .click("#agent-select option[value=\"openrouter\"]")
        .await;
    session.submit_prompt("make it rose").await;
    let failed = session.wait_chat_entry("failed").await;
    assert!(
        failed.contains("OPENROUTER_CONFIGURATION_ERROR"),
        "{failed}"
    );
    browser
        .click("#chat-log .entry.failed .recovery button")
        .await;
    session.wait_approval_card("preview.setTheme").await;
    assert!(
        browser
            .text("#agent-badge")
            .await
            .starts_with("local agent"),
        "the one-request bypass runs the local agent"
    );
    browser.screenshot("16-use-local-agent").await;
    browser.click("#approvals .deny").await;
    session.wait_chat_entry("denied").await;
    assert_eq!(session.source("styles.css").await, styles);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_prompt_shows_the_help_reply_and_reads_and_downloads_show_their_result() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let revision = session.revision().await;

    session.submit_prompt("make it ocean blue").await;
    let reply = session.wait_chat_entry("not-understood").await;
    assert!(reply.contains("did not understand"), "{reply}");
    assert!(
        reply.contains("make it violet, emerald, amber or rose"),
        "{reply}"
    );
    assert!(reply.contains("connect a model provider"), "{reply}");
    browser
        .wait_for(
            "the badge to go idle",
            "return document.getElementById('agent-badge').dataset.state === 'idle';",
        )
        .await;
    let log = browser.text("#chat-log").await;
    assert!(!log.contains("Done"), "no success is claimed: {log}");
    assert_eq!(
        browser
            .eval(
                "return document.querySelectorAll('#chat-log .entry.completed').length;",
                json!([])
            )
            .await,
        json!(0)
    );
    assert_eq!(
        browser
            .text("#chat-log .entry.not-understood .entry-kind")
            .await,
        "not understood",
        "its own outcome, not completed"
    );
    assert_eq!(session.revision().await, revision, "nothing changed");
    browser.screenshot("17-not-understood").await;

    // A word inside a longer request is not a command: no reset is offered, the reply names
    // the part it could not read, and nothing changes.
    session
        .submit_prompt("add a reset button to the hero")
        .await;
    // The earlier not-understood entry is still in the log: wait for this prompt's own.
    let reply = browser
        .wait_for(
            "the reply naming the unread part",
            "const entries = document.querySelectorAll('#chat-log .entry.not-understood .entry-text'); const last = entries[entries.length - 1]?.textContent ?? ''; return last.includes('add a reset button') ? last : '';",
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        reply.contains("did not understand \"add a reset button to the hero\""),
        "{reply}"
    );
    assert_eq!(
        browser
            .eval(
                "return document.querySelectorAll('#approvals .approval').length;",
                json!([])
            )
            .await,
        json!(0),
        "no approval was asked for"
    );
    assert_eq!(session.revision().await, revision, "nothing changed");

    // A patch whose text is missing fails with a line for a person, code kept, not the
    // model's "re-read the file" instructions.
    session
        .submit_prompt(r#"replace "nowhere in this page" with "x""#)
        .await;
    let failed = session.wait_chat_entry("failed").await;
    assert!(
        failed.starts_with("Nothing changed: the text to replace is not in the file")
            && failed.ends_with("(WORKSPACE_PATCH_NOT_FOUND)")
            && !failed.contains("Re-read"),
        "{failed}"
    );

    // A read shows the file it read.
    session.submit_prompt("read app.js").await;
    let shown = session.wait_chat_entry("completed").await;
    let app = session.source("app.js").await;
    assert!(shown.starts_with("app.js · "), "{shown}");
    assert!(shown.contains(app.lines().next().unwrap()), "{shown}");
    browser.screenshot("18-read-file").await;

    // A download request hands the file to the page once approved.
    browser
        .eval(
            "window.__handed = []; const click = HTMLAnchorElement.prototype.click; HTMLAnchorElement.prototype.click = function () { if (this.download) window.__handed.push({ name: this.download, text: fetch(this.href).then((r) => r.text()) }); return click.call(this); }; return true;",
            json!([]),
        )
        .await;
    session.submit_prompt("download index.html").await;
    session.wait_approval_card("workspace.downloadFile").await;
    browser.click("#approvals .approve").await;
    browser
        .wait_for(
            "the downloaded entry",
            "return [...document.querySelectorAll('#chat-log .entry.completed .entry-text')].some((node) => node.textContent.startsWith('Downloaded index.html'));",
        )
        .await;
    let handed = browser
        .eval_async(
            "const done = arguments[arguments.length - 1]; const file = window.__handed.at(-1); file.text.then((text) => done({ name: file.name, text }));",
            json!([]),
        )
        .await;
    assert_eq!(handed["name"], "index.html");
    assert_eq!(handed["text"], session.source("index.html").await);

    // On a person's own stylesheet (no accent tokens) the theme prompt says what is missing,
    // without an approval card.
    let revision = session.revision().await;
    session
        .call_tool(
            "workspace.writeFile",
            json!({"path": "styles.css", "source": "body { color: navy; }\n", "expectedRevision": revision}),
        )
        .await;
    session.wait_preview_ready().await;
    session.submit_prompt("make it rose").await;
    // The patch failure above is still in the log: wait for this prompt's own entry.
    let failed = browser
        .wait_for(
            "the missing-target failure",
            "const entries = document.querySelectorAll('#chat-log .entry.failed .entry-text'); const last = entries[entries.length - 1]?.textContent ?? ''; return last.includes('--accent') ? last : '';",
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        failed.starts_with("styles.css has no --accent")
            && failed.ends_with("(PREVIEW_TARGET_NOT_FOUND)"),
        "{failed}"
    );
    assert_eq!(
        browser
            .eval(
                "return document.querySelectorAll('#approvals .approval').length;",
                json!([])
            )
            .await,
        json!(0),
        "no approval that could only fail"
    );
    browser.screenshot("19-missing-theme-target").await;
    session.close().await;
}

impl Session {
    /// Waits until the status line reports a refreshed preview of the current revision and the
    /// host holds the iframe's fresh acknowledgement.
    async fn wait_preview_refreshed(&self, path: &str) {
        let revision = self.revision().await;
        self.browser
            .wait_for(
                &format!("the preview refresh from {path}"),
                "const text = document.getElementById('status-message').textContent; \
                 return text.startsWith('Preview refreshed') || text.includes('PREVIEW_');",
            )
            .await;
        assert_eq!(
            self.browser.text("#status-message").await,
            format!("Preview refreshed · revision {revision}"),
            "{path}"
        );
        assert_eq!(
            self.api("/api/state").await["status"]["preview"],
            json!({"revision": revision, "status": "ready"}),
            "{path}: the attached iframe acknowledged the refresh"
        );
    }

    async fn clear_status(&self) {
        self.browser
            .eval(
                "document.getElementById('status-message').textContent = '';",
                json!([]),
            )
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refresh_path_is_acknowledged_by_the_attached_iframe() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;

    // 1. The ⟳ button in the preview chrome.
    session.clear_status().await;
    browser.click("#refresh-preview").await;
    session.wait_preview_refreshed("the ⟳ button").await;
    browser.screenshot("20-refreshed-by-button").await;

    // 2. preview.refresh from the Tools tab.
    session.clear_status().await;
    session.side_tab("catalog").await;
    browser
        .click("#catalog-scopes [data-scope=\"preview\"]")
        .await;
    browser
        .click("#catalog-list [data-tool=\"preview.refresh\"]")
        .await;
    browser.click("#run-sample").await;
    let head = browser
        .wait_for(
            "the preview.refresh sample result",
            "return document.querySelector('#sample-result .result-head')?.textContent ?? '';",
        )
        .await;
    assert_eq!(head, "Succeeded", "preview.refresh from the Tools tab");
    browser.screenshot("21-refreshed-from-tools").await;

    // 3. The "refresh preview" recipe, approved.
    session.side_tab("chat").await;
    browser
        .click("#recipe-select option[value=\"refresh\"]")
        .await;
    assert_eq!(
        browser
            .eval("return document.getElementById('prompt').value;", json!([]))
            .await,
        json!("refresh the preview")
    );
    browser.click("#send-prompt").await;
    session.wait_approval_card("preview.refresh").await;
    browser.click("#approvals .approve").await;
    let entry = browser
        .wait_for(
            "the refresh run to finish",
            "const entry = document.querySelector('#chat-log .entry.completed, #chat-log .entry.failed'); \
             return entry ? `${entry.dataset.kind}: ${entry.textContent}` : '';",
        )
        .await;
    assert!(entry.as_str().unwrap().starts_with("completed"), "{entry}");
    browser.screenshot("22-refreshed-by-recipe").await;

    // 4. The "Refresh preview" recovery of a run whose change was applied while the preview
    // acknowledgement got lost.
    let before = session.revision().await;
    browser.eval(DROP_PREVIEW_ACKS, json!([])).await;
    session.submit_prompt("make it amber").await;
    session.wait_approval_card("preview.setTheme").await;
    browser.click("#approvals .approve").await;
    let applied = browser
        .wait_for(
            "the applied run offering a preview refresh",
            "const entries = [...document.querySelectorAll('#chat-log .entry')]; \
             const last = entries[entries.length - 1]; \
             return last && last.querySelector('.recovery button') ? `${last.dataset.kind}: ${last.textContent}` : '';",
        )
        .await;
    let applied = applied.as_str().unwrap();
    assert!(applied.starts_with("completed"), "{applied}");
    assert!(
        applied.contains("Refresh preview") && !applied.contains("Retry"),
        "{applied}"
    );
    assert_eq!(session.revision().await, before + 1, "applied once");
    assert!(session.source("styles.css").await.contains("#f59e0b"));
    browser.screenshot("23-applied-preview-unconfirmed").await;
    browser.eval(DELIVER_PREVIEW_ACKS, json!([])).await;
    session.clear_status().await;
    browser
        .click("#chat-log .entry:last-child .recovery button")
        .await;
    session.wait_preview_refreshed("the recovery button").await;
    browser.screenshot("24-refreshed-by-recovery").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_applied_without_preview_confirmation_is_never_called_unsaved() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    session.open_file("README.md").await;
    let before = session.revision().await;
    browser.eval(DROP_PREVIEW_ACKS, json!([])).await;
    browser
        .eval(
            "const editor = document.getElementById('editor'); editor.value = '# Applied'; \
             editor.dispatchEvent(new Event('input', { bubbles: true }));",
            json!([]),
        )
        .await;
    let status = browser
        .wait_for(
            "the write's answer",
            "const text = document.getElementById('editor-status').textContent; \
             return text === 'Writing…' ? '' : text;",
        )
        .await;
    let status = status.as_str().unwrap();
    assert!(!status.contains("unsaved"), "{status}");
    assert_eq!(
        status,
        format!(
            "Written · revision {} · the preview did not confirm it (PREVIEW_ACK_TIMEOUT)",
            before + 1
        )
    );
    assert_eq!(session.source("README.md").await, "# Applied");
    assert_eq!(
        session.revision().await,
        before + 1,
        "written once, never retried"
    );
    browser
        .screenshot("25-write-applied-preview-unconfirmed")
        .await;

    browser.eval(DELIVER_PREVIEW_ACKS, json!([])).await;
    session.clear_status().await;
    browser.click("#refresh-unconfirmed").await;
    session
        .wait_preview_refreshed("the status bar's Refresh preview")
        .await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('refresh-unconfirmed').hidden;",
                json!([])
            )
            .await,
        Value::Bool(true),
        "the offer goes once the preview is confirmed"
    );
    assert_eq!(session.revision().await, before + 1);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tsx_runtime_error_is_listed_at_its_line_and_reported_to_the_caller() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let write = |tool: &'static str, path: &'static str, source: String| {
        let session = &session;
        async move {
            let revision = session.revision().await;
            session
                .call_tool(
                    tool,
                    json!({"path": path, "source": source, "expectedRevision": revision}),
                )
                .await
        }
    };
    let app = "interface Config { label: string }\n\nexport function start(): void {\n  const config = undefined as unknown as Config;\n  document.body.dataset.label = config.label;\n}\n";
    let written = write("workspace.createFile", "src/App.tsx", app.into()).await;
    assert!(written.get("isError").is_none(), "{written}");
    let main = "import { start } from './App';\nconsole.error('starting', 1);\nstart();\n";
    let written = write("workspace.createFile", "src/main.tsx", main.into()).await;
    assert!(written.get("isError").is_none(), "{written}");
    let index = session.source("index.html").await.replace(
        "</body>",
        "<script type=\"module\" src=\"src/main.tsx\"></script>\n</body>",
    );
    // The write that loads the module is applied, and its caller is told what broke and where.
    let written = write("workspace.writeFile", "index.html", index).await;
    let error = &written["error"];
    assert_eq!(error["code"], "PREVIEW_RUNTIME_ERROR", "{written}");
    assert_eq!(error["details"]["committed"], true, "{written}");
    let first = error["details"]["message"].as_str().unwrap_or_default();
    assert!(first.contains("(src/App.tsx:5:"), "{written}");

    browser
        .wait_for(
            "the runtime error in the diagnostics",
            "return document.getElementById('diagnostics-list').textContent.includes('src/App.tsx:5');",
        )
        .await;
    let listed = browser.text("#diagnostics-list").await;
    assert!(listed.contains("uncaught error"), "{listed}");
    assert!(
        listed.contains("src/main.tsx:2"),
        "console.error is listed too: {listed}"
    );
    browser.screenshot("14-runtime-error").await;

    let status = session.call_tool("preview.getStatus", json!({})).await;
    let report = &status["structuredContent"]["runtimeErrors"];
    let errors = report["errors"].as_array().expect("runtime errors");
    assert!(
        errors.iter().any(|error| error["kind"] == "error"
            && error["source"]["path"] == "src/App.tsx"
            && error["source"]["line"] == 5),
        "{report}"
    );
    assert!(
        errors
            .iter()
            .any(|error| error["kind"] == "console" && error["message"] == "starting 1"),
        "{report}"
    );

    // Its link opens the file the error happened in.
    browser
        .eval(
            "[...document.querySelectorAll('#diagnostics-list .where')].find((link) => link.textContent.startsWith('src/App.tsx:5')).click();",
            json!([]),
        )
        .await;
    browser
        .wait_for(
            "App.tsx in the editor",
            "return document.getElementById('editor-path').textContent === 'src/App.tsx';",
        )
        .await;
    session.close().await;
}

/// Types `name` into the New file dialog and submits it; returns the dialog's error line.
async fn refused_new_file(browser: &Browser, name: &str) -> String {
    browser.click("#new-file-button").await;
    browser
        .eval(
            "document.getElementById('new-file-path').value = '';",
            json!([]),
        )
        .await;
    browser.type_into("#new-file-path", name).await;
    browser.press(keys::ENTER).await;
    let error = browser
        .wait_for(
            &format!("the refusal of {name:?}"),
            "return document.getElementById('new-file-error').textContent;",
        )
        .await;
    let typed = browser
        .eval(
            "return document.getElementById('new-file-path').value;",
            json!([]),
        )
        .await;
    assert_eq!(typed, name, "the name is never cut");
    if name == "Index.html" {
        browser.screenshot("new-file-name-refused").await;
    }
    browser.press(keys::ESCAPE).await;
    error.as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn new_file_names_that_clash_on_common_file_systems_are_refused_with_the_reason() {
    let session = Session::open(1280, 800).await;
    session.wait_ready().await;
    let browser = &session.browser;
    let long = format!("{}.js", "n".repeat(197));
    let cases = [
        (long.as_str(), "160"),
        ("dir/", "names a folder"),
        ("Index.html", "only in case"),
        ("CON", "device name"),
        ("x?y.js", "cannot hold '?'"),
        ("#hash.js", "cannot hold '#'"),
        ("notes.", "ends with a dot"),
    ];
    for (name, says) in cases {
        let error = refused_new_file(browser, name).await;
        assert!(error.contains(says), "{name:?}: {error}");
    }
    let files = session.api("/api/state").await["files"].clone();
    let paths: Vec<&str> = files
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|file| file["path"].as_str())
        .collect();
    assert!(
        !paths
            .iter()
            .any(|path| path.starts_with('n') && path.len() > 100 || *path == "dir"),
        "nothing was created: {paths:?}"
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_z_undoes_a_typing_burst_like_the_undo_button_and_ctrl_shift_z_redoes_it() {
    let session = Session::open(1280, 800).await;
    session.wait_ready().await;
    let browser = &session.browser;
    let before = session.editor_text().await;
    browser.click("#editor").await;
    browser
        .eval(
            "const editor = document.getElementById('editor'); editor.setSelectionRange(0, 0);",
            json!([]),
        )
        .await;
    browser.type_into("#editor", "burst ").await;
    let typed = format!("burst {before}");
    let mut waited = 0;
    while session.source("index.html").await != typed {
        waited += 1;
        assert!(waited < 300, "the burst was never written");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let written = session.revision().await;
    browser.chord(&[keys::CONTROL, "z"]).await;
    let script = format!(
        "return document.getElementById('editor').value === {};",
        serde_json::to_string(&before).expect("JSON")
    );
    browser
        .wait_for("one Ctrl+Z to take back the whole burst", &script)
        .await;
    assert_eq!(session.source("index.html").await, before);
    assert_eq!(
        session.revision().await,
        written + 1,
        "one undo step, not one write per character"
    );
    browser.chord(&[keys::CONTROL, keys::SHIFT, "z"]).await;
    let script = format!(
        "return document.getElementById('editor').value === {};",
        serde_json::to_string(&typed).expect("JSON")
    );
    browser.wait_for("Ctrl+Shift+Z to redo it", &script).await;
    assert_eq!(session.source("index.html").await, typed);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_blocked_cdn_import_explains_itself_in_the_preview() {
    let session = Session::open(1280, 800).await;
    session.wait_ready().await;
    let browser = &session.browser;
    let index = session.source("index.html").await.replace(
        "</body>",
        "<script type=\"module\">import confetti from 'https://cdn.example.test/confetti.js';\nconfetti();</script>\n</body>",
    );
    let revision = session.revision().await;
    let written = session
        .call_tool(
            "workspace.writeFile",
            json!({"path": "index.html", "source": index, "expectedRevision": revision}),
        )
        .await;
    // The compiler's own explanation (a data: module) runs: the CSP lets it, so the person reads
    // why, not "Script failed to load".
    browser
        .wait_for(
            "the blocked import's explanation in the diagnostics",
            "return document.getElementById('diagnostics-list').textContent.includes('External module import blocked');",
        )
        .await;
    let listed = browser.text("#diagnostics-list").await;
    assert!(listed.contains("cdn.example.test"), "{listed}");
    assert!(!listed.contains("failed to load"), "{listed}");
    assert_eq!(written["error"]["details"]["committed"], true, "{written}");
    browser.screenshot("blocked-cdn-import").await;
    session.close().await;
}
