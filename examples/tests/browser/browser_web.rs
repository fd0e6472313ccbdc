//! The realtime web-coding page (`/web`) in a real headless Chromium (through ChromeDriver):
//! a palette call, an approved agent run and an editor save each change the sandboxed iframe,
//! which acknowledges the new revision before the tool answers; leaving the page cancels a run
//! that is still waiting. Screenshots land in `$TEST_OUTPUT_DIR/browser`.

use serde_json::{Value, json};

use crate::support::browser::{DELIVER_PREVIEW_ACKS, DROP_PREVIEW_ACKS, suite::SuitePage};

/// A running studio, its data directory and a browser on its page.
type Session = SuitePage<Suite>;
/// Marks this suite's helpers on [`SuitePage`].
enum Suite {}

impl Session {
    async fn open(width: u32, height: u32) -> Self {
        let session = Self::start(width, height, "web").await;
        session.wait_preview_ready().await;
        session
    }

    async fn revision(&self) -> u64 {
        self.api("/api/web/state").await["revision"]
            .as_u64()
            .expect("revision")
    }

    /// Waits until the iframe acknowledged the web workspace's current revision.
    async fn wait_preview_ready(&self) -> u64 {
        let revision = self.revision().await;
        self.wait_revision_ready(revision).await;
        revision
    }

    async fn wait_revision_ready(&self, revision: u64) {
        self.browser
            .wait_for(
                &format!("the preview to acknowledge revision {revision}"),
                &format!(
                    "return document.getElementById('web-preview-status').textContent === 'revision {revision} ready';"
                ),
            )
            .await;
    }

    /// Runs `script` inside the sandboxed preview iframe.
    async fn in_preview(&self, script: &str) -> Value {
        self.browser.enter_frame("#web-preview").await;
        let value = self.browser.eval(script, json!([])).await;
        self.browser.leave_frame().await;
        value
    }

