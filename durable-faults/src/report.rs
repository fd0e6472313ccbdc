//! The campaign's HTML report, written beside its histories: faults as bands over time,
//! operations per process, latency and throughput over time, and each violation marked where it
//! happened with the operations that make it one.
//!
//! One self-contained file with inline SVG (no script, no network), so it opens anywhere,
//! including from a CI artifact. Time is bucketed (a 60-second campaign records a few hundred
//! thousand operations; one mark per operation would make a page no browser wants to open).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::checker::Report;
use crate::history::{History, OpKind, Operation, Outcome, read_json_lines};

/// Width of a time bucket (ms).
const BUCKET_MS: u64 = 250;
/// Plot width and the left margin for labels (px).
const WIDTH: f64 = 1100.0;
const LEFT: f64 = 70.0;
/// How long a fault is drawn when its log gives no duration (ms).
const INSTANT_FAULT_MS: u64 = 300;

/// One line of `faults.jsonl`.
#[derive(Debug, Clone, Deserialize)]
pub struct FaultLine {
    /// When the nemesis injected it (ms since the epoch).
    pub time_ms: u64,
    /// Its kind (`restart-db`, `pause-db`, ...).
    pub kind: String,
    /// Its detail (`1500 ms`, `worker 2`, ...).
    #[serde(default)]
    pub detail: String,
}

/// What the page says about the campaign besides the history.
#[derive(Debug, Clone)]
pub struct Heading {
    /// Title line (backend, seed, mutant).
    pub title: String,
    /// How long the checker took (s).
    pub check_seconds: f64,
}

/// Reads the fault log of a campaign directory (none when it is missing).
pub fn read_faults(dir: &Path) -> Vec<FaultLine> {
    read_json_lines(&dir.join("faults.jsonl")).unwrap_or_default()
}

/// Writes `report.html` into `dir` and returns its path.
pub fn write(
    dir: &Path,
    heading: &Heading,
    history: &History,
    faults: &[FaultLine],
    report: &Report,
) -> std::io::Result<PathBuf> {
    let path = dir.join("report.html");
    std::fs::write(&path, render(heading, history, faults, report))?;
    Ok(path)
}

/// The time axis: from the first to the last event.
#[derive(Debug, Clone, Copy)]
struct Axis {
    start: u64,
    end: u64,
}

impl Axis {
    fn of(history: &History) -> Self {
        let start = history.ops.first().map_or(0, Operation::invoked_ms);
        let end = history
            .ops
            .iter()
            .filter_map(Operation::completed_ms)
            .chain(history.ops.iter().map(Operation::invoked_ms))
            .max()
            .unwrap_or(start)
            .max(start + 1);
        Self { start, end }
    }

    fn x(&self, time_ms: u64) -> f64 {
        let span = (self.end - self.start) as f64;
        LEFT + (time_ms.saturating_sub(self.start) as f64 / span) * (WIDTH - LEFT - 10.0)
    }

    fn buckets(&self) -> usize {
        usize::try_from((self.end - self.start) / BUCKET_MS + 1).unwrap_or(1)
    }

    fn bucket(&self, time_ms: u64) -> usize {
        usize::try_from(time_ms.saturating_sub(self.start) / BUCKET_MS).unwrap_or(0)
    }

    fn seconds(&self, time_ms: u64) -> f64 {
        time_ms.saturating_sub(self.start) as f64 / 1000.0
    }
}

fn render(heading: &Heading, history: &History, faults: &[FaultLine], report: &Report) -> String {
    let axis = Axis::of(history);
    let mut page = String::new();
    let verdict = if report.violations.is_empty() {
        "no violations".to_owned()
    } else {
        format!("{} violations", report.violations.len())
    };
    let _ = write!(
        page,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title><style>{STYLE}</style></head><body>\
         <h1>{title}</h1><p>{} operations, {} effects, {} faults, <b>{verdict}</b>, {} inconclusive keys; \
         checked in {:.1} s. Hover a mark for details.</p>",
        report.ops,
        report.effects,
        faults.len(),
        report.inconclusive_keys,
        heading.check_seconds,
        title = escape(&heading.title),
    );
    page.push_str("<h2>Operations per process</h2>");
    page.push_str(&timeline(&axis, history, faults, report));
    page.push_str("<h2>Latency of store calls (ms, log scale)</h2>");
    page.push_str(&latency(&axis, history, faults, report));
    page.push_str("<h2>Throughput (store calls per second)</h2>");
    page.push_str(&throughput(&axis, history, faults, report));
    page.push_str(&violation_table(&axis, report));
    page.push_str(&fault_table(&axis, faults));
    page.push_str("</body></html>\n");
    page
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:20px;color:#222}\
svg{display:block;margin-bottom:8px}text{font:11px system-ui,sans-serif}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}\
td.detail{font:12px monospace;max-width:900px;word-break:break-word}\
.legend span{display:inline-block;margin-right:14px}";

