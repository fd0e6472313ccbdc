//! Real-browser proof: headless Chromium runs compiled fixtures as a preview (inside an
//! iframe, talking to its parent through the bridge) and as an exported file from `file://`.

mod preview_support;

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use live_code_editor::FileContent;
use live_code_editor::preview::{PreviewOptions, compile_preview, export_standalone_html};
use preview_support::{dump_dom, load_fixture};
use serde_json::{Value, json};

/// What the wrapper page saw: bridge messages and the iframe's final DOM (when readable).
struct FrameRun {
    messages: Vec<Value>,
    frame_html: Option<String>,
}

/// Runs `document` in an iframe (`srcdoc`, with `sandbox`) inside a wrapper page in `dir`,
/// which records every message and, a second after load, the frame's DOM.
fn run_in_frame(dir: &Path, document: &str, sandbox: &str) -> FrameRun {
    let document_json = serde_json::to_string(document)
        .unwrap()
        .replace('<', "\\u003c");
    let wrapper = format!(
        r#"<!doctype html><html><body><div id="result"></div><script>
var messages = [];
window.addEventListener('message', function (event) {{ messages.push(event.data); }});
var frame = document.createElement('iframe');
frame.setAttribute('sandbox', '{sandbox}');
frame.srcdoc = {document_json};
// Reports 1 s after the frame's first bridge message (so a second one, such as a ready after
// an error, is seen too), or at 4 s without any: a module's load failure arrives
// asynchronously, sometimes after a fixed delay from the frame's load event would have passed.
var reported = false;
function report() {{
  if (reported) return;
  reported = true;
  var doc = null;
  try {{ doc = frame.contentDocument ? frame.contentDocument.documentElement.outerHTML : null; }} catch (error) {{}}
  var result = JSON.stringify({{ messages: messages, frameHtml: doc }});
  document.getElementById('result').textContent = btoa(unescape(encodeURIComponent(result)));
}}
frame.addEventListener('load', function () {{
  setTimeout(report, 4000);
  (function settleAfterFirstMessage() {{
    if (messages.length > 0) {{ setTimeout(report, 1000); return; }}
    setTimeout(settleAfterFirstMessage, 25);
  }})();
}});
document.body.appendChild(frame);
</script></body></html>"#
    );
    let page = dir.join("wrapper.html");
    std::fs::write(&page, wrapper).unwrap();
    let dom = dump_dom(&page);
    let start = dom.find("<div id=\"result\">").expect("result div") + "<div id=\"result\">".len();
    let end = start + dom[start..].find("</div>").unwrap();
    assert!(
        end > start,
        "the wrapper never reported (frame did not load): {dom}"
    );
    let decoded: Value =
        serde_json::from_slice(&BASE64.decode(dom[start..end].trim()).unwrap()).unwrap();
    FrameRun {
        messages: decoded["messages"].as_array().cloned().unwrap_or_default(),
        frame_html: decoded["frameHtml"].as_str().map(str::to_owned),
    }
}

impl FrameRun {
    /// The acknowledgement messages (`ready` / `error`), without the runtime error reports.
    fn acknowledgements(&self) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|message| {
                message["type"] != live_code_editor::preview::PREVIEW_RUNTIME_ERROR_MESSAGE
            })
            .collect()
    }
}

/// The DOM effects the site fixture's CSS and modules write onto `<output id="out">`.
fn assert_site_effects(html: &str) {
    for expected in [
        r#"data-classic="yes""#,
        r#"data-cycle="bbba""#,
        r#"data-label="card""#,
        r#"data-title-color="rgb(1, 2, 3)""#,
        r#"data-print-display="block""#,
        r#"data-badge-image="set""#,
        r#"data-template="import('./nope.js')""#,
        r#"data-photo-width="24""#,
        r#"data-lazy="loaded""#,
        r#"data-done="yes""#,
    ] {
        assert!(html.contains(expected), "missing {expected} in\n{html}");
    }
}