    async fn side_tab(&self, name: &str) {
        self.browser
            .click(&format!(".web-side [data-tab=\"{name}\"]"))
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn palette_agent_and_editor_edits_are_acknowledged_by_the_iframe() {
    let session = Session::open(1440, 900).await;
    let browser = &session.browser;
    let first = session.revision().await;
    assert_eq!(browser.text("#web-revision").await, format!("rev {first}"));
    assert_eq!(
        session
            .in_preview("return getComputedStyle(document.documentElement).getPropertyValue('--accent').trim();")
            .await,
        "#10b981"
    );
    browser.screenshot("web-01-page-1440x900").await;

    // Palette: web.setTheme with its generated sample (amber, the current revision).
    session.side_tab("tools").await;
    browser
        .click("#web-palette [data-tool=\"web.setTheme\"]")
        .await;
    let sample: Value = serde_json::from_str(
        browser
            .eval(
                "return document.getElementById('web-tool-args').value;",
                json!([]),
            )
            .await
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(sample, json!({"theme": "amber", "expectedRevision": first}));
    browser.click("#web-tool-run").await;
    let output = browser
        .wait_for(
            "the palette result",
            "const out = document.getElementById('web-tool-output'); return out.dataset.state === 'ok' ? out.textContent : '';",
        )
        .await;
    let result: Value = serde_json::from_str(output.as_str().unwrap()).unwrap();
    assert_eq!(result["revision"], first + 1);
    assert_eq!(
        result["preview"],
        json!({"revision": first + 1, "status": "ready"}),
        "the tool answered after the iframe acknowledged the revision"
    );
    session.wait_revision_ready(first + 1).await;
    assert_eq!(
        session
            .in_preview("return getComputedStyle(document.querySelector('.hero')).backgroundColor;")
            .await,
        "rgb(255, 245, 220)",
        "the iframe shows the amber theme"
    );
    browser.screenshot("web-02-palette-amber").await;

    // Agent: the hero update waits for approval in the page, then the iframe shows it.
    session.side_tab("chat").await;
    browser
        .type_into("#web-prompt", r#"set the hero to "Hello from the agent""#)
        .await;
    browser.click("#web-run").await;
    browser
        .wait_for(
            "the approval card",
            "return document.querySelector('#web-approvals .approval-tool')?.textContent === 'web.updateHero';",
        )
        .await;
    let card = browser.text("#web-approvals .approval").await;
    assert!(
        card.contains("Asked by") && card.contains("The agent"),
        "{card}"
    );
    assert!(
        card.contains("title, expectedRevision") || card.contains("expectedRevision, title"),
        "{card}"
    );
    // The card shows the value and the proposed change as a diff (issue 34).
    assert!(card.contains("title: Hello from the agent"), "{card}");
    browser
        .wait_for(
            "the diff of the hero change",
            "return document.querySelector('#web-approvals .diff-added .diff-code')?.textContent.includes('Hello from the agent') === true;",
        )
        .await;
    let card = browser.text("#web-approvals .approval").await;
    assert!(card.contains("modified · index.html · +1 −1"), "{card}");
    browser
        .wait_for(
            "the agent badge to show the approval wait",
            "return document.getElementById('web-agent-badge').textContent.includes('approval');",
        )
        .await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('web-trace-clear').disabled;",
                json!([])
            )
            .await,
        Value::Bool(true),
        "Clear is disabled while a run is active"
    );
    browser.screenshot("web-03-approval").await;
    browser.click("#web-approvals .approve").await;
    browser
        .wait_for(
            "the completed chat entry",
            "return document.querySelector('#web-chat-log .entry.completed .entry-text')?.textContent ?? '';",
        )
        .await;
    session.wait_revision_ready(first + 2).await;
    assert_eq!(
        session
            .in_preview("return document.getElementById('hero-title').textContent;")
            .await,
        "Hello from the agent"
    );

    // Editor: append a rule to styles.css and save it with the revision it was based on.
    browser.click("#web-tabs [data-path=\"styles.css\"]").await;
    browser
        .wait_for(
            "styles.css in the editor",
            "return document.getElementById('web-editor').value.includes('--accent: #f59e0b');",
        )
        .await;
    browser
        .type_into("#web-editor", "\n#hero-title { color: rgb(1, 2, 3); }\n")
        .await;
    assert!(
        browser
            .text("#web-tabs [data-path=\"styles.css\"]")
            .await
            .ends_with('•')
    );
    browser.click("#web-save").await;
    session.wait_revision_ready(first + 3).await;
    assert_eq!(
        session
            .in_preview("return getComputedStyle(document.getElementById('hero-title')).color;")
            .await,
        "rgb(1, 2, 3)"
    );
    assert!(
        browser
            .text("#web-editor-status")
            .await
            .contains(&format!("revision {} (ready)", first + 3))
    );

    // A draft overlapping a change made elsewhere is refused on save, and nothing changes.
    browser.click("#web-tabs [data-path=\"app.js\"]").await;
    browser
        .wait_for(
            "app.js in the editor",
            "return document.getElementById('web-editor').value.includes('pulse');",
        )
        .await;
    browser.type_into("#web-editor", "\n// draft\n").await;
    let app = session
        .call_tool("web.readFile", json!({"path": "app.js"}))
        .await;
    // Another client appends where the draft was typed (the end of the file).
    let other = session
        .call_tool(
            "web.writeFile",
            json!({
                "path": "app.js",
                "source": format!("{}// theirs\n", app["structuredContent"]["source"].as_str().unwrap()),
                "expectedRevision": first + 3,
            }),
        )
        .await;
    assert_eq!(other["structuredContent"]["revision"], first + 4, "{other}");
    session.wait_revision_ready(first + 4).await;
    browser.click("#web-save").await;
    let conflict = browser
        .wait_for(
            "the stale save to be refused",
            "const status = document.getElementById('web-editor-status'); return status.classList.contains('error') && status.textContent.includes('WORKSPACE_REVISION_CONFLICT') ? status.textContent : '';",
        )
        .await;
    assert!(
        conflict
            .as_str()
            .unwrap()
            .contains("WORKSPACE_REVISION_CONFLICT")
    );
    assert_eq!(session.revision().await, first + 4);
    let stored = session
        .call_tool("web.readFile", json!({"path": "app.js"}))
        .await;
    assert!(
        !stored["structuredContent"]["source"]
            .as_str()
            .unwrap()
            .contains("// draft")
    );
    browser.click("#web-revert").await;
    assert!(
        !browser
            .eval(
                "return document.getElementById('web-editor').value;",
                json!([])
            )
            .await
            .as_str()
            .unwrap()
            .contains("// draft"),
        "discarding shows the stored source"
    );

    // The trace lists the agent run and the page's direct calls as separate sessions.
    session.side_tab("trace").await;
    let sessions = browser
        .eval(
            "return document.getElementById('web-trace-session').options.length;",
            json!([]),
        )
        .await;
    assert!(
        sessions.as_u64().unwrap() >= 3,
        "All + two sessions: {sessions}"
    );
    assert!(browser.text("#web-trace").await.contains("agent.request"));
    browser.screenshot("web-04-edited").await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_page_cancels_the_run_in_flight() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let revision = session.revision().await;
    browser.type_into("#web-prompt", "make it rose").await;
    browser.click("#web-run").await;
    browser
        .wait_for(
            "the approval card",
            "return document.querySelector('#web-approvals .approval-tool')?.textContent === 'web.setTheme';",
        )
        .await;
    browser.goto(&session.studio.url()).await;
    let mut cancelled = false;
    for _ in 0..600 {
        let trace = session.api("/api/trace").await;
        cancelled = trace["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["kind"] == "agent.request" && row["status"] == "cancelled");
        if cancelled {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(cancelled, "the run ended as cancelled");
    assert!(
        session
            .api("/api/approvals")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(session.revision().await, revision, "nothing changed");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_prompt_shows_the_help_reply_and_a_status_prompt_the_status() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    session.side_tab("chat").await;
    browser
        .type_into("#web-prompt", "add a dark mode toggle")
        .await;
    browser.click("#web-run").await;
    let reply = browser
        .wait_for(
            "the not-understood entry",
            "return document.querySelector('#web-chat-log .entry.not-understood .entry-text')?.textContent ?? '';",
        )
        .await;
    let reply = reply.as_str().unwrap();
    assert!(reply.contains("did not understand"), "{reply}");
    assert!(reply.contains("connect a model provider"), "{reply}");
    let log = browser.text("#web-chat-log").await;
    assert!(!log.contains("Done"), "{log}");
    assert_eq!(
        browser
            .eval(
                "return document.querySelectorAll('#web-chat-log .entry.completed').length;",
                json!([])
            )
            .await,
        json!(0)
    );
    browser
        .wait_for(
            "the badge to show the outcome",
            "return document.getElementById('web-agent-badge').dataset.state === 'not-understood';",
        )
        .await;
    browser.screenshot("web-05-not-understood").await;

    browser
        .type_into("#web-prompt", "what is the workspace status?")
        .await;
    browser.click("#web-run").await;
    let status = browser
        .wait_for(
            "the status summary",
            "return document.querySelector('#web-chat-log .entry.completed .entry-text')?.textContent ?? '';",
        )
        .await;
    let status = status.as_str().unwrap();
    assert!(
        status.starts_with(&format!("Workspace revision {}", session.revision().await)),
        "{status}"
    );
    assert!(status.contains("3 files"), "{status}");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_applied_without_preview_confirmation_leaves_no_draft() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    let before = session.revision().await;
    browser.eval(DROP_PREVIEW_ACKS, json!([])).await;
    browser
        .eval(
            "const editor = document.getElementById('web-editor'); editor.value += '\\n<!-- applied -->'; \
             editor.dispatchEvent(new Event('input', { bubbles: true }));",
            json!([]),
        )
        .await;
    browser.click("#web-save").await;
    let status = browser
        .wait_for(
            "the save's answer",
            "const text = document.getElementById('web-editor-status').textContent; \
             return text.startsWith('Saved') || text.includes('PREVIEW_') ? text : '';",
        )
        .await;
    assert_eq!(
        status,
        json!(format!(
            "Saved index.html · revision {} · the preview did not confirm it (PREVIEW_ACK_TIMEOUT)",
            before + 1
        ))
    );
    assert_eq!(session.revision().await, before + 1, "saved once");
    let read = session
        .call_tool("web.readFile", json!({"path": "index.html"}))
        .await;
    assert!(
        read["structuredContent"]["source"]
            .as_str()
            .unwrap()
            .ends_with("<!-- applied -->")
    );
    assert_eq!(
        browser
            .eval(
                "return [document.getElementById('web-save').disabled, document.querySelectorAll('.file-tab.dirty').length];",
                json!([])
            )
            .await,
        json!([true, 0]),
        "no draft is left to save again"
    );
    browser.screenshot("web-applied-preview-unconfirmed").await;

    // A palette call applied the same way is reported as applied, not as an error.
    browser
        .wait_for(
            "the page to follow the saved revision",
            &format!(
                "return document.getElementById('web-revision').dataset.revision === '{}';",
                before + 1
            ),
        )
        .await;
    session.side_tab("tools").await;
    browser
        .click("#web-palette [data-tool=\"web.setTheme\"]")
        .await;
    browser.click("#web-tool-run").await;
    let state = browser
        .wait_for(
            "the palette result",
            "const state = document.getElementById('web-tool-output').dataset.state; \
             return state === 'running' ? '' : state;",
        )
        .await;
    assert_eq!(state, "applied");
    assert_eq!(
        browser.text("#web-status").await,
        format!(
            "web.setTheme applied · revision {} · the preview did not confirm it (PREVIEW_ACK_TIMEOUT); ⟳ reloads the preview",
            before + 2
        )
    );
    assert_eq!(session.revision().await, before + 2);
    browser.eval(DELIVER_PREVIEW_ACKS, json!([])).await;
    browser.click("#web-preview-reload").await;
    session.wait_revision_ready(before + 2).await;
    session.close().await;
}
