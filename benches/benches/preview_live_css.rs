//! Live stylesheet edits in a real headless Chromium (issue 22), timed with `performance.now()`
//! inside the studio page at `/`; a bench binary rather than a criterion bench, since every
//! sample is one round trip through a browser the harness cannot repeat on its own.
//!
//! - `typed_css_edit_to_ack`: a stylesheet edit typed into the page's editor, from the moment
//!   the draft leaves the debounce (the page's `workspace.writeFile` request) to the completed
//!   forwarded acknowledgement (`POST /api/preview/ack`) of the new revision;
//! - `approve_to_preview_ready`: a local-agent theme change (a stylesheet edit that needs
//!   approval), from the click on Approve to the iframe's `ready` for the new revision.
//!
//! Each is measured over 20 edits on the live path (the bridge swaps the stylesheets) against
//! 20 edits of the same kind on the full-reload path in the same run, interleaved: for the
//! baseline the revision announcement's stylesheets are dropped and the page's stylesheet
//! request is answered `409`, so the page reloads the iframe exactly as it does for an HTML
//! edit. Prints the p50s and their ratio, and of the approved live edits the time until the
//! announcement carrying the stylesheets arrived.
//!
//! `cargo bench -p workspace-benches --bench preview_live_css`

#[path = "../../examples/tests/support/browser/mod.rs"]
pub mod browser_support;

use browser_support::studio::StudioPage;
use serde_json::{Value, json};

/// Edits per path and measurement.
const EDITS: usize = 20;
/// Themes the local agent switches between (each differs from the one before).
const THEMES: [&str; 4] = ["emerald", "amber", "rose", "violet"];

/// Records, in the page, when each `workspace.writeFile` request left and when each forwarded
/// acknowledgement completed (by revision), when Approve was clicked, when a revision
/// announcement carrying stylesheets arrived and when the iframe's `ready` arrived; with
/// `blockStylesheets` the announcement loses its stylesheets (on the page's `JSON.parse` of the
/// event) and the page's stylesheet requests are answered `409`.
const INSTRUMENT: &str = r#"
const bench = window.liveBench = { blockStylesheets: false, sent: {}, acked: {}, ready: {}, asked: {}, answered: {}, announced: {}, approvedAt: null };
const realParse = JSON.parse;
JSON.parse = function (text, reviver) {
  const value = realParse(text, reviver);
  if (value && value.type === 'workspace' && value.live) {
    bench.announced[value.revision] ??= performance.now();
    if (bench.blockStylesheets) delete value.live;
  }
  return value;
};
const realFetch = window.fetch;
window.fetch = async (url, init) => {
  const text = String(url);
  const asked = text.match(/\/preview\/stylesheets\/(\d+)/);
  if (asked) bench.asked[Number(asked[1])] ??= performance.now();
  if (bench.blockStylesheets && text.includes('/preview/stylesheets/')) {
    return new Response('{"error":{"code":"BENCH_FULL_RELOAD","message":"baseline"}}', { status: 409 });
  }
  const started = performance.now();
  const response = await realFetch(url, init);
  if (asked) bench.answered[Number(asked[1])] ??= performance.now();
  if (text.includes('/api/tools/call') && String(init?.body ?? '').includes('workspace.writeFile')) {
    response.clone().json().then((result) => {
      const revision = result?.structuredContent?.revision;
      if (revision !== undefined) bench.sent[revision] = started;
    });
  }
  if (text.includes('/api/preview/ack')) {
    const revision = JSON.parse(init.body).revision;
    bench.acked[revision] = performance.now();
  }
  return response;
};
window.addEventListener('message', (event) => {
  const data = event.data;
  if (event.source === document.getElementById('preview').contentWindow && data && data.type === 'context-action.preview.ready') {
    bench.ready[data.revision] ??= performance.now();
  }
});
document.addEventListener('click', (event) => {
  if (event.target.closest && event.target.closest('#approvals .approve')) bench.approvedAt = performance.now();
}, true);
return true;
"#;

struct Bench {
    page: StudioPage,
    /// Approve-to-announcement times of the live approved edits (where the time goes).
    phases: std::sync::Mutex<Vec<f64>>,
}

impl std::ops::Deref for Bench {
    type Target = StudioPage;

    fn deref(&self) -> &StudioPage {
        &self.page
    }
}

impl Bench {
    async fn open() -> Self {
        let bench = Self {
            page: StudioPage::start(1280, 800, "").await,
            phases: std::sync::Mutex::default(),
        };
        bench.wait_ready(bench.revision().await).await;
        bench.browser.eval(INSTRUMENT, json!([])).await;
        bench
    }

    async fn revision(&self) -> u64 {
        let state: Value = self
            .http
            .get(format!("{}api/state", self.studio.url()))
            .send()
            .await
            .expect("state")
            .json()
            .await
            .expect("state JSON");
        state["status"]["revision"].as_u64().expect("revision")
    }

    async fn wait_ready(&self, revision: u64) {
        self.browser
            .wait_for(
                &format!("revision {revision} ready"),
                &format!(
                    "return document.getElementById('preview-status').textContent === 'revision {revision} ready';"
                ),
            )
            .await;
    }

    async fn set_full_reload(&self, on: bool) {
        self.browser
            .eval(
                "window.liveBench.blockStylesheets = arguments[0]; return true;",
                json!([on]),
            )
            .await;
    }

