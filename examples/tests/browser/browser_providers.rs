//! The provider settings dialog in a real headless Chromium (issue 23): pick Ollama, point it
//! at a loopback fake that answers in Ollama's shapes, "Test connection" lists the tool-capable
//! models (no key), a closed port shows the coded, readable failure, and after Save a prompt
//! runs against the fake with no key and no OpenRouter-only fields. A settings file from
//! before profiles keeps its OpenRouter key. Screenshots land in `$TEST_OUTPUT_DIR/browser`.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};

use crate::support::browser::{Browser, browser_slot, keys};

/// What the fake Ollama received on `/v1/chat/completions`: headers and body.
type Received = Arc<Mutex<Vec<(HeaderMap, Value)>>>;

/// A loopback fake of Ollama's OpenAI-compatible API: `/v1/models`, `/api/show` capabilities
/// (qwen3 has tools, gemma3 has not) and a chat completion answering with text.
async fn fake_ollama() -> (String, Received) {
    async fn models() -> Json<Value> {
        Json(json!({"object": "list", "data": [
            {"id": "qwen3:8b", "object": "model", "created": 1747000000, "owned_by": "library"},
            {"id": "gemma3:4b", "object": "model", "created": 1747000000, "owned_by": "library"}
        ]}))
    }
    async fn show(Json(request): Json<Value>) -> Json<Value> {
        let capabilities = match request["model"].as_str() {
            Some("qwen3:8b") => json!(["completion", "tools"]),
            _ => json!(["completion", "vision"]),
        };
        Json(
            json!({"modelfile": "FROM x", "details": {"format": "gguf"}, "capabilities": capabilities}),
        )
    }
    async fn chat(
        State(received): State<Received>,
        headers: HeaderMap,
        Json(body): Json<Value>,
    ) -> Json<Value> {
        received.lock().unwrap().push((headers, body));
        Json(
            json!({"id": "chatcmpl-7", "object": "chat.completion", "created": 1747000000,
            "model": "qwen3:8b", "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello from the local model."}, "finish_reason": "stop"}]}),
        )
    }
    let received = Received::default();
    let app = axum::Router::new()
        .route("/v1/models", axum::routing::get(models))
        .route("/api/show", axum::routing::post(show))
        .route("/v1/chat/completions", axum::routing::post(chat))
        .with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!(
        "http://127.0.0.1:{}/v1",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, received)
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

async fn start_studio(data: &tempfile::TempDir) -> RunningStudio {
    host::start(StudioOptions::ephemeral(data.path()))
        .await
        .expect("studio starts")
}

