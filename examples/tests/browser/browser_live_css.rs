//! Live stylesheet edits in a real headless Chromium (issue 22): a revision that changes only a
//! stylesheet is swapped into the running preview and acknowledged for that revision, so the
//! page's state (counter clicks, typed input, scroll position, a script variable) survives and
//! the new style applies; a script or HTML edit still reloads the document (state reset). Runs
//! on the workspace surface `/` and on `/web`, which share the mechanism, and on `/editor`,
//! whose documents carry an injected scenario (a scenario change reloads).

use live_code_editor::workspace::bridge::{PreviewState, PreviewStatus};
use serde_json::{Value, json};

use crate::support::browser::studio::StudioPage;

/// What differs between the two surfaces under test.
struct Surface {
    /// Page path under the studio URL.
    page: &'static str,
    /// The preview iframe.
    frame: &'static str,
    /// The preview status element.
    status: &'static str,
    /// Tool name prefix (`workspace` or `web`).
    tools: &'static str,
    /// The counter button and its count.
    button: &'static str,
    count: &'static str,
}

const WORKSPACE: Surface = Surface {
    page: "",
    frame: "#preview",
    status: "preview-status",
    tools: "workspace",
    button: "#cta",
    count: "#count",
};

const WEB: Surface = Surface {
    page: "web",
    frame: "#web-preview",
    status: "web-preview-status",
    tools: "web",
    button: "#pulse",
    count: "#pulse-count",
};

/// A studio with a browser on one surface's page.
struct Session {
    surface: &'static Surface,
    page: StudioPage,
}

impl std::ops::Deref for Session {
    type Target = StudioPage;

    fn deref(&self) -> &StudioPage {
        &self.page
    }
}

impl Session {
    async fn open(surface: &'static Surface) -> Self {
        let page = StudioPage::start(1280, 800, surface.page).await;
        Self { surface, page }
    }

    /// Calls a tool of the surface through the registry, as another client would.
    async fn call(&self, name: &str, arguments: Value) -> Value {
        let name = format!("{}.{name}", self.surface.tools);
        self.page.call_tool(&name, arguments).await
    }

    async fn source(&self, path: &str) -> String {
        let result = self.call("readFile", json!({"path": path})).await;
        result["structuredContent"]["source"]
            .as_str()
            .unwrap_or_else(|| panic!("readFile failed: {result}"))
            .to_owned()
    }

    /// Writes `path` and returns the new revision once the page shows it acknowledged.
    async fn write(&self, path: &str, source: &str) -> u64 {
        self.mutate("writeFile", path, source).await
    }

    /// Calls the mutation `tool` with `path` and `source`; returns the new revision once the
    /// page shows it acknowledged and the host heard the acknowledgement.
    async fn mutate(&self, tool: &str, path: &str, source: &str) -> u64 {
        let written = self
            .call(tool, json!({"path": path, "source": source}))
            .await;
        assert!(written.get("isError").is_none(), "{written}");
        let revision = written["structuredContent"]["revision"]
            .as_u64()
            .unwrap_or_else(|| panic!("a revision: {written}"));
        self.browser
            .wait_for(
                &format!("the preview to acknowledge revision {revision}"),
                &format!(
                    "return document.getElementById('{}').textContent === 'revision {revision} ready';",
                    self.surface.status
                ),
            )
            .await;
        assert_eq!(
            self.host_preview(),
            PreviewState {
                revision,
                status: PreviewStatus::Ready
            },
            "the host heard the iframe's acknowledgement of revision {revision}"
        );
        revision
    }

    /// The surface's preview state as the host holds it.
    fn host_preview(&self) -> PreviewState {
        let manager = if self.surface.tools == "web" {
            self.studio.state.web.manager().clone()
        } else {
            self.studio.state.workspace.manager().clone()
        };
        manager.preview_acks().current()
    }

    async fn in_frame(&self, script: &str) -> Value {
        self.browser.enter_frame(self.surface.frame).await;
        let value = self.browser.eval(script, json!([])).await;
        self.browser.leave_frame().await;
        value
    }

    /// A session whose preview has an input (an HTML edit) and then page state.
    async fn open_with_state(surface: &'static Surface) -> Self {
        let session = Self::open(surface).await;
        let index = session.source("index.html").await;
        let index = index.replace("</header>", "<input id=\"live-name\"></header>");
        session.write("index.html", &index).await;
        session.make_state().await;
        session
    }

    /// Clicks the counter three times, types into the input, scrolls and marks the window.
    async fn make_state(&self) {
        self.browser.enter_frame(self.surface.frame).await;
        for _ in 0..3 {
            self.browser.click(self.surface.button).await;
        }
        self.browser.type_into("#live-name", "Ada").await;
        self.browser
            .eval(
                "window.scrollTo(0, 400); window.liveMarker = 'kept';",
                json!([]),
            )
            .await;
        self.browser.leave_frame().await;
    }

