//! Settings → MCP servers in a real headless Chromium (issue 36): a person pastes an
//! `mcpServers` configuration for the Python test server, saves it, and watches it become ready
//! with its tools (the env secret shown masked); the tools appear in the Tools tab under their
//! server; an OpenAI-compatible agent (a loopback fake provider) calls `py.echo`, the page asks,
//! the person approves, and the trace shows the remote call. Trust and Disable toggles edit the
//! saved configuration. Screenshots land in `$TEST_OUTPUT_DIR/browser`.

use serde_json::{Value, json};

use crate::support;
use crate::support::browser::keys;
use crate::support::browser::studio::StudioPage;
use crate::support::mcp::PYTHON_TEST_SERVER;

const SECRET: &str = "sk-browser-secret-7a2b";

async fn open_settings(session: &StudioPage) {
    session.browser.click("#settings-button").await;
    session
        .browser
        .wait_for(
            "the settings dialog",
            "return document.getElementById('settings-dialog').open;",
        )
        .await;
}

/// Scrolls the element matching `css` into the middle of its scrolling box (for screenshots).
async fn show(browser: &support::browser::Browser, css: &str) {
    browser
        .eval(
            "document.querySelector(arguments[0]).scrollIntoView({ block: 'center' }); return true;",
            json!([css]),
        )
        .await;
}

