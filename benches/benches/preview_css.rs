//! Preview compile time against the number of CSS `url()` references in one stylesheet: the
//! same compile with 5,000 and with 40,000 references, measured in the same run. A linear
//! compiler takes about 8× as long for 8× the references; computing a position per reference
//! (by rescanning the text before it) made it about 80×.
//!
//! Each stylesheet stays under the folder import's 512 KB file limit.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{PreviewOptions, compile_preview};

const SMALL: usize = 5_000;
const LARGE: usize = 40_000;

/// Mean time per iteration accumulated across criterion's batches.
#[derive(Default)]
struct Mean(Mutex<(Duration, u64)>);

impl Mean {
    fn add(&self, elapsed: Duration, iterations: u64) {
        let mut total = self.0.lock().unwrap();
        total.0 += elapsed;
        total.1 += iterations;
    }
    fn per_iteration(&self) -> Duration {
        let total = self.0.lock().unwrap();
        total.0 / u32::try_from(total.1.max(1)).unwrap_or(u32::MAX)
    }
}

/// An entry linking one stylesheet with `references` `url()`s: every one resolves to the same
/// asset, or (`missing`) each names its own absent file, so every one is a diagnostic
/// candidate and all but the first hundred are counted, not kept.
fn workspace(references: usize, missing: bool) -> Vec<WorkspaceFile> {
    let urls: Vec<String> = (0..references)
        .map(|index| match missing {
            false => "url(a.gif)".to_owned(),
            true => format!("url({index})"),
        })
        .collect();
    let css = format!("a{{background:{}}}", urls.join(" "));
    assert!(css.len() < 512 * 1024, "{} bytes", css.len());
    vec![
        WorkspaceFile::text("index.html", "<link rel=stylesheet href=s.css><h1>x</h1>"),
        WorkspaceFile::text("s.css", css),
        WorkspaceFile::asset("a.gif", b"GIF89a".to_vec()),
    ]
}

fn bench_mode(c: &mut Criterion, name: &str, options: &PreviewOptions, missing: bool) {
    let mut group = c.benchmark_group(format!("preview_css/{name}"));
    group.sample_size(10);
    let means = [SMALL, LARGE].map(|references| {
        let files = workspace(references, missing);
        let mean = Mean::default();
        group.bench_function(format!("{references}_urls"), |b| {
            b.iter_custom(|iterations| {
                let start = Instant::now();
                for _ in 0..iterations {
                    black_box(compile_preview(black_box(&files), options));
                }
                let elapsed = start.elapsed();
                mean.add(elapsed, iterations);
                elapsed
            })
        });
        mean.per_iteration()
    });
    group.finish();
    let ratio = means[1].as_secs_f64() / means[0].as_secs_f64();
    println!(
        "preview_css/{name}: {LARGE} urls {:?} vs {SMALL} urls {:?} = {ratio:.1}x (linear: {}x)",
        means[1],
        means[0],
        LARGE / SMALL
    );
}

fn preview_css(c: &mut Criterion) {
    let preview = PreviewOptions::preview(None, "/assets/");
    bench_mode(c, "preview", &preview, false);
    bench_mode(c, "export", &PreviewOptions::export(), false);
    bench_mode(c, "preview_missing", &preview, true);
}

criterion_group!(benches, preview_css);
criterion_main!(benches);
