//! The chat streams (issue 37 part 3), in a real headless Chromium against a provider that
//! streams slowly (`echo_provider` with a delay between chunks): the reply visibly grows before
//! the turn ends, a tool call's arguments show before its approval card, and Cancel mid-stream
//! ends the run as cancelled with the partial text kept and marked. Screenshots land in
//! `$TEST_OUTPUT_DIR/browser`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::browser::studio::StudioPage;
use crate::support::echo_provider::Script;

const REPLY: &str = "The accent is rose now. It lives in `styles.css` as a custom property, so every button and link follows it:\n\n```css\n:root { --accent: #f43f5e; }\n```\nReload nothing: the preview already shows it.";

/// Points the provider settings at `script`'s fake and picks the provider agent in `select`;
/// returns the requests the fake gets.
async fn use_provider(
    page: &StudioPage,
    script: Script,
    select: &str,
) -> std::sync::Arc<std::sync::Mutex<Vec<Value>>> {
    let (base, requests) = support::echo_provider::serve_script(script).await;
    let response = page
        .http
        .put(format!("{}api/settings", page.studio.url()))
        .header("x-studio-token", page.studio.token())
        .json(&json!({"provider": "llamacpp", "baseUrl": base, "model": "smol"}))
        .send()
        .await
        .expect("PUT /api/settings");
    assert_eq!(response.status().as_u16(), 200);
    page.browser
        .eval(
            "const select = document.getElementById(arguments[0]); select.value = 'openrouter'; select.dispatchEvent(new Event('change')); return true;",
            json!([select]),
        )
        .await;
    requests
}

/// Records, in `window.seen`, the order in which a tool call's arguments and an approval card
/// first appear.
const WATCH_ORDER: &str = "window.seen = []; const note = (what) => { if (!window.seen.includes(what)) window.seen.push(what); }; \
    new MutationObserver(() => { \
      if ([...document.querySelectorAll('.entry.tool-call .tool-args')].some((node) => node.textContent.length > 0)) note('arguments'); \
      if (document.querySelector('.approval')) note('approval'); \
    }).observe(document.body, { childList: true, subtree: true, characterData: true }); return true;";

/// The streamed assistant text of the log, once it is longer than `arguments[1]` characters
/// while still streaming ('' until then).
const STREAMING_TEXT_LONGER_THAN: &str = "const entry = document.querySelector(arguments[0] + ' .entry.assistant.streaming .entry-text'); \
    const text = entry?.textContent ?? ''; return text.length > arguments[1] ? text : '';";

