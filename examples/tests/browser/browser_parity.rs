//! The three studio pages behave alike, in a real headless Chromium (issue 20 items 2, 7, 10
//! and 11): one highlighted dark editor with find and line/column status on `/`, `/editor` and
//! `/web`; a saved API key selects OpenRouter on `/` as on the other pages, and a provider retry
//! that backs off shows its count; the trace names sessions by what started them; `/web` asks
//! before leaving with a draft. Screenshots land in `$TEST_OUTPUT_DIR/browser`.

use serde_json::{Value, json};

use crate::support::browser::{keys, suite::SuitePage};
use crate::support::mcp::{Client, Person, call, connect};

/// A running studio, its data directory and a browser on its page.
type Session = SuitePage<Suite>;
/// Marks this suite's helpers on [`SuitePage`].
enum Suite {}

impl Session {
    /// Opens the page at `path` (`""` for `/`, `"editor"`, `"web"`).
    async fn open(path: &str) -> Self {
        Self::start(1400, 860, path).await
    }

    /// Saves OpenRouter settings with a key, as the settings dialog would.
    async fn save_key(&self, endpoint: &str) {
        let response = self
            .http
            .put(format!("{}api/settings", self.studio.url()))
            .header("x-studio-token", self.studio.token())
            .json(&json!({"endpoint": endpoint, "apiKey": "test-key", "model": "test/retry-model"}))
            .send()
            .await
            .expect("PUT /api/settings");
        assert_eq!(response.status().as_u16(), 200);
    }

    /// An rmcp client on the studio's `/mcp` (it introduces itself as `studio-mcp-tests`).
    async fn mcp_client(&self) -> Client {
        connect(&self.studio, Person::absent()).await
    }
}

/// A chat-completions endpoint that is always rate limited and asks for a 4-second wait, so
/// every provider turn retries twice, backing off 4 s before each retry, and then fails.
async fn rate_limited_provider() -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(|| async {
            (
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                [("retry-after", "4")],
                axum::Json(json!({"error": {"code": 429, "message": "slow down"}})),
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/v1/chat/completions",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

// ---------------------------------------------------------------- item 7

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_key_selects_openrouter_on_the_workspace_page_and_a_retry_shows_its_count() {
    let endpoint = rate_limited_provider().await;
    let session = Session::open("").await;
    let browser = &session.browser;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('agent-select').value;",
                json!([])
            )
            .await,
        json!("local"),
        "no key: the local agent"
    );
    session.save_key(&endpoint).await;
    browser
        .wait_for(
            "the saved key to select OpenRouter",
            "const select = document.getElementById('agent-select'); return select.value === 'openrouter' && select.selectedOptions[0].textContent === 'OpenRouter · test/retry-model' && document.getElementById('agent-badge').textContent === 'OpenRouter · idle';",
        )
        .await;
    // A reload reads the key from the host's state: still OpenRouter.
    session.goto("").await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('agent-select').value;",
                json!([])
            )
            .await,
        json!("openrouter")
    );
    // Choosing the local agent with a key set sticks across the page's state reads.
    browser.click("#agent-select option[value=\"local\"]").await;
    session.call_tool("workspace.listFiles", json!({})).await;
    browser.click("#undo-button").await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('agent-select').value;",
                json!([])
            )
            .await,
        json!("local"),
        "the person's choice is kept"
    );
    browser
        .click("#agent-select option[value=\"openrouter\"]")
        .await;

    browser.type_into("#prompt", "how is the workspace?").await;
    browser.click("#send-prompt").await;
    let status = browser
        .wait_for(
            "the first retry's countdown",
            "const text = document.getElementById('run-status').textContent; return text.includes('retry 1 of 2') ? text : '';",
        )
        .await;
    assert_eq!(status, json!("Waiting… (retry 1 of 2 in 4s)"));
    let said = browser
        .wait_for(
            "the retry in the chat",
            "const entries = [...document.querySelectorAll('#chat-log .entry.info .entry-text')].map((node) => node.textContent).filter((text) => text.includes('retry 1 of 2')); return entries[0] ?? '';",
        )
        .await;
    assert!(
        said.as_str().unwrap().contains("OPENROUTER_RATE_LIMITED"),
        "{said}"
    );
    browser.screenshot("parity-01-retry-1-of-2").await;
    browser
        .wait_for(
            "the second retry",
            "return document.getElementById('run-status').textContent === 'Waiting… (retry 2 of 2 in 4s)';",
        )
        .await;
    browser
        .wait_for(
            "the run to fail after its retries",
            "return document.querySelector('#chat-log .entry.failed') !== null && document.getElementById('run-status').textContent === '';",
        )
        .await;
    browser.screenshot("parity-02-retries-exhausted").await;

    // The surface pages share the rule and the countdown.
    session.goto("web").await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('web-agent').value;",
                json!([])
            )
            .await,
        json!("openrouter"),
        "the saved key selects OpenRouter on /web"
    );
    browser.type_into("#web-prompt", "how is the page?").await;
    browser.click("#web-run").await;
    browser
        .wait_for(
            "the retry countdown on /web",
            "return document.getElementById('web-run-status').textContent === 'Waiting… (retry 1 of 2 in 4s)';",
        )
        .await;
    browser.screenshot("parity-02b-retry-on-web").await;
    browser.click("#web-cancel").await;
    browser
        .wait_for(
            "the cancelled run",
            "return document.querySelector('#web-chat-log .entry.cancelled') !== null;",
        )
        .await;
    session.close().await;
}

