//! The setting of every studio browser test: a studio on a fresh data directory and one
//! headless browser, holding one of the browser slots, on one of the studio's pages.

use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};
use tokio::sync::SemaphorePermit;

use super::{Browser, browser_slot};

/// A running studio with a browser on one of its pages.
pub struct StudioPage {
    /// The studio under test.
    pub studio: RunningStudio,
    /// The browser showing its page.
    pub browser: Browser,
    /// A plain client for the studio's API.
    pub http: reqwest::Client,
    _data: tempfile::TempDir,
    _slot: SemaphorePermit<'static>,
}

impl StudioPage {
    /// Waits for a browser slot, starts a studio on a temporary data directory and opens
    /// `page` (`""` for `/`, `"editor"`, `"web"`, or a query such as `"?x=1"`) in a browser
    /// of `width` x `height`, waiting until the page says it is ready.
    pub async fn start(width: u32, height: u32, page: &str) -> Self {
        let slot = browser_slot().await;
        let data = tempfile::tempdir().expect("data dir");
        let studio = host::start(StudioOptions::ephemeral(data.path()))
            .await
            .expect("studio starts");
        let browser = Browser::launch(width, height).await;
        let session = Self {
            studio,
            browser,
            http: reqwest::Client::new(),
            _data: data,
            _slot: slot,
        };
        session.goto(page).await;
        session
    }

    /// Navigates to `page` of the studio and waits until it says it is ready.
    pub async fn goto(&self, page: &str) {
        self.browser
            .goto(&format!("{}{page}", self.studio.url()))
            .await;
        self.browser
            .wait_for(
                "the page to load",
                "return document.body.dataset.ready === 'true';",
            )
            .await;
    }

    /// `GET`s `path` (such as `/api/state`) of the studio's API, without the token.
    pub async fn api(&self, path: &str) -> Value {
        self.http
            .get(format!(
                "{}{}",
                self.studio.url(),
                path.trim_start_matches('/')
            ))
            .send()
            .await
            .expect("API request")
            .json()
            .await
            .expect("API JSON")
    }

    /// Calls a tool through the registry as a direct local call (as the Tools tab's Run sample
    /// and other clients make it), returning the `ToolCallResult`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Value {
        call_tool(&self.http, &self.studio, name, arguments).await
    }

    /// Closes the browser, then stops the studio.
    pub async fn close(self) {
        self.browser.close().await;
        self.studio.shutdown().await;
    }
}

/// `POST /api/tools/call` on `studio` with its token, returning the `ToolCallResult`.
pub async fn call_tool(
    http: &reqwest::Client,
    studio: &RunningStudio,
    name: &str,
    arguments: Value,
) -> Value {
    http.post(format!("{}api/tools/call", studio.url()))
        .header("x-studio-token", studio.token())
        .json(&json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}}))
        .send()
        .await
        .expect("tools/call")
        .json()
        .await
        .expect("tools/call JSON")
}
