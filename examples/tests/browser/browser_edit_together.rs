//! Two tabs of `/` (two browsers) typing in one file at once, keys 50 ms apart per tab, and a
//! tab typing while another client writes the file: every character reaches both editors and
//! the stored file, and each tab's caret stays where its person put it. Overlapping edits show
//! the conflict bar with both versions instead of dropping either.

use std::time::Duration;

use serde_json::json;

use crate::support::browser::{Browser, studio::StudioPage};

const FILE: &str = "notes.txt";
const START: &str = "line one\nline two\nline three\nline four\n";
/// Keys each tab types; the two tabs alternate, so each tab's keys are 50 ms apart.
const KEYS_PER_TAB: usize = 12;
const KEY_GAP: Duration = Duration::from_millis(25);

/// A studio on `/` with `notes.txt` open in a first tab, and a second tab on the same file.
async fn two_tabs() -> (StudioPage, Browser) {
    let session = StudioPage::start(1280, 800, "").await;
    let created = session
        .call_tool(
            "workspace.createFile",
            json!({"path": FILE, "source": START}),
        )
        .await;
    assert_ne!(created["isError"], true, "createFile: {created}");
    let second = Browser::launch(1280, 800).await;
    second.goto(&session.studio.url()).await;
    second
        .wait_for(
            "the second tab to load",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    for browser in [&session.browser, &second] {
        show_file(browser).await;
    }
    (session, second)
}

/// Opens notes.txt from the file tree and waits until the editor shows it, editable.
async fn show_file(browser: &Browser) {
    browser
        .click(&format!("#file-tree [data-path=\"{FILE}\"]"))
        .await;
    browser
        .wait_for(
            "notes.txt in the editor",
            &format!(
                "const editor = document.getElementById('editor');
                 return document.getElementById('editor-path').textContent === '{FILE}'
                   && !editor.disabled && editor.value.length > 0;"
            ),
        )
        .await;
}

/// Focuses the editor with the caret at `column` of line `line` (both from 0; `None` = line end).
async fn put_caret(browser: &Browser, line: usize, column: Option<usize>) {
    browser
        .eval(
            "const [line, column] = arguments;
             const editor = document.getElementById('editor');
             editor.focus();
             const lines = editor.value.split('\\n');
             let at = lines.slice(0, line).reduce((sum, text) => sum + text.length + 1, 0);
             at += column ?? lines[line].length;
             editor.setSelectionRange(at, at);",
            json!([line, column]),
        )
        .await;
}

async fn editor_text(browser: &Browser) -> String {
    browser
        .eval("return document.getElementById('editor').value;", json!([]))
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Types `a` in `first` and `b` in `second`, alternating, KEYS_PER_TAB times each.
async fn type_interleaved(first: &Browser, a: &str, second: &Browser, b: &str) {
    for _ in 0..KEYS_PER_TAB {
        first.type_into("#editor", a).await;
        tokio::time::sleep(KEY_GAP).await;
        second.type_into("#editor", b).await;
        tokio::time::sleep(KEY_GAP).await;
    }
}

/// Waits until both tabs' editors and the stored file hold `expected`.
async fn wait_converged(session: &StudioPage, second: &Browser, expected: &str) {
    let script = format!(
        "return document.getElementById('editor').value === {};",
        serde_json::to_string(expected).expect("JSON string")
    );
    session
        .browser
        .wait_for("the first tab to hold both tabs' text", &script)
        .await;
    second
        .wait_for("the second tab to hold both tabs' text", &script)
        .await;
    let read = session
        .call_tool("workspace.readFile", json!({"path": FILE}))
        .await;
    assert_eq!(read["structuredContent"]["source"], expected, "{read}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_tabs_typing_on_different_lines_keep_every_character() {
    let (session, second) = two_tabs().await;
    put_caret(&session.browser, 0, None).await;
    put_caret(&second, 2, None).await;
    type_interleaved(&session.browser, "a", &second, "b").await;
    let expected = format!(
        "line one{}\nline two\nline three{}\nline four\n",
        "a".repeat(KEYS_PER_TAB),
        "b".repeat(KEYS_PER_TAB)
    );
    wait_converged(&session, &second, &expected).await;
    session.browser.screenshot("edit-together-lines").await;
    second.close().await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_tabs_typing_on_one_line_keep_every_character_and_their_carets() {
    let (session, second) = two_tabs().await;
    put_caret(&session.browser, 1, Some(0)).await;
    put_caret(&second, 1, None).await;
    type_interleaved(&session.browser, "x", &second, "y").await;
    let expected = format!(
        "line one\n{}line two{}\nline three\nline four\n",
        "x".repeat(KEYS_PER_TAB),
        "y".repeat(KEYS_PER_TAB)
    );
    wait_converged(&session, &second, &expected).await;
    second.close().await;
    session.close().await;
}

/// Another client (an MCP client, a script) prepends `line` the careful way: read, then write
/// guarded by the revision it read, again on a revision conflict (and never again once it was
/// applied).
async fn prepend_guarded(session: &StudioPage, line: &str) {
    for _ in 0..20 {
        let read = session
            .call_tool("workspace.readFile", json!({"path": FILE}))
            .await;
        let read = &read["structuredContent"];
        let written = session
            .call_tool(
                "workspace.writeFile",
                json!({
                    "path": FILE,
                    "source": format!("{line}{}", read["source"].as_str().expect("source")),
                    "expectedRevision": read["revision"],
                }),
            )
            .await;
        // Applied, even when only its preview confirmation was superseded by the tab's write.
        if written["isError"] != true || written["error"]["details"]["committed"] == true {
            return;
        }
        assert_eq!(
            written["error"]["code"], "WORKSPACE_REVISION_CONFLICT",
            "writeFile: {written}"
        );
    }
    panic!("the guarded write never found a quiet moment");
}

/// Polls the stored notes.txt until it is `expected`.
async fn wait_stored(session: &StudioPage, expected: &str) {
    let started = std::time::Instant::now();
    loop {
        let read = session
            .call_tool("workspace.readFile", json!({"path": FILE}))
            .await;
        if read["structuredContent"]["source"] == expected {
            return;
        }
        assert!(
            started.elapsed() < crate::support::browser::WAIT_TIMEOUT,
            "notes.txt never became {expected:?}: {read}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tab_typing_while_another_client_writes_the_file_keeps_both() {
    let (session, second) = two_tabs().await;
    second.close().await;
    put_caret(&session.browser, 3, None).await;
    for round in 0..KEYS_PER_TAB {
        session.browser.type_into("#editor", "k").await;
        prepend_guarded(&session, &format!("remote {round}\n")).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let lines: String = (0..KEYS_PER_TAB)
        .rev()
        .map(|round| format!("remote {round}\n"))
        .collect();
    let expected = format!(
        "{lines}line one\nline two\nline three\nline four{}\n",
        "k".repeat(KEYS_PER_TAB)
    );
    let script = format!(
        "return document.getElementById('editor').value === {};",
        serde_json::to_string(&expected).expect("JSON string")
    );
    session
        .browser
        .wait_for("the tab to hold its keys and the remote lines", &script)
        .await;
    let read = session
        .call_tool("workspace.readFile", json!({"path": FILE}))
        .await;
    assert_eq!(
        read["structuredContent"]["source"],
        expected.as_str(),
        "{read}"
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn overlapping_edits_show_both_versions_and_lose_neither() {
    let (session, second) = two_tabs().await;
    // The second tab keeps typing at the start of line 4 without writing (its write is held
    // back by a long idle time), while the first tab rewrites that same spot and writes.
    second
        .eval_async(
            "const done = arguments[arguments.length - 1];
             import('/ui/lib/store.js').then((store) => { store.typing.draftIdleMs = 60000; done(true); });",
            json!([]),
        )
        .await;
    put_caret(&second, 3, Some(0)).await;
    second.type_into("#editor", "MINE ").await;
    put_caret(&session.browser, 3, Some(0)).await;
    session.browser.type_into("#editor", "THEIRS ").await;
    let theirs = "line one\nline two\nline three\nTHEIRS line four\n";
    wait_stored(&session, theirs).await;
    // Leaving the editor writes the second tab's draft: it overlaps, so the bar shows.
    second
        .eval("document.getElementById('editor').blur();", json!([]))
        .await;
    second
        .wait_for(
            "the conflict bar",
            "return !document.getElementById('editor-conflict').hidden;",
        )
        .await;
    assert_eq!(
        editor_text(&second).await,
        "line one\nline two\nline three\nMINE line four\n",
        "the person's text stays in their editor"
    );
    let shown = second
        .eval(
            "return document.getElementById('editor-conflict-theirs').textContent;",
            json!([]),
        )
        .await;
    assert_eq!(shown, theirs, "the bar shows the other version");
    let read = session
        .call_tool("workspace.readFile", json!({"path": FILE}))
        .await;
    assert_eq!(
        read["structuredContent"]["source"], theirs,
        "nothing overwritten unasked"
    );
    second.screenshot("edit-together-conflict").await;
    second.click("#editor-conflict-keep-mine").await;
    let mine = "line one\nline two\nline three\nMINE line four\n";
    let script = format!(
        "return document.getElementById('editor').value === {};",
        serde_json::to_string(mine).expect("JSON string")
    );
    session
        .browser
        .wait_for("the kept version in the first tab", &script)
        .await;
    second.close().await;
    session.close().await;
}

/// The person keeps typing while the local agent's patch waits for approval (the editor is not
/// locked during the run); approved, the patch is rebased onto their edits by the host: both
/// changes are in the file and in the editor, and the run completes.
#[tokio::test(flavor = "multi_thread")]
async fn typing_on_while_the_agents_patch_waits_keeps_both_changes() {
    let (session, second) = two_tabs().await;
    second.close().await;
    let browser = &session.browser;
    browser
        .type_into(
            "#prompt",
            r#"replace "line two" with "line 2" in notes.txt"#,
        )
        .await;
    browser.click("#send-prompt").await;
    browser
        .wait_for(
            "the patch's approval card",
            "return [...document.querySelectorAll('#approvals .approval-tool')].some((node) => node.textContent === 'workspace.applyPatch')
               && !document.querySelector('#approvals .approval-review')?.textContent.startsWith('Loading');",
        )
        .await;
    assert_eq!(
        browser
            .eval(
                "return document.getElementById('editor').disabled;",
                json!([])
            )
            .await,
        false,
        "the editor stays editable while the agent runs"
    );
    put_caret(browser, 3, None).await;
    browser.type_into("#editor", " typed meanwhile").await;
    let typed = "line one\nline two\nline three\nline four typed meanwhile\n";
    wait_stored(&session, typed).await;
    // The card's review follows the workspace: it now says the patch runs on the moved text and
    // shows the typed line as context.
    browser
        .wait_for(
            "the card's review of the moved text",
            "const review = document.querySelector('#approvals .approval-review')?.textContent ?? '';
             return review.includes('while this call waited (someone kept editing)') && review.includes('typed meanwhile');",
        )
        .await;
    browser.screenshot("edit-together-agent-waiting").await;

    browser.click("#approvals .approve").await;
    let both = "line one\nline 2\nline three\nline four typed meanwhile\n";
    wait_stored(&session, both).await;
    let script = format!(
        "return document.getElementById('editor').value === {};",
        serde_json::to_string(both).expect("JSON string")
    );
    browser
        .wait_for("the editor to show both changes", &script)
        .await;
    let completed = browser
        .wait_for(
            "the run's completed entry",
            "const entries = document.querySelectorAll('#chat-log .entry.completed .entry-text'); return entries.length ? entries[entries.length - 1].textContent : '';",
        )
        .await;
    assert!(!completed.as_str().unwrap_or_default().is_empty());
    browser.screenshot("edit-together-agent-rebased").await;
    session.close().await;
}