fn fault_color(kind: &str) -> &'static str {
    match kind {
        "restart-db" => "#e45756",
        "pause-db" => "#f58518",
        "drop-connections" => "#b279a2",
        "kill-worker" => "#72b7b2",
        _ => "#9d9d9d",
    }
}

/// How long a fault lasted, from its detail when it says (`1500 ms`).
fn fault_span(fault: &FaultLine) -> u64 {
    fault
        .detail
        .strip_suffix(" ms")
        .and_then(|ms| ms.parse().ok())
        .filter(|_| fault.kind == "pause-db")
        .unwrap_or(INSTANT_FAULT_MS)
}

/// The fault bands and violation marks every plot shares, `height` px tall.
fn overlays(axis: &Axis, faults: &[FaultLine], report: &Report, height: f64) -> String {
    let mut svg = String::new();
    for fault in faults {
        let x = axis.x(fault.time_ms);
        let w = (axis.x(fault.time_ms + fault_span(fault)) - x).max(2.0);
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"0\" width=\"{w:.1}\" height=\"{height}\" fill=\"{}\" opacity=\"0.25\">\
             <title>{} at +{:.2} s {}</title></rect>",
            fault_color(&fault.kind),
            escape(&fault.kind),
            axis.seconds(fault.time_ms),
            escape(&fault.detail)
        );
    }
    for (index, violation) in report.violations.iter().enumerate() {
        let x = axis.x(violation.time_ms);
        let _ = write!(
            svg,
            "<a href=\"#v{index}\"><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"0\" y2=\"{height}\" stroke=\"#d00\" stroke-width=\"2\">\
             <title>#{index} {:?} on {} at +{:.2} s</title></line></a>",
            violation.kind,
            escape(&violation.key),
            axis.seconds(violation.time_ms)
        );
    }
    svg
}

/// Seconds along the bottom of a plot whose area ends at `bottom`.
fn time_ticks(axis: &Axis, bottom: f64) -> String {
    let mut svg = String::new();
    let span_s = (axis.end - axis.start) / 1000;
    let step = (span_s / 12).max(1);
    for s in (0..=span_s).step_by(usize::try_from(step).unwrap_or(1)) {
        let x = axis.x(axis.start + s * 1000);
        let _ = write!(
            svg,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{s} s</text>",
            bottom + 14.0
        );
    }
    svg
}

fn svg_open(height: f64) -> String {
    format!("<svg width=\"{WIDTH}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\">")
}

/// One lane per worker process; each bucket shaded by what its store calls did.
fn timeline(axis: &Axis, history: &History, faults: &[FaultLine], report: &Report) -> String {
    let mut lanes: BTreeMap<(u32, u32), Vec<[u32; 3]>> = BTreeMap::new();
    for op in history.ops.iter().filter(|op| !op.is_backend()) {
        let lane = lanes
            .entry((op.invoke.worker, op.invoke.process))
            .or_insert_with(|| vec![[0; 3]; axis.buckets()]);
        let slot = match op.outcome() {
            Outcome::Ok => 0,
            Outcome::Fail => 1,
            Outcome::Indeterminate => 2,
        };
        let last = lane.len() - 1;
        lane[axis.bucket(op.invoked_ms()).min(last)][slot] += 1;
    }
    let row = 14.0;
    let height = row * lanes.len() as f64;
    let mut svg = svg_open(height + 20.0);
    svg.push_str(&overlays(axis, faults, report, height));
    let bucket_w = axis.x(axis.start + BUCKET_MS) - axis.x(axis.start);
    for (index, ((worker, process), buckets)) in lanes.iter().enumerate() {
        let y = index as f64 * row;
        let _ = write!(
            svg,
            "<text x=\"4\" y=\"{:.1}\">w{worker} p{process}</text>",
            y + row - 3.0
        );
        for (b, [ok, fail, info]) in buckets.iter().enumerate() {
            if ok + fail + info == 0 {
                continue;
            }
            let color = if *info > 0 {
                "#f58518"
            } else if *fail > 0 && *ok == 0 {
                "#999"
            } else {
                "#4c78a8"
            };
            let x = axis.x(axis.start + b as u64 * BUCKET_MS);
            let _ = write!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\">\
                 <title>w{worker} p{process} +{:.2} s: {ok} ok, {fail} failed, {info} indeterminate</title></rect>",
                y + 2.0,
                bucket_w.max(1.0),
                row - 4.0,
                (b as u64 * BUCKET_MS) as f64 / 1000.0
            );
        }
    }
    svg.push_str(&time_ticks(axis, height));
    svg.push_str("</svg><p class=\"legend\"><span style=\"color:#4c78a8\">■ ok</span><span style=\"color:#999\">■ failed only</span>\
                  <span style=\"color:#f58518\">■ some indeterminate</span><span style=\"color:#d00\">| violation</span>\
                  <span>bands: <span style=\"color:#e45756\">restart-db</span> <span style=\"color:#f58518\">pause-db</span> \
                  <span style=\"color:#b279a2\">drop-connections</span> <span style=\"color:#72b7b2\">kill-worker</span> \
                  <span style=\"color:#9d9d9d\">skew-clock</span></span></p>");
    svg
}

