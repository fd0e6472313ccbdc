//! Design Mode end to end in a real headless Chromium: pick an element in the sandboxed preview
//! (no page handler runs), see the chip, ask the local agent to restyle "the selected element",
//! approve, and read the new computed style inside the iframe. Also: the selection endpoint's
//! bounds and revision check, selections published to every tab, and provider settings that
//! reach an open page live.

use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};

use crate::support::browser::{keys, suite::SuitePage};

/// A running studio, its data directory and a browser on its page.
type Session = SuitePage<Suite>;
/// Marks this suite's helpers on [`SuitePage`].
enum Suite {}

impl Session {
    async fn open() -> Self {
        let session = Self::start(1280, 800, "").await;
        session.wait_preview_ready().await;
        session
    }

    async fn revision(&self) -> u64 {
        get(&self.http, &self.studio, "api/state").await["status"]["revision"]
            .as_u64()
            .expect("revision")
    }

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

    /// Waits until the preview document has Design Mode on (`true`) or off.
    async fn wait_design_in_frame(&self, on: bool) {
        let cursor = if on { "crosshair" } else { "" };
        self.browser.enter_frame("#preview").await;
        self.browser
            .wait_for(
                &format!("Design Mode {} inside the preview", if on { "on" } else { "off" }),
                &format!(
                    "return document.documentElement.style.cursor === '{cursor}' && document.querySelectorAll('[data-context-action-design]').length === {};",
                    if on { 2 } else { 0 }
                ),
            )
            .await;
        self.browser.leave_frame().await;
    }

    async fn in_frame(&self, script: &str) -> Value {
        self.browser.enter_frame("#preview").await;
        let value = self.browser.eval(script, json!([])).await;
        self.browser.leave_frame().await;
        value
    }

    async fn submit_prompt(&self, prompt: &str) {
        self.browser.type_into("#prompt", prompt).await;
        self.browser.click("#send-prompt").await;
    }

