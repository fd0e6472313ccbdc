//! The approval card with its diff in a real headless Chromium (issue 34), timed with
//! `performance.now()` inside the studio page at `/`; a bench binary like `preview_live_css`,
//! since every sample is one round trip through a browser.
//!
//! - `event_to_diff_painted`: from the `approvals` event that announces a local-agent patch to
//!   the first frame painted after the card's diff table was inserted (the page asks
//!   `GET /api/approvals/{id}/diff` in between);
//! - baseline, same samples: from the same event to the first frame painted after the card
//!   itself (without its diff) was inserted.
//!
//! Each sample is a `replace all "…" with "…" in theme.css` prompt (a two-hunk patch of a
//! 400-line stylesheet), denied after the diff painted so the workspace never drifts.
//! Prints the p50s and their ratio. Goal: the diff painted ≤ 100 ms p50 after the event.
//!
//! `cargo bench -p workspace-benches --bench approval_card`

#[path = "../../examples/tests/support/browser/mod.rs"]
pub mod browser_support;

use browser_support::studio::StudioPage;
use serde_json::{Value, json};

/// Samples.
const CARDS: usize = 20;

/// Records when each approval first arrived in an `approvals` event, and the first painted
/// frame after its card, then its diff table, entered the page.
const INSTRUMENT: &str = r#"
const bench = window.cardBench = { event: {}, card: {}, diff: {} };
const realParse = JSON.parse;
JSON.parse = function (text, reviver) {
  const value = realParse(text, reviver);
  if (value && value.type === 'approvals') {
    for (const approval of value.pending ?? []) bench.event[approval.id] ??= performance.now();
  }
  return value;
};
const painted = (table, id) => {
  if (table[id] !== undefined) return;
  table[id] = null;
  requestAnimationFrame(() => requestAnimationFrame(() => { table[id] = performance.now(); }));
};
new MutationObserver(() => {
  for (const card of document.querySelectorAll('#approvals .approval')) {
    const id = card.dataset.approvalId;
    painted(bench.card, id);
    if (card.querySelector('.diff-table')) painted(bench.diff, id);
  }
}).observe(document.getElementById('approvals'), { childList: true, subtree: true });
return true;
"#;

fn stylesheet() -> String {
    (0..400)
        .map(|n| match n {
            20 => ".hero { color: navy; }\n".to_owned(),
            380 => ".footer { color: navy; }\n".to_owned(),
            n => format!(".rule-{n} {{ margin: {n}px; }}\n"),
        })
        .collect()
}

async fn sample(page: &StudioPage, turn: usize) -> (f64, f64) {
    let (from, to) = if turn.is_multiple_of(2) {
        ("navy", "teal")
    } else {
        ("navy", "olive")
    };
    page.browser
        .type_into(
            "#prompt",
            &format!(r#"replace all "{from}" with "{to}" in theme.css"#),
        )
        .await;
    page.browser.click("#send-prompt").await;
    let times = page
        .browser
        .wait_for(
            "the card and its diff painted",
            "const b = window.cardBench; const card = document.querySelector('#approvals .approval'); if (!card) return null; const id = card.dataset.approvalId; return b.event[id] !== undefined && b.diff[id] && b.card[id] ? [b.diff[id] - b.event[id], b.card[id] - b.event[id]] : null;",
        )
        .await;
    page.browser.click("#approvals .deny").await;
    page.browser
        .wait_for(
            "the card to go",
            "return document.querySelector('#approvals .approval') === null && !document.getElementById('send-prompt').disabled;",
        )
        .await;
    let at = |index: usize| times[index].as_f64().expect("milliseconds");
    (at(0), at(1))
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
    if filter.is_some_and(|filter| !"approval_card".contains(filter.as_str())) {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let page = StudioPage::start(1280, 800, "").await;
        page.browser
            .wait_for(
                "the page to load",
                "return document.body.dataset.ready === 'true';",
            )
            .await;
        let created: Value = page
            .call_tool(
                "workspace.createFile",
                json!({"path": "theme.css", "source": stylesheet()}),
            )
            .await;
        assert!(created.get("isError").is_none(), "{created}");
        page.browser.eval(INSTRUMENT, json!([])).await;
        let (mut diff, mut card) = (Vec::new(), Vec::new());
        for turn in 0..CARDS {
            let (with_diff, shell) = sample(&page, turn).await;
            diff.push(with_diff);
            card.push(shell);
        }
        let (diff, card) = (p50(&mut diff), p50(&mut card));
        println!(
            "approval_card/event_to_diff_painted: p50 {diff:.1} ms; the card without its diff p50 {card:.1} ms (same samples); ratio {:.2}x over {CARDS} cards",
            diff / card
        );
        page.close().await;
    });
}