/// Writes the workspace assets where the host would serve them (`<dir>/assets/<path>`).
fn serve_assets(dir: &Path, files: &[live_code_editor::WorkspaceFile]) {
    for file in files {
        if let FileContent::Asset { bytes, .. } = &file.content {
            let target = dir.join("assets").join(&file.path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(target, bytes).unwrap();
        }
    }
}

/// Compiles the fixture `name` as a preview of `revision` (its assets served from `dir`),
/// requires it to compile cleanly, and runs it in a same-origin frame.
fn run_clean_preview(dir: &Path, name: &str, revision: u64) -> FrameRun {
    let files = load_fixture(name);
    serve_assets(dir, &files);
    let compiled = compile_preview(&files, &PreviewOptions::preview(Some(revision), "assets/"));
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
    run_in_frame(dir, &compiled.html, "allow-scripts allow-same-origin")
}

/// Exports the fixture `name`, requires it to compile cleanly without the bridge, and returns
/// the DOM Chromium builds from the file.
fn run_clean_export(dir: &Path, name: &str) -> String {
    let compiled = export_standalone_html(&load_fixture(name));
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
    assert!(
        !compiled.html.contains("context-action.preview"),
        "no bridge in an export"
    );
    let page = dir.join("export.html");
    std::fs::write(&page, &compiled.html).unwrap();
    dump_dom(&page)
}

#[test]
fn the_site_fixture_runs_as_a_preview_and_reports_ready_with_its_revision() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_clean_preview(dir.path(), "site", 7);
    assert_eq!(
        run.messages,
        [json!({"revision": 7, "type": "context-action.preview.ready"})]
    );
    assert_site_effects(run.frame_html.as_deref().expect("same-origin frame DOM"));
}

#[test]
fn the_exported_site_runs_from_a_file_url_without_network() {
    let dir = tempfile::tempdir().unwrap();
    assert_site_effects(&run_clean_export(dir.path(), "site"));
}

#[test]
fn a_missing_module_reports_one_error_and_suppresses_ready_in_a_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let compiled = compile_preview(
        &load_fixture("broken"),
        &PreviewOptions::preview(Some(5), "assets/"),
    );
    assert_eq!(
        compiled.diagnostics[0].message,
        "Missing module import: ./gone.js"
    );
    let run = run_in_frame(dir.path(), &compiled.html, "allow-scripts");
    let acknowledgements = run.acknowledgements();
    assert_eq!(acknowledgements.len(), 1, "{:?}", run.messages);
    assert_eq!(acknowledgements[0]["revision"], 5);
    assert_eq!(acknowledgements[0]["type"], "context-action.preview.error");
    let message = acknowledgements[0]["message"].as_str().unwrap();
    assert!(
        message.contains("Missing local module import: ./gone.js"),
        "{message}"
    );
    assert!(
        run.frame_html.is_none(),
        "an opaque sandbox keeps its DOM from the parent"
    );
}

#[test]
fn the_entry_required_card_renders_and_reports_ready() {
    let dir = tempfile::tempdir().unwrap();
    let compiled = compile_preview(
        &load_fixture("no-entry"),
        &PreviewOptions::preview(Some(2), "assets/"),
    );
    assert!(compiled.entry_required);
    let run = run_in_frame(
        dir.path(),
        &compiled.html,
        "allow-scripts allow-same-origin",
    );
    assert_eq!(
        run.messages,
        [json!({"revision": 2, "type": "context-action.preview.ready"})]
    );
    assert!(
        run.frame_html
            .unwrap()
            .contains("<h1>Add an HTML entry file</h1>")
    );
}

/// The DOM the `tsx-app` fixture builds: the counter rendered by `App.tsx` through the vendored
/// runtime (clicked once by `main.tsx`), the enum's label, the classic-runtime `legacy.jsx`, and
/// what the class decorator in `color.ts` wrote.
fn assert_tsx_app_effects(html: &str) {
    for expected in [
        r#"<output id="count" data-color="Green">3</output>"#,
        r#"<button id="inc">+</button>"#,
        r#"<p id="legacy">classic</p>"#,
        r#"data-tag="decorated""#,
        r#"data-done="yes""#,
    ] {
        assert!(html.contains(expected), "missing {expected} in\n{html}");
    }
}