/// Pastes `text` into the configuration box the way a paste does (one input event).
async fn paste_config(session: &StudioPage, text: &str) {
    session
        .browser
        .eval(
            "const box = document.getElementById('mcp-config'); box.focus(); box.value = arguments[0]; box.dispatchEvent(new Event('input', { bubbles: true })); return true;",
            json!([text]),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_server_becomes_ready_its_tools_are_listed_and_an_agent_call_is_approved() {
    let session = StudioPage::start(1440, 1000, "").await;
    let browser = &session.browser;
    let (base, requests) = support::echo_provider::serve(
        "hello from the browser",
        "The MCP server echoed: hello from the browser.",
    )
    .await;
    let settings = session
        .http
        .put(format!("{}api/settings", session.studio.url()))
        .header("x-studio-token", session.studio.token())
        .json(&json!({"provider": "llamacpp", "baseUrl": base, "model": "smol"}))
        .send()
        .await
        .unwrap();
    assert_eq!(settings.status().as_u16(), 200);

    open_settings(&session).await;
    browser
        .wait_for(
            "the empty MCP list",
            "return document.querySelector('#mcp-server-list .empty')?.textContent ?? '';",
        )
        .await;
    let config = json!({"mcpServers": {"py": {
        "command": "python3",
        "args": [PYTHON_TEST_SERVER, "normal"],
        "env": {"PEER_SECRET": SECRET}
    }}});
    paste_config(&session, &serde_json::to_string_pretty(&config).unwrap()).await;
    browser.click("#mcp-save").await;
    browser
        .wait_for(
            "the server to become ready",
            "return document.querySelector('#mcp-server-list [data-server=\"py\"][data-state=\"ready\"]') !== null;",
        )
        .await;
    let shown = browser
        .eval(
            "return [document.querySelector('[data-server=\"py\"] .mcp-state').textContent, [...document.querySelectorAll('[data-server=\"py\"] .mcp-tool code')].map((n) => n.textContent), document.getElementById('mcp-config').value, document.getElementById('mcp-error').textContent];",
            json!([]),
        )
        .await;
    assert!(
        shown[0].as_str().unwrap().starts_with("ready · "),
        "{shown}"
    );
    let tools = shown[1].as_array().unwrap();
    assert!(
        tools.contains(&json!("py.echo")) && tools.contains(&json!("py.write_note")),
        "{shown}"
    );
    let text = shown[2].as_str().unwrap();
    assert!(
        text.contains("••••••") && !text.contains(SECRET),
        "masked: {text}"
    );
    assert_eq!(shown[3], "");
    let page = browser
        .eval("return document.documentElement.outerHTML;", json!([]))
        .await;
    assert!(
        !page.as_str().unwrap().contains(SECRET),
        "the secret is nowhere in the page"
    );
    show(browser, "#mcp-server-list").await;
    browser.screenshot("mcp-01-server-ready").await;

    // A bad edit is refused in place, naming where.
    paste_config(&session, r#"{"mcpServers": {"web": {"command": "x"}}}"#).await;
    browser.click("#mcp-save").await;
    let error = browser
        .wait_for(
            "the refusal",
            "return document.getElementById('mcp-error').textContent;",
        )
        .await;
    assert!(
        error.as_str().unwrap().starts_with("/mcpServers/web: ")
            && error
                .as_str()
                .unwrap()
                .ends_with("(STUDIO_INVALID_MCP_CONFIG)"),
        "{error}"
    );
    browser.screenshot("mcp-02-refused").await;
    browser.press(keys::ESCAPE).await;

    // The Tools tab lists them under their server.
    browser.click(".tabs [data-tab=\"catalog\"]").await;
    browser
        .wait_for(
            "py.echo in the catalog",
            "return document.querySelector('#catalog-list [data-tool=\"py.echo\"]') !== null;",
        )
        .await;
    let catalog = browser
        .eval(
            "return [document.querySelector('#catalog-list .group')?.textContent, document.getElementById('catalog-scopes').textContent];",
            json!([]),
        )
        .await;
    assert_eq!(catalog[0], "MCP server · py", "{catalog}");
    assert!(
        catalog[1].as_str().unwrap().contains("MCP · py"),
        "{catalog}"
    );
    browser.click("#catalog-list [data-tool=\"py.echo\"]").await;
    let policy = browser.text("#catalog-detail .policy").await;
    assert!(policy.contains("From the MCP server \"py\""), "{policy}");
    browser.screenshot("mcp-03-catalog").await;

    // The agent calls py.echo; the page asks; the person approves.
    browser.click(".tabs [data-tab=\"chat\"]").await;
    browser
        .eval(
            "const select = document.getElementById('agent-select'); select.value = 'openrouter'; select.dispatchEvent(new Event('change')); return true;",
            json!([]),
        )
        .await;
    browser
        .type_into("#prompt", "Echo hello through the MCP server")
        .await;
    browser.click("#send-prompt").await;
    browser
        .wait_for(
            "an approval card for py.echo",
            "return [...document.querySelectorAll('#approvals .approval-tool')].some((node) => node.textContent === 'py.echo');",
        )
        .await;
    browser
        .wait_for(
            "the remote-call note",
            "return document.querySelector('#approvals .diff-note')?.textContent.includes('MCP server \"py\"') ?? false;",
        )
        .await;
    browser.screenshot("mcp-04-approval").await;
    browser.click("#approvals .approve").await;
    let answer = browser
        .wait_for(
            "the agent's answer",
            "const entries = document.querySelectorAll('#chat-log .entry.completed .entry-text'); return entries.length ? entries[entries.length - 1].textContent : '';",
        )
        .await;
    assert!(
        answer.as_str().unwrap().contains("hello from the browser"),
        "{answer}"
    );
    let second_turn = requests.lock().unwrap()[1].to_string();
    assert!(
        second_turn.contains("hello from the browser"),
        "{second_turn}"
    );

    // The trace shows the remote call, completed, from the model.
    browser.click(".tabs [data-tab=\"trace\"]").await;
    let row = browser
        .wait_for(
            "the py.echo trace row",
            "const row = [...document.querySelectorAll('#trace-log .trace-row')].find((node) => node.querySelector('.name')?.textContent === 'py.echo' && node.dataset.status === 'completed'); return row ? row.querySelector('.meta').textContent : '';",
        )
        .await;
    assert!(row.as_str().unwrap().starts_with("model"), "{row}");
    browser.screenshot("mcp-05-trace").await;

    // Trust the tool and disable another from the list: the saved configuration follows.
    open_settings(&session).await;
    browser
        .wait_for(
            "the server list",
            "return document.querySelector('[data-server=\"py\"] [data-tool=\"echo\"]') !== null;",
        )
        .await;
    browser
        .click("[data-server=\"py\"] [data-tool=\"echo\"] [data-action=\"trust-tool\"]")
        .await;
    browser
        .wait_for(
            "echo to run without asking",
            "return document.querySelector('[data-server=\"py\"] [data-tool=\"echo\"] .mcp-badge')?.textContent === 'runs without asking';",
        )
        .await;
    browser
        .click("[data-server=\"py\"] [data-tool=\"write_note\"] [data-action=\"disable-tool\"]")
        .await;
    browser
        .wait_for(
            "write_note to be unmounted",
            "return document.querySelector('[data-server=\"py\"] [data-tool=\"write_note\"]')?.dataset.mounted === 'false';",
        )
        .await;
    show(browser, "[data-server=\"py\"] [data-tool=\"write_note\"]").await;
    browser.screenshot("mcp-06-toggles").await;
    let saved = std::fs::read_to_string(session.studio.state.settings.file_path()).unwrap();
    let saved: Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(saved["mcpServers"]["py"]["trustedTools"], json!(["echo"]));
    assert_eq!(
        saved["mcpServers"]["py"]["disabledTools"],
        json!(["write_note"])
    );
    assert_eq!(saved["mcpServers"]["py"]["env"]["PEER_SECRET"], SECRET);
    assert!(
        session
            .studio
            .state
            .registry
            .tool_definition("py.write_note")
            .is_none()
    );

    // Every page's palette lists the mounted tools after its own (the disabled one is gone).
    for (page, palette) in [("editor", "#editor-palette"), ("web", "#web-palette")] {
        session.goto(page).await;
        let listed = browser
            .wait_for(
                &format!("py.echo in the {page} palette"),
                &format!(
                    "const tools = [...document.querySelectorAll('{palette} [data-tool]')].map((node) => node.dataset.tool);
                     return tools.includes('py.echo') ? tools : null;"
                ),
            )
            .await;
        let listed: Vec<&str> = listed
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(!listed.contains(&"py.write_note"), "{listed:?}");
        assert!(
            listed[0].starts_with(&format!("{page}.")),
            "the page's own tools come first: {listed:?}"
        );
    }
    browser.screenshot("mcp-07-web-palette").await;
    session.close().await;
}

/// A mounted server's question during a call (issue 55, item 7): on both revisions, the card
/// shows the server's message and the form it asks for; what the person ticks and sends is
/// what the server gets, and Decline tells it no. Before, every question was declined unseen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_question_during_a_call_is_a_form_the_person_answers() {
    let session = StudioPage::start(1280, 900, "").await;
    let browser = &session.browser;
    let studio = session.studio.url();
    for revision in ["2025-11-25", "2026-07-28"] {
        let config = json!({"mcpServers": {"py": {
            "command": "python3",
            "args": [PYTHON_TEST_SERVER, "normal"],
            "protocolVersion": revision,
            "trusted": true
        }}});
        let saved = session
            .http
            .put(format!("{studio}api/mcp/servers"))
            .header("x-studio-token", session.studio.token())
            .json(&config)
            .send()
            .await
            .unwrap();
        assert_eq!(saved.status().as_u16(), 200, "{revision}");
        browser
            .wait_for(
                "py.ask to be mounted",
                "return fetch('/api/tools').then((r) => r.json()).then((list) => list.tools.some((tool) => tool.name === 'py.ask'));",
            )
            .await;
        for (answer, expected) in [
            (
                "send",
                json!({"action": "accept", "content": {"confirm": true}}),
            ),
            ("decline", json!({"action": "decline", "content": null})),
        ] {
            let call = tokio::spawn({
                let (http, url, token) = (
                    session.http.clone(),
                    format!("{studio}api/tools/call"),
                    session.studio.token().to_owned(),
                );
                async move {
                    let request = json!({"method": "tools/call", "params": {"name": "py.ask", "arguments": {}}});
                    let response = http
                        .post(url)
                        .header("x-studio-token", token)
                        .json(&request);
                    response
                        .send()
                        .await
                        .unwrap()
                        .json::<Value>()
                        .await
                        .unwrap()
                }
            });
            let shown = browser
                .wait_for(
                    "the question card",
                    "const card = document.querySelector('#approvals .approval.question');
                     return card && !card.closest('[hidden]') ? [card.querySelector('.question-message').textContent, card.querySelector('.approval-caller').textContent, card.querySelector('.approval-tool').textContent, [...card.querySelectorAll('.question-field')].map((field) => field.textContent)] : null;",
                )
                .await;
            assert_eq!(
                shown,
                json!([
                    "python-misbehaving-server asks: may I go on?",
                    "MCP server \"py\", during this call",
                    "py.ask",
                    ["Confirm"]
                ]),
                "{revision}"
            );
            if answer == "send" {
                refuses_bad_answers(&session).await;
                browser
                    .click("#approvals .approval.question input[name=\"confirm\"]")
                    .await;
                browser
                    .screenshot(&format!("mcp-08-question-{revision}"))
                    .await;
                browser.click("#approvals .approval.question .answer").await;
            } else {
                browser.click("#approvals .approval.question .deny").await;
            }
            let result = call.await.unwrap();
            assert_eq!(
                result["structuredContent"], expected,
                "{revision}: {result}"
            );
            browser
                .wait_for(
                    "the card to go",
                    "return document.querySelector('#approvals .approval.question') === null;",
                )
                .await;
        }
    }
    session.close().await;
}

/// Answers that do not fit the pending question, or name none, are refused with a code and
/// change nothing: the question stays pending for the person.
async fn refuses_bad_answers(session: &StudioPage) {
    let url = |path: &str| format!("{}{path}", session.studio.url());
    let pending: Value = session
        .http
        .get(url("api/questions"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = pending[0]["id"]
        .as_str()
        .expect("a pending question")
        .to_owned();
    for (target, body, status, code) in [
        (
            id.as_str(),
            json!({"action": "accept", "content": {"confirm": "yes"}}),
            400,
            "STUDIO_INVALID_ANSWER",
        ),
        (
            id.as_str(),
            json!({"action": "accept", "content": {"other": true}}),
            400,
            "STUDIO_INVALID_ANSWER",
        ),
        (
            id.as_str(),
            json!({"action": "maybe"}),
            400,
            "STUDIO_INVALID_ANSWER",
        ),
        (
            "no-such-question",
            json!({"action": "decline"}),
            404,
            "STUDIO_QUESTION_NOT_FOUND",
        ),
    ] {
        let answer = session
            .http
            .post(url(&format!("api/questions/{target}")))
            .header("x-studio-token", session.studio.token())
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), status, "{body}");
        let refused: Value = answer.json().await.unwrap();
        assert_eq!(refused["error"]["code"], code, "{body}: {refused}");
    }
    let still: Value = session
        .http
        .get(url("api/questions"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        still[0]["id"],
        id.as_str(),
        "still pending after refused answers"
    );
}
