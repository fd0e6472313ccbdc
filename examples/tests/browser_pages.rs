//! Issue-20 page fixes in a real headless Chromium: a cancelled OpenRouter run on `/`.
//! Screenshots land in `$TEST_OUTPUT_DIR/browser`.

mod browser_support;

use browser_support::{Browser, browser_slot};
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::json;

/// A running studio, its data directory and a browser on its page.
struct Session {
    studio: RunningStudio,
    browser: Browser,
    http: reqwest::Client,
    _data: tempfile::TempDir,
    _slot: tokio::sync::SemaphorePermit<'static>,
}

impl Session {
    async fn open(width: u32, height: u32) -> Self {
        let slot = browser_slot().await;
        let data = tempfile::tempdir().expect("data dir");
        let studio = host::start(StudioOptions {
            port: 0,
            data_dir: data.path().to_owned(),
            folder: None,
            discard_changes: false,
        })
        .await
        .expect("studio starts");
        let browser = Browser::launch(width, height).await;
        browser.goto(&studio.url()).await;
        browser
            .wait_for(
                "the page to load",
                "return document.body.dataset.ready === 'true';",
            )
            .await;
        Self {
            studio,
            browser,
            http: reqwest::Client::new(),
            _data: data,
            _slot: slot,
        }
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

    async fn close(self) {
        self.browser.close().await;
        self.studio.shutdown().await;
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