    /// A typed stylesheet edit; milliseconds from the write request to the completed ack.
    async fn typed_edit(&self, turn: usize) -> f64 {
        let revision = self.revision().await + 1;
        self.browser
            .eval(
                "const editor = document.getElementById('editor'); \
                 editor.value = editor.value.replace(/\\n\\/\\* bench \\*\\/.*$/s, '') + `\\n/* bench */ #hero-title { color: rgb(${arguments[0]}, 40, 80); }\\n`; \
                 editor.dispatchEvent(new Event('input', { bubbles: true })); return true;",
                json!([turn % 250]),
            )
            .await;
        let elapsed = self
            .browser
            .wait_for(
                &format!("the ack of typed revision {revision}"),
                &format!(
                    "const b = window.liveBench; return b.sent[{revision}] !== undefined && b.acked[{revision}] !== undefined ? b.acked[{revision}] - b.sent[{revision}] : null;"
                ),
            )
            .await;
        self.wait_ready(revision).await;
        elapsed.as_f64().expect("milliseconds")
    }

    /// An approved local-agent theme change; milliseconds from Approve to the iframe's ready.
    async fn approved_edit(&self, turn: usize) -> f64 {
        let revision = self.revision().await + 1;
        let completed = self.completed_runs().await;
        self.browser
            .type_into(
                "#prompt",
                &format!("make it {}", THEMES[turn % THEMES.len()]),
            )
            .await;
        self.browser.click("#send-prompt").await;
        self.browser
            .wait_for(
                "an approval card",
                "return document.querySelector('#approvals .approve') !== null;",
            )
            .await;
        self.browser.click("#approvals .approve").await;
        let elapsed = self
            .browser
            .wait_for(
                &format!("the ready of approved revision {revision}"),
                &format!(
                    "const b = window.liveBench; return b.approvedAt !== null && b.ready[{revision}] !== undefined ? [b.ready[{revision}] - b.approvedAt, (b.announced[{revision}] ?? b.ready[{revision}]) - b.approvedAt] : null;"
                ),
            )
            .await;
        self.browser
            .wait_for(
                "the run to complete",
                &format!(
                    "return document.querySelectorAll('#chat-log .entry.completed').length > {completed};"
                ),
            )
            .await;
        self.wait_ready(revision).await;
        self.browser
            .eval(
                "window.liveBench.approvedAt = null; return true;",
                json!([]),
            )
            .await;
        let phase = |index: usize| elapsed[index].as_f64().expect("milliseconds");
        self.phases.lock().expect("phases").push(phase(1));
        elapsed[0].as_f64().expect("milliseconds")
    }

    async fn completed_runs(&self) -> u64 {
        self.browser
            .eval(
                "return document.querySelectorAll('#chat-log .entry.completed').length;",
                json!([]),
            )
            .await
            .as_u64()
            .unwrap_or(0)
    }

    /// `EDITS` samples of `edit` on each path, interleaved: `(live, full_reload)`.
    async fn interleaved(&self, edit: Edit) -> (Vec<f64>, Vec<f64>) {
        let (mut live, mut reload) = (Vec::new(), Vec::new());
        for turn in 0..EDITS * 2 {
            let full = turn % 2 == 1;
            self.set_full_reload(full).await;
            let sample = match edit {
                Edit::Typed => self.typed_edit(turn).await,
                Edit::Approved => self.approved_edit(turn).await,
            };
            if full && matches!(edit, Edit::Approved) {
                // Only the live path's phases are reported.
                self.phases.lock().expect("phases").pop();
            }
            if full {
                reload.push(sample);
            } else {
                live.push(sample);
            }
        }
        self.set_full_reload(false).await;
        (live, reload)
    }
}

/// What one sample edits.
#[derive(Clone, Copy)]
enum Edit {
    /// A stylesheet edit typed into the editor.
    Typed,
    /// A theme change by the local agent, approved on the page.
    Approved,
}

fn p50(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn report(name: &str, (mut live, mut reload): (Vec<f64>, Vec<f64>)) {
    let (live, reload) = (p50(&mut live), p50(&mut reload));
    println!(
        "preview_live_css/{name}: live p50 {live:.1} ms, full-reload baseline p50 {reload:.1} ms, ratio {:.2}x ({:.1}x faster) over {EDITS} edits each",
        live / reload,
        reload / live
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument other than this bench's name skips it.
    let filter = std::env::args()
        .skip(1)
        .find(|argument| !argument.starts_with('-'));
    if filter.is_some_and(|filter| !"preview_live_css".contains(filter.as_str())) {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let bench = Bench::open().await;
        bench
            .browser
            .click("#file-tree [data-path=\"styles.css\"]")
            .await;
        bench
            .browser
            .wait_for(
                "styles.css in the editor",
                "return document.getElementById('editor-path').textContent === 'styles.css' && !document.getElementById('editor').disabled;",
            )
            .await;
        report(
            "typed_css_edit_to_ack",
            bench.interleaved(Edit::Typed).await,
        );
        report(
            "approve_to_preview_ready",
            bench.interleaved(Edit::Approved).await,
        );
        let mut announced = std::mem::take(&mut *bench.phases.lock().expect("phases"));
        println!(
            "preview_live_css/approve_to_preview_ready: of the live path, approve to the revision announcement carrying the stylesheets p50 {:.1} ms",
            p50(&mut announced)
        );
        bench.page.close().await;
    });
}
