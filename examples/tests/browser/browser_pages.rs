//! Issue-20 page fixes in a real headless Chromium: a cancelled OpenRouter run on `/`, and the
//! `/editor` scenarios rendering their own UI (also after Reset document).
//! Screenshots land in `$TEST_OUTPUT_DIR/browser`.

use serde_json::json;
use std::time::{Duration, Instant};

use crate::support::browser::{WAIT_TIMEOUT, keys, suite::SuitePage};

/// A running studio, its data directory and a browser on its page.
type Session = SuitePage<Suite>;
/// Marks this suite's helpers on [`SuitePage`].
enum Suite {}

impl Session {
    async fn open(width: u32, height: u32) -> Self {
        Self::start(width, height, "").await
    }

    /// Saves OpenRouter settings as the settings dialog would.
    async fn put_settings(&self, endpoint: &str) {
        let response = self
            .http
            .put(format!("{}api/settings", self.studio.url()))
            .header("x-studio-token", self.studio.token())
            .json(&json!({"endpoint": endpoint, "apiKey": "test-key"}))
            .send()
            .await
            .expect("PUT /api/settings");
        assert_eq!(response.status().as_u16(), 200);
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

    /// Polls `script` inside the editor's preview iframe (re-entering it, as every revision
    /// reloads it) until it returns something truthy; returns that value.
    async fn wait_in_editor_preview(&self, what: &str, script: &str) -> serde_json::Value {
        let started = Instant::now();
        loop {
            self.browser.enter_frame("#editor-preview").await;
            let value = self.browser.eval(script, json!([])).await;
            self.browser.leave_frame().await;
            if !matches!(
                &value,
                serde_json::Value::Null | serde_json::Value::Bool(false)
            ) && value != json!("")
            {
                return value;
            }
            if started.elapsed() > WAIT_TIMEOUT {
                let shot = self.browser.screenshot("timeout-editor-preview").await;
                panic!(
                    "timed out waiting for {what} (last {value}); screenshot {}",
                    shot.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A loopback chat-completions endpoint that never answers, so a run waits until cancelled.
async fn silent_provider() -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(std::future::pending::<&'static str>),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/v1/chat/completions",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_an_openrouter_run_shows_cancelled_like_a_local_run() {
    let endpoint = silent_provider().await;
    let session = Session::open(1280, 800).await;
    session.put_settings(&endpoint).await;
    let browser = &session.browser;
    browser
        .click("#agent-select option[value=\"openrouter\"]")
        .await;
    browser.type_into("#prompt", "how is the workspace?").await;
    browser.click("#send-prompt").await;
    browser
        .wait_for(
            "the run to wait for the provider",
            "return document.getElementById('agent-badge').dataset.state === 'waiting';",
        )
        .await;
    browser.click("#cancel-run").await;
    let text = session.wait_chat_entry("cancelled").await;
    assert!(text.starts_with("Cancelled:"), "{text}");
    assert_eq!(
        browser
            .eval(
                "return document.querySelectorAll('#chat-log .entry.failed').length;",
                json!([])
            )
            .await,
        json!(0),
        "no FAILED entry with provider recovery buttons"
    );
    browser.click("#tab-button-trace").await;
    let status = browser
        .wait_for(
            "the agent.request trace row to finish",
            "const row = [...document.querySelectorAll('#trace-log .trace-row')].find((node) => node.querySelector('.kind').textContent === 'agent.request'); const status = row && row.dataset.status; return status && status !== 'running' ? status : '';",
        )
        .await;
    browser.screenshot("pages-01-openrouter-cancelled").await;
    assert_eq!(status, json!("cancelled"));
    session.close().await;
}

/// The text of the preview's `#output` once the scenario `name` rendered it.
const RENDERED: &str = "const output = document.getElementById('output'); return document.documentElement.dataset.scenario === arguments[0] && output ? output.innerText : '';";

async fn pick_scenario(session: &Session, name: &str) -> String {
    session
        .browser
        .click(&format!("#editor-scenario option[value=\"{name}\"]"))
        .await;
    let script = RENDERED.replace("arguments[0]", &format!("'{name}'"));
    let text = session
        .wait_in_editor_preview(&format!("the {name} scenario's UI"), &script)
        .await;
    text.as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editor_scenarios_render_their_own_ui_and_reset_keeps_it() {
    let session = Session::start(1280, 800, "editor").await;
    let browser = &session.browser;
    browser
        .wait_for(
            "the editor page to load",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    let greeting = pick_scenario(&session, "greeting").await;
    assert!(greeting.contains("Hello, Ada!"), "{greeting}");
    assert!(greeting.contains("Hello, Linus!"), "{greeting}");
    browser.screenshot("pages-02-editor-greeting").await;

    let todo = pick_scenario(&session, "todo-list").await;
    assert!(todo.contains("Review the patch"), "{todo}");
    assert!(todo.contains("2 open of 3"), "{todo}");
    browser.screenshot("pages-03-editor-todo").await;

    // Reset document replaces index.html with the to-do example; app.js still renders it.
    browser.click("#editor-reset").await;
    browser.click("#confirm-accept").await;
    let after = session
        .wait_in_editor_preview(
            "the to-do UI after the reset",
            "return document.title === 'To-do runner' && document.getElementById('summary') ? document.getElementById('output').innerText : '';",
        )
        .await;
    assert!(after.as_str().unwrap().contains("2 open of 3"), "{after}");
    browser.screenshot("pages-04-editor-reset-todo").await;
    session.close().await;
}

/// Whether `#run-sample` and the top of `#sample-result` are inside both their scrolling panel
/// and the window (the result's head text when they are).
const RESULT_IN_VIEW: &str = "const node = document.querySelector('#sample-result .result-head');
const control = document.getElementById('run-sample');
if (!node || !control) return '';
const head = node.getBoundingClientRect();
const button = control.getBoundingClientRect();
const box = { top: Math.min(head.top, button.top), bottom: Math.max(head.bottom, button.bottom) };
let panel = node.parentElement;
while (panel && !(panel.scrollHeight > panel.clientHeight && ['auto', 'scroll'].includes(getComputedStyle(panel).overflowY))) panel = panel.parentElement;
const frame = panel ? panel.getBoundingClientRect() : { top: 0, bottom: innerHeight };
// One pixel of slack for sub-pixel layout at the panel's edge.
return box.top >= Math.max(frame.top, 0) - 1 && box.bottom <= Math.min(frame.bottom, innerHeight) + 1 ? node.textContent : '';";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_sample_result_is_scrolled_into_view_next_to_the_control() {
    let session = Session::open(1280, 600).await;
    let browser = &session.browser;
    browser.click(".tabs [data-tab=\"catalog\"]").await;
    browser
        .click("#catalog-list [data-tool=\"workspace.getStatus\"]")
        .await;
    browser
        .wait_for(
            "the sample editor",
            "return Boolean(document.getElementById('run-sample'));",
        )
        .await;
    browser.click("#run-sample").await;
    browser
        .wait_for(
            "the sample result",
            "return Boolean(document.getElementById('sample-result'));",
        )
        .await;
    let head = browser
        .wait_for("the sample result in view", RESULT_IN_VIEW)
        .await;
    browser.screenshot("pages-05-run-sample-result").await;
    assert_eq!(head, json!("Succeeded"));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_leaves_full_screen_after_a_click_inside_the_preview() {
    let session = Session::open(1280, 800).await;
    let browser = &session.browser;
    browser
        .wait_for(
            "the preview to acknowledge its revision",
            "return document.getElementById('preview-status').textContent.endsWith(' ready');",
        )
        .await;
    browser.click("#fullscreen-preview").await;
    browser
        .wait_for(
            "full screen",
            "return document.querySelector('.preview-pane').classList.contains('fullscreen');",
        )
        .await;
    // The click moves keyboard focus into the iframe, so the page never sees the key itself.
    browser.enter_frame("#preview").await;
    browser.click("h1").await;
    browser.press(keys::ESCAPE).await;
    browser.leave_frame().await;
    browser
        .wait_for(
            "full screen to end",
            "return !document.querySelector('.preview-pane').classList.contains('fullscreen');",
        )
        .await;
    browser.screenshot("pages-06-fullscreen-left").await;
    session.close().await;
}
