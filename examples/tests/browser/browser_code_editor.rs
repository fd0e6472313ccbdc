//! The shared code editor's editing essentials (`lib/editing.js`, wired in `lib/code-editor.js`)
//! on `/editor` in a real headless Chromium (through ChromeDriver): auto-indent on Enter, Tab and
//! Shift+Tab over lines, auto-closed brackets, quotes and HTML tags, the matching-bracket marks,
//! Ctrl+/ comments per language and one native undo step per transformation. Keys are real
//! WebDriver key presses; text and selection are read back exactly. Screenshots land in
//! `$TEST_OUTPUT_DIR/browser`.

use serde_json::{Value, json};

use crate::support::browser::{Browser, keys, studio::StudioPage};

/// WebDriver key codes beyond the shared [`keys`].
const BACKSPACE: &str = "\u{E003}";
const ARROW_LEFT: &str = "\u{E012}";
const ARROW_RIGHT: &str = "\u{E014}";

const DOCUMENT: &str = "#editor-document";

/// The document's text with its selection start and end (UTF-16 offsets; the tests use ASCII).
type Shown = (String, u64, u64);

fn shown(text: &str, start: usize, end: usize) -> Shown {
    (text.to_owned(), start as u64, end as u64)
}

/// `/editor` with its document loaded and editable, counting the textarea's `input` events.
async fn open_editor() -> StudioPage {
    let session = StudioPage::start(1280, 800, "editor").await;
    session
        .browser
        .wait_for(
            "the document in the editor",
            "const area = document.getElementById('editor-document');
             return !area.disabled && area.value.length > 0;",
        )
        .await;
    session
        .browser
        .eval(
            "window.editorInputs = [];
             document.getElementById('editor-document')
               .addEventListener('input', (event) => { window.editorInputs.push(event.inputType ?? ''); });",
            json!([]),
        )
        .await;
    session
}

/// Opens `path` of the editor's files and waits until the document shows it.
async fn open_file(browser: &Browser, path: &str) {
    browser
        .click(&format!("#editor-files li[data-path=\"{path}\"] button"))
        .await;
    browser
        .wait_for(
            &format!("{path} in the editor"),
            &format!(
                "const area = document.getElementById('editor-document');
                 return document.getElementById('editor-document-path').textContent === '{path}'
                   && !area.disabled;"
            ),
        )
        .await;
}

/// Focuses the document and shows `text` with `start..end` selected, as the page's own typing
/// would (an `input` event); the `input` count starts over.
async fn set(browser: &Browser, text: &str, start: usize, end: usize) {
    browser
        .eval(
            "const [text, start, end] = arguments;
             const area = document.getElementById('editor-document');
             area.focus();
             area.value = text;
             area.dispatchEvent(new Event('input', { bubbles: true }));
             area.setSelectionRange(start, end);
             area.dispatchEvent(new Event('select'));
             window.editorInputs = [];",
            json!([text, start, end]),
        )
        .await;
}

/// The document's text and selection.
async fn read(browser: &Browser) -> Shown {
    let value = browser
        .eval(
            "const area = document.getElementById('editor-document');
             return [area.value, area.selectionStart, area.selectionEnd];",
            json!([]),
        )
        .await;
    (
        value[0].as_str().expect("text").to_owned(),
        value[1].as_u64().expect("selection start"),
        value[2].as_u64().expect("selection end"),
    )
}

/// The `inputType` of each `input` event since the last [`set`].
async fn inputs(browser: &Browser) -> Value {
    browser.eval("return window.editorInputs;", json!([])).await
}