/// Store calls (not the backend calls beneath them) with a known outcome.
fn store_calls(history: &History) -> impl Iterator<Item = &Operation> {
    history
        .ops
        .iter()
        .filter(|op| !op.is_backend() && op.kind() != OpKind::Prune)
}

/// A polyline through per-bucket values, `y` mapping a value to a pixel row.
fn polyline(axis: &Axis, values: &[Option<f64>], y: impl Fn(f64) -> f64, color: &str) -> String {
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .filter_map(|(b, v)| {
            let x = axis.x(axis.start + b as u64 * BUCKET_MS + BUCKET_MS / 2);
            v.map(|v| format!("{x:.1},{:.1}", y(v)))
        })
        .collect();
    format!(
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>",
        points.join(" ")
    )
}

fn latency(axis: &Axis, history: &History, faults: &[FaultLine], report: &Report) -> String {
    let mut buckets: Vec<Vec<u64>> = vec![Vec::new(); axis.buckets()];
    for op in store_calls(history) {
        if let Some(done) = op.completed_ms() {
            let b = axis.bucket(op.invoked_ms()).min(buckets.len() - 1);
            buckets[b].push(done - op.invoked_ms());
        }
    }
    for bucket in &mut buckets {
        bucket.sort_unstable();
    }
    let quantile = |q: f64| -> Vec<Option<f64>> {
        buckets
            .iter()
            .map(|b| {
                let at = ((b.len() as f64 - 1.0) * q).round() as usize;
                b.get(at).map(|&v| v as f64)
            })
            .collect()
    };
    let (p50, p99, max) = (quantile(0.5), quantile(0.99), quantile(1.0));
    let height = 160.0;
    let top = max.iter().flatten().fold(1.0_f64, |a, &b| a.max(b));
    let y = |v: f64| height - (v + 1.0).log10() / (top + 1.0).log10() * (height - 4.0);
    let mut svg = svg_open(height + 20.0);
    svg.push_str(&overlays(axis, faults, report, height));
    for ms in [1.0, 10.0, 100.0, 1000.0, 10000.0]
        .into_iter()
        .filter(|&v| v <= top)
    {
        let _ = write!(
            svg,
            "<line x1=\"{LEFT}\" x2=\"{WIDTH}\" y1=\"{0:.1}\" y2=\"{0:.1}\" stroke=\"#eee\"/><text x=\"4\" y=\"{0:.1}\">{ms} ms</text>",
            y(ms)
        );
    }
    svg.push_str(&polyline(axis, &max, y, "#e45756"));
    svg.push_str(&polyline(axis, &p99, y, "#f58518"));
    svg.push_str(&polyline(axis, &p50, y, "#4c78a8"));
    svg.push_str(&time_ticks(axis, height));
    svg.push_str("</svg><p class=\"legend\"><span style=\"color:#4c78a8\">— median</span><span style=\"color:#f58518\">— p99</span>\
                  <span style=\"color:#e45756\">— max</span> per 250 ms, completed calls</p>");
    svg
}

