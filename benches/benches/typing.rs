//! Typing latency in a real headless Chromium (issue 35): from a keystroke in the studio page's
//! editor at `/` (its `input` event, `performance.now()`) to the preview iframe's `ready` for the
//! first revision whose written source holds that keystroke. The write is the canonical one
//! (`workspace.writeFile`, the page's idle flush); a stylesheet keystroke is swapped into the
//! running preview, an HTML keystroke reloads it.
//!
//! Each keystroke is measured alone (the next is typed once it is visible), 20 per case on the
//! current path (a 50 ms idle flush) interleaved with 20 on the baseline (the former 600 ms
//! idle flush, set through the page's `typing` setting). Prints the p50s and their ratio.
//!
//! `cargo bench -p workspace-benches --bench typing`

#[path = "../../examples/tests/support/browser/mod.rs"]
pub mod browser_support;

use browser_support::studio::StudioPage;
use serde_json::json;

/// Keystrokes per path and case.
const KEYSTROKES: usize = 20;
/// The idle flush of the current path and of the baseline, in milliseconds.
const CURRENT_IDLE_MS: u64 = 50;
const BASELINE_IDLE_MS: u64 = 600;

/// Records every keystroke (its time and the editor's text after it), every
/// `workspace.writeFile` (the source it wrote and the revision it got) and every preview
/// `ready` (by revision). `latency(k)` is keystroke k's time to the first ready revision that
/// wrote its text, or null while there is none.
const INSTRUMENT: &str = r#"
const bench = window.typingBench = { keys: [], written: {}, ready: {} };
const editor = document.getElementById('editor');
editor.addEventListener('input', () => bench.keys.push({ at: performance.now(), text: editor.value }), true);
const realFetch = window.fetch;
window.fetch = async (url, init) => {
  const response = await realFetch(url, init);
  const body = String(init?.body ?? '');
  if (String(url).includes('/api/tools/call') && body.includes('workspace.writeFile')) {
    const source = JSON.parse(body).params.arguments.source;
    response.clone().json().then((result) => {
      const revision = result?.structuredContent?.revision ?? result?.error?.details?.revision;
      if (revision !== undefined) bench.written[revision] = source;
    });
  }
  return response;
};
window.addEventListener('message', (event) => {
  const data = event.data;
  if (event.source === document.getElementById('preview').contentWindow && data?.type === 'context-action.preview.ready') {
    bench.ready[data.revision] ??= performance.now();
  }
});
bench.latency = (k) => {
  const key = bench.keys[k];
  if (!key) return null;
  const times = Object.entries(bench.ready)
    .filter(([revision]) => bench.written[revision] === key.text)
    .map(([, at]) => at);
  return times.length ? Math.min(...times) - key.at : null;
};
return true;
"#;

/// Where a case types.
struct Case {
    name: &'static str,
    path: &'static str,
    /// The caret goes right after this text.
    after: &'static str,
}

const CASES: [Case; 2] = [
    Case {
        name: "stylesheet keystroke (swapped in place)",
        path: "styles.css",
        after: "--typing: a",
    },
    Case {
        name: "HTML keystroke (reloads the preview)",
        path: "index.html",
        after: "Ship a page with your agent",
    },
];

struct Bench {
    page: StudioPage,
}

impl Bench {
    async fn open() -> Self {
        let page = StudioPage::start(1280, 800, "").await;
        // A rule whose custom property changes with every letter typed after `a`.
        let styles = page
            .call_tool("workspace.readFile", json!({"path": "styles.css"}))
            .await["structuredContent"]["source"]
            .as_str()
            .expect("styles.css")
            .to_owned();
        let written = page
            .call_tool(
                "workspace.writeFile",
                json!({"path": "styles.css", "source": format!("{styles}\n#hero-title {{ --typing: a; }}\n")}),
            )
            .await;
        assert_ne!(written["isError"], json!(true), "{written}");
        page.browser.eval(INSTRUMENT, json!([])).await;
        Self { page }
    }

    async fn open_file(&self, path: &str) {
        let browser = &self.page.browser;
        browser
            .click(&format!("#file-tree [data-path=\"{path}\"]"))
            .await;
        browser
            .wait_for(
                &format!("{path} in the editor"),
                &format!(
                    "return document.getElementById('editor-path').textContent === '{path}' && !document.getElementById('editor').disabled;"
                ),
            )
            .await;
    }

    async fn set_idle(&self, millis: u64) {
        self.page
            .browser
            .eval_async(
                "const done = arguments[arguments.length - 1]; import('/ui/lib/store.js').then((store) => { store.typing.draftIdleMs = arguments[0]; done(true); });",
                json!([millis]),
            )
            .await;
    }

    /// Types one letter after `after` and returns its latency in milliseconds.
    async fn keystroke(&self, after: &str, letter: &str) -> f64 {
        let browser = &self.page.browser;
        let index = browser
            .eval(
                "const editor = document.getElementById('editor'); const at = editor.value.indexOf(arguments[0]) + arguments[0].length; editor.focus(); editor.setSelectionRange(at, at); return window.typingBench.keys.length;",
                json!([after]),
            )
            .await
            .as_u64()
            .expect("keystroke index");
        browser.type_into("#editor", letter).await;
        let latency = browser
            .wait_for(
                "the keystroke in the preview",
                &format!("return window.typingBench.latency({index});"),
            )
            .await;
        latency.as_f64().expect("latency")
    }
}

fn p50(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument other than this bench's name skips it.
    let filter = std::env::args()
        .skip(1)
        .find(|argument| !argument.starts_with('-'));
    if filter.is_some_and(|filter| !"typing".contains(filter.as_str())) {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(measure());
}

async fn measure() {
    let bench = Bench::open().await;
    println!("typing latency, keystroke to preview ready, p50 over {KEYSTROKES} keystrokes each:");
    for case in &CASES {
        bench.open_file(case.path).await;
        let mut after = case.after.to_owned();
        let (mut current, mut baseline) = (Vec::new(), Vec::new());
        for round in 0..KEYSTROKES {
            for (idle, samples) in [
                (CURRENT_IDLE_MS, &mut current),
                (BASELINE_IDLE_MS, &mut baseline),
            ] {
                bench.set_idle(idle).await;
                let letter = ["b", "c", "d", "e"][round % 4];
                samples.push(bench.keystroke(&after, letter).await);
                after.push_str(letter);
            }
        }
        let (now, before) = (p50(&mut current), p50(&mut baseline));
        println!(
            "  {}: {now:.0} ms ({CURRENT_IDLE_MS} ms idle flush) vs {before:.0} ms ({BASELINE_IDLE_MS} ms) = {:.1}x faster",
            case.name,
            before / now
        );
    }
    bench.page.close().await;
}