async fn open_page(studio: &RunningStudio) -> Browser {
    let browser = Browser::launch(1280, 900).await;
    browser.goto(&studio.url()).await;
    browser
        .wait_for(
            "the page to load",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    browser
}

async fn open_dialog(browser: &Browser) {
    browser.click("#settings-button").await;
    browser
        .wait_for(
            "the settings dialog",
            "return document.getElementById('settings-dialog').open;",
        )
        .await;
}

/// Replaces a text field's value the way a person does: select all, type.
async fn retype(browser: &Browser, css: &str, text: &str) {
    browser.click(css).await;
    browser.chord(&[keys::CONTROL, "a"]).await;
    browser.type_into(css, text).await;
}

async fn test_connection(browser: &Browser) -> String {
    browser.click("#settings-test").await;
    browser
        .wait_for(
            "the connection result",
            "return document.getElementById('settings-dialog').dataset.connection ?? '';",
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_is_picked_tested_and_saved_and_a_prompt_runs_against_it_without_a_key() {
    let _slot = browser_slot().await;
    let data = tempfile::tempdir().expect("data dir");
    let studio = start_studio(&data).await;
    let (base, received) = fake_ollama().await;
    let browser = open_page(&studio).await;
    open_dialog(&browser).await;
    assert_eq!(browser.active_id().await, "settings-provider");

    // Picking Ollama fills its default base URL, drops OpenRouter's model and hides the
    // OpenRouter-only data policy and free filter.
    browser
        .eval(
            "const select = document.getElementById('settings-provider'); select.value = 'ollama'; select.dispatchEvent(new Event('change'));",
            json!([]),
        )
        .await;
    let shown = browser
        .eval(
            "return [document.getElementById('settings-base-url').value, document.getElementById('settings-model').value, getComputedStyle(document.getElementById('settings-policy-label')).display === 'none', getComputedStyle(document.getElementById('settings-free-only-label')).display === 'none', document.getElementById('settings-key-rule').textContent];",
            json!([]),
        )
        .await;
    assert_eq!(shown[0], "http://127.0.0.1:11434/v1");
    assert_eq!(shown[1], "");
    assert_eq!((&shown[2], &shown[3]), (&json!(true), &json!(true)));
    assert!(
        shown[4].as_str().unwrap().contains("needs no key"),
        "{shown}"
    );

    // A closed port: the coded, readable failure inside the dialog.
    let closed = format!("http://127.0.0.1:{}/v1", closed_port());
    retype(&browser, "#settings-base-url", &closed).await;
    assert_eq!(test_connection(&browser).await, "failed");
    let error = browser.text("#settings-error").await;
    assert_eq!(
        error,
        format!(
            "Could not reach the model catalog at {closed}/models: the connection was refused (is the server running?). (OLLAMA_NETWORK_ERROR)"
        )
    );
    browser.screenshot("providers-01-unreachable").await;

    // The fake: only the tool-capable model is listed, and it becomes the model.
    retype(&browser, "#settings-base-url", &base).await;
    assert_eq!(test_connection(&browser).await, "ok");
    let listed = browser
        .eval(
            "return [[...document.querySelectorAll('#settings-models option')].map((o) => o.value), document.getElementById('settings-model').value, document.getElementById('settings-models-status').textContent, document.getElementById('settings-error').textContent];",
            json!([]),
        )
        .await;
    assert_eq!(
        listed,
        json!([["qwen3:8b"], "qwen3:8b", "Connected: 1 model", ""])
    );
    browser.screenshot("providers-02-connected").await;

    // Save: the host holds Ollama, ready without a key; the picker says so.
    browser.click("#settings-save").await;
    browser
        .wait_for(
            "the dialog to close",
            "return !document.getElementById('settings-dialog').open;",
        )
        .await;
    browser
        .wait_for(
            "the agent picker to offer Ollama",
            "return document.querySelector('#agent-select option[value=\"openrouter\"]').textContent === 'Ollama · qwen3:8b';",
        )
        .await;
    let settings: Value = reqwest::Client::new()
        .get(format!("{}api/settings", studio.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (
            &settings["provider"],
            &settings["baseUrl"],
            &settings["ready"],
            &settings["hasApiKey"]
        ),
        (&json!("ollama"), &json!(base), &json!(true), &json!(false))
    );

    // A prompt runs against the fake: no key, no OpenRouter routing fields.
    browser
        .eval(
            "const select = document.getElementById('agent-select'); select.value = 'openrouter'; select.dispatchEvent(new Event('change'));",
            json!([]),
        )
        .await;
    assert_eq!(browser.text("#agent-badge").await, "Ollama · idle");
    browser.type_into("#prompt", "Say hello").await;
    browser.click("#send-prompt").await;
    let answer = browser
        .wait_for(
            "the local model's answer",
            "const entries = document.querySelectorAll('#chat-log .entry.completed .entry-text'); return entries.length ? entries[entries.length - 1].textContent : '';",
        )
        .await;
    assert!(
        answer
            .as_str()
            .unwrap()
            .contains("Hello from the local model."),
        "{answer}"
    );
    browser.screenshot("providers-03-local-run").await;
    let requests = received.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    let (headers, body) = &requests[0];
    assert!(!headers.contains_key("authorization"));
    assert!(!headers.contains_key("x-title"));
    assert_eq!(body["model"], "qwen3:8b");
    assert!(body.get("provider").is_none(), "{body}");
    assert!(
        body["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "the studio's tools are offered"
    );
    browser.close().await;
    studio.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_openrouter_key_from_before_profiles_keeps_working_and_is_not_sent_elsewhere() {
    let _slot = browser_slot().await;
    let data = tempfile::tempdir().expect("data dir");
    std::fs::write(
        data.path().join("settings.json"),
        r#"{"model": "openai/gpt-4o-mini", "endpoint": null, "dataPolicy": "allow", "apiKey": "sk-or-saved-not-real"}"#,
    )
    .unwrap();
    let studio = start_studio(&data).await;
    let (base, _) = fake_ollama().await;
    let browser = open_page(&studio).await;
    browser
        .wait_for(
            "the saved key to make OpenRouter available",
            "return document.querySelector('#agent-select option[value=\"openrouter\"]').textContent === 'OpenRouter · openai/gpt-4o-mini';",
        )
        .await;
    open_dialog(&browser).await;
    let fields = browser
        .eval(
            "return [document.getElementById('settings-provider').value, document.getElementById('settings-base-url').value, document.getElementById('settings-save-key').checked, document.getElementById('settings-key').placeholder, getComputedStyle(document.getElementById('settings-policy-label')).display !== 'none'];",
            json!([]),
        )
        .await;
    assert_eq!(
        fields,
        json!([
            "openrouter",
            "https://openrouter.ai/api/v1",
            true,
            "a key is set (leave empty to keep it)",
            true
        ])
    );
    // An OpenAI-compatible https host is not given the saved OpenRouter key: the test says a
    // key is needed, and nothing is saved.
    browser
        .eval(
            "const select = document.getElementById('settings-provider'); select.value = 'openai'; select.dispatchEvent(new Event('change'));",
            json!([]),
        )
        .await;
    let placeholder = browser
        .eval(
            "return document.getElementById('settings-key').placeholder;",
            json!([]),
        )
        .await;
    assert_eq!(
        placeholder,
        "the saved key stays with OpenRouter; enter one for OpenAI-compatible"
    );
    assert_eq!(test_connection(&browser).await, "failed");
    assert_eq!(
        browser.text("#settings-error").await,
        "OpenAI-compatible needs an API key: enter one to test the connection. (OPENAI_COMPATIBLE_CONFIGURATION_ERROR)"
    );
    browser.screenshot("providers-04-key-needed").await;
    // An OpenAI-compatible server on loopback needs none.
    retype(&browser, "#settings-base-url", &base).await;
    assert_eq!(test_connection(&browser).await, "ok");
    assert_eq!(
        browser.text("#settings-models-status").await,
        "Connected: 2 models (this server does not say which models take tools)"
    );
    browser.press(keys::ESCAPE).await;
    let file = std::fs::read_to_string(data.path().join("settings.json")).unwrap();
    assert!(
        file.contains("sk-or-saved-not-real"),
        "testing saved nothing"
    );
    browser.close().await;
    studio.shutdown().await;
}