// ---------------------------------------------------------------- item 11

/// The texts of the trace session selector's options matching `css`.
const SESSION_OPTIONS: &str = "return [...document.querySelectorAll(arguments[0] + ' option')].map((option) => option.textContent);";

fn has_option(options: &Value, starts: &str) -> bool {
    options.as_array().unwrap().iter().any(|text| {
        let text = text.as_str().unwrap_or_default();
        // "<label> · HH:MM:SS"
        text.starts_with(starts)
            && text
                .rsplit(" · ")
                .next()
                .is_some_and(|time| time.len() == 8 && time.as_bytes()[2] == b':')
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trace_sessions_are_named_by_what_started_them_and_when() {
    let session = Session::open("").await;
    let browser = &session.browser;
    browser.type_into("#prompt", "read app.js").await;
    browser.click("#send-prompt").await;
    browser
        .wait_for(
            "the local run to finish",
            "return document.querySelector('#chat-log .entry.completed') !== null;",
        )
        .await;
    session.call_tool("workspace.listFiles", json!({})).await;
    let client = session.mcp_client().await;
    let read = call(&client, "workspace.readFile", json!({"path": "index.html"})).await;
    assert_eq!(read["isError"], false, "{read}");
    browser.click("#tab-button-trace").await;
    let options = browser
        .wait_for(
            "the three sessions in the selector",
            "const options = [...document.querySelectorAll('#trace-session option')].map((option) => option.textContent); return options.length >= 4 ? options : null;",
        )
        .await;
    assert_eq!(options[0], json!("All sessions"));
    assert!(has_option(&options, "local · “read app.js”"), "{options}");
    assert!(
        has_option(&options, "palette · direct calls of the pages"),
        "{options}"
    );
    assert!(has_option(&options, "MCP · studio-mcp-tests"), "{options}");
    let opaque = options
        .as_array()
        .unwrap()
        .iter()
        .filter(|text| {
            let text = text.as_str().unwrap_or_default();
            text.starts_with("session-") || text.starts_with("mcp-") || text == "studio-ui"
        })
        .count();
    assert_eq!(opaque, 0, "no option is an opaque id: {options}");
    // The names live beside the trace, never in it: the exported trace holds no prompt.
    let trace = session
        .http
        .get(format!("{}api/trace", session.studio.url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!trace.contains("read app.js"), "{trace}");
    // Picking the prompt's session narrows the rows to that run.
    let value = browser
        .eval(
            "return [...document.querySelectorAll('#trace-session option')].find((option) => option.textContent.startsWith('local ·')).value;",
            json!([]),
        )
        .await;
    browser
        .eval(
            "const select = document.getElementById('trace-session'); select.value = arguments[0]; select.dispatchEvent(new Event('change'));",
            json!([value]),
        )
        .await;
    let names = browser
        .eval(
            "return [...document.querySelectorAll('#trace-log .trace-row .kind')].map((node) => node.textContent);",
            json!([]),
        )
        .await;
    assert!(
        names.as_array().unwrap().contains(&json!("agent.request")),
        "{names}"
    );
    browser
        .eval(
            "document.getElementById('trace-session').size = 5;",
            json!([]),
        )
        .await;
    browser
        .screenshot("parity-03-trace-sessions-workspace")
        .await;

    // The surface pages' trace panel names them the same way.
    session.goto("web").await;
    browser.click("#web-tab-trace").await;
    let web_options = browser
        .eval(SESSION_OPTIONS, json!(["#web-trace-session"]))
        .await;
    assert!(
        has_option(&web_options, "local · “read app.js”"),
        "{web_options}"
    );
    assert!(
        has_option(&web_options, "MCP · studio-mcp-tests"),
        "{web_options}"
    );
    client.cancel().await.unwrap();
    session.close().await;
}

// ---------------------------------------------------------------- item 2

/// Fires a synthetic `beforeunload` and returns whether the page asked to stay.
const BEFOREUNLOAD_ASKS: &str = "const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented;";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_drafts_are_kept_by_the_host_across_a_reload() {
    let session = Session::open("web").await;
    let browser = &session.browser;
    assert_eq!(
        browser.eval(BEFOREUNLOAD_ASKS, json!([])).await,
        json!(false),
        "nothing to lose yet"
    );
    browser
        .type_into("#web-editor", "<!-- kept draft -->")
        .await;
    assert_eq!(
        browser.eval(BEFOREUNLOAD_ASKS, json!([])).await,
        json!(true),
        "a draft the host does not have yet"
    );
    browser
        .wait_for(
            "the host to keep the draft",
            &BEFOREUNLOAD_ASKS.replace("return event", "return !event"),
        )
        .await;
    browser.refresh().await;
    browser
        .wait_for(
            "the page to load again",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    let restored = browser
        .wait_for(
            "the draft back in the editor",
            "const area = document.getElementById('web-editor'); return area.value.includes('<!-- kept draft -->') ? document.getElementById('web-editor-status').textContent : '';",
        )
        .await;
    assert!(
        restored
            .as_str()
            .unwrap()
            .starts_with("Restored 1 unsaved draft"),
        "{restored}"
    );
    assert!(
        browser
            .text("#web-tabs [aria-selected=\"true\"]")
            .await
            .ends_with('•'),
        "the tab shows the unsaved draft"
    );
    browser.screenshot("parity-05-web-draft-restored").await;
    // Saving stores the file and the host forgets the draft.
    browser.click("#web-save").await;
    browser
        .wait_for(
            "the save",
            "return document.getElementById('web-editor-status').textContent.startsWith('Saved');",
        )
        .await;
    let url = format!("{}api/web/drafts", session.studio.url());
    let mut kept = Value::Null;
    for _ in 0..50 {
        kept = session
            .http
            .get(&url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if kept["drafts"].as_array().is_some_and(Vec::is_empty) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(kept, json!({"drafts": []}));
    // Only the workspace's files, within their bound.
    let refused: Value = session
        .http
        .put(format!("{url}/secret.txt"))
        .header("x-studio-token", session.studio.token())
        .json(&json!({"source": "x", "base": 1}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        refused["error"]["code"], "WORKSPACE_FILE_NOT_FOUND",
        "{refused}"
    );
    let too_long: Value = session
        .http
        .put(format!("{url}/app.js"))
        .header("x-studio-token", session.studio.token())
        .json(&json!({"source": "a".repeat(80_001), "base": 1}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        too_long["error"]["code"], "WORKSPACE_SOURCE_LIMIT",
        "{too_long}"
    );
    session.close().await;
}

// ---------------------------------------------------------------- item 10

/// What the editor of a page looks like: its textarea lies over the highlight layer inside a
/// dark code surface, with a gutter and a status line.
const EDITOR_SHAPE: &str = "const textarea = document.getElementById(arguments[0]); const surface = textarea.closest('.code-surface'); if (!surface) return null; const background = getComputedStyle(surface).backgroundColor; const [r, g, b] = background.match(/\\d+/g).map(Number); return { dark: r + g + b < 120, tokens: surface.querySelector('.code-layer.highlight').querySelectorAll('[class^=\"tok-\"]').length, gutter: surface.querySelector('.code-gutter').textContent.split('\\n').length, status: surface.parentElement.querySelector('.code-status').textContent };";

async fn check_editor(session: &Session, page: &str, textarea: &str, prefix: &str) {
    let browser = &session.browser;
    session.goto(page).await;
    browser
        .wait_for(
            "the document in the editor",
            &format!("return document.getElementById('{textarea}').value.length > 20;"),
        )
        .await;
    let shape = browser.eval(EDITOR_SHAPE, json!([textarea])).await;
    assert_eq!(shape["dark"], json!(true), "{page}: {shape}");
    assert!(
        shape["tokens"].as_u64().unwrap() > 5,
        "{page}: highlighted {shape}"
    );
    assert!(
        shape["gutter"].as_u64().unwrap() > 3,
        "{page}: line numbers {shape}"
    );
    assert!(
        shape["status"].as_str().unwrap().contains("Ln 1, Col 1"),
        "{page}: {shape}"
    );
    // Typing moves the line/column status.
    browser.click(&format!("#{textarea}")).await;
    browser
        .eval(
            "const area = document.getElementById(arguments[0]); area.focus(); area.setSelectionRange(0, 0); area.dispatchEvent(new Event('select'));",
            json!([textarea]),
        )
        .await;
    browser.type_into(&format!("#{textarea}"), "ab\ncd").await;
    assert_eq!(
        browser.text(&format!("#{prefix}cursor-pos")).await,
        "Ln 2, Col 3",
        "{page}"
    );
    // Ctrl+F in the editor opens find; matches are counted and marked.
    browser.chord(&[keys::CONTROL, "f"]).await;
    assert_eq!(
        browser.active_id().await,
        format!("{prefix}find-input"),
        "{page}"
    );
    browser
        .type_into(&format!("#{prefix}find-input"), "cd")
        .await;
    let count = browser.text(&format!("#{prefix}find-count")).await;
    assert!(count.starts_with("1 of "), "{page}: {count}");
    let marks = browser
        .eval(
            &format!("return document.querySelectorAll('#{prefix}code-marks mark').length;"),
            json!([]),
        )
        .await;
    assert!(marks.as_u64().unwrap() >= 1, "{page}: {marks}");
    browser
        .screenshot(&format!(
            "parity-04-editor-{}",
            if page.is_empty() { "workspace" } else { page }
        ))
        .await;
    browser.press(keys::ESCAPE).await;
    if page != "web" {
        // The typed draft reaches the host on its own, so navigating on never asks.
        browser
            .wait_for(
                "the draft to reach the host",
                &BEFOREUNLOAD_ASKS.replace("return event", "return !event"),
            )
            .await;
    }
    assert_eq!(
        browser
            .eval(
                &format!("return document.getElementById('{prefix}find-bar').hidden;"),
                json!([])
            )
            .await,
        json!(true),
        "{page}: Esc closes find"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_has_the_same_highlighted_dark_editor_with_find_and_status() {
    let session = Session::open("").await;
    check_editor(&session, "", "editor", "").await;
    check_editor(&session, "editor", "editor-document", "editor-").await;
    check_editor(&session, "web", "web-editor", "web-").await;
    session.close().await;
}