    /// `[count, input value, scrollY, marker, hero title color]` inside the preview.
    async fn page_state(&self) -> Value {
        self.in_frame(&format!(
            "return [document.querySelector('{}').textContent, document.getElementById('live-name').value, \
             Math.round(window.scrollY), window.liveMarker ?? null, \
             getComputedStyle(document.getElementById('hero-title')).color];",
            self.surface.count
        ))
        .await
    }

    async fn close(self) {
        self.page.close().await;
    }
}

async fn stylesheet_edits_keep_page_state_and_other_edits_reload(surface: &'static Surface) {
    let session = Session::open(surface).await;
    // An HTML edit: an input and enough height to scroll.
    let index = session.source("index.html").await;
    let index = index.replace(
        "</header>",
        "<input id=\"live-name\" aria-label=\"Name\"></header><div style=\"height: 3000px\"></div>",
    );
    session.write("index.html", &index).await;
    session.make_state().await;
    let before = session.page_state().await;
    assert_eq!(before[0], "3", "{before}");
    assert_eq!(before[1], "Ada");
    assert_eq!(before[2], 400);
    assert_eq!(before[3], "kept");
    assert_ne!(before[4], "rgb(1, 2, 3)");

    // A stylesheet-only edit is applied in place and acknowledged for its revision.
    let styles = session.source("styles.css").await;
    let styles = format!("{styles}\n#hero-title {{ color: rgb(1, 2, 3); }}\n");
    session.write("styles.css", &styles).await;
    assert_eq!(
        session.page_state().await,
        json!(["3", "Ada", 400, "kept", "rgb(1, 2, 3)"]),
        "the counter, the input, the scroll position and the window survived; the new style applies"
    );

    // Two stylesheet edits in a row keep going in place.
    let styles = styles.replace("rgb(1, 2, 3)", "rgb(4, 5, 6)");
    session.write("styles.css", &styles).await;
    assert_eq!(
        session.page_state().await,
        json!(["3", "Ada", 400, "kept", "rgb(4, 5, 6)"])
    );

    // A script edit reloads the document: its state starts over, the style stays. The page
    // knows from the state it read that only a reload can show it, so it never asks the host
    // for stylesheets it would refuse (a 409 in the console).
    let asked = stylesheet_requests(&session.page).await;
    let app = session.source("app.js").await;
    session
        .write("app.js", &format!("{app}\n// reloaded\n"))
        .await;
    assert_eq!(
        session.page_state().await,
        json!(["0", "", 0, null, "rgb(4, 5, 6)"]),
        "a script edit reloads the preview"
    );
    assert_eq!(
        stylesheet_requests(&session.page).await,
        asked,
        "a script edit asks for no stylesheets"
    );

    // An inline <style> is part of the HTML: that edit reloads too.
    session.make_state().await;
    let index = index.replace(
        "</head>",
        "<style>h1 { color: rgb(7, 8, 9) !important; }</style></head>",
    );
    session.write("index.html", &index).await;
    assert_eq!(
        session.page_state().await,
        json!(["0", "", 0, null, "rgb(7, 8, 9)"]),
        "an HTML edit reloads the preview"
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_stylesheet_edits_keep_page_state_and_other_edits_reload() {
    stylesheet_edits_keep_page_state_and_other_edits_reload(&WORKSPACE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_stylesheet_edits_keep_page_state_and_other_edits_reload() {
    stylesheet_edits_keep_page_state_and_other_edits_reload(&WEB).await;
}

/// Adding a stylesheet file (even one nothing links) reloads: the host refuses the swap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_added_stylesheet_reloads_the_preview() {
    let session = Session::open_with_state(&WORKSPACE).await;
    session
        .mutate("createFile", "extra.css", "h1 { color: red }")
        .await;
    let state = session.page_state().await;
    assert_eq!(state[0], "0", "{state}");
    assert_eq!(state[3], Value::Null, "{state}");
    session.close().await;
}

/// The workspace page takes a stylesheet-only revision from the revision announcement itself,
/// which carries the compiled stylesheets, instead of asking the host for them in a second
/// round trip; the swap still keeps page state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_announced_stylesheet_revision_is_swapped_without_asking_for_its_stylesheets() {
    let session = Session::open_with_state(&WORKSPACE).await;
    session
        .browser
        .eval(
            "window.stylesheetAsks = 0; const realFetch = window.fetch; \
             window.fetch = (url, init) => { if (String(url).includes('/preview/stylesheets/')) window.stylesheetAsks += 1; return realFetch(url, init); }; \
             return true;",
            json!([]),
        )
        .await;
    let styles = session.source("styles.css").await;
    let styles = format!("{styles}\n#hero-title {{ color: rgb(1, 2, 3); }}\n");
    session.write("styles.css", &styles).await;
    let state = session.page_state().await;
    assert_eq!(state[0], "3", "swapped in place: {state}");
    assert_eq!(state[4], "rgb(1, 2, 3)", "{state}");
    let asks = session
        .browser
        .eval("return window.stylesheetAsks;", json!([]))
        .await;
    assert_eq!(
        asks, 0,
        "the announcement carried the stylesheets, so the page did not ask for them"
    );
    session.close().await;
}

/// The Live Code Editor page (`/editor`).
struct Editor {
    page: StudioPage,
}

impl Editor {
    async fn open() -> Self {
        let page = StudioPage::start(1280, 800, "editor").await;
        let editor = Self { page };
        let revision = editor
            .page
            .studio
            .state
            .editor
            .preview_acks()
            .current()
            .revision;
        editor.acknowledged(revision).await;
        editor
    }

    /// Calls `editor.<name>` and returns the document revision once the page shows it
    /// acknowledged and the host heard the acknowledgement.
    async fn mutate(&self, name: &str, arguments: Value) -> u64 {
        let result = self
            .page
            .call_tool(&format!("editor.{name}"), arguments)
            .await;
        assert!(result.get("isError").is_none(), "{result}");
        let revision = result["structuredContent"]["documentRevision"]
            .as_u64()
            .unwrap_or_else(|| panic!("a document revision: {result}"));
        self.acknowledged(revision).await;
        revision
    }

    async fn acknowledged(&self, revision: u64) {
        self.page
            .browser
            .wait_for(
                &format!("the editor preview to acknowledge revision {revision}"),
                &format!(
                    "return document.getElementById('editor-preview-status').textContent === 'revision {revision} ready';"
                ),
            )
            .await;
        assert_eq!(
            self.page.studio.state.editor.preview_acks().current(),
            PreviewState {
                revision,
                status: PreviewStatus::Ready
            }
        );
    }

    async fn in_frame(&self, script: &str) -> Value {
        self.page.browser.enter_frame("#editor-preview").await;
        let value = self.page.browser.eval(script, json!([])).await;
        self.page.browser.leave_frame().await;
        value
    }

    /// `[count, marker, count color]` inside the preview.
    async fn page_state(&self) -> Value {
        self.in_frame(
            "return [document.getElementById('count').textContent, window.liveMarker ?? null, \
             getComputedStyle(document.getElementById('count')).color];",
        )
        .await
    }
}

/// The editor's preview takes a stylesheet-only document revision in place as well: the
/// counter's clicks and a window variable survive and the new style applies. A scenario change
/// (injected into the document as data, with the same files) reloads it.
/// The stylesheet requests the page made so far (its resource timing entries).
async fn stylesheet_requests(page: &StudioPage) -> Value {
    page.browser
        .eval(
            "return performance.getEntriesByType('resource').map((entry) => entry.name).filter((name) => name.includes('/stylesheets/'));",
            json!([]),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editor_stylesheet_edits_keep_page_state_and_a_scenario_change_reloads() {
    let editor = Editor::open().await;
    let start = editor.page_state().await;
    editor.page.browser.enter_frame("#editor-preview").await;
    for _ in 0..3 {
        editor.page.browser.click("#step").await;
    }
    editor
        .page
        .browser
        .eval("window.liveMarker = 'kept';", json!([]))
        .await;
    editor.page.browser.leave_frame().await;
    let clicked = editor.page_state().await;
    assert_ne!(clicked[0], start[0], "the clicks counted: {clicked}");
    assert_eq!(clicked[1], "kept");

    // Opening the stylesheet (a new document revision, same files) and editing it: both
    // revisions are taken in place.
    editor
        .mutate("openFile", json!({"path": "styles.css"}))
        .await;
    let styles = editor.page.call_tool("editor.getDocument", json!({})).await["structuredContent"]
        ["source"]
        .as_str()
        .expect("the stylesheet source")
        .to_owned();
    editor
        .mutate(
            "setDocument",
            json!({"source": format!("{styles}\n#count {{ color: rgb(1, 2, 3); }}\n")}),
        )
        .await;
    assert_eq!(
        editor.page_state().await,
        json!([clicked[0], "kept", "rgb(1, 2, 3)"]),
        "the counter and the window survived; the new style applies"
    );

    // A scenario is data injected into the document: only a reload shows it, and the page
    // does not ask for stylesheets first.
    let asked = stylesheet_requests(&editor.page).await;
    editor
        .mutate("setScenario", json!({"scenario": "greeting"}))
        .await;
    let greeting = editor
        .in_frame("return [document.documentElement.dataset.scenario, window.liveMarker ?? null];")
        .await;
    assert_eq!(greeting, json!(["greeting", null]), "reloaded");
    assert_eq!(stylesheet_requests(&editor.page).await, asked);
    editor.page.close().await;
}
