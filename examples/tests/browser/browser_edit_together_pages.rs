//! Two tabs of `/editor` typing in the open document at once, and two tabs of `/web` saving
//! drafts of one file: each tab's draft is merged onto the change the other made (lib/merge.js),
//! so every character reaches both tabs and the host, and each caret stays where its person put
//! it. Changes elsewhere in the workspace never make a `/web` draft stale. Edits that overlap
//! keep the draft and say so (browser_editor.rs and browser_web.rs show that path).

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::browser::{Browser, studio::StudioPage};

/// Lines that are markup in the `/editor` document and comments in `/web`'s app.js.
const DOCUMENT: &str = "// <p>one</p>\n// <p>two</p>\n// <p>three</p>\n// <p>four</p>\n";
/// Keys per tab in each of two bursts; the tabs alternate, so each tab's keys are 50 ms apart.
const KEYS_PER_BURST: usize = 6;
const KEY_GAP: Duration = Duration::from_millis(25);
/// Longer than the page's pause before it sends a draft, so each burst is sent (and meets the
/// other tab's write) while the next burst is typed.
const BETWEEN_BURSTS: Duration = Duration::from_millis(800);

/// Focuses `textarea` with the caret before the `</p>` of line `line` (from 0).
async fn put_caret_in_line(browser: &Browser, textarea: &str, line: usize) {
    browser
        .eval(
            "const [id, line] = arguments;
             const area = document.getElementById(id);
             area.focus();
             const lines = area.value.split('\\n');
             const at = lines.slice(0, line).reduce((sum, text) => sum + text.length + 1, 0)
               + lines[line].indexOf('</p>');
             area.setSelectionRange(at, at);",
            json!([textarea, line]),
        )
        .await;
}

/// Types `a` in `first` and `b` in `second`, alternating, in two bursts.
async fn type_interleaved(textarea: &str, first: &Browser, a: &str, second: &Browser, b: &str) {
    let css = format!("#{textarea}");
    for burst in 0..2 {
        if burst > 0 {
            tokio::time::sleep(BETWEEN_BURSTS).await;
        }
        for _ in 0..KEYS_PER_BURST {
            first.type_into(&css, a).await;
            tokio::time::sleep(KEY_GAP).await;
            second.type_into(&css, b).await;
            tokio::time::sleep(KEY_GAP).await;
        }
    }
}

/// `DOCUMENT` with `a` typed at the end of line 0's text and `b` at the end of line 2's.
fn both_typed(a: &str, b: &str) -> String {
    let keys = 2 * KEYS_PER_BURST;
    format!(
        "// <p>one{}</p>\n// <p>two</p>\n// <p>three{}</p>\n// <p>four</p>\n",
        a.repeat(keys),
        b.repeat(keys)
    )
}

/// Waits until `textarea` holds `expected` in both tabs.
async fn wait_both_show(first: &Browser, second: &Browser, textarea: &str, expected: &str) {
    let script = format!(
        "return document.getElementById('{textarea}').value === {};",
        serde_json::to_string(expected).expect("JSON string")
    );
    first
        .wait_for("the first tab to hold both tabs' text", &script)
        .await;
    second
        .wait_for("the second tab to hold both tabs' text", &script)
        .await;
}

/// The caret of `textarea` as `[start, end]`.
async fn caret(browser: &Browser, textarea: &str) -> Value {
    browser
        .eval(
            "const area = document.getElementById(arguments[0]);
             return [area.selectionStart, area.selectionEnd];",
            json!([textarea]),
        )
        .await
}