fn throughput(axis: &Axis, history: &History, faults: &[FaultLine], report: &Report) -> String {
    let mut counts = vec![[0_u32; 3]; axis.buckets()];
    for op in store_calls(history) {
        let slot = match op.outcome() {
            Outcome::Ok => 0,
            Outcome::Fail => 1,
            Outcome::Indeterminate => 2,
        };
        let last = counts.len() - 1;
        counts[axis.bucket(op.invoked_ms()).min(last)][slot] += 1;
    }
    let per_second = 1000.0 / BUCKET_MS as f64;
    let series = |slot: usize| -> Vec<Option<f64>> {
        counts
            .iter()
            .map(|c| Some(f64::from(c[slot]) * per_second))
            .collect()
    };
    let height = 140.0;
    let top = counts
        .iter()
        .map(|c| f64::from(c[0]) * per_second)
        .fold(1.0_f64, f64::max);
    let y = |v: f64| height - v / top * (height - 4.0);
    let mut svg = svg_open(height + 20.0);
    svg.push_str(&overlays(axis, faults, report, height));
    let _ = write!(
        svg,
        "<text x=\"4\" y=\"12\">{top:.0}/s</text><text x=\"4\" y=\"{height}\">0</text>"
    );
    svg.push_str(&polyline(axis, &series(0), y, "#4c78a8"));
    svg.push_str(&polyline(axis, &series(1), y, "#999"));
    svg.push_str(&polyline(axis, &series(2), y, "#f58518"));
    svg.push_str(&time_ticks(axis, height));
    svg.push_str("</svg><p class=\"legend\"><span style=\"color:#4c78a8\">— ok</span><span style=\"color:#999\">— failed</span>\
                  <span style=\"color:#f58518\">— indeterminate</span></p>");
    svg
}

fn violation_table(axis: &Axis, report: &Report) -> String {
    if report.violations.is_empty() {
        return "<h2>Violations</h2><p>None.</p>".to_owned();
    }
    let mut html = String::from(
        "<h2>Violations</h2><table><tr><th>#</th><th>at</th><th>kind</th><th>key</th><th>the operations that make it one</th></tr>",
    );
    for (index, violation) in report.violations.iter().enumerate() {
        let _ = write!(
            html,
            "<tr id=\"v{index}\"><td>{index}</td><td>+{:.3} s</td><td>{:?}</td><td>{}</td><td class=\"detail\">{}</td></tr>",
            axis.seconds(violation.time_ms),
            violation.kind,
            escape(&violation.key),
            escape(&violation.detail)
        );
    }
    html.push_str("</table>");
    html
}

fn fault_table(axis: &Axis, faults: &[FaultLine]) -> String {
    let mut html =
        String::from("<h2>Faults</h2><table><tr><th>at</th><th>kind</th><th>detail</th></tr>");
    for fault in faults {
        let _ = write!(
            html,
            "<tr><td>+{:.3} s</td><td>{}</td><td>{}</td></tr>",
            axis.seconds(fault.time_ms),
            escape(&fault.kind),
            escape(&fault.detail)
        );
    }
    html.push_str("</table>");
    html
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::{Violation, ViolationKind};
    use crate::history::{Event, OpRef, Phase};

    #[test]
    fn the_report_marks_faults_violations_and_escapes_details() {
        let op = OpRef {
            worker: 1,
            process: 2,
            op_id: 1,
        };
        let invoke = Event::invoke(op, 1_000, OpKind::Read, "k", "fp");
        let done = Event {
            phase: Phase::Ok,
            time_ms: 1_040,
            ..invoke.clone()
        };
        let history = History::from_events([invoke, done], Vec::new()).unwrap();
        let faults = vec![FaultLine {
            time_ms: 1_010,
            kind: "pause-db".into(),
            detail: "1500 ms".into(),
        }];
        let report = Report {
            ops: 1,
            violations: vec![Violation {
                kind: ViolationKind::LostWrite,
                key: "k".into(),
                time_ms: 1_020,
                detail: "<settle> & read".into(),
            }],
            ..Report::default()
        };
        let heading = Heading {
            title: "postgres, seed 7".into(),
            check_seconds: 0.5,
        };
        let html = render(&heading, &history, &faults, &report);
        assert!(html.contains("pause-db at +0.01 s 1500 ms"), "{html}");
        assert!(html.contains("#0 LostWrite on k at +0.02 s"), "{html}");
        assert!(html.contains("&lt;settle&gt; &amp; read"), "{html}");
        assert!(html.contains("w1 p2"), "{html}");
        assert!(html.contains("<b>1 violations</b>"), "{html}");
        assert!(!html.contains("<settle>"), "{html}");
    }
}