    /// Waits for the number of `kind` chat entries to reach `count`; returns the last one.
    async fn wait_chat_entry(&self, kind: &str, count: usize) -> String {
        self.browser
            .wait_for(
                &format!("{count} {kind} chat entries"),
                &format!(
                    "const entries = document.querySelectorAll('#chat-log .entry.{kind} .entry-text'); return entries.length >= {count} ? entries[entries.length - 1].textContent : '';"
                ),
            )
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

async fn start_studio() -> (RunningStudio, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("data dir");
    let studio = host::start(StudioOptions::ephemeral(data.path()))
        .await
        .expect("studio starts");
    (studio, data)
}

async fn get(http: &reqwest::Client, studio: &RunningStudio, path: &str) -> Value {
    http.get(format!("{}{path}", studio.url()))
        .header("x-studio-token", studio.token())
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("GET JSON")
}

async fn send(
    http: &reqwest::Client,
    studio: &RunningStudio,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> (u16, Value) {
    let response = http
        .request(method, format!("{}{path}", studio.url()))
        .header("x-studio-token", studio.token())
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A valid selection message for `revision` (what the bridge would post for the hero title).
fn selection_message(revision: u64) -> Value {
    json!({
        "type": "context-action.preview.selection", "revision": revision,
        "selector": "#hero-subtitle", "tag": "p", "id": "hero-subtitle", "classes": [],
        "source": {"text": "Every edit goes through one audited tool pipeline", "html": "<p id=\"hero-subtitle\">Every edit…</p>"},
        "styles": {"color": "rgb(91, 97, 114)", "backgroundColor": "rgba(0, 0, 0, 0)", "fontFamily": "system-ui",
            "fontSize": "18px", "fontWeight": "400", "margin": "0px 0px 24px", "padding": "0px",
            "display": "block", "width": "600px", "height": "27px"},
        "box": {"x": 32, "y": 150, "width": 600, "height": 27},
        "screen": {"viewportWidth": 640, "viewportHeight": 700, "scrollX": 0, "scrollY": 0, "devicePixelRatio": 1}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn design_mode_selects_an_element_and_the_local_agent_restyles_it() {
    let session = Session::open().await;
    let browser = &session.browser;

    // Without a selection the agent explains what is missing and changes nothing: it did not
    // act, so the run is not "completed".
    let before = session.revision().await;
    session.submit_prompt("make the selected element red").await;
    let explained = session.wait_chat_entry("not-understood", 1).await;
    assert!(explained.contains("Select an element first"), "{explained}");
    assert_eq!(session.revision().await, before);

    // Design Mode on: the preview outlines elements without moving them.
    let layout = "const r = document.getElementById('hero-title').getBoundingClientRect(); return [r.x, r.y, r.width, r.height];";
    let before_layout = session.in_frame(layout).await;
    browser.click("#design-toggle").await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('design-toggle').getAttribute('aria-pressed');",
                json!([])
            )
            .await,
        "true"
    );
    session.wait_design_in_frame(true).await;
    assert_eq!(
        session.in_frame(layout).await,
        before_layout,
        "no layout shift"
    );

    // A click selects; the page's own click handler (the counter button) never runs.
    browser.enter_frame("#preview").await;
    browser.click("#cta").await;
    browser.click("#hero-title").await;
    let count = browser.text("#count").await;
    browser.leave_frame().await;
    assert_eq!(count, "0", "the page's click handler did not run");
    browser
        .wait_for(
            "the chip to show the selected title",
            "const chip = document.getElementById('selection-chip'); return !chip.hidden && chip.querySelector('code')?.textContent === '#hero-title';",
        )
        .await;
    let chip = browser.text("#selection-chip").await;
    assert!(
        chip.contains("h1") && chip.contains("Ship a page"),
        "{chip}"
    );
    browser.screenshot("design-01-selected").await;

    // The local agent turns the prompt into a guarded patch of the selector's rule.
    session.submit_prompt("make the selected element red").await;
    browser
        .wait_for(
            "an approval card for workspace.applyPatch",
            "return [...document.querySelectorAll('#approvals .approval-tool')].some((node) => node.textContent === 'workspace.applyPatch');",
        )
        .await;
    browser.click("#approvals .approve").await;
    let done = session.wait_chat_entry("completed", 1).await;
    assert!(done.contains("workspace.applyPatch"), "{done}");
    let revision = session.wait_preview_ready().await;
    assert!(revision > before);
    let styles = get(&session.http, &session.studio, "api/state").await;
    assert!(styles["status"]["revision"].as_u64() == Some(revision));
    let read = send(
        &session.http,
        &session.studio,
        reqwest::Method::POST,
        "api/tools/call",
        json!({"method": "tools/call", "params": {"name": "workspace.readFile", "arguments": {"path": "styles.css"}}}),
    )
    .await
    .1;
    let css = read["structuredContent"]["source"]
        .as_str()
        .unwrap_or_default();
    assert!(
        css.contains(
            "#hero-title { margin: 0 0 12px; font-size: 40px; line-height: 1.1; color: #dc2626; }"
        ),
        "{css}"
    );
    let color = session
        .in_frame("return getComputedStyle(document.getElementById('hero-title')).color;")
        .await;
    assert_eq!(color, "rgb(220, 38, 38)", "the iframe shows the new colour");
    browser.screenshot("design-02-restyled").await;

    // The reloaded preview is told the mode again and marks the selection again; Esc inside
    // it leaves Design Mode.
    session.wait_design_in_frame(true).await;
    browser.enter_frame("#preview").await;
    browser
        .wait_for(
            "the selection to be marked in the new revision",
            "const marks = document.querySelectorAll('[data-context-action-design]'); return marks.length === 2 && marks[1].style.display === 'block';",
        )
        .await;
    browser.press(keys::ESCAPE).await;
    browser.leave_frame().await;
    browser
        .wait_for(
            "the toggle to turn off",
            "return document.getElementById('design-toggle').getAttribute('aria-pressed') === 'false';",
        )
        .await;
    session.wait_design_in_frame(false).await;

    // The trace kept no page content of the selection.
    let trace = get(&session.http, &session.studio, "api/trace")
        .await
        .to_string();
    assert!(trace.contains("workspace.applyPatch"));
    for leaked in ["Ship a page", "<h1", "hero-title"] {
        assert!(!trace.contains(leaked), "trace leaks {leaked}");
    }

    // Exports never carry Design Mode.
    let export = session
        .http
        .get(format!("{}api/export", session.studio.url()))
        .header("x-studio-token", session.studio.token())
        .send()
        .await
        .expect("export")
        .text()
        .await
        .expect("export text");
    assert!(export.contains("hero-title"));
    assert!(!export.contains("context-action.design.set"));
    assert!(!export.contains("context-action.preview.selection"));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selections_reach_every_tab_and_settings_changes_appear_live() {
    let session = Session::open().await;
    let browser = &session.browser;
    let revision = session.revision().await;

    // Another tab's selection (posted through the host) shows here; removing it clears it.
    let (status, answer) = send(
        &session.http,
        &session.studio,
        reqwest::Method::POST,
        "api/preview/selection",
        selection_message(revision),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    browser
        .wait_for(
            "the published selection in the composer",
            "return document.getElementById('selection-chip').querySelector('code')?.textContent === '#hero-subtitle';",
        )
        .await;
    browser.click("#selection-chip .chip-remove").await;
    browser
        .wait_for(
            "the chip to go",
            "return document.getElementById('selection-chip').hidden;",
        )
        .await;

    // Settings saved elsewhere reach this page without a reload.
    let initial = get(&session.http, &session.studio, "api/settings").await;
    let (status, saved) = send(
        &session.http,
        &session.studio,
        reqwest::Method::PUT,
        "api/settings",
        json!({"model": "test/live-model", "dataPolicy": "deny", "clearKey": true}),
    )
    .await;
    assert_eq!(status, 200, "{saved} (was {initial})");
    browser
        .wait_for(
            "the settings fields and badge to follow",
            "const badge = document.getElementById('agent-badge'); return document.getElementById('settings-model').value === 'test/live-model' && document.getElementById('settings-policy').value === 'deny' && badge.title.includes('test/live-model') && badge.dataset.key === 'missing' && document.querySelector('#agent-select option[value=\"openrouter\"]').textContent === 'OpenRouter (no key)';",
        )
        .await;
    let (status, _) = send(
        &session.http,
        &session.studio,
        reqwest::Method::PUT,
        "api/settings",
        json!({"model": "test/other-model", "apiKey": "sk-test-live-settings"}),
    )
    .await;
    assert_eq!(status, 200);
    browser
        .wait_for(
            "the key presence to show",
            "return document.querySelector('#agent-select option[value=\"openrouter\"]').textContent === 'OpenRouter · test/other-model' && document.getElementById('agent-badge').dataset.key === 'set' && document.getElementById('settings-key').placeholder.includes('a key is set');",
        )
        .await;
    let page = browser
        .eval("return document.documentElement.outerHTML;", json!([]))
        .await;
    assert!(
        !page.to_string().contains("sk-test-live-settings"),
        "the key never reaches the page"
    );
    // Picking OpenRouter updates the badge from the live settings.
    browser
        .eval(
            "const select = document.getElementById('agent-select'); select.value = 'openrouter'; select.dispatchEvent(new Event('change'));",
            json!([]),
        )
        .await;
    assert_eq!(browser.text("#agent-badge").await, "OpenRouter · idle");
    send(
        &session.http,
        &session.studio,
        reqwest::Method::PUT,
        "api/settings",
        json!({"clearKey": true}),
    )
    .await;
    browser
        .wait_for(
            "the badge to say the key is gone",
            "return document.getElementById('agent-badge').textContent === 'OpenRouter · no key';",
        )
        .await;
    session.close().await;
}

#[tokio::test]
async fn the_selection_endpoint_validates_bounds_and_revision() {
    let (studio, _data) = start_studio().await;
    let http = reqwest::Client::new();
    let revision = get(&http, &studio, "api/state").await["status"]["revision"]
        .as_u64()
        .expect("revision");
    let post = |body: Value| {
        send(
            &http,
            &studio,
            reqwest::Method::POST,
            "api/preview/selection",
            body,
        )
    };

    let (status, answer) = post(selection_message(revision)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["selection"]["selector"], "#hero-subtitle");
    assert_eq!(
        answer["selection"]["source"]["text"],
        "Every edit goes through one audited tool pipeline"
    );

    let mut long = selection_message(revision);
    long["source"]["text"] =
        json!("x".repeat(live_code_editor::preview::MAX_SELECTION_TEXT_CHARS + 1));
    let (status, answer) = post(long).await;
    assert_eq!(status, 400);
    assert_eq!(answer["error"]["code"], "PREVIEW_SELECTION_INVALID");
    assert_eq!(answer["error"]["details"]["field"], "source.text");

    let mut injected = selection_message(revision);
    injected["selector"] = json!("#a } body { display: none");
    assert_eq!(
        post(injected).await.1["error"]["details"]["field"],
        "selector"
    );

    let (status, answer) = post(selection_message(revision + 1)).await;
    assert_eq!(status, 409);
    assert_eq!(answer["error"]["code"], "PREVIEW_SELECTION_STALE");

    // Without the session token the endpoint refuses to act.
    let refused = http
        .post(format!("{}api/preview/selection", studio.url()))
        .json(&selection_message(revision))
        .send()
        .await
        .expect("request");
    assert!(refused.status().is_client_error());
    let (status, _) = send(
        &http,
        &studio,
        reqwest::Method::DELETE,
        "api/preview/selection",
        Value::Null,
    )
    .await;
    assert_eq!(status, 204);
    studio.shutdown().await;
}

#[tokio::test]
async fn an_mcp_clients_run_shows_on_the_badge_until_it_ends() {
    use live_code_studio::agent::outcome::RunOutcome;
    use live_code_studio::host::runs::RunState;

    let session = Session::open().await;
    let browser = &session.browser;
    let runs = &session.studio.state.runs;
    let (run, _cancel) = runs.begin("mcp", "an MCP call");
    browser
        .wait_for(
            "the MCP run to show",
            "return document.getElementById('agent-badge').textContent === 'MCP client · started';",
        )
        .await;
    runs.set_state(&run.run_id, RunState::Approval);
    browser
        .wait_for(
            "the approval wait to show",
            "const badge = document.getElementById('agent-badge'); return badge.textContent === 'MCP client · approval' && badge.dataset.state === 'approval';",
        )
        .await;
    let outcome = RunOutcome::Cancelled {
        message: "The MCP client cancelled the call.".into(),
    };
    runs.finish(&run.run_id, &outcome, json!({"outcome": outcome}));
    browser
        .wait_for(
            "the badge to return to idle",
            "return document.getElementById('agent-badge').textContent === 'local agent · idle';",
        )
        .await;
    session.close().await;
}