async fn streaming_text_longer_than(page: &StudioPage, log: &str, length: usize) -> String {
    for _ in 0..400 {
        let text = page
            .browser
            .eval(STREAMING_TEXT_LONGER_THAN, json!([log, length]))
            .await;
        if let Some(text) = text.as_str().filter(|text| !text.is_empty()) {
            return text.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the streamed text in {log} never grew past {length} characters");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studio_chat_streams_text_and_shows_a_call_assembling_before_its_approval() {
    let page = StudioPage::start(1400, 900, "").await;
    let browser = &page.browser;
    let script = Script::new("setTheme", json!({"theme": "rose"}), REPLY)
        .streamed(Duration::from_millis(40), 4);
    use_provider(&page, script, "agent-select").await;
    browser.eval(WATCH_ORDER, json!([])).await;
    browser.type_into("#prompt", "make it rose").await;
    browser.click("#send-prompt").await;

    // The call assembles in the chat (name, then arguments), then its card asks.
    browser
        .wait_for(
            "the approval card with the arguments that will run",
            "return document.querySelector('.approval .approval-arguments pre')?.textContent.includes('\"rose\"') ?? false;",
        )
        .await;
    assert_eq!(
        browser.eval("return window.seen;", json!([])).await,
        json!(["arguments", "approval"]),
        "the call's arguments show before its approval card"
    );
    let call = browser
        .eval(
            "const entry = document.querySelector('#chat-log .entry.tool-call'); return { name: entry.querySelector('.tool-name').textContent, args: entry.querySelector('.tool-args').textContent, digest: entry.dataset.digest, shown: document.querySelector('.approval .approval-arguments pre').dataset.digest };",
            json!([]),
        )
        .await;
    assert_eq!(call["name"], "preview.setTheme", "{call}");
    assert!(
        call["args"].as_str().unwrap().contains("\"rose\""),
        "{call}"
    );
    assert_eq!(
        call["digest"], call["shown"],
        "the card shows what streamed: {call}"
    );
    browser
        .screenshot("streaming-01-call-before-approval")
        .await;
    browser.click(".approval .approve").await;

    // The reply grows while the turn is still streaming.
    let first = streaming_text_longer_than(&page, "#chat-log", 0).await;
    let second = streaming_text_longer_than(&page, "#chat-log", first.len()).await;
    // Both reads found the entry still streaming: the turn had not ended.
    assert!(second.len() > first.len(), "{first:?} then {second:?}");
    browser.screenshot("streaming-02-text-growing").await;

    // Once done, the streamed reply is the completed entry, rendered as safe markdown.
    let done: Value = browser
        .wait_for(
            "the completed reply",
            "const entry = document.querySelector('#chat-log .entry.completed'); return entry ? { code: entry.querySelector('.entry-text p code')?.textContent, block: entry.querySelector('pre.md-code')?.textContent, entries: document.querySelectorAll('#chat-log .entry.completed').length, status: document.querySelector('#chat-log .entry.tool-call').dataset.status } : null;",
        )
        .await;
    assert_eq!(
        done,
        json!({"code": "styles.css", "block": ":root { --accent: #f43f5e; }", "entries": 1, "status": "completed"})
    );
    browser.screenshot("streaming-03-completed").await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_ends_the_run_cancelled_and_keeps_the_partial_text_on_web() {
    let page = StudioPage::start(1400, 900, "web").await;
    let browser = &page.browser;
    let script = Script::new("readFile", json!({"path": "index.html"}), REPLY)
        .streamed(Duration::from_millis(50), 2);
    use_provider(&page, script, "web-agent").await;
    browser.type_into("#web-prompt", "read the page").await;
    browser.click("#web-run").await;
    let partial = streaming_text_longer_than(&page, "#web-chat-log", 10).await;
    browser.click("#web-cancel").await;
    let ended: Value = browser
        .wait_for(
            "the cancelled run",
            "const cancelled = document.querySelector('#web-chat-log .entry.cancelled'); const text = document.querySelector('#web-chat-log .entry.assistant'); return cancelled && text ? { state: text.dataset.state, kind: text.querySelector('.entry-kind').textContent, text: text.querySelector('.entry-text').textContent, streaming: text.classList.contains('streaming'), status: document.getElementById('web-run-status').textContent } : null;",
        )
        .await;
    assert_eq!(ended["state"], "cancelled", "{ended}");
    assert_eq!(ended["kind"], "assistant · cancelled", "{ended}");
    assert_eq!(ended["streaming"], false, "{ended}");
    assert_eq!(ended["status"], "", "the composer is idle again: {ended}");
    let kept = ended["text"].as_str().unwrap();
    assert!(
        kept.len() >= partial.len() && kept.len() < REPLY.len(),
        "the partial text stays: {kept:?}"
    );
    browser.screenshot("streaming-04-cancelled-on-web").await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_page_streams_a_provider_reply_the_same_way() {
    let page = StudioPage::start(1400, 900, "editor").await;
    let browser = &page.browser;
    let script = Script::new("listFiles", json!({}), REPLY).streamed(Duration::from_millis(30), 4);
    use_provider(&page, script, "editor-agent").await;
    browser.type_into("#editor-prompt", "list the files").await;
    browser.click("#editor-run").await;
    let first = streaming_text_longer_than(&page, "#editor-chat-log", 0).await;
    let second = streaming_text_longer_than(&page, "#editor-chat-log", first.len()).await;
    assert!(second.len() > first.len(), "{first:?} then {second:?}");
    let done: Value = browser
        .wait_for(
            "the completed reply on /editor",
            "const entries = document.querySelectorAll('#editor-chat-log .entry.completed'); const call = document.querySelector('#editor-chat-log .entry.tool-call'); return entries.length ? { entries: entries.length, block: entries[0].querySelector('pre.md-code')?.textContent, call: call?.querySelector('.tool-name').textContent, status: call?.dataset.status } : null;",
        )
        .await;
    assert_eq!(
        done,
        json!({"entries": 1, "block": ":root { --accent: #f43f5e; }", "call": "editor.listFiles", "status": "completed"})
    );
    browser.screenshot("streaming-05-editor").await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_that_breaks_the_preview_gets_one_fix_turn_behind_approval() {
    let page = StudioPage::start(1400, 900, "").await;
    let browser = &page.browser;
    let broken = "throw new Error('broken on purpose');\n";
    let fixed = "document.body.dataset.fixed = 'yes';\n";
    let script = Script::new(
        "writeFile",
        json!({"path": "app.js", "source": broken}),
        "Done.",
    )
    .then_calling("writeFile", json!({"path": "app.js", "source": fixed}));
    let requests = use_provider(&page, script, "agent-select").await;
    browser.type_into("#prompt", "rewrite app.js").await;
    browser.click("#send-prompt").await;
    let approve = |source: &'static str| async move {
        browser
            .wait_for(
                "the approval card of the write",
                &format!(
                    "return document.querySelector('.approval .approval-arguments pre')?.textContent.includes({}) ?? false;",
                    serde_json::to_string(source).unwrap()
                ),
            )
            .await;
        browser.click(".approval .approve").await;
    };
    approve("broken on purpose").await;
    // The write broke the preview: the run asks the model to fix it, and the fix asks too.
    approve("dataset.fixed").await;
    browser
        .wait_for(
            "the run to finish",
            "return document.querySelectorAll('#chat-log .entry.completed').length === 1;",
        )
        .await;
    let seen = requests.lock().unwrap().clone();
    assert_eq!(seen.len(), 4, "call, reply, fix call, reply");
    let fix_prompt = seen[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .and_then(|message| message["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(
        fix_prompt.contains("failed after your change") && fix_prompt.contains("broken on purpose"),
        "{fix_prompt}"
    );
    assert!(
        seen[2]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|message| message["content"] == "rewrite app.js"),
        "the fix turn carries the conversation so far"
    );
    let source = page
        .call_tool("workspace.readFile", json!({"path": "app.js"}))
        .await;
    assert_eq!(source["structuredContent"]["source"], fixed, "{source}");
    // The chat says the fix turn started, in order: first call, its reply, the notice, the fix
    // call, the fix's reply in a bubble of its own.
    let order = browser
        .eval(
            "return [...document.querySelectorAll('#chat-log .entry')].map((entry) => {
               const text = entry.querySelector('.entry-text')?.textContent ?? '';
               if (entry.classList.contains('tool-call')) return 'call';
               if (entry.dataset.kind === 'info' && text.includes('asking the model to fix it')) return 'notice';
               if (['assistant', 'completed'].includes(entry.dataset.kind) && text.trim() === 'Done.') return 'reply';
               return null;
             }).filter(Boolean);",
            json!([]),
        )
        .await;
    assert_eq!(
        order,
        json!(["call", "reply", "notice", "call", "reply"]),
        "the chat shows each turn in order"
    );
    let notice = browser
        .eval(
            "return [...document.querySelectorAll('#chat-log .entry.info')].map((entry) => entry.textContent).find((text) => text.includes('asking the model')) ?? '';",
            json!([]),
        )
        .await;
    assert!(
        notice
            .as_str()
            .unwrap_or_default()
            .contains("broken on purpose"),
        "{notice}"
    );
    browser.screenshot("fix-turn-completed").await;
    page.close().await;
}