/// A second browser on `page` of the studio, ready.
async fn second_tab(session: &StudioPage, page: &str) -> Browser {
    let second = Browser::launch(1280, 800).await;
    second
        .goto(&format!("{}{page}", session.studio.url()))
        .await;
    second
        .wait_for(
            "the second tab to load",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    second
}

#[tokio::test(flavor = "multi_thread")]
async fn two_editor_tabs_typing_on_different_lines_keep_every_character_and_their_carets() {
    let session = StudioPage::start(1280, 800, "editor").await;
    let set = session
        .call_tool("editor.setDocument", json!({"source": DOCUMENT}))
        .await;
    assert_ne!(set["isError"], true, "setDocument: {set}");
    let second = second_tab(&session, "editor").await;
    let shown = format!(
        "return document.getElementById('editor-document').value === {};",
        serde_json::to_string(DOCUMENT).expect("JSON string")
    );
    session
        .browser
        .wait_for("the document in the first tab", &shown)
        .await;
    second
        .wait_for("the document in the second tab", &shown)
        .await;

    put_caret_in_line(&session.browser, "editor-document", 0).await;
    put_caret_in_line(&second, "editor-document", 2).await;
    type_interleaved("editor-document", &session.browser, "a", &second, "b").await;
    let expected = both_typed("a", "b");
    wait_both_show(&session.browser, &second, "editor-document", &expected).await;
    let stored = session.call_tool("editor.getDocument", json!({})).await;
    assert_eq!(
        stored["structuredContent"]["source"],
        expected.as_str(),
        "{stored}"
    );
    // Each caret is still right after its own keys.
    let first_at = expected.find("</p>").expect("line 0");
    assert_eq!(
        caret(&session.browser, "editor-document").await,
        json!([first_at, first_at])
    );
    let second_at = expected.find("three").expect("line 2") + "three".len() + 2 * KEYS_PER_BURST;
    assert_eq!(
        caret(&second, "editor-document").await,
        json!([second_at, second_at])
    );
    for browser in [&session.browser, &second] {
        assert_eq!(
            browser
                .eval(
                    "return document.getElementById('editor-stale').hidden;",
                    json!([])
                )
                .await,
            true,
            "no stale notice: the edits did not overlap"
        );
    }
    session.browser.screenshot("edit-together-editor").await;
    second.close().await;
    session.close().await;
}

/// Opens `app.js` in a /web tab and waits until its editor shows `source`.
async fn open_web_file(browser: &Browser, source: &str) {
    browser.click("#web-tabs [data-path=\"app.js\"]").await;
    let script = format!(
        "return document.getElementById('web-editor').value === {};",
        serde_json::to_string(source).expect("JSON string")
    );
    browser.wait_for("app.js in the editor", &script).await;
}

async fn web_file(session: &StudioPage, path: &str) -> String {
    let read = session
        .call_tool("web.readFile", json!({"path": path}))
        .await;
    read["structuredContent"]["source"]
        .as_str()
        .unwrap_or_else(|| panic!("readFile {path}: {read}"))
        .to_owned()
}

async fn web_revision(session: &StudioPage) -> u64 {
    let workspace = session.call_tool("web.getWorkspace", json!({})).await;
    workspace["structuredContent"]["revision"]
        .as_u64()
        .unwrap_or_else(|| panic!("getWorkspace: {workspace}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn two_web_tabs_saving_one_file_keep_both_drafts_and_other_files_never_make_them_stale() {
    let session = StudioPage::start(1280, 800, "web").await;
    let written = session
        .call_tool(
            "web.writeFile",
            json!({"path": "app.js", "source": DOCUMENT, "expectedRevision": web_revision(&session).await}),
        )
        .await;
    assert_ne!(written["isError"], true, "writeFile: {written}");
    let second = second_tab(&session, "web").await;
    open_web_file(&session.browser, DOCUMENT).await;
    open_web_file(&second, DOCUMENT).await;

    put_caret_in_line(&session.browser, "web-editor", 0).await;
    put_caret_in_line(&second, "web-editor", 2).await;
    type_interleaved("web-editor", &session.browser, "a", &second, "b").await;
    // Another client changes another file meanwhile: no draft of app.js becomes stale by it.
    let feature = session
        .call_tool(
            "web.addFeature",
            json!({"title": "Elsewhere", "description": "Another client."}),
        )
        .await;
    assert_ne!(feature["isError"], true, "addFeature: {feature}");
    session.browser.click("#web-save").await;
    wait_stored(&session, &both_typed("a", "")).await;
    second.click("#web-save").await;
    let expected = both_typed("a", "b");
    wait_stored(&session, &expected).await;
    wait_both_show(&session.browser, &second, "web-editor", &expected).await;
    // The write answers once the preview confirmed it; then the tab says it was saved.
    second
        .wait_for(
            "the second tab's save to be answered",
            "return document.getElementById('web-editor-status').textContent.startsWith('Saved app.js');",
        )
        .await;
    second.screenshot("edit-together-web").await;
    second.close().await;
    session.close().await;
}

/// Polls the stored app.js of /web until it is `expected`.
async fn wait_stored(session: &StudioPage, expected: &str) {
    let started = std::time::Instant::now();
    loop {
        let source = web_file(session, "app.js").await;
        if source == expected {
            return;
        }
        assert!(
            started.elapsed() < crate::support::browser::WAIT_TIMEOUT,
            "app.js never became {expected:?}: {source:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// lib/merge.js on hand-made cases, in the page's own JavaScript engine.
#[tokio::test(flavor = "multi_thread")]
async fn the_merge_keeps_both_sides_apart_and_calls_touching_edits_a_conflict() {
    let session = StudioPage::start(800, 600, "").await;
    let cases = session
        .browser
        .eval_async(
            "const done = arguments[arguments.length - 1];
             import('/ui/lib/merge.js').then(({ merge3 }) => done([
               merge3('one two three', 'one TWO two three', 'one two three four'),
               merge3('one two three', 'one 2 three', 'one two! three'),
               merge3('one two three', 'one 2 three', 'one tw three'),
               merge3('abc', 'xyz', 'abc!'),
               merge3('abc', 'abcd', 'abce'),
               merge3('abc', 'abXc', 'abXc'),
             ].map((result) => result.conflict ? 'conflict' : result.text)));",
            json!([]),
        )
        .await;
    assert_eq!(
        cases,
        json!([
            "one TWO two three four",
            "conflict",
            "conflict",
            "conflict",
            "conflict",
            "abXc"
        ]),
        "typed apart merges; typed at the edge of a rewrite, at one point, or inside it conflicts"
    );
    session.close().await;
}
