//! A small WebDriver client for the studio's browser tests: it starts ChromeDriver with headless
//! Chromium (the Debian packages), speaks the W3C WebDriver JSON protocol over `reqwest`, and
//! saves screenshots under `$TEST_OUTPUT_DIR/browser`.
//!
//! The browser is required: a missing Chromium or ChromeDriver fails the test, it never skips.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

pub mod studio;
pub mod suite;

/// The W3C key that identifies an element reference.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long [`Browser::wait_for`] polls before failing.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(30);
/// Lookups of an element that a re-render replaced before it could be clicked.
const STALE_RETRIES: usize = 3;
/// Browsers running at once: the suite's tests run in parallel on small machines.
const MAX_BROWSERS: usize = 2;
static BROWSER_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(MAX_BROWSERS);

/// Drops a page's forwarded preview acknowledgements (a lost `…/preview/ack` request of any
/// surface), so the host never hears that the iframe rendered a revision.
pub const DROP_PREVIEW_ACKS: &str = "window.realFetch = window.realFetch ?? window.fetch; \
     window.fetch = (url, init) => String(url).includes('/preview/ack') \
       ? Promise.resolve(new Response('{}', { status: 200 })) : window.realFetch(url, init);";
/// Delivers acknowledgements again after [`DROP_PREVIEW_ACKS`].
pub const DELIVER_PREVIEW_ACKS: &str = "if (window.realFetch) window.fetch = window.realFetch;";

/// Waits for one of the [`MAX_BROWSERS`] browser slots; hold it while the browser runs.
pub async fn browser_slot() -> tokio::sync::SemaphorePermit<'static> {
    BROWSER_SLOTS
        .acquire()
        .await
        .expect("the browser semaphore is never closed")
}

/// WebDriver key codes used by the tests.
pub mod keys {
    /// Tab.
    pub const TAB: &str = "\u{E004}";
    /// Enter.
    pub const ENTER: &str = "\u{E007}";
    /// Shift.
    pub const SHIFT: &str = "\u{E008}";
    /// Control.
    pub const CONTROL: &str = "\u{E009}";
    /// Escape.
    pub const ESCAPE: &str = "\u{E00C}";
    /// Arrow down.
    pub const ARROW_DOWN: &str = "\u{E015}";
}

fn env_path(name: &str, default: &str) -> PathBuf {
    PathBuf::from(std::env::var(name).unwrap_or_else(|_| default.to_owned()))
}

/// The Chromium binary (`CHROMIUM_BIN`, default `/usr/bin/chromium`); panics when missing.
pub fn chromium_bin() -> PathBuf {
    let bin = env_path("CHROMIUM_BIN", "/usr/bin/chromium");
    assert!(
        bin.exists(),
        "headless Chromium is required for the browser tests: {} not found (set CHROMIUM_BIN)",
        bin.display()
    );
    bin
}

/// The ChromeDriver binary (`CHROMEDRIVER_BIN`, default `/usr/bin/chromedriver`); panics when missing.
pub fn chromedriver_bin() -> PathBuf {
    let bin = env_path("CHROMEDRIVER_BIN", "/usr/bin/chromedriver");
    assert!(
        bin.exists(),
        "ChromeDriver is required for the browser tests: {} not found (apt-get install chromium-driver, or set CHROMEDRIVER_BIN)",
        bin.display()
    );
    bin
}