#[test]
fn the_tsx_fixture_renders_and_behaves_in_a_preview() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_clean_preview(dir.path(), "tsx-app", 4);
    assert_eq!(
        run.messages,
        [json!({"revision": 4, "type": "context-action.preview.ready"})]
    );
    assert_tsx_app_effects(run.frame_html.as_deref().expect("same-origin frame DOM"));
}

#[test]
fn the_exported_tsx_fixture_runs_from_a_file_url() {
    let dir = tempfile::tempdir().unwrap();
    assert_tsx_app_effects(&run_clean_export(dir.path(), "tsx-app"));
}

#[test]
fn a_tsx_syntax_error_is_reported_with_its_position_and_the_page_stays() {
    let dir = tempfile::tempdir().unwrap();
    let compiled = compile_preview(
        &load_fixture("tsx-broken"),
        &PreviewOptions::preview(Some(6), "assets/"),
    );
    let run = run_in_frame(
        dir.path(),
        &compiled.html,
        "allow-scripts allow-same-origin",
    );
    let acknowledgements = run.acknowledgements();
    assert_eq!(acknowledgements.len(), 1, "{:?}", run.messages);
    assert_eq!(acknowledgements[0]["type"], "context-action.preview.error");
    assert_eq!(acknowledgements[0]["revision"], 6);
    let message = acknowledgements[0]["message"].as_str().unwrap();
    assert!(message.contains("src/Bad.tsx:2:"), "{message}");
    let html = run.frame_html.expect("same-origin frame DOM");
    assert!(html.contains("static content stays"), "{html}");
}

/// The runtime error messages of a run, by kind.
fn runtime_errors<'a>(run: &'a FrameRun, kind: &str) -> Vec<&'a Value> {
    run.messages
        .iter()
        .filter(|message| {
            message["type"] == live_code_editor::preview::PREVIEW_RUNTIME_ERROR_MESSAGE
                && message["kind"] == kind
        })
        .collect()
}

#[test]
fn runtime_errors_are_reported_at_their_tsx_line_with_the_revision() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_clean_preview(dir.path(), "tsx-runtime-error", 8);
    let parsed: Vec<_> = run
        .messages
        .iter()
        .filter_map(live_code_editor::preview::parse_runtime_error_message)
        .collect();
    assert_eq!(parsed.len(), 3, "{:?}", run.messages);
    assert!(parsed.iter().all(|error| error.revision == 8));

    let console = runtime_errors(&run, "console");
    assert_eq!(console[0]["message"], "from main 42");
    assert_eq!(console[0]["source"]["path"], "src/main.tsx");
    assert_eq!(console[0]["source"]["line"], 2);

    let rejection = runtime_errors(&run, "rejection");
    assert_eq!(rejection[0]["message"], "rejected later");
    assert_eq!(rejection[0]["source"]["path"], "src/main.tsx");
    assert_eq!(rejection[0]["source"]["line"], 3);

    // The TypeError thrown in App.tsx is reported at its line there, through the source map,
    // and the first failure (the acknowledgement) names the same place.
    let thrown = runtime_errors(&run, "error");
    assert_eq!(thrown[0]["source"]["path"], "src/App.tsx", "{thrown:?}");
    assert_eq!(thrown[0]["source"]["line"], 5, "{thrown:?}");
    assert!(thrown[0]["source"]["column"].as_u64().unwrap() >= 3);
    let failure = run
        .messages
        .iter()
        .find(|message| message["type"] == "context-action.preview.error")
        .expect("the revision failed");
    let text = failure["message"].as_str().unwrap();
    assert!(text.contains("(src/App.tsx:5:"), "{text}");
    assert!(run.frame_html.unwrap().contains("static content stays"));
}