/// The marked brackets: each mark's offset in the marks layer and its character.
async fn bracket_marks(browser: &Browser) -> Value {
    browser
        .eval(
            "const layer = document.getElementById('editor-code-marks');
             return [...layer.querySelectorAll('.bracket-match')].map((mark) => {
               const range = document.createRange();
               range.setStart(layer, 0);
               range.setEndBefore(mark);
               return [range.toString().length, mark.textContent];
             });",
            json!([]),
        )
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn enter_keeps_the_indent_and_opens_a_level_after_an_opener() {
    let session = open_editor().await;
    let browser = &session.browser;

    // The new line keeps the current line's indent.
    set(browser, "  let a = 1;", 12, 12).await;
    browser.press(keys::ENTER).await;
    assert_eq!(read(browser).await, shown("  let a = 1;\n  ", 15, 15));

    // After an opening bracket: one level more.
    set(browser, "  if (ready) {", 14, 14).await;
    browser.press(keys::ENTER).await;
    assert_eq!(read(browser).await, shown("  if (ready) {\n    ", 19, 19));
    set(browser, "call(", 5, 5).await;
    browser.press(keys::ENTER).await;
    assert_eq!(read(browser).await, shown("call(\n  ", 8, 8));

    // Between a pair the closer goes to its own line below the indented caret line.
    set(browser, "  function f() {}", 16, 16).await;
    browser.press(keys::ENTER).await;
    assert_eq!(
        read(browser).await,
        shown("  function f() {\n    \n  }", 21, 21)
    );
    browser.type_into(DOCUMENT, "go();").await;
    assert_eq!(
        read(browser).await.0,
        "  function f() {\n    go();\n  }",
        "typing continues on the indented line"
    );

    // After an opening HTML tag (the document is index.html), and between a tag pair.
    set(browser, "<ul>\n  <li class=\"a\">", 21, 21).await;
    browser.press(keys::ENTER).await;
    assert_eq!(
        read(browser).await,
        shown("<ul>\n  <li class=\"a\">\n    ", 26, 26)
    );
    set(browser, "<div class=\"a\"></div>", 15, 15).await;
    browser.press(keys::ENTER).await;
    assert_eq!(
        read(browser).await,
        shown("<div class=\"a\">\n  \n</div>", 18, 18)
    );

    // A void element opens no level; an unindented line gets a plain newline.
    set(browser, "<br>", 4, 4).await;
    browser.press(keys::ENTER).await;
    assert_eq!(read(browser).await, shown("<br>\n", 5, 5));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tab_and_shift_tab_indent_and_outdent_the_selected_lines() {
    let session = open_editor().await;
    let browser = &session.browser;

    // Lines a, b and c selected (the selection ends inside c): each gains two spaces, the
    // selection covers the same three lines, d is untouched.
    set(browser, "a\n  b\nc\nd", 0, 7).await;
    browser.press(keys::TAB).await;
    assert_eq!(read(browser).await, shown("  a\n    b\n  c\nd", 0, 13));
    browser.press(keys::TAB).await;
    assert_eq!(
        read(browser).await,
        shown("    a\n      b\n    c\nd", 0, 19)
    );

    // Shift+Tab takes up to two spaces off each of the same lines.
    browser.chord(&[keys::SHIFT, keys::TAB]).await;
    assert_eq!(read(browser).await, shown("  a\n    b\n  c\nd", 0, 13));
    browser.chord(&[keys::SHIFT, keys::TAB]).await;
    browser.chord(&[keys::SHIFT, keys::TAB]).await;
    assert_eq!(read(browser).await, shown("a\nb\nc\nd", 0, 5));

    // A selection ending at the start of a line leaves that line alone; blank lines stay blank.
    set(browser, "x\n\ny\nz", 0, 5).await;
    browser.press(keys::TAB).await;
    assert_eq!(read(browser).await, shown("  x\n\n  y\nz", 0, 8));

    // Shift+Tab with no selection outdents the caret's line, and the focus stays.
    set(browser, "top\n    deep", 11, 11).await;
    browser.chord(&[keys::SHIFT, keys::TAB]).await;
    assert_eq!(read(browser).await, shown("top\n  deep", 9, 9));
    assert_eq!(browser.active_id().await, "editor-document");

    // Plain Tab with no selection still inserts two spaces.
    set(browser, "ab", 1, 1).await;
    browser.press(keys::TAB).await;
    assert_eq!(read(browser).await, shown("a  b", 3, 3));

    // Esc still leaves the editor.
    browser.press(keys::ESCAPE).await;
    assert_ne!(browser.active_id().await, "editor-document");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn brackets_quotes_and_html_tags_close_themselves() {
    let session = open_editor().await;
    let browser = &session.browser;

    // Brackets close; typed closers step over the inserted ones.
    set(browser, "", 0, 0).await;
    browser.type_into(DOCUMENT, "call([1, {").await;
    assert_eq!(read(browser).await, shown("call([1, {}])", 10, 10));
    browser.type_into(DOCUMENT, "}])").await;
    assert_eq!(read(browser).await, shown("call([1, {}])", 13, 13));
    // Not before a word character.
    set(browser, "word", 0, 0).await;
    browser.type_into(DOCUMENT, "(").await;
    assert_eq!(read(browser).await, shown("(word", 1, 1));

    // Quotes close, step over, and do not close right after a word character.
    set(browser, "", 0, 0).await;
    browser.type_into(DOCUMENT, "say \"").await;
    assert_eq!(read(browser).await, shown("say \"\"", 5, 5));
    browser.type_into(DOCUMENT, "hi\" it's `x").await;
    assert_eq!(read(browser).await, shown("say \"hi\" it's `x`", 16, 16));

    // Backspace between an empty pair deletes both halves.
    set(browser, "f() + ''", 2, 2).await;
    browser.press(BACKSPACE).await;
    assert_eq!(read(browser).await, shown("f + ''", 1, 1));
    set(browser, "f() + ''", 7, 7).await;
    browser.press(BACKSPACE).await;
    assert_eq!(read(browser).await, shown("f() + ", 6, 6));

    // `>` ending an opening tag inserts its closing tag after the caret.
    set(browser, "", 0, 0).await;
    browser.type_into(DOCUMENT, "<div class=\"a>b\">").await;
    assert_eq!(
        read(browser).await,
        shown("<div class=\"a>b\"></div>", 17, 17)
    );
    // Not for void elements, self-closing tags or closing tags.
    set(browser, "", 0, 0).await;
    browser
        .type_into(DOCUMENT, "<br><img src=\"x.png\"><x-icon/><p>x")
        .await;
    assert_eq!(
        read(browser).await,
        shown("<br><img src=\"x.png\"><x-icon/><p>x</p>", 34, 34)
    );
    set(browser, "<p>x", 4, 4).await;
    browser.type_into(DOCUMENT, "</p>").await;
    assert_eq!(read(browser).await, shown("<p>x</p>", 8, 8));
    // A closing tag typed by hand steps over the inserted one instead of doubling it.
    set(browser, "", 0, 0).await;
    browser.type_into(DOCUMENT, "<p>one</p>").await;
    assert_eq!(read(browser).await, shown("<p>one</p>", 10, 10));
    // ...but still closes an inner element before an outer one of the same name.
    set(browser, "<div><div>x</div>", 11, 11).await;
    browser.type_into(DOCUMENT, "</div>").await;
    assert_eq!(
        read(browser).await,
        shown("<div><div>x</div></div>", 17, 17)
    );

    // Tags close in HTML only.
    open_file(browser, "app.js").await;
    set(browser, "", 0, 0).await;
    browser.type_into(DOCUMENT, "a <b> c").await;
    assert_eq!(read(browser).await, shown("a <b> c", 7, 7));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bracket_at_the_caret_and_its_match_are_marked() {
    let session = open_editor().await;
    let browser = &session.browser;
    let text =
        "function total(items) {\n  return items.reduce((sum, item) => sum + item.price, 0);\n}\n";
    let brace_open = text.find('{').expect("{");
    let brace_close = text.rfind('}').expect("}");

    // Caret right after `{`: the brace and its match are marked, the layer still mirrors the text.
    set(browser, text, brace_open + 1, brace_open + 1).await;
    assert_eq!(
        bracket_marks(browser).await,
        json!([[brace_open, "{"], [brace_close, "}"]])
    );
    let layer = browser.text("#editor-code-marks").await;
    assert_eq!(
        layer.trim_end(),
        text.trim_end(),
        "the marks layer mirrors the text"
    );
    let shot = browser.screenshot("code-editor-bracket-match").await;
    assert!(shot.exists());

    // Moving the caret with the keyboard moves the marks: right after the `(` of `(sum, item)`.
    let inner = text.find("((").expect("((") + 1;
    set(browser, text, inner + 2, inner + 2).await;
    browser.press(ARROW_LEFT).await;
    let inner_close = text.find("item)").expect("item)") + 4;
    assert_eq!(
        bracket_marks(browser).await,
        json!([[inner, "("], [inner_close, ")"]])
    );

    // No bracket next to the caret: nothing is marked.
    browser.press(ARROW_RIGHT).await;
    browser.press(ARROW_RIGHT).await;
    assert_eq!(bracket_marks(browser).await, json!([]));

    // With find marks shown, the bracket marks are added without breaking them.
    browser.chord(&[keys::CONTROL, "f"]).await;
    browser.type_into("#editor-find-input", "item").await;
    browser
        .eval(
            "const area = document.getElementById('editor-document');
             area.focus();
             area.setSelectionRange(arguments[0], arguments[0]);
             area.dispatchEvent(new Event('select'));",
            json!([brace_close]),
        )
        .await;
    assert_eq!(
        bracket_marks(browser).await,
        json!([[brace_open, "{"], [brace_close, "}"]])
    );
    let find_marks = browser
        .eval(
            "return [...document.querySelectorAll('#editor-code-marks mark')].map((mark) => mark.textContent);",
            json!([]),
        )
        .await;
    assert_eq!(find_marks, json!(["item", "item", "item", "item"]));
    let layer = browser.text("#editor-code-marks").await;
    assert_eq!(layer.trim_end(), text.trim_end());
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_slash_toggles_line_comments_in_the_language_syntax() {
    let session = open_editor().await;
    let browser = &session.browser;

    // HTML (index.html): every selected line inside `<!-- … -->`, and back.
    let html = "<p>a</p>\n  <p>b</p>";
    set(browser, html, 0, html.len()).await;
    browser.chord(&[keys::CONTROL, "/"]).await;
    let commented = "<!-- <p>a</p> -->\n  <!-- <p>b</p> -->";
    assert_eq!(read(browser).await, shown(commented, 0, commented.len()));
    browser.chord(&[keys::CONTROL, "/"]).await;
    assert_eq!(read(browser).await, shown(html, 0, html.len()));

    // JavaScript: `//` on the caret's line (the caret stays on its character), and back.
    open_file(browser, "app.js").await;
    let js = "  let a = 1;\n  let b = 2;";
    set(browser, js, 6, 6).await;
    browser.chord(&[keys::CONTROL, "/"]).await;
    assert_eq!(
        read(browser).await,
        shown("  // let a = 1;\n  let b = 2;", 9, 9)
    );
    browser.chord(&[keys::CONTROL, "/"]).await;
    assert_eq!(read(browser).await, shown(js, 6, 6));
    // Both lines selected, one already commented: all are commented, then all uncommented.
    let mixed = "  // let a = 1;\n  let b = 2;";
    set(browser, mixed, 0, mixed.len()).await;
    browser.chord(&[keys::CONTROL, "/"]).await;
    let both = "  // // let a = 1;\n  // let b = 2;";
    assert_eq!(read(browser).await, shown(both, 0, both.len()));
    browser.chord(&[keys::CONTROL, "/"]).await;
    assert_eq!(read(browser).await, shown(mixed, 0, mixed.len()));

    // CSS: `/* … */` around the line, and back.
    open_file(browser, "styles.css").await;
    let css = "h1 { color: red; }";
    set(browser, css, 3, 3).await;
    browser.chord(&[keys::CONTROL, "/"]).await;
    assert_eq!(read(browser).await, shown("/* h1 { color: red; } */", 6, 6));
    browser.chord(&[keys::CONTROL, "/"]).await;
    assert_eq!(read(browser).await, shown(css, 3, 3));
    session.close().await;
}

/// Presses `press`, expects `after`, then checks that one Ctrl+Z restores `before` exactly and
/// one Ctrl+Shift+Z brings `after` back: the transformation was one native undo step, and it
/// fired exactly one `input` event.
async fn one_undo_step(browser: &Browser, what: &str, before: Shown, press: &[&str], after: Shown) {
    set(browser, &before.0, before.1 as usize, before.2 as usize).await;
    browser.chord(press).await;
    assert_eq!(read(browser).await, after, "{what}: the transformation");
    assert_eq!(
        inputs(browser).await.as_array().map(Vec::len),
        Some(1),
        "{what}: one input event"
    );
    browser.chord(&[keys::CONTROL, "z"]).await;
    assert_eq!(
        read(browser).await.0,
        before.0,
        "{what}: one Ctrl+Z undoes it whole"
    );
    browser.chord(&[keys::CONTROL, keys::SHIFT, "z"]).await;
    assert_eq!(
        read(browser).await.0,
        after.0,
        "{what}: one redo brings it back"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn each_transformation_is_one_native_undo_step() {
    let session = open_editor().await;
    let browser = &session.browser;

    one_undo_step(
        browser,
        "Enter between braces",
        shown("  if (x) {}", 10, 10),
        &[keys::ENTER],
        shown("  if (x) {\n    \n  }", 15, 15),
    )
    .await;
    one_undo_step(
        browser,
        "Tab over lines",
        shown("a\nb\nc", 0, 5),
        &[keys::TAB],
        shown("  a\n  b\n  c", 0, 11),
    )
    .await;
    one_undo_step(
        browser,
        "Shift+Tab over lines",
        shown("  a\n    b\nc", 0, 11),
        &[keys::SHIFT, keys::TAB],
        shown("a\n  b\nc", 0, 7),
    )
    .await;
    one_undo_step(
        browser,
        "an auto-closed bracket",
        shown("f", 1, 1),
        &["("],
        shown("f()", 2, 2),
    )
    .await;
    one_undo_step(
        browser,
        "an auto-closed quote",
        shown("x = ", 4, 4),
        &["\""],
        shown("x = \"\"", 5, 5),
    )
    .await;
    one_undo_step(
        browser,
        "an auto-closed tag",
        shown("<section id=\"s\"", 15, 15),
        &[">"],
        shown("<section id=\"s\"></section>", 16, 16),
    )
    .await;
    one_undo_step(
        browser,
        "a deleted pair",
        shown("f()", 2, 2),
        &[BACKSPACE],
        shown("f", 1, 1),
    )
    .await;
    one_undo_step(
        browser,
        "a toggled comment",
        shown("<p>a</p>\n<p>b</p>", 0, 17),
        &[keys::CONTROL, "/"],
        shown("<!-- <p>a</p> -->\n<!-- <p>b</p> -->", 0, 35),
    )
    .await;
    session.close().await;
}