/// Where screenshots go: `$TEST_OUTPUT_DIR/browser` (default `<repo>/test-output/browser`).
pub fn output_dir() -> PathBuf {
    let base = std::env::var("TEST_OUTPUT_DIR").map_or_else(
        |_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../test-output"),
        PathBuf::from,
    );
    let dir = base.join("browser");
    std::fs::create_dir_all(&dir).expect("create the screenshot directory");
    dir
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// One ChromeDriver process with one headless Chromium session.
pub struct Browser {
    http: reqwest::Client,
    session: String,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts ChromeDriver and a fresh headless Chromium with a `width`×`height` viewport.
    pub async fn launch(width: u32, height: u32) -> Self {
        let chromium = chromium_bin();
        let port = free_port();
        let driver = Command::new(chromedriver_bin())
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        wait_until_ready(&http, &base).await;
        let profile = tempfile::tempdir().expect("profile dir");
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium.display().to_string(),
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--no-first-run",
                    "--disable-dev-shm-usage",
                    "--hide-scrollbars",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
        }}});
        let response: Value = http
            .post(format!("{base}/session"))
            .json(&capabilities)
            .send()
            .await
            .expect("create a WebDriver session")
            .json()
            .await
            .expect("session JSON");
        let id = response["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("ChromeDriver refused the session: {response}"))
            .to_owned();
        let browser = Self {
            http,
            session: format!("{base}/session/{id}"),
            driver,
            _profile: profile,
        };
        browser.set_viewport(width, height).await;
        browser
    }

    /// Sends one WebDriver command; a WebDriver error comes back as its `value` object.
    async fn try_command(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, Value> {
        let url = format!("{}{path}", self.session);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("WebDriver request");
        let status = response.status();
        let value: Value = response.json().await.expect("WebDriver JSON");
        if status.is_success() {
            Ok(value["value"].clone())
        } else {
            Err(value["value"].clone())
        }
    }

    async fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        self.try_command(method, path, body)
            .await
            .unwrap_or_else(|error| panic!("WebDriver {path} failed: {error}"))
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.command(reqwest::Method::POST, path, Some(body)).await
    }

    /// Resizes the window so the page's viewport is `width`×`height` CSS pixels.
    pub async fn set_viewport(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({"width": width, "height": height}))
            .await;
        let inner = self
            .eval("return [window.innerWidth, window.innerHeight];", json!([]))
            .await;
        let (inner_w, inner_h) = (
            inner[0].as_u64().unwrap_or(0),
            inner[1].as_u64().unwrap_or(0),
        );
        if inner_w != u64::from(width) || inner_h != u64::from(height) {
            let outer_w = u64::from(width) * 2 - inner_w;
            let outer_h = u64::from(height) * 2 - inner_h;
            self.post("/window/rect", json!({"width": outer_w, "height": outer_h}))
                .await;
        }
    }

    /// Navigates to `url` and waits for the page to report it is ready.
    pub async fn goto(&self, url: &str) {
        self.post("/url", json!({"url": url})).await;
    }

    /// Reloads the page.
    pub async fn refresh(&self) {
        self.post("/refresh", json!({})).await;
    }

    /// The current address.
    pub async fn url(&self) -> String {
        self.command(reqwest::Method::GET, "/url", None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Runs `script` (a function body; `arguments` holds `args`) and returns its result.
    pub async fn eval(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": args}))
            .await
    }

    /// Runs an async `script`: its last argument is the callback to call with the result.
    pub async fn eval_async(&self, script: &str, args: Value) -> Value {
        self.post("/execute/async", json!({"script": script, "args": args}))
            .await
    }

    /// Polls `script` (a function body returning a value) until it returns something truthy.
    pub async fn wait_for(&self, what: &str, script: &str) -> Value {
        let started = Instant::now();
        loop {
            let value = self.eval(script, json!([])).await;
            let truthy = match &value {
                Value::Null => false,
                Value::Bool(flag) => *flag,
                Value::String(text) => !text.is_empty(),
                Value::Number(number) => number.as_f64() != Some(0.0),
                _ => true,
            };
            if truthy {
                return value;
            }
            if started.elapsed() > WAIT_TIMEOUT {
                let slug: String = what
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect();
                let shot = self.screenshot(&format!("timeout-{slug}")).await;
                panic!(
                    "timed out waiting for {what} (last value {value}); screenshot {}",
                    shot.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The element matching `css`.
    pub async fn find(&self, css: &str) -> String {
        let value = self
            .post("/element", json!({"using": "css selector", "value": css}))
            .await;
        value[ELEMENT_KEY]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}"))
            .to_owned()
    }

    /// Clicks the element matching `css` with a real pointer click. The page re-renders lists
    /// on live events, so an element replaced between lookup and click is looked up again.
    pub async fn click(&self, css: &str) {
        for _ in 0..STALE_RETRIES {
            let id = self.find(css).await;
            match self
                .try_command(
                    reqwest::Method::POST,
                    &format!("/element/{id}/click"),
                    Some(json!({})),
                )
                .await
            {
                Ok(_) => return,
                Err(error) if error["error"] == "stale element reference" => continue,
                Err(error) => panic!("clicking {css} failed: {error}"),
            }
        }
        panic!("{css} kept being replaced while clicking it");
    }

    /// Types `text` into the element matching `css` (WebDriver key codes allowed).
    pub async fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.post(&format!("/element/{id}/value"), json!({"text": text}))
            .await;
    }

    /// Presses a chord: every key goes down in order, then all are released in reverse.
    pub async fn chord(&self, keys: &[&str]) {
        let mut actions: Vec<Value> = keys
            .iter()
            .map(|key| json!({"type": "keyDown", "value": key}))
            .collect();
        actions.extend(
            keys.iter()
                .rev()
                .map(|key| json!({"type": "keyUp", "value": key})),
        );
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        )
        .await;
        self.command(reqwest::Method::DELETE, "/actions", None)
            .await;
    }

    /// Presses one key.
    pub async fn press(&self, key: &str) {
        self.chord(&[key]).await;
    }

    /// The focused element's id (empty when it has none).
    pub async fn active_id(&self) -> String {
        self.eval("return document.activeElement?.id ?? '';", json!([]))
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The text of the element matching `css` (empty when missing).
    pub async fn text(&self, css: &str) -> String {
        self.eval(
            "const node = document.querySelector(arguments[0]); return node ? node.textContent : '';",
            json!([css]),
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    /// Grants a permission (for example `clipboard-read`) to the page's origin.
    pub async fn grant(&self, permission: &str) {
        self.post(
            "/permissions",
            json!({"descriptor": {"name": permission}, "state": "granted"}),
        )
        .await;
    }

    /// Switches into the iframe matching `css` (cross-origin frames included).
    pub async fn enter_frame(&self, css: &str) {
        let id = self.find(css).await;
        self.post("/frame", json!({"id": {ELEMENT_KEY: id}})).await;
    }

    /// Switches back to the top-level page.
    pub async fn leave_frame(&self) {
        self.post("/frame", json!({"id": null})).await;
    }

    /// Saves a PNG screenshot as `<output>/<name>.png` and returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let data = self
            .command(reqwest::Method::GET, "/screenshot", None)
            .await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.as_str().unwrap_or_default())
            .expect("base64 screenshot");
        let path = output_dir().join(format!("{name}.png"));
        std::fs::write(&path, bytes).expect("write the screenshot");
        path
    }

    /// Ends the session and stops ChromeDriver.
    pub async fn close(self) {
        let _ = self.http.delete(&self.session).send().await;
        // Drop stops ChromeDriver (the session is already gone, so its DELETE is a no-op).
    }
}

impl Drop for Browser {
    /// A failing test drops the browser without `close`: end the session (which quits
    /// Chromium) with a plain blocking request before stopping ChromeDriver.
    fn drop(&mut self) {
        delete_session_blocking(&self.session);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn delete_session_blocking(session_url: &str) {
    use std::io::{Read, Write};
    let Some(rest) = session_url.strip_prefix("http://") else {
        return;
    };
    let Some((host, path)) = rest.split_once('/') else {
        return;
    };
    let Ok(mut stream) = std::net::TcpStream::connect(host) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!(
        "DELETE /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_ok() {
        let mut sink = Vec::new();
        let _ = stream.read_to_end(&mut sink);
    }
}

async fn wait_until_ready(http: &reqwest::Client, base: &str) {
    let started = Instant::now();
    loop {
        if let Ok(response) = http.get(format!("{base}/status")).send().await
            && let Ok(status) = response.json::<Value>().await
            && status["value"]["ready"] == Value::Bool(true)
        {
            return;
        }
        assert!(
            started.elapsed() < WAIT_TIMEOUT,
            "ChromeDriver did not become ready"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
